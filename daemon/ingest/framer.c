/* framer.c - NDJSON line framer (see framer.h for the contract).
 *
 * Complete lines that lie inside one pushed chunk are delivered straight
 * from the caller's bytes, without a copy; only the unfinished tail of a
 * chunk is buffered, and at most max_line_bytes + 1 bytes of it (the extra
 * byte lets a line of exactly max_line_bytes end in "\r\n"). */
#include "framer.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

int fr_init(fr_framer *f, size_t max_line_bytes)
{
    memset(f, 0, sizeof *f);
    if (max_line_bytes == 0 || max_line_bytes >= SIZE_MAX / 2)
        return PQ_EINVAL;
    f->max_line_bytes = max_line_bytes;
    return PQ_OK;
}

void fr_free(fr_framer *f)
{
    free(f->buf);
    f->buf = NULL;
    f->len = f->cap = 0;
}

void fr_reset(fr_framer *f)
{
    f->len = 0;
    f->total = 0;
    f->last_cr = false;
    f->lineno = 0;
}

static bool is_blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

/* A line has ended. data holds its first min(total, max + 1) bytes, total
 * is its full length and last_cr whether its final byte is '\r'. */
static int deliver(fr_framer *f, const char *data, size_t total, bool last_cr, fr_line_fn cb,
                   void *user)
{
    const size_t max = f->max_line_bytes;
    size_t content = total - (last_cr ? 1 : 0);
    fr_line line = {.data = data, .len = content, .total = content, .lineno = ++f->lineno};
    if (content > max) {
        line.len = max;
        line.oversized = true;
        f->oversized++;
    } else if (is_blank(data, content)) {
        f->blank++;
        return 0;
    }
    f->lines++;
    return cb(user, &line);
}

/* Keeps what fits of an unfinished line's next segment. */
static int append(fr_framer *f, const char *p, size_t n)
{
    const size_t limit = f->max_line_bytes + 1;
    size_t keep = f->len < limit ? limit - f->len : 0;
    if (keep > n)
        keep = n;
    if (keep > 0 && f->len + keep > f->cap) {
        size_t cap = f->cap ? f->cap : 4096;
        while (cap < f->len + keep)
            cap *= 2;
        if (cap > limit)
            cap = limit;
        char *nb = realloc(f->buf, cap);
        if (nb == NULL)
            return PQ_ENOMEM;
        f->buf = nb;
        f->cap = cap;
    }
    if (keep > 0)
        memcpy(f->buf + f->len, p, keep);
    f->len += keep;
    f->total += n;
    if (n > 0)
        f->last_cr = p[n - 1] == '\r';
    return PQ_OK;
}

static int deliver_buffered(fr_framer *f, fr_line_fn cb, void *user)
{
    int rc = deliver(f, f->buf, f->total, f->last_cr, cb, user);
    f->len = 0;
    f->total = 0;
    f->last_cr = false;
    return rc;
}

int fr_push(fr_framer *f, const void *data, size_t len, fr_line_fn cb, void *user)
{
    const char *p = data, *end = p + len;
    f->bytes += len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        int rc;
        if (nl != NULL && f->total == 0) {
            /* Whole line in this chunk: no copy. */
            rc = deliver(f, p, n, n > 0 && p[n - 1] == '\r', cb, user);
        } else {
            rc = append(f, p, n);
            if (rc == 0 && nl != NULL)
                rc = deliver_buffered(f, cb, user);
        }
        if (rc != 0)
            return rc;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

int fr_finish(fr_framer *f, fr_line_fn cb, void *user)
{
    if (f->total == 0)
        return 0;
    return deliver_buffered(f, cb, user);
}
