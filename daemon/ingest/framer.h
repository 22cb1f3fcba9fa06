/* framer.h - NDJSON line framer: arbitrary byte chunks in, complete lines
 * out. Used by every input (files and stdin in `parqd convert`, TCP and
 * Unix stream connections in the daemon), so it never reads by itself:
 * the owner pushes whatever bytes it received and gets zero or more
 * callbacks back.
 *
 *     fr_framer f;
 *     fr_init(&f, cf.limits.max_line_bytes);
 *     while ((n = read(fd, buf, sizeof buf)) > 0)
 *         if ((rc = fr_push(&f, buf, n, on_line, ctx)) != 0) ...
 *     rc = fr_finish(&f, on_line, ctx);      last line without '\n'
 *     fr_free(&f);
 *
 * Lines. A line is the bytes before a '\n', minus one trailing '\r'
 * (CRLF input). Anything else, NUL bytes and invalid UTF-8 included, is
 * passed through untouched: judging it is the JSON parser's job, and the
 * dead-letter file needs the bytes as they came.
 *
 * Blank lines (empty, or only spaces, tabs and '\r') are skipped and
 * counted; they are not records, and rejecting them would fill the
 * dead-letter file with nothing.
 *
 * Oversized lines. A line longer than max_line_bytes is never buffered
 * whole: the first max_line_bytes bytes are kept, the rest is counted and
 * dropped, and once the line ends (at its '\n' or at fr_finish) it is
 * delivered once with .oversized set, .len == max_line_bytes and .total
 * the full length, so the caller can write it to the dead-letter file
 * with the reason and a truncated raw copy. The framer therefore never
 * holds more than max_line_bytes + 1 bytes, however long a line is.
 *
 * Line numbers are 1-based and count every line, blank ones included, so
 * they match what `sed -n Np` shows. */
#ifndef PQ_FRAMER_H
#define PQ_FRAMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fr_line {
    const char *data;            /* valid only during the callback */
    size_t len;                  /* bytes in data */
    size_t total;                /* length of the whole line (== len unless oversized) */
    uint64_t lineno;             /* 1-based */
    bool oversized;              /* total > max_line_bytes; data is the first len bytes */
} fr_line;

/* Returns 0 to go on; anything else stops fr_push/fr_finish, which return
 * it unchanged (the rest of the chunk is then not framed: the caller has
 * given up on this stream). */
typedef int (*fr_line_fn)(void *user, const fr_line *line);

typedef struct fr_framer {
    size_t max_line_bytes;
    char *buf;                   /* the unfinished line: at most max + 1 bytes */
    size_t len, cap;
    size_t total;                /* bytes of the unfinished line seen so far */
    bool last_cr;                /* its last byte was '\r' (oversized lines) */
    uint64_t lineno;             /* lines completed so far */
    /* counters for summaries and metrics */
    uint64_t lines;              /* delivered, oversized included */
    uint64_t blank;
    uint64_t oversized;
    uint64_t bytes;              /* everything pushed */
} fr_framer;

/* max_line_bytes must be > 0. Returns 0 or PQ_EINVAL. Allocates lazily. */
int fr_init(fr_framer *f, size_t max_line_bytes);
void fr_free(fr_framer *f);
/* Forgets any unfinished line and restarts numbering (next input). The
 * counters keep running. */
void fr_reset(fr_framer *f);

/* Frames len bytes. Returns 0, PQ_ENOMEM, or the callback's non-zero. */
int fr_push(fr_framer *f, const void *data, size_t len, fr_line_fn cb, void *user);
/* End of input: delivers an unfinished last line (no '\n'), if any. */
int fr_finish(fr_framer *f, fr_line_fn cb, void *user);

/* Bytes of an unfinished line currently held (for back-pressure and
 * metrics). */
static inline size_t fr_pending(const fr_framer *f) { return f->len; }

#endif
