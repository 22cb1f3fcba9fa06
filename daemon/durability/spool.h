/* spool.h - the write-ahead log of accepted lines (DESIGN.md "Bad input
 * and lost data": "Accepted records are appended to the spool before they
 * are acknowledged to the pipeline; after a crash, restart replays the
 * spool, and records already in a completed file are not written twice").
 *
 * Threads: the appender (the daemon's loop thread) calls sp_append,
 * sp_flush, sp_sync, sp_sync_start / _poll / _running, sp_synced_seq,
 * sp_pending_bytes and sp_next_seq (a background sync's fdatasyncs run on
 * the spool's own helper thread, parqd-sync); the publisher
 * (whichever pipeline worker publishes a file, one at a time) calls
 * sp_checkpoint_intent and sp_checkpoint_commit, which write and fsync the
 * checkpoint and unlink trimmed segments without holding anything the
 * appender waits for (spool_int.h says which lock guards what); once the
 * appender has called sp_reap_start, those unlinks run on a third helper,
 * parqd-reap (spool_reap.c), and sp_reap_hold stops them. The other
 * getters may be called from any thread. A sp_reader has its own file
 * descriptors and may run on any one thread at a time, alongside appends
 * (it reads only what was flushed before it reached the end).
 *
 * One process per spool: sp_open takes an exclusive flock on <dir>/lock
 * for the life of the sp_spool (spool_lock.c); a second process gets
 * PQ_ESTATE "spool DIR is in use by parqd pid N".
 *
 * Sequence numbers. Every record gets the next seq (uint64, from 1 on a new
 * spool, continuing across restarts). The pipeline writes records to
 * Parquet files in seq order, so "published" is one watermark: every
 * record with seq < committed is in a published file or in the dead
 * letters.
 *
 * Files in dir:
 *   <first seq, 20 digits>.spool  segments; a new one starts when the
 *                                  current one passes segment_bytes
 *   lock                           flock'd by the process using the spool
 *   checkpoint                     the committed watermark and a pending
 *                                  publication (below)
 * A segment starts with a header (magic, format version, first seq); each
 * record is length + CRC32C over the record, seq, ingest time (us), source
 * ("tcp:10.0.0.5:51234") and the line's bytes. A torn or garbled tail
 * (crash mid-write, bit rot) is detected by length/CRC/seq checks, reported
 * (sp_open's warnings), and cut off; the intact prefix is kept.
 *
 * Exactly once. Before a Parquet file is renamed into place the pipeline
 * records the intent durably: sp_checkpoint_intent(final path, end seq).
 * After the rename: sp_checkpoint_commit(end). On sp_open, a pending intent
 * whose final file exists counts as committed (the crash came after the
 * rename), otherwise it is dropped (the temp file is swept elsewhere).
 * Files also carry their seq range in key-value metadata (parqd.spool).
 *
 * Durability: sp_append only buffers; sp_flush write(2)s the buffer to the
 * current segment (one syscall per flush, not per line); sp_sync
 * fdatasync(2)s it. The daemon flushes once per loop iteration, after its
 * reads (and at every full batch), syncs per batch (sync: batch: in the
 * background, sp_sync_start, before the batch is handed on) or before
 * handing any line on (sync: always), and never syncs with sync: none. A
 * failed flush (ENOSPC...) loses nothing: the buffered records stay and a
 * partial write is cut off again, so a later sp_flush retries. */
#ifndef PQ_SPOOL_H
#define PQ_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define SP_SEGMENT_BYTES_DEFAULT ((uint64_t)64 << 20)
#define SP_SOURCE_MAX 255        /* longer sources are cut */

typedef struct sp_spool sp_spool;

/* One record as read back. Pointers are valid until the next
 * sp_reader_next / sp_reader_close. */
typedef struct sp_record {
    uint64_t seq;
    int64_t ingest_us;
    const char *source;
    size_t source_len;
    const char *line;
    size_t len;
} sp_record;

/* What sp_open found and repaired: for the log. */
typedef struct sp_open_report {
    uint64_t segments;           /* segment files found */
    uint64_t records;            /* intact records found with seq >= committed */
    uint64_t bytes_cut;          /* torn / garbled bytes removed */
    char warning[512];           /* "" or what was cut and why (file, offset) */
} sp_open_report;

/* Creates dir if missing (mode 0700), finds the segments, checks and
 * repairs the last one's tail, reads the checkpoint (resolving a pending
 * intent), deletes segments wholly below the committed watermark. Fails
 * with PQ_ESTATE when another process has the spool open (spool_lock.c).
 * segment_bytes 0: SP_SEGMENT_BYTES_DEFAULT. report may be NULL. Returns 0
 * or PQ_EIO / PQ_ENOMEM / PQ_EINVAL (not a spool directory, a segment from
 * a newer format) with err naming the file. */
int sp_open(sp_spool **out, const char *dir, uint64_t segment_bytes, sp_open_report *report,
            pq_err *err);
/* Whether a pending intent's path was published with every record < end
 * (the output store's answer, store.h): 0 with *yes, or an error with err
 * (sp_open then fails: guessing would lose or duplicate records). Loop
 * thread. */
typedef int (*sp_published_fn)(void *user, const char *path, uint64_t end, bool *yes,
                               pq_err *err);
/* sp_open asking fn about a pending intent; NULL: whether the path exists
 * on the local file system (what sp_open does). */
int sp_open_with(sp_spool **out, const char *dir, uint64_t segment_bytes, sp_published_fn fn,
                 void *user, sp_open_report *report, pq_err *err);
/* Closes (flushing nothing: call sp_flush/sp_sync first). */
void sp_close(sp_spool *s);
/* From now on committed segments are removed by a helper thread,
 * "parqd-reap" (spool_reap.c), not by the publisher that commits them:
 * an unlink of a synced segment costs tens of ms. Appender, before the
 * spool is shared with a publisher. PQ_ENOMEM (then the publisher keeps
 * removing them itself). */
int sp_reap_start(sp_spool *s, pq_err *err);
/* A clean stop: no more removals start. The committed segments still on
 * disk (below the checkpoint's watermark, never replayed) are removed by
 * the next sp_open. Appender. */
void sp_reap_hold(sp_spool *s);

/* Buffers one record and returns its seq. Only PQ_ENOMEM can fail. */
int sp_append(sp_spool *s, int64_t ingest_us, const char *source, size_t source_len,
              const void *line, size_t len, uint64_t *seq, pq_err *err);
/* Writes the buffered records to the segment (rolling to a new segment
 * when the current one is full). 0, or PQ_EIO with the cause; on failure
 * the buffered records are kept for the next call. */
int sp_flush(sp_spool *s, pq_err *err);
/* fdatasync of everything flushed (after sp_flush), and of the
 * directory when a segment was created since the last call. The only
 * fsyncs an appender makes. 0 or PQ_EIO. */
int sp_sync(sp_spool *s, pq_err *err);
/* Background sync (sync: batch): the fdatasyncs of sp_sync for everything
 * flushed so far, on a helper thread, while the appender goes on
 * appending and flushing. notify(user) runs on the helper thread, with a
 * spool lock held (it must only wake the appender: uv_async_send), once
 * the result is ready for sp_sync_poll. With one running already it
 * starts nothing (a later start covers what was flushed since). sp_sync
 * waits for a running one first, so its promise holds as before.
 * Appender. 0, or PQ_ENOMEM / PQ_EIO (the thread, a dup). */
int sp_sync_start(sp_spool *s, void (*notify)(void *), void *user, pq_err *err);
bool sp_sync_running(sp_spool *s);
/* Collects a finished background sync: 0 (done, or none finished yet), or
 * its PQ_EIO (what it did not sync is kept for the next sync). */
int sp_sync_poll(sp_spool *s, pq_err *err);
/* Records < this are fdatasync'd (by sp_sync or a background sync).
 * Appender. */
uint64_t sp_synced_seq(const sp_spool *s);
/* Bytes appended but not yet flushed. */
size_t sp_pending_bytes(const sp_spool *s);

uint64_t sp_next_seq(const sp_spool *s);     /* seq the next append gets */
uint64_t sp_flushed_seq(const sp_spool *s);  /* records < this are flushed */
uint64_t sp_committed(const sp_spool *s);    /* the watermark */
uint64_t sp_disk_bytes(const sp_spool *s);   /* bytes in segment files */

/* Durably records that final_path is about to be published with every
 * record < end (and >= the current watermark). 0 or PQ_EIO. */
int sp_checkpoint_intent(sp_spool *s, const char *final_path, uint64_t end, pq_err *err);
/* Durably moves the watermark to end (>= the current one), clears the
 * intent, and deletes segments whose records are all < end, except the one
 * being appended to: when that one is wholly committed, the next flush
 * starts a new segment and the next commit deletes it. 0 or PQ_EIO. */
int sp_checkpoint_commit(sp_spool *s, uint64_t end, pq_err *err);

/* Partitioned output (ARCHITECTURE.md "Partitioned output"): files of
 * different keys are open at once, so a published file's records are not
 * all below the watermark. A published file is the range [first, end) of
 * one key: it holds every record of that key in the range but the
 * rejected ones. The checkpoint keeps each such range while its end is
 * above the watermark (format 2), and replay skips a record whose key has
 * a range holding its seq. */
typedef struct sp_range {
    uint64_t first, end;
    char *key;
} sp_range;

/* Durably records that final_path is about to be published holding the
 * records of `key` in [first, end). 0, PQ_EINVAL (seqs outside the
 * committed .. flushed window) or PQ_EIO. */
int sp_checkpoint_intent_range(sp_spool *s, const char *final_path, const char *key,
                               uint64_t first, uint64_t end, pq_err *err);
/* Durably adds the published range (key, [first, end)), moves the
 * watermark to `watermark` (>= the current one: the smallest first seq
 * of the files still open) and the dead letters' mark to dl_done (every
 * reject below it is durably in the dead letters), drops the ranges that
 * end at or below the watermark, clears the intent and deletes the
 * segments wholly below it. 0, PQ_EINVAL or PQ_EIO. */
int sp_checkpoint_commit_range(sp_spool *s, const char *key, uint64_t first, uint64_t end,
                               uint64_t watermark, uint64_t dl_done, pq_err *err);
/* Copies of the published ranges above the watermark (free with
 * sp_ranges_free) and the dead letters' mark. 0 or PQ_ENOMEM. */
int sp_published_ranges(sp_spool *s, sp_range **out, size_t *n, uint64_t *dl_done,
                        pq_err *err);
void sp_ranges_free(sp_range *r, size_t n);

/* A fault hook for tests: before_fsync runs on the publisher's thread
 * just before each checkpoint write's fsync, with the checkpoint's lock
 * held, as a slow disk would hold it (the daemon installs one only from
 * PARQD_TEST_HOLD_CHECKPOINT: cmd_run.c). Set it before the spool is
 * shared between threads. */
typedef struct sp_ckpt_hook {
    void (*before_fsync)(void *user);
    void *user;
} sp_ckpt_hook;
void sp_set_ckpt_hook(sp_spool *s, const sp_ckpt_hook *hook);

/* ---- replay ---------------------------------------------------------- */

typedef struct sp_reader sp_reader;

/* Reads records with seq >= from, in seq order, up to the last record
 * flushed when each segment is reached. Returns 0 or PQ_EIO / PQ_ENOMEM.
 * The spool must outlive the reader. */
int sp_reader_open(sp_reader **out, const sp_spool *s, uint64_t from, pq_err *err);
/* 1 with *rec filled, 0 at the end, or < 0 (PQ_EIO: unreadable, PQ_EPARSE:
 * a record that failed its checks in the middle of a segment; err names
 * the file and offset, and the reader skips to the next segment on the
 * next call). */
int sp_reader_next(sp_reader *r, sp_record *rec, pq_err *err);
void sp_reader_close(sp_reader *r);

#endif
