/* interop_gen.c - writes the interop matrix: one Parquet file per feature
 * (type, nesting, encoding, page version, codec, dictionary fallback, row
 * groups, pages) plus NAME.expect.json with every value written, in the form
 * tests/interop/README.md describes. tests/interop/read.mjs then reads each
 * file with DuckDB, parquet-wasm and hyparquet and compares.
 *
 *   interop_gen OUTDIR [SEED]        (SEED: decimal; default from the clock)
 *
 * Uses only the public API of writer/pq_writer.h. Values are seeded random
 * plus edge values (INT64_MIN/MAX, UINT64 max, NaN, -0.0, subnormals, empty
 * and non-ASCII strings), and the seed is printed first so any run can be
 * repeated. Nested values are shredded here into (rep, def) per leaf with the
 * Dremel rules; our own max levels are checked against pq_schema_max_def/rep.
 * Exit status 1 if any file could not be written (the others are still
 * written, and a failed file leaves neither .parquet nor .expect.json). */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pq_writer.h"

__extension__ typedef __int128 i128;

/* ---- PRNG: xoshiro256** seeded by splitmix64 ----------------------------- */

static uint64_t rng_s[4];

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng_s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rnd(void)
{
    uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;
    rng_s[2] ^= rng_s[0];
    rng_s[3] ^= rng_s[1];
    rng_s[1] ^= rng_s[2];
    rng_s[0] ^= rng_s[3];
    rng_s[2] ^= t;
    rng_s[3] = rotl(rng_s[3], 45);
    return r;
}

static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }
/* [lo, hi] inclusive */
static int64_t rnd_range(int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span == UINT64_MAX)
        return (int64_t)rnd();
    return (int64_t)((uint64_t)lo + rnd_below(span + 1));
}
static int pct(int p) { return (int)rnd_below(100) < p; }

/* ---- arena for one row's values ------------------------------------------ */

/* pad keeps data[] 16-byte aligned (gval holds an __int128). */
typedef struct block { struct block *next; size_t used, cap, pad; unsigned char data[]; } block;
_Static_assert(offsetof(block, data) % 16 == 0, "arena data must be 16-byte aligned");
static block *arena;

static void *arena_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!arena || arena->cap - arena->used < n) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        block *b = malloc(sizeof *b + cap);
        if (!b) {
            fprintf(stderr, "interop_gen: out of memory\n");
            exit(2);
        }
        b->next = arena;
        b->used = 0;
        b->cap = cap;
        arena = b;
    }
    void *p = arena->data + arena->used;
    arena->used += n;
    return p;
}

static void arena_reset(void)
{
    while (arena) {
        block *n = arena->next;
        free(arena);
        arena = n;
    }
}

/* ---- column model -------------------------------------------------------- */

enum kind { K_LEAF, K_STRUCT, K_LIST, K_MAP };

/* Leaf value generators. */
enum gen {
    G_BOOL, G_I8, G_I16, G_I32, G_I64, G_U8, G_U16, G_U32, G_U64,
    G_I32_FEW, G_I64_FEW, G_I64_SEQ, G_I32_SMALLDELTA, G_STR_PHASE, G_I64_PHASE, G_DOUBLE_PHASE,
    G_MONO_I32, G_MONO_U32, G_MONO_I64, G_MONO_U64, G_MONO_FLOAT, G_MONO_DOUBLE, G_MONO_DEC,
    G_MONO_STR, G_MONO_DATE,
    G_FLOAT, G_DOUBLE, G_DOUBLE_FEW, G_F16,
    G_DEC, G_STR, G_STR_FEW, G_STR_PREFIX, G_STR_BIG, G_STR_KEY, G_ENUM, G_JSON, G_BSON,
    G_BIN, G_FIXED, G_UUID, G_DATE, G_TIME_MS, G_TIME_US, G_TIME_NS,
    G_TS_MS, G_TS_US, G_TS_NS, G_INT96, G_INTERVAL, G_INTERVAL_MAX, G_WKB, G_NULL
};

typedef struct gtype gtype;
struct gtype {
    const char *name;
    const char *jtype;           /* expectation "type" */
    enum kind kind;
    pq_repetition rep;
    pq_physical_type phys;
    int32_t tlen;
    pq_logical lt;
    pq_column_opts opts;
    bool has_opts;
    enum gen gen;
    int null_pct;                /* optional nodes: percent of nulls */
    gtype *child[8];
    size_t nchild;
    /* filled when the schema is built */
    int leaf;                    /* leaf ordinal, leaves only */
    uint16_t def_max, rep_max;   /* leaves: our own computation */
    uint16_t entry_rep;          /* list/map: rep level of entries 2.. */
    pq_column *col;
    uint64_t nvals;              /* non-null values generated (edges first) */
};

typedef struct gval {
    bool null;
    int64_t i;                   /* ints, bool, date, time, ts, int96 nanos; uint64 as bits */
    double d;                    /* float, double, float16 value */
    i128 dec;                    /* decimal unscaled */
    uint8_t *p;                  /* bytes for BYTE_ARRAY / FLBA / INT96 */
    size_t n;
    struct gval *items;          /* list elements; map k,v pairs; struct fields */
    size_t nitems;
} gval;

/* Column descriptions and file names live until exit; they are recorded
 * here and freed together. */
static void **owned;
static size_t n_owned, cap_owned;

static void *own(void *p)
{
    if (!p) {
        fprintf(stderr, "interop_gen: out of memory\n");
        exit(2);
    }
    if (n_owned == cap_owned) {
        cap_owned = cap_owned ? 2 * cap_owned : 256;
        void **n = realloc(owned, cap_owned * sizeof *owned);
        if (!n) {
            fprintf(stderr, "interop_gen: out of memory\n");
            exit(2);
        }
        owned = n;
    }
    owned[n_owned++] = p;
    return p;
}

static void free_owned(void)
{
    for (size_t i = 0; i < n_owned; i++)
        free(owned[i]);
    free(owned);
}

static gtype *new_type(void)
{
    gtype *t = own(calloc(1, sizeof *t));
    t->null_pct = 10;
    t->leaf = -1;
    return t;
}

static pq_logical lt_none(void) { pq_logical l; memset(&l, 0, sizeof l); l.kind = PQ_LT_NONE; return l; }
static pq_logical lt_kind(pq_logical_kind k) { pq_logical l = lt_none(); l.kind = k; return l; }
static pq_logical lt_int(int bits, bool sign)
{
    pq_logical l = lt_kind(PQ_LT_INTEGER);
    l.bit_width = (int8_t)bits;
    l.is_signed = sign;
    return l;
}
static pq_logical lt_dec(int p, int s)
{
    pq_logical l = lt_kind(PQ_LT_DECIMAL);
    l.precision = p;
    l.scale = s;
    return l;
}
static pq_logical lt_time(pq_logical_kind k, pq_time_unit u, bool utc)
{
    pq_logical l = lt_kind(k);
    l.unit = u;
    l.utc = utc;
    return l;
}

static gtype *leaf(const char *name, pq_repetition rep, pq_physical_type phys, int32_t tlen,
                   pq_logical lt, const char *jtype, enum gen gen)
{
    gtype *t = new_type();
    t->name = name;
    t->kind = K_LEAF;
    t->rep = rep;
    t->phys = phys;
    t->tlen = tlen;
    t->lt = lt;
    t->jtype = jtype;
    t->gen = gen;
    return t;
}

/* The common leaves, optional unless said otherwise. */
#define OPT PQ_OPTIONAL
#define REQ PQ_REQUIRED
static gtype *l_bool(const char *n, pq_repetition r) { return leaf(n, r, PQ_BOOLEAN, 0, lt_none(), "bool", G_BOOL); }
static gtype *l_i32(const char *n, pq_repetition r, enum gen g) { return leaf(n, r, PQ_INT32, 0, lt_none(), "int32", g); }
static gtype *l_i64(const char *n, pq_repetition r, enum gen g) { return leaf(n, r, PQ_INT64, 0, lt_none(), "int64", g); }
static gtype *l_float(const char *n, pq_repetition r) { return leaf(n, r, PQ_FLOAT, 0, lt_none(), "float", G_FLOAT); }
static gtype *l_double(const char *n, pq_repetition r, enum gen g) { return leaf(n, r, PQ_DOUBLE, 0, lt_none(), "double", g); }
static gtype *l_str(const char *n, pq_repetition r, enum gen g) { return leaf(n, r, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_STRING), "string", g); }
static gtype *l_bin(const char *n, pq_repetition r) { return leaf(n, r, PQ_BYTE_ARRAY, 0, lt_none(), "binary", G_BIN); }
static gtype *l_fixed(const char *n, pq_repetition r, int32_t len) { return leaf(n, r, PQ_FIXED_LEN_BYTE_ARRAY, len, lt_none(), "fixed", G_FIXED); }
static gtype *l_f16(const char *n, pq_repetition r) { return leaf(n, r, PQ_FIXED_LEN_BYTE_ARRAY, 2, lt_kind(PQ_LT_FLOAT16), "float16", G_F16); }
static gtype *l_int(const char *n, int bits, bool sign)
{
    static const char *names[2][4] = { { "uint8", "uint16", "uint32", "uint64" }, { "int8", "int16", "int32", "int64" } };
    static const enum gen gens[2][4] = { { G_U8, G_U16, G_U32, G_U64 }, { G_I8, G_I16, G_I32, G_I64 } };
    int k = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
    return leaf(n, OPT, bits == 64 ? PQ_INT64 : PQ_INT32, 0, lt_int(bits, sign), names[sign][k], gens[sign][k]);
}
static gtype *l_dec(const char *n, pq_physical_type phys, int32_t tlen, int p, int s)
{
    return leaf(n, OPT, phys, tlen, lt_dec(p, s), "decimal", G_DEC);
}

static gtype *group(const char *name, pq_repetition rep, size_t n, gtype **kids)
{
    gtype *t = new_type();
    t->name = name;
    t->kind = K_STRUCT;
    t->jtype = "struct";
    t->rep = rep;
    for (size_t i = 0; i < n; i++)
        t->child[t->nchild++] = kids[i];
    return t;
}
#define GROUP(name, rep, ...) group(name, rep, sizeof((gtype *[]){ __VA_ARGS__ }) / sizeof(gtype *), (gtype *[]){ __VA_ARGS__ })

static gtype *list_of(const char *name, pq_repetition rep, gtype *element)
{
    gtype *t = new_type();
    t->name = name;
    t->kind = K_LIST;
    t->jtype = "list";
    t->rep = rep;
    element->name = "element";
    t->child[t->nchild++] = element;
    return t;
}

static gtype *map_of(const char *name, pq_repetition rep, gtype *key, gtype *value)
{
    gtype *t = new_type();
    t->name = name;
    t->kind = K_MAP;
    t->jtype = "map";
    t->rep = rep;
    key->name = "key";
    key->rep = PQ_REQUIRED;
    value->name = "value";
    t->child[t->nchild++] = key;
    t->child[t->nchild++] = value;
    return t;
}

static gtype *with_enc(gtype *t, pq_encoding enc, int dictionary)
{
    pq_column_opts_default(&t->opts);
    t->opts.encoding = enc;
    t->opts.dictionary = dictionary;
    t->has_opts = true;
    return t;
}

static gtype *with_bloom(gtype *t)
{
    if (!t->has_opts) {
        pq_column_opts_default(&t->opts);
        t->has_opts = true;
    }
    t->opts.bloom = 1;
    return t;
}

static gtype *with_nulls(gtype *t, int null_pct)
{
    t->null_pct = null_pct;
    return t;
}

/* ---- value generation ------------------------------------------------------ */

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
static uint32_t get_le32(const uint8_t *p)
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
static size_t cur_rows;

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

/* Booleans and integers: the type's edge values first, then random ones. Returns false for a generator of another family. */
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

/* Values whose distinct count changes every 1000 rows (see G_STR_PHASE). Returns false for a generator of another family. */
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

/* Values rising with the row number (see cur_rows). Returns false for a generator of another family. */
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
        if (t->phys == PQ_INT32 || t->phys == PQ_INT64)
            v->i = (int64_t)v->dec;
        else if (t->phys == PQ_FIXED_LEN_BYTE_ARRAY)
            dec_bytes(v, (size_t)t->tlen);
        else
            dec_bytes(v, dec_min_len(v->dec));
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

/* FLOAT, DOUBLE, FLOAT16 and DECIMAL: edge values (NaN, infinities,
 * -0.0, subnormals, the precision's limits) first, then random ones. Returns false for a generator of another family. */
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
        if (t->phys == PQ_INT32 || t->phys == PQ_INT64)
            v->i = (int64_t)v->dec;
        else if (t->phys == PQ_FIXED_LEN_BYTE_ARRAY)
            dec_bytes(v, (size_t)t->tlen);
        else
            dec_bytes(v, dec_min_len(v->dec));
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

/* Binary values: BSON, raw bytes, FIXED_LEN_BYTE_ARRAY / UUID, WKB. Returns false for a generator of another family. */
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

/* DATE, TIME, TIMESTAMP, INT96 and INTERVAL. Returns false for a generator of another family. */
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
static void gen_leaf(gtype *t, gval *v, size_t row)
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

/* Is this row's value of an optional node null? Row 1 is all-null at the
 * top, rows 0 and 2..9 have no nulls so edge values are seen. */
static bool pick_null(const gtype *t, size_t row, int depth)
{
    if (t->rep != PQ_OPTIONAL)
        return false;
    if (t->kind == K_LEAF && t->gen == G_NULL)
        return true;
    if (depth == 0 && row == 1)
        return true;
    if (row < 10)
        return false;
    return pct(t->null_pct);
}

static void gen_value(gtype *t, gval *v, size_t row, int depth)
{
    memset(v, 0, sizeof *v);
    if (pick_null(t, row, depth)) {
        v->null = true;
        return;
    }
    switch (t->kind) {
    case K_LEAF:
        gen_leaf(t, v, row);
        break;
    case K_STRUCT:
        v->nitems = t->nchild;
        v->items = arena_alloc(sizeof(gval) * t->nchild);
        for (size_t i = 0; i < t->nchild; i++)
            gen_value(t->child[i], &v->items[i], row, depth + 1);
        break;
    case K_LIST: {
        size_t n = (row == 2 || row % 11 == 5) ? 0 : (size_t)rnd_below(5);
        v->nitems = n;
        v->items = arena_alloc(sizeof(gval) * (n ? n : 1));
        for (size_t i = 0; i < n; i++)
            gen_value(t->child[0], &v->items[i], row, depth + 1);
        break;
    }
    case K_MAP: {
        size_t n = (row == 2 || row % 13 == 6) ? 0 : (size_t)rnd_below(4);
        v->items = arena_alloc(sizeof(gval) * 2 * (n ? n : 1));
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            gval *kv = &v->items[2 * m];
            gen_value(t->child[0], kv, row, depth + 1);
            bool dup = false; /* keys are unique within a map */
            for (size_t j = 0; j < m && !dup; j++) {
                const gval *o = &v->items[2 * j];
                dup = o->i == kv->i && o->n == kv->n && (o->n == 0 || memcmp(o->p, kv->p, o->n) == 0);
            }
            if (dup)
                continue;
            gen_value(t->child[1], &v->items[2 * m + 1], row, depth + 1);
            m++;
        }
        v->nitems = m;
        break;
    }
    }
}

/* ---- shredding into (rep, def) per leaf ----------------------------------- */

static int put_failed;

static void check_put(int rc, const gtype *t, const char *what)
{
    if (rc != 0 && !put_failed) {
        fprintf(stderr, "interop_gen: %s on leaf %s (%s) returned %s\n", what, t->name, t->jtype, pq_err_name(rc));
        put_failed = rc;
    }
}

static void put_nulls(const gtype *t, uint16_t rep, uint16_t def)
{
    if (t->kind == K_LEAF) {
        check_put(pq_column_put_null(t->col, rep, def), t, "put_null");
        return;
    }
    for (size_t i = 0; i < t->nchild; i++)
        put_nulls(t->child[i], rep, def);
}

static void put_leaf(const gtype *t, const gval *v, uint16_t rep)
{
    int rc = 0;
    switch (t->phys) {
    case PQ_BOOLEAN: rc = pq_column_put_bool(t->col, rep, v->i != 0); break;
    case PQ_INT32: rc = pq_column_put_i32(t->col, rep, (int32_t)(uint32_t)(uint64_t)v->i); break;
    case PQ_INT64: rc = pq_column_put_i64(t->col, rep, v->i); break;
    case PQ_FLOAT: rc = pq_column_put_float(t->col, rep, (float)v->d); break;
    case PQ_DOUBLE: rc = pq_column_put_double(t->col, rep, v->d); break;
    case PQ_INT96: case PQ_BYTE_ARRAY: case PQ_FIXED_LEN_BYTE_ARRAY:
        rc = pq_column_put_bytes(t->col, rep, v->p, v->n);
        break;
    }
    check_put(rc, t, "put value");
}

static void shred(const gtype *t, const gval *v, uint16_t rep, uint16_t def)
{
    if (t->rep == PQ_OPTIONAL) {
        if (v->null) {
            put_nulls(t, rep, def);
            return;
        }
        def++;
    }
    switch (t->kind) {
    case K_LEAF:
        if (def != t->def_max) {
            fprintf(stderr, "interop_gen: internal: leaf %s def %u != max %u\n", t->name, def, t->def_max);
            exit(2);
        }
        put_leaf(t, v, rep);
        break;
    case K_STRUCT:
        for (size_t i = 0; i < t->nchild; i++)
            shred(t->child[i], &v->items[i], rep, def);
        break;
    case K_LIST:
        if (v->nitems == 0) {
            put_nulls(t->child[0], rep, def);
            break;
        }
        for (size_t i = 0; i < v->nitems; i++)
            shred(t->child[0], &v->items[i], i ? t->entry_rep : rep, (uint16_t)(def + 1));
        break;
    case K_MAP:
        if (v->nitems == 0) {
            put_nulls(t->child[0], rep, def);
            put_nulls(t->child[1], rep, def);
            break;
        }
        for (size_t i = 0; i < v->nitems; i++) {
            uint16_t r = i ? t->entry_rep : rep;
            shred(t->child[0], &v->items[2 * i], r, (uint16_t)(def + 1));
            shred(t->child[1], &v->items[2 * i + 1], r, (uint16_t)(def + 1));
        }
        break;
    }
}

/* ---- JSON ------------------------------------------------------------------ */

static void j_str(FILE *f, const uint8_t *p, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void j_hex(FILE *f, const uint8_t *p, size_t n)
{
    fputs("{\"hex\":\"", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
    fputs("\"}", f);
}

static void j_double(FILE *f, double d)
{
    if (isnan(d))
        fputs("\"NaN\"", f);
    else if (isinf(d))
        fputs(d > 0 ? "\"Infinity\"" : "\"-Infinity\"", f);
    else if (d == 0 && signbit(d))
        fputs("-0.0", f);
    else
        fprintf(f, "%.17g", d);
}

static void j_decimal(FILE *f, i128 v, int scale)
{
    char digits[64];
    size_t n = 0;
    bool neg = v < 0;
    __extension__ unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while ((int)n < scale + 1)
        digits[n++] = '0';
    fputc('"', f);
    if (neg)
        fputc('-', f);
    for (size_t i = n; i-- > 0;) {
        fputc(digits[i], f);
        if ((int)i == scale && scale > 0)
            fputc('.', f);
    }
    fputc('"', f);
}

static void j_value(FILE *f, const gtype *t, const gval *v)
{
    if (v->null) {
        fputs("null", f);
        return;
    }
    switch (t->kind) {
    case K_STRUCT:
        fputc('{', f);
        for (size_t i = 0; i < t->nchild; i++) {
            fprintf(f, "%s\"%s\":", i ? "," : "", t->child[i]->name);
            j_value(f, t->child[i], &v->items[i]);
        }
        fputc('}', f);
        return;
    case K_LIST:
        fputc('[', f);
        for (size_t i = 0; i < v->nitems; i++) {
            if (i)
                fputc(',', f);
            j_value(f, t->child[0], &v->items[i]);
        }
        fputc(']', f);
        return;
    case K_MAP:
        fputc('[', f);
        for (size_t i = 0; i < v->nitems; i++) {
            fputs(i ? ",[" : "[", f);
            j_value(f, t->child[0], &v->items[2 * i]);
            fputc(',', f);
            j_value(f, t->child[1], &v->items[2 * i + 1]);
            fputc(']', f);
        }
        fputc(']', f);
        return;
    case K_LEAF:
        break;
    }
    const char *jt = t->jtype;
    if (!strcmp(jt, "bool"))
        fputs(v->i ? "true" : "false", f);
    else if (!strcmp(jt, "uint64"))
        fprintf(f, "\"%" PRIu64 "\"", (uint64_t)v->i);
    else if (!strcmp(jt, "uint32"))
        fprintf(f, "\"%" PRIu32 "\"", (uint32_t)v->i);
    else if (!strcmp(jt, "float") || !strcmp(jt, "double") || !strcmp(jt, "float16"))
        j_double(f, !strcmp(jt, "float") ? (double)(float)v->d : v->d);
    else if (!strcmp(jt, "decimal"))
        j_decimal(f, v->dec, t->lt.scale);
    else if (!strcmp(jt, "string") || !strcmp(jt, "enum") || !strcmp(jt, "json"))
        j_str(f, v->p, v->n);
    else if (!strcmp(jt, "uuid")) {
        fputc('"', f);
        for (size_t i = 0; i < 16; i++)
            fprintf(f, "%s%02x", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", v->p[i]);
        fputc('"', f);
    } else if (!strcmp(jt, "interval"))
        fprintf(f, "{\"months\":%" PRIu32 ",\"days\":%" PRIu32 ",\"millis\":%" PRIu32 "}",
                get_le32(v->p), get_le32(v->p + 4), get_le32(v->p + 8));
    else if (!strcmp(jt, "binary") || !strcmp(jt, "fixed") || !strcmp(jt, "bson") ||
             !strcmp(jt, "geometry") || !strcmp(jt, "geography"))
        j_hex(f, v->p, v->n);
    else /* signed ints, date, time, timestamp, int96 */
        fprintf(f, "\"%" PRId64 "\"", v->i);
}

static const char *phys_name(pq_physical_type p)
{
    switch (p) {
    case PQ_INT32: return "int32";
    case PQ_INT64: return "int64";
    case PQ_FIXED_LEN_BYTE_ARRAY: return "fixed";
    case PQ_BYTE_ARRAY: return "binary";
    default: return "other";
    }
}

static void j_type(FILE *f, const gtype *t)
{
    fprintf(f, "{\"name\":\"%s\",\"type\":\"%s\"", t->name, t->jtype);
    if (t->kind == K_LEAF) {
        if (t->lt.kind == PQ_LT_DECIMAL)
            fprintf(f, ",\"precision\":%d,\"scale\":%d,\"physical\":\"%s\"", (int)t->lt.precision,
                    (int)t->lt.scale, phys_name(t->phys));
        if (t->lt.kind == PQ_LT_TIME || t->lt.kind == PQ_LT_TIMESTAMP)
            fprintf(f, ",\"utc\":%s", t->lt.utc ? "true" : "false");
        if (t->phys == PQ_FIXED_LEN_BYTE_ARRAY)
            fprintf(f, ",\"length\":%d", (int)t->tlen);
    }
    if (t->kind == K_LIST) {
        fputs(",\"element\":", f);
        j_type(f, t->child[0]);
    } else if (t->kind == K_MAP) {
        fputs(",\"key\":", f);
        j_type(f, t->child[0]);
        fputs(",\"value\":", f);
        j_type(f, t->child[1]);
    } else if (t->kind == K_STRUCT) {
        fputs(",\"fields\":[", f);
        for (size_t i = 0; i < t->nchild; i++) {
            if (i)
                fputc(',', f);
            j_type(f, t->child[i]);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

/* ---- schema ---------------------------------------------------------------- */

static int build(pq_schema *s, int parent, gtype *t, uint16_t def, uint16_t rep, pq_err *err)
{
    uint16_t d = (uint16_t)(def + (t->rep == PQ_OPTIONAL));
    int id;
    if (t->kind == K_LEAF) {
        pq_node_spec spec;
        memset(&spec, 0, sizeof spec);
        spec.name = t->name;
        spec.repetition = t->rep;
        spec.type = t->phys;
        spec.type_length = t->tlen;
        spec.logical = t->lt;
        spec.field_id = -1;
        spec.opts = t->has_opts ? &t->opts : NULL;
        id = pq_schema_add_leaf(s, parent, &spec, err);
        if (id < 0)
            return id;
        t->leaf = id; /* node id for now; the leaf ordinal after finish */
        t->def_max = d;
        t->rep_max = rep;
        return 0;
    }
    if (t->kind == K_STRUCT) {
        pq_node_spec spec;
        memset(&spec, 0, sizeof spec);
        spec.name = t->name;
        spec.repetition = t->rep;
        spec.logical = lt_none();
        spec.field_id = -1;
        id = pq_schema_add_group(s, parent, &spec, err);
        if (id < 0)
            return id;
        for (size_t i = 0; i < t->nchild; i++) {
            int rc = build(s, id, t->child[i], d, rep, err);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    id = t->kind == K_LIST ? pq_schema_add_list(s, parent, t->name, t->rep, -1, err)
                           : pq_schema_add_map(s, parent, t->name, t->rep, -1, err);
    if (id < 0)
        return id;
    t->entry_rep = (uint16_t)(rep + 1);
    for (size_t i = 0; i < t->nchild; i++) {
        int rc = build(s, id, t->child[i], (uint16_t)(d + 1), (uint16_t)(rep + 1), err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* After pq_schema_finish: node ids -> leaf ordinals, and our levels must
 * match the writer's. */
static int resolve(const pq_schema *s, gtype *t, pq_err *err)
{
    if (t->kind != K_LEAF) {
        for (size_t i = 0; i < t->nchild; i++) {
            int rc = resolve(s, t->child[i], err);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    int leaf_ix = pq_schema_leaf_of_node(s, t->leaf);
    if (leaf_ix < 0)
        return pq_err_set(err, PQ_EINVAL, "no leaf for node %d (%s)", t->leaf, t->name);
    t->leaf = leaf_ix;
    uint16_t d = pq_schema_max_def(s, (size_t)leaf_ix), r = pq_schema_max_rep(s, (size_t)leaf_ix);
    if (d != t->def_max || r != t->rep_max)
        return pq_err_set(err, PQ_EINVAL, "leaf %s: writer says max def/rep %u/%u, generator computed %u/%u",
                          pq_schema_leaf_path(s, (size_t)leaf_ix), d, r, t->def_max, t->rep_max);
    return 0;
}

static void attach(pq_writer *w, gtype *t)
{
    if (t->kind == K_LEAF) {
        t->col = pq_writer_column(w, (size_t)t->leaf);
        return;
    }
    for (size_t i = 0; i < t->nchild; i++)
        attach(w, t->child[i]);
}

static void reset_counts(gtype *t)
{
    t->nvals = 0;
    for (size_t i = 0; i < t->nchild; i++)
        reset_counts(t->child[i]);
}

/* ---- one file ------------------------------------------------------------- */

static const char *outdir;
static uint64_t seed;
static int files_ok, files_failed;

typedef struct file_spec {
    const char *name;
    gtype **cols;
    size_t ncols;
    size_t rows;
    pq_writer_opts wo;
    const char *skip_json;       /* optional "skip" object text for the expectation */
    unsigned flags;
} file_spec;

/* Leaves with dictionary=1 have dictionary chunks in some row groups and
 * fallback chunks in others (checked by footer.mjs). */
#define F_DICT_MIXED 1u
/* Row groups are cut by bytes: their number is the writer's to choose. */
#define F_RG_BY_BYTES 2u

static const char *codec_name(pq_codec c)
{
    switch (c) {
    case PQ_CODEC_UNCOMPRESSED: return "UNCOMPRESSED";
    case PQ_CODEC_SNAPPY: return "SNAPPY";
    case PQ_CODEC_GZIP: return "GZIP";
    case PQ_CODEC_BROTLI: return "BROTLI";
    case PQ_CODEC_ZSTD: return "ZSTD";
    case PQ_CODEC_LZ4_RAW: return "LZ4_RAW";
    }
    return "?";
}

static const char *encoding_name(pq_encoding e)
{
    switch (e) {
    case PQ_ENC_PLAIN: return "PLAIN";
    case PQ_ENC_PLAIN_DICTIONARY: return "PLAIN_DICTIONARY";
    case PQ_ENC_RLE: return "RLE";
    case PQ_ENC_BIT_PACKED: return "BIT_PACKED";
    case PQ_ENC_DELTA_BINARY_PACKED: return "DELTA_BINARY_PACKED";
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return "DELTA_LENGTH_BYTE_ARRAY";
    case PQ_ENC_DELTA_BYTE_ARRAY: return "DELTA_BYTE_ARRAY";
    case PQ_ENC_RLE_DICTIONARY: return "RLE_DICTIONARY";
    case PQ_ENC_BYTE_STREAM_SPLIT: return "BYTE_STREAM_SPLIT";
    case PQ_ENC_AUTO: return "AUTO";
    }
    return "?";
}

/* The data-page encoding a leaf asked for, or NULL when the writer chooses. */
static const char *asked_encoding(const gtype *t)
{
    if (!t->has_opts)
        return NULL;
    if (t->opts.encoding != PQ_ENC_AUTO)
        return encoding_name(t->opts.encoding);
    return t->opts.dictionary == 1 ? "RLE_DICTIONARY" : NULL;
}

/* "path": "ENCODING" pairs (mixed == false) or "path" names of dictionary
 * leaves (mixed == true), comma-separated after the first. */
static void j_encodings(FILE *f, const pq_schema *s, const gtype *t, bool mixed, bool *first)
{
    if (t->kind != K_LEAF) {
        for (size_t i = 0; i < t->nchild; i++)
            j_encodings(f, s, t->child[i], mixed, first);
        return;
    }
    const char *enc = asked_encoding(t);
    if (!enc || mixed != (strcmp(enc, "RLE_DICTIONARY") == 0))
        return;
    fprintf(f, "%s\"%s\"", *first ? "" : ",", pq_schema_leaf_path(s, (size_t)t->leaf));
    if (!mixed)
        fprintf(f, ":\"%s\"", enc);
    *first = false;
}

/* What the file is meant to test, as footer.mjs checks it. */
static void j_footer(FILE *f, const file_spec *fs, const pq_schema *s)
{
    size_t rgs = fs->rows == 0 ? 0
        : fs->wo.row_group_max_rows ? (fs->rows + fs->wo.row_group_max_rows - 1) / fs->wo.row_group_max_rows : 1;
    bool mixed = fs->flags & F_DICT_MIXED, first = true;
    fprintf(f, "\"footer\":{\"num_rows\":%zu,", fs->rows);
    if (!(fs->flags & F_RG_BY_BYTES))
        fprintf(f, "\"row_groups\":%zu,", rgs);
    fprintf(f, "\"codec\":\"%s\",\"page_type\":\"%s\",\"encodings\":{",
            codec_name(fs->wo.codec), fs->wo.page_version == 1 ? "DATA_PAGE" : "DATA_PAGE_V2");
    for (size_t i = 0; i < fs->ncols; i++)
        j_encodings(f, s, fs->cols[i], false, &first);
    fputs("},\"dictionary_mixed\":[", f);
    first = true;
    if (mixed)
        for (size_t i = 0; i < fs->ncols; i++)
            j_encodings(f, s, fs->cols[i], true, &first);
    fputs("]},", f);
}

static void fail_file(const char *name, const char *what, const pq_err *err)
{
    fprintf(stderr, "interop_gen: %s: %s: %s (%s)\n", name, what, err->msg, pq_err_name(err->code));
    files_failed++;
}

/* The file's schema with every column's levels resolved, or NULL (the
 * failure counted). */
static pq_schema *file_schema(const file_spec *fs)
{
    pq_err err;
    pq_err_clear(&err);
    pq_schema *s = pq_schema_new(NULL);
    if (!s) {
        fprintf(stderr, "interop_gen: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < fs->ncols; i++) {
        reset_counts(fs->cols[i]);
        if (build(s, 0, fs->cols[i], 0, 0, &err) < 0) {
            fail_file(fs->name, "schema", &err);
            goto fail;
        }
    }
    if (pq_schema_finish(s, &err) < 0) {
        fail_file(fs->name, "pq_schema_finish", &err);
        goto fail;
    }
    for (size_t i = 0; i < fs->ncols; i++) {
        if (resolve(s, fs->cols[i], &err) < 0) {
            fail_file(fs->name, "levels", &err);
            goto fail;
        }
    }
    return s;

fail:
    pq_schema_destroy(s);
    return NULL;
}

/* The expectation up to its rows: writer, seed, options, footer, columns. */
static void j_header(FILE *jf, const file_spec *fs, const pq_schema *s)
{
    fprintf(jf, "{\"writer\":\"parqd interop_gen\",\"seed\":\"%" PRIu64 "\",", seed);
    fprintf(jf, "\"note\":\"codec %d, page v%d, page_max_rows %zu, row_group_max_rows %zu, dictionary_max_bytes %zu\",",
            (int)fs->wo.codec, fs->wo.page_version, fs->wo.page_max_rows, fs->wo.row_group_max_rows,
            fs->wo.dictionary_max_bytes);
    if (fs->skip_json)
        fprintf(jf, "\"skip\":%s,", fs->skip_json);
    j_footer(jf, fs, s);
    fputs("\"columns\":[", jf);
    for (size_t i = 0; i < fs->ncols; i++) {
        if (i)
            fputc(',', jf);
        j_type(jf, fs->cols[i]);
    }
    fputs("],\n\"rows\":[\n", jf);
}

/* Generates every row, puts it into the writer and writes it to the
 * expectation; err is set (code != 0) when a row could not be put. */
static void write_rows(pq_writer *w, FILE *jf, const file_spec *fs, pq_err *err)
{
    gval *vals = calloc(fs->ncols ? fs->ncols : 1, sizeof *vals);
    if (!vals) {
        fprintf(stderr, "interop_gen: out of memory\n");
        exit(2);
    }
    for (size_t row = 0; row < fs->rows; row++) {
        for (size_t i = 0; i < fs->ncols; i++) {
            gen_value(fs->cols[i], &vals[i], row, 0);
            shred(fs->cols[i], &vals[i], 0, 0);
        }
        if (put_failed) {
            pq_err_set(err, put_failed, "row %zu: a put call failed (see above)", row);
            break;
        }
        if (pq_writer_end_row(w, err) < 0)
            break;
        fputs(row ? ",\n[" : "[", jf);
        for (size_t i = 0; i < fs->ncols; i++) {
            if (i)
                fputc(',', jf);
            j_value(jf, fs->cols[i], &vals[i]);
        }
        fputc(']', jf);
        arena_reset();
    }
    free(vals);
    arena_reset();
    fputs("\n]}\n", jf);
}

/* Writes NAME.parquet and NAME.expect.json; on failure removes both. */
static void write_file(const file_spec *fs)
{
    char ppath[4096], epath[4096];
    snprintf(ppath, sizeof ppath, "%s/%s.parquet", outdir, fs->name);
    snprintf(epath, sizeof epath, "%s/%s.expect.json", outdir, fs->name);
    pq_err err;
    pq_err_clear(&err);
    pq_writer *w = NULL;
    FILE *jf = NULL;
    int fd = -1;
    put_failed = 0;
    cur_rows = fs->rows;

    pq_schema *s = file_schema(fs);
    if (!s)
        goto cleanup;
    fd = open(ppath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    jf = fopen(epath, "w");
    if (fd < 0 || !jf) {
        pq_err_set(&err, PQ_EIO, "cannot create %s: %s", fd < 0 ? ppath : epath, strerror(errno));
        fail_file(fs->name, "open", &err);
        goto cleanup;
    }
    if (pq_writer_open(&w, s, &fs->wo, pq_sink_fd(&fd), &err) < 0) {
        w = NULL;
        fail_file(fs->name, "pq_writer_open", &err);
        goto cleanup;
    }
    for (size_t i = 0; i < fs->ncols; i++)
        attach(w, fs->cols[i]);

    j_header(jf, fs, s);
    write_rows(w, jf, fs, &err);
    if (err.code != 0) {
        fail_file(fs->name, "writing rows", &err);
        goto cleanup;
    }
    if (pq_writer_close(w, &err) < 0) {
        fail_file(fs->name, "pq_writer_close", &err);
        goto cleanup;
    }
    if (fflush(jf) != 0 || ferror(jf)) {
        pq_err_set(&err, PQ_EIO, "writing %s failed", epath);
        fail_file(fs->name, "expectation", &err);
        goto cleanup;
    }
    printf("  %-44s %6zu rows %8" PRIu64 " bytes\n", fs->name, fs->rows, pq_writer_bytes_written(w));
    files_ok++;
    pq_writer_destroy(w);
    pq_schema_destroy(s);
    fclose(jf);
    close(fd);
    return;

cleanup:
    if (w)
        pq_writer_destroy(w);
    pq_schema_destroy(s);
    if (jf)
        fclose(jf);
    if (fd >= 0)
        close(fd);
    unlink(ppath);
    unlink(epath);
}

/* ---- the matrix ------------------------------------------------------------- */

static pq_writer_opts base_opts(void)
{
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.page_max_rows = 500;     /* several pages per chunk everywhere */
    o.row_group_max_rows = 0;
    return o;
}

#define COLS(...) (gtype *[]){ __VA_ARGS__ }, sizeof((gtype *[]){ __VA_ARGS__ }) / sizeof(gtype *)

static void emit(const char *name, gtype **cols, size_t ncols, size_t rows, pq_writer_opts wo, unsigned flags)
{
    file_spec fs = { name, cols, ncols, rows, wo, NULL, flags };
    write_file(&fs);
}

/* A mixed table used for the codec x page version and row group files. */
static void mixed_cols(gtype **c)
{
    c[0] = l_i64("id", REQ, G_I64);
    c[1] = l_double("x", OPT, G_DOUBLE);
    c[2] = l_str("s", OPT, G_STR);
    c[3] = l_bool("b", OPT);
    c[4] = list_of("l", OPT, l_i32("element", OPT, G_I32));
    c[5] = l_int("i16", 16, true);
}

/* Files: types. */
static void matrix_types(void)
{
    pq_writer_opts o = base_opts();
    emit("types_bool_ints", COLS(
        l_bool("b_req", REQ), l_bool("b_opt", OPT),
        l_i32("i32_plain", OPT, G_I32), l_i64("i64_plain", OPT, G_I64),
        l_int("i8", 8, true), l_int("i16", 16, true), l_int("i32", 32, true), l_int("i64", 64, true),
        l_int("u8", 8, false), l_int("u16", 16, false), l_int("u32", 32, false), l_int("u64", 64, false),
        l_i64("i64_req", REQ, G_I64)), 3000, o, 0);
    emit("types_float_double_float16", COLS(
        l_float("f", OPT), l_double("d", OPT, G_DOUBLE), l_f16("h", OPT),
        leaf("f_req", REQ, PQ_FLOAT, 0, lt_none(), "float", G_FLOAT)), 3000, o, 0);
    emit("types_decimal", COLS(
        l_dec("d_i32_9_2", PQ_INT32, 0, 9, 2), l_dec("d_i32_1_0", PQ_INT32, 0, 1, 0),
        l_dec("d_i64_18_4", PQ_INT64, 0, 18, 4), l_dec("d_i64_10_10", PQ_INT64, 0, 10, 10),
        l_dec("d_flba16_38_10", PQ_FIXED_LEN_BYTE_ARRAY, 16, 38, 10),
        l_dec("d_flba9_20_0", PQ_FIXED_LEN_BYTE_ARRAY, 9, 20, 0),
        l_dec("d_flba3_5_3", PQ_FIXED_LEN_BYTE_ARRAY, 3, 5, 3),
        l_dec("d_bin_30_5", PQ_BYTE_ARRAY, 0, 30, 5)), 2000, o, 0);
    emit("types_string_enum_json_binary_uuid", COLS(
        l_str("s", OPT, G_STR), l_str("s_req", REQ, G_STR),
        leaf("e", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_ENUM), "enum", G_ENUM),
        leaf("j", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_JSON), "json", G_JSON),
        l_bin("bin", OPT), l_fixed("fx7", OPT, 7),
        leaf("u", OPT, PQ_FIXED_LEN_BYTE_ARRAY, 16, lt_kind(PQ_LT_UUID), "uuid", G_UUID)), 2000, o, 0);
    emit("types_date_time_timestamp", COLS(
        leaf("date", OPT, PQ_INT32, 0, lt_kind(PQ_LT_DATE), "date", G_DATE),
        leaf("t_ms_utc", OPT, PQ_INT32, 0, lt_time(PQ_LT_TIME, PQ_UNIT_MILLIS, true), "time_ms", G_TIME_MS),
        leaf("t_ms", OPT, PQ_INT32, 0, lt_time(PQ_LT_TIME, PQ_UNIT_MILLIS, false), "time_ms", G_TIME_MS),
        leaf("t_us_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIME, PQ_UNIT_MICROS, true), "time_us", G_TIME_US),
        leaf("t_us", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIME, PQ_UNIT_MICROS, false), "time_us", G_TIME_US),
        leaf("t_ns_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIME, PQ_UNIT_NANOS, true), "time_ns", G_TIME_NS),
        leaf("t_ns", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIME, PQ_UNIT_NANOS, false), "time_ns", G_TIME_NS),
        leaf("ts_ms_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MILLIS, true), "timestamp_ms", G_TS_MS),
        leaf("ts_ms", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MILLIS, false), "timestamp_ms", G_TS_MS),
        leaf("ts_us_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MICROS, true), "timestamp_us", G_TS_US),
        leaf("ts_us", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MICROS, false), "timestamp_us", G_TS_US),
        leaf("ts_ns_utc", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_NANOS, true), "timestamp_ns", G_TS_NS),
        leaf("ts_ns", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_NANOS, false), "timestamp_ns", G_TS_NS)),
        2000, o, 0);
    emit("types_int96", COLS(leaf("ts96", OPT, PQ_INT96, 0, lt_none(), "int96", G_INT96)), 1500, o, 0);
    emit("types_interval", COLS(
        leaf("iv", OPT, PQ_FIXED_LEN_BYTE_ARRAY, 12, lt_kind(PQ_LT_INTERVAL), "interval", G_INTERVAL)), 1500, o, 0);
    emit("types_interval_u32max", COLS(
        leaf("iv", OPT, PQ_FIXED_LEN_BYTE_ARRAY, 12, lt_kind(PQ_LT_INTERVAL), "interval", G_INTERVAL_MAX)), 300, o, 0);
    emit("types_bson", COLS(leaf("bs", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_BSON), "bson", G_BSON)), 1000, o, 0);
    {
        pq_logical geo = lt_kind(PQ_LT_GEOGRAPHY);
        geo.algorithm = PQ_EDGE_SPHERICAL;
        emit("types_geometry_geography_wkb", COLS(
            leaf("geom", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_GEOMETRY), "geometry", G_WKB),
            leaf("geog", OPT, PQ_BYTE_ARRAY, 0, geo, "geography", G_WKB)), 1000, o, 0);
    }
    emit("types_unknown_all_null", COLS(
        l_i64("id", REQ, G_I64),
        leaf("nothing", OPT, PQ_INT32, 0, lt_kind(PQ_LT_UNKNOWN), "unknown", G_NULL)), 1000, o, 0);
}

/* Files: nesting. */
static void matrix_nesting(void)
{
    pq_writer_opts o = base_opts();
    emit("nested_list_of_struct_with_list", COLS(
        l_i64("id", REQ, G_I64_SEQ),
        list_of("items", OPT, with_nulls(GROUP("element", OPT,
            l_i32("a", OPT, G_I32),
            list_of("tags", OPT, l_str("element", OPT, G_STR)),
            l_double("w", REQ, G_DOUBLE)), 25)),
        list_of("req_ints", REQ, l_i32("element", REQ, G_I32)),
        list_of("ll", OPT, list_of("element", OPT, l_i64("element", OPT, G_I64)))), 3000, o, 0);
    emit("nested_maps", COLS(
        map_of("m_str_list", OPT, l_str("key", REQ, G_STR_KEY), list_of("value", OPT, l_i32("element", OPT, G_I32))),
        map_of("m_i64_struct", OPT, l_i64("key", REQ, G_I64),
               GROUP("value", OPT, l_str("s", OPT, G_STR), l_bool("b", REQ))),
        map_of("m_req", REQ, l_i32("key", REQ, G_I32), l_double("value", REQ, G_DOUBLE))), 3000, o, 0);
    emit("nested_structs", COLS(
        GROUP("s", OPT,
            l_i32("x", OPT, G_I32),
            GROUP("inner", OPT, l_str("name", OPT, G_STR), list_of("nums", OPT, l_i64("element", OPT, G_I64))),
            GROUP("req_inner", REQ, l_bool("flag", OPT), l_f16("h", OPT))),
        GROUP("r", REQ, l_i64("a", REQ, G_I64), l_str("b", OPT, G_STR))), 3000, o, 0);
}

/* Files: encodings, page v1 and v2. */
static void matrix_encodings(void)
{
    pq_writer_opts o = base_opts();
    for (int v = 1; v <= 2; v++) {
        pq_writer_opts ov = o;
        char name[128];
        ov.page_version = v;
        snprintf(name, sizeof name, "enc_plain_all_types_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_bool("b", OPT), PQ_ENC_PLAIN, 0),
            with_enc(l_i32("i32", OPT, G_I32), PQ_ENC_PLAIN, 0),
            with_enc(l_i64("i64", OPT, G_I64), PQ_ENC_PLAIN, 0),
            with_enc(leaf("i96", OPT, PQ_INT96, 0, lt_none(), "int96", G_INT96), PQ_ENC_PLAIN, 0),
            with_enc(l_float("f", OPT), PQ_ENC_PLAIN, 0),
            with_enc(l_double("d", OPT, G_DOUBLE), PQ_ENC_PLAIN, 0),
            with_enc(l_str("s", OPT, G_STR), PQ_ENC_PLAIN, 0),
            with_enc(l_fixed("fx", OPT, 5), PQ_ENC_PLAIN, 0)), 2000, ov, 0);
        snprintf(name, sizeof name, "enc_rle_bool_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_bool("b", OPT), PQ_ENC_RLE, 0),
            with_enc(l_bool("b_req", REQ), PQ_ENC_RLE, 0)), 3000, ov, 0);
        snprintf(name, sizeof name, "enc_dictionary_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_i32("i32", OPT, G_I32_FEW), PQ_ENC_AUTO, 1),
            with_enc(l_i64("i64", OPT, G_I64_FEW), PQ_ENC_AUTO, 1),
            with_enc(l_double("d", OPT, G_DOUBLE_FEW), PQ_ENC_AUTO, 1),
            with_enc(l_str("s", OPT, G_STR_FEW), PQ_ENC_AUTO, 1),
            with_enc(leaf("e", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_ENUM), "enum", G_ENUM), PQ_ENC_AUTO, 1),
            with_enc(list_of("ls", OPT, with_enc(l_str("element", OPT, G_STR_FEW), PQ_ENC_AUTO, 1)), PQ_ENC_AUTO, 1)),
            3000, ov, 0);
        snprintf(name, sizeof name, "enc_dictionary_fallback_v%d", v);
        {
            /* The writer decides dictionary or fallback once per chunk
             * (writer/chunk/chunk.c), so fallback shows across row groups. */
            pq_writer_opts of = ov;
            of.dictionary_max_bytes = 2048;
            of.row_group_max_rows = 1000;
            emit(own(strdup(name)), COLS(
                with_enc(l_str("s", OPT, G_STR_PHASE), PQ_ENC_AUTO, 1),
                with_enc(l_i64("i64", OPT, G_I64_PHASE), PQ_ENC_AUTO, 1),
                with_enc(l_double("d", OPT, G_DOUBLE_PHASE), PQ_ENC_AUTO, 1),
                with_enc(list_of("ls", OPT, with_enc(l_str("element", OPT, G_STR_PHASE), PQ_ENC_AUTO, 1)), PQ_ENC_AUTO, 1)),
                5000, of, F_DICT_MIXED);
        }
        snprintf(name, sizeof name, "enc_delta_binary_packed_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_i32("i32_full", OPT, G_I32), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_i64("i64_full", OPT, G_I64), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_i64("i64_seq", REQ, G_I64_SEQ), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_i32("i32_small", OPT, G_I32_SMALLDELTA), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_int("u32", 32, false), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(l_int("u64", 64, false), PQ_ENC_DELTA_BINARY_PACKED, 0),
            with_enc(leaf("ts", OPT, PQ_INT64, 0, lt_time(PQ_LT_TIMESTAMP, PQ_UNIT_MICROS, true), "timestamp_us", G_TS_US),
                     PQ_ENC_DELTA_BINARY_PACKED, 0)), 3000, ov, 0);
        snprintf(name, sizeof name, "enc_delta_length_byte_array_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_str("s", OPT, G_STR), PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, 0),
            with_enc(l_bin("bin", OPT), PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, 0),
            with_enc(list_of("ls", OPT, with_enc(l_str("element", OPT, G_STR), PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, 0)), PQ_ENC_AUTO, -1)),
            3000, ov, 0);
        snprintf(name, sizeof name, "enc_delta_byte_array_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_str("s_prefix", OPT, G_STR_PREFIX), PQ_ENC_DELTA_BYTE_ARRAY, 0),
            with_enc(l_str("s", OPT, G_STR), PQ_ENC_DELTA_BYTE_ARRAY, 0),
            with_enc(l_bin("bin", OPT), PQ_ENC_DELTA_BYTE_ARRAY, 0),
            with_enc(l_fixed("fx", OPT, 6), PQ_ENC_DELTA_BYTE_ARRAY, 0)), 3000, ov, 0);
        /* FLOAT/DOUBLE apart: DuckDB reads BYTE_STREAM_SPLIT for those only. */
        snprintf(name, sizeof name, "enc_byte_stream_split_float_double_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_float("f", OPT), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_double("d", OPT, G_DOUBLE), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(leaf("d_req", REQ, PQ_DOUBLE, 0, lt_none(), "double", G_DOUBLE), PQ_ENC_BYTE_STREAM_SPLIT, 0)),
            3000, ov, 0);
        snprintf(name, sizeof name, "enc_byte_stream_split_int_flba_v%d", v);
        emit(own(strdup(name)), COLS(
            with_enc(l_i32("i32", OPT, G_I32), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_i64("i64", OPT, G_I64), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_fixed("fx", OPT, 5), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_f16("h", OPT), PQ_ENC_BYTE_STREAM_SPLIT, 0),
            with_enc(l_dec("dec", PQ_FIXED_LEN_BYTE_ARRAY, 7, 16, 3), PQ_ENC_BYTE_STREAM_SPLIT, 0)), 3000, ov, 0);
    }
}

/* Files: codecs x page versions. */
static void matrix_codecs(void)
{
    pq_writer_opts o = base_opts();
    static const struct { pq_codec c; const char *n; } codecs[] = {
        { PQ_CODEC_UNCOMPRESSED, "uncompressed" }, { PQ_CODEC_SNAPPY, "snappy" }, { PQ_CODEC_GZIP, "gzip" },
        { PQ_CODEC_BROTLI, "brotli" }, { PQ_CODEC_ZSTD, "zstd" }, { PQ_CODEC_LZ4_RAW, "lz4_raw" },
    };
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        for (int v = 1; v <= 2; v++) {
            pq_writer_opts oc = o;
            char name[128];
            gtype *c[6];
            oc.codec = codecs[i].c;
            oc.page_version = v;
            mixed_cols(c);
            snprintf(name, sizeof name, "codec_%s_v%d", codecs[i].n, v);
            emit(own(strdup(name)), c, 6, 4000, oc, 0);
        }
    }
}

/* Files: row groups and pages. */
static void matrix_row_groups(void)
{
    pq_writer_opts o = base_opts();
    {
        pq_writer_opts og = o;
        gtype *c[6];
        og.row_group_max_rows = 997;
        og.page_max_rows = 101;
        mixed_cols(c);
        emit("rowgroups_many_pages_many", c, 6, 10000, og, 0);
        og.page_version = 1;
        mixed_cols(c);
        emit("rowgroups_many_pages_many_v1", c, 6, 10000, og, 0);
    }
    {
        pq_writer_opts op = o;
        op.page_max_rows = 7;
        emit("pages_tiny_nested_v2", COLS(
            list_of("ll", OPT, list_of("element", OPT, l_i32("element", OPT, G_I32))),
            map_of("m", OPT, l_str("key", REQ, G_STR_KEY), l_str("value", OPT, G_STR))), 2000, op, 0);
        op.page_version = 1;
        emit("pages_tiny_nested_v1", COLS(
            list_of("ll", OPT, list_of("element", OPT, l_i32("element", OPT, G_I32))),
            map_of("m", OPT, l_str("key", REQ, G_STR_KEY), l_str("value", OPT, G_STR))), 2000, op, 0);
    }
    {
        pq_writer_opts ob = o;
        ob.page_max_bytes = 4096;
        ob.page_max_rows = 20000;
        emit("pages_by_bytes_big_strings", COLS(
            leaf("big", OPT, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_STRING), "string", G_STR_BIG),
            l_i64("i", OPT, G_I64)), 400, ob, 0);
    }
}

/* Files: statistics (rising values, small row groups and pages). */
static void matrix_statistics(void)
{
    pq_writer_opts o = base_opts();
    for (int v = 1; v <= 2; v++) {
        pq_writer_opts os = o;
        os.page_version = v;
        os.row_group_max_rows = 250;
        os.page_max_rows = 60;
        for (int dict = 0; dict <= 1; dict++) {
            char name[128];
            snprintf(name, sizeof name, "stats_rowgroups_rising%s_v%d", dict ? "_dictionary" : "", v);
            emit(own(strdup(name)), COLS(
                with_enc(l_i32("i32", OPT, G_MONO_I32), PQ_ENC_AUTO, dict),
                with_enc(leaf("u32", OPT, PQ_INT32, 0, lt_int(32, false), "uint32", G_MONO_U32), PQ_ENC_AUTO, dict),
                with_enc(l_i64("i64", OPT, G_MONO_I64), PQ_ENC_AUTO, dict),
                with_enc(leaf("u64", OPT, PQ_INT64, 0, lt_int(64, false), "uint64", G_MONO_U64), PQ_ENC_AUTO, dict),
                with_enc(leaf("f", OPT, PQ_FLOAT, 0, lt_none(), "float", G_MONO_FLOAT), PQ_ENC_AUTO, dict),
                with_enc(l_double("d", OPT, G_MONO_DOUBLE), PQ_ENC_AUTO, dict),
                with_enc(leaf("dec_flba", OPT, PQ_FIXED_LEN_BYTE_ARRAY, 16, lt_dec(38, 4), "decimal", G_MONO_DEC), PQ_ENC_AUTO, dict),
                with_enc(leaf("dec_i64", OPT, PQ_INT64, 0, lt_dec(18, 2), "decimal", G_MONO_DEC), PQ_ENC_AUTO, dict),
                with_enc(leaf("dec_bin", OPT, PQ_BYTE_ARRAY, 0, lt_dec(30, 0), "decimal", G_MONO_DEC), PQ_ENC_AUTO, dict),
                with_enc(l_str("s", OPT, G_MONO_STR), PQ_ENC_AUTO, dict),
                with_enc(leaf("date", OPT, PQ_INT32, 0, lt_kind(PQ_LT_DATE), "date", G_MONO_DATE), PQ_ENC_AUTO, dict)),
                3000, os, 0);
        }
    }
}

/* Files: bloom filters on every filterable type (duckdb-filter probes
 * them with equality on present values: a false negative loses rows). */
static void matrix_bloom(void)
{
    pq_writer_opts o = base_opts();
    {
        pq_writer_opts obf = o;
        obf.row_group_max_rows = 500;
        emit("bloom_all_types", COLS(
            with_bloom(l_i32("i32", OPT, G_I32)), with_bloom(l_i64("i64", OPT, G_I64)),
            with_bloom(l_int("u64", 64, false)), with_bloom(l_int("u32", 32, false)),
            with_bloom(l_float("f", OPT)), with_bloom(l_double("d", OPT, G_DOUBLE)),
            with_bloom(l_str("s", OPT, G_STR)), with_bloom(l_fixed("fx", OPT, 9)),
            with_bloom(l_dec("dec", PQ_FIXED_LEN_BYTE_ARRAY, 16, 38, 6)),
            with_bloom(l_dec("dec64", PQ_INT64, 0, 18, 3)),
            with_bloom(leaf("date", OPT, PQ_INT32, 0, lt_kind(PQ_LT_DATE), "date", G_DATE))), 3000, obf, 0);
        obf.page_version = 1;
        obf.codec = PQ_CODEC_SNAPPY;
        emit("bloom_dictionary_strings_v1", COLS(
            with_bloom(with_enc(l_str("s", OPT, G_STR), PQ_ENC_AUTO, 1)),
            with_bloom(with_enc(l_i64("i64", OPT, G_I64), PQ_ENC_AUTO, 1))), 3000, obf, 0);
    }
}

/* Files: the writer's own defaults, and row groups cut by bytes. */
static void matrix_defaults(void)
{
    pq_writer_opts o = base_opts();
    {
        pq_writer_opts od;
        gtype *c[6];
        pq_writer_opts_default(&od);
        mixed_cols(c);
        emit("defaults_60k_rows", c, 6, 60000, od, 0);
        pq_writer_opts_default(&od);
        od.row_group_max_rows = 0;
        od.row_group_max_bytes = 200000;
        emit("rowgroups_by_bytes_nested", COLS(
            l_i64("id", REQ, G_I64_SEQ), l_str("s", OPT, G_STR),
            list_of("items", OPT, GROUP("element", OPT, l_i32("a", OPT, G_I32),
                list_of("tags", OPT, l_str("element", OPT, G_STR)))),
            map_of("m", OPT, l_str("key", REQ, G_STR_KEY), l_double("value", OPT, G_DOUBLE))),
            20000, od, F_RG_BY_BYTES);
    }
    {
        pq_writer_opts on = o;
        on.crc = false;
        on.statistics = false;
        on.page_index = false;
        gtype *c[6];
        mixed_cols(c);
        emit("opts_no_crc_stats_index", c, 6, 2000, on, 0);
    }
    {
        gtype *c[6];
        mixed_cols(c);
        emit("empty_zero_rows", c, 6, 0, o, 0);
        mixed_cols(c);
        emit("one_row", c, 6, 1, o, 0);
    }
}

/* Every file of the matrix, in the order they are written (the PRNG
 * stream, and so every value, depends on that order). */
static void matrix(void)
{
    matrix_types();
    matrix_nesting();
    matrix_encodings();
    matrix_codecs();
    matrix_row_groups();
    matrix_statistics();
    matrix_bloom();
    matrix_defaults();
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: interop_gen OUTDIR [SEED]\n");
        return 2;
    }
    outdir = argv[1];
    if (argc == 3) {
        char *end;
        errno = 0;
        seed = strtoull(argv[2], &end, 10);
        if (errno || *end) {
            fprintf(stderr, "interop_gen: bad seed %s\n", argv[2]);
            return 2;
        }
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        seed %= 1000000000000ull;
    }
    if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "interop_gen: cannot create %s: %s\n", outdir, strerror(errno));
        return 2;
    }
    printf("interop_gen: seed %" PRIu64 " (repeat with: interop_gen OUTDIR %" PRIu64 ")\n", seed, seed);
    rng_seed(seed);
    matrix();
    free_owned();
    printf("interop_gen: %d files written, %d failed, seed %" PRIu64 "\n", files_ok, files_failed, seed);
    return files_failed ? 1 : 0;
}
