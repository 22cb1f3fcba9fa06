/* typeinfo.c - what a column-spec type is called and how it is stored:
 * the names of types (the type-string keywords, sc_type_format), units and
 * physical types, the "what: key" paths and repeated-name check of error
 * messages, and the mapping of each type onto a Parquet physical and
 * logical type (LogicalTypes.md). The bottom layer of schema/colspec/: it
 * calls no other part.
 *
 * Thread: whichever loads a schema (config load, `parqd check`, a file's
 * per-file schema in the pipeline); nothing here keeps state. */
#include "colspec_int.h"

#include "logical.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sc_fmt_cat(char *buf, size_t len, const char *a, const char *b, const char *c)
{
    const char *parts[3] = {a, b, c};
    size_t o = 0;
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && o + 1 < len; p++)
            buf[o++] = *p;
    buf[o] = '\0';
}

/* "what: key" into buf, cut to fit (a plain copy: snprintf would make GCC
 * warn about truncation that is intended here). */
char *sc_keypath(char *buf, size_t len, const char *what, const char *key)
{
    sc_fmt_cat(buf, len, what, ": ", key);
    return buf;
}

/* ---- names of things ---------------------------------------------------- */

static const sc_prim prims[] = {
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

const char *sc_kind_name(const sc_type *t)
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

const sc_prim *sc_prim_find(const char *name)
{
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (strcmp(prims[i].name, name) == 0)
            return &prims[i];
    return NULL;
}

const char *const sc_unit_names[] = {"ms", "us", "ns", NULL};
const char *const sc_phys_names[] = {"boolean", "int32", "int64", "int96", "float",
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
        snprintf(tmp, sizeof tmp, "%s(%s,%s)", sc_kind_name(t), sc_unit_names[t->unit - 1],
                 t->utc ? "utc" : "local");
        fput(f, tmp);
        return;
    default:
        fput(f, sc_kind_name(t));
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

void sc_mask_names(unsigned mask, char *buf, size_t len)
{
    fmt f = {buf, len, 0};
    buf[0] = '\0';
    for (int i = 0; i < 8; i++)
        if (mask & SC_PH(i)) {
            if (f.o)
                fput(&f, ", ");
            fput(&f, sc_phys_names[i]);
        }
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
long sc_find_duplicate(const char **names, size_t n)
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

/* ---- physical mapping ------------------------------------------------- */

static int32_t decimal_bytes(int precision)
{
    int32_t n = 1;
    while (pq_decimal_max_precision(n) < precision)
        n++;
    return n;
}

/* Sets physical/type_length of a primitive from its (final) parameters. */
void sc_set_physical(sc_type *t)
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

pq_logical sc_type_logical(const sc_type *t)
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

bool sc_is_primitive(sc_kind k)
{
    return k != SC_LIST && k != SC_MAP && k != SC_STRUCT && k != SC_VARIANT;
}

static unsigned shred_mask(const sc_shred *s);

/* Physical types of every leaf under t (for checking encodings). */
unsigned sc_phys_mask(const sc_type *t)
{
    switch (t->kind) {
    case SC_LIST: return sc_phys_mask(t->elem);
    case SC_MAP: return SC_PH(PQ_BYTE_ARRAY) | sc_phys_mask(t->elem);
    case SC_STRUCT: {
        unsigned m = 0;
        for (size_t i = 0; i < t->n_fields; i++)
            m |= sc_phys_mask(t->fields[i].type);
        return m;
    }
    case SC_VARIANT: return SC_PH(PQ_BYTE_ARRAY) | (t->shred ? shred_mask(t->shred) : 0);
    default: return SC_PH(t->physical);
    }
}

static unsigned shred_mask(const sc_shred *s)
{
    unsigned m = SC_PH(PQ_BYTE_ARRAY);
    if (s->kind == SC_SHRED_PRIMITIVE)
        m |= SC_PH(s->type->physical);
    for (size_t i = 0; i < s->n_fields; i++)
        m |= shred_mask(s->fields[i].shred);
    if (s->elem)
        m |= shred_mask(s->elem);
    return m;
}
