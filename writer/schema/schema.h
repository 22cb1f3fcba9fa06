/* schema.h - internal view of the schema tree for the writer modules
 * (column buffers, footer). Callers outside writer/ use pq_writer.h. */
#ifndef PQ_SCHEMA_H
#define PQ_SCHEMA_H

#include "schema_tree.h"
#include "thrift.h"

const pq_node *pq_schema_leaf_node(const pq_schema *s, size_t leaf);

/* Physical width in bytes of fixed-size values (BOOLEAN stored as 1 byte
 * in buffers); 0 for BYTE_ARRAY. */
size_t pq_physical_width(pq_physical_type type, int32_t type_length);

/* The footer's schema list elements (SchemaElement, depth-first), without
 * the list's header (schema_thrift.c): pq_schema_finish keeps them in
 * s->elements for every file's footer; metadata.c writes them itself for
 * a schema not finished. */
void pq_schema_write_elements(pq_thrift *t, const pq_schema *s);

#endif
