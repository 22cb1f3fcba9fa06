/* daemon.h - the running daemon's state, shared by cmd_run.c (start,
 * signals, reload, shutdown) and ingest.c (lines from sockets and the
 * spool into the pipeline).
 *
 * Threads: everything here belongs to the loop thread, except what the
 * pipeline's callbacks touch from worker threads: the spool's checkpoint
 * (the spool's own locks: spool.h), the failure record (under fail_mu)
 * and the wake-up async. */
#ifndef PQ_DAEMON_H
#define PQ_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "deadletter.h"
#include "keyring.h"
#include "listener.h"
#include "metrics.h"
#include "pipeline.h"
#include "spool.h"

/* Lines per batch handed to the pipeline: one worker shreds a batch. */
#define DM_BATCH_INTERVAL_MS 100      /* a partial batch waits at most this long */
/* sync: batch: batches that wait for the background sync (ingest.c);
 * when they are this many, the loop waits for the disk itself. */
#define DM_SYNC_WAIT_BATCHES 8
/* Lines read in one loop iteration share one spool flush (ingest.c), unless
 * this many bytes wait for it first. */
#define DM_FLUSH_BYTES ((size_t)1 << 20)
/* Lines read and not yet parsed (in the pipeline, or in batches waiting
 * for a sync) at which reading pauses; it resumes at half (ingest.c). */
#define DM_INPUT_WINDOW_BYTES ((size_t)12 << 20)
#define DM_RETRY_MIN_MS 500           /* after a write failure: first retry */
#define DM_RETRY_MAX_MS 30000
#define DM_SHUTDOWN_GRACE_MS 3000     /* clients get this long to finish at shutdown */
#define DM_SHUTDOWN_POLL_MS 5         /* shutdown: whether every client is done, so often */
#define DM_REPLAY_WAIT_MS 20          /* replay blocked (pipeline full, spool unwritable) */

typedef struct dm_daemon {
    uv_loop_t *loop;
    char *config_path;               /* NULL: built-in defaults */
    cf_config cf;
    bool cf_loaded;
    /* write path */
    kr_keyring keys;
    pq_writer_opts wopts;
    dl_file dl;
    bool dl_ready;
    pl_pipeline *pl;
    st_store *store;                 /* the pipeline's output (run_store.c) */
    pl_batch *batch;                 /* live mode: being filled */
    char host[256];
    /* spool: the loop appends; the publishing worker checkpoints (spool.h) */
    sp_spool *spool;
    bool live;                       /* new lines go straight into batches;
                                        false: replaying from the spool */
    uint64_t replay_next;            /* replay: next seq to hand on */
    sp_reader *reader;
    bool spool_broken;               /* the last flush failed */
    /* sync: batch: filled batches waiting for a background sync that
     * covers them before they go to the pipeline, oldest first */
    pl_batch *sync_wait[DM_SYNC_WAIT_BATCHES];
    size_t n_sync_wait;
    /* ingest */
    ls_server *ls;
    mt_server *mt;
    bool paused;                     /* reading paused (dm_check_backpressure) */
    bool pressure;                   /* ... because the writer is behind: on /health */
    int64_t paused_since_us;
    int64_t now_us;                  /* receive time of the current read */
    bool now_valid;
    /* failure and retry */
    pthread_mutex_t fail_mu;
    bool fail_seen;                  /* set by on_failure, read by the loop */
    uint64_t fail_resume;
    pq_err fail_err;
    bool retry_pending;
    uint64_t retry_ms;
    /* handles */
    uv_async_t wake;                 /* from workers: progress, failure */
    uv_timer_t batch_timer, tick_timer, retry_timer, watchdog_timer, shutdown_timer;
    uv_signal_t sig_term, sig_int, sig_hup;
    uv_timer_t replay_timer;
    uv_check_t ack_check;            /* HTTP replies wait for the spool: group commit */
    uv_check_t read_check;           /* the reads of one loop iteration: one flush */
    bool handles_ready;
    bool stopping;
    bool listeners_closing;
    uint64_t shutdown_deadline_ms;   /* uv_now; moved on while paused for flow control */
    uint64_t shutdown_tick_ms;       /* the shutdown timer's last run */
    int exit_status;
} dm_daemon;

/* ingest.c */
int dm_on_line(void *user, const char *source, const fr_line *line);
/* After a read that delivered lines: arms the flush that ends the loop
 * iteration (or flushes now past DM_FLUSH_BYTES or a full batch). */
void dm_on_read_done(void *user);
/* HTTP inputs (listener_cb.h): the seq the next record gets; arms the
 * group commit (once per loop iteration, after its reads: one flush and,
 * per spool.sync, one fsync for every request waiting); whether new
 * requests get 429. */
uint64_t dm_next_seq(void *user);
void dm_want_durable(void *user);
bool dm_busy(void *user);
/* Flushes the spool (and fsyncs it with sync); on failure reading pauses
 * until a flush works. 0 or the error. */
int dm_flush_spool(dm_daemon *d, bool sync);
/* Submits the current batch (flushing and, per spool.sync, syncing the
 * spool first). */
void dm_submit_batch(dm_daemon *d);
/* sync: batch: collects a finished background sync, hands on the batches
 * it made durable, starts the next one for those still waiting (loop
 * thread, woken by the sync's notify). */
void dm_sync_progress(dm_daemon *d);
/* Waits for the spool's sync and hands on every waiting batch. 0, or -1
 * when the spool cannot be synced (the batches keep waiting). */
int dm_sync_wait(dm_daemon *d);
/* Drops the waiting batches (their lines are in the spool: a replay
 * reads them again); returns the first seq of the first, or `end`. */
uint64_t dm_sync_drop(dm_daemon *d, uint64_t end);
/* Pauses or resumes reading by the buffered bytes. */
void dm_check_backpressure(dm_daemon *d);
/* The input window's part of that: whether reading stays or goes paused
 * with `unparsed` bytes of lines not yet parsed (paused: it is now).
 * Pauses at `window`, resumes at half. */
bool dm_window_paused(bool paused, size_t unparsed, size_t window);
/* Starts replaying the spool from seq `from` (startup, after a failure). */
void dm_start_replay(dm_daemon *d, uint64_t from);
/* Replays synchronously to the end (shutdown). 0, or -1 when the pipeline
 * failed. */
int dm_replay_all(dm_daemon *d);
int64_t dm_now_us(void);

#endif
