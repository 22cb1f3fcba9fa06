/* openpage.h - rows joining a column's open page while its dictionary is
 * in use (chunk.c): only their levels are kept, the values go into the
 * dictionary at once and leave an index each. */
#ifndef PQ_OPENPAGE_H
#define PQ_OPENPAGE_H

#include "colwriter.h"

/* Levels [l0, l1) and values [v0, v1) (rows whole rows) of c join
 * cw->open: levels copied, values inserted into cw->dict (indices into
 * cw->open_idx), page statistics, byte-array bytes and geospatial
 * statistics gathered. */
int pq_openpage_append_dict(pq_colwriter *cw, const pq_column *c, size_t l0, size_t l1,
                            size_t v0, size_t v1, size_t rows, pq_err *err);

/* cw->page_stats were reset (a page opens, or one is measured): each
 * dictionary entry is offered to them again, once. */
void pq_openpage_new_page(pq_colwriter *cw);

#endif
