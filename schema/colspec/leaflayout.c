/* leaflayout.c - the leaf layout of a loaded schema (see colspec.h,
 * "Layout"): every type and shred node learns its Parquet leaves and
 * levels, and every leaf its path and effective options (column options
 * inherited, struct fields overriding). Also the encryption keys given by
 * path after loading (sc_schema_set_key).
 *
 * Thread: whichever loads a schema or derives a per-file one. */
#include "colspec_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct lay {
    sc_schema *s;
    pq_err *err;
    size_t cap;
} lay;

static char *join_path(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (p == NULL)
        return NULL;
    memcpy(p, a, la);
    p[la] = la ? '.' : '\0';
    memcpy(p + la + (la != 0), b, lb + 1);
    return p;
}

static int add_leaf(lay *y, const sc_column *col, const sc_type *t, pq_physical_type ph,
                    const pq_column_opts *o, const char *path, uint16_t def, uint16_t rep)
{
    sc_schema *s = y->s;
    if (s->n_leaves == y->cap) {
        size_t cap = y->cap ? y->cap * 2 : 16;
        sc_leaf *p = realloc(s->leaves, cap * sizeof *p);
        if (p == NULL)
            return sc_nomem(y->err);
        s->leaves = p;
        y->cap = cap;
    }
    sc_leaf *l = &s->leaves[s->n_leaves];
    *l = (sc_leaf){.column = col, .type = t, .physical = ph, .opts = *o,
                   .path = strdup(path), .max_def = def, .max_rep = rep};
    if (l->path == NULL)
        return sc_nomem(y->err);
    /* Bloom filters and dictionaries do nothing for booleans. */
    if (ph == PQ_BOOLEAN) {
        l->opts.bloom = l->opts.bloom > 0 ? 0 : l->opts.bloom;
        l->opts.dictionary = -1;
        l->opts.dictionary_max_bytes = 0;
    }
    s->n_leaves++;
    return PQ_OK;
}

/* A struct field's own options win; an explicit non-dictionary encoding
 * also drops an inherited dictionary request it would conflict with. */
static void merge_opts(pq_column_opts *o, const pq_column_opts *c)
{
    if (c->encoding != PQ_ENC_AUTO) {
        o->encoding = c->encoding;
        if (c->encoding != PQ_ENC_RLE_DICTIONARY && c->dictionary < 0) {
            o->dictionary = -1;
            o->dictionary_max_bytes = 0;
        }
    }
    if (c->codec >= 0) {
        o->codec = c->codec;
        o->codec_level = c->codec_level;
    }
    if (c->dictionary >= 0)
        o->dictionary = c->dictionary;
    if (c->dictionary_max_bytes)
        o->dictionary_max_bytes = c->dictionary_max_bytes;
    if (c->statistics >= 0)
        o->statistics = c->statistics;
    if (c->stats_truncate)
        o->stats_truncate = c->stats_truncate;
    if (c->bloom >= 0)
        o->bloom = c->bloom;
    if (c->bloom_fpp > 0)
        o->bloom_fpp = c->bloom_fpp;
    if (c->bloom_ndv)
        o->bloom_ndv = c->bloom_ndv;
    if (c->key_id)
        o->key_id = c->key_id;
}

static int lay_type(lay *y, const sc_column *col, sc_type *t, pq_repetition r, uint16_t pdef,
                    uint16_t prep, const char *path, const pq_column_opts *o);

static int lay_binary(lay *y, const sc_column *col, const pq_column_opts *o, const char *path,
                      const char *name, uint16_t def, uint16_t rep, int *leaf)
{
    pq_column_opts bo = *o;
    bo.bloom = 0; /* Variant bytes are not values anyone looks up */
    char *p = join_path(path, name);
    if (p == NULL)
        return sc_nomem(y->err);
    *leaf = (int)y->s->n_leaves;
    int rc = add_leaf(y, col, NULL, PQ_BYTE_ARRAY, &bo, p, def, rep);
    free(p);
    return rc;
}

/* sh lives in a group present at (gdef, grep); see colspec.h. */
static int lay_shred(lay *y, const sc_column *col, sc_shred *sh, bool top, uint16_t gdef,
                     uint16_t grep, const char *path, const pq_column_opts *o)
{
    bool value_required = top && sh->kind == SC_SHRED_NONE;
    sh->def = gdef;
    sh->rep = grep;
    sh->typed_def = (uint16_t)(gdef + 1);
    int rc = lay_binary(y, col, o, path, "value", (uint16_t)(gdef + !value_required), grep,
                        &sh->value_leaf);
    char *tp = rc ? NULL : join_path(path, "typed_value");
    if (rc == 0 && tp == NULL)
        rc = sc_nomem(y->err);
    sh->typed_leaf = sh->kind == SC_SHRED_NONE ? -1 : (int)y->s->n_leaves;
    if (rc == 0 && sh->kind == SC_SHRED_PRIMITIVE)
        rc = lay_type(y, col, sh->type, PQ_OPTIONAL, gdef, grep, tp, o);
    for (size_t i = 0; rc == 0 && i < sh->n_fields; i++) {
        char *fp = join_path(tp, sh->fields[i].name);
        rc = fp ? lay_shred(y, col, sh->fields[i].shred, false, (uint16_t)(gdef + 1), grep, fp, o)
                : sc_nomem(y->err);
        free(fp);
    }
    if (rc == 0 && sh->kind == SC_SHRED_ARRAY) {
        char *ep = join_path(tp, "list.element");
        rc = ep ? lay_shred(y, col, sh->elem, false, (uint16_t)(gdef + 2), (uint16_t)(grep + 1),
                            ep, o)
                : sc_nomem(y->err);
        free(ep);
    }
    free(tp);
    return rc;
}

static int lay_children(lay *y, const sc_column *col, sc_type *t, const char *path,
                        const pq_column_opts *o)
{
    int rc = PQ_OK;
    char *p = NULL;
    switch (t->kind) {
    case SC_LIST:
        p = join_path(path, "list.element");
        rc = p ? lay_type(y, col, t->elem, PQ_OPTIONAL, (uint16_t)(t->def + 1),
                          (uint16_t)(t->rep + 1), p, o) : sc_nomem(y->err);
        break;
    case SC_MAP:
        p = join_path(path, "key_value.key");
        rc = p ? add_leaf(y, col, NULL, PQ_BYTE_ARRAY, o, p, (uint16_t)(t->def + 1),
                          (uint16_t)(t->rep + 1)) : sc_nomem(y->err);
        free(p);
        p = rc ? NULL : join_path(path, "key_value.value");
        rc = rc ? rc : p ? lay_type(y, col, t->elem, PQ_OPTIONAL, (uint16_t)(t->def + 1),
                                    (uint16_t)(t->rep + 1), p, o) : sc_nomem(y->err);
        break;
    case SC_STRUCT:
        for (size_t i = 0; rc == 0 && i < t->n_fields; i++) {
            sc_column *f = &t->fields[i];
            pq_column_opts fo = *o;
            merge_opts(&fo, &f->opts);
            char *fp = join_path(path, f->name);
            rc = fp ? lay_type(y, col, f->type, f->required ? PQ_REQUIRED : PQ_OPTIONAL, t->def,
                               t->rep, fp, &fo) : sc_nomem(y->err);
            free(fp);
        }
        break;
    case SC_VARIANT:
        rc = lay_binary(y, col, o, path, "metadata", t->def, t->rep, &t->metadata_leaf);
        rc = rc ? rc : lay_shred(y, col, t->shred, true, t->def, t->rep, path, o);
        break;
    default:
        break;
    }
    free(p);
    return rc;
}

static int lay_type(lay *y, const sc_column *col, sc_type *t, pq_repetition r, uint16_t pdef,
                    uint16_t prep, const char *path, const pq_column_opts *o)
{
    t->def = (uint16_t)(pdef + (r != PQ_REQUIRED));
    t->rep = (uint16_t)(prep + (r == PQ_REPEATED));
    t->leaf = (int)y->s->n_leaves;
    int rc = sc_is_primitive(t->kind) ? add_leaf(y, col, t, t->physical, o, path, t->def, t->rep)
                                   : lay_children(y, col, t, path, o);
    t->n_leaves = (int)y->s->n_leaves - t->leaf;
    return rc;
}

int sc_layout(sc_schema *s, pq_err *err)
{
    lay y = {.s = s, .err = err};
    int rc = PQ_OK;
    for (size_t i = 0; rc == 0 && i < s->n_columns; i++) {
        sc_column *c = &s->columns[i];
        pq_column_opts o;
        pq_column_opts_default(&o);
        merge_opts(&o, &c->opts);
        rc = lay_type(&y, c, c->type, c->required ? PQ_REQUIRED : PQ_OPTIONAL, 0, 0, c->name, &o);
    }
    return rc;
}

int sc_schema_set_key(sc_schema *s, const char *path, const char *key_id, pq_err *err)
{
    size_t plen = strlen(path), hits = 0;
    for (size_t i = 0; i < s->n_leaves; i++) {
        const sc_leaf *l = &s->leaves[i];
        bool match = strncmp(l->path, path, plen) == 0 &&
                     (l->path[plen] == '\0' || l->path[plen] == '.');
        if (!match)
            continue;
        if (l->opts.key_id && strcmp(l->opts.key_id, key_id) != 0)
            return pq_err_set(err, PQ_EINVAL, "column '%s' already has key '%s' from the schema",
                              l->path, l->opts.key_id);
        hits++;
    }
    if (hits == 0)
        return pq_err_set(err, PQ_EINVAL, "no column '%s' in the schema", path);
    char **keys = realloc(s->keys, (s->n_keys + 1) * sizeof *keys);
    if (keys == NULL)
        return sc_nomem(err);
    s->keys = keys;
    if ((s->keys[s->n_keys] = strdup(key_id)) == NULL)
        return sc_nomem(err);
    const char *k = s->keys[s->n_keys++];
    for (size_t i = 0; i < s->n_leaves; i++)
        if (strncmp(s->leaves[i].path, path, plen) == 0 &&
            (s->leaves[i].path[plen] == '\0' || s->leaves[i].path[plen] == '.'))
            s->leaves[i].opts.key_id = k;
    return PQ_OK;
}
