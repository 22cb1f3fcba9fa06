/* spool_scan.c - reading the spool's on-disk format (spool.c documents it
 * byte by byte): segment names and listing, the segment header, and the
 * scanner that checks records (length bounds, CRC32C, seq continuity).
 * sp_open uses it to find and cut torn tails, the reader to replay.
 *
 * Thread: any one thread per scanner; nothing shared. */
#include "spool_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"

/* ---- names and directories --------------------------------------------- */

void sp_seg_path(char *path, const char *dir, uint64_t first)
{
    /* The caller sized path for dir + '/' + SP_NAME_LEN + NUL. */
    size_t d = strlen(dir);
    memcpy(path, dir, d);
    path[d] = '/';
    char *p = path + d + 1 + 20;
    memcpy(p, ".spool", 7);
    for (int i = 0; i < 20; i++) {
        *--p = (char)('0' + first % 10);
        first /= 10;
    }
}

bool sp_seg_parse_name(const char *name, uint64_t *first)
{
    if (strlen(name) != SP_NAME_LEN || strcmp(name + 20, ".spool") != 0)
        return false;
    uint64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9')
            return false;
        const uint64_t d = (uint64_t)(name[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *first = v;
    return true;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int sp_seg_list(const char *dir, uint64_t **firsts, size_t *n, pq_err *err)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return pq_err_set(err, PQ_EIO, "spool %s: cannot list: %s", dir, strerror(errno));
    size_t cap = 0, k = 0;
    uint64_t *v = NULL;
    int rc = PQ_OK;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        uint64_t first;
        if (!sp_seg_parse_name(e->d_name, &first))
            continue;
        if (k == cap) {
            cap = cap ? cap * 2 : 16;
            uint64_t *nv = realloc(v, cap * sizeof *v);
            if (nv == NULL) {
                rc = pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory listing segments", dir);
                goto out;
            }
            v = nv;
        }
        v[k++] = first;
    }
    if (errno != 0)
        rc = pq_err_set(err, PQ_EIO, "spool %s: cannot list: %s", dir, strerror(errno));
out:
    closedir(d);
    if (rc != 0) {
        free(v);
        return rc;
    }
    if (k > 1)
        qsort(v, k, sizeof *v, cmp_u64);
    free(*firsts);
    *firsts = v;
    *n = k;
    return PQ_OK;
}

int sp_fsync_dir(const char *dir, pq_err *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    /* EINVAL: a file system that cannot sync directories (nothing to do). */
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return pq_err_set(err, PQ_EIO, "spool %s: directory fsync failed: %s", dir, strerror(e));
    }
    close(fd);
    return PQ_OK;
}

void sp_header_encode(uint8_t *out, uint64_t first)
{
    memcpy(out, SP_MAGIC, 8);
    sp_put32(out + 8, SP_VERSION);
    sp_put64(out + 12, first);
    sp_put32(out + 20, crc32c(0, out, 20));
}

/* ---- the scanner --------------------------------------------------------- */

int sp_scan_init(sp_scan *sc, const char *dir, pq_err *err)
{
    memset(sc, 0, sizeof *sc);
    sc->fd = -1;
    sc->dir = dir;
    pq_buf_init(&sc->buf);
    sc->path = malloc(strlen(dir) + SP_NAME_LEN + 2);
    if (sc->path == NULL)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", dir);
    sc->path[0] = '\0';
    return PQ_OK;
}

void sp_scan_close(sp_scan *sc)
{
    if (sc->fd >= 0)
        close(sc->fd);
    sc->fd = -1;
}

void sp_scan_free(sp_scan *sc)
{
    sp_scan_close(sc);
    pq_buf_free(&sc->buf);
    free(sc->path);
    sc->path = NULL;
}

/* Makes the buffer hold `need` bytes from sc->off: 1, 0 if the file ends
 * first, or PQ_EIO. Reads whole chunks with pread, so replay costs one
 * syscall per SP_CHUNK, not per record. */
static int fill(sp_scan *sc, size_t need, pq_err *err)
{
    size_t start = (size_t)(sc->off - sc->buf_off);
    size_t have = sc->buf.len - start;
    if (have >= need)
        return 1;
    if (start > 0) {
        memmove(sc->buf.data, sc->buf.data + start, have);
        sc->buf.len = have;
        sc->buf_off = sc->off;
    }
    if (need > SP_CHUNK) {
        /* A length read from the file: check it against the file's size
         * before allocating for it (garbage can claim up to 1 GiB). */
        struct stat st;
        if (fstat(sc->fd, &st) != 0)
            return pq_err_set(err, PQ_EIO, "spool %s: stat failed: %s", sc->path,
                              strerror(errno));
        if ((uint64_t)st.st_size < sc->off + need)
            return 0;
    }
    const size_t want = need > SP_CHUNK ? need : SP_CHUNK;
    if (sc->buf.cap < want && pq_buf_reserve(&sc->buf, want - sc->buf.len) != 0)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory for a %zu-byte record",
                          sc->path, need);
    while (sc->buf.len < need) {
        ssize_t r = pread(sc->fd, sc->buf.data + sc->buf.len, sc->buf.cap - sc->buf.len,
                          (off_t)(sc->buf_off + sc->buf.len));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return pq_err_set(err, PQ_EIO, "spool %s: read at offset %" PRIu64 " failed: %s",
                              sc->path, sc->buf_off + sc->buf.len, strerror(errno));
        if (r == 0)
            return 0;
        sc->buf.len += (size_t)r;
    }
    return 1;
}

static size_t have(const sp_scan *sc)
{
    return sc->buf.len - (size_t)(sc->off - sc->buf_off);
}

int sp_scan_open(sp_scan *sc, uint64_t first, pq_err *err)
{
    sp_scan_close(sc);
    sp_seg_path(sc->path, sc->dir, first);
    sc->buf.len = 0;
    sc->buf_off = sc->off = 0;
    sc->first = sc->expect = first;
    sc->fd = open(sc->path, O_RDONLY | O_CLOEXEC);
    if (sc->fd < 0 && errno == ENOENT)
        return SP_GONE;
    if (sc->fd < 0)
        return pq_err_set(err, PQ_EIO, "spool %s: cannot open: %s", sc->path, strerror(errno));
    int r = fill(sc, SP_HDR_SIZE, err);
    if (r < 0)
        return r;
    const uint8_t *h = sc->buf.data;
    if (r == 0)
        return pq_err_set(err, SP_TORN, "spool %s: header cut short (%zu of %u bytes)",
                          sc->path, have(sc), SP_HDR_SIZE);
    if (memcmp(h, SP_MAGIC, 8) != 0)
        return pq_err_set(err, SP_BAD, "spool %s: not a spool segment (bad magic)", sc->path);
    if (sp_get32(h + 20) != crc32c(0, h, 20))
        return pq_err_set(err, SP_BAD, "spool %s: header CRC mismatch", sc->path);
    const uint32_t version = sp_get32(h + 8);
    if (version > SP_VERSION)
        return pq_err_set(err, PQ_EINVAL, "spool %s: segment format version %" PRIu32
                          " is newer than this parqd's (%u)", sc->path, version, SP_VERSION);
    if (version != SP_VERSION)
        return pq_err_set(err, SP_BAD, "spool %s: unknown format version %" PRIu32, sc->path,
                          version);
    if (first == 0 || first >= SP_SEQ_MAX)
        return pq_err_set(err, SP_BAD, "spool %s: first seq %" PRIu64 " out of range", sc->path,
                          first);
    if (sp_get64(h + 12) != first)
        return pq_err_set(err, SP_BAD, "spool %s: header says the first seq is %" PRIu64
                          ", the file name %" PRIu64, sc->path, sp_get64(h + 12), first);
    sc->off = SP_HDR_SIZE;
    return PQ_OK;
}

int sp_scan_next(sp_scan *sc, sp_record *rec, pq_err *err)
{
    int r = fill(sc, SP_REC_PREFIX, err);
    if (r < 0)
        return r;
    if (r == 0 && have(sc) == 0)
        return SP_END;
    if (r == 0)
        return pq_err_set(err, SP_TORN, "spool %s: offset %" PRIu64 ": record header cut short "
                          "(%zu of %u bytes)", sc->path, sc->off, have(sc), SP_REC_PREFIX);
    const uint8_t *p = sc->buf.data + (sc->off - sc->buf_off);
    const uint32_t len = sp_get32(p);
    if (len < SP_BODY_FIXED || len > SP_BODY_MAX)
        return pq_err_set(err, SP_BAD, "spool %s: offset %" PRIu64 ": record length %" PRIu32
                          " out of bounds", sc->path, sc->off, len);
    if ((r = fill(sc, SP_REC_PREFIX + (size_t)len, err)) < 0)
        return r;
    if (r == 0)
        return pq_err_set(err, SP_TORN, "spool %s: offset %" PRIu64 ": record of %" PRIu32
                          " bytes cut short (%zu bytes left)", sc->path, sc->off,
                          SP_REC_PREFIX + len, have(sc));
    p = sc->buf.data + (sc->off - sc->buf_off);
    if (sp_get32(p + 4) != crc32c(crc32c(0, p, 4), p + SP_REC_PREFIX, len))
        return pq_err_set(err, SP_BAD, "spool %s: offset %" PRIu64 ": record CRC mismatch",
                          sc->path, sc->off);
    const uint64_t seq = sp_get64(p + 8);
    if (seq != sc->expect || seq >= SP_SEQ_MAX)
        return pq_err_set(err, SP_BAD, "spool %s: offset %" PRIu64 ": seq %" PRIu64
                          " where %" PRIu64 " was expected", sc->path, sc->off, seq, sc->expect);
    const uint8_t slen = p[24];
    if (SP_BODY_FIXED + (uint32_t)slen > len)
        return pq_err_set(err, SP_BAD, "spool %s: offset %" PRIu64 ": source length %u "
                          "exceeds the record", sc->path, sc->off, slen);
    rec->seq = seq;
    rec->ingest_us = (int64_t)sp_get64(p + 16);
    rec->source = (const char *)p + 25;
    rec->source_len = slen;
    rec->line = (const char *)p + 25 + slen;
    rec->len = len - SP_BODY_FIXED - slen;
    sc->off += SP_REC_PREFIX + len;
    sc->expect++;
    return SP_REC;
}
