/* test_geojson_errors.c - every error of the GeoJSON to WKB converter
 * (schema/geojson/geojson.c), one class each, with its message. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
