/* ingest.c - lines from the listeners into the spool and on to the
 * pipeline, on the loop thread (daemon.h).
 *
 * Every accepted line is appended to the spool and gets the next seq.
 * Live mode: the line is also copied into the current batch, which goes to
 * the pipeline once it is PL_BATCH_BYTES large or DM_BATCH_INTERVAL_MS old,
 * and only after the spool holds it (flushed, and fsynced per spool.sync).
 * Replay mode (at start with spool records past the watermark, or after a
 * write failure): lines only go to the spool, and an idle handle reads the
 * spool back into batches from the resume point while the pipeline has
 * room (a timer, so a full disk or pipeline never makes the loop spin);
 * when it reaches the end, live mode starts again. So the pipeline
 * always receives one gap-free, ordered stream of seqs.
 *
 * Oversized lines never enter the spool (only their first max_line_bytes
 * were kept): they go straight to the dead letters. */
#include "daemon.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "counters.h"
#include "health.h"
#include "log.h"

int64_t dm_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t read_time(dm_daemon *d)
{
    if (!d->now_valid) {
        d->now_us = dm_now_us();
        d->now_valid = true;
    }
    return d->now_us;
}

static void reject_oversized(dm_daemon *d, const char *source, const fr_line *l)
{
    char reason[128];
    pq_err e = {0};
    snprintf(reason, sizeof reason, "line of %zu bytes exceeds limits.max_line_bytes (%zu)",
             l->total, d->cf.limits.max_line_bytes);
    dl_record r = {.ts_us = read_time(d), .source = source, .reason = reason, .raw = l->data,
                   .raw_len = l->len, .bytes = l->total, .truncated = true};
    dm_add(&dm_counters_global.records_rejected[DM_REJECT_TOO_LONG], 1);
    if (pl_reject_direct(d->pl, &r, &e) != 0) {
        dm_health_set(DM_HEALTH_DEADLETTER, "%s", e.msg);
        lg_error("dead letters: %s (a %zu-byte line from %s is lost)", e.msg, l->total, source);
    }
}

/* The reads of one loop iteration (up to 16 connections' worth, and
 * libuv reads each up to 32 times) end with one flush: one write(2) of all
 * their records instead of one per read (a tenth of the write(2)s on 16
 * busy connections), so a line is in the kernel's hands (and survives
 * kill -9) before the loop waits for more input or runs a timer; with
 * sync: always it is also on disk before its batch goes on. The check
 * phase runs right after the iteration's reads, before the next poll. */
static void flush_reads(dm_daemon *d)
{
    if (dm_flush_spool(d, d->cf.spool.sync == CF_SYNC_ALWAYS) != 0)
        return;
    if (d->live && d->batch != NULL && pl_batch_bytes(d->batch) >= PL_BATCH_BYTES)
        dm_submit_batch(d);
}

int dm_on_line(void *user, const char *source, const fr_line *l)
{
    dm_daemon *d = user;
    pq_err e = {0};
    uint64_t seq;
    if (l->oversized) {
        reject_oversized(d, source, l);
        return 0;
    }
    int64_t t = read_time(d);
    int rc = sp_append(d->spool, t, source, strlen(source), l->data, l->len, &seq, &e);
    if (rc != 0) {
        lg_error("spool: %s", e.msg);
        return rc;               /* closes this connection: its line is not accepted */
    }
    if (d->live && pl_batch_add(d->batch, source, l->data, l->len, l->len, false, t, 0) != 0) {
        /* Out of memory: the line is in the spool; replay picks it up. */
        lg_error("out of memory batching lines; replaying from the spool");
        d->live = false;
        dm_start_replay(d, seq - pl_batch_lines(d->batch));
    } else if (d->live && pl_batch_bytes(d->batch) >= PL_BATCH_BYTES && !d->spool_broken) {
        /* A full batch goes on now, mid-read: its buffer has room for
         * one line past PL_BATCH_BYTES, not for a whole read. (With the
         * spool broken the flush is retried per read, not per line.) */
        flush_reads(d);
    }
    return 0;
}

/* Hands on, in order, the waiting batches a sync has made durable. */
static void hand_on_synced(dm_daemon *d)
{
    uint64_t synced = sp_synced_seq(d->spool);
    size_t i = 0;
    while (i < d->n_sync_wait && pl_batch_end_seq(d->sync_wait[i]) <= synced)
        pl_submit(d->pl, d->sync_wait[i++]);
    memmove(d->sync_wait, d->sync_wait + i, (d->n_sync_wait - i) * sizeof *d->sync_wait);
    d->n_sync_wait -= i;
}

static void spool_failed(dm_daemon *d, const pq_err *e)
{
    dm_add(&dm_counters_global.spool_write_errors, 1);
    if (!d->spool_broken)
        lg_error("spool: %s; reading paused until it can be written", e->msg);
    dm_health_set(DM_HEALTH_SPOOL, "%s", e->msg);
    d->spool_broken = true;
    dm_check_backpressure(d);
}

/* Flushes the spool; on failure pauses reading until a flush works. */
int dm_flush_spool(dm_daemon *d, bool sync)
{
    pq_err e = {0};
    int rc = sp_flush(d->spool, &e);
    if (rc == 0 && sync)
        rc = sp_sync(d->spool, &e);
    uint64_t disk = sp_disk_bytes(d->spool);
    dm_set(&dm_counters_global.spool_bytes, disk);
    if (rc != 0) {
        spool_failed(d, &e);
        return rc;
    }
    if (sync)
        hand_on_synced(d);
    if (d->spool_broken) {
        lg_info("spool: writing again");
        dm_health_clear(DM_HEALTH_SPOOL);
        d->spool_broken = false;
        dm_check_backpressure(d);
    }
    return 0;
}

/* ---- sync: batch: the fdatasync on the spool's helper thread --------------- */

/* The spool's helper thread, a sync done: wake the loop (dm_sync_progress). */
static void on_synced(void *user)
{
    dm_daemon *d = user;
    uv_async_send(&d->wake);
}

static void start_sync(dm_daemon *d)
{
    pq_err e = {0};
    if (sp_sync_start(d->spool, on_synced, d, &e) != 0)
        spool_failed(d, &e);
    else
        hand_on_synced(d);       /* the start collected a finished sync */
}

void dm_sync_progress(dm_daemon *d)
{
    pq_err e = {0};
    if (d->spool == NULL || d->n_sync_wait == 0)
        return;
    if (sp_sync_poll(d->spool, &e) != 0) {
        spool_failed(d, &e);     /* the batches wait; on_tick's flush clears it */
        return;
    }
    hand_on_synced(d);
    if (d->n_sync_wait > 0 && !d->spool_broken)
        start_sync(d);
    dm_check_backpressure(d);
}

int dm_sync_wait(dm_daemon *d)
{
    if (d->n_sync_wait == 0)
        return 0;
    if (dm_flush_spool(d, true) != 0)
        return -1;
    return d->n_sync_wait == 0 ? 0 : -1;
}

uint64_t dm_sync_drop(dm_daemon *d, uint64_t end)
{
    if (d->n_sync_wait > 0) {
        pl_batch *b = d->sync_wait[0];
        end = pl_batch_end_seq(b) - pl_batch_lines(b);
    }
    for (size_t i = 0; i < d->n_sync_wait; i++)
        pl_batch_destroy(d->sync_wait[i]);
    d->n_sync_wait = 0;
    return end;
}

/* With sync: batch the batch waits for a background sync (the loop reads
 * on meanwhile), unless DM_SYNC_WAIT_BATCHES already wait: then the loop
 * waits for the disk. With always, every read was synced already. */
void dm_submit_batch(dm_daemon *d)
{
    if (!d->live || d->batch == NULL || pl_batch_lines(d->batch) == 0)
        return;
    const bool later = d->cf.spool.sync == CF_SYNC_BATCH;
    if (later && d->n_sync_wait == DM_SYNC_WAIT_BATCHES && dm_sync_wait(d) != 0)
        return;                  /* not durable yet: keep it */
    if (dm_flush_spool(d, d->cf.spool.sync == CF_SYNC_ALWAYS) != 0)
        return;
    uint64_t end = pl_batch_end_seq(d->batch);
    if (later)
        d->sync_wait[d->n_sync_wait++] = d->batch;
    else
        pl_submit(d->pl, d->batch);
    d->batch = pl_batch_get(d->pl);
    if (d->batch == NULL) {
        lg_error("out of memory for a batch; replaying from the spool");
        d->live = false;
        dm_start_replay(d, end);
        return;
    }
    pl_batch_reset(d->batch, end);
    if (later)
        start_sync(d);
    dm_check_backpressure(d);
}

static void on_read_check(uv_check_t *h)
{
    uv_check_stop(h);
    flush_reads(h->data);
}

void dm_on_read_done(void *user)
{
    dm_daemon *d = user;
    d->now_valid = false;
    if (sp_pending_bytes(d->spool) >= DM_FLUSH_BYTES) {
        flush_reads(d);
        return;
    }
    if (!uv_is_active((uv_handle_t *)&d->read_check))
        uv_check_start(&d->read_check, on_read_check);
}

/* ---- acknowledged inputs (HTTP) ------------------------------------------- */

uint64_t dm_next_seq(void *user)
{
    dm_daemon *d = user;
    return sp_next_seq(d->spool);
}

/* Only real backpressure (everything in flight at max_buffered_bytes, a
 * spool that cannot be written) and shutdown: the input window's flow
 * control pauses lines clients, while HTTP requests, bounded by
 * max_body_bytes each, go on until the pressure is real. */
bool dm_busy(void *user)
{
    dm_daemon *d = user;
    return d->pressure || d->spool_broken || d->stopping;
}

/* Runs once per loop iteration after the reads, while replies wait: the
 * requests read in this iteration share one flush and one fsync. */
static void on_ack_check(uv_check_t *h)
{
    dm_daemon *d = h->data;
    if (dm_flush_spool(d, d->cf.spool.sync != CF_SYNC_NONE) == 0)
        ls_server_durable(d->ls, sp_flushed_seq(d->spool));
    if (!ls_server_waiting(d->ls))
        uv_check_stop(h);
}

void dm_want_durable(void *user)
{
    dm_daemon *d = user;
    if (!uv_is_active((uv_handle_t *)&d->ack_check))
        uv_check_start(&d->ack_check, on_ack_check);
}

/* ---- backpressure --------------------------------------------------------- */

/* Lines read but not yet parsed: beyond a few batches per core they only
 * cost memory (and the page faults of fresh memory, on the one thread
 * that reads every socket) without making parsing any sooner, so reading
 * pauses there and clients wait in their socket buffers. Burst capacity
 * is the socket buffers plus this window, not limits.max_buffered_bytes,
 * which bounds everything in flight (row groups included). */
static size_t input_window(const dm_daemon *d)
{
    size_t window = DM_INPUT_WINDOW_BYTES, limit = d->cf.limits.max_buffered_bytes / 4;
    return window < limit ? window : limit;
}

/* The lines in the window: those in the pipeline and those in batches
 * waiting for a sync (sync: batch). Counting only the pipeline's let up
 * to DM_SYNC_WAIT_BATCHES more batches be in flight: 200 MB from 16
 * clients made 21 batches (each touched for the first time: a page fault
 * per 4 KiB, 3-6 us each on this VM) where 14 do now. */
static size_t unparsed_bytes(const dm_daemon *d)
{
    size_t n = pl_input_bytes(d->pl);
    for (size_t i = 0; i < d->n_sync_wait; i++)
        n += pl_batch_bytes(d->sync_wait[i]);
    return n;
}

bool dm_window_paused(bool paused, size_t unparsed, size_t window)
{
    return unparsed >= window || (paused && unparsed > window / 2);
}

/* Pauses reading while the pipeline is behind: everything in flight has
 * reached limits.max_buffered_bytes or the spool cannot be written (a
 * problem: reported on /health and in the metrics), or unparsed lines
 * fill the input window (ordinary flow control: only logged at debug). */
void dm_check_backpressure(dm_daemon *d)
{
    size_t limit = d->cf.limits.max_buffered_bytes;
    size_t buffered = pl_buffered_bytes(d->pl);
    size_t input = unparsed_bytes(d);
    bool pressure = buffered >= limit || d->spool_broken ||
                    (!d->live && sp_pending_bytes(d->spool) >= limit / 4);
    if (pressure && !d->pressure) {
        d->pressure = true;
        /* Rows waiting in a half-full row group count too: write them out
         * so the buffer can drain. */
        pl_flush_rowgroup(d->pl);
        dm_set(&dm_counters_global.backpressure_active, 1);
        dm_health_set(DM_HEALTH_BACKPRESSURE, "reading paused: %zu bytes buffered (limit %zu)%s",
                      buffered, limit, d->spool_broken ? ", spool not writable" : "");
    } else if (!pressure && d->pressure && buffered <= limit / 4 * 3) {
        d->pressure = false;
        dm_set(&dm_counters_global.backpressure_active, 0);
        dm_health_clear(DM_HEALTH_BACKPRESSURE);
    }
    bool pause = d->pressure || dm_window_paused(d->paused, input, input_window(d));
    if (pause && !d->paused) {
        d->paused = true;
        d->paused_since_us = dm_now_us();
        ls_server_pause(d->ls);
        lg_debug("reading paused (%zu bytes buffered, %zu not yet parsed)", buffered, input);
    } else if (!pause && d->paused) {
        d->paused = false;
        ls_server_resume(d->ls);
        dm_add(&dm_counters_global.backpressure_us, (uint64_t)(dm_now_us() - d->paused_since_us));
        lg_debug("reading resumed");
    }
}

/* ---- replay ------------------------------------------------------------------ */

/* Reads spool records into one batch; returns 1 when the spool's end was
 * reached, 0 when the batch is full, < 0 on a read error. */
static int replay_batch(dm_daemon *d, pl_batch *b)
{
    pq_err e = {0};
    sp_record r;
    for (;;) {
        int rc = sp_reader_next(d->reader, &r, &e);
        if (rc == 0)
            return 1;
        if (rc == PQ_EPARSE) {
            lg_error("spool: %s; the records after it in that segment are lost", e.msg);
            continue;
        }
        if (rc < 0) {
            lg_error("spool: replay: %s", e.msg);
            return rc;
        }
        if (r.seq < d->replay_next)
            continue;
        if (pl_batch_lines(b) == 0)
            pl_batch_reset(b, r.seq);
        char source[SP_SOURCE_MAX + 1];
        snprintf(source, sizeof source, "%.*s", (int)r.source_len, r.source);
        if (pl_batch_add(b, source, r.line, r.len, r.len, false, r.ingest_us, 0) != 0)
            return PQ_ENOMEM;
        d->replay_next = r.seq + 1;
        dm_add(&dm_counters_global.spool_records_replayed, 1);
        if (pl_batch_bytes(b) >= PL_BATCH_BYTES)
            return 0;
    }
}

static void close_reader(dm_daemon *d)
{
    if (d->reader != NULL) {
        sp_reader_close(d->reader);
        d->reader = NULL;
    }
}

/* One step: one batch, if the pipeline has room. Returns 1 when done, 0
 * after handing a batch on, -1 when it could not go on now. */
static int replay_step(dm_daemon *d)
{
    if (pl_buffered_bytes(d->pl) >= d->cf.limits.max_buffered_bytes / 2)
        return -1;
    if (dm_flush_spool(d, d->cf.spool.sync == CF_SYNC_ALWAYS) != 0)
        return -1;
    pl_batch *b = pl_batch_get(d->pl);
    if (b == NULL)
        return -1;
    pl_batch_reset(b, d->replay_next);
    int rc = replay_batch(d, b);
    if (rc < 0) {
        pl_batch_destroy(b);
        return -1;               /* retried at the next step */
    }
    if (pl_batch_lines(b) > 0)
        pl_submit(d->pl, b);
    else
        pl_batch_destroy(b);
    if (rc == 0)
        return 0;
    if (d->batch == NULL && (d->batch = pl_batch_get(d->pl)) == NULL)
        return -1;               /* no memory for live batches yet: keep replaying */
    /* At the end of what was flushed: everything appended is flushed (the
     * flush above ran on this thread, and appends happen only here). */
    close_reader(d);
    d->live = true;
    pl_batch_reset(d->batch, d->replay_next);
    lg_info("spool: replay done, up to seq %llu", (unsigned long long)d->replay_next);
    return 1;
}

/* Runs again at once while it makes progress, and otherwise sleeps a
 * little: a full disk or a full pipeline must not make the loop spin. */
static void on_replay_timer(uv_timer_t *t)
{
    dm_daemon *d = t->data;
    if (d->stopping || pl_failed(d->pl)) {
        uv_timer_start(t, on_replay_timer, DM_REPLAY_WAIT_MS, 0);
        return;
    }
    int rc = replay_step(d);
    if (rc != 1)
        uv_timer_start(t, on_replay_timer, rc == 0 ? 0 : DM_REPLAY_WAIT_MS, 0);
}

static int open_reader(dm_daemon *d, uint64_t from)
{
    pq_err e = {0};
    close_reader(d);
    int rc = sp_reader_open(&d->reader, d->spool, from, &e);
    if (rc != 0) {
        d->reader = NULL;
        lg_error("spool: cannot replay from seq %llu: %s", (unsigned long long)from, e.msg);
    }
    return rc;
}

void dm_start_replay(dm_daemon *d, uint64_t from)
{
    /* Batches waiting for a sync were never handed on: replay them. */
    uint64_t waiting = dm_sync_drop(d, from);
    if (waiting < from)
        from = waiting;
    d->live = false;
    d->replay_next = from;
    if (d->batch != NULL)
        pl_batch_reset(d->batch, from);
    if (open_reader(d, from) != 0)
        return;
    uv_timer_start(&d->replay_timer, on_replay_timer, 0, 0);
}

int dm_replay_all(dm_daemon *d)
{
    uv_timer_stop(&d->replay_timer);
    if (d->live)
        return 0;
    if (d->reader == NULL && open_reader(d, d->replay_next) != 0)
        return -1;
    while (!pl_failed(d->pl)) {
        pl_wait_below(d->pl, d->cf.limits.max_buffered_bytes / 4, d->cf.limits.max_buffered_bytes / 4);
        int rc = replay_step(d);
        if (rc == 1)
            return 0;
        if (rc < 0 && d->spool_broken)
            return -1;           /* the spool cannot be flushed: give up for now */
    }
    return -1;
}
