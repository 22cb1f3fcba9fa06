/* deadletter.c - the dead-letter NDJSON file (see deadletter.h). */
#include "deadletter.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- UTF-8 --------------------------------------------------------------- */

/* Length of the UTF-8 character at p (1..4), 0 if the bytes are invalid,
 * or -1 if they are a valid but incomplete start of one (cut by n). */
static int utf8_char(const uint8_t *p, size_t n)
{
    const uint8_t c = p[0];
    if (c < 0x80)
        return 1;
    int len;
    uint8_t lo = 0x80, hi = 0xBF;          /* allowed range of the 2nd byte */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;                     /* overlong */
        else if (c == 0xED)
            hi = 0x9F;                     /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;                     /* overlong */
        else if (c == 0xF4)
            hi = 0x8F;                     /* above U+10FFFF */
    } else {
        return 0;
    }
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n)
            return -1;
        const uint8_t b = p[i];
        if (i == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80)
            return 0;
    }
    return len;
}

/* Length of the longest valid prefix; *incomplete tells whether what follows
 * is only a character cut short by the end of the buffer. */
static size_t utf8_prefix(const void *data, size_t n, bool *incomplete)
{
    const uint8_t *p = data;
    size_t i = 0;
    *incomplete = false;
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        int len = utf8_char(p + i, n - i);
        if (len <= 0) {
            *incomplete = len < 0;
            break;
        }
        i += (size_t)len;
    }
    return i;
}

bool dl_utf8_valid(const void *p, size_t n)
{
    bool incomplete;
    return utf8_prefix(p, n, &incomplete) == n;
}

/* ---- formatting ---------------------------------------------------------- */

static int put(pq_buf *b, const char *s) { return pq_buf_append(b, s, strlen(s)); }

/* A JSON string. Bytes that are not UTF-8 become U+FFFD (for raw, the
 * caller has checked there are none, so the string is lossless). */
static int put_json_string(pq_buf *b, const void *data, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = data;
    int rc = pq_buf_reserve(b, n + 2);
    rc = rc ? rc : pq_buf_push(b, '"');
    for (size_t i = 0; i < n && rc == 0;) {
        const uint8_t c = p[i];
        size_t run = i;
        /* Copy the longest stretch that needs no escaping in one go. */
        while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        if (run > i) {
            rc = pq_buf_append(b, p + i, run - i);
            i = run;
            continue;
        }
        if (c >= 0x80) {
            int len = utf8_char(p + i, n - i);
            if (len > 0) {
                rc = pq_buf_append(b, p + i, (size_t)len);
                i += (size_t)len;
            } else {
                rc = put(b, "\\ufffd");
                i++;
            }
            continue;
        }
        switch (c) {
        case '"': rc = put(b, "\\\""); break;
        case '\\': rc = put(b, "\\\\"); break;
        case '\n': rc = put(b, "\\n"); break;
        case '\r': rc = put(b, "\\r"); break;
        case '\t': rc = put(b, "\\t"); break;
        case '\b': rc = put(b, "\\b"); break;
        case '\f': rc = put(b, "\\f"); break;
        default: {
            const char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], '\0'};
            rc = put(b, u);
        }
        }
        i++;
    }
    return rc ? rc : pq_buf_push(b, '"');
}

static int put_base64(pq_buf *b, const void *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const uint8_t *p = data;
    int rc = pq_buf_reserve(b, (n + 2) / 3 * 4 + 2);
    if (rc != 0)
        return rc;
    uint8_t *o = b->data + b->len;
    *o++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        const uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = (uint8_t)tab[v >> 18];
        *o++ = (uint8_t)tab[(v >> 12) & 63];
        *o++ = (uint8_t)tab[(v >> 6) & 63];
        *o++ = (uint8_t)tab[v & 63];
    }
    if (i < n) {
        const uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = (uint8_t)tab[v >> 18];
        *o++ = (uint8_t)tab[(v >> 12) & 63];
        *o++ = i + 1 < n ? (uint8_t)tab[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    return 0;
}

static int put_time(pq_buf *b, int64_t us)
{
    int64_t s = us / 1000000, frac = us % 1000000;
    if (frac < 0) {
        frac += 1000000;
        s--;
    }
    const time_t t = (time_t)s;
    struct tm tm;
    char tmp[64];
    if (gmtime_r(&t, &tm) == NULL || strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        snprintf(tmp, sizeof tmp, "1970-01-01T00:00:00");
    size_t len = strlen(tmp);
    snprintf(tmp + len, sizeof tmp - len, ".%06dZ\"", (int)frac);
    int rc = pq_buf_push(b, '"');
    return rc ? rc : put(b, tmp);
}

int dl_format(pq_buf *b, const dl_record *r)
{
    size_t raw_len = r->raw_len;
    bool incomplete;
    size_t valid = utf8_prefix(r->raw, raw_len, &incomplete);
    /* An oversized line cut inside a character is still text. */
    if (valid < raw_len && r->truncated && incomplete)
        raw_len = valid;
    const bool text = valid == raw_len;
    char num[32];
    int rc = put(b, "{\"ts\":");
    rc = rc ? rc : put_time(b, r->ts_us);
    rc = rc ? rc : put(b, ",\"source\":");
    rc = rc ? rc : put_json_string(b, r->source ? r->source : "",
                                   r->source ? strlen(r->source) : 0);
    rc = rc ? rc : put(b, ",\"reason\":");
    rc = rc ? rc : put_json_string(b, r->reason ? r->reason : "",
                                   r->reason ? strlen(r->reason) : 0);
    rc = rc ? rc : put(b, text ? ",\"raw\":" : ",\"raw_b64\":");
    if (rc == 0)
        rc = text ? put_json_string(b, r->raw, raw_len) : put_base64(b, r->raw, raw_len);
    rc = rc ? rc : put(b, r->truncated ? ",\"truncated\":true" : ",\"truncated\":false");
    snprintf(num, sizeof num, ",\"bytes\":%" PRIu64, r->bytes);
    rc = rc ? rc : put(b, num);
    if (r->has_seq) {
        /* last, so dl_recover finds it at the end of the line */
        snprintf(num, sizeof num, ",\"seq\":%" PRIu64, r->seq);
        rc = rc ? rc : put(b, num);
    }
    return rc ? rc : put(b, "}");
}

/* ---- the file ------------------------------------------------------------ */

int dl_init(dl_file *d, const char *path, dl_sync_mode sync, pq_err *err)
{
    memset(d, 0, sizeof *d);
    d->fd = -1;
    d->sync = sync;
    pq_buf_init(&d->line);
    if ((d->path = strdup(path)) == NULL)
        return pq_err_set(err, PQ_ENOMEM, "dead-letter file: out of memory");
    return PQ_OK;
}

static const char *why(int e)
{
    switch (e) {
    case ENOSPC: return "disk full (No space left on device)";
    case EDQUOT: return "disk quota exceeded";
    case EFBIG: return "file too large";
    default: return strerror(e);
    }
}

static int open_file(dl_file *d, pq_err *err)
{
    d->fd = open(d->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (d->fd < 0)
        return pq_err_set(err, PQ_EIO, "dead-letter file %s: cannot open: %s", d->path,
                          strerror(errno));
    return PQ_OK;
}

/* fsync that accepts devices and pipes (/dev/stderr as a dead-letter
 * target), which cannot be synced. */
static int sync_fd(int fd, bool data_only)
{
    int rc = data_only ? fdatasync(fd) : fsync(fd);
    return rc != 0 && (errno == EINVAL || errno == EROFS || errno == ENOTSUP) ? 0 : rc;
}

int dl_write(dl_file *d, const dl_record *r, pq_err *err)
{
    pq_buf_reset(&d->line);
    if (dl_format(&d->line, r) != 0 || pq_buf_push(&d->line, '\n') != 0)
        return pq_err_set(err, PQ_ENOMEM, "dead-letter file %s: out of memory formatting a "
                          "record of %" PRIu64 " bytes", d->path, r->bytes);
    if (d->fd < 0 && open_file(d, err) != 0)
        return PQ_EIO;
    struct stat st;
    const bool regular = fstat(d->fd, &st) == 0 && S_ISREG(st.st_mode);
    const uint8_t *p = d->line.data;
    size_t left = d->line.len;
    while (left > 0) {
        ssize_t w = write(d->fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            const int e = w < 0 ? errno : EIO;
            /* Cut a partial record off so the next one starts a line. */
            if (regular && left < d->line.len && ftruncate(d->fd, st.st_size) != 0)
                return pq_err_set(err, PQ_EIO, "dead-letter file %s: write failed: %s; a "
                                  "partial record remains at offset %lld (cannot truncate: %s)",
                                  d->path, why(e), (long long)st.st_size, strerror(errno));
            return pq_err_set(err, PQ_EIO, "dead-letter file %s: write failed: %s; the "
                              "rejected record (%s) was not stored", d->path, why(e),
                              r->source ? r->source : "?");
        }
        p += w;
        left -= (size_t)w;
    }
    d->records++;
    d->bytes += d->line.len;
    d->dirty = true;
    if (d->sync == DL_SYNC_ALWAYS)
        return dl_sync(d, err);
    return PQ_OK;
}

int dl_sync(dl_file *d, pq_err *err)
{
    if (d->fd < 0 || !d->dirty)
        return PQ_OK;
    if (sync_fd(d->fd, d->sync == DL_SYNC_ALWAYS) != 0)
        return pq_err_set(err, PQ_EIO, "dead-letter file %s: fsync failed: %s", d->path,
                          why(errno));
    d->dirty = false;
    return PQ_OK;
}

int dl_close(dl_file *d, pq_err *err)
{
    if (d->fd < 0)
        return PQ_OK;
    int rc = dl_sync(d, err);
    if (close(d->fd) != 0 && rc == 0)
        rc = pq_err_set(err, PQ_EIO, "dead-letter file %s: close failed: %s", d->path,
                        why(errno));
    d->fd = -1;
    return rc;
}

void dl_free(dl_file *d)
{
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
    pq_buf_free(&d->line);
    free(d->path);
    d->path = NULL;
}
