/* test_colspec.c - the schema language (schema/colspec.c): every type
 * string and its Parquet mapping, Variant shred layouts, per-column
 * options, defaults, `from` paths, the leaf layout a shredder relies on,
 * and every error class with its exact FILE:LINE:COL. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "colspec.h"
#include "schema.h"

/* ---- helpers ------------------------------------------------------------ */

static sc_schema *load(const char *yaml)
{
    sc_schema *s = NULL;
    pq_err err = {0};
    int rc = sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &s, &err);
    if (rc != 0)
        print_message("unexpected error: %s\n", err.msg);
    assert_int_equal(rc, 0);
    return s;
}

/* Loads, builds and prints; returns the text (caller frees). */
static char *printed(const char *yaml)
{
    sc_schema *s = load(yaml);
    pq_schema *ps = NULL;
    pq_err err = {0};
    int rc = sc_build_parquet_schema(s, &ps, &err);
    if (rc != 0)
        print_message("build error: %s\n", err.msg);
    assert_int_equal(rc, 0);
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_schema_print(ps, &b), 0);
    pq_buf_push(&b, '\0');
    char *text = strdup((const char *)b.data);
    pq_buf_free(&b);
    pq_schema_destroy(ps);
    sc_schema_free(s);
    return text;
}

static void assert_printed(const char *yaml, const char *expected)
{
    char *text = printed(yaml);
    if (strcmp(text, expected) != 0)
        print_message("got:\n%s\nexpected:\n%s\n", text, expected);
    assert_string_equal(text, expected);
    free(text);
}

/* The whole message must equal `expected`. */
static void assert_error(const char *yaml, const char *expected)
{
    sc_schema *s = NULL;
    pq_err err = {0};
    int rc = sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &s, &err);
    assert_null(s);
    assert_int_equal(rc, PQ_EINVAL);
    if (strcmp(err.msg, expected) != 0)
        print_message("got:      %s\nexpected: %s\n", err.msg, expected);
    assert_string_equal(err.msg, expected);
}

/* The message must start with `prefix` (long "expected ..." tails). */
static void assert_error_prefix(const char *yaml, const char *prefix)
{
    sc_schema *s = NULL;
    pq_err err = {0};
    int rc = sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &s, &err);
    assert_null(s);
    assert_int_equal(rc, PQ_EINVAL);
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
        print_message("got:      %s\nexpected: %s...\n", err.msg, prefix);
    assert_true(strncmp(err.msg, prefix, strlen(prefix)) == 0);
}

#define M(body) "message schema {\n" body "}\n"

/* ---- primitive types ------------------------------------------------------- */

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

/* ---- nested types ------------------------------------------------------ */

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

static void test_type_struct_with_fields(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - name: http\n"
                   "    type: struct\n"
                   "    required: true\n"
                   "    fields:\n"
                   "      - {name: status, type: int32, required: true}\n"
                   "      - {name: path, type: string}\n"
                   "      - name: tls\n"
                   "        type: struct\n"
                   "        fields: [{name: version, type: string}]\n",
                   M("  required group http {\n"
                     "    required int32 status;\n"
                     "    optional binary path (STRING);\n"
                     "    optional group tls {\n"
                     "      optional binary version (STRING);\n"
                     "    }\n"
                     "  }\n"));
}

static void test_type_list_of_struct_takes_fields(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: hops, type: \"list<struct>\",\n"
                   "     fields: [{name: ip, type: string}, {name: ms, type: double}]}\n",
                   M("  optional group hops (LIST) {\n"
                     "    repeated group list {\n"
                     "      optional group element {\n"
                     "        optional binary ip (STRING);\n"
                     "        optional double ms;\n"
                     "      }\n"
                     "    }\n"
                     "  }\n"));
}

static void test_type_keys_apply_to_nested_timestamp(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: t, type: \"list<timestamp>\", unit: ms, utc: false}\n",
                   M("  optional group t (LIST) {\n"
                     "    repeated group list {\n"
                     "      optional int64 element (TIMESTAMP(MILLIS,false));\n"
                     "    }\n"
                     "  }\n"));
}

static void test_type_field_id_printed(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: a, type: int64, field_id: 7}\n"
                   "  - {name: l, type: \"list<string>\", field_id: 8}\n",
                   M("  optional int64 a = 7;\n"
                     "  optional group l (LIST) = 8 {\n"
                     "    repeated group list {\n"
                     "      optional binary element (STRING);\n"
                     "    }\n"
                     "  }\n"));
}

/* ---- variants ------------------------------------------------------------ */

static void test_variant_unshredded_value_is_required(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: v, type: variant}\n",
                   M("  optional group v (VARIANT(1)) {\n"
                     "    required binary metadata;\n"
                     "    required binary value;\n"
                     "  }\n"));
}

static void test_variant_shred_primitive(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: m, type: variant, required: true, shred: int64}\n",
                   M("  required group m (VARIANT(1)) {\n"
                     "    required binary metadata;\n"
                     "    optional binary value;\n"
                     "    optional int64 typed_value;\n"
                     "  }\n"));
}

/* VariantShredding.md "Arrays": tags shredded as a list of strings. */
static void test_variant_shred_array_spec_example(void **state)
{
    (void)state;
    const char *expected = M("  optional group tags (VARIANT(1)) {\n"
                             "    required binary metadata;\n"
                             "    optional binary value;\n"
                             "    optional group typed_value (LIST) {\n"
                             "      repeated group list {\n"
                             "        required group element {\n"
                             "          optional binary value;\n"
                             "          optional binary typed_value (STRING);\n"
                             "        }\n"
                             "      }\n"
                             "    }\n"
                             "  }\n");
    assert_printed("columns:\n  - {name: tags, type: variant, shred: [string]}\n", expected);
    assert_printed("columns:\n  - {name: tags, type: variant, shred: \"list<string>\"}\n",
                   expected);
}

/* VariantShredding.md "Nesting": the event example, field by field. */
static void test_variant_shred_nesting_spec_example(void **state)
{
    (void)state;
    assert_printed(
        "columns:\n"
        "  - name: event\n"
        "    type: variant\n"
        "    shred:\n"
        "      event_type: string\n"
        "      event_ts: timestamp\n"
        "      location: {latitude: double, longitude: double}\n"
        "      tags: [string]\n",
        M("  optional group event (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    optional binary value;\n"
          "    optional group typed_value {\n"
          "      required group event_type {\n"
          "        optional binary value;\n"
          "        optional binary typed_value (STRING);\n"
          "      }\n"
          "      required group event_ts {\n"
          "        optional binary value;\n"
          "        optional int64 typed_value (TIMESTAMP(MICROS,true));\n"
          "      }\n"
          "      required group location {\n"
          "        optional binary value;\n"
          "        optional group typed_value {\n"
          "          required group latitude {\n"
          "            optional binary value;\n"
          "            optional double typed_value;\n"
          "          }\n"
          "          required group longitude {\n"
          "            optional binary value;\n"
          "            optional double typed_value;\n"
          "          }\n"
          "        }\n"
          "      }\n"
          "      required group tags {\n"
          "        optional binary value;\n"
          "        optional group typed_value (LIST) {\n"
          "          repeated group list {\n"
          "            required group element {\n"
          "              optional binary value;\n"
          "              optional binary typed_value (STRING);\n"
          "            }\n"
          "          }\n"
          "        }\n"
          "      }\n"
          "    }\n"
          "  }\n"));
}

static void test_variant_shred_array_of_objects_and_untyped_field(void **state)
{
    (void)state;
    assert_printed(
        "columns:\n"
        "  - {name: v, type: variant, shred: {hits: [{id: int32, raw: variant}]}}\n",
        M("  optional group v (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    optional binary value;\n"
          "    optional group typed_value {\n"
          "      required group hits {\n"
          "        optional binary value;\n"
          "        optional group typed_value (LIST) {\n"
          "          repeated group list {\n"
          "            required group element {\n"
          "              optional binary value;\n"
          "              optional group typed_value {\n"
          "                required group id {\n"
          "                  optional binary value;\n"
          "                  optional int32 typed_value;\n"
          "                }\n"
          "                required group raw {\n"
          "                  optional binary value;\n"
          "                }\n"
          "              }\n"
          "            }\n"
          "          }\n"
          "        }\n"
          "      }\n"
          "    }\n"
          "  }\n"));
}

static void test_variant_shred_variant_primitive_types(void **state)
{
    (void)state;
    assert_printed(
        "columns:\n"
        "  - {name: v, type: variant, shred: {a: int8, b: \"decimal(20,2)\", c: date,\n"
        "     d: time, e: \"timestamp(ns,local)\", f: uuid, g: binary, h: bool}}\n",
        M("  optional group v (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    optional binary value;\n"
          "    optional group typed_value {\n"
          "      required group a {\n"
          "        optional binary value;\n"
          "        optional int32 typed_value (INTEGER(8,true));\n"
          "      }\n"
          "      required group b {\n"
          "        optional binary value;\n"
          "        optional fixed_len_byte_array(9) typed_value (DECIMAL(20,2));\n"
          "      }\n"
          "      required group c {\n"
          "        optional binary value;\n"
          "        optional int32 typed_value (DATE);\n"
          "      }\n"
          "      required group d {\n"
          "        optional binary value;\n"
          "        optional int64 typed_value (TIME(MICROS,false));\n"
          "      }\n"
          "      required group e {\n"
          "        optional binary value;\n"
          "        optional int64 typed_value (TIMESTAMP(NANOS,false));\n"
          "      }\n"
          "      required group f {\n"
          "        optional binary value;\n"
          "        optional fixed_len_byte_array(16) typed_value (UUID);\n"
          "      }\n"
          "      required group g {\n"
          "        optional binary value;\n"
          "        optional binary typed_value;\n"
          "      }\n"
          "      required group h {\n"
          "        optional binary value;\n"
          "        optional boolean typed_value;\n"
          "      }\n"
          "    }\n"
          "  }\n"));
}

static void test_variant_inside_list(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: l, type: \"list<variant>\", shred: string}\n",
                   M("  optional group l (LIST) {\n"
                     "    repeated group list {\n"
                     "      optional group element (VARIANT(1)) {\n"
                     "        required binary metadata;\n"
                     "        optional binary value;\n"
                     "        optional binary typed_value (STRING);\n"
                     "      }\n"
                     "    }\n"
                     "  }\n"));
}

/* DESIGN.md's schema example, as `parqd check` prints it. */
static void test_design_example_printed_form(void **state)
{
    (void)state;
    assert_printed(
        "columns:\n"
        "  - {name: ts, type: timestamp, unit: us, utc: true, from: time, required: true}\n"
        "  - {name: level, type: string, bloom: true}\n"
        "  - {name: status, type: int32, from: http.status}\n"
        "  - {name: tags, type: \"list<string>\"}\n"
        "  - {name: attrs, type: variant, from: attributes,\n"
        "     shred: {user_id: string, latency_ms: double, tags: [string]}}\n"
        "  - {name: rest, type: variant, from: \"*\"}   # every field not taken above\n",
        M("  required int64 ts (TIMESTAMP(MICROS,true));\n"
          "  optional binary level (STRING);\n"
          "  optional int32 status;\n"
          "  optional group tags (LIST) {\n"
          "    repeated group list {\n"
          "      optional binary element (STRING);\n"
          "    }\n"
          "  }\n"
          "  optional group attrs (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    optional binary value;\n"
          "    optional group typed_value {\n"
          "      required group user_id {\n"
          "        optional binary value;\n"
          "        optional binary typed_value (STRING);\n"
          "      }\n"
          "      required group latency_ms {\n"
          "        optional binary value;\n"
          "        optional double typed_value;\n"
          "      }\n"
          "      required group tags {\n"
          "        optional binary value;\n"
          "        optional group typed_value (LIST) {\n"
          "          repeated group list {\n"
          "            required group element {\n"
          "              optional binary value;\n"
          "              optional binary typed_value (STRING);\n"
          "            }\n"
          "          }\n"
          "        }\n"
          "      }\n"
          "    }\n"
          "  }\n"
          "  optional group rest (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    required binary value;\n"
          "  }\n"));
}

static void test_default_schema(void **state)
{
    (void)state;
    sc_schema *s = NULL;
    pq_err err = {0};
    assert_int_equal(sc_schema_default(&s, &err), 0);
    assert_int_equal(s->n_columns, 2);
    assert_string_equal(s->columns[0].name, "event");
    assert_int_equal(s->columns[0].source, SC_SRC_REST);
    assert_int_equal(s->rest, 0);
    assert_string_equal(s->columns[1].name, "_ingest_ts");
    assert_int_equal(s->columns[1].source, SC_SRC_INGEST_TIME);
    assert_true(s->columns[1].required);
    pq_schema *ps;
    assert_int_equal(sc_build_parquet_schema(s, &ps, &err), 0);
    pq_buf b;
    pq_buf_init(&b);
    pq_schema_print(ps, &b);
    pq_buf_push(&b, '\0');
    assert_string_equal((const char *)b.data,
                        M("  optional group event (VARIANT(1)) {\n"
                          "    required binary metadata;\n"
                          "    required binary value;\n"
                          "  }\n"
                          "  required int64 _ingest_ts (TIMESTAMP(MICROS,true));\n"));
    pq_buf_free(&b);
    pq_schema_destroy(ps);
    sc_schema_free(s);
}

/* ---- layout ----------------------------------------------------------------- */

static void test_layout_leaf_indices_and_levels(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: int64, required: true}\n"
                        "  - {name: l, type: \"list<string>\"}\n"
                        "  - {name: m, type: \"map<string,int32>\"}\n"
                        "  - {name: v, type: variant, shred: {x: [double], y: string}}\n");
    assert_int_equal(s->n_leaves, 11);
    const sc_type *a = s->columns[0].type, *l = s->columns[1].type, *m = s->columns[2].type;
    assert_int_equal(a->leaf, 0);
    assert_int_equal(a->def, 0);
    assert_int_equal(l->elem->leaf, 1);
    assert_int_equal(l->elem->def, 3);
    assert_int_equal(l->elem->rep, 1);
    assert_int_equal(m->leaf, 2);           /* key */
    assert_int_equal(s->leaves[2].max_def, 2);
    assert_int_equal(m->elem->leaf, 3);     /* value */
    assert_int_equal(m->elem->def, 3);
    const sc_type *v = s->columns[3].type;
    const sc_shred *root = v->shred;
    assert_int_equal(v->metadata_leaf, 4);
    assert_int_equal(root->value_leaf, 5);
    assert_int_equal(root->kind, SC_SHRED_OBJECT);
    assert_int_equal(root->typed_leaf, 6);
    const sc_shred *x = root->fields[0].shred, *y = root->fields[1].shred;
    assert_string_equal(root->fields[0].name, "x");
    assert_int_equal(x->value_leaf, 6);
    assert_int_equal(x->def, 2);            /* v, typed_value */
    assert_int_equal(x->elem->value_leaf, 7);
    assert_int_equal(x->elem->def, 4);      /* + typed_value(LIST), list */
    assert_int_equal(x->elem->rep, 1);
    assert_int_equal(x->elem->type->leaf, 8);
    assert_int_equal(x->elem->type->def, 5);
    assert_int_equal(y->value_leaf, 9);
    assert_int_equal(y->type->leaf, 10);
    assert_string_equal(s->leaves[8].path, "v.typed_value.x.typed_value.list.element.typed_value");
    assert_ptr_equal(s->leaves[8].column, &s->columns[3]);
    assert_int_equal(s->leaves[10].max_def, 3);
    sc_schema_free(s);
}

/* ---- from ------------------------------------------------------------------- */

static void assert_path(const sc_column *c, size_t n, const char *const *parts)
{
    assert_int_equal(c->path_len, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(c->path[i], parts[i]);
}

static void test_from_defaults_to_name(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: level, type: string}\n");
    assert_null(s->columns[0].from);
    assert_int_equal(s->columns[0].source, SC_SRC_PATH);
    assert_path(&s->columns[0], 1, (const char *[]){"level"});
    sc_schema_free(s);
}

static void test_from_dotted_path(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: status, type: int32, from: http.response.status}\n");
    assert_string_equal(s->columns[0].from, "http.response.status");
    assert_path(&s->columns[0], 3, (const char *[]){"http", "response", "status"});
    sc_schema_free(s);
}

static void test_from_pointer_unescaping(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string, from: /id.orig_h}\n"
                        "  - {name: b, type: string, from: /a~1b}\n"
                        "  - {name: c, type: string, from: /m~0n}\n"
                        "  - {name: d, type: string, from: \"/x/~01/\"}\n");
    assert_path(&s->columns[0], 1, (const char *[]){"id.orig_h"});
    assert_path(&s->columns[1], 1, (const char *[]){"a/b"});
    assert_path(&s->columns[2], 1, (const char *[]){"m~n"});
    assert_path(&s->columns[3], 3, (const char *[]){"x", "~1", ""});
    sc_schema_free(s);
}

static void test_from_star_is_rest(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string}\n"
                        "  - {name: rest, type: variant, from: \"*\"}\n");
    assert_int_equal(s->rest, 1);
    assert_int_equal(s->columns[1].source, SC_SRC_REST);
    assert_int_equal(s->columns[1].path_len, 0);
    sc_schema_free(s);
}

static void test_ingest_time_column(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: t, type: timestamp, ingest_time: true}\n");
    assert_int_equal(s->columns[0].source, SC_SRC_INGEST_TIME);
    sc_schema_free(s);
}

/* ---- options ------------------------------------------------------------- */

static void test_option_encodings_by_physical_type(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: int64, encoding: delta_binary_packed}\n"
                        "  - {name: b, type: string, encoding: delta_length_byte_array}\n"
                        "  - {name: c, type: uuid, encoding: delta_byte_array}\n"
                        "  - {name: d, type: double, encoding: byte_stream_split}\n"
                        "  - {name: e, type: bool, encoding: rle}\n"
                        "  - {name: f, type: string, encoding: dictionary}\n"
                        "  - {name: g, type: float16, encoding: plain}\n");
    const pq_encoding want[] = {PQ_ENC_DELTA_BINARY_PACKED, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY,
                                PQ_ENC_DELTA_BYTE_ARRAY, PQ_ENC_BYTE_STREAM_SPLIT, PQ_ENC_RLE,
                                PQ_ENC_RLE_DICTIONARY, PQ_ENC_PLAIN};
    for (size_t i = 0; i < 7; i++)
        assert_int_equal(s->leaves[i].opts.encoding, want[i]);
    sc_schema_free(s);
}

static void test_option_encoding_invalid_for_type(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32, encoding: delta_byte_array}\n",
                 "t.yaml:2:38: column 'a': encoding 'delta_byte_array' is not valid for int32 "
                 "values (valid for binary, fixed_len_byte_array)");
    assert_error("columns:\n  - {name: a, type: bool, encoding: dictionary}\n",
                 "t.yaml:2:37: column 'a': encoding 'dictionary' is not valid for boolean "
                 "values (valid for int32, int64, int96, float, double, binary, "
                 "fixed_len_byte_array)");
    /* A variant has binary leaves too. */
    assert_error("columns:\n  - {name: v, type: variant, encoding: delta_binary_packed}\n",
                 "t.yaml:2:40: column 'v': encoding 'delta_binary_packed' is not valid for "
                 "binary values (valid for int32, int64)");
    assert_error_prefix("columns:\n  - {name: a, type: int32, encoding: zigzag}\n",
                        "t.yaml:2:38: column 'a': encoding: unknown value 'zigzag' (expected plain,");
}

static void test_option_compression_and_level(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string, compression: gzip, compression_level: 9}\n"
                        "  - {name: b, type: string, compression: none}\n"
                        "  - {name: c, type: string}\n");
    assert_int_equal(s->leaves[0].opts.codec, PQ_CODEC_GZIP);
    assert_int_equal(s->leaves[0].opts.codec_level, 9);
    assert_int_equal(s->leaves[1].opts.codec, PQ_CODEC_UNCOMPRESSED);
    assert_int_equal(s->leaves[2].opts.codec, -1);
    sc_schema_free(s);
}

static void test_option_compression_errors(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: string, compression: lz5}\n",
                 "t.yaml:2:42: column 'a': unknown compression 'lz5' (expected none, snappy, "
                 "gzip, brotli, lz4_raw, zstd)");
    assert_error("columns:\n  - {name: a, type: string, compression_level: 3}\n",
                 "t.yaml:2:48: column 'a': compression_level needs compression on the same "
                 "column");
    assert_error_prefix("columns:\n  - {name: a, type: string, compression: gzip, "
                        "compression_level: 12}\n",
                        "t.yaml:2:67: column 'a': compression_level: compression level 12 out of range "
                        "for gzip");
}

static void test_option_dictionary_forms(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string, dictionary: true}\n"
                        "  - {name: b, type: string, dictionary: false}\n"
                        "  - {name: c, type: string, dictionary: {max_bytes: 64KiB}}\n"
                        "  - {name: d, type: string}\n");
    assert_int_equal(s->leaves[0].opts.dictionary, 1);
    assert_int_equal(s->leaves[1].opts.dictionary, 0);
    assert_int_equal(s->leaves[2].opts.dictionary, -1);
    assert_int_equal(s->leaves[2].opts.dictionary_max_bytes, 65536);
    assert_int_equal(s->leaves[3].opts.dictionary, -1);
    sc_schema_free(s);
}

/* dictionary: true plus an encoding names the fallback, not a conflict. */
static void test_option_dictionary_with_fallback_encoding(void **state)
{
    (void)state;
    const char *y = "columns:\n  - {name: a, type: string, encoding: delta_byte_array, "
                    "dictionary: true}\n";
    sc_schema *s;
    pq_err err = {0};
    assert_int_equal(sc_schema_load_buffer("t.yaml", y, strlen(y), &s, &err), 0);
    assert_int_equal(s->leaves[0].opts.dictionary, 1);
    assert_int_equal(s->leaves[0].opts.encoding, PQ_ENC_DELTA_BYTE_ARRAY);
    sc_schema_free(s);
}

static void test_option_dictionary_conflicts(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: string, encoding: dictionary, dictionary: false}\n",
                 "t.yaml:2:63: column 'a': dictionary: false conflicts with encoding: dictionary");
    assert_error("columns:\n  - {name: a, type: bool, dictionary: true}\n",
                 "t.yaml:2:39: column 'a': dictionary: booleans are never dictionary-encoded");
}

static void test_option_bloom_forms(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string, bloom: true}\n"
                        "  - {name: b, type: string, bloom: false}\n"
                        "  - {name: c, type: string, bloom: {fpp: 0.001, ndv: 50000}}\n"
                        "  - {name: d, type: string}\n");
    assert_int_equal(s->leaves[0].opts.bloom, 1);
    assert_int_equal(s->leaves[1].opts.bloom, 0);
    assert_int_equal(s->leaves[2].opts.bloom, 1);
    assert_true(s->leaves[2].opts.bloom_fpp == 0.001);
    assert_int_equal(s->leaves[2].opts.bloom_ndv, 50000);
    assert_int_equal(s->leaves[3].opts.bloom, -1);
    sc_schema_free(s);
}

static void test_option_bloom_errors(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: string, bloom: {fpp: 1.5}}\n",
                 "t.yaml:2:42: column 'a': bloom: fpp must be between 0 and 1 (exclusive), "
                 "e.g. 0.01");
    assert_error("columns:\n  - {name: a, type: string, bloom: {ndv: 0}}\n",
                 "t.yaml:2:42: column 'a': bloom: ndv: 0 is out of range 1..9223372036854775807");
    assert_error("columns:\n  - {name: a, type: string, bloom: {size: 3}}\n",
                 "t.yaml:2:37: column 'a': bloom: unknown key 'size' (expected fpp, ndv)");
    assert_error("columns:\n  - {name: a, type: bool, bloom: true}\n",
                 "t.yaml:2:34: column 'a': bloom: a bloom filter on a bool column filters "
                 "nothing");
    assert_error("columns:\n  - {name: a, type: string, bloom: maybe}\n",
                 "t.yaml:2:36: column 'a': bloom: expected true or false, found 'maybe'");
}

static void test_option_bloom_skips_variant_binaries(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: v, type: variant, bloom: true, shred: string}\n");
    assert_int_equal(s->n_leaves, 3);
    assert_int_equal(s->leaves[0].opts.bloom, 0); /* metadata */
    assert_int_equal(s->leaves[1].opts.bloom, 0); /* value */
    assert_int_equal(s->leaves[2].opts.bloom, 1); /* typed_value */
    sc_schema_free(s);
}

static void test_option_statistics_forms(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string, statistics: false}\n"
                        "  - {name: b, type: string, statistics: {truncate: 16}}\n"
                        "  - {name: c, type: string}\n");
    assert_int_equal(s->leaves[0].opts.statistics, 0);
    assert_int_equal(s->leaves[1].opts.statistics, 1);
    assert_int_equal(s->leaves[1].opts.stats_truncate, 16);
    assert_int_equal(s->leaves[2].opts.statistics, -1);
    sc_schema_free(s);
    assert_error("columns:\n  - {name: a, type: string, statistics: {truncate: 0}}\n",
                 "t.yaml:2:52: column 'a': statistics: truncate: 0 is out of range 1..2147483647");
}

static void test_option_key_and_field_id(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: a, type: \"list<string>\", key: k1, field_id: 3}\n");
    assert_string_equal(s->leaves[0].opts.key_id, "k1");
    assert_int_equal(s->columns[0].field_id, 3);
    sc_schema_free(s);
    assert_error("columns:\n  - {name: a, type: int32, field_id: -1}\n",
                 "t.yaml:2:38: column 'a': field_id: -1 is out of range 0..2147483647");
}

static void test_option_struct_field_overrides_column(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - name: s\n"
                        "    type: struct\n"
                        "    compression: snappy\n"
                        "    dictionary: true\n"
                        "    fields:\n"
                        "      - {name: a, type: string}\n"
                        "      - {name: b, type: int64, compression: zstd, encoding: delta_binary_packed}\n");
    assert_int_equal(s->leaves[0].opts.codec, PQ_CODEC_SNAPPY);
    assert_int_equal(s->leaves[0].opts.dictionary, 1);
    assert_int_equal(s->leaves[1].opts.codec, PQ_CODEC_ZSTD);
    assert_int_equal(s->leaves[1].opts.encoding, PQ_ENC_DELTA_BINARY_PACKED);
    assert_int_equal(s->leaves[1].opts.dictionary, -1); /* dropped: it would conflict */
    sc_schema_free(s);
}

static void test_option_leaf_opts_reach_pq_schema(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string, bloom: {fpp: 0.05}, key: k, compression: gzip,\n"
                        "     compression_level: 2, statistics: {truncate: 8}}\n");
    pq_schema *ps;
    pq_err err;
    assert_int_equal(sc_build_parquet_schema(s, &ps, &err), 0);
    assert_int_equal(pq_schema_num_leaves(ps), 1);
    const pq_node *n = pq_schema_leaf_node(ps, 0);
    assert_int_equal(n->opts.bloom, 1);
    assert_true(n->opts.bloom_fpp == 0.05);
    assert_string_equal(n->opts.key_id, "k");
    assert_int_equal(n->opts.codec, PQ_CODEC_GZIP);
    assert_int_equal(n->opts.codec_level, 2);
    assert_int_equal(n->opts.statistics, 1);
    assert_int_equal(n->opts.stats_truncate, 8);
    pq_schema_destroy(ps);
    sc_schema_free(s);
}

static void test_set_key_by_struct_path(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: user, type: struct, fields: [{name: email, type: string},\n"
                        "                                        {name: id, type: int64}]}\n"
                        "  - {name: u2, type: string, key: k9}\n");
    pq_err err = {0};
    assert_int_equal(sc_schema_set_key(s, "user.email", "k1", &err), 0);
    assert_string_equal(s->leaves[0].opts.key_id, "k1");
    assert_null(s->leaves[1].opts.key_id);
    assert_int_equal(sc_schema_set_key(s, "user", "k1", &err), 0);
    assert_string_equal(s->leaves[1].opts.key_id, "k1");
    assert_int_equal(sc_schema_set_key(s, "use", "k1", &err), PQ_EINVAL);
    assert_string_equal(err.msg, "no column 'use' in the schema");
    assert_int_equal(sc_schema_set_key(s, "u2", "k1", &err), PQ_EINVAL);
    assert_string_equal(err.msg, "column 'u2' already has key 'k9' from the schema");
    sc_schema_free(s);
}

/* ---- defaults ---------------------------------------------------------------- */

static sc_default one_default(const char *type, const char *value)
{
    char yaml[256];
    snprintf(yaml, sizeof yaml, "columns:\n  - {name: a, type: \"%s\", default: %s}\n", type,
             value);
    sc_schema *s = load(yaml);
    sc_default d = s->columns[0].def;
    d.text = NULL;
    sc_schema_free(s);
    return d;
}

static void test_default_values_parsed(void **state)
{
    (void)state;
    assert_true(one_default("bool", "true").b);
    assert_int_equal(one_default("int8", "-128").i, -128);
    assert_int_equal(one_default("uint64", "18446744073709551615").u, UINT64_MAX);
    assert_true(one_default("double", "2.5").d == 2.5);
    assert_true(one_default("float16", "65504").d == 65504.0);
    assert_int_equal(one_default("decimal(9,2)", "\"-12.5\"").i, -1250);
    assert_int_equal(one_default("date", "1970-01-02").i, 1);
    assert_int_equal(one_default("date", "2024-02-29").i, 19782);
    assert_int_equal(one_default("time(ms)", "\"01:00:00.250\"").i, 3600250);
    assert_int_equal(one_default("timestamp", "\"1970-01-01T00:00:01.5Z\"").i, 1500000);
    assert_int_equal(one_default("timestamp(ms)", "\"1970-01-01T01:00:00+01:00\"").i, 0);
    assert_int_equal(one_default("timestamp(ns)", "42").i, 42);
    sc_default u = one_default("uuid", "123e4567-e89b-12d3-a456-426614174000");
    assert_int_equal(u.uuid[0], 0x12);
    assert_int_equal(u.uuid[15], 0x00);
    assert_int_equal(u.uuid[14], 0x40);
    assert_true(one_default("string", "hello").set);
}

static void test_default_variant_kinds(void **state)
{
    (void)state;
    assert_int_equal(one_default("variant", "7").variant_kind, SC_DEF_INT);
    assert_int_equal(one_default("variant", "7.5").variant_kind, SC_DEF_DOUBLE);
    assert_int_equal(one_default("variant", "false").variant_kind, SC_DEF_BOOL);
    assert_int_equal(one_default("variant", "\"7\"").variant_kind, SC_DEF_STRING);
}

static void test_default_must_fit_type(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int8, default: 128}\n",
                 "t.yaml:2:36: column 'a': default: '128' does not fit type 'int8' (expected a "
                 "whole number in the type's range)");
    assert_error("columns:\n  - {name: a, type: \"decimal(4,1)\", default: 123.45}\n",
                 "t.yaml:2:46: column 'a': default: '123.45' does not fit type 'decimal(4,1)' "
                 "(expected a decimal number within the precision and scale)");
    assert_error("columns:\n  - {name: a, type: date, default: 2023-02-29}\n",
                 "t.yaml:2:36: column 'a': default: '2023-02-29' does not fit type 'date' "
                 "(expected a date YYYY-MM-DD)");
    assert_error("columns:\n  - {name: a, type: \"time(ms)\", default: \"00:00:00.0001\"}\n",
                 "t.yaml:2:42: column 'a': default: '00:00:00.0001' does not fit type "
                 "'time(ms,local)' (expected a time HH:MM:SS[.fraction] within the unit)");
    assert_error("columns:\n  - {name: a, type: \"list<int32>\", default: 1}\n",
                 "t.yaml:2:45: column 'a': default: not supported for type 'list<int32>' (only "
                 "scalar types take a default)");
    assert_error("columns:\n  - {name: a, type: string, default: [1]}\n",
                 "t.yaml:2:38: column 'a': default: expected a single value, found a list");
}

static void test_default_conflicts_with_required(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32, required: true, default: 5}\n",
                 "t.yaml:2:53: column 'a': default: conflicts with required: true (a default "
                 "fills missing values, so none would be rejected); drop one");
}

/* ---- errors ------------------------------------------------------------------ */

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

static void test_error_unknown_key(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32, requird: true}\n",
                 "t.yaml:2:28: column 'a': unknown key 'requird' (did you mean 'required'?)");
    assert_error_prefix("columns:\n  - {name: a, type: int32, colour: red}\n",
                        "t.yaml:2:28: column 'a': unknown key 'colour' (expected name, type, ");
    assert_error("colums:\n  - {name: a, type: int32}\n",
                 "t.yaml:1:1: schema: unknown key 'colums' (did you mean 'columns'?)");
}

static void test_error_duplicate_key(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32, type: int64}\n",
                 "t.yaml:2:28: column 'a': duplicate key 'type' (first at line 2)");
}

static void test_error_duplicate_column(void **state)
{
    (void)state;
    assert_error("columns:\n"
                 "  - {name: a, type: int32}\n"
                 "  - {name: b, type: int32}\n"
                 "  - {name: a, type: string}\n",
                 "t.yaml:4:5: column 'a': duplicate name");
    assert_error("columns:\n"
                 "  - {name: s, type: struct, fields: [{name: x, type: int32},\n"
                 "                                     {name: x, type: int32}]}\n",
                 "t.yaml:3:38: column 'x': duplicate name");
}

static void test_error_rest_columns(void **state)
{
    (void)state;
    assert_error("columns:\n"
                 "  - {name: a, type: variant, from: \"*\"}\n"
                 "  - {name: b, type: variant, from: \"*\"}\n",
                 "t.yaml:3:5: column 'b': a second rest column (from: \"*\"); 'a' already takes "
                 "every other field");
    assert_error("columns:\n  - {name: a, type: string, from: \"*\"}\n",
                 "t.yaml:2:35: column 'a': the rest column (from: \"*\") must have type variant");
    assert_error("columns:\n  - {name: s, type: struct, fields: [{name: r, type: variant, "
                 "from: \"*\"}]}\n",
                 "t.yaml:2:69: column 's.r': from: \"*\" is only for top-level columns");
}

static void test_error_shred_on_non_variant(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: string, shred: {x: int64}}\n",
                 "t.yaml:2:29: column 'a': key 'shred' does not apply to type 'string' (only to "
                 "variant)");
    assert_error("columns:\n  - {name: a, type: int32, fields: [{name: x, type: int64}]}\n",
                 "t.yaml:2:28: column 'a': key 'fields' does not apply to type 'int32' (only to "
                 "struct)");
    assert_error("columns:\n  - {name: a, type: string, unit: ms}\n",
                 "t.yaml:2:29: column 'a': key 'unit' does not apply to type 'string' (only to "
                 "time/timestamp)");
}

static void test_error_shred_tree_shapes(void **state)
{
    (void)state;
    assert_error_prefix("columns:\n  - {name: v, type: variant, shred: {x: uint8}}\n",
                        "t.yaml:2:41: column 'v': shred.x: cannot shred as 'uint8': Variant "
                        "integers are signed (int8..int64)");
    assert_error_prefix("columns:\n  - {name: v, type: variant, shred: {t: \"timestamp(ms)\"}}\n",
                        "t.yaml:2:41: column 'v': shred.t: cannot shred as "
                        "'timestamp(ms,utc)': Variant timestamps are us or ns");
    /* DuckDB 1.5.6 prints a Variant decimal(2,2) as ".05": not JSON */
    assert_error_prefix("columns:\n  - {name: v, type: variant, shred: {d: \"decimal(2,2)\"}}\n",
                        "t.yaml:2:41: column 'v': shred.d: cannot shred as 'decimal(2,2)': "
                        "Variant decimals have at most 38 digits and a scale below the "
                        "precision (readers print decimal(p,p) values as \".5\", not JSON)");
    assert_error("columns:\n  - {name: v, type: variant, shred: [string, int64]}\n",
                 "t.yaml:2:37: column 'v': shred: an array shred is a one-element list [T]");
    assert_error("columns:\n  - {name: v, type: variant, shred: {}}\n",
                 "t.yaml:2:37: column 'v': shred: an object shred needs at least one field");
    assert_error("columns:\n  - {name: v, type: variant, shred: {a: {b: \"map<string,int32>\"}}}\n",
                 "t.yaml:2:45: column 'v': shred.a.b: shred objects are written as mappings "
                 "({field: type}), not 'map<string,int32>'");
    assert_error("columns:\n  - {name: v, type: variant, shred: {a: string, a: int64}}\n",
                 "t.yaml:2:49: column 'v': shred: field 'a' is shredded twice");
}

static void test_error_names_and_paths(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a.b, type: int32}\n",
                 "t.yaml:2:12: column 'a.b': a column name may not contain '.' (it separates "
                 "Parquet path parts); use from: to read dotted keys");
    assert_error("columns:\n  - {name: a, type: int32, from: x..y}\n",
                 "t.yaml:2:36: column 'a': from: empty key in dotted path 'x..y' (for keys "
                 "containing dots use a JSON Pointer like /id.orig_h)");
    assert_error("columns:\n  - {name: a, type: int32, from: /a~2}\n",
                 "t.yaml:2:36: column 'a': from: '~' must be followed by 0 or 1 in a JSON "
                 "Pointer (~0 is '~', ~1 is '/')");
    assert_error("columns:\n  - {type: int32}\n", "t.yaml:2:5: column #1: missing key 'name'");
    assert_error_prefix("columns:\n  - {name: a}\n",
                        "t.yaml:2:5: column 'a': missing key 'type' (expected bool, ");
    assert_error("columns:\n  - {name: a, type: struct}\n",
                 "t.yaml:2:21: column 'a': a struct needs fields: (a list of columns)");
}

static void test_error_yaml_level(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32\n",
                 "t.yaml:3:1: YAML syntax error: did not find expected ',' or '}' while "
                 "parsing a flow mapping (line 2)");
    assert_error("&a [*a]\n", "t.yaml:1:1: recursive alias: a node may not contain itself");
    assert_error("", "t.yaml:1:1: schema: empty document (expected columns: [...])");
    assert_error("columns: []\n", "t.yaml:1:10: columns: needs at least one column");
    assert_error("columns: {a: 1}\n", "t.yaml:1:10: columns: expected a list, found a mapping");
    assert_error("columns:\n  - {name: a, type: int32}\n---\nx: 1\n",
                 "t.yaml:4:1: only one YAML document is allowed per file");
}

static void test_error_alias_expansion_bounded(void **state)
{
    (void)state;
    /* "Billion laughs": 10 levels of 10 aliases. */
    char yaml[2048] = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 10; i++) {
        char line[128];
        snprintf(line, sizeof line, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
                 "*a%d, *a%d]\n", i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
                 i - 1, i - 1);
        strcat(yaml, line);
    }
    assert_error_prefix(yaml, "t.yaml:");
    sc_schema *s = NULL;
    pq_err err = {0};
    sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &s, &err);
    assert_non_null(strstr(err.msg, "document too large"));
}

static void test_error_ingest_time_misuse(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: t, type: int64, ingest_time: true}\n",
                 "t.yaml:2:41: column 't': ingest_time needs type timestamp");
    assert_error("columns:\n  - {name: t, type: timestamp, from: x, ingest_time: true}\n",
                 "t.yaml:2:38: column 't': from: conflicts with ingest_time: true");
    assert_error("columns:\n  - {name: t, type: timestamp, ingest_time: true, default: 0}\n",
                 "t.yaml:2:60: column 't': default: an ingest_time column is never missing");
}

static void test_error_default_on_unsupported_scalar(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: g, type: geometry, default: x}\n",
                 "t.yaml:2:40: column 'g': default: not supported for type 'geometry' (only "
                 "scalar types take a default)");
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

static void test_load_file_missing(void **state)
{
    (void)state;
    sc_schema *s = NULL;
    pq_err err = {0};
    assert_int_equal(sc_schema_load_file("/nonexistent/s.yaml", &s, &err), PQ_EIO);
    assert_string_equal(err.msg, "/nonexistent/s.yaml: cannot open: No such file or directory");
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
        cmocka_unit_test(test_type_struct_with_fields),
        cmocka_unit_test(test_type_list_of_struct_takes_fields),
        cmocka_unit_test(test_type_keys_apply_to_nested_timestamp),
        cmocka_unit_test(test_type_field_id_printed),
        cmocka_unit_test(test_variant_unshredded_value_is_required),
        cmocka_unit_test(test_variant_shred_primitive),
        cmocka_unit_test(test_variant_shred_array_spec_example),
        cmocka_unit_test(test_variant_shred_nesting_spec_example),
        cmocka_unit_test(test_variant_shred_array_of_objects_and_untyped_field),
        cmocka_unit_test(test_variant_shred_variant_primitive_types),
        cmocka_unit_test(test_variant_inside_list),
        cmocka_unit_test(test_design_example_printed_form),
        cmocka_unit_test(test_default_schema),
        cmocka_unit_test(test_layout_leaf_indices_and_levels),
        cmocka_unit_test(test_from_defaults_to_name),
        cmocka_unit_test(test_from_dotted_path),
        cmocka_unit_test(test_from_pointer_unescaping),
        cmocka_unit_test(test_from_star_is_rest),
        cmocka_unit_test(test_ingest_time_column),
        cmocka_unit_test(test_option_encodings_by_physical_type),
        cmocka_unit_test(test_option_encoding_invalid_for_type),
        cmocka_unit_test(test_option_compression_and_level),
        cmocka_unit_test(test_option_compression_errors),
        cmocka_unit_test(test_option_dictionary_forms),
        cmocka_unit_test(test_option_dictionary_with_fallback_encoding),
        cmocka_unit_test(test_option_dictionary_conflicts),
        cmocka_unit_test(test_option_bloom_forms),
        cmocka_unit_test(test_option_bloom_errors),
        cmocka_unit_test(test_option_bloom_skips_variant_binaries),
        cmocka_unit_test(test_option_statistics_forms),
        cmocka_unit_test(test_option_key_and_field_id),
        cmocka_unit_test(test_option_struct_field_overrides_column),
        cmocka_unit_test(test_option_leaf_opts_reach_pq_schema),
        cmocka_unit_test(test_set_key_by_struct_path),
        cmocka_unit_test(test_default_values_parsed),
        cmocka_unit_test(test_default_variant_kinds),
        cmocka_unit_test(test_default_must_fit_type),
        cmocka_unit_test(test_default_conflicts_with_required),
        cmocka_unit_test(test_error_unknown_type),
        cmocka_unit_test(test_error_type_string_positions),
        cmocka_unit_test(test_error_decimal_out_of_range),
        cmocka_unit_test(test_error_unknown_key),
        cmocka_unit_test(test_error_duplicate_key),
        cmocka_unit_test(test_error_duplicate_column),
        cmocka_unit_test(test_error_rest_columns),
        cmocka_unit_test(test_error_shred_on_non_variant),
        cmocka_unit_test(test_error_shred_tree_shapes),
        cmocka_unit_test(test_error_names_and_paths),
        cmocka_unit_test(test_error_yaml_level),
        cmocka_unit_test(test_error_alias_expansion_bounded),
        cmocka_unit_test(test_error_ingest_time_misuse),
        cmocka_unit_test(test_error_default_on_unsupported_scalar),
        cmocka_unit_test(test_type_format_round_trip),
        cmocka_unit_test(test_load_file_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
