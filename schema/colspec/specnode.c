/* specnode.c - the nodes of a column-spec tree (colspec.h): making,
 * freeing and copying types, shred nodes and columns, and freeing a whole
 * sc_schema. Copies serve per-file schemas (derive.c); the shred-node
 * constructors serve trees built in code (schema/variant/vauto.c).
 *
 * Thread: whichever loads a schema or derives a per-file one. */
#include "colspec_int.h"

#include <stdlib.h>
#include <string.h>

static void free_column(sc_column *c);

void sc_shred_free(sc_shred *s)
{
    if (s == NULL)
        return;
    sc_type_free(s->type);
    for (size_t i = 0; i < s->n_fields; i++) {
        free(s->fields[i].name);
        sc_shred_free(s->fields[i].shred);
    }
    free(s->fields);
    sc_shred_free(s->elem);
    free(s);
}

void sc_type_free(sc_type *t)
{
    if (t == NULL)
        return;
    free(t->crs);
    sc_type_free(t->elem);
    for (size_t i = 0; i < t->n_fields; i++)
        free_column(&t->fields[i]);
    free(t->fields);
    sc_shred_free(t->shred);
    free(t);
}

static void free_column(sc_column *c)
{
    free(c->name);
    free(c->from);
    for (size_t i = 0; i < c->path_len; i++)
        free(c->path[i]);
    free(c->path);
    sc_type_free(c->type);
    free(c->def.text);
    free((char *)c->opts.key_id);
}

void sc_schema_free(sc_schema *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_columns; i++)
        free_column(&s->columns[i]);
    free(s->columns);
    for (size_t i = 0; i < s->n_leaves; i++)
        free(s->leaves[i].path);
    free(s->leaves);
    for (size_t i = 0; i < s->n_keys; i++)
        free(s->keys[i]);
    free(s->keys);
    free(s->file);
    free(s);
}

sc_type *sc_type_alloc(sc_kind kind)
{
    sc_type *t = calloc(1, sizeof *t);
    if (t != NULL) {
        t->kind = kind;
        t->leaf = -1;
        t->metadata_leaf = -1;
        t->unit = PQ_UNIT_MICROS;
    }
    return t;
}

sc_shred *sc_shred_new(void)
{
    sc_shred *s = calloc(1, sizeof *s);
    if (s != NULL) {
        s->kind = SC_SHRED_NONE;
        s->value_leaf = s->typed_leaf = -1;
    }
    return s;
}

sc_type *sc_type_new_shred_prim(sc_kind kind, int bit_width, int precision, int scale)
{
    sc_type *t = sc_type_alloc(kind);
    if (t == NULL)
        return NULL;
    t->bit_width = bit_width;
    t->is_signed = true;
    t->precision = precision;
    t->scale = scale;
    t->utc = true;
    sc_set_physical(t);
    return t;
}

static sc_type *clone_type(const sc_type *t);
static sc_shred *clone_shred(const sc_shred *s);

static char *dup_or_null(const char *s, bool *ok)
{
    char *d = s ? strdup(s) : NULL;
    if (s != NULL && d == NULL)
        *ok = false;
    return d;
}

bool sc_column_clone(sc_column *d, const sc_column *c)
{
    bool ok = true;
    *d = *c;
    d->name = dup_or_null(c->name, &ok);
    d->from = dup_or_null(c->from, &ok);
    d->def.text = dup_or_null(c->def.text, &ok);
    d->opts.key_id = dup_or_null(c->opts.key_id, &ok);
    d->path = c->path_len ? calloc(c->path_len, sizeof *d->path) : NULL;
    d->path_len = d->path ? c->path_len : 0;
    ok = ok && (c->path_len == 0 || d->path != NULL);
    for (size_t i = 0; i < d->path_len; i++)
        d->path[i] = dup_or_null(c->path[i], &ok);
    d->type = c->type ? clone_type(c->type) : NULL;
    return ok && (c->type == NULL || d->type != NULL);
}

static sc_type *clone_type(const sc_type *t)
{
    sc_type *d = malloc(sizeof *d);
    if (d == NULL)
        return NULL;
    bool ok = true;
    *d = *t;
    d->crs = dup_or_null(t->crs, &ok);
    d->elem = NULL;
    d->shred = NULL;
    d->fields = t->n_fields ? calloc(t->n_fields, sizeof *d->fields) : NULL;
    d->n_fields = d->fields ? t->n_fields : 0;
    ok = ok && (t->n_fields == 0 || d->fields != NULL);
    for (size_t i = 0; ok && i < d->n_fields; i++)
        ok = sc_column_clone(&d->fields[i], &t->fields[i]);
    if (ok && t->elem != NULL)
        ok = (d->elem = clone_type(t->elem)) != NULL;
    if (ok && t->shred != NULL)
        ok = (d->shred = clone_shred(t->shred)) != NULL;
    if (!ok) {
        sc_type_free(d);
        return NULL;
    }
    return d;
}

static sc_shred *clone_shred(const sc_shred *s)
{
    sc_shred *d = malloc(sizeof *d);
    if (d == NULL)
        return NULL;
    bool ok = true;
    *d = *s;
    d->type = NULL;
    d->elem = NULL;
    d->fields = s->n_fields ? calloc(s->n_fields, sizeof *d->fields) : NULL;
    d->n_fields = d->fields ? s->n_fields : 0;
    ok = s->n_fields == 0 || d->fields != NULL;
    for (size_t i = 0; ok && i < d->n_fields; i++) {
        d->fields[i].name = dup_or_null(s->fields[i].name, &ok);
        ok = ok && (d->fields[i].shred = clone_shred(s->fields[i].shred)) != NULL;
    }
    if (ok && s->type != NULL)
        ok = (d->type = clone_type(s->type)) != NULL;
    if (ok && s->elem != NULL)
        ok = (d->elem = clone_shred(s->elem)) != NULL;
    if (!ok) {
        sc_shred_free(d);
        return NULL;
    }
    return d;
}
