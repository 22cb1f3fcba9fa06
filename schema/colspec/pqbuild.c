/* pqbuild.c - building the writer's pq_schema from a column-spec tree
 * (colspec.h "Parquet shapes"; LogicalTypes.md, VariantShredding.md), and
 * checking that it agrees leaf by leaf with the layout made at load.
 *
 * Thread: whichever opens an output file (pipeline writer, convert). */
#include "colspec_int.h"

#include <string.h>

typedef struct bld {
    const sc_schema *spec;
    pq_schema *ps;
    pq_err *err;
} bld;

static int b_leaf(bld *b, int parent, const char *name, pq_repetition r, const sc_type *t,
                  int leaf, int32_t field_id)
{
    pq_node_spec ns = {.name = name, .repetition = r, .field_id = field_id,
                       .opts = &b->spec->leaves[leaf].opts};
    if (t != NULL) {
        ns.type = t->physical;
        ns.type_length = t->type_length;
        ns.logical = sc_type_logical(t);
    } else {
        ns.type = PQ_BYTE_ARRAY;
    }
    int id = pq_schema_add_leaf(b->ps, parent, &ns, b->err);
    return id < 0 ? id : PQ_OK;
}

static int b_group(bld *b, int parent, const char *name, pq_repetition r, pq_logical_kind k,
                   int32_t field_id)
{
    pq_node_spec ns = {.name = name, .repetition = r, .field_id = field_id,
                       .logical = {.kind = k, .variant_version = k == PQ_LT_VARIANT ? 1 : 0}};
    return pq_schema_add_group(b->ps, parent, &ns, b->err);
}

static int b_type(bld *b, int parent, const char *name, pq_repetition r, const sc_type *t,
                  int32_t field_id);

static int b_shred(bld *b, int g, const sc_shred *sh, bool top)
{
    pq_repetition vr = top && sh->kind == SC_SHRED_NONE ? PQ_REQUIRED : PQ_OPTIONAL;
    int rc = b_leaf(b, g, "value", vr, NULL, sh->value_leaf, -1);
    if (rc != 0 || sh->kind == SC_SHRED_NONE)
        return rc;
    if (sh->kind == SC_SHRED_PRIMITIVE)
        return b_leaf(b, g, "typed_value", PQ_OPTIONAL, sh->type, sh->type->leaf, -1);
    if (sh->kind == SC_SHRED_ARRAY) {
        int l = pq_schema_add_list(b->ps, g, "typed_value", PQ_OPTIONAL, -1, b->err);
        int e = l < 0 ? l : b_group(b, l, "element", PQ_REQUIRED, PQ_LT_NONE, -1);
        return e < 0 ? e : b_shred(b, e, sh->elem, false);
    }
    int tv = b_group(b, g, "typed_value", PQ_OPTIONAL, PQ_LT_NONE, -1);
    for (size_t i = 0; tv >= 0 && rc == 0 && i < sh->n_fields; i++) {
        int fg = b_group(b, tv, sh->fields[i].name, PQ_REQUIRED, PQ_LT_NONE, -1);
        rc = fg < 0 ? fg : b_shred(b, fg, sh->fields[i].shred, false);
    }
    return tv < 0 ? tv : rc;
}

static int b_type(bld *b, int parent, const char *name, pq_repetition r, const sc_type *t,
                  int32_t field_id)
{
    int g, rc = PQ_OK;
    switch (t->kind) {
    case SC_LIST:
        g = pq_schema_add_list(b->ps, parent, name, r, field_id, b->err);
        return g < 0 ? g : b_type(b, g, "element", PQ_OPTIONAL, t->elem, -1);
    case SC_MAP: {
        g = pq_schema_add_map(b->ps, parent, name, r, field_id, b->err);
        sc_type key = {.kind = SC_STRING, .physical = PQ_BYTE_ARRAY};
        rc = g < 0 ? g : b_leaf(b, g, "key", PQ_REQUIRED, &key, t->leaf, -1);
        return rc ? rc : b_type(b, g, "value", PQ_OPTIONAL, t->elem, -1);
    }
    case SC_STRUCT:
        g = b_group(b, parent, name, r, PQ_LT_NONE, field_id);
        for (size_t i = 0; g >= 0 && rc == 0 && i < t->n_fields; i++) {
            const sc_column *f = &t->fields[i];
            rc = b_type(b, g, f->name, f->required ? PQ_REQUIRED : PQ_OPTIONAL, f->type,
                        f->field_id);
        }
        return g < 0 ? g : rc;
    case SC_VARIANT:
        g = b_group(b, parent, name, r, PQ_LT_VARIANT, field_id);
        rc = g < 0 ? g : b_leaf(b, g, "metadata", PQ_REQUIRED, NULL, t->metadata_leaf, -1);
        return rc ? rc : b_shred(b, g, t->shred, true);
    default:
        return b_leaf(b, parent, name, r, t, t->leaf, field_id);
    }
}

/* The layout computed at load time is what shredders use; a mismatch with
 * the writer's own numbering would put values in the wrong columns. */
static int check_layout(const sc_schema *spec, const pq_schema *ps, pq_err *err)
{
    if (pq_schema_num_leaves(ps) != spec->n_leaves)
        return pq_err_set(err, PQ_ESTATE, "schema: internal: %zu leaves built, %zu laid out",
                          pq_schema_num_leaves(ps), spec->n_leaves);
    for (size_t i = 0; i < spec->n_leaves; i++) {
        const sc_leaf *l = &spec->leaves[i];
        if (pq_schema_max_def(ps, i) != l->max_def || pq_schema_max_rep(ps, i) != l->max_rep ||
            strcmp(pq_schema_leaf_path(ps, i), l->path) != 0)
            return pq_err_set(err, PQ_ESTATE, "schema: internal: leaf %zu '%s' laid out as '%s' "
                              "(def %u/%u, rep %u/%u)", i, pq_schema_leaf_path(ps, i), l->path,
                              pq_schema_max_def(ps, i), l->max_def, pq_schema_max_rep(ps, i),
                              l->max_rep);
    }
    return PQ_OK;
}

int sc_build_parquet_schema(const sc_schema *spec, pq_schema **out, pq_err *err)
{
    *out = NULL;
    bld b = {.spec = spec, .ps = pq_schema_new("schema"), .err = err};
    if (b.ps == NULL)
        return sc_nomem(err);
    int rc = PQ_OK;
    for (size_t i = 0; rc == 0 && i < spec->n_columns; i++) {
        const sc_column *c = &spec->columns[i];
        rc = b_type(&b, 0, c->name, c->required ? PQ_REQUIRED : PQ_OPTIONAL, c->type,
                    c->field_id);
    }
    rc = rc ? rc : pq_schema_finish(b.ps, err);
    rc = rc ? rc : check_layout(spec, b.ps, err);
    if (rc != 0) {
        pq_schema_destroy(b.ps);
        return rc;
    }
    *out = b.ps;
    return PQ_OK;
}
