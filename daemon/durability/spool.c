/* spool.c - the spool's write side (spool.h): buffering records, writing
 * them to segment files, rolling, syncing, and the checkpoint watermark
 * that trims them. sp_open is in spool_open.c, the reader in
 * spool_reader.c, the format checks in spool_scan.c, the checkpoint file
 * in spool_ckpt.c, the background sync in spool_sync.c.
 *
 * Threads (spool.h, spool_int.h): the appender (the loop thread) runs
 * sp_append, sp_flush and sp_sync; the publisher (a pipeline worker) runs
 * sp_checkpoint_intent / _commit and the trim. The appender takes seg_mu
 * only around in-memory updates of the segment list, never across a
 * syscall, so a checkpoint's fsync or a trim's unlinks never hold up an
 * append. (A reader copies the directory name and opens its own files.)
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

/* seg_mu held, or the spool not yet shared (sp_open). */
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
    sp_sync_stop(s);
    sp_reap_stop(s);
    for (size_t i = 0; i < s->nunsynced; i++)
        close(s->unsynced[i].fd);
    if (s->fd >= 0)
        close(s->fd);
    if (s->lock_fd >= 0)
        close(s->lock_fd);       /* releases the flock */
    pq_buf_free(&s->buf);
    sp_ckpt_free(&s->ckpt);
    dm_mutex_destroy(&s->seg_mu);
    dm_mutex_destroy(&s->ckpt_mu);
    dm_mutex_destroy(&s->sync_mu);
    dm_mutex_destroy(&s->reap_mu);
    free(s->reap_q);
    free(s->reap_path);
    free(s->segs);
    free(s->path);
    free(s->trim_path);
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

/* The appender writes flushed_seq (under seg_mu) and may read it without;
 * these may be called from any thread, so they lock. */
static uint64_t locked_get(const sp_spool *s, const uint64_t *field)
{
    sp_spool *m = (sp_spool *)s;
    dm_mutex_lock(&m->seg_mu);
    uint64_t v = *field;
    dm_mutex_unlock(&m->seg_mu);
    return v;
}

uint64_t sp_flushed_seq(const sp_spool *s) { return locked_get(s, &s->flushed_seq); }
uint64_t sp_committed(const sp_spool *s) { return locked_get(s, &s->committed); }
uint64_t sp_disk_bytes(const sp_spool *s) { return locked_get(s, &s->disk_bytes); }

/* ---- flush and sync (appender) ------------------------------------------------ */

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

/* The last segment entry's first seq and size (seg_mu held). The
 * publisher only ever removes entries from the front and never the last
 * one, so the appender's tail entry is stable between its own updates. */
static sp_seg *tail_seg(sp_spool *s)
{
    dm_mutex_assert_held(&s->seg_mu);
    return s->nsegs > 0 ? &s->segs[s->nsegs - 1] : NULL;
}

/* Drops the tail entry again after its file could not be created. */
static void pop_tail(sp_spool *s)
{
    dm_mutex_lock(&s->seg_mu);
    s->nsegs--;
    dm_mutex_unlock(&s->seg_mu);
}

/* Retires the current segment (kept open until sp_sync if it has unsynced
 * data); a fully committed one is removed by the publisher's next trim. */
static void retire_current(sp_spool *s)
{
    if (s->fd < 0)
        return;
    /* Bounded fds. The table fills only when nobody calls sp_sync
     * (sync: none: one flush never spans segments, and batch or always
     * sync at least once per segment), and then nobody asked for the
     * oldest segment to be durable: it is closed, not synced, so an
     * append never waits for an fsync that spool.sync did not ask for. */
    if (s->dirty && s->nunsynced == SP_UNSYNCED_MAX) {
        close(s->unsynced[0].fd);
        memmove(s->unsynced, s->unsynced + 1, (s->nunsynced - 1) * sizeof *s->unsynced);
        s->nunsynced--;
    }
    if (s->dirty)
        s->unsynced[s->nunsynced++] = (sp_unsynced){s->fd, s->cur_first};
    else
        close(s->fd);
    s->fd = -1;
    s->dirty = false;
}

/* Creates the next segment, named for the first buffered record. */
static int segment_start(sp_spool *s, pq_err *err)
{
    retire_current(s);
    dm_mutex_lock(&s->seg_mu);
    int rc = sp_segs_push(s, s->flushed_seq, 0, err);
    dm_mutex_unlock(&s->seg_mu);
    if (rc != 0)
        return rc;
    sp_seg_path(s->path, s->dir, s->flushed_seq);
    s->fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (s->fd < 0) {
        pop_tail(s);
        return pq_err_set(err, PQ_EIO, "spool %s: cannot create segment: %s", s->path,
                          strerror(errno));
    }
    /* The new name must survive a crash, or so would none of its records:
     * the next sp_sync fsyncs the directory too. */
    s->dir_dirty = true;
    s->cur_first = s->flushed_seq;
    s->cur_bytes = 0;
    dm_mutex_lock(&s->seg_mu);
    s->roll = false;
    dm_mutex_unlock(&s->seg_mu);
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

/* n bytes landed in the current segment; flushed: every buffered record
 * is now in it. */
static void account_write(sp_spool *s, uint64_t n, bool flushed, bool roll)
{
    s->cur_bytes += n;
    dm_mutex_lock(&s->seg_mu);
    tail_seg(s)->bytes = s->cur_bytes;
    s->disk_bytes += n;
    if (flushed)
        s->flushed_seq = s->next_seq;
    if (roll)
        s->roll = true;
    dm_mutex_unlock(&s->seg_mu);
}

/* Undoes a failed write so the file holds whole records only and the
 * buffer (untouched) can be written again: a new segment is removed, an
 * existing one cut back to its old size. If the cut fails, the partial
 * record stays and the next flush starts a new segment after it (sp_open
 * and the reader then report it as a bad record in a middle segment). */
static int flush_failed(sp_spool *s, bool fresh, size_t done, int e, pq_err *err)
{
    const uint64_t before = s->cur_bytes;
    sp_seg_path(s->path, s->dir, s->cur_first);
    const size_t n = sp_pending_bytes(s) + (fresh ? SP_HDR_SIZE : 0);
    const uint64_t records = s->next_seq - s->flushed_seq;
    int cut = 0;
    if (fresh) {
        close(s->fd);
        s->fd = -1;
        pop_tail(s);
        if (unlink(s->path) != 0 && errno != ENOENT)
            cut = errno;
    } else if (done > 0 && SP_FTRUNCATE(s->fd, (off_t)before) != 0) {
        cut = errno;
        account_write(s, done, false, true);
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
    dm_mutex_lock(&s->seg_mu);
    const bool fresh = s->fd < 0 || s->roll || s->cur_bytes >= s->segment_bytes;
    dm_mutex_unlock(&s->seg_mu);
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
    int e = write_all(s->fd, p, n, &done);
    if (e != 0)
        return flush_failed(s, fresh, done, e, err);
    account_write(s, n, true, false);
    s->dirty = true;
    s->buf.len = SP_HDR_SIZE;
    return PQ_OK;
}

int sp_sync(sp_spool *s, pq_err *err)
{
    /* A background sync holds fds of records flushed before now. */
    int rc = sp_sync_wait(s, err);
    if (rc != 0)
        return rc;
    while (s->nunsynced > 0)
        if ((rc = sync_unsynced(s, 0, err)) != 0)
            return rc;
    if (s->dir_dirty) {
        if ((rc = sp_fsync_dir(s->dir, err)) != 0)
            return rc;
        s->dir_dirty = false;
    }
    if (s->fd >= 0 && s->dirty) {
        if (SP_FDATASYNC(s->fd) != 0) {
            sp_seg_path(s->path, s->dir, s->cur_first);
            return pq_err_set(err, PQ_EIO, "spool %s: fdatasync failed: %s", s->path,
                              strerror(errno));
        }
        s->dirty = false;
    }
    s->synced_seq = s->flushed_seq;
    return PQ_OK;
}

/* ---- checkpoint and trim (publisher) ---------------------------------------------- */

void sp_set_ckpt_hook(sp_spool *s, const sp_ckpt_hook *hook)
{
    s->hook = *hook;
}

/* The front segment if it may go: all its records are < end (the next
 * segment's first seq bounds them; the last one's, flushed_seq). With
 * keep_last the last segment stays, and when it is wholly below end the
 * appender is asked to roll so that the next trim can take it. */
static bool front_trimmable(sp_spool *s, uint64_t end, bool keep_last, sp_seg *front)
{
    dm_mutex_lock(&s->seg_mu);
    bool ok = false;
    if (s->nsegs > 1 && s->segs[1].first <= end) {
        *front = s->segs[0];
        ok = true;
    } else if (s->nsegs == 1 && s->flushed_seq <= end) {
        if (!keep_last) {
            *front = s->segs[0];
            ok = true;
        } else if (s->segs[0].first < s->flushed_seq) {
            s->roll = true;
        }
    }
    dm_mutex_unlock(&s->seg_mu);
    return ok;
}

int sp_trim(sp_spool *s, uint64_t end, bool keep_last, pq_err *err)
{
    sp_seg front;
    /* Only the trim removes entries, and only from the front, so the entry
     * peeked under the lock is still the front one after the unlink. */
    while (front_trimmable(s, end, keep_last, &front)) {
        sp_seg_path(s->trim_path, s->dir, front.first);
        if (!sp_reap_queue(s, front.first) && unlink(s->trim_path) != 0 && errno != ENOENT)
            return pq_err_set(err, PQ_EIO, "spool %s: cannot remove a committed segment: %s",
                              s->trim_path, strerror(errno));
        dm_mutex_lock(&s->seg_mu);
        memmove(s->segs, s->segs + 1, (s->nsegs - 1) * sizeof *s->segs);
        s->nsegs--;
        s->disk_bytes -= front.bytes;
        dm_mutex_unlock(&s->seg_mu);
    }
    /* No directory fsync: the checkpoint is durable first, and a removal
     * lost to a crash is redone by sp_open. */
    return PQ_OK;
}

static int copy_ranges(sp_spool *s, const sp_ckpt *src, uint64_t watermark, const char *key,
                       uint64_t first, uint64_t end, sp_ckpt *dst, pq_err *err);

/* The publisher may only name records the appender has flushed: the
 * pipeline never sees a line before its flush. */
static int check_end(sp_spool *s, const char *what, uint64_t end, pq_err *err)
{
    dm_mutex_lock(&s->seg_mu);
    const uint64_t committed = s->committed, flushed = s->flushed_seq;
    dm_mutex_unlock(&s->seg_mu);
    if (end < committed || end > flushed)
        return pq_err_set(err, PQ_EINVAL, "spool %s: %s at seq %" PRIu64 " is outside the "
                          "committed watermark %" PRIu64 " .. flushed seq %" PRIu64, s->dir,
                          what, end, committed, flushed);
    return PQ_OK;
}

static int checkpoint_intent(sp_spool *s, const char *final_path, uint64_t end, pq_err *err)
{
    int rc = check_end(s, "intent", end, err);
    if (rc != 0)
        return rc;
    if (final_path == NULL || final_path[0] == '\0')
        return pq_err_set(err, PQ_EINVAL, "spool %s: intent without a file name", s->dir);
    char *path = strdup(final_path);
    if (path == NULL)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
    sp_ckpt c = {.committed = s->ckpt.committed, .intent_end = end, .intent_path = path,
                 .dl_done = s->ckpt.dl_done};
    rc = copy_ranges(s, &s->ckpt, c.committed, NULL, 0, 0, &c, err);
    if (rc != 0 || (rc = sp_ckpt_write(s->dir, &c, &s->hook, err)) != 0) {
        sp_ckpt_free(&c);
        return rc;
    }
    sp_ckpt_free(&s->ckpt);
    s->ckpt = c;
    return PQ_OK;
}

int sp_checkpoint_intent(sp_spool *s, const char *final_path, uint64_t end, pq_err *err)
{
    dm_mutex_lock(&s->ckpt_mu);
    int rc = checkpoint_intent(s, final_path, end, err);
    dm_mutex_unlock(&s->ckpt_mu);
    return rc;
}

/* c (built by copy_ranges; rc its result) is written and becomes the
 * checkpoint; what lies below c->committed is then committed and trimmed.
 * On an error c is freed and the checkpoint stays as it was. ckpt_mu held. */
static int install_checkpoint(sp_spool *s, sp_ckpt *c, int rc, pq_err *err)
{
    dm_mutex_assert_held(&s->ckpt_mu);
    rc = rc ? rc : sp_ckpt_write(s->dir, c, &s->hook, err);
    if (rc != 0) {
        sp_ckpt_free(c);
        return rc;
    }
    sp_ckpt_free(&s->ckpt);
    s->ckpt = *c;
    dm_mutex_lock(&s->seg_mu);
    s->committed = s->ckpt.committed;
    dm_mutex_unlock(&s->seg_mu);
    return sp_trim(s, s->ckpt.committed, true, err);
}

static int checkpoint_commit(sp_spool *s, uint64_t end, pq_err *err)
{
    int rc = check_end(s, "commit", end, err);
    if (rc != 0)
        return rc;
    sp_ckpt c = {.committed = end, .dl_done = s->ckpt.dl_done};
    rc = copy_ranges(s, &s->ckpt, end, NULL, 0, 0, &c, err);
    return install_checkpoint(s, &c, rc, err);
}

int sp_checkpoint_commit(sp_spool *s, uint64_t end, pq_err *err)
{
    dm_mutex_lock(&s->ckpt_mu);
    int rc = checkpoint_commit(s, end, err);
    dm_mutex_unlock(&s->ckpt_mu);
    return rc;
}

/* ---- partitioned output (format 2) ------------------------------------------ */

/* Copies src's ranges that end above watermark into dst (ckpt_mu held),
 * and (key, first, end) when key is not NULL and end > watermark. */
static int copy_ranges(sp_spool *s, const sp_ckpt *src, uint64_t watermark, const char *key,
                       uint64_t first, uint64_t end, sp_ckpt *dst, pq_err *err)
{
    dm_mutex_assert_held(&s->ckpt_mu);
    size_t n = src->n_ranges + (key != NULL);
    dst->ranges = n ? calloc(n, sizeof *dst->ranges) : NULL;
    if (n > 0 && dst->ranges == NULL)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
    for (size_t i = 0; i <= src->n_ranges; i++) {
        const sp_range *r = i < src->n_ranges ? &src->ranges[i] : NULL;
        const sp_range add = {.first = first, .end = end, .key = (char *)key};
        if (r == NULL && key == NULL)
            break;
        if (r == NULL)
            r = &add;
        if (r->end <= watermark)
            continue;
        sp_range *d = &dst->ranges[dst->n_ranges];
        if ((d->key = strdup(r->key)) == NULL)
            return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
        d->first = r->first;
        d->end = r->end;
        dst->n_ranges++;
    }
    return PQ_OK;
}

static int check_range(sp_spool *s, const char *what, uint64_t first, uint64_t end, pq_err *err)
{
    dm_mutex_lock(&s->seg_mu);
    const uint64_t committed = s->committed, flushed = s->flushed_seq;
    dm_mutex_unlock(&s->seg_mu);
    if (first < committed || first >= end || end > flushed)
        return pq_err_set(err, PQ_EINVAL, "spool %s: %s of seqs [%" PRIu64 ", %" PRIu64 ") is "
                          "outside the committed watermark %" PRIu64 " .. flushed seq %" PRIu64,
                          s->dir, what, first, end, committed, flushed);
    return PQ_OK;
}

static int intent_range(sp_spool *s, const char *final_path, const char *key, uint64_t first,
                        uint64_t end, pq_err *err)
{
    int rc = check_range(s, "intent", first, end, err);
    if (rc != 0)
        return rc;
    if (final_path == NULL || final_path[0] == '\0' || key == NULL)
        return pq_err_set(err, PQ_EINVAL, "spool %s: intent without a file name or key", s->dir);
    sp_ckpt c = {.committed = s->ckpt.committed, .dl_done = s->ckpt.dl_done,
                 .intent_first = first, .intent_end = end};
    if ((c.intent_path = strdup(final_path)) == NULL || (c.intent_key = strdup(key)) == NULL)
        rc = pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
    rc = rc ? rc : copy_ranges(s, &s->ckpt, c.committed, NULL, 0, 0, &c, err);
    rc = rc ? rc : sp_ckpt_write(s->dir, &c, &s->hook, err);
    if (rc != 0) {
        sp_ckpt_free(&c);
        return rc;
    }
    sp_ckpt_free(&s->ckpt);
    s->ckpt = c;
    return PQ_OK;
}

int sp_checkpoint_intent_range(sp_spool *s, const char *final_path, const char *key,
                               uint64_t first, uint64_t end, pq_err *err)
{
    dm_mutex_lock(&s->ckpt_mu);
    int rc = intent_range(s, final_path, key, first, end, err);
    dm_mutex_unlock(&s->ckpt_mu);
    return rc;
}

static int commit_range(sp_spool *s, const char *key, uint64_t first, uint64_t end,
                        uint64_t watermark, uint64_t dl_done, pq_err *err)
{
    int rc = check_range(s, "commit", first, end, err);
    rc = rc ? rc : check_end(s, "watermark", watermark, err);
    if (rc != 0)
        return rc;
    if (key == NULL)
        return pq_err_set(err, PQ_EINVAL, "spool %s: commit without a key", s->dir);
    sp_ckpt c = {.committed = watermark,
                 .dl_done = dl_done > s->ckpt.dl_done ? dl_done : s->ckpt.dl_done};
    rc = copy_ranges(s, &s->ckpt, watermark, key, first, end, &c, err);
    return install_checkpoint(s, &c, rc, err);
}

int sp_checkpoint_commit_range(sp_spool *s, const char *key, uint64_t first, uint64_t end,
                               uint64_t watermark, uint64_t dl_done, pq_err *err)
{
    dm_mutex_lock(&s->ckpt_mu);
    int rc = commit_range(s, key, first, end, watermark, dl_done, err);
    dm_mutex_unlock(&s->ckpt_mu);
    return rc;
}

int sp_published_ranges(sp_spool *s, sp_range **out, size_t *n, uint64_t *dl_done, pq_err *err)
{
    dm_mutex_lock(&s->ckpt_mu);
    sp_ckpt c = {0};
    int rc = copy_ranges(s, &s->ckpt, s->ckpt.committed, NULL, 0, 0, &c, err);
    *dl_done = s->ckpt.dl_done;
    dm_mutex_unlock(&s->ckpt_mu);
    if (rc != 0) {
        sp_ckpt_free(&c);
        return rc;
    }
    *out = c.ranges;
    *n = c.n_ranges;
    return PQ_OK;
}
