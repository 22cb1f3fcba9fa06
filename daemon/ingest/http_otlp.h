/* http_otlp.h - OTLP/HTTP logs (POST /v1/logs; README.md "Inputs over
 * HTTP"): an ExportLogsServiceRequest, protobuf (http_otlp.c) or JSON
 * (http_otlp_json.c), becomes one record per LogRecord:
 *
 *     {"time": "2026-03-01T12:00:00.123456789Z", "observed_time": "...",
 *      "severity_text": "INFO", "severity_number": 9, "body": <AnyValue>,
 *      "attributes": {...}, "resource": {...}, "scope": {"name", "version"},
 *      "trace_id": "<hex>", "span_id": "<hex>", "flags": 1}
 *
 * with absent (default) fields left out; AnyValue as JSON (kvlist ->
 * object, array -> array, bytes -> base64 string, int64 -> number) and
 * attribute keys kept as sent.
 *
 * Thread: the loop thread. */
#ifndef PQ_HTTP_OTLP_H
#define PQ_HTTP_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "http_reply.h"

#define OT_MAX_DEPTH 32          /* nested AnyValues; deeper is refused */

/* POST /v1/logs: decodes by Content-Type (protobuf, else JSON), hands
 * each record to ctx->cb->on_line, answers 200 with an
 * ExportLogsServiceResponse (empty) or 400 saying what was malformed;
 * nothing is handed on from a malformed request. */
void ot_logs(const hp_route_ctx *ctx, const hp_request *rq, hp_reply *r);

/* The decoders, for the fuzzer and ot_logs: each record's JSON line goes
 * to emit(user, line, len). Two passes over a body: pass 0 only checks
 * (emit is not called), so a malformed body hands nothing on. 0, or
 * PQ_EPARSE / PQ_ELIMIT / PQ_ENOMEM with err saying where. */
typedef int (*ot_emit_fn)(void *user, const char *line, size_t len);
int ot_decode_proto(const uint8_t *p, size_t n, ot_emit_fn emit, void *user, pq_err *err);
int ot_decode_json(const char *p, size_t n, ot_emit_fn emit, void *user, pq_err *err);

/* Shared by both decoders: "2026-03-01T12:00:00.123456789Z" from Unix ns;
 * lowercase hex; base64. */
int ot_put_time(pq_buf *b, uint64_t ns);
int ot_put_hex(pq_buf *b, const uint8_t *p, size_t n);
int ot_put_base64(pq_buf *b, const uint8_t *p, size_t n);

#endif
