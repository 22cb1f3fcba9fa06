/* log.c - the daemon's log lines on stderr (see log.h).
 *
 * Thread: any. The level and the output style are atomics set by lg_init /
 * lg_set_level; a line is built on the caller's stack and leaves in one
 * write(2), so lines from different threads never interleave (pipes and
 * journald's stream socket take a write of up to PIPE_BUF bytes whole).
 *
 * Two styles, chosen once by lg_init:
 *   journald  "<4>spool: fsync failed ..."   journald adds time, pid, unit
 *   plain     "2024-05-01T12:00:00.123Z parqd[123]: warning: spool: ..."
 * systemd.exec(5): JOURNAL_STREAM="<st_dev>:<st_ino>" names the stream
 * stderr was connected to; it is only trusted while stderr is still that
 * stream (a redirected stderr inherits the variable but not the journal). */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A message is cut to this many bytes, "..." included, so that a line
 * (prefix + message + '\n') stays one short write. */
#define LG_MAX_MSG 4096

static _Atomic int lg_level = CF_LOG_INFO;
static _Atomic bool lg_journal;

static const struct {
    const char *name;
    char prio;                   /* syslog priority digit */
} lg_levels[] = {
    [CF_LOG_ERROR] = {"error", '3'},
    [CF_LOG_WARNING] = {"warning", '4'},
    [CF_LOG_INFO] = {"info", '6'},
    [CF_LOG_DEBUG] = {"debug", '7'},
};

/* True when JOURNAL_STREAM is "<dev>:<ino>" (decimal) and equals stderr's. */
static bool stderr_is_journal(void)
{
    const char *v = getenv("JOURNAL_STREAM");
    if (v == NULL || *v == '\0')
        return false;
    char *end;
    errno = 0;
    const uintmax_t dev = strtoumax(v, &end, 10);
    if (errno != 0 || end == v || *end != ':')
        return false;
    const char *p = end + 1;
    const uintmax_t ino = strtoumax(p, &end, 10);
    if (errno != 0 || end == p || *end != '\0')
        return false;
    struct stat st;
    if (fstat(STDERR_FILENO, &st) != 0)
        return false;
    return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

void lg_init(cf_log_level level)
{
    const int saved = errno;
    atomic_store(&lg_journal, stderr_is_journal());
    lg_set_level(level);
    errno = saved;
}

void lg_set_level(cf_log_level level)
{
    if ((int)level < CF_LOG_ERROR)
        level = CF_LOG_ERROR;
    if (level > CF_LOG_DEBUG)
        level = CF_LOG_DEBUG;
    atomic_store(&lg_level, (int)level);
}

/* "2024-05-01T12:00:00.123Z parqd[123]: warning: " into p; its length. */
static size_t plain_prefix(char *p, size_t n, cf_log_level level)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    const int len = snprintf(p, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ parqd[%ld]: %s: ",
                             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                             tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L, (long)getpid(),
                             lg_levels[level].name);
    return len < 0 ? 0 : (size_t)len >= n ? n - 1 : (size_t)len;
}

/* Makes msg[0..len) one line: trailing line breaks go, other control
 * characters (a '\n' inside an error text, an escape sequence in a peer
 * name) become spaces. Returns the new length. */
static size_t one_line(char *msg, size_t len)
{
    while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
        len--;
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)msg[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            msg[i] = ' ';
    }
    return len;
}

/* Cuts msg (len > LG_MAX_MSG bytes available) to LG_MAX_MSG bytes ending
 * in "...", without splitting a UTF-8 character. */
static size_t cut(char *msg)
{
    size_t keep = LG_MAX_MSG - 3;
    while (keep > 0 && ((unsigned char)msg[keep] & 0xC0) == 0x80)
        keep--;
    memcpy(msg + keep, "...", 3);
    return keep + 3;
}

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(STDERR_FILENO, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;              /* nowhere left to report it */
        p += w;
        n -= (size_t)w;
    }
}

void lg_log(cf_log_level level, const char *fmt, ...)
{
    if ((int)level > atomic_load_explicit(&lg_level, memory_order_relaxed) ||
        (int)level < CF_LOG_ERROR)
        return;
    const int saved = errno;     /* callers log, then look at errno */
    char line[64 + LG_MAX_MSG + 2];
    size_t pre;
    if (atomic_load_explicit(&lg_journal, memory_order_relaxed)) {
        line[0] = '<';
        line[1] = lg_levels[level].prio;
        line[2] = '>';
        pre = 3;
    } else {
        pre = plain_prefix(line, 64, level);
    }
    char *msg = line + pre;
    const size_t room = sizeof line - pre - 1;      /* keep 1 for '\n' */
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(msg, room, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len > LG_MAX_MSG)
        len = cut(msg);
    len = one_line(msg, len);
    msg[len] = '\n';
    write_all(line, pre + len + 1);
    errno = saved;
}
