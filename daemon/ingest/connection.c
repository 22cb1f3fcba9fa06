/* connection.c - one ingest connection: its byte stream (connection.h)
 * and its life on the loop (connection_int.h): accept, read through the
 * server's shared buffer, frame, close. Refusals (ls_refused: counted,
 * logged at most once a minute per reason) are here too, for the server
 * and for the connections it refuses after accept (TLS, peer
 * credentials), so that nothing here calls up into listener.c.
 *
 * Thread: the loop thread only.
 *
 * Memory: an idle connection is its uv handle, this struct and nothing
 * else (the framer allocates only while a line is unfinished and gives
 * the buffer back once it is not), about half a KiB. A TLS connection
 * adds its cn_tls: OpenSSL's state (a few KiB with SSL_MODE_RELEASE_BUFFERS
 * while idle) and a handshake timer.
 *
 * TLS: ciphertext read into the server's rbuf goes through tl_conn_feed;
 * plaintext comes out in the server's pbuf and takes the plaintext path
 * (cn_stream_feed) unchanged. What OpenSSL wants to send (handshake,
 * alerts) goes out with uv_try_write, queued with uv_write only when the
 * socket is full, and a peer that lets CN_OUT_MAX pile up is closed. Replies
 * (cn_write: HTTP) take the same way, through TLS when the connection has it.
 *
 * Protocols: what the bytes mean is the listener's cn_proto: the lines
 * protocol below (cn_stream, today's NDJSON), or HTTP (conn_http.c).
 *
 * Unix peers: with allow_uids / allow_gids, SO_PEERCRED (and
 * SO_PEERGROUPS for supplementary groups, where the kernel has it) is
 * checked right after accept, before a byte is read. */
#include "connection_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "counters.h"
#include "err.h"
#include "log.h"

/* ---- the byte stream (no sockets: the fuzzer drives this part) ------- */

int cn_stream_init(cn_stream *st, size_t max_line_bytes, const char *source,
                   const ls_callbacks *cb)
{
    memset(st, 0, sizeof *st);
    st->source = source;
    st->cb = cb;
    return fr_init(&st->fr, max_line_bytes);
}

void cn_stream_free(cn_stream *st)
{
    fr_free(&st->fr);
}

static int deliver(void *user, const fr_line *line)
{
    cn_stream *st = user;
    st->delivered++;
    return st->cb->on_line(st->cb->user, st->source, line);
}

#define CN_DRAIN_MAX ((size_t)64 << 20)

/* The read's lines are counted once, not per line (an atomic add each,
 * 300,000 for 200 MB). */
static void read_done(cn_stream *st)
{
    if (st->delivered == 0)
        return;
    dm_add(&dm_counters_global.records_received, st->delivered);
    if (st->cb->on_read_done != NULL)
        st->cb->on_read_done(st->cb->user);
}

int cn_stream_feed(cn_stream *st, const void *data, size_t len)
{
    st->delivered = 0;
    dm_add(&dm_counters_global.bytes_received, len);
    int rc = fr_push(&st->fr, data, len, deliver, st);
    read_done(st);
    /* Most reads end at a line boundary: then nothing is buffered and the
     * buffer goes back, so thousands of quiet clients cost no line
     * buffers. One malloc per read that ends mid-line, never per line. */
    if (fr_pending(&st->fr) == 0)
        fr_free(&st->fr);
    return rc;
}

int cn_stream_finish(cn_stream *st)
{
    st->delivered = 0;
    int rc = fr_finish(&st->fr, deliver, st);
    read_done(st);
    fr_free(&st->fr);
    return rc;
}

/* ---- the lines protocol: NDJSON over a stream (type: tcp, unix) ------- */

const char *cn_source(const ls_conn *c)
{
    return c->listener->type == CF_INPUT_TCP ? c->peer : c->listener->source;
}

static int lines_open(ls_conn *c)
{
    return cn_stream_init(&c->st, c->server->max_line_bytes, cn_source(c), &c->server->cb) == 0
               ? 0 : UV_EINVAL;
}

static int lines_feed(ls_conn *c, const char *data, size_t len)
{
    return cn_stream_feed(&c->st, data, len) == 0 ? 0 : -1;
}

static void lines_finish(ls_conn *c)
{
    cn_stream_finish(&c->st);
}

static void lines_free(ls_conn *c)
{
    cn_stream_free(&c->st);
}

const cn_proto cn_proto_lines = {
    .open = lines_open, .feed = lines_feed, .finish = lines_finish, .free = lines_free,
};

/* ---- the connection on the loop -------------------------------------- */

static void list_unlink(ls_server *s, ls_conn *c)
{
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        s->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    else
        s->tail = c->prev;
    c->prev = c->next = NULL;
}

static void list_append(ls_server *s, ls_conn *c)
{
    c->prev = s->tail;
    c->next = NULL;
    if (s->tail != NULL)
        s->tail->next = c;
    else
        s->head = c;
    s->tail = c;
}

/* ---- refusals --------------------------------------------------------------- */

#define LS_LOG_EVERY_MS 60000

bool ls_once_a_minute(ls_server *s, bool *logged, uint64_t *last_ms)
{
    uint64_t now = uv_now(s->loop);
    if (*logged && now - *last_ms < LS_LOG_EVERY_MS)
        return false;
    *logged = true;
    *last_ms = now;
    return true;
}

static const char *const refuse_why[DM_REFUSE_COUNT] = {
    [DM_REFUSE_MAX_CONNECTIONS] = "limits.max_connections reached",
    [DM_REFUSE_OUT_OF_FDS] = "out of file descriptors",
    [DM_REFUSE_TLS_HANDSHAKE] = "TLS handshake failed",
    [DM_REFUSE_TLS_SUBJECT] = "client certificate subject not allowed",
    [DM_REFUSE_PEER_CRED] = "Unix peer not in allow_uids / allow_gids",
};

void ls_refused(ls_server *s, dm_refuse reason, const char *detail)
{
    ls_count(s, &dm_counters_global.connections_refused, 1);
    ls_count(s, &dm_counters_global.connections_refused_by[reason], 1);
    s->refused_unlogged[reason]++;
    if (!ls_once_a_minute(s, &s->refused_logged[reason], &s->refused_log_ms[reason]))
        return;
    uint64_t n = s->refused_unlogged[reason];
    lg_warning("refused %" PRIu64 " connection%s: %s%s%s (logged at most once a minute per "
               "reason)", n, n == 1 ? "" : "s", refuse_why[reason], detail ? "; latest: " : "",
               detail ? detail : "");
    s->refused_unlogged[reason] = 0;
}

/* ---- TLS ----------------------------------------------------------------- */

#define CN_OUT_MAX ((size_t)256 * 1024)
#define CN_LINGER_MAX ((size_t)8 << 20)  /* bytes read and dropped after an end */

static void on_shutdown(uv_shutdown_t *req, int status)
{
    ls_conn *c = req->data;
    free(req);
    if (status != 0 && !c->closing)
        cn_close(c, false);
}

/* After a reply that ends the connection ("Connection: close", a
 * refusal): FIN once it is sent, and what the peer still sends (the rest
 * of a refused body) is read and dropped until it closes, so its
 * reply is not lost to a reset; CN_LINGER_MAX bounds that, and the idle
 * timeout a peer that neither sends nor closes. */
static void linger(ls_conn *c)
{
    uv_shutdown_t *req = malloc(sizeof *req);
    if (req == NULL) {
        cn_close(c, false);
        return;
    }
    req->data = c;
    if (uv_shutdown(req, &c->h.stream, on_shutdown) != 0) {
        free(req);
        cn_close(c, false);
    }
}

typedef struct cn_wreq {
    uv_write_t req;
    ls_conn *conn;
    char data[];
} cn_wreq;

/* A write finished (or was cancelled by the close: the connection is still
 * there then, libuv runs these before the close callback). */
static void on_write(uv_write_t *req, int status)
{
    (void)status;                /* a failed write shows up as a read error */
    cn_wreq *w = (cn_wreq *)req;
    ls_conn *c = w->conn;
    free(w);
    c->writes_pending--;
    if (c->ending && c->writes_pending == 0 && !c->closing)
        linger(c);
}

/* Sends n bytes as they are: what the socket takes now, the rest copied
 * and queued. 0, or -1 when the peer lets CN_OUT_MAX pile up. */
static int send_raw(ls_conn *c, const char *data, size_t n)
{
    uv_buf_t b = uv_buf_init((char *)data, (unsigned)n);
    int sent = c->writes_pending > 0 ? UV_EAGAIN : uv_try_write(&c->h.stream, &b, 1);
    if (sent >= 0 && (size_t)sent == n)
        return 0;
    if (sent < 0 && sent != UV_EAGAIN)
        return -1;
    size_t off = sent > 0 ? (size_t)sent : 0;
    if (c->h.stream.write_queue_size + (n - off) > CN_OUT_MAX)
        return -1;
    cn_wreq *w = malloc(sizeof *w + (n - off));
    if (w == NULL)
        return -1;
    memcpy(w->data, data + off, n - off);
    w->conn = c;
    b = uv_buf_init(w->data, (unsigned)(n - off));
    if (uv_write(&w->req, &c->h.stream, &b, 1, on_write) != 0) {
        free(w);
        return -1;
    }
    c->writes_pending++;
    return 0;
}

/* Sends what OpenSSL queued. 0, or -1 when the peer does not read what
 * it is sent (or memory ran out). */
static int tls_flush(ls_conn *c)
{
    tl_conn *t = &c->tls->t;
    char chunk[16384];
    size_t n;
    while ((n = tl_conn_pending(t)) > 0) {
        n = tl_conn_take(t, chunk, n < sizeof chunk ? n : sizeof chunk);
        if (send_raw(c, chunk, n) != 0)
            return -1;
    }
    return 0;
}

int cn_write(ls_conn *c, const char *data, size_t len)
{
    if (c->closing)
        return -1;
    if (c->tls == NULL)
        return send_raw(c, data, len);
    if (tl_conn_write(&c->tls->t, data, len) != 0)
        return -1;
    return tls_flush(c);
}

void cn_end(ls_conn *c)
{
    if (c->closing || c->ending)
        return;
    c->ending = true;
    c->held = false;             /* reading goes on, to drop what still comes */
    if (!c->server->paused || c->listener->proto->reads_while_paused)
        cn_read_start(c);
    if (c->writes_pending == 0)
        linger(c);
}

static int tls_sink(void *user, const char *data, size_t len)
{
    ls_conn *c = user;
    if (c->ending)
        return 0;
    return c->listener->proto->feed(c, data, len);
}

static void tls_refuse(ls_conn *c, dm_refuse reason, const char *why)
{
    char detail[512];
    snprintf(detail, sizeof detail, "%s %s: %s", c->listener->desc, c->peer, why);
    ls_refused(c->server, reason, detail);
}

/* Bytes from the socket. 0: go on; 1: the peer ended the stream (close,
 * delivering an unfinished line); -1: close and drop it. */
static int conn_feed(ls_conn *c, const char *data, size_t len)
{
    if (c->tls == NULL)
        return c->ending ? 0 : c->listener->proto->feed(c, data, len);
    ls_server *s = c->server;
    char why[256] = "";
    bool was = c->tls->t.established;
    tl_result r = tl_conn_feed(&c->tls->t, data, len, s->pbuf, sizeof s->pbuf, tls_sink, c, why,
                               sizeof why);
    if (tls_flush(c) != 0 && r == TL_OK)
        r = TL_BROKEN;
    if (!was && c->tls->t.established)
        uv_timer_stop(&c->tls->timer);
    switch (r) {
    case TL_OK:
        return 0;
    case TL_CLOSED:
        return 1;
    case TL_REFUSED_HANDSHAKE:
        tls_refuse(c, DM_REFUSE_TLS_HANDSHAKE, why);
        return -1;
    case TL_REFUSED_SUBJECT:
        tls_refuse(c, DM_REFUSE_TLS_SUBJECT, why);
        return -1;
    default:
        lg_debug("%s %s: closed: %s", c->listener->desc, c->peer, why[0] ? why : "TLS failure");
        return -1;
    }
}

static void on_handshake_timeout(uv_timer_t *t)
{
    cn_tls *ct = t->data;
    ls_conn *c = ct->conn;
    if (c == NULL || c->closing)
        return;
    char why[96];
    snprintf(why, sizeof why, "no TLS handshake within %llu ms",
             (unsigned long long)tl_ctx_handshake_timeout_ms(ct->t.ctx));
    tls_refuse(c, DM_REFUSE_TLS_HANDSHAKE, why);
    cn_close(c, false);
}

static void on_tls_closed(uv_handle_t *h)
{
    cn_tls *ct = h->data;
    ct->server->pending_closes--;
    free(ct);
}

static void tls_close(ls_conn *c)
{
    cn_tls *ct = c->tls;
    c->tls = NULL;
    ct->conn = NULL;
    tl_conn_free(&ct->t);        /* the session keys are wiped now, not at the callback */
    uv_timer_stop(&ct->timer);
    c->server->pending_closes++;
    uv_close((uv_handle_t *)&ct->timer, on_tls_closed);
}

static int tls_open(ls_conn *c, tl_ctx *ctx)
{
    ls_server *s = c->server;
    cn_tls *ct = calloc(1, sizeof *ct);
    if (ct == NULL)
        return UV_ENOMEM;
    if (tl_conn_init(&ct->t, ctx) != 0) {
        free(ct);
        return UV_ENOMEM;
    }
    uv_timer_init(s->loop, &ct->timer);
    ct->timer.data = ct;
    ct->conn = c;
    ct->server = s;
    c->tls = ct;
    uv_timer_start(&ct->timer, on_handshake_timeout, tl_ctx_handshake_timeout_ms(ctx), 0);
    return 0;
}

/* ---- Unix peer credentials ------------------------------------------------- */

static bool id_in(uint32_t id, const uint32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Whether the peer of c may write to l; detail says who it was if not. */
static bool peer_allowed(ls_conn *c, const ls_peer_ids *ids, char *detail, size_t cap)
{
    if (ids->n_uids == 0 && ids->n_gids == 0)
        return true;
    uv_os_fd_t fd;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (uv_fileno(&c->h.handle, &fd) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0) {
        snprintf(detail, cap, "SO_PEERCRED: %s", strerror(errno));
        return false;
    }
    if (id_in(cr.uid, ids->uids, ids->n_uids) || id_in(cr.gid, ids->gids, ids->n_gids))
        return true;
#ifdef SO_PEERGROUPS
    gid_t groups[256];
    len = sizeof groups;
    if (ids->n_gids > 0 && getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
        for (size_t i = 0; i < len / sizeof groups[0]; i++)
            if (id_in(groups[i], ids->gids, ids->n_gids))
                return true;
#endif
    snprintf(detail, cap, "uid %u gid %u (pid %d)", (unsigned)cr.uid, (unsigned)cr.gid,
             (int)cr.pid);
    return false;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    ls_conn *c = h->data;
    buf->base = c->server->rbuf;
    buf->len = sizeof c->server->rbuf;
}

static void on_read(uv_stream_t *h, ssize_t nread, const uv_buf_t *buf)
{
    ls_conn *c = h->data;
    ls_server *s = c->server;
    if (nread == 0)              /* EAGAIN */
        return;
    if (nread < 0) {             /* EOF, reset, ...: the last line still counts */
        cn_close(c, true);
        return;
    }
    c->last_ms = ls_active_ms(s);
    if (c != s->tail) {
        list_unlink(s, c);
        list_append(s, c);
    }
    if (c->ending) {             /* after the last reply: dropped */
        c->linger_bytes += (size_t)nread;
        if (c->linger_bytes > CN_LINGER_MAX)
            cn_close(c, false);
        return;
    }
    c->in_read = true;
    int rc = conn_feed(c, buf->base, (size_t)nread);
    c->in_read = false;
    if (rc < 0)                  /* the callback gave up on this client, TLS failed, no memory */
        cn_close(c, false);
    else if (rc > 0 || c->close_requested)
        cn_close(c, true);
}

void cn_read_start(ls_conn *c)
{
    if (!c->held)
        uv_read_start(&c->h.stream, on_alloc, on_read);
}

void cn_hold(ls_conn *c, bool held)
{
    if (c->held == held || c->closing)
        return;
    c->held = held;
    if (held)
        uv_read_stop(&c->h.stream);
    else if (!c->server->paused || c->listener->proto->reads_while_paused)
        cn_read_start(c);
}

void cn_wait_durable(ls_conn *c, bool wait)
{
    ls_server *s = c->server;
    if (c->waiting == wait)
        return;
    c->waiting = wait;
    if (wait) {
        c->wprev = NULL;
        c->wnext = s->whead;
        if (s->whead != NULL)
            s->whead->wprev = c;
        s->whead = c;
        return;
    }
    if (c->wprev != NULL)
        c->wprev->wnext = c->wnext;
    else
        s->whead = c->wnext;
    if (c->wnext != NULL)
        c->wnext->wprev = c->wprev;
    c->wprev = c->wnext = NULL;
}

void cn_read_stop(ls_conn *c)
{
    uv_read_stop(&c->h.stream);
}

static void on_conn_closed(uv_handle_t *h)
{
    ls_conn *c = h->data;
    c->server->pending_closes--;
    if (c->listener != NULL)
        c->listener->proto->free(c);
    free(c);
}

/* At shutdown, what the kernel already received from a client is read
 * before its connection closes, so a client that wrote everything and
 * hung up just before the SIGTERM loses nothing. Bounded by what is
 * queued now (EAGAIN ends it) and by CN_DRAIN_MAX against a client that
 * keeps sending. */
static void drain_socket(ls_conn *c)
{
    ls_server *s = c->server;
    uv_os_fd_t fd;
    if (uv_fileno(&c->h.handle, &fd) != 0)
        return;
    size_t budget = CN_DRAIN_MAX;
    while (budget > 0) {
        ssize_t n = recv(fd, s->rbuf, sizeof s->rbuf, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        c->in_read = true;
        int rc = conn_feed(c, s->rbuf, (size_t)n);
        c->in_read = false;
        if (rc != 0)
            return;
        budget -= (size_t)n < budget ? (size_t)n : budget;
    }
}

void cn_close(ls_conn *c, bool finish)
{
    ls_server *s = c->server;
    if (c->closing)
        return;
    if (c->in_read) {            /* its framer is busy: on_read closes it after */
        c->close_requested = true;
        return;
    }
    if (finish && s->closing)
        drain_socket(c);
    c->closing = true;
    list_unlink(s, c);
    cn_wait_durable(c, false);
    s->n_conns--;
    ls_count(s, &dm_counters_global.connections_open, (uint64_t)-1);
    uv_read_stop(&c->h.stream);
    if (finish)
        c->listener->proto->finish(c);
    if (c->tls != NULL)
        tls_close(c);
    s->pending_closes++;
    uv_close(&c->h.handle, on_conn_closed);
}

static int init_handle(ls_server *s, ls_listener *l, ls_handle *h)
{
    if (l->type == CF_INPUT_TCP)
        return uv_tcp_init(s->loop, &h->tcp);
    return uv_pipe_init(s->loop, &h->pipe, 0);
}

static void free_on_close(uv_handle_t *h)
{
    ls_server *s = h->data;
    s->pending_closes--;
    free(h);
}

void cn_refuse(ls_server *s, ls_listener *l)
{
    ls_handle *h = malloc(sizeof *h);
    if (h == NULL || init_handle(s, l, h) != 0) {
        free(h);                 /* libuv stops watching l until a later accept */
        return;
    }
    h->handle.data = s;
    uv_accept(&l->h.stream, &h->stream);
    s->pending_closes++;
    uv_close(&h->handle, free_on_close);
}

static void name_peer(ls_conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    memcpy(c->peer, "tcp:", 4);
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0)
        lsk_format_inet((const struct sockaddr *)&ss, c->peer + 4, sizeof c->peer - 4);
    else                         /* already gone (ENOTCONN): EOF comes next */
        snprintf(c->peer + 4, sizeof c->peer - 4, "?");
}

/* A connection that never made it onto the list. */
static void close_unlisted(ls_conn *c)
{
    c->closing = true;
    c->server->pending_closes++;
    uv_close(&c->h.handle, on_conn_closed);
}

int cn_accept(ls_server *s, ls_listener *l)
{
    ls_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        cn_refuse(s, l);
        return UV_ENOMEM;
    }
    int rc = init_handle(s, l, &c->h);
    if (rc != 0) {
        free(c);
        cn_refuse(s, l);
        return rc;
    }
    c->h.handle.data = c;
    c->server = s;
    if ((rc = uv_accept(&l->h.stream, &c->h.stream)) != 0) {
        close_unlisted(c);
        return rc;
    }
    c->listener = l;
    char detail[LSK_NAME_MAX + 96];
    if (l->type == CF_INPUT_UNIX && !peer_allowed(c, &l->ids, detail, sizeof detail)) {
        char who[sizeof detail + LSK_NAME_MAX + 40];
        snprintf(who, sizeof who, "%s: %s", l->desc, detail);
        ls_refused(s, DM_REFUSE_PEER_CRED, who);
        close_unlisted(c);       /* nothing was read: nothing it sent lands */
        return 0;
    }
    if (l->type == CF_INPUT_TCP) {
        name_peer(c);
        /* A peer that vanished without FIN/RST is found even with
         * idle_timeout 0. */
        uv_tcp_keepalive(&c->h.tcp, 1, 60);
        if (l->tls != NULL && (rc = tls_open(c, l->tls)) != 0) {
            close_unlisted(c);
            return rc;
        }
    }
    if ((rc = l->proto->open(c)) != 0) {
        if (c->tls != NULL)
            tls_close(c);
        close_unlisted(c);
        return rc;
    }
    c->last_ms = ls_active_ms(s);
    list_append(s, c);
    s->n_conns++;
    ls_count(s, &dm_counters_global.connections_accepted, 1);
    ls_count(s, &dm_counters_global.connections_open, 1);
    if (!s->paused)
        cn_read_start(c);
    return 0;
}
