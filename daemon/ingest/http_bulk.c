/* http_bulk.c - the Elasticsearch bulk API (http_bulk.h). Two passes over
 * the body's lines: the first checks every action line (a malformed one
 * fails the whole request with 400 before any record is taken, as
 * Elasticsearch does), the second hands the documents on and writes the
 * items.
 *
 * Thread: the loop thread. */
#include "http_bulk.h"

#include <stdio.h>
#include <string.h>

#include "batch.h"
#include "framer.h"

#define HB_INDEX_MAX 180         /* with a peer of at most 63 bytes, under SP_SOURCE_MAX */

static const char *const hb_kinds[] = {"index", "create", "update", "delete"};

typedef struct hb_scan {
    hb_action *a;
    int depth;
    int actions;                 /* keys at depth 1 */
    int field;                   /* 1 _index, 2 _id, at depth 2 */
} hb_scan;

static int hb_begin(void *u) { ((hb_scan *)u)->depth++; return 0; }
static int hb_end(void *u) { ((hb_scan *)u)->depth--; return 0; }

static int hb_key(void *u, const char *s, size_t len)
{
    hb_scan *sc = u;
    if (sc->depth == 1) {
        sc->actions++;
        sc->a->kind = -1;
        for (int i = 0; i < 4; i++)
            if (strlen(hb_kinds[i]) == len && memcmp(hb_kinds[i], s, len) == 0)
                sc->a->kind = i;
    } else if (sc->depth == 2) {
        sc->field = len == 6 && memcmp(s, "_index", 6) == 0 ? 1
                  : len == 3 && memcmp(s, "_id", 3) == 0 ? 2 : 0;
    }
    return 0;
}

static int hb_string(void *u, const char *s, size_t len)
{
    hb_scan *sc = u;
    if (sc->depth != 2 || sc->field == 0)
        return 0;
    char *dst = sc->field == 1 ? sc->a->index : sc->a->id;
    size_t *dl = sc->field == 1 ? &sc->a->index_len : &sc->a->id_len;
    *dl = len < 255 ? len : 255;
    memcpy(dst, s, *dl);
    dst[*dl] = '\0';
    sc->field = 0;
    return 0;
}

int hb_action_parse(json_parser *p, const char *line, size_t len, hb_action *a, pq_err *err)
{
    static const json_handler h = {.begin_object = hb_begin, .end_object = hb_end,
                                   .begin_array = hb_begin, .end_array = hb_end,
                                   .key = hb_key, .string = hb_string};
    memset(a, 0, sizeof *a);
    a->kind = -1;
    hb_scan sc = {.a = a};
    int rc = json_parse_line(p, line, len, &h, &sc, err);
    if (rc != 0)
        return pq_err_set(err, PQ_EPARSE, "malformed action/metadata line: %s", err->msg);
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (sc.actions != 1 || i == len || line[i] != '{')
        return pq_err_set(err, PQ_EPARSE, "malformed action/metadata line: expected one "
                          "action object such as {\"index\":{}}");
    return PQ_OK;
}

/* ---- the two passes ----------------------------------------------------- */

typedef struct hb_run {
    const hp_route_ctx *ctx;
    hp_reply *r;
    json_parser jp;
    bool deliver;                /* second pass */
    bool want_doc;               /* the next line is the action's document */
    hb_action a;
    const char *dflt;            /* the path's index */
    size_t dflt_len;
    size_t items;
    bool errors;
    int fail;
    pq_err err;
} hb_run;

static void item_head(hb_run *b, const char *kind)
{
    pq_buf *o = &b->r->body;
    if (b->items++ > 0)
        pq_buf_push(o, ',');
    hp_printf(o, "{\"%s\":{\"_index\":", kind);
    if (b->a.index_len > 0)
        hp_json_str(o, b->a.index, b->a.index_len);
    else
        hp_json_str(o, b->dflt, b->dflt_len);
    hp_printf(o, ",\"_id\":");
}

static void item_error(hb_run *b, const char *kind, const char *reason)
{
    item_head(b, kind);
    hp_json_str(&b->r->body, b->a.id, b->a.id_len);
    hp_printf(&b->r->body, ",\"status\":400,\"error\":{\"type\":\"illegal_argument_exception\","
              "\"reason\":");
    hp_json_str(&b->r->body, reason, strlen(reason));
    hp_printf(&b->r->body, "}}}");
    b->errors = true;
}

/* An index name that can ride in a source (batch.h PL_INDEX_TAG): no
 * blanks or control bytes (Elasticsearch refuses those too), and short
 * enough for the spool's source field beside the peer. */
static bool index_ok(const char *s, size_t n)
{
    if (n > HB_INDEX_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == '\x7f')
            return false;
    return true;
}

/* The record's source: the peer, and its index after PL_INDEX_TAG. */
static const char *doc_source(hb_run *b, char *buf, size_t cap)
{
    const char *ix = b->a.index_len > 0 ? b->a.index : b->dflt;
    size_t n = b->a.index_len > 0 ? b->a.index_len : b->dflt_len;
    if (n == 0)
        return b->ctx->source;
    snprintf(buf, cap, "%s" PL_INDEX_TAG "%.*s", b->ctx->source, (int)n, ix);
    return buf;
}

static int deliver_doc(hb_run *b, const fr_line *l)
{
    const ls_callbacks *cb = b->ctx->cb;
    const char *kind = hb_kinds[b->a.kind];
    uint64_t seq = cb->next_seq ? cb->next_seq(cb->user) : 0;
    char src[384];
    if (!index_ok(b->a.index_len > 0 ? b->a.index : b->dflt,
                  b->a.index_len > 0 ? b->a.index_len : b->dflt_len)) {
        item_error(b, kind, "invalid index name (blanks, control characters, or longer than "
                   "180 bytes)");
        return 0;
    }
    int rc = cb->on_line(cb->user, doc_source(b, src, sizeof src), l);
    if (rc != 0)
        return b->fail = rc;
    if (l->oversized) {
        item_error(b, kind, "document exceeds limits.max_line_bytes");
        return 0;
    }
    b->r->records++;
    item_head(b, kind);
    if (b->a.id_len > 0)
        hp_json_str(&b->r->body, b->a.id, b->a.id_len);
    else
        hp_printf(&b->r->body, "\"pq%llu\"", (unsigned long long)seq);
    hp_printf(&b->r->body, ",\"_version\":1,\"result\":\"created\",\"_shards\":{\"total\":1,"
              "\"successful\":1,\"failed\":0},\"_seq_no\":%llu,\"_primary_term\":1,"
              "\"status\":201}}", (unsigned long long)seq);
    return 0;
}

static int bulk_line(void *user, const fr_line *l)
{
    hb_run *b = user;
    if (b->want_doc) {
        b->want_doc = false;
        if (!b->deliver)
            return 0;
        if (b->a.kind <= 1)
            return deliver_doc(b, l);
        item_error(b, "update", "parqd accepts only index and create actions");
        return 0;
    }
    if (l->oversized || hb_action_parse(&b->jp, l->data, l->len, &b->a, &b->err) != 0) {
        if (l->oversized)
            pq_err_set(&b->err, PQ_EPARSE, "action/metadata line too long");
        return PQ_EPARSE;        /* only in the first pass: the second has seen them */
    }
    if (b->a.kind < 0) {
        pq_err_set(&b->err, PQ_EPARSE, "unknown action (expected index, create, update or "
                   "delete)");
        return PQ_EPARSE;
    }
    b->want_doc = b->a.kind != 3;
    if (b->deliver && b->a.kind == 3)
        item_error(b, "delete", "parqd accepts only index and create actions");
    return 0;
}

static int pass(hb_run *b, const hp_request *rq)
{
    fr_framer fr;
    if (fr_init(&fr, b->ctx->max_line_bytes) != 0)
        return PQ_EINVAL;
    b->want_doc = false;
    int rc = fr_push(&fr, rq->body, rq->body_len, bulk_line, b);
    if (rc == 0)
        rc = fr_finish(&fr, bulk_line, b);
    fr_free(&fr);
    if (rc == 0 && b->want_doc && !b->deliver)
        rc = pq_err_set(&b->err, PQ_EPARSE, "the last action has no document line");
    return rc;
}

void hb_bulk(const hp_route_ctx *ctx, const hp_request *rq, const char *index,
             size_t index_len, hp_reply *r)
{
    hb_run b = {.ctx = ctx, .r = r, .dflt = index, .dflt_len = index_len};
    if (json_parser_init(&b.jp, 0) != 0) {
        hp_reply_error(r, 500, "internal_error", "out of memory");
        return;
    }
    int rc = pass(&b, rq);
    if (rc != 0) {
        hp_reply_error(r, 400, "illegal_argument_exception", b.err.msg);
        json_parser_free(&b.jp);
        return;
    }
    b.deliver = true;
    hp_printf(&r->body, "{\"took\":0,\"errors\":false,\"items\":[");
    rc = pass(&b, rq);
    json_parser_free(&b.jp);
    if (rc != 0 || b.fail != 0) {
        r->fail = b.fail ? b.fail : rc;
        hp_reply_error(r, 503, "unavailable", "the spool did not take the records");
        return;
    }
    pq_buf_append(&r->body, "]}", 2);
    if (b.errors)                /* {"took":0,"errors":false -> true and a blank */
        memcpy(r->body.data + 19, "true ", 5);
}
