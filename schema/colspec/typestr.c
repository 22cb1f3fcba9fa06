/* typestr.c - the type-string grammar of the schema language (DESIGN.md
 * "Schema (YAML)"): `type: "list<timestamp(ms,utc)>"` -> an sc_type tree,
 * with errors that point at the offending character.
 *
 * Type strings follow this grammar (whitespace allowed between tokens):
 *     type := "list" "<" type ">"
 *           | "map" "<" "string" "," type ">"
 *           | name [ "(" param { "," param } ")" ]
 *     decimal(P[,S])   time(UNIT[,utc|local])   timestamp(UNIT[,utc|local])
 * Parameters may also be given as keys beside `type` (typeparams.c).
 *
 * Thread: whichever loads a schema. */
#include "colspec_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_MAX_PRECISION 76      /* Arrow's decimal256; nothing reads more */
#define SC_MAX_TYPE_DEPTH 32

typedef struct tparse {
    sc_loader *L;
    const yaml_node_t *n;
    const char *src;
    size_t i;
    const char *what;
} tparse;

static int tp_err(tparse *t, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int tp_err(tparse *t, size_t off, const char *fmt, ...)
{
    char msg[224];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return yp_err_at(t->L->d, t->n, off, t->L->err, "%s: %s", t->what, msg);
}

static void tp_ws(tparse *t)
{
    while (t->src[t->i] == ' ' || t->src[t->i] == '\t')
        t->i++;
}

static const char *tp_found(tparse *t, char *buf, size_t len)
{
    if (t->src[t->i] == '\0')
        return "the end";
    snprintf(buf, len, "'%c'", isprint((unsigned char)t->src[t->i]) ? t->src[t->i] : '?');
    return buf;
}

/* A word ([A-Za-z0-9_]+); returns its offset. Over-long words are cut
 * (they match nothing anyway). */
static size_t tp_word(tparse *t, char *buf, size_t len)
{
    tp_ws(t);
    size_t start = t->i, n = 0;
    while (isalnum((unsigned char)t->src[t->i]) || t->src[t->i] == '_') {
        if (n + 1 < len)
            buf[n++] = t->src[t->i];
        t->i++;
    }
    buf[n] = '\0';
    return start;
}

static int tp_expect(tparse *t, char ch, const char *where)
{
    tp_ws(t);
    if (t->src[t->i] == ch) {
        t->i++;
        return PQ_OK;
    }
    char b[8];
    return tp_err(t, t->i, "expected '%c' %s, found %s", ch, where, tp_found(t, b, sizeof b));
}

static int small_number(const char *s, int *out)
{
    if (s[0] == '\0' || strlen(s) > 4)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    *out = atoi(s);
    return 0;
}

static int tp_decimal_args(tparse *t, sc_type *ty, char a[][24], const size_t *off, int n)
{
    int p, s = 0;
    if (n > 2)
        return tp_err(t, off[2], "decimal takes (precision, scale)");
    if (small_number(a[0], &p) != 0 || p < 1 || p > SC_MAX_PRECISION)
        return tp_err(t, off[0], "decimal precision '%s' out of range 1..%d", a[0],
                      SC_MAX_PRECISION);
    if (n == 2 && (small_number(a[1], &s) != 0 || s > p))
        return tp_err(t, off[1], "decimal scale '%s' out of range 0..%d (the precision)", a[1], p);
    ty->precision = p;
    ty->scale = s;
    return PQ_OK;
}

static int tp_time_args(tparse *t, sc_type *ty, char a[][24], const size_t *off, int n)
{
    int u = 0;
    while (sc_unit_names[u] && strcmp(sc_unit_names[u], a[0]) != 0)
        u++;
    if (sc_unit_names[u] == NULL)
        return tp_err(t, off[0], "unknown unit '%s' (expected ms, us or ns)", a[0]);
    ty->unit = (pq_time_unit)(u + 1);
    if (n > 2)
        return tp_err(t, off[2], "%s takes (unit[, utc|local])", sc_kind_name(ty));
    if (n == 2) {
        if (strcmp(a[1], "utc") == 0 || strcmp(a[1], "true") == 0)
            ty->utc = true;
        else if (strcmp(a[1], "local") == 0 || strcmp(a[1], "false") == 0)
            ty->utc = false;
        else
            return tp_err(t, off[1], "expected utc or local, found '%s'", a[1]);
    }
    return PQ_OK;
}

static int tp_args(tparse *t, sc_type *ty)
{
    char a[3][24];
    size_t off[3];
    int n = 0;
    t->i++; /* '(' */
    for (;;) {
        char b[8];
        if (n == 3)
            return tp_err(t, t->i, "too many parameters for %s", sc_kind_name(ty));
        off[n] = tp_word(t, a[n], sizeof a[n]);
        if (a[n][0] == '\0')
            return tp_err(t, off[n], "expected a parameter, found %s", tp_found(t, b, sizeof b));
        n++;
        tp_ws(t);
        if (t->src[t->i] == ',') {
            t->i++;
            continue;
        }
        if (t->src[t->i] == ')') {
            t->i++;
            break;
        }
        return tp_err(t, t->i, "expected ',' or ')', found %s", tp_found(t, b, sizeof b));
    }
    ty->has_args = true;
    if (ty->kind == SC_DECIMAL)
        return tp_decimal_args(t, ty, a, off, n);
    if (ty->kind == SC_TIME || ty->kind == SC_TIMESTAMP)
        return tp_time_args(t, ty, a, off, n);
    return tp_err(t, off[0] - 1, "type '%s' takes no parameters", sc_kind_name(ty));
}

static int tp_type(tparse *t, int depth, sc_type **out);

static int tp_container(tparse *t, int depth, sc_type *ty)
{
    int rc = tp_expect(t, '<', ty->kind == SC_LIST ? "after list" : "after map");
    if (rc == 0 && ty->kind == SC_MAP) {
        sc_type *key = NULL;
        tp_ws(t);
        size_t at = t->i;
        rc = tp_type(t, depth + 1, &key);
        if (rc == 0 && (key->kind != SC_STRING || key->has_args))
            rc = tp_err(t, at, "map keys must be string (JSON object keys are strings)");
        sc_type_free(key);
        rc = rc ? rc : tp_expect(t, ',', "after the map key type");
    }
    rc = rc ? rc : tp_type(t, depth + 1, &ty->elem);
    return rc ? rc : tp_expect(t, '>', ty->kind == SC_LIST ? "to close list<" : "to close map<");
}

static int tp_type(tparse *t, int depth, sc_type **out)
{
    char w[24], b[8];
    if (depth > SC_MAX_TYPE_DEPTH)
        return tp_err(t, t->i, "type nested deeper than %d levels", SC_MAX_TYPE_DEPTH);
    size_t at = tp_word(t, w, sizeof w);
    if (w[0] == '\0')
        return tp_err(t, at, "expected a type, found %s", tp_found(t, b, sizeof b));
    bool list = strcmp(w, "list") == 0, map = strcmp(w, "map") == 0;
    const sc_prim *pr = list || map ? NULL : sc_prim_find(w);
    if (!list && !map && pr == NULL)
        return tp_err(t, at, "unknown type '%s' (expected %s)", w, SC_TYPES);
    sc_type *ty = sc_type_alloc(list ? SC_LIST : map ? SC_MAP : pr->kind);
    if (ty == NULL)
        return sc_nomem(t->L->err);
    *out = ty;
    if (list || map)
        return tp_container(t, depth, ty);
    ty->bit_width = pr->bits;
    ty->is_signed = pr->is_signed;
    ty->utc = ty->kind == SC_TIMESTAMP;
    tp_ws(t);
    if (t->src[t->i] == '(')
        return tp_args(t, ty);
    if (ty->kind == SC_DECIMAL)
        return tp_err(t, at, "decimal needs a precision and scale, e.g. decimal(18,4)");
    return PQ_OK;
}

/* Parses a whole type string; *out is set (possibly partial) even on error,
 * so the caller always frees it. */
int sc_parse_type_string(sc_loader *L, const yaml_node_t *n, const char *what, sc_type **out)
{
    const char *s = yp_scalar(n);
    if (s == NULL || yp_is_null(n)) {
        char b[48];
        return yp_err(L->d, n, L->err, "%s: expected a type name, found %s", what,
                      yp_describe(n, b, sizeof b));
    }
    tparse t = {.L = L, .n = n, .src = s, .i = 0, .what = what};
    int rc = tp_type(&t, 0, out);
    tp_ws(&t);
    if (rc == 0 && s[t.i] != '\0') {
        char b[8];
        rc = tp_err(&t, t.i, "unexpected %s after the type", tp_found(&t, b, sizeof b));
    }
    return rc;
}
