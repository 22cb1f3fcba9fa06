/* geojson_fixture.h - the GeoJSON tests' fixture: WKB bytes written out
 * as macros, and converting one text with the expected bytes or error.
 * Header only (static inline): each test file is one program. */
#ifndef GEOJSON_FIXTURE_H
#define GEOJSON_FIXTURE_H

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

#include "geo.h"
#include "geojson.h"

/* ---- WKB bytes, written out ------------------------------------------------
 * Little-endian IEEE 754 doubles; test_gj_double_macros_are_ieee checks
 * them against the compiler once, so a typo here cannot hide. */
#define F_0    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 /*  0.0 */
#define F_1    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F /*  1.0 */
#define F_2    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40 /*  2.0 */
#define F_3    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x40 /*  3.0 */
#define F_4    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x40 /*  4.0 */
#define F_5    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x40 /*  5.0 */
#define F_6    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x40 /*  6.0 */
#define F_10   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x40 /* 10.0 */
#define F_M1   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0xBF /* -1.0 */
#define F_HALF 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE0, 0x3F /*  0.5 */
#define F_0_1  0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0xB9, 0x3F /*  0.1 */
#define F_NAN  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x7F /* quiet NaN */

#define LE 0x01 /* byte order: little-endian */
/* uint32 little-endian */
#define N(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((v) >> 24)

/* ---- helpers -------------------------------------------------------------- */

static inline void hexdump(const char *label, const uint8_t *p, size_t n)
{
    print_message("%s (%zu bytes):", label, n);
    for (size_t i = 0; i < n; i++)
        print_message("%s%02X", i % 16 == 0 ? "\n  " : " ", p[i]);
    print_message("\n");
}

/* Converts json; on failure or wrong bytes prints what it got. The result
 * must also be WKB that writer/chunk/geo.c accepts. */
static inline void expect_wkb(const char *json, const uint8_t *want, size_t n)
{
    gj_converter c;
    pq_buf out;
    pq_err err;
    assert_int_equal(gj_converter_init(&c), 0);
    pq_buf_init(&out);
    int rc = gj_to_wkb(&c, json, strlen(json), &out, &err);
    if (rc != 0)
        fail_msg("%s\n -> %s", json, err.msg);
    if (out.len != n || memcmp(out.data, want, n) != 0) {
        print_message("%s\n", json);
        hexdump("got", out.data, out.len);
        hexdump("want", want, n);
        fail();
    }
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    if (pq_geo_stats_add_wkb(&s, out.data, out.len, &err) != 0)
        fail_msg("geo.c rejects the WKB of %s: %s", json, err.msg);
    pq_geo_stats_free(&s);
    pq_buf_free(&out);
    gj_converter_free(&c);
}

#define EXPECT_WKB(json, ...) do {                          \
        static const uint8_t want_[] = {__VA_ARGS__};       \
        expect_wkb(json, want_, sizeof want_);              \
    } while (0)

/* json must fail with PQ_ETYPE and exactly msg, leaving out untouched. */
static inline void expect_err(const char *json, const char *msg)
{
    gj_converter c;
    pq_buf out;
    pq_err err;
    assert_int_equal(gj_converter_init(&c), 0);
    pq_buf_init(&out);
    pq_buf_append(&out, "keep", 4);
    int rc = gj_to_wkb(&c, json, strlen(json), &out, &err);
    if (rc != PQ_ETYPE)
        fail_msg("%s\n -> rc %d (%s), want ETYPE: %s", json, rc, err.msg, msg);
    assert_int_equal(err.code, PQ_ETYPE);
    if (strcmp(err.msg, msg) != 0)
        fail_msg("%s\n got  %s\n want %s", json, err.msg, msg);
    assert_int_equal(out.len, 4);
    assert_memory_equal(out.data, "keep", 4);
    pq_buf_free(&out);
    gj_converter_free(&c);
}

#endif
