/* stages.c - the pipeline's stages (pipeline.h): shred a batch (any
 * worker), assemble batches into row groups in order (assembly token),
 * append encoded row groups and close files in order (write token).
 * Encoding itself is one call, in workers.c.
 *
 * Called by the workers (workers.c); calls the shared state (pipeline.c:
 * pools, failure, accounting), the output files (outfile.c) and the
 * files' layouts (autoshred.c), never back up into workers.c. */
#include "pipeline_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"

/* ---- shred (no lock) ----------------------------------------------------- */

static int add_reject(pl_batch *b, size_t line, int kind, const char *reason)
{
    pl_reject r = {.line = line, .reason_off = b->reasons.len, .kind = kind};
    if (pq_buf_append(&b->reasons, reason, strlen(reason) + 1) != 0 ||
        pq_buf_append(&b->rejects, &r, sizeof r) != 0)
        return PQ_ENOMEM;
    return 0;
}

/* The metric label of a shredder's reject: from its code, never from the
 * message, which is for people and may be reworded. */
dm_reject pl_reject_reason(sh_reject why)
{
    switch (why) {
    case SH_REJECT_EMPTY:
    case SH_REJECT_INVALID_JSON:
    case SH_REJECT_NOT_OBJECT:
        return DM_REJECT_INVALID_JSON;
    case SH_REJECT_NO_FIT:
    case SH_REJECT_MISSING_REQUIRED:
    case SH_REJECT_NONE:
        break;
    }
    return DM_REJECT_SCHEMA;
}

static int shred_line(pl_pipeline *p, pl_worker *wk, pl_batch *b, size_t i)
{
    const pl_line *l = pl_batch_line(b, i);
    char reason[128];
    if (l->oversized) {
        snprintf(reason, sizeof reason, "line of %" PRIu64 " bytes exceeds "
                 "limits.max_line_bytes (%zu)", l->total, p->cfg.max_line_bytes);
        return add_reject(b, i, DM_REJECT_TOO_LONG, reason);
    }
    pq_err e = {0};
    const char *ix = strstr((const char *)b->sources.data + l->source_off, PL_INDEX_TAG);
    if (ix != NULL)
        sh_set_index(wk->sh, ix + strlen(PL_INDEX_TAG), strlen(ix + strlen(PL_INDEX_TAG)));
    int rc = sh_shred_line(wk->sh, b->rows, (const char *)b->text.data + l->off, l->len,
                           l->ingest_us, &e);
    if (rc == SH_REJECTED)
        return add_reject(b, i, pl_reject_reason(sh_last_reject(wk->sh)), e.msg);
    if (rc < 0) {
        b->err = e;
        return rc;
    }
    uint32_t idx = (uint32_t)i;
    return pq_buf_append(&b->row_lines, &idx, sizeof idx) != 0 ? PQ_ENOMEM : 0;
}

void pl_shred_batch(pl_pipeline *p, pl_worker *wk, pl_batch *b)
{
    if (b->rows == NULL && pq_rowgroup_new(&b->rows, p->ps, &b->err) != 0) {
        b->rows = NULL;
        b->fatal = PQ_ENOMEM;
        return;
    }
    sh_shredder_new_batch(wk->sh);
    for (size_t i = 0; i < b->n_lines; i++) {
        int rc = shred_line(p, wk, b, i);
        if (rc != 0) {
            b->fatal = rc;
            if (b->err.msg[0] == '\0')
                pq_err_set(&b->err, rc, "pipeline: out of memory shredding a batch");
            return;
        }
    }
}

/* ---- jobs (lock held) ------------------------------------------------------ */

static void job_enqueue(pl_pipeline *p, pl_job *j)
{
    dm_mutex_assert_held(&p->mu);
    if (p->job_tail != NULL)
        p->job_tail->next = j;
    else
        p->job_head = j;
    p->job_tail = j;
    if (j->kind == PL_JOB_ROWGROUP) {
        if (p->encode_tail != NULL)
            p->encode_tail->next_encode = j;
        else
            p->encode_head = j;
        p->encode_tail = j;
    }
    pthread_cond_broadcast(&p->work_cv);
}

/* Lock held: buffered bytes went down, so the owner may read again. The
 * callback runs without the lock (it may ask the pipeline things). */
static void report_progress(pl_pipeline *p)
{
    dm_mutex_assert_held(&p->mu);
    if (p->cb.on_progress == NULL)
        return;
    dm_mutex_unlock(&p->mu);
    p->cb.on_progress(p->cb.user);
    dm_mutex_lock(&p->mu);
}

/* ---- assembly (assembly token, no lock unless said) --------------------------- */

/* The file's first segment decides its layout (autoshred.c) and opens
 * its writer (outfile.c opens it sooner when there is nothing to decide),
 * then its stream. */
static int start_file(pl_pipeline *p, pl_file *f, pq_err *err)
{
    int rc = f->w == NULL ? pl_file_start(p, f, p->cur_rg, err) : 0;
    return rc || f->stream != NULL ? rc : pq_stream_new(&f->stream, f->w, err);
}

/* The current segment becomes an encode job; `last` closes the row group
 * (its last job finishes the stream into the encoded row group). */
static int close_segment(pl_pipeline *p, bool last, pq_err *err)
{
    uint64_t rows = p->cur_rg ? pq_rowgroup_rows(p->cur_rg) : 0;
    if (rows == 0 && !(last && p->rg_open))
        return 0;
    bool sample = p->n_auto > 0 && p->cur_file->stream == NULL;
    if (p->cur_file->stream == NULL) {
        int rc = start_file(p, p->cur_file, err);
        if (rc != 0)
            return rc;
    }
    size_t mem = p->cur_rg ? pq_rowgroup_buffered_bytes(p->cur_rg) : 0;
    dm_mutex_lock(&p->mu);
    pq_rowgroup *rg = p->cur_rg ? p->cur_rg : pl_rowgroup_get(p, err);
    pl_job *j = rg ? pl_job_get(p, err) : NULL;
    if (j != NULL) {
        j->kind = PL_JOB_ROWGROUP;
        j->file = p->cur_file;
        j->rg = rg;
        j->first = !p->rg_open;
        j->last = last;
        j->sample = sample;
        j->ordinal = p->cur_file->ordinals;
        if (last)
            p->cur_file->ordinals++;
        j->rows = rows;
        j->mem = mem;
        p->cur_file->pending_bytes += mem;
        p->pending_rows_mem += mem;
        p->cur_rg_mem = 0;
        p->cur_rg = NULL;
        p->rg_open = !last;
        p->rg_rows = last ? 0 : p->rg_rows + rows;
        p->rg_fed = last ? 0 : p->rg_fed + mem;
        job_enqueue(p, j);
    } else if (rg != NULL && p->cur_rg == NULL) {
        pl_rowgroup_put(p, rg);
    }
    dm_mutex_unlock(&p->mu);
    return j != NULL ? 0 : PQ_ENOMEM;
}

static int close_rowgroup(pl_pipeline *p, pq_err *err)
{
    if (p->cur_rg != NULL && pq_rowgroup_rows(p->cur_rg) > 0)
        p->last_rg_rows = p->rg_rows + pq_rowgroup_rows(p->cur_rg);
    else if (p->rg_open)
        p->last_rg_rows = p->rg_rows;
    return close_segment(p, true, err);
}

static int close_file(pl_pipeline *p, dm_close why, pq_err *err)
{
    if (p->cur_file == NULL)
        return 0;
    int rc = close_rowgroup(p, err);
    if (rc == 0 && p->cur_file->w == NULL)
        rc = start_file(p, p->cur_file, err);   /* a file without rows */
    if (rc != 0)
        return rc;
    dm_mutex_lock(&p->mu);
    pl_job *j = pl_job_get(p, err);
    if (j != NULL) {
        j->kind = PL_JOB_CLOSE;
        j->file = p->cur_file;
        j->ready = true;
        p->cur_file = NULL;
        job_enqueue(p, j);
        dm_add(&dm_counters_global.files_closed[why], 1);
    }
    dm_mutex_unlock(&p->mu);
    return j != NULL ? 0 : PQ_ENOMEM;
}

/* Raw bytes of the row group: its queued segments' and the current one's
 * (row_group.max_bytes counts raw rows, as when row groups were buffered
 * whole). */
static size_t rowgroup_bytes(const pl_pipeline *p)
{
    return p->rg_fed + (p->cur_rg ? pq_rowgroup_buffered_bytes(p->cur_rg) : 0);
}

static uint64_t rowgroup_rows(const pl_pipeline *p)
{
    return p->rg_rows + (p->cur_rg ? pq_rowgroup_rows(p->cur_rg) : 0);
}

static bool rowgroup_full(const pl_pipeline *p)
{
    const cf_roll *r = &p->cfg.row_group;
    uint64_t rows = rowgroup_rows(p);
    return (r->max_rows && rows >= r->max_rows) ||
           (r->max_bytes && rowgroup_bytes(p) >= r->max_bytes);
}

/* The file's first segment, while its layout is undecided, is its sample
 * (PL_SAMPLE_*) when it has `shred: auto` columns. */
static bool segment_full(const pl_pipeline *p)
{
    bool sample = p->n_auto > 0 && p->cur_file->stream == NULL;
    uint64_t rows = sample ? PL_SAMPLE_ROWS : PL_SEGMENT_ROWS;
    size_t bytes = sample ? PL_SAMPLE_BYTES : PL_SEGMENT_BYTES;
    return p->cur_rg != NULL && (pq_rowgroup_rows(p->cur_rg) >= rows ||
                                 pq_rowgroup_buffered_bytes(p->cur_rg) >= bytes);
}

/* DM_CLOSE_ROWS or DM_CLOSE_SIZE when the current file is due to close,
 * DM_CLOSE_COUNT when not. */
static dm_close rotate_due(const pl_pipeline *p)
{
    const pl_file *f = p->cur_file;
    fs_usage u = {
        .bytes_written = atomic_load(&f->appended_bytes),
        /* raw bytes of the open row group, as when it was buffered whole
         * (its segments waiting to be fed count twice: a little early) */
        .bytes_buffered = f->pending_bytes + rowgroup_bytes(p),
        .rows_written = f->rows,
    };
    fs_rotate r = {.max_bytes = p->cfg.rotate.max_bytes, .max_rows = p->cfg.rotate.max_rows};
    if (!fs_rotate_due(&r, &u))
        return DM_CLOSE_COUNT;
    return r.max_rows != 0 && f->rows >= r.max_rows ? DM_CLOSE_ROWS : DM_CLOSE_SIZE;
}

/* How many of the batch's remaining rows fit the row group and file. */
static uint64_t rows_that_fit(const pl_pipeline *p, uint64_t left)
{
    uint64_t n = left;
    uint64_t in_rg = rowgroup_rows(p);
    if (p->cfg.row_group.max_rows && p->cfg.row_group.max_rows - in_rg < n)
        n = p->cfg.row_group.max_rows - in_rg;
    if (p->cfg.rotate.max_rows && p->cfg.rotate.max_rows - p->cur_file->rows < n)
        n = p->cfg.rotate.max_rows - p->cur_file->rows;
    return n;
}

/* Rows the segment being started will likely hold, judged by the batch
 * that starts it: what its limits and its row group's let it hold, or,
 * once a row group has closed, what the last one held (plus an eighth)
 * when that was less: a daemon's row groups close by age long before
 * their byte limit, and room reserved but never filled still fragments
 * the heap. 0: no reservation. */
static uint64_t expected_rowgroup_rows(const pl_pipeline *p, const pq_rowgroup *like)
{
    const cf_roll *r = &p->cfg.row_group;
    uint64_t rows = r->max_rows ? r->max_rows - p->rg_rows : UINT64_MAX;
    if (p->last_rg_rows > 0 && p->last_rg_rows + p->last_rg_rows / 8 < rows)
        rows = p->last_rg_rows + p->last_rg_rows / 8;
    rows = rows < PL_SEGMENT_ROWS ? rows : PL_SEGMENT_ROWS;
    size_t bytes = pq_rowgroup_buffered_bytes(like);
    uint64_t like_rows = pq_rowgroup_rows(like);
    size_t seg = r->max_bytes && r->max_bytes - p->rg_fed < PL_SEGMENT_BYTES
                 ? r->max_bytes - p->rg_fed : PL_SEGMENT_BYTES;
    if (bytes > 0 && like_rows > 0) {
        uint64_t by_bytes = (uint64_t)((double)seg / (double)bytes * (double)like_rows) + 1;
        rows = by_bytes < rows ? by_bytes : rows;
    }
    uint64_t file_left = p->cfg.rotate.max_rows ? p->cfg.rotate.max_rows - p->cur_file->rows
                                                : UINT64_MAX;
    rows = file_left < rows ? file_left : rows;
    return rows == UINT64_MAX ? 0 : rows;
}

/* How many of the n rows from `from` on the current file takes: those
 * whose ingestion time renders its directories. */
static uint64_t rows_in_period(const pl_pipeline *p, const pl_batch *b, uint64_t from,
                               uint64_t n)
{
    const uint32_t *idx = (const uint32_t *)(const void *)b->row_lines.data;
    for (uint64_t i = 0; p->period_s != 0 && i < n; i++)
        if (!pl_file_takes(p, p->cur_file, pl_batch_line(b, idx[from + i])->ingest_us / 1000000))
            return i;
    return n;
}

static int ensure_open(pl_pipeline *p, const pl_batch *b, uint64_t row, pq_err *err)
{
    if (p->cur_file == NULL) {
        const uint32_t *idx = (const uint32_t *)(const void *)b->row_lines.data;
        int rc = pl_file_open(p, pl_batch_line(b, idx[row])->ingest_us, &p->cur_file, err);
        if (rc != 0)
            return rc;
        p->cur_file->first_seq = p->next_seq;
    }
    if (p->cur_rg == NULL) {
        dm_mutex_lock(&p->mu);
        p->cur_rg = pl_rowgroup_get(p, err);
        dm_mutex_unlock(&p->mu);
        if (p->cur_rg == NULL)
            return PQ_ENOMEM;
        if (!p->rg_open)
            p->rg_started_us = pl_mono_us();
        int rc = pq_rowgroup_reserve_like(p->cur_rg, b->rows,
                                          expected_rowgroup_rows(p, b->rows), err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int move_rows(pl_pipeline *p, pl_batch *b, pq_err *err)
{
    const uint32_t *idx = (const uint32_t *)(const void *)b->row_lines.data;
    const uint64_t n_rows = pq_rowgroup_rows(b->rows);
    uint64_t moved = 0;
    while (moved < n_rows) {
        int rc = ensure_open(p, b, moved, err);
        uint64_t fit = rc ? 0 : rows_that_fit(p, n_rows - moved);
        uint64_t n = rc ? 0 : rows_in_period(p, b, moved, fit);
        if (rc == 0 && fit > 0 && n == 0) {
            /* The next row's time renders other directories. */
            if ((rc = close_file(p, DM_CLOSE_PERIOD, err)) != 0)
                return rc;
            continue;
        }
        rc = rc ? rc : pq_rowgroup_move_rows(p->cur_rg, b->rows, n, err);
        if (rc != 0)
            return rc;
        moved += n;
        p->cur_file->rows += n;
        p->next_seq = moved < n_rows ? b->first_seq + idx[moved] : pl_batch_end_seq(b);
        p->cur_file->end_seq = p->next_seq;
        if (rowgroup_full(p) && (rc = close_rowgroup(p, err)) != 0)
            return rc;
        if (segment_full(p) && (rc = close_segment(p, false, err)) != 0)
            return rc;
        dm_close why = rotate_due(p);
        if (why != DM_CLOSE_COUNT && (rc = close_file(p, why, err)) != 0)
            return rc;
    }
    p->next_seq = pl_batch_end_seq(b);
    if (p->cur_file != NULL)
        p->cur_file->end_seq = p->next_seq;
    return 0;
}

static int write_rejects(pl_pipeline *p, const pl_batch *b, pq_err *err)
{
    const pl_reject *r = (const pl_reject *)(const void *)b->rejects.data;
    size_t n = b->rejects.len / sizeof *r;
    char source[512];
    for (size_t i = 0; i < n; i++) {
        const pl_line *l = pl_batch_line(b, r[i].line);
        const char *src = (const char *)b->sources.data + l->source_off;
        const char *reason = (const char *)b->reasons.data + r[i].reason_off;
        if (l->lineno > 0)
            snprintf(source, sizeof source, "%s:%" PRIu64, src, l->lineno);
        else
            snprintf(source, sizeof source, "%s", src);
        dl_record rec = {.ts_us = l->ingest_us, .source = source, .reason = reason,
                         .raw = b->text.data + l->off, .raw_len = l->len, .bytes = l->total,
                         .truncated = l->oversized};
        dm_mutex_lock(&p->dl_mu);
        int rc = pl_dead_letter(p, &rec, err);
        dm_mutex_unlock(&p->dl_mu);
        if (rc != 0)
            return rc;
        dm_add(&dm_counters_global.records_rejected[r[i].kind], 1);
        if (p->cb.on_reject != NULL)
            p->cb.on_reject(p->cb.user, source, reason);
    }
    return 0;
}

static int assemble_marker(pl_pipeline *p, const pl_batch *b, pq_err *err)
{
    if (b->marker == PL_MARK_CLOSE)
        return close_file(p, DM_CLOSE_SHUTDOWN, err);
    if (b->marker == PL_MARK_FLUSH)
        return close_rowgroup(p, err);
    int64_t now = pl_mono_us();
    const cf_roll *rg = &p->cfg.row_group, *rot = &p->cfg.rotate;
    int rc = 0;
    if (p->cur_file != NULL && rot->max_age_ms &&
        now - p->cur_file->opened_us >= (int64_t)rot->max_age_ms * 1000)
        return close_file(p, DM_CLOSE_AGE, err);
    if ((p->cur_rg != NULL || p->rg_open) && rg->max_age_ms &&
        now - p->rg_started_us >= (int64_t)rg->max_age_ms * 1000)
        rc = close_rowgroup(p, err);
    return rc;
}

static int assemble(pl_pipeline *p, pl_batch *b, pq_err *err)
{
    if (b->marker != PL_MARK_NONE)
        return assemble_marker(p, b, err);
    if (b->fatal) {
        *err = b->err;
        return b->fatal;
    }
    size_t rejects = b->rejects.len / sizeof(pl_reject);
    int rc = write_rejects(p, b, err);
    rc = rc ? rc : move_rows(p, b, err);
    if (rc == 0) {
        p->stats.lines += b->n_lines;
        p->stats.rejected += rejects;
    }
    return rc;
}

void pl_assemble_run(pl_pipeline *p)
{
    dm_mutex_assert_held(&p->mu);
    p->assembling = true;
    while (!p->failed && p->order_head != NULL && p->order_head->shredded) {
        pl_batch *b = p->order_head;
        p->order_head = b->next;
        if (p->order_head == NULL)
            p->order_tail = NULL;
        dm_mutex_unlock(&p->mu);
        pq_err e = {0};
        int rc = assemble(p, b, &e);
        size_t rg_bytes = p->cur_rg ? pq_rowgroup_buffered_bytes(p->cur_rg) : 0;
        dm_mutex_lock(&p->mu);
        if (rc != 0)
            pl_fail(p, &e);
        p->buffered_input -= b->text.len;
        p->cur_rg_mem = rg_bytes;
        pl_update_buffered(p);
        pl_batch_put(p, b);
        report_progress(p);
    }
    p->assembling = false;
    pthread_cond_broadcast(&p->work_cv);
    pthread_cond_broadcast(&p->done_cv);
}

/* ---- writing (write token, no lock unless said) -------------------------------- */

static int write_job(pl_pipeline *p, pl_job *j, pq_err *err)
{
    if (j->kind == PL_JOB_CLOSE) {
        pq_stream_destroy(j->file->stream); /* every segment was encoded */
        j->file->stream = NULL;
        return pl_file_close(p, j->file, err);
    }
    if (!j->last)
        return 0;                /* a segment: in the stream already */
    int rc = pq_writer_append_encoded(j->file->w, j->enc, err);
    if (rc != 0)
        return rc;
    atomic_store(&j->file->appended_bytes, pq_writer_bytes_written(j->file->w));
    return 0;
}

void pl_write_run(pl_pipeline *p)
{
    dm_mutex_assert_held(&p->mu);
    p->writing = true;
    while (!p->failed && p->job_head != NULL && p->job_head->ready) {
        pl_job *j = p->job_head;
        dm_mutex_unlock(&p->mu);
        pq_err e = {0};
        int rc = write_job(p, j, &e);
        dm_mutex_lock(&p->mu);
        if (rc != 0) {
            pl_fail(p, &e);          /* the job stays queued: cleanup owns its file */
            break;
        }
        p->job_head = j->next;
        if (p->job_head == NULL)
            p->job_tail = NULL;
        if (j->kind == PL_JOB_ROWGROUP) {
            j->file->pending_bytes -= j->mem;
            p->pending_rows_mem -= j->mem;
            p->stats.rows += j->rows;
            pl_update_buffered(p);
        }
        pl_job_put(p, j);
        report_progress(p);
    }
    p->writing = false;
    pthread_cond_broadcast(&p->work_cv);
    pthread_cond_broadcast(&p->done_cv);
}
