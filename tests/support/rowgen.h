/* rowgen.h - seeded random rows for row-group and writer tests: a schema
 * with every physical type, required and optional leaves, lists, a map, a
 * struct, a list of lists and a list of structs; and rows for any schema,
 * where each leaf gets a level sequence valid for its max levels (rep 0
 * starts the row, nulls below the max definition level) and random values
 * of its physical type (repeating strings, so dictionaries kick in; NaNs;
 * empty byte arrays).
 *
 * Row `row` of seed `seed` is always the same, so a test can put the same
 * rows through different paths (the classic writer API, row groups moved
 * around) and compare, or rebuild any range of rows as a reference. Leaves
 * are independent of each other: the rows exercise buffers and encoders,
 * not record assembly. */
#ifndef PQT_ROWGEN_H
#define PQT_ROWGEN_H

#include <stdint.h>

#include "column.h"
#include "pq_writer.h"
#include "rowgroup.h"

/* The test schema; opts (may be NULL) applies to every leaf. Leaf "s" (an
 * optional string) has a bloom filter. */
pq_schema *pqt_rowgen_schema(const pq_column_opts *opts);

/* Puts row `row` into every leaf (without ending it). leaf(ctx, i) returns
 * leaf i's column. Returns 0 or the first put's error. */
int pqt_rowgen_values(pq_column *(*leaf)(void *ctx, size_t i), void *ctx, size_t n_leaves,
                      uint64_t seed, uint64_t row);

/* Puts and ends row `row` in a row group / through the classic writer API. */
int pqt_rowgen_rg(pq_rowgroup *rg, uint64_t seed, uint64_t row);
int pqt_rowgen_writer(pq_writer *w, size_t n_leaves, uint64_t seed, uint64_t row,
                      pq_err *err);

#endif
