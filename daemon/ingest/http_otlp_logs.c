/* http_otlp_logs.c - the POST /v1/logs endpoint (http_otlp.h): a check
 * pass over the whole request, then the records to the spool, and
 * OTLP's reply (an empty ExportLogsServiceResponse, protobuf or JSON).
 *
 * Thread: the loop thread. */
#include "http_otlp.h"

#include "framer.h"

typedef struct ot_sink {
    const hp_route_ctx *ctx;
    hp_reply *r;
} ot_sink;

static int sink_line(void *user, const char *line, size_t len)
{
    ot_sink *k = user;
    fr_line l = {.data = line, .len = len, .total = len, .lineno = k->r->records + 1};
    if (len > k->ctx->max_line_bytes) {    /* cut, flagged: the dead letters take it */
        l.len = k->ctx->max_line_bytes;
        l.oversized = true;
    }
    int rc = k->ctx->cb->on_line(k->ctx->cb->user, k->ctx->source, &l);
    if (rc != 0)
        return k->r->fail = rc > 0 ? rc : -rc;   /* positive: not a decoder error */
    if (!l.oversized)
        k->r->records++;
    return 0;
}

void ot_logs(const hp_route_ctx *ctx, const hp_request *rq, hp_reply *r)
{
    pq_err e = {0};
    ot_sink k = {.ctx = ctx, .r = r};
    bool pb = rq->protobuf_ct;
    const uint8_t *p = (const uint8_t *)rq->body;
    int rc = pb ? ot_decode_proto(p, rq->body_len, NULL, NULL, &e)
                : ot_decode_json(rq->body, rq->body_len, NULL, NULL, &e);
    if (rc != 0) {
        hp_reply_error(r, 400, "parse_exception", e.msg[0] ? e.msg : "malformed request");
        return;
    }
    rc = pb ? ot_decode_proto(p, rq->body_len, sink_line, &k, &e)
            : ot_decode_json(rq->body, rq->body_len, sink_line, &k, &e);
    if (rc != 0 || r->fail != 0) {
        if (r->fail == 0)
            r->fail = -1;
        hp_reply_error(r, 503, "unavailable", "the spool did not take the records");
        return;
    }
    if (pb) {
        r->content_type = "application/x-protobuf";   /* an empty ExportLogsServiceResponse */
        return;
    }
    hp_printf(&r->body, "{}");
}
