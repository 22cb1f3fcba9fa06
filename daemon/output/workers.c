/* workers.c - the pipeline's worker threads and the order of work
 * (pipeline.h has the stages and the threads that run them), submission,
 * and the pipeline's life cycle (pl_new, pl_destroy).
 *
 * The top of the pipeline: it calls the stages (shredstage.c, stages.c,
 * outfile.c, autoshred.c) and the shared state's operations (pipeline.c); none of
 * them calls back into it.
 *
 * One mutex guards the queues; the work itself runs outside it. Two
 * stages must stay in order, so each has a token that one worker holds
 * at a time: assembly (p->assembling) and writing (p->writing). A worker
 * looks for work in this order: assemble, write, encode, shred, so data
 * already in memory moves on before more is taken in.
 *
 * Requests that must happen after the batches submitted before them
 * (close the files, flush the row group, age checks) travel as marker
 * batches in the same ordered list, so they never overtake data. */
#include "pipeline_int.h"

#include "pathkey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "column.h"
#include "counters.h"

/* ---- failure: the cleanup a worker does once every stage is idle ------- */

static bool cleanup_possible(const pl_pipeline *p)
{
    return p->cleanup_pending && !p->assembling && !p->writing && p->busy == 0;
}

/* Drops everything not yet published; every worker is idle. Lock held. */
static void cleanup(pl_pipeline *p)
{
    dm_mutex_assert_held(&p->mu);
    while (p->order_head != NULL) {
        pl_batch *b = p->order_head;
        p->order_head = b->next;
        pl_batch_put(p, b);
    }
    p->order_tail = NULL;
    p->shred_head = p->shred_tail = NULL;
    p->queued_batches = 0;
    dm_set(&dm_counters_global.queue_batches, 0);
    while (p->job_head != NULL) {
        pl_job *j = p->job_head;
        p->job_head = j->next;
        if (j->enc_rg != NULL && j->enc_rg != j->rg) /* a conversion, parts unfinished */
            pq_rowgroup_destroy(j->enc_rg);
        pl_rowgroup_put(p, j->rg);
        j->rg = NULL;
        pl_job_put(p, j);
    }
    p->job_tail = p->encode_head = p->encode_tail = NULL;
    p->files_tail = NULL;
    while (p->files != NULL) {
        pl_file *f = p->files;
        p->files = f->next_live;
        pq_stream_destroy(f->stream);
        pl_rowgroup_put(p, f->a.cur_rg);   /* an open file's, not current */
        pl_file_abort(f);
    }
    if (p->htab != NULL)
        memset(p->htab, 0, p->hcap * sizeof *p->htab);
    p->lru_head = p->lru_tail = NULL;
    p->out_head = p->out_tail = NULL;  /* their files are aborted above */
    p->n_open = 0;
    p->idle_cur_bytes = p->idle_fed_bytes = 0;
    if (p->route)
        dm_set(&dm_counters_global.files_open, 0);
    p->assembled = p->committed;
    p->last_rg_rows = 0;
    p->cur_file = NULL;
    pl_rowgroup_put(p, p->cur_rg);
    p->cur_rg = NULL;
    p->next_seq = p->committed;
    p->expect_seq = p->committed;
    p->buffered_input = 0;
    p->pending_rows_mem = 0;
    p->cur_rg_mem = 0;
    p->rg_open = false;
    p->rg_rows = 0;
    p->rg_fed = 0;
    p->stream_mem = 0;
    pl_update_buffered(p);
    p->cleanup_pending = false;
}

/* ---- workers -------------------------------------------------------------- */

/* How many workers share j's encoding, and the leaves each takes
 * (j->cut), balanced by buffered bytes; 1 for a small segment, where a
 * split would cost more than it saves. Runs before the job is shared. */
static size_t plan_parts(const pl_pipeline *p, pl_job *j)
{
    const pq_rowgroup *rg = j->enc_rg;
    size_t leaves = pq_schema_num_leaves(pq_rowgroup_schema(rg));
    size_t total = pq_rowgroup_buffered_bytes(rg);
    size_t n = p->n_workers < PL_ENCODE_PARTS ? p->n_workers : PL_ENCODE_PARTS;
    if (n > leaves)
        n = leaves;
    if (total < p->split_min_bytes || n < 2)
        n = 1;
    j->cut[0] = 0;
    size_t k = 1, acc = 0;
    for (size_t i = 0; i < leaves && k < n; i++) {
        acc += pq_column_buffered_bytes(pq_rowgroup_column((pq_rowgroup *)rg, i));
        /* leave at least one leaf for each part still to come */
        if (acc >= total / n * k || leaves - (i + 1) == n - k)
            j->cut[k++] = i + 1;
    }
    n = k;
    j->cut[n] = leaves;
    return n;
}

/* Part 0: the conversion of an auto-shredded file's segment, the start of
 * the row group's stream (its first segment; the file's first makes the
 * stream, in a closed file's when the pool keeps one) and the plan; then
 * the job goes back to the head of the encode queue, so idle workers take
 * the other parts while this one feeds its own. */
static int prepare_parts(pl_pipeline *p, pl_worker *wk, pl_job *j, pq_err *e)
{
    int rc = j->part_rc;         /* a conversion ahead failed */
    if (rc != 0)
        *e = j->part_err;
    if (rc == 0 && j->file->stream == NULL)
        rc = pl_stream_new(p, j->file, e);
    rc = rc ? rc : j->first ? pq_stream_begin(j->file->stream, j->ordinal, e) : 0;
    if (rc == 0)
        pl_job_pieces(p, j);
    if (rc == 0 && j->rows > 0 && !j->converted)
        rc = pl_auto_convert(p, wk, j, &j->enc_rg, e);
    size_t n = rc || j->rows == 0 ? 1 : plan_parts(p, j);
    dm_mutex_lock(&p->mu);
    j->n_parts = n;
    j->next_part = 1;
    if (n > 1) {
        j->next_encode = p->encode_head;
        p->encode_head = j;
        if (p->encode_tail == NULL)
            p->encode_tail = j;
        pthread_cond_broadcast(&p->work_cv);
    }
    dm_mutex_unlock(&p->mu);
    return rc;
}

/* The last part done (no other worker touches j or its file's stream
 * now): the rows counted, the row group finished into j->enc after its
 * last segment, buffers back to their pools. */
static int finish_parts(pl_pipeline *p, pl_worker *wk, pl_job *j, pq_err *e)
{
    int rc = j->part_rc;
    if (rc != 0)
        *e = j->part_err;
    pq_stream *s = j->file->stream;  /* NULL: making it failed */
    if (rc == 0)
        pq_stream_add_rows(s, j->rows);
    if (rc == 0 && j->last)
        rc = pq_stream_finish(s, j->enc, wk->scratch, e);
    /* One of many files (partitioned output): between its row groups it
     * holds no buffers, so an open file costs what its open row group
     * holds, not the high-water mark of its last one. A closing file's
     * stream is done: it goes back to the pool with its buffers, for the
     * next file's (its close, the writer's, finds none). */
    bool idle = p->route && j->last;
    if (j->closes && s != NULL) {
        pl_stream_put(p, s);
        j->file->stream = NULL;
    } else if (idle && s != NULL) {
        pq_stream_trim(s);
    }
    if (j->enc_rg != NULL && j->enc_rg != j->rg && (j->sample || idle))
        pl_conv_put(p, j->enc_rg);   /* for the next file's conversion */
    else if (j->enc_rg != NULL && j->enc_rg != j->rg)
        pl_auto_put(p, j->file, j->enc_rg);
    j->enc_rg = NULL;
    return rc;
}

/* Lock held: j's memory is now what it holds encoded (the row group, after
 * its last segment; nothing for another), and its file's stream's. */
static void account_encoded(pl_pipeline *p, pl_job *j)
{
    pl_file *f = j->file;
    size_t mem = j->last ? (size_t)pq_encoded_bytes(j->enc) : 0;
    size_t held = f->stream != NULL ? pq_stream_held_bytes(f->stream) : 0;
    f->pending_bytes = f->pending_bytes - j->mem + mem;
    p->pending_rows_mem = p->pending_rows_mem - j->mem + mem;
    j->mem = mem;
    p->stream_mem = p->stream_mem - f->stream_held + held;
    f->stream_held = held;
    f->stream_busy = false;
    pl_update_buffered(p);
}

/* Feeds part k of j (part 0 prepares the parts first) and returns with
 * the lock held, as work_once expects. */
static void run_encode(pl_pipeline *p, pl_worker *wk, pl_job *j, size_t k)
{
    pq_err e = {0};
    int rc = k == 0 ? prepare_parts(p, wk, j, &e) : 0;
    /* a row group's last segment: finish_parts finishes the stream next */
    if (rc == 0 && j->rows > 0)
        rc = (j->last ? pq_stream_feed_last : pq_stream_feed)(j->file->stream, j->enc_rg,
                                                              j->cut[k], j->cut[k + 1],
                                                              wk->scratch, &e);
    dm_mutex_lock(&p->mu);
    if (rc != 0 && j->part_rc == 0) {
        j->part_rc = rc;
        j->part_err = e;
    }
    if (++j->parts_done < j->n_parts)
        return;
    dm_mutex_unlock(&p->mu);
    rc = finish_parts(p, wk, j, &e);
    dm_mutex_lock(&p->mu);
    if (j->sample)
        pq_rowgroup_destroy(j->rg); /* its buffers are a sample's size */
    else
        pl_rowgroup_put(p, j->rg);
    j->rg = NULL;
    j->ready = true;
    account_encoded(p, j);
    if (rc != 0)
        pl_fail(p, &e);
}

/* The head segment waits for its file's previous one: its conversion to
 * the file's layout (which needs no order) is done meanwhile, so a file's
 * conversions and feeds overlap. Returns with the lock held. */
static void run_convert(pl_pipeline *p, pl_worker *wk, pl_job *j)
{
    pq_err e = {0};
    int rc = pl_auto_convert(p, wk, j, &j->enc_rg, &e);
    dm_mutex_lock(&p->mu);
    if (rc != 0 && j->part_rc == 0) {
        j->part_rc = rc;
        j->part_err = e;
    }
    j->converting = false;
    j->converted = true;
}

static void run_shred(pl_pipeline *p, pl_worker *wk, pl_batch *b)
{
    pl_shred_batch(p, wk, b);
    dm_mutex_lock(&p->mu);
    b->shredded = true;
}

/* Takes one piece of work, does it without the lock, and returns with the
 * lock held. Returns false when there is nothing to do. */
static bool work_once(pl_pipeline *p, pl_worker *wk)
{
    dm_mutex_assert_held(&p->mu);
    if (p->failed)
        return false;
    if (!p->assembling && p->order_head != NULL && p->order_head->shredded) {
        pl_assemble_run(p);
        return true;
    }
    if (!p->writing && p->job_head != NULL && p->job_head->ready) {
        pl_write_run(p);
        return true;
    }
    if (p->out_head != NULL && !p->creating) {
        /* A routed file to create (outfile.c), before more input: the
         * writer waits for it, the assembler no longer does. One worker
         * at a time: the kernel serializes the directories' creation in
         * their parent anyway, and the other worker shreds meanwhile. */
        pl_file *f = pl_file_create_next(p);
        p->busy++;
        p->creating = true;
        dm_mutex_unlock(&p->mu);
        pl_file_create(p, f);
        p->creating = false;
        p->busy--;
        pthread_cond_broadcast(&p->work_cv);
        return true;
    }
    pl_job *j = p->encode_head, *ahead = NULL;
    pl_batch *b = p->shred_head;
    size_t part = 0;
    /* a file's segments are fed in order, one job at a time; the next one
     * may meanwhile be converted to the file's layout */
    if (j != NULL && j->next_part == 0 && (j->file->stream_busy || j->converting)) {
        if (!j->converting && !j->converted && j->file->spec != NULL && j->rows > 0)
            ahead = j;
        j = NULL;
    }
    if (j == NULL && b == NULL && ahead == NULL)
        return false;
    if (ahead != NULL) {
        ahead->converting = true;
    } else if (j != NULL) {
        /* part 0 takes the job out until its parts are planned */
        part = j->next_part;
        if (part > 0)
            j->next_part++;
        else
            j->file->stream_busy = true;
        if (part == 0 || j->next_part >= j->n_parts) {
            p->encode_head = j->next_encode;
            if (p->encode_head == NULL)
                p->encode_tail = NULL;
        }
    } else {
        p->shred_head = b->next_shred;
        if (p->shred_head == NULL)
            p->shred_tail = NULL;
        pl_batch_take_rows(p, b);
        dm_set(&dm_counters_global.queue_batches, --p->queued_batches);
    }
    p->busy++;
    dm_mutex_unlock(&p->mu);
    int64_t t0 = pl_mono_us();
    if (ahead != NULL)
        run_convert(p, wk, ahead);
    else if (j != NULL)
        run_encode(p, wk, j, part);
    else
        run_shred(p, wk, b);
    dm_add(&dm_counters_global.worker_busy_us, (uint64_t)(pl_mono_us() - t0));
    p->busy--;
    pthread_cond_broadcast(&p->work_cv);
    return true;
}

static void *worker_main(void *arg)
{
    pl_worker *wk = arg;
    pl_pipeline *p = wk->p;
#if defined(__linux__)
    /* "parqd-wN" in top -H, perf and /proc: which thread burns the CPU. */
    char name[16];
    snprintf(name, sizeof name, "parqd-w%d", (int)(wk - p->workers));
    pthread_setname_np(pthread_self(), name);
#endif
    dm_mutex_lock(&p->mu);
    while (!p->stopping) {
        if (cleanup_possible(p)) {
            cleanup(p);
            uint64_t resume = p->committed;
            pq_err e = p->fail_err;
            pthread_cond_broadcast(&p->done_cv);
            dm_mutex_unlock(&p->mu);
            if (p->cb.on_failure != NULL)
                p->cb.on_failure(p->cb.user, resume, &e);
            if (p->cb.on_progress != NULL)
                p->cb.on_progress(p->cb.user);
            dm_mutex_lock(&p->mu);
            p->fail_reported = true;     /* pl_drain returns only after the owner heard */
            pthread_cond_broadcast(&p->done_cv);
            continue;
        }
        if (!work_once(p, wk))
            dm_cond_wait(&p->work_cv, &p->mu);
    }
    dm_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- submission ------------------------------------------------------------ */

static void enqueue(pl_pipeline *p, pl_batch *b)
{
    b->next = NULL;
    b->next_shred = NULL;
    if (p->order_tail != NULL)
        p->order_tail->next = b;
    else
        p->order_head = b;
    p->order_tail = b;
    if (b->marker != PL_MARK_NONE) {
        b->shredded = true;
    } else {
        if (p->shred_tail != NULL)
            p->shred_tail->next_shred = b;
        else
            p->shred_head = b;
        p->shred_tail = b;
        dm_set(&dm_counters_global.queue_batches, ++p->queued_batches);
    }
    pthread_cond_signal(&p->work_cv);
}

void pl_submit(pl_pipeline *p, pl_batch *b)
{
    dm_mutex_lock(&p->mu);
    if (p->failed || b->first_seq < p->expect_seq) {
        /* Dropped: after a failure everything from the watermark is replayed
         * once the owner resumes, so these lines come again. (A gap, seqs
         * lost to a damaged spool segment, is accepted.) */
        pl_batch_put(p, b);
        dm_mutex_unlock(&p->mu);
        return;
    }
    p->expect_seq = pl_batch_end_seq(b);
    p->buffered_input += b->text.len;
    pl_update_buffered(p);
    enqueue(p, b);
    dm_mutex_unlock(&p->mu);
}

static void submit_marker(pl_pipeline *p, int marker)
{
    pl_batch *b = pl_batch_get(p);
    dm_mutex_lock(&p->mu);
    if (b == NULL) {
        pl_fail(p, &(pq_err){PQ_ENOMEM, "pipeline: out of memory"});
    } else if (p->failed) {
        pl_batch_put(p, b);
    } else {
        pl_batch_reset(b, p->expect_seq);
        b->marker = marker;
        enqueue(p, b);
    }
    dm_mutex_unlock(&p->mu);
}

void pl_tick(pl_pipeline *p) { submit_marker(p, PL_MARK_TICK); }
void pl_close_files(pl_pipeline *p) { submit_marker(p, PL_MARK_CLOSE); }
void pl_flush_rowgroup(pl_pipeline *p) { submit_marker(p, PL_MARK_FLUSH); }

/* ---- life cycle ------------------------------------------------------------- */

/* cfg.workers, else PARQD_WORKERS from the environment (tests compare
 * one worker with several), else one per online CPU. */
static size_t worker_count(size_t want)
{
    const char *env = getenv("PARQD_WORKERS");
    if (want == 0 && env != NULL)
        want = (size_t)strtoul(env, NULL, 10);
    if (want > 0)
        return want > PL_WORKERS_MAX ? PL_WORKERS_MAX : want;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > PL_WORKERS_MAX ? PL_WORKERS_MAX : (size_t)n;
}

/* PL_SPLIT_MIN_BYTES, or PARQD_ENCODE_SPLIT_BYTES from the environment
 * (tests split even small row groups, to compare the bytes with 1 worker) */
static size_t split_min_bytes(void)
{
    const char *env = getenv("PARQD_ENCODE_SPLIT_BYTES");
    return env != NULL ? (size_t)strtoull(env, NULL, 10) : PL_SPLIT_MIN_BYTES;
}

static int copy_config(pl_pipeline *p, const pl_config *cfg, pq_err *err)
{
    p->cfg = *cfg;
    p->wopts = *cfg->writer;
    p->cfg.writer = &p->wopts;
    p->out_dir = strdup(cfg->out_dir);
    p->tmpl = strdup(cfg->path_template ? cfg->path_template : "");
    p->file_name = cfg->file_name ? strdup(cfg->file_name) : NULL;
    p->host = strdup(cfg->host ? cfg->host : "localhost");
    p->cfg.out_dir = p->out_dir;
    p->cfg.path_template = p->tmpl;
    p->cfg.file_name = p->file_name;
    p->cfg.host = p->host;
    if (!p->out_dir || !p->tmpl || !p->host || (cfg->file_name && !p->file_name))
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    size_t off = 0;
    if (p->file_name == NULL && pt_parse(p->tmpl, &p->tpl, &off, err) != 0)
        return pq_err_prefix(err, err->code, "output path, offset %zu", off);
    int trc = p->file_name == NULL ? et_resolve(cfg->schema, cfg->time_from, &p->ts, err) : 0;
    if (trc != 0)
        return pq_err_prefix(err, trc, "output.time_from");
    p->cfg.time_from = NULL;     /* resolved into p->ts */
    p->route = p->file_name == NULL && (p->tpl.n_fields > 0 || p->ts.set);
    if (p->route) {
        p->wopts.small_chunk_bytes = PL_SMALL_CHUNK_BYTES;
        p->wopts.small_page_bytes = PL_SMALL_PAGE_BYTES;
    }
    /* Routed records: the key holds the directories' time, so a file
     * never needs to close for a record of another period; it closes
     * once its period has passed and it is idle (route_marker). */
    p->period_s = p->file_name == NULL && !p->route ? pt_dir_period(&p->tpl) : 0;
    p->route_period_s = p->route ? pt_dir_period(&p->tpl) : 0;
    if (p->route) {
        const uint32_t max = cfg->max_open_files ? cfg->max_open_files : 256;
        for (p->hcap = 16; p->hcap < 2 * (size_t)max; p->hcap *= 2)
            ;
        if ((p->htab = calloc(p->hcap, sizeof *p->htab)) == NULL)
            return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
        int rc = 0;
        dm_mutex_lock(&p->mu);   /* no worker yet, but the skip list is the lock's */
        for (size_t i = 0; rc == 0 && i < cfg->n_published; i++) {
            const sp_range *r = &cfg->published[i];
            rc = pl_skip_add(p, r->key, r->first, r->end, cfg->first_seq);
        }
        p->dl_done = cfg->dl_done;
        dm_mutex_unlock(&p->mu);
        if (rc != 0)
            return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    }
    p->cfg.published = NULL;
    p->cfg.n_published = 0;
    p->store = cfg->store;
    if (p->store == NULL && st_local_new(&p->own_store, p->out_dir, err) != 0)
        return PQ_ENOMEM;
    p->store = p->store ? p->store : p->own_store;
    p->cfg.store = p->store;
    return 0;
}

static int start_workers(pl_pipeline *p, pq_err *err)
{
    p->n_workers = worker_count(p->cfg.workers);
    p->split_min_bytes = split_min_bytes();
    p->workers = calloc(p->n_workers, sizeof *p->workers);
    if (p->workers == NULL)
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    for (size_t i = 0; i < p->n_workers; i++) {
        pl_worker *wk = &p->workers[i];
        wk->p = p;
        vs_state_init(&wk->vs);
        if ((wk->scratch = pq_encoded_new()) == NULL)
            return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
        int rc = sh_shredder_new(&wk->sh, p->cfg.schema, err);
        if (rc == 0 && p->route)
            rc = pk_new(&wk->pk, &p->tpl, &p->ts, err);
        if (rc != 0)
            return rc;
    }
    for (size_t i = 0; i < p->n_workers; i++) {
        if (pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]) != 0)
            return pq_err_set(err, PQ_ENOMEM, "pipeline: cannot start worker threads");
        p->workers[i].started = true;
    }
    dm_set(&dm_counters_global.workers, p->n_workers);
    return 0;
}

int pl_new(pl_pipeline **out, const pl_config *cfg, const pl_callbacks *cb, pq_err *err)
{
    *out = NULL;
    pl_pipeline *p = calloc(1, sizeof *p);
    if (p == NULL)
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    dm_mutex_init(&p->mu);
    dm_mutex_init(&p->dl_mu);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (cb != NULL)
        p->cb = *cb;
    p->committed = p->next_seq = p->expect_seq = p->assembled = cfg->first_seq;
    atomic_store(&p->file_seq, cfg->file_seq);
    p->pid = (long)getpid();
    int rc = copy_config(p, cfg, err);
    rc = rc ? rc : sc_build_parquet_schema(cfg->schema, &p->ps, err);
    rc = rc ? rc : pq_schema_finish(p->ps, err);
    rc = rc ? rc : pl_auto_init(p, err);
    rc = rc ? rc : start_workers(p, err);
    if (rc != 0) {
        pl_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

void pl_destroy(pl_pipeline *p)
{
    if (p == NULL)
        return;
    dm_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->work_cv);
    dm_mutex_unlock(&p->mu);
    for (size_t i = 0; p->workers && i < p->n_workers; i++) {
        if (p->workers[i].started)
            pthread_join(p->workers[i].thread, NULL);
        sh_shredder_destroy(p->workers[i].sh);
        pk_free(p->workers[i].pk);
        pq_buf_free(&p->workers[i].ktab);
        pq_buf_free(&p->workers[i].kgroups);
        pq_buf_free(&p->workers[i].korder);
        vs_state_free(&p->workers[i].vs);
        pq_encoded_destroy(p->workers[i].scratch);
    }
    free(p->workers);
    dm_mutex_lock(&p->mu);       /* alone now, but cleanup's callees expect it */
    cleanup(p);
    dm_mutex_unlock(&p->mu);
    pl_pools_free(p);
    free(p->htab);
    for (size_t i = 0; i < p->n_skip; i++)
        free(p->skip[i].key);
    free(p->skip);
    for (size_t i = 0; i < p->n_finished; i++)
        st_free(pl_finished_file(&p->finished[i]));
    free(p->finished);
    st_destroy(p->own_store);
    pl_auto_free(p);
    pq_schema_destroy(p->ps);
    free(p->auto_cols);
    free(p->out_dir);
    pt_free(&p->tpl);
    et_source_free(&p->ts);
    free(p->tmpl);
    free(p->file_name);
    free(p->host);
    dm_mutex_destroy(&p->mu);
    dm_mutex_destroy(&p->dl_mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    free(p);
}
