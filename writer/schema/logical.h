/* logical.h - logical type rules: which physical types each annotation
 * allows, the legacy ConvertedType to write beside it, and its name in the
 * textual schema form. */
#ifndef PQ_LOGICAL_H
#define PQ_LOGICAL_H

#include "buf.h"
#include "schema_tree.h"

/* Checks the node's logical type against its physical type and shape. */
int pq_logical_validate(const pq_schema *s, const pq_node *n, pq_err *err);

/* The ConvertedType the spec pairs with the node's annotation, or -1. */
pq_converted_type pq_logical_converted(const pq_node *n);

/* Appends " (ANNOTATION)" in the spec's textual form, or nothing. */
int pq_logical_print(const pq_node *n, pq_buf *out);

/* Largest decimal precision a FIXED_LEN_BYTE_ARRAY of n bytes can hold. */
int32_t pq_decimal_max_precision(int32_t n_bytes);

#endif
