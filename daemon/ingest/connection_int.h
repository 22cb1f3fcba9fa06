/* connection_int.h - the ingest server's state as both its halves see
 * it: listener.c (the server: listeners, accepting, limits, idle sweep,
 * pause, shutdown) and connection.c (one accepted connection: reading,
 * framing, closing; and refusing one). Not for other modules.
 *
 * It belongs to the lower half, the connection: listener.c includes it
 * and calls the cn_* functions below; connection.c never calls into
 * listener.c (a refused peer is counted and logged by ls_refused, which
 * lives in connection.c for that reason).
 *
 * Thread: the loop thread only.
 *
 * Connections sit on one doubly linked list ordered by last activity
 * (least recent first): a read moves its connection to the tail in O(1),
 * so the idle sweep only ever looks at the head. Time for idleness is an
 * "active clock" that stops while the server is paused, so a paused
 * connection ages only while it could have sent something. */
#ifndef PQ_CONNECTION_INT_H
#define PQ_CONNECTION_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "connection.h"
#include "counters.h"
#include "http_conn.h"
#include "listener_cb.h"
#include "lsock.h"
#include "tls.h"

/* The server (listener.h declares the same opaque name for its API). */
typedef struct ls_server ls_server;
struct ls_conn;

/* A protocol: what a connection does with the bytes it reads (plaintext,
 * after TLS), chosen per listener by its input's proto. Lines
 * (connection.c: NDJSON framed by cn_stream) or HTTP (conn_http.c). */
typedef struct cn_proto {
    const char *name;            /* "tcp", "unix" or "http" in descriptions */
    /* After accept, before the first read. 0 or a libuv error. */
    int (*open)(struct ls_conn *c);
    /* Bytes read: 0 go on, 1 the protocol ended the stream (close it
     * once what it wrote is sent), -1 close and drop. */
    int (*feed)(struct ls_conn *c, const char *data, size_t len);
    /* The stream ended (EOF, reset, idle, shutdown) and finish: hand on
     * what is complete. */
    void (*finish)(struct ls_conn *c);
    /* The connection closed: free the protocol's state. */
    void (*free)(struct ls_conn *c);
    /* Keeps reading while the server is paused (it answers 429 itself). */
    bool reads_while_paused;
} cn_proto;

extern const cn_proto cn_proto_lines;
extern const cn_proto cn_proto_http;

/* One shared read buffer: the loop thread frames each read before the
 * next one, so connections need no buffer of their own. 256 KiB, not 64:
 * a busy connection's socket holds more than 64 KiB, and every read(2)
 * costs a system call and a TCP window update (16 loopback clients: 4,500
 * reads per 200 MB at 64 KiB, 950 at 256 KiB). */
#define LS_READ_BUF (256 * 1024)
#define LS_BACKLOG 1024

typedef union ls_handle {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
} ls_handle;

/* A Unix input's allow_uids / allow_gids (owned copies: a reload frees
 * the configuration they came from). Both empty: anyone. */
typedef struct ls_peer_ids {
    uint32_t *uids, *gids;
    size_t n_uids, n_gids;
} ls_peer_ids;

typedef struct ls_listener {
    ls_handle h;                 /* h.handle.data = this */
    ls_server *server;
    cf_input_type type;          /* the transport */
    const cn_proto *proto;       /* what its connections speak */
    hp_settings http;            /* http: limits (a reload changes them) and endpoints */
    struct hp_auth *auth;        /* http: credentials, NULL for none (a reload swaps them) */
    uint16_t port;               /* tcp: the bound port */
    char *path;                  /* unix: socket file to remove on close, NULL if not ours */
    lsk_unix_bound bound;
    char source[LSK_NAME_MAX];   /* unix: "unix:<path>", every connection's source */
    char desc[LSK_NAME_MAX + 32];/* "inputs[1] tcp 127.0.0.1:5170", for the log */
    int input;                   /* index in cf->inputs; -1 for an extra inherited socket */
    tl_ctx *tls;                 /* tcp: TLS context, NULL for plaintext */
    ls_peer_ids ids;             /* unix: who may connect (SO_PEERCRED) */
} ls_listener;

/* One connection's TLS side: its state and its handshake timer (a
 * separate allocation, because the timer closes asynchronously and may
 * outlive the connection struct by a loop iteration). */
typedef struct cn_tls {
    tl_conn t;
    uv_timer_t timer;            /* handshake timeout; timer.data = this */
    struct ls_conn *conn;        /* cleared once the connection closes */
    struct ls_server *server;
} cn_tls;

typedef struct ls_conn {
    ls_handle h;                 /* h.handle.data = this */
    ls_server *server;
    const ls_listener *listener; /* outlives its connections */
    struct ls_conn *prev, *next; /* server's activity list; unlinked once closing */
    uint64_t last_ms;            /* active clock at the last byte (or accept) */
    cn_stream st;                /* lines */
    struct cn_http *http;        /* http: its requests and replies (conn_http.c) */
    struct ls_conn *wprev, *wnext; /* server's list of connections awaiting the spool */
    bool waiting;                /* on that list */
    bool held;                   /* the protocol stopped reading (replies queued) */
    bool ending;                 /* close once every write is sent */
    size_t linger_bytes;         /* read and dropped since ending */
    size_t writes_pending;       /* uv_write requests in flight */
    bool closing;
    cn_tls *tls;                 /* NULL for plaintext and Unix connections */
    bool in_read;                /* inside read_cb: a close must wait for it */
    bool close_requested;        /* close once read_cb is done */
    char peer[64];               /* tcp: "tcp:[<IPv6>]:<port>" (58 at most); unused for unix */
} ls_conn;

struct ls_server {
    uv_loop_t *loop;
    ls_callbacks cb;
    ls_listener **listeners;
    size_t n_listeners;
    ls_conn *head, *tail;        /* open connections, least recently active first */
    size_t n_conns;
    size_t max_line_bytes, max_connections;
    uint64_t idle_timeout_ms;    /* 0: never */
    uv_timer_t sweep;            /* fires when the head connection turns idle */
    bool accepting_stopped, closing, paused;
    uint64_t pause_start_ms;     /* uv_now when paused */
    uint64_t pause_start_ns;     /* uv_hrtime when paused, for backpressure_us */
    uint64_t paused_ms;          /* total paused time: active clock = uv_now - this */
    size_t pending_closes;       /* handles whose close callback has not run yet */
    bool refused_logged[DM_REFUSE_COUNT], accept_err_logged;
    uint64_t refused_log_ms[DM_REFUSE_COUNT], accept_err_log_ms;
    uint64_t refused_unlogged[DM_REFUSE_COUNT];
    ls_conn *whead;              /* connections awaiting spool durability (http) */
    hp_budget http_bodies;       /* request bodies held by all http connections */
    uint64_t durable;            /* records < this are in the spool per spool.sync */
    bool uncounted;              /* metrics.listen's: no ingest counter moves */
    char rbuf[LS_READ_BUF];
    char pbuf[LS_READ_BUF];      /* TLS: plaintext decrypted from rbuf */
};

static inline void ls_count(const ls_server *s, _Atomic uint64_t *c, uint64_t n)
{
    if (!s->uncounted)
        dm_add(c, n);
}

/* The active clock: loop time minus time spent paused. */
static inline uint64_t ls_active_ms(const ls_server *s)
{
    return (s->paused ? s->pause_start_ms : uv_now(s->loop)) - s->paused_ms;
}

/* connection.c */
/* Counts a refused connection under reason and logs it, at most once a
 * minute per reason (with how many were refused since, and detail about
 * the latest: "inputs[1] tcp 0.0.0.0:5171 tcp:192.0.2.7:5123: handshake:
 * wrong version number"). */
void ls_refused(ls_server *s, dm_refuse reason, const char *detail);
/* Whether a message rate-limited by *logged / *last_ms may be logged now
 * (at most once a minute); if so, records that it was. */
bool ls_once_a_minute(ls_server *s, bool *logged, uint64_t *last_ms);
/* Accepts from l into a new connection at the tail of the list, reading
 * unless the server is paused. Returns 0 or a libuv error (the pending
 * connection is then accepted and closed, or left if memory ran out). */
int cn_accept(ls_server *s, ls_listener *l);
/* Accepts from l and closes at once (over max_connections). */
void cn_refuse(ls_server *s, ls_listener *l);
/* Starts closing: unlinks the connection, delivers its unfinished line
 * when finish is set. Deferred until read_cb returns when called from
 * inside it. */
void cn_close(ls_conn *c, bool finish);
void cn_read_start(ls_conn *c);
/* The source records from c carry: its peer (tcp) or socket path (unix). */
const char *cn_source(const ls_conn *c);
void cn_read_stop(ls_conn *c);
/* Sends len bytes (through TLS when the connection has it): written at
 * once or queued (copied). 0, or -1 when the peer does not read what it is
 * sent (more than CN_OUT_MAX queued) or memory ran out. */
int cn_write(ls_conn *c, const char *data, size_t len);
/* Closes once everything written is sent (HTTP's "Connection: close"). */
void cn_end(ls_conn *c);
/* Stops / starts reading for the protocol's own flow control (replies
 * queued); the server's pause and resume respect it. */
void cn_hold(ls_conn *c, bool held);
/* Puts c on / takes it off the server's list of connections awaiting the
 * spool (ls_server_durable walks it). */
void cn_wait_durable(ls_conn *c, bool wait);

/* conn_http.c: the spool reached durable: send the replies that waited
 * for it. */
void cn_http_durable(ls_conn *c, uint64_t durable);
/* Whether c is reading a request's body or owes a reply (not to be
 * closed to make room). */
bool cn_http_busy(const ls_conn *c);

#endif
