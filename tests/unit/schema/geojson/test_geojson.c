/* test_geojson.c - GeoJSON geometry objects to ISO WKB (schema/geojson.c):
 * byte-exact WKB for every type in XY, XYZ and XYZM, member order and
 * foreign members, empty geometries, nested collections, every error with
 * its message, and a seeded random round-trip checked byte for byte and
 * through writer/geo.c's independent WKB reader (PQ_TEST_SEED replays). */
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

static void hexdump(const char *label, const uint8_t *p, size_t n)
{
    print_message("%s (%zu bytes):", label, n);
    for (size_t i = 0; i < n; i++)
        print_message("%s%02X", i % 16 == 0 ? "\n  " : " ", p[i]);
    print_message("\n");
}

/* Converts json; on failure or wrong bytes prints what it got. The result
 * must also be WKB that writer/geo.c accepts. */
static void expect_wkb(const char *json, const uint8_t *want, size_t n)
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
static void expect_err(const char *json, const char *msg)
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

/* ---- byte-exact WKB per geometry type ------------------------------------ */

static void test_gj_double_macros_are_ieee(void **state)
{
    (void)state;
    static const uint8_t b[] = {F_0, F_1, F_2, F_3, F_4, F_5, F_6, F_10, F_M1,
                                F_HALF, F_0_1};
    static const double v[] = {0, 1, 2, 3, 4, 5, 6, 10, -1, 0.5, 0.1};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t le[8];
        uint64_t u;
        memcpy(&u, &v[i], 8);
        for (int k = 0; k < 8; k++)
            le[k] = (uint8_t)(u >> (8 * k));
        assert_memory_equal(b + 8 * i, le, 8);
    }
    static const uint8_t nan_b[] = {F_NAN};
    double d;
    uint64_t u = 0;
    for (int k = 0; k < 8; k++)
        u |= (uint64_t)nan_b[k] << (8 * k);
    memcpy(&d, &u, 8);
    assert_true(isnan(d));
}

static void test_gj_point_xy(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"Point\",\"coordinates\":[1,2]}",
               LE, N(1), F_1, F_2);
}

static void test_gj_point_z(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"Point\",\"coordinates\":[1,2,3]}",
               LE, N(1001), F_1, F_2, F_3);
}

static void test_gj_point_zm_fourth_number_is_m(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"Point\",\"coordinates\":[1,2,3,4]}",
               LE, N(3001), F_1, F_2, F_3, F_4);
}

static void test_gj_linestring_xy(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"LineString\",\"coordinates\":[[1,2],[3,4],[5,6]]}",
               LE, N(2), N(3), F_1, F_2, F_3, F_4, F_5, F_6);
}

static void test_gj_linestring_z(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"LineString\",\"coordinates\":[[1,2,3],[4,5,6]]}",
               LE, N(1002), N(2), F_1, F_2, F_3, F_4, F_5, F_6);
}

static void test_gj_polygon_with_hole(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"Polygon\",\"coordinates\":["
               "[[0,0],[10,0],[10,10],[0,10],[0,0]],"
               "[[1,1],[1,2],[2,2],[1,1]]]}",
               LE, N(3), N(2),
               N(5), F_0, F_0, F_10, F_0, F_10, F_10, F_0, F_10, F_0, F_0,
               N(4), F_1, F_1, F_1, F_2, F_2, F_2, F_1, F_1);
}

static void test_gj_polygon_zm(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"Polygon\",\"coordinates\":"
               "[[[0,0,1,2],[1,0,1,2],[1,1,1,2],[0,0,1,2]]]}",
               LE, N(3003), N(1),
               N(4), F_0, F_0, F_1, F_2, F_1, F_0, F_1, F_2, F_1, F_1, F_1, F_2,
               F_0, F_0, F_1, F_2);
}

static void test_gj_multipoint(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"MultiPoint\",\"coordinates\":[[1,2],[3,4]]}",
               LE, N(4), N(2), LE, N(1), F_1, F_2, LE, N(1), F_3, F_4);
}

static void test_gj_multipoint_z(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"MultiPoint\",\"coordinates\":[[1,2,3]]}",
               LE, N(1004), N(1), LE, N(1001), F_1, F_2, F_3);
}

static void test_gj_multilinestring(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"MultiLineString\",\"coordinates\":"
               "[[[1,2],[3,4]],[[5,6],[1,1],[2,2]]]}",
               LE, N(5), N(2),
               LE, N(2), N(2), F_1, F_2, F_3, F_4,
               LE, N(2), N(3), F_5, F_6, F_1, F_1, F_2, F_2);
}

static void test_gj_multipolygon(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"MultiPolygon\",\"coordinates\":["
               "[[[0,0],[1,0],[1,1],[0,0]]],"
               "[[[2,2],[3,2],[3,3],[2,2]],[[2,2],[2,3],[3,3],[2,2]]]]}",
               LE, N(6), N(2),
               LE, N(3), N(1), N(4), F_0, F_0, F_1, F_0, F_1, F_1, F_0, F_0,
               LE, N(3), N(2), N(4), F_2, F_2, F_3, F_2, F_3, F_3, F_2, F_2,
               N(4), F_2, F_2, F_2, F_3, F_3, F_3, F_2, F_2);
}

static void test_gj_multipolygon_zm(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"MultiPolygon\",\"coordinates\":"
               "[[[[0,0,5,6],[1,0,5,6],[1,1,5,6],[0,0,5,6]]]]}",
               LE, N(3006), N(1),
               LE, N(3003), N(1), N(4), F_0, F_0, F_5, F_6, F_1, F_0, F_5, F_6,
               F_1, F_1, F_5, F_6, F_0, F_0, F_5, F_6);
}

static void test_gj_geometrycollection(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"GeometryCollection\",\"geometries\":["
               "{\"type\":\"Point\",\"coordinates\":[1,2]},"
               "{\"type\":\"LineString\",\"coordinates\":[[3,4],[5,6]]}]}",
               LE, N(7), N(2),
               LE, N(1), F_1, F_2,
               LE, N(2), N(2), F_3, F_4, F_5, F_6);
}

static void test_gj_geometrycollection_z(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"GeometryCollection\",\"geometries\":["
               "{\"type\":\"Point\",\"coordinates\":[1,2,3]},"
               "{\"type\":\"MultiPoint\",\"coordinates\":[[4,5,6]]}]}",
               LE, N(1007), N(2),
               LE, N(1001), F_1, F_2, F_3,
               LE, N(1004), N(1), LE, N(1001), F_4, F_5, F_6);
}

static void test_gj_nested_geometrycollection(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"GeometryCollection\",\"geometries\":["
               "{\"type\":\"GeometryCollection\",\"geometries\":["
               "{\"type\":\"Point\",\"coordinates\":[1,2]},"
               "{\"type\":\"GeometryCollection\",\"geometries\":[]}]},"
               "{\"type\":\"Point\",\"coordinates\":[3,4]}]}",
               LE, N(7), N(2),
               LE, N(7), N(2),
               LE, N(1), F_1, F_2,
               LE, N(7), N(0),
               LE, N(1), F_3, F_4);
}

/* ---- numbers ----------------------------------------------------------------- */

static void test_gj_numbers_are_the_parsers_exact_doubles(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"Point\",\"coordinates\":[0.1,-1e0]}",
               LE, N(1), F_0_1, F_M1);
    EXPECT_WKB("{\"type\":\"Point\",\"coordinates\":[5E-1,1.000000000000000000000001]}",
               LE, N(1), F_HALF, F_1);
    /* Longer decimals: the bytes of the correctly rounded double. */
    const char *txt[] = {"-122.41941550000001", "37.774929", "1e-310",
                         "18446744073709551617", "-0"};
    for (size_t i = 0; i < sizeof txt / sizeof txt[0]; i++) {
        char json[128];
        snprintf(json, sizeof json, "{\"type\":\"Point\",\"coordinates\":[%s,%s]}",
                 txt[i], txt[i]);
        double d = strtod(txt[i], NULL);
        uint8_t want[21] = {LE, N(1)};
        uint64_t u;
        memcpy(&u, &d, 8);
        for (int k = 0; k < 8; k++)
            want[5 + k] = want[13 + k] = (uint8_t)(u >> (8 * k));
        expect_wkb(json, want, sizeof want);
    }
}

/* ---- member order, foreign members, whitespace ---------------------------- */

static void test_gj_member_order_does_not_matter(void **state)
{
    (void)state;
    const char *orders[] = {
        "{\"type\":\"LineString\",\"coordinates\":[[1,2],[3,4]]}",
        "{\"coordinates\":[[1,2],[3,4]],\"type\":\"LineString\"}",
        "{\"bbox\":[1,2,3,4],\"coordinates\":[[1,2],[3,4]],\"type\":\"LineString\"}",
        (" {\r\n \"coordinates\" : [ [ 1 , 2 ] , [ 3 , 4 ] ] ,\t\"typ\\u0065\":"
         "\"LineString\" }\n"),  /* one element: parentheses for clang's -Wstring-concatenation */
    };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++)
        EXPECT_WKB(orders[i], LE, N(2), N(2), F_1, F_2, F_3, F_4);
    /* Also for a collection and its members. */
    EXPECT_WKB("{\"geometries\":[{\"coordinates\":[1,2],\"type\":\"Point\"}],"
               "\"type\":\"GeometryCollection\"}",
               LE, N(7), N(1), LE, N(1), F_1, F_2);
}

static void test_gj_foreign_members_ignored(void **state)
{
    (void)state;
    /* bbox, crs (an object with its own "type" and "properties"), nested
     * junk, "geometries" on a Point (even malformed) and "coordinates" on
     * a GeometryCollection are foreign members (RFC 7946 6.1, 7.1). */
    EXPECT_WKB("{\"crs\":{\"type\":\"name\",\"properties\":{\"name\":"
               "\"urn:ogc:def:crs:OGC:1.3:CRS84\"}},\"type\":\"Point\","
               "\"bbox\":[1,2,1,2],\"id\":null,\"x\":[true,{\"coordinates\":\"no\"}],"
               "\"geometries\":[7,\"z\"],\"coordinates\":[1,2]}",
               LE, N(1), F_1, F_2);
    EXPECT_WKB("{\"type\":\"GeometryCollection\",\"coordinates\":\"none\","
               "\"geometries\":[{\"type\":\"Point\",\"coordinates\":[1,2],"
               "\"geometries\":{\"type\":\"Bogus\"}}]}",
               LE, N(7), N(1), LE, N(1), F_1, F_2);
    /* A foreign "geometries" array's objects are never looked at. */
    EXPECT_WKB("{\"type\":\"Point\",\"coordinates\":[1,2],"
               "\"geometries\":[{\"type\":\"Feature\"},{\"no\":1}]}",
               LE, N(1), F_1, F_2);
}

/* ---- empty geometries ----------------------------------------------------- */

static void test_gj_empty_point_is_nan_coordinates(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"Point\",\"coordinates\":[]}", LE, N(1), F_NAN, F_NAN);
}

static void test_gj_empty_geometries_of_every_type(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"LineString\",\"coordinates\":[]}", LE, N(2), N(0));
    EXPECT_WKB("{\"type\":\"Polygon\",\"coordinates\":[]}", LE, N(3), N(0));
    EXPECT_WKB("{\"type\":\"MultiPoint\",\"coordinates\":[]}", LE, N(4), N(0));
    EXPECT_WKB("{\"type\":\"MultiLineString\",\"coordinates\":[]}", LE, N(5), N(0));
    EXPECT_WKB("{\"type\":\"MultiPolygon\",\"coordinates\":[]}", LE, N(6), N(0));
    EXPECT_WKB("{\"type\":\"GeometryCollection\",\"geometries\":[]}", LE, N(7), N(0));
}

static void test_gj_empty_multi_members(void **state)
{
    (void)state;
    EXPECT_WKB("{\"type\":\"MultiLineString\",\"coordinates\":[[],[[1,2],[3,4]]]}",
               LE, N(5), N(2), LE, N(2), N(0), LE, N(2), N(2), F_1, F_2, F_3, F_4);
    EXPECT_WKB("{\"type\":\"MultiPolygon\",\"coordinates\":[[]]}",
               LE, N(6), N(1), LE, N(3), N(0));
}

static void test_gj_empty_members_take_the_collection_dimension(void **state)
{
    (void)state;
    /* The empty point comes first, before any position says "3D". */
    EXPECT_WKB("{\"type\":\"GeometryCollection\",\"geometries\":["
               "{\"type\":\"Point\",\"coordinates\":[]},"
               "{\"type\":\"LineString\",\"coordinates\":[]},"
               "{\"type\":\"Point\",\"coordinates\":[1,2,3]}]}",
               LE, N(1007), N(3),
               LE, N(1001), F_NAN, F_NAN, F_NAN,
               LE, N(1002), N(0),
               LE, N(1001), F_1, F_2, F_3);
}

/* ---- nesting limit ---------------------------------------------------------- */

static char *nested_collections(int levels, const char *leaf)
{
    pq_buf b;
    pq_buf_init(&b);
    for (int i = 1; i < levels; i++)
        pq_buf_append(&b, "{\"type\":\"GeometryCollection\",\"geometries\":[", 43);
    pq_buf_append(&b, leaf, strlen(leaf));
    for (int i = 1; i < levels; i++)
        pq_buf_append(&b, "]}", 2);
    pq_buf_push(&b, 0);
    return (char *)b.data;
}

static void test_gj_nesting_limit_32_levels(void **state)
{
    (void)state;
    /* 32 levels with a MultiPolygon innermost: its polygons sit 32 deep,
     * still inside geo.c's limit. */
    char *ok = nested_collections(GJ_MAX_DEPTH, "{\"type\":\"MultiPolygon\","
                                  "\"coordinates\":[[[[0,0],[1,0],[1,1],[0,0]]]]}");
    gj_converter c;
    pq_buf out;
    pq_err err;
    assert_int_equal(gj_converter_init(&c), 0);
    pq_buf_init(&out);
    assert_int_equal(gj_to_wkb(&c, ok, strlen(ok), &out, &err), 0);
    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    assert_int_equal(pq_geo_stats_add_wkb(&s, out.data, out.len, &err), 0);
    pq_buf_free(&out);
    gj_converter_free(&c);
    free(ok);

    char *deep = nested_collections(GJ_MAX_DEPTH + 1, "{\"type\":\"Point\","
                                    "\"coordinates\":[1,2]}");
    char msg[160];
    snprintf(msg, sizeof msg, "GeoJSON: geometry at byte %zu is nested 33 levels "
             "deep; at most 32 are allowed", (size_t)32 * 43);
    expect_err(deep, msg);
    free(deep);
}

/* ---- errors, one class each -------------------------------------------------- */

static void test_gj_error_invalid_json(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Point\",\"coordinates\":[1,2]",
               "GeoJSON: invalid JSON: byte 35: expected ',' or '}' after object "
               "member, got end of line");
    expect_err("   ", "GeoJSON: empty text, expected a geometry object");
}

static void test_gj_error_not_an_object(void **state)
{
    (void)state;
    expect_err("[1,2]", "GeoJSON: expected a geometry object, got an array");
    expect_err("\"POINT(1 2)\"", "GeoJSON: expected a geometry object, got a string");
    expect_err("12", "GeoJSON: expected a geometry object, got a number");
    expect_err("null", "GeoJSON: expected a geometry object, got null");
}

static void test_gj_error_missing_type(void **state)
{
    (void)state;
    expect_err("{\"coordinates\":[1,2]}",
               "GeoJSON: object at byte 0 has no \"type\" member");
}

static void test_gj_error_type_not_a_string(void **state)
{
    (void)state;
    expect_err("{\"type\":1,\"coordinates\":[1,2]}",
               "GeoJSON: \"type\" at byte 8 is a number, expected a string");
}

static void test_gj_error_unknown_type(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Circle\",\"coordinates\":[1,2]}",
               "GeoJSON: unknown geometry type \"Circle\" (byte 8); expected Point, "
               "MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon or "
               "GeometryCollection");
    expect_err("{\"type\":\"point\",\"coordinates\":[1,2]}",
               "GeoJSON: unknown geometry type \"point\" (byte 8); type names are "
               "case-sensitive, did you mean \"Point\"?");
}

static void test_gj_error_feature_is_not_a_geometry(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\""
               ":[1,2]},\"properties\":{}}",
               "GeoJSON: a Feature (byte 0) is not a geometry; pass its \"geometry\" "
               "member instead");
    expect_err("{\"type\":\"FeatureCollection\",\"features\":[]}",
               "GeoJSON: a FeatureCollection (byte 0) is not a geometry; pass each "
               "feature's \"geometry\" member instead");
    /* Inside a collection too. */
    expect_err("{\"type\":\"GeometryCollection\",\"geometries\":[{\"type\":\"Feature\"}]}",
               "GeoJSON: a Feature (byte 43) is not a geometry; pass its \"geometry\" "
               "member instead");
}

static void test_gj_error_missing_coordinates_or_geometries(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Polygon\"}",
               "GeoJSON: Polygon at byte 0 has no \"coordinates\" member");
    expect_err("{\"type\":\"GeometryCollection\",\"coordinates\":[]}",
               "GeoJSON: GeometryCollection at byte 0 has no \"geometries\" member");
}

static void test_gj_error_coordinates_not_numbers_and_arrays(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Point\",\"coordinates\":null}",
               "GeoJSON: \"coordinates\" at byte 30 is null, expected an array");
    expect_err("{\"type\":\"Point\",\"coordinates\":{\"x\":1}}",
               "GeoJSON: \"coordinates\" at byte 30 is an object, expected an array");
    expect_err("{\"type\":\"Point\",\"coordinates\":[1,\"2\"]}",
               "GeoJSON: \"coordinates\" hold a string at byte 33; only numbers and "
               "arrays belong there");
    expect_err("{\"type\":\"LineString\",\"coordinates\":[[1,2],[3,null]]}",
               "GeoJSON: \"coordinates\" hold null at byte 45; only numbers and arrays "
               "belong there");
}

static void test_gj_error_geometries_not_geometry_objects(void **state)
{
    (void)state;
    expect_err("{\"type\":\"GeometryCollection\",\"geometries\":{}}",
               "GeoJSON: \"geometries\" at byte 42 is an object, expected an array of "
               "geometry objects");
    expect_err("{\"type\":\"GeometryCollection\",\"geometries\":[{\"type\":\"Point\","
               "\"coordinates\":[]},[1,2]]}",
               "GeoJSON: GeometryCollection member 2 (byte 77) is an array, expected a "
               "geometry object");
}

static void test_gj_error_nesting_too_shallow(void **state)
{
    (void)state;
    expect_err("{\"type\":\"LineString\",\"coordinates\":[1,2]}",
               "GeoJSON: LineString coordinates nested too shallowly: byte 36 holds a "
               "number where a position was expected");
    expect_err("{\"type\":\"Polygon\",\"coordinates\":[[1,2],[3,4]]}",
               "GeoJSON: Polygon coordinates nested too shallowly: byte 34 holds a "
               "number where a position was expected");
    expect_err("{\"type\":\"MultiPolygon\",\"coordinates\":[[[1,2]]]}",
               "GeoJSON: MultiPolygon polygon 1 coordinates nested too shallowly: byte "
               "40 holds a number where a position was expected");
    expect_err("{\"type\":\"MultiPoint\",\"coordinates\":[1]}",
               "GeoJSON: MultiPoint coordinates nested too shallowly: byte 36 holds a "
               "number where a position was expected");
}

static void test_gj_error_nesting_too_deep(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Point\",\"coordinates\":[[1,2]]}",
               "GeoJSON: Point coordinates nested too deeply: byte 31 holds an array "
               "inside a position");
    expect_err("{\"type\":\"MultiPoint\",\"coordinates\":[[[1,2]]]}",
               "GeoJSON: MultiPoint point 1 coordinates nested too deeply: byte 37 "
               "holds an array inside a position");
}

static void test_gj_error_position_needs_2_to_4_numbers(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Point\",\"coordinates\":[1]}",
               "GeoJSON: Point position at byte 30 has 1 numbers, needs 2 to 4 "
               "([x, y], [x, y, z] or [x, y, z, m])");
    expect_err("{\"type\":\"LineString\",\"coordinates\":[[1,2],[1,2,3,4,5]]}",
               "GeoJSON: LineString position at byte 42 has 5 numbers, needs 2 to 4 "
               "([x, y], [x, y, z] or [x, y, z, m])");
    /* Inside a MultiPoint, [] is a position, not an empty point. */
    expect_err("{\"type\":\"MultiPoint\",\"coordinates\":[[]]}",
               "GeoJSON: MultiPoint point 1 position at byte 36 has 0 numbers, needs 2 "
               "to 4 ([x, y], [x, y, z] or [x, y, z, m])");
}

static void test_gj_error_mixed_dimensions(void **state)
{
    (void)state;
    expect_err("{\"type\":\"LineString\",\"coordinates\":[[1,2],[3,4,5]]}",
               "GeoJSON: position at byte 42 has 3 numbers but the one at byte 36 has "
               "2; one geometry cannot mix dimensions");
    /* Across collection members too: WKB members share the parent's. */
    expect_err("{\"type\":\"GeometryCollection\",\"geometries\":["
               "{\"type\":\"Point\",\"coordinates\":[1,2,3,4]},"
               "{\"type\":\"Point\",\"coordinates\":[1,2]}]}",
               "GeoJSON: position at byte 114 has 2 numbers but the one at byte 73 has "
               "4; one geometry cannot mix dimensions");
}

static void test_gj_error_linestring_single_position(void **state)
{
    (void)state;
    expect_err("{\"type\":\"LineString\",\"coordinates\":[[1,2]]}",
               "GeoJSON: LineString at byte 35 has 1 position, needs at least 2 (or "
               "none, for an empty one)");
    expect_err("{\"type\":\"MultiLineString\",\"coordinates\":[[[1,2],[3,4]],[[1,2]]]}",
               "GeoJSON: MultiLineString line 2 at byte 55 has 1 position, needs at "
               "least 2 (or none, for an empty one)");
}

static void test_gj_error_ring_too_short(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Polygon\",\"coordinates\":[[[0,0],[4,0],[4,4],[0,0]],"
               "[[1,1],[2,2],[1,1]]]}",
               "GeoJSON: Polygon ring 2 (byte 59) has 3 positions, needs at least 4 "
               "and closed");
    expect_err("{\"type\":\"Polygon\",\"coordinates\":[[]]}",
               "GeoJSON: Polygon ring 1 (byte 33) has 0 positions, needs at least 4 "
               "and closed");
}

static void test_gj_error_ring_not_closed(void **state)
{
    (void)state;
    expect_err("{\"type\":\"MultiPolygon\",\"coordinates\":[[[[0,0],[4,0],[4,4],"
               "[0,1]]]]}",
               "GeoJSON: MultiPolygon polygon 1 ring 1 (byte 39) is not closed: its "
               "last position (byte 58) differs from its first");
    /* Z counts too. */
    expect_err("{\"type\":\"Polygon\",\"coordinates\":[[[0,0,1],[4,0,1],[4,4,1],"
               "[0,0,2]]]}",
               "GeoJSON: Polygon ring 1 (byte 33) is not closed: its last position "
               "(byte 58) differs from its first");
}

static void test_gj_error_duplicate_member(void **state)
{
    (void)state;
    expect_err("{\"type\":\"Point\",\"coordinates\":[1,2],\"coordinates\":[3,4]}",
               "GeoJSON: second \"coordinates\" member at byte 36 (a geometry has one)");
    expect_err("{\"type\":\"Point\",\"type\":\"Point\",\"coordinates\":[1,2]}",
               "GeoJSON: second \"type\" member at byte 16 (a geometry has one)");
}

/* ---- converter behaviour ------------------------------------------------------ */

static void test_gj_appends_and_reuses_buffers(void **state)
{
    (void)state;
    gj_converter c;
    pq_buf out;
    pq_err err;
    assert_int_equal(gj_converter_init(&c), 0);
    pq_buf_init(&out);
    const char *big = "{\"type\":\"MultiPoint\",\"coordinates\":[[1,2],[3,4],[5,6],"
                      "[1,1],[2,2],[3,3]]}";
    const char *bad = "{\"type\":\"Point\",\"coordinates\":[1,2,3,4,5]}";
    const char *small = "{\"type\":\"Point\",\"coordinates\":[1,2]}";
    static const uint8_t want_small[] = {LE, N(1), F_1, F_2};
    assert_int_equal(gj_to_wkb(&c, big, strlen(big), &out, &err), 0);
    const size_t big_len = out.len;
    assert_int_equal(big_len, 9 + 6 * 21);
    assert_int_equal(gj_to_wkb(&c, bad, strlen(bad), &out, &err), PQ_ETYPE);
    assert_int_equal(out.len, big_len);
    void *items = (void *)c.items, *nodes = (void *)c.nodes;
    assert_int_equal(gj_to_wkb(&c, small, strlen(small), &out, &err), 0);
    assert_int_equal(err.code, 0);
    assert_int_equal(out.len, big_len + sizeof want_small);
    assert_memory_equal(out.data + big_len, want_small, sizeof want_small);
    /* Smaller values reuse the arrays the big one grew. */
    assert_ptr_equal(items, c.items);
    assert_ptr_equal(nodes, c.nodes);
    assert_int_equal(gj_to_wkb(&c, small, strlen(small), &out, NULL), 0);
    pq_buf_free(&out);
    gj_converter_free(&c);
}

/* ---- seeded random round-trip ------------------------------------------------
 * A generator writes random GeoJSON (random member order, foreign members,
 * whitespace) and, independently, the WKB it must become, while tracking
 * the min/max of every coordinate. The converter must produce exactly those
 * bytes, and geo.c must accept them and compute exactly that box. */

typedef struct gen {
    uint64_t s;
    pq_buf json, wkb;
    unsigned dim;
    double lo[4], hi[4];
    size_t positions;
} gen;

static uint64_t rnd(gen *g) /* splitmix64 */
{
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t below(gen *g, size_t n) { return (size_t)(rnd(g) % n); }

static void js(gen *g, const char *s) { pq_buf_append(&g->json, s, strlen(s)); }

static void ws(gen *g)
{
    static const char *const w[] = {"", "", "", " ", "\n", " \t "};
    js(g, w[below(g, 6)]);
}

static void w32(gen *g, uint32_t v) { pq_buf_put_u32le(&g->wkb, v); }

static void whdr(gen *g, uint32_t base)
{
    pq_buf_push(&g->wkb, 1);
    w32(g, base + (g->dim == 3 ? 1000 : g->dim == 4 ? 3000 : 0));
}

static double rnd_double(gen *g)
{
    switch (below(g, 4)) {
    case 0: return (double)((int64_t)below(g, 2001) - 1000);
    case 1: return (double)((int64_t)below(g, 2000001) - 1000000) / 1000.0;
    case 2: return ((double)rnd(g) / 18446744073709551616.0 - 0.5) * 360.0;
    default: {
        double d;
        do {
            uint64_t u = rnd(g);
            memcpy(&d, &u, 8);
        } while (!isfinite(d));
        return d;
    }
    }
}

/* One position: as JSON (%.17g round-trips every double) and WKB. */
static void gen_pos(gen *g, const double *v)
{
    char b[40];
    js(g, "[");
    for (unsigned k = 0; k < g->dim; k++) {
        if (k)
            js(g, ",");
        ws(g);
        snprintf(b, sizeof b, "%.17g", v[k]);
        js(g, b);
        uint64_t u;
        memcpy(&u, &v[k], 8);
        pq_buf_put_u64le(&g->wkb, u);
        if (v[k] < g->lo[k]) g->lo[k] = v[k];
        if (v[k] > g->hi[k]) g->hi[k] = v[k];
    }
    js(g, "]");
    g->positions++;
}

static void gen_new_pos(gen *g)
{
    double v[4];
    for (unsigned k = 0; k < g->dim; k++)
        v[k] = rnd_double(g);
    gen_pos(g, v);
}

/* A LineString's positions (or a ring's, closed, >= 4) after the count. */
static void gen_path(gen *g, bool ring)
{
    size_t n = ring ? 4 + below(g, 4) : below(g, 6);
    if (!ring && n == 1)
        n = 2;
    w32(g, (uint32_t)n);
    js(g, "[");
    double first[4];
    for (size_t i = 0; i < n; i++) {
        if (i)
            js(g, ",");
        ws(g);
        double v[4];
        for (unsigned k = 0; k < g->dim; k++)
            v[k] = ring && i == n - 1 ? first[k] : rnd_double(g);
        if (i == 0)
            memcpy(first, v, sizeof v);
        gen_pos(g, v);
    }
    js(g, "]");
}

static void gen_polygon(gen *g)
{
    size_t n = below(g, 3);
    whdr(g, 3);
    w32(g, (uint32_t)n);
    js(g, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            js(g, ",");
        gen_path(g, true);
    }
    js(g, "]");
}

static void gen_coords(gen *g, int type)
{
    switch (type) {
    case 1:
        whdr(g, 1);
        if (below(g, 8) == 0) {
            js(g, "[]");
            for (unsigned k = 0; k < g->dim; k++)
                pq_buf_put_u64le(&g->wkb, 0x7FF8000000000000ull);
        } else {
            gen_new_pos(g);
        }
        return;
    case 2: whdr(g, 2); gen_path(g, false); return;
    case 3: gen_polygon(g); return;
    default: {
        size_t n = below(g, 4);
        whdr(g, (uint32_t)type);
        w32(g, (uint32_t)n);
        js(g, "[");
        for (size_t i = 0; i < n; i++) {
            if (i)
                js(g, ",");
            ws(g);
            if (type == 4) {
                whdr(g, 1);
                gen_new_pos(g);
            } else if (type == 5) {
                whdr(g, 2);
                gen_path(g, false);
            } else {
                gen_polygon(g);
            }
        }
        js(g, "]");
    }
    }
}

static void gen_geom(gen *g, int depth);

/* Members in random order: type, coordinates or geometries, and maybe
 * foreign ones. */
static void gen_geom(gen *g, int depth)
{
    static const char *const names[8] = {"", "Point", "LineString", "Polygon",
                                         "MultiPoint", "MultiLineString",
                                         "MultiPolygon", "GeometryCollection"};
    int type = 1 + (int)below(g, depth < 3 ? 7 : 6);
    int order[4] = {0, 1, 2, 3}; /* 0 type, 1 body, 2 bbox, 3 properties */
    for (int i = 3; i > 0; i--) {
        int j = (int)below(g, (size_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    const bool foreign = below(g, 3) == 0;
    bool first = true;
    js(g, "{");
    for (int i = 0; i < 4; i++) {
        if (order[i] >= 2 && !foreign)
            continue;
        if (!first)
            js(g, ",");
        first = false;
        ws(g);
        switch (order[i]) {
        case 0:
            js(g, "\"type\":");
            ws(g);
            js(g, "\"");
            js(g, names[type]);
            js(g, "\"");
            break;
        case 1:
            if (type == 7) {
                size_t n = below(g, 4);
                whdr(g, 7);
                w32(g, (uint32_t)n);
                js(g, "\"geometries\":[");
                for (size_t k = 0; k < n; k++) {
                    if (k)
                        js(g, ",");
                    gen_geom(g, depth + 1);
                }
                js(g, "]");
            } else {
                js(g, "\"coordinates\":");
                ws(g);
                gen_coords(g, type);
            }
            break;
        case 2: js(g, "\"bbox\":[-1e9,\"x\",{\"type\":\"Point\"}]"); break;
        default: js(g, "\"properties\":{\"coordinates\":null,\"a\":[[[]]]}"); break;
        }
        ws(g);
    }
    js(g, "}");
}

static void test_gj_random_round_trip_bytes_and_bbox(void **state)
{
    (void)state;
    const char *env = getenv("PQ_TEST_SEED");
    const uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    print_message("test_gj_random_round_trip: seed %llu (PQ_TEST_SEED=%llu replays)\n",
                  (unsigned long long)seed, (unsigned long long)seed);
    gen g = {.s = seed};
    pq_buf_init(&g.json);
    pq_buf_init(&g.wkb);
    gj_converter c;
    pq_buf out;
    pq_err err;
    assert_int_equal(gj_converter_init(&c), 0);
    pq_buf_init(&out);
    for (int iter = 0; iter < 3000; iter++) {
        pq_buf_reset(&g.json);
        pq_buf_reset(&g.wkb);
        pq_buf_reset(&out);
        g.dim = 2 + (unsigned)below(&g, 3);
        g.positions = 0;
        for (int k = 0; k < 4; k++) {
            g.lo[k] = INFINITY;
            g.hi[k] = -INFINITY;
        }
        const uint64_t before = g.s;
        gen_geom(&g, 0);
        /* Nothing but empty geometries: the converter writes XY (no position
         * says otherwise). Without positions the random stream does not
         * depend on dim, so generating again as XY gives the same text. */
        const bool empty = g.positions == 0;
        if (empty && g.dim != 2) {
            pq_buf_reset(&g.json);
            pq_buf_reset(&g.wkb);
            g.s = before;
            g.dim = 2;
            gen_geom(&g, 0);
            assert_int_equal(g.positions, 0);
        }
        if (gj_to_wkb(&c, (const char *)g.json.data, g.json.len, &out, &err) != 0)
            fail_msg("seed %llu iter %d: %.*s\n -> %s", (unsigned long long)seed, iter,
                     (int)g.json.len, (const char *)g.json.data, err.msg);
        if (out.len != g.wkb.len || memcmp(out.data, g.wkb.data, out.len) != 0) {
            print_message("seed %llu iter %d: %.*s\n", (unsigned long long)seed, iter,
                          (int)g.json.len, (const char *)g.json.data);
            hexdump("got", out.data, out.len);
            hexdump("want", g.wkb.data, g.wkb.len);
            fail();
        }
        pq_geo_stats s;
        pq_geo_stats_init(&s, false);
        if (pq_geo_stats_add_wkb(&s, out.data, out.len, &err) != 0)
            fail_msg("seed %llu iter %d: geo.c rejects: %s", (unsigned long long)seed,
                     iter, err.msg);
        pq_geo_bbox box;
        if (empty) {
            assert_false(pq_geo_stats_bbox(&s, &box));
            pq_geo_stats_free(&s);
            continue;
        }
        assert_true(pq_geo_stats_bbox(&s, &box));
        if (box.xmin != g.lo[0] || box.xmax != g.hi[0] || box.ymin != g.lo[1] ||
            box.ymax != g.hi[1] || box.has_z != (g.dim >= 3) || box.has_m != (g.dim == 4) ||
            (g.dim >= 3 && (box.zmin != g.lo[2] || box.zmax != g.hi[2])) ||
            (g.dim == 4 && (box.mmin != g.lo[3] || box.mmax != g.hi[3])))
            fail_msg("seed %llu iter %d: box x %g..%g y %g..%g, generated x %g..%g "
                     "y %g..%g (dim %u)", (unsigned long long)seed, iter, box.xmin,
                     box.xmax, box.ymin, box.ymax, g.lo[0], g.hi[0], g.lo[1], g.hi[1],
                     g.dim);
        pq_geo_stats_free(&s);
    }
    pq_buf_free(&out);
    pq_buf_free(&g.json);
    pq_buf_free(&g.wkb);
    gj_converter_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gj_double_macros_are_ieee),
        cmocka_unit_test(test_gj_point_xy),
        cmocka_unit_test(test_gj_point_z),
        cmocka_unit_test(test_gj_point_zm_fourth_number_is_m),
        cmocka_unit_test(test_gj_linestring_xy),
        cmocka_unit_test(test_gj_linestring_z),
        cmocka_unit_test(test_gj_polygon_with_hole),
        cmocka_unit_test(test_gj_polygon_zm),
        cmocka_unit_test(test_gj_multipoint),
        cmocka_unit_test(test_gj_multipoint_z),
        cmocka_unit_test(test_gj_multilinestring),
        cmocka_unit_test(test_gj_multipolygon),
        cmocka_unit_test(test_gj_multipolygon_zm),
        cmocka_unit_test(test_gj_geometrycollection),
        cmocka_unit_test(test_gj_geometrycollection_z),
        cmocka_unit_test(test_gj_nested_geometrycollection),
        cmocka_unit_test(test_gj_numbers_are_the_parsers_exact_doubles),
        cmocka_unit_test(test_gj_member_order_does_not_matter),
        cmocka_unit_test(test_gj_foreign_members_ignored),
        cmocka_unit_test(test_gj_empty_point_is_nan_coordinates),
        cmocka_unit_test(test_gj_empty_geometries_of_every_type),
        cmocka_unit_test(test_gj_empty_multi_members),
        cmocka_unit_test(test_gj_empty_members_take_the_collection_dimension),
        cmocka_unit_test(test_gj_nesting_limit_32_levels),
        cmocka_unit_test(test_gj_error_invalid_json),
        cmocka_unit_test(test_gj_error_not_an_object),
        cmocka_unit_test(test_gj_error_missing_type),
        cmocka_unit_test(test_gj_error_type_not_a_string),
        cmocka_unit_test(test_gj_error_unknown_type),
        cmocka_unit_test(test_gj_error_feature_is_not_a_geometry),
        cmocka_unit_test(test_gj_error_missing_coordinates_or_geometries),
        cmocka_unit_test(test_gj_error_coordinates_not_numbers_and_arrays),
        cmocka_unit_test(test_gj_error_geometries_not_geometry_objects),
        cmocka_unit_test(test_gj_error_nesting_too_shallow),
        cmocka_unit_test(test_gj_error_nesting_too_deep),
        cmocka_unit_test(test_gj_error_position_needs_2_to_4_numbers),
        cmocka_unit_test(test_gj_error_mixed_dimensions),
        cmocka_unit_test(test_gj_error_linestring_single_position),
        cmocka_unit_test(test_gj_error_ring_too_short),
        cmocka_unit_test(test_gj_error_ring_not_closed),
        cmocka_unit_test(test_gj_error_duplicate_member),
        cmocka_unit_test(test_gj_appends_and_reuses_buffers),
        cmocka_unit_test(test_gj_random_round_trip_bytes_and_bbox),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
