/* fuzz_bulk.c - libFuzzer target for the Elasticsearch bulk decoder
 * (daemon/ingest/http_bulk.c) behind POST /_bulk: the input is the
 * request body.
 *
 * Checked: the reply is 200 with one item per action (a malformed body
 * is a 400 and takes no record), its "errors" says whether any item
 * failed, every 201 item matches one record handed on, and records never
 * exceed max_line_bytes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_bulk.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_bulk: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

#define MAX_LINE 512

typedef struct fz {
    uint64_t records;
} fz;

static int f_line(void *u, const char *s, const fr_line *l)
{
    (void)s;
    CHECK(l->len <= MAX_LINE);
    if (!l->oversized)
        ((fz *)u)->records++;
    return 0;
}

static size_t count(const char *hay, size_t n, const char *needle)
{
    size_t k = 0, m = strlen(needle);
    for (const char *p = hay; (p = memmem(p, n - (size_t)(p - hay), needle, m)) != NULL; p += m)
        k++;
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz z = {0};
    ls_callbacks cb = {.user = &z, .on_line = f_line};
    hp_route_ctx ctx = {.source = "tcp:192.0.2.7:1", .cb = &cb, .max_line_bytes = MAX_LINE};
    hp_request rq = {.method = HP_POST, .path = "/_bulk", .body = (const char *)data,
                     .body_len = size};
    hp_reply r = {.status = 200};
    pq_buf_init(&r.body);
    hb_bulk(&ctx, &rq, "dflt", 4, &r);
    const char *b = (const char *)r.body.data;
    size_t n = r.body.len;
    if (r.status == 400) {
        CHECK(z.records == 0);
    } else {
        CHECK(r.status == 200 && r.fail == 0);
        size_t ok = count(b, n, "\"status\":201}}");
        size_t failed = count(b, n, "\"status\":400,\"error\"");
        CHECK(ok == z.records && ok == r.records);
        CHECK((failed > 0) == (n > 24 && memcmp(b, "{\"took\":0,\"errors\":true ", 24) == 0));
        CHECK(n >= 2 && memcmp(b + n - 2, "]}", 2) == 0);
    }
    pq_buf_free(&r.body);
    return 0;
}
