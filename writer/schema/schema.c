/* schema.c - the schema tree: groups and primitive leaves, validation of
 * logical types against physical types (LogicalTypes.md), the matching
 * legacy ConvertedType, max definition/repetition levels per leaf, and the
 * spec's textual schema form for `parqd check`. */
#include "schema.h"
#include "buf.h"
#include "logical.h"
#include "thrift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pq_column_opts_default(pq_column_opts *o)
{
    memset(o, 0, sizeof *o);
    o->encoding = PQ_ENC_AUTO;
    o->codec = -1;
    o->dictionary = -1;
    o->statistics = -1;
    o->bloom = -1;
}

size_t pq_physical_width(pq_physical_type type, int32_t type_length)
{
    switch (type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return (size_t)type_length;
    case PQ_BYTE_ARRAY: return 0;
    }
    return 0;
}

pq_schema *pq_schema_new(const char *root_name)
{
    pq_schema *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    pq_node_spec root = {.name = root_name ? root_name : "schema",
                         .repetition = PQ_REQUIRED, .field_id = -1};
    if (pq_schema_add_group(s, -1, &root, NULL) != 0) {
        pq_schema_destroy(s);
        return NULL;
    }
    return s;
}

static void node_free(pq_node *n)
{
    free(n->name);
    free(n->crs_copy);
    free(n->key_id_copy);
    free(n->children);
    free(n->path);
    if (n->path_parts != NULL)
        for (size_t i = 0; i < n->n_path; i++)
            free(n->path_parts[i]);
    free(n->path_parts);
    pq_buf_free(&n->path_thrift);
}

void pq_schema_destroy(pq_schema *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_nodes; i++)
        node_free(&s->nodes[i]);
    free(s->nodes);
    free(s->leaves);
    pq_buf_free(&s->elements);
    free(s);
}

static int add_child(pq_node *parent, int child)
{
    if (parent->n_children == parent->cap_children) {
        size_t cap = parent->cap_children ? parent->cap_children * 2 : 4;
        int *p = realloc(parent->children, cap * sizeof *p);
        if (p == NULL)
            return PQ_ENOMEM;
        parent->children = p;
        parent->cap_children = cap;
    }
    parent->children[parent->n_children++] = child;
    return PQ_OK;
}

static int check_name(const pq_schema *s, int parent, const char *name, pq_err *err)
{
    if (name == NULL || name[0] == '\0')
        return pq_err_set(err, PQ_EINVAL, "schema: a node needs a non-empty name");
    if (parent < 0)
        return PQ_OK;
    if ((size_t)parent >= s->n_nodes || s->nodes[parent].is_leaf)
        return pq_err_set(err, PQ_EINVAL, "schema: parent of '%s' is not a group", name);
    const pq_node *p = &s->nodes[parent];
    for (size_t i = 0; i < p->n_children; i++)
        if (strcmp(s->nodes[p->children[i]].name, name) == 0)
            return pq_err_set(err, PQ_EINVAL, "schema: duplicate field '%s' in group '%s'",
                              name, p->name);
    return PQ_OK;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int add_node(pq_schema *s, int parent, const pq_node_spec *spec, bool leaf, pq_err *err)
{
    if (s->finished)
        return pq_err_set(err, PQ_ESTATE, "schema: cannot add '%s' after finish", spec->name);
    int rc = check_name(s, parent, spec->name, err);
    if (rc != 0)
        return rc;
    if (s->n_nodes == s->cap_nodes) {
        size_t cap = s->cap_nodes ? s->cap_nodes * 2 : 16;
        pq_node *p = realloc(s->nodes, cap * sizeof *p);
        if (p == NULL)
            return pq_err_set(err, PQ_ENOMEM, "schema: out of memory");
        s->nodes = p;
        s->cap_nodes = cap;
    }
    int id = (int)s->n_nodes;
    pq_node *n = &s->nodes[id];
    memset(n, 0, sizeof *n);
    n->name = strdup(spec->name);
    n->repetition = spec->repetition;
    n->is_leaf = leaf;
    n->type = spec->type;
    n->type_length = spec->type_length;
    n->logical = spec->logical;
    n->crs_copy = dup_or_null(spec->logical.crs);
    n->logical.crs = n->crs_copy;
    n->field_id = spec->field_id;
    n->parent = parent;
    n->leaf_index = -1;
    if (spec->opts != NULL)
        n->opts = *spec->opts;
    else
        pq_column_opts_default(&n->opts);
    n->key_id_copy = dup_or_null(n->opts.key_id);
    n->opts.key_id = n->key_id_copy;
    s->n_nodes++;
    if (n->name == NULL || (spec->logical.crs && !n->crs_copy) ||
        (n->opts.key_id == NULL && spec->opts && spec->opts->key_id))
        return pq_err_set(err, PQ_ENOMEM, "schema: out of memory");
    if (parent >= 0 && add_child(&s->nodes[parent], id) != 0)
        return pq_err_set(err, PQ_ENOMEM, "schema: out of memory");
    return id;
}

int pq_schema_add_group(pq_schema *s, int parent, const pq_node_spec *spec, pq_err *err)
{
    return add_node(s, parent, spec, false, err);
}

int pq_schema_add_leaf(pq_schema *s, int parent, const pq_node_spec *spec, pq_err *err)
{
    if (parent < 0)
        return pq_err_set(err, PQ_EINVAL, "schema: leaf '%s' needs a parent group", spec->name);
    return add_node(s, parent, spec, true, err);
}

static int add_wrapper(pq_schema *s, int parent, const char *name, pq_repetition rep,
                       int32_t field_id, pq_logical_kind kind, const char *inner, pq_err *err)
{
    pq_node_spec outer = {.name = name, .repetition = rep, .field_id = field_id,
                          .logical = {.kind = kind}};
    int id = pq_schema_add_group(s, parent, &outer, err);
    if (id < 0)
        return id;
    pq_node_spec mid = {.name = inner, .repetition = PQ_REPEATED, .field_id = -1};
    return pq_schema_add_group(s, id, &mid, err);
}

int pq_schema_add_list(pq_schema *s, int parent, const char *name, pq_repetition rep,
                       int32_t field_id, pq_err *err)
{
    return add_wrapper(s, parent, name, rep, field_id, PQ_LT_LIST, "list", err);
}

int pq_schema_add_map(pq_schema *s, int parent, const char *name, pq_repetition rep,
                      int32_t field_id, pq_err *err)
{
    return add_wrapper(s, parent, name, rep, field_id, PQ_LT_MAP, "key_value", err);
}

static char *join_path(char **parts, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(parts[i]) + 1;
    char *p = malloc(len);
    if (p == NULL)
        return NULL;
    p[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            strcat(p, ".");
        strcat(p, parts[i]);
    }
    return p;
}

static int leaf_path(pq_schema *s, pq_node *n)
{
    size_t depth = 0;
    for (int id = (int)(n - s->nodes); s->nodes[id].parent >= 0; id = s->nodes[id].parent)
        depth++;
    n->path_parts = calloc(depth, sizeof *n->path_parts);
    if (n->path_parts == NULL)
        return PQ_ENOMEM;
    n->n_path = depth;
    size_t i = depth;
    for (int id = (int)(n - s->nodes); s->nodes[id].parent >= 0; id = s->nodes[id].parent)
        if ((n->path_parts[--i] = strdup(s->nodes[id].name)) == NULL)
            return PQ_ENOMEM;
    n->path = join_path(n->path_parts, depth);
    pq_thrift t;
    pq_buf_reset(&n->path_thrift);
    pq_thrift_init(&t, &n->path_thrift);
    for (i = 0; i < depth; i++)
        pq_thrift_list_binary(&t, n->path_parts[i], strlen(n->path_parts[i]));
    return n->path && pq_thrift_error(&t) == 0 ? PQ_OK : PQ_ENOMEM;
}

static bool under_variant(const pq_schema *s, const pq_node *n)
{
    for (int id = n->parent; id >= 0; id = s->nodes[id].parent)
        if (s->nodes[id].logical.kind == PQ_LT_VARIANT)
            return true;
    return false;
}

/* Nodes are appended after their parents, so one forward pass sees every
 * parent's levels before its children's. Leaves are numbered depth-first
 * by a separate walk because insertion order may interleave subtrees. */
static int number_leaves(pq_schema *s, int id, pq_err *err)
{
    pq_node *n = &s->nodes[id];
    if (n->is_leaf) {
        n->leaf_index = (int)s->n_leaves;
        s->leaves[s->n_leaves++] = id;
        if (leaf_path(s, n) != 0)
            return pq_err_set(err, PQ_ENOMEM, "schema: out of memory");
        return PQ_OK;
    }
    if (id != 0 && n->n_children == 0 && n->logical.kind != PQ_LT_VARIANT)
        return pq_err_set(err, PQ_EINVAL, "schema: group '%s' has no fields", n->name);
    for (size_t i = 0; i < n->n_children; i++) {
        int rc = number_leaves(s, n->children[i], err);
        if (rc != 0)
            return rc;
    }
    return PQ_OK;
}

int pq_schema_finish(pq_schema *s, pq_err *err)
{
    if (s->finished)
        return PQ_OK;
    if (s->nodes[0].n_children == 0)
        return pq_err_set(err, PQ_EINVAL, "schema: no columns");
    for (size_t i = 1; i < s->n_nodes; i++) {
        pq_node *n = &s->nodes[i];
        const pq_node *p = &s->nodes[n->parent];
        uint32_t def = p->max_def + (n->repetition != PQ_REQUIRED);
        uint32_t rep = p->max_rep + (n->repetition == PQ_REPEATED);
        if (def > UINT16_MAX / 2 || rep > UINT16_MAX / 2)
            return pq_err_set(err, PQ_ELIMIT, "schema: '%s' is nested too deeply", n->name);
        n->max_def = (uint16_t)def;
        n->max_rep = (uint16_t)rep;
        int rc = pq_logical_validate(s, n, err);
        if (rc != 0)
            return rc;
        n->converted = pq_logical_converted(n);
        n->variant_binary = n->is_leaf && n->logical.kind == PQ_LT_NONE &&
                            n->type == PQ_BYTE_ARRAY && under_variant(s, n) &&
                            (strcmp(n->name, "metadata") == 0 || strcmp(n->name, "value") == 0);
    }
    free(s->leaves);
    s->n_leaves = 0;
    s->leaves = malloc(s->n_nodes * sizeof *s->leaves);
    if (s->leaves == NULL)
        return pq_err_set(err, PQ_ENOMEM, "schema: out of memory");
    int rc = number_leaves(s, 0, err);
    if (rc != 0)
        return rc;
    pq_thrift t;
    pq_buf_reset(&s->elements);
    pq_thrift_init(&t, &s->elements);
    pq_schema_write_elements(&t, s);
    if (pq_thrift_error(&t) != 0)
        return pq_err_set(err, PQ_ENOMEM, "schema: out of memory");
    s->finished = true;
    return PQ_OK;
}

size_t pq_schema_num_leaves(const pq_schema *s) { return s->n_leaves; }

const pq_node *pq_schema_leaf_node(const pq_schema *s, size_t leaf)
{
    return leaf < s->n_leaves ? &s->nodes[s->leaves[leaf]] : NULL;
}

int pq_schema_leaf_of_node(const pq_schema *s, int node)
{
    if (node < 0 || (size_t)node >= s->n_nodes)
        return -1;
    return s->nodes[node].leaf_index;
}

uint16_t pq_schema_max_def(const pq_schema *s, size_t leaf)
{
    return pq_schema_leaf_node(s, leaf)->max_def;
}

uint16_t pq_schema_max_rep(const pq_schema *s, size_t leaf)
{
    return pq_schema_leaf_node(s, leaf)->max_rep;
}

const char *pq_schema_leaf_path(const pq_schema *s, size_t leaf)
{
    return pq_schema_leaf_node(s, leaf)->path;
}

static const char *repetition_name(pq_repetition r)
{
    return r == PQ_REQUIRED ? "required" : r == PQ_OPTIONAL ? "optional" : "repeated";
}

static const char *physical_name(pq_physical_type t)
{
    static const char *names[] = {"boolean", "int32", "int64", "int96", "float", "double",
                                  "binary", "fixed_len_byte_array"};
    return names[t];
}

static int print_indent(pq_buf *out, int depth)
{
    for (int i = 0; i < depth; i++)
        if (pq_buf_append(out, "  ", 2) != 0)
            return PQ_ENOMEM;
    return PQ_OK;
}

static int print_node(const pq_schema *s, int id, int depth, pq_buf *out)
{
    const pq_node *n = &s->nodes[id];
    char head[512];
    if (n->is_leaf && n->type == PQ_FIXED_LEN_BYTE_ARRAY)
        snprintf(head, sizeof head, "%s fixed_len_byte_array(%d) %s", repetition_name(n->repetition),
                 (int)n->type_length, n->name);
    else if (n->is_leaf)
        snprintf(head, sizeof head, "%s %s %s", repetition_name(n->repetition),
                 physical_name(n->type), n->name);
    else
        snprintf(head, sizeof head, "%s group %s", repetition_name(n->repetition), n->name);
    int rc = print_indent(out, depth);
    rc = rc ? rc : pq_buf_append(out, head, strlen(head));
    rc = rc ? rc : pq_logical_print(n, out);
    if (rc == 0 && n->field_id >= 0) {
        snprintf(head, sizeof head, " = %d", (int)n->field_id);
        rc = pq_buf_append(out, head, strlen(head));
    }
    if (rc != 0 || n->is_leaf)
        return rc ? rc : pq_buf_append(out, ";\n", 2);
    rc = pq_buf_append(out, " {\n", 3);
    for (size_t i = 0; rc == 0 && i < n->n_children; i++)
        rc = print_node(s, n->children[i], depth + 1, out);
    rc = rc ? rc : print_indent(out, depth);
    return rc ? rc : pq_buf_append(out, "}\n", 2);
}

int pq_schema_print(const pq_schema *s, pq_buf *out)
{
    const pq_node *root = &s->nodes[0];
    int rc = pq_buf_append(out, "message ", 8);
    rc = rc ? rc : pq_buf_append(out, root->name, strlen(root->name));
    rc = rc ? rc : pq_buf_append(out, " {\n", 3);
    for (size_t i = 0; rc == 0 && i < root->n_children; i++)
        rc = print_node(s, root->children[i], 1, out);
    return rc ? rc : pq_buf_append(out, "}\n", 2);
}
