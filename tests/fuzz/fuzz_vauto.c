/* fuzz_vauto.c - libFuzzer target for automatic Variant shredding: the
 * decision (schema/variant/vauto.c), the per-file schema (sc_schema_derive) and
 * the conversion of each value into that layout (vs_write_value with its
 * merge-walk field lookup, schema/variant/vshred.c).
 *
 * Input: lines of JSON (each parsed and built into a Variant by the real
 * parser and builder; lines that do not parse are skipped), or, after a
 * first byte 'B', raw records (u16 metadata length, metadata, u16 value
 * length, value) that may be any bytes. Every record is observed; the
 * chosen tree is built into a layout and every record is written through
 * it: a malformed record may fail (its row is aborted), nothing may crash,
 * and every ended row must be whole in every leaf (pq_rowgroup_set_rows).
 * The records are written twice over (so that objects repeat the shape
 * of earlier ones) by a warm state that reuses its objects' plans
 * (vs_fieldmap) and reads common primitives in place, and by one with
 * both off (vs_state_set_fast): the same results, messages and leaf
 * bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec.h"
#include "column.h"
#include "json.h"
#include "../support/json_variant.c"
#include "rowgroup.h"
#include "vauto.h"
#include "vshred.h"

#define FZ_MAX_RECORDS 256

/* Not assert: the fuzz build is RelWithDebInfo (NDEBUG). */
#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_vauto: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

typedef struct fz_rec {
    uint8_t *meta, *value;
    size_t meta_len, value_len;
} fz_rec;

static bool add(fz_rec *r, const uint8_t *m, size_t ml, const uint8_t *v, size_t vl)
{
    r->meta = malloc(ml ? ml : 1);
    r->value = malloc(vl ? vl : 1);
    if (r->meta == NULL || r->value == NULL)
        return false;
    memcpy(r->meta, m, ml);
    memcpy(r->value, v, vl);
    r->meta_len = ml;
    r->value_len = vl;
    return true;
}

static size_t from_json(const uint8_t *data, size_t size, fz_rec *recs)
{
    json_parser jp;
    vr_builder b;
    size_t n = 0;
    if (json_parser_init(&jp, 32) != 0 || vr_builder_init(&b, NULL) != 0)
        abort();
    for (size_t i = 0; i < size && n < FZ_MAX_RECORDS;) {
        const uint8_t *nl = memchr(data + i, '\n', size - i);
        size_t len = nl ? (size_t)(nl - (data + i)) : size - i;
        pq_err err = {0};
        vr_variant v;
        vr_builder_reset(&b);
        if (json_parse_line(&jp, (const char *)data + i, len, &pqt_json_variant, &b, &err) == 0 &&
            vr_finish(&b, &v) == 0 && add(&recs[n], v.metadata, v.metadata_len, v.value,
                                          v.value_len))
            n++;
        i += len + 1;
    }
    json_parser_free(&jp);
    vr_builder_free(&b);
    return n;
}

static size_t from_bytes(const uint8_t *p, size_t size, fz_rec *recs)
{
    size_t n = 0, i = 0;
    while (n < FZ_MAX_RECORDS && i + 2 <= size) {
        size_t ml = (size_t)(p[i] | p[i + 1] << 8) % 512;
        i += 2;
        if (ml > size - i)
            ml = size - i;
        const uint8_t *m = p + i;
        i += ml;
        if (i + 2 > size)
            break;
        size_t vl = (size_t)(p[i] | p[i + 1] << 8) % 2048;
        i += 2;
        if (vl > size - i)
            vl = size - i;
        if (!add(&recs[n], m, ml, p + i, vl))
            break;
        n++;
        i += vl;
    }
    return n;
}

/* Every leaf of a holds what b's does. */
static void same_leaves(pq_rowgroup *a, pq_rowgroup *b)
{
    size_t na = 0, nb = 0;
    pq_column *ca = pq_rowgroup_columns(a, &na), *cb = pq_rowgroup_columns(b, &nb);
    CHECK(na == nb);
    for (size_t i = 0; i < na; i++) {
        const pq_buf *x[] = {&ca[i].values, &ca[i].heap, &ca[i].offsets, &ca[i].def, &ca[i].rep};
        const pq_buf *y[] = {&cb[i].values, &cb[i].heap, &cb[i].offsets, &cb[i].def, &cb[i].rep};
        for (size_t k = 0; k < 5; k++)
            CHECK(x[k]->len == y[k]->len &&
                   (x[k]->len == 0 || memcmp(x[k]->data, y[k]->data, x[k]->len) == 0));
        CHECK(ca[i].n_levels == cb[i].n_levels && ca[i].n_values == cb[i].n_values);
    }
}

/* One record into rg through st: 0, or the failure (the row aborted). */
static int put_record(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                      pq_err *err)
{
    int rc = pq_column_put_bytes(pq_rowgroup_column(rg, (size_t)t->metadata_leaf), 0,
                                 v->metadata, v->metadata_len);
    rc = rc ? rc : vs_write_value(st, rg, t, v, 0, err);
    if (rc != 0)
        pq_rowgroup_abort_row(rg);
    else
        pq_rowgroup_end_row(rg);
    return rc;
}

/* The chosen tree as a layout; every record written through it. */
static void write_all(sc_shred *tree, const fz_rec *recs, size_t n)
{
    static const char yaml[] = "columns:\n  - {name: v, type: variant}\n";
    sc_schema *base, *fs;
    pq_schema *ps;
    pq_rowgroup *rg, *rg2;
    pq_err err = {0}, err2 = {0};
    if (sc_schema_load_buffer("f.yaml", yaml, sizeof yaml - 1, &base, &err) != 0)
        abort();
    sc_shred *roots[1] = {tree};
    if (sc_schema_derive(base, roots, &fs, &err) != 0 ||
        sc_build_parquet_schema(fs, &ps, &err) != 0 || pq_rowgroup_new(&rg, ps, &err) != 0 ||
        pq_rowgroup_new(&rg2, ps, &err) != 0)
        abort();
    const sc_type *t = fs->columns[0].type;
    vs_state st, st2;
    vs_state_init(&st);
    vs_state_init(&st2);
    vs_state_set_fast(&st2, false);
    uint64_t rows = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        const fz_rec *r = &recs[i % n];
        vr_variant v = {r->meta, r->meta_len, r->value, r->value_len};
        int rc = put_record(&st, rg, t, &v, &err);
        int rc2 = put_record(&st2, rg2, t, &v, &err2);
        CHECK(rc == rc2);
        CHECK(rc == 0 || strcmp(err.msg, err2.msg) == 0);
        rows += rc == 0;
    }
    same_leaves(rg, rg2);
    if (pq_rowgroup_set_rows(rg, rows, &err) != 0 || pq_rowgroup_set_rows(rg2, rows, &err) != 0)
        abort();
    vs_state_free(&st);
    vs_state_free(&st2);
    pq_rowgroup_destroy(rg);
    pq_rowgroup_destroy(rg2);
    pq_schema_destroy(ps);
    sc_schema_free(fs);
    sc_schema_free(base);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_rec *recs = calloc(FZ_MAX_RECORDS, sizeof *recs);
    if (recs == NULL)
        return 0;
    size_t n = size && data[0] == 'B' ? from_bytes(data + 1, size - 1, recs)
                                      : from_json(data, size, recs);
    sc_auto lim = {true, 1 + (uint32_t)(size % 7), 1 + (uint32_t)(size % 5),
                   size % 3 ? 0.5 : 0.2};
    va_stats s;
    pq_err err = {0};
    if (va_stats_init(&s, &lim) != 0)
        abort();
    for (size_t i = 0; i < n; i++) {
        vr_variant v = {recs[i].meta, recs[i].meta_len, recs[i].value, recs[i].value_len};
        (void)va_observe(&s, &v, &err);
    }
    sc_shred *tree = NULL;
    if (va_choose(&s, &tree, &err) != 0)
        abort();
    va_stats_free(&s);
    if (tree != NULL)
        write_all(tree, recs, n);
    for (size_t i = 0; i < n; i++) {
        free(recs[i].meta);
        free(recs[i].value);
    }
    free(recs);
    return 0;
}
