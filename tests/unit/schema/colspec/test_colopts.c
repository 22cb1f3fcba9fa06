/* test_colopts.c - per-column writer options (schema/colspec/colopts.c):
 * encoding against physical types, compression and level, dictionary,
 * bloom, statistics, key and field_id, in every form and error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_option_encodings_by_physical_type),
        cmocka_unit_test(test_option_encoding_invalid_for_type),
        cmocka_unit_test(test_option_compression_and_level),
        cmocka_unit_test(test_option_compression_errors),
        cmocka_unit_test(test_option_dictionary_forms),
        cmocka_unit_test(test_option_dictionary_with_fallback_encoding),
        cmocka_unit_test(test_option_dictionary_conflicts),
        cmocka_unit_test(test_option_bloom_forms),
        cmocka_unit_test(test_option_bloom_errors),
        cmocka_unit_test(test_option_statistics_forms),
        cmocka_unit_test(test_option_key_and_field_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
