/* fuzz_json.c - libFuzzer target for schema/json/json.c.
 *
 * The input is one NDJSON line. A handler consumes every event, checks it
 * (strings are valid UTF-8 by an independent decoder, numbers agree with
 * strtoll/strtoull/strtod and with json_number_decimal, begin/end events
 * balance, exactly one top-level value) and re-serialises the events as
 * compact JSON. A line that parses must re-serialise to JSON that parses
 * to the same serialisation again (a fixed point); a line that fails must
 * carry a "byte N: ..." message with N inside the line.
 *
 * Every number is also turned into a Variant the way the shredder does it
 * for Variant and rest columns (shv_scalar_to_variant, from json.c's
 * number parts and double), and checked against the number rule of
 * schema/variant/vnumber.c (fuzz_numrule.h): the type, the exact value, and never
 * a decimal whose scale is not below its implied precision.
 *
 * The fuzz build links only pq_schema and pq_writer, so the test decoder
 * is compiled in here from its source. */
#include "../support/variant_read.c"
#include "fuzz_numrule.h"
#include "shred_value.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

typedef struct fz {
    pq_buf out;
    int need_comma[JSON_DEFAULT_MAX_DEPTH + 2];
    int depth;
    int after_key;
    int top_values;
    uint8_t kind[JSON_DEFAULT_MAX_DEPTH + 2]; /* 1 object, 2 array */
} fz;

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_json: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

/* Independent UTF-8 check: decode, then reject overlongs, surrogates and
 * values above U+10FFFF by value rather than by byte ranges. */
static void check_utf8(const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;
    while (i < n) {
        uint32_t cp = p[i];
        size_t len = 1;
        if (cp >= 0x80) {
            if ((cp & 0xE0) == 0xC0) { len = 2; cp &= 0x1F; }
            else if ((cp & 0xF0) == 0xE0) { len = 3; cp &= 0x0F; }
            else if ((cp & 0xF8) == 0xF0) { len = 4; cp &= 0x07; }
            else CHECK(!"bad lead byte");
            CHECK(i + len <= n);
            for (size_t k = 1; k < len; k++) {
                CHECK((p[i + k] & 0xC0) == 0x80);
                cp = (cp << 6) | (p[i + k] & 0x3F);
            }
            static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
            CHECK(cp >= min_cp[len]);
            CHECK(cp < 0xD800 || cp > 0xDFFF);
            CHECK(cp <= 0x10FFFF);
        }
        i += len;
    }
}

static void sep(fz *f)
{
    if (f->depth == 0)
        f->top_values++;
    if (f->after_key) {
        f->after_key = 0;
        return;
    }
    CHECK(f->depth == 0 || f->kind[f->depth] == 2);
    if (f->need_comma[f->depth])
        pq_buf_push(&f->out, ',');
    f->need_comma[f->depth] = 1;
}

static void put_str(fz *f, const char *p, size_t n)
{
    check_utf8(p, n);
    pq_buf_push(&f->out, '"');
    for (size_t i = 0; i < n; i++) {
        const uint8_t ch = (uint8_t)p[i];
        if (ch == '"' || ch == '\\') {
            pq_buf_push(&f->out, '\\');
            pq_buf_push(&f->out, ch);
        } else if (ch < 0x20) {
            char b[8];
            snprintf(b, sizeof b, "\\u%04x", ch);
            pq_buf_append(&f->out, b, 6);
        } else {
            pq_buf_push(&f->out, ch);
        }
    }
    pq_buf_push(&f->out, '"');
}

static int open_c(fz *f, char ch, uint8_t kind)
{
    sep(f);
    pq_buf_push(&f->out, (uint8_t)ch);
    f->depth++;
    CHECK(f->depth <= JSON_DEFAULT_MAX_DEPTH);
    f->need_comma[f->depth] = 0;
    f->kind[f->depth] = kind;
    return 0;
}

static int close_c(fz *f, char ch, uint8_t kind)
{
    CHECK(f->depth > 0 && f->kind[f->depth] == kind && !f->after_key);
    f->depth--;
    pq_buf_push(&f->out, (uint8_t)ch);
    return 0;
}

static int on_bo(void *u) { return open_c(u, '{', 1); }
static int on_eo(void *u) { return close_c(u, '}', 1); }
static int on_ba(void *u) { return open_c(u, '[', 2); }
static int on_ea(void *u) { return close_c(u, ']', 2); }

static int on_key(void *u, const char *p, size_t n)
{
    fz *f = u;
    CHECK(f->depth > 0 && f->kind[f->depth] == 1 && !f->after_key);
    if (f->need_comma[f->depth])
        pq_buf_push(&f->out, ',');
    f->need_comma[f->depth] = 1;
    put_str(f, p, n);
    pq_buf_push(&f->out, ':');
    f->after_key = 1;
    return 0;
}

static int on_string(void *u, const char *p, size_t n)
{
    sep(u);
    put_str(u, p, n);
    return 0;
}

static void check_number(const json_number *num)
{
    char buf[512];
    CHECK(num->len > 0);
    CHECK(num->negative == (num->raw[0] == '-'));
    CHECK(isfinite(num->d));
    json_int128 v;
    int32_t scale;
    const int drc = json_number_decimal(num, &v, &scale);
    CHECK(drc == 0 || drc == PQ_ELIMIT);
    if (drc == 0)
        CHECK(scale >= 0 && scale <= 38);
    if (num->len >= sizeof buf)
        return;
    memcpy(buf, num->raw, num->len);
    buf[num->len] = '\0';
    char *end;
    errno = 0;
    switch (num->kind) {
    case JSON_NUM_INT64: {
        const long long x = strtoll(buf, &end, 10);
        CHECK(errno == 0 && *end == '\0' && x == num->i);
        CHECK(num->d == (double)x || (x == 0 && num->d == 0.0));
        CHECK(drc == 0 && scale == 0 && v == num->i);
        break;
    }
    case JSON_NUM_UINT64: {
        const unsigned long long x = strtoull(buf, &end, 10);
        CHECK(errno == 0 && *end == '\0' && x == num->u && x > (unsigned long long)INT64_MAX);
        CHECK(drc == 0 && scale == 0 && v == (json_int128)num->u);
        break;
    }
    case JSON_NUM_DOUBLE: {
        const double x = strtod(buf, &end); /* tests run in the C locale */
        CHECK(*end == '\0' && x == num->d && signbit(x) == signbit(num->d));
        break;
    }
    }
}

/* The production path: the shredder's conversion of a number event. */
static void check_number_variant(const json_number *num)
{
    static vr_builder b;
    static int ready;
    if (!ready) {
        CHECK(vr_builder_init(&b, NULL) == 0);
        ready = 1;
    }
    vr_builder_reset(&b);
    vr_variant v;
    CHECK(shv_scalar_to_variant(&b, EV_NUMBER, num) == 0);  /* json.c refused infinities */
    CHECK(vr_finish(&b, &v) == 0);
    fz_check_number_rule(num->raw, num->len, &v);
}

static int on_number(void *u, const json_number *num)
{
    check_number(num);
    check_number_variant(num);
    sep(u);
    return pq_buf_append(&((fz *)u)->out, num->raw, num->len);
}

static int on_bool(void *u, bool b)
{
    sep(u);
    return pq_buf_append(&((fz *)u)->out, b ? "true" : "false", b ? 4 : 5);
}

static int on_null(void *u)
{
    sep(u);
    return pq_buf_append(&((fz *)u)->out, "null", 4);
}

static const json_handler handler = {
    .begin_object = on_bo, .key = on_key, .end_object = on_eo,
    .begin_array = on_ba, .end_array = on_ea, .string = on_string,
    .number = on_number, .boolean = on_bool, .null = on_null,
};

static void reset(fz *f)
{
    pq_buf_reset(&f->out);
    f->depth = 0;
    f->after_key = 0;
    f->top_values = 0;
    memset(f->need_comma, 0, sizeof f->need_comma);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_parser p;
    static int ready;
    static fz a, b;
    if (!ready) {
        CHECK(json_parser_init(&p, 0) == 0);
        pq_buf_init(&a.out);
        pq_buf_init(&b.out);
        ready = 1;
    }
    /* A heap copy of exactly size bytes, so ASan catches any over-read. */
    char *line = malloc(size ? size : 1);
    memcpy(line, data, size);

    pq_err err;
    reset(&a);
    const int rc = json_parse_line(&p, line, size, &handler, &a, &err);
    if (rc == 0) {
        CHECK(a.depth == 0 && !a.after_key && a.top_values == 1);
        reset(&b);
        const int rc2 = json_parse_line(&p, (const char *)a.out.data, a.out.len,
                                         &handler, &b, &err);
        CHECK(rc2 == 0);
        CHECK(b.out.len == a.out.len && memcmp(a.out.data, b.out.data, a.out.len) == 0);
    } else if (rc == JSON_EMPTY) {
        CHECK(a.top_values == 0);
        for (size_t i = 0; i < size; i++)
            CHECK(data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r');
    } else {
        CHECK(rc == PQ_EPARSE || rc == PQ_ELIMIT);
        CHECK(err.code == rc && p.err_code == rc);
        CHECK(strncmp(err.msg, "byte ", 5) == 0);
        CHECK(p.err_offset <= size);
        CHECK(strtoull(err.msg + 5, NULL, 10) == p.err_offset);
    }
    free(line);
    return 0;
}
