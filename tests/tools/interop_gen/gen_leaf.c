/* gen_leaf.c - one leaf value from its generator (enum gen): edge values
 * first (INT64_MIN/MAX, NaN, -0.0, subnormals, empty and non-ASCII
 * strings...), then seeded random ones; rising values for the G_MONO_*
 * generators. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

static const char *const STR_PIECES[] = {
    "", "a", "héllo", "日本語テキスト", "emoji 🎉🚀", "quote \" and '", "back\\slash",
    "line\nbreak", "tab\there", "\x01\x1f ctl", "Ω≈ç√∫", "zero-width\xe2\x80\x8bspace", "x",
};
#define N_PIECES (sizeof STR_PIECES / sizeof STR_PIECES[0])
static const char *const ENUM_VALUES[] = { "RED", "GREEN", "BLUE", "ÜBER", "" };

static uint8_t *bytes_copy(const void *p, size_t n)
{
    uint8_t *b = arena_alloc(n ? n : 1);
    memcpy(b, p, n);
    return b;
}

static void set_str(gval *v, const char *s, size_t n)
{
    v->p = bytes_copy(s, n);
    v->n = n;
}

static void put_le32(uint8_t *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}
static void put_le64(uint8_t *p, uint64_t x)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}
uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Exact value of an IEEE half. */
static double half_value(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 0x1f, f = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp(f, -24);
    else if (e == 31)
        v = f ? NAN : INFINITY;
    else
        v = ldexp(1024 + f, e - 25);
    return sign ? -v : v;
}

static i128 pow10_128(int n)
{
    i128 p = 1;
    while (n-- > 0)
        p *= 10;
    return p;
}

static i128 rnd_i128(i128 lim)
{
    /* uniform-ish in [-lim, lim] */
    __extension__ unsigned __int128 span = (unsigned __int128)lim * 2 + 1;
    __extension__ unsigned __int128 r = ((unsigned __int128)rnd() << 64) | rnd();
    __extension__ unsigned __int128 x = r % span, l = (unsigned __int128)lim;
    return x >= l ? (i128)(x - l) : -(i128)(l - x);
}

/* Minimal big-endian two's complement length of a decimal's unscaled value. */
static size_t dec_min_len(i128 v)
{
    size_t n = 1;
    while (n < 16) {
        i128 lo = -((i128)1 << (8 * n - 1)), hi = ((i128)1 << (8 * n - 1)) - 1;
        if (v >= lo && v <= hi)
            break;
        n++;
    }
    return n;
}

static void dec_bytes(gval *v, size_t len)
{
    v->p = arena_alloc(len);
    v->n = len;
    i128 x = v->dec;
    for (size_t i = 0; i < len; i++) {
        v->p[len - 1 - i] = (uint8_t)(x & 0xff);
        x >>= 8; /* arithmetic shift keeps the sign */
    }
}

/* v->dec in the leaf's physical form: INT32/INT64, or big-endian bytes
 * (FIXED_LEN_BYTE_ARRAY: the type length; BYTE_ARRAY: as few as fit). */
static void store_decimal(gval *v, const gtype *t)
{
    if (t->phys == PQ_INT32 || t->phys == PQ_INT64)
        v->i = (int64_t)v->dec;
    else if (t->phys == PQ_FIXED_LEN_BYTE_ARRAY)
        dec_bytes(v, (size_t)t->tlen);
    else
        dec_bytes(v, dec_min_len(v->dec));
}

static void gen_string(gval *v, const gtype *t)
{
    char buf[512];
    size_t n = 0;
    if (t->nvals < N_PIECES) {
        set_str(v, STR_PIECES[t->nvals], strlen(STR_PIECES[t->nvals]));
        return;
    }
    int parts = (int)rnd_below(4);
    for (int i = 0; i < parts; i++) {
        const char *p = STR_PIECES[rnd_below(N_PIECES)];
        size_t l = strlen(p);
        if (n + l < sizeof buf) {
            memcpy(buf + n, p, l);
            n += l;
        }
    }
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%" PRIu64, rnd_below(1000000000));
    set_str(v, buf, n);
}

/* Rows of the file being written: the G_MONO_* generators rise with the
 * row number across the type's whole range, so row groups have disjoint
 * min/max and a reader that prunes by statistics must get them right. */
size_t cur_rows;

/* [lo, hi] split into cur_rows steps: a value in step `row`. */
static i128 mono(i128 lo, i128 hi, size_t row)
{
    /* unsigned arithmetic: hi - lo spans the whole 128-bit range, which
     * overflows a signed subtraction (UB that UBSan rightly aborts on) */
    __extension__ unsigned __int128 span = (unsigned __int128)hi - (unsigned __int128)lo;
    __extension__ unsigned __int128 step = span / (cur_rows ? cur_rows : 1);
    __extension__ unsigned __int128 off = step * row + (step ? rnd() % step : 0);
    return (i128)((unsigned __int128)lo + off);
}

/* Booleans and integers: the type's edge values first, then random ones.
 * Returns false for a generator of another family. */
static bool gen_int(const gtype *t, gval *v, uint64_t k, size_t row)
{
    switch (t->gen) {
    case G_BOOL:
        v->i = k < 2 ? (int64_t)k : (int64_t)(rnd() & 1);
        break;
    case G_I8: {
        static const int64_t e[] = { INT8_MIN, INT8_MAX, 0, -1, 1 };
        v->i = k < 5 ? e[k] : rnd_range(INT8_MIN, INT8_MAX);
        break;
    }
    case G_I16: {
        static const int64_t e[] = { INT16_MIN, INT16_MAX, 0, -1, 1 };
        v->i = k < 5 ? e[k] : rnd_range(INT16_MIN, INT16_MAX);
        break;
    }
    case G_I32: {
        static const int64_t e[] = { INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN, INT32_MAX };
        v->i = k < 7 ? e[k] : rnd_range(INT32_MIN, INT32_MAX);
        break;
    }
    case G_I64: {
        static const int64_t e[] = { INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN, INT64_MAX };
        v->i = k < 7 ? e[k] : (int64_t)rnd();
        break;
    }
    case G_U8: v->i = k < 2 ? (int64_t)(k ? UINT8_MAX : 0) : rnd_range(0, UINT8_MAX); break;
    case G_U16: v->i = k < 2 ? (int64_t)(k ? UINT16_MAX : 0) : rnd_range(0, UINT16_MAX); break;
    case G_U32: {
        static const int64_t e[] = { 0, UINT32_MAX, 1, 0x80000000ll, 0x7fffffffll };
        v->i = k < 5 ? e[k] : rnd_range(0, UINT32_MAX);
        break;
    }
    case G_U64: {
        static const uint64_t e[] = { 0, UINT64_MAX, 1, 1ull << 63, (1ull << 63) - 1 };
        v->i = (int64_t)(k < 5 ? e[k] : rnd());
        break;
    }
    case G_I32_FEW: v->i = rnd_range(-5, 20) * 1000003; break;
    case G_I64_FEW: v->i = (int64_t)(rnd_below(40) * 0x100000001ull) - 7; break;
    case G_I64_SEQ: v->i = (int64_t)row * 1000 + (int64_t)rnd_below(7) - 1000000; break;
    case G_I32_SMALLDELTA: v->i = (int64_t)(row % 5000) * 3 - (int64_t)rnd_below(4); break;
    default:
        return false;
    }
    return true;
}

/* Values whose distinct count changes every 1000 rows (see G_STR_PHASE).
 * Returns false for a generator of another family. */
static bool gen_phase(const gtype *t, gval *v, uint64_t k, size_t row)
{
    (void)k;
    switch (t->gen) {
    /* Few distinct values in rows 0-999, 2000-2999, ...; all distinct in
     * the others: with 1000-row row groups, chunks alternate between
     * dictionary and fallback encoding within one column. */
    case G_STR_PHASE: {
        char buf[64];
        int n = (row / 1000) % 2 ? snprintf(buf, sizeof buf, "unique-%zu-%" PRIu64 "-ü", row, rnd())
                                 : snprintf(buf, sizeof buf, "few-%" PRIu64, rnd_below(5));
        set_str(v, buf, (size_t)n);
        break;
    }
    case G_I64_PHASE: v->i = (row / 1000) % 2 ? (int64_t)rnd() : (int64_t)rnd_below(7) - 3; break;
    case G_DOUBLE_PHASE: {
        uint64_t bits = rnd();
        if ((row / 1000) % 2)
            memcpy(&v->d, &bits, 8);
        else
            v->d = (double)rnd_below(9) / 8.0;
        break;
    }
    default:
        return false;
    }
    return true;
}

/* Values rising with the row number (see cur_rows). Returns false for a
 * generator of another family. */
static bool gen_mono(const gtype *t, gval *v, uint64_t k, size_t row)
{
    (void)k;
    switch (t->gen) {
    case G_MONO_I32: v->i = (int64_t)mono(INT32_MIN, INT32_MAX, row); break;
    case G_MONO_U32: v->i = (int64_t)mono(0, UINT32_MAX, row); break;
    case G_MONO_I64: v->i = (int64_t)mono(INT64_MIN, INT64_MAX, row); break;
    case G_MONO_U64: v->i = (int64_t)(uint64_t)mono(0, (i128)UINT64_MAX, row); break;
    case G_MONO_FLOAT: case G_MONO_DOUBLE: {
        /* -1e6 .. 1e6, with NaN, -0.0 and +0.0 sprinkled in */
        double d = (double)mono(-1000000000, 1000000000, row) / 1000.0;
        if (row % 37 == 36)
            d = NAN;
        else if (row == cur_rows / 2)
            d = -0.0;
        else if (row == cur_rows / 2 + 1)
            d = 0.0;
        v->d = t->gen == G_MONO_FLOAT ? (double)(float)d : d;
        break;
    }
    case G_MONO_DEC: {
        i128 lim = pow10_128(t->lt.precision) - 1;
        v->dec = mono(-lim, lim, row);
        store_decimal(v, t);
        break;
    }
    case G_MONO_STR: {
        /* prefixes in UTF-8 byte order, then the row number */
        static const char *const pre[] = { "", "0", "A", "Z", "a", "z", "~", "é", "ü", "日本", "🎉" };
        const size_t np = sizeof pre / sizeof pre[0];
        char buf[64];
        int n = snprintf(buf, sizeof buf, "%s%06zu", pre[row * np / (cur_rows ? cur_rows : 1)], row);
        set_str(v, buf, (size_t)n);
        break;
    }
    case G_MONO_DATE: v->i = -200000 + (int64_t)row * 97 + (int64_t)rnd_below(97); break;
    default:
        return false;
    }
    return true;
}

/* FLOAT, DOUBLE, FLOAT16 and DECIMAL: edge values (NaN, infinities, -0.0,
 * subnormals, the precision's limits) first, then random ones. Returns
 * false for a generator of another family. */
static bool gen_float(const gtype *t, gval *v, uint64_t k, size_t row)
{
    (void)row;
    switch (t->gen) {
    case G_FLOAT: {
        static const float e[] = { NAN, INFINITY, -INFINITY, -0.0f, 0.0f, FLT_MIN, 1.40129846e-45f, FLT_MAX, -FLT_MAX, 1.5f };
        float f;
        if (k < 10) {
            f = e[k];
        } else {
            uint32_t bits = (uint32_t)rnd();
            memcpy(&f, &bits, 4);
        }
        v->d = f;
        break;
    }
    case G_DOUBLE: {
        static const double e[] = { NAN, INFINITY, -INFINITY, -0.0, 0.0, DBL_MIN, 4.9406564584124654e-324, DBL_MAX, -DBL_MAX, 0.1 };
        if (k < 10) {
            v->d = e[k];
        } else {
            uint64_t bits = rnd();
            memcpy(&v->d, &bits, 8);
        }
        break;
    }
    case G_DOUBLE_FEW: v->d = (double)rnd_range(-3, 12) / 4.0; break;
    case G_F16: {
        static const uint16_t e[] = { 0x7e00, 0x7c00, 0xfc00, 0x8000, 0x0000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0x3555 };
        uint16_t h = k < 12 ? e[k] : (uint16_t)rnd();
        v->p = arena_alloc(2);
        v->p[0] = (uint8_t)h;
        v->p[1] = (uint8_t)(h >> 8);
        v->n = 2;
        v->d = half_value(h);
        break;
    }
    case G_DEC: {
        i128 lim = pow10_128(t->lt.precision) - 1;
        const i128 e[] = { lim, -lim, 0, 1, -1 };
        v->dec = k < 5 ? e[k] : rnd_i128(lim);
        store_decimal(v, t);
        break;
    }
    default:
        return false;
    }
    return true;
}

/* Strings, ENUM and JSON. Returns false for a generator of another family. */
static bool gen_text(const gtype *t, gval *v, uint64_t k, size_t row)
{
    switch (t->gen) {
    case G_STR:
        gen_string(v, t);
        break;
    case G_STR_KEY: {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "k%" PRIu64 "é", rnd_below(1000000));
        set_str(v, buf, (size_t)n);
        break;
    }
    case G_STR_FEW: {
        static const char *const few[] = { "alpha", "beta", "gamma", "δέλτα", "", "epsilon epsilon epsilon" };
        const char *s = few[rnd_below(6)];
        set_str(v, s, strlen(s));
        break;
    }
    case G_STR_PREFIX: {
        char buf[128];
        int n = snprintf(buf, sizeof buf, "https://example.org/common/prefix/%05" PRIu64 "/%s",
                         (uint64_t)row / 3, STR_PIECES[rnd_below(N_PIECES)]);
        set_str(v, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
        break;
    }
    case G_STR_BIG: {
        size_t n = k < 1 ? 0 : (size_t)rnd_below(k % 50 == 3 ? 150000 : 3000);
        v->p = arena_alloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            v->p[i] = (uint8_t)('a' + (i * 7 + k) % 26);
        v->n = n;
        break;
    }
    case G_ENUM: {
        const char *s = ENUM_VALUES[k < 5 ? k : rnd_below(5)];
        set_str(v, s, strlen(s));
        break;
    }
    case G_JSON: {
        char buf[160];
        int n;
        switch (k < 4 ? k : rnd_below(4)) {
        case 0: n = snprintf(buf, sizeof buf, "{}"); break;
        case 1: n = snprintf(buf, sizeof buf, "[1,2.5,null,\"x\"]"); break;
        case 2: n = snprintf(buf, sizeof buf, "{\"a\": %" PRId64 ", \"s\": \"h\\u00e9 \\\"q\\\"\"}", (int64_t)rnd()); break;
        default: n = snprintf(buf, sizeof buf, "{\"n\":%" PRIu64 ",\"nested\":{\"ok\":true}}", rnd_below(1000)); break;
        }
        set_str(v, buf, (size_t)n);
        break;
    }
    default:
        return false;
    }
    return true;
}

/* Binary values: BSON, raw bytes, FIXED_LEN_BYTE_ARRAY / UUID, WKB.
 * Returns false for a generator of another family. */
static bool gen_bytes(const gtype *t, gval *v, uint64_t k, size_t row)
{
    (void)row;
    switch (t->gen) {
    case G_BSON: {
        /* {"a": int32} : len, 0x10 "a\0" int32, 0x00 */
        v->p = arena_alloc(12);
        v->n = 12;
        put_le32(v->p, 12);
        v->p[4] = 0x10;
        v->p[5] = 'a';
        v->p[6] = 0;
        put_le32(v->p + 7, (uint32_t)rnd());
        v->p[11] = 0;
        break;
    }
    case G_BIN: {
        size_t n = k == 0 ? 0 : (size_t)rnd_below(48);
        v->p = arena_alloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            v->p[i] = (uint8_t)rnd();
        if (k == 1 && n > 0)
            memset(v->p, 0, n);
        v->n = n;
        break;
    }
    case G_FIXED: case G_UUID: {
        size_t n = (size_t)t->tlen;
        v->p = arena_alloc(n);
        for (size_t i = 0; i < n; i++)
            v->p[i] = k == 0 ? 0 : k == 1 ? 0xff : (uint8_t)rnd();
        v->n = n;
        break;
    }
    case G_WKB: {
        /* little-endian WKB: POINT(x y) or LINESTRING with 2 points */
        bool line = (k % 3) == 2;
        size_t n = line ? 1 + 4 + 4 + 32 : 1 + 4 + 16;
        v->p = arena_alloc(n);
        v->n = n;
        v->p[0] = 1;
        put_le32(v->p + 1, line ? 2 : 1);
        size_t o = 5;
        int npts = 1;
        if (line) {
            put_le32(v->p + o, 2);
            o += 4;
            npts = 2;
        }
        for (int i = 0; i < npts * 2; i++) {
            double c = (double)rnd_range(-180000, 180000) / 1000.0;
            uint64_t bits;
            memcpy(&bits, &c, 8);
            put_le64(v->p + o, bits);
            o += 8;
        }
        break;
    }
    default:
        return false;
    }
    return true;
}

/* DATE, TIME, TIMESTAMP, INT96 and INTERVAL. Returns false for a generator
 * of another family. */
static bool gen_temporal(const gtype *t, gval *v, uint64_t k, size_t row)
{
    (void)row;
    switch (t->gen) {
    case G_DATE: {
        static const int64_t e[] = { 0, -1, 2932896, -719162, 19000 };
        v->i = k < 5 ? e[k] : rnd_range(-1000000, 1000000);
        break;
    }
    case G_TIME_MS: v->i = k < 2 ? (k ? 86399999 : 0) : rnd_range(0, 86399999); break;
    case G_TIME_US: v->i = k < 2 ? (k ? 86399999999ll : 0) : rnd_range(0, 86399999999ll); break;
    case G_TIME_NS: v->i = k < 2 ? (k ? 86399999999999ll : 0) : rnd_range(0, 86399999999999ll); break;
    case G_TS_MS: {
        static const int64_t e[] = { 0, -1, 1, 253402300799999ll, -62135596800000ll };
        v->i = k < 5 ? e[k] : rnd_range(-(int64_t)1e15, (int64_t)1e15);
        break;
    }
    case G_TS_US: {
        static const int64_t e[] = { 0, -1, 1, 253402300799999999ll, -62135596800000000ll };
        v->i = k < 5 ? e[k] : rnd_range(-(int64_t)4e18, (int64_t)4e18);
        break;
    }
    case G_TS_NS: {
        static const int64_t e[] = { 0, -1, 1, 4102444800000000000ll, -4102444800000000000ll };
        v->i = k < 5 ? e[k] : rnd_range(-(int64_t)9e18, (int64_t)9e18);
        break;
    }
    case G_INT96: {
        /* 8 bytes LE nanoseconds of the day, 4 bytes LE Julian day */
        int64_t jd = k < 2 ? 2440588 - (int64_t)k : rnd_range(2440588 - 100000, 2440588 + 100000);
        int64_t nod = k < 2 ? (int64_t)k : rnd_range(0, 86399999999999ll);
        v->p = arena_alloc(12);
        v->n = 12;
        put_le64(v->p, (uint64_t)nod);
        put_le32(v->p + 8, (uint32_t)jd);
        v->i = (jd - 2440588) * 86400000000000ll + nod;
        break;
    }
    case G_INTERVAL: case G_INTERVAL_MAX: {
        uint32_t m, d, ms;
        if (t->gen == G_INTERVAL_MAX) {
            m = k % 2 ? UINT32_MAX : (uint32_t)rnd();
            d = k % 3 ? UINT32_MAX : (uint32_t)rnd();
            ms = k % 5 ? UINT32_MAX : (uint32_t)rnd();
        } else {
            m = k < 1 ? 0 : (uint32_t)rnd_below(1200);
            d = k < 1 ? 0 : (uint32_t)rnd_below(40000);
            ms = k < 1 ? 0 : (uint32_t)rnd_below(86400000u * 2u);
        }
        v->p = arena_alloc(12);
        v->n = 12;
        put_le32(v->p, m);
        put_le32(v->p + 4, d);
        put_le32(v->p + 8, ms);
        break;
    }
    default:
        return false;
    }
    return true;
}

/* One leaf value from its generator's family; k counts the values
 * generated so far, so each family emits its edge values first. */
void gen_leaf(gtype *t, gval *v, size_t row)
{
    uint64_t k = t->nvals++;
    if (gen_int(t, v, k, row) ||
        gen_phase(t, v, k, row) ||
        gen_mono(t, v, k, row) ||
        gen_float(t, v, k, row) ||
        gen_text(t, v, k, row) ||
        gen_bytes(t, v, k, row) ||
        gen_temporal(t, v, k, row))
        return;
    if (t->gen == G_NULL)
        v->null = true;
}
