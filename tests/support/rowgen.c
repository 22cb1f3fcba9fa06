/* rowgen.c - seeded random rows for any schema (see rowgen.h). */
#include "rowgen.h"
#include "decode.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int add_leaf(pq_schema *s, int parent, const char *name, pq_repetition rep,
                    pq_physical_type type, int32_t len, pq_logical_kind lk,
                    const pq_column_opts *o)
{
    pq_err err = {0};
    pq_node_spec spec = {.name = name, .repetition = rep, .type = type, .type_length = len,
                         .logical = {.kind = lk}, .field_id = -1, .opts = o};
    int id = pq_schema_add_leaf(s, parent, &spec, &err);
    if (id < 0)
        fprintf(stderr, "rowgen: leaf %s: %s\n", name, err.msg);
    return id;
}

static int add_group(pq_schema *s, int parent, const char *name, pq_repetition rep)
{
    pq_err err = {0};
    pq_node_spec spec = {.name = name, .repetition = rep, .field_id = -1};
    return pq_schema_add_group(s, parent, &spec, &err);
}

pq_schema *pqt_rowgen_schema(const pq_column_opts *opts)
{
    pq_err err = {0};
    pq_column_opts bloom;
    if (opts != NULL)
        bloom = *opts;
    else
        pq_column_opts_default(&bloom);
    bloom.bloom = 1;
    pq_schema *s = pq_schema_new(NULL);
    int ok = s != NULL;
    /* flat: every physical type, required and optional */
    ok = ok && add_leaf(s, 0, "b", PQ_REQUIRED, PQ_BOOLEAN, 0, PQ_LT_NONE, opts) > 0;
    ok = ok && add_leaf(s, 0, "i32", PQ_OPTIONAL, PQ_INT32, 0, PQ_LT_NONE, opts) > 0;
    ok = ok && add_leaf(s, 0, "i64", PQ_REQUIRED, PQ_INT64, 0, PQ_LT_NONE, opts) > 0;
    ok = ok && add_leaf(s, 0, "f", PQ_OPTIONAL, PQ_FLOAT, 0, PQ_LT_NONE, opts) > 0;
    ok = ok && add_leaf(s, 0, "d", PQ_REQUIRED, PQ_DOUBLE, 0, PQ_LT_NONE, opts) > 0;
    ok = ok && add_leaf(s, 0, "i96", PQ_OPTIONAL, PQ_INT96, 0, PQ_LT_NONE, opts) > 0;
    ok = ok && add_leaf(s, 0, "fl", PQ_OPTIONAL, PQ_FIXED_LEN_BYTE_ARRAY, 16, PQ_LT_UUID,
                        opts) > 0;
    ok = ok && add_leaf(s, 0, "h", PQ_OPTIONAL, PQ_FIXED_LEN_BYTE_ARRAY, 2, PQ_LT_FLOAT16,
                        opts) > 0;
    ok = ok && add_leaf(s, 0, "s", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, PQ_LT_STRING, &bloom) > 0;
    ok = ok && add_leaf(s, 0, "bin", PQ_REQUIRED, PQ_BYTE_ARRAY, 0, PQ_LT_NONE, opts) > 0;
    /* optional list of optional strings */
    int l = ok ? pq_schema_add_list(s, 0, "tags", PQ_OPTIONAL, -1, &err) : -1;
    ok = l > 0 && add_leaf(s, l, "element", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, PQ_LT_STRING,
                           opts) > 0;
    /* map<string, optional int64> */
    int m = ok ? pq_schema_add_map(s, 0, "attrs", PQ_OPTIONAL, -1, &err) : -1;
    ok = m > 0 && add_leaf(s, m, "key", PQ_REQUIRED, PQ_BYTE_ARRAY, 0, PQ_LT_STRING, opts) > 0;
    ok = ok && add_leaf(s, m, "value", PQ_OPTIONAL, PQ_INT64, 0, PQ_LT_NONE, opts) > 0;
    /* optional struct {required int32 a; optional binary b} */
    int g = ok ? add_group(s, 0, "st", PQ_OPTIONAL) : -1;
    ok = g > 0 && add_leaf(s, g, "a", PQ_REQUIRED, PQ_INT32, 0, PQ_LT_NONE, opts) > 0;
    ok = ok && add_leaf(s, g, "b", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, PQ_LT_NONE, opts) > 0;
    /* required list of optional lists of optional int32 (max rep 2) */
    int outer = ok ? pq_schema_add_list(s, 0, "matrix", PQ_REQUIRED, -1, &err) : -1;
    int inner = outer > 0 ? pq_schema_add_list(s, outer, "element", PQ_OPTIONAL, -1, &err) : -1;
    ok = inner > 0 && add_leaf(s, inner, "element", PQ_OPTIONAL, PQ_INT32, 0, PQ_LT_NONE,
                               opts) > 0;
    /* optional list of optional structs {optional double x; optional string y} */
    int ls = ok ? pq_schema_add_list(s, 0, "events", PQ_OPTIONAL, -1, &err) : -1;
    int el = ls > 0 ? add_group(s, ls, "element", PQ_OPTIONAL) : -1;
    ok = el > 0 && add_leaf(s, el, "x", PQ_OPTIONAL, PQ_DOUBLE, 0, PQ_LT_NONE, opts) > 0;
    ok = ok && add_leaf(s, el, "y", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, PQ_LT_STRING, opts) > 0;
    if (ok && pq_schema_finish(s, &err) == 0)
        return s;
    fprintf(stderr, "rowgen: schema: %s\n", err.msg);
    pq_schema_destroy(s);
    return NULL;
}

/* A byte array: mostly one of a few short words (dictionaries, repeats),
 * sometimes empty, sometimes random bytes of up to 40. */
static size_t gen_bytes(pqt_rng *r, uint8_t *buf)
{
    static const char *words[] = {"GET", "POST", "alpha", "beta", "gamma", "/index.html",
                                  "\xc3\xa9t\xc3\xa9", "x"};
    uint64_t k = pqt_rng_below(r, 16);
    if (k == 0)
        return 0;
    if (k < 10) {
        const char *w = words[pqt_rng_below(r, sizeof words / sizeof words[0])];
        memcpy(buf, w, strlen(w));
        return strlen(w);
    }
    size_t n = (size_t)pqt_rng_below(r, 41);
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)pqt_rng_next(r);
    return n;
}

static int put_value(pq_column *c, pqt_rng *r, uint16_t rep)
{
    uint8_t buf[64];
    uint64_t x = pqt_rng_next(r);
    switch (c->node->type) {
    case PQ_BOOLEAN: return pq_column_put_bool(c, rep, x & 1);
    case PQ_INT32: return pq_column_put_i32(c, rep, (int32_t)(x % 2000) - 1000);
    case PQ_INT64: return pq_column_put_i64(c, rep, (int64_t)x);
    case PQ_FLOAT: return pq_column_put_float(c, rep, x % 50 == 0 ? (float)NAN
                                                                 : (float)(x % 100000) / 7.0f);
    case PQ_DOUBLE: return pq_column_put_double(c, rep, (double)(int64_t)x / 1e6);
    case PQ_BYTE_ARRAY: return pq_column_put_bytes(c, rep, buf, gen_bytes(r, buf));
    default: /* INT96, FIXED_LEN_BYTE_ARRAY (FLOAT16 too): random bytes */
        for (size_t i = 0; i < c->width; i++)
            buf[i] = (uint8_t)pqt_rng_next(r);
        return pq_column_put_bytes(c, rep, buf, c->width);
    }
}

/* One leaf's entries of a row: one for flat leaves, else 1-4 with random
 * repetition levels; three in four values defined. */
static int put_leaf(pq_column *c, pqt_rng *r)
{
    size_t n = c->max_rep ? 1 + (size_t)pqt_rng_below(r, 4) : 1;
    for (size_t i = 0; i < n; i++) {
        uint16_t rep = i == 0 ? 0 : (uint16_t)(1 + pqt_rng_below(r, c->max_rep));
        bool defined = c->max_def == 0 || pqt_rng_below(r, 4) != 0;
        int rc = defined ? put_value(c, r, rep)
                         : pq_column_put_null(c, rep, (uint16_t)pqt_rng_below(r, c->max_def));
        if (rc != 0)
            return rc;
    }
    return 0;
}

int pqt_rowgen_values(pq_column *(*leaf)(void *ctx, size_t i), void *ctx, size_t n_leaves,
                      uint64_t seed, uint64_t row)
{
    pqt_rng r = {.state = seed * 0x9e3779b97f4a7c15ull ^ (row + 1) * 0xbf58476d1ce4e5b9ull};
    for (size_t i = 0; i < n_leaves; i++) {
        int rc = put_leaf(leaf(ctx, i), &r);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static pq_column *rg_leaf(void *ctx, size_t i) { return pq_rowgroup_column(ctx, i); }
static pq_column *writer_leaf(void *ctx, size_t i) { return pq_writer_column(ctx, i); }

int pqt_rowgen_rg(pq_rowgroup *rg, uint64_t seed, uint64_t row)
{
    int rc = pqt_rowgen_values(rg_leaf, rg, pq_rowgroup_num_columns(rg), seed, row);
    if (rc == 0)
        pq_rowgroup_end_row(rg);
    return rc;
}

int pqt_rowgen_writer(pq_writer *w, size_t n_leaves, uint64_t seed, uint64_t row,
                      pq_err *err)
{
    int rc = pqt_rowgen_values(writer_leaf, w, n_leaves, seed, row);
    return rc ? pq_err_set(err, rc, "rowgen: row %llu: put failed", (unsigned long long)row)
              : pq_writer_end_row(w, err);
}
