/* test_typestr.c - the type-string grammar (schema/colspec/typestr.c) and
 * each type's Parquet mapping (typeinfo.c): every primitive type string,
 * nested list/map strings, sc_type_format, and the type-string errors with
 * their exact FILE:LINE:COL. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static void test_type_bool_and_integers(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: b, type: bool}\n"
                   "  - {name: i8, type: int8}\n"
                   "  - {name: i16, type: int16}\n"
                   "  - {name: i32, type: int32}\n"
                   "  - {name: i64, type: int64}\n"
                   "  - {name: u8, type: uint8}\n"
                   "  - {name: u16, type: uint16}\n"
                   "  - {name: u32, type: uint32}\n"
                   "  - {name: u64, type: uint64}\n",
                   M("  optional boolean b;\n"
                     "  optional int32 i8 (INTEGER(8,true));\n"
                     "  optional int32 i16 (INTEGER(16,true));\n"
                     "  optional int32 i32;\n"
                     "  optional int64 i64;\n"
                     "  optional int32 u8 (INTEGER(8,false));\n"
                     "  optional int32 u16 (INTEGER(16,false));\n"
                     "  optional int32 u32 (INTEGER(32,false));\n"
                     "  optional int64 u64 (INTEGER(64,false));\n"));
}

static void test_type_floating_point(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: f, type: float}\n"
                   "  - {name: d, type: double}\n"
                   "  - {name: h, type: float16}\n",
                   M("  optional float f;\n"
                     "  optional double d;\n"
                     "  optional fixed_len_byte_array(2) h (FLOAT16);\n"));
}

static void test_type_decimal_physical_by_precision(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: a, type: \"decimal(9,2)\"}\n"
                   "  - {name: b, type: \"decimal(10, 4)\"}\n"
                   "  - {name: c, type: \"decimal(18,0)\"}\n"
                   "  - {name: d, type: \"decimal(19,3)\"}\n"
                   "  - {name: e, type: \"decimal(38,10)\"}\n"
                   "  - {name: f, type: \"decimal(39,0)\"}\n"
                   "  - {name: g, type: \"decimal(5)\"}\n",
                   M("  optional int32 a (DECIMAL(9,2));\n"
                     "  optional int64 b (DECIMAL(10,4));\n"
                     "  optional int64 c (DECIMAL(18,0));\n"
                     "  optional fixed_len_byte_array(9) d (DECIMAL(19,3));\n"
                     "  optional fixed_len_byte_array(16) e (DECIMAL(38,10));\n"
                     "  optional binary f (DECIMAL(39,0));\n"
                     "  optional int32 g (DECIMAL(5,0));\n"));
}

static void test_type_decimal_fixed_uses_minimal_bytes(void **state)
{
    (void)state;
    /* 2^(8n-1)-1 >= 10^p - 1: 19..21 digits need 9 bytes, 22 needs 10,
     * 35 fits 15, 36..38 need 16. */
    assert_printed("columns:\n"
                   "  - {name: a, type: \"decimal(21,0)\"}\n"
                   "  - {name: b, type: \"decimal(22,0)\"}\n"
                   "  - {name: c, type: \"decimal(35,0)\"}\n"
                   "  - {name: d, type: \"decimal(37,0)\"}\n",
                   M("  optional fixed_len_byte_array(9) a (DECIMAL(21,0));\n"
                     "  optional fixed_len_byte_array(10) b (DECIMAL(22,0));\n"
                     "  optional fixed_len_byte_array(15) c (DECIMAL(35,0));\n"
                     "  optional fixed_len_byte_array(16) d (DECIMAL(37,0));\n"));
}

static void test_type_strings_and_binaries(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: s, type: string}\n"
                   "  - {name: e, type: enum}\n"
                   "  - {name: j, type: json}\n"
                   "  - {name: b, type: bson}\n"
                   "  - {name: r, type: binary}\n"
                   "  - {name: u, type: uuid}\n",
                   M("  optional binary s (STRING);\n"
                     "  optional binary e (ENUM);\n"
                     "  optional binary j (JSON);\n"
                     "  optional binary b (BSON);\n"
                     "  optional binary r;\n"
                     "  optional fixed_len_byte_array(16) u (UUID);\n"));
}

static void test_type_temporal(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: d, type: date}\n"
                   "  - {name: t1, type: time, unit: ms}\n"
                   "  - {name: t2, type: time}\n"
                   "  - {name: t3, type: \"time(ns, utc)\"}\n"
                   "  - {name: ts, type: timestamp}\n"
                   "  - {name: ts2, type: timestamp, unit: ms, utc: false}\n"
                   "  - {name: ts3, type: \"timestamp(ns,local)\"}\n"
                   "  - {name: iv, type: interval}\n",
                   M("  optional int32 d (DATE);\n"
                     "  optional int32 t1 (TIME(MILLIS,false));\n"
                     "  optional int64 t2 (TIME(MICROS,false));\n"
                     "  optional int64 t3 (TIME(NANOS,true));\n"
                     "  optional int64 ts (TIMESTAMP(MICROS,true));\n"
                     "  optional int64 ts2 (TIMESTAMP(MILLIS,false));\n"
                     "  optional int64 ts3 (TIMESTAMP(NANOS,false));\n"
                     "  optional fixed_len_byte_array(12) iv (INTERVAL);\n"));
}

static void test_type_geospatial(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: g, type: geometry}\n"
                   "  - {name: h, type: geometry, crs: \"EPSG:4326\"}\n"
                   "  - {name: k, type: geography, algorithm: karney}\n",
                   M("  optional binary g (GEOMETRY(OGC:CRS84));\n"
                     "  optional binary h (GEOMETRY(EPSG:4326));\n"
                     "  optional binary k (GEOGRAPHY(OGC:CRS84,4));\n"));
}

static void test_type_list_of_list(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: l, type: \"list<list<int64>>\"}\n",
                   M("  optional group l (LIST) {\n"
                     "    repeated group list {\n"
                     "      optional group element (LIST) {\n"
                     "        repeated group list {\n"
                     "          optional int64 element;\n"
                     "        }\n"
                     "      }\n"
                     "    }\n"
                     "  }\n"));
}

static void test_type_map_of_list(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: m, type: \"map<string,list<string>>\"}\n",
                   M("  optional group m (MAP) {\n"
                     "    repeated group key_value {\n"
                     "      required binary key (STRING);\n"
                     "      optional group value (LIST) {\n"
                     "        repeated group list {\n"
                     "          optional binary element (STRING);\n"
                     "        }\n"
                     "      }\n"
                     "    }\n"
                     "  }\n"));
}

static void test_type_string_allows_spaces(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: m, type: \" map < string , list< decimal( 12 , 3 ) > > \"}\n",
                   M("  optional group m (MAP) {\n"
                     "    repeated group key_value {\n"
                     "      required binary key (STRING);\n"
                     "      optional group value (LIST) {\n"
                     "        repeated group list {\n"
                     "          optional int64 element (DECIMAL(12,3));\n"
                     "        }\n"
                     "      }\n"
                     "    }\n"
                     "  }\n"));
}

static void test_error_unknown_type(void **state)
{
    (void)state;
    assert_error_prefix("columns:\n"
                        "  - {name: id, type: string}\n"
                        "  - {name: status, type: int33, from: http.status}\n",
                        "t.yaml:3:26: column 'status': unknown type 'int33' (expected bool, "
                        "int8..int64, uint8..uint64, float, double, float16, decimal(p,s), ");
}

static void test_error_type_string_positions(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: \"list<int32\"}\n",
                 "t.yaml:2:32: column 'a': expected '>' to close list<, found the end");
    assert_error("columns:\n  - {name: a, type: list<int32>>}\n",
                 "t.yaml:2:32: column 'a': unexpected '>' after the type");
    assert_error("columns:\n  - {name: a, type: \"map<int32,string>\"}\n",
                 "t.yaml:2:26: column 'a': map keys must be string (JSON object keys are "
                 "strings)");
    assert_error_prefix("columns:\n  - {name: a, type: \"list<list<strin>>\"}\n",
                        "t.yaml:2:32: column 'a': unknown type 'strin' (expected bool, ");
    assert_error("columns:\n  - {name: a, type: \"string(5)\"}\n",
                 "t.yaml:2:28: column 'a': type 'string' takes no parameters");
    assert_error("columns:\n  - {name: a, type: \"timestamp(s)\"}\n",
                 "t.yaml:2:32: column 'a': unknown unit 's' (expected ms, us or ns)");
    assert_error("columns:\n  - {name: a, type: \"timestamp(us, gmt)\"}\n",
                 "t.yaml:2:36: column 'a': expected utc or local, found 'gmt'");
}

static void test_error_decimal_out_of_range(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: d, type: \"decimal(0,0)\"}\n",
                 "t.yaml:2:30: column 'd': decimal precision '0' out of range 1..76");
    assert_error("columns:\n  - {name: d, type: \"decimal(77,2)\"}\n",
                 "t.yaml:2:30: column 'd': decimal precision '77' out of range 1..76");
    assert_error("columns:\n  - {name: d, type: \"decimal(5,6)\"}\n",
                 "t.yaml:2:32: column 'd': decimal scale '6' out of range 0..5 (the precision)");
    assert_error("columns:\n  - {name: d, type: decimal}\n",
                 "t.yaml:2:21: column 'd': decimal needs a precision and scale, e.g. "
                 "decimal(18,4)");
}

static void test_type_format_round_trip(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: a, type: \"map<string, list<timestamp(ns)>>\"}\n");
    char buf[64];
    sc_type_format(s->columns[0].type, buf, sizeof buf);
    assert_string_equal(buf, "map<string,list<timestamp(ns,utc)>>");
    sc_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_bool_and_integers),
        cmocka_unit_test(test_type_floating_point),
        cmocka_unit_test(test_type_decimal_physical_by_precision),
        cmocka_unit_test(test_type_decimal_fixed_uses_minimal_bytes),
        cmocka_unit_test(test_type_strings_and_binaries),
        cmocka_unit_test(test_type_temporal),
        cmocka_unit_test(test_type_geospatial),
        cmocka_unit_test(test_type_list_of_list),
        cmocka_unit_test(test_type_map_of_list),
        cmocka_unit_test(test_type_string_allows_spaces),
        cmocka_unit_test(test_error_unknown_type),
        cmocka_unit_test(test_error_type_string_positions),
        cmocka_unit_test(test_error_decimal_out_of_range),
        cmocka_unit_test(test_type_format_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
