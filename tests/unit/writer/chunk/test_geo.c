/* test_geo.c - GeospatialStatistics from hand-built ISO WKB: bounding boxes
 * with NaN / empty / Z / M values, type code lists, GEOGRAPHY wraparound,
 * edge bulge and pole rings, and rejection of malformed input
 * (Geospatial.md, parquet.thrift BoundingBox / GeospatialStatistics). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "err.h"
#include "geo.h"

/* ---- a tiny WKB builder -------------------------------------------------- */

typedef struct wb {
    uint8_t b[4096];
    size_t n;
    bool le;
} wb;

static void put_u32(wb *w, uint32_t v)
{
    for (size_t i = 0; i < 4; i++)
        w->b[w->n++] = (uint8_t)(v >> (8 * (w->le ? i : 3 - i)));
}

static void put_f64(wb *w, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    for (size_t i = 0; i < 8; i++)
        w->b[w->n++] = (uint8_t)(v >> (8 * (w->le ? i : 7 - i)));
}

static void hdr(wb *w, bool le, uint32_t code)
{
    w->le = le;
    w->b[w->n++] = le ? 1 : 0;
    put_u32(w, code);
}

static void point(wb *w, bool le, double x, double y)
{
    hdr(w, le, 1);
    put_f64(w, x);
    put_f64(w, y);
}

/* LineString (code 2/1002/2002/3002) from n coordinates of `nc` doubles. */
static void line(wb *w, uint32_t code, const double *c, uint32_t n, size_t nc)
{
    hdr(w, true, code);
    put_u32(w, n);
    for (size_t i = 0; i < n * nc; i++)
        put_f64(w, c[i]);
}

static void polygon1(wb *w, const double *xy, uint32_t n)
{
    hdr(w, true, 3);
    put_u32(w, 1);
    put_u32(w, n);
    for (size_t i = 0; i < 2 * n; i++)
        put_f64(w, xy[i]);
}

static int add(pq_geo_stats *s, const wb *w)
{
    pq_err err;
    pq_err_clear(&err);
    int rc = pq_geo_stats_add_wkb(s, w->b, w->n, &err);
    if (rc != 0)
        print_message("add_wkb: %s\n", err.msg);
    return rc;
}

static pq_geo_bbox bbox_of(const pq_geo_stats *s)
{
    pq_geo_bbox b;
    assert_true(pq_geo_stats_bbox(s, &b));
    return b;
}

static void expect_types(const pq_geo_stats *s, const int32_t *want, size_t n)
{
    int32_t got[PQ_GEO_MAX_TYPES];
    assert_int_equal(pq_geo_stats_types(s, got), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(got[i], want[i]);
}

/* ---- GEOMETRY ------------------------------------------------------------ */

static void test_geo_point_both_byte_orders(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    wb a = {0}, b = {0};
    point(&a, true, 1.5, -2.0);
    point(&b, false, -3.0, 4.0);
    assert_int_equal(add(&s, &a), 0);
    assert_int_equal(add(&s, &b), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == -3.0 && bb.xmax == 1.5 && bb.ymin == -2.0 && bb.ymax == 4.0);
    assert_false(bb.has_z || bb.has_m);
    expect_types(&s, (const int32_t[]){1}, 1);
    pq_geo_stats_free(&s);
}

/* Geospatial.md's empty point: 01 01000000 then two NaNs (f8 7f). */
static void test_geo_empty_point_nan_adds_no_box_but_a_type(void **state)
{
    (void)state;
    static const uint8_t empty_point[] = {
        0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8,
        0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x7f};
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    assert_int_equal(pq_geo_stats_add_wkb(&s, empty_point, sizeof empty_point, NULL), 0);
    pq_geo_bbox bb;
    assert_false(pq_geo_stats_bbox(&s, &bb));
    expect_types(&s, (const int32_t[]){1}, 1);
    /* Nor do empty LineString / Polygon (counts of 0). */
    static const uint8_t empty_line[] = {0x01, 0x02, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t empty_poly[] = {0x01, 0x03, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(pq_geo_stats_add_wkb(&s, empty_line, sizeof empty_line, NULL), 0);
    assert_int_equal(pq_geo_stats_add_wkb(&s, empty_poly, sizeof empty_poly, NULL), 0);
    assert_false(pq_geo_stats_bbox(&s, &bb));
    expect_types(&s, (const int32_t[]){1, 2, 3}, 3);
    pq_geo_stats_free(&s);
}

static void test_geo_z_m_and_zm_dimensions(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    wb w = {0};
    hdr(&w, true, 1001); /* POINT Z (1 2 3) */
    put_f64(&w, 1);
    put_f64(&w, 2);
    put_f64(&w, 3);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.has_z && !bb.has_m && bb.zmin == 3 && bb.zmax == 3);

    w.n = 0; /* POINT M (5 6 70): the third ordinate is M, not Z */
    hdr(&w, false, 2001);
    put_f64(&w, 5);
    put_f64(&w, 6);
    put_f64(&w, 70);
    assert_int_equal(add(&s, &w), 0);
    bb = bbox_of(&s);
    assert_true(bb.has_m && bb.mmin == 70 && bb.mmax == 70);
    assert_true(bb.zmin == 3 && bb.zmax == 3);

    w.n = 0; /* LINESTRING ZM (0 0 -1 100, 10 10 9 NaN) */
    const double zm[] = {0, 0, -1, 100, 10, 10, 9, NAN};
    line(&w, 3002, zm, 2, 4);
    assert_int_equal(add(&s, &w), 0);
    bb = bbox_of(&s);
    assert_true(bb.xmin == 0 && bb.xmax == 10 && bb.ymin == 0 && bb.ymax == 10);
    assert_true(bb.zmin == -1 && bb.zmax == 9 && bb.mmin == 70 && bb.mmax == 100);
    expect_types(&s, (const int32_t[]){1001, 2001, 3002}, 3);
    pq_geo_stats_free(&s);
}

/* Z present in the type but NaN in every value: Z is omitted. */
static void test_geo_all_nan_z_omits_z(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    wb w = {0};
    hdr(&w, true, 1001);
    put_f64(&w, 1);
    put_f64(&w, 2);
    put_f64(&w, NAN);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_false(bb.has_z);
    pq_geo_stats_free(&s);
}

static void test_geo_mixed_types_sorted_unique(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    wb w = {0};
    const double ring[] = {0, 0, 4, 0, 4, 4, 0, 0};
    hdr(&w, true, 6); /* MULTIPOLYGON (((0 0, 4 0, 4 4, 0 0))) */
    put_u32(&w, 1);
    polygon1(&w, ring, 4);
    assert_int_equal(add(&s, &w), 0);
    w.n = 0;
    point(&w, true, -1, 9);
    assert_int_equal(add(&s, &w), 0);
    assert_int_equal(add(&s, &w), 0);
    w.n = 0;
    const double l[] = {2, 2, 3, -5};
    line(&w, 2, l, 2, 2);
    assert_int_equal(add(&s, &w), 0);
    expect_types(&s, (const int32_t[]){1, 2, 6}, 3);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == -1 && bb.xmax == 4 && bb.ymin == -5 && bb.ymax == 9);
    pq_geo_stats_free(&s);
}

/* Only the top-level type is listed (Geospatial.md: types of instances). */
static void test_geo_collection_nested_members(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    wb w = {0};
    hdr(&w, true, 7);
    put_u32(&w, 3);
    point(&w, false, 10, 20); /* members may switch byte order */
    const double l[] = {-1, -2, 3, 4};
    line(&w, 2, l, 2, 2);
    hdr(&w, true, 7); /* an empty nested collection */
    put_u32(&w, 0);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == -1 && bb.xmax == 10 && bb.ymin == -2 && bb.ymax == 20);
    expect_types(&s, (const int32_t[]){7}, 1);
    pq_geo_stats_free(&s);
}

/* Planar GEOMETRY never wraps, even for longitudes near +-180. */
static void test_geo_geometry_never_wraps(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    wb w = {0};
    const double l[] = {170, 0, -170, 0};
    line(&w, 2, l, 2, 2);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == -170 && bb.xmax == 170);
    pq_geo_stats_free(&s);
}

/* ---- malformed input ------------------------------------------------------ */

static void expect_parse_error(const uint8_t *p, size_t n, const char *needle)
{
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    wb ok = {0};
    point(&ok, true, 1, 1);
    assert_int_equal(add(&s, &ok), 0);
    pq_err err;
    pq_err_clear(&err);
    assert_int_equal(pq_geo_stats_add_wkb(&s, p, n, &err), PQ_EPARSE);
    if (needle != NULL && strstr(err.msg, needle) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, needle);
    /* The bad value changed nothing in the box; the types are unknown. */
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == 1 && bb.xmax == 1 && bb.ymin == 1 && bb.ymax == 1);
    assert_false(pq_geo_stats_types_known(&s));
    int32_t types[PQ_GEO_MAX_TYPES];
    assert_int_equal(pq_geo_stats_types(&s, types), 0);
    pq_geo_stats_free(&s);
}

/* Every proper prefix of a valid collection fails cleanly. */
static void test_geo_truncated_input_every_prefix(void **state)
{
    (void)state;
    wb w = {0};
    hdr(&w, true, 7);
    put_u32(&w, 2);
    point(&w, true, 100, 200);
    const double ring[] = {0, 0, 1, 0, 1, 1, 0, 0};
    polygon1(&w, ring, 4);
    for (size_t n = 0; n < w.n; n++)
        expect_parse_error(w.b, n, NULL);
    expect_parse_error(NULL, 0, "header");
}

static void test_geo_rejects_malformed_headers_and_counts(void **state)
{
    (void)state;
    const uint8_t bad_order[] = {0x02, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                 0, 0, 0};
    expect_parse_error(bad_order, sizeof bad_order, "byte order");
    const uint8_t curve[] = {0x01, 8, 0, 0, 0, 0, 0, 0, 0}; /* CircularString */
    expect_parse_error(curve, sizeof curve, "unsupported geometry type 8");
    const uint8_t dim4[] = {0x01, 0xa1, 0x0f, 0, 0}; /* 4001 */
    expect_parse_error(dim4, sizeof dim4, "4001");
    const uint8_t ewkb[] = {0x01, 0x01, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0,
                            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_parse_error(ewkb, sizeof ewkb, "EWKB");
    /* 0xFFFFFFFF points in 9 bytes: refused before any loop. */
    const uint8_t liar[] = {0x01, 0x02, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    expect_parse_error(liar, sizeof liar, "4294967295 points");

    wb w = {0};
    point(&w, true, 1, 2);
    w.b[w.n++] = 0; /* trailing byte */
    expect_parse_error(w.b, w.n, "trailing");

    w.n = 0; /* MULTIPOINT holding a LINESTRING */
    hdr(&w, true, 4);
    put_u32(&w, 1);
    const double l[] = {0, 0, 1, 1};
    line(&w, 2, l, 2, 2);
    expect_parse_error(w.b, w.n, "MultiPoint member is a LineString");

    w.n = 0; /* MULTIPOINT Z holding a 2D point */
    hdr(&w, true, 1004);
    put_u32(&w, 1);
    point(&w, true, 0, 0);
    expect_parse_error(w.b, w.n, "dimensions");
}

static void test_geo_rejects_deep_nesting(void **state)
{
    (void)state;
    wb w = {0};
    for (int i = 0; i < 40; i++) {
        hdr(&w, true, 7);
        put_u32(&w, 1);
    }
    point(&w, true, 0, 0);
    expect_parse_error(w.b, w.n, "nested");
}

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    return pqt_xorshift64(&rng_state);
}

/* Random byte flips and cuts of a valid value: must return 0 or PQ_EPARSE
 * and never read out of bounds (ASan/valgrind runs catch that). */
static void test_geo_mutated_input_never_crashes(void **state)
{
    (void)state;
    const uint64_t seed = 77;
    rng_state = seed;
    wb base = {0};
    hdr(&base, true, 7);
    put_u32(&base, 2);
    const double ring[] = {0, 0, 10, 0, 10, 10, 0, 0};
    hdr(&base, false, 6);
    put_u32(&base, 1);
    polygon1(&base, ring, 4);
    const double l[] = {1, 2, 3, 4, 5, 6};
    line(&base, 1002, l, 2, 3);
    for (int geography = 0; geography < 2; geography++) {
        pq_geo_stats s;
        pq_geo_stats_init(&s, geography);
        for (int i = 0; i < 20000; i++) {
            uint8_t m[sizeof base.b];
            memcpy(m, base.b, base.n);
            size_t flips = 1 + rng_next() % 4;
            for (size_t f = 0; f < flips; f++)
                m[rng_next() % base.n] = (uint8_t)rng_next();
            size_t n = rng_next() % 5 == 0 ? rng_next() % base.n : base.n;
            int rc = pq_geo_stats_add_wkb(&s, m, n, NULL);
            if (rc != 0 && rc != PQ_EPARSE)
                fail_msg("seed %llu iteration %d: rc %d", (unsigned long long)seed, i, rc);
        }
        pq_geo_stats_free(&s);
    }
}

/* ---- GEOGRAPHY ------------------------------------------------------------ */

/* An edge from 170 to -170 crosses the antimeridian: xmin > xmax. */
static void test_geo_geography_edge_wraps_antimeridian(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, true);
    wb w = {0};
    const double l[] = {170, 10, -170, 20};
    line(&w, 2, l, 2, 2);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == 170 && bb.xmax == -170);
    assert_true(bb.ymin == 10 && bb.ymax >= 20 && bb.ymax < 20.1);
    pq_geo_stats_free(&s);
}

/* Points alone: wrap only when it is the tighter box. */
static void test_geo_geography_points_choose_tighter_box(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, true);
    wb w = {0};
    point(&w, true, 179, 0);
    assert_int_equal(add(&s, &w), 0);
    w.n = 0;
    point(&w, true, -178, 1);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == 179 && bb.xmax == -178);
    pq_geo_stats_reset(&s);
    w.n = 0;
    point(&w, true, -10, 0);
    assert_int_equal(add(&s, &w), 0);
    w.n = 0;
    point(&w, true, 20, 0);
    assert_int_equal(add(&s, &w), 0);
    bb = bbox_of(&s);
    assert_true(bb.xmin == -10 && bb.xmax == 20);
    /* -180 and 180 are distinct to a reader comparing numbers. */
    pq_geo_stats_reset(&s);
    w.n = 0;
    point(&w, true, -180, 0);
    assert_int_equal(add(&s, &w), 0);
    w.n = 0;
    point(&w, true, 180, 0);
    assert_int_equal(add(&s, &w), 0);
    bb = bbox_of(&s);
    assert_true((bb.xmin == 180 && bb.xmax == -180) || (bb.xmin == -180 && bb.xmax == 180));
    pq_geo_stats_free(&s);
}

/* The great circle from (0, 60) to (90, 60) peaks at atan(tan 60 / cos 45)
 * = 67.79 degrees: the box must reach it, not stop at 60. */
static void test_geo_geography_edge_latitude_bulge(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, true);
    wb w = {0};
    const double l[] = {0, 60, 90, 60};
    line(&w, 2, l, 2, 2);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    double peak = atan(tan(60.0 * M_PI / 180) / cos(45.0 * M_PI / 180)) * 180 / M_PI;
    assert_true(bb.ymax >= peak && bb.ymax < peak + 1e-6);
    assert_true(bb.ymin == 60 && bb.xmin == 0 && bb.xmax == 90);
    /* The same edge in the south bulges south. */
    pq_geo_stats_reset(&s);
    w.n = 0;
    const double south[] = {0, -60, 90, -60};
    line(&w, 2, south, 2, 2);
    assert_int_equal(add(&s, &w), 0);
    bb = bbox_of(&s);
    assert_true(bb.ymin <= -peak && bb.ymin > -peak - 1e-6 && bb.ymax == -60);
    pq_geo_stats_free(&s);
}

/* Out-of-range coordinates are special values for GEOGRAPHY. */
static void test_geo_geography_skips_out_of_range(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, true);
    wb w = {0};
    point(&w, true, 200, 10);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb;
    assert_false(pq_geo_stats_bbox(&s, &bb)); /* no valid X at all */
    w.n = 0;
    point(&w, true, 5, 95);
    assert_int_equal(add(&s, &w), 0);
    bb = bbox_of(&s);
    assert_true(bb.xmin == 5 && bb.xmax == 5 && bb.ymin == 10 && bb.ymax == 10);
    pq_geo_stats_free(&s);
}

/* A ring around the north pole: the interior holds the pole and every
 * longitude, so the box is the world. */
static void test_geo_geography_pole_ring_is_world(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, true);
    wb w = {0};
    const double ring[] = {0, 80, 90, 80, 180, 80, -90, 80, 0, 80};
    polygon1(&w, ring, 5);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == -180 && bb.xmax == 180 && bb.ymin == -90 && bb.ymax == 90);
    pq_geo_stats_free(&s);
}

/* A small polygon straddling the antimeridian wraps and stays small. */
static void test_geo_geography_polygon_across_antimeridian(void **state)
{
    (void)state;
    pq_geo_stats s;
    pq_geo_stats_init(&s, true);
    wb w = {0};
    const double ring[] = {175, -5, -175, -5, -175, 5, 175, 5, 175, -5};
    polygon1(&w, ring, 5);
    assert_int_equal(add(&s, &w), 0);
    pq_geo_bbox bb = bbox_of(&s);
    assert_true(bb.xmin == 175 && bb.xmax == -175);
    assert_true(bb.ymin < -5 && bb.ymin > -5.1 && bb.ymax > 5 && bb.ymax < 5.1);
    pq_geo_stats_free(&s);
}

static void test_geo_merge_equals_adding_everything(void **state)
{
    (void)state;
    const uint64_t seed = 5;
    rng_state = seed;
    for (int geography = 0; geography < 2; geography++) {
        pq_geo_stats all, a, b;
        pq_geo_stats_init(&all, geography);
        pq_geo_stats_init(&a, geography);
        pq_geo_stats_init(&b, geography);
        for (int i = 0; i < 50; i++) {
            wb w = {0};
            double c[6];
            for (size_t k = 0; k < 6; k++)
                c[k] = (double)(int64_t)(rng_next() % 170) - 85.0;
            line(&w, 1002, c, 2, 3);
            assert_int_equal(add(&all, &w), 0);
            assert_int_equal(add(i % 3 ? &a : &b, &w), 0);
        }
        assert_int_equal(pq_geo_stats_merge(&a, &b), 0);
        pq_geo_bbox x = bbox_of(&all), y = bbox_of(&a);
        assert_true(x.xmin == y.xmin && x.xmax == y.xmax && x.ymin == y.ymin &&
                    x.ymax == y.ymax && x.zmin == y.zmin && x.zmax == y.zmax);
        assert_int_equal(all.values, a.values);
        expect_types(&a, (const int32_t[]){1002}, 1);
        pq_geo_stats_free(&all);
        pq_geo_stats_free(&a);
        pq_geo_stats_free(&b);
    }
    pq_geo_stats g, p;
    pq_geo_stats_init(&g, true);
    pq_geo_stats_init(&p, false);
    assert_int_equal(pq_geo_stats_merge(&g, &p), PQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geo_point_both_byte_orders),
        cmocka_unit_test(test_geo_empty_point_nan_adds_no_box_but_a_type),
        cmocka_unit_test(test_geo_z_m_and_zm_dimensions),
        cmocka_unit_test(test_geo_all_nan_z_omits_z),
        cmocka_unit_test(test_geo_mixed_types_sorted_unique),
        cmocka_unit_test(test_geo_collection_nested_members),
        cmocka_unit_test(test_geo_geometry_never_wraps),
        cmocka_unit_test(test_geo_truncated_input_every_prefix),
        cmocka_unit_test(test_geo_rejects_malformed_headers_and_counts),
        cmocka_unit_test(test_geo_rejects_deep_nesting),
        cmocka_unit_test(test_geo_mutated_input_never_crashes),
        cmocka_unit_test(test_geo_geography_edge_wraps_antimeridian),
        cmocka_unit_test(test_geo_geography_points_choose_tighter_box),
        cmocka_unit_test(test_geo_geography_edge_latitude_bulge),
        cmocka_unit_test(test_geo_geography_skips_out_of_range),
        cmocka_unit_test(test_geo_geography_pole_ring_is_world),
        cmocka_unit_test(test_geo_geography_polygon_across_antimeridian),
        cmocka_unit_test(test_geo_merge_equals_adding_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
