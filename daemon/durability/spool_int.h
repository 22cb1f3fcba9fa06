/* spool_int.h - what the spool's own files share (spool.c, spool_open.c,
 * spool_scan.c, spool_ckpt.c, spool_reader.c) and the test tools may use
 * to read a spool without opening (and so repairing) it. Not for other
 * modules: they use spool.h. The on-disk format is documented in spool.c.
 *
 * Thread: as spool.h (the spool on the loop thread; a scanner or reader
 * on any one thread at a time). */
#ifndef PQ_SPOOL_INT_H
#define PQ_SPOOL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "mutex.h"
#include "spool.h"

#define SP_MAGIC "PQSPOOL"           /* 8 bytes with its NUL */
#define SP_VERSION 1u
#define SP_HDR_SIZE 24u              /* magic, version, first seq, CRC */
#define SP_REC_PREFIX 8u             /* length, CRC */
#define SP_BODY_FIXED 17u            /* seq, ingest_us, source_len */
/* limits.max_line_bytes is at most 1 GiB (config.c), so a longer record
 * length can only be garbage. */
#define SP_LINE_MAX ((size_t)1 << 30)
#define SP_BODY_MAX ((uint32_t)(SP_BODY_FIXED + SP_SOURCE_MAX + SP_LINE_MAX))
/* Seqs run from 1 and stay below 2^63: a first seq or record seq outside
 * is garbage (and the arithmetic on seq + 1 never wraps). */
#define SP_SEQ_MAX ((uint64_t)1 << 63)
#define SP_CHUNK ((size_t)1 << 20)   /* read size of scanners and readers */
#define SP_NAME_LEN 26               /* 20 digits + ".spool" */
#define SP_CKPT_NAME "checkpoint"
#define SP_CKPT_TMP "checkpoint.tmp"
#define SP_LOCK_NAME "lock"         /* flock'd while a process has the spool open */

static inline void sp_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void sp_put64(uint8_t *p, uint64_t v)
{
    sp_put32(p, (uint32_t)v);
    sp_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t sp_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t sp_get64(const uint8_t *p)
{
    return (uint64_t)sp_get32(p) | (uint64_t)sp_get32(p + 4) << 32;
}

/* ---- names and directories (spool_scan.c) ------------------------------ */

/* "<dir>/<first, 20 digits>.spool" into path (strlen(dir) + SP_NAME_LEN + 2
 * bytes). */
void sp_seg_path(char *path, const char *dir, uint64_t first);
/* first seq of a segment file name, false if name is not one. */
bool sp_seg_parse_name(const char *name, uint64_t *first);
/* The first seqs of dir's segments, ascending, into *firsts (realloc'd,
 * the caller frees). PQ_EIO / PQ_ENOMEM. */
int sp_seg_list(const char *dir, uint64_t **firsts, size_t *n, pq_err *err);
/* fsync(2) of a directory, so a created, renamed or removed entry lasts. */
int sp_fsync_dir(const char *dir, pq_err *err);
/* The 24 header bytes of a segment starting at first. */
void sp_header_encode(uint8_t *out, uint64_t first);

/* ---- one process per spool (spool_lock.c) ------------------------------ */

/* Takes the exclusive flock on <dir>/SP_LOCK_NAME and writes our pid in
 * it; *lock_fd keeps it until closed. PQ_ESTATE "spool DIR is in use by
 * parqd pid N" when another process holds it; PQ_EIO. */
int sp_lock_dir(const char *dir, int *lock_fd, pq_err *err);

/* ---- the segment scanner (spool_scan.c) -------------------------------- */

/* sp_scan_open / sp_scan_next results besides 0 and the negative pq codes. */
enum {
    SP_END = 0,     /* clean end: the data ends at a record boundary */
    SP_REC = 1,     /* a record (sp_scan_next) */
    SP_TORN = 2,    /* the data ends inside a header or record */
    SP_BAD = 3,     /* bytes that fail a check (magic, length, CRC, seq) */
    SP_GONE = 4     /* the segment file does not exist (any more) */
};

/* Reads one segment file front to back through a reusable buffer (reads
 * of SP_CHUNK, not one syscall per record) and checks every record.
 * `off` is always the end of the intact prefix. */
typedef struct sp_scan {
    char *path;          /* the open segment's path (for messages) */
    const char *dir;
    int fd;
    uint64_t first;      /* first seq, from the name and the header */
    uint64_t expect;     /* seq the next record must carry */
    uint64_t off;        /* file offset of the next record */
    pq_buf buf;          /* file bytes [buf_off, buf_off + buf.len) */
    uint64_t buf_off;
} sp_scan;

/* dir must outlive the scanner. PQ_ENOMEM. */
int sp_scan_init(sp_scan *sc, const char *dir, pq_err *err);
void sp_scan_free(sp_scan *sc);
/* Opens segment `first` and checks its header: 0, SP_TORN / SP_BAD (err
 * says why), SP_GONE, PQ_EINVAL (a newer format version), PQ_EIO. */
int sp_scan_open(sp_scan *sc, uint64_t first, pq_err *err);
/* SP_REC with rec filled (pointers into the scanner's buffer, valid until
 * the next call), SP_END, SP_TORN / SP_BAD with err naming file, offset
 * and cause, or PQ_EIO. After SP_TORN / SP_END a later call reads again
 * (the file may have grown). */
int sp_scan_next(sp_scan *sc, sp_record *rec, pq_err *err);
void sp_scan_close(sp_scan *sc);

/* ---- the checkpoint file (spool_ckpt.c) -------------------------------- */

typedef struct sp_ckpt {
    uint64_t committed;      /* every record < committed is published */
    uint64_t intent_end;     /* 0: no pending publication */
    char *intent_path;       /* malloc'd; NULL without an intent */
    /* Partitioned output (format 2): the pending file's key and first seq
     * (intent_key NULL: a file of one contiguous range, format 1), the
     * published files' ranges above the watermark, and the seq below which
     * every reject is in the dead letters (0: not recorded). */
    char *intent_key;
    uint64_t intent_first;
    sp_range *ranges;
    size_t n_ranges;
    uint64_t dl_done;
} sp_ckpt;

/* 0 with *c filled (*found false and c zeroed when there is no file),
 * PQ_EPARSE (corrupt: err says how), PQ_EINVAL (newer version), PQ_EIO,
 * PQ_ENOMEM. */
int sp_ckpt_read(const char *dir, sp_ckpt *c, bool *found, pq_err *err);
/* Durably replaces the checkpoint: temp file, fsync, rename, fsync(dir).
 * hook (may be NULL) runs just before the temp file's fsync. */
int sp_ckpt_write(const char *dir, const sp_ckpt *c, const sp_ckpt_hook *hook, pq_err *err);
void sp_ckpt_free(sp_ckpt *c);

/* ---- the spool object (spool.c, spool_open.c) -------------------------- */

typedef struct sp_seg {
    uint64_t first;          /* first seq (the file name) */
    uint64_t bytes;          /* file size */
} sp_seg;

#define SP_UNSYNCED_MAX 16   /* rolled segments awaiting sp_sync */

typedef struct sp_unsynced {
    int fd;
    uint64_t first;
} sp_unsynced;

/* A background sync (spool_sync.c): the fds it fdatasyncs (the rolled
 * segments', owned, and a dup of the current one's), whether the
 * directory needs its fsync, and every record < target is durable after
 * it. Owned by the helper thread from SP_SYNC_QUEUED until SP_SYNC_DONE. */
typedef struct sp_sync_job {
    sp_unsynced fds[SP_UNSYNCED_MAX + 1];
    size_t n, done;          /* done: fds synced and closed */
    bool cur;                /* fds[n - 1] is the dup of the current segment's */
    bool dir;
    uint64_t target;
    int rc;
    pq_err err;
} sp_sync_job;

enum { SP_SYNC_IDLE, SP_SYNC_QUEUED, SP_SYNC_DONE };

/* Threads (spool.h): the appender is the loop thread; the publisher is
 * whichever thread calls sp_checkpoint_intent / _commit (a pipeline
 * worker), one at a time. The appender never waits for the publisher's
 * file writes, fsyncs or unlinks: seg_mu is held only for in-memory
 * updates of the segment list, and the checkpoint has a lock of its own. */
struct sp_spool {
    char *dir;
    uint64_t segment_bytes;
    int lock_fd;             /* flock'd SP_LOCK_NAME, for the process's life */
    /* appender only */
    char *path;              /* scratch for segment paths */
    int fd;                  /* the last segment, open to append; -1: none */
    uint64_t cur_first, cur_bytes;  /* fd's segment: its name and size */
    bool dirty;              /* fd has data not yet fdatasync'd */
    bool dir_dirty;          /* a segment was created since the last sp_sync */
    sp_unsynced unsynced[SP_UNSYNCED_MAX];   /* rolled, still dirty segments */
    size_t nunsynced;
    pq_buf buf;              /* SP_HDR_SIZE spare bytes, then pending records */
    uint64_t next_seq;
    /* seg_mu: written by the appender (segs' tail, flushed_seq, roll) and
     * the publisher's trim (segs' head, committed, disk_bytes); the
     * appender reads what only it writes without the lock */
    dm_mutex seg_mu;
    sp_seg *segs;            /* the segment files, ascending */
    size_t nsegs, segs_cap;
    bool roll;               /* the next flush must start a new segment */
    uint64_t flushed_seq, committed, disk_bytes;
    /* ckpt_mu: held by the publisher across the checkpoint file's write */
    dm_mutex ckpt_mu;
    sp_ckpt ckpt;            /* as on disk */
    sp_ckpt_hook hook;       /* set before the spool is shared */
    char *trim_path;         /* the publisher's scratch for segment paths */
    /* the background sync (spool_sync.c). sync_mu guards sync_state and
     * sync_quit, and hands job back and forth: the appender fills it
     * while IDLE, the helper owns it while QUEUED, the appender reads it
     * when DONE */
    dm_mutex sync_mu;
    pthread_cond_t sync_cv;
    int sync_state;
    bool sync_quit;
    sp_sync_job job;
    void (*sync_notify)(void *);
    void *sync_user;
    bool sync_thread_up;     /* appender only */
    pthread_t sync_thread;
    uint64_t synced_seq;     /* appender only: records < this are fdatasync'd */
    /* the remover (spool_reap.c). reap_mu guards the queue of committed
     * segments' first seqs and the flags; reap_path is the helper's */
    dm_mutex reap_mu;
    pthread_cond_t reap_cv;
    uint64_t *reap_q;
    size_t reap_n, reap_cap;
    bool reap_up, reap_hold, reap_quit;
    pthread_t reap_thread;
    char *reap_path;
};

/* Waits for a background sync and collects its result (spool_sync.c).
 * Appender. 0 or its PQ_EIO. */
int sp_sync_wait(sp_spool *s, pq_err *err);
/* Stops the helper thread and closes the fds a job still holds. */
void sp_sync_stop(sp_spool *s);

/* Queues the removal of committed segment `first` for the remover
 * (spool_reap.c). false when it is not running (or out of memory): the
 * caller unlinks the file itself. Publisher. */
bool sp_reap_queue(sp_spool *s, uint64_t first);
/* sp_open, before the remover starts: the first n committed segments
 * found on disk go to its queue. false: out of memory. */
bool sp_reap_prequeue(sp_spool *s, const uint64_t *firsts, size_t n);
/* Stops the remover; what is still queued stays on disk (below the
 * watermark: the next sp_open queues it again). If it never ran, what
 * sp_open queued is unlinked here. sp_close. */
void sp_reap_stop(sp_spool *s);

/* Appends a segment entry. PQ_ENOMEM. */
int sp_segs_push(sp_spool *s, uint64_t first, uint64_t bytes, pq_err *err);
/* Removes the segment files whose records are all < end (the last one's
 * bound is flushed_seq). With keep_last (the publisher, while the
 * appender may be writing it) the last segment stays, and if it is wholly
 * below end the appender is asked to roll, so the next trim takes it.
 * Takes seg_mu for the list; unlinks outside it, or queues the unlinks
 * for the remover once sp_reap_start ran. 0 or PQ_EIO. */
int sp_trim(sp_spool *s, uint64_t end, bool keep_last, pq_err *err);

/* A reader over a directory without an sp_spool (spool_dump). */
int sp_reader_open_dir(sp_reader **out, const char *dir, uint64_t from, pq_err *err);

#endif
