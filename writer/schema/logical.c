/* logical.c - logical type annotations (LogicalTypes.md): validation
 * against physical types, ConvertedType compatibility pairs, and names for
 * the textual schema. */
#include "logical.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int32_t pq_decimal_max_precision(int32_t n_bytes)
{
    if (n_bytes <= 0)
        return 0;
    /* floor(log10(2^(8n-1) - 1)), LogicalTypes.md DECIMAL */
    return (int32_t)floor(log10(pow(2.0, 8.0 * n_bytes - 1) - 1));
}

static int want_type(const pq_node *n, pq_physical_type t, const char *what, pq_err *err)
{
    if (n->type == t)
        return PQ_OK;
    return pq_err_set(err, PQ_EINVAL, "schema: '%s': %s", n->name, what);
}

static int want_fixed(const pq_node *n, int32_t len, const char *what, pq_err *err)
{
    if (n->type == PQ_FIXED_LEN_BYTE_ARRAY && n->type_length == len)
        return PQ_OK;
    return pq_err_set(err, PQ_EINVAL, "schema: '%s': %s", n->name, what);
}

static int validate_decimal(const pq_node *n, pq_err *err)
{
    int32_t p = n->logical.precision, sc = n->logical.scale;
    int32_t max;
    switch (n->type) {
    case PQ_INT32: max = 9; break;
    case PQ_INT64: max = 18; break;
    case PQ_FIXED_LEN_BYTE_ARRAY: max = pq_decimal_max_precision(n->type_length); break;
    case PQ_BYTE_ARRAY: max = INT32_MAX; break;
    default:
        return pq_err_set(err, PQ_EINVAL,
                          "schema: '%s': DECIMAL needs int32, int64, fixed or binary", n->name);
    }
    if (p < 1 || p > max)
        return pq_err_set(err, PQ_EINVAL, "schema: '%s': DECIMAL precision %d out of 1..%d",
                          n->name, (int)p, (int)max);
    if (sc < 0 || sc > p)
        return pq_err_set(err, PQ_EINVAL, "schema: '%s': DECIMAL scale %d out of 0..%d",
                          n->name, (int)sc, (int)p);
    return PQ_OK;
}

static int validate_integer(const pq_node *n, pq_err *err)
{
    int8_t w = n->logical.bit_width;
    if (w != 8 && w != 16 && w != 32 && w != 64)
        return pq_err_set(err, PQ_EINVAL, "schema: '%s': INTEGER bit width %d not 8/16/32/64",
                          n->name, w);
    return want_type(n, w == 64 ? PQ_INT64 : PQ_INT32,
                     w == 64 ? "64-bit INTEGER needs int64" : "INTEGER(8/16/32) needs int32", err);
}

static int validate_group(const pq_schema *s, const pq_node *n, pq_err *err)
{
    pq_logical_kind k = n->logical.kind;
    if (k == PQ_LT_NONE)
        return PQ_OK;
    if (k == PQ_LT_LIST || k == PQ_LT_MAP) {
        if (n->n_children != 1 || s->nodes[n->children[0]].repetition != PQ_REPEATED ||
            s->nodes[n->children[0]].is_leaf)
            return pq_err_set(err, PQ_EINVAL, "schema: '%s': %s needs one repeated group child",
                              n->name, k == PQ_LT_LIST ? "LIST" : "MAP");
        const pq_node *mid = &s->nodes[n->children[0]];
        if (k == PQ_LT_LIST && mid->n_children != 1)
            return pq_err_set(err, PQ_EINVAL, "schema: '%s': list needs exactly one element", n->name);
        if (k == PQ_LT_MAP && (mid->n_children != 2 ||
                               s->nodes[mid->children[0]].repetition != PQ_REQUIRED))
            return pq_err_set(err, PQ_EINVAL, "schema: '%s': map needs a required key and a value",
                              n->name);
        return PQ_OK;
    }
    if (k == PQ_LT_VARIANT)
        return PQ_OK;
    return pq_err_set(err, PQ_EINVAL, "schema: '%s': this annotation needs a primitive", n->name);
}

int pq_logical_validate(const pq_schema *s, const pq_node *n, pq_err *err)
{
    if (!n->is_leaf)
        return validate_group(s, n, err);
    if (n->type == PQ_FIXED_LEN_BYTE_ARRAY && n->type_length <= 0)
        return pq_err_set(err, PQ_EINVAL, "schema: '%s': fixed needs a positive length", n->name);
    switch (n->logical.kind) {
    case PQ_LT_NONE: case PQ_LT_UNKNOWN:
        return PQ_OK;
    case PQ_LT_STRING: case PQ_LT_ENUM: case PQ_LT_JSON: case PQ_LT_BSON:
    case PQ_LT_GEOMETRY: case PQ_LT_GEOGRAPHY:
        return want_type(n, PQ_BYTE_ARRAY, "annotation needs binary (BYTE_ARRAY)", err);
    case PQ_LT_UUID: return want_fixed(n, 16, "UUID needs fixed_len_byte_array(16)", err);
    case PQ_LT_FLOAT16: return want_fixed(n, 2, "FLOAT16 needs fixed_len_byte_array(2)", err);
    case PQ_LT_INTERVAL: return want_fixed(n, 12, "INTERVAL needs fixed_len_byte_array(12)", err);
    case PQ_LT_DECIMAL: return validate_decimal(n, err);
    case PQ_LT_DATE: return want_type(n, PQ_INT32, "DATE needs int32", err);
    case PQ_LT_INTEGER: return validate_integer(n, err);
    case PQ_LT_TIME:
        return want_type(n, n->logical.unit == PQ_UNIT_MILLIS ? PQ_INT32 : PQ_INT64,
                         "TIME(MILLIS) needs int32, TIME(MICROS/NANOS) int64", err);
    case PQ_LT_TIMESTAMP: return want_type(n, PQ_INT64, "TIMESTAMP needs int64", err);
    default:
        return pq_err_set(err, PQ_EINVAL, "schema: '%s': annotation not valid on a primitive",
                          n->name);
    }
}

static pq_converted_type integer_converted(const pq_logical *lt)
{
    static const pq_converted_type sig[] = {PQ_CT_INT_8, PQ_CT_INT_16, PQ_CT_INT_32, PQ_CT_INT_64};
    static const pq_converted_type uns[] = {PQ_CT_UINT_8, PQ_CT_UINT_16, PQ_CT_UINT_32,
                                            PQ_CT_UINT_64};
    int i = lt->bit_width == 8 ? 0 : lt->bit_width == 16 ? 1 : lt->bit_width == 32 ? 2 : 3;
    return lt->is_signed ? sig[i] : uns[i];
}

/* Legacy annotations are written for local (non-UTC) TIME and TIMESTAMP
 * too: LogicalTypes.md requires it for forward compatibility. */
pq_converted_type pq_logical_converted(const pq_node *n)
{
    const pq_logical *lt = &n->logical;
    switch (lt->kind) {
    case PQ_LT_STRING: return PQ_CT_UTF8;
    case PQ_LT_MAP: return PQ_CT_MAP;
    case PQ_LT_LIST: return PQ_CT_LIST;
    case PQ_LT_ENUM: return PQ_CT_ENUM;
    case PQ_LT_DECIMAL: return PQ_CT_DECIMAL;
    case PQ_LT_DATE: return PQ_CT_DATE;
    case PQ_LT_JSON: return PQ_CT_JSON;
    case PQ_LT_BSON: return PQ_CT_BSON;
    case PQ_LT_INTERVAL: return PQ_CT_INTERVAL;
    case PQ_LT_INTEGER: return integer_converted(lt);
    case PQ_LT_TIME:
        return lt->unit == PQ_UNIT_MILLIS ? PQ_CT_TIME_MILLIS
             : lt->unit == PQ_UNIT_MICROS ? PQ_CT_TIME_MICROS : PQ_CT_NONE;
    case PQ_LT_TIMESTAMP:
        return lt->unit == PQ_UNIT_MILLIS ? PQ_CT_TIMESTAMP_MILLIS
             : lt->unit == PQ_UNIT_MICROS ? PQ_CT_TIMESTAMP_MICROS : PQ_CT_NONE;
    default: return PQ_CT_NONE;
    }
}

static const char *unit_name(pq_time_unit u)
{
    return u == PQ_UNIT_MILLIS ? "MILLIS" : u == PQ_UNIT_MICROS ? "MICROS" : "NANOS";
}

static int print_f(pq_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int print_f(pq_buf *out, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return PQ_EINVAL;
    return pq_buf_append(out, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

int pq_logical_print(const pq_node *n, pq_buf *out)
{
    const pq_logical *lt = &n->logical;
    static const char *simple[] = {
        [PQ_LT_STRING] = "STRING", [PQ_LT_MAP] = "MAP", [PQ_LT_LIST] = "LIST",
        [PQ_LT_ENUM] = "ENUM", [PQ_LT_DATE] = "DATE", [PQ_LT_UNKNOWN] = "UNKNOWN",
        [PQ_LT_JSON] = "JSON", [PQ_LT_BSON] = "BSON", [PQ_LT_UUID] = "UUID",
        [PQ_LT_FLOAT16] = "FLOAT16", [PQ_LT_VARIANT] = "VARIANT",
    };
    switch (lt->kind) {
    case PQ_LT_NONE: return PQ_OK;
    case PQ_LT_DECIMAL: return print_f(out, " (DECIMAL(%d,%d))", (int)lt->precision, (int)lt->scale);
    case PQ_LT_TIME: case PQ_LT_TIMESTAMP:
        return print_f(out, " (%s(%s,%s))", lt->kind == PQ_LT_TIME ? "TIME" : "TIMESTAMP",
                       unit_name(lt->unit), lt->utc ? "true" : "false");
    case PQ_LT_INTEGER:
        return print_f(out, " (INTEGER(%d,%s))", lt->bit_width, lt->is_signed ? "true" : "false");
    case PQ_LT_INTERVAL: return print_f(out, " (INTERVAL)");
    case PQ_LT_VARIANT:
        if (lt->variant_version > 0)
            return print_f(out, " (VARIANT(%d))", lt->variant_version);
        return print_f(out, " (VARIANT)");
    case PQ_LT_GEOMETRY:
        return print_f(out, " (GEOMETRY(%s))", lt->crs ? lt->crs : "OGC:CRS84");
    case PQ_LT_GEOGRAPHY:
        return print_f(out, " (GEOGRAPHY(%s,%d))", lt->crs ? lt->crs : "OGC:CRS84",
                       (int)lt->algorithm);
    default:
        if ((size_t)lt->kind < sizeof simple / sizeof simple[0] && simple[lt->kind])
            return print_f(out, " (%s)", simple[lt->kind]);
        return PQ_OK;
    }
}
