/* schema.h - internal view of the schema tree for the writer modules
 * (column buffers, footer). Callers outside writer/ use pq_writer.h. */
#ifndef PQ_SCHEMA_H
#define PQ_SCHEMA_H

#include "pq_writer.h"

typedef struct pq_node {
    char *name;
    pq_repetition repetition;
    bool is_leaf;
    pq_physical_type type;
    int32_t type_length;
    pq_logical logical;          /* logical.crs points into crs_copy */
    char *crs_copy;
    pq_converted_type converted; /* derived from logical, -1 if none */
    int32_t field_id;
    pq_column_opts opts;
    char *key_id_copy;           /* opts.key_id points here */
    int parent;
    int *children;
    size_t n_children, cap_children;
    /* filled by pq_schema_finish */
    uint16_t max_def, max_rep;
    int leaf_index;
    char *path;                  /* leaves: dotted path */
    char **path_parts;           /* leaves: path_in_schema, n_path entries */
    size_t n_path;
    bool variant_binary;         /* a Variant `metadata` or `value` leaf */
} pq_node;

struct pq_schema {
    pq_node *nodes;
    size_t n_nodes, cap_nodes;
    int *leaves;                 /* node id of each leaf, depth-first */
    size_t n_leaves;
    bool finished;
};

const pq_node *pq_schema_leaf_node(const pq_schema *s, size_t leaf);

/* The leaf's statistics sort order. Variant-encoded binaries (`metadata`,
 * `value` under a VARIANT group) have none: parquet.thrift ColumnOrder says
 * VARIANT is undefined, and byte order of Variant encodings means nothing.
 * typed_value leaves keep their own types' orders. */
pq_sort_order pq_leaf_sort_order(const pq_node *n);

/* Physical width in bytes of fixed-size values (BOOLEAN stored as 1 byte
 * in buffers); 0 for BYTE_ARRAY. */
size_t pq_physical_width(pq_physical_type type, int32_t type_length);

#endif
