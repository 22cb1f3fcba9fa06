/* http_otlp.c - OTLP/HTTP logs (http_otlp.h): the endpoint, the
 * protobuf decoder (opentelemetry-proto's logs.proto, common.proto,
 * resource.proto, decoded by hand: a varint and length walk, no
 * generated code) and the pieces both decoders write records with.
 *
 * Field numbers: ExportLogsServiceRequest.resource_logs 1; ResourceLogs
 * resource 1, scope_logs 2; Resource attributes 1; ScopeLogs scope 1,
 * log_records 2; InstrumentationScope name 1, version 2; LogRecord
 * time_unix_nano 1 (fixed64), severity_number 2, severity_text 3, body 5,
 * attributes 6, flags 8 (fixed32), trace_id 9, span_id 10,
 * observed_time_unix_nano 11 (fixed64); KeyValue key 1, value 2;
 * AnyValue string 1, bool 2, int 3, double 4, array 5, kvlist 6, bytes 7;
 * ArrayValue / KeyValueList values 1.
 *
 * Thread: the loop thread. */
#include "http_otlp.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "utf8.h"

/* ---- shared pieces -------------------------------------------------- */

int ot_put_time(pq_buf *b, uint64_t ns)
{
    time_t s = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (gmtime_r(&s, &tm) == NULL)
        return PQ_EPARSE;
    return hp_printf(b, "\"%04d-%02d-%02dT%02d:%02d:%02d.%09uZ\"", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (unsigned)(ns % 1000000000u));
}

int ot_put_hex(pq_buf *b, const uint8_t *p, size_t n)
{
    static const char hx[] = "0123456789abcdef";
    int rc = pq_buf_push(b, '"');
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = pq_buf_push(b, (uint8_t)hx[p[i] >> 4]);
        rc = rc ? rc : pq_buf_push(b, (uint8_t)hx[p[i] & 15]);
    }
    return rc ? rc : pq_buf_push(b, '"');
}

int ot_put_base64(pq_buf *b, const uint8_t *p, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int rc = pq_buf_push(b, '"');
    for (size_t i = 0; rc == 0 && i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        char q[4] = {t[v >> 18], t[(v >> 12) & 63], i + 1 < n ? t[(v >> 6) & 63] : '=',
                     i + 2 < n ? t[v & 63] : '='};
        rc = pq_buf_append(b, q, 4);
    }
    return rc ? rc : pq_buf_push(b, '"');
}

/* A protobuf string as a JSON string; PQ_EPARSE when not UTF-8. */
static int put_str(pq_buf *b, const uint8_t *p, size_t n)
{
    if (!utf8_valid(p, n))   /* protobuf strings must be; a record must be JSON */
        return PQ_EPARSE;
    return hp_json_str(b, (const char *)p, n) == 0 ? 0 : PQ_ENOMEM;
}

/* ---- protobuf wire format ------------------------------------------ */

typedef struct pb_field {
    uint32_t num, wt;
    uint64_t v;                  /* varint, fixed64, fixed32 */
    const uint8_t *p;            /* length-delimited */
    size_t n;
} pb_field;

static int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        uint8_t c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* The next field of [*p, end): 1 with f filled, 0 at the end, -1 malformed. */
static int pb_next(const uint8_t **p, const uint8_t *end, pb_field *f)
{
    uint64_t key;
    if (*p >= end)
        return 0;
    if (pb_varint(p, end, &key) != 0 || (key >> 3) == 0 || (key >> 3) > UINT32_MAX)
        return -1;
    f->num = (uint32_t)(key >> 3);
    f->wt = (uint32_t)(key & 7);
    f->p = NULL;
    f->n = 0;
    switch (f->wt) {
    case 0:
        return pb_varint(p, end, &f->v) == 0 ? 1 : -1;
    case 1:
    case 5: {
        size_t k = f->wt == 1 ? 8 : 4;
        if ((size_t)(end - *p) < k)
            return -1;
        f->v = 0;
        for (size_t i = 0; i < k; i++)
            f->v |= (uint64_t)(*p)[i] << (8 * i);
        *p += k;
        return 1;
    }
    case 2:
        if (pb_varint(p, end, &f->v) != 0 || f->v > (uint64_t)(end - *p))
            return -1;
        f->p = *p;
        f->n = (size_t)f->v;
        *p += f->n;
        return 1;
    default:
        return -1;               /* groups (3, 4) are not in these messages */
    }
}

#define PB_EACH(f, buf, len, rc)                                                           \
    for (const uint8_t *pb_p_ = (buf), *pb_e_ = (buf) + (len);                             \
         ((rc) = pb_next(&pb_p_, pb_e_, &(f))) == 1;)

/* ---- AnyValue and KeyValue as JSON ------------------------------------ */

static int any_json(pq_buf *b, const uint8_t *p, size_t n, int depth);

/* KeyValue list (fields `field` of [p, n)) as one JSON object. */
static int kv_object(pq_buf *b, const uint8_t *p, size_t n, uint32_t field, int depth)
{
    pb_field f, g;
    int rc, rc2;
    bool first = true;
    if (pq_buf_push(b, '{') != 0)
        return PQ_ENOMEM;
    PB_EACH(f, p, n, rc) {
        if (f.num != field || f.wt != 2)
            continue;
        const uint8_t *key = (const uint8_t *)"", *val = NULL;
        size_t klen = 0, vlen = 0;
        PB_EACH(g, f.p, f.n, rc2) {
            if (g.num == 1 && g.wt == 2) { key = g.p; klen = g.n; }
            if (g.num == 2 && g.wt == 2) { val = g.p; vlen = g.n; }
        }
        if (rc2 < 0)
            return PQ_EPARSE;
        if (!first && pq_buf_push(b, ',') != 0)
            return PQ_ENOMEM;
        int k = put_str(b, key, klen);
        if (k != 0 || pq_buf_push(b, ':') != 0)
            return k ? k : PQ_ENOMEM;
        first = false;
        int r = val ? any_json(b, val, vlen, depth + 1) : pq_buf_append(b, "null", 4);
        if (r != 0)
            return r;
    }
    if (rc < 0)
        return PQ_EPARSE;
    return pq_buf_push(b, '}') == 0 ? 0 : PQ_ENOMEM;
}

static int array_json(pq_buf *b, const uint8_t *p, size_t n, int depth)
{
    pb_field f;
    int rc;
    bool first = true;
    if (pq_buf_push(b, '[') != 0)
        return PQ_ENOMEM;
    PB_EACH(f, p, n, rc) {
        if (f.num != 1 || f.wt != 2)
            continue;
        if (!first && pq_buf_push(b, ',') != 0)
            return PQ_ENOMEM;
        first = false;
        int r = any_json(b, f.p, f.n, depth + 1);
        if (r != 0)
            return r;
    }
    if (rc < 0)
        return PQ_EPARSE;
    return pq_buf_push(b, ']') == 0 ? 0 : PQ_ENOMEM;
}

static int double_json(pq_buf *b, uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    if (!isfinite(d))            /* JSON has no NaN or infinity */
        return hp_printf(b, "\"%s\"", isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
    return hp_printf(b, "%.17g", d);
}

static int any_json(pq_buf *b, const uint8_t *p, size_t n, int depth)
{
    pb_field f;
    int rc, out = 1;
    if (depth > OT_MAX_DEPTH)
        return PQ_ELIMIT;
    PB_EACH(f, p, n, rc) {       /* a oneof: the first value set is kept */
        if (f.num < 1 || f.num > 7)
            continue;
        if (out == 0)
            continue;            /* already written: keep the first (no rewind) */
        switch (f.num) {
        case 1: out = f.wt == 2 ? put_str(b, f.p, f.n) : 1; break;
        case 2: out = f.wt == 0 ? hp_printf(b, f.v ? "true" : "false") : 1; break;
        case 3: out = f.wt == 0 ? hp_printf(b, "%lld", (long long)(int64_t)f.v) : 1; break;
        case 4: out = f.wt == 1 ? double_json(b, f.v) : 1; break;
        case 5: out = f.wt == 2 ? array_json(b, f.p, f.n, depth) : 1; break;
        case 6: out = f.wt == 2 ? kv_object(b, f.p, f.n, 1, depth) : 1; break;
        default: out = f.wt == 2 ? ot_put_base64(b, f.p, f.n) : 1; break;
        }
        if (out < 0)
            return out;
    }
    if (rc < 0)
        return PQ_EPARSE;
    return out == 1 ? (pq_buf_append(b, "null", 4) == 0 ? 0 : PQ_ENOMEM) : 0;
}

/* ---- the messages ---------------------------------------------------- */

typedef struct ot_ctx {
    ot_emit_fn emit;             /* NULL: the checking pass */
    void *user;
    pq_buf line, resource, scope;
    pq_err *err;
} ot_ctx;

static int put_key(pq_buf *b, bool *first, const char *key)
{
    int rc = *first ? 0 : pq_buf_push(b, ',');
    *first = false;
    return rc ? rc : hp_printf(b, "\"%s\":", key);
}

/* The scalar fields of a LogRecord, then its attributes. */
static int record_fields(ot_ctx *x, const uint8_t *p, size_t n, bool *first)
{
    pq_buf *b = &x->line;
    pb_field f;
    int rc, r = 0;
    PB_EACH(f, p, n, rc) {
        if ((f.num == 1 || f.num == 11) && f.wt == 1 && f.v != 0) {
            r = put_key(b, first, f.num == 1 ? "time" : "observed_time");
            r = r ? r : ot_put_time(b, f.v);
        } else if (f.num == 2 && f.wt == 0 && f.v != 0) {
            r = put_key(b, first, "severity_number");
            r = r ? r : hp_printf(b, "%lld", (long long)(int32_t)f.v);
        } else if (f.num == 3 && f.wt == 2 && f.n > 0) {
            r = put_key(b, first, "severity_text");
            r = r ? r : put_str(b, f.p, f.n);
        } else if (f.num == 5 && f.wt == 2) {
            r = put_key(b, first, "body");
            r = r ? r : any_json(b, f.p, f.n, 0);
        } else if (f.num == 8 && f.wt == 5 && f.v != 0) {
            r = put_key(b, first, "flags");
            r = r ? r : hp_printf(b, "%llu", (unsigned long long)f.v);
        } else if ((f.num == 9 || f.num == 10) && f.wt == 2 && f.n > 0) {
            r = put_key(b, first, f.num == 9 ? "trace_id" : "span_id");
            r = r ? r : ot_put_hex(b, f.p, f.n);
        }
        if (r != 0)
            return r;
    }
    return rc < 0 ? PQ_EPARSE : 0;
}

static bool has_field(const uint8_t *p, size_t n, uint32_t num)
{
    pb_field f;
    int rc;
    PB_EACH(f, p, n, rc)
        if (f.num == num && f.wt == 2)
            return true;
    return false;
}

static int log_record(ot_ctx *x, const uint8_t *p, size_t n)
{
    pq_buf *b = &x->line;
    bool first = true;
    pq_buf_reset(b);
    int rc = pq_buf_push(b, '{');
    rc = rc ? rc : record_fields(x, p, n, &first);
    if (rc == 0 && has_field(p, n, 6)) {
        rc = put_key(b, &first, "attributes");
        rc = rc ? rc : kv_object(b, p, n, 6, 0);
    }
    if (rc == 0 && x->resource.len > 0) {
        rc = put_key(b, &first, "resource");
        rc = rc ? rc : pq_buf_append(b, x->resource.data, x->resource.len);
    }
    if (rc == 0 && x->scope.len > 0) {
        rc = put_key(b, &first, "scope");
        rc = rc ? rc : pq_buf_append(b, x->scope.data, x->scope.len);
    }
    rc = rc ? rc : pq_buf_push(b, '}');
    if (rc != 0)
        return rc < 0 && rc != -1 ? rc : PQ_ENOMEM;
    return x->emit ? x->emit(x->user, (const char *)b->data, b->len) : 0;
}

/* InstrumentationScope -> {"name":..,"version":..} (empty: none). */
static int scope_json(ot_ctx *x, const uint8_t *p, size_t n)
{
    pq_buf *b = &x->scope;
    pb_field f;
    int rc, r = 0;
    bool first = true;
    pq_buf_reset(b);
    PB_EACH(f, p, n, rc) {
        if ((f.num == 1 || f.num == 2) && f.wt == 2 && f.n > 0) {
            r = pq_buf_push(b, first ? '{' : ',');
            r = r ? r : hp_printf(b, "\"%s\":", f.num == 1 ? "name" : "version");
            r = r ? r : put_str(b, f.p, f.n);
            first = false;
        }
        if (r != 0)
            return r == PQ_EPARSE ? r : PQ_ENOMEM;
    }
    if (rc < 0)
        return PQ_EPARSE;
    return first ? 0 : (pq_buf_push(b, '}') == 0 ? 0 : PQ_ENOMEM);
}

static int scope_logs(ot_ctx *x, const uint8_t *p, size_t n)
{
    pb_field f;
    int rc, r = 0;
    pq_buf_reset(&x->scope);
    PB_EACH(f, p, n, rc)
        if (f.num == 1 && f.wt == 2 && (r = scope_json(x, f.p, f.n)) != 0)
            return r;
    if (rc < 0)
        return PQ_EPARSE;
    PB_EACH(f, p, n, rc)
        if (f.num == 2 && f.wt == 2 && (r = log_record(x, f.p, f.n)) != 0)
            return r;
    return rc < 0 ? PQ_EPARSE : 0;
}

static int resource_logs(ot_ctx *x, const uint8_t *p, size_t n)
{
    pb_field f;
    int rc, r = 0;
    pq_buf_reset(&x->resource);
    PB_EACH(f, p, n, rc) {       /* a repeated message field: the last one counts */
        if (f.num != 1 || f.wt != 2)
            continue;
        pq_buf_reset(&x->resource);
        if (has_field(f.p, f.n, 1) && (r = kv_object(&x->resource, f.p, f.n, 1, 0)) != 0)
            return r;
    }
    if (rc < 0)
        return PQ_EPARSE;
    PB_EACH(f, p, n, rc)
        if (f.num == 2 && f.wt == 2 && (r = scope_logs(x, f.p, f.n)) != 0)
            return r;
    return rc < 0 ? PQ_EPARSE : 0;
}

int ot_decode_proto(const uint8_t *p, size_t n, ot_emit_fn emit, void *user, pq_err *err)
{
    ot_ctx x = {.emit = emit, .user = user, .err = err};
    pq_buf_init(&x.line);
    pq_buf_init(&x.resource);
    pq_buf_init(&x.scope);
    pb_field f;
    int rc, r = 0;
    PB_EACH(f, p, n, rc)
        if (f.num == 1 && f.wt == 2 && (r = resource_logs(&x, f.p, f.n)) != 0)
            break;
    pq_buf_free(&x.line);
    pq_buf_free(&x.resource);
    pq_buf_free(&x.scope);
    if (r == 0 && rc < 0)
        r = PQ_EPARSE;
    if (r == PQ_EPARSE)
        return pq_err_set(err, r, "malformed protobuf ExportLogsServiceRequest");
    if (r == PQ_ELIMIT)
        return pq_err_set(err, r, "AnyValue nested deeper than %d", OT_MAX_DEPTH);
    return r == 0 ? 0 : r > 0 ? r : pq_err_set(err, r, "out of memory");
}
