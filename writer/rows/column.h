/* column.h - per-leaf value buffers for the row group being built. */
#ifndef PQ_COLUMN_H
#define PQ_COLUMN_H

#include "buf.h"
#include "schema.h"

/* Values are stored densely (nulls only appear in the levels): fixed-width
 * values packed in `values` (BOOLEAN one byte each), byte arrays in `heap`
 * with uint32 offsets (n_values + 1 entries). Levels are uint16 arrays,
 * present only when the leaf's max level is > 0. */
struct pq_column {
    /* What a put reads, first: a record's puts touch every leaf's column,
     * and the pointer chase to node->type plus fields spread over three
     * cache lines missed on each (perf annotate of put_bytes). type is
     * node->type; the buffers a byte-array put appends to come next,
     * then a fixed-width put's values. */
    pq_physical_type type;
    uint16_t max_def, max_rep;
    size_t width;
    size_t n_levels;
    size_t n_values;
    size_t n_rows;
    pq_buf def;
    pq_buf heap;
    pq_buf offsets;
    pq_buf values;
    pq_buf rep;
    const pq_node *node;
};

int pq_column_init(pq_column *c, const pq_node *node);
/* pq_column_init for a column whose buffers (initialised or freed, of
 * any node) are kept, emptied, for this node's values. PQ_ENOMEM. */
int pq_column_init_in(pq_column *c, const pq_node *node);
void pq_column_free(pq_column *c);
/* Drops buffered values, keeps memory for the next row group. */
void pq_column_reset(pq_column *c);
/* Drops buffered values and the memory that held them. */
void pq_column_trim(pq_column *c);
size_t pq_column_buffered_bytes(const pq_column *c);
/* Room for `levels` more levels, `values` more values and, for byte
 * arrays, `heap` more bytes: a caller that knows how many rows are coming
 * spares the buffers' growth from 64 bytes by doubling. PQ_ENOMEM. */
int pq_column_reserve(pq_column *c, size_t levels, size_t values, size_t heap);
/* Appends src's levels [l0, l1) and values [v0, v1) (the values those
 * levels define, `rows` whole rows) to c: one copy per buffer, byte-array
 * offsets rebased. PQ_ENOMEM, or PQ_ELIMIT past 4 GiB of byte arrays;
 * c is unchanged on error. */
int pq_column_append_range(pq_column *c, const pq_column *src, size_t l0, size_t l1, size_t v0,
                           size_t v1, size_t rows);
/* Drops the values of rows beyond the first `rows` buffered rows. */
void pq_column_truncate_rows(pq_column *c, size_t rows);

static inline const uint16_t *pq_column_def(const pq_column *c)
{
    return (const uint16_t *)(const void *)c->def.data;
}

static inline const uint16_t *pq_column_rep(const pq_column *c)
{
    return (const uint16_t *)(const void *)c->rep.data;
}

static inline const uint32_t *pq_column_offsets(const pq_column *c)
{
    return (const uint32_t *)(const void *)c->offsets.data;
}

/* The bytes of byte-array value i. A chunk of empty strings has no heap
 * (data NULL), and NULL + 0 is undefined in C (clang's UBSan says so). */
static inline const uint8_t *pq_column_bytes(const pq_column *c, size_t i)
{
    static const uint8_t empty[1];
    return c->heap.data != NULL ? c->heap.data + pq_column_offsets(c)[i] : empty;
}

#endif
