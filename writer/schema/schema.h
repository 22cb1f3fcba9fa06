/* schema.h - internal view of the schema tree for the writer modules
 * (column buffers, footer). Callers outside writer/ use pq_writer.h. */
#ifndef PQ_SCHEMA_H
#define PQ_SCHEMA_H

#include "schema_tree.h"

const pq_node *pq_schema_leaf_node(const pq_schema *s, size_t leaf);

/* Physical width in bytes of fixed-size values (BOOLEAN stored as 1 byte
 * in buffers); 0 for BYTE_ARRAY. */
size_t pq_physical_width(pq_physical_type type, int32_t type_length);

#endif
