/* colfinish.h - the end of a streamed column chunk (chunk.c): what its
 * pages leave for the chunk (bloom filter hashes, geospatial statistics)
 * and, when it finishes, the dictionary page, the chunk statistics, the
 * bloom filter and the chunk's bytes in order. */
#ifndef PQ_COLFINISH_H
#define PQ_COLFINISH_H

#include "colwriter.h"
#include "page.h"

bool pq_colfinish_order_has_nans(pq_sort_order order);
bool pq_colfinish_order_has_legacy(pq_sort_order order);

/* The encoding named by a page without values before any decision. */
pq_encoding pq_colfinish_null_encoding(const pq_colwriter *cw);

/* A page's values [v0, v0 + n) of c, as the chunk's end needs them:
 * geospatial statistics; the bloom filter's hashes when the page does not
 * use the dictionary (in_dict false). */
int pq_colfinish_page_values(pq_colwriter *cw, const pq_column *c, size_t v0, size_t n,
                             bool in_dict, pq_err *err);

/* Appends the chunk to out (the dictionary page, then the data pages),
 * offsets in cw->meta counted from out's start; finishes the statistics,
 * the bloom filter and the geospatial statistics. take: as
 * pq_colwriter_finish's. */
int pq_colfinish_chunk(pq_colwriter *cw, pq_chunk_work *w, pq_buf *out, pq_buf *take,
                       pq_err *err);

/* Adds delta to every offset of m (pages, dictionary, data). */
void pq_colfinish_rebase(pq_chunk_meta *m, int64_t delta);

/* Builds one page into `to`, its sizes counted in the chunk's. */
int pq_colfinish_emit(pq_colwriter *cw, pq_chunk_work *w, pq_page_spec *spec, pq_buf *to,
                      size_t *size_out, pq_err *err);

#endif
