/* walk_order.c - the sort order of a column (LogicalTypes.md "sort
 * order", parquet.thrift ColumnOrder) decided from the schema alone,
 * comparison of two values in it, the running min/max of a page or chunk,
 * and values formatted for messages. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk.h"

uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

void put_le32(uint8_t *p, uint32_t v)
{
    for (size_t i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void put_le64(uint8_t *p, uint64_t v)
{
    for (size_t i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static bool elem_named(const tr_node *el, const char *name)
{
    size_t len;
    const uint8_t *p = tr_field_bin(el, 4, &len);
    return p != NULL && len == strlen(name) && memcmp(p, name, len) == 0;
}

/* The LogicalType union member (parquet.thrift field id), 0 = none. */
static int logical_id(const tr_node *el)
{
    const tr_node *lt = tr_field_struct(el, 10);
    return (lt != NULL && lt->n == 1) ? lt->kids[0].fid : 0;
}

/* Variant `metadata` and `value` leaves hold Variant-encoded bytes, whose
 * order is undefined (VARIANT in ColumnOrder). `typed_value` leaves of a
 * shredded Variant keep their own type's order: VariantShredding.md
 * expects their statistics to be used for skipping. */
static bool variant_bytes_leaf(const pqf_file *f, const pqf_leaf *leaf)
{
    for (size_t i = 0; i + 1 < leaf->depth; i++)
        if (logical_id(pqf_schema_at(f, leaf->chain[i])) == 16)
            return elem_named(leaf->elem, "metadata") || elem_named(leaf->elem, "value");
    return false;
}

/* LogicalTypes.md, by annotation; an annotation on a physical type it
 * does not allow leaves the order undefined. */
static ord_kind logical_order(const tr_node *el, int type, int32_t tlen,
                              const char **name, bool *text)
{
    static const char *const names[] = { NULL, "STRING", "MAP", "LIST", "ENUM",
        "DECIMAL", "DATE", "TIME", "TIMESTAMP", NULL, "INTEGER", "UNKNOWN",
        "JSON", "BSON", "UUID", "FLOAT16", "VARIANT", "GEOMETRY", "GEOGRAPHY",
        "FILE" };
    bool ints = type == PQ_INT32 || type == PQ_INT64;
    bool bin = type == PQ_BYTE_ARRAY || type == PQ_FIXED_LEN_BYTE_ARRAY;
    int id = logical_id(el);
    *name = (id > 0 && id < 20 && names[id]) ? names[id] : "an unknown logical type";
    switch (id) {
    case 1: case 4: case 12:
        *text = true;
        return type == PQ_BYTE_ARRAY ? ORD_BYTES : ORD_NONE;
    case 13: return type == PQ_BYTE_ARRAY ? ORD_BYTES : ORD_NONE;
    case 14: return type == PQ_FIXED_LEN_BYTE_ARRAY && tlen == 16 ? ORD_BYTES : ORD_NONE;
    case 5: return ints ? ORD_SIGNED : bin ? ORD_DECIMAL : ORD_NONE;
    case 6: return type == PQ_INT32 ? ORD_SIGNED : ORD_NONE;
    case 7: case 8: return ints ? ORD_SIGNED : ORD_NONE;
    case 10: {
        bool sgn = tr_field_bool(&tr_field_struct(el, 10)->kids[0], 2, true);
        *name = sgn ? "INTEGER(signed)" : "INTEGER(unsigned)";
        return !ints ? ORD_NONE : sgn ? ORD_SIGNED : ORD_UNSIGNED;
    }
    case 15: return type == PQ_FIXED_LEN_BYTE_ARRAY && tlen == 2 ? ORD_FLOAT : ORD_NONE;
    default: return ORD_NONE;   /* MAP, LIST, UNKNOWN, VARIANT, GEO*, FILE */
    }
}

/* Files without a LogicalType: the ConvertedType, else the physical type. */
static ord_kind converted_order(int64_t ct, int type, const char **name, bool *text)
{
    bool ints = type == PQ_INT32 || type == PQ_INT64;
    bool bin = type == PQ_BYTE_ARRAY || type == PQ_FIXED_LEN_BYTE_ARRAY;
    *name = pqf_converted_name((int)ct);
    switch (ct) {
    case 0: case 4: case 19:
        *text = true;
        return type == PQ_BYTE_ARRAY ? ORD_BYTES : ORD_NONE;
    case 20: return type == PQ_BYTE_ARRAY ? ORD_BYTES : ORD_NONE;
    case 5: return ints ? ORD_SIGNED : bin ? ORD_DECIMAL : ORD_NONE;
    case 6: case 7: case 8: case 9: case 10:
    case 15: case 16: case 17: case 18: return ints ? ORD_SIGNED : ORD_NONE;
    case 11: case 12: case 13: case 14: return ints ? ORD_UNSIGNED : ORD_NONE;
    default: return ORD_NONE;   /* INTERVAL, MAP, LIST... */
    }
}

static ord_kind physical_order(int type)
{
    switch (type) {
    case PQ_BOOLEAN: return ORD_BOOLEAN;
    case PQ_INT32: case PQ_INT64: return ORD_SIGNED;
    case PQ_INT96: return ORD_INT96;
    case PQ_FLOAT: case PQ_DOUBLE: return ORD_FLOAT;
    default: return ORD_BYTES;
    }
}

static size_t type_width(const pqf_leaf *leaf)
{
    switch (leaf->type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return leaf->type_length > 0 ? (size_t)leaf->type_length : 0;
    default: return 0;
    }
}

void leaf_order(const pqf_file *f, size_t col, col_order *o)
{
    const pqf_leaf *leaf = &f->leaves[col];
    const char *name = pqf_type_name(leaf->type);
    memset(o, 0, sizeof *o);
    if (logical_id(leaf->elem) != 0)
        o->kind = logical_order(leaf->elem, leaf->type, leaf->type_length, &name, &o->text);
    else if (tr_has(leaf->elem, 6))
        o->kind = converted_order(tr_field_int(leaf->elem, 6, -1), leaf->type, &name, &o->text);
    else
        o->kind = physical_order(leaf->type);
    if (variant_bytes_leaf(f, leaf)) {
        o->kind = ORD_NONE;
        name = "VARIANT metadata/value";
    }
    o->width = type_width(leaf);
    if (o->kind != ORD_NONE && leaf->type == PQ_FIXED_LEN_BYTE_ARRAY && o->width == 0)
        o->kind = ORD_NONE;   /* no type_length: no value to compare */
    snprintf(o->name, sizeof o->name, "%s", name);
    const tr_node *orders = tr_field_list(f->meta, 7);
    const tr_node *u = tr_list_at(orders, col);
    o->declared = orders == NULL ? 0 : (u != NULL && u->n == 1) ? u->kids[0].fid : -1;
    o->total = o->declared == 2 && o->kind == ORD_FLOAT;
}

/* Length every bound of a fixed-width order must have; 0 = variable. */
size_t fixed_len(const col_order *o)
{
    switch (o->kind) {
    case ORD_BOOLEAN: return 1;
    case ORD_NONE: return 0;
    default: return o->width;   /* BYTE_ARRAY: 0 */
    }
}

static uint64_t float_bits(const col_order *o, const uint8_t *p)
{
    return o->width == 2 ? (uint64_t)(p[0] | p[1] << 8) : o->width == 4 ? le32(p) : le64(p);
}

bool is_nan(const col_order *o, const uint8_t *p)
{
    uint64_t b = float_bits(o, p);
    switch (o->width) {
    case 2: return (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0;
    case 4: return (b & 0x7f800000) == 0x7f800000 && (b & 0x7fffff) != 0;
    default:
        return (b & 0x7ff0000000000000u) == 0x7ff0000000000000u &&
               (b & 0xfffffffffffffu) != 0;
    }
}

bool float_neg(const col_order *o, const uint8_t *p)
{
    return (p[o->width - 1] & 0x80) != 0;
}

double float_val(const col_order *o, const uint8_t *p)
{
    uint64_t b = float_bits(o, p);
    if (o->width == 2) {
        int e = (int)(b >> 10 & 0x1f);
        double m = (double)(b & 0x3ff);
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m != 0 ? NAN : INFINITY)
                                                    : ldexp(m + 1024, e - 25);
        return (b & 0x8000) ? -v : v;
    }
    if (o->width == 4) {
        uint32_t u = (uint32_t)b;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* IEEE 754 totalOrder as an unsigned key: -NaN < -inf < ... < -0 < +0 <
 * ... < +inf < +NaN, distinct bit patterns distinct keys. */
static uint64_t total_key(const col_order *o, const uint8_t *p)
{
    unsigned bits = (unsigned)o->width * 8;
    uint64_t b = float_bits(o, p), sign = (uint64_t)1 << (bits - 1);
    uint64_t mask = bits == 64 ? UINT64_MAX : (sign << 1) - 1;
    return (b & sign) ? (~b & mask) : (b | sign);
}

#define CMP3(x, y) (((x) > (y)) - ((x) < (y)))

static int bytes_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    size_t n = la < lb ? la : lb;
    int c = n ? memcmp(a, b, n) : 0;
    return c != 0 ? CMP3(c, 0) : CMP3(la, lb);
}

/* Two's complement big-endian of any lengths: sign-extend to the longer. */
static int decimal_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    bool na = la > 0 && (a[0] & 0x80), nb = lb > 0 && (b[0] & 0x80);
    if (na != nb)
        return na ? -1 : 1;
    uint8_t ext = na ? 0xff : 0x00;
    size_t n = la > lb ? la : lb;
    for (size_t i = 0; i < n; i++) {
        uint8_t x = i < n - la ? ext : a[i - (n - la)];
        uint8_t y = i < n - lb ? ext : b[i - (n - lb)];
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

/* Compares two PLAIN values (no length prefix) of this column; fixed
 * widths must have been checked. NaNs compare as numbers (unordered) under
 * TYPE_ORDER: callers keep them out. */
int ord_cmp(const col_order *o, const uint8_t *a, size_t la, const uint8_t *b,
            size_t lb)
{
    switch (o->kind) {
    case ORD_SIGNED:
        if (o->width == 4)
            return CMP3((int32_t)le32(a), (int32_t)le32(b));
        return CMP3((int64_t)le64(a), (int64_t)le64(b));
    case ORD_UNSIGNED:
        return o->width == 4 ? CMP3(le32(a), le32(b)) : CMP3(le64(a), le64(b));
    case ORD_BOOLEAN: return CMP3(a[0] & 1, b[0] & 1);
    case ORD_FLOAT:
        if (o->total)
            return CMP3(total_key(o, a), total_key(o, b));
        return CMP3(float_val(o, a), float_val(o, b));
    case ORD_DECIMAL: return decimal_cmp(a, la, b, lb);
    case ORD_INT96: {
        int32_t da = (int32_t)le32(a + 8), db = (int32_t)le32(b + 8);
        return da != db ? CMP3(da, db) : CMP3((int64_t)le64(a), (int64_t)le64(b));
    }
    default: return bytes_cmp(a, la, b, lb);
    }
}

/* Replaces *cur by cand when cand is more extreme (want -1: smaller). */
static void keep_extreme(const col_order *o, vref *cur, vref cand, int want)
{
    if (cand.p == NULL)
        return;
    if (cur->p == NULL || ord_cmp(o, cand.p, cand.len, cur->p, cur->len) * want > 0)
        *cur = cand;
}

void fold_value(const col_order *o, vacc *a, const uint8_t *p, size_t len)
{
    vref v = { p, len };
    a->n++;
    if (o->width == 0)
        a->ba_bytes += (int64_t)len;
    if (o->kind == ORD_NONE)
        return;
    if (o->kind == ORD_FLOAT && is_nan(o, p)) {
        a->nans++;
        if (o->total) {
            keep_extreme(o, &a->nan_min, v, -1);
            keep_extreme(o, &a->nan_max, v, 1);
        }
        return;
    }
    keep_extreme(o, &a->min, v, -1);
    keep_extreme(o, &a->max, v, 1);
}

void merge_vacc(const col_order *o, vacc *into, const vacc *from)
{
    into->n += from->n;
    into->nans += from->nans;
    into->ba_bytes += from->ba_bytes;
    keep_extreme(o, &into->min, from->min, -1);
    keep_extreme(o, &into->max, from->max, 1);
    keep_extreme(o, &into->nan_min, from->nan_min, -1);
    keep_extreme(o, &into->nan_max, from->nan_max, 1);
}

/* Copies the bounds out of the page buffers into one allocation. */
int pin_vacc(vacc *v, uint8_t **own)
{
    vref *refs[4] = { &v->min, &v->max, &v->nan_min, &v->nan_max };
    size_t total = 0, pos = 0;
    for (size_t i = 0; i < 4; i++)
        total += refs[i]->p ? refs[i]->len : 0;
    *own = malloc(total ? total : 1);
    if (*own == NULL)
        return -1;
    for (size_t i = 0; i < 4; i++) {
        if (refs[i]->p == NULL)
            continue;
        if (refs[i]->len)
            memcpy(*own + pos, refs[i]->p, refs[i]->len);
        refs[i]->p = *own + pos;
        pos += refs[i]->len;
    }
    return 0;
}

/* The bound a writer must store: the non-NaN extreme, or under
 * IEEE_754_TOTAL_ORDER the NaN extreme when every value is NaN. */
vref want_bound(const col_order *o, const vacc *v, bool is_max)
{
    vref r = is_max ? v->max : v->min;
    if (r.p == NULL && o->total)
        r = is_max ? v->nan_max : v->nan_min;
    return r;
}

static const char *fmt_hex(const uint8_t *p, size_t len, char *buf, size_t cap)
{
    size_t pos = (size_t)snprintf(buf, cap, "0x");
    for (size_t i = 0; i < len && i < 24 && pos + 3 < cap; i++)
        pos += (size_t)snprintf(buf + pos, cap - pos, "%02x", p[i]);
    if (len > 24 || len == 0)
        snprintf(buf + pos, cap - pos, "%s (%zu bytes)", len ? ".." : "", len);
    return buf;
}

static const char *fmt_bytes(const uint8_t *p, size_t len, char *buf, size_t cap)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] < 0x20 || p[i] > 0x7e || p[i] == '"')
            return fmt_hex(p, len, buf, cap);
    if (len <= 48)
        snprintf(buf, cap, "\"%.*s\"", (int)len, (const char *)p);
    else
        snprintf(buf, cap, "\"%.40s\"... (%zu bytes)", (const char *)p, len);
    return buf;
}

/* A value for messages: numbers as numbers, text quoted, else hex. */
const char *fmt_val(const col_order *o, const uint8_t *p, size_t len, char *buf,
                    size_t cap)
{
    size_t fixed = fixed_len(o);
    if (p == NULL)
        return "(none)";
    if (fixed != 0 && len != fixed)
        return fmt_hex(p, len, buf, cap);
    switch (o->kind) {
    case ORD_SIGNED:
        snprintf(buf, cap, "%lld", o->width == 4 ? (long long)(int32_t)le32(p)
                                                 : (long long)(int64_t)le64(p));
        return buf;
    case ORD_UNSIGNED:
        snprintf(buf, cap, "%llu", o->width == 4 ? (unsigned long long)le32(p)
                                                 : (unsigned long long)le64(p));
        return buf;
    case ORD_BOOLEAN: return (p[0] & 1) ? "true" : "false";
    case ORD_FLOAT:
        if (is_nan(o, p))
            snprintf(buf, cap, "NaN (0x%0*llx)", (int)o->width * 2,
                     (unsigned long long)float_bits(o, p));
        else
            snprintf(buf, cap, "%.*g", o->width == 8 ? 17 : 9, float_val(o, p));
        return buf;
    case ORD_INT96:
        snprintf(buf, cap, "day %d + %lld ns", (int32_t)le32(p + 8), (long long)le64(p));
        return buf;
    case ORD_BYTES: return fmt_bytes(p, len, buf, cap);
    default: return fmt_hex(p, len, buf, cap);
    }
}

/* RFC 3629 well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF). */
bool utf8_valid(const uint8_t *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = p[i];
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0 || n > len - i)
            return false;
        uint32_t cp = n == 1 ? c : (uint32_t)(c & (0x7f >> n));
        for (size_t k = 1; k < n; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (p[i + k] & 0x3f);
        }
        static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n;
    }
    return true;
}
