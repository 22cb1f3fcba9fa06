/* stages.c - the pipeline's ordered stages (pipeline.h): assemble
 * shredded batches into row groups in order (assembly token), append
 * encoded row groups and close files in order (write token). Shredding
 * a batch is shredstage.c's; encoding itself is one call, in workers.c.
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
#include "pathkey.h"

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
 * its writer (outfile.c opens it sooner when there is nothing to decide);
 * the worker feeding that segment makes its stream (prepare_parts). */
static int start_file(pl_pipeline *p, pl_file *f, pq_err *err)
{
    int rc = f->w == NULL ? pl_file_start(p, f, p->cur_rg, err) : 0;
    f->started = rc == 0;
    return rc;
}

/* The current segment becomes an encode job; `last` closes the row group
 * (its last job finishes the stream into the encoded row group). */
static int close_segment(pl_pipeline *p, bool last, pq_err *err)
{
    uint64_t rows = p->cur_rg ? pq_rowgroup_rows(p->cur_rg) : 0;
    if (rows == 0 && !(last && p->rg_open))
        return 0;
    bool sample = p->n_auto > 0 && !p->cur_file->started;
    if (!p->cur_file->started) {
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
        j->closes = last && p->cur_file->closing;
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

/* ---- open files by key (partitioned output; assembly token) ----------------- */

static pl_file *route_find(const pl_pipeline *p, const char *key)
{
    for (pl_file *f = p->htab[pl_key_hash(key) & (p->hcap - 1)]; f != NULL; f = f->hnext)
        if (strcmp(f->key, key) == 0)
            return f;
    return NULL;
}

static void lru_unlink(pl_pipeline *p, pl_file *f)
{
    if (f->lru_prev != NULL)
        f->lru_prev->lru_next = f->lru_next;
    else
        p->lru_head = f->lru_next;
    if (f->lru_next != NULL)
        f->lru_next->lru_prev = f->lru_prev;
    else
        p->lru_tail = f->lru_prev;
    f->lru_prev = f->lru_next = NULL;
}

static void lru_push(pl_pipeline *p, pl_file *f)
{
    f->lru_prev = NULL;
    f->lru_next = p->lru_head;
    if (p->lru_head != NULL)
        p->lru_head->lru_prev = f;
    else
        p->lru_tail = f;
    p->lru_head = f;
}

static void route_insert(pl_pipeline *p, pl_file *f)
{
    pl_file **b = &p->htab[pl_key_hash(f->key) & (p->hcap - 1)];
    f->hnext = *b;
    *b = f;
    lru_push(p, f);
    p->n_open++;
    dm_set(&dm_counters_global.files_open, p->n_open);
}

static void route_forget(pl_pipeline *p, pl_file *f)
{
    for (pl_file **q = &p->htab[pl_key_hash(f->key) & (p->hcap - 1)]; *q != NULL;
         q = &(*q)->hnext) {
        if (*q == f) {
            *q = f->hnext;
            break;
        }
    }
    f->hnext = NULL;
    lru_unlink(p, f);
    p->n_open--;
    dm_set(&dm_counters_global.files_open, p->n_open);
}

/* The current file's row group goes back into it; no file is current. */
static void save_current(pl_pipeline *p)
{
    pl_file *f = p->cur_file;
    if (f == NULL)
        return;
    f->a = (pl_asm){.cur_rg = p->cur_rg, .cur_reserved = p->cur_reserved,
                    .rg_started_us = p->rg_started_us,
                    .rg_open = p->rg_open, .rg_rows = p->rg_rows, .rg_fed = p->rg_fed,
                    .last_rg_rows = p->last_rg_rows,
                    .cur_bytes = p->cur_rg ? pq_rowgroup_buffered_bytes(p->cur_rg) : 0};
    p->idle_cur_bytes += f->a.cur_bytes;
    p->idle_fed_bytes += f->a.rg_fed;
    p->cur_file = NULL;
    p->cur_rg = NULL;
    p->cur_reserved = false;
    p->rg_open = false;
    p->rg_rows = p->last_rg_rows = 0;
    p->rg_fed = 0;
}

/* f becomes the current file (its open row group in p's fields). */
static void switch_to(pl_pipeline *p, pl_file *f)
{
    if (p->cur_file == f)
        return;
    save_current(p);
    p->idle_cur_bytes -= f->a.cur_bytes;
    p->idle_fed_bytes -= f->a.rg_fed;
    p->cur_file = f;
    p->cur_rg = f->a.cur_rg;
    p->cur_reserved = f->a.cur_reserved;
    p->rg_started_us = f->a.rg_started_us;
    p->rg_open = f->a.rg_open;
    p->rg_rows = f->a.rg_rows;
    p->rg_fed = f->a.rg_fed;
    p->last_rg_rows = f->a.last_rg_rows;
    f->a.cur_rg = NULL;       /* f->a is stale until save_current */
}

/* Raw bytes of f's open row group (queued segments and the current one). */
static size_t open_rg_bytes(const pl_pipeline *p, const pl_file *f)
{
    if (f == p->cur_file)
        return p->rg_fed + (p->cur_rg ? pq_rowgroup_buffered_bytes(p->cur_rg) : 0);
    return f->a.rg_fed + f->a.cur_bytes;
}

/* Bytes of the segments being filled, of every open file. */
static size_t open_cur_bytes(const pl_pipeline *p)
{
    size_t n = p->cur_rg ? pq_rowgroup_buffered_bytes(p->cur_rg) : 0;
    return p->route ? n + p->idle_cur_bytes : n;
}

static int close_file(pl_pipeline *p, dm_close why, pq_err *err);
static int close_rowgroup(pl_pipeline *p, pq_err *err);

static int close_file(pl_pipeline *p, dm_close why, pq_err *err)
{
    if (p->cur_file == NULL)
        return 0;
    p->cur_file->closing = true;
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
        if (p->route)
            route_forget(p, p->cur_file);
        p->cur_file = NULL;
        p->last_rg_rows = 0;
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
    bool sample = p->n_auto > 0 && !p->cur_file->started;
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
        int rc = pl_file_open(p, pl_batch_line(b, idx[row])->ingest_us, p->next_seq, NULL,
                              &p->cur_file, err);
        if (rc != 0)
            return rc;
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

/* ---- routing rows by key (partitioned output; assembly token) ---------------- */

/* Whether the record of key at seq is in a published file (replay). */
static bool skipped(pl_pipeline *p, const char *key, uint64_t seq)
{
    dm_mutex_lock(&p->mu);
    bool yes = false;
    for (size_t i = 0; !yes && i < p->n_skip; i++)
        yes = seq >= p->skip[i].first && seq < p->skip[i].end && strcmp(p->skip[i].key, key) == 0;
    dm_mutex_unlock(&p->mu);
    return yes;
}

/* A new file for key, from the batch's line `line` on: past
 * output.max_open_files the least recently written one closes first. */
static int route_open(pl_pipeline *p, const pl_batch *b, uint32_t line, const char *key,
                      pq_err *err)
{
    const uint32_t max = p->cfg.max_open_files ? p->cfg.max_open_files
                                               : PL_MAX_OPEN_FILES_DEFAULT;
    if (p->n_open >= max && p->lru_tail != NULL) {
        switch_to(p, p->lru_tail);
        int rc = close_file(p, DM_CLOSE_MAX_OPEN, err);
        if (rc != 0)
            return rc;
    }
    save_current(p);
    const int64_t when = ((const int64_t *)(const void *)b->key_time.data)[line];
    pl_file *f;
    int rc = pl_file_open(p, when * 1000000, b->first_seq + line, key, &f, err);
    if (rc != 0)
        return rc;
    route_insert(p, f);
    p->cur_file = f;
    return 0;
}

static int route_rg(pl_pipeline *p, pq_err *err)
{
    if (p->cur_rg != NULL)
        return 0;
    dm_mutex_lock(&p->mu);
    p->cur_rg = pl_rowgroup_get(p, err);
    dm_mutex_unlock(&p->mu);
    if (p->cur_rg == NULL)
        return PQ_ENOMEM;
    p->cur_reserved = false;
    if (!p->rg_open)
        p->rg_started_us = pl_mono_us();
    return 0;
}

/* PL_RESERVE_AFTER: a routed segment is reserved once it holds this
 * fraction of the rows expected. Reserved at its second copy, 1,000 keys
 * of 80 rows each touched 4% more pages (buffers sized for ~1,000 rows,
 * a page each where doubling packed them); an eighth still spares most of
 * the copies: the ones before it copy an eighth of the rows in all. */
#define PL_RESERVE_AFTER 8

/* A routed segment that its key fills again (it has rows from earlier
 * copies) is reserved once for the rows it is expected to reach, shaped
 * like its own rows: the segment limit, or its share of the open files'
 * half of limits.max_buffered_bytes (bound_memory closes the largest past
 * it). Growing each leaf by doubling instead left the segments of 1,000
 * keys, filled in turns, 231 MB of rows in 403 MB of capacity, and its
 * realloc copies wrote a third of the run's page faults. Capacity is
 * reserved, not touched: what a key never fills costs address space. */
static int route_reserve(pl_pipeline *p, uint64_t n, pq_err *err)
{
    uint64_t have = pq_rowgroup_rows(p->cur_rg);
    if (p->cur_reserved || have == 0)
        return 0;
    bool sample = p->n_auto > 0 && !p->cur_file->started;
    uint64_t rows = sample ? PL_SAMPLE_ROWS : PL_SEGMENT_ROWS;
    size_t bytes = sample ? PL_SAMPLE_BYTES : PL_SEGMENT_BYTES;
    size_t share = p->cfg.max_buffered_bytes / 2 / (p->n_open ? p->n_open : 1);
    if (share > 0 && share < bytes)
        bytes = share;
    size_t per_row = pq_rowgroup_buffered_bytes(p->cur_rg) / have + 1;
    if (bytes / per_row < rows)
        rows = bytes / per_row;
    if (have < rows / PL_RESERVE_AFTER)
        return 0;                /* not yet: a key of a few rows keeps small buffers */
    p->cur_reserved = true;
    if (rows <= have + n)
        return 0;
    return pq_rowgroup_reserve_like(p->cur_rg, p->cur_rg, rows - have, err);
}

/* One key group's rows (rows [row, end) of b->rows) into its key's file;
 * those a published file holds already (replay) are left out. */
static int route_group(pl_pipeline *p, pl_batch *b, uint64_t row, uint64_t end, bool may_skip,
                       pq_err *err)
{
    const uint32_t *line = (const uint32_t *)(const void *)b->row_lines.data;
    const char *key = (const char *)b->keys.data +
                      ((const uint32_t *)(const void *)b->key_off.data)[line[row]];
    int rc = 0;
    while (rc == 0 && row < end) {
        if (may_skip && skipped(p, key, b->first_seq + line[row])) {
            row++;
            continue;
        }
        uint64_t e = row + 1;
        while (e < end && !(may_skip && skipped(p, key, b->first_seq + line[e])))
            e++;
        pl_file *f = route_find(p, key);
        if (f == NULL)
            rc = route_open(p, b, line[row], key, err);
        else
            switch_to(p, f);
        rc = rc ? rc : route_rg(p, err);
        if (rc != 0)
            break;
        f = p->cur_file;
        uint64_t n = rows_that_fit(p, e - row);
        if (n == 0) {            /* a full row group or file (closed after each copy) */
            rc = rowgroup_full(p) ? close_rowgroup(p, err) : close_file(p, DM_CLOSE_ROWS, err);
            continue;
        }
        if ((rc = route_reserve(p, n, err)) != 0)
            break;
        if ((rc = pq_rowgroup_copy_rows(p->cur_rg, b->rows, &b->rix, row, n, err)) != 0)
            break;
        row += n;
        f->rows += n;
        f->end_seq = b->first_seq + line[row - 1] + 1;
        f->written_us = p->now_us;
        if (f != p->lru_head) {
            lru_unlink(p, f);
            lru_push(p, f);
        }
        if (rowgroup_full(p) && (rc = close_rowgroup(p, err)) != 0)
            break;
        if (segment_full(p) && (rc = close_segment(p, false, err)) != 0)
            break;
        dm_close why = rotate_due(p);
        if (why != DM_CLOSE_COUNT)
            rc = close_file(p, why, err);
    }
    return rc;
}

/* The batch's rows, key group by key group (pl_shred_batch), each into
 * its key's file, copied out of the batch's one row buffer. */
static int route_rows(pl_pipeline *p, pl_batch *b, bool may_skip, pq_err *err)
{
    const uint32_t *end = (const uint32_t *)(const void *)b->grp_end.data;
    int rc = 0;
    for (size_t g = 0, from = 0; rc == 0 && g < b->n_groups; from = end[g++])
        if (end[g] > from)       /* else every line of the key was rejected */
            rc = route_group(p, b, from, end[g], may_skip, err);
    p->next_seq = pl_batch_end_seq(b);
    return rc;
}

/* The open files' row groups past half of limits.max_buffered_bytes: the
 * largest closes (a smaller row group), until they are below; never a
 * wait. Counted in raw bytes (fed segments too: their stream holds about
 * as much or less, in pages, open pages and dictionaries), which the
 * assembler alone knows: what the workers' streams hold depends on when
 * they ran, and row groups must not (the same bytes for any number of
 * workers). */
static int bound_memory(pl_pipeline *p, pq_err *err)
{
    pl_check_idle_sums(p);
    const size_t limit = p->cfg.max_buffered_bytes / 2;
    for (size_t tries = p->n_open; limit > 0 && tries > 0; tries--) {
        size_t total = p->idle_cur_bytes + p->idle_fed_bytes +
                       (p->cur_file ? open_rg_bytes(p, p->cur_file) : 0);
        if (total <= limit)
            return 0;
        size_t most = 0;
        pl_file *largest = NULL;
        for (pl_file *f = p->lru_head; f != NULL; f = f->lru_next) {
            size_t n = open_rg_bytes(p, f);
            if (n > most) {
                most = n;
                largest = f;
            }
        }
        if (largest == NULL)
            return 0;
        switch_to(p, largest);
        int rc = close_rowgroup(p, err);
        if (rc != 0)
            return rc;
        dm_add(&dm_counters_global.row_groups_closed_early, 1);
    }
    return 0;
}

static int route_marker(pl_pipeline *p, const pl_batch *b, pq_err *err)
{
    const int64_t now = pl_mono_us(), now_s = (int64_t)time(NULL);
    const cf_roll *rg = &p->cfg.row_group;
    int rc = 0;
    for (pl_file *f = p->lru_head, *next; rc == 0 && f != NULL; f = next) {
        next = f->lru_next;
        switch_to(p, f);
        dm_close why = b->marker == PL_MARK_TICK ? pl_file_age_due(p, f, now, now_s)
                                                 : DM_CLOSE_COUNT;
        if (b->marker == PL_MARK_CLOSE)
            rc = close_file(p, DM_CLOSE_SHUTDOWN, err);
        else if (b->marker == PL_MARK_FLUSH)
            rc = close_rowgroup(p, err);
        else if (why != DM_CLOSE_COUNT)
            rc = close_file(p, why, err);
        else if ((p->cur_rg != NULL || p->rg_open) && rg->max_age_ms &&
                 now - p->rg_started_us >= (int64_t)rg->max_age_ms * 1000)
            rc = close_rowgroup(p, err);
    }
    return rc;
}

static int write_rejects(pl_pipeline *p, const pl_batch *b, uint64_t dl_done, pq_err *err)
{
    const pl_reject *r = (const pl_reject *)(const void *)b->rejects.data;
    size_t n = b->rejects.len / sizeof *r;
    char source[512];
    for (size_t i = 0; i < n; i++) {
        const pl_line *l = pl_batch_line(b, r[i].line);
        const char *src = (const char *)b->sources.data + l->source_off;
        const char *reason = (const char *)b->reasons.data + r[i].reason_off;
        if (b->first_seq + r[i].line < dl_done)
            continue;            /* replay: the dead letters hold it already */
        if (l->lineno > 0)
            snprintf(source, sizeof source, "%s:%" PRIu64, src, l->lineno);
        else
            snprintf(source, sizeof source, "%s", src);
        dl_record rec = {.ts_us = l->ingest_us, .source = source, .reason = reason,
                         .raw = b->text.data + l->off, .raw_len = l->len, .bytes = l->total,
                         .truncated = l->oversized, .has_seq = p->cfg.dead_letter_seq,
                         .seq = b->first_seq + r[i].line};
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
    if (p->route)
        return route_marker(p, b, err);
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
    uint64_t dl_done = p->cfg.dl_done;   /* one file: what the dead letters held at start */
    bool may_skip = false;
    if (p->route) {
        dm_mutex_lock(&p->mu);
        dl_done = p->dl_done;
        may_skip = p->n_skip > 0 && b->first_seq < p->skip_max_end;
        dm_mutex_unlock(&p->mu);
    }
    int rc = write_rejects(p, b, dl_done, err);
    if (p->route) {
        p->now_us = pl_mono_us();
        rc = rc ? rc : route_rows(p, b, may_skip, err);
        rc = rc ? rc : bound_memory(p, err);
    } else {
        rc = rc ? rc : move_rows(p, b, err);
    }
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
        size_t rg_bytes = open_cur_bytes(p);
        dm_mutex_lock(&p->mu);
        if (rc != 0)
            pl_fail(p, &e);
        else if (b->marker == PL_MARK_NONE)
            p->assembled = p->next_seq;
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
        pl_stream_put(p, j->file->stream); /* every segment was encoded */
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
