/* listener.h - ingest: TCP (IPv4, IPv6) and Unix stream listeners, their
 * connections, and line framing per connection (DESIGN.md
 * "Configuration" inputs and limits; issue: thousands of clients, hostile
 * ones included).
 *
 * Thread: the loop thread only; every callback runs on it.
 *
 * Listeners come from cf->inputs, or are adopted from systemd socket
 * activation (LISTEN_FDS; see listenfds.h): an inherited socket whose
 * address matches an input replaces binding it, and inherited sockets
 * that match no input are used as extra inputs of their kind.
 * A Unix socket path left by a dead process is removed and bound again; one
 * that a live process still accepts on is refused with an error (two
 * daemons never share a socket). mode (e.g. 0660) is applied with chmod
 * after bind.
 *
 * Connections: at most limits.max_connections at once (more are accepted
 * and closed at once, counted as refused, logged at most once a minute);
 * closed after limits.idle_timeout without a byte received. Memory per
 * idle connection is small (no read buffer of its own: reads go through
 * one shared buffer; only an unfinished line is kept, in the connection's
 * framer, at most max_line_bytes + 1).
 *
 * Lines: every complete line goes to cb->on_line, in order per connection;
 * a client that closes mid-line gets its last line delivered (fr_finish).
 * After all lines of one read are delivered, cb->on_read_done runs once
 * (the caller's group-commit point: flush the spool, hand a batch on); a
 * read that completes no line (a slow client's fragment) does not call it.
 *
 * Who may write (issue 11): a TCP input with `tls:` runs every
 * connection through tls.h (a handshake within handshake_timeout, the
 * client certificate and subject checked when configured) and hands on
 * only the decrypted bytes; a Unix input with allow_uids / allow_gids
 * checks the peer with SO_PEERCRED right after accept. A refused peer is
 * closed before anything it sent is framed, counted by reason
 * (dm_refuse) and logged at most once a minute per reason. A plaintext
 * TCP input bound to a non-loopback address logs a warning at start.
 *
 * Backpressure: ls_server_pause stops reading every connection
 * (uv_read_stop) and ls_server_resume starts again; accepting continues
 * while paused so clients connect and wait in their socket buffers. */
#ifndef PQ_LISTENER_H
#define PQ_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "err.h"
#include "framer.h"
#include "http_conn.h"
#include "listener_cb.h"

/* A socket inherited from the service manager (listenfds.h). */
typedef struct ls_inherited {
    int fd;
    const char *name;            /* LISTEN_FDNAMES entry, or NULL */
} ls_inherited;

typedef struct ls_server ls_server;

/* Binds/listens on every input (or adopts inherited sockets). Nothing is
 * accepted until the loop runs. Returns 0 or PQ_EIO / PQ_EINVAL /
 * PQ_ENOMEM with err naming the input ("inputs[1] tcp 127.0.0.1:5170:
 * Address already in use"); on failure nothing stays bound.
 * Inherited fds: on success the server owns them (it works on duplicates
 * and closes these, so the caller only frees the array, lf_free); on
 * failure they are left open and untouched. An inherited socket must be
 * a listening TCP or Unix stream socket (systemd Accept=no). */
int ls_server_new(ls_server **out, uv_loop_t *loop, const cf_config *cf,
                  const ls_inherited *inherited, size_t n_inherited, const ls_callbacks *cb,
                  pq_err *err);

/* A server of one HTTP listener at addr whose requests go to http->ep
 * (metrics.listen: daemon/ops/metrics.c), with the inputs' connection
 * code: cf->limits' max_connections (an idle HTTP connection makes room
 * for a new one) and idle_timeout, and http's limits (metrics.c asks for
 * bodies of at most LS_ENDPOINT_MAX_BODY: nothing there takes one). It
 * moves none of the ingest counters. what names it in errors and the log
 * ("metrics.listen 127.0.0.1:9170: Address already in use"). Closed and
 * destroyed as the input server is (ls_server_close, ls_server_destroy). */
#define LS_ENDPOINT_MAX_BODY ((uint64_t)64 << 10)
int ls_server_new_http(ls_server **out, uv_loop_t *loop, const char *what, const cf_addr *addr,
                       const cf_config *cf, const hp_settings *http, pq_err *err);

void ls_server_pause(ls_server *s);
void ls_server_resume(ls_server *s);
bool ls_server_paused(const ls_server *s);
size_t ls_server_connections(const ls_server *s);
/* The TCP port listener `input` is bound to (inputs in cf->inputs order,
 * then extra inherited sockets): what port 0 became. 0 for a Unix
 * listener, -1 past the last one. */
int ls_server_bound_port(const ls_server *s, size_t input);

/* New limits after a reload (max_line_bytes applies to new connections,
 * max_connections and idle_timeout at once). Listeners are not rebound. */
void ls_server_set_limits(ls_server *s, const cf_config *cf);

/* A reload's new TLS contexts (certificate, key, client CA,
 * allow_subjects: files read again, the key's mode checked again),
 * allow_uids / allow_gids, and an http input's auth files (read again:
 * open keep-alive connections check their next request against the new
 * credentials) and header and body limits, for the listeners whose input in cf has the
 * same index and address. Prepare reads everything and changes nothing:
 * 0 with *out, or an error (err names the input and file). Commit
 * switches every such listener and frees what it replaced (and sec);
 * connections already open keep the context they started with. Free
 * drops a prepared set unused. An input whose address, or whether it
 * uses TLS, changed is left as it is with a warning: that takes a
 * restart. */
typedef struct ls_security ls_security;
int ls_server_prepare_security(ls_server *s, const cf_config *cf, ls_security **out,
                               pq_err *err);
void ls_server_commit_security(ls_server *s, ls_security *sec);
void ls_security_free(ls_security *sec);

/* The spool holds every record < durable as durably as spool.sync says:
 * HTTP replies waiting for that are sent (ls_callbacks.want_durable). */
void ls_server_durable(ls_server *s, uint64_t durable);
/* Whether any HTTP reply still waits for the spool. */
bool ls_server_waiting(const ls_server *s);

/* Shutdown, step 1: closes the listeners (no new connections). */
void ls_server_stop_accepting(ls_server *s);
/* Step 2: reads what the kernel already received from each connection
 * (a client that wrote everything and hung up loses nothing), delivers
 * every unfinished last line (fr_finish), closes all connections. Unix socket files this server
 * bound are unlinked (at step 1 already: a closed listener's file would be
 * a stale socket). The loop must run until done (the handles close
 * asynchronously); then ls_server_destroy. May be called from on_line:
 * that connection then closes once its current read is framed. */
void ls_server_close(ls_server *s);
bool ls_server_closed(const ls_server *s);
void ls_server_destroy(ls_server *s);

#endif
