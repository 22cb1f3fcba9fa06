/* shredstage.c - the pipeline's first stage (pipeline.h): a batch's
 * lines shredded into its row buffer, its rejects collected, and, for
 * partitioned output, each line's partition key, the lines grouped by
 * key so that the assembler copies each key's rows out in one run.
 *
 * Thread: any worker, no lock (a batch is one worker's until it is
 * marked shredded). Called by the workers (workers.c); calls the
 * shredder and the partition-key extractor, never the other stages. */
#include "pipeline_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "pathkey.h"

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

/* A line's bulk `_index` (PL_INDEX_TAG in its source), looked up once per
 * run of lines from one source (they share its copy, batch.c) instead of
 * a strstr per line, twice when routed. Valid for one batch. */
typedef struct pl_index_memo {
    uint32_t source_off;
    bool set;
    const char *v;               /* NULL: the source has none */
    size_t len;
} pl_index_memo;

static const char *line_index(const pl_batch *b, const pl_line *l, pl_index_memo *m,
                              size_t *len)
{
    if (!m->set || m->source_off != l->source_off) {
        const char *ix = strstr((const char *)b->sources.data + l->source_off, PL_INDEX_TAG);
        m->set = true;
        m->source_off = l->source_off;
        m->v = ix ? ix + strlen(PL_INDEX_TAG) : NULL;
        m->len = ix ? strlen(m->v) : 0;
    }
    *len = m->len;
    return m->v;
}

static int shred_line(pl_pipeline *p, pl_worker *wk, pl_batch *b, size_t i, pl_index_memo *im)
{
    const pl_line *l = pl_batch_line(b, i);
    if (l->oversized) {
        char reason[128];
        snprintf(reason, sizeof reason, "line of %" PRIu64 " bytes exceeds "
                 "limits.max_line_bytes (%zu)", l->total, p->cfg.max_line_bytes);
        return add_reject(b, i, DM_REJECT_TOO_LONG, reason);
    }
    pq_err e;
    pq_err_clear(&e);            /* not = {0}: 516 bytes per line */
    size_t ixlen;
    const char *ix = line_index(b, l, im, &ixlen);
    if (ix != NULL)
        sh_set_index(wk->sh, ix, ixlen);
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

/* ---- partition keys (partitioned output; no lock) --------------------------- */

typedef struct pl_kgroup {
    uint32_t key_off;            /* in b->keys */
    uint64_t hash;
    uint32_t count, start;
} pl_kgroup;

/* Line i's key into b (its offset in b->key_off); *group its group among
 * the batch's distinct keys. A key that cannot be built (too long) rejects
 * the line: *group is UINT32_MAX. */
static int line_key(pl_pipeline *p, pl_worker *wk, pl_batch *b, size_t i, size_t hcap,
                    pl_index_memo *im, uint32_t *group)
{
    const pl_line *l = pl_batch_line(b, i);
    char key[PK_KEY_MAX];
    pt_value v[PT_FIELDS_MAX];
    pq_err e;
    pq_err_clear(&e);            /* not = {0}: 516 bytes per line */
    size_t ivlen = 0;
    const char *iv = l->oversized ? NULL : line_index(b, l, im, &ivlen);
    pk_time et = {0};
    int rc = l->oversized ? 0 : pk_values(wk->pk, (const char *)b->text.data + l->off, l->len,
                                          iv, ivlen, v, &et, &e);
    if (rc != 0)
        return rc;
    /* The event time, or the ingestion time the spool stores with the
     * line: either way a function of the spool record (replay). */
    const int64_t when = et.found ? et.sec : l->ingest_us / 1000000;
    if (p->ts.set && !et.found && et.object && !l->oversized)
        dm_add(&dm_counters_global.records_time_fallback, 1);
    ((int64_t *)(void *)b->key_time.data)[i] = when;
    if (l->oversized) {
        key[0] = '\0';          /* rejected by shred_line */
    } else if (pk_key_memo(wk->pk, v, (time_t)when, key, sizeof key, &e) != 0) {
        *group = UINT32_MAX;
        return add_reject(b, i, DM_REJECT_SCHEMA, e.msg);
    }
    const uint64_t h = pl_key_hash(key);
    uint32_t *slot = (uint32_t *)(void *)wk->ktab.data;
    pl_kgroup *g = (pl_kgroup *)(void *)wk->kgroups.data;
    size_t at = (size_t)h & (hcap - 1);
    for (; slot[at] != 0; at = (at + 1) & (hcap - 1)) {
        pl_kgroup *c = &g[slot[at] - 1];
        if (c->hash == h && strcmp((const char *)b->keys.data + c->key_off, key) == 0) {
            c->count++;
            *group = slot[at] - 1;
            return 0;
        }
    }
    pl_kgroup n = {.key_off = (uint32_t)b->keys.len, .hash = h, .count = 1};
    if (pq_buf_append(&b->keys, key, strlen(key) + 1) != 0 ||
        pq_buf_append(&wk->kgroups, &n, sizeof n) != 0)
        return PQ_ENOMEM;
    *group = (uint32_t)(wk->kgroups.len / sizeof n - 1);
    ((uint32_t *)(void *)wk->ktab.data)[at] = *group + 1;
    return 0;
}

/* Every line's key, and the lines grouped by key (groups in order of
 * first appearance, seq order within a group; wk->korder): lines whose
 * key was refused are left out (key_off UINT32_MAX); a group's `start`
 * ends up one past its last line in that order. */
static int batch_keys(pl_pipeline *p, pl_worker *wk, pl_batch *b)
{
    size_t hcap = 16;
    while (hcap < 2 * b->n_lines)
        hcap *= 2;
    pq_buf_reset(&wk->ktab);
    pq_buf_reset(&wk->kgroups);
    pq_buf_reset(&wk->korder);
    pq_buf_reset(&b->key_off);
    pq_buf_reset(&b->key_time);
    if (pq_buf_reserve(&wk->ktab, hcap * sizeof(uint32_t)) != 0 ||
        pq_buf_reserve(&b->key_time, b->n_lines * sizeof(int64_t)) != 0 ||
        pq_buf_reserve(&wk->korder, b->n_lines * sizeof(uint32_t)) != 0 ||
        pq_buf_reserve(&b->key_off, b->n_lines * sizeof(uint32_t)) != 0)
        return PQ_ENOMEM;
    memset(wk->ktab.data, 0, hcap * sizeof(uint32_t));
    uint32_t *grp = (uint32_t *)(void *)b->key_off.data;   /* groups first, offsets after */
    pl_index_memo im = {0};
    for (size_t i = 0; i < b->n_lines; i++) {
        int rc = line_key(p, wk, b, i, hcap, &im, &grp[i]);
        if (rc != 0)
            return rc;
    }
    b->key_off.len = b->n_lines * sizeof(uint32_t);
    b->key_time.len = b->n_lines * sizeof(int64_t);
    pl_kgroup *g = (pl_kgroup *)(void *)wk->kgroups.data;
    const size_t ng = wk->kgroups.len / sizeof *g;
    uint32_t start = 0;
    for (size_t k = 0; k < ng; k++) {
        g[k].start = start;
        start += g[k].count;
    }
    uint32_t *order = (uint32_t *)(void *)wk->korder.data;
    for (size_t i = 0; i < b->n_lines; i++) {
        if (grp[i] == UINT32_MAX)
            continue;
        pl_kgroup *c = &g[grp[i]];
        order[c->start++] = (uint32_t)i;
        grp[i] = c->key_off;
    }
    return 0;
}

static int reject_cmp(const void *a, const void *b)
{
    const pl_reject *x = a, *y = b;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* The lines in key order (wk->korder; without keys, all in line order)
 * into the batch's one row buffer: a key's rows are contiguous, group g's
 * end at b->grp_end[g] (a rejected line has no row). */
static int shred_lines(pl_pipeline *p, pl_worker *wk, pl_batch *b)
{
    const uint32_t *order = p->route ? (const uint32_t *)(const void *)wk->korder.data : NULL;
    const pl_kgroup *g = (const pl_kgroup *)(const void *)wk->kgroups.data;
    const size_t ng = p->route ? wk->kgroups.len / sizeof *g : 0;
    pq_buf_reset(&b->grp_end);
    if (pq_buf_reserve(&b->grp_end, ng * sizeof(uint32_t)) != 0)
        return PQ_ENOMEM;
    uint32_t *end = (uint32_t *)(void *)b->grp_end.data;
    const size_t n = order ? (ng ? g[ng - 1].start : 0) : b->n_lines;
    pl_index_memo im = {0};
    for (size_t k = 0, grp = 0; k < n; k++) {
        for (; order != NULL && k >= g[grp].start; grp++)   /* start: one past its last */
            end[grp] = (uint32_t)pq_rowgroup_rows(b->rows);
        int rc = shred_line(p, wk, b, order ? order[k] : k, &im);
        if (rc != 0)
            return rc;
    }
    if (ng > 0)                  /* the others ended at the next one's first line */
        end[ng - 1] = (uint32_t)pq_rowgroup_rows(b->rows);
    b->grp_end.len = ng * sizeof(uint32_t);
    b->n_groups = ng;
    return 0;
}

void pl_shred_batch(pl_pipeline *p, pl_worker *wk, pl_batch *b)
{
    if (b->rows == NULL && pq_rowgroup_new(&b->rows, p->ps, &b->err) != 0) {
        b->rows = NULL;
        b->fatal = PQ_ENOMEM;
        return;
    }
    sh_shredder_new_batch(wk->sh);
    if (p->route && batch_keys(p, wk, b) != 0) {
        b->fatal = PQ_ENOMEM;
        pq_err_set(&b->err, PQ_ENOMEM, "pipeline: out of memory building partition keys");
        return;
    }
    int rc = shred_lines(p, wk, b);
    if (rc == 0 && p->route)
        rc = pq_rowgroup_index(b->rows, &b->rix, &b->err);
    if (rc != 0) {
        b->fatal = rc;
        if (b->err.msg[0] == '\0')
            pq_err_set(&b->err, rc, "pipeline: out of memory shredding a batch");
        return;
    }
    if (p->route && b->rejects.len > 0)   /* the dead letters in line order */
        qsort(b->rejects.data, b->rejects.len / sizeof(pl_reject), sizeof(pl_reject),
              reject_cmp);
}
