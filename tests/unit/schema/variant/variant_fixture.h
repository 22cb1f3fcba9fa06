/* variant_fixture.h - the Variant tests' fixture: the parquet-testing
 * vectors loaded from disk, byte and JSON comparisons through the test
 * decoder (tests/support/variant_read.c), finishing a record, and the
 * builders of the vectors' values, which other tests reuse. Header only
 * (static inline): each test file is one program. */
#ifndef VARIANT_FIXTURE_H
#define VARIANT_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "variant.h"
#include "variant_read.h"
#include "testdata.h"

/* the Variant vectors, under the test data directory (testdata.h) */
#define VEC_DIR "parquet-testing/variant"

/* ---- helpers ---------------------------------------------------------- */

static inline uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    p[n] = 0;
    *len = (size_t)n;
    return p;
}

typedef struct vec {
    uint8_t *meta, *val;
    size_t mlen, vlen;
} vec;

static inline vec load_vec(const char *name)
{
    char path[4096];
    vec v;
    snprintf(path, sizeof path, "%s.metadata", pqt_testdata_path(VEC_DIR, name));
    v.meta = slurp(path, &v.mlen);
    snprintf(path, sizeof path, "%s.value", pqt_testdata_path(VEC_DIR, name));
    v.val = slurp(path, &v.vlen);
    return v;
}

static inline void free_vec(vec *v)
{
    free(v->meta);
    free(v->val);
}

static inline void hexdump(const char *what, const uint8_t *p, size_t n)
{
    printf("%s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 256; i++)
        printf(" %02x", p[i]);
    printf("\n");
}

static inline void assert_bytes(const uint8_t *got, size_t glen, const uint8_t *want, size_t wlen)
{
    if (glen != wlen || memcmp(got, want, glen) != 0) {
        hexdump("got ", got, glen);
        hexdump("want", want, wlen);
        fail_msg("byte mismatch");
    }
}

/* Canonical JSON (malloc'd, NUL-terminated) of a valid variant. */
static inline char *json_of(const uint8_t *m, size_t ml, const uint8_t *v, size_t vl)
{
    pq_buf out;
    pq_err err = {0};
    pq_buf_init(&out);
    int rc = vread_to_json(&out, m, ml, v, vl, &err);
    if (rc != 0)
        fail_msg("decode failed: %s", err.msg);
    pq_buf_push(&out, 0);
    return (char *)out.data;
}

static inline void assert_json(const vr_variant *v, const char *want)
{
    char *got = json_of(v->metadata, v->metadata_len, v->value, v->value_len);
    assert_string_equal(got, want);
    free(got);
}

static inline void assert_canonical(const vr_variant *v)
{
    pq_err err = {0};
    if (vread_validate(v->metadata, v->metadata_len, v->value, v->value_len,
                       VREAD_CANONICAL, &err) != 0)
        fail_msg("not canonical: %s", err.msg);
}

static inline void finish(vr_builder *b, vr_variant *v)
{
    int rc = vr_finish(b, v);
    if (rc != 0)
        fail_msg("vr_finish: %s", b->err.msg);
    assert_canonical(v);
}

#define OK(call) assert_int_equal((call), 0)


typedef void (*build_fn)(vr_builder *b);


static inline void build_null(vr_builder *b) { OK(vr_null(b)); }
static inline void build_true(vr_builder *b) { OK(vr_bool(b, true)); }
static inline void build_int8(vr_builder *b) { OK(vr_int(b, 42)); }
static inline void build_int32(vr_builder *b) { OK(vr_int(b, 123456)); }
static inline void build_int64(vr_builder *b) { OK(vr_int(b, 1234567890123456789LL)); }
static inline void build_double(vr_builder *b) { OK(vr_double(b, 1234567890.1234)); }
static inline void build_decimal4(vr_builder *b) { OK(vr_decimal(b, 1234, 2)); }
static inline void build_date(vr_builder *b) { OK(vr_date(b, 20194)); }   /* 2025-04-16 */
static inline void build_ts(vr_builder *b) { OK(vr_timestamp(b, 1744821296780000LL, VR_MICROS, true)); }
static inline void build_ntz(vr_builder *b) { OK(vr_timestamp(b, 1744806896780000LL, VR_MICROS, false)); }
static inline void build_ntz_nanos(vr_builder *b)
{
    OK(vr_timestamp(b, 1730982834123456789LL, VR_NANOS, false));
}

static inline void build_binary(vr_builder *b)
{
    static const uint8_t bin[] = {0x03, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe};
    OK(vr_binary(b, bin, sizeof bin));
}

static const char long_text[] =
    "This string is longer than 64 bytes and therefore does not fit in a short_string "
    "and it also includes several non ascii characters such as \xf0\x9f\x90\xa2, "
    "\xf0\x9f\x92\x96, \xe2\x99\xa5\xef\xb8\x8f, \xf0\x9f\x8e\xa3 and \xf0\x9f\xa4\xa6!!";
static const char short_text[] = "Less than 64 bytes (\xe2\x9d\xa4\xef\xb8\x8f with utf8)";

static inline void build_string(vr_builder *b) { OK(vr_string(b, long_text, strlen(long_text))); }
static inline void build_short(vr_builder *b) { OK(vr_string(b, short_text, strlen(short_text))); }

static inline void build_object_empty(vr_builder *b)
{
    OK(vr_begin_object(b));
    OK(vr_end_object(b));
}

static inline void build_array_empty(vr_builder *b)
{
    OK(vr_begin_array(b));
    OK(vr_end_array(b));
}

static inline void build_array_primitive(vr_builder *b)
{
    OK(vr_begin_array(b));
    for (int i = 0; i < 4; i++)
        OK(vr_int(b, (int[]){2, 1, 5, 9}[i]));
    OK(vr_end_array(b));
}

static inline void key(vr_builder *b, const char *k) { OK(vr_key(b, k, strlen(k))); }
static inline void str(vr_builder *b, const char *s) { OK(vr_string(b, s, strlen(s))); }

/* Spark's key order (its dictionary is first-seen); 1.23456789 is a
 * decimal4 with scale 8 in the file, as our JSON mapping also makes it. */
static inline void build_object_primitive(vr_builder *b)
{
    OK(vr_begin_object(b));
    key(b, "int_field"), OK(vr_int(b, 1));
    key(b, "double_field"), OK(vr_decimal(b, 123456789, 8));
    key(b, "boolean_true_field"), OK(vr_bool(b, true));
    key(b, "boolean_false_field"), OK(vr_bool(b, false));
    key(b, "string_field"), str(b, "Apache Parquet");
    key(b, "null_field"), OK(vr_null(b));
    key(b, "timestamp_field"), str(b, "2025-04-16T12:34:56.78");
    OK(vr_end_object(b));
}

static inline void build_array_nested(vr_builder *b)
{
    OK(vr_begin_array(b));
    OK(vr_begin_object(b));
    key(b, "id"), OK(vr_int(b, 1));
    key(b, "thing"), OK(vr_begin_object(b));
    key(b, "names"), OK(vr_begin_array(b));
    str(b, "Contrarian"), str(b, "Spider");
    OK(vr_end_array(b)), OK(vr_end_object(b)), OK(vr_end_object(b));
    OK(vr_null(b));
    OK(vr_begin_object(b));
    key(b, "id"), OK(vr_int(b, 2));
    key(b, "type"), str(b, "if");
    key(b, "names"), OK(vr_begin_array(b));
    str(b, "Apple"), str(b, "Ray"), OK(vr_null(b));
    OK(vr_end_array(b)), OK(vr_end_object(b));
    OK(vr_end_array(b));
}

#endif
