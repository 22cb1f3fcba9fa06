/* rowgroup.h - pq_rowgroup: the buffered rows of one row group, one
 * pq_column per leaf of a schema, not tied to any file.
 *
 * Why separate from pq_writer: the daemon's workers shred records into
 * row-group buffers of their own, on their own threads, and the pipeline
 * then moves those rows, in input order, into the row group that will be
 * encoded (possibly on yet another thread) and appended to a file. A
 * pq_writer owns one pq_rowgroup for the classic put/end_row API.
 *
 *     pq_rowgroup *rg;
 *     pq_rowgroup_new(&rg, schema, &err);          schema outlives rg
 *     pq_column_put_i64(pq_rowgroup_column(rg, 0), 0, 42);
 *     pq_rowgroup_end_row(rg);
 *     ...
 *     pq_rowgroup_move_rows(big, rg, pq_rowgroup_rows(rg), &err);
 *     pq_rowgroup_destroy(rg);
 *
 * Not thread-safe: one thread uses a pq_rowgroup at a time. Buffers keep
 * their capacity across pq_rowgroup_reset, so steady state allocates
 * nothing per value. */
#ifndef PQ_ROWGROUP_H
#define PQ_ROWGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "pq_writer.h"

typedef struct pq_rowgroup pq_rowgroup;

/* Finishes the schema (pq_schema_finish) if needed. The schema is borrowed
 * and must outlive the row group. Returns 0, PQ_ENOMEM or the schema's
 * error. */
int pq_rowgroup_new(pq_rowgroup **out, pq_schema *schema, pq_err *err);
void pq_rowgroup_destroy(pq_rowgroup *rg);
/* Empties rg and unbinds it from its schema, keeping its columns' buffers
 * (with their capacity) for pq_rowgroup_new_in: a shell that references
 * nothing (its schema may be freed first). Only new_in or destroy may
 * take a shell. */
void pq_rowgroup_release(pq_rowgroup *rg);
/* pq_rowgroup_new, taking over shell (a released row group, or NULL):
 * its columns' buffers serve the same leaf indices of schema when it has
 * as many columns or more, else it is freed. shell is consumed either
 * way, even on error. */
int pq_rowgroup_new_in(pq_rowgroup **out, pq_rowgroup *shell, pq_schema *schema, pq_err *err);
/* Bytes its columns' buffers have room for (held, used or not). */
size_t pq_rowgroup_capacity(const pq_rowgroup *rg);

const pq_schema *pq_rowgroup_schema(const pq_rowgroup *rg);
size_t pq_rowgroup_num_columns(const pq_rowgroup *rg);
pq_column *pq_rowgroup_column(pq_rowgroup *rg, size_t leaf);
/* Every leaf's column as one array (leaf i at [i], *n of them), for a
 * caller that puts many values per row and indexes it itself rather than
 * calling pq_rowgroup_column per value. Valid as long as the row group. */
pq_column *pq_rowgroup_columns(pq_rowgroup *rg, size_t *n);

/* Ends a row across all columns (counts it; never flushes anything). */
void pq_rowgroup_end_row(pq_rowgroup *rg);
/* Drops every value put since the last end_row. */
void pq_rowgroup_abort_row(pq_rowgroup *rg);
/* Drops the values put into one leaf since the last end_row. */
void pq_rowgroup_abort_leaf(pq_rowgroup *rg, size_t leaf);

uint64_t pq_rowgroup_rows(const pq_rowgroup *rg);          /* ended rows */
size_t pq_rowgroup_buffered_bytes(const pq_rowgroup *rg);  /* values + levels held */

/* Appends the first n ended rows of src to dst (same schema object) and
 * removes them from src, whose remaining rows move to the front. Values,
 * levels and byte arrays are copied once; no per-value allocation.
 * Returns 0, PQ_EINVAL (different schemas, n > rows of src, or src has an
 * unfinished row), PQ_ENOMEM or PQ_ELIMIT (a byte-array chunk would pass
 * 4 GiB); on error both are unchanged. */
int pq_rowgroup_move_rows(pq_rowgroup *dst, pq_rowgroup *src, uint64_t n, pq_err *err);

/* Where each row of a row group starts in each leaf, so that rows can be
 * copied out of it from anywhere without scanning its levels again
 * (pq_rowgroup_copy_rows): the pipeline shreds a batch of a partitioned
 * output, grouped by key, into one row group and then copies each key's
 * rows into that key's file, leaving the batch's rows in place (moving
 * them shifted the rest to the front after each key). Caller-owned: init
 * once, pq_rowgroup_index per filled row group (keeps its memory), free. */
typedef struct pq_row_index {
    pq_buf starts;               /* uint32 row starts, rows + 1 per table */
    pq_buf at;                   /* size_t per leaf, two: where its level and
                                    its value starts are in starts (SIZE_MAX:
                                    none, the start is the row's level) */
    uint64_t rows;
} pq_row_index;

void pq_row_index_init(pq_row_index *ix);
void pq_row_index_free(pq_row_index *ix);
/* Indexes rg's ended rows: a level start per row for repeated leaves, a
 * value start per row for leaves with definition levels; flat required
 * leaves need neither. PQ_ENOMEM, PQ_ELIMIT (a leaf holds 4 G levels), or
 * PQ_EINVAL (an unfinished row). */
int pq_rowgroup_index(const pq_rowgroup *rg, pq_row_index *ix, pq_err *err);
/* Appends src's rows [first, first + n) to dst (ix: src indexed since it
 * last changed): one copy per buffer of each leaf; src is unchanged.
 * Returns 0, PQ_EINVAL (other schema, rows past the index), PQ_ENOMEM or
 * PQ_ELIMIT (4 GiB of byte arrays); on error dst is as it was. */
int pq_rowgroup_copy_rows(pq_rowgroup *dst, const pq_rowgroup *src, const pq_row_index *ix,
                          uint64_t first, uint64_t n, pq_err *err);

/* Makes room in rg for `rows` more rows shaped like those of like (same
 * schema): each buffer of each column grows to hold like's per-row bytes
 * times rows. Filling a large row group from small batches then copies
 * each value once, instead of again at every doubling of its buffers.
 * Address space only: pages are touched when rows arrive. */
int pq_rowgroup_reserve_like(pq_rowgroup *rg, const pq_rowgroup *like, uint64_t rows,
                             pq_err *err);

/* Read-only view of one leaf's buffered values, for converting a row group
 * into another schema's (the pipeline's per-file Variant shredding).
 * Valid until the row group changes. */
typedef struct pq_leaf_view {
    size_t n_levels, n_values;
    uint16_t max_def, max_rep;
    const uint16_t *def, *rep;   /* NULL when the max level is 0 */
    const uint32_t *offsets;     /* BYTE_ARRAY: n_values + 1 entries into heap */
    const uint8_t *heap;
} pq_leaf_view;

/* PQ_EINVAL when leaf is out of range. */
int pq_rowgroup_leaf_view(const pq_rowgroup *rg, size_t leaf, pq_leaf_view *out, pq_err *err);

/* Exchanges the buffered values of leaf dl of dst and leaf sl of src, which
 * may belong to different schemas: O(1), no copy. The two leaves must have
 * the same physical type, width and maximum levels, and dst's must be
 * empty; src's leaf is empty afterwards. Row counts are not touched: the
 * caller ends dst's rows once every leaf holds them, and resets src.
 * PQ_EINVAL otherwise. */
int pq_rowgroup_swap_leaf(pq_rowgroup *dst, size_t dl, pq_rowgroup *src, size_t sl, pq_err *err);

/* Sets the ended-row count of a row group filled leaf by leaf (swap_leaf,
 * puts), after checking every leaf holds exactly that many rows. */
int pq_rowgroup_set_rows(pq_rowgroup *rg, uint64_t rows, pq_err *err);

/* Drops all rows, keeps the memory. */
void pq_rowgroup_reset(pq_rowgroup *rg);

/* Checks every column holds exactly pq_rowgroup_rows rows. */
int pq_rowgroup_check(const pq_rowgroup *rg, pq_err *err);

#endif
