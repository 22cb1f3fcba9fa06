/* rowgroup_int.h - the layout of pq_rowgroup, for the writer modules only:
 * writer.c's per-row path (end_row, the limit check, pq_writer_column)
 * reads and counts rows without a function call per row, as it did when
 * the writer held the columns itself. Everyone else uses rowgroup.h. */
#ifndef PQ_ROWGROUP_INT_H
#define PQ_ROWGROUP_INT_H

#include "column.h"
#include "rowgroup.h"

/* Where a row boundary falls in one leaf's buffers. */
typedef struct pq_col_cut {
    size_t levels;   /* levels (and def/rep entries) before the boundary */
    size_t values;   /* defined values before it */
    size_t heap;     /* byte-array heap bytes before it */
} pq_col_cut;

struct pq_rowgroup {
    pq_schema *schema;
    pq_column *cols;
    pq_col_cut *cuts;            /* move_rows scratch, one per leaf */
    size_t n_cols;
    size_t cap_cols;             /* room in cols and cuts (a released row group's) */
    uint64_t rows;               /* ended rows */
};

#endif
