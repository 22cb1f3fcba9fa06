/* values.h - encodes a slice of a leaf's buffered values with one
 * encoding: the dispatch from pq_encoding to the encoders. */
#ifndef PQ_VALUES_H
#define PQ_VALUES_H

#include "column.h"

/* Values [v0, v0 + n) of c appended to out. For RLE_DICTIONARY, indices are
 * the per-value dictionary indices and dict_bit_width their width. `wide`
 * is scratch for boolean RLE. */
int pq_values_encode(pq_buf *out, const pq_column *c, pq_encoding enc, size_t v0, size_t n,
                     const uint32_t *indices, int dict_bit_width, pq_buf *wide);

/* Whether enc may encode values of this physical type (Encodings.md). */
bool pq_values_encoding_allowed(pq_physical_type type, pq_encoding enc);

/* Encoding used when no dictionary is used and none was configured: the
 * smallest after compression on log data (see values.c). */
pq_encoding pq_values_default_encoding(pq_physical_type type, int page_version);

#endif
