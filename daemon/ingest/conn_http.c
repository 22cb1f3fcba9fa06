/* conn_http.c - the HTTP protocol on a connection (cn_proto_http): the
 * glue between one ls_conn and its hp_conn (http_conn.h): replies go out
 * with cn_write, "Connection: close" with cn_end, a full reply queue
 * stops reading (cn_hold), replies waiting for the spool put the
 * connection on the server's list (cn_wait_durable), and a timer per
 * connection bounds the time from a request's first byte to the end of
 * its headers (the input's header_timeout: slowloris). The listener says
 * what the requests are for (ingest or metrics.listen's endpoints).
 *
 * Thread: the loop thread only.
 *
 * The timer is a separate allocation, as cn_tls's is: it closes
 * asynchronously and may outlive the connection by a loop iteration. */
#include "connection_int.h"

#include <stdlib.h>

#include "http_conn.h"

typedef struct cn_http {
    hp_conn *hp;
    uv_timer_t timer;            /* header timeout; timer.data = this */
    ls_conn *conn;               /* cleared once the connection closes */
    ls_server *server;
} cn_http;

static int io_write(void *user, const char *data, size_t len)
{
    return cn_write(user, data, len);
}

static void io_end(void *user) { cn_end(user); }
static void io_hold(void *user, bool held) { cn_hold(user, held); }
static void io_wait(void *user, bool waiting) { cn_wait_durable(user, waiting); }

static void on_header_timeout(uv_timer_t *t)
{
    cn_http *ch = t->data;
    if (ch->conn == NULL || ch->conn->closing)
        return;
    hp_conn_timeout(ch->hp);
}

static int http_open(ls_conn *c)
{
    ls_server *s = c->server;
    cn_http *ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return UV_ENOMEM;
    const ls_listener *l = c->listener;
    hp_limits lim = {.max_body_bytes = l->http.max_body_bytes,
                     .max_line_bytes = s->max_line_bytes,
                     .max_header_bytes = l->http.max_header_bytes,
                     .max_headers = l->http.max_headers, .bodies = &s->http_bodies,
                     .ep = l->http.ep};
    hp_io io = {.user = c, .write = io_write, .end = io_end, .hold = io_hold, .wait = io_wait};
    ch->hp = hp_conn_new(&lim, cn_source(c), &s->cb, (const hp_auth *const *)&l->auth, &io);
    if (ch->hp == NULL) {
        free(ch);
        return UV_ENOMEM;
    }
    hp_conn_durable(ch->hp, s->durable);
    uv_timer_init(s->loop, &ch->timer);
    ch->timer.data = ch;
    ch->conn = c;
    ch->server = s;
    c->http = ch;
    return 0;
}

static int http_feed(ls_conn *c, const char *data, size_t len)
{
    cn_http *ch = c->http;
    int rc = hp_conn_feed(ch->hp, data, len);
    bool active = uv_is_active((uv_handle_t *)&ch->timer);
    if (hp_conn_in_headers(ch->hp)) {
        uint64_t ms = c->listener->http.header_timeout_ms;
        if (!active)
            uv_timer_start(&ch->timer, on_header_timeout, ms > 0 ? ms : HP_HEADER_TIMEOUT_MS, 0);
    } else if (active) {
        uv_timer_stop(&ch->timer);
    }
    return rc;
}

static void http_finish(ls_conn *c)
{
    (void)c;                     /* an unfinished request was never acknowledged */
}

static void on_timer_closed(uv_handle_t *h)
{
    cn_http *ch = h->data;
    ch->server->pending_closes--;
    hp_conn_free(ch->hp);
    free(ch);
}

static void http_free(ls_conn *c)
{
    cn_http *ch = c->http;
    if (ch == NULL)
        return;
    c->http = NULL;
    ch->conn = NULL;
    uv_timer_stop(&ch->timer);
    ch->server->pending_closes++;
    uv_close((uv_handle_t *)&ch->timer, on_timer_closed);
}

void cn_http_durable(ls_conn *c, uint64_t durable)
{
    if (c->http != NULL && !c->closing)
        hp_conn_durable(c->http->hp, durable);
    else
        cn_wait_durable(c, false);
}

bool cn_http_busy(const ls_conn *c)
{
    return c->http != NULL && hp_conn_busy(c->http->hp);
}

const cn_proto cn_proto_http = {
    .name = "http", .open = http_open, .feed = http_feed, .finish = http_finish,
    .free = http_free, .reads_while_paused = true,
};
