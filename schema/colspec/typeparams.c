/* typeparams.c - type parameters given as keys beside `type` (DESIGN.md
 * "Schema (YAML)"): unit, utc, crs, algorithm and shred (fields: is in
 * columns.c, as struct fields are columns). Each key applies to the one
 * node of the matching kind anywhere in the type, so `type: "list<struct>"`
 * with `fields:` and `type: "list<timestamp>"` with `unit: ms` both work;
 * a key that matches no node, or more than one, is an error rather than a
 * guess. Also the finishing of a parsed type (physical types, empty
 * shred roots).
 *
 * Thread: whichever loads a schema. */
#include "colspec_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const algo_names[] = {"spherical", "vincenty", "thomas", "andoyer", "karney",
                                         NULL};

static void find_kinds(sc_type *t, unsigned kinds, sc_type **found, int *count)
{
    if (kinds & (1u << t->kind)) {
        *found = t;
        (*count)++;
    }
    if (t->elem)
        find_kinds(t->elem, kinds, found, count);
}

/* The one node of `kinds` in the column's type, or an error naming why the
 * key cannot apply. */
int sc_target_of(sc_loader *L, yaml_node_t *kn, const char *what, const char *key, sc_type *t,
                 unsigned kinds, const char *kinds_text, sc_type **out)
{
    int count = 0;
    char tn[64];
    *out = NULL;
    find_kinds(t, kinds, out, &count);
    sc_type_format(t, tn, sizeof tn);
    if (count == 0)
        return yp_err(L->d, kn, L->err, "%s: key '%s' does not apply to type '%s' (only to %s)",
                      what, key, tn, kinds_text);
    if (count > 1)
        return yp_err(L->d, kn, L->err, "%s: key '%s' is ambiguous: type '%s' has %d %s types",
                      what, key, tn, count, kinds_text);
    return PQ_OK;
}

#define TEMPORAL (SC_KIND_BIT(SC_TIME) | SC_KIND_BIT(SC_TIMESTAMP))
#define GEO (SC_KIND_BIT(SC_GEOMETRY) | SC_KIND_BIT(SC_GEOGRAPHY))

int sc_param_time(sc_loader *L, yaml_node_t *m, const char *what, sc_column *c)
{
    char kw[160];
    yaml_node_t *u = yp_get(L->d, m, "unit"), *z = yp_get(L->d, m, "utc");
    sc_type *t;
    int rc = PQ_OK, idx;
    if (u != NULL && (rc = sc_target_of(L, yp_key_of(L->d, m, u), what, "unit", c->type,
                                        TEMPORAL, "time/timestamp", &t)) == 0) {
        if (t->has_args)
            return yp_err(L->d, u, L->err, "%s: unit is already given in the type string", what);
        rc = yp_enum(L->d, u, sc_keypath(kw, sizeof kw, what, "unit"), sc_unit_names, &idx,
                     L->err);
        t->unit = (pq_time_unit)(idx + 1);
    }
    if (rc == 0 && z != NULL && (rc = sc_target_of(L, yp_key_of(L->d, m, z), what, "utc", c->type,
                                                   TEMPORAL, "time/timestamp", &t)) == 0) {
        if (t->has_args)
            return yp_err(L->d, z, L->err, "%s: utc is already given in the type string", what);
        rc = yp_bool(L->d, z, sc_keypath(kw, sizeof kw, what, "utc"), &t->utc, L->err);
    }
    return rc;
}

int sc_param_geo(sc_loader *L, yaml_node_t *m, const char *what, sc_column *c)
{
    char kw[160];
    yaml_node_t *crs = yp_get(L->d, m, "crs"), *al = yp_get(L->d, m, "algorithm");
    sc_type *t;
    int rc = PQ_OK;
    if (crs != NULL && (rc = sc_target_of(L, yp_key_of(L->d, m, crs), what, "crs", c->type,
                                          GEO, "geometry/geography", &t)) == 0)
        rc = yp_strdup(L->d, crs, sc_keypath(kw, sizeof kw, what, "crs"), &t->crs, L->err);
    if (rc == 0 && al != NULL && (rc = sc_target_of(L, yp_key_of(L->d, m, al), what, "algorithm",
                                                    c->type, SC_KIND_BIT(SC_GEOGRAPHY),
                                                    "geography", &t)) == 0) {
        const char *s;
        rc = yp_str(L->d, al, sc_keypath(kw, sizeof kw, what, "algorithm"), &s, L->err);
        int i = 0;
        while (rc == 0 && algo_names[i] && strcasecmp(algo_names[i], s) != 0)
            i++;
        if (rc == 0 && algo_names[i] == NULL)
            rc = yp_err(L->d, al, L->err, "%s: unknown algorithm '%.40s' (expected spherical, "
                        "vincenty, thomas, andoyer or karney)", what, s);
        t->algorithm = (pq_edge_algorithm)i;
    }
    return rc;
}

sc_auto sc_auto_defaults(void)
{
    return (sc_auto){.on = true, .max_columns = SC_AUTO_MAX_COLUMNS,
                     .max_depth = SC_AUTO_MAX_DEPTH, .min_presence = SC_AUTO_MIN_PRESENCE};
}

/* `{auto: {max_columns: N, max_depth: N, min_presence: X}}`: a mapping
 * whose one key is `auto` with a mapping (or nothing) as its value. An
 * object shred of one field named `auto` has a type there instead. */
static bool is_auto_map(sc_loader *L, yaml_node_t *n, yaml_node_t **limits)
{
    if (n->type != YAML_MAPPING_NODE ||
        n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1)
        return false;
    yaml_node_t *k = yp_node(L->d, n->data.mapping.pairs.start->key);
    yaml_node_t *v = yp_node(L->d, n->data.mapping.pairs.start->value);
    const char *ks = yp_scalar(k);
    if (ks == NULL || strcmp(ks, "auto") != 0 ||
        !(v->type == YAML_MAPPING_NODE || yp_is_null(v)))
        return false;
    *limits = v->type == YAML_MAPPING_NODE ? v : NULL;
    return true;
}

static int parse_auto_limits(sc_loader *L, yaml_node_t *lim, const char *what, sc_auto *a)
{
    static const char *const keys[] = {"max_columns", "max_depth", "min_presence", NULL};
    char kw[200];
    int64_t v;
    yaml_node_t *n;
    int rc = yp_check_keys(L->d, lim, what, keys, L->err);
    if (rc == 0 && (n = yp_get(L->d, lim, "max_columns")) != NULL &&
        (rc = yp_int(L->d, n, sc_keypath(kw, sizeof kw, what, "max_columns"), 1, 10000, &v,
                     L->err)) == 0)
        a->max_columns = (uint32_t)v;
    if (rc == 0 && (n = yp_get(L->d, lim, "max_depth")) != NULL &&
        (rc = yp_int(L->d, n, sc_keypath(kw, sizeof kw, what, "max_depth"), 1, 16, &v,
                     L->err)) == 0)
        a->max_depth = (uint32_t)v;
    if (rc == 0 && (n = yp_get(L->d, lim, "min_presence")) != NULL &&
        (rc = yp_double(L->d, n, sc_keypath(kw, sizeof kw, what, "min_presence"),
                        &a->min_presence, L->err)) == 0 &&
        !(a->min_presence > 0 && a->min_presence <= 1))
        rc = yp_err(L->d, n, L->err, "%s: min_presence must be above 0 and at most 1", what);
    return rc;
}

/* `shred: auto`, `shred: none` or `{auto: {...}}`: 1 when it was one of
 * these (t->autoshred set), 0 for a shred tree, or an error. */
static int parse_shred_mode(sc_loader *L, yaml_node_t *sh, const char *what, sc_type *t)
{
    const char *s = sh->type == YAML_SCALAR_NODE ? yp_scalar(sh) : NULL;
    yaml_node_t *lim = NULL;
    if (s != NULL && strcmp(s, "none") == 0) {
        t->autoshred = (sc_auto){0};
        return 1;
    }
    if (s != NULL && strcmp(s, "auto") == 0) {
        t->autoshred = sc_auto_defaults();
        return 1;
    }
    if (!is_auto_map(L, sh, &lim))
        return 0;
    t->autoshred = sc_auto_defaults();
    int rc = lim ? parse_auto_limits(L, lim, what, &t->autoshred) : PQ_OK;
    return rc ? rc : 1;
}

int sc_param_shred(sc_loader *L, yaml_node_t *m, const char *what, const char *parent,
                   sc_column *c)
{
    yaml_node_t *sh = yp_get(L->d, m, "shred");
    sc_type *t;
    int rc = PQ_OK;
    if (sh != NULL && (rc = sc_target_of(L, yp_key_of(L->d, m, sh), what, "shred", c->type,
                                         SC_KIND_BIT(SC_VARIANT), "variant", &t)) == 0) {
        char sub[160];
        sc_fmt_cat(sub, sizeof sub, what, ": shred", "");
        int a = parse_shred_mode(L, sh, sub, t);
        if (a < 0)
            return a;
        if (a == 1 && t->autoshred.on && (parent != NULL || t != c->type))
            return yp_err(L->d, sh, L->err, "%s: shred: auto applies to a top-level variant "
                          "column (expected an explicit shred tree or none here)", what);
        if (a == 1)
            return PQ_OK;
        t->shred = calloc(1, sizeof *t->shred);
        rc = t->shred ? sc_parse_shred(L, sh, sub, t->shred) : sc_nomem(L->err);
    }
    return rc;
}

/* Every struct got fields, every variant a shred root, every primitive its
 * physical type. */
int sc_finish_type(sc_loader *L, yaml_node_t *tn, const char *what, sc_type *t)
{
    if (t->elem != NULL)
        return sc_finish_type(L, tn, what, t->elem);
    if (t->kind == SC_STRUCT && t->n_fields == 0)
        return yp_err(L->d, tn, L->err, "%s: a struct needs fields: (a list of columns)", what);
    if (t->kind == SC_VARIANT && t->shred == NULL) {
        if ((t->shred = calloc(1, sizeof *t->shred)) == NULL)
            return sc_nomem(L->err);
        t->shred->kind = SC_SHRED_NONE;
        t->shred->pos = (sc_pos){L->s->file, (uint32_t)yp_line(tn), (uint32_t)yp_col(tn)};
    }
    if (t->kind == SC_VARIANT)
        sc_shred_reset_leaves(t->shred);
    if (sc_is_primitive(t->kind))
        sc_set_physical(t);
    return PQ_OK;
}
