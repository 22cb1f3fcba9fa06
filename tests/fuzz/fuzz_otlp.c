/* fuzz_otlp.c - libFuzzer target for the OTLP/HTTP logs decoders
 * (daemon/ingest/http_otlp.c protobuf, http_otlp_json.c JSON) behind
 * POST /v1/logs: byte 0 picks the decoder (even: protobuf, odd: JSON),
 * the rest is the request body.
 *
 * Checked: the checking pass (no emit) and the emitting pass agree; every
 * record emitted is one valid JSON object (schema/json's strict parser,
 * as the workers will parse it); a failure comes with a message. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_otlp.h"
#include "json.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_otlp: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

typedef struct fz {
    json_parser jp;
    size_t records;
} fz;

static int top_object(void *u) { (void)u; return 0; }

static int emit(void *user, const char *line, size_t len)
{
    fz *z = user;
    pq_err e = {0};
    static const json_handler h = {.begin_object = top_object};
    CHECK(len >= 2 && line[0] == '{' && line[len - 1] == '}');
    int rc = json_parse_line(&z->jp, line, len, &h, NULL, &e);
    if (rc != 0)
        fprintf(stderr, "fuzz_otlp: record is not JSON: %s: %.*s\n", e.msg, (int)len, line);
    CHECK(rc == 0);
    z->records++;
    return 0;
}

static int decode(bool json, const uint8_t *p, size_t n, ot_emit_fn fn, void *user, pq_err *e)
{
    return json ? ot_decode_json((const char *)p, n, fn, user, e)
                : ot_decode_proto(p, n, fn, user, e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool json = data[0] & 1;
    fz z = {0};
    CHECK(json_parser_init(&z.jp, 0) == 0);
    pq_err e1 = {0}, e2 = {0};
    int rc1 = decode(json, data + 1, size - 1, NULL, NULL, &e1);
    int rc2 = decode(json, data + 1, size - 1, emit, &z, &e2);
    CHECK(rc1 == rc2);
    CHECK(rc1 == 0 || e1.msg[0] != '\0');
    json_parser_free(&z.jp);
    return 0;
}
