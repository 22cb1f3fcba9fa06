/* test_vshred.c - Variant shredding (schema/variant/vshred.c) against
 * VariantShredding.md and the parquet-testing shredded_variant cases
 * (testdata README 2b). The spec's examples, type matching, the record
 * shredder and random round trips: test_vshred_spec.c.
 *
 * Case files. For every case, the `var` group's Parquet schema is turned
 * into schema-language YAML (`shred: {a: int32, b: string}`, `[string]`,
 * ...) and loaded with sc_schema_load_buffer. We generate YAML rather than
 * build the sc_shred tree by hand so that the layout under test (leaf
 * order, def/rep/typed_def of every node) is the one colspec computes for
 * real configurations; every case checks that this layout has every leaf
 * of the case file, with the same max levels and (but for decimal16, see
 * `known`) the same physical type. The case's expected Variants (.variant.bin) then go through
 * vs_write into a pq_writer, the file is closed, and both files are read
 * with the test-side reader (pqfile + decode.h) and compared leaf by leaf:
 * definition and repetition levels always exactly, values byte for byte,
 * or by decoded value where the spec allows another encoding (the table
 * `known` below says which cases differ, where, and why).
 *
 * Independently of the case files, every file (theirs and ours) is read
 * back by `rebuild` (vshred_rebuild.h), the spec's construct_variant over
 * levels, which also flags every shape the spec calls INVALID. Case files
 * marked INVALID and the error cases must be flagged, with the reason; our
 * files never. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "colspec.h"
#include "decode.h"
#include "pqfile.h"
#include "shred.h"
#include "variant_read.h"
#include "vshred.h"

#include "vshred_rebuild.h"
#include "memsink.h"
#include "testdata.h"

/* ---- Parquet schema -> schema-language YAML ---------------------------------- */

/* The subtree of schema elements rooted at i: returns the index after it. */
static size_t skip_element(const pqf_file *f, size_t i)
{
    int64_t kids = tr_field_int(pqf_schema_at(f, i), 5, 0);
    i++;
    for (int64_t k = 0; k < kids; k++)
        i = skip_element(f, i);
    return i;
}

static bool el_name_is(const tr_node *el, const char *name)
{
    size_t len;
    const uint8_t *p = tr_field_bin(el, 4, &len);
    return p && len == strlen(name) && memcmp(p, name, len) == 0;
}

/* Child of group g named name, or 0 (the root is never a child). */
static size_t child(const pqf_file *f, size_t g, const char *name)
{
    int64_t kids = tr_field_int(pqf_schema_at(f, g), 5, 0);
    size_t i = g + 1;
    for (int64_t k = 0; k < kids; k++) {
        if (el_name_is(pqf_schema_at(f, i), name))
            return i;
        i = skip_element(f, i);
    }
    return 0;
}

static const char *unit_of(const tr_node *u)
{
    return tr_has(u, 1) ? "ms" : tr_has(u, 2) ? "us" : "ns";
}

/* The schema-language type of a primitive typed_value, or NULL with why. */
static bool prim_type(const tr_node *el, char *out, size_t cap, const char **why)
{
    int type = (int)tr_field_int(el, 1, -1);
    const tr_node *lt = tr_field_struct(el, 10);
    const tr_node *dec = tr_field_struct(lt, 5), *ts = tr_field_struct(lt, 8),
                  *tm = tr_field_struct(lt, 7), *in = tr_field_struct(lt, 10);
    if (dec) {
        snprintf(out, cap, "\"decimal(%" PRId64 ",%" PRId64 ")\"", tr_field_int(dec, 2, 0),
                 tr_field_int(dec, 1, 0));
        return true;
    }
    switch (type) {
    case PQ_BOOLEAN: snprintf(out, cap, "bool"); return true;
    case PQ_INT32:
        if (tr_has(lt, 6))
            snprintf(out, cap, "date");
        else if (in)
            snprintf(out, cap, "%sint%" PRId64, tr_field_bool(in, 2, true) ? "" : "u",
                     tr_field_int(in, 1, 32));
        else
            snprintf(out, cap, "int32");
        return true;
    case PQ_INT64:
        if (ts)
            snprintf(out, cap, "\"timestamp(%s,%s)\"", unit_of(tr_field_struct(ts, 2)),
                     tr_field_bool(ts, 1, false) ? "utc" : "local");
        else if (tm)
            snprintf(out, cap, "\"time(%s,%s)\"", unit_of(tr_field_struct(tm, 2)),
                     tr_field_bool(tm, 1, false) ? "utc" : "local");
        else if (in)
            snprintf(out, cap, "%sint64", tr_field_bool(in, 2, true) ? "" : "u");
        else
            snprintf(out, cap, "int64");
        return true;
    case PQ_FLOAT: snprintf(out, cap, "float"); return true;
    case PQ_DOUBLE: snprintf(out, cap, "double"); return true;
    case PQ_BYTE_ARRAY:
        snprintf(out, cap, tr_has(lt, 1) || tr_field_int(el, 6, -1) == 0 ? "string" : "binary");
        return true;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        if (tr_has(lt, 14)) {
            snprintf(out, cap, "uuid");
            return true;
        }
        *why = "FIXED_LEN_BYTE_ARRAY without UUID or DECIMAL has no Variant type";
        return false;
    default:
        *why = "no Variant type for this physical type";
        return false;
    }
}

static bool shred_text(const pqf_file *f, size_t g, pq_buf *out, const char **why);

/* The shred of a group holding value / typed_value. */
static bool shred_text(const pqf_file *f, size_t g, pq_buf *out, const char **why)
{
    size_t tv = child(f, g, "typed_value");
    char b[96];
    if (tv == 0)
        return pq_buf_append(out, "variant", 7) == 0;
    const tr_node *el = pqf_schema_at(f, tv);
    if (!tr_has(el, 5)) {
        if (!prim_type(el, b, sizeof b, why))
            return false;
        return pq_buf_append(out, b, strlen(b)) == 0;
    }
    const tr_node *lt = tr_field_struct(el, 10);
    if (tr_has(lt, 3) || tr_field_int(el, 6, -1) == 3) { /* LIST */
        size_t list = child(f, tv, "list"), elem = list ? child(f, list, "element") : 0;
        if (elem == 0) {
            *why = "LIST without list.element";
            return false;
        }
        pq_buf_push(out, '[');
        if (!shred_text(f, elem, out, why))
            return false;
        return pq_buf_push(out, ']') == 0;
    }
    pq_buf_push(out, '{');
    int64_t kids = tr_field_int(el, 5, 0);
    size_t i = tv + 1;
    for (int64_t k = 0; k < kids; k++) {
        size_t len;
        const uint8_t *name = tr_field_bin(pqf_schema_at(f, i), 4, &len);
        if (k)
            pq_buf_append(out, ", ", 2);
        pq_buf_push(out, '"');
        pq_buf_append(out, name, len);
        pq_buf_append(out, "\": ", 3);
        if (!shred_text(f, i, out, why))
            return false;
        i = skip_element(f, i);
    }
    return pq_buf_push(out, '}') == 0;
}

/* YAML for the case file's `id` and `var` columns; false (with why) when
 * the layout has no schema-language equivalent. */
static bool case_yaml(const pqf_file *f, pq_buf *out, const char **why)
{
    size_t var = child(f, 0, "var");
    assert_true(var != 0);
    const char *head = "columns:\n  - {name: id, type: int32, required: true}\n"
                       "  - name: var\n    type: variant\n";
    pq_buf_reset(out);
    pq_buf_append(out, head, strlen(head));
    if (tr_field_int(pqf_schema_at(f, var), 3, -1) == PQ_REQUIRED)
        pq_buf_append(out, "    required: true\n", 19);
    if (child(f, var, "typed_value") != 0) {
        pq_buf_append(out, "    shred: ", 11);
        if (!shred_text(f, var, out, why))
            return false;
        pq_buf_push(out, '\n');
    }
    return pq_buf_push(out, 0) == 0;
}

/* ---- the case list ------------------------------------------------------------ */



static size_t load_cases(vcase *out, size_t cap)
{
    FILE *fp = fopen(pqt_testdata_path(CASE_DIR, "case_list.tsv"), "r");
    assert_non_null(fp);
    char line[4096];
    size_t n = 0;
    assert_non_null(fgets(line, sizeof line, fp)); /* header */
    while (fgets(line, sizeof line, fp) && n < cap) {
        vcase c = {0};
        char *save = NULL, *tok = strtok_r(line, "\t\n", &save);
        c.number = atoi(tok);
        tok = strtok_r(NULL, "\t\n", &save);
        snprintf(c.kind, sizeof c.kind, "%s", tok ? tok : "");
        if (strcmp(c.kind, "no-files") != 0) {
            tok = strtok_r(NULL, "\t\n", &save);
            snprintf(c.test, sizeof c.test, "%s", tok ? tok : "");
            tok = strtok_r(NULL, "\t\n", &save);
            snprintf(c.file, sizeof c.file, "%s", tok ? tok : "");
        }
        out[n++] = c;
    }
    fclose(fp);
    return n;
}

static bool is_invalid_file(const vcase *c)
{
    return strstr(c->file, "INVALID") != NULL;
}

/* Row k's expected Variant (metadata + value), false if the file is absent
 * (a null Variant in multi-row cases). */
static bool load_bin(const vcase *c, size_t k, pq_buf *out)
{
    char path[4096], stem[64];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(c->file) - strlen(".parquet")), c->file);
    snprintf(path, sizeof path, "%s/%s_row-%zu.variant.bin", pqt_testdata_path(CASE_DIR, NULL), stem, k);
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return false;
    pq_buf_reset(out);
    uint8_t b[4096];
    size_t n;
    while ((n = fread(b, 1, sizeof b, fp)) > 0)
        assert_int_equal(pq_buf_append(out, b, n), 0);
    fclose(fp);
    return true;
}

static vr_variant split_bin(const pq_buf *b)
{
    vr_meta m;
    pq_err err = {0};
    fail_if(vr_meta_open(&m, b->data, b->len, &err), &err, "bin metadata");
    size_t mlen = (size_t)(m.bytes - b->data) + m.bytes_len;
    return (vr_variant){b->data, mlen, b->data + mlen, b->len - mlen};
}


static void expect_rows(const vcase *c, const rebuilt *rows, size_t nrows, const char *whose)
{
    pq_buf bin;
    pq_buf_init(&bin);
    for (size_t r = 0; r < nrows; r++) {
        bool have = load_bin(c, r, &bin);
        if (!have || rows[r].null) {
            if (have != !rows[r].null)
                fail_msg("case %03d row %zu (%s): null Variant mismatch", c->number, r, whose);
            continue;
        }
        vr_variant e = split_bin(&bin);
        pq_err err = {0};
        int eq = vread_equal(e.metadata, e.metadata_len, e.value, e.value_len, rows[r].meta,
                             rows[r].mlen, rows[r].value.data, rows[r].value.len, &err);
        if (eq != 1) {
            pq_buf a, b;
            pq_buf_init(&a);
            pq_buf_init(&b);
            vread_to_json(&a, e.metadata, e.metadata_len, e.value, e.value_len, &err);
            vread_to_json(&b, rows[r].meta, rows[r].mlen, rows[r].value.data,
                          rows[r].value.len, &err);
            pq_buf_push(&a, 0);
            pq_buf_push(&b, 0);
            fail_msg("case %03d row %zu (%s): rebuilt %s, expected %s (%s)", c->number, r, whose,
                     (char *)b.data, (char *)a.data, err.msg);
        }
    }
    pq_buf_free(&bin);
}

/* ---- one case: their file, our file, compared -------------------------------- */



/* Opens the case file and loads its layout as our schema. false (with why)
 * when the schema language cannot express the layout. */
static bool case_open(caserun *cr, const vcase *c, const char **why)
{
    char path[4096];
    memset(cr, 0, sizeof *cr);
    cr->c = *c;
    pq_buf_init(&cr->file);
    snprintf(path, sizeof path, "%s", pqt_testdata_path(CASE_DIR, c->file));
    fdata_open(&cr->theirs, path);
    pq_buf y;
    pq_buf_init(&y);
    bool ok = case_yaml(&cr->theirs.f, &y, why);
    snprintf(cr->yaml, sizeof cr->yaml, "%s", ok ? (char *)y.data : "");
    pq_buf_free(&y);
    if (!ok)
        return false;
    pq_err err = {0};
    if (sc_schema_load_buffer("case.yaml", cr->yaml, strlen(cr->yaml), &cr->spec, &err) != 0) {
        static char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        *why = msg;
        return false;
    }
    fail_if(sc_build_parquet_schema(cr->spec, &cr->ps, &err), &err, "build schema");
    return true;
}

static void case_close(caserun *cr)
{
    if (cr->have_ours)
        fdata_close(&cr->ours);
    fdata_close(&cr->theirs);
    pq_schema_destroy(cr->ps);
    sc_schema_free(cr->spec);
    pq_buf_free(&cr->file);
}

/* Writes one Variant, or a null one, through vs_write. */
static void put_variant(vs_state *st, pq_writer *w, const sc_type *t, const pq_buf *bin,
                        bool have)
{
    pq_err err = {0};
    if (have) {
        vr_variant v = split_bin(bin);
        fail_if(vs_write(st, pq_writer_rowgroup(w), t, &v, 0, &err), &err, "vs_write");
        return;
    }
    for (int l = t->leaf; l < t->leaf + t->n_leaves; l++)
        assert_int_equal(pq_column_put_null(pq_writer_column(w, (size_t)l), 0,
                                            (uint16_t)(t->def - 1)), 0);
}

/* Our file for the case: the same ids, the expected Variants. */
static void case_write(caserun *cr)
{
    pq_err err = {0};
    pq_writer *w;
    pq_sink sink = pqt_mem_sink(&cr->file);
    fail_if(pq_writer_open(&w, cr->ps, NULL, sink, &err), &err, "writer");
    const leafdata *id = leaf_by_path(&cr->theirs, "id");
    assert_non_null(id);
    assert_int_equal(id->n, cr->theirs.nrows);
    vs_state st;
    vs_state_init(&st);
    pq_buf bin;
    pq_buf_init(&bin);
    for (size_t r = 0; r < cr->theirs.nrows; r++) {
        size_t len;
        const uint8_t *p = val_at(id, id->vidx[r], &len);
        assert_int_equal(pq_column_put_i32(pq_writer_column(w, (size_t)cr->spec->columns[0].type->leaf),
                                           0, (int32_t)le_int(p, 4)), 0);
        bool have = load_bin(&cr->c, r, &bin);
        put_variant(&st, w, cr->spec->columns[1].type, &bin, have);
        fail_if(pq_writer_end_row(w, &err), &err, "end_row");
    }
    fail_if(pq_writer_close(w, &err), &err, "close");
    pq_writer_destroy(w);
    vs_state_free(&st);
    pq_buf_free(&bin);
    char name[64];
    snprintf(name, sizeof name, "ours-%03d", cr->c.number);
    fdata_open_mem(&cr->ours, &cr->file, name);
    cr->have_ours = true;
}

typedef struct cmpres {
    int extra_leaves;            /* ours only (a `value` the case omits), all null */
    int value_by_value;          /* `value` entries equal as Variants, not as bytes */
    int typed_by_value;          /* typed entries equal as numbers, not as bytes */
    bool physical_differs;       /* a typed leaf with another physical type */
    char level_diffs[256];       /* leaves whose levels differ, space-separated */
} cmpres;



/* Leaf by leaf: levels exactly; values as bytes, or as values. */
static void case_compare(caserun *cr, cmpres *res)
{
    memset(res, 0, sizeof *res);
    const leafdata *meta = leaf_by_path(&cr->theirs, "var.metadata");
    assert_non_null(meta);
    for (size_t j = 0; j < cr->theirs.nleaves; j++) {
        const leafdata *a = &cr->theirs.leaves[j], *b = leaf_by_path(&cr->ours, a->path);
        if (b == NULL)
            fail_msg("case %03d: our layout has no leaf %s", cr->c.number, a->path);
        if (a->max_def != b->max_def || a->max_rep != b->max_rep)
            fail_msg("case %03d %s: max levels %u/%u, ours %u/%u", cr->c.number, a->path,
                     a->max_def, a->max_rep, b->max_def, b->max_rep);
        bool same = a->n == b->n;
        for (size_t i = 0; same && i < a->n; i++)
            same = a->def[i] == b->def[i] && a->rep[i] == b->rep[i];
        if (!same) { /* then values cannot be paired up; the caller decides */
            size_t used = strlen(res->level_diffs);
            snprintf(res->level_diffs + used, sizeof res->level_diffs - used, "%s%s",
                     used ? " " : "", a->path);
            continue;
        }
        res->physical_differs |= a->type != b->type;
        for (size_t i = 0; i < a->n; i++) {
            if (a->vidx[i] == SIZE_MAX)
                continue;
            size_t la, lb, lm;
            const uint8_t *pa = val_at(a, a->vidx[i], &la), *pb = val_at(b, b->vidx[i], &lb);
            if (la == lb && (la == 0 || memcmp(pa, pb, la) == 0))
                continue;
            if (ends_with(a->path, ".value")) {
                const uint8_t *m = val_at(meta, meta->vidx[a->row[i]], &lm);
                pq_err err = {0};
                if (vread_equal(m, lm, pa, la, m, lm, pb, lb, &err) != 1)
                    fail_msg("case %03d %s entry %zu: Variants differ (%s)", cr->c.number,
                             a->path, i, err.msg);
                res->value_by_value++;
            } else if (a->type != b->type &&
                       (a->type == PQ_BYTE_ARRAY || a->type == PQ_FIXED_LEN_BYTE_ARRAY) &&
                       (b->type == PQ_BYTE_ARRAY || b->type == PQ_FIXED_LEN_BYTE_ARRAY)) {
                if (be_int(pa, la) != be_int(pb, lb)) /* decimals, big-endian */
                    fail_msg("case %03d %s entry %zu: decimals differ", cr->c.number, a->path, i);
                res->typed_by_value++;
            } else {
                fail_msg("case %03d %s entry %zu: values differ", cr->c.number, a->path, i);
            }
        }
    }
    for (size_t j = 0; j < cr->ours.nleaves; j++) {
        const leafdata *b = &cr->ours.leaves[j];
        if (leaf_by_path(&cr->theirs, b->path) != NULL)
            continue;
        for (size_t i = 0; i < b->n; i++)
            if (b->vidx[i] != SIZE_MAX)
                fail_msg("case %03d: our extra leaf %s has a value", cr->c.number, b->path);
        res->extra_leaves++;
    }
}

/* ---- tests: the valid cases ---------------------------------------------------- */

/* The valid cases where our file is not byte- and level-identical to the
 * case file, and why. Every other valid case must be identical: the same
 * levels in every leaf, the same bytes in every value. */
static const struct known {
    int number;
    const char *their_violation; /* what rebuild flags in THEIR file */
    const char *level_diffs;     /* leaves whose levels differ */
    int extra_leaves;            /* `value` columns the case omits */
    int typed_by_value;          /* typed entries equal as numbers only */
} known[] = {
    /* decimal(38,9): BYTE_ARRAY with minimal bytes there; colspec lays out
     * p <= 38 as FIXED_LEN_BYTE_ARRAY(16). Both are the spec's decimal16
     * mapping (BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY); equal as numbers. */
    {28, NULL, NULL, 0, 1},
    {29, NULL, NULL, 0, 1},
    /* The case has no `value` column where no value needs one (041: the top
     * level of an array; 131: a required int32 Variant; 132: both fields).
     * colspec always lays out `value`; ours is all null there. */
    {41, NULL, NULL, 1, 0},
    {131, NULL, NULL, 1, 0},
    {132, NULL, NULL, 2, 0},
    /* A null array element with value and typed_value both null: readers
     * must return Variant null for it, but "Null elements must be encoded
     * in value as Variant null" (Arrays), so we write 00 (def 4, not 3). */
    {85, "var[0]: array element with value and typed_value both null",
     "var.typed_value.list.element.value", 0, 0},
    /* The same at the top: a present Variant with both null reads as 00;
     * we write value = 00, as the spec's measurement table does. */
    {129, "var: value and typed_value both null for a present Variant", "var.value", 0, 0},
};

static const struct known *known_case(int number)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].number == number)
            return &known[i];
    return NULL;
}

/* Rebuilds a file and checks it against the case's expected Variants;
 * returns the violation ("" none) in viol. */
static void rebuild_and_expect(caserun *cr, fdata *d, bool strict, char *viol, size_t cap,
                               const char *whose)
{
    rebuilt *rows = calloc(d->nrows + 1, sizeof *rows);
    rebuild_file(d, cr->spec, cr->ps, strict, rows, viol, cap);
    expect_rows(&cr->c, rows, d->nrows, whose);
    rebuilt_free(rows, d->nrows);
    free(rows);
}

static void test_vshred_valid_cases_match_case_files(void **state)
{
    (void)state;
    vcase cases[200];
    size_t n = load_cases(cases, 200), ran = 0, exact = 0;
    for (size_t k = 0; k < n; k++) {
        const vcase *c = &cases[k];
        if (strcmp(c->kind, "single-row") != 0 && strcmp(c->kind, "multi-row") != 0)
            continue;
        if (is_invalid_file(c))
            continue;
        caserun cr;
        const char *why = "";
        if (!case_open(&cr, c, &why))
            fail_msg("case %03d: no schema for the layout: %s", c->number, why);
        const struct known *kn = known_case(c->number);
        char viol[256];
        /* their file through our layout and reader gives the expected
         * Variants: the reader and the layout agree with Iceberg's */
        rebuild_and_expect(&cr, &cr.theirs, false, viol, sizeof viol, "their file");
        if (strcmp(viol, kn && kn->their_violation ? kn->their_violation : "") != 0)
            fail_msg("case %03d: their file: violation '%s'", c->number, viol);
        /* ours: the same Variants, nothing INVALID, nothing left unshredded */
        case_write(&cr);
        rebuild_and_expect(&cr, &cr.ours, true, viol, sizeof viol, "our file");
        if (viol[0])
            fail_msg("case %03d: our file: %s", c->number, viol);
        cmpres res;
        case_compare(&cr, &res);
        if (strcmp(res.level_diffs, kn && kn->level_diffs ? kn->level_diffs : "") != 0 ||
            res.extra_leaves != (kn ? kn->extra_leaves : 0) ||
            res.typed_by_value != (kn ? kn->typed_by_value : 0) || res.value_by_value != 0 ||
            res.physical_differs != (kn && kn->typed_by_value > 0))
            fail_msg("case %03d (%s): levels differ in '%s', %d extra leaves, %d typed and %d "
                     "value entries equal only by value", c->number, c->test, res.level_diffs,
                     res.extra_leaves, res.typed_by_value, res.value_by_value);
        exact += kn == NULL;
        ran++;
        case_close(&cr);
    }
    assert_int_equal(ran, 86);
    assert_int_equal(exact, 79);
}

/* ---- tests: INVALID and error cases -------------------------------------------- */

/* Writes one Variant through vs_write with the case's layout, reads the
 * file back and checks that it rebuilds to the same Variant with nothing
 * INVALID in it (strict: typed values always shredded). */
static void write_one_and_check(caserun *cr, const uint8_t *meta, size_t mlen,
                                const uint8_t *val, size_t vlen)
{
    pq_err err = {0};
    pq_writer *w;
    pq_buf file;
    pq_buf_init(&file);
    pq_sink sink = pqt_mem_sink(&file);
    fail_if(pq_writer_open(&w, cr->ps, NULL, sink, &err), &err, "writer");
    vs_state st;
    vs_state_init(&st);
    vr_variant v = {meta, mlen, val, vlen};
    assert_int_equal(pq_column_put_i32(pq_writer_column(w, 0), 0, 1), 0);
    fail_if(vs_write(&st, pq_writer_rowgroup(w), cr->spec->columns[1].type, &v, 0, &err), &err,
            "vs_write");
    fail_if(pq_writer_end_row(w, &err), &err, "end_row");
    fail_if(pq_writer_close(w, &err), &err, "close");
    pq_writer_destroy(w);
    vs_state_free(&st);
    fdata d;
    fdata_open_mem(&d, &file, "one");
    rebuilt row;
    char viol[256];
    rebuild_file(&d, cr->spec, cr->ps, true, &row, viol, sizeof viol);
    if (viol[0])
        fail_msg("case %03d: our file: %s", cr->c.number, viol);
    assert_int_equal(vread_equal(meta, mlen, val, vlen, row.meta, row.mlen, row.value.data,
                                 row.value.len, &err), 1);
    rebuilt_free(&row, 1);
    fdata_close(&d);
    pq_buf_free(&file);
}

static const uint8_t *first_value(caserun *cr, const char *path, size_t *len)
{
    const leafdata *l = leaf_by_path(&cr->theirs, path);
    assert_non_null(l);
    for (size_t i = 0; i < l->n; i++)
        if (l->vidx[i] != SIZE_MAX)
            return val_at(l, l->vidx[i], len);
    fail_msg("%s has no value", path);
    return NULL;
}

static vcase find_case(int number)
{
    vcase cases[200];
    size_t n = load_cases(cases, 200);
    for (size_t k = 0; k < n; k++)
        if (cases[k].number == number)
            return cases[k];
    fail_msg("no case %d", number);
    return cases[0];
}

/* Each INVALID or error case file: rebuild flags the shape that makes it
 * invalid; then each Variant a reader could take from it (typed_value
 * wins, or value wins) goes through our writer, which lays it out validly.
 *
 *   040 an array element with both value (int32 3) and typed_value
 *       ("comedy"): ours puts a string element in typed_value and anything
 *       else in value, never both.
 *   087 typed_value object fields set while value is int32 34: for a
 *       non-object we leave typed_value null (fields at def 1 < typed_def).
 *   043 value {b: 2024-01-30} while b is a shredded field (missing in
 *       typed_value); Iceberg reads {a: null}.
 *   125 the same value while b is also typed ("iceberg"); typed wins.
 *       For both, our partial objects are built with every shredded name
 *       dropped (vr_object_append_without), so b can only be in
 *       typed_value or in b.value. */
static void test_vshred_invalid_cases_flagged_and_never_written(void **state)
{
    (void)state;
    static const struct {
        int number;
        const char *violation;
    } bad[] = {
        {40, "var[0]: value and typed_value both non-null for a primitive"},
        {87, "var: typed_value is an object but value is not (type 5)"},
        {43, "var: field 'b' is shredded but also in value"},
        {125, "var: field 'b' is shredded but also in value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vcase c = find_case(bad[i].number);
        caserun cr;
        const char *why = "";
        assert_true(case_open(&cr, &c, &why));
        rebuilt row;
        char viol[256];
        assert_int_equal(cr.theirs.nrows, 1);
        rebuild_file(&cr.theirs, cr.spec, cr.ps, false, &row, viol, sizeof viol);
        assert_string_equal(viol, bad[i].violation);
        if (strcmp(c.kind, "error") != 0) /* INVALID with a listed reading */
            expect_rows(&c, &row, 1, "their file, typed_value wins");
        /* reading 1: typed_value wins */
        write_one_and_check(&cr, row.meta, row.mlen, row.value.data, row.value.len);
        /* reading 2: value wins */
        size_t vl, al;
        const uint8_t *vb;
        pq_buf alt;
        pq_buf_init(&alt);
        pq_err err = {0};
        if (bad[i].number == 40) { /* [3] */
            vb = first_value(&cr, "var.typed_value.list.element.value", &vl);
            vr_slice el = {vb, vl};
            fail_if(vr_value_append_array(&alt, &el, 1, &err), &err, "array");
        } else if (bad[i].number == 87) { /* 34 */
            vb = first_value(&cr, "var.value", &vl);
            pq_buf_append(&alt, vb, vl);
        } else { /* {a: null, b: 2024-01-30} */
            vr_container obj;
            const uint8_t *bv, *av = first_value(&cr, "var.typed_value.a.value", &al);
            uint32_t bid;
            vb = first_value(&cr, "var.value", &vl);
            fail_if(vr_container_open(&obj, vb, vl, &err), &err, "value");
            fail_if(vr_container_get(&obj, 0, &bid, &bv, &vl, &err), &err, "b");
            vr_field f[2] = {{0, av, al}, {bid, bv, vl}};
            vr_meta m;
            fail_if(vr_meta_open(&m, row.meta, row.mlen, &err), &err, "meta");
            fail_if(vr_value_append_object(&alt, &m, f, 2, &err), &err, "object");
        }
        write_one_and_check(&cr, row.meta, row.mlen, alt.data, alt.len);
        pq_buf_free(&alt);
        rebuilt_free(&row, 1);
        case_close(&cr);
    }
}

/* 127 (INTEGER(32,false)) and 137 (bare FIXED_LEN_BYTE_ARRAY(4)) are
 * reader errors: the typed_value type is not in the spec's table. The
 * writer-side counterpart is the schema language: it refuses unsigned
 * shred types, and no shred type lays out an unannotated FLBA. */
static void test_vshred_unsupported_typed_value_types_cannot_be_configured(void **state)
{
    (void)state;
    vcase c = find_case(127);
    caserun cr;
    const char *why = "";
    assert_false(case_open(&cr, &c, &why));
    assert_non_null(strstr(why, "cannot shred as 'uint32': Variant integers are signed"));
    fdata_close(&cr.theirs);
    pq_buf_free(&cr.file);
    c = find_case(137);
    assert_false(case_open(&cr, &c, &why));
    assert_string_equal(why, "FIXED_LEN_BYTE_ARRAY without UUID or DECIMAL has no Variant type");
    fdata_close(&cr.theirs);
    pq_buf_free(&cr.file);
    /* every shred type: FLBA only as UUID or DECIMAL, INT32/64 ints signed */
    const char *yaml =
        "columns:\n  - name: v\n    type: variant\n    shred: {a: bool, b: int8, c: int16, "
        "d: int32, e: int64, f: float, g: double, h: \"decimal(9,2)\", i: \"decimal(18,2)\", "
        "j: \"decimal(38,9)\", k: date, l: time, m: \"timestamp(us,utc)\", "
        "n: \"timestamp(ns,local)\", o: string, p: binary, q: uuid}\n";
    sc_schema *spec;
    pq_err err = {0};
    fail_if(sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &spec, &err), &err, "load");
    const sc_shred *root = spec->columns[0].type->shred;
    for (size_t i = 0; i < root->n_fields; i++) {
        const sc_type *t = root->fields[i].shred->type;
        if (t->physical == PQ_FIXED_LEN_BYTE_ARRAY)
            assert_true(t->kind == SC_UUID || t->kind == SC_DECIMAL);
        if (t->kind == SC_INT)
            assert_true(t->is_signed);
    }
    sc_schema_free(spec);
    const char *bad[] = {"uint8", "uint16", "uint32", "uint64", "float16", "interval", "json",
                         "\"timestamp(ms,utc)\"", "\"time(ms)\"", "\"decimal(39,2)\"",
                         "\"decimal(2,2)\"", "\"decimal(38,38)\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char y[256];
        snprintf(y, sizeof y, "columns:\n  - {name: v, type: variant, shred: {x: %s}}\n", bad[i]);
        if (sc_schema_load_buffer("t.yaml", y, strlen(y), &spec, &err) == 0)
            fail_msg("shred type %s was accepted", bad[i]);
    }
}

int main(void)
{
    pqt_testdata_require("test_vshred", "parquet-testing/shredded_variant");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vshred_valid_cases_match_case_files),
        cmocka_unit_test(test_vshred_invalid_cases_flagged_and_never_written),
        cmocka_unit_test(test_vshred_unsupported_typed_value_types_cannot_be_configured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
