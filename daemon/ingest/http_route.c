/* http_route.c - the HTTP endpoints (README.md "Inputs over HTTP"):
 * POST /ingest (NDJSON), POST /_bulk and /{index}/_bulk (http_bulk.c),
 * GET and HEAD / (the banner Elasticsearch clients probe for), and the
 * replies' shared pieces (status texts, JSON errors).
 *
 * Thread: the loop thread. */
#include "http_reply.h"

#include <stdio.h>
#include <string.h>

#include "framer.h"
#include "http_bulk.h"
#include "json.h"
#include "http_otlp.h"

#define HR_REASONS_MAX 5         /* first rejection reasons in an /ingest reply */

/* ---- GET / ---------------------------------------------------------- */

static void banner(hp_reply *r, bool head)
{
    r->head = head;
    hp_printf(&r->body, "{\"name\":\"parqd\",\"cluster_name\":\"parqd\","
              "\"cluster_uuid\":\"parqd\",\"version\":{\"number\":\"8.11.0\","
              "\"build_flavor\":\"default\",\"build_type\":\"parqd\","
              "\"lucene_version\":\"9.8.0\",\"minimum_wire_compatibility_version\":\"7.17.0\","
              "\"minimum_index_compatibility_version\":\"7.0.0\"},");
    hp_printf(&r->body, "\"tagline\":\"You Know, for Search\",\"parqd\":{\"version\":\"%s\","
              "\"note\":\"parqd implements only ingest: _bulk, /ingest, /v1/logs\"}}",
              PARQD_VERSION);
}

/* ---- POST /ingest --------------------------------------------------- */

typedef struct hr_ingest {
    const hp_route_ctx *ctx;
    hp_reply *r;
    json_parser jp;              /* checks each line: the reply tells what the writer will reject */
    uint64_t accepted, rejected;
    char reasons[HR_REASONS_MAX][160];
    size_t n_reasons;
} hr_ingest;

/* Why the writer will reject line l (written into why), or NULL: too
 * long, not JSON, not an object (the shredder's own reasons; a schema's
 * required columns are only known there). */
static const char *rejection(hr_ingest *in, const fr_line *l, char *why, size_t cap)
{
    if (l->oversized) {
        snprintf(why, cap, "line %llu: %zu bytes exceeds limits.max_line_bytes",
                 (unsigned long long)l->lineno, l->total);
        return why;
    }
    static const json_handler validate = {0};
    pq_err e = {0};
    size_t lead = 0;
    while (lead < l->len && (l->data[lead] == ' ' || l->data[lead] == '\t'))
        lead++;
    int rc = json_parse_line(&in->jp, l->data, l->len, &validate, NULL, &e);
    if (rc != 0 && rc != JSON_EMPTY)
        snprintf(why, cap, "line %llu: invalid JSON: %.100s", (unsigned long long)l->lineno,
                 e.msg);
    else if (rc == 0 && l->data[lead] != '{')
        snprintf(why, cap, "line %llu: not a JSON object", (unsigned long long)l->lineno);
    else
        return NULL;
    return why;
}

/* Every line goes on (rejected ones reach the dead letters, as from any
 * input); the reply counts the ones the writer will take. */
static int ingest_line(void *user, const fr_line *l)
{
    hr_ingest *in = user;
    int rc = in->ctx->cb->on_line(in->ctx->cb->user, in->ctx->source, l);
    if (rc != 0) {
        in->r->fail = rc;
        return rc;
    }
    char why[sizeof in->reasons[0]];
    if (rejection(in, l, why, sizeof why) == NULL) {
        in->accepted++;
        return 0;
    }
    in->rejected++;
    if (in->n_reasons < HR_REASONS_MAX)
        memcpy(in->reasons[in->n_reasons++], why, sizeof why);
    return 0;
}

static void ingest(const hp_route_ctx *ctx, const hp_request *rq, hp_reply *r)
{
    hr_ingest in = {.ctx = ctx, .r = r};
    fr_framer fr;
    if (fr_init(&fr, ctx->max_line_bytes) != 0) {
        hp_reply_error(r, 500, "internal_error", "no line limit");
        return;
    }
    if (json_parser_init(&in.jp, 0) != 0) {
        fr_free(&fr);
        hp_reply_error(r, 500, "internal_error", "out of memory");
        return;
    }
    int rc = fr_push(&fr, rq->body, rq->body_len, ingest_line, &in);
    if (rc == 0)
        rc = fr_finish(&fr, ingest_line, &in);
    fr_free(&fr);
    json_parser_free(&in.jp);
    r->records = in.accepted + in.rejected;   /* all in the spool: the reply waits for them */
    if (rc != 0) {
        hp_reply_error(r, 503, "unavailable", "the spool did not take the records");
        r->fail = rc ? rc : -1;
        return;
    }
    hp_printf(&r->body, "{\"accepted\":%llu,\"rejected\":%llu,\"errors\":[",
              (unsigned long long)in.accepted, (unsigned long long)in.rejected);
    for (size_t i = 0; i < in.n_reasons; i++) {
        if (i > 0)
            pq_buf_push(&r->body, ',');
        hp_json_str(&r->body, in.reasons[i], strlen(in.reasons[i]));
    }
    hp_printf(&r->body, "]}");
}

/* ---- routing -------------------------------------------------------- */

/* "/_bulk" -> "", "/logs-x/_bulk" -> "logs-x"; NULL if not a bulk path. */
static const char *bulk_index(const char *path, size_t *len)
{
    size_t n = strlen(path);
    if (n < 6 || strcmp(path + n - 6, "/_bulk") != 0)
        return NULL;
    if (n == 6) {
        *len = 0;
        return path;
    }
    const char *ix = path + 1;
    *len = n - 7;
    return memchr(ix, '/', *len) == NULL ? ix : NULL;
}

static void hp_route(const hp_route_ctx *ctx, const hp_request *rq, hp_reply *r)
{
    const char *p = rq->path;
    size_t ix_len = 0;
    const char *ix = bulk_index(p, &ix_len);
    if (strcmp(p, "/") == 0 && (rq->method == HP_GET || rq->method == HP_HEAD)) {
        banner(r, rq->method == HP_HEAD);
        return;
    }
    if (strcmp(p, "/ingest") == 0 && rq->method == HP_POST) {
        ingest(ctx, rq, r);
        return;
    }
    if (strcmp(p, "/v1/logs") == 0 && rq->method == HP_POST) {
        ot_logs(ctx, rq, r);
        return;
    }
    if (ix != NULL && rq->method == HP_POST) {
        hb_bulk(ctx, rq, ix, ix_len, r);
        return;
    }
    if (strcmp(p, "/") == 0 || strcmp(p, "/ingest") == 0 || strcmp(p, "/v1/logs") == 0 ||
        ix != NULL) {
        hp_reply_error(r, 405, "method_not_allowed", "method not allowed on this path");
        return;
    }
    hp_reply_error(r, 404, "not_found", "parqd implements only ingest: POST /ingest, "
                   "/_bulk, /{index}/_bulk, /v1/logs");
}

const hp_endpoints hp_endpoints_ingest = {
    .route = hp_route, .headers = "X-Elastic-Product: Elasticsearch\r\n", .ingest = true,
};
