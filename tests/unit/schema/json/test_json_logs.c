/* test_json_logs.c - the NDJSON line parser (schema/json/json.c) on the
 * real log samples (every line parses, as many as expected) and a seeded
 * mutation test (no crash, every error names a byte in the line). */
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
#include "testdata.h"

/* ---- real samples ------------------------------------------------------ */

/* VALIDATION.txt gives, per file, "lines=N ... max_depth=D" as computed by
 * an independent (Python) reader; our events must agree. */
static int expected_for(const char *rel, long *lines, int *max_depth)
{
    FILE *f = fopen(pqt_testdata_path("logs", "VALIDATION.txt"), "r");
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
    char root[384];                 /* sub[] below holds it plus a name */
    snprintf(root, sizeof root, "%s", pqt_testdata_path("logs", NULL));
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
    pqt_testdata_require("test_json_logs", "logs");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_every_sample_log_line_parses_as_one_object),
        cmocka_unit_test(test_json_random_mutations_never_crash_and_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
