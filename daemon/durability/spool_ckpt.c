/* spool_ckpt.c - the spool's checkpoint file: the committed watermark and
 * at most one pending publication (spool.h "Exactly once").
 *
 * A small text file, so an operator can read it with cat:
 *
 *     parqd spool checkpoint 1\n
 *     committed <seq>\n
 *     intent <end seq> <path length in bytes> <path bytes>\n     (optional)
 *     crc32c <8 lowercase hex digits>\n
 *
 * Format 2 (partitioned output, spool.h "sp_range"; written only when
 * there is something of it to say, so a daemon without {{FIELD}}s keeps
 * writing format 1):
 *
 *     parqd spool checkpoint 2\n
 *     committed <seq>\n
 *     dead_letters <seq>\n
 *     range <first> <end> <key length> <key bytes>\n            (any number)
 *     intent <end> <path length> <path bytes>\n                  (optional, or:)
 *     intent_range <first> <end> <key length> <key bytes> <path length> <path bytes>\n
 *     crc32c <8 lowercase hex digits>\n
 *
 * Decimal numbers without leading zeros or signs; the CRC32C covers every
 * byte before the "crc32c" line. The path is length-prefixed, so any byte
 * (a newline included) survives. Written as checkpoint.tmp, fsync'd,
 * renamed over checkpoint and the directory fsync'd: a crash leaves the
 * old or the new file, never a mix. A file that fails to parse or to match
 * its CRC is an error, never "no checkpoint": reading it as watermark 0
 * would publish every spooled record a second time.
 *
 * Thread: sp_open's, then the publisher's (spool.h), under the spool's
 * ckpt_mu. */
#include "spool_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"

#define CKPT_HEAD "parqd spool checkpoint "
#define CKPT_MAX 16384          /* a path or key: far above PATH_MAX */
/* The file: far above any real one (format 2 keeps a line per published
 * file above the watermark: thousands). */
#define CKPT_FILE_MAX (64 << 20)

void sp_ranges_free(sp_range *r, size_t n)
{
    for (size_t i = 0; r != NULL && i < n; i++)
        free(r[i].key);
    free(r);
}

void sp_ckpt_free(sp_ckpt *c)
{
    free(c->intent_path);
    free(c->intent_key);
    sp_ranges_free(c->ranges, c->n_ranges);
    memset(c, 0, sizeof *c);
}

static bool is_v2(const sp_ckpt *c)
{
    return c->intent_key != NULL || c->n_ranges > 0 || c->dl_done != 0;
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p != NULL) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

/* A decimal uint64 at *p up to the byte `stop`; advances *p past stop. */
static bool parse_u64(const char **p, const char *end, char stop, uint64_t *out)
{
    const char *q = *p;
    uint64_t v = 0;
    if (q >= end || *q < '0' || *q > '9' || (*q == '0' && q + 1 < end && q[1] != stop))
        return false;
    for (; q < end && *q >= '0' && *q <= '9'; q++) {
        const uint64_t d = (uint64_t)(*q - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (q >= end || *q != stop)
        return false;
    *p = q + 1;
    *out = v;
    return true;
}

static bool parse_word(const char **p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - *p) < n || memcmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}

/* "<length> <bytes>" followed by stop; *out malloc'd (NUL-terminated,
 * no NUL inside). allow_empty: a key may be "". false: malformed, or
 * *nomem. */
static bool parse_bytes(const char **p, const char *end, char stop, bool allow_empty,
                        char **out, bool *nomem)
{
    uint64_t v;
    if (!parse_u64(p, end, ' ', &v) || (v == 0 && !allow_empty) || v >= (uint64_t)(end - *p) ||
        v >= CKPT_MAX || (*p)[v] != stop || memchr(*p, '\0', v) != NULL)
        return false;
    if ((*out = strndup(*p, v)) == NULL) {
        *nomem = true;
        return false;
    }
    *p += v + 1;
    return true;
}

static bool push_range(sp_ckpt *c, uint64_t first, uint64_t end, char *key)
{
    sp_range *r = realloc(c->ranges, (c->n_ranges + 1) * sizeof *r);
    if (r == NULL)
        return false;
    c->ranges = r;
    r[c->n_ranges++] = (sp_range){.first = first, .end = end, .key = key};
    return true;
}

/* Parses text[0..n): 0, PQ_EPARSE with what is wrong, PQ_EINVAL for a
 * newer version. */
static int parse(const char *text, size_t n, const char *path, sp_ckpt *c, pq_err *err)
{
    const char *p = text, *end = text + n;
    uint64_t version, v;
    if (!parse_word(&p, end, CKPT_HEAD) || !parse_u64(&p, end, '\n', &version))
        return pq_err_set(err, PQ_EPARSE, "spool %s: not a checkpoint file (bad first line)",
                          path);
    if (!parse_word(&p, end, "committed ") || !parse_u64(&p, end, '\n', &c->committed))
        return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (bad 'committed' line)", path);
    bool nomem = false;
    if (parse_word(&p, end, "dead_letters ") && !parse_u64(&p, end, '\n', &c->dl_done))
        return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (bad 'dead_letters' line)", path);
    while (parse_word(&p, end, "range ")) {
        uint64_t first, rend;
        char *key = NULL;
        if (!parse_u64(&p, end, ' ', &first) || !parse_u64(&p, end, ' ', &rend) ||
            !parse_bytes(&p, end, '\n', true, &key, &nomem) || !push_range(c, first, rend, key)) {
            free(key);
            return nomem ? pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", path)
                         : pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (bad 'range' line)",
                                      path);
        }
        if (first >= rend || rend <= c->committed || rend >= SP_SEQ_MAX)
            return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (range seqs out of order)",
                              path);
    }
    if (parse_word(&p, end, "intent_range ")) {
        if (!parse_u64(&p, end, ' ', &c->intent_first) ||
            !parse_u64(&p, end, ' ', &c->intent_end) ||
            !parse_bytes(&p, end, ' ', true, &c->intent_key, &nomem) ||
            !parse_bytes(&p, end, '\n', false, &c->intent_path, &nomem))
            return nomem ? pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", path)
                         : pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (bad 'intent_range' "
                                      "line)", path);
        if (c->intent_first >= c->intent_end)
            return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (intent seqs out of order)",
                              path);
    } else if (parse_word(&p, end, "intent ")) {
        if (!parse_u64(&p, end, ' ', &c->intent_end) || !parse_u64(&p, end, ' ', &v) ||
            v == 0 || v >= (uint64_t)(end - p) || v >= CKPT_MAX || p[v] != '\n' ||
            memchr(p, '\0', v) != NULL)
            return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (bad 'intent' line)", path);
        if ((c->intent_path = strndup(p, v)) == NULL)
            return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", path);
        p += v + 1;
    }
    const size_t covered = (size_t)(p - text);
    unsigned got;
    char hex[9];
    if (!parse_word(&p, end, "crc32c ") || end - p != 9 || p[8] != '\n')
        return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (bad or missing 'crc32c' line)",
                          path);
    memcpy(hex, p, 8);
    hex[8] = '\0';
    for (int i = 0; i < 8; i++)
        if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
            return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (bad 'crc32c' value)", path);
    sscanf(hex, "%x", &got);
    if (got != crc32c(0, text, covered))
        return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (CRC mismatch)", path);
    /* Only now is the version trustworthy. */
    if (version != 1 && version != 2)
        return pq_err_set(err, version > 2 ? PQ_EINVAL : PQ_EPARSE, "spool %s: checkpoint "
                          "format version %" PRIu64 " is not this parqd's (1 or 2)", path,
                          version);
    if (version == 1 && is_v2(c))
        return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (format 2 lines in a format 1 "
                          "checkpoint)", path);
    if (c->committed == 0 || c->committed >= SP_SEQ_MAX ||
        (c->intent_path != NULL &&
         (c->intent_end < c->committed || c->intent_end >= SP_SEQ_MAX)))
        return pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (seqs out of order)", path);
    return PQ_OK;
}

int sp_ckpt_read(const char *dir, sp_ckpt *c, bool *found, pq_err *err)
{
    memset(c, 0, sizeof *c);
    *found = false;
    char *path = join(dir, SP_CKPT_NAME);
    char *text = malloc(CKPT_MAX);
    int rc = PQ_OK, fd = -1;
    if (path == NULL || text == NULL) {
        rc = pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", dir);
        goto out;
    }
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        if (errno != ENOENT)
            rc = pq_err_set(err, PQ_EIO, "spool %s: cannot open: %s", path, strerror(errno));
        goto out;
    }
    size_t n = 0, cap = CKPT_MAX;
    for (;;) {
        if (n == cap && cap < CKPT_FILE_MAX) {
            char *t = realloc(text, cap * 2);
            if (t == NULL) {
                rc = pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", dir);
                goto out;
            }
            text = t;
            cap *= 2;
        }
        ssize_t r = read(fd, text + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = pq_err_set(err, PQ_EIO, "spool %s: read failed: %s", path, strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        if ((n += (size_t)r) == CKPT_FILE_MAX) {
            rc = pq_err_set(err, PQ_EPARSE, "spool %s: corrupt (over %d bytes)", path,
                            CKPT_FILE_MAX);
            goto out;
        }
    }
    *found = true;
    rc = parse(text, n, path, c, err);
out:
    if (rc != 0)
        sp_ckpt_free(c);
    if (fd >= 0)
        close(fd);
    free(text);
    free(path);
    return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int sp_ckpt_write(const char *dir, const sp_ckpt *c, const sp_ckpt_hook *hook, pq_err *err)
{
    const size_t plen = c->intent_path ? strlen(c->intent_path) : 0;
    const size_t klen = c->intent_key ? strlen(c->intent_key) : 0;
    size_t cap = plen + klen + 256;
    for (size_t i = 0; i < c->n_ranges; i++)
        cap += strlen(c->ranges[i].key) + 64;
    char *text = malloc(cap);
    char *tmp = join(dir, SP_CKPT_TMP), *path = join(dir, SP_CKPT_NAME);
    int rc = PQ_OK, e;
    if (text == NULL || tmp == NULL || path == NULL) {
        rc = pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", dir);
        goto out;
    }
    int n = sprintf(text, CKPT_HEAD "%d\ncommitted %" PRIu64 "\n", is_v2(c) ? 2 : 1,
                    c->committed);
    if (is_v2(c))
        n += sprintf(text + n, "dead_letters %" PRIu64 "\n", c->dl_done);
    for (size_t i = 0; i < c->n_ranges; i++) {
        const sp_range *r = &c->ranges[i];
        size_t kl = strlen(r->key);
        n += sprintf(text + n, "range %" PRIu64 " %" PRIu64 " %zu ", r->first, r->end, kl);
        memcpy(text + n, r->key, kl);
        n += (int)kl;
        text[n++] = '\n';
    }
    if (c->intent_path != NULL && c->intent_key != NULL) {
        n += sprintf(text + n, "intent_range %" PRIu64 " %" PRIu64 " %zu ", c->intent_first,
                     c->intent_end, klen);
        memcpy(text + n, c->intent_key, klen);
        n += (int)klen;
        n += sprintf(text + n, " %zu ", plen);
        memcpy(text + n, c->intent_path, plen);
        n += (int)plen;
        text[n++] = '\n';
    } else if (c->intent_path != NULL) {
        n += sprintf(text + n, "intent %" PRIu64 " %zu ", c->intent_end, plen);
        memcpy(text + n, c->intent_path, plen);
        n += (int)plen;
        text[n++] = '\n';
    }
    n += sprintf(text + n, "crc32c %08" PRIx32 "\n", crc32c(0, text, (size_t)n));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = pq_err_set(err, PQ_EIO, "spool %s: cannot create: %s", tmp, strerror(errno));
        goto out;
    }
    if ((e = write_all(fd, text, (size_t)n)) == 0 && hook != NULL && hook->before_fsync != NULL)
        hook->before_fsync(hook->user);
    if (e != 0 || (fsync(fd) != 0 && (e = errno) != 0)) {
        close(fd);
        unlink(tmp);
        rc = pq_err_set(err, PQ_EIO, "spool %s: write failed: %s", tmp, strerror(e));
        goto out;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        rc = pq_err_set(err, PQ_EIO, "spool %s: cannot replace the checkpoint: %s", path,
                        strerror(e));
        goto out;
    }
    rc = sp_fsync_dir(dir, err);
out:
    free(text);
    free(tmp);
    free(path);
    return rc;
}
