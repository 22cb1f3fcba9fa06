/* autoshred.c - automatic Variant shredding per output file (`shred:
 * auto`, DESIGN.md): workers shred records into the pipeline's layout, in
 * which an auto column is unshredded (metadata + value). When a file's
 * first row group is complete, the assembler looks at that row group's
 * values of each auto column (schema/variant/vauto.h), derives the file's own
 * layout with the chosen shred trees (sc_schema_derive) and opens the
 * file's writer on it. Each row group of the file is then converted on the
 * encoding worker: the other columns' leaves change row group without a
 * copy (pq_rowgroup_swap_leaf), and so does each auto column's metadata
 * leaf; its values are written through vs_write_value into the file's
 * layout. The next file decides again. A file whose first row group shows
 * nothing stable keeps the pipeline's layout and skips the conversion.
 * Files that decide the same trees share one layout (pl_layout, the last
 * PL_LAYOUTS_KEPT kept by the assembler, reference-counted): the same
 * layout as each would derive, without deriving it again.
 *
 * Threads: pl_file_start runs with the assembly token, pl_auto_convert on
 * any worker encoding a row group of the file (the file's row-group pool
 * under the pipeline lock), pl_file_auto_free with the write token or in
 * cleanup (a layout's last reference frees it, on whichever thread). */
#include "pipeline_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vauto.h"

#define PL_AUTO_SAMPLE_ROWS 16384  /* rows of the first row group looked at */
/* A routed file (partitioned output) observes every 4th row of its first
 * segment, every row while that would leave fewer than 64: with 1,000
 * partitions of a few hundred records each, observing every record of
 * every file was a tenth of a convert's instructions (one file observes
 * 3% of a 200 MB stream's records). Each file still decides from its own
 * records, a function of the spool range it holds, so the workers' number
 * and a replay decide it as before. */
#define PL_AUTO_ROUTED_STRIDE 4
#define PL_AUTO_ROUTED_MIN 64

int pl_auto_init(pl_pipeline *p, pq_err *err)
{
    const sc_schema *s = p->cfg.schema;
    p->auto_cols = calloc(s->n_columns ? s->n_columns : 1, sizeof *p->auto_cols);
    if (p->auto_cols == NULL)
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    for (size_t i = 0; i < s->n_columns; i++) {
        const sc_type *t = s->columns[i].type;
        if (t->kind == SC_VARIANT && t->autoshred.on && t->shred->kind == SC_SHRED_NONE)
            p->auto_cols[p->n_auto++] = i;
    }
    return 0;
}

/* One row's Variant of an unshredded top-level column, by row: the cursors
 * walk the metadata and value leaves' values in step. */
typedef struct pl_vcur {
    pq_leaf_view m, v;
    size_t vi;
    bool optional;
} pl_vcur;

static int vcur_open(const pq_rowgroup *rg, const sc_type *t, pl_vcur *c, pq_err *err)
{
    c->vi = 0;
    c->optional = t->def > 0;
    int rc = pq_rowgroup_leaf_view(rg, (size_t)t->metadata_leaf, &c->m, err);
    return rc ? rc : pq_rowgroup_leaf_view(rg, (size_t)t->shred->value_leaf, &c->v, err);
}

/* Row r's value: true and *out, or false (the column is null; *def). */
static bool vcur_row(pl_vcur *c, size_t r, vr_variant *out, uint16_t *def)
{
    if (c->optional && c->m.def[r] != c->m.max_def) {
        *def = c->m.def[r];
        return false;
    }
    size_t i = c->vi++;
    *out = (vr_variant){
        .metadata = c->m.heap + c->m.offsets[i],
        .metadata_len = c->m.offsets[i + 1] - c->m.offsets[i],
        .value = c->v.heap + c->v.offsets[i],
        .value_len = c->v.offsets[i + 1] - c->v.offsets[i],
    };
    return true;
}

/* Which rows of a first segment of `rows` the decision observes: every
 * stride-th. */
static size_t sample_stride(const pl_pipeline *p, size_t rows)
{
    size_t stride = 1;
    if (p->route) {
        stride = rows / PL_AUTO_ROUTED_MIN;
        stride = stride < 1 ? 1 : stride > PL_AUTO_ROUTED_STRIDE ? PL_AUTO_ROUTED_STRIDE : stride;
    }
    if (rows / stride > PL_AUTO_SAMPLE_ROWS)
        stride = (rows + PL_AUTO_SAMPLE_ROWS - 1) / PL_AUTO_SAMPLE_ROWS;
    return stride;
}

/* The shred tree for column col from up to PL_AUTO_SAMPLE_ROWS rows of rg
 * spread over it (sample_stride); NULL when nothing qualifies. */
static int decide(const pl_pipeline *p, const sc_type *t, const pq_rowgroup *rg,
                  sc_shred **out, pq_err *err)
{
    *out = NULL;
    va_stats st;
    if (va_stats_init(&st, &t->autoshred) != 0)
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    size_t rows = rg ? (size_t)pq_rowgroup_rows(rg) : 0;
    size_t stride = sample_stride(p, rows);
    pl_vcur c;
    int rc = rows ? vcur_open(rg, t, &c, err) : 0;
    for (size_t r = 0; rc == 0 && r < rows; r++) {
        vr_variant v;
        uint16_t def;
        bool present = vcur_row(&c, r, &v, &def);
        if (r % stride != 0)
            continue;
        if (present)
            rc = va_observe(&st, &v, err);
        else
            va_observe_null(&st);
    }
    rc = rc ? rc : va_choose(&st, out, err);
    va_stats_free(&st);
    return rc;
}

/* Whether the file's layout has leaves under "<column>.typed_value". */
static bool has_typed(const sc_schema *s, const char *col, size_t len)
{
    for (size_t i = 0; s != NULL && i < s->n_leaves; i++)
        if (strncmp(s->leaves[i].path, col, len) == 0 &&
            strncmp(s->leaves[i].path + len, ".typed_value.", 13) == 0)
            return true;
    return false;
}

/* Shredded leaves of a column encrypted through its `value` leaf path get
 * the same key: a configured "<col>.value" becomes also "<col>.typed_value"
 * (a configured "<col>" already covers every leaf below it). */
static int file_keys(pl_pipeline *p, pl_file *f, pq_err *err)
{
    const pq_encryption_opts *e = p->wopts.encryption;
    f->wopts = p->wopts;
    if (e == NULL || e->n_columns == 0)
        return 0;
    f->enc = *e;
    f->keys = calloc(e->n_columns * 2, sizeof *f->keys);
    f->key_paths = calloc(e->n_columns, sizeof *f->key_paths);
    if (f->keys == NULL || f->key_paths == NULL)
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    size_t n = 0;
    for (size_t i = 0; i < e->n_columns; i++) {
        f->keys[n++] = e->columns[i];
        const char *c = e->columns[i].column;
        size_t len = strlen(c);
        if (len < 6 || strcmp(c + len - 6, ".value") != 0 || !has_typed(f->spec, c, len - 6))
            continue;
        char *tp = malloc(len + 7);
        if (tp == NULL)
            return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
        snprintf(tp, len + 7, "%.*s.typed_value", (int)(len - 6), c);
        f->key_paths[f->n_keys++] = tp;
        f->keys[n] = e->columns[i];
        f->keys[n++].column = tp;
    }
    f->enc.columns = f->keys;
    f->enc.n_columns = n;
    f->wopts.encryption = &f->enc;
    return 0;
}

/* A decided layout, shared by the files that decide the same trees (the
 * assembler keeps the last PL_LAYOUTS_KEPT): deriving and building it was
 * a third of a small file's decision, and each copy ~30 KiB per open
 * file. Each holder has a reference; the last one frees it (the assembler
 * takes, the writer and cleanup drop). */
typedef struct pl_layout {
    _Atomic size_t refs;
    char *trees;                 /* the auto columns' trees, as JSON: the key */
    pq_buf desc;                 /* describe's JSON per auto column, each
                                    NUL-terminated, formatted once */
    sc_schema *spec;
    pq_schema *ps;
    int *leaf_map;
    /* Per file leaf, the byte-array bytes per row of the last row group
     * converted to this layout: the next one reserves that much (a hint,
     * relaxed: any value is correct, only the reallocations differ). */
    _Atomic uint32_t *heap_hint;
} pl_layout;

static void layout_drop(pl_layout *l)
{
    if (l == NULL || atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    free(l->trees);
    pq_buf_free(&l->desc);
    free(l->leaf_map);
    free((void *)l->heap_hint);
    pq_schema_destroy(l->ps);
    sc_schema_free(l->spec);
    free(l);
}

void pl_auto_free(pl_pipeline *p)
{
    for (size_t i = 0; i < PL_LAYOUTS_KEPT; i++) {
        layout_drop(p->layouts[i]);
        p->layouts[i] = NULL;
    }
}

/* Pipeline leaf -> file leaf for every leaf outside the auto columns
 * (their subtrees are the same in both layouts). */
static int map_leaves(pl_pipeline *p, pl_layout *l, pq_err *err)
{
    const sc_schema *b = p->cfg.schema;
    l->leaf_map = malloc((b->n_leaves ? b->n_leaves : 1) * sizeof *l->leaf_map);
    if (l->leaf_map == NULL)
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    for (size_t i = 0; i < b->n_columns; i++) {
        const sc_type *bt = b->columns[i].type, *ft = l->spec->columns[i].type;
        bool is_auto = false;
        for (size_t a = 0; a < p->n_auto; a++)
            is_auto |= p->auto_cols[a] == i;
        for (int k = 0; k < bt->n_leaves; k++)
            l->leaf_map[bt->leaf + k] = is_auto ? -1 : ft->leaf + k;
    }
    return 0;
}

/* The auto columns' trees in the file's layout as JSON, back to back,
 * each NUL-terminated (spec NULL: the pipeline's). */
static int format_trees(const pl_pipeline *p, const sc_schema *spec, pq_buf *js)
{
    for (size_t a = 0; a < p->n_auto; a++) {
        const sc_column *c = &(spec ? spec : p->cfg.schema)->columns[p->auto_cols[a]];
        if (sc_shred_format_json(c->type->shred, js) || pq_buf_push(js, 0))
            return PQ_ENOMEM;
    }
    return 0;
}

/* Key-value metadata `parqd.shred.<column>` and the on_shred report. */
static int describe(pl_pipeline *p, pl_file *f, pq_err *err)
{
    pq_buf own, key;
    pq_buf_init(&own);
    pq_buf_init(&key);
    const pq_buf *js = f->layout ? &f->layout->desc : &own;
    int rc = f->layout ? 0 : format_trees(p, NULL, &own);
    const char *t = (const char *)js->data;
    for (size_t a = 0; rc == 0 && a < p->n_auto; a++, t += strlen(t) + 1) {
        const sc_column *c = &p->cfg.schema->columns[p->auto_cols[a]];
        pq_buf_reset(&key);
        if (pq_buf_append(&key, "parqd.shred.", 12) ||
            pq_buf_append(&key, c->name, strlen(c->name) + 1)) {
            rc = PQ_ENOMEM;
            break;
        }
        rc = pq_writer_add_metadata(f->w, (const char *)key.data, t, err);
        if (rc == 0 && p->cb.on_shred != NULL)
            p->cb.on_shred(p->cb.user, f->name, f->first_seq, c->name, t);
    }
    if (rc == PQ_ENOMEM)
        rc = pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    pq_buf_free(&own);
    pq_buf_free(&key);
    return rc;
}

/* The trees of the auto columns as one string, a layout's key. */
static int trees_key(const pl_pipeline *p, sc_shred *const *roots, char **out, pq_err *err)
{
    pq_buf k;
    pq_buf_init(&k);
    int rc = 0;
    for (size_t a = 0; rc == 0 && a < p->n_auto; a++) {
        const sc_shred *t = roots[p->auto_cols[a]];
        rc = (t ? sc_shred_format_json(t, &k) : pq_buf_append(&k, "-", 1)) || pq_buf_push(&k, '\n')
                 ? PQ_ENOMEM : 0;
    }
    if (rc == 0 && pq_buf_push(&k, 0) != 0)
        rc = PQ_ENOMEM;
    if (rc != 0) {
        pq_buf_free(&k);
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    }
    *out = (char *)k.data;       /* the buffer's memory, now the caller's */
    return 0;
}

/* A kept layout of the same trees, with a reference for the caller; NULL
 * when none. */
static pl_layout *layout_find(pl_pipeline *p, const char *trees)
{
    for (size_t i = 0; i < PL_LAYOUTS_KEPT; i++) {
        pl_layout *l = p->layouts[i];
        if (l != NULL && strcmp(l->trees, trees) == 0) {
            atomic_fetch_add(&l->refs, 1);
            return l;
        }
    }
    return NULL;
}

/* Frees the trees in roots (the array itself is the caller's). */
static void roots_free(const pl_pipeline *p, sc_shred **roots)
{
    for (size_t i = 0; i < p->cfg.schema->n_columns; i++) {
        sc_shred_free(roots[i]);
        roots[i] = NULL;
    }
}

/* A new layout for the trees in roots, kept in place of the oldest. The
 * trees and their key pass to it, also on failure. */
static int layout_new(pl_pipeline *p, sc_shred **roots, char *trees, pl_layout **out,
                      pq_err *err)
{
    pl_layout *l = calloc(1, sizeof *l);
    if (l == NULL) {
        free(trees);
        roots_free(p, roots);
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    }
    atomic_init(&l->refs, 1);
    l->trees = trees;
    int rc = sc_schema_derive(p->cfg.schema, roots, &l->spec, err);
    rc = rc ? rc : sc_build_parquet_schema(l->spec, &l->ps, err);
    rc = rc ? rc : map_leaves(p, l, err);
    if (rc == 0 && (l->heap_hint = calloc(l->spec->n_leaves ? l->spec->n_leaves : 1,
                                          sizeof *l->heap_hint)) == NULL)
        rc = pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    if (rc == 0 && format_trees(p, l->spec, &l->desc) != 0)
        rc = pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    if (rc != 0) {
        layout_drop(l);
        return rc;
    }
    size_t i = p->next_layout++ % PL_LAYOUTS_KEPT;
    layout_drop(p->layouts[i]);
    atomic_fetch_add(&l->refs, 1);
    p->layouts[i] = l;
    *out = l;
    return 0;
}

/* The layout of the trees in roots, with a reference for the caller: a
 * kept one of the same trees, else a new one. The trees pass to it, also
 * on failure. */
static int layout_for(pl_pipeline *p, sc_shred **roots, pl_layout **out, pq_err *err)
{
    char *trees = NULL;
    int rc = trees_key(p, roots, &trees, err);
    *out = rc == 0 ? layout_find(p, trees) : NULL;
    if (rc != 0 || *out != NULL) {
        free(trees);
        roots_free(p, roots);
        return rc;
    }
    return layout_new(p, roots, trees, out, err);
}

static int derive(pl_pipeline *p, pl_file *f, const pq_rowgroup *first, pq_err *err)
{
    const sc_schema *b = p->cfg.schema;
    sc_shred **roots = calloc(b->n_columns, sizeof *roots);
    if (roots == NULL)
        return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    int rc = 0;
    for (size_t a = 0; rc == 0 && a < p->n_auto; a++) {
        size_t i = p->auto_cols[a];
        rc = decide(p, b->columns[i].type, first, &roots[i], err);
    }
    bool any = false;
    for (size_t i = 0; i < b->n_columns; i++)
        any |= roots[i] != NULL;
    pl_layout *l = NULL;
    if (rc == 0 && any)
        rc = layout_for(p, roots, &l, err);
    else
        roots_free(p, roots);    /* nothing stable: the pipeline's layout, no copy */
    free(roots);
    if (l != NULL) {
        f->layout = l;
        f->spec = l->spec;
        f->ps = l->ps;
        f->leaf_map = l->leaf_map;
    }
    return rc;
}

int pl_file_start(pl_pipeline *p, pl_file *f, const pq_rowgroup *first, pq_err *err)
{
    if (p->n_auto == 0)
        return pq_writer_open(&f->w, p->ps, &p->wopts, f->sink, err);
    int rc = derive(p, f, first, err);
    rc = rc ? rc : file_keys(p, f, err);
    rc = rc ? rc : pq_writer_open(&f->w, f->ps ? f->ps : p->ps, &f->wopts, f->sink,
                                  err);
    if (rc != 0) {
        pq_writer_destroy(f->w);
        f->w = NULL;
        return rc;
    }
    return describe(p, f, err);
}

static int convert_column(pl_worker *wk, const sc_type *bt, const sc_type *ft,
                          const pq_rowgroup *src, pq_rowgroup *dst, pq_err *err)
{
    pl_vcur c;
    int rc = vcur_open(src, bt, &c, err);
    size_t rows = (size_t)pq_rowgroup_rows(src);
    for (size_t r = 0; rc == 0 && r < rows; r++) {
        vr_variant v;
        uint16_t def;
        if (vcur_row(&c, r, &v, &def)) {
            rc = vs_write_value(&wk->vs, dst, ft, &v, 0, err);
            continue;
        }
        for (int k = 0; rc == 0 && k < ft->n_leaves; k++)
            if (ft->leaf + k != ft->metadata_leaf) /* moved whole, after the rows */
                rc = pq_column_put_null(pq_rowgroup_column(dst, (size_t)(ft->leaf + k)), 0, def);
        if (rc != 0)
            rc = pq_err_set(err, rc, "pipeline: converting column: %s", pq_err_name(rc));
    }
    return rc;
}

/* Each leaf of ft gets a level and at most a value per row (a leaf under
 * an array more, and its buffers grow then), and byte arrays the bytes per
 * row the layout's last row group had: reserved before the rows are
 * written, the leaves' buffers do not grow by doubling from 64 bytes. A
 * routed file's row group is new each time (1,000 partitions: 55,000
 * such leaves of ~290 rows), so this is most of its reallocations. */
static int reserve_column(const pl_layout *l, const sc_type *ft, pq_rowgroup *dst, size_t rows,
                          pq_err *err)
{
    for (int k = 0; k < ft->n_leaves; k++) {
        if (ft->leaf + k == ft->metadata_leaf)
            continue;            /* moved whole */
        size_t per_row = atomic_load_explicit(&l->heap_hint[ft->leaf + k], memory_order_relaxed);
        pq_column *c = pq_rowgroup_column(dst, (size_t)(ft->leaf + k));
        if (pq_column_reserve(c, rows, rows, rows * per_row) != 0)
            return pq_err_set(err, PQ_ENOMEM, "pipeline: out of memory");
    }
    return 0;
}

/* PL_HEAP_HINT_MAX: a row's bytes in one leaf beyond this are not
 * reserved ahead (a few huge rows must not make every file reserve them). */
#define PL_HEAP_HINT_MAX 4096

static void learn_heap(pl_layout *l, const sc_type *ft, pq_rowgroup *dst, size_t rows)
{
    for (int k = 0; rows > 0 && k < ft->n_leaves; k++) {
        if (ft->leaf + k == ft->metadata_leaf)
            continue;
        size_t per_row = (pq_rowgroup_column(dst, (size_t)(ft->leaf + k))->heap.len + rows - 1) /
                         rows;
        atomic_store_explicit(&l->heap_hint[ft->leaf + k],
                              (uint32_t)(per_row < PL_HEAP_HINT_MAX ? per_row : PL_HEAP_HINT_MAX),
                              memory_order_relaxed);
    }
}

static int convert(pl_pipeline *p, pl_worker *wk, pl_file *f, pq_rowgroup *src,
                   pq_rowgroup *dst, pq_err *err)
{
    const sc_schema *b = p->cfg.schema;
    int rc = 0;
    size_t rows = (size_t)pq_rowgroup_rows(src);
    /* f->spec is this file's: a tree at the same address may be another's */
    vs_state_forget(&wk->vs);
    for (size_t a = 0; rc == 0 && a < p->n_auto; a++) {
        size_t i = p->auto_cols[a];
        const sc_type *ft = f->spec->columns[i].type;
        rc = reserve_column(f->layout, ft, dst, rows, err);
        rc = rc ? rc : convert_column(wk, b->columns[i].type, ft, src, dst, err);
        if (rc == 0)
            learn_heap(f->layout, ft, dst, rows);
        /* metadata is the same leaf in both layouts: moved, not rewritten */
        rc = rc ? rc : pq_rowgroup_swap_leaf(dst, (size_t)f->spec->columns[i].type->metadata_leaf,
                                             src, (size_t)b->columns[i].type->metadata_leaf, err);
    }
    for (size_t l = 0; rc == 0 && l < b->n_leaves; l++)
        if (f->leaf_map[l] >= 0)
            rc = pq_rowgroup_swap_leaf(dst, (size_t)f->leaf_map[l], src, l, err);
    return rc ? rc : pq_rowgroup_set_rows(dst, pq_rowgroup_rows(src), err);
}

int pl_auto_convert(pl_pipeline *p, pl_worker *wk, pl_job *j, pq_rowgroup **out, pq_err *err)
{
    pl_file *f = j->file;
    *out = j->rg;
    if (f->spec == NULL)
        return 0;
    dm_mutex_lock(&p->mu);
    pq_rowgroup *dst = f->n_conv ? f->conv[--f->n_conv] : NULL;
    pq_rowgroup *shell = dst == NULL && p->n_free_conv ? p->free_conv[--p->n_free_conv] : NULL;
    dm_mutex_unlock(&p->mu);
    if (dst == NULL && pq_rowgroup_new_in(&dst, shell, f->ps, err) != 0)
        return PQ_ENOMEM;
    int rc = convert(p, wk, f, j->rg, dst, err);
    if (rc != 0) {
        pl_auto_put(p, f, dst);
        return rc;
    }
    *out = dst;
    return 0;
}

void pl_auto_put(pl_pipeline *p, pl_file *f, pq_rowgroup *rg)
{
    dm_mutex_lock(&p->mu);
    if (f->n_conv < PL_POOL_MAX) {
        pq_rowgroup_reset(rg);
        f->conv[f->n_conv++] = rg;
        rg = NULL;
    }
    dm_mutex_unlock(&p->mu);
    pq_rowgroup_destroy(rg);
}

void pl_file_auto_free(pl_file *f)
{
    while (f->n_conv > 0)
        pq_rowgroup_destroy(f->conv[--f->n_conv]);
    for (size_t i = 0; i < f->n_keys; i++)
        free(f->key_paths[i]);
    free(f->key_paths);
    free(f->keys);
    layout_drop(f->layout);
    f->key_paths = NULL;
    f->keys = NULL;
    f->layout = NULL;
    f->leaf_map = NULL;
    f->ps = NULL;
    f->spec = NULL;
}
