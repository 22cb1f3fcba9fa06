/* test_framer.c - the NDJSON line framer (daemon/ingest/framer.c).
 *
 * The daemon sources are linked only into the parqd binary, not into a library the
 * unit tests link, so this test compiles the module under test directly by
 * including its .c file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../../daemon/ingest/framer.c"

/* ---- a recorder: every delivered line appended to a text trace --------- */

typedef struct rec {
    char trace[1 << 16];
    size_t len;
    int stop_after;              /* > 0: return 99 from the n-th line */
    int calls;
} rec;

static int on_line(void *user, const fr_line *l)
{
    rec *r = user;
    char *o = r->trace + r->len;
    size_t room = sizeof r->trace - r->len;
    int n = snprintf(o, room, "%llu:%zu/%zu%s:", (unsigned long long)l->lineno, l->len,
                     l->total, l->oversized ? "!" : "");
    for (size_t i = 0; i < l->len && (size_t)n + 5 < room; i++) {
        unsigned char c = (unsigned char)l->data[i];
        n += c >= 0x20 && c < 0x7F && c != '\\' ? snprintf(o + n, room - (size_t)n, "%c", c)
                                                : snprintf(o + n, room - (size_t)n, "\\x%02X", c);
    }
    n += snprintf(o + n, room - (size_t)n, "|");
    r->len += (size_t)n;
    r->calls++;
    return r->stop_after > 0 && r->calls == r->stop_after ? 99 : 0;
}

/* Frames the whole input in one push + finish. */
static void frame_all(size_t max, const char *in, size_t n, rec *r, fr_framer *f)
{
    assert_int_equal(fr_init(f, max), 0);
    assert_int_equal(fr_push(f, in, n, on_line, r), 0);
    assert_int_equal(fr_finish(f, on_line, r), 0);
}

static void test_framer_lines_without_newline_crlf_and_blanks(void **state)
{
    (void)state;
    static const char in[] = "{\"a\":1}\n\n{\"b\":2}\r\n  \t\r\n\r\nx\ny";
    rec r = {0};
    fr_framer f;
    frame_all(100, in, sizeof in - 1, &r, &f);
    assert_string_equal(r.trace, "1:7/7:{\"a\":1}|3:7/7:{\"b\":2}|6:1/1:x|7:1/1:y|");
    assert_int_equal(f.lines, 4);
    assert_int_equal(f.blank, 3);
    assert_int_equal(f.oversized, 0);
    assert_int_equal(f.bytes, sizeof in - 1);
    fr_free(&f);
}

static void test_framer_only_one_trailing_cr_is_removed(void **state)
{
    (void)state;
    static const char in[] = "a\r\r\nb\rc\n";
    rec r = {0};
    fr_framer f;
    frame_all(100, in, sizeof in - 1, &r, &f);
    assert_string_equal(r.trace, "1:2/2:a\\x0D|2:3/3:b\\x0Dc|");
    fr_free(&f);
}

static void test_framer_nul_bytes_pass_through(void **state)
{
    (void)state;
    static const char in[] = "a\0b\n\0\n\xff\xfe\n";
    rec r = {0};
    fr_framer f;
    frame_all(100, in, sizeof in - 1, &r, &f);
    assert_string_equal(r.trace, "1:3/3:a\\x00b|2:1/1:\\x00|3:2/2:\\xFF\\xFE|");
    fr_free(&f);
}

/* Every split of a sample into two chunks, and byte-by-byte, gives the
 * same lines as one push; with a small max so oversized lines straddle. */
static void test_framer_every_chunk_boundary_gives_the_same_lines(void **state)
{
    (void)state;
    static const char in[] = "{\"k\":\"v\"}\r\n\n0123456789abcdef\nabcdefgh\r\n"
                             "short\n \n0123456789\r\nlast-no-newline-and-long";
    const size_t n = sizeof in - 1, max = 10;
    rec want = {0};
    fr_framer f;
    frame_all(max, in, n, &want, &f);
    fr_free(&f);
    assert_string_equal(want.trace,
                        "1:9/9:{\"k\":\"v\"}|3:10/16!:0123456789|4:8/8:abcdefgh|5:5/5:short|"
                        "7:10/10:0123456789|8:10/24!:last-no-ne|");
    for (size_t cut = 0; cut <= n; cut++) {
        rec r = {0};
        assert_int_equal(fr_init(&f, max), 0);
        assert_int_equal(fr_push(&f, in, cut, on_line, &r), 0);
        assert_int_equal(fr_push(&f, in + cut, n - cut, on_line, &r), 0);
        assert_int_equal(fr_finish(&f, on_line, &r), 0);
        if (strcmp(r.trace, want.trace) != 0)
            fail_msg("split at %zu: %s", cut, r.trace);
        assert_true(f.cap <= max + 1);
        fr_free(&f);
    }
    for (size_t a = 0; a <= n; a++) {
        for (size_t b = a; b <= n; b += 7) {
            rec r = {0};
            assert_int_equal(fr_init(&f, max), 0);
            assert_int_equal(fr_push(&f, in, a, on_line, &r), 0);
            assert_int_equal(fr_push(&f, in + a, b - a, on_line, &r), 0);
            assert_int_equal(fr_push(&f, in + b, n - b, on_line, &r), 0);
            assert_int_equal(fr_finish(&f, on_line, &r), 0);
            if (strcmp(r.trace, want.trace) != 0)
                fail_msg("splits at %zu,%zu: %s", a, b, r.trace);
            fr_free(&f);
        }
    }
    rec r = {0};
    assert_int_equal(fr_init(&f, max), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fr_push(&f, in + i, 1, on_line, &r), 0);
    assert_int_equal(fr_finish(&f, on_line, &r), 0);
    assert_string_equal(r.trace, want.trace);
    fr_free(&f);
}

static void test_framer_line_of_exactly_max_is_kept_max_plus_one_is_oversized(void **state)
{
    (void)state;
    /* max 4: "abcd" fits, also as "abcd\r\n"; "abcde" does not. */
    static const char in[] = "abcd\nabcd\r\nabcde\nabcde\r\nab\n";
    rec r = {0};
    fr_framer f;
    frame_all(4, in, sizeof in - 1, &r, &f);
    assert_string_equal(r.trace, "1:4/4:abcd|2:4/4:abcd|3:4/5!:abcd|4:4/5!:abcd|5:2/2:ab|");
    assert_int_equal(f.oversized, 2);
    assert_int_equal(f.lines, 5);
    fr_free(&f);
    /* The same, fed byte by byte (the buffered path). */
    rec r2 = {0};
    assert_int_equal(fr_init(&f, 4), 0);
    for (size_t i = 0; i < sizeof in - 1; i++)
        assert_int_equal(fr_push(&f, in + i, 1, on_line, &r2), 0);
    assert_int_equal(fr_finish(&f, on_line, &r2), 0);
    assert_string_equal(r2.trace, r.trace);
    fr_free(&f);
}

static void test_framer_oversized_line_is_reported_once_and_memory_stays_bounded(void **state)
{
    (void)state;
    const size_t max = 1000, big = 10u << 20;
    char *chunk = malloc(65536);
    assert_non_null(chunk);
    memset(chunk, 'x', 65536);
    rec r = {0};
    fr_framer f;
    assert_int_equal(fr_init(&f, max), 0);
    assert_int_equal(fr_push(&f, "{\"ok\":1}\n", 9, on_line, &r), 0);
    for (size_t done = 0; done < big; done += 65536)
        assert_int_equal(fr_push(&f, chunk, 65536, on_line, &r), 0);
    assert_true(f.cap <= max + 1);
    assert_int_equal(r.calls, 1);
    assert_int_equal(fr_push(&f, "\r\n{\"ok\":2}\n", 11, on_line, &r), 0);
    assert_int_equal(fr_finish(&f, on_line, &r), 0);
    assert_int_equal(r.calls, 3);
    char want[64];
    snprintf(want, sizeof want, "2:1000/%zu!:xxxx", big);
    assert_non_null(strstr(r.trace, want));
    assert_non_null(strstr(r.trace, "|3:8/8:{\"ok\":2}|"));
    assert_int_equal(f.oversized, 1);
    free(chunk);
    fr_free(&f);
}

static void test_framer_callback_error_stops_framing(void **state)
{
    (void)state;
    rec r = {.stop_after = 2};
    fr_framer f;
    assert_int_equal(fr_init(&f, 100), 0);
    assert_int_equal(fr_push(&f, "a\nb\nc\n", 6, on_line, &r), 99);
    assert_string_equal(r.trace, "1:1/1:a|2:1/1:b|");
    fr_free(&f);
}

static void test_framer_finish_without_pending_bytes_delivers_nothing(void **state)
{
    (void)state;
    rec r = {0};
    fr_framer f;
    assert_int_equal(fr_init(&f, 100), 0);
    assert_int_equal(fr_finish(&f, on_line, &r), 0);
    assert_int_equal(fr_push(&f, "a\n", 2, on_line, &r), 0);
    assert_int_equal(fr_finish(&f, on_line, &r), 0);
    assert_string_equal(r.trace, "1:1/1:a|");
    /* A trailing "\r" or spaces alone is a blank last line. */
    assert_int_equal(fr_push(&f, " \r", 2, on_line, &r), 0);
    assert_int_equal(fr_pending(&f), 2);
    assert_int_equal(fr_finish(&f, on_line, &r), 0);
    assert_int_equal(f.blank, 1);
    assert_int_equal(r.calls, 1);
    fr_free(&f);
}

static void test_framer_reset_restarts_line_numbers_and_drops_partial_line(void **state)
{
    (void)state;
    rec r = {0};
    fr_framer f;
    assert_int_equal(fr_init(&f, 100), 0);
    assert_int_equal(fr_push(&f, "a\nb\npartial", 11, on_line, &r), 0);
    fr_reset(&f);
    assert_int_equal(fr_push(&f, "c\n", 2, on_line, &r), 0);
    assert_int_equal(fr_finish(&f, on_line, &r), 0);
    assert_string_equal(r.trace, "1:1/1:a|2:1/1:b|1:1/1:c|");
    assert_int_equal(f.lines, 3);
    fr_free(&f);
}

static void test_framer_rejects_zero_max(void **state)
{
    (void)state;
    fr_framer f;
    assert_int_equal(fr_init(&f, 0), PQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_framer_lines_without_newline_crlf_and_blanks),
        cmocka_unit_test(test_framer_only_one_trailing_cr_is_removed),
        cmocka_unit_test(test_framer_nul_bytes_pass_through),
        cmocka_unit_test(test_framer_every_chunk_boundary_gives_the_same_lines),
        cmocka_unit_test(test_framer_line_of_exactly_max_is_kept_max_plus_one_is_oversized),
        cmocka_unit_test(test_framer_oversized_line_is_reported_once_and_memory_stays_bounded),
        cmocka_unit_test(test_framer_callback_error_stops_framing),
        cmocka_unit_test(test_framer_finish_without_pending_bytes_delivers_nothing),
        cmocka_unit_test(test_framer_reset_restarts_line_numbers_and_drops_partial_line),
        cmocka_unit_test(test_framer_rejects_zero_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
