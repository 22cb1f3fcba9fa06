/* shredtree.c - the Variant shred-tree language (DESIGN.md "Schema
 * (YAML)", VariantShredding.md): `shred: {status: int16, tags: [string]}`
 * -> an sc_shred tree, each typed node checked against what a Variant can
 * hold; and the same tree back as compact JSON (sc_shred_format_json).
 *
 * Thread: whichever loads a schema or decides a per-file shred tree. */
#include "colspec_int.h"
#include "buf.h"
#include "memeq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_SHRED_TYPES "bool, int8..int64, float, double, decimal(p<=38,s<p), date, time(us), " \
    "timestamp(us|ns), string, binary, uuid, variant, [T], {field: T}"

static int shred_prim_ok(const sc_type *t, const char **why)
{
    switch (t->kind) {
    case SC_BOOL: case SC_FLOAT: case SC_DOUBLE: case SC_DATE: case SC_STRING:
    case SC_BINARY: case SC_UUID:
        return 1;
    case SC_INT:
        *why = "Variant integers are signed (int8..int64)";
        return t->is_signed;
    case SC_DECIMAL:
        /* DuckDB 1.5.6 prints a Variant decimal(p,p) as ".5" (not JSON) */
        *why = "Variant decimals have at most 38 digits and a scale below the precision "
               "(readers print decimal(p,p) values as \".5\", not JSON)";
        return t->precision <= 38 && t->scale < t->precision;
    case SC_TIME:
        *why = "Variant time is time(us, local)";
        return t->unit == PQ_UNIT_MICROS && !t->utc;
    case SC_TIMESTAMP:
        *why = "Variant timestamps are us or ns";
        return t->unit != PQ_UNIT_MILLIS;
    default:
        *why = "it has no Variant equivalent";
        return 0;
    }
}

/* Turns a parsed type string into a shred node, taking ownership of t. */
static int type_to_shred(sc_loader *L, const yaml_node_t *n, const char *what, sc_type *t,
                         sc_shred *s)
{
    s->pos = (sc_pos){L->s->file, (uint32_t)yp_line(n), (uint32_t)yp_col(n)};
    const char *why = "";
    if (t->kind == SC_VARIANT) {
        s->kind = SC_SHRED_NONE;
        sc_type_free(t);
        return PQ_OK;
    }
    if (t->kind == SC_LIST) {
        s->kind = SC_SHRED_ARRAY;
        s->elem = calloc(1, sizeof *s->elem);
        sc_type *elem = t->elem;
        t->elem = NULL;
        sc_type_free(t);
        if (s->elem == NULL) {
            sc_type_free(elem);
            return sc_nomem(L->err);
        }
        return type_to_shred(L, n, what, elem, s->elem);
    }
    s->kind = SC_SHRED_PRIMITIVE;
    s->type = t;
    char b[64];
    sc_type_format(t, b, sizeof b);
    if (t->kind == SC_MAP || t->kind == SC_STRUCT)
        return yp_err(L->d, n, L->err, "%s: shred objects are written as mappings "
                      "({field: type}), not '%s'", what, b);
    if (!shred_prim_ok(t, &why))
        return yp_err(L->d, n, L->err, "%s: cannot shred as '%s': %s (expected %s)", what, b, why,
                      SC_SHRED_TYPES);
    sc_set_physical(t);
    return PQ_OK;
}

static int parse_shred_object(sc_loader *L, yaml_node_t *n, const char *what, sc_shred *s)
{
    size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    s->kind = SC_SHRED_OBJECT;
    if (cnt == 0)
        return yp_err(L->d, n, L->err, "%s: an object shred needs at least one field", what);
    s->fields = calloc(cnt, sizeof *s->fields);
    const char **names = malloc(cnt * sizeof *names);
    int rc = s->fields && names ? PQ_OK : sc_nomem(L->err);
    for (size_t i = 0; rc == 0 && i < cnt; i++) {
        yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];
        yaml_node_t *kn = yp_node(L->d, p->key);
        char sub[160];
        rc = yp_strdup(L->d, kn, sc_keypath(sub, sizeof sub, what, "field name"),
                       &s->fields[i].name, L->err);
        if (rc != 0)
            break;
        names[i] = s->fields[i].name;
        s->fields[i].name_len = strlen(s->fields[i].name);
        s->n_fields = i + 1;
        snprintf(sub, sizeof sub, "%s.%.60s", what, s->fields[i].name);
        s->fields[i].shred = calloc(1, sizeof(sc_shred));
        rc = s->fields[i].shred
                 ? sc_parse_shred(L, yp_node(L->d, p->value), sub, s->fields[i].shred)
                 : sc_nomem(L->err);
    }
    long dup = rc == 0 ? sc_find_duplicate(names, cnt) : -1;
    if (dup >= 0)
        rc = yp_err(L->d, yp_node(L->d, n->data.mapping.pairs.start[dup].key), L->err,
                    "%s: field '%s' is shredded twice", what, names[dup]);
    free(names);
    return rc;
}

int sc_parse_shred(sc_loader *L, yaml_node_t *n, const char *what, sc_shred *s)
{
    s->pos = (sc_pos){L->s->file, (uint32_t)yp_line(n), (uint32_t)yp_col(n)};
    s->typed_leaf = s->value_leaf = -1;
    if (n->type == YAML_MAPPING_NODE)
        return parse_shred_object(L, n, what, s);
    if (n->type == YAML_SEQUENCE_NODE) {
        s->kind = SC_SHRED_ARRAY;
        if (n->data.sequence.items.top - n->data.sequence.items.start != 1)
            return yp_err(L->d, n, L->err, "%s: an array shred is a one-element list [T]", what);
        s->elem = calloc(1, sizeof *s->elem);
        if (s->elem == NULL)
            return sc_nomem(L->err);
        char sub[160];
        snprintf(sub, sizeof sub, "%s[]", what);
        return sc_parse_shred(L, yp_node(L->d, *n->data.sequence.items.start), sub, s->elem);
    }
    sc_type *t = NULL;
    int rc = sc_parse_type_string(L, n, what, &t);
    if (rc != 0) {
        sc_type_free(t);
        return rc;
    }
    return type_to_shred(L, n, what, t, s);
}

/* Array shreds made from `list<T>` strings have no position of their own
 * below the top; give every node the value-leaf sentinel. */
void sc_shred_reset_leaves(sc_shred *s)
{
    s->value_leaf = s->typed_leaf = -1;
    for (size_t i = 0; i < s->n_fields; i++)
        sc_shred_reset_leaves(s->fields[i].shred);
    if (s->elem)
        sc_shred_reset_leaves(s->elem);
}

static bool field_named(const sc_shred *s, size_t f, const char *name, size_t len)
{
    return s->fields[f].name_len == len && pq_memeq(s->fields[f].name, name, len);
}

int sc_shred_field_index(const sc_shred *s, const char *name, size_t len, size_t guess)
{
    if (guess < s->n_fields && field_named(s, guess, name, len))
        return (int)guess;
    for (size_t f = 0; f < s->n_fields; f++) {
        if (field_named(s, f, name, len))
            return (int)f;
    }
    return -1;
}

static int json_str(pq_buf *out, const char *s)
{
    int rc = pq_buf_push(out, '"');
    for (; rc == 0 && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch == '"' || ch == '\\')
            rc = pq_buf_push(out, '\\') || pq_buf_push(out, ch);
        else if (ch < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            rc = pq_buf_append(out, esc, 6);
        } else
            rc = pq_buf_push(out, ch);
    }
    return rc ? PQ_ENOMEM : (pq_buf_push(out, '"') ? PQ_ENOMEM : 0);
}

int sc_shred_format_json(const sc_shred *s, pq_buf *out)
{
    char tn[64];
    int rc = 0;
    switch (s->kind) {
    case SC_SHRED_NONE:
        return json_str(out, "variant");
    case SC_SHRED_PRIMITIVE:
        sc_type_format(s->type, tn, sizeof tn);
        return json_str(out, tn);
    case SC_SHRED_ARRAY:
        rc = pq_buf_push(out, '[') ? PQ_ENOMEM : sc_shred_format_json(s->elem, out);
        return rc ? rc : pq_buf_push(out, ']') ? PQ_ENOMEM : 0;
    case SC_SHRED_OBJECT:
        rc = pq_buf_push(out, '{') ? PQ_ENOMEM : 0;
        for (size_t i = 0; rc == 0 && i < s->n_fields; i++) {
            rc = i && pq_buf_push(out, ',') ? PQ_ENOMEM : 0;
            rc = rc ? rc : json_str(out, s->fields[i].name);
            rc = rc ? rc : pq_buf_push(out, ':') ? PQ_ENOMEM : 0;
            rc = rc ? rc : sc_shred_format_json(s->fields[i].shred, out);
        }
        return rc ? rc : pq_buf_push(out, '}') ? PQ_ENOMEM : 0;
    }
    return PQ_EINVAL;
}
