/* derive.c - per-file schemas for automatic Variant shredding: a copy of
 * the loaded schema with the shred trees one file decided (daemon/
 * autoshred.c, schema/variant/vauto.c), laid out anew, keeping the encryption keys.
 *
 * Thread: the pipeline thread that opens the file. */
#include "colspec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Key ids as base has them: by leaf path, or for a leaf base does not
 * have (inside a newly shredded column) the column's `value` leaf's. */
static void derive_keys(const sc_schema *base, sc_schema *s)
{
    for (size_t i = 0; i < s->n_leaves; i++) {
        sc_leaf *l = &s->leaves[i];
        const sc_type *ct = l->column->type;
        const char *want = l->path;
        char vpath[512];
        bool found = false;
        for (size_t k = 0; k < base->n_leaves && !found; k++) {
            if (strcmp(base->leaves[k].path, want) == 0) {
                l->opts.key_id = base->leaves[k].opts.key_id;
                found = true;
            }
        }
        if (found || ct->kind != SC_VARIANT)
            continue;
        snprintf(vpath, sizeof vpath, "%s.value", l->column->name);
        for (size_t k = 0; k < base->n_leaves; k++)
            if (strcmp(base->leaves[k].path, vpath) == 0)
                l->opts.key_id = base->leaves[k].opts.key_id;
    }
}

int sc_schema_derive(const sc_schema *base, sc_shred **roots, sc_schema **out, pq_err *err)
{
    *out = NULL;
    sc_schema *s = calloc(1, sizeof *s);
    bool ok = s != NULL && (s->file = strdup(base->file ? base->file : "")) != NULL &&
              (s->columns = calloc(base->n_columns, sizeof *s->columns)) != NULL;
    if (s != NULL)
        s->rest = base->rest;
    for (size_t i = 0; ok && i < base->n_columns; i++) {
        s->n_columns = i + 1;
        ok = sc_column_clone(&s->columns[i], &base->columns[i]);
        sc_type *t = s->columns[i].type;
        if (ok && roots[i] != NULL && t->kind == SC_VARIANT) {
            sc_shred_free(t->shred);
            t->shred = roots[i];
            roots[i] = NULL;
            t->autoshred.on = false;
        }
    }
    for (size_t i = 0; i < base->n_columns; i++) {
        sc_shred_free(roots[i]);
        roots[i] = NULL;
    }
    int rc = ok ? sc_layout(s, err) : sc_nomem(err);
    if (rc != 0) {
        sc_schema_free(s);
        return rc;
    }
    derive_keys(base, s);
    *out = s;
    return PQ_OK;
}
