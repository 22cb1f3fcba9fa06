/* test_log.c - the daemon's log lines (daemon/ops/log.c): the plain format
 * with an RFC 3339 UTC timestamp, level filtering, journald priority
 * prefixes when JOURNAL_STREAM names stderr, one line per event (line
 * breaks replaced, long messages cut) and whole lines under concurrency.
 *
 * stderr is captured by pointing fd 2 at a pipe for the length of a test. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* ---- capturing stderr ---------------------------------------------------- */

static int cap_read = -1, saved_stderr = -1;

static void cap_begin(void)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    assert_true(saved_stderr >= 0);
    assert_int_equal(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
    close(p[1]);
    cap_read = p[0];
}

/* Restores stderr and returns everything written meanwhile (malloc'd,
 * NUL-terminated). */
static char *cap_end(size_t *len)
{
    dup2(saved_stderr, STDERR_FILENO);       /* the pipe's last writer goes: EOF */
    close(saved_stderr);
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    for (ssize_t r; (r = read(cap_read, buf + n, cap - n)) != 0;) {
        if (r < 0 && errno == EINTR)
            continue;
        assert_true(r > 0);
        n += (size_t)r;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
    }
    close(cap_read);
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

/* Sets JOURNAL_STREAM to "<dev>:<ino>" of the current stderr (+ bump on
 * the inode, to make it not match). */
static void journal_stream_is_stderr(unsigned long long bump)
{
    struct stat st;
    char v[64];
    assert_int_equal(fstat(STDERR_FILENO, &st), 0);
    snprintf(v, sizeof v, "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino + bump);
    setenv("JOURNAL_STREAM", v, 1);
}

static int setup(void **state)
{
    (void)state;
    unsetenv("JOURNAL_STREAM");
    return 0;
}

/* ---- tests ---------------------------------------------------------------- */

/* "2024-05-01T12:00:00.123Z parqd[123]: warning: ..." with today's time. */
static void test_log_plain_line_has_rfc3339_utc_ms_pid_and_level(void **state)
{
    (void)state;
    cap_begin();
    lg_init(CF_LOG_INFO);
    /* The log's clock (CLOCK_REALTIME), not time(NULL): glibc's time()
     * reads the coarse clock, which lags by up to a tick, so at a second's
     * turn the line could be stamped after `after`. */
    struct timespec ts0, ts1;
    clock_gettime(CLOCK_REALTIME, &ts0);
    lg_warning("disk %s at %d%%", "full", 99);
    clock_gettime(CLOCK_REALTIME, &ts1);
    const time_t before = ts0.tv_sec, after = ts1.tv_sec;
    char *out = cap_end(NULL);

    char want[128];
    snprintf(want, sizeof want, " parqd[%ld]: warning: disk full at 99%%\n", (long)getpid());
    assert_int_equal(strlen(out), 24 + strlen(want));
    assert_string_equal(out + 24, want);
    /* YYYY-MM-DDTHH:MM:SS.mmmZ */
    const char *pat = "dddd-dd-ddTdd:dd:dd.dddZ";
    for (int i = 0; i < 24; i++) {
        if (pat[i] == 'd')
            assert_true(out[i] >= '0' && out[i] <= '9');
        else
            assert_int_equal(out[i], pat[i]);
    }
    struct tm tm = {0};
    assert_non_null(strptime(out, "%Y-%m-%dT%H:%M:%S", &tm));
    const time_t t = timegm(&tm);
    assert_true(t >= before && t <= after);
    free(out);
}

static void test_log_level_filters_less_severe(void **state)
{
    (void)state;
    cap_begin();
    lg_init(CF_LOG_WARNING);
    lg_debug("d1");
    lg_info("i1");
    lg_warning("w1");
    lg_error("e1");
    lg_set_level(CF_LOG_DEBUG);
    lg_debug("d2");
    lg_set_level(CF_LOG_ERROR);
    lg_warning("w2");
    lg_error("e2");
    char *out = cap_end(NULL);
    assert_null(strstr(out, "d1"));
    assert_null(strstr(out, "i1"));
    assert_null(strstr(out, "w2"));
    assert_non_null(strstr(out, ": warning: w1\n"));
    assert_non_null(strstr(out, ": error: e1\n"));
    assert_non_null(strstr(out, ": debug: d2\n"));
    assert_non_null(strstr(out, ": error: e2\n"));
    int lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 4);
    free(out);
}

/* Under systemd the line is only "<prio>message": journald adds the rest. */
static void test_log_journald_priority_prefix_when_stream_matches(void **state)
{
    (void)state;
    cap_begin();
    journal_stream_is_stderr(0);
    lg_init(CF_LOG_DEBUG);
    lg_error("e");
    lg_warning("w %d", 2);
    lg_info("i");
    lg_debug("d");
    char *out = cap_end(NULL);
    assert_string_equal(out, "<3>e\n<4>w 2\n<6>i\n<7>d\n");
    free(out);
}

/* A stderr redirected elsewhere inherits JOURNAL_STREAM but is not the
 * journal: plain lines. Malformed values count as no journal. */
static void test_log_plain_when_stream_does_not_match(void **state)
{
    (void)state;
    const char *bad[] = {"garbage", "12", "1:", ":1", "1:2x", ""};
    cap_begin();
    journal_stream_is_stderr(1);
    lg_init(CF_LOG_INFO);
    lg_info("other inode");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("JOURNAL_STREAM", bad[i], 1);
        lg_init(CF_LOG_INFO);
        lg_info("bad %zu", i);
    }
    char *out = cap_end(NULL);
    assert_null(strstr(out, "<6>"));
    assert_non_null(strstr(out, ": info: other inode\n"));
    assert_non_null(strstr(out, ": info: bad 5\n"));
    free(out);
}

static void test_log_newlines_inside_message_become_spaces(void **state)
{
    (void)state;
    cap_begin();
    journal_stream_is_stderr(0);
    lg_init(CF_LOG_INFO);
    lg_error("first\nsecond\r\nthird\x1b[31m\tx\n\n");
    char *out = cap_end(NULL);
    assert_string_equal(out, "<3>first second  third [31m\tx\n");
    free(out);
}

/* Over 4 KiB the message is cut to 4096 bytes ending in "...", never in
 * the middle of a UTF-8 character. */
static void test_log_long_message_cut_with_ellipsis(void **state)
{
    (void)state;
    char *big = malloc(10001);
    assert_non_null(big);
    memset(big, 'x', 10000);
    big[10000] = '\0';
    cap_begin();
    journal_stream_is_stderr(0);
    lg_init(CF_LOG_INFO);
    lg_info("%s", big);
    /* "ab" + 2-byte characters: byte 4093 is the second half of one */
    char *wide = malloc(2 + 2 * 3000 + 1);
    assert_non_null(wide);
    memcpy(wide, "ab", 2);
    for (int i = 0; i < 3000; i++)
        memcpy(wide + 2 + 2 * i, "\xc3\xa9", 2);
    wide[2 + 2 * 3000] = '\0';
    lg_info("%s", wide);
    lg_info("%.*s", 4096, big);          /* exactly 4 KiB: kept whole */
    size_t len;
    char *out = cap_end(&len);

    const char *l1 = out, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    assert_int_equal(l2 - l1, 3 + 4096 + 1);
    assert_memory_equal(l1, "<6>", 3);
    assert_memory_equal(l1 + 3, big, 4093);
    assert_memory_equal(l1 + 3 + 4093, "...\n", 4);

    /* "ab" + 2045 characters (4092 bytes) kept, then "..." */
    assert_int_equal(l3 - l2, 3 + 2 + 2 * 2045 + 3 + 1);
    assert_memory_equal(l2 + 3, wide, 2 + 2 * 2045);
    assert_memory_equal(l2 + 3 + 2 + 2 * 2045, "...\n", 4);

    assert_int_equal(len - (size_t)(l3 - out), 3 + 4096 + 1);
    assert_memory_equal(l3 + 3, big, 4096);
    free(out);
    free(big);
    free(wide);
}

static void test_log_preserves_errno(void **state)
{
    (void)state;
    cap_begin();
    lg_init(CF_LOG_INFO);
    errno = ENOSPC;
    lg_error("write failed");
    assert_int_equal(errno, ENOSPC);
    errno = EAGAIN;
    lg_debug("filtered");
    assert_int_equal(errno, EAGAIN);
    free(cap_end(NULL));
}

/* ---- concurrency: each line arrives whole ---------------------------- */

#define THREADS 4
#define LINES 500

static void *logger(void *arg)
{
    const int id = (int)(intptr_t)arg;
    char pad[201];
    memset(pad, 'a' + id, 200);
    pad[200] = '\0';
    for (int i = 0; i < LINES; i++)
        lg_info("t%d-%04d-%s", id, i, pad);
    return NULL;
}

static void test_log_concurrent_lines_stay_whole(void **state)
{
    (void)state;
    cap_begin();
    journal_stream_is_stderr(0);
    lg_init(CF_LOG_INFO);
    /* 4 x 500 x 215 bytes overflow the pipe: read while they write */
    int rfd = cap_read;
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, logger, (void *)(intptr_t)t), 0);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    const size_t want = (size_t)THREADS * LINES * (3 + 8 + 200 + 1);
    while (n < want) {
        const ssize_t r = read(rfd, buf + n, cap - n);
        assert_true(r > 0);
        n += (size_t)r;
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    buf[n] = '\0';
    free(cap_end(NULL));
    assert_int_equal(n, want);

    int next[THREADS] = {0};
    for (char *line = buf; *line != '\0';) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        assert_int_equal(nl - line, 3 + 8 + 200);
        int id, seq;
        assert_int_equal(sscanf(line, "<6>t%d-%4d-", &id, &seq), 2);
        assert_true(id >= 0 && id < THREADS);
        assert_int_equal(seq, next[id]);             /* in order per thread */
        next[id]++;
        for (int k = 0; k < 200; k++)
            assert_int_equal(line[11 + k], 'a' + id);
        line = nl + 1;
    }
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(next[t], LINES);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_log_plain_line_has_rfc3339_utc_ms_pid_and_level, setup),
        cmocka_unit_test_setup(test_log_level_filters_less_severe, setup),
        cmocka_unit_test_setup(test_log_journald_priority_prefix_when_stream_matches, setup),
        cmocka_unit_test_setup(test_log_plain_when_stream_does_not_match, setup),
        cmocka_unit_test_setup(test_log_newlines_inside_message_become_spaces, setup),
        cmocka_unit_test_setup(test_log_long_message_cut_with_ellipsis, setup),
        cmocka_unit_test_setup(test_log_preserves_errno, setup),
        cmocka_unit_test_setup(test_log_concurrent_lines_stay_whole, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
