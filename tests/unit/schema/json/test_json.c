/* test_json.c - the NDJSON line parser (schema/json/json.c): tokens,
 * escapes, UTF-8 validation, NUL and control bytes, structure, limits and
 * error messages. Numbers: test_json_numbers.c; real logs and mutations:
 * test_json_logs.c. */
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
#include "json_recorder.h"

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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
