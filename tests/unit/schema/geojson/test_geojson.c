/* test_geojson.c - GeoJSON geometry objects to ISO WKB
 * (schema/geojson/geojson.c): byte-exact WKB for every type in XY, XYZ and
 * XYZM, numbers, member order and foreign members, empty geometries,
 * nested collections and the converter's buffers. Errors:
 * test_geojson_errors.c; random round-trips: test_geojson_random.c. */
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
#include "geojson_fixture.h"

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
        cmocka_unit_test(test_gj_appends_and_reuses_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
