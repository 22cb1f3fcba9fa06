/* outfile.c - the pipeline's output files: named from the path template
 * at the first record's time (event time with output.time_from, else
 * ingestion), opened by the assembler (a hidden
 * file of the pipeline's store, store.h: a hidden temporary file, or an S3
 * upload), closed and published by the writer: footer with the file's
 * spool range, finish (fsync, or the last part uploaded), then (daemon)
 * the spool's publish intent and the store's publication (a no-overwrite
 * rename and the directory fsync; a PUT or CompleteMultipartUpload), or
 * (convert) kept hidden for the caller. Stores whose names must be
 * deterministic for a spool range (S3: a replay overwrites the same key)
 * get {seq} rendered from the file's first spool seq. Also the dead-letter
 * appends, under their lock.
 *
 * A routed file's store file is created off the assembly path: the
 * assembler queues it, a worker with nothing more urgent creates it
 * (pl_file_create), and the writer, which needs it first, creates it
 * itself if it is still queued then. Creating a partition's directory
 * and file costs the kernel about a millisecond (ext4 inode allocation,
 * more right after the previous output was deleted): with 1,000 routed
 * files that held the assembler a second while the other worker idled.
 *
 * Threads: pl_file_open runs with the assembly token, pl_file_close with
 * the write token, pl_file_create on any worker; none holds the pipeline
 * lock except to touch the shared lists. */
#include "pipeline_int.h"

#include <inttypes.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"

static int render_name(pl_pipeline *p, pl_file *f, pq_err *err)
{
    if (p->file_name != NULL) {
        snprintf(f->name, sizeof f->name, "%s", p->file_name);
        return 0;
    }
    uint64_t seq = atomic_fetch_add(&p->file_seq, 1) + 1;
    if (p->store->ops->replay_same_name)
        seq = f->first_seq;
    if (!p->route)
        return pt_render(p->tmpl, f->first_time, p->host, p->pid, seq, f->name, sizeof f->name,
                         err);
    /* The key's first segments are the fields' values, escaped. */
    pt_value v[PT_FIELDS_MAX];
    const char *k = f->key;
    for (size_t i = 0; i < p->tpl.n_fields; i++) {
        const char *slash = strchr(k, '/');
        if (slash == NULL)
            return pq_err_set(err, PQ_EINVAL, "pipeline: partition key '%s' has too few "
                              "fields", f->key);
        v[i] = (pt_value){.p = k, .len = (size_t)(slash - k)};
        k = slash + 1;
    }
    const pt_vars vars = {.t = f->first_time, .host = p->host, .pid = p->pid, .seq = seq,
                          .fields = v, .n_fields = p->tpl.n_fields, .escaped = true};
    return pt_render_vars(&p->tpl, &vars, f->name, sizeof f->name, err);
}

int pl_skip_add(pl_pipeline *p, const char *key, uint64_t first, uint64_t end,
                uint64_t watermark)
{
    dm_mutex_assert_held(&p->mu);
    size_t kept = 0;
    p->skip_max_end = 0;
    for (size_t i = 0; i < p->n_skip; i++) {
        if (p->skip[i].end <= watermark) {
            free(p->skip[i].key);
            continue;
        }
        p->skip[kept++] = p->skip[i];
        if (p->skip[i].end > p->skip_max_end)
            p->skip_max_end = p->skip[i].end;
    }
    p->n_skip = kept;
    if (key == NULL || end <= watermark)
        return 0;
    if (p->n_skip == p->cap_skip) {
        size_t cap = p->cap_skip ? p->cap_skip * 2 : 16;
        pl_range *n = realloc(p->skip, cap * sizeof *n);
        if (n == NULL)
            return PQ_ENOMEM;
        p->skip = n;
        p->cap_skip = cap;
    }
    char *k = strdup(key);
    if (k == NULL)
        return PQ_ENOMEM;
    p->skip[p->n_skip++] = (pl_range){.first = first, .end = end, .key = k};
    if (end > p->skip_max_end)
        p->skip_max_end = end;
    return 0;
}

/* f's period becomes the pt_dir_period seconds holding t (routed files:
 * those of its key's time, for the period close). */
static void period_bounds(const pl_pipeline *p, pl_file *f, int64_t t)
{
    const int64_t g = p->route ? p->route_period_s : p->period_s;
    f->period_lo = g ? t - ((t % g) + g) % g : INT64_MIN;
    f->period_hi = g ? f->period_lo + g : INT64_MAX;
}

bool pl_file_takes(const pl_pipeline *p, pl_file *f, int64_t t)
{
    if (t >= f->period_lo && t < f->period_hi)
        return true;
    char key[PL_PERIOD_KEY_MAX];
    if (pt_dir_time_key(&p->tpl, (time_t)t, key, sizeof key, NULL) != 0 ||
        strcmp(key, f->period_key) != 0)
        return false;
    period_bounds(p, f, t);
    return true;
}

dm_close pl_file_age_due(const pl_pipeline *p, const pl_file *f, int64_t now_us, int64_t now_s)
{
    const uint64_t age = p->cfg.rotate.max_age_ms;
    if (p->route_period_s != 0 && now_s >= f->period_hi)
        return et_period_close_due(f->period_hi, now_s, (now_us - f->written_us) / 1000, age)
               ? DM_CLOSE_PERIOD : DM_CLOSE_COUNT;
    return age && now_us - f->opened_us >= (int64_t)age * 1000 ? DM_CLOSE_AGE : DM_CLOSE_COUNT;
}

/* A key that cannot be rendered (a time out of range) leaves the file
 * without a period: its name failed to render too, so it is not opened. */
static void set_period(const pl_pipeline *p, pl_file *f)
{
    period_bounds(p, f, (int64_t)f->first_time);
    if (p->period_s != 0 && pt_dir_time_key(&p->tpl, f->first_time, f->period_key,
                                            sizeof f->period_key, NULL) != 0) {
        f->period_lo = INT64_MIN;
        f->period_hi = INT64_MAX;
    }
}

/* Lock held: f joins the live files in first_seq order. The assembler
 * opens files in seq order, so it goes last; the walk back is there so
 * that the watermark (the first live file's first_seq) can never be
 * above a live file's first record, whatever the order. */
static void link_live(pl_pipeline *p, pl_file *f)
{
    dm_mutex_assert_held(&p->mu);
    pl_file *prev = p->files_tail;
    while (prev != NULL && prev->first_seq > f->first_seq)
        prev = prev->prev_live;
    f->prev_live = prev;
    f->next_live = prev ? prev->next_live : p->files;
    *(f->prev_live ? &f->prev_live->next_live : &p->files) = f;
    *(f->next_live ? &f->next_live->prev_live : &p->files_tail) = f;
}

/* ---- routed files' store files: created off the assembly path ------------- */

/* Lock held. */
static void out_queue(pl_pipeline *p, pl_file *f)
{
    f->out_state = PL_OUT_QUEUED;
    f->next_out = NULL;
    *(p->out_tail ? &p->out_tail->next_out : &p->out_head) = f;
    p->out_tail = f;
}

/* Lock held: f leaves the queue (the writer wants it before a worker took
 * it: usually near the head). */
static void out_unqueue(pl_pipeline *p, pl_file *f)
{
    pl_file *prev = NULL;
    for (pl_file *g = p->out_head; g != NULL && g != f; g = g->next_out)
        prev = g;
    *(prev ? &prev->next_out : &p->out_head) = f->next_out;
    if (p->out_tail == f)
        p->out_tail = prev;
    f->next_out = NULL;
}

pl_file *pl_file_create_next(pl_pipeline *p)
{
    dm_mutex_assert_held(&p->mu);
    pl_file *f = p->out_head;
    if (f != NULL) {
        out_unqueue(p, f);
        f->out_state = PL_OUT_OPENING;
    }
    return f;
}

/* No lock on entry; returns with it held. A failure fails the pipeline
 * (as when the assembler created files) and is kept for the writer. */
void pl_file_create(pl_pipeline *p, pl_file *f)
{
    pq_err e = {0};
    st_file *out = NULL;
    int rc = st_open(p->store, f->name, &out, &e);
    dm_mutex_lock(&p->mu);
    f->out = rc ? NULL : out;
    f->out_rc = rc;
    f->out_err = e;
    f->out_state = PL_OUT_DONE;
    if (rc != 0)
        pl_fail(p, &e);
    pthread_cond_broadcast(&p->done_cv);
}

/* Writer: f's store file exists (created here if still queued), holding
 * the bytes that waited for it. */
static int out_ready(pl_pipeline *p, pl_file *f, pq_err *err)
{
    if (f->out_ready || !p->route)
        return 0;
    dm_mutex_lock(&p->mu);
    if (f->out_state == PL_OUT_QUEUED) {
        out_unqueue(p, f);
        f->out_state = PL_OUT_OPENING;
        dm_mutex_unlock(&p->mu);
        pl_file_create(p, f);
    }
    while (f->out_state != PL_OUT_DONE)
        dm_cond_wait(&p->done_cv, &p->mu);
    int rc = f->out_rc;
    if (rc != 0)
        *err = f->out_err;
    dm_mutex_unlock(&p->mu);
    if (rc != 0)
        return rc;
    f->out_ready = true;
    rc = f->head_len ? st_append(f->out, f->head, f->head_len, err) : 0;
    f->head_len = 0;
    return rc;
}

/* A routed file's sink: the first bytes (the magic, which the writer
 * writes when it opens, on the assembler) wait in f->head, so that only
 * the write token waits for the store file. */
static int routed_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    pl_file *f = ctx;
    if (!f->out_ready && n <= sizeof f->head - f->head_len) {
        memcpy(f->head + f->head_len, data, n);
        f->head_len += n;
        return 0;
    }
    int rc = out_ready(f->pipe, f, err);
    return rc ? rc : st_append(f->out, data, n, err);
}

int pl_file_open(pl_pipeline *p, int64_t first_ingest_us, uint64_t first_seq, const char *key,
                 pl_file **out, pq_err *err)
{
    pl_file *f = calloc(1, sizeof *f);
    if (f == NULL || (key != NULL && (f->key = strdup(key)) == NULL)) {
        free(f);
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    }
    f->first_seq = first_seq;    /* assembly token held */
    f->first_time = (time_t)(first_ingest_us / 1000000);
    f->opened_us = f->written_us = pl_mono_us();
    set_period(p, f);
    int rc = render_name(p, f, err);
    rc = rc || p->route ? rc : st_open(p->store, f->name, &f->out, err);
    if (rc != 0) {
        free(f->key);
        free(f);
        return rc;
    }
    f->pipe = p;
    f->sink = p->route ? (pq_sink){.ctx = f, .write = routed_write} : st_sink(f->out);
    /* With `shred: auto` columns the writer opens once the first row group
     * has decided the file's layout (pl_file_start). */
    if (p->n_auto == 0 && (rc = pl_file_start(p, f, NULL, err)) != 0) {
        f->w = NULL;
        pl_file_abort(f);
        return rc;
    }
    dm_mutex_lock(&p->mu);
    link_live(p, f);
    if (p->route) {
        out_queue(p, f);
        pthread_cond_signal(&p->work_cv);
    }
    dm_mutex_unlock(&p->mu);
    *out = f;
    return 0;
}

void pl_file_abort(pl_file *f)
{
    if (f == NULL)
        return;
    pq_writer_destroy(f->w);
    pl_file_auto_free(f);
    st_abort(f->out, NULL);
    st_free(f->out);
    free(f->key);
    free(f);
}

/* Lock held. */
static void unlink_live(pl_pipeline *p, pl_file *f)
{
    dm_mutex_assert_held(&p->mu);
    if (f->prev_live == NULL && p->files != f)
        return;                  /* not linked */
    *(f->prev_live ? &f->prev_live->next_live : &p->files) = f->next_live;
    *(f->next_live ? &f->next_live->prev_live : &p->files_tail) = f->prev_live;
    f->next_live = f->prev_live = NULL;
}

/* Footer (with the spool range in the key-value metadata), fsync. */
static int finish(pl_pipeline *p, pl_file *f, uint64_t *bytes, pq_err *err)
{
    char range[48];
    snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, f->first_seq, f->end_seq);
    int rc = pq_writer_add_metadata(f->w, "parqd.spool", range, err);
    rc = rc ? rc : pq_writer_close(f->w, err);
    *bytes = pq_writer_bytes_written(f->w);
    pq_writer_destroy(f->w);
    f->w = NULL;
    pl_file_auto_free(f);
    rc = rc ? rc : out_ready(p, f, err);       /* a footer of 8 bytes or less waits */
    rc = rc ? rc : st_finish(f->out, range, err);
    if (rc == 0 && p->cfg.dead_letters != NULL) {
        /* Rejected lines of this range are durable before the spool forgets them. */
        dm_mutex_lock(&p->dl_mu);
        rc = dl_sync(p->cfg.dead_letters, err);
        dm_mutex_unlock(&p->dl_mu);
    }
    return rc;
}

static int publish(pl_pipeline *p, pl_file *f, pq_err *err)
{
    for (;;) {
        char path[ST_WHERE_MAX];
        int rc = st_locate(p->store, f->name, path, sizeof path, err);
        if (rc == 0 && p->route && p->cb.on_publish_intent_range != NULL)
            rc = p->cb.on_publish_intent_range(p->cb.user, path, f->key, f->first_seq,
                                               f->end_seq, err);
        else if (rc == 0 && !p->route && p->cb.on_publish_intent != NULL)
            rc = p->cb.on_publish_intent(p->cb.user, path, f->end_seq, err);
        rc = rc ? rc : st_publish(f->out, f->name, err);
        if (rc != ST_EXISTS)
            return rc;
        if (p->file_name != NULL)
            return pq_err_set(err, PQ_EIO, "output file %s already exists; not overwriting it",
                              path);
        if ((rc = render_name(p, f, err)) != 0)
            return rc;
    }
}

static int hold(pl_pipeline *p, pl_file *f, pq_err *err)
{
    if (p->n_finished == p->cap_finished) {
        size_t cap = p->cap_finished ? p->cap_finished * 2 : 8;
        pl_finished *n = realloc(p->finished, cap * sizeof *n);
        if (n == NULL)
            return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
        p->finished = n;
        p->cap_finished = cap;
    }
    pl_finished *d = &p->finished[p->n_finished++];
    /* finished: no sink points at it any more */
    memset(&d->file, 0, sizeof d->file);
    d->file.fd = -1;
    d->out = NULL;
    if (st_is_local(p->store))
        st_local_take(f->out, &d->file);
    else
        d->out = f->out;
    f->out = NULL;
    memcpy(d->name, f->name, sizeof d->name);
    d->first_time = f->first_time;
    d->rows = f->rows;
    return 0;
}

/* Partitioned output, lock held: once f is published, every line below
 * the result is in a published file or the dead letters: the smallest
 * first seq of the other files not yet published, or the assembly point
 * (taken before the dead letters' flush, so the rejects below it are
 * flushed with f). */
static uint64_t watermark_without(const pl_pipeline *p, const pl_file *f)
{
    dm_mutex_assert_held(&((pl_pipeline *)p)->mu);
    uint64_t w = p->assembled;
    /* the live files are in first_seq order (link_live) */
    const pl_file *g = p->files != f ? p->files : f->next_live;
    if (g != NULL && g->first_seq < w)
        w = g->first_seq;
    return w > p->committed ? w : p->committed;
}

int pl_file_close(pl_pipeline *p, pl_file *f, pq_err *err)
{
    uint64_t bytes = 0, watermark = 0, dl_done = 0;
    int skip_rc = 0;             /* f is published: fail after freeing it */
    if (p->route) {
        dm_mutex_lock(&p->mu);
        watermark = watermark_without(p, f);
        dl_done = p->assembled;
        dm_mutex_unlock(&p->mu);
    }
    int rc = finish(p, f, &bytes, err);
    if (rc == 0 && p->cfg.publish == PL_PUBLISH_EACH)
        rc = publish(p, f, err);
    if (rc != 0)
        return rc;               /* cleanup removes the file */
    if (p->cfg.publish == PL_PUBLISH_EACH) {
        /* Counted once published: a failed file's rows are written again. */
        dm_add(&dm_counters_global.files_written, 1);
        dm_add(&dm_counters_global.bytes_written, bytes);
        dm_add(&dm_counters_global.rows_written, f->rows);
        dm_add(&dm_counters_global.row_groups_written, (uint64_t)f->ordinals);
        if (p->route && p->cb.on_published_range != NULL)
            p->cb.on_published_range(p->cb.user, st_where(f->out), f->key, f->first_seq,
                                     f->end_seq, watermark, dl_done, f->rows, bytes);
        else if (!p->route && p->cb.on_published != NULL)
            p->cb.on_published(p->cb.user, st_where(f->out), f->end_seq, f->rows, bytes);
    }
    dm_mutex_lock(&p->mu);
    if (p->cfg.publish == PL_PUBLISH_HOLD)
        rc = hold(p, f, err);
    if (rc == 0 && p->route) {
        unlink_live(p, f);
        p->committed = watermark;
        if (dl_done > p->dl_done)
            p->dl_done = dl_done;
        if (pl_skip_add(p, f->key, f->first_seq, f->end_seq, watermark) != 0)
            skip_rc = pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory (the published "
                                 "ranges)");
        p->stats.files++;
        p->stats.bytes += bytes;
    } else if (rc == 0) {
        unlink_live(p, f);
        p->committed = f->end_seq;
        p->stats.files++;
        p->stats.bytes += bytes;
    }
    dm_mutex_unlock(&p->mu);
    if (rc != 0)
        return rc;
    if (p->cfg.publish == PL_PUBLISH_EACH)
        st_free(f->out);
    free(f->key);
    free(f);
    /* nor the last row group's pages' memory, kept for a next row group
     * (pl_job_put) that may be far off */
    pl_pieces_drop(p);
#ifdef __GLIBC__
    /* A file's row groups are written: give the freed buffers back to the
     * system (glibc keeps freed memory in its arenas, one per thread), so
     * a quiet sidecar's RSS follows what it holds, not its busiest minute.
     * With many open files another file's close comes soon: not each. */
    if (!p->route)
        malloc_trim(0);
#endif
    return skip_rc;
}

int pl_dead_letter(pl_pipeline *p, const dl_record *r, pq_err *err)
{
    dl_file *dl = p->cfg.dead_letters;
    if (dl == NULL)
        return pq_err_set(err, PQ_EINVAL, "pipeline: a record was rejected and there is no "
                          "dead-letter file");
    if (dl->fd < 0 && fs_mkdirs_for(dl->path, err) != 0)
        return PQ_EIO;
    return dl_write(dl, r, err);
}

int pl_reject_direct(pl_pipeline *p, const dl_record *r, pq_err *err)
{
    dm_mutex_lock(&p->dl_mu);
    int rc = pl_dead_letter(p, r, err);
    dm_mutex_unlock(&p->dl_mu);
    return rc;
}
