/* schema_tree.h - the layout of the schema tree: pq_node and struct
 * pq_schema, for the writer modules that read it. schema.c builds the tree;
 * logical.c checks annotations against it. A header of its own so that
 * logical.h need not include schema.h while schema.c calls logical.c. */
#ifndef PQ_SCHEMA_TREE_H
#define PQ_SCHEMA_TREE_H

#include "buf.h"
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
    pq_buf path_thrift;          /* leaves: path_in_schema's list elements,
                                    encoded once for every chunk's footer entry */
    bool variant_binary;         /* a Variant `metadata` or `value` leaf */
} pq_node;

struct pq_schema {
    pq_node *nodes;
    size_t n_nodes, cap_nodes;
    int *leaves;                 /* node id of each leaf, depth-first */
    size_t n_leaves;
    /* The footer's SchemaElement list entries, encoded by pq_schema_finish
     * (schema_thrift.c): a partitioned convert writes one footer per file, all
     * of a layout's files share its schema, and its ~150 elements cost
     * ~40k instructions a footer. Read-only, like the tree, once finished
     * (the schema is then shared between threads). */
    pq_buf elements;
    bool finished;
};

#endif
