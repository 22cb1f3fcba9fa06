/* specload.c - loading a schema (colspec.h): from a file, a buffer or a
 * node of the configuration, and the built-in default schema. A document
 * goes through the columns (columns.c), the whole-schema checks
 * (schemacheck.c) and the leaf layout (leaflayout.c).
 *
 * Thread: whichever loads a schema (config load, `parqd check`). */
#include "colspec_int.h"

#include <stdlib.h>
#include <string.h>

static int load_root(sc_loader *L, yaml_node_t *root)
{
    static const char *const keys[] = {"columns", NULL};
    if (root == NULL)
        return pq_err_set(L->err, PQ_EINVAL, "%s:1:1: schema: empty document (expected "
                          "columns: [...])", L->d->file);
    int rc = yp_check_keys(L->d, root, "schema", keys, L->err);
    yaml_node_t *cols = rc ? NULL : yp_get(L->d, root, "columns");
    if (rc == 0 && cols == NULL)
        return yp_err(L->d, root, L->err, "schema: missing key 'columns'");
    rc = rc ? rc : sc_parse_columns(L, cols, NULL, &L->s->columns, &L->s->n_columns);
    rc = rc ? rc : sc_check_rest(L->s, L->err);
    rc = rc ? rc : sc_check_field_ids(L->s, L->err);
    return rc ? rc : sc_layout(L->s, L->err);
}

int sc_schema_load_node(yp_doc *doc, yaml_node_t *node, sc_schema **out, pq_err *err)
{
    *out = NULL;
    sc_schema *s = calloc(1, sizeof *s);
    if (s == NULL || (s->file = strdup(doc->file)) == NULL) {
        free(s);
        return sc_nomem(err);
    }
    s->rest = -1;
    sc_loader L = {.d = doc, .s = s, .err = err};
    int rc = load_root(&L, node);
    if (rc != 0) {
        sc_schema_free(s);
        return rc;
    }
    *out = s;
    return PQ_OK;
}

int sc_schema_load_buffer(const char *name, const void *buf, size_t len, sc_schema **out,
                          pq_err *err)
{
    yp_doc d;
    *out = NULL;
    int rc = yp_load_buffer(&d, name, buf, len, err);
    rc = rc ? rc : sc_schema_load_node(&d, yp_root(&d), out, err);
    yp_free(&d);
    return rc;
}

int sc_schema_load_file(const char *path, sc_schema **out, pq_err *err)
{
    yp_doc d;
    *out = NULL;
    int rc = yp_load_file(&d, path, err);
    rc = rc ? rc : sc_schema_load_node(&d, yp_root(&d), out, err);
    yp_free(&d);
    return rc;
}

static const char default_schema[] =
    "columns:\n"
    "  - {name: event, type: variant, from: \"*\"}\n"
    "  - {name: _ingest_ts, type: timestamp, unit: us, utc: true, required: true,\n"
    "     ingest_time: true}\n";

int sc_schema_default(sc_schema **out, pq_err *err)
{
    return sc_schema_load_buffer("<built-in default schema>", default_schema,
                                 sizeof default_schema - 1, out, err);
}

static const char default_schema_index[] =
    "columns:\n"
    "  - {name: event, type: variant, from: \"*\"}\n"
    "  - {name: _ingest_ts, type: timestamp, unit: us, utc: true, required: true,\n"
    "     ingest_time: true}\n"
    "  - {name: _index, type: string, from: _index}\n";

int sc_schema_default_index(sc_schema **out, pq_err *err)
{
    return sc_schema_load_buffer("<built-in default schema>", default_schema_index,
                                 sizeof default_schema_index - 1, out, err);
}
