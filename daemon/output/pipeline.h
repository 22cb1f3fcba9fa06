/* pipeline.h - the write path shared by `parqd convert` and the daemon:
 * batches of framed lines -> parse + shred -> row groups -> encode and
 * compress -> Parquet files (rotation, publication).
 *
 * Threads. The owner (the daemon's loop thread, or convert's reading
 * thread) builds batches and submits them; everything after that runs on
 * the pipeline's worker threads (one per core):
 *
 *   shred     any worker: one batch into a row buffer of its own, with a
 *             shredder of its own (batches shred in parallel)
 *   assemble  one worker at a time, in batch order: dead letters for the
 *             batch's rejects, its rows moved into the current segment of
 *             the current row group (2 MiB or 8,192 rows); a full segment
 *             becomes an encode job, and a full row group's last segment
 *             one that finishes it; files are opened and rotation is
 *             decided here
 *   encode    any worker: one segment fed to its file's row group as it
 *             arrives (pq_stream: pages cut, encoded, compressed and
 *             encrypted as they fill; the last segment adds dictionaries,
 *             statistics and bloom filters), a file's segments one at a
 *             time and in order, each shared by leaves between workers.
 *             A file whose `shred: auto` Variant columns got a layout of
 *             their own (decided by the assembler from the file's first
 *             segment, autoshred.c) has each segment converted to that
 *             layout first
 *   write     one worker at a time, in row-group order: append to the
 *             file; the last row group of a file closes it (page index,
 *             footer, fsync) and publishes it
 *
 * Assembly and writing each hold a token (one worker at a time) but not
 * the pipeline lock, so a slow disk stalls only the writer: reading,
 * shredding and encoding go on until limits.max_buffered_bytes is reached,
 * which the owner checks with pl_buffered_bytes (the daemon pauses its
 * sockets; convert waits in pl_wait_below).
 *
 * Order. Rows land in files in submission order, and files are published
 * in order, so "every line with seq < N is in a published file (or the
 * dead letters)" is a single watermark: the daemon's spool relies on it
 * for exactly-once replay. Each file's key-value metadata `parqd.spool`
 * holds its seq range "first-end" (end exclusive).
 *
 * Failure. An encode, write or publish error fails the whole pipeline:
 * every file not yet published is removed, every batch in flight is
 * dropped, and cb.on_failure reports the watermark to resume from. The
 * owner then stops (convert) or replays from the spool after a backoff
 * (the daemon: pl_resume). */
#ifndef PQ_PIPELINE_H
#define PQ_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "batch.h"
#include "buf.h"
#include "colspec.h"
#include "config.h"
#include "deadletter.h"
#include "err.h"
#include "filesink.h"
#include "pq_writer.h"
#include "spool.h"
#include "store.h"

/* ---- the pipeline -------------------------------------------------------- */

typedef enum pl_publish {
    PL_PUBLISH_EACH,             /* daemon: publish each file as it closes */
    PL_PUBLISH_HOLD              /* convert: keep finished files hidden for
                                    pl_take_finished */
} pl_publish;

/* A finished file kept hidden (PL_PUBLISH_HOLD). */
typedef struct pl_finished {
    fs_file file;                /* the local store's file, FS_FINISHED (out == NULL) */
    st_file *out;                /* any other store's finished file, else NULL */
    char name[4096];             /* rendered name relative to the output dir */
    time_t first_time;           /* time of its first record (output.time_from: event) */
    uint64_t rows;
} pl_finished;

typedef struct pl_callbacks {
    void *user;
    /* Worker thread, before the rename: record durably that name (full
     * path) will hold every line with seq < end. NULL: nothing. Non-zero
     * fails the pipeline. */
    int (*on_publish_intent)(void *user, const char *path, uint64_t end, pq_err *err);
    /* Worker thread, after the rename and directory fsync. */
    void (*on_published)(void *user, const char *path, uint64_t end, uint64_t rows,
                         uint64_t bytes);
    /* Partitioned output (output.path with {{FIELD}}s) calls these two
     * instead of the two above: the file holds the records of partition
     * key `key` in [first, end); once it is published, every line below
     * `watermark` is in a published file or the dead letters, and every
     * reject below dl_done is in the dead letters (flushed). */
    int (*on_publish_intent_range)(void *user, const char *path, const char *key,
                                   uint64_t first, uint64_t end, pq_err *err);
    void (*on_published_range)(void *user, const char *path, const char *key, uint64_t first,
                               uint64_t end, uint64_t watermark, uint64_t dl_done,
                               uint64_t rows, uint64_t bytes);
    /* Worker thread: the pipeline failed; resume from seq `resume` after
     * pl_resume. err says what failed. */
    void (*on_failure)(void *user, uint64_t resume, const pq_err *err);
    /* Worker thread: buffered bytes went down, after each assembled batch
     * and each written row group (the owner may resume reading). Called
     * often: keep it cheap (uv_async_send). */
    void (*on_progress)(void *user);
    /* Worker thread (the assembler), in order: a file's `shred: auto`
     * column got its layout, as compact JSON ("variant": not shredded);
     * first_seq is the file's first line. NULL: nothing. */
    void (*on_shred)(void *user, const char *file, uint64_t first_seq, const char *column,
                     const char *layout);
    /* Worker thread, in order: a record went to the dead letters. */
    void (*on_reject)(void *user, const char *source, const char *reason);
} pl_callbacks;

#define PL_MAX_OPEN_FILES_DEFAULT 256   /* output.max_open_files unset */

typedef struct pl_config {
    const sc_schema *schema;             /* borrowed; outlives the pipeline */
    const pq_writer_opts *writer;        /* copied */
    const char *out_dir;
    st_store *store;                     /* borrowed; NULL: the local directory
                                            out_dir */
    const char *path_template;           /* output.path; or, with file_name, unused */
    const char *time_from;               /* output.time_from (evtime.h); NULL: the
                                            ingestion time. Routes records as
                                            {{FIELD}}s do. */
    const char *file_name;               /* convert -o FILE: every file gets this
                                            temporary name (renamed by the owner) */
    cf_roll row_group;                   /* max_age applies only via pl_tick */
    cf_roll rotate;
    pl_publish publish;
    dl_file *dead_letters;               /* borrowed; written under a lock */
    size_t workers;                      /* 0: $PARQD_WORKERS, else one per
                                            online CPU */
    uint64_t first_seq;                  /* seq of the first line to come */
    uint64_t file_seq;                   /* last {seq} already used (a reload
                                            continues the numbering) */
    const char *host;                    /* {host} */
    size_t max_line_bytes;               /* for the oversized lines' reason */
    /* Partitioned output: files open at once (0: the default above); the
     * open files' buffers past half of max_buffered_bytes (0: no bound) close the
     * largest open row group early; the published ranges above first_seq
     * (copied) and the seq below which every reject is in the dead
     * letters already (replay skips both). */
    uint32_t max_open_files;
    size_t max_buffered_bytes;
    const sp_range *published;
    size_t n_published;
    uint64_t dl_done;
    /* Rejects carry their seq into the dead letters (the daemon, whose
     * dl_recover reads the last one back into dl_done after a crash). */
    bool dead_letter_seq;
} pl_config;

typedef struct pl_pipeline pl_pipeline;

/* Starts the workers. Returns 0 or PQ_ENOMEM / PQ_EINVAL. */
int pl_new(pl_pipeline **out, const pl_config *cfg, const pl_callbacks *cb, pq_err *err);
/* Stops the workers; every file not yet published is removed (call
 * pl_drain first to publish them). */
void pl_destroy(pl_pipeline *p);

/* Hands a batch on (ownership passes). Its first seq must not be below the
 * last submitted batch's end (a batch that is, or any batch while the
 * pipeline is failed, is dropped: it will be replayed). */
void pl_submit(pl_pipeline *p, pl_batch *b);
/* A batch to fill, reused from those the pipeline is done with. */
pl_batch *pl_batch_get(pl_pipeline *p);

/* Row-group and file age limits: closes a row group or file that is
 * older than its max_age. Call about once a second. */
void pl_tick(pl_pipeline *p);
/* Closes the current row group and file; they publish once written. */
void pl_close_files(pl_pipeline *p);
/* Closes the current row group (backpressure: the rows buffered in it
 * cannot wait for the row group to fill). */
void pl_flush_rowgroup(pl_pipeline *p);
/* Blocks until everything submitted so far is written (and, after
 * pl_close_files, published), or the pipeline failed. Returns 0, or the failure's code with err. */
int pl_drain(pl_pipeline *p, pq_err *err);
/* Bytes of submitted lines not yet shredded and assembled: what the
 * workers still have to parse. Any thread. */
size_t pl_input_bytes(const pl_pipeline *p);
/* Blocks while more than input_limit bytes of lines wait to be shredded
 * and assembled, or while segments waiting for their encoder and row
 * groups encoded but not yet written hold more than rows_limit bytes (at
 * most PL_PENDING_MAX, two segments, whatever the caller passes: more
 * waiting means the encoders are behind) (convert's backpressure). Two limits, not
 * one sum: a row group being encoded must not stop reading (the other
 * workers would run dry and idle), but row groups must not pile up behind
 * a slow codec or disk either. The row group being filled does not count:
 * it waits for more lines, so counting it could wait forever. */
void pl_wait_below(pl_pipeline *p, size_t input_limit, size_t rows_limit);

/* Accepted, not yet written bytes (input bytes of lines in flight). */
size_t pl_buffered_bytes(const pl_pipeline *p);
/* Whether records are routed to many files by key (`{{FIELD}}`s or
 * time_from in the path). Fixed at pl_new; any thread. */
bool pl_routed(const pl_pipeline *p);
bool pl_failed(const pl_pipeline *p);
/* After a failure: forget it; the next batch submitted must start at the
 * resume seq on_failure named. */
void pl_resume(pl_pipeline *p);

/* The last {seq} a file name used. */
uint64_t pl_file_seq(const pl_pipeline *p);

/* Counts for summaries (convert). */
typedef struct pl_stats {
    uint64_t lines, rows, rejected, files, bytes;
} pl_stats;
void pl_get_stats(const pl_pipeline *p, pl_stats *out);

/* Writes a record straight to the dead letters (the daemon's oversized
 * lines, which never enter the spool), under the pipeline's dead-letter
 * lock. Any thread. 0 or PQ_EIO / PQ_ENOMEM. */
int pl_reject_direct(pl_pipeline *p, const dl_record *r, pq_err *err);

/* PL_PUBLISH_HOLD: the finished files, in order. The caller owns the array
 * and its fs_files (commit or abort each, then fs_free). */
pl_finished *pl_take_finished(pl_pipeline *p, size_t *n);

/* A finished file as the store's handle, whichever store holds it. */
static inline st_file *pl_finished_file(pl_finished *d)
{
    return d->out != NULL ? d->out : &d->file.base;
}

#endif
