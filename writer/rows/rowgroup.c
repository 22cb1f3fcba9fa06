/* rowgroup.c - pq_rowgroup: one pq_column per leaf, row counting, and
 * moving whole rows between row groups of the same schema. Runs on
 * whichever thread owns the row group (a daemon worker shredding into it,
 * the pipeline moving rows, the thread encoding it); never two at once.
 *
 * Moving rows is a bulk copy: per leaf one memcpy each for the fixed-width
 * values, the definition and repetition levels and the byte-array heap,
 * plus one pass that rebases the byte-array offsets. Finding where row n
 * starts costs nothing for flat leaves (level n) and one scan of the
 * repetition levels for repeated ones; moving all rows needs no scan.
 * Copying rows out of an indexed row group (pq_rowgroup_copy_rows, for a
 * partitioned output's batches) looks every row's starts up instead, and
 * leaves the source as it is. */
#include "rowgroup_int.h"

#include <stdlib.h>

int pq_rowgroup_new(pq_rowgroup **out, pq_schema *schema, pq_err *err)
{
    *out = NULL;
    int rc = pq_schema_finish(schema, err);
    if (rc != 0)
        return rc;
    pq_rowgroup *rg = calloc(1, sizeof *rg);
    if (rg == NULL)
        return pq_err_set(err, PQ_ENOMEM, "row group: out of memory");
    rg->schema = schema;
    size_t n = pq_schema_num_leaves(schema);
    rg->cols = calloc(n ? n : 1, sizeof *rg->cols);
    rg->cuts = calloc(n ? n : 1, sizeof *rg->cuts);
    if (rg->cols == NULL || rg->cuts == NULL) {
        pq_rowgroup_destroy(rg);
        return pq_err_set(err, PQ_ENOMEM, "row group: out of memory");
    }
    rg->cap_cols = n ? n : 1;
    for (; rg->n_cols < n; rg->n_cols++) {
        /* counted before init succeeds: init leaves a column freeable */
        if (pq_column_init(&rg->cols[rg->n_cols], pq_schema_leaf_node(schema, rg->n_cols)) != 0) {
            rg->n_cols++;
            pq_rowgroup_destroy(rg);
            return pq_err_set(err, PQ_ENOMEM, "row group: out of memory");
        }
    }
    *out = rg;
    return PQ_OK;
}

void pq_rowgroup_destroy(pq_rowgroup *rg)
{
    if (rg == NULL)
        return;
    for (size_t i = 0; i < rg->n_cols; i++)
        pq_column_free(&rg->cols[i]);
    free(rg->cols);
    free(rg->cuts);
    free(rg);
}

void pq_rowgroup_release(pq_rowgroup *rg)
{
    for (size_t i = 0; i < rg->n_cols; i++) {
        pq_column *c = &rg->cols[i];
        c->node = NULL;          /* the schema may go before the shell */
        c->values.len = c->heap.len = c->offsets.len = c->def.len = c->rep.len = 0;
        c->n_levels = c->n_values = c->n_rows = 0;
    }
    rg->schema = NULL;
    rg->rows = 0;
}

size_t pq_rowgroup_capacity(const pq_rowgroup *rg)
{
    size_t n = 0;
    for (size_t i = 0; i < rg->n_cols; i++) {
        const pq_column *c = &rg->cols[i];
        n += c->values.cap + c->heap.cap + c->offsets.cap + c->def.cap + c->rep.cap;
    }
    return n;
}

int pq_rowgroup_new_in(pq_rowgroup **out, pq_rowgroup *shell, pq_schema *schema, pq_err *err)
{
    *out = NULL;
    int rc = shell != NULL ? pq_schema_finish(schema, err) : 0;
    size_t n = rc == 0 ? pq_schema_num_leaves(schema) : 0;
    if (rc != 0 || shell == NULL || n > shell->cap_cols) {
        pq_rowgroup_destroy(shell);
        return rc ? rc : pq_rowgroup_new(out, schema, err);
    }
    for (size_t i = n; i < shell->n_cols; i++)
        pq_column_free(&shell->cols[i]); /* leaves it as calloc left it */
    shell->schema = schema;
    shell->rows = 0;
    /* columns past the shell's old count are zeroed (calloc, or freed) */
    for (shell->n_cols = 0; shell->n_cols < n; shell->n_cols++) {
        size_t i = shell->n_cols;
        if (pq_column_init_in(&shell->cols[i], pq_schema_leaf_node(schema, i)) != 0) {
            shell->n_cols = shell->cap_cols; /* every column freeable */
            pq_rowgroup_destroy(shell);
            return pq_err_set(err, PQ_ENOMEM, "row group: out of memory");
        }
    }
    *out = shell;
    return PQ_OK;
}

const pq_schema *pq_rowgroup_schema(const pq_rowgroup *rg) { return rg->schema; }
size_t pq_rowgroup_num_columns(const pq_rowgroup *rg) { return rg->n_cols; }
uint64_t pq_rowgroup_rows(const pq_rowgroup *rg) { return rg->rows; }

pq_column *pq_rowgroup_column(pq_rowgroup *rg, size_t leaf)
{
    return leaf < rg->n_cols ? &rg->cols[leaf] : NULL;
}

pq_column *pq_rowgroup_columns(pq_rowgroup *rg, size_t *n)
{
    *n = rg->n_cols;
    return rg->cols;
}

void pq_rowgroup_end_row(pq_rowgroup *rg)
{
    rg->rows++;
}

void pq_rowgroup_abort_row(pq_rowgroup *rg)
{
    for (size_t i = 0; i < rg->n_cols; i++)
        pq_column_truncate_rows(&rg->cols[i], rg->rows);
}

void pq_rowgroup_abort_leaf(pq_rowgroup *rg, size_t leaf)
{
    if (leaf < rg->n_cols)
        pq_column_truncate_rows(&rg->cols[leaf], rg->rows);
}

size_t pq_rowgroup_buffered_bytes(const pq_rowgroup *rg)
{
    size_t total = 0;
    for (size_t i = 0; i < rg->n_cols; i++)
        total += pq_column_buffered_bytes(&rg->cols[i]);
    return total;
}

static int reserve_scaled(pq_buf *b, size_t like_len, uint64_t like_rows, uint64_t rows)
{
    double want = (double)like_len / (double)like_rows * (double)rows;
    if (want >= (double)(UINT32_MAX))
        want = (double)UINT32_MAX; /* a chunk's byte arrays stop at 4 GiB anyway */
    return pq_buf_reserve(b, (size_t)want);
}

int pq_rowgroup_reserve_like(pq_rowgroup *rg, const pq_rowgroup *like, uint64_t rows,
                             pq_err *err)
{
    if (rg->schema != like->schema)
        return pq_err_set(err, PQ_EINVAL, "reserve rows: the row groups have different schemas");
    if (like->rows == 0 || rows == 0)
        return PQ_OK;
    for (size_t i = 0; i < rg->n_cols; i++) {
        pq_column *d = &rg->cols[i];
        const pq_column *s = &like->cols[i];
        int rc = reserve_scaled(&d->def, s->def.len, like->rows, rows);
        rc = rc ? rc : reserve_scaled(&d->rep, s->rep.len, like->rows, rows);
        rc = rc ? rc : reserve_scaled(&d->values, s->values.len, like->rows, rows);
        rc = rc ? rc : reserve_scaled(&d->heap, s->heap.len, like->rows, rows);
        rc = rc ? rc : reserve_scaled(&d->offsets, s->offsets.len, like->rows, rows);
        if (rc != 0)
            return pq_err_set(err, PQ_ENOMEM, "reserve rows: out of memory for column '%s'",
                              d->node->path);
    }
    return PQ_OK;
}

void pq_rowgroup_reset(pq_rowgroup *rg)
{
    for (size_t i = 0; i < rg->n_cols; i++)
        pq_column_reset(&rg->cols[i]);
    rg->rows = 0;
}

int pq_rowgroup_check(const pq_rowgroup *rg, pq_err *err)
{
    for (size_t i = 0; i < rg->n_cols; i++)
        if (rg->cols[i].n_rows != rg->rows)
            return pq_err_set(err, PQ_ESTATE, "column '%s' has %zu rows, the row group has %llu",
                              rg->cols[i].node->path, rg->cols[i].n_rows,
                              (unsigned long long)rg->rows);
    return PQ_OK;
}

/* ---- moving rows ------------------------------------------------------------ */

/* The level index where row n starts: level n when the leaf is not
 * repeated, else the (n+1)-th level with repetition level 0. */
static size_t row_start_level(const pq_column *c, uint64_t n)
{
    if (c->max_rep == 0)
        return (size_t)n;
    const uint16_t *rep = pq_column_rep(c);
    uint64_t starts = 0;
    size_t l = 0;
    for (; l < c->n_levels; l++)
        if (rep[l] == 0 && starts++ == n)
            break;
    return l;
}

/* n < c->n_rows scans; n == n_rows (moving everything) does not. */
static void find_cut(const pq_column *c, uint64_t n, pq_col_cut *k)
{
    if (n >= c->n_rows) { /* everything: no scan */
        k->levels = c->n_levels;
        k->values = c->n_values;
    } else {
        k->levels = row_start_level(c, n);
        k->values = k->levels;
        if (c->max_def > 0) {
            const uint16_t *def = pq_column_def(c);
            size_t v = 0;
            for (size_t l = 0; l < k->levels; l++)
                v += def[l] == c->max_def;
            k->values = v;
        }
    }
    k->heap = c->node->type == PQ_BYTE_ARRAY ? pq_column_offsets(c)[k->values] : 0;
}

/* Makes room in d for the cut, so that the copy cannot fail halfway. */
static int reserve_cut(pq_column *d, const pq_col_cut *k)
{
    size_t lb = k->levels * sizeof(uint16_t);
    if (d->max_def > 0 && pq_buf_reserve(&d->def, lb) != 0)
        return PQ_ENOMEM;
    if (d->max_rep > 0 && pq_buf_reserve(&d->rep, lb) != 0)
        return PQ_ENOMEM;
    if (d->node->type == PQ_BYTE_ARRAY)
        return pq_buf_reserve(&d->heap, k->heap) != 0 ||
               pq_buf_reserve(&d->offsets, k->values * sizeof(uint32_t)) != 0 ? PQ_ENOMEM : PQ_OK;
    return pq_buf_reserve(&d->values, k->values * d->width) != 0 ? PQ_ENOMEM : PQ_OK;
}

static void append_bytes(pq_buf *d, const pq_buf *s, size_t n)
{
    if (n > 0)
        memcpy(d->data + d->len, s->data, n);
    d->len += n;
}

/* Appends the first k rows of s to d (room reserved by reserve_cut). */
static void append_cut(pq_column *d, const pq_column *s, const pq_col_cut *k, uint64_t rows)
{
    size_t lb = k->levels * sizeof(uint16_t);
    if (d->max_def > 0)
        append_bytes(&d->def, &s->def, lb);
    if (d->max_rep > 0)
        append_bytes(&d->rep, &s->rep, lb);
    if (d->node->type == PQ_BYTE_ARRAY) {
        uint32_t base = (uint32_t)d->heap.len; /* fits: checked by the caller */
        uint32_t *to = (uint32_t *)(void *)(d->offsets.data + d->offsets.len);
        const uint32_t *from = pq_column_offsets(s) + 1;
        for (size_t i = 0; i < k->values; i++)
            to[i] = from[i] + base;
        d->offsets.len += k->values * sizeof(uint32_t);
        append_bytes(&d->heap, &s->heap, k->heap);
    } else {
        append_bytes(&d->values, &s->values, k->values * d->width);
    }
    d->n_levels += k->levels;
    d->n_values += k->values;
    d->n_rows += (size_t)rows;
}

static void shift_bytes(pq_buf *b, size_t drop)
{
    if (b->len == 0)
        return;                  /* never allocated: data may be NULL */
    memmove(b->data, b->data + drop, b->len - drop);
    b->len -= drop;
}

/* Removes the first rows of s (the cut), moving the rest to the front. */
static void drop_cut(pq_column *s, const pq_col_cut *k, uint64_t rows)
{
    if (rows >= s->n_rows) {
        pq_column_reset(s);
        return;
    }
    size_t lb = k->levels * sizeof(uint16_t);
    if (s->max_def > 0)
        shift_bytes(&s->def, lb);
    if (s->max_rep > 0)
        shift_bytes(&s->rep, lb);
    size_t left = s->n_values - k->values;
    if (s->node->type == PQ_BYTE_ARRAY) {
        uint32_t *off = (uint32_t *)(void *)s->offsets.data;
        uint32_t base = (uint32_t)k->heap;
        for (size_t i = 0; i <= left; i++)
            off[i] = off[k->values + i] - base;
        s->offsets.len = (left + 1) * sizeof(uint32_t);
        shift_bytes(&s->heap, k->heap);
    } else {
        shift_bytes(&s->values, k->values * s->width);
    }
    s->n_levels -= k->levels;
    s->n_values = left;
    s->n_rows -= (size_t)rows;
}

static int check_whole_rows(const pq_rowgroup *rg, const char *which, pq_err *err)
{
    for (size_t i = 0; i < rg->n_cols; i++)
        if (rg->cols[i].n_rows != rg->rows)
            return pq_err_set(err, PQ_EINVAL, "move rows: %s row group has an unfinished row "
                              "(column '%s' holds %zu rows, %llu ended)", which,
                              rg->cols[i].node->path, rg->cols[i].n_rows,
                              (unsigned long long)rg->rows);
    return PQ_OK;
}

/* Two passes: the first finds every leaf's cut and reserves room in dst
 * (the only steps that can fail), the second copies and cannot fail, so
 * an error leaves both row groups as they were. */
int pq_rowgroup_move_rows(pq_rowgroup *dst, pq_rowgroup *src, uint64_t n, pq_err *err)
{
    if (dst->schema != src->schema)
        return pq_err_set(err, PQ_EINVAL, "move rows: the row groups have different schemas");
    if (dst == src)
        return pq_err_set(err, PQ_EINVAL, "move rows: source and destination are the same");
    if (n > src->rows)
        return pq_err_set(err, PQ_EINVAL, "move rows: %llu rows asked, the source has %llu",
                          (unsigned long long)n, (unsigned long long)src->rows);
    int rc = check_whole_rows(src, "the source", err);
    rc = rc ? rc : check_whole_rows(dst, "the destination", err);
    if (rc != 0 || n == 0)
        return rc;
    for (size_t i = 0; i < src->n_cols; i++) {
        pq_column *d = &dst->cols[i];
        pq_col_cut *k = &src->cuts[i];
        find_cut(&src->cols[i], n, k);
        if (k->heap > UINT32_MAX - d->heap.len)
            return pq_err_set(err, PQ_ELIMIT, "move rows: column '%s' would hold more than "
                              "4 GiB of byte arrays in one row group", d->node->path);
        if (reserve_cut(d, k) != 0)
            return pq_err_set(err, PQ_ENOMEM, "move rows: out of memory for column '%s'",
                              d->node->path);
    }
    for (size_t i = 0; i < src->n_cols; i++) {
        append_cut(&dst->cols[i], &src->cols[i], &src->cuts[i], n);
        drop_cut(&src->cols[i], &src->cuts[i], n);
    }
    dst->rows += n;
    src->rows -= n;
    return PQ_OK;
}

/* ---- copying chosen rows ------------------------------------------------------ */

void pq_row_index_init(pq_row_index *ix)
{
    pq_buf_init(&ix->starts);
    pq_buf_init(&ix->at);
    ix->rows = 0;
}

void pq_row_index_free(pq_row_index *ix)
{
    pq_buf_free(&ix->starts);
    pq_buf_free(&ix->at);
}

/* A repeated leaf's level start of each row (rows + 1 of them). */
static void index_levels(const pq_column *c, uint64_t rows, uint32_t *to)
{
    const uint16_t *rep = pq_column_rep(c);
    uint64_t r = 0;
    for (size_t l = 0; l < c->n_levels; l++)
        if (rep[l] == 0)
            to[r++] = (uint32_t)l;
    to[rows] = (uint32_t)c->n_levels;
}

/* A leaf's value start of each row: the defined values before its first
 * level (ls: the level starts, NULL when a row is one level). */
static void index_values(const pq_column *c, uint64_t rows, const uint32_t *ls, uint32_t *to)
{
    const uint16_t *def = pq_column_def(c);
    uint32_t v = 0;
    size_t l = 0;
    for (uint64_t r = 0; r < rows; r++) {
        const size_t end = ls ? ls[r] : (size_t)r;
        for (; l < end; l++)
            v += def[l] == c->max_def;
        to[r] = v;
    }
    to[rows] = (uint32_t)c->n_values;
}

int pq_rowgroup_index(const pq_rowgroup *rg, pq_row_index *ix, pq_err *err)
{
    int rc = check_whole_rows(rg, "the indexed", err);
    if (rc != 0)
        return rc;
    size_t tables = 0;
    for (size_t i = 0; i < rg->n_cols; i++) {
        const pq_column *c = &rg->cols[i];
        if (c->n_levels >= UINT32_MAX)
            return pq_err_set(err, PQ_ELIMIT, "index rows: column '%s' holds %zu levels",
                              c->node->path, c->n_levels);
        tables += (c->max_rep > 0) + (c->max_def > 0);
    }
    const size_t per = (size_t)rg->rows + 1;
    pq_buf_reset(&ix->starts);
    pq_buf_reset(&ix->at);
    if (pq_buf_reserve(&ix->starts, tables * per * sizeof(uint32_t)) != 0 ||
        pq_buf_reserve(&ix->at, rg->n_cols * 2 * sizeof(size_t)) != 0)
        return pq_err_set(err, PQ_ENOMEM, "index rows: out of memory");
    size_t *at = (size_t *)(void *)ix->at.data;
    uint32_t *st = (uint32_t *)(void *)ix->starts.data;
    size_t next = 0;
    for (size_t i = 0; i < rg->n_cols; i++) {
        const pq_column *c = &rg->cols[i];
        const uint32_t *ls = NULL;
        at[2 * i] = at[2 * i + 1] = SIZE_MAX;
        if (c->max_rep > 0) {
            at[2 * i] = next;
            index_levels(c, rg->rows, st + next);
            ls = st + next;
            next += per;
        }
        if (c->max_def > 0) {
            at[2 * i + 1] = next;
            index_values(c, rg->rows, ls, st + next);
            next += per;
        }
    }
    ix->starts.len = next * sizeof(uint32_t);
    ix->at.len = rg->n_cols * 2 * sizeof(size_t);
    ix->rows = rg->rows;
    return PQ_OK;
}

int pq_rowgroup_copy_rows(pq_rowgroup *dst, const pq_rowgroup *src, const pq_row_index *ix,
                          uint64_t first, uint64_t n, pq_err *err)
{
    if (dst->schema != src->schema || dst == src)
        return pq_err_set(err, PQ_EINVAL, "copy rows: the row groups have different schemas");
    if (ix->rows != src->rows || ix->at.len != src->n_cols * 2 * sizeof(size_t))
        return pq_err_set(err, PQ_EINVAL, "copy rows: the index is not the source's");
    if (first > src->rows || n > src->rows - first)
        return pq_err_set(err, PQ_EINVAL, "copy rows: rows %llu to %llu asked, the source has "
                          "%llu", (unsigned long long)first, (unsigned long long)(first + n),
                          (unsigned long long)src->rows);
    const size_t *at = (const size_t *)(const void *)ix->at.data;
    const uint32_t *st = (const uint32_t *)(const void *)ix->starts.data;
    const size_t r0 = (size_t)first, r1 = (size_t)(first + n);
    for (size_t i = 0; n > 0 && i < dst->n_cols; i++) {
        const uint32_t *ls = at[2 * i] == SIZE_MAX ? NULL : st + at[2 * i];
        const uint32_t *vs = at[2 * i + 1] == SIZE_MAX ? NULL : st + at[2 * i + 1];
        const size_t l0 = ls ? ls[r0] : r0, l1 = ls ? ls[r1] : r1;
        const size_t v0 = vs ? vs[r0] : l0, v1 = vs ? vs[r1] : l1;
        int rc = pq_column_append_range(&dst->cols[i], &src->cols[i], l0, l1, v0, v1, n);
        if (rc != 0) {
            for (size_t j = 0; j < i; j++)   /* whole rows only: as it was */
                pq_column_truncate_rows(&dst->cols[j], (size_t)dst->rows);
            return pq_err_set(err, rc, rc == PQ_ELIMIT
                              ? "copy rows: column '%s' would hold more than 4 GiB of byte "
                                "arrays in one row group"
                              : "copy rows: out of memory for column '%s'",
                              dst->cols[i].node->path);
        }
    }
    dst->rows += n;
    return PQ_OK;
}

/* ---- converting between schemas ----------------------------------------------- */

int pq_rowgroup_leaf_view(const pq_rowgroup *rg, size_t leaf, pq_leaf_view *out, pq_err *err)
{
    if (leaf >= rg->n_cols)
        return pq_err_set(err, PQ_EINVAL, "row group: no leaf %zu", leaf);
    const pq_column *c = &rg->cols[leaf];
    *out = (pq_leaf_view){
        .n_levels = c->n_levels, .n_values = c->n_values,
        .max_def = c->max_def, .max_rep = c->max_rep,
        .def = c->max_def ? pq_column_def(c) : NULL,
        .rep = c->max_rep ? pq_column_rep(c) : NULL,
        .offsets = c->node->type == PQ_BYTE_ARRAY ? pq_column_offsets(c) : NULL,
        .heap = c->heap.data,
    };
    return PQ_OK;
}

int pq_rowgroup_swap_leaf(pq_rowgroup *dst, size_t dl, pq_rowgroup *src, size_t sl, pq_err *err)
{
    if (dl >= dst->n_cols || sl >= src->n_cols)
        return pq_err_set(err, PQ_EINVAL, "swap leaf: no such leaf");
    pq_column *d = &dst->cols[dl], *s = &src->cols[sl];
    if (d->node->type != s->node->type || d->width != s->width || d->max_def != s->max_def ||
        d->max_rep != s->max_rep)
        return pq_err_set(err, PQ_EINVAL, "swap leaf: '%s' and '%s' differ in type or levels",
                          d->node->path, s->node->path);
    if (d->n_levels != 0)
        return pq_err_set(err, PQ_EINVAL, "swap leaf: '%s' is not empty", d->node->path);
    pq_column t = *d;
    *d = *s;
    d->node = t.node;
    t.node = s->node;
    *s = t;
    return PQ_OK;
}

int pq_rowgroup_set_rows(pq_rowgroup *rg, uint64_t rows, pq_err *err)
{
    for (size_t i = 0; i < rg->n_cols; i++)
        if (rg->cols[i].n_rows != rows)
            return pq_err_set(err, PQ_ESTATE, "column '%s' has %zu rows, not %llu",
                              rg->cols[i].node->path, rg->cols[i].n_rows,
                              (unsigned long long)rows);
    rg->rows = rows;
    return PQ_OK;
}
