/* test_thrift_read.c - the test-side Thrift compact decoder
 * (tests/support/thrift_read.c): hand-written compact bytes for every
 * header form, truncation and garbage, and the table validator. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "thrift_read.h"

/* Parses from an exact-size heap copy so ASan catches any overread. */
static int parse(const uint8_t *bytes, size_t n, tr_node **root, size_t *used,
                 pq_err *err)
{
    uint8_t *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, bytes, n);
    int rc = tr_parse(copy, n, root, used, err);
    /* Binary nodes point into the input; tests that read them keep their
     * own copy, so only structure is checked after this free. */
    if (rc == 0) {
        tr_free(*root);
        rc = tr_parse(bytes, n, root, used, err);
    }
    free(copy);
    return rc;
}

static tr_node *parse_ok(const uint8_t *bytes, size_t n, size_t want_used)
{
    tr_node *root = NULL;
    size_t used = 0;
    pq_err err = { 0 };
    int rc = parse(bytes, n, &root, &used, &err);
    if (rc != 0)
        fail_msg("parse failed: %s", err.msg);
    assert_int_equal(used, want_used);
    return root;
}

static void expect_parse_error(const uint8_t *bytes, size_t n, const char *needle)
{
    tr_node *root = (tr_node *)1;
    pq_err err = { 0 };
    assert_int_equal(parse(bytes, n, &root, NULL, &err), PQ_EPARSE);
    assert_null(root);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("error \"%s\" does not mention \"%s\"", err.msg, needle);
}

/* 0x15 = delta 1, i32; 0x16 = delta 1, i64. Zigzag: 5 -> 0x0a, -1 -> 0x01. */
static void test_thrift_read_short_form_field_deltas(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x15, 0x0a, 0x16, 0x01, 0x00 };
    tr_node *r = parse_ok(b, sizeof b, 5);
    assert_int_equal(r->n, 2);
    assert_int_equal(tr_field(r, 1)->type, TR_I32);
    assert_int_equal(tr_field_int(r, 1, 0), 5);
    assert_int_equal(tr_field(r, 2)->type, TR_I64);
    assert_int_equal(tr_field_int(r, 2, 0), -1);
    assert_int_equal(tr_field_int(r, 3, 42), 42);   /* absent -> default */
    assert_int_equal(tr_field(r, 2)->offset, 2);
    tr_free(r);
}

/* Delta 19 does not fit the nibble: type-only header 0x05, then the id as
 * a zigzag i16 (20 -> 0x28). Then delta exactly 15 (0xf5) -> id 35. */
static void test_thrift_read_long_form_field_header(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x15, 0x02, 0x05, 0x28, 0x04, 0xf5, 0x06, 0x00 };
    tr_node *r = parse_ok(b, sizeof b, sizeof b);
    assert_int_equal(tr_field_int(r, 1, 0), 1);
    assert_int_equal(tr_field_int(r, 20, 0), 2);
    assert_int_equal(tr_field_int(r, 35, 0), 3);
    tr_free(r);
}

/* i32 INT32_MIN -> zigzag 0xffffffff; i64 INT64_MIN -> UINT64_MAX (ten
 * bytes); i16 -300 -> 599 = d7 04; i8 is a raw byte. */
static void test_thrift_read_negative_extremes(void **state)
{
    (void)state;
    const uint8_t b[] = {
        0x15, 0xff, 0xff, 0xff, 0xff, 0x0f,
        0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        0x14, 0xd7, 0x04,
        0x13, 0xff,
        0x00 };
    tr_node *r = parse_ok(b, sizeof b, sizeof b);
    assert_int_equal(tr_field_int(r, 1, 0), INT32_MIN);
    assert_true(tr_field_int(r, 2, 0) == INT64_MIN);
    assert_int_equal(tr_field(r, 3)->type, TR_I16);
    assert_int_equal(tr_field_int(r, 3, 0), -300);
    assert_int_equal(tr_field(r, 4)->type, TR_I8);
    assert_int_equal(tr_field_int(r, 4, 0), -1);
    tr_free(r);
}

/* Field ids restart at 0 inside a nested struct: the inner 0x18 is id 1
 * even though the outer struct is at id 5. */
static void test_thrift_read_nested_struct_resets_field_ids(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x5c, 0x18, 0x02, 'a', 'b', 0x00, 0x15, 0x06, 0x00 };
    tr_node *r = parse_ok(b, sizeof b, sizeof b);
    const tr_node *in = tr_field_struct(r, 5);
    assert_non_null(in);
    size_t len;
    const uint8_t *s = tr_field_bin(in, 1, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(s, "ab", 2);
    assert_int_equal(tr_field_int(r, 6, 0), 3);
    assert_null(tr_field_bin(r, 5, &len));   /* a struct is not binary */
    tr_free(r);
}

/* list<struct> of 2: header 0x2c (size 2, type 12), each struct ends 00. */
static void test_thrift_read_list_of_structs(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x19, 0x2c, 0x15, 0x02, 0x00, 0x15, 0x04, 0x00, 0x00 };
    tr_node *r = parse_ok(b, sizeof b, sizeof b);
    const tr_node *l = tr_field_list(r, 1);
    assert_non_null(l);
    assert_int_equal(l->elem_type, TR_STRUCT);
    assert_int_equal(tr_list_len(l), 2);
    assert_int_equal(tr_field_int(tr_list_at(l, 0), 1, 0), 1);
    assert_int_equal(tr_field_int(tr_list_at(l, 1), 1, 0), 2);
    assert_null(tr_list_at(l, 2));
    tr_free(r);
}

static void test_thrift_read_empty_structs(void **state)
{
    (void)state;
    const uint8_t root_only[] = { 0x00, 0xaa };   /* trailing byte not used */
    tr_node *r = parse_ok(root_only, sizeof root_only, 1);
    assert_int_equal(r->type, TR_STRUCT);
    assert_int_equal(r->n, 0);
    tr_free(r);
    const uint8_t field[] = { 0x1c, 0x00, 0x00 };
    r = parse_ok(field, sizeof field, 3);
    assert_non_null(tr_field_struct(r, 1));
    assert_int_equal(tr_field_struct(r, 1)->n, 0);
    tr_free(r);
}

/* In a field header the type nibble is the value (1 true, 2 false); in a
 * list each bool is a byte (Thrift writes 1/2, the spec text says 1/0). */
static void test_thrift_read_bool_fields_and_list_bools(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x11, 0x12, 0x19, 0x41, 0x01, 0x02, 0x00, 0x01, 0x00 };
    tr_node *r = parse_ok(b, sizeof b, sizeof b);
    assert_true(tr_field_bool(r, 1, false));
    assert_false(tr_field_bool(r, 2, true));
    assert_true(tr_field_bool(r, 9, true));   /* absent -> default */
    const tr_node *l = tr_field_list(r, 3);
    assert_int_equal(l->elem_type, TR_BOOL);
    assert_int_equal(tr_list_len(l), 4);
    assert_true(tr_bool(tr_list_at(l, 0)));
    assert_false(tr_bool(tr_list_at(l, 1)));
    assert_false(tr_bool(tr_list_at(l, 2)));
    assert_true(tr_bool(tr_list_at(l, 3)));
    tr_free(r);
}

static void test_thrift_read_list_bool_byte_3_is_error(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x19, 0x11, 0x03, 0x00 };
    expect_parse_error(b, sizeof b, "byte 2");
}

/* Sizes 0..14 fit the nibble; 15 and up write 0xf and a varint. */
static void test_thrift_read_list_long_form_size(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = 0;
    b[n++] = 0x19;
    b[n++] = 0xf5;          /* size in varint, i32 elements */
    b[n++] = 20;
    for (int i = 0; i < 20; i++)
        b[n++] = (uint8_t)(2 * i);   /* zigzag(i) */
    b[n++] = 0x00;
    tr_node *r = parse_ok(b, n, n);
    const tr_node *l = tr_field_list(r, 1);
    assert_int_equal(tr_list_len(l), 20);
    assert_int_equal(tr_int(tr_list_at(l, 19)), 19);
    tr_free(r);

    const uint8_t fourteen[] = { 0x19, 0xe5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                 0, 0, 2, 0x00 };
    r = parse_ok(fourteen, sizeof fourteen, sizeof fourteen);
    assert_int_equal(tr_list_len(tr_field_list(r, 1)), 14);
    assert_int_equal(tr_int(tr_list_at(tr_field_list(r, 1), 13)), 1);
    tr_free(r);
}

/* map<binary,i32> {"k": 1}: varint size, then key/value types 0x85. */
static void test_thrift_read_map_and_double(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x1b, 0x01, 0x85, 0x01, 'k', 0x02,
                          0x17, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f,   /* 1.5 */
                          0x1b, 0x00,                           /* empty map */
                          0x00 };
    tr_node *r = parse_ok(b, sizeof b, sizeof b);
    const tr_node *m = tr_field(r, 1);
    assert_int_equal(m->type, TR_MAP);
    assert_int_equal(tr_list_len(m), 1);
    size_t len;
    assert_memory_equal(tr_bin(tr_map_key(m, 0), &len), "k", 1);
    assert_int_equal(tr_int(tr_map_val(m, 0)), 1);
    assert_true(tr_double(tr_field(r, 2)) == 1.5);
    assert_int_equal(tr_list_len(tr_field(r, 3)), 0);
    tr_free(r);
}

/* A message using every construct; each strict prefix must fail cleanly. */
static const uint8_t k_full[] = {
    0x15, 0x0a, 0x05, 0x28, 0x04, 0x11, 0x18, 0x03, 'a', 'b', 'c',
    0x19, 0x2c, 0x15, 0x02, 0x00, 0x1c, 0x00, 0x00,
    0x1b, 0x01, 0x85, 0x01, 'k', 0x02, 0x17, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f,
    0x19, 0x21, 0x01, 0x02, 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x01, 0x00 };

static void test_thrift_read_every_truncation_is_an_error(void **state)
{
    (void)state;
    tr_node *r = parse_ok(k_full, sizeof k_full, sizeof k_full);
    tr_free(r);
    for (size_t n = 0; n < sizeof k_full; n++) {
        tr_node *root = NULL;
        pq_err err = { 0 };
        if (parse(k_full, n, &root, NULL, &err) != PQ_EPARSE)
            fail_msg("prefix of %zu bytes parsed", n);
        assert_null(root);
        assert_non_null(strstr(err.msg, "byte"));
    }
}

static void test_thrift_read_truncated_binary_reports_offset(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x15, 0x00, 0x18, 0x10, 'a', 'b' };
    expect_parse_error(b, sizeof b, "binary at byte 3 claims 16 bytes");
}

static void test_thrift_read_huge_list_size_rejected_before_alloc(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00 };
    expect_parse_error(b, sizeof b, "claims 4294967295 elements");
    const uint8_t m[] = { 0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0x01, 0x55, 0x00 };
    expect_parse_error(m, sizeof m, "entries");
}

static void test_thrift_read_garbage_is_rejected(void **state)
{
    (void)state;
    const uint8_t bad_type[] = { 0x1d, 0x00 };
    expect_parse_error(bad_type, sizeof bad_type, "invalid type id 13");
    const uint8_t stop_type[] = { 0x10 };
    expect_parse_error(stop_type, sizeof stop_type, "has type 0");
    const uint8_t long_varint[] = { 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0x02, 0x00 };
    expect_parse_error(long_varint, sizeof long_varint, "overflows 64 bits");
    const uint8_t i32_range[] = { 0x15, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00 };
    expect_parse_error(i32_range, sizeof i32_range, "out of range");
    const uint8_t id_overflow[] = { 0x05, 0xfc, 0xff, 0x03, 0x00, 0xf5, 0x00 };
    expect_parse_error(id_overflow, sizeof id_overflow, "overflows i16");
}

static void test_thrift_read_depth_limit(void **state)
{
    (void)state;
    uint8_t b[2 * (TR_MAX_DEPTH + 10)];
    size_t n = 0;
    for (int i = 0; i < TR_MAX_DEPTH + 5; i++)
        b[n++] = 0x1c;
    while (n < sizeof b)
        b[n++] = 0x00;
    expect_parse_error(b, sizeof b, "nesting deeper");
}

/* Random bytes: any result is fine except a crash or a leak (ASan). */
static void test_thrift_read_random_garbage_never_crashes(void **state)
{
    (void)state;
    unsigned seed = 12345u;
    uint64_t x = seed;
    for (int iter = 0; iter < 20000; iter++) {
        uint8_t b[48];
        size_t n = (size_t)(iter % 48);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[i] = (uint8_t)x;
            if (x % 3 == 0)   /* bias toward plausible headers */
                b[i] = k_full[(x >> 8) % sizeof k_full];
        }
        tr_node *root = NULL;
        pq_err err;
        size_t used = 0;
        if (parse(b, n, &root, &used, &err) == 0) {
            if (used > n)
                fail_msg("seed %u iter %d: consumed %zu of %zu", seed, iter, used, n);
            tr_free(root);
        }
    }
}

/* ---- validator ---- */

static const tr_fspec k_inner_fields[] = {
    { 1, "x", TR_I32, true, (tr_type)0, NULL },
};
static const tr_sspec k_inner = { "Inner", false, 1, k_inner_fields };
static const tr_fspec k_union_fields[] = {
    { 1, "A", TR_STRUCT, false, (tr_type)0, NULL },
    { 2, "B", TR_STRUCT, false, (tr_type)0, NULL },
};
static const tr_sspec k_union = { "U", true, 2, k_union_fields };
static const tr_fspec k_outer_fields[] = {
    { 1, "id", TR_I32, true, (tr_type)0, NULL },
    { 2, "items", TR_LIST, false, TR_STRUCT, &k_inner },
    { 3, "u", TR_STRUCT, false, (tr_type)0, &k_union },
};
static const tr_sspec k_outer = { "Outer", false, 3, k_outer_fields };

static int validate(const uint8_t *b, size_t n, pq_err *err)
{
    tr_node *r = parse_ok(b, n, n);
    int rc = tr_validate(r, &k_outer, err);
    tr_free(r);
    return rc;
}

static void test_thrift_read_validate_accepts_good_and_unknown_fields(void **state)
{
    (void)state;
    const uint8_t b[] = { 0x15, 0x02, 0x19, 0x1c, 0x15, 0x04, 0x00,
                          0x1c, 0x1c, 0x00, 0x00, 0x18, 0x00, 0x00 };
    pq_err err = { 0 };
    if (validate(b, sizeof b, &err) != 0)
        fail_msg("%s", err.msg);
}

static void expect_invalid(const uint8_t *b, size_t n, const char *needle)
{
    pq_err err = { 0 };
    assert_int_equal(validate(b, n, &err), PQ_EPARSE);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("error \"%s\" does not mention \"%s\"", err.msg, needle);
}

static void test_thrift_read_validate_rejects_bad_trees(void **state)
{
    (void)state;
    const uint8_t missing[] = { 0x29, 0x0c, 0x00 };   /* no id; empty list */
    expect_invalid(missing, sizeof missing, "Outer.id (field 1): required");
    const uint8_t wrong_type[] = { 0x16, 0x02, 0x00 };
    expect_invalid(wrong_type, sizeof wrong_type, "type i64, expected i32");
    const uint8_t inner_missing[] = { 0x15, 0x02, 0x19, 0x1c, 0x00, 0x00 };
    expect_invalid(inner_missing, sizeof inner_missing, "Outer.items[0].x");
    const uint8_t union2[] = { 0x15, 0x02, 0x2c, 0x1c, 0x00, 0x1c, 0x00, 0x00, 0x00 };
    expect_invalid(union2, sizeof union2, "2 members set");
    const uint8_t dup[] = { 0x15, 0x02, 0x05, 0x02, 0x04, 0x00 };
    expect_invalid(dup, sizeof dup, "field 1 appears twice");
    const uint8_t elem[] = { 0x15, 0x02, 0x19, 0x15, 0x02, 0x00 };
    expect_invalid(elem, sizeof elem, "list of i32, expected list of struct");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thrift_read_short_form_field_deltas),
        cmocka_unit_test(test_thrift_read_long_form_field_header),
        cmocka_unit_test(test_thrift_read_negative_extremes),
        cmocka_unit_test(test_thrift_read_nested_struct_resets_field_ids),
        cmocka_unit_test(test_thrift_read_list_of_structs),
        cmocka_unit_test(test_thrift_read_empty_structs),
        cmocka_unit_test(test_thrift_read_bool_fields_and_list_bools),
        cmocka_unit_test(test_thrift_read_list_bool_byte_3_is_error),
        cmocka_unit_test(test_thrift_read_list_long_form_size),
        cmocka_unit_test(test_thrift_read_map_and_double),
        cmocka_unit_test(test_thrift_read_every_truncation_is_an_error),
        cmocka_unit_test(test_thrift_read_truncated_binary_reports_offset),
        cmocka_unit_test(test_thrift_read_huge_list_size_rejected_before_alloc),
        cmocka_unit_test(test_thrift_read_garbage_is_rejected),
        cmocka_unit_test(test_thrift_read_depth_limit),
        cmocka_unit_test(test_thrift_read_random_garbage_never_crashes),
        cmocka_unit_test(test_thrift_read_validate_accepts_good_and_unknown_fields),
        cmocka_unit_test(test_thrift_read_validate_rejects_bad_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
