/* columns.c - one column of the schema language and lists of them
 * (DESIGN.md "Schema (YAML)"): name, type with its parameters, struct
 * fields (columns again, hence the recursion through sc_parse_columns),
 * where the value comes from (`from:` as a dotted path or JSON Pointer,
 * `"*"`, `ingest_time`), required, default and options.
 *
 * Thread: whichever loads a schema. */
#include "colspec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_MAX_NAME 255

static const char *const column_keys[] = {
    "name", "type", "from", "required", "default", "encoding", "compression",
    "compression_level", "dictionary", "bloom", "statistics", "key", "field_id", "unit", "utc",
    "crs", "algorithm", "fields", "shred", "ingest_time", NULL};

static int check_name(sc_loader *L, yaml_node_t *n, const char *what, const char *name)
{
    if (strlen(name) > SC_MAX_NAME)
        return yp_err(L->d, n, L->err, "%s: name longer than %d bytes", what, SC_MAX_NAME);
    for (const char *p = name; *p; p++) {
        if (*p == '.')
            return yp_err(L->d, n, L->err, "%s: a column name may not contain '.' (it separates "
                          "Parquet path parts); use from: to read dotted keys", what);
        if ((unsigned char)*p < 0x20 || *p == 0x7F)
            return yp_err(L->d, n, L->err, "%s: control character in the column name", what);
    }
    return PQ_OK;
}

/* RFC 6901: "/a~1b/m~0n" -> ["a/b", "m~n"]. */
static int split_pointer(sc_loader *L, yaml_node_t *n, const char *what, const char *s,
                         sc_column *c)
{
    size_t parts = 0;
    for (const char *p = s; *p; p++)
        parts += *p == '/';
    c->path = calloc(parts, sizeof *c->path);
    if (c->path == NULL)
        return sc_nomem(L->err);
    for (const char *p = s + 1;; p++) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p), o = 0;
        char *seg = malloc(len + 1);
        if (seg == NULL)
            return sc_nomem(L->err);
        c->path[c->path_len++] = seg;
        for (size_t i = 0; i < len; i++) {
            if (p[i] != '~') {
                seg[o++] = p[i];
                continue;
            }
            if (i + 1 >= len || (p[i + 1] != '0' && p[i + 1] != '1'))
                return yp_err_at(L->d, n, (size_t)(p + i - s), L->err, "%s: from: '~' must be "
                                 "followed by 0 or 1 in a JSON Pointer (~0 is '~', ~1 is '/')",
                                 what);
            seg[o++] = p[++i] == '0' ? '~' : '/';
        }
        seg[o] = '\0';
        if (end == NULL)
            return PQ_OK;
        p = end;
    }
}

static int split_dotted(sc_loader *L, yaml_node_t *n, const char *what, const char *s, sc_column *c)
{
    size_t parts = 1;
    for (const char *p = s; *p; p++)
        parts += *p == '.';
    c->path = calloc(parts, sizeof *c->path);
    if (c->path == NULL)
        return sc_nomem(L->err);
    for (const char *p = s;;) {
        const char *end = strchr(p, '.');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            return yp_err_at(L->d, n, (size_t)(p - s), L->err, "%s: from: empty key in dotted "
                             "path '%.60s' (for keys containing dots use a JSON Pointer like "
                             "/id.orig_h)", what, s);
        if ((c->path[c->path_len] = strndup(p, len)) == NULL)
            return sc_nomem(L->err);
        c->path_len++;
        if (end == NULL)
            return PQ_OK;
        p = end + 1;
    }
}

static int parse_source(sc_loader *L, yaml_node_t *m, const char *what, bool top, sc_column *c)
{
    char kw[160];
    yaml_node_t *f = yp_get(L->d, m, "from"), *it = yp_get(L->d, m, "ingest_time");
    bool ingest = false;
    int rc = PQ_OK;
    if (it != NULL && (rc = yp_bool(L->d, it, sc_keypath(kw, sizeof kw, what, "ingest_time"),
                                    &ingest, L->err)) != 0)
        return rc;
    if (ingest) {
        c->source = SC_SRC_INGEST_TIME;
        if (f != NULL)
            return yp_err(L->d, f, L->err, "%s: from: conflicts with ingest_time: true", what);
        if (c->type->kind != SC_TIMESTAMP)
            return yp_err(L->d, it, L->err, "%s: ingest_time needs type timestamp", what);
        return PQ_OK;
    }
    const char *s = c->name;
    if (f != NULL &&
        (rc = yp_str(L->d, f, sc_keypath(kw, sizeof kw, what, "from"), &s, L->err)) != 0)
        return rc;
    if (f != NULL && (c->from = strdup(s)) == NULL)
        return sc_nomem(L->err);
    yaml_node_t *at = f ? f : m;
    if (f != NULL && strcmp(s, "_index") == 0) {
        c->source = SC_SRC_INDEX;
        if (!top || c->type->kind != SC_STRING)
            return yp_err(L->d, at, L->err, "%s: from: _index (the bulk action's index) is "
                          "for top-level string columns", what);
        return PQ_OK;
    }
    if (strcmp(s, "*") == 0) {
        c->source = SC_SRC_REST;
        if (!top)
            return yp_err(L->d, at, L->err, "%s: from: \"*\" is only for top-level columns", what);
        if (c->type->kind != SC_VARIANT)
            return yp_err(L->d, at, L->err, "%s: the rest column (from: \"*\") must have type "
                          "variant", what);
        return PQ_OK;
    }
    return s[0] == '/' ? split_pointer(L, at, what, s, c) : split_dotted(L, at, what, s, c);
}

/* `fields:` of a struct (anywhere in the type): columns again, named
 * below path. */
static int param_fields(sc_loader *L, yaml_node_t *m, const char *what, const char *path,
                        sc_column *c)
{
    yaml_node_t *f = yp_get(L->d, m, "fields");
    sc_type *t;
    int rc = PQ_OK;
    if (f != NULL && (rc = sc_target_of(L, yp_key_of(L->d, m, f), what, "fields", c->type,
                                        SC_KIND_BIT(SC_STRUCT), "struct", &t)) == 0)
        rc = sc_parse_columns(L, f, path, &t->fields, &t->n_fields);
    return rc;
}

static int parse_type_and_params(sc_loader *L, yaml_node_t *m, const char *what,
                                 const char *parent, const char *path, sc_column *c)
{
    yaml_node_t *tn = yp_get(L->d, m, "type");
    if (tn == NULL)
        return yp_err(L->d, m, L->err, "%s: missing key 'type' (expected %s)", what, SC_TYPES);
    int rc = sc_parse_type_string(L, tn, what, &c->type);
    rc = rc ? rc : sc_param_time(L, m, what, c);
    rc = rc ? rc : sc_param_geo(L, m, what, c);
    rc = rc ? rc : param_fields(L, m, what, path, c);
    rc = rc ? rc : sc_param_shred(L, m, what, parent, c);
    return rc ? rc : sc_finish_type(L, tn, what, c->type);
}

static int parse_column(sc_loader *L, yaml_node_t *m, const char *parent, size_t index,
                        sc_column *c)
{
    char what[160], path[200], kw[160];
    c->field_id = -1;
    pq_column_opts_default(&c->opts);
    if (parent)
        snprintf(what, sizeof what, "column '%.60s' field #%zu", parent, index + 1);
    else
        snprintf(what, sizeof what, "column #%zu", index + 1);
    int rc = yp_want_map(L->d, m, what, L->err);
    yaml_node_t *nn = rc ? NULL : yp_get(L->d, m, "name");
    if (rc == 0 && nn == NULL)
        return yp_err(L->d, m, L->err, "%s: missing key 'name'", what);
    rc = rc ? rc : yp_strdup(L->d, nn, sc_keypath(kw, sizeof kw, what, "name"), &c->name, L->err);
    if (rc != 0)
        return rc;
    c->pos = (sc_pos){L->s->file, (uint32_t)yp_line(m), (uint32_t)yp_col(m)};
    snprintf(path, sizeof path, "%s%s%.80s", parent ? parent : "", parent ? "." : "", c->name);
    snprintf(what, sizeof what, "column '%.100s'", path);
    rc = check_name(L, nn, what, c->name);
    rc = rc ? rc : yp_check_keys(L->d, m, what, column_keys, L->err);
    rc = rc ? rc : parse_type_and_params(L, m, what, parent, path, c);
    /* A top-level Variant column without `shred:` shreds automatically. */
    if (rc == 0 && parent == NULL && c->type->kind == SC_VARIANT && yp_get(L->d, m, "shred") == NULL)
        c->type->autoshred = sc_auto_defaults();
    rc = rc ? rc : parse_source(L, m, what, parent == NULL, c);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(L->d, m, "required")) != NULL)
        rc = yp_bool(L->d, v, sc_keypath(kw, sizeof kw, what, "required"), &c->required, L->err);
    if (rc == 0 && (v = yp_get(L->d, m, "default")) != NULL)
        rc = sc_parse_default(L, v, what, c);
    if (rc == 0 && c->def.set && c->source == SC_SRC_INGEST_TIME)
        rc = yp_err(L->d, v, L->err, "%s: default: an ingest_time column is never missing", what);
    return rc ? rc : sc_parse_options(L, m, what, c);
}

int sc_parse_columns(sc_loader *L, yaml_node_t *seq, const char *parent, sc_column **out,
                     size_t *n_out)
{
    char what[160];
    snprintf(what, sizeof what, parent ? "column '%.100s': fields" : "columns",
             parent ? parent : "");
    int rc = yp_want_seq(L->d, seq, what, L->err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return yp_err(L->d, seq, L->err, "%s: needs at least one column", what);
    *out = calloc(n, sizeof **out);
    const char **names = calloc(n, sizeof *names);
    if (*out == NULL || names == NULL) {
        free(names);
        return sc_nomem(L->err);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        *n_out = i + 1;
        rc = parse_column(L, yp_node(L->d, seq->data.sequence.items.start[i]), parent, i,
                          &(*out)[i]);
        names[i] = (*out)[i].name;
    }
    long dup = rc == 0 ? sc_find_duplicate(names, n) : -1;
    if (dup >= 0) {
        const sc_column *c = &(*out)[dup];
        rc = pq_err_set(L->err, PQ_EINVAL, "%s:%u:%u: column '%s': duplicate name", c->pos.file,
                        c->pos.line, c->pos.col, c->name);
    }
    free(names);
    return rc;
}
