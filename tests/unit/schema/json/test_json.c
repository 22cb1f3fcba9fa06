/* test_json.c - the NDJSON line parser (schema/json.c): tokens, escapes,
 * UTF-8 validation, number classification and exact decimals, limits,
 * error messages, the real log samples and a seeded mutation test. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "json.h"

/* ---- a recording handler: every event appended to a text trace -------- */

typedef struct rec {
    pq_buf trace;
    json_parser *p;
    int depth, max_depth;
    int top_objects;        /* begin_object events at depth 0 */
    int top_object_ends;
    size_t events;
    json_number last_num;
    const char *last_str;   /* last string or key, as delivered */
    size_t last_len;
    const char *first_key;  /* kept to check pointers stay valid */
    size_t first_key_len;
    size_t obj_begin_off, obj_end_off;
} rec;

static void put(rec *r, const char *s) { pq_buf_append(&r->trace, s, strlen(s)); }

static void put_text(rec *r, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint8_t ch = (uint8_t)s[i];
        if (ch >= 0x20 && ch < 0x7F && ch != '\\') {
            pq_buf_push(&r->trace, ch);
        } else {
            char b[8];
            snprintf(b, sizeof b, "\\x%02X", ch);
            put(r, b);
        }
    }
}

static void sep(rec *r)
{
    if (r->trace.len > 0)
        pq_buf_push(&r->trace, ' ');
    r->events++;
}

static int on_begin_object(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "{");
    if (r->depth == 0) {
        r->top_objects++;
        r->obj_begin_off = json_parser_offset(r->p);
    }
    if (++r->depth > r->max_depth)
        r->max_depth = r->depth;
    return 0;
}

static int on_end_object(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "}");
    if (--r->depth == 0) {
        r->top_object_ends++;
        r->obj_end_off = json_parser_offset(r->p);
    }
    return 0;
}

static int on_begin_array(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "[");
    if (++r->depth > r->max_depth)
        r->max_depth = r->depth;
    return 0;
}

static int on_end_array(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "]");
    r->depth--;
    return 0;
}

static int on_key(void *u, const char *s, size_t n)
{
    rec *r = u;
    sep(r);
    put(r, "k:");
    put_text(r, s, n);
    r->last_str = s;
    r->last_len = n;
    if (r->first_key == NULL) {
        r->first_key = s;
        r->first_key_len = n;
    }
    return 0;
}

static int on_string(void *u, const char *s, size_t n)
{
    rec *r = u;
    sep(r);
    put(r, "s:");
    put_text(r, s, n);
    r->last_str = s;
    r->last_len = n;
    return 0;
}

static int on_number(void *u, const json_number *num)
{
    rec *r = u;
    sep(r);
    put(r, num->kind == JSON_NUM_INT64 ? "i:" : num->kind == JSON_NUM_UINT64 ? "u:" : "d:");
    put_text(r, num->raw, num->len);
    r->last_num = *num;
    return 0;
}

static int on_boolean(void *u, bool v)
{
    rec *r = u;
    sep(r);
    put(r, v ? "true" : "false");
    return 0;
}

static int on_null(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "null");
    return 0;
}

static const json_handler rec_handler = {
    .begin_object = on_begin_object, .key = on_key, .end_object = on_end_object,
    .begin_array = on_begin_array, .end_array = on_end_array,
    .string = on_string, .number = on_number, .boolean = on_boolean,
    .null = on_null,
};

/* One parser per test process; each parse resets the recorder. */
static json_parser g_parser;
static rec g_rec;
static pq_err g_err;

static int parse_n(const char *s, size_t n)
{
    pq_buf_reset(&g_rec.trace);
    pq_buf tr = g_rec.trace;
    memset(&g_rec, 0, sizeof g_rec);
    g_rec.trace = tr;
    g_rec.p = &g_parser;
    int rc = json_parse_line(&g_parser, s, n, &rec_handler, &g_rec, &g_err);
    pq_buf_push(&g_rec.trace, 0);
    g_rec.trace.len--;
    return rc;
}

static int parse(const char *s) { return parse_n(s, strlen(s)); }

static const char *trace(void) { return (const char *)g_rec.trace.data; }

static int setup(void **state)
{
    (void)state;
    pq_buf_init(&g_rec.trace);
    return json_parser_init(&g_parser, 0);
}

static int teardown(void **state)
{
    (void)state;
    json_parser_free(&g_parser);
    pq_buf_free(&g_rec.trace);
    return 0;
}

#define assert_parses_to(json, want) do { \
        assert_int_equal(parse(json), 0); \
        assert_string_equal(trace(), want); \
    } while (0)

#define assert_rejects(json, code, msg_part) do { \
        assert_int_equal(parse_n(json, sizeof(json) - 1), code); \
        if (strstr(g_err.msg, msg_part) == NULL) \
            fail_msg("message \"%s\" lacks \"%s\"", g_err.msg, msg_part); \
    } while (0)

/* ---- tokens ----------------------------------------------------------- */

static void test_json_object_with_every_token_kind(void **state)
{
    (void)state;
    assert_parses_to(
        "{\"s\":\"x\",\"i\":-12,\"f\":1.5e2,\"t\":true,\"f2\":false,\"n\":null,"
        "\"a\":[1,{},[]],\"o\":{\"p\":\"\"}}",
        "{ k:s s:x k:i i:-12 k:f d:1.5e2 k:t true k:f2 false k:n null "
        "k:a [ i:1 { } [ ] ] k:o { k:p s: } }");
    assert_int_equal(g_rec.max_depth, 3);
}

static void test_json_top_level_scalars_and_arrays_are_accepted(void **state)
{
    (void)state;
    assert_parses_to("42", "i:42");
    assert_parses_to("\"x\"", "s:x");
    assert_parses_to("null", "null");
    assert_parses_to("true", "true");
    assert_parses_to("[1,\"a\"]", "[ i:1 s:a ]");
}

static void test_json_whitespace_between_all_tokens(void **state)
{
    (void)state;
    assert_parses_to(" \t{ \"a\" :\t[ 1 , 2 ] , \"b\" : { } }  ",
                     "{ k:a [ i:1 i:2 ] k:b { } }");
}

static void test_json_empty_key_and_duplicate_keys_are_delivered(void **state)
{
    (void)state;
    /* RFC 8259 leaves duplicates to the application: both are reported. */
    assert_parses_to("{\"\":1,\"a\":2,\"a\":3}", "{ k: i:1 k:a i:2 k:a i:3 }");
}

static void test_json_literal_misspellings_are_rejected(void **state)
{
    (void)state;
    assert_rejects("tru", PQ_EPARSE, "byte 0: invalid literal: expected 'true'");
    assert_rejects("{\"a\":nul}", PQ_EPARSE, "byte 5: invalid literal: expected 'null'");
    assert_rejects("falsey", PQ_EPARSE, "byte 5: trailing characters");
    assert_rejects("True", PQ_EPARSE, "expected a value");
    assert_rejects("NaN", PQ_EPARSE, "expected a value");
    assert_rejects("Infinity", PQ_EPARSE, "expected a value");
}

/* ---- strings and escapes ---------------------------------------------- */

static void test_json_simple_escapes_are_unescaped(void **state)
{
    (void)state;
    assert_int_equal(parse("\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\""), 0);
    assert_int_equal(g_rec.last_len, 17);
    assert_memory_equal(g_rec.last_str, "a\"b\\c/d\be\ff\ng\rh\ti", 17);
}

static void test_json_unicode_escapes_become_utf8(void **state)
{
    (void)state;
    /* U+0041, U+00E9 (2 bytes), U+20AC (3 bytes), upper and lower hex. */
    assert_int_equal(parse("\"\\u0041\\u00e9\\u20AC\""), 0);
    assert_int_equal(g_rec.last_len, 6);
    assert_memory_equal(g_rec.last_str, "A\xC3\xA9\xE2\x82\xAC", 6);
}

static void test_json_surrogate_pair_escape_becomes_4_byte_utf8(void **state)
{
    (void)state;
    /* U+1F600 = \ud83d\ude00 = F0 9F 98 80; U+10FFFF = \udbff\udfff. */
    assert_int_equal(parse("\"\\ud83d\\ude00|\\uDBFF\\uDFFF\""), 0);
    assert_int_equal(g_rec.last_len, 9);
    assert_memory_equal(g_rec.last_str, "\xF0\x9F\x98\x80|\xF4\x8F\xBF\xBF", 9);
}

static void test_json_lone_high_surrogate_is_rejected(void **state)
{
    (void)state;
    assert_rejects("\"a\\ud83d\"", PQ_EPARSE,
                   "byte 2: lone high surrogate \\uD83D (not followed by a low surrogate");
    assert_rejects("\"\\ud83d\\u0041\"", PQ_EPARSE, "lone high surrogate \\uD83D");
    assert_rejects("\"\\ud83d\\ud83d\"", PQ_EPARSE, "lone high surrogate");
    assert_rejects("\"\\ud83dx\\ude00\"", PQ_EPARSE, "lone high surrogate");
}

static void test_json_lone_low_surrogate_is_rejected(void **state)
{
    (void)state;
    assert_rejects("\"\\udc00\"", PQ_EPARSE,
                   "byte 1: lone low surrogate \\uDC00 (not preceded by a high surrogate");
}

static void test_json_escaped_nul_yields_a_nul_byte(void **state)
{
    (void)state;
    assert_int_equal(parse("\"a\\u0000b\""), 0);
    assert_int_equal(g_rec.last_len, 3);
    assert_memory_equal(g_rec.last_str, "a\0b", 3);
}

static void test_json_invalid_escapes_are_rejected(void **state)
{
    (void)state;
    assert_rejects("\"\\x\"", PQ_EPARSE, "byte 1: invalid escape: expected one of");
    assert_rejects("\"\\U0041\"", PQ_EPARSE, "invalid escape");
    assert_rejects("\"\\u12G4\"", PQ_EPARSE, "byte 1: invalid \\u escape: expected four hex digits");
    assert_rejects("\"\\u12\"", PQ_EPARSE, "invalid \\u escape");
    assert_rejects("\"\\", PQ_EPARSE, "byte 2: unterminated escape sequence");
    assert_rejects("\"\\\"", PQ_EPARSE, "unterminated string");
}

static void test_json_unescaped_string_points_into_the_line(void **state)
{
    (void)state;
    const char *line = "{\"key\":\"value\"}";
    assert_int_equal(parse(line), 0);
    assert_ptr_equal(g_rec.first_key, line + 2);
    assert_ptr_equal(g_rec.last_str, line + 8);
}

static void test_json_escaped_strings_stay_valid_until_next_line(void **state)
{
    (void)state;
    /* Key and value both unescaped into scratch: the key must survive the
     * value (each string gets its own region). */
    const char *line = "{\"k\\u0065y\":\"v\\u0061lue\",\"x\":[\"\\n\",\"\\t\"]}";
    assert_int_equal(parse(line), 0);
    assert_int_equal(g_rec.first_key_len, 3);
    assert_memory_equal(g_rec.first_key, "key", 3);
    assert_true(g_rec.first_key < line || g_rec.first_key >= line + strlen(line));
    assert_string_equal(trace(), "{ k:key s:value k:x [ s:\\x0A s:\\x09 ] }");
}

static void test_json_unterminated_string_names_its_start(void **state)
{
    (void)state;
    assert_rejects("{\"a\":\"abc", PQ_EPARSE,
                   "byte 9: unterminated string (opened at byte 5): expected '\"', got end of line");
    /* Long enough to go through the 8-byte scan. */
    assert_rejects("[\"abcdefghijklmnopqrstuvwxyz", PQ_EPARSE,
                   "byte 28: unterminated string (opened at byte 1)");
}

/* ---- UTF-8 validation -------------------------------------------------- */

static void test_json_valid_utf8_of_every_length_is_accepted(void **state)
{
    (void)state;
    /* U+007F, U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000,
     * U+10FFFF: the edges of every row of Unicode table 3-7. */
    static const char s[] = "\"\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF"
                            "\xEE\x80\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\"";
    assert_int_equal(parse_n(s, sizeof s - 1), 0);
    assert_int_equal(g_rec.last_len, sizeof s - 3);
    assert_ptr_equal(g_rec.last_str, s + 1);
}

static void test_json_utf8_lone_continuation_byte_is_rejected(void **state)
{
    (void)state;
    assert_rejects("\"ab\x80\"", PQ_EPARSE,
                   "byte 3: invalid UTF-8 in string: unexpected continuation byte 0x80");
    assert_rejects("\"\xC3\xA9\xA9\"", PQ_EPARSE, "byte 3: invalid UTF-8 in string: unexpected continuation byte 0xA9");
}

static void test_json_utf8_overlong_2_byte_is_rejected(void **state)
{
    (void)state;
    /* C0 AF is an overlong '/', C1 BF an overlong U+007F. */
    assert_rejects("\"\xC0\xAF\"", PQ_EPARSE, "byte 1: invalid UTF-8 in string: overlong 2-byte encoding");
    assert_rejects("\"\xC1\xBF\"", PQ_EPARSE, "overlong 2-byte encoding");
}

static void test_json_utf8_overlong_3_byte_is_rejected(void **state)
{
    (void)state;
    assert_rejects("\"\xE0\x80\xAF\"", PQ_EPARSE, "overlong 3-byte encoding (0xE0 0x80)");
    assert_rejects("\"\xE0\x9F\xBF\"", PQ_EPARSE, "overlong 3-byte encoding");
}

static void test_json_utf8_overlong_4_byte_is_rejected(void **state)
{
    (void)state;
    assert_rejects("\"\xF0\x80\x80\xAF\"", PQ_EPARSE, "overlong 4-byte encoding (0xF0 0x80)");
    assert_rejects("\"\xF0\x8F\xBF\xBF\"", PQ_EPARSE, "overlong 4-byte encoding");
}

static void test_json_utf8_encoded_surrogates_are_rejected(void **state)
{
    (void)state;
    assert_rejects("\"\xED\xA0\x80\"", PQ_EPARSE, "UTF-16 surrogate U+D800 encoded in UTF-8");
    assert_rejects("\"\xED\xBF\xBF\"", PQ_EPARSE, "UTF-16 surrogate U+DFFF encoded in UTF-8");
}

static void test_json_utf8_above_u10ffff_is_rejected(void **state)
{
    (void)state;
    assert_rejects("\"\xF4\x90\x80\x80\"", PQ_EPARSE, "code point above U+10FFFF");
    assert_rejects("\"\xF5\x80\x80\x80\"", PQ_EPARSE, "byte 0xF5 cannot start a sequence (it would encode a code point above U+10FFFF)");
    assert_rejects("\"\xFF\"", PQ_EPARSE, "byte 0xFF cannot start a sequence");
}

static void test_json_utf8_truncated_sequence_is_rejected(void **state)
{
    (void)state;
    assert_rejects("\"\xC3\"", PQ_EPARSE, "byte 1: invalid UTF-8 in string: truncated 2-byte sequence");
    assert_rejects("\"\xE2\x82\"", PQ_EPARSE, "truncated 3-byte sequence (lead byte 0xE2 followed by a non-continuation byte)");
    assert_rejects("\"\xF0\x9F\x98", PQ_EPARSE, "truncated 4-byte sequence (lead byte 0xF0 followed by end of line)");
    assert_rejects("\"\xE2x\x82\"", PQ_EPARSE, "truncated 3-byte sequence");
}

static void test_json_utf8_is_validated_in_escaped_strings_too(void **state)
{
    (void)state;
    assert_rejects("\"\\n\xED\xA0\x80\"", PQ_EPARSE, "byte 3: invalid UTF-8 in string: UTF-16 surrogate");
    assert_int_equal(parse("\"\\n\xC3\xA9\""), 0);
    assert_memory_equal(g_rec.last_str, "\n\xC3\xA9", 3);
}

/* ---- NUL and control characters --------------------------------------- */

static void test_json_nul_byte_in_string_is_rejected(void **state)
{
    (void)state;
    assert_rejects("{\"a\":\"x\0y\"}", PQ_EPARSE, "byte 7: NUL byte inside string");
    assert_rejects("{\"a\":\"\\n\0\"}", PQ_EPARSE, "byte 8: NUL byte inside string");
}

static void test_json_nul_byte_outside_string_is_rejected(void **state)
{
    (void)state;
    assert_rejects("{\"a\":1}\0", PQ_EPARSE, "byte 7: trailing characters after the JSON value: got NUL byte");
    assert_rejects("{\0}", PQ_EPARSE, "got NUL byte");
    assert_rejects("\0", PQ_EPARSE, "byte 0: expected a value");
}

static void test_json_raw_control_characters_in_string_are_rejected(void **state)
{
    (void)state;
    assert_rejects("\"a\x01\"", PQ_EPARSE, "byte 2: control character 0x01 inside string (must be escaped)");
    assert_rejects("\"a\x1F\"", PQ_EPARSE, "control character 0x1F");
    assert_rejects("\"a\tb\"", PQ_EPARSE, "control character 0x09");
    assert_rejects("\"a\nb\"", PQ_EPARSE, "control character 0x0A");
    assert_rejects("\"a\rb\"", PQ_EPARSE, "control character 0x0D");
    /* DEL (0x7F) is not a control character for JSON. */
    assert_int_equal(parse("\"\x7F\""), 0);
}

/* ---- numbers ----------------------------------------------------------- */

static json_number num_of(const char *text)
{
    assert_int_equal(parse(text), 0);
    assert_int_equal(g_rec.events, 1);
    return g_rec.last_num;
}

static void test_json_int64_max_and_min_are_exact(void **state)
{
    (void)state;
    json_number n = num_of("9223372036854775807");
    assert_int_equal(n.kind, JSON_NUM_INT64);
    assert_true(n.i == INT64_MAX);
    n = num_of("-9223372036854775808");
    assert_int_equal(n.kind, JSON_NUM_INT64);
    assert_true(n.i == INT64_MIN);
    assert_true(n.d == -9223372036854775808.0);
    n = num_of("-1");
    assert_int_equal(n.kind, JSON_NUM_INT64);
    assert_true(n.i == -1);
}

static void test_json_above_int64_max_is_uint64(void **state)
{
    (void)state;
    json_number n = num_of("9223372036854775808");
    assert_int_equal(n.kind, JSON_NUM_UINT64);
    assert_true(n.u == (uint64_t)INT64_MAX + 1);
    n = num_of("10000000000000000000"); /* 20 digits, still fits */
    assert_int_equal(n.kind, JSON_NUM_UINT64);
    assert_true(n.u == 10000000000000000000ULL);
}

static void test_json_uint64_max_is_exact(void **state)
{
    (void)state;
    json_number n = num_of("18446744073709551615");
    assert_int_equal(n.kind, JSON_NUM_UINT64);
    assert_true(n.u == UINT64_MAX);
    assert_true(n.d == 18446744073709551616.0);
}

static void test_json_2_pow_64_becomes_double(void **state)
{
    (void)state;
    json_number n = num_of("18446744073709551616");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 18446744073709551616.0);
    n = num_of("-9223372036854775809"); /* below INT64_MIN */
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == -9223372036854775808.0);
    n = num_of("123456789012345678901234567890");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 1.2345678901234568e29);
}

static void test_json_negative_zero_is_int64_zero_with_negative_double(void **state)
{
    (void)state;
    json_number n = num_of("-0");
    assert_int_equal(n.kind, JSON_NUM_INT64);
    assert_true(n.i == 0);
    assert_true(n.negative);
    assert_true(n.d == 0.0 && signbit(n.d));
    n = num_of("-0.0");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 0.0 && signbit(n.d));
}

static void test_json_float_syntax_is_double_even_when_integral(void **state)
{
    (void)state;
    json_number n = num_of("1.0");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 1.0);
    n = num_of("1E2");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 100.0);
}

static void test_json_1e400_is_out_of_range(void **state)
{
    (void)state;
    assert_rejects("{\"x\":1e400}", PQ_ELIMIT, "byte 5: number out of range: 1e400 does not fit a double");
    assert_rejects("-1e400", PQ_ELIMIT, "number out of range");
    assert_rejects("1.8e308", PQ_ELIMIT, "number out of range");
    /* 2^1024 - 2^970 (halfway to the next binade) rounds to infinity too. */
    assert_rejects("179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792",
                   PQ_ELIMIT, "number out of range: 1797693134862315807937289714053034150799... does not fit");
    json_number n = num_of("1.7976931348623157e308");
    assert_true(n.d == DBL_MAX);
}

/* Correctly rounded: 1e-400 is far below half the smallest denormal
 * (2^-1075 ~ 2.47e-324), so the nearest double is +0.0 - not an error. */
static void test_json_1e_minus_400_rounds_to_zero(void **state)
{
    (void)state;
    json_number n = num_of("1e-400");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 0.0 && !signbit(n.d));
    n = num_of("-1e-400");
    assert_true(n.d == 0.0 && signbit(n.d));
    /* ...while 5e-324 is the smallest denormal, 2^-1074. */
    n = num_of("5e-324");
    assert_true(n.d == 4.9406564584124654e-324);
    assert_true(n.d > 0.0 && n.d < DBL_MIN);
    n = num_of("0e999999999999");
    assert_true(n.d == 0.0);
}

static void test_json_doubles_are_correctly_rounded(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "0.1", "1.5e2", "3.141592653589793", "2.2250738585072014e-308",
        "0.000431060791015625", "0.0006840229034423828", "1e23", "8.98846567431158e307",
        "9007199254740993", "9007199254740993.0", "0.30000000000000000000000000001",
        "2.4703282292062328e-324", "1.00000000000000011102230246251565404236316680908203126",
        "123456789012345678901234567890e-20", "1e-22", "1e22", "4.35e-5",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_number n = num_of(cases[i]);
        const double want = strtod(cases[i], NULL);
        if (n.d != want)
            fail_msg("%s: got %.17g want %.17g", cases[i], n.d, want);
    }
}

static void test_json_number_grammar_is_strict(void **state)
{
    (void)state;
    assert_rejects("01", PQ_EPARSE, "byte 0: leading zeros are not allowed");
    assert_rejects("-01", PQ_EPARSE, "byte 1: leading zeros are not allowed");
    assert_rejects("-", PQ_EPARSE, "byte 1: expected a digit after '-', got end of line");
    assert_rejects("-a", PQ_EPARSE, "expected a digit after '-', got 'a'");
    assert_rejects("1.", PQ_EPARSE, "byte 2: expected a digit after '.'");
    assert_rejects("1.e5", PQ_EPARSE, "expected a digit after '.', got 'e'");
    assert_rejects(".5", PQ_EPARSE, "byte 0: expected a value");
    assert_rejects("+1", PQ_EPARSE, "expected a value");
    assert_rejects("1e", PQ_EPARSE, "byte 2: expected a digit in the exponent");
    assert_rejects("1e+", PQ_EPARSE, "expected a digit in the exponent");
    assert_rejects("0x10", PQ_EPARSE, "byte 1: trailing characters");
    assert_rejects("1.5.2", PQ_EPARSE, "trailing characters");
    assert_rejects("[1 2]", PQ_EPARSE, "byte 3: expected ',' or ']' after array element, got '2'");
}

static void test_json_number_exposes_its_parts_as_written(void **state)
{
    (void)state;
    json_number n = num_of("-12.50E+3");
    assert_true(n.negative);
    assert_int_equal(n.len, 9);
    assert_memory_equal(n.raw, "-12.50E+3", 9);
    assert_int_equal(n.int_len, 2);
    assert_memory_equal(n.int_digits, "12", 2);
    assert_int_equal(n.frac_len, 2);
    assert_memory_equal(n.frac_digits, "50", 2);
    assert_true(n.exp10 == 3);
    assert_true(n.d == -12500.0);
}

static void check_decimal(const char *text, json_int128 want, int32_t want_scale)
{
    json_number n = num_of(text);
    json_int128 v = 0;
    int32_t scale = -1;
    assert_int_equal(json_number_decimal(&n, &v, &scale), 0);
    if (v != want || scale != want_scale)
        fail_msg("%s: got %lld scale %d", text, (long long)v, scale);
}

static void test_json_decimal_of_0_1_is_exact(void **state)
{
    (void)state;
    check_decimal("0.1", 1, 1);
}

static void test_json_decimal_keeps_written_scale_of_123_4500(void **state)
{
    (void)state;
    check_decimal("123.4500", 1234500, 4);
}

static void test_json_decimal_of_minus_1e_minus_3(void **state)
{
    (void)state;
    check_decimal("-1e-3", -1, 3);
}

static void test_json_decimal_beyond_64_bits_is_exact(void **state)
{
    (void)state;
    /* 12345678901234567890123 needs 74 bits. */
    const json_int128 want = (json_int128)1234567890123456789LL * 10000 + 123;
    check_decimal("12345678901234567890.123", want, 3);
    json_number n = num_of("12345678901234567890.123");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
}

static void test_json_decimal_positive_exponent_and_integers(void **state)
{
    (void)state;
    check_decimal("1.5e3", 1500, 0);
    check_decimal("42", 42, 0);
    check_decimal("-9223372036854775808", INT64_MIN, 0);
    check_decimal("18446744073709551615", (json_int128)UINT64_MAX, 0);
    check_decimal("0.000", 0, 3);
    check_decimal("-0", 0, 0);
    check_decimal("1e-38", 1, 38);
}

static void test_json_decimal_over_38_digits_is_elimit(void **state)
{
    (void)state;
    json_int128 v;
    int32_t scale;
    json_number n = num_of("123456789012345678901234567890123456789"); /* 39 */
    assert_int_equal(json_number_decimal(&n, &v, &scale), PQ_ELIMIT);
    n = num_of("12345678901234567890123456789012345678"); /* 38 */
    assert_int_equal(json_number_decimal(&n, &v, &scale), 0);
    n = num_of("1e-39");
    assert_int_equal(json_number_decimal(&n, &v, &scale), PQ_ELIMIT);
    n = num_of("1e38");
    assert_int_equal(json_number_decimal(&n, &v, &scale), PQ_ELIMIT);
    n = num_of("1e37");
    assert_int_equal(json_number_decimal(&n, &v, &scale), 0);
}

/* ---- structure, limits, errors ----------------------------------------- */

static char *nested(size_t depth, char open, char close)
{
    char *s = malloc(2 * depth + 1);
    memset(s, open, depth);
    memset(s + depth, close, depth);
    s[2 * depth] = 0;
    return s;
}

static void test_json_depth_128_is_accepted_129_is_not(void **state)
{
    (void)state;
    char *s = nested(128, '[', ']');
    assert_int_equal(parse(s), 0);
    assert_int_equal(g_rec.max_depth, 128);
    free(s);
    s = nested(129, '[', ']');
    assert_int_equal(parse(s), PQ_ELIMIT);
    assert_string_equal(g_err.msg, "byte 128: nesting deeper than 128 levels (max_depth)");
    assert_int_equal(g_parser.err_offset, 128);
    free(s);
}

static void test_json_depth_10000_is_a_clean_error(void **state)
{
    (void)state;
    char *s = nested(10000, '[', ']');
    assert_int_equal(parse(s), PQ_ELIMIT);
    assert_string_equal(g_err.msg, "byte 128: nesting deeper than 128 levels (max_depth)");
    free(s);
    /* Objects: {"a":{"a":... */
    const size_t depth = 10000;
    char *o = malloc(depth * 5 + depth + 1);
    size_t n = 0;
    for (size_t i = 0; i < depth; i++) {
        memcpy(o + n, "{\"a\":", 5);
        n += 5;
    }
    memset(o + n, '}', depth);
    assert_int_equal(parse_n(o, n + depth), PQ_ELIMIT);
    free(o);
}

static void test_json_max_depth_is_configurable(void **state)
{
    (void)state;
    json_parser p;
    assert_int_equal(json_parser_init(&p, 2), 0);
    pq_err e;
    assert_int_equal(json_parse_line(&p, "[[1]]", 5, &rec_handler, &g_rec, &e), 0);
    assert_int_equal(json_parse_line(&p, "[{\"a\":[]}]", 10, &(json_handler){0}, NULL, &e), PQ_ELIMIT);
    assert_string_equal(e.msg, "byte 6: nesting deeper than 2 levels (max_depth)");
    json_parser_free(&p);
    /* A deep limit works without recursion. */
    assert_int_equal(json_parser_init(&p, 20000), 0);
    char *s = nested(10000, '[', ']');
    assert_int_equal(json_parse_line(&p, s, 20000, &(json_handler){0}, NULL, &e), 0);
    free(s);
    json_parser_free(&p);
}

static void test_json_trailing_garbage_is_rejected(void **state)
{
    (void)state;
    assert_rejects("{} x", PQ_EPARSE, "byte 3: trailing characters after the JSON value: got 'x', expected end of line");
    assert_rejects("{}{}", PQ_EPARSE, "byte 2: trailing characters");
    assert_rejects("1 2", PQ_EPARSE, "byte 2: trailing characters");
    assert_rejects("{\"a\":1}}", PQ_EPARSE, "byte 7: trailing characters");
}

static void test_json_crlf_and_lf_terminators_are_accepted(void **state)
{
    (void)state;
    assert_int_equal(parse("{\"a\":1}\r\n"), 0);
    assert_string_equal(trace(), "{ k:a i:1 }");
    assert_int_equal(parse("{\"a\":1}\n"), 0);
    assert_int_equal(parse("{\"a\":1}\r"), 0);
    assert_int_equal(parse("\"x\"\r\n"), 0);
}

static void test_json_blank_line_is_json_empty(void **state)
{
    (void)state;
    assert_int_equal(parse(""), JSON_EMPTY);
    assert_int_equal(parse("   \t "), JSON_EMPTY);
    assert_int_equal(parse("\r\n"), JSON_EMPTY);
    assert_int_equal(g_rec.events, 0);
}

static void test_json_error_messages_name_byte_and_expectation(void **state)
{
    (void)state;
    assert_rejects("{\"status\":200 x}", PQ_EPARSE,
                   "byte 14: expected ',' or '}' after object member, got 'x'");
    assert_string_equal(g_err.msg, "byte 14: expected ',' or '}' after object member, got 'x'");
    assert_int_equal(g_parser.err_offset, 14);
    assert_rejects("{\"a\" 1}", PQ_EPARSE, "byte 5: expected ':' after object key, got '1'");
    assert_rejects("{\"a\":1,}", PQ_EPARSE, "byte 7: expected '\"' to start an object key after ',', got '}'");
    assert_rejects("{a:1}", PQ_EPARSE, "byte 1: expected '\"' to start an object key or '}' to close the object, got 'a'");
    assert_rejects("[1,]", PQ_EPARSE, "byte 3: expected a value (object, array, string, number, true, false or null), got ']'");
    assert_rejects("{\"a\":", PQ_EPARSE, "byte 5: expected a value");
    assert_rejects("{\"a\":1", PQ_EPARSE, "byte 6: expected ',' or '}' after object member, got end of line");
    assert_rejects("[", PQ_EPARSE, "got end of line");
    assert_rejects("[\x01]", PQ_EPARSE, "got byte 0x01");
    assert_rejects("{\"a\":1]", PQ_EPARSE, "expected ',' or '}' after object member, got ']'");
    assert_rejects("[1}", PQ_EPARSE, "expected ',' or ']' after array element, got '}'");
}

static int stop_on_number(void *u, const json_number *num)
{
    (void)u;
    (void)num;
    return PQ_ETYPE;
}

static int stop_with_message(void *u, const char *s, size_t n)
{
    (void)n;
    (void)s;
    return pq_err_set(u, PQ_ETYPE, "key too boring");
}

static void test_json_handler_return_stops_parse_and_is_propagated(void **state)
{
    (void)state;
    json_handler h = {.number = stop_on_number};
    pq_err e;
    const char *line = "{\"a\":\"x\",\"b\":17}";
    assert_int_equal(json_parse_line(&g_parser, line, strlen(line), &h, NULL, &e), PQ_ETYPE);
    assert_string_equal(e.msg, "byte 13: handler stopped parsing (ETYPE)");
    assert_int_equal(g_parser.err_offset, 13);
    /* A handler that fills the same pq_err keeps its own message. */
    json_handler h2 = {.key = stop_with_message};
    assert_int_equal(json_parse_line(&g_parser, line, strlen(line), &h2, &e, &e), PQ_ETYPE);
    assert_string_equal(e.msg, "key too boring");
}

static void test_json_offsets_let_handlers_slice_raw_objects(void **state)
{
    (void)state;
    const char *line = "  {\"a\":[1,{\"b\":null}]} ";
    assert_int_equal(parse(line), 0);
    assert_int_equal(g_rec.obj_begin_off, 2);
    assert_int_equal(g_rec.obj_end_off, 21);
    assert_int_equal(line[g_rec.obj_end_off], '}');
}

static void test_json_null_handler_only_validates(void **state)
{
    (void)state;
    const json_handler none = {0};
    pq_err e;
    const char *ok = "{\"a\":[1,2.5,\"x\\n\",true,false,null,{}]}";
    assert_int_equal(json_parse_line(&g_parser, ok, strlen(ok), &none, NULL, &e), 0);
    assert_int_equal(json_parse_line(&g_parser, "{", 1, &none, NULL, NULL), PQ_EPARSE);
    assert_int_equal(g_parser.err_code, PQ_EPARSE);
}

static void test_json_parser_init_rejects_absurd_depth(void **state)
{
    (void)state;
    json_parser p;
    assert_int_equal(json_parser_init(&p, SIZE_MAX), PQ_EINVAL);
}

/* ---- real samples ------------------------------------------------------ */

/* VALIDATION.txt gives, per file, "lines=N ... max_depth=D" as computed by
 * an independent (Python) reader; our events must agree. */
static int expected_for(const char *rel, long *lines, int *max_depth)
{
    FILE *f = fopen(PQ_TESTDATA "/logs/VALIDATION.txt", "r");
    if (f == NULL)
        return -1;
    char buf[4096];
    int found = -1;
    while (fgets(buf, sizeof buf, f) != NULL) {
        const char *p = strstr(buf, rel);
        if (strncmp(buf, "== ", 3) != 0 || p == NULL || strcmp(p + strlen(rel), "\n") != 0)
            continue;
        if (fgets(buf, sizeof buf, f) == NULL)
            break;
        const char *l = strstr(buf, " lines="), *d = strstr(buf, " max_depth=");
        if (l != NULL && d != NULL) {
            *lines = atol(l + 7);
            *max_depth = atoi(d + 11);
            found = 0;
        }
        break;
    }
    fclose(f);
    return found;
}

static void check_log_file(const char *dir, const char *name, size_t *total_lines)
{
    char path[1024], rel[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(rel, sizeof rel, "%s/%s", strrchr(dir, '/') + 1, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lines = 0;
    int max_depth = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lines++;
        const int rc = parse_n(line, (size_t)n); /* with its '\n' */
        if (rc != 0)
            fail_msg("%s line %ld: %s", rel, lines, g_err.msg);
        assert_int_equal(g_rec.top_objects, 1);
        assert_int_equal(g_rec.top_object_ends, 1);
        assert_int_equal(g_rec.depth, 0);
        assert_int_equal(g_rec.obj_begin_off, 0);
        size_t last = (size_t)n - 1;
        while (line[last] == '\n' || line[last] == '\r')
            last--;
        assert_int_equal(g_rec.obj_end_off, last);
        assert_true(g_rec.events >= 2);
        if (g_rec.max_depth > max_depth)
            max_depth = g_rec.max_depth;
    }
    free(line);
    fclose(f);
    long want_lines;
    int want_depth;
    if (expected_for(rel, &want_lines, &want_depth) == 0) {
        assert_int_equal(lines, want_lines);
        assert_int_equal(max_depth, want_depth);
    } else {
        fail_msg("%s not described in VALIDATION.txt", rel);
    }
    *total_lines += (size_t)lines;
}

static void test_json_every_sample_log_line_parses_as_one_object(void **state)
{
    (void)state;
    const char *root = PQ_TESTDATA "/logs";
    DIR *d = opendir(root);
    assert_non_null(d);
    struct dirent *e;
    size_t files = 0, lines = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[700];
        snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
        struct stat st;
        if (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        DIR *d2 = opendir(sub);
        assert_non_null(d2);
        struct dirent *e2;
        while ((e2 = readdir(d2)) != NULL) {
            if (e2->d_name[0] == '.')
                continue;
            check_log_file(sub, e2->d_name, &lines);
            files++;
        }
        closedir(d2);
    }
    closedir(d);
    print_message("parsed %zu lines from %zu sample files\n", lines, files);
    assert_true(files >= 3);
    assert_true(lines > 1000);
}

/* ---- seeded mutation robustness ---------------------------------------- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t x = rng_state;   /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Re-serialises the events of a successful parse as compact JSON. */
typedef struct ser {
    pq_buf out;
    int need_comma[JSON_DEFAULT_MAX_DEPTH + 2];
    int depth;
    int after_key;
} ser;

static void ser_sep(ser *s)
{
    if (s->after_key) {
        s->after_key = 0;
        return;
    }
    if (s->need_comma[s->depth])
        pq_buf_push(&s->out, ',');
    s->need_comma[s->depth] = 1;
}

static void ser_str(ser *s, const char *p, size_t n)
{
    pq_buf_push(&s->out, '"');
    for (size_t i = 0; i < n; i++) {
        const uint8_t ch = (uint8_t)p[i];
        if (ch == '"' || ch == '\\') {
            pq_buf_push(&s->out, '\\');
            pq_buf_push(&s->out, ch);
        } else if (ch < 0x20) {
            char b[8];
            snprintf(b, sizeof b, "\\u%04x", ch);
            pq_buf_append(&s->out, b, 6);
        } else {
            pq_buf_push(&s->out, ch);
        }
    }
    pq_buf_push(&s->out, '"');
}

static int s_open(ser *s, char ch)
{
    ser_sep(s);
    pq_buf_push(&s->out, (uint8_t)ch);
    s->need_comma[++s->depth] = 0;
    return 0;
}

static int s_close(ser *s, char ch)
{
    s->depth--;
    pq_buf_push(&s->out, (uint8_t)ch);
    return 0;
}

static int s_bo(void *u) { return s_open(u, '{'); }
static int s_eo(void *u) { return s_close(u, '}'); }
static int s_ba(void *u) { return s_open(u, '['); }
static int s_ea(void *u) { return s_close(u, ']'); }
static int s_key(void *u, const char *p, size_t n)
{
    ser *s = u;
    ser_sep(s);
    ser_str(s, p, n);
    pq_buf_push(&s->out, ':');
    s->after_key = 1;
    return 0;
}
static int s_string(void *u, const char *p, size_t n) { ser_sep(u); ser_str(u, p, n); return 0; }
static int s_number(void *u, const json_number *num)
{
    ser_sep(u);
    return pq_buf_append(&((ser *)u)->out, num->raw, num->len);
}
static int s_bool(void *u, bool v)
{
    ser_sep(u);
    return pq_buf_append(&((ser *)u)->out, v ? "true" : "false", v ? 4 : 5);
}
static int s_null(void *u) { ser_sep(u); return pq_buf_append(&((ser *)u)->out, "null", 4); }

static const json_handler ser_handler = {
    .begin_object = s_bo, .key = s_key, .end_object = s_eo,
    .begin_array = s_ba, .end_array = s_ea, .string = s_string,
    .number = s_number, .boolean = s_bool, .null = s_null,
};

static void test_json_random_mutations_never_crash_and_round_trip(void **state)
{
    (void)state;
    uint64_t seed = (uint64_t)time(NULL);
    const char *env = getenv("PQ_TEST_SEED");
    if (env != NULL)
        seed = strtoull(env, NULL, 0);
    print_message("mutation seed: %llu (rerun with PQ_TEST_SEED=%llu)\n",
                  (unsigned long long)seed, (unsigned long long)seed);
    rng_state = seed * 2 + 1;

    static const char *const base[] = {
        "{\"_path\":\"ftp\",\"ts\":\"2018-03-24T17:15:24.699488Z\",\"id.orig_p\":45905,"
        "\"reply_msg\":\"Entering Passive Mode (172,20,0,80,200,63).\",\"passive\":true}",
        "{\"Keywords\":-9223372036854775808,\"Big\":18446744073709551615,\"rtt\":0.000431060791015625,"
        "\"TargetObject\":\"HKU\\\\S-1-5-21\\\\Software\",\"tags\":[\"a\",null,false,{}]}",
        "{\"u\":\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\",\"e\":\"\\ud83d\\ude00\\u00e9\\n\",\"n\":[-0,1e-3,2.5E+10]}",
        "[[[[{\"deep\":[1,[2,[3]]]}]]]]",
    };
    ser s = {0};
    pq_buf_init(&s.out);
    pq_buf line;
    pq_buf_init(&line);
    size_t ok = 0, bad = 0;
    pq_err e;
    for (int iter = 0; iter < 100000; iter++) {
        const char *b = base[rng() % (sizeof base / sizeof *base)];
        pq_buf_reset(&line);
        pq_buf_append(&line, b, strlen(b));
        const int nmut = 1 + (int)(rng() % 4);
        for (int m = 0; m < nmut && line.len > 0; m++) {
            const size_t at = rng() % line.len;
            static const char interesting[] = "{}[]\",:\\0-.eE+u\x80\xC3\xED\xF4\xFF \x00";
            switch (rng() % 5) {
            case 0: line.data[at] ^= (uint8_t)(1u << (rng() % 8)); break;
            case 1: line.data[at] = (uint8_t)interesting[rng() % (sizeof interesting - 1)]; break;
            case 2: memmove(line.data + at, line.data + at + 1, line.len - at - 1); line.len--; break;
            case 3: line.len = at; break;
            default:
                pq_buf_push(&line, 0);
                memmove(line.data + at + 1, line.data + at, line.len - at - 1);
                line.data[at] = (uint8_t)interesting[rng() % (sizeof interesting - 1)];
                break;
            }
        }
        const int rc = parse_n((const char *)line.data, line.len);
        if (rc == 0) {
            ok++;
            assert_int_equal(g_rec.depth, 0);
            /* Re-serialise, re-parse: the same events must come back. */
            pq_buf first = g_rec.trace;
            char *want = strndup((const char *)first.data, first.len);
            pq_buf_reset(&s.out);
            s.depth = 0;
            s.after_key = 0;
            memset(s.need_comma, 0, sizeof s.need_comma);
            assert_int_equal(json_parse_line(&g_parser, (const char *)line.data, line.len,
                                             &ser_handler, &s, &e), 0);
            const int rc2 = parse_n((const char *)s.out.data, s.out.len);
            if (rc2 != 0 || strcmp(want, trace()) != 0)
                fail_msg("seed %llu iter %d: round trip differs: %s", (unsigned long long)seed,
                         iter, g_err.msg);
            free(want);
        } else {
            bad++;
            if (rc != JSON_EMPTY && rc != PQ_EPARSE && rc != PQ_ELIMIT)
                fail_msg("seed %llu iter %d: rc %d", (unsigned long long)seed, iter, rc);
            assert_true(strncmp(g_err.msg, "byte ", 5) == 0 || rc == JSON_EMPTY);
            assert_true(g_parser.err_offset <= line.len);
        }
    }
    print_message("mutations: %zu parsed, %zu rejected\n", ok, bad);
    assert_true(ok > 100 && bad > 100);
    pq_buf_free(&s.out);
    pq_buf_free(&line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_object_with_every_token_kind),
        cmocka_unit_test(test_json_top_level_scalars_and_arrays_are_accepted),
        cmocka_unit_test(test_json_whitespace_between_all_tokens),
        cmocka_unit_test(test_json_empty_key_and_duplicate_keys_are_delivered),
        cmocka_unit_test(test_json_literal_misspellings_are_rejected),
        cmocka_unit_test(test_json_simple_escapes_are_unescaped),
        cmocka_unit_test(test_json_unicode_escapes_become_utf8),
        cmocka_unit_test(test_json_surrogate_pair_escape_becomes_4_byte_utf8),
        cmocka_unit_test(test_json_lone_high_surrogate_is_rejected),
        cmocka_unit_test(test_json_lone_low_surrogate_is_rejected),
        cmocka_unit_test(test_json_escaped_nul_yields_a_nul_byte),
        cmocka_unit_test(test_json_invalid_escapes_are_rejected),
        cmocka_unit_test(test_json_unescaped_string_points_into_the_line),
        cmocka_unit_test(test_json_escaped_strings_stay_valid_until_next_line),
        cmocka_unit_test(test_json_unterminated_string_names_its_start),
        cmocka_unit_test(test_json_valid_utf8_of_every_length_is_accepted),
        cmocka_unit_test(test_json_utf8_lone_continuation_byte_is_rejected),
        cmocka_unit_test(test_json_utf8_overlong_2_byte_is_rejected),
        cmocka_unit_test(test_json_utf8_overlong_3_byte_is_rejected),
        cmocka_unit_test(test_json_utf8_overlong_4_byte_is_rejected),
        cmocka_unit_test(test_json_utf8_encoded_surrogates_are_rejected),
        cmocka_unit_test(test_json_utf8_above_u10ffff_is_rejected),
        cmocka_unit_test(test_json_utf8_truncated_sequence_is_rejected),
        cmocka_unit_test(test_json_utf8_is_validated_in_escaped_strings_too),
        cmocka_unit_test(test_json_nul_byte_in_string_is_rejected),
        cmocka_unit_test(test_json_nul_byte_outside_string_is_rejected),
        cmocka_unit_test(test_json_raw_control_characters_in_string_are_rejected),
        cmocka_unit_test(test_json_int64_max_and_min_are_exact),
        cmocka_unit_test(test_json_above_int64_max_is_uint64),
        cmocka_unit_test(test_json_uint64_max_is_exact),
        cmocka_unit_test(test_json_2_pow_64_becomes_double),
        cmocka_unit_test(test_json_negative_zero_is_int64_zero_with_negative_double),
        cmocka_unit_test(test_json_float_syntax_is_double_even_when_integral),
        cmocka_unit_test(test_json_1e400_is_out_of_range),
        cmocka_unit_test(test_json_1e_minus_400_rounds_to_zero),
        cmocka_unit_test(test_json_doubles_are_correctly_rounded),
        cmocka_unit_test(test_json_number_grammar_is_strict),
        cmocka_unit_test(test_json_number_exposes_its_parts_as_written),
        cmocka_unit_test(test_json_decimal_of_0_1_is_exact),
        cmocka_unit_test(test_json_decimal_keeps_written_scale_of_123_4500),
        cmocka_unit_test(test_json_decimal_of_minus_1e_minus_3),
        cmocka_unit_test(test_json_decimal_beyond_64_bits_is_exact),
        cmocka_unit_test(test_json_decimal_positive_exponent_and_integers),
        cmocka_unit_test(test_json_decimal_over_38_digits_is_elimit),
        cmocka_unit_test(test_json_depth_128_is_accepted_129_is_not),
        cmocka_unit_test(test_json_depth_10000_is_a_clean_error),
        cmocka_unit_test(test_json_max_depth_is_configurable),
        cmocka_unit_test(test_json_trailing_garbage_is_rejected),
        cmocka_unit_test(test_json_crlf_and_lf_terminators_are_accepted),
        cmocka_unit_test(test_json_blank_line_is_json_empty),
        cmocka_unit_test(test_json_error_messages_name_byte_and_expectation),
        cmocka_unit_test(test_json_handler_return_stops_parse_and_is_propagated),
        cmocka_unit_test(test_json_offsets_let_handlers_slice_raw_objects),
        cmocka_unit_test(test_json_null_handler_only_validates),
        cmocka_unit_test(test_json_parser_init_rejects_absurd_depth),
        cmocka_unit_test(test_json_every_sample_log_line_parses_as_one_object),
        cmocka_unit_test(test_json_random_mutations_never_crash_and_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
