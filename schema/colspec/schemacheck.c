/* schemacheck.c - checks that span a whole schema rather than one column:
 * at most one rest column (`from: "*"`), and field_ids unique across every
 * column and struct field.
 *
 * Thread: whichever loads a schema. */
#include "colspec_int.h"

#include <stdlib.h>

typedef struct idref {
    int32_t id;
    const sc_column *c;
} idref;

static void collect_ids(const sc_column *cols, size_t n, idref *ids, size_t *k);

static void collect_type_ids(const sc_type *t, idref *ids, size_t *k)
{
    for (; t != NULL; t = t->elem)
        if (t->kind == SC_STRUCT)
            collect_ids(t->fields, t->n_fields, ids, k);
}

static void collect_ids(const sc_column *cols, size_t n, idref *ids, size_t *k)
{
    for (size_t i = 0; i < n; i++) {
        if (cols[i].field_id >= 0 && ids != NULL)
            ids[*k] = (idref){cols[i].field_id, &cols[i]};
        if (cols[i].field_id >= 0)
            (*k)++;
        collect_type_ids(cols[i].type, ids, k);
    }
}

static int cmp_ids(const void *a, const void *b)
{
    const idref *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->c->pos.line != y->c->pos.line ? (x->c->pos.line < y->c->pos.line ? -1 : 1)
                                            : (x->c->pos.col < y->c->pos.col ? -1 : 1);
}

int sc_check_field_ids(sc_schema *s, pq_err *err)
{
    size_t k = 0;
    collect_ids(s->columns, s->n_columns, NULL, &k);
    if (k < 2)
        return PQ_OK;
    idref *ids = malloc(k * sizeof *ids);
    if (ids == NULL)
        return sc_nomem(err);
    size_t k2 = 0;
    collect_ids(s->columns, s->n_columns, ids, &k2);
    qsort(ids, k, sizeof *ids, cmp_ids);
    int rc = PQ_OK;
    for (size_t i = 1; rc == 0 && i < k; i++)
        if (ids[i].id == ids[i - 1].id)
            rc = pq_err_set(err, PQ_EINVAL, "%s:%u:%u: column '%s': field_id %d is already used "
                            "by column '%s'", ids[i].c->pos.file, ids[i].c->pos.line,
                            ids[i].c->pos.col, ids[i].c->name, (int)ids[i].id, ids[i - 1].c->name);
    free(ids);
    return rc;
}

int sc_check_rest(sc_schema *s, pq_err *err)
{
    s->rest = -1;
    for (size_t i = 0; i < s->n_columns; i++) {
        const sc_column *c = &s->columns[i];
        if (c->source != SC_SRC_REST)
            continue;
        if (s->rest >= 0)
            return pq_err_set(err, PQ_EINVAL, "%s:%u:%u: column '%s': a second rest column "
                              "(from: \"*\"); '%s' already takes every other field",
                              c->pos.file, c->pos.line, c->pos.col, c->name,
                              s->columns[s->rest].name);
        s->rest = (int)i;
    }
    return PQ_OK;
}
