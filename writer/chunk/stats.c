/* stats.c - column statistics by sort order (parquet.thrift Statistics,
 * ColumnOrder and ColumnIndex comments; LogicalTypes.md sort orders,
 * DECIMAL, FLOAT16) and SizeStatistics level histograms.
 *
 * Each add_* call switches on the order once and runs a tight loop that
 * finds the batch's min/max; the stored bounds are touched (and for byte
 * arrays copied) at most once per batch, so the hot path never allocates
 * per value. */
#include "stats.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "err.h"
#include "schema_tree.h"

/* ---- sort order ---------------------------------------------------------- */

static pq_sort_order physical_order(pq_physical_type type)
{
    switch (type) {
    case PQ_BOOLEAN: return PQ_ORDER_BOOLEAN;
    case PQ_INT32:
    case PQ_INT64: return PQ_ORDER_SIGNED;
    case PQ_INT96: return PQ_ORDER_INT96;
    case PQ_FLOAT: return PQ_ORDER_FLOAT;
    case PQ_DOUBLE: return PQ_ORDER_DOUBLE;
    case PQ_BYTE_ARRAY:
    case PQ_FIXED_LEN_BYTE_ARRAY: return PQ_ORDER_BYTES;
    }
    return PQ_ORDER_NONE;
}

pq_sort_order pq_sort_order_for(pq_physical_type type, const pq_logical *lt)
{
    bool ints = type == PQ_INT32 || type == PQ_INT64;
    bool bytes = type == PQ_BYTE_ARRAY || type == PQ_FIXED_LEN_BYTE_ARRAY;
    if (lt == NULL || lt->kind == PQ_LT_NONE)
        return physical_order(type);
    switch (lt->kind) {
    case PQ_LT_STRING:
    case PQ_LT_ENUM:
    case PQ_LT_JSON:
    case PQ_LT_BSON: return type == PQ_BYTE_ARRAY ? PQ_ORDER_BYTES : PQ_ORDER_NONE;
    case PQ_LT_UUID: return type == PQ_FIXED_LEN_BYTE_ARRAY ? PQ_ORDER_BYTES : PQ_ORDER_NONE;
    case PQ_LT_DECIMAL:
        return ints ? PQ_ORDER_SIGNED : bytes ? PQ_ORDER_DECIMAL_BE : PQ_ORDER_NONE;
    case PQ_LT_DATE:
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP: return ints ? PQ_ORDER_SIGNED : PQ_ORDER_NONE;
    case PQ_LT_INTEGER:
        if (!ints)
            return PQ_ORDER_NONE;
        return lt->is_signed ? PQ_ORDER_SIGNED : PQ_ORDER_UNSIGNED;
    case PQ_LT_FLOAT16:
        return type == PQ_FIXED_LEN_BYTE_ARRAY ? PQ_ORDER_FLOAT16 : PQ_ORDER_NONE;
    default:
        /* INTERVAL, LIST, MAP, VARIANT, GEOMETRY, GEOGRAPHY, UNKNOWN:
         * undefined order (or never a value), so no min/max. */
        return PQ_ORDER_NONE;
    }
}

pq_sort_order pq_leaf_sort_order(const pq_node *n)
{
    return n->variant_binary ? PQ_ORDER_NONE : pq_sort_order_for(n->type, &n->logical);
}

int pq_stats_column_order(pq_sort_order order)
{
    return order == PQ_ORDER_INT96 ? 3 : 1;
}

/* ---- lifecycle ----------------------------------------------------------- */

static size_t physical_width(pq_physical_type type, size_t type_length)
{
    switch (type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32:
    case PQ_FLOAT: return 4;
    case PQ_INT64:
    case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return type_length;
    case PQ_BYTE_ARRAY: return 0;
    }
    return 0;
}

/* A mismatched pair is our bug (schema code validates types); degrade to
 * "no min/max" rather than misread memory in release builds. */
static bool order_fits(pq_sort_order order, pq_physical_type type, size_t width)
{
    switch (order) {
    case PQ_ORDER_NONE: return true;
    case PQ_ORDER_SIGNED:
    case PQ_ORDER_UNSIGNED: return type == PQ_INT32 || type == PQ_INT64;
    case PQ_ORDER_BOOLEAN: return type == PQ_BOOLEAN;
    case PQ_ORDER_FLOAT: return type == PQ_FLOAT;
    case PQ_ORDER_DOUBLE: return type == PQ_DOUBLE;
    case PQ_ORDER_FLOAT16: return type == PQ_FIXED_LEN_BYTE_ARRAY && width == 2;
    case PQ_ORDER_BYTES:
    case PQ_ORDER_DECIMAL_BE:
        return type == PQ_BYTE_ARRAY || (type == PQ_FIXED_LEN_BYTE_ARRAY && width > 0);
    case PQ_ORDER_INT96: return type == PQ_INT96;
    }
    return false;
}

void pq_stats_init(pq_stats *s, pq_sort_order order, pq_physical_type type,
                   size_t type_length)
{
    size_t width = physical_width(type, type_length);
    assert(order_fits(order, type, width));
    s->order = order_fits(order, type, width) ? order : PQ_ORDER_NONE;
    s->type = type;
    s->width = width;
    pq_buf_init(&s->min_bytes);
    pq_buf_init(&s->max_bytes);
    pq_stats_reset(s);
}

void pq_stats_free(pq_stats *s)
{
    pq_buf_free(&s->min_bytes);
    pq_buf_free(&s->max_bytes);
}

void pq_stats_reset(pq_stats *s)
{
    s->null_count = 0;
    s->nan_count = 0;
    s->value_count = 0;
    s->byte_array_bytes = 0;
    s->has_min_max = false;
    s->lost = false;
    s->min.u = 0;
    s->max.u = 0;
    pq_buf_reset(&s->min_bytes);
    pq_buf_reset(&s->max_bytes);
}

/* ---- comparisons of byte-shaped values ----------------------------------- */

typedef int (*cmp_fn)(const uint8_t *a, size_t la, const uint8_t *b, size_t lb);

/* The first byte decides most comparisons of ids and paths against the
 * running min and max, without a call into memcmp. */
static int cmp_bytes(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    if (la > 0 && lb > 0 && a[0] != b[0])
        return (int)a[0] - (int)b[0];
    size_t common = la < lb ? la : lb;
    int c = common ? memcmp(a, b, common) : 0; /* memcmp(NULL, .., 0) is UB */
    if (c != 0)
        return c;
    return (la > lb) - (la < lb);
}

/* Two's complement big-endian of any lengths: sign-extend the shorter one
 * on the fly. With equal signs, unsigned byte order is numeric order. An
 * empty value reads as 0. */
static int cmp_decimal(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    bool na = la > 0 && (a[0] & 0x80), nb = lb > 0 && (b[0] & 0x80);
    if (na != nb)
        return na ? -1 : 1;
    uint8_t ext = na ? 0xFF : 0x00;
    size_t len = la > lb ? la : lb;
    for (size_t i = 0; i < len; i++) {
        uint8_t x = i < len - la ? ext : a[i - (len - la)];
        uint8_t y = i < len - lb ? ext : b[i - (len - lb)];
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

static int64_t load_i64le(const uint8_t *p)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return (int64_t)v;
}

static int32_t load_i32le(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

/* ColumnOrder INT96_TIMESTAMP_ORDER: days (last 4 bytes, signed LE), then
 * nanoseconds (first 8 bytes, signed LE). */
static int cmp_int96(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    (void)la;
    (void)lb;
    int32_t da = load_i32le(a + 8), db = load_i32le(b + 8);
    if (da != db)
        return da < db ? -1 : 1;
    int64_t na = load_i64le(a), nb = load_i64le(b);
    return (na > nb) - (na < nb);
}

/* FLOAT16 as a monotonic integer key (sign-magnitude to two's
 * complement); -0 and +0 get the same key, as they compare equal. */
static int32_t f16_key(const uint8_t *p)
{
    uint16_t h = (uint16_t)(p[0] | p[1] << 8);
    int32_t mag = h & 0x7FFF;
    return (h & 0x8000) ? -mag : mag;
}

static bool f16_is_nan(const uint8_t *p)
{
    uint16_t h = (uint16_t)(p[0] | p[1] << 8);
    return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0;
}

static int cmp_f16(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    (void)la;
    (void)lb;
    int32_t ka = f16_key(a), kb = f16_key(b);
    return (ka > kb) - (ka < kb);
}

static cmp_fn order_cmp(pq_sort_order order)
{
    switch (order) {
    case PQ_ORDER_DECIMAL_BE: return cmp_decimal;
    case PQ_ORDER_INT96: return cmp_int96;
    case PQ_ORDER_FLOAT16: return cmp_f16;
    default: return cmp_bytes;
    }
}

/* Min/max values as written (PLAIN, no length prefix): fixed-width
 * numbers by value, everything else by the order's byte comparison. Used
 * to find a ColumnIndex's boundary order. */
int pq_stats_compare_plain(pq_sort_order order, const uint8_t *a, size_t la,
                           const uint8_t *b, size_t lb)
{
    if ((order == PQ_ORDER_SIGNED || order == PQ_ORDER_UNSIGNED) && la == lb &&
        (la == 4 || la == 8)) {
        int64_t x = la == 4 ? load_i32le(a) : load_i64le(a);
        int64_t y = la == 4 ? load_i32le(b) : load_i64le(b);
        if (order == PQ_ORDER_SIGNED)
            return (x > y) - (x < y);
        uint64_t ux = la == 4 ? (uint32_t)x : (uint64_t)x, uy = la == 4 ? (uint32_t)y : (uint64_t)y;
        return (ux > uy) - (ux < uy);
    }
    if (order == PQ_ORDER_FLOAT && la == 4 && lb == 4) {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    if (order == PQ_ORDER_DOUBLE && la == 8 && lb == 8) {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    return order_cmp(order)(a, la, b, lb);
}

/* ---- folding a batch's bounds into the stored ones ----------------------- */

static void offer_i(pq_stats *s, int64_t lo, int64_t hi)
{
    if (!s->has_min_max || lo < s->min.i)
        s->min.i = lo;
    if (!s->has_min_max || hi > s->max.i)
        s->max.i = hi;
    s->has_min_max = true;
}

static void offer_u(pq_stats *s, uint64_t lo, uint64_t hi)
{
    if (!s->has_min_max || lo < s->min.u)
        s->min.u = lo;
    if (!s->has_min_max || hi > s->max.u)
        s->max.u = hi;
    s->has_min_max = true;
}

static void offer_d(pq_stats *s, double lo, double hi)
{
    if (!s->has_min_max || lo < s->min.d)
        s->min.d = lo;
    if (!s->has_min_max || hi > s->max.d)
        s->max.d = hi;
    s->has_min_max = true;
}

static void store(pq_stats *s, pq_buf *b, const uint8_t *p, size_t len)
{
    pq_buf_reset(b);
    if (pq_buf_append(b, p, len) != 0)
        s->lost = true;
}

static void offer_bytes(pq_stats *s, cmp_fn cmp, const uint8_t *lo, size_t llo,
                        const uint8_t *hi, size_t lhi)
{
    if (s->lost)
        return; /* a stored bound may be missing: nothing to compare with */
    if (!s->has_min_max || cmp(lo, llo, s->min_bytes.data, s->min_bytes.len) < 0)
        store(s, &s->min_bytes, lo, llo);
    if (!s->has_min_max || cmp(hi, lhi, s->max_bytes.data, s->max_bytes.len) > 0)
        store(s, &s->max_bytes, hi, lhi);
    s->has_min_max = true;
}

/* ---- fixed-width scanners (memcpy loads: input may be unaligned) --------- */

#define SCAN_INTEGERS(name, T, offer)                                        \
    static void name(pq_stats *s, const uint8_t *p, size_t n)                \
    {                                                                        \
        T lo, hi, v;                                                         \
        memcpy(&lo, p, sizeof lo);                                           \
        hi = lo;                                                             \
        for (size_t i = 1; i < n; i++) {                                     \
            memcpy(&v, p + i * sizeof v, sizeof v);                          \
            lo = v < lo ? v : lo;                                            \
            hi = v > hi ? v : hi;                                            \
        }                                                                    \
        offer(s, lo, hi);                                                    \
    }

SCAN_INTEGERS(scan_i32, int32_t, offer_i)
SCAN_INTEGERS(scan_i64, int64_t, offer_i)
SCAN_INTEGERS(scan_u32, uint32_t, offer_u)
SCAN_INTEGERS(scan_u64, uint64_t, offer_u)

static void scan_bool(pq_stats *s, const uint8_t *p, size_t n)
{
    uint8_t any = 0, all = 1;
    for (size_t i = 0; i < n; i++) {
        uint8_t v = p[i] != 0;
        any |= v;
        all &= v;
    }
    offer_u(s, all, any);
}

/* NaNs are skipped and counted (TYPE_ORDER writer rules); a batch of only
 * NaNs offers nothing. */
#define SCAN_FLOATS(name, T)                                                 \
    static void name(pq_stats *s, const uint8_t *p, size_t n)                \
    {                                                                        \
        T lo = (T)INFINITY, hi = (T)-INFINITY, v;                            \
        uint64_t nans = 0;                                                   \
        for (size_t i = 0; i < n; i++) {                                     \
            memcpy(&v, p + i * sizeof v, sizeof v);                          \
            if (isnan(v)) {                                                  \
                nans++;                                                      \
                continue;                                                    \
            }                                                                \
            lo = v < lo ? v : lo;                                            \
            hi = v > hi ? v : hi;                                            \
        }                                                                    \
        s->nan_count += nans;                                                \
        if (nans < n)                                                        \
            offer_d(s, lo, hi);                                              \
    }

SCAN_FLOATS(scan_f32, float)
SCAN_FLOATS(scan_f64, double)

/* ---- byte-shaped scanners ------------------------------------------------ */

/* Value i of a batch given either as a fixed stride or as offsets. */
typedef struct batch {
    const uint8_t *base;
    const uint32_t *off; /* NULL: fixed stride */
    size_t stride;
} batch;

static const uint8_t *value_at(const batch *b, size_t i, size_t *len)
{
    if (b->off == NULL) {
        *len = b->stride;
        return b->base + i * b->stride;
    }
    *len = b->off[i + 1] - b->off[i];
    return b->base + b->off[i];
}

static void scan_var(pq_stats *s, cmp_fn cmp, const batch *b, size_t n)
{
    size_t llo, lhi, len;
    const uint8_t *plo = value_at(b, 0, &llo), *phi = plo;
    lhi = llo;
    for (size_t i = 1; i < n; i++) {
        const uint8_t *p = value_at(b, i, &len);
        if (cmp(p, len, plo, llo) < 0) { /* below the min: cannot be above the max */
            plo = p;
            llo = len;
        } else if (cmp(p, len, phi, lhi) > 0) {
            phi = p;
            lhi = len;
        }
    }
    offer_bytes(s, cmp, plo, llo, phi, lhi);
}

static void scan_f16(pq_stats *s, const batch *b, size_t n)
{
    const uint8_t *plo = NULL, *phi = NULL;
    size_t len;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = value_at(b, i, &len);
        if (f16_is_nan(p)) {
            s->nan_count++;
            continue;
        }
        if (plo == NULL || f16_key(p) < f16_key(plo))
            plo = p;
        if (phi == NULL || f16_key(p) > f16_key(phi))
            phi = p;
    }
    if (plo != NULL)
        offer_bytes(s, cmp_f16, plo, 2, phi, 2);
}

/* The first 8 bytes of a value as a big-endian number, zero-padded. A
 * smaller key means a smaller value in unsigned byte order and a larger
 * key a larger one (a shorter value's padding sorts as its end does);
 * only equal keys leave the order to the bytes. */
static inline uint64_t bytes_key(const uint8_t *p, size_t len)
{
    uint64_t k = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (len >= 8) {
        memcpy(&k, p, sizeof k);
        return __builtin_bswap64(k);
    }
#endif
    for (size_t i = 0; i < len && i < 8; i++)
        k |= (uint64_t)p[i] << (56 - 8 * i);
    return k;
}

/* scan_var with cmp_bytes, its compares settled on the values' keys: the
 * strings that do not repeat (ids, paths) are a statistic's most values,
 * and a byte compare per value and bound was 1.5% of a typed convert. */
static void scan_bytes_keyed(pq_stats *s, const batch *b, size_t n)
{
    size_t llo, lhi, len;
    const uint8_t *plo = value_at(b, 0, &llo), *phi = plo;
    lhi = llo;
    uint64_t klo = bytes_key(plo, llo), khi = klo;
    for (size_t i = 1; i < n; i++) {
        const uint8_t *p = value_at(b, i, &len);
        uint64_t k = bytes_key(p, len);
        if (k < klo || (k == klo && cmp_bytes(p, len, plo, llo) < 0)) {
            plo = p; /* below the min: cannot be above the max */
            llo = len;
            klo = k;
        } else if (k > khi || (k == khi && cmp_bytes(p, len, phi, lhi) > 0)) {
            phi = p;
            lhi = len;
            khi = k;
        }
    }
    offer_bytes(s, cmp_bytes, plo, llo, phi, lhi);
}

static bool byte_shaped(pq_sort_order order)
{
    return order == PQ_ORDER_BYTES || order == PQ_ORDER_DECIMAL_BE ||
           order == PQ_ORDER_FLOAT16 || order == PQ_ORDER_INT96;
}

/* Literal comparators per call site let the compiler specialise scan_var
 * instead of calling through a pointer per value. */
static void scan_batch(pq_stats *s, const batch *b, size_t n)
{
    switch (s->order) {
    case PQ_ORDER_FLOAT16: scan_f16(s, b, n); return;
    case PQ_ORDER_DECIMAL_BE: scan_var(s, cmp_decimal, b, n); return;
    case PQ_ORDER_INT96: scan_var(s, cmp_int96, b, n); return;
    default: scan_bytes_keyed(s, b, n); return;
    }
}

/* ---- public feeding API -------------------------------------------------- */

void pq_stats_add_fixed(pq_stats *s, const void *vals, size_t n)
{
    assert(s->width > 0 || s->order == PQ_ORDER_NONE);
    if (n == 0 || s->width == 0)
        return;
    s->value_count += n;
    const uint8_t *p = vals;
    bool wide = s->type == PQ_INT64;
    switch (s->order) {
    case PQ_ORDER_NONE: return;
    case PQ_ORDER_SIGNED: (wide ? scan_i64 : scan_i32)(s, p, n); return;
    case PQ_ORDER_UNSIGNED: (wide ? scan_u64 : scan_u32)(s, p, n); return;
    case PQ_ORDER_BOOLEAN: scan_bool(s, p, n); return;
    case PQ_ORDER_FLOAT: scan_f32(s, p, n); return;
    case PQ_ORDER_DOUBLE: scan_f64(s, p, n); return;
    default: {
        batch b = {p, NULL, s->width};
        scan_batch(s, &b, n);
        return;
    }
    }
}

void pq_stats_add_bytes(pq_stats *s, const uint8_t *heap, const uint32_t *off, size_t n)
{
    static const uint8_t empty[1];
    if (n == 0)
        return;
    s->value_count += n;
    if (s->type == PQ_BYTE_ARRAY)
        s->byte_array_bytes += off[n] - off[0];
    if (s->order == PQ_ORDER_NONE)
        return;
    /* Numbers never arrive as byte arrays, and fixed-width types arriving
     * as offsets must have the physical width; the column layer checks
     * lengths, so a mismatch is our bug: drop min/max, do not misread. */
    assert(byte_shaped(s->order));
    if (!byte_shaped(s->order)) {
        s->lost = true;
        return;
    }
    for (size_t i = 0; s->width > 0 && i < n; i++) {
        assert(off[i + 1] - off[i] == s->width);
        if (off[i + 1] - off[i] != s->width) {
            s->lost = true;
            return;
        }
    }
    batch b = {heap ? heap : empty, off, 0};
    scan_batch(s, &b, n);
}

/* scan_var over the values at the indices in pick. */
static void scan_var_picked(pq_stats *s, cmp_fn cmp, const batch *b, const uint32_t *pick,
                            size_t n)
{
    size_t llo, lhi, len;
    const uint8_t *plo = value_at(b, pick[0], &llo), *phi = plo;
    lhi = llo;
    for (size_t i = 1; i < n; i++) {
        const uint8_t *p = value_at(b, pick[i], &len);
        if (cmp(p, len, plo, llo) < 0) {
            plo = p;
            llo = len;
        } else if (cmp(p, len, phi, lhi) > 0) {
            phi = p;
            lhi = len;
        }
    }
    offer_bytes(s, cmp, plo, llo, phi, lhi);
}

void pq_stats_add_bytes_picked(pq_stats *s, const uint8_t *heap, const uint32_t *off,
                               size_t n, const uint32_t *pick, size_t n_pick)
{
    static const uint8_t empty[1];
    if (n == 0)
        return;
    s->value_count += n;
    s->byte_array_bytes += off[n] - off[0];
    if (s->order == PQ_ORDER_NONE || n_pick == 0)
        return;
    assert(s->type == PQ_BYTE_ARRAY && s->width == 0 && byte_shaped(s->order));
    batch b = {heap ? heap : empty, off, 0};
    switch (s->order) {
    case PQ_ORDER_DECIMAL_BE: scan_var_picked(s, cmp_decimal, &b, pick, n_pick); return;
    case PQ_ORDER_BYTES: scan_var_picked(s, cmp_bytes, &b, pick, n_pick); return;
    default: s->lost = true; return; /* not a BYTE_ARRAY order: our bug */
    }
}

void pq_stats_add_nulls(pq_stats *s, uint64_t n)
{
    s->null_count += n;
}

int pq_stats_merge(pq_stats *into, const pq_stats *from)
{
    if (into->order != from->order || into->type != from->type ||
        into->width != from->width)
        return PQ_EINVAL;
    into->null_count += from->null_count;
    into->nan_count += from->nan_count;
    into->value_count += from->value_count;
    into->byte_array_bytes += from->byte_array_bytes;
    bool was_lost = into->lost || from->lost;
    into->lost = was_lost;
    if (!from->has_min_max)
        return PQ_OK;
    switch (from->order) {
    case PQ_ORDER_NONE: break;
    case PQ_ORDER_SIGNED: offer_i(into, from->min.i, from->max.i); break;
    case PQ_ORDER_UNSIGNED:
    case PQ_ORDER_BOOLEAN: offer_u(into, from->min.u, from->max.u); break;
    case PQ_ORDER_FLOAT:
    case PQ_ORDER_DOUBLE: offer_d(into, from->min.d, from->max.d); break;
    default:
        offer_bytes(into, order_cmp(from->order), from->min_bytes.data,
                    from->min_bytes.len, from->max_bytes.data, from->max_bytes.len);
        break;
    }
    /* Only a failure of this merge is reported; a bound lost earlier was
     * already dropped quietly (has_min_max says so). */
    return into->lost && !was_lost ? PQ_ENOMEM : PQ_OK;
}

bool pq_stats_has_min_max(const pq_stats *s)
{
    return s->has_min_max && !s->lost && s->order != PQ_ORDER_NONE;
}

uint64_t pq_stats_null_count(const pq_stats *s) { return s->null_count; }
uint64_t pq_stats_nan_count(const pq_stats *s) { return s->nan_count; }
uint64_t pq_stats_value_count(const pq_stats *s) { return s->value_count; }
uint64_t pq_stats_byte_array_bytes(const pq_stats *s) { return s->byte_array_bytes; }

void pq_level_histogram_add(uint64_t *hist, const uint16_t *levels, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hist[levels[i]]++;
}

/* ---- truncation of byte-array bounds ------------------------------------- */

/* Length of the well-formed UTF-8 character at p (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF), or 0 if it is not one. */
static size_t utf8_char(const uint8_t *p, size_t avail, uint32_t *cp)
{
    uint8_t c = p[0];
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
               : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || len > avail)
        return 0;
    uint32_t v = len == 1 ? c : c & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3F);
    }
    static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min_for_len[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

static size_t utf8_put(uint8_t *p, uint32_t cp)
{
    if (cp < 0x80) {
        p[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        p[0] = (uint8_t)(0xC0 | cp >> 6);
        p[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        p[0] = (uint8_t)(0xE0 | cp >> 12);
        p[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        p[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    p[0] = (uint8_t)(0xF0 | cp >> 18);
    p[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    p[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    p[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* The longest prefix of at most `limit` bytes that ends on a character
 * boundary, or false when the bytes before the limit are not UTF-8 (then
 * the value is treated as plain binary and cut anywhere). */
static bool utf8_prefix(const uint8_t *p, size_t len, size_t limit, size_t *cut)
{
    size_t pos = 0;
    uint32_t cp;
    while (pos < limit) {
        size_t n = utf8_char(p + pos, len - pos, &cp);
        if (n == 0)
            return false;
        if (pos + n > limit)
            break;
        pos += n;
    }
    *cut = pos;
    return true;
}

/* Appends the smallest character-wise increment of p[0..cut) that fits in
 * cut bytes: bump the last character (skipping surrogates), dropping
 * characters that cannot grow. UTF-8 byte order is code point order, so
 * the result is greater than anything starting with p[0..cut). */
static bool utf8_increment(const uint8_t *p, size_t cut, pq_buf *out, int *rc)
{
    while (cut > 0) {
        size_t start = cut - 1;
        while (start > 0 && (p[start] & 0xC0) == 0x80)
            start--;
        uint32_t cp = 0;
        (void)utf8_char(p + start, cut - start, &cp);
        uint32_t next = cp + 1 == 0xD800 ? 0xE000 : cp + 1;
        uint8_t enc[4];
        size_t n = next <= 0x10FFFF ? utf8_put(enc, next) : 0;
        if (n > 0 && start + n <= cut) {
            *rc = pq_buf_append(out, p, start) != 0 || pq_buf_append(out, enc, n) != 0
                ? PQ_ENOMEM : PQ_OK;
            return true;
        }
        cut = start;
    }
    return false;
}

/* Byte-wise carry: bump the last byte that is not 0xFF, drop the rest. */
static bool bytes_increment(const uint8_t *p, size_t cut, pq_buf *out, int *rc)
{
    while (cut > 0 && p[cut - 1] == 0xFF)
        cut--;
    if (cut == 0)
        return false;
    uint8_t last = (uint8_t)(p[cut - 1] + 1);
    *rc = pq_buf_append(out, p, cut - 1) != 0 || pq_buf_push(out, last) != 0
        ? PQ_ENOMEM : PQ_OK;
    return true;
}

static int put_truncated(const pq_buf *v, size_t truncate, bool is_max, pq_buf *out,
                         bool *exact)
{
    *exact = true;
    if (truncate == 0 || v->len <= truncate)
        return pq_buf_append(out, v->data, v->len);
    size_t cut = truncate;
    bool text = utf8_prefix(v->data, v->len, truncate, &cut);
    int rc = 0;
    if (!is_max) {
        *exact = false;
        return pq_buf_append(out, v->data, cut);
    }
    if (text ? utf8_increment(v->data, cut, out, &rc)
             : bytes_increment(v->data, cut, out, &rc)) {
        *exact = false;
        return rc;
    }
    return pq_buf_append(out, v->data, v->len); /* nothing could be bumped */
}

/* ---- PLAIN encoding of the bounds ---------------------------------------- */

/* TYPE_ORDER: a zero min is written as -0.0 and a zero max as +0.0, so
 * readers need not guess which zeros the page holds. */
static double signed_zero(double d, bool is_max)
{
    return d == 0.0 ? (is_max ? 0.0 : -0.0) : d;
}

static int put_number(const pq_stats *s, bool is_max, pq_buf *out)
{
    switch (s->order) {
    case PQ_ORDER_SIGNED: {
        int64_t i = is_max ? s->max.i : s->min.i;
        return s->type == PQ_INT32 ? pq_buf_put_u32le(out, (uint32_t)i)
                                   : pq_buf_put_u64le(out, (uint64_t)i);
    }
    case PQ_ORDER_UNSIGNED: {
        uint64_t u = is_max ? s->max.u : s->min.u;
        return s->type == PQ_INT32 ? pq_buf_put_u32le(out, (uint32_t)u)
                                   : pq_buf_put_u64le(out, u);
    }
    case PQ_ORDER_BOOLEAN: return pq_buf_push(out, (uint8_t)(is_max ? s->max.u : s->min.u));
    case PQ_ORDER_FLOAT: {
        float f = (float)signed_zero(is_max ? s->max.d : s->min.d, is_max);
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        return pq_buf_put_u32le(out, bits);
    }
    case PQ_ORDER_DOUBLE: {
        double d = signed_zero(is_max ? s->max.d : s->min.d, is_max);
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        return pq_buf_put_u64le(out, bits);
    }
    default: return PQ_EINVAL;
    }
}

static int put_f16(const pq_buf *v, bool is_max, pq_buf *out)
{
    uint8_t h[2] = {v->data[0], v->data[1]};
    if (h[0] == 0 && (h[1] & 0x7F) == 0) /* either zero */
        h[1] = is_max ? 0x00 : 0x80;
    return pq_buf_append(out, h, 2);
}

static int put_bound(const pq_stats *s, size_t truncate, bool is_max, pq_buf *out,
                     bool *exact)
{
    const pq_buf *v = is_max ? &s->max_bytes : &s->min_bytes;
    *exact = true;
    switch (s->order) {
    case PQ_ORDER_BYTES:
        if (s->type != PQ_BYTE_ARRAY)
            truncate = 0; /* a shorter FLBA is not a value of the type */
        return put_truncated(v, truncate, is_max, out, exact);
    case PQ_ORDER_DECIMAL_BE:
    case PQ_ORDER_INT96: return pq_buf_append(out, v->data, v->len);
    case PQ_ORDER_FLOAT16: return put_f16(v, is_max, out);
    default: return put_number(s, is_max, out);
    }
}

int pq_stats_min_max(const pq_stats *s, size_t truncate, pq_buf *min, bool *min_exact,
                     pq_buf *max, bool *max_exact)
{
    if (!pq_stats_has_min_max(s))
        return PQ_ESTATE;
    size_t min_len = min->len;
    if (put_bound(s, truncate, false, min, min_exact) != 0)
        return PQ_ENOMEM;
    if (put_bound(s, truncate, true, max, max_exact) != 0) {
        min->len = min_len;
        return PQ_ENOMEM;
    }
    return PQ_OK;
}
