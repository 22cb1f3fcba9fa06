/* spool.c - the spool's write side (spool.h): buffering records, writing
 * them to segment files, rolling, syncing, and the checkpoint watermark
 * that trims them. sp_open is in spool_open.c, the reader in
 * spool_reader.c, the format checks in spool_scan.c, the checkpoint file
 * in spool_ckpt.c.
 *
 * Thread: the loop thread only, and no locks: nothing else touches an
 * sp_spool (a reader copies the directory name and opens its own files).
 *
 * On-disk format, version 1. Integers are little-endian.
 *
 * Segment file "<seq of its first record, 20 decimal digits>.spool":
 *   offset  size  field
 *   0       8     magic "PQSPOOL\0"
 *   8       4     u32 format version, 1
 *   12      8     u64 first seq (equals the name and the first record's seq)
 *   20      4     u32 CRC32C of bytes 0..19
 *   24            records, back to back, to the end of the file
 *
 * Record, 8 + L bytes:
 *   0       4     u32 L, the length of bytes 8 .. 8+L: 17 + S + line length,
 *                 so 17 <= L <= 17 + 255 + 1 GiB
 *   4       4     u32 CRC32C of bytes 0..3 (L) followed by bytes 8 .. 8+L
 *   8       8     u64 seq: the header's first seq, then +1 per record
 *   16      8     i64 ingest time, microseconds since the Unix epoch
 *   24      1     u8 S, the source's length (longer sources are cut to 255)
 *   25      S     source bytes ("tcp:10.0.0.5:51234")
 *   25+S    L-17-S the line's bytes as received (no newline)
 *
 * The CRC covers the length, so a flipped length bit that still lands on
 * a plausible boundary is caught. Records never span segments: a flush
 * that finds the segment at segment_bytes or more starts a new one, so a
 * segment ends at most one flush past the limit. A new segment's header
 * goes out in the same write(2) as its first records (the buffer keeps 24
 * spare bytes in front for it), so a segment without records exists only
 * after a crash mid-write. */
#include "spool_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"

/* Tests replace these to simulate a full disk or a failing device
 * (tests/unit/daemon/durability/test_spool_faults.c). */
#ifndef SP_WRITE
#define SP_WRITE write
#endif
#ifndef SP_FTRUNCATE
#define SP_FTRUNCATE ftruncate
#endif
#ifndef SP_FDATASYNC
#define SP_FDATASYNC fdatasync
#endif

int sp_segs_push(sp_spool *s, uint64_t first, uint64_t bytes, pq_err *err)
{
    if (s->nsegs == s->segs_cap) {
        size_t cap = s->segs_cap ? s->segs_cap * 2 : 16;
        sp_seg *v = realloc(s->segs, cap * sizeof *v);
        if (v == NULL)
            return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
        s->segs = v;
        s->segs_cap = cap;
    }
    s->segs[s->nsegs++] = (sp_seg){.first = first, .bytes = bytes};
    return PQ_OK;
}

void sp_close(sp_spool *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nunsynced; i++)
        close(s->unsynced[i].fd);
    if (s->fd >= 0)
        close(s->fd);
    pq_buf_free(&s->buf);
    sp_ckpt_free(&s->ckpt);
    free(s->segs);
    free(s->path);
    free(s->dir);
    free(s);
}

/* ---- append ---------------------------------------------------------------- */

/* The hot path: one reserve (amortised: the buffer is reused across
 * flushes), two copies, one CRC pass over the record. */
int sp_append(sp_spool *s, int64_t ingest_us, const char *source, size_t source_len,
              const void *line, size_t len, uint64_t *seq, pq_err *err)
{
    if (len > SP_LINE_MAX)
        return pq_err_set(err, PQ_EINVAL, "spool %s: a %zu-byte line exceeds the spool's "
                          "limit of %zu bytes", s->dir, len, SP_LINE_MAX);
    if (source_len > SP_SOURCE_MAX)
        source_len = SP_SOURCE_MAX;
    const size_t body = SP_BODY_FIXED + source_len + len;
    if (pq_buf_reserve(&s->buf, SP_REC_PREFIX + body) != 0)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory buffering a %zu-byte "
                          "line (%zu bytes pending)", s->dir, len, sp_pending_bytes(s));
    uint8_t *p = s->buf.data + s->buf.len;
    sp_put32(p, (uint32_t)body);
    sp_put64(p + 8, s->next_seq);
    sp_put64(p + 16, (uint64_t)ingest_us);
    p[24] = (uint8_t)source_len;
    if (source_len > 0)
        memcpy(p + 25, source, source_len);
    if (len > 0)
        memcpy(p + 25 + source_len, line, len);
    sp_put32(p + 4, crc32c(crc32c(0, p, 4), p + SP_REC_PREFIX, body));
    s->buf.len += SP_REC_PREFIX + body;
    if (seq != NULL)
        *seq = s->next_seq;
    s->next_seq++;
    return PQ_OK;
}

size_t sp_pending_bytes(const sp_spool *s)
{
    return s->buf.len - SP_HDR_SIZE;
}

uint64_t sp_next_seq(const sp_spool *s) { return s->next_seq; }
uint64_t sp_flushed_seq(const sp_spool *s) { return s->flushed_seq; }
uint64_t sp_committed(const sp_spool *s) { return s->committed; }
uint64_t sp_disk_bytes(const sp_spool *s) { return s->disk_bytes; }

/* ---- flush and sync ----------------------------------------------------------- */

static int sync_unsynced(sp_spool *s, size_t i, pq_err *err)
{
    if (SP_FDATASYNC(s->unsynced[i].fd) != 0) {
        /* Keep the entry: the caller may retry (though after a failed
         * fdatasync the kernel may already have dropped the pages). */
        sp_seg_path(s->path, s->dir, s->unsynced[i].first);
        return pq_err_set(err, PQ_EIO, "spool %s: fdatasync failed: %s", s->path,
                          strerror(errno));
    }
    close(s->unsynced[i].fd);
    memmove(s->unsynced + i, s->unsynced + i + 1, (s->nunsynced - i - 1) * sizeof *s->unsynced);
    s->nunsynced--;
    return PQ_OK;
}

/* Retires the current segment (kept open until sp_sync if it has unsynced
 * data) and creates the next one, named for the first buffered record. */
static int segment_start(sp_spool *s, pq_err *err)
{
    int rc;
    if (s->fd >= 0) {
        /* Bounded fds: with sync: none nobody calls sp_sync, so past
         * SP_UNSYNCED_MAX segments the oldest is synced here. */
        if (s->dirty && s->nunsynced == SP_UNSYNCED_MAX && (rc = sync_unsynced(s, 0, err)) != 0)
            return rc;
        if (s->dirty)
            s->unsynced[s->nunsynced++] = (sp_unsynced){s->fd, s->segs[s->nsegs - 1].first};
        else
            close(s->fd);
        s->fd = -1;
        s->dirty = false;
    }
    if ((rc = sp_segs_push(s, s->flushed_seq, 0, err)) != 0)
        return rc;
    sp_seg_path(s->path, s->dir, s->flushed_seq);
    s->fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (s->fd < 0) {
        s->nsegs--;
        return pq_err_set(err, PQ_EIO, "spool %s: cannot create segment: %s", s->path,
                          strerror(errno));
    }
    /* The new name must survive a crash, or so would none of its records. */
    if ((rc = sp_fsync_dir(s->dir, err)) != 0) {
        close(s->fd);
        unlink(s->path);
        s->fd = -1;
        s->nsegs--;
        return rc;
    }
    s->roll = false;
    return PQ_OK;
}

static int write_all(int fd, const uint8_t *p, size_t n, size_t *done)
{
    *done = 0;
    while (n > 0) {
        ssize_t w = SP_WRITE(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t)w;
        *done += (size_t)w;
    }
    return 0;
}

/* Undoes a failed write so the file holds whole records only and the
 * buffer (untouched) can be written again: a new segment is removed, an
 * existing one cut back to its old size. If the cut fails, the partial
 * record stays and the next flush starts a new segment after it (sp_open
 * and the reader then report it as a bad record in a middle segment). */
static int flush_failed(sp_spool *s, bool fresh, uint64_t before, size_t done, int e,
                        pq_err *err)
{
    sp_seg *seg = &s->segs[s->nsegs - 1];
    sp_seg_path(s->path, s->dir, seg->first);
    const size_t n = sp_pending_bytes(s) + (fresh ? SP_HDR_SIZE : 0);
    const uint64_t records = s->next_seq - s->flushed_seq;
    int cut = 0;
    if (fresh) {
        close(s->fd);
        s->fd = -1;
        s->nsegs--;
        if (unlink(s->path) != 0 && errno != ENOENT)
            cut = errno;
    } else if (done > 0 && SP_FTRUNCATE(s->fd, (off_t)before) != 0) {
        cut = errno;
        seg->bytes += done;
        s->disk_bytes += done;
        s->roll = true;
    }
    if (cut != 0)
        return pq_err_set(err, PQ_EIO, "spool %s: writing %zu bytes at offset %" PRIu64
                          " failed: %s; removing the partial write failed too (%s); %" PRIu64
                          " records kept for the next flush, in a new segment", s->path, n,
                          before, strerror(e), strerror(cut), records);
    return pq_err_set(err, PQ_EIO, "spool %s: writing %zu bytes at offset %" PRIu64
                      " failed: %s; %" PRIu64 " records kept for the next flush", s->path, n,
                      before, strerror(e), records);
}

int sp_flush(sp_spool *s, pq_err *err)
{
    if (sp_pending_bytes(s) == 0)
        return PQ_OK;
    const bool fresh = s->fd < 0 || s->roll || s->segs[s->nsegs - 1].bytes >= s->segment_bytes;
    int rc;
    if (fresh && (rc = segment_start(s, err)) != 0)
        return rc;
    const uint8_t *p = s->buf.data + SP_HDR_SIZE;
    size_t n = sp_pending_bytes(s), done;
    if (fresh) {
        sp_header_encode(s->buf.data, s->flushed_seq);
        p = s->buf.data;
        n += SP_HDR_SIZE;
    }
    sp_seg *seg = &s->segs[s->nsegs - 1];
    int e = write_all(s->fd, p, n, &done);
    if (e != 0)
        return flush_failed(s, fresh, seg->bytes, done, e, err);
    seg->bytes += n;
    s->disk_bytes += n;
    s->dirty = true;
    s->flushed_seq = s->next_seq;
    s->buf.len = SP_HDR_SIZE;
    return PQ_OK;
}

int sp_sync(sp_spool *s, pq_err *err)
{
    int rc;
    while (s->nunsynced > 0)
        if ((rc = sync_unsynced(s, 0, err)) != 0)
            return rc;
    if (s->fd >= 0 && s->dirty) {
        if (SP_FDATASYNC(s->fd) != 0) {
            sp_seg_path(s->path, s->dir, s->segs[s->nsegs - 1].first);
            return pq_err_set(err, PQ_EIO, "spool %s: fdatasync failed: %s", s->path,
                              strerror(errno));
        }
        s->dirty = false;
    }
    return PQ_OK;
}

/* ---- checkpoint and trim --------------------------------------------------------- */

int sp_trim(sp_spool *s, uint64_t end, pq_err *err)
{
    size_t k = 0;
    int rc = PQ_OK;
    for (; k < s->nsegs; k++) {
        /* Every record of segment k is below the next one's first seq; the
         * last one's below flushed_seq. */
        const uint64_t bound = k + 1 < s->nsegs ? s->segs[k + 1].first : s->flushed_seq;
        if (bound > end)
            break;
        sp_seg_path(s->path, s->dir, s->segs[k].first);
        if (unlink(s->path) != 0 && errno != ENOENT) {
            rc = pq_err_set(err, PQ_EIO, "spool %s: cannot remove a committed segment: %s",
                            s->path, strerror(errno));
            break;
        }
        if (k + 1 == s->nsegs && s->fd >= 0) {
            /* The current segment: the next flush starts a new one. */
            close(s->fd);
            s->fd = -1;
            s->dirty = false;
        }
        s->disk_bytes -= s->segs[k].bytes;
    }
    /* No directory fsync: the checkpoint is durable first, and a removal
     * lost to a crash is redone by sp_open. */
    if (k > 0) {
        memmove(s->segs, s->segs + k, (s->nsegs - k) * sizeof *s->segs);
        s->nsegs -= k;
    }
    return rc;
}

static int check_end(const sp_spool *s, const char *what, uint64_t end, pq_err *err)
{
    if (end < s->committed || end > s->next_seq)
        return pq_err_set(err, PQ_EINVAL, "spool %s: %s at seq %" PRIu64 " is outside the "
                          "committed watermark %" PRIu64 " .. next seq %" PRIu64, s->dir,
                          what, end, s->committed, s->next_seq);
    return PQ_OK;
}

int sp_checkpoint_intent(sp_spool *s, const char *final_path, uint64_t end, pq_err *err)
{
    int rc = check_end(s, "intent", end, err);
    if (rc != 0)
        return rc;
    if (final_path == NULL || final_path[0] == '\0')
        return pq_err_set(err, PQ_EINVAL, "spool %s: intent without a file name", s->dir);
    char *path = strdup(final_path);
    if (path == NULL)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
    sp_ckpt c = {.committed = s->committed, .intent_end = end, .intent_path = path};
    if ((rc = sp_ckpt_write(s->dir, &c, err)) != 0) {
        free(path);
        return rc;
    }
    sp_ckpt_free(&s->ckpt);
    s->ckpt = c;
    return PQ_OK;
}

int sp_checkpoint_commit(sp_spool *s, uint64_t end, pq_err *err)
{
    int rc = check_end(s, "commit", end, err);
    if (rc != 0)
        return rc;
    const sp_ckpt c = {.committed = end};
    if ((rc = sp_ckpt_write(s->dir, &c, err)) != 0)
        return rc;
    sp_ckpt_free(&s->ckpt);
    s->ckpt = c;
    s->committed = end;
    return sp_trim(s, end, err);
}
