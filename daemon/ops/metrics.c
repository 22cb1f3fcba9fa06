/* metrics.c - the metrics.listen endpoints: GET /metrics in Prometheus
 * text format 0.0.4 and GET /health (see metrics.h), served by the same
 * HTTP code as the http inputs (daemon/ingest/http_conn.c through
 * ls_server_new_http): keep-alive, the same header size, count and
 * timeout limits, limits.max_connections and idle_timeout, and an idle
 * connection closed to make room for a new one when full, so a thousand
 * idle or slowloris clients do not blind the scraper (issue 21: the old
 * accept loop here reset every scrape past 64 idle connections).
 *
 * Thread: the loop thread. The body of /metrics is metrics_render.c's. */
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "http_reply.h"
#include "listener.h"

#define MT_CT_PROM "text/plain; version=0.0.4; charset=utf-8"
#define MT_CT_TEXT "text/plain; charset=utf-8"

static void text(hp_reply *r, int status, const char *body)
{
    r->status = status;
    r->content_type = MT_CT_TEXT;
    pq_buf_reset(&r->body);
    if (pq_buf_append(&r->body, body, strlen(body)) != 0)
        r->status = 500;
}

static void serve_health(hp_reply *r)
{
    char problems[2048];
    if (dm_health_get(problems, sizeof problems)) {
        text(r, 200, "ok\n");
        return;
    }
    text(r, 503, problems);
    if (pq_buf_push(&r->body, '\n') != 0)
        r->status = 500;
}

static void serve_metrics(hp_reply *r)
{
    char *body = mt_render();
    if (body == NULL) {
        text(r, 500, "out of memory rendering metrics\n");
        return;
    }
    text(r, 200, body);
    r->content_type = MT_CT_PROM;
    free(body);
}

static void mt_route(const hp_route_ctx *ctx, const hp_request *rq, hp_reply *r)
{
    (void)ctx;
    bool metrics = strcmp(rq->path, "/metrics") == 0, health = strcmp(rq->path, "/health") == 0;
    r->head = rq->method == HP_HEAD;
    if (!metrics && !health) {
        text(r, 404, "not found: try /metrics or /health\n");
    } else if (rq->method != HP_GET && rq->method != HP_HEAD) {
        text(r, 405, "method not allowed\n");
        r->headers = "Allow: GET, HEAD\r\n";
    } else if (metrics) {
        serve_metrics(r);
    } else {
        serve_health(r);
    }
}

/* A scrape is read fresh every time: no cache may keep an old one. */
static const hp_endpoints mt_endpoints = {
    .route = mt_route, .headers = "Cache-Control: no-store\r\n", .ingest = false,
};

int mt_server_new(mt_server **out, uv_loop_t *loop, const cf_config *cf,
                  uint64_t header_timeout_ms, pq_err *err)
{
    hp_settings http = {.max_body_bytes = LS_ENDPOINT_MAX_BODY, .ep = &mt_endpoints,
                    .header_timeout_ms = header_timeout_ms};
    return ls_server_new_http(out, loop, "metrics.listen", &cf->metrics.listen, cf, &http, err);
}

int mt_server_port(const mt_server *s)
{
    return ls_server_bound_port(s, 0);
}

void mt_server_close(mt_server *s)
{
    if (s == NULL)
        return;
    ls_server_stop_accepting(s);
    ls_server_close(s);
}

bool mt_server_closed(const mt_server *s)
{
    return s == NULL || ls_server_closed(s);
}

void mt_server_destroy(mt_server *s)
{
    ls_server_destroy(s);
}
