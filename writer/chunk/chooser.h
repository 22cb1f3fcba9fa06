/* chooser.h - a column chunk's encoding decisions, made by the streaming
 * column writer (chunk.c) on the chunk's first page with values and kept
 * for the chunk: dictionary or not, and the fallback encoding. */
#ifndef PQ_CHOOSER_H
#define PQ_CHOOSER_H

#include "colwriter.h"

/* Values [v0, v0 + n) of c, the first page with values: sets cw->mode
 * and cw->enc. When the mode is PQ_CW_DICT the page's values are in the
 * dictionary and w->indices holds their n indices. */
int pq_choose_first_page(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                         size_t n, pq_err *err);

/* The dictionary passed dictionary_max_bytes after the page of values
 * [v0, v0 + n) of c: sets cw->enc for the pages after it (auto mode
 * measures on that page, as the first page's choice does). */
int pq_choose_fallback(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                       size_t n, pq_err *err);

/* Inserts values [v0, v0 + n) of c into cw->dict; w->indices gets their
 * n indices. */
int pq_choose_dict_insert(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                          size_t n, pq_err *err);
/* The same, the indices appended to out. */
int pq_choose_dict_append(pq_colwriter *cw, const pq_column *c, size_t v0, size_t n,
                          pq_buf *out, pq_err *err);

#endif
