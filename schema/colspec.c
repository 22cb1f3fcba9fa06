/* colspec.c - the schema language (DESIGN.md "Schema (YAML)"): YAML ->
 * column-spec tree with positioned errors, the type-string grammar, Variant
 * shred trees, defaults and per-column options; then the leaf layout and
 * the pq_schema builder (LogicalTypes.md, VariantShredding.md).
 *
 * Type strings follow this grammar (whitespace allowed between tokens):
 *     type := "list" "<" type ">"
 *           | "map" "<" "string" "," type ">"
 *           | name [ "(" param { "," param } ")" ]
 *     decimal(P[,S])   time(UNIT[,utc|local])   timestamp(UNIT[,utc|local])
 * Keys beside `type` (unit, utc, crs, algorithm, fields, shred) apply to
 * the one node of the matching kind anywhere in the type, so
 * `type: "list<struct>"` with `fields:` and `type: "list<timestamp>"` with
 * `unit: ms` both work; a key that matches no node, or more than one, is an
 * error rather than a guess. */
#include "colspec.h"
#include "buf.h"
#include "compress.h"
#include "logical.h"
#include "yamlpos.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SC_MAX_PRECISION 76      /* Arrow's decimal256; nothing reads more */
#define SC_MAX_TYPE_DEPTH 32
#define SC_MAX_NAME 255
#define SC_TYPES "bool, int8..int64, uint8..uint64, float, double, float16, decimal(p,s), " \
    "string, enum, json, bson, binary, uuid, date, time, timestamp, interval, geometry, " \
    "geography, list<T>, map<string,T>, struct, variant"
#define SC_SHRED_TYPES "bool, int8..int64, float, double, decimal(p<=38,s<p), date, time(us), " \
    "timestamp(us|ns), string, binary, uuid, variant, [T], {field: T}"

typedef struct ld {
    yp_doc *d;
    sc_schema *s;
    pq_err *err;
} ld;

static void fmt_cat(char *buf, size_t len, const char *a, const char *b, const char *c)
{
    const char *parts[3] = {a, b, c};
    size_t o = 0;
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && o + 1 < len; p++)
            buf[o++] = *p;
    buf[o] = '\0';
}

static int nomem(pq_err *err) { return pq_err_set(err, PQ_ENOMEM, "schema: out of memory"); }

/* "what: key" into buf, cut to fit (a plain copy: snprintf would make GCC
 * warn about truncation that is intended here). */
static char *keypath(char *buf, size_t len, const char *what, const char *key)
{
    fmt_cat(buf, len, what, ": ", key);
    return buf;
}

/* ---- freeing ---------------------------------------------------------- */

static void free_type(sc_type *t);
static void free_column(sc_column *c);

static void free_shred(sc_shred *s)
{
    if (s == NULL)
        return;
    free_type(s->type);
    for (size_t i = 0; i < s->n_fields; i++) {
        free(s->fields[i].name);
        free_shred(s->fields[i].shred);
    }
    free(s->fields);
    free_shred(s->elem);
    free(s);
}

static void free_type(sc_type *t)
{
    if (t == NULL)
        return;
    free(t->crs);
    free_type(t->elem);
    for (size_t i = 0; i < t->n_fields; i++)
        free_column(&t->fields[i]);
    free(t->fields);
    free_shred(t->shred);
    free(t);
}

static void free_column(sc_column *c)
{
    free(c->name);
    free(c->from);
    for (size_t i = 0; i < c->path_len; i++)
        free(c->path[i]);
    free(c->path);
    free_type(c->type);
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

static sc_type *new_type(sc_kind kind)
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

/* ---- names of things ---------------------------------------------------- */

static const struct prim {
    const char *name;
    sc_kind kind;
    int bits;
    bool is_signed;
} prims[] = {
    {"bool", SC_BOOL, 0, false}, {"int8", SC_INT, 8, true}, {"int16", SC_INT, 16, true},
    {"int32", SC_INT, 32, true}, {"int64", SC_INT, 64, true}, {"uint8", SC_INT, 8, false},
    {"uint16", SC_INT, 16, false}, {"uint32", SC_INT, 32, false},
    {"uint64", SC_INT, 64, false}, {"float", SC_FLOAT, 0, false},
    {"double", SC_DOUBLE, 0, false}, {"float16", SC_FLOAT16, 0, false},
    {"decimal", SC_DECIMAL, 0, false}, {"string", SC_STRING, 0, false},
    {"enum", SC_ENUM, 0, false}, {"json", SC_JSON, 0, false}, {"bson", SC_BSON, 0, false},
    {"binary", SC_BINARY, 0, false}, {"uuid", SC_UUID, 0, false}, {"date", SC_DATE, 0, false},
    {"time", SC_TIME, 0, false}, {"timestamp", SC_TIMESTAMP, 0, false},
    {"interval", SC_INTERVAL, 0, false}, {"geometry", SC_GEOMETRY, 0, false},
    {"geography", SC_GEOGRAPHY, 0, false}, {"struct", SC_STRUCT, 0, false},
    {"variant", SC_VARIANT, 0, false},
};

static const char *kind_name(const sc_type *t)
{
    if (t->kind == SC_LIST)
        return "list";
    if (t->kind == SC_MAP)
        return "map";
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (prims[i].kind == t->kind &&
            (t->kind != SC_INT || (prims[i].bits == t->bit_width &&
                                   prims[i].is_signed == t->is_signed)))
            return prims[i].name;
    return "?";
}

static const char *const unit_names[] = {"ms", "us", "ns", NULL};
static const char *const algo_names[] = {"spherical", "vincenty", "thomas", "andoyer", "karney",
                                         NULL};
static const char *const phys_names[] = {"boolean", "int32", "int64", "int96", "float",
                                         "double", "binary", "fixed_len_byte_array"};

typedef struct fmt {
    char *buf;
    size_t len, o;
} fmt;

static void fput(fmt *f, const char *s)
{
    for (; *s; s++) {
        if (f->o + 1 < f->len)
            f->buf[f->o] = *s;
        f->o++;
    }
    if (f->len)
        f->buf[f->o < f->len ? f->o : f->len - 1] = '\0';
}

static void format_type(fmt *f, const sc_type *t)
{
    char tmp[48];
    switch (t->kind) {
    case SC_LIST:
        fput(f, "list<");
        format_type(f, t->elem);
        fput(f, ">");
        return;
    case SC_MAP:
        fput(f, "map<string,");
        format_type(f, t->elem);
        fput(f, ">");
        return;
    case SC_DECIMAL:
        snprintf(tmp, sizeof tmp, "decimal(%d,%d)", t->precision, t->scale);
        fput(f, tmp);
        return;
    case SC_TIME: case SC_TIMESTAMP:
        snprintf(tmp, sizeof tmp, "%s(%s,%s)", kind_name(t), unit_names[t->unit - 1],
                 t->utc ? "utc" : "local");
        fput(f, tmp);
        return;
    default:
        fput(f, kind_name(t));
    }
}

int sc_type_format(const sc_type *t, char *buf, size_t len)
{
    fmt f = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    format_type(&f, t);
    return (int)f.o;
}

static const char *const enc_names[] = {
    "plain", "rle", "dictionary", "delta_binary_packed", "delta_length_byte_array",
    "delta_byte_array", "byte_stream_split", NULL};
static const pq_encoding enc_values[] = {
    PQ_ENC_PLAIN, PQ_ENC_RLE, PQ_ENC_RLE_DICTIONARY, PQ_ENC_DELTA_BINARY_PACKED,
    PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_ENC_DELTA_BYTE_ARRAY, PQ_ENC_BYTE_STREAM_SPLIT};

const char *sc_encoding_name(pq_encoding e)
{
    if (e == PQ_ENC_AUTO)
        return "auto";
    for (size_t i = 0; enc_names[i]; i++)
        if (enc_values[i] == e)
            return enc_names[i];
    return "?";
}

#define PH(x) (1u << (x))

/* Physical types each encoding accepts (Encodings.md). */
static unsigned enc_allowed(pq_encoding e)
{
    switch (e) {
    case PQ_ENC_PLAIN: return 0xFFu;
    case PQ_ENC_RLE: return PH(PQ_BOOLEAN);
    case PQ_ENC_RLE_DICTIONARY: return 0xFFu & ~PH(PQ_BOOLEAN);
    case PQ_ENC_DELTA_BINARY_PACKED: return PH(PQ_INT32) | PH(PQ_INT64);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return PH(PQ_BYTE_ARRAY);
    case PQ_ENC_DELTA_BYTE_ARRAY: return PH(PQ_BYTE_ARRAY) | PH(PQ_FIXED_LEN_BYTE_ARRAY);
    case PQ_ENC_BYTE_STREAM_SPLIT:
        return PH(PQ_FLOAT) | PH(PQ_DOUBLE) | PH(PQ_INT32) | PH(PQ_INT64) |
               PH(PQ_FIXED_LEN_BYTE_ARRAY);
    default: return 0;
    }
}

static void mask_names(unsigned mask, char *buf, size_t len)
{
    fmt f = {buf, len, 0};
    buf[0] = '\0';
    for (int i = 0; i < 8; i++)
        if (mask & PH(i)) {
            if (f.o)
                fput(&f, ", ");
            fput(&f, phys_names[i]);
        }
}

/* ---- physical mapping ------------------------------------------------- */

static int32_t decimal_bytes(int precision)
{
    int32_t n = 1;
    while (pq_decimal_max_precision(n) < precision)
        n++;
    return n;
}

/* Sets physical/type_length of a primitive from its (final) parameters. */
static void set_physical(sc_type *t)
{
    t->type_length = 0;
    switch (t->kind) {
    case SC_BOOL: t->physical = PQ_BOOLEAN; break;
    case SC_INT: t->physical = t->bit_width == 64 ? PQ_INT64 : PQ_INT32; break;
    case SC_FLOAT: t->physical = PQ_FLOAT; break;
    case SC_DOUBLE: t->physical = PQ_DOUBLE; break;
    case SC_FLOAT16: t->physical = PQ_FIXED_LEN_BYTE_ARRAY; t->type_length = 2; break;
    case SC_UUID: t->physical = PQ_FIXED_LEN_BYTE_ARRAY; t->type_length = 16; break;
    case SC_INTERVAL: t->physical = PQ_FIXED_LEN_BYTE_ARRAY; t->type_length = 12; break;
    case SC_DATE: t->physical = PQ_INT32; break;
    case SC_TIME: t->physical = t->unit == PQ_UNIT_MILLIS ? PQ_INT32 : PQ_INT64; break;
    case SC_TIMESTAMP: t->physical = PQ_INT64; break;
    case SC_DECIMAL:
        if (t->precision <= 9) {
            t->physical = PQ_INT32;
        } else if (t->precision <= 18) {
            t->physical = PQ_INT64;
        } else if (t->precision <= 38) {
            t->physical = PQ_FIXED_LEN_BYTE_ARRAY;
            t->type_length = decimal_bytes(t->precision);
        } else {
            t->physical = PQ_BYTE_ARRAY;
        }
        break;
    default: t->physical = PQ_BYTE_ARRAY; break;
    }
}

static pq_logical type_logical(const sc_type *t)
{
    pq_logical lt = {.kind = PQ_LT_NONE};
    switch (t->kind) {
    case SC_INT:
        if (t->bit_width < 32 || !t->is_signed) {
            lt.kind = PQ_LT_INTEGER;
            lt.bit_width = (int8_t)t->bit_width;
            lt.is_signed = t->is_signed;
        }
        break;
    case SC_FLOAT16: lt.kind = PQ_LT_FLOAT16; break;
    case SC_DECIMAL:
        lt.kind = PQ_LT_DECIMAL;
        lt.precision = t->precision;
        lt.scale = t->scale;
        break;
    case SC_STRING: lt.kind = PQ_LT_STRING; break;
    case SC_ENUM: lt.kind = PQ_LT_ENUM; break;
    case SC_JSON: lt.kind = PQ_LT_JSON; break;
    case SC_BSON: lt.kind = PQ_LT_BSON; break;
    case SC_UUID: lt.kind = PQ_LT_UUID; break;
    case SC_DATE: lt.kind = PQ_LT_DATE; break;
    case SC_INTERVAL: lt.kind = PQ_LT_INTERVAL; break;
    case SC_TIME: case SC_TIMESTAMP:
        lt.kind = t->kind == SC_TIME ? PQ_LT_TIME : PQ_LT_TIMESTAMP;
        lt.unit = t->unit;
        lt.utc = t->utc;
        break;
    case SC_GEOMETRY: case SC_GEOGRAPHY:
        lt.kind = t->kind == SC_GEOMETRY ? PQ_LT_GEOMETRY : PQ_LT_GEOGRAPHY;
        lt.crs = t->crs;
        lt.algorithm = t->algorithm;
        break;
    default: break;
    }
    return lt;
}

static bool is_primitive(sc_kind k)
{
    return k != SC_LIST && k != SC_MAP && k != SC_STRUCT && k != SC_VARIANT;
}

static unsigned shred_mask(const sc_shred *s);

/* Physical types of every leaf under t (for checking encodings). */
static unsigned phys_mask(const sc_type *t)
{
    switch (t->kind) {
    case SC_LIST: return phys_mask(t->elem);
    case SC_MAP: return PH(PQ_BYTE_ARRAY) | phys_mask(t->elem);
    case SC_STRUCT: {
        unsigned m = 0;
        for (size_t i = 0; i < t->n_fields; i++)
            m |= phys_mask(t->fields[i].type);
        return m;
    }
    case SC_VARIANT: return PH(PQ_BYTE_ARRAY) | (t->shred ? shred_mask(t->shred) : 0);
    default: return PH(t->physical);
    }
}

static unsigned shred_mask(const sc_shred *s)
{
    unsigned m = PH(PQ_BYTE_ARRAY);
    if (s->kind == SC_SHRED_PRIMITIVE)
        m |= PH(s->type->physical);
    for (size_t i = 0; i < s->n_fields; i++)
        m |= shred_mask(s->fields[i].shred);
    if (s->elem)
        m |= shred_mask(s->elem);
    return m;
}

/* ---- type strings --------------------------------------------------------- */

typedef struct tparse {
    ld *L;
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
    while (unit_names[u] && strcmp(unit_names[u], a[0]) != 0)
        u++;
    if (unit_names[u] == NULL)
        return tp_err(t, off[0], "unknown unit '%s' (expected ms, us or ns)", a[0]);
    ty->unit = (pq_time_unit)(u + 1);
    if (n > 2)
        return tp_err(t, off[2], "%s takes (unit[, utc|local])", kind_name(ty));
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
            return tp_err(t, t->i, "too many parameters for %s", kind_name(ty));
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
    return tp_err(t, off[0] - 1, "type '%s' takes no parameters", kind_name(ty));
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
        free_type(key);
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
    size_t k = 0;
    while (!list && !map && k < sizeof prims / sizeof prims[0] && strcmp(prims[k].name, w) != 0)
        k++;
    if (!list && !map && k == sizeof prims / sizeof prims[0])
        return tp_err(t, at, "unknown type '%s' (expected %s)", w, SC_TYPES);
    sc_type *ty = new_type(list ? SC_LIST : map ? SC_MAP : prims[k].kind);
    if (ty == NULL)
        return nomem(t->L->err);
    *out = ty;
    if (list || map)
        return tp_container(t, depth, ty);
    ty->bit_width = prims[k].bits;
    ty->is_signed = prims[k].is_signed;
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
static int parse_type_string(ld *L, const yaml_node_t *n, const char *what, sc_type **out)
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

/* ---- Variant shred trees ---------------------------------------------- */

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
static int type_to_shred(ld *L, const yaml_node_t *n, const char *what, sc_type *t,
                         sc_shred *s)
{
    s->pos = (sc_pos){L->s->file, (uint32_t)yp_line(n), (uint32_t)yp_col(n)};
    const char *why = "";
    if (t->kind == SC_VARIANT) {
        s->kind = SC_SHRED_NONE;
        free_type(t);
        return PQ_OK;
    }
    if (t->kind == SC_LIST) {
        s->kind = SC_SHRED_ARRAY;
        s->elem = calloc(1, sizeof *s->elem);
        sc_type *elem = t->elem;
        t->elem = NULL;
        free_type(t);
        if (s->elem == NULL) {
            free_type(elem);
            return nomem(L->err);
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
    set_physical(t);
    return PQ_OK;
}

typedef struct named {
    const char *name;
    size_t idx;
} named;

static int cmp_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

/* Index of the first name (in document order) that repeats an earlier one,
 * or -1. Sorting keeps this O(n log n) for the large lists YAML allows. */
static long find_duplicate(const char **names, size_t n)
{
    named *v = n > 1 ? malloc(n * sizeof *v) : NULL;
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = (named){names[i], i};
    qsort(v, n, sizeof *v, cmp_named);
    long dup = -1;
    for (size_t i = 1; i < n; i++)
        if (strcmp(v[i - 1].name, v[i].name) == 0 && (dup < 0 || (long)v[i].idx < dup))
            dup = (long)v[i].idx;
    free(v);
    return dup;
}

static int parse_shred(ld *L, yaml_node_t *n, const char *what, sc_shred *s);

static int parse_shred_object(ld *L, yaml_node_t *n, const char *what, sc_shred *s)
{
    size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    s->kind = SC_SHRED_OBJECT;
    if (cnt == 0)
        return yp_err(L->d, n, L->err, "%s: an object shred needs at least one field", what);
    s->fields = calloc(cnt, sizeof *s->fields);
    const char **names = malloc(cnt * sizeof *names);
    int rc = s->fields && names ? PQ_OK : nomem(L->err);
    for (size_t i = 0; rc == 0 && i < cnt; i++) {
        yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];
        yaml_node_t *kn = yp_node(L->d, p->key);
        char sub[160];
        rc = yp_strdup(L->d, kn, keypath(sub, sizeof sub, what, "field name"),
                       &s->fields[i].name, L->err);
        if (rc != 0)
            break;
        names[i] = s->fields[i].name;
        s->n_fields = i + 1;
        snprintf(sub, sizeof sub, "%s.%.60s", what, s->fields[i].name);
        s->fields[i].shred = calloc(1, sizeof(sc_shred));
        rc = s->fields[i].shred ? parse_shred(L, yp_node(L->d, p->value), sub, s->fields[i].shred)
                                : nomem(L->err);
    }
    long dup = rc == 0 ? find_duplicate(names, cnt) : -1;
    if (dup >= 0)
        rc = yp_err(L->d, yp_node(L->d, n->data.mapping.pairs.start[dup].key), L->err,
                    "%s: field '%s' is shredded twice", what, names[dup]);
    free(names);
    return rc;
}

static int parse_shred(ld *L, yaml_node_t *n, const char *what, sc_shred *s)
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
            return nomem(L->err);
        char sub[160];
        snprintf(sub, sizeof sub, "%s[]", what);
        return parse_shred(L, yp_node(L->d, *n->data.sequence.items.start), sub, s->elem);
    }
    sc_type *t = NULL;
    int rc = parse_type_string(L, n, what, &t);
    if (rc != 0) {
        free_type(t);
        return rc;
    }
    return type_to_shred(L, n, what, t, s);
}

/* Array shreds made from `list<T>` strings have no position of their own
 * below the top; give every node the value-leaf sentinel. */
static void shred_reset_leaves(sc_shred *s)
{
    s->value_leaf = s->typed_leaf = -1;
    for (size_t i = 0; i < s->n_fields; i++)
        shred_reset_leaves(s->fields[i].shred);
    if (s->elem)
        shred_reset_leaves(s->elem);
}

/* ---- defaults ----------------------------------------------------------- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool read_fixed(const char **p, int ndig, int *out)
{
    int v = 0;
    for (int i = 0; i < ndig; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += ndig;
    *out = v;
    return true;
}

static bool parse_date(const char **p, int64_t *days)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, m, d;
    if (!read_fixed(p, 4, &y) || *(*p)++ != '-' || !read_fixed(p, 2, &m) || *(*p)++ != '-' ||
        !read_fixed(p, 2, &d))
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1] || (m == 2 && d == 29 && !leap))
        return false;
    *days = days_from_civil(y, (unsigned)m, (unsigned)d);
    return true;
}

static int64_t unit_per_second(pq_time_unit u)
{
    return u == PQ_UNIT_MILLIS ? 1000 : u == PQ_UNIT_MICROS ? 1000000 : 1000000000;
}

/* HH:MM:SS[.fraction] in units since midnight; digits beyond the unit's
 * precision must be zero (a default should not be silently rounded). */
static bool parse_clock(const char **p, pq_time_unit unit, int64_t *out)
{
    int h, m, s;
    if (!read_fixed(p, 2, &h) || *(*p)++ != ':' || !read_fixed(p, 2, &m) || *(*p)++ != ':' ||
        !read_fixed(p, 2, &s) || h > 23 || m > 59 || s > 59)
        return false;
    int64_t per = unit_per_second(unit), frac = 0, scale = per;
    if (**p == '.') {
        (*p)++;
        if (!isdigit((unsigned char)**p))
            return false;
        for (; isdigit((unsigned char)**p); (*p)++) {
            scale /= 10;
            if (scale == 0 && **p != '0')
                return false;
            frac += scale * (**p - '0');
        }
    }
    *out = ((int64_t)h * 3600 + m * 60 + s) * per + frac;
    return true;
}

static bool parse_int_text(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    if (!(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
        return false;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

static bool parse_timestamp(const char *s, pq_time_unit unit, int64_t *out)
{
    if (parse_int_text(s, out))
        return true;
    int64_t days, clock, per = unit_per_second(unit), off = 0, v;
    const char *p = s;
    if (!parse_date(&p, &days) || (*p != 'T' && *p != 't' && *p != ' '))
        return false;
    p++;
    if (!parse_clock(&p, unit, &clock))
        return false;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om, sign = *p++ == '-' ? -1 : 1;
        if (!read_fixed(&p, 2, &oh) || *p++ != ':' || !read_fixed(&p, 2, &om) || oh > 23 ||
            om > 59)
            return false;
        off = sign * ((int64_t)oh * 3600 + om * 60);
    }
    if (*p != '\0')
        return false;
    if (__builtin_mul_overflow(days * 86400 - off, per, &v) || __builtin_add_overflow(v, clock, &v))
        return false;
    *out = v;
    return true;
}

static bool parse_uuid(const char *s, uint8_t out[16])
{
    size_t n = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '-' && (i == 8 || i == 13 || i == 18 || i == 23) && strlen(s) == 36)
            continue;
        if (!isxdigit((unsigned char)s[i]) || n == 32)
            return false;
        int v = isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10);
        out[n / 2] = (uint8_t)(n % 2 ? (out[n / 2] | v) : v << 4);
        n++;
    }
    return n == 32;
}

/* [-]digits[.digits] within precision/scale; unscaled value for p <= 18. */
static bool parse_decimal(const char *s, int precision, int scale, int64_t *unscaled)
{
    const char *p = s + (*s == '-');
    int int_digits = 0, frac_digits = 0, sig = 0;
    int64_t v = 0;
    bool seen = false;
    for (; isdigit((unsigned char)*p); p++, seen = true)
        if (sig > 0 || *p != '0') {
            sig++;
            int_digits++;
            v = sig <= 18 ? v * 10 + (*p - '0') : v;
        }
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++, seen = true) {
            if (++frac_digits > scale && *p != '0')
                return false;
            if (frac_digits <= scale && int_digits + frac_digits <= 18)
                v = v * 10 + (*p - '0');
        }
    }
    if (!seen || *p != '\0' || int_digits > precision - scale)
        return false;
    for (int i = frac_digits; i < scale && int_digits + i < 18; i++)
        v *= 10;
    *unscaled = *s == '-' ? -v : v;
    return true;
}

static bool parse_default_int(const sc_type *t, const char *s, sc_default *d)
{
    if (!t->is_signed) {
        char *end;
        errno = 0;
        if (!isdigit((unsigned char)s[0]))
            return false;
        unsigned long long v = strtoull(s, &end, 10);
        uint64_t max = t->bit_width == 64 ? UINT64_MAX : (UINT64_C(1) << t->bit_width) - 1;
        if (*end != '\0' || errno == ERANGE || v > max)
            return false;
        d->u = v;
        return true;
    }
    int64_t v, max = t->bit_width == 64 ? INT64_MAX : (INT64_C(1) << (t->bit_width - 1)) - 1;
    if (!parse_int_text(s, &v) || v > max || v < -max - 1)
        return false;
    d->i = v;
    return true;
}

static bool parse_default_float(const sc_type *t, const char *s, sc_default *d)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double max = t->kind == SC_FLOAT ? FLT_MAX : t->kind == SC_FLOAT16 ? 65504.0 : DBL_MAX;
    if (s[0] == '\0' || isspace((unsigned char)s[0]) || *end != '\0' || !isfinite(v) ||
        fabs(v) > max || strpbrk(s, "xXnN") != NULL)
        return false;
    d->d = v;
    return true;
}

static void variant_default_kind(const yaml_node_t *n, sc_default *d)
{
    const char *s = d->text;
    d->variant_kind = SC_DEF_STRING;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return;
    sc_type probe = {.kind = SC_DOUBLE};
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
        d->variant_kind = SC_DEF_BOOL;
        d->b = s[0] == 't';
    } else if (parse_int_text(s, &d->i)) {
        d->variant_kind = SC_DEF_INT;
    } else if (parse_default_float(&probe, s, d)) {
        d->variant_kind = SC_DEF_DOUBLE;
    }
}

/* What a default must look like, per kind (for the error message). */
static bool check_default(const sc_type *t, const yaml_node_t *n, sc_default *d,
                          const char **expected)
{
    const char *s = d->text;
    const char *p = s;
    switch (t->kind) {
    case SC_BOOL:
        *expected = "true or false";
        d->b = strcmp(s, "true") == 0;
        return d->b || strcmp(s, "false") == 0;
    case SC_INT: *expected = "a whole number in the type's range"; return parse_default_int(t, s, d);
    case SC_FLOAT: case SC_DOUBLE: case SC_FLOAT16:
        *expected = "a finite number in the type's range";
        return parse_default_float(t, s, d);
    case SC_DECIMAL:
        *expected = "a decimal number within the precision and scale";
        return parse_decimal(s, t->precision, t->scale, &d->i);
    case SC_UUID: *expected = "a UUID like 123e4567-e89b-12d3-a456-426614174000"; return parse_uuid(s, d->uuid);
    case SC_DATE: *expected = "a date YYYY-MM-DD"; return parse_date(&p, &d->i) && *p == '\0';
    case SC_TIME:
        *expected = "a time HH:MM:SS[.fraction] within the unit";
        return (parse_clock(&p, t->unit, &d->i) && *p == '\0') ||
               (parse_int_text(s, &d->i) && d->i >= 0 && d->i < 86400 * unit_per_second(t->unit));
    case SC_TIMESTAMP:
        *expected = "an RFC 3339 timestamp or a whole number in the unit";
        return parse_timestamp(s, t->unit, &d->i);
    case SC_VARIANT: variant_default_kind(n, d); return true;
    case SC_STRING: case SC_ENUM: case SC_JSON: case SC_BINARY: case SC_BSON: return true;
    default: *expected = NULL; return false;
    }
}

static int parse_default(ld *L, yaml_node_t *n, const char *what, sc_column *c)
{
    char b[48], tn[64];
    sc_type_format(c->type, tn, sizeof tn);
    if (c->required)
        return yp_err(L->d, n, L->err, "%s: default: conflicts with required: true (a default "
                      "fills missing values, so none would be rejected); drop one", what);
    if (n->type != YAML_SCALAR_NODE || yp_is_null(n))
        return yp_err(L->d, n, L->err, "%s: default: expected a single value, found %s", what,
                      yp_describe(n, b, sizeof b));
    if ((c->def.text = strdup(yp_scalar(n))) == NULL)
        return nomem(L->err);
    c->def.set = true;
    const char *expected = NULL;
    if (check_default(c->type, n, &c->def, &expected))
        return PQ_OK;
    if (expected == NULL)
        return yp_err(L->d, n, L->err, "%s: default: not supported for type '%s' (only scalar "
                      "types take a default)", what, tn);
    return yp_err(L->d, n, L->err, "%s: default: %s does not fit type '%s' (expected %s)", what,
                  yp_describe(n, b, sizeof b), tn, expected);
}

/* ---- per-column options ------------------------------------------------- */

static int opt_encoding(ld *L, yaml_node_t *v, const char *what, sc_column *c)
{
    char kw[160], b[160];
    int idx;
    int rc = yp_enum(L->d, v, keypath(kw, sizeof kw, what, "encoding"), enc_names, &idx, L->err);
    if (rc != 0)
        return rc;
    pq_encoding e = enc_values[idx];
    unsigned have = phys_mask(c->type), ok = enc_allowed(e), bad = have & ~ok;
    if (bad != 0) {
        int first = __builtin_ctz(bad);
        mask_names(ok, b, sizeof b);
        return yp_err(L->d, v, L->err, "%s: encoding '%s' is not valid for %s values "
                      "(valid for %s)", what, enc_names[idx], phys_names[first],
                      ok == 0xFFu ? "every type" : b);
    }
    c->opts.encoding = e;
    return PQ_OK;
}

static int opt_compression(ld *L, yaml_node_t *m, const char *what, sc_column *c)
{
    char kw[160];
    yaml_node_t *v = yp_get(L->d, m, "compression"), *lv = yp_get(L->d, m, "compression_level");
    pq_codec codec = PQ_CODEC_UNCOMPRESSED;
    const char *name;
    if (v != NULL) {
        int rc = yp_str(L->d, v, keypath(kw, sizeof kw, what, "compression"), &name, L->err);
        if (rc != 0)
            return rc;
        if (pq_codec_from_name(name, &codec) != 0)
            return yp_err(L->d, v, L->err, "%s: unknown compression '%.40s' (expected none, "
                          "snappy, gzip, brotli, lz4_raw, zstd)", what, name);
        c->opts.codec = (int)codec;
    }
    if (lv == NULL)
        return PQ_OK;
    if (v == NULL)
        return yp_err(L->d, lv, L->err, "%s: compression_level needs compression on the same "
                      "column", what);
    int64_t level;
    pq_err e2;
    int rc = yp_int(L->d, lv, keypath(kw, sizeof kw, what, "compression_level"), -1000000, 1000,
                    &level, L->err);
    if (rc == 0 && pq_codec_check_level(codec, (int)level, &e2) != 0)
        return yp_err(L->d, lv, L->err, "%s: compression_level: %s", what, e2.msg);
    c->opts.codec_level = (int)level;
    return rc;
}

static int opt_dictionary(ld *L, yaml_node_t *v, const char *what, sc_column *c)
{
    char kw[160];
    static const char *const keys[] = {"max_bytes", NULL};
    keypath(kw, sizeof kw, what, "dictionary");
    int rc;
    if (v->type == YAML_MAPPING_NODE) {
        yaml_node_t *mb = yp_get(L->d, v, "max_bytes");
        uint64_t n = 0;
        rc = yp_check_keys(L->d, v, kw, keys, L->err);
        if (rc == 0 && mb != NULL && (rc = yp_size(L->d, mb, kw, (uint64_t)1 << 31, &n, L->err)) == 0 &&
            n == 0)
            rc = yp_err(L->d, mb, L->err, "%s: max_bytes must be at least 1 (use dictionary: "
                        "false to disable)", kw);
        c->opts.dictionary_max_bytes = (size_t)n;
    } else {
        bool on = false;
        rc = yp_bool(L->d, v, kw, &on, L->err);
        if (rc == 0)
            c->opts.dictionary = on;
    }
    if (rc != 0)
        return rc;
    bool wants = c->opts.dictionary == 1 || c->opts.dictionary_max_bytes != 0;
    pq_encoding e = c->opts.encoding;
    /* dictionary: true with another encoding: dictionary first, that
     * encoding when the dictionary outgrows its limit (writer/chunk.c) */
    if (c->opts.dictionary == 0 && e == PQ_ENC_RLE_DICTIONARY)
        return yp_err(L->d, v, L->err, "%s: false conflicts with encoding: dictionary", kw);
    if (wants && phys_mask(c->type) == PH(PQ_BOOLEAN))
        return yp_err(L->d, v, L->err, "%s: booleans are never dictionary-encoded", kw);
    return PQ_OK;
}

static int opt_bloom(ld *L, yaml_node_t *v, const char *what, sc_column *c)
{
    char kw[160], kw2[192];
    static const char *const keys[] = {"fpp", "ndv", NULL};
    keypath(kw, sizeof kw, what, "bloom");
    int rc;
    bool on = true;
    if (v->type == YAML_MAPPING_NODE) {
        yaml_node_t *fpp = yp_get(L->d, v, "fpp"), *ndv = yp_get(L->d, v, "ndv");
        rc = yp_check_keys(L->d, v, kw, keys, L->err);
        if (rc == 0 && fpp && (rc = yp_double(L->d, fpp, keypath(kw2, sizeof kw2, kw, "fpp"),
                                              &c->opts.bloom_fpp, L->err)) == 0 &&
            !(c->opts.bloom_fpp > 0 && c->opts.bloom_fpp < 1))
            rc = yp_err(L->d, fpp, L->err, "%s: fpp must be between 0 and 1 (exclusive), e.g. "
                        "0.01", kw);
        int64_t n = 0;
        if (rc == 0 && ndv && (rc = yp_int(L->d, ndv, keypath(kw2, sizeof kw2, kw, "ndv"), 1,
                                           INT64_MAX, &n, L->err)) == 0)
            c->opts.bloom_ndv = (uint64_t)n;
    } else {
        rc = yp_bool(L->d, v, kw, &on, L->err);
    }
    if (rc != 0)
        return rc;
    c->opts.bloom = on;
    if (on && phys_mask(c->type) == PH(PQ_BOOLEAN))
        return yp_err(L->d, v, L->err, "%s: a bloom filter on a bool column filters nothing", kw);
    return PQ_OK;
}

static int opt_statistics(ld *L, yaml_node_t *v, const char *what, sc_column *c)
{
    char kw[160], kw2[192];
    static const char *const keys[] = {"truncate", NULL};
    keypath(kw, sizeof kw, what, "statistics");
    if (v->type != YAML_MAPPING_NODE) {
        bool on = false;
        int rc = yp_bool(L->d, v, kw, &on, L->err);
        if (rc == 0)
            c->opts.statistics = on;
        return rc;
    }
    yaml_node_t *tr = yp_get(L->d, v, "truncate");
    int64_t n = 0;
    int rc = yp_check_keys(L->d, v, kw, keys, L->err);
    if (rc == 0 && tr)
        rc = yp_int(L->d, tr, keypath(kw2, sizeof kw2, kw, "truncate"), 1, INT32_MAX, &n,
                    L->err);
    c->opts.statistics = 1;
    c->opts.stats_truncate = (size_t)n;
    return rc;
}

static int parse_options(ld *L, yaml_node_t *m, const char *what, sc_column *c)
{
    char kw[160];
    yaml_node_t *v;
    int rc = PQ_OK;
    if ((v = yp_get(L->d, m, "encoding")) != NULL)
        rc = opt_encoding(L, v, what, c);
    rc = rc ? rc : opt_compression(L, m, what, c);
    if (rc == 0 && (v = yp_get(L->d, m, "dictionary")) != NULL)
        rc = opt_dictionary(L, v, what, c);
    if (rc == 0 && (v = yp_get(L->d, m, "bloom")) != NULL)
        rc = opt_bloom(L, v, what, c);
    if (rc == 0 && (v = yp_get(L->d, m, "statistics")) != NULL)
        rc = opt_statistics(L, v, what, c);
    if (rc == 0 && (v = yp_get(L->d, m, "key")) != NULL) {
        char *key = NULL;
        rc = yp_strdup(L->d, v, keypath(kw, sizeof kw, what, "key"), &key, L->err);
        c->opts.key_id = key;
    }
    int64_t id;
    if (rc == 0 && (v = yp_get(L->d, m, "field_id")) != NULL &&
        (rc = yp_int(L->d, v, keypath(kw, sizeof kw, what, "field_id"), 0, INT32_MAX, &id,
                     L->err)) == 0)
        c->field_id = (int32_t)id;
    return rc;
}

/* ---- type parameters given as keys -------------------------------------- */

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
static int target_of(ld *L, yaml_node_t *kn, const char *what, const char *key, sc_type *t,
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

#define K(kind) (1u << (kind))

static int parse_columns(ld *L, yaml_node_t *seq, const char *parent, sc_column **out,
                         size_t *n_out);

static int param_time(ld *L, yaml_node_t *m, const char *what, sc_column *c)
{
    char kw[160];
    yaml_node_t *u = yp_get(L->d, m, "unit"), *z = yp_get(L->d, m, "utc");
    sc_type *t;
    int rc = PQ_OK, idx;
    if (u != NULL && (rc = target_of(L, yp_key_of(L->d, m, u), what, "unit", c->type,
                                     K(SC_TIME) | K(SC_TIMESTAMP), "time/timestamp", &t)) == 0) {
        if (t->has_args)
            return yp_err(L->d, u, L->err, "%s: unit is already given in the type string", what);
        rc = yp_enum(L->d, u, keypath(kw, sizeof kw, what, "unit"), unit_names, &idx, L->err);
        t->unit = (pq_time_unit)(idx + 1);
    }
    if (rc == 0 && z != NULL && (rc = target_of(L, yp_key_of(L->d, m, z), what, "utc", c->type,
                                                K(SC_TIME) | K(SC_TIMESTAMP), "time/timestamp",
                                                &t)) == 0) {
        if (t->has_args)
            return yp_err(L->d, z, L->err, "%s: utc is already given in the type string", what);
        rc = yp_bool(L->d, z, keypath(kw, sizeof kw, what, "utc"), &t->utc, L->err);
    }
    return rc;
}

static int param_geo(ld *L, yaml_node_t *m, const char *what, sc_column *c)
{
    char kw[160];
    yaml_node_t *crs = yp_get(L->d, m, "crs"), *al = yp_get(L->d, m, "algorithm");
    sc_type *t;
    int rc = PQ_OK;
    if (crs != NULL && (rc = target_of(L, yp_key_of(L->d, m, crs), what, "crs", c->type,
                                       K(SC_GEOMETRY) | K(SC_GEOGRAPHY), "geometry/geography",
                                       &t)) == 0)
        rc = yp_strdup(L->d, crs, keypath(kw, sizeof kw, what, "crs"), &t->crs, L->err);
    if (rc == 0 && al != NULL && (rc = target_of(L, yp_key_of(L->d, m, al), what, "algorithm",
                                                 c->type, K(SC_GEOGRAPHY), "geography",
                                                 &t)) == 0) {
        const char *s;
        rc = yp_str(L->d, al, keypath(kw, sizeof kw, what, "algorithm"), &s, L->err);
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

static sc_auto auto_defaults(void)
{
    return (sc_auto){.on = true, .max_columns = SC_AUTO_MAX_COLUMNS,
                     .max_depth = SC_AUTO_MAX_DEPTH, .min_presence = SC_AUTO_MIN_PRESENCE};
}

/* `{auto: {max_columns: N, max_depth: N, min_presence: X}}`: a mapping
 * whose one key is `auto` with a mapping (or nothing) as its value. An
 * object shred of one field named `auto` has a type there instead. */
static bool is_auto_map(ld *L, yaml_node_t *n, yaml_node_t **limits)
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

static int parse_auto_limits(ld *L, yaml_node_t *lim, const char *what, sc_auto *a)
{
    static const char *const keys[] = {"max_columns", "max_depth", "min_presence", NULL};
    char kw[200];
    int64_t v;
    yaml_node_t *n;
    int rc = yp_check_keys(L->d, lim, what, keys, L->err);
    if (rc == 0 && (n = yp_get(L->d, lim, "max_columns")) != NULL &&
        (rc = yp_int(L->d, n, keypath(kw, sizeof kw, what, "max_columns"), 1, 10000, &v,
                     L->err)) == 0)
        a->max_columns = (uint32_t)v;
    if (rc == 0 && (n = yp_get(L->d, lim, "max_depth")) != NULL &&
        (rc = yp_int(L->d, n, keypath(kw, sizeof kw, what, "max_depth"), 1, 16, &v, L->err)) == 0)
        a->max_depth = (uint32_t)v;
    if (rc == 0 && (n = yp_get(L->d, lim, "min_presence")) != NULL &&
        (rc = yp_double(L->d, n, keypath(kw, sizeof kw, what, "min_presence"), &a->min_presence,
                        L->err)) == 0 && !(a->min_presence > 0 && a->min_presence <= 1))
        rc = yp_err(L->d, n, L->err, "%s: min_presence must be above 0 and at most 1", what);
    return rc;
}

/* `shred: auto`, `shred: none` or `{auto: {...}}`: 1 when it was one of
 * these (t->autoshred set), 0 for a shred tree, or an error. */
static int parse_shred_mode(ld *L, yaml_node_t *sh, const char *what, sc_type *t)
{
    const char *s = sh->type == YAML_SCALAR_NODE ? yp_scalar(sh) : NULL;
    yaml_node_t *lim = NULL;
    if (s != NULL && strcmp(s, "none") == 0) {
        t->autoshred = (sc_auto){0};
        return 1;
    }
    if (s != NULL && strcmp(s, "auto") == 0) {
        t->autoshred = auto_defaults();
        return 1;
    }
    if (!is_auto_map(L, sh, &lim))
        return 0;
    t->autoshred = auto_defaults();
    int rc = lim ? parse_auto_limits(L, lim, what, &t->autoshred) : PQ_OK;
    return rc ? rc : 1;
}

static int param_nested(ld *L, yaml_node_t *m, const char *what, const char *parent,
                        const char *path, sc_column *c)
{
    yaml_node_t *f = yp_get(L->d, m, "fields"), *sh = yp_get(L->d, m, "shred");
    sc_type *t;
    int rc = PQ_OK;
    if (f != NULL && (rc = target_of(L, yp_key_of(L->d, m, f), what, "fields", c->type,
                                     K(SC_STRUCT), "struct", &t)) == 0)
        rc = parse_columns(L, f, path, &t->fields, &t->n_fields);
    if (rc == 0 && sh != NULL && (rc = target_of(L, yp_key_of(L->d, m, sh), what, "shred",
                                                 c->type, K(SC_VARIANT), "variant", &t)) == 0) {
        char sub[160];
        fmt_cat(sub, sizeof sub, what, ": shred", "");
        int a = parse_shred_mode(L, sh, sub, t);
        if (a < 0)
            return a;
        if (a == 1 && t->autoshred.on && (parent != NULL || t != c->type))
            return yp_err(L->d, sh, L->err, "%s: shred: auto applies to a top-level variant "
                          "column (expected an explicit shred tree or none here)", what);
        if (a == 1)
            return PQ_OK;
        t->shred = calloc(1, sizeof *t->shred);
        rc = t->shred ? parse_shred(L, sh, sub, t->shred) : nomem(L->err);
    }
    return rc;
}

/* Every struct got fields, every variant a shred root, every primitive its
 * physical type. */
static int finish_type(ld *L, yaml_node_t *tn, const char *what, sc_type *t)
{
    if (t->elem != NULL)
        return finish_type(L, tn, what, t->elem);
    if (t->kind == SC_STRUCT && t->n_fields == 0)
        return yp_err(L->d, tn, L->err, "%s: a struct needs fields: (a list of columns)", what);
    if (t->kind == SC_VARIANT && t->shred == NULL) {
        if ((t->shred = calloc(1, sizeof *t->shred)) == NULL)
            return nomem(L->err);
        t->shred->kind = SC_SHRED_NONE;
        t->shred->pos = (sc_pos){L->s->file, (uint32_t)yp_line(tn), (uint32_t)yp_col(tn)};
    }
    if (t->kind == SC_VARIANT)
        shred_reset_leaves(t->shred);
    if (is_primitive(t->kind))
        set_physical(t);
    return PQ_OK;
}

/* ---- columns ------------------------------------------------------------ */

static const char *const column_keys[] = {
    "name", "type", "from", "required", "default", "encoding", "compression",
    "compression_level", "dictionary", "bloom", "statistics", "key", "field_id", "unit", "utc",
    "crs", "algorithm", "fields", "shred", "ingest_time", NULL};

static int check_name(ld *L, yaml_node_t *n, const char *what, const char *name)
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
static int split_pointer(ld *L, yaml_node_t *n, const char *what, const char *s, sc_column *c)
{
    size_t parts = 0;
    for (const char *p = s; *p; p++)
        parts += *p == '/';
    c->path = calloc(parts, sizeof *c->path);
    if (c->path == NULL)
        return nomem(L->err);
    for (const char *p = s + 1;; p++) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p), o = 0;
        char *seg = malloc(len + 1);
        if (seg == NULL)
            return nomem(L->err);
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

static int split_dotted(ld *L, yaml_node_t *n, const char *what, const char *s, sc_column *c)
{
    size_t parts = 1;
    for (const char *p = s; *p; p++)
        parts += *p == '.';
    c->path = calloc(parts, sizeof *c->path);
    if (c->path == NULL)
        return nomem(L->err);
    for (const char *p = s;;) {
        const char *end = strchr(p, '.');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            return yp_err_at(L->d, n, (size_t)(p - s), L->err, "%s: from: empty key in dotted "
                             "path '%.60s' (for keys containing dots use a JSON Pointer like "
                             "/id.orig_h)", what, s);
        if ((c->path[c->path_len] = strndup(p, len)) == NULL)
            return nomem(L->err);
        c->path_len++;
        if (end == NULL)
            return PQ_OK;
        p = end + 1;
    }
}

static int parse_source(ld *L, yaml_node_t *m, const char *what, bool top, sc_column *c)
{
    char kw[160];
    yaml_node_t *f = yp_get(L->d, m, "from"), *it = yp_get(L->d, m, "ingest_time");
    bool ingest = false;
    int rc = PQ_OK;
    if (it != NULL && (rc = yp_bool(L->d, it, keypath(kw, sizeof kw, what, "ingest_time"),
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
    if (f != NULL && (rc = yp_str(L->d, f, keypath(kw, sizeof kw, what, "from"), &s, L->err)) != 0)
        return rc;
    if (f != NULL && (c->from = strdup(s)) == NULL)
        return nomem(L->err);
    yaml_node_t *at = f ? f : m;
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

static int parse_type_and_params(ld *L, yaml_node_t *m, const char *what, const char *parent,
                                 const char *path, sc_column *c)
{
    yaml_node_t *tn = yp_get(L->d, m, "type");
    if (tn == NULL)
        return yp_err(L->d, m, L->err, "%s: missing key 'type' (expected %s)", what, SC_TYPES);
    int rc = parse_type_string(L, tn, what, &c->type);
    rc = rc ? rc : param_time(L, m, what, c);
    rc = rc ? rc : param_geo(L, m, what, c);
    rc = rc ? rc : param_nested(L, m, what, parent, path, c);
    return rc ? rc : finish_type(L, tn, what, c->type);
}

static int parse_column(ld *L, yaml_node_t *m, const char *parent, size_t index, sc_column *c)
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
    rc = rc ? rc : yp_strdup(L->d, nn, keypath(kw, sizeof kw, what, "name"), &c->name, L->err);
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
        c->type->autoshred = auto_defaults();
    rc = rc ? rc : parse_source(L, m, what, parent == NULL, c);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(L->d, m, "required")) != NULL)
        rc = yp_bool(L->d, v, keypath(kw, sizeof kw, what, "required"), &c->required, L->err);
    if (rc == 0 && (v = yp_get(L->d, m, "default")) != NULL)
        rc = parse_default(L, v, what, c);
    if (rc == 0 && c->def.set && c->source == SC_SRC_INGEST_TIME)
        rc = yp_err(L->d, v, L->err, "%s: default: an ingest_time column is never missing", what);
    return rc ? rc : parse_options(L, m, what, c);
}

static int parse_columns(ld *L, yaml_node_t *seq, const char *parent, sc_column **out,
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
        return nomem(L->err);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        *n_out = i + 1;
        rc = parse_column(L, yp_node(L->d, seq->data.sequence.items.start[i]), parent, i,
                          &(*out)[i]);
        names[i] = (*out)[i].name;
    }
    long dup = rc == 0 ? find_duplicate(names, n) : -1;
    if (dup >= 0) {
        const sc_column *c = &(*out)[dup];
        rc = pq_err_set(L->err, PQ_EINVAL, "%s:%u:%u: column '%s': duplicate name", c->pos.file,
                        c->pos.line, c->pos.col, c->name);
    }
    free(names);
    return rc;
}

/* ---- whole-schema checks ---------------------------------------------- */

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

static int check_field_ids(sc_schema *s, pq_err *err)
{
    size_t k = 0;
    collect_ids(s->columns, s->n_columns, NULL, &k);
    if (k < 2)
        return PQ_OK;
    idref *ids = malloc(k * sizeof *ids);
    if (ids == NULL)
        return nomem(err);
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

static int check_rest(sc_schema *s, pq_err *err)
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

static int layout(sc_schema *s, pq_err *err);

static int load_root(ld *L, yaml_node_t *root)
{
    static const char *const keys[] = {"columns", NULL};
    if (root == NULL)
        return pq_err_set(L->err, PQ_EINVAL, "%s:1:1: schema: empty document (expected "
                          "columns: [...])", L->d->file);
    int rc = yp_check_keys(L->d, root, "schema", keys, L->err);
    yaml_node_t *cols = rc ? NULL : yp_get(L->d, root, "columns");
    if (rc == 0 && cols == NULL)
        return yp_err(L->d, root, L->err, "schema: missing key 'columns'");
    rc = rc ? rc : parse_columns(L, cols, NULL, &L->s->columns, &L->s->n_columns);
    rc = rc ? rc : check_rest(L->s, L->err);
    rc = rc ? rc : check_field_ids(L->s, L->err);
    return rc ? rc : layout(L->s, L->err);
}

int sc_schema_load_node(yp_doc *doc, yaml_node_t *node, sc_schema **out, pq_err *err)
{
    *out = NULL;
    sc_schema *s = calloc(1, sizeof *s);
    if (s == NULL || (s->file = strdup(doc->file)) == NULL) {
        free(s);
        return nomem(err);
    }
    s->rest = -1;
    ld L = {.d = doc, .s = s, .err = err};
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

/* ---- layout: leaf numbering, levels, effective options ------------------ */

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
            return nomem(y->err);
        s->leaves = p;
        y->cap = cap;
    }
    sc_leaf *l = &s->leaves[s->n_leaves];
    *l = (sc_leaf){.column = col, .type = t, .physical = ph, .opts = *o,
                   .path = strdup(path), .max_def = def, .max_rep = rep};
    if (l->path == NULL)
        return nomem(y->err);
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
        return nomem(y->err);
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
        rc = nomem(y->err);
    sh->typed_leaf = sh->kind == SC_SHRED_NONE ? -1 : (int)y->s->n_leaves;
    if (rc == 0 && sh->kind == SC_SHRED_PRIMITIVE)
        rc = lay_type(y, col, sh->type, PQ_OPTIONAL, gdef, grep, tp, o);
    for (size_t i = 0; rc == 0 && i < sh->n_fields; i++) {
        char *fp = join_path(tp, sh->fields[i].name);
        rc = fp ? lay_shred(y, col, sh->fields[i].shred, false, (uint16_t)(gdef + 1), grep, fp, o)
                : nomem(y->err);
        free(fp);
    }
    if (rc == 0 && sh->kind == SC_SHRED_ARRAY) {
        char *ep = join_path(tp, "list.element");
        rc = ep ? lay_shred(y, col, sh->elem, false, (uint16_t)(gdef + 2), (uint16_t)(grep + 1),
                            ep, o)
                : nomem(y->err);
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
                          (uint16_t)(t->rep + 1), p, o) : nomem(y->err);
        break;
    case SC_MAP:
        p = join_path(path, "key_value.key");
        rc = p ? add_leaf(y, col, NULL, PQ_BYTE_ARRAY, o, p, (uint16_t)(t->def + 1),
                          (uint16_t)(t->rep + 1)) : nomem(y->err);
        free(p);
        p = rc ? NULL : join_path(path, "key_value.value");
        rc = rc ? rc : p ? lay_type(y, col, t->elem, PQ_OPTIONAL, (uint16_t)(t->def + 1),
                                    (uint16_t)(t->rep + 1), p, o) : nomem(y->err);
        break;
    case SC_STRUCT:
        for (size_t i = 0; rc == 0 && i < t->n_fields; i++) {
            sc_column *f = &t->fields[i];
            pq_column_opts fo = *o;
            merge_opts(&fo, &f->opts);
            char *fp = join_path(path, f->name);
            rc = fp ? lay_type(y, col, f->type, f->required ? PQ_REQUIRED : PQ_OPTIONAL, t->def,
                               t->rep, fp, &fo) : nomem(y->err);
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
    int rc = is_primitive(t->kind) ? add_leaf(y, col, t, t->physical, o, path, t->def, t->rep)
                                   : lay_children(y, col, t, path, o);
    t->n_leaves = (int)y->s->n_leaves - t->leaf;
    return rc;
}

static int layout(sc_schema *s, pq_err *err)
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
        return nomem(err);
    s->keys = keys;
    if ((s->keys[s->n_keys] = strdup(key_id)) == NULL)
        return nomem(err);
    const char *k = s->keys[s->n_keys++];
    for (size_t i = 0; i < s->n_leaves; i++)
        if (strncmp(s->leaves[i].path, path, plen) == 0 &&
            (s->leaves[i].path[plen] == '\0' || s->leaves[i].path[plen] == '.'))
            s->leaves[i].opts.key_id = k;
    return PQ_OK;
}

/* ---- building the pq_schema --------------------------------------------- */

typedef struct bld {
    const sc_schema *spec;
    pq_schema *ps;
    pq_err *err;
} bld;

static int b_leaf(bld *b, int parent, const char *name, pq_repetition r, const sc_type *t,
                  int leaf, int32_t field_id)
{
    pq_node_spec ns = {.name = name, .repetition = r, .field_id = field_id,
                       .opts = &b->spec->leaves[leaf].opts};
    if (t != NULL) {
        ns.type = t->physical;
        ns.type_length = t->type_length;
        ns.logical = type_logical(t);
    } else {
        ns.type = PQ_BYTE_ARRAY;
    }
    int id = pq_schema_add_leaf(b->ps, parent, &ns, b->err);
    return id < 0 ? id : PQ_OK;
}

static int b_group(bld *b, int parent, const char *name, pq_repetition r, pq_logical_kind k,
                   int32_t field_id)
{
    pq_node_spec ns = {.name = name, .repetition = r, .field_id = field_id,
                       .logical = {.kind = k, .variant_version = k == PQ_LT_VARIANT ? 1 : 0}};
    return pq_schema_add_group(b->ps, parent, &ns, b->err);
}

static int b_type(bld *b, int parent, const char *name, pq_repetition r, const sc_type *t,
                  int32_t field_id);

static int b_shred(bld *b, int g, const sc_shred *sh, bool top)
{
    pq_repetition vr = top && sh->kind == SC_SHRED_NONE ? PQ_REQUIRED : PQ_OPTIONAL;
    int rc = b_leaf(b, g, "value", vr, NULL, sh->value_leaf, -1);
    if (rc != 0 || sh->kind == SC_SHRED_NONE)
        return rc;
    if (sh->kind == SC_SHRED_PRIMITIVE)
        return b_leaf(b, g, "typed_value", PQ_OPTIONAL, sh->type, sh->type->leaf, -1);
    if (sh->kind == SC_SHRED_ARRAY) {
        int l = pq_schema_add_list(b->ps, g, "typed_value", PQ_OPTIONAL, -1, b->err);
        int e = l < 0 ? l : b_group(b, l, "element", PQ_REQUIRED, PQ_LT_NONE, -1);
        return e < 0 ? e : b_shred(b, e, sh->elem, false);
    }
    int tv = b_group(b, g, "typed_value", PQ_OPTIONAL, PQ_LT_NONE, -1);
    for (size_t i = 0; tv >= 0 && rc == 0 && i < sh->n_fields; i++) {
        int fg = b_group(b, tv, sh->fields[i].name, PQ_REQUIRED, PQ_LT_NONE, -1);
        rc = fg < 0 ? fg : b_shred(b, fg, sh->fields[i].shred, false);
    }
    return tv < 0 ? tv : rc;
}

static int b_type(bld *b, int parent, const char *name, pq_repetition r, const sc_type *t,
                  int32_t field_id)
{
    int g, rc = PQ_OK;
    switch (t->kind) {
    case SC_LIST:
        g = pq_schema_add_list(b->ps, parent, name, r, field_id, b->err);
        return g < 0 ? g : b_type(b, g, "element", PQ_OPTIONAL, t->elem, -1);
    case SC_MAP: {
        g = pq_schema_add_map(b->ps, parent, name, r, field_id, b->err);
        sc_type key = {.kind = SC_STRING, .physical = PQ_BYTE_ARRAY};
        rc = g < 0 ? g : b_leaf(b, g, "key", PQ_REQUIRED, &key, t->leaf, -1);
        return rc ? rc : b_type(b, g, "value", PQ_OPTIONAL, t->elem, -1);
    }
    case SC_STRUCT:
        g = b_group(b, parent, name, r, PQ_LT_NONE, field_id);
        for (size_t i = 0; g >= 0 && rc == 0 && i < t->n_fields; i++) {
            const sc_column *f = &t->fields[i];
            rc = b_type(b, g, f->name, f->required ? PQ_REQUIRED : PQ_OPTIONAL, f->type,
                        f->field_id);
        }
        return g < 0 ? g : rc;
    case SC_VARIANT:
        g = b_group(b, parent, name, r, PQ_LT_VARIANT, field_id);
        rc = g < 0 ? g : b_leaf(b, g, "metadata", PQ_REQUIRED, NULL, t->metadata_leaf, -1);
        return rc ? rc : b_shred(b, g, t->shred, true);
    default:
        return b_leaf(b, parent, name, r, t, t->leaf, field_id);
    }
}

/* The layout computed at load time is what shredders use; a mismatch with
 * the writer's own numbering would put values in the wrong columns. */
static int check_layout(const sc_schema *spec, const pq_schema *ps, pq_err *err)
{
    if (pq_schema_num_leaves(ps) != spec->n_leaves)
        return pq_err_set(err, PQ_ESTATE, "schema: internal: %zu leaves built, %zu laid out",
                          pq_schema_num_leaves(ps), spec->n_leaves);
    for (size_t i = 0; i < spec->n_leaves; i++) {
        const sc_leaf *l = &spec->leaves[i];
        if (pq_schema_max_def(ps, i) != l->max_def || pq_schema_max_rep(ps, i) != l->max_rep ||
            strcmp(pq_schema_leaf_path(ps, i), l->path) != 0)
            return pq_err_set(err, PQ_ESTATE, "schema: internal: leaf %zu '%s' laid out as '%s' "
                              "(def %u/%u, rep %u/%u)", i, pq_schema_leaf_path(ps, i), l->path,
                              pq_schema_max_def(ps, i), l->max_def, pq_schema_max_rep(ps, i),
                              l->max_rep);
    }
    return PQ_OK;
}

int sc_build_parquet_schema(const sc_schema *spec, pq_schema **out, pq_err *err)
{
    *out = NULL;
    bld b = {.spec = spec, .ps = pq_schema_new("schema"), .err = err};
    if (b.ps == NULL)
        return nomem(err);
    int rc = PQ_OK;
    for (size_t i = 0; rc == 0 && i < spec->n_columns; i++) {
        const sc_column *c = &spec->columns[i];
        rc = b_type(&b, 0, c->name, c->required ? PQ_REQUIRED : PQ_OPTIONAL, c->type,
                    c->field_id);
    }
    rc = rc ? rc : pq_schema_finish(b.ps, err);
    rc = rc ? rc : check_layout(spec, b.ps, err);
    if (rc != 0) {
        pq_schema_destroy(b.ps);
        return rc;
    }
    *out = b.ps;
    return PQ_OK;
}

/* ---- per-file schemas (automatic Variant shredding) --------------------- */

sc_shred *sc_shred_new(void)
{
    sc_shred *s = calloc(1, sizeof *s);
    if (s != NULL) {
        s->kind = SC_SHRED_NONE;
        s->value_leaf = s->typed_leaf = -1;
    }
    return s;
}

void sc_shred_free(sc_shred *s)
{
    free_shred(s);
}

sc_type *sc_type_new_shred_prim(sc_kind kind, int bit_width, int precision, int scale)
{
    sc_type *t = new_type(kind);
    if (t == NULL)
        return NULL;
    t->bit_width = bit_width;
    t->is_signed = true;
    t->precision = precision;
    t->scale = scale;
    t->utc = true;
    set_physical(t);
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

/* Copies c into an all-zero d; false when out of memory (d freeable). */
static bool clone_column(sc_column *d, const sc_column *c)
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
        ok = clone_column(&d->fields[i], &t->fields[i]);
    if (ok && t->elem != NULL)
        ok = (d->elem = clone_type(t->elem)) != NULL;
    if (ok && t->shred != NULL)
        ok = (d->shred = clone_shred(t->shred)) != NULL;
    if (!ok) {
        free_type(d);
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
        free_shred(d);
        return NULL;
    }
    return d;
}

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
        ok = clone_column(&s->columns[i], &base->columns[i]);
        sc_type *t = s->columns[i].type;
        if (ok && roots[i] != NULL && t->kind == SC_VARIANT) {
            free_shred(t->shred);
            t->shred = roots[i];
            roots[i] = NULL;
            t->autoshred.on = false;
        }
    }
    for (size_t i = 0; i < base->n_columns; i++) {
        free_shred(roots[i]);
        roots[i] = NULL;
    }
    int rc = ok ? layout(s, err) : nomem(err);
    if (rc != 0) {
        sc_schema_free(s);
        return rc;
    }
    derive_keys(base, s);
    *out = s;
    return PQ_OK;
}

/* ---- shred trees as JSON ------------------------------------------------ */

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
