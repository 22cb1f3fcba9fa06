/* listener.c - the ingest server (listener.h): a listener per input (bound
 * here or adopted from socket activation), accepting within
 * max_connections (an idle HTTP connection closed to make room), the
 * idle sweep, pause/resume for backpressure, and the two-step shutdown;
 * and the same server with one HTTP listener for metrics.listen
 * (ls_server_new_http). One connection's own life is connection.c.
 *
 * Thread: the loop thread only.
 *
 * Startup in two passes: first every input gets a listening fd (lsock.c,
 * plain syscalls), then the fds are wrapped in uv handles. A failure in
 * the first pass closes plain fds, so "nothing stays bound" holds when
 * ls_server_new returns, with no handle left to close asynchronously.
 *
 * Idle timeout: one timer for the whole server, armed for the moment the
 * least recently active connection turns idle (the list head, see
 * connection_int.h), rather than a uv_timer_t per connection: that would
 * add ~150 bytes to every connection and a heap update to every read,
 * where a read here only stores a timestamp and relinks two pointers. */
#include "listener.h"

#include "connection_int.h"

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "http_auth.h"
#include "log.h"

/* A listener to be: the fd and what is needed to wrap and describe it. */
typedef struct ls_plan {
    cf_input_type type;
    cf_input_proto proto;
    hp_settings http;            /* http: limits and endpoints */
    hp_auth *auth;               /* http: loaded before binding too */
    int fd;                      /* -1 until bound or adopted */
    char *path;                  /* unix socket file bound here (ours to remove) */
    lsk_unix_bound bound;
    char desc[LSK_NAME_MAX + 32];/* "inputs[1] tcp 127.0.0.1:5170", for errors and the log */
    char source[LSK_NAME_MAX];   /* unix: "unix:<path>" */
    int input;                   /* cf->inputs index, -1 for an extra inherited socket */
    tl_ctx *tls;                 /* built before binding (a bad certificate binds nothing) */
    ls_peer_ids ids;
} ls_plan;

/* ---- an input's security settings -------------------------------------- */

static void ids_free(ls_peer_ids *ids)
{
    free(ids->uids);
    free(ids->gids);
    memset(ids, 0, sizeof *ids);
}

static int ids_copy(ls_peer_ids *out, const cf_input *in)
{
    memset(out, 0, sizeof *out);
    if (in->n_allow_uids > 0 && (out->uids = malloc(in->n_allow_uids * sizeof *out->uids)) == NULL)
        return PQ_ENOMEM;
    if (in->n_allow_gids > 0 && (out->gids = malloc(in->n_allow_gids * sizeof *out->gids)) == NULL) {
        ids_free(out);
        return PQ_ENOMEM;
    }
    if (in->n_allow_uids > 0)
        memcpy(out->uids, in->allow_uids, in->n_allow_uids * sizeof *out->uids);
    if (in->n_allow_gids > 0)
        memcpy(out->gids, in->allow_gids, in->n_allow_gids * sizeof *out->gids);
    out->n_uids = in->n_allow_uids;
    out->n_gids = in->n_allow_gids;
    return PQ_OK;
}

/* The TLS context and allow lists of input i, into *tls and *ids. */
static int secure_input(const cf_input *in, size_t i, tl_ctx **tls, ls_peer_ids *ids,
                        pq_err *err)
{
    char what[48];
    *tls = NULL;
    snprintf(what, sizeof what, "inputs[%zu].tls", i);
    if (in->tls != NULL) {
        int rc = tl_ctx_new(tls, in->tls, what, err);
        if (rc != 0)
            return rc;
    }
    if (ids_copy(ids, in) != 0) {
        tl_ctx_unref(*tls);
        *tls = NULL;
        return pq_err_set(err, PQ_ENOMEM, "listener: out of memory");
    }
    return PQ_OK;
}

/* ---- pass 1: a listening fd per input --------------------------------- */

static hp_settings http_of(const cf_input *in)
{
    return (hp_settings){.max_body_bytes = in->http.max_body_bytes,
                         .max_header_bytes = (size_t)in->http.max_header_bytes,
                         .max_headers = (size_t)in->http.max_headers,
                         .header_timeout_ms = in->http.header_timeout_ms,
                         .ep = &hp_endpoints_ingest};
}

static void describe_input(ls_plan *p, size_t i, const cf_input *in)
{
    bool http = in->proto == CF_PROTO_HTTP;
    if (in->type == CF_INPUT_TCP) {
        bool v6 = strchr(in->listen.host, ':') != NULL;
        snprintf(p->desc, sizeof p->desc, "inputs[%zu] %s %s%s%s:%u", i, http ? "http" : "tcp",
                 v6 ? "[" : "", in->listen.host, v6 ? "]" : "", (unsigned)in->listen.port);
    } else {
        snprintf(p->desc, sizeof p->desc, "inputs[%zu] %s %s", i, http ? "http unix" : "unix",
                 in->path);
        snprintf(p->source, sizeof p->source, "unix:%s", in->path);
    }
}

static bool matches(const cf_input *in, const lsk_addr *a)
{
    if (in->type == CF_INPUT_TCP)
        return lsk_tcp_matches(in->listen.host, in->listen.port, a);
    return lsk_unix_matches(in->path, a);
}

/* Works on a duplicate, so a failed startup leaves the inherited fd to
 * its owner exactly as it was. */
static int adopt(ls_plan *p, int fd, pq_err *err)
{
    p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (p->fd < 0)
        return pq_err_set(err, PQ_EIO, "%s: inherited fd %d: dup: %s", p->desc, fd,
                          strerror(errno));
    return PQ_OK;
}

static int bind_input(ls_plan *p, const cf_input *in, pq_err *err)
{
    int rc;
    if (in->type == CF_INPUT_TCP) {
        rc = lsk_tcp_listen(in->listen.host, in->listen.port, LS_BACKLOG, &p->fd, err);
    } else {
        rc = lsk_unix_listen(in->path, in->mode, LS_BACKLOG, &p->fd, &p->bound, err);
        if (rc == 0 && (p->path = strdup(in->path)) == NULL)
            rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    return rc == 0 ? 0 : pq_err_prefix(err, rc, "%s", p->desc);
}

/* An inherited socket no input asked for: an input of its own. */
static int plan_extra(ls_plan *p, const ls_inherited *ih, const lsk_addr *a, pq_err *err)
{
    const char *name = ih->name != NULL ? ih->name : "unnamed";
    char where[112];             /* "@" + a 108-byte abstract name, or an address */
    if (a->ss.ss_family == AF_UNIX) {
        p->type = CF_INPUT_UNIX;
        lsk_unix_path(a, where, sizeof where);
        snprintf(p->source, sizeof p->source, "unix:%s", where);
    } else {
        p->type = CF_INPUT_TCP;
        lsk_format_inet((const struct sockaddr *)&a->ss, where, sizeof where);
    }
    snprintf(p->desc, sizeof p->desc, "inherited fd %d (%s) %s %s", ih->fd, name,
             p->type == CF_INPUT_TCP ? "tcp" : "unix", where);
    return adopt(p, ih->fd, err);
}

static int check_inherited(const ls_inherited *ih, size_t n, lsk_addr *addrs, pq_err *err)
{
    for (size_t j = 0; j < n; j++) {
        int rc = lsk_sockname(ih[j].fd, &addrs[j], err);
        if (rc != 0)
            return pq_err_prefix(err, rc, "inherited fd %d (%s)", ih[j].fd,
                                 ih[j].name != NULL ? ih[j].name : "unnamed");
        for (size_t k = 0; k < j; k++)
            if (ih[k].fd == ih[j].fd)
                return pq_err_set(err, PQ_EINVAL, "inherited fd %d is listed twice", ih[j].fd);
    }
    return PQ_OK;
}

static void unplan(ls_plan *plans, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (plans[i].fd >= 0)
            close(plans[i].fd);
        if (plans[i].path != NULL)
            lsk_unix_unlink(plans[i].path, &plans[i].bound);
        free(plans[i].path);
        tl_ctx_unref(plans[i].tls);
        hp_auth_free(plans[i].auth);
        ids_free(&plans[i].ids);
    }
    free(plans);
}

/* Fills plans (cf->n_inputs + n_ih entries) and *n_plans. On failure
 * every fd opened so far is closed and every socket file removed. */
static int plan_all(const cf_config *cf, const ls_inherited *ih, size_t n_ih, ls_plan **out,
                    size_t *n_plans, pq_err *err)
{
    size_t cap = cf->n_inputs + n_ih, n = 0;
    ls_plan *plans = calloc(cap ? cap : 1, sizeof *plans);
    lsk_addr *addrs = calloc(n_ih ? n_ih : 1, sizeof *addrs);
    bool *used = calloc(n_ih ? n_ih : 1, sizeof *used);
    int rc = plans && addrs && used ? 0 : pq_err_set(err, PQ_ENOMEM, "out of memory");
    if (rc == 0)
        rc = check_inherited(ih, n_ih, addrs, err);
    for (size_t i = 0; rc == 0 && i < cf->n_inputs; i++, n++) {
        const cf_input *in = &cf->inputs[i];
        ls_plan *p = &plans[n];
        p->fd = -1;
        p->type = in->type;
        p->proto = in->proto;
        p->http = http_of(in);
        p->input = (int)i;
        describe_input(p, i, in);
        if ((rc = secure_input(in, i, &p->tls, &p->ids, err)) != 0)
            break;
        if (in->proto == CF_PROTO_HTTP && (rc = hp_auth_load(&p->auth, &in->http, i, err)) != 0)
            break;
        size_t j = 0;
        while (j < n_ih && (used[j] || !matches(in, &addrs[j])))
            j++;
        if (j < n_ih) {
            used[j] = true;
            rc = adopt(p, ih[j].fd, err);
        } else {
            rc = bind_input(p, in, err);
        }
    }
    for (size_t j = 0; rc == 0 && j < n_ih; j++)
        if (!used[j]) {
            plans[n].fd = -1;
            plans[n].input = -1;
            rc = plan_extra(&plans[n++], &ih[j], &addrs[j], err);
        }
    free(addrs);
    free(used);
    if (rc != 0) {
        if (plans != NULL)
            unplan(plans, n);
        return rc;
    }
    *out = plans;
    *n_plans = n;
    return PQ_OK;
}

/* ---- pass 2: uv handles ----------------------------------------------- */

static void on_connection(uv_stream_t *h, int status);

static void free_listener(ls_listener *l)
{
    free(l->path);
    tl_ctx_unref(l->tls);
    hp_auth_free(l->auth);
    ids_free(&l->ids);
    free(l);
}

/* DESIGN.md: a TCP input on a non-loopback address without `tls:` starts
 * with a warning (anyone on the path can read and forge its records). */
static void warn_if_exposed(const ls_listener *l, const lsk_addr *a)
{
    if (l->type != CF_INPUT_TCP || l->tls != NULL || lsk_is_loopback(a) || l->input < 0)
        return;
    lg_warning("%s: plaintext TCP on a non-loopback address: anyone on the network path "
               "can read and forge its records (add tls: to the input, or listen on "
               "127.0.0.1)", l->desc);
}

static void free_listener_on_close(uv_handle_t *h)
{
    free_listener(h->data);
}

static void on_listener_closed(uv_handle_t *h)
{
    ls_listener *l = h->data;
    l->server->pending_closes--;
}

/* Takes p->fd (and p->path) over, even on failure. */
static int wrap(ls_server *s, ls_plan *p, ls_listener **out, pq_err *err)
{
    ls_listener *l = calloc(1, sizeof *l);
    if (l == NULL) {
        close(p->fd);
        p->fd = -1;
        return pq_err_set(err, PQ_ENOMEM, "%s: out of memory", p->desc);
    }
    l->server = s;
    l->type = p->type;
    l->path = p->path;
    l->bound = p->bound;
    l->input = p->input;
    l->tls = p->tls;
    l->ids = p->ids;
    l->proto = p->proto == CF_PROTO_HTTP ? &cn_proto_http : &cn_proto_lines;
    l->http = p->http;
    l->auth = p->auth;
    p->auth = NULL;
    p->path = NULL;
    p->tls = NULL;
    memset(&p->ids, 0, sizeof p->ids);
    memcpy(l->source, p->source, sizeof l->source);
    memcpy(l->desc, p->desc, sizeof l->desc);
    int rc = p->type == CF_INPUT_TCP ? uv_tcp_init(s->loop, &l->h.tcp)
                                     : uv_pipe_init(s->loop, &l->h.pipe, 0);
    if (rc != 0) {
        close(p->fd);
        p->fd = -1;
        free_listener(l);
        return pq_err_set(err, PQ_EIO, "%s: %s", p->desc, uv_strerror(rc));
    }
    l->h.handle.data = l;
    rc = p->type == CF_INPUT_TCP ? uv_tcp_open(&l->h.tcp, p->fd) : uv_pipe_open(&l->h.pipe, p->fd);
    if (rc != 0)
        close(p->fd);            /* not the handle's: uv_close will not close it */
    p->fd = -1;
    if (rc == 0)
        rc = uv_listen(&l->h.stream, LS_BACKLOG, on_connection);
    if (rc != 0) {
        if (l->path != NULL)
            lsk_unix_unlink(l->path, &l->bound);
        uv_close(&l->h.handle, free_listener_on_close);
        return pq_err_set(err, PQ_EIO, "%s: %s", p->desc, uv_strerror(rc));
    }
    if (p->type == CF_INPUT_TCP) {
        lsk_addr a = {.len = sizeof a.ss};
        int len = (int)a.len;
        if (uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&a.ss, &len) == 0) {
            l->port = lsk_port(&a);
            warn_if_exposed(l, &a);
        }
    }
    *out = l;
    return PQ_OK;
}

/* A failed pass 2: handles close asynchronously and free their listener
 * themselves, but their fds and socket files are gone at once. */
static void unwrap(ls_server *s)
{
    for (size_t i = 0; i < s->n_listeners; i++) {
        ls_listener *l = s->listeners[i];
        if (l->path != NULL)
            lsk_unix_unlink(l->path, &l->bound);
        l->h.handle.data = l;
        uv_close(&l->h.handle, free_listener_on_close);
    }
}

/* What an operator checks after a change: which inputs use TLS and whom
 * they let in. */
static void log_security(const ls_listener *l, const cf_config *cf)
{
    if (l->input < 0)
        return;
    const cf_input *in = &cf->inputs[l->input];
    if (in->tls != NULL)
        lg_info("%s: TLS %s or later%s%s; %zu allow_subjects entr%s", l->desc,
                in->tls->min_version == 13 ? "1.3" : "1.2",
                in->tls->client_ca ? ", client certificates signed by " : ", no client certificates",
                in->tls->client_ca ? in->tls->client_ca : "", in->tls->n_allow_subjects,
                in->tls->n_allow_subjects == 1 ? "y" : "ies");
    if (in->n_allow_uids + in->n_allow_gids > 0)
        lg_info("%s: only peers in allow_uids (%zu) / allow_gids (%zu)", l->desc,
                in->n_allow_uids, in->n_allow_gids);
}

/* Pass 2 and the rest, for plans made (taken over: on failure nothing
 * stays bound and s is freed). */
static int serve(ls_server *s, ls_plan *plans, size_t n, const cf_config *cf, pq_err *err)
{
    int rc = 0;
    if ((s->listeners = calloc(n ? n : 1, sizeof *s->listeners)) == NULL)
        rc = pq_err_set(err, PQ_ENOMEM, "listener: out of memory");
    ls_server_set_limits(s, cf);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((rc = wrap(s, &plans[i], &s->listeners[i], err)) == 0)
            s->n_listeners++;
    if (rc != 0) {
        unwrap(s);
        unplan(plans, n);        /* the fds not wrapped yet */
        free(s->listeners);
        free(s);
        return rc;
    }
    free(plans);
    for (size_t i = 0; i < s->n_listeners; i++)
        log_security(s->listeners[i], cf);
    uv_timer_init(s->loop, &s->sweep);
    s->sweep.data = s;
    return PQ_OK;
}

int ls_server_new(ls_server **out, uv_loop_t *loop, const cf_config *cf,
                  const ls_inherited *inherited, size_t n_inherited, const ls_callbacks *cb,
                  pq_err *err)
{
    *out = NULL;
    if (loop == NULL || cf == NULL || cb == NULL || cb->on_line == NULL ||
        (n_inherited > 0 && inherited == NULL) || cf->limits.max_line_bytes == 0)
        return pq_err_set(err, PQ_EINVAL, "listener: missing loop, configuration or on_line");
    ls_server *s = calloc(1, sizeof *s);
    ls_plan *plans = NULL;
    size_t n = 0;
    if (s == NULL)
        return pq_err_set(err, PQ_ENOMEM, "listener: out of memory");
    int rc = plan_all(cf, inherited, n_inherited, &plans, &n, err);
    if (rc != 0) {
        free(s);
        return rc;
    }
    s->loop = loop;
    s->cb = *cb;
    if ((rc = serve(s, plans, n, cf, err)) != 0)
        return rc;
    /* Ours now (the handles work on duplicates). */
    for (size_t j = 0; j < n_inherited; j++)
        close(inherited[j].fd);
    *out = s;
    return PQ_OK;
}

/* An endpoint server carries no records: a line would be a bug. */
static int no_line(void *user, const char *source, const fr_line *line)
{
    (void)user, (void)source, (void)line;
    return -1;
}

int ls_server_new_http(ls_server **out, uv_loop_t *loop, const char *what, const cf_addr *addr,
                       const cf_config *cf, const hp_settings *http, pq_err *err)
{
    *out = NULL;
    ls_server *s = calloc(1, sizeof *s);
    ls_plan *p = calloc(1, sizeof *p);
    if (s == NULL || p == NULL) {
        free(s);
        free(p);
        return pq_err_set(err, PQ_ENOMEM, "%s: out of memory", what);
    }
    *p = (ls_plan){.type = CF_INPUT_TCP, .proto = CF_PROTO_HTTP, .input = -1, .fd = -1,
                   .http = *http};
    bool v6 = strchr(addr->host, ':') != NULL;
    snprintf(p->desc, sizeof p->desc, "%s %s%s%s:%u", what, v6 ? "[" : "", addr->host,
             v6 ? "]" : "", (unsigned)addr->port);
    int rc = lsk_tcp_listen(addr->host, addr->port, LS_BACKLOG, &p->fd, err);
    if (rc != 0) {
        pq_err_prefix(err, rc, "%s", p->desc);
        free(s);
        free(p);
        return rc;
    }
    s->loop = loop;
    s->cb = (ls_callbacks){.on_line = no_line};
    s->uncounted = true;
    if ((rc = serve(s, p, 1, cf, err)) != 0)
        return rc;
    *out = s;
    return PQ_OK;
}

/* ---- accepting -------------------------------------------------------- */

static void refused_full(ls_server *s)
{
    char detail[64];
    snprintf(detail, sizeof detail, "limits.max_connections (%zu)", s->max_connections);
    ls_refused(s, DM_REFUSE_MAX_CONNECTIONS, detail);
}

static void schedule_sweep(ls_server *s);

/* Full, and the new connection is HTTP: the least recently active HTTP
 * connection between requests (or still in its headers) makes room, as
 * an HTTP server may close an idle keep-alive connection at any time
 * (RFC 9112 9.3): a thousand idle clients then cannot lock the others
 * out (issue 21). A connection reading a body or owed a reply stays.
 * Whether one was closed. */
static bool evict_idle_http(ls_server *s)
{
    for (ls_conn *c = s->head; c != NULL; c = c->next)
        if (c->listener->proto == &cn_proto_http && !cn_http_busy(c)) {
            ls_count(s, &dm_counters_global.connections_idle_closed, 1);
            cn_close(c, false);
            return true;
        }
    return false;
}

static void on_connection(uv_stream_t *h, int status)
{
    ls_listener *l = h->data;
    ls_server *s = l->server;
    if (status == 0 && s->max_connections > 0 && s->n_conns >= s->max_connections &&
        (l->proto != &cn_proto_http || !evict_idle_http(s))) {
        cn_refuse(s, l);
        refused_full(s);
        return;
    }
    if (status == 0 && (status = cn_accept(s, l)) == 0) {
        if (!uv_is_active((uv_handle_t *)&s->sweep))
            schedule_sweep(s);
        return;
    }
    /* Out of fds: libuv sheds pending connections with a spare fd without
     * telling us; EMFILE arrives here only when that trick failed. */
    if (status == UV_EMFILE || status == UV_ENFILE) {
        ls_count(s, &dm_counters_global.connections_refused, 1);
        ls_count(s, &dm_counters_global.connections_refused_by[DM_REFUSE_OUT_OF_FDS], 1);
    }
    if (ls_once_a_minute(s, &s->accept_err_logged, &s->accept_err_log_ms))
        lg_warning("%s: accepting a connection failed: %s (logged at most once a minute)",
                   l->desc, uv_strerror(status));
}

/* ---- idle sweep ------------------------------------------------------- */

static void on_sweep(uv_timer_t *t)
{
    ls_server *s = t->data;
    while (!s->closing && !s->paused && s->idle_timeout_ms > 0 && s->head != NULL &&
           ls_active_ms(s) - s->head->last_ms >= s->idle_timeout_ms) {
        ls_count(s, &dm_counters_global.connections_idle_closed, 1);
        cn_close(s->head, true);
    }
    schedule_sweep(s);
}

/* Arms the timer for when the least recently active connection turns
 * idle. Reads only move connections back, so the timer may fire early;
 * on_sweep then finds nothing idle and arms it again. */
static void schedule_sweep(ls_server *s)
{
    if (s->closing || s->paused || s->idle_timeout_ms == 0 || s->head == NULL) {
        uv_timer_stop(&s->sweep);
        return;
    }
    uint64_t now = ls_active_ms(s), due = s->head->last_ms + s->idle_timeout_ms;
    uv_timer_start(&s->sweep, on_sweep, due > now ? due - now : 0, 0);
}

/* ---- reload ------------------------------------------------------------ */

struct ls_security {
    size_t n;                    /* = the server's n_listeners */
    tl_ctx **tls;
    ls_peer_ids *ids;
    hp_auth **auth;              /* http: the credential files read again */
    hp_settings *http;           /* http: the new limits */
    bool *take;                  /* listener i gets tls[i], ids[i], auth[i], http[i] */
};

void ls_security_free(ls_security *sec)
{
    if (sec == NULL)
        return;
    for (size_t i = 0; sec->tls && sec->ids && sec->auth && i < sec->n; i++) {
        tl_ctx_unref(sec->tls[i]);
        ids_free(&sec->ids[i]);
        hp_auth_free(sec->auth[i]);
    }
    free(sec->tls);
    free(sec->ids);
    free(sec->auth);
    free(sec->http);
    free(sec->take);
    free(sec);
}

/* Reads everything now, so a bad certificate or key changes nothing. */
int ls_server_prepare_security(ls_server *s, const cf_config *cf, ls_security **out, pq_err *err)
{
    size_t n = s->n_listeners;
    ls_security *sec = calloc(1, sizeof *sec);
    *out = NULL;
    if (sec == NULL)
        return pq_err_set(err, PQ_ENOMEM, "listener: out of memory");
    sec->n = n;
    sec->tls = calloc(n ? n : 1, sizeof *sec->tls);
    sec->ids = calloc(n ? n : 1, sizeof *sec->ids);
    sec->take = calloc(n ? n : 1, sizeof *sec->take);
    sec->auth = calloc(n ? n : 1, sizeof *sec->auth);
    sec->http = calloc(n ? n : 1, sizeof *sec->http);
    int rc = sec->tls && sec->ids && sec->take && sec->auth && sec->http ? 0
             : pq_err_set(err, PQ_ENOMEM, "listener: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const ls_listener *l = s->listeners[i];
        if (l->input < 0 || (size_t)l->input >= cf->n_inputs)
            continue;
        const cf_input *in = &cf->inputs[l->input];
        ls_plan p = {0};
        describe_input(&p, (size_t)l->input, in);
        if (in->type != l->type || strcmp(p.desc, l->desc) != 0 ||
            (in->tls != NULL) != (l->tls != NULL) ||
            (in->proto == CF_PROTO_HTTP) != (l->proto == &cn_proto_http)) {
            lg_warning("reload: %s: the new configuration changes this input's address or "
                       "whether it uses TLS; that takes a restart (kept as it is)", l->desc);
            continue;
        }
        sec->take[i] = true;
        rc = secure_input(in, (size_t)l->input, &sec->tls[i], &sec->ids[i], err);
        if (rc == 0 && in->proto == CF_PROTO_HTTP) {
            sec->http[i] = http_of(in);
            rc = hp_auth_load(&sec->auth[i], &in->http, (size_t)l->input, err);
        }
    }
    if (rc != 0) {
        ls_security_free(sec);
        return rc;
    }
    *out = sec;
    return PQ_OK;
}

/* A connection keeps the context it started with (tl_conn holds a
 * reference), so swapping under open connections is safe. */
void ls_server_commit_security(ls_server *s, ls_security *sec)
{
    for (size_t i = 0; i < sec->n && i < s->n_listeners; i++) {
        if (!sec->take[i])
            continue;
        ls_listener *l = s->listeners[i];
        tl_ctx *old = l->tls;
        l->tls = sec->tls[i];
        sec->tls[i] = old;
        ls_peer_ids old_ids = l->ids;
        l->ids = sec->ids[i];
        sec->ids[i] = old_ids;
        if (l->proto == &cn_proto_http) {
            hp_auth *old_auth = l->auth;   /* connections read l->auth per request */
            l->auth = sec->auth[i];
            sec->auth[i] = old_auth;
            l->http = sec->http[i];
        }
    }
    ls_security_free(sec);       /* what was replaced */
}

/* ---- limits, backpressure --------------------------------------------- */

void ls_server_set_limits(ls_server *s, const cf_config *cf)
{
    if (cf->limits.max_line_bytes > 0)
        s->max_line_bytes = cf->limits.max_line_bytes;
    s->max_connections = cf->limits.max_connections;    /* 0: no limit */
    s->idle_timeout_ms = cf->limits.idle_timeout_ms;
    /* HTTP bodies in memory at once: a quarter of what may be in flight */
    s->http_bodies.cap = cf->limits.max_buffered_bytes / 4;
    if (s->sweep.data == s)      /* the timer exists (not yet during ls_server_new) */
        schedule_sweep(s);
}

void ls_server_pause(ls_server *s)
{
    if (s->paused || s->closing)
        return;
    s->pause_start_ms = uv_now(s->loop);
    s->pause_start_ns = uv_hrtime();
    s->paused = true;
    for (ls_conn *c = s->head; c != NULL; c = c->next)
        if (!c->listener->proto->reads_while_paused)
            cn_read_stop(c);
    uv_timer_stop(&s->sweep);
    dm_set(&dm_counters_global.backpressure_active, 1);
}

static void end_pause(ls_server *s)
{
    s->paused_ms += uv_now(s->loop) - s->pause_start_ms;
    s->paused = false;
    dm_add(&dm_counters_global.backpressure_us, (uv_hrtime() - s->pause_start_ns) / 1000);
    dm_set(&dm_counters_global.backpressure_active, 0);
}

void ls_server_resume(ls_server *s)
{
    if (!s->paused || s->closing)
        return;
    end_pause(s);
    for (ls_conn *c = s->head; c != NULL; c = c->next)
        cn_read_start(c);
    schedule_sweep(s);
}

bool ls_server_paused(const ls_server *s)
{
    return s->paused;
}

size_t ls_server_connections(const ls_server *s)
{
    return s->n_conns;
}

int ls_server_bound_port(const ls_server *s, size_t input)
{
    if (input >= s->n_listeners)
        return -1;
    return s->listeners[input]->port;
}

/* ---- shutdown --------------------------------------------------------- */

void ls_server_stop_accepting(ls_server *s)
{
    if (s->accepting_stopped)
        return;
    s->accepting_stopped = true;
    for (size_t i = 0; i < s->n_listeners; i++) {
        ls_listener *l = s->listeners[i];
        s->pending_closes++;
        uv_close(&l->h.handle, on_listener_closed);   /* the fd closes now */
        if (l->path != NULL)
            lsk_unix_unlink(l->path, &l->bound);
    }
}

static void on_timer_closed(uv_handle_t *h)
{
    ls_server *s = h->data;
    s->pending_closes--;
}

void ls_server_close(ls_server *s)
{
    if (s->closing)
        return;
    ls_server_stop_accepting(s);
    if (s->paused)
        end_pause(s);            /* reading stays stopped: nothing more is read */
    s->closing = true;
    s->pending_closes++;
    uv_close((uv_handle_t *)&s->sweep, on_timer_closed);
    /* Finishing a line calls back into the caller, which may close more;
     * hence restart from the head. A connection inside its read_cb (we are
     * called from its on_line) closes when that returns. */
    for (;;) {
        ls_conn *c = s->head;
        while (c != NULL && c->in_read) {
            c->close_requested = true;
            c = c->next;
        }
        if (c == NULL)
            break;
        cn_close(c, true);
    }
}

bool ls_server_closed(const ls_server *s)
{
    return s->closing && s->pending_closes == 0 && s->n_conns == 0;
}

void ls_server_destroy(ls_server *s)
{
    if (s == NULL)
        return;
    assert(ls_server_closed(s));
    for (size_t i = 0; i < s->n_listeners; i++)
        free_listener(s->listeners[i]);
    free(s->listeners);
    free(s);
}

void ls_server_durable(ls_server *s, uint64_t durable)
{
    if (durable > s->durable)
        s->durable = durable;
    ls_conn *c = s->whead;
    while (c != NULL) {
        ls_conn *next = c->wnext;    /* the call may take c off the list */
        cn_http_durable(c, s->durable);
        c = next;
    }
}

bool ls_server_waiting(const ls_server *s)
{
    return s->whead != NULL;
}
