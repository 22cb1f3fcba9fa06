/* pipeline.c - the pipeline's shared state, as every part of it uses it
 * (pipeline_int.h): the pools (batches, row groups, jobs, streams),
 * failure, the buffered-bytes accounting, and what owners ask of it
 * (drain, wait, stats, finished files).
 *
 * The bottom of the pipeline: the stages (shredstage.c, stages.c,
 * outfile.c, autoshred.c) and the workers (workers.c) call it; it calls none of
 * them. The worker threads, submission and the life cycle are workers.c.
 *
 * Threads: any; "lock held" below means the pipeline's mutex p->mu.
 * Memory: batches, row buffers and encode buffers are pooled and reused;
 * in steady state nothing is allocated per line or per value. */
#include "pipeline_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"

/* ---- pools (lock held) ------------------------------------------------- */

pq_rowgroup *pl_rowgroup_get(pl_pipeline *p, pq_err *err)
{
    dm_mutex_assert_held(&p->mu);
    if (p->n_pool > 0)
        return p->pool[--p->n_pool];
    pq_rowgroup *rg;
    return pq_rowgroup_new(&rg, p->ps, err) == 0 ? rg : NULL;
}

/* Keeps rg emptied (with its capacity) in pool, which holds *n of at
 * most max, or frees it when the pool is full. */
static void keep_rows(pq_rowgroup **pool, size_t *n, size_t max, pq_rowgroup *rg)
{
    if (*n >= max) {
        pq_rowgroup_destroy(rg);
        return;
    }
    pq_rowgroup_reset(rg);
    pool[(*n)++] = rg;
}

/* Keeps up to PL_SEGMENT_POOL_MAX segments' row buffers for reuse. */
void pl_rowgroup_put(pl_pipeline *p, pq_rowgroup *rg)
{
    dm_mutex_assert_held(&p->mu);
    if (rg != NULL)
        keep_rows(p->pool, &p->n_pool, PL_SEGMENT_POOL_MAX, rg);
}

pl_batch *pl_batch_get(pl_pipeline *p)
{
    dm_mutex_lock(&p->mu);
    pl_batch *b = p->free_batches;
    if (b != NULL) {
        p->free_batches = b->next;
        p->n_free_batches--;
    }
    dm_mutex_unlock(&p->mu);
    if (b == NULL)
        b = pl_batch_new();
    if (b != NULL) {
        b->next = NULL;
        b->marker = PL_MARK_NONE;
    }
    return b;
}

void pl_batch_take_rows(pl_pipeline *p, pl_batch *b)
{
    dm_mutex_assert_held(&p->mu);
    if (b->rows == NULL && p->n_free_rows > 0)
        b->rows = p->free_rows[--p->n_free_rows];
}

/* The row buffer (sized for a batch, not a row group) goes back to its
 * own pool (PL_FREE_ROWS_MAX); a few batches are kept for reuse, the
 * rest freed, so a burst does not leave its memory behind. */
void pl_batch_put(pl_pipeline *p, pl_batch *b)
{
    dm_mutex_assert_held(&p->mu);
    if (b->rows != NULL) {
        keep_rows(p->free_rows, &p->n_free_rows, PL_FREE_ROWS_MAX, b->rows);
        b->rows = NULL;
    }
    if (p->n_free_batches >= PL_FREE_BATCHES_MAX) {
        pl_batch_destroy(b);
        return;
    }
    pl_batch_reset(b, 0);
    b->next = p->free_batches;
    p->free_batches = b;
    p->n_free_batches++;
}

pl_job *pl_job_get(pl_pipeline *p, pq_err *err)
{
    dm_mutex_assert_held(&p->mu);
    pl_job *j = p->free_jobs;
    if (j != NULL) {
        p->free_jobs = j->next;
    } else if ((j = calloc(1, sizeof *j)) == NULL || (j->enc = pq_encoded_new()) == NULL) {
        free(j);
        pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
        return NULL;
    }
    pq_encoded *enc = j->enc;
    memset(j, 0, sizeof *j);
    j->enc = enc;
    return j;
}

/* A written row group's bytes are freed, not kept for the next. Its
 * pieces' memory (its large chunks' pages, pq_encoded_move_pieces) is
 * kept in p->spare_pieces, the last one's only, until the next segment
 * is fed (pl_job_pieces): its file's column writers whose pages have not
 * begun take it, and the next row group's pages fill memory touched
 * before, not fresh memory (taken at the next finish instead, it was held
 * beside a whole row group's pages: +5 MiB peak RSS). Not with routed
 * files: another file's leaves would hold it, maybe long after. */
void pl_job_put(pl_pipeline *p, pl_job *j)
{
    dm_mutex_assert_held(&p->mu);
    if (p->spare_pieces == NULL && !p->route)
        p->spare_pieces = pq_encoded_new(); /* NULL: none kept */
    if (p->spare_pieces != NULL)
        pq_encoded_move_pieces(p->spare_pieces, j->enc);
    pq_encoded_trim(j->enc);
    j->next = p->free_jobs;
    p->free_jobs = j;
}

void pl_job_pieces(pl_pipeline *p, pl_job *j)
{
    dm_mutex_lock(&p->mu);
    if (p->spare_pieces != NULL)
        pq_encoded_move_pieces(j->enc, p->spare_pieces);
    dm_mutex_unlock(&p->mu);
    pq_stream_adopt_pieces(j->file->stream, j->enc);
}

void pl_pieces_drop(pl_pipeline *p)
{
    dm_mutex_lock(&p->mu);
    pq_encoded *e = p->spare_pieces;
    p->spare_pieces = NULL;
    dm_mutex_unlock(&p->mu);
    pq_encoded_destroy(e);
}

/* Closed files' streams (lock not held: taken here): a partitioned
 * output closes a file and opens another all the time (1,000 files at
 * the end of a convert), and each new stream's array of column writers
 * (1.6 KiB a leaf) and their ~15 buffers a leaf were fresh memory to
 * fault in. Up to PL_POOL_MAX are kept, released (pq_stream_release:
 * their column writers' buffers' memory kept, within
 * PQ_STREAM_KEEP_BYTES; no schema or writer pinned). */
int pl_stream_new(pl_pipeline *p, pl_file *f, pq_err *err)
{
    dm_mutex_lock(&p->mu);
    pq_stream *shell = p->n_free_streams > 0 ? p->free_streams[--p->n_free_streams] : NULL;
    dm_mutex_unlock(&p->mu);
    return pq_stream_new_in(&f->stream, shell, f->w, err);
}

void pl_stream_put(pl_pipeline *p, pq_stream *s)
{
    if (s == NULL)
        return;
    pq_stream_release(s);
    dm_mutex_lock(&p->mu);
    if (p->n_free_streams < PL_POOL_MAX) {
        p->free_streams[p->n_free_streams++] = s;
        s = NULL;
    }
    dm_mutex_unlock(&p->mu);
    pq_stream_destroy(s);
}

/* Converted row groups the same way: an idle file's (partitioned output)
 * was freed after its row group, and the next file's made from nothing,
 * its leaves reserved again. Kept released (no schema: the next file's
 * layout may be another) and only up to PL_FREE_CONV_BYTES of room each. */
void pl_conv_put(pl_pipeline *p, pq_rowgroup *rg)
{
    if (rg == NULL)
        return;
    pq_rowgroup_release(rg);
    if (pq_rowgroup_capacity(rg) <= PL_FREE_CONV_BYTES) {
        dm_mutex_lock(&p->mu);
        if (p->n_free_conv < PL_POOL_MAX) {
            p->free_conv[p->n_free_conv++] = rg;
            rg = NULL;
        }
        dm_mutex_unlock(&p->mu);
    }
    pq_rowgroup_destroy(rg);
}

/* ---- failure ------------------------------------------------------------- */

void pl_fail(pl_pipeline *p, const pq_err *e)
{
    dm_mutex_assert_held(&p->mu);
    if (!p->failed) {
        p->failed = true;
        p->cleanup_pending = true;
        p->fail_reported = false;
        p->fail_err = *e;
        dm_add(&dm_counters_global.write_errors, 1);
    }
    pthread_cond_broadcast(&p->work_cv);
    pthread_cond_broadcast(&p->done_cv);
}

/* ---- what owners ask ------------------------------------------------------- */

static bool idle(const pl_pipeline *p)
{
    return p->order_head == NULL && p->job_head == NULL && !p->assembling && !p->writing &&
           p->busy == 0;
}

int pl_drain(pl_pipeline *p, pq_err *err)
{
    dm_mutex_lock(&p->mu);
    while (!(p->failed && p->fail_reported) && !(idle(p) && !p->failed))
        dm_cond_wait(&p->done_cv, &p->mu);
    int rc = 0;
    if (p->failed) {
        rc = p->fail_err.code ? p->fail_err.code : PQ_EIO;
        if (err != NULL)
            *err = p->fail_err;
    }
    dm_mutex_unlock(&p->mu);
    return rc;
}

void pl_wait_below(pl_pipeline *p, size_t input_limit, size_t rows_limit)
{
    /* Rows wait in segments for their encoder: more than a few waiting
     * means the encoders are behind, whatever the caller allows. */
    if (rows_limit > PL_PENDING_MAX)
        rows_limit = PL_PENDING_MAX;
    dm_mutex_lock(&p->mu);
    while (!p->failed && (p->buffered_input > input_limit || p->pending_rows_mem > rows_limit))
        dm_cond_wait(&p->done_cv, &p->mu);
    dm_mutex_unlock(&p->mu);
}

size_t pl_buffered_bytes(const pl_pipeline *p)
{
    return atomic_load_explicit(&p->buffered_atomic, memory_order_relaxed);
}

size_t pl_input_bytes(const pl_pipeline *p)
{
    return atomic_load_explicit(&p->input_atomic, memory_order_relaxed);
}

bool pl_routed(const pl_pipeline *p) { return p->route; }

bool pl_failed(const pl_pipeline *p)
{
    pl_pipeline *q = (pl_pipeline *)p;
    dm_mutex_lock(&q->mu);
    bool f = q->failed;
    dm_mutex_unlock(&q->mu);
    return f;
}

void pl_resume(pl_pipeline *p)
{
    dm_mutex_lock(&p->mu);
    while (p->failed && !p->fail_reported)
        dm_cond_wait(&p->done_cv, &p->mu);
    if (p->failed) {
        p->failed = false;
        memset(&p->fail_err, 0, sizeof p->fail_err);
    }
    dm_mutex_unlock(&p->mu);
}

uint64_t pl_file_seq(const pl_pipeline *p)
{
    return atomic_load(&((pl_pipeline *)p)->file_seq);
}

void pl_get_stats(const pl_pipeline *p, pl_stats *out)
{
    pl_pipeline *q = (pl_pipeline *)p;
    dm_mutex_lock(&q->mu);
    *out = q->stats;
    dm_mutex_unlock(&q->mu);
}

pl_finished *pl_take_finished(pl_pipeline *p, size_t *n)
{
    dm_mutex_lock(&p->mu);
    pl_finished *f = p->finished;
    *n = p->n_finished;
    p->finished = NULL;
    p->n_finished = p->cap_finished = 0;
    dm_mutex_unlock(&p->mu);
    return f;
}

/* Lock held. */
void pl_update_buffered(pl_pipeline *p)
{
    dm_mutex_assert_held(&p->mu);
    p->buffered = p->buffered_input + p->pending_rows_mem + p->cur_rg_mem + p->stream_mem;
    atomic_store_explicit(&p->buffered_atomic, p->buffered, memory_order_relaxed);
    atomic_store_explicit(&p->input_atomic, p->buffered_input, memory_order_relaxed);
    dm_set(&dm_counters_global.buffered_bytes, p->buffered);
    pthread_cond_broadcast(&p->done_cv);
}

void pl_pools_free(pl_pipeline *p)
{
    while (p->free_batches != NULL) {
        pl_batch *b = p->free_batches;
        p->free_batches = b->next;
        pl_batch_destroy(b);
    }
    p->n_free_batches = 0;
    while (p->n_free_rows > 0)
        pq_rowgroup_destroy(p->free_rows[--p->n_free_rows]);
    while (p->n_pool > 0)
        pq_rowgroup_destroy(p->pool[--p->n_pool]);
    while (p->free_jobs != NULL) {
        pl_job *j = p->free_jobs;
        p->free_jobs = j->next;
        pq_encoded_destroy(j->enc);
        free(j);
    }
    pq_encoded_destroy(p->spare_pieces);
    p->spare_pieces = NULL;
    while (p->n_free_streams > 0)
        pq_stream_destroy(p->free_streams[--p->n_free_streams]);
    while (p->n_free_conv > 0)
        pq_rowgroup_destroy(p->free_conv[--p->n_free_conv]);
}

void pl_check_idle_sums(const pl_pipeline *p)
{
#ifndef NDEBUG
    size_t cur = 0, fed = 0;
    for (const pl_file *f = p->lru_head; f != NULL; f = f->lru_next) {
        if (f == p->cur_file)
            continue;
        cur += f->a.cur_rg ? pq_rowgroup_buffered_bytes(f->a.cur_rg) : 0;
        fed += f->a.rg_fed;
    }
    assert(cur == p->idle_cur_bytes && fed == p->idle_fed_bytes);
#else
    (void)p;
#endif
}
