/* http_otlp_json.c - OTLP/HTTP logs in JSON (http_otlp.h): the body is
 * parsed once (schema/json's strict parser) into a small tree of nodes
 * in two growing buffers, then walked as the protobuf decoder walks its
 * messages: OTLP's JSON mapping, which is proto3's with one exception:
 * field names in lowerCamelCase or as in the .proto (snake_case), 64-bit
 * integers as strings or numbers, enums (severityNumber) as numbers or
 * their names ("SEVERITY_NUMBER_INFO"), and trace and span ids as hex
 * rather than proto3's base64 (OTLP's exception).
 *
 * Thread: the loop thread. */
#include "http_otlp.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

enum { JN_OBJ, JN_ARR, JN_STR, JN_NUM, JN_TRUE, JN_FALSE, JN_NULL };

typedef struct jn {
    uint8_t kind;
    uint32_t key, key_len;       /* in the arena, when the node is an object member */
    uint32_t s, s_len;           /* string or number text, in the arena */
    uint32_t first, last, next;  /* children and siblings: index + 1, 0 for none */
} jn;

typedef struct jt {
    pq_buf nodes, arena;
    uint32_t stack[JSON_DEFAULT_MAX_DEPTH + 2];
    int depth;
    bool has_key;
    uint32_t key, key_len;
} jt;

static jn *node(const jt *t, uint32_t i) { return i ? (jn *)t->nodes.data + (i - 1) : NULL; }

static int arena_put(jt *t, const char *s, size_t n, uint32_t *off)
{
    if (t->arena.len + n > UINT32_MAX)
        return PQ_ELIMIT;
    *off = (uint32_t)t->arena.len;
    return pq_buf_append(&t->arena, s, n) == 0 ? 0 : PQ_ENOMEM;
}

/* A new node, linked under the open container; returns its index + 1. */
static int add(jt *t, uint8_t kind, const char *s, size_t n, uint32_t *out)
{
    jn v = {.kind = kind};
    if (t->has_key) {
        v.key = t->key;
        v.key_len = t->key_len;
        t->has_key = false;
    }
    if (s != NULL && arena_put(t, s, n, &v.s) != 0)
        return PQ_ENOMEM;
    v.s_len = (uint32_t)n;
    if (pq_buf_append(&t->nodes, &v, sizeof v) != 0)
        return PQ_ENOMEM;
    uint32_t id = (uint32_t)(t->nodes.len / sizeof v);
    if (t->depth > 0) {
        jn *parent = node(t, t->stack[t->depth - 1]);
        if (parent->last)
            node(t, parent->last)->next = id;
        else
            parent->first = id;
        parent->last = id;
    }
    *out = id;
    return 0;
}

static int on_open(jt *t, uint8_t kind)
{
    uint32_t id;
    int rc = add(t, kind, NULL, 0, &id);
    if (rc == 0)
        t->stack[t->depth++] = id;
    return rc;
}

static int j_bobj(void *u) { return on_open(u, JN_OBJ); }
static int j_barr(void *u) { return on_open(u, JN_ARR); }
static int j_end(void *u) { ((jt *)u)->depth--; return 0; }
static int j_key(void *u, const char *s, size_t n)
{
    jt *t = u;
    t->has_key = true;
    t->key_len = (uint32_t)n;
    return arena_put(t, s, n, &t->key);
}
static int j_str(void *u, const char *s, size_t n) { uint32_t i; return add(u, JN_STR, s, n, &i); }
static int j_num(void *u, const json_number *v)
{
    uint32_t i;
    return add(u, JN_NUM, v->raw, v->len, &i);
}
static int j_bool(void *u, bool v) { uint32_t i; return add(u, v ? JN_TRUE : JN_FALSE, NULL, 0, &i); }
static int j_null(void *u) { uint32_t i; return add(u, JN_NULL, NULL, 0, &i); }

/* ---- walking ------------------------------------------------------------ */

static const char *text(const jt *t, uint32_t off) { return (const char *)t->arena.data + off; }

/* Whether key (len bytes) is the lowerCamelCase name camel or its
 * .proto form: "timeUnixNano" or "time_unix_nano" (proto3 JSON parsers
 * accept both). */
static bool key_is(const char *key, size_t len, const char *camel)
{
    size_t n = strlen(camel), k = 0;
    if (len == n && memcmp(key, camel, n) == 0)
        return true;
    for (const char *c = camel; *c != '\0'; c++) {
        if (*c >= 'A' && *c <= 'Z') {
            if (k + 2 > len || key[k] != '_' || key[k + 1] != *c - 'A' + 'a')
                return false;
            k += 2;
        } else {
            if (k >= len || key[k] != *c)
                return false;
            k++;
        }
    }
    return k == len;
}

/* The member `name` of object o (index + 1), or 0. */
static uint32_t get(const jt *t, uint32_t o, const char *name)
{
    jn *n = node(t, o);
    if (n == NULL || n->kind != JN_OBJ)
        return 0;
    for (uint32_t c = n->first; c; c = node(t, c)->next) {
        jn *m = node(t, c);
        if (key_is(text(t, m->key), m->key_len, name))
            return c;
    }
    return 0;
}

static int kind(const jt *t, uint32_t i) { return i ? node(t, i)->kind : -1; }

/* A uint64 from a number or a decimal string ("1700000000000000000"). */
static bool u64_of(const jt *t, uint32_t i, uint64_t *out)
{
    jn *n = node(t, i);
    if (n == NULL || (n->kind != JN_NUM && n->kind != JN_STR) || n->s_len == 0 || n->s_len > 20)
        return false;
    uint64_t v = 0;
    for (uint32_t k = 0; k < n->s_len; k++) {
        char c = text(t, n->s)[k];
        if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(c - '0');
    }
    *out = v;
    return true;
}

/* SeverityNumber from a number, a decimal string or its enum name
 * ("SEVERITY_NUMBER_INFO" = 9, "SEVERITY_NUMBER_WARN3" = 15). */
static bool severity_of(const jt *t, uint32_t i, uint64_t *out)
{
    static const char *const levels[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};
    static const char prefix[] = "SEVERITY_NUMBER_";
    jn *n = node(t, i);
    if (u64_of(t, i, out))
        return *out <= 24;
    if (n == NULL || n->kind != JN_STR || n->s_len < sizeof prefix - 1 ||
        memcmp(text(t, n->s), prefix, sizeof prefix - 1) != 0)
        return false;
    const char *name = text(t, n->s) + sizeof prefix - 1;
    size_t len = n->s_len - (sizeof prefix - 1);
    if (len == 11 && memcmp(name, "UNSPECIFIED", 11) == 0)
        return *out = 0, true;
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        size_t ln = strlen(levels[l]);
        if (len < ln || len > ln + 1 || memcmp(name, levels[l], ln) != 0)
            continue;
        if (len == ln)
            return *out = 1 + 4 * l, true;
        if (name[ln] >= '2' && name[ln] <= '4')
            return *out = 1 + 4 * l + (uint64_t)(name[ln] - '1'), true;
    }
    return false;
}

static int any_json(const jt *t, pq_buf *b, uint32_t v, int depth);

/* [{"key":..,"value":{AnyValue}}, ...] as one object. */
static int kv_json(const jt *t, pq_buf *b, uint32_t arr, int depth)
{
    if (kind(t, arr) != JN_ARR)
        return PQ_EPARSE;
    int rc = pq_buf_push(b, '{');
    bool first = true;
    for (uint32_t c = node(t, arr)->first; rc == 0 && c; c = node(t, c)->next) {
        uint32_t k = get(t, c, "key"), v = get(t, c, "value");
        if (kind(t, k) != JN_STR)
            return PQ_EPARSE;
        rc = first ? 0 : pq_buf_push(b, ',');
        first = false;
        rc = rc ? rc : hp_json_str(b, text(t, node(t, k)->s), node(t, k)->s_len);
        rc = rc ? rc : pq_buf_push(b, ':');
        rc = rc ? rc : (v ? any_json(t, b, v, depth + 1) : pq_buf_append(b, "null", 4));
    }
    return rc ? (rc < 0 && rc != -1 ? rc : PQ_ENOMEM) : (pq_buf_push(b, '}') ? PQ_ENOMEM : 0);
}

static int array_json(const jt *t, pq_buf *b, uint32_t arr, int depth)
{
    uint32_t vals = get(t, arr, "values");
    if (vals == 0)
        return pq_buf_append(b, "[]", 2) ? PQ_ENOMEM : 0;
    if (kind(t, vals) != JN_ARR)
        return PQ_EPARSE;
    int rc = pq_buf_push(b, '[');
    for (uint32_t c = node(t, vals)->first; rc == 0 && c; c = node(t, c)->next) {
        if (c != node(t, vals)->first)
            rc = pq_buf_push(b, ',');
        rc = rc ? rc : any_json(t, b, c, depth + 1);
    }
    return rc ? (rc < 0 && rc != -1 ? rc : PQ_ENOMEM) : (pq_buf_push(b, ']') ? PQ_ENOMEM : 0);
}

static int scalar_json(const jt *t, pq_buf *b, uint32_t v, const char *name)
{
    jn *n = node(t, v);
    if (strcmp(name, "stringValue") == 0 || strcmp(name, "bytesValue") == 0) {
        if (n->kind != JN_STR)
            return PQ_EPARSE;
        return hp_json_str(b, text(t, n->s), n->s_len) ? PQ_ENOMEM : 0;
    }
    if (strcmp(name, "boolValue") == 0) {
        if (n->kind != JN_TRUE && n->kind != JN_FALSE)
            return PQ_EPARSE;
        return hp_printf(b, n->kind == JN_TRUE ? "true" : "false") ? PQ_ENOMEM : 0;
    }
    /* intValue / doubleValue: a number, or a string holding one ("NaN" stays a string) */
    if (n->kind == JN_NUM)
        return pq_buf_append(b, text(t, n->s), n->s_len) ? PQ_ENOMEM : 0;
    if (n->kind != JN_STR)
        return PQ_EPARSE;
    const char *str = text(t, n->s);
    if (strcmp(name, "intValue") == 0) {   /* an int64 as a decimal string: canonical */
        bool neg = n->s_len > 1 && str[0] == '-';
        size_t len = n->s_len - neg;
        uint64_t v = 0;
        if (len == 0 || len > 19)
            return PQ_EPARSE;
        for (size_t k = 0; k < len; k++) {
            char c = str[neg + k];
            if (c < '0' || c > '9')
                return PQ_EPARSE;
            v = v * 10 + (uint64_t)(c - '0');
        }
        if (v > (uint64_t)INT64_MAX + neg)
            return PQ_EPARSE;
        return hp_printf(b, "%s%llu", neg && v ? "-" : "", (unsigned long long)v) ? PQ_ENOMEM : 0;
    }
    return hp_json_str(b, str, n->s_len) ? PQ_ENOMEM : 0;
}

static int any_json(const jt *t, pq_buf *b, uint32_t v, int depth)
{
    static const char *const names[] = {"stringValue", "boolValue", "intValue", "doubleValue",
                                        "bytesValue", "arrayValue", "kvlistValue"};
    if (depth > OT_MAX_DEPTH)
        return PQ_ELIMIT;
    if (kind(t, v) != JN_OBJ)
        return PQ_EPARSE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        uint32_t c = get(t, v, names[i]);
        if (c == 0)
            continue;
        if (i == 5)
            return array_json(t, b, c, depth);
        if (i == 6) {
            uint32_t vals = get(t, c, "values");
            return vals ? kv_json(t, b, vals, depth) : (pq_buf_append(b, "{}", 2) ? PQ_ENOMEM : 0);
        }
        return scalar_json(t, b, c, names[i]);
    }
    return pq_buf_append(b, "null", 4) ? PQ_ENOMEM : 0;   /* an empty AnyValue */
}

/* ---- the messages --------------------------------------------------------- */

typedef struct oj {
    const jt *t;
    ot_emit_fn emit;
    void *user;
    pq_buf line, resource, scope;
} oj;

static int put_key(pq_buf *b, bool *first, const char *key)
{
    int rc = *first ? 0 : pq_buf_push(b, ',');
    *first = false;
    return rc ? PQ_ENOMEM : (hp_printf(b, "\"%s\":", key) ? PQ_ENOMEM : 0);
}

static int put_hex_id(pq_buf *b, const jt *t, uint32_t v)
{
    jn *n = node(t, v);
    if (n->kind != JN_STR || n->s_len % 2 != 0)
        return PQ_EPARSE;
    const char *s = text(t, n->s);
    int rc = pq_buf_push(b, '"');
    for (uint32_t k = 0; rc == 0 && k < n->s_len; k++) {
        char c = s[k] >= 'A' && s[k] <= 'F' ? (char)(s[k] - 'A' + 'a') : s[k];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return PQ_EPARSE;
        rc = pq_buf_push(b, (uint8_t)c);
    }
    return rc || pq_buf_push(b, '"') ? PQ_ENOMEM : 0;
}

static int time_field(oj *x, uint32_t r, const char *name, const char *key, bool *first)
{
    uint64_t ns;
    uint32_t v = get(x->t, r, name);
    if (v == 0)
        return 0;
    if (!u64_of(x->t, v, &ns))
        return PQ_EPARSE;
    if (ns == 0)
        return 0;
    int rc = put_key(&x->line, first, key);
    return rc ? rc : (ot_put_time(&x->line, ns) ? PQ_ENOMEM : 0);
}

static int record_scalars(oj *x, uint32_t r, bool *first)
{
    const jt *t = x->t;
    pq_buf *b = &x->line;
    uint64_t u;
    uint32_t v;
    int rc = time_field(x, r, "timeUnixNano", "time", first);
    rc = rc ? rc : time_field(x, r, "observedTimeUnixNano", "observed_time", first);
    if (rc == 0 && (v = get(t, r, "severityText")) && kind(t, v) == JN_STR && node(t, v)->s_len) {
        rc = put_key(b, first, "severity_text");
        rc = rc ? rc : (hp_json_str(b, text(t, node(t, v)->s), node(t, v)->s_len) ? PQ_ENOMEM : 0);
    }
    if (rc == 0 && (v = get(t, r, "severityNumber")) && severity_of(t, v, &u) && u > 0) {
        rc = put_key(b, first, "severity_number");
        rc = rc ? rc : (hp_printf(b, "%llu", (unsigned long long)u) ? PQ_ENOMEM : 0);
    }
    if (rc == 0 && (v = get(t, r, "body"))) {
        rc = put_key(b, first, "body");
        rc = rc ? rc : any_json(t, b, v, 0);
    }
    if (rc == 0 && (v = get(t, r, "attributes")) && node(t, v)->first) {
        rc = put_key(b, first, "attributes");
        rc = rc ? rc : kv_json(t, b, v, 0);
    }
    return rc;
}

static int record_ids(oj *x, uint32_t r, bool *first)
{
    const jt *t = x->t;
    pq_buf *b = &x->line;
    uint64_t u;
    uint32_t v;
    int rc = 0;
    if ((v = get(t, r, "traceId")) && node(t, v)->s_len > 0) {
        rc = put_key(b, first, "trace_id");
        rc = rc ? rc : put_hex_id(b, t, v);
    }
    if (rc == 0 && (v = get(t, r, "spanId")) && node(t, v)->s_len > 0) {
        rc = put_key(b, first, "span_id");
        rc = rc ? rc : put_hex_id(b, t, v);
    }
    if (rc == 0 && (v = get(t, r, "flags")) && u64_of(t, v, &u) && u > 0) {
        rc = put_key(b, first, "flags");
        rc = rc ? rc : (hp_printf(b, "%llu", (unsigned long long)u) ? PQ_ENOMEM : 0);
    }
    return rc;
}

static int log_record(oj *x, uint32_t r)
{
    pq_buf *b = &x->line;
    bool first = true;
    if (kind(x->t, r) != JN_OBJ)
        return PQ_EPARSE;
    pq_buf_reset(b);
    int rc = pq_buf_push(b, '{') ? PQ_ENOMEM : 0;
    rc = rc ? rc : record_scalars(x, r, &first);
    rc = rc ? rc : record_ids(x, r, &first);
    if (rc == 0 && x->resource.len > 0) {
        rc = put_key(b, &first, "resource");
        rc = rc ? rc : (pq_buf_append(b, x->resource.data, x->resource.len) ? PQ_ENOMEM : 0);
    }
    if (rc == 0 && x->scope.len > 0) {
        rc = put_key(b, &first, "scope");
        rc = rc ? rc : (pq_buf_append(b, x->scope.data, x->scope.len) ? PQ_ENOMEM : 0);
    }
    rc = rc ? rc : (pq_buf_push(b, '}') ? PQ_ENOMEM : 0);
    return rc ? rc : x->emit ? x->emit(x->user, (const char *)b->data, b->len) : 0;
}

static int scope_json(oj *x, uint32_t s)
{
    static const char *const keys[] = {"name", "version"};
    bool first = true;
    pq_buf_reset(&x->scope);
    for (int i = 0; i < 2; i++) {
        uint32_t v = get(x->t, s, keys[i]);
        if (kind(x->t, v) != JN_STR || node(x->t, v)->s_len == 0)
            continue;
        if (pq_buf_push(&x->scope, first ? '{' : ',') || hp_printf(&x->scope, "\"%s\":", keys[i]) ||
            hp_json_str(&x->scope, text(x->t, node(x->t, v)->s), node(x->t, v)->s_len))
            return PQ_ENOMEM;
        first = false;
    }
    return first ? 0 : (pq_buf_push(&x->scope, '}') ? PQ_ENOMEM : 0);
}

/* Each element of the array member `name` of o, through fn. */
static int each(oj *x, uint32_t o, const char *name, int (*fn)(oj *, uint32_t))
{
    uint32_t a = get(x->t, o, name);
    if (a == 0)
        return 0;
    if (kind(x->t, a) != JN_ARR)
        return PQ_EPARSE;
    for (uint32_t c = node(x->t, a)->first; c; c = node(x->t, c)->next) {
        int rc = fn(x, c);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int scope_logs(oj *x, uint32_t sl)
{
    uint32_t s = get(x->t, sl, "scope");
    pq_buf_reset(&x->scope);
    int rc = s ? scope_json(x, s) : 0;
    return rc ? rc : each(x, sl, "logRecords", log_record);
}

static int resource_logs(oj *x, uint32_t rl)
{
    uint32_t res = get(x->t, rl, "resource"), attrs = get(x->t, res, "attributes");
    pq_buf_reset(&x->resource);
    if (attrs && node(x->t, attrs)->first) {
        int rc = kv_json(x->t, &x->resource, attrs, 0);
        if (rc != 0)
            return rc;
    }
    return each(x, rl, "scopeLogs", scope_logs);
}

int ot_decode_json(const char *p, size_t n, ot_emit_fn emit, void *user, pq_err *err)
{
    static const json_handler h = {.begin_object = j_bobj, .end_object = j_end,
                                   .begin_array = j_barr, .end_array = j_end, .key = j_key,
                                   .string = j_str, .number = j_num, .boolean = j_bool,
                                   .null = j_null};
    json_parser jp;
    jt t = {0};
    pq_buf_init(&t.nodes);
    pq_buf_init(&t.arena);
    /* Allocated from the start: a body whose keys and strings are all
     * empty would otherwise leave text() adding offsets to NULL. */
    int rc = pq_buf_reserve(&t.arena, n < 4096 ? n + 1 : 4096) == 0 ? 0 : PQ_ENOMEM;
    if (rc == 0)
        rc = json_parser_init(&jp, 0);
    if (rc == 0) {
        rc = json_parse_line(&jp, p, n, &h, &t, err);
        json_parser_free(&jp);
    }
    oj x = {.t = &t, .emit = emit, .user = user};
    pq_buf_init(&x.line);
    pq_buf_init(&x.resource);
    pq_buf_init(&x.scope);
    if (rc == 0 && kind(&t, 1) != JN_OBJ)
        rc = pq_err_set(err, PQ_EPARSE, "expected an ExportLogsServiceRequest object");
    else if (rc == 0 && (rc = each(&x, 1, "resourceLogs", resource_logs)) != 0 && rc < 0)
        pq_err_set(err, rc, rc == PQ_ELIMIT ? "AnyValue nested too deep" :
                   rc == PQ_ENOMEM ? "out of memory" : "malformed OTLP JSON logs request");
    pq_buf_free(&x.line);
    pq_buf_free(&x.resource);
    pq_buf_free(&x.scope);
    pq_buf_free(&t.nodes);
    pq_buf_free(&t.arena);
    return rc == JSON_EMPTY ? pq_err_set(err, PQ_EPARSE, "empty body") : rc;
}
