/* config_schema.c - the `schema:` of the configuration (a path relative to
 * the configuration file, or the schema inline) and its binding to the
 * encryption keys of output.encryption and to output.time_from.
 *
 * Thread: whichever loads the configuration. */
#include "config_int.h"
#include "evtime.h"

#include <stdlib.h>
#include <string.h>

/* "dir/of/config.yaml" + "schemas/a.yaml" -> "dir/of/schemas/a.yaml". */
static char *relative_to(const char *config, const char *path)
{
    const char *slash = strrchr(config, '/');
    if (path[0] == '/' || slash == NULL)
        return strdup(path);
    size_t dl = (size_t)(slash - config) + 1, pl = strlen(path);
    char *p = malloc(dl + pl + 1);
    if (p != NULL) {
        memcpy(p, config, dl);
        memcpy(p + dl, path, pl + 1);
    }
    return p;
}

int cf_parse_schema(cf_ctx *x, yaml_node_t *v)
{
    if (v->type == YAML_MAPPING_NODE)
        return sc_schema_load_node(x->d, v, &x->c->schema, x->err);
    const char *s;
    int rc = yp_str(x->d, v, "schema", &s, x->err);
    if (rc != 0)
        return rc;
    if ((x->c->schema_file = relative_to(x->d->file, s)) == NULL)
        return cf_nomem(x->err);
    pq_err e2;
    rc = sc_schema_load_file(x->c->schema_file, &x->c->schema, &e2);
    if (rc == PQ_EIO)
        return yp_err(x->d, v, x->err, "schema: %s", e2.msg);
    if (rc != 0)
        *x->err = e2;
    return rc;
}

static bool key_defined(const cf_encryption *e, const char *id)
{
    if (strcmp(e->footer_key.id, id) == 0)
        return true;
    for (size_t i = 0; i < e->n_columns; i++)
        if (strcmp(e->columns[i].key.id, id) == 0)
            return true;
    return false;
}

/* output.time_from must name a timestamp column of the schema, or a field
 * of the record when a column takes the rest (evtime.h: the pipeline
 * resolves it the same way). */
static int bind_time_from(const cf_config *c, pq_err *err)
{
    const cf_output *o = &c->output;
    et_source src;
    pq_err e2 = {0};
    int rc = et_resolve(c->schema, o->time_from, &src, &e2);
    et_source_free(&src);
    if (rc == PQ_ENOMEM)
        return cf_nomem(err);
    if (rc != 0)
        return pq_err_set(err, rc, "%s:%u:%u: output.time_from: %s", c->file ? c->file
                          : "<config>", o->time_from_pos.line, o->time_from_pos.col, e2.msg);
    return PQ_OK;
}

/* Schema `key:` options must name keys the configuration defines, and
 * output.encryption.columns must name columns the schema has. */
int cf_bind_keys(cf_config *c, pq_err *err)
{
    const cf_encryption *e = &c->output.encryption;
    sc_schema *s = c->schema;
    for (size_t i = 0; i < s->n_leaves; i++) {
        const char *id = s->leaves[i].opts.key_id;
        const sc_column *col = s->leaves[i].column;
        if (id == NULL)
            continue;
        if (!e->enabled)
            return pq_err_set(err, PQ_EINVAL, "%s:%u:%u: column '%s': key '%s' is set but "
                              "output.encryption is not configured", col->pos.file,
                              col->pos.line, col->pos.col, col->name, id);
        if (!key_defined(e, id))
            return pq_err_set(err, PQ_EINVAL, "%s:%u:%u: column '%s': key '%s' is not defined "
                              "in output.encryption (footer_key or columns[].key)",
                              col->pos.file, col->pos.line, col->pos.col, col->name, id);
    }
    for (size_t i = 0; i < e->n_columns; i++) {
        pq_err e2;
        const cf_column_key *ck = &e->columns[i];
        if (sc_schema_set_key(s, ck->column, ck->key.id, &e2) != 0)
            return pq_err_set(err, e2.code, "%s:%u:%u: output.encryption.columns[%zu].column: "
                              "%s", c->file ? c->file : "<config>", ck->pos.line, ck->pos.col, i,
                              e2.msg);
    }
    return bind_time_from(c, err);
}
