/* gen_schema.c - the column model built into a pq_schema, our own max
 * levels checked against pq_schema_max_def/rep, and each leaf's column
 * attached to the writer. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

int build(pq_schema *s, int parent, gtype *t, uint16_t def, uint16_t rep, pq_err *err)
{
    uint16_t d = (uint16_t)(def + (t->rep == PQ_OPTIONAL));
    int id;
    if (t->kind == K_LEAF) {
        pq_node_spec spec;
        memset(&spec, 0, sizeof spec);
        spec.name = t->name;
        spec.repetition = t->rep;
        spec.type = t->phys;
        spec.type_length = t->tlen;
        spec.logical = t->lt;
        spec.field_id = -1;
        spec.opts = t->has_opts ? &t->opts : NULL;
        id = pq_schema_add_leaf(s, parent, &spec, err);
        if (id < 0)
            return id;
        t->leaf = id; /* node id for now; the leaf ordinal after finish */
        t->def_max = d;
        t->rep_max = rep;
        return 0;
    }
    if (t->kind == K_STRUCT) {
        pq_node_spec spec;
        memset(&spec, 0, sizeof spec);
        spec.name = t->name;
        spec.repetition = t->rep;
        spec.logical = lt_none();
        spec.field_id = -1;
        id = pq_schema_add_group(s, parent, &spec, err);
        if (id < 0)
            return id;
        for (size_t i = 0; i < t->nchild; i++) {
            int rc = build(s, id, t->child[i], d, rep, err);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    id = t->kind == K_LIST ? pq_schema_add_list(s, parent, t->name, t->rep, -1, err)
                           : pq_schema_add_map(s, parent, t->name, t->rep, -1, err);
    if (id < 0)
        return id;
    t->entry_rep = (uint16_t)(rep + 1);
    for (size_t i = 0; i < t->nchild; i++) {
        int rc = build(s, id, t->child[i], (uint16_t)(d + 1), (uint16_t)(rep + 1), err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* After pq_schema_finish: node ids -> leaf ordinals, and our levels must
 * match the writer's. */
int resolve(const pq_schema *s, gtype *t, pq_err *err)
{
    if (t->kind != K_LEAF) {
        for (size_t i = 0; i < t->nchild; i++) {
            int rc = resolve(s, t->child[i], err);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    int leaf_ix = pq_schema_leaf_of_node(s, t->leaf);
    if (leaf_ix < 0)
        return pq_err_set(err, PQ_EINVAL, "no leaf for node %d (%s)", t->leaf, t->name);
    t->leaf = leaf_ix;
    uint16_t d = pq_schema_max_def(s, (size_t)leaf_ix), r = pq_schema_max_rep(s, (size_t)leaf_ix);
    if (d != t->def_max || r != t->rep_max)
        return pq_err_set(err, PQ_EINVAL, "leaf %s: writer says max def/rep %u/%u, generator computed %u/%u",
                          pq_schema_leaf_path(s, (size_t)leaf_ix), d, r, t->def_max, t->rep_max);
    return 0;
}

void attach(pq_writer *w, gtype *t)
{
    if (t->kind == K_LEAF) {
        t->col = pq_writer_column(w, (size_t)t->leaf);
        return;
    }
    for (size_t i = 0; i < t->nchild; i++)
        attach(w, t->child[i]);
}

void reset_counts(gtype *t)
{
    t->nvals = 0;
    for (size_t i = 0; i < t->nchild; i++)
        reset_counts(t->child[i]);
}
