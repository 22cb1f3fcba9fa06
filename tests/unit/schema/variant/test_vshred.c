/* test_vshred.c - Variant shredding (schema/vshred.c) against
 * VariantShredding.md and the parquet-testing shredded_variant cases
 * (testdata README 2b).
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
 * back by `rebuild`, the spec's construct_variant over levels, which also
 * flags every shape the spec calls INVALID. Case files marked INVALID and
 * the error cases must be flagged, with the reason; our files never. */
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

#define CASE_DIR PQ_TESTDATA "/parquet-testing/shredded_variant"

/* ---- reading a file's columns --------------------------------------------- */

/* One leaf, all row groups: levels per entry, values per defined entry. */
typedef struct leafdata {
    const char *path;            /* points into the pqf_file */
    int type;
    int32_t type_length;
    uint16_t max_def, max_rep;
    size_t n;                    /* level entries */
    uint16_t *def, *rep;
    size_t *vidx;                /* per entry: value index, SIZE_MAX = null */
    size_t *row;                 /* per entry: row number */
    pq_buf heap, off;            /* values: heap[off[i] .. off[i+1]) (uint32 off) */
    size_t nv;
} leafdata;

typedef struct fdata {
    pqf_file f;
    leafdata *leaves;
    size_t nleaves;
    size_t nrows;
} fdata;

static void fail_if(int rc, const pq_err *err, const char *what)
{
    if (rc != 0)
        fail_msg("%s: %s (%d)", what, err->msg, rc);
}

static const uint8_t *val_at(const leafdata *l, size_t v, size_t *len)
{
    const uint32_t *off = (const uint32_t *)(const void *)l->off.data;
    *len = off[v + 1] - off[v];
    return l->heap.data ? l->heap.data + off[v] : (const uint8_t *)""; /* all empty */
}

static void push_val(leafdata *l, const void *p, size_t len)
{
    uint32_t end;
    assert_int_equal(pq_buf_append(&l->heap, p, len), 0);
    end = (uint32_t)l->heap.len;
    assert_int_equal(pq_buf_append(&l->off, &end, 4), 0);
    l->nv++;
}

static size_t plain_width(const leafdata *l)
{
    switch (l->type) {
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return (size_t)l->type_length;
    default: return 0;
    }
}

/* Decodes n values of encoding enc into dst (as byte strings). */
static void decode_values(leafdata *l, int enc, const uint8_t *p, size_t len, size_t n,
                          const leafdata *dict)
{
    size_t w = plain_width(l);
    pqt_bytes b = {0};
    uint8_t *tmp = malloc(n * (w ? w : 1) + 8);
    uint32_t *idx = malloc(n * sizeof *idx + 4);
    size_t got = 0;
    assert_non_null(tmp);
    assert_non_null(idx);
    switch (enc) {
    case PQ_ENC_PLAIN:
        if (l->type == PQ_BOOLEAN) {
            assert_int_equal(pqt_plain_decode_bool(p, len, tmp, n, NULL), 0);
            for (size_t i = 0; i < n; i++)
                push_val(l, tmp + i, 1);
        } else if (l->type == PQ_BYTE_ARRAY) {
            assert_int_equal(pqt_plain_decode_bytes(p, len, n, &b, NULL), 0);
        } else {
            assert_int_equal(pqt_plain_decode_fixed(p, len, tmp, n, w, NULL), 0);
            for (size_t i = 0; i < n; i++)
                push_val(l, tmp + i * w, w);
        }
        break;
    case PQ_ENC_PLAIN_DICTIONARY: case PQ_ENC_RLE_DICTIONARY:
        assert_non_null(dict);
        assert_true(len >= 1);
        assert_int_equal(pqt_rle_decode(p + 1, len - 1, p[0], idx, n, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            size_t dl;
            assert_true(idx[i] < dict->nv);
            const uint8_t *dv = val_at(dict, idx[i], &dl);
            push_val(l, dv, dl);
        }
        break;
    case PQ_ENC_RLE: /* booleans: 4-byte length, then the hybrid at width 1 */
        assert_true(l->type == PQ_BOOLEAN && len >= 4);
        assert_int_equal(pqt_rle_decode(p + 4, len - 4, 1, idx, n, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            uint8_t bv = (uint8_t)idx[i];
            push_val(l, &bv, 1);
        }
        break;
    case PQ_ENC_DELTA_BINARY_PACKED:
        if (l->type == PQ_INT32) {
            int32_t *v = malloc(n * 4 + 4);
            assert_int_equal(pqt_delta_decode_i32(p, len, v, n, &got, NULL), 0);
            assert_int_equal(got, n);
            for (size_t i = 0; i < n; i++)
                push_val(l, v + i, 4);
            free(v);
        } else {
            int64_t *v = malloc(n * 8 + 8);
            assert_int_equal(pqt_delta_decode_i64(p, len, v, n, &got, NULL), 0);
            assert_int_equal(got, n);
            for (size_t i = 0; i < n; i++)
                push_val(l, v + i, 8);
            free(v);
        }
        break;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        assert_int_equal(pqt_delta_length_decode(p, len, &b, NULL), 0);
        break;
    case PQ_ENC_DELTA_BYTE_ARRAY:
        assert_int_equal(pqt_delta_bytes_decode(p, len, &b, NULL), 0);
        break;
    case PQ_ENC_BYTE_STREAM_SPLIT:
        assert_int_equal(pqt_bss_decode(p, len, tmp, n, w, NULL), 0);
        for (size_t i = 0; i < n; i++)
            push_val(l, tmp + i * w, w);
        break;
    default:
        fail_msg("%s: encoding %d not handled by this test", l->path, enc);
    }
    if (b.off != NULL) {
        assert_int_equal(b.n, n);
        for (size_t i = 0; i < n; i++)
            push_val(l, b.heap + b.off[i], b.off[i + 1] - b.off[i]);
    }
    pqt_bytes_free(&b);
    free(tmp);
    free(idx);
}

static void read_leaf(const pqf_file *f, size_t li, leafdata *l)
{
    const pqf_leaf *pl = &f->leaves[li];
    pq_err err = {0};
    uint32_t zero = 0;
    *l = (leafdata){.path = pl->path, .type = pl->type, .type_length = pl->type_length,
                    .max_def = (uint16_t)pl->max_def, .max_rep = (uint16_t)pl->max_rep};
    pq_buf_init(&l->heap);
    pq_buf_init(&l->off);
    assert_int_equal(pq_buf_append(&l->off, &zero, 4), 0);
    leafdata dict = {.type = l->type, .type_length = l->type_length, .path = l->path};
    size_t cap = 0, row = (size_t)-1;
    for (size_t rg = 0; rg < pqf_num_row_groups(f); rg++) {
        pqf_chunk ch;
        pqf_pages it;
        fail_if(pqf_chunk_get(f, rg, li, &ch, &err), &err, "chunk");
        fail_if(pqf_pages_init(&it, f, &ch, &err), &err, "pages");
        int more;
        while ((more = pqf_pages_next(&it, &err)) == 1) {
            const pqf_page *pg = &it.page;
            uint8_t *buf;
            size_t blen;
            fail_if(pqf_page_decompress(pg, (pq_codec)ch.codec, &buf, &blen, &err), &err,
                    "decompress");
            if (pg->type == PQ_PAGE_DICTIONARY) {
                pq_buf_free(&dict.heap);
                pq_buf_free(&dict.off);
                pq_buf_init(&dict.heap);
                pq_buf_init(&dict.off);
                dict.nv = 0;
                assert_int_equal(pq_buf_append(&dict.off, &zero, 4), 0);
                decode_values(&dict, PQ_ENC_PLAIN, buf, blen, (size_t)pg->num_values, NULL);
                free(buf);
                continue;
            }
            assert_true(pqf_page_is_data(pg));
            pqf_parts parts;
            fail_if(pqf_page_split(pg, buf, blen, l->max_rep, l->max_def, &parts, &err), &err,
                    "split");
            size_t n = (size_t)pg->num_values;
            if (l->n + n > cap) {
                cap = (l->n + n) * 2;
                l->def = realloc(l->def, cap * sizeof *l->def);
                l->rep = realloc(l->rep, cap * sizeof *l->rep);
                l->vidx = realloc(l->vidx, cap * sizeof *l->vidx);
                l->row = realloc(l->row, cap * sizeof *l->row);
                assert_true(l->def && l->rep && l->vidx && l->row);
            }
            uint16_t *d = l->def + l->n, *r = l->rep + l->n;
            if (l->max_def)
                fail_if(pqf_levels_decode(parts.def, parts.def_len, l->max_def, n, d, NULL, &err),
                        &err, "def");
            else
                for (size_t i = 0; i < n; i++)
                    d[i] = 0;
            if (l->max_rep)
                fail_if(pqf_levels_decode(parts.rep, parts.rep_len, l->max_rep, n, r, NULL, &err),
                        &err, "rep");
            else
                for (size_t i = 0; i < n; i++)
                    r[i] = 0;
            size_t nn = 0;
            for (size_t i = 0; i < n; i++) {
                if (r[i] == 0)
                    row++;
                l->row[l->n + i] = row;
                l->vidx[l->n + i] = d[i] == l->max_def ? l->nv + nn++ : SIZE_MAX;
            }
            decode_values(l, pg->encoding, parts.values, parts.values_len, nn, &dict);
            l->n += n;
            free(buf);
        }
        fail_if(more, &err, "page");
        pqf_pages_free(&it);
    }
    pq_buf_free(&dict.heap);
    pq_buf_free(&dict.off);
}

static void fdata_open_common(fdata *d)
{
    d->nleaves = d->f.nleaves;
    d->leaves = calloc(d->nleaves, sizeof *d->leaves);
    assert_non_null(d->leaves);
    d->nrows = 0;
    for (size_t rg = 0; rg < pqf_num_row_groups(&d->f); rg++)
        d->nrows += (size_t)tr_field_int(pqf_row_group(&d->f, rg), 3, 0);
    for (size_t i = 0; i < d->nleaves; i++)
        read_leaf(&d->f, i, &d->leaves[i]);
}

static void fdata_open(fdata *d, const char *path)
{
    pq_err err = {0};
    fail_if(pqf_open(&d->f, path, &err), &err, path);
    fdata_open_common(d);
}

static void fdata_open_mem(fdata *d, const pq_buf *b, const char *name)
{
    pq_err err = {0};
    fail_if(pqf_open_mem(&d->f, b->data, b->len, name, &err), &err, name);
    fdata_open_common(d);
}

static void fdata_close(fdata *d)
{
    for (size_t i = 0; i < d->nleaves; i++) {
        leafdata *l = &d->leaves[i];
        free(l->def);
        free(l->rep);
        free(l->vidx);
        free(l->row);
        pq_buf_free(&l->heap);
        pq_buf_free(&l->off);
    }
    free(d->leaves);
    pqf_close(&d->f);
}

static leafdata *leaf_by_path(fdata *d, const char *path)
{
    for (size_t i = 0; i < d->nleaves; i++)
        if (strcmp(d->leaves[i].path, path) == 0)
            return &d->leaves[i];
    return NULL;
}

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

typedef struct vcase {
    int number;
    char kind[16];               /* single-row, multi-row, error, no-files */
    char test[96];
    char file[64];
} vcase;

static size_t load_cases(vcase *out, size_t cap)
{
    FILE *fp = fopen(CASE_DIR "/case_list.tsv", "r");
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
    char path[512], stem[64];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(c->file) - strlen(".parquet")), c->file);
    snprintf(path, sizeof path, "%s/%s_row-%zu.variant.bin", CASE_DIR, stem, k);
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

/* ---- rebuild: VariantShredding.md construct_variant over levels ------------- */

/* A file's leaves seen through our layout: lf[i] is the file's leaf with
 * our leaf i's path, NULL when the file has no such column (a case may
 * omit `value`; colspec always has one). */
typedef struct view {
    leafdata **lf;
    size_t *pos;
    size_t n;
    vr_meta meta;
    bool strict;                 /* also what our writer promises beyond validity */
    char why[256];               /* first violation; "" = none */
} view;

static void violation(view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violation(view *v, const char *fmt, ...)
{
    if (v->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why, sizeof v->why, fmt, ap);
    va_end(ap);
}

static bool has(const view *v, int leaf)
{
    return leaf >= 0 && v->lf[leaf] != NULL;
}

static uint16_t cdef(const view *v, int leaf)
{
    const leafdata *l = v->lf[leaf];
    if (v->pos[leaf] >= l->n)
        fail_msg("%s: read past the last level entry", l->path);
    return l->def[v->pos[leaf]];
}

static bool defined(const view *v, int leaf)
{
    return has(v, leaf) && cdef(v, leaf) == v->lf[leaf]->max_def;
}

static const uint8_t *cval(const view *v, int leaf, size_t *len)
{
    const leafdata *l = v->lf[leaf];
    return val_at(l, l->vidx[v->pos[leaf]], len);
}

static void adv(view *v, int leaf)
{
    if (has(v, leaf))
        v->pos[leaf]++;
}

static int first_leaf(const view *v, const sc_shred *sh);

static int first_typed_leaf(const view *v, const sc_shred *sh)
{
    int l = -1;
    switch (sh->kind) {
    case SC_SHRED_PRIMITIVE:
        return has(v, sh->type->leaf) ? sh->type->leaf : -1;
    case SC_SHRED_OBJECT:
        for (size_t i = 0; l < 0 && i < sh->n_fields; i++)
            l = first_leaf(v, sh->fields[i].shred);
        return l;
    case SC_SHRED_ARRAY:
        return first_leaf(v, sh->elem);
    default:
        return -1;
    }
}

static int first_leaf(const view *v, const sc_shred *sh)
{
    return has(v, sh->value_leaf) ? sh->value_leaf : first_typed_leaf(v, sh);
}

static void skip_node(view *v, const sc_shred *sh);

static void skip_typed(view *v, const sc_shred *sh)
{
    switch (sh->kind) {
    case SC_SHRED_PRIMITIVE: adv(v, sh->type->leaf); break;
    case SC_SHRED_OBJECT:
        for (size_t i = 0; i < sh->n_fields; i++)
            skip_node(v, sh->fields[i].shred);
        break;
    case SC_SHRED_ARRAY: skip_node(v, sh->elem); break;
    default: break;
    }
}

static void skip_node(view *v, const sc_shred *sh)
{
    adv(v, sh->value_leaf);
    skip_typed(v, sh);
}

static int64_t le_int(const uint8_t *p, size_t n)
{
    uint64_t u = 0;
    for (size_t i = 0; i < n; i++)
        u |= (uint64_t)p[i] << (8 * i);
    if (n < 8 && (p[n - 1] & 0x80))
        u |= ~(uint64_t)0 << (8 * n);
    return (int64_t)u;
}

static vr_i128 be_int(const uint8_t *p, size_t n)
{
    unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < n; i++)
        u = (u << 8) | p[i];
    return (vr_i128)u;
}

/* VariantShredding.md's table, read backwards: a typed value as Variant. */
static void typed_variant(const sc_type *t, int physical, const uint8_t *p, size_t len,
                          pq_buf *out)
{
    float f;
    double d;
    int rc;
    switch (t->kind) {
    case SC_BOOL: rc = vr_value_append_bool(out, p[0] != 0); break;
    case SC_INT: rc = vr_value_append_int(out, le_int(p, len)); break;
    case SC_DECIMAL:
        rc = vr_value_append_decimal(out, physical == PQ_INT32 || physical == PQ_INT64
                                              ? (vr_i128)le_int(p, len) : be_int(p, len),
                                     (uint32_t)t->scale);
        break;
    case SC_FLOAT: memcpy(&f, p, 4); rc = vr_value_append_float(out, f); break;
    case SC_DOUBLE: memcpy(&d, p, 8); rc = vr_value_append_double(out, d); break;
    case SC_DATE: rc = vr_value_append_date(out, (int32_t)le_int(p, 4)); break;
    case SC_TIME: rc = vr_value_append_time(out, le_int(p, 8)); break;
    case SC_TIMESTAMP:
        rc = vr_value_append_timestamp(out, le_int(p, 8),
                                       t->unit == PQ_UNIT_NANOS ? VR_NANOS : VR_MICROS, t->utc);
        break;
    case SC_STRING: rc = vr_value_append_string(out, (const char *)p, len); break;
    case SC_BINARY: rc = vr_value_append_binary(out, p, len); break;
    case SC_UUID: assert_int_equal(len, 16); rc = vr_value_append_uuid(out, p); break;
    default: fail_msg("no Variant for shred kind %d", t->kind); return;
    }
    assert_int_equal(rc, 0);
}

static uint32_t meta_id(view *v, const char *name)
{
    pq_err err = {0};
    for (uint32_t i = 0; i < v->meta.size; i++) {
        vr_str k;
        fail_if(vr_meta_key(&v->meta, i, &k, &err), &err, "metadata key");
        if (k.len == strlen(name) && memcmp(k.s, name, k.len) == 0)
            return i;
    }
    violation(v, "field '%s' is not in the metadata", name);
    return UINT32_MAX;
}

typedef struct kv {
    vr_str key;
    vr_field f;
} kv;

static int kv_cmp(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = memcmp(x->key.s, y->key.s, n);
    return c ? c : (x->key.len > y->key.len) - (x->key.len < y->key.len);
}

static int rebuild(view *v, const sc_shred *sh, pq_buf *out, const char *where);

static void rebuild_array(view *v, const sc_shred *sh, int tl, pq_buf *out, const char *where)
{
    pq_buf heap;
    pq_buf_init(&heap);
    size_t n = 0, cap = 0, *offs = NULL;
    if (cdef(v, tl) == sh->typed_def) {
        skip_node(v, sh->elem); /* empty list */
    } else {
        do {
            if (n + 2 > cap) {
                cap = 2 * (n + 2);
                offs = realloc(offs, cap * sizeof *offs);
            }
            char sub[256];
            snprintf(sub, sizeof sub, "%s[%zu]", where, n);
            offs[n] = heap.len;
            if (!rebuild(v, sh->elem, &heap, sub)) {
                violation(v, "%s: array element with value and typed_value both null", sub);
                vr_value_append_null(&heap);
            }
            n++;
        } while (v->pos[tl] < v->lf[tl]->n && v->lf[tl]->rep[v->pos[tl]] == sh->elem->rep);
    }
    vr_slice *el = calloc(n + 1, sizeof *el);
    for (size_t i = 0; i < n; i++)
        el[i] = (vr_slice){heap.data + offs[i], (i + 1 < n ? offs[i + 1] : heap.len) - offs[i]};
    pq_err err = {0};
    fail_if(vr_value_append_array(out, el, n, &err), &err, "rebuild array");
    free(el);
    free(offs);
    pq_buf_free(&heap);
}

static void rebuild_object(view *v, const sc_shred *sh, const uint8_t *vb, size_t vl,
                           pq_buf *out, const char *where)
{
    size_t nf = sh->n_fields, n = 0;
    pq_buf *fb = calloc(nf, sizeof *fb);
    kv *kvs = NULL;
    vr_container c = {0};
    pq_err err = {0};
    bool partial = vb != NULL;
    if (partial && vr_value_type(vb, vl) != VR_OBJECT) {
        violation(v, "%s: typed_value is an object but value is not (type %d)", where,
                  vr_value_type(vb, vl));
        partial = false; /* typed_value wins */
    }
    if (partial)
        fail_if(vr_container_open(&c, vb, vl, &err), &err, "partial object");
    kvs = calloc(nf + c.n + 1, sizeof *kvs);
    for (size_t i = 0; i < nf; i++) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.%s", where, sh->fields[i].name);
        if (rebuild(v, sh->fields[i].shred, &fb[i], sub)) {
            const char *name = sh->fields[i].name;
            kvs[n++] = (kv){{name, strlen(name)}, {meta_id(v, name), fb[i].data, fb[i].len}};
        }
    }
    for (uint32_t i = 0; partial && i < c.n; i++) {
        uint32_t id;
        const uint8_t *fv;
        size_t fl;
        vr_str key;
        fail_if(vr_container_get(&c, i, &id, &fv, &fl, &err), &err, "partial field");
        fail_if(vr_meta_key(&v->meta, id, &key, &err), &err, "partial key");
        bool shredded = false;
        for (size_t j = 0; j < nf; j++)
            shredded |= strlen(sh->fields[j].name) == key.len &&
                        memcmp(sh->fields[j].name, key.s, key.len) == 0;
        if (shredded) { /* the reader may assume it is not there: typed_value wins */
            violation(v, "%s: field '%.*s' is shredded but also in value", where, (int)key.len,
                      key.s);
            continue;
        }
        kvs[n++] = (kv){key, {id, fv, fl}};
    }
    qsort(kvs, n, sizeof *kvs, kv_cmp);
    vr_field *fields = calloc(n + 1, sizeof *fields);
    for (size_t i = 0; i < n; i++)
        fields[i] = kvs[i].f;
    fail_if(vr_value_append_object(out, &v->meta, fields, n, &err), &err, "rebuild object");
    free(fields);
    free(kvs);
    for (size_t i = 0; i < nf; i++)
        pq_buf_free(&fb[i]);
    free(fb);
}

/* Appends the value of node sh at the cursors to out and moves every leaf
 * of the subtree past it: 1, or 0 when value and typed_value are both null
 * (missing). */
static int rebuild(view *v, const sc_shred *sh, pq_buf *out, const char *where)
{
    const uint8_t *vb = NULL;
    size_t vl = 0;
    if (defined(v, sh->value_leaf))
        vb = cval(v, sh->value_leaf, &vl);
    int tl = first_typed_leaf(v, sh);
    bool tp = false;
    if (sh->kind == SC_SHRED_PRIMITIVE)
        tp = tl >= 0 && defined(v, tl);
    else if (sh->kind != SC_SHRED_NONE)
        tp = tl >= 0 && cdef(v, tl) >= sh->typed_def;
    adv(v, sh->value_leaf);
    if (!tp) {
        skip_typed(v, sh);
        if (vb == NULL)
            return 0;
        int type = vr_value_type(vb, vl);
        if (sh->kind == SC_SHRED_OBJECT && type == VR_OBJECT)
            violation(v, "%s: an object in value while typed_value (an object shred) is null",
                      where);
        if (sh->kind == SC_SHRED_ARRAY && type == VR_ARRAY)
            violation(v, "%s: an array in value while typed_value (a list) is null", where);
        if (v->strict && sh->kind == SC_SHRED_PRIMITIVE && type != VR_OBJECT &&
            type != VR_ARRAY) {
            vr_prim p;
            vs_typed tv;
            pq_err err = {0};
            fail_if(vr_value_read(vb, vl, &p, &err), &err, "value");
            if (vs_prim_match(sh->type, &p, &tv))
                violation(v, "%s: a value of the shredded type left in value", where);
        }
        assert_int_equal(pq_buf_append(out, vb, vl), 0);
        return 1;
    }
    switch (sh->kind) {
    case SC_SHRED_PRIMITIVE: {
        size_t tlen;
        const uint8_t *tb = cval(v, tl, &tlen);
        if (vb != NULL)
            violation(v, "%s: value and typed_value both non-null for a primitive", where);
        typed_variant(sh->type, v->lf[tl]->type, tb, tlen, out);
        adv(v, tl);
        return 1;
    }
    case SC_SHRED_ARRAY:
        if (vb != NULL)
            violation(v, "%s: value and typed_value both non-null for an array", where);
        rebuild_array(v, sh, tl, out, where);
        return 1;
    default:
        rebuild_object(v, sh, vb, vl, out, where);
        return 1;
    }
}

typedef struct rebuilt {
    bool null;                   /* the Variant itself is null */
    const uint8_t *meta;         /* into the fdata */
    size_t mlen;
    pq_buf value;
} rebuilt;

/* Rebuilds every row of d's `var` column through our layout. Returns the
 * first violation ("" if none) in why. */
static void rebuild_file(fdata *d, const sc_schema *spec, const pq_schema *ps, bool strict,
                         rebuilt *rows, char *why, size_t whycap)
{
    const sc_type *t = spec->columns[1].type;
    size_t nl = pq_schema_num_leaves(ps);
    view v = {.lf = calloc(nl, sizeof(leafdata *)), .pos = calloc(nl, sizeof(size_t)), .n = nl,
              .strict = strict};
    for (int i = t->leaf; i < t->leaf + t->n_leaves; i++) /* the var column's */
        v.lf[i] = leaf_by_path(d, pq_schema_leaf_path(ps, (size_t)i));
    assert_non_null(v.lf[t->metadata_leaf]);
    for (size_t r = 0; r < d->nrows; r++) {
        pq_buf_init(&rows[r].value);
        rows[r].null = !defined(&v, t->metadata_leaf);
        if (rows[r].null) {
            adv(&v, t->metadata_leaf);
            skip_node(&v, t->shred);
            continue;
        }
        pq_err err = {0};
        rows[r].meta = cval(&v, t->metadata_leaf, &rows[r].mlen);
        fail_if(vr_meta_open(&v.meta, rows[r].meta, rows[r].mlen, &err), &err, "metadata");
        adv(&v, t->metadata_leaf);
        if (!rebuild(&v, t->shred, &rows[r].value, "var")) {
            violation(&v, "var: value and typed_value both null for a present Variant");
            vr_value_append_null(&rows[r].value); /* what readers must return */
        }
    }
    for (size_t i = 0; i < nl; i++)
        if (v.lf[i] && v.pos[i] != v.lf[i]->n)
            fail_msg("%s: %zu of %zu level entries used", v.lf[i]->path, v.pos[i], v.lf[i]->n);
    snprintf(why, whycap, "%s", v.why);
    free(v.lf);
    free(v.pos);
}

static void rebuilt_free(rebuilt *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pq_buf_free(&rows[i].value);
}

/* Row r rebuilt equals the case's expected Variant (or both are null). */
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

static int mem_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    (void)err;
    return pq_buf_append(ctx, data, n);
}

typedef struct caserun {
    vcase c;
    char yaml[2048];
    sc_schema *spec;
    pq_schema *ps;
    fdata theirs, ours;
    bool have_ours;
    pq_buf file;
} caserun;

/* Opens the case file and loads its layout as our schema. false (with why)
 * when the schema language cannot express the layout. */
static bool case_open(caserun *cr, const vcase *c, const char **why)
{
    char path[512];
    memset(cr, 0, sizeof *cr);
    cr->c = *c;
    pq_buf_init(&cr->file);
    snprintf(path, sizeof path, "%s/%s", CASE_DIR, c->file);
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
    pq_sink sink = {.ctx = &cr->file, .write = mem_write};
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

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

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
    pq_sink sink = {.ctx = &file, .write = mem_write};
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

/* ---- tests: the spec's examples, in the writer's column buffers ---------------- */

typedef struct rig {
    sc_schema *spec;
    pq_schema *ps;
    pq_writer *w;
    pq_buf out;
    vs_state st;
    vr_builder b;
    pq_err err;
} rig;

static void rig_open(rig *r, const char *yaml)
{
    memset(r, 0, sizeof *r);
    pq_buf_init(&r->out);
    vs_state_init(&r->st);
    assert_int_equal(vr_builder_init(&r->b, NULL), 0);
    fail_if(sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &r->spec, &r->err), &r->err,
            "schema");
    fail_if(sc_build_parquet_schema(r->spec, &r->ps, &r->err), &r->err, "build");
    pq_sink sink = {.ctx = &r->out, .write = mem_write};
    fail_if(pq_writer_open(&r->w, r->ps, NULL, sink, &r->err), &r->err, "open");
}

static void rig_close(rig *r)
{
    vr_builder_free(&r->b);
    vs_state_free(&r->st);
    pq_writer_destroy(r->w);
    pq_schema_destroy(r->ps);
    sc_schema_free(r->spec);
    pq_buf_free(&r->out);
}

/* Finishes the record in r->b and writes it as column 0's value. */
static void rig_put(rig *r)
{
    vr_variant v;
    fail_if(vr_finish(&r->b, &v), &r->b.err, "finish");
    fail_if(vs_write(&r->st, pq_writer_rowgroup(r->w), r->spec->columns[0].type, &v, 0, &r->err),
            &r->err, "vs_write");
    fail_if(pq_writer_end_row(r->w, &r->err), &r->err, "end_row");
    vr_builder_reset(&r->b);
}

static const pq_column *rig_leaf(rig *r, const char *path)
{
    for (size_t i = 0; i < pq_schema_num_leaves(r->ps); i++)
        if (strcmp(pq_schema_leaf_path(r->ps, i), path) == 0)
            return pq_writer_column(r->w, i);
    fail_msg("no leaf %s", path);
    return NULL;
}

/* A leaf's entries as "def[/rep][:value]": binaries (value, metadata) in
 * hex, strings as text, numbers in decimal. */
static void expect_leaf(rig *r, const char *path, const char *want)
{
    const pq_column *c = rig_leaf(r, path);
    char got[1024] = "";
    size_t n = 0, v = 0;
    bool hex = ends_with(path, "value") && !ends_with(path, "typed_value");
    hex |= ends_with(path, "metadata");
    for (size_t i = 0; i < c->n_levels && n < sizeof got - 64; i++) {
        uint16_t def = c->max_def ? pq_column_def(c)[i] : 0;
        n += (size_t)snprintf(got + n, sizeof got - n, "%s%u", i ? " " : "", def);
        if (c->max_rep)
            n += (size_t)snprintf(got + n, sizeof got - n, "/%u", pq_column_rep(c)[i]);
        if (def != c->max_def)
            continue;
        got[n++] = ':';
        if (c->node->type == PQ_BYTE_ARRAY || c->node->type == PQ_FIXED_LEN_BYTE_ARRAY) {
            const uint8_t *p;
            size_t len;
            if (c->node->type == PQ_BYTE_ARRAY) {
                const uint32_t *off = pq_column_offsets(c);
                p = c->heap.data + off[v];
                len = off[v + 1] - off[v];
            } else {
                p = c->values.data + v * c->width;
                len = c->width;
            }
            for (size_t k = 0; k < len && n < sizeof got - 8; k++)
                n += (size_t)(hex || c->node->type == PQ_FIXED_LEN_BYTE_ARRAY
                                  ? snprintf(got + n, sizeof got - n, "%02x", p[k])
                                  : snprintf(got + n, sizeof got - n, "%c", p[k]));
        } else if (c->node->type == PQ_DOUBLE) {
            double d;
            memcpy(&d, c->values.data + 8 * v, 8);
            n += (size_t)snprintf(got + n, sizeof got - n, "%g", d);
        } else {
            int64_t x = c->width == 8 ? le_int(c->values.data + 8 * v, 8)
                                      : le_int(c->values.data + c->width * v, c->width);
            n += (size_t)snprintf(got + n, sizeof got - n, "%" PRId64, x);
        }
        got[n] = 0;
        v++;
    }
    if (strcmp(got, want) != 0)
        fail_msg("%s:\n   got %s\n  want %s", path, got, want);
}

/* VariantShredding.md "Value Shredding": measurements 34, null, "n/a", 100
 * shredded as int64. The Variant ints are int8 (34, 100): Exact Numeric,
 * so they widen into the int64 column. The spec's table prints "n/a" as
 * 13 6E 2F 61; a 3-byte short string's header is (3 << 2) | 1 = 0x0D
 * (0x13 would be basic type 3, an array), so 0D is what must come out. */
static void test_vshred_spec_measurement_example(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: m, type: variant, required: true, shred: int64}\n");
    vr_int(&r.b, 34);
    rig_put(&r);
    vr_null(&r.b);
    rig_put(&r);
    vr_string(&r.b, "n/a", 3);
    rig_put(&r);
    vr_int(&r.b, 100);
    rig_put(&r);
    /* metadata 01 00 00: the empty dictionary as Spark and Iceberg write it */
    expect_leaf(&r, "m.metadata", "0:010000 0:010000 0:010000 0:010000");
    expect_leaf(&r, "m.value", "0 1:00 1:0d6e2f61 0");
    expect_leaf(&r, "m.typed_value", "1:34 0 0 1:100");
    rig_close(&r);
}

/* "Arrays": tags ["comedy","drama"], ["horror",null],
 * ["comedy","drama","romance"], null; then [] (present, empty list). */
static void test_vshred_spec_tags_array_example(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: tags, type: variant, shred: [string]}\n");
    const char *rows[][3] = {{"comedy", "drama", NULL}, {"horror", NULL, NULL},
                             {"comedy", "drama", "romance"}};
    int counts[] = {2, 2, 3};
    for (int i = 0; i < 3; i++) {
        vr_begin_array(&r.b);
        for (int k = 0; k < counts[i]; k++)
            rows[i][k] ? vr_string(&r.b, rows[i][k], strlen(rows[i][k])) : vr_null(&r.b);
        vr_end_array(&r.b);
        rig_put(&r);
    }
    vr_null(&r.b);
    rig_put(&r);
    vr_begin_array(&r.b);
    vr_end_array(&r.b);
    rig_put(&r);
    expect_leaf(&r, "tags.value", "1 1 1 2:00 1");
    expect_leaf(&r, "tags.typed_value.list.element.value",
                "3/0 3/1 3/0 4/1:00 3/0 3/1 3/1 1/0 2/0");
    expect_leaf(&r, "tags.typed_value.list.element.typed_value",
                "4/0:comedy 4/1:drama 4/0:horror 3/1 4/0:comedy 4/1:drama 4/1:romance 1/0 2/0");
    rig_close(&r);
}

static void event(rig *r, const char *type, bool null_type, int64_t ts, const char *ts_text,
                  const char *extra_key, const char *extra)
{
    vr_begin_object(&r->b);
    if (type || null_type) {
        vr_key(&r->b, "event_type", 10);
        type ? vr_string(&r->b, type, strlen(type)) : vr_null(&r->b);
    }
    if (ts || ts_text) {
        vr_key(&r->b, "event_ts", 8);
        ts_text ? vr_string(&r->b, ts_text, strlen(ts_text))
                : vr_timestamp(&r->b, ts, VR_MICROS, true);
    }
    if (extra_key) {
        vr_key(&r->b, extra_key, strlen(extra_key));
        vr_string(&r->b, extra, strlen(extra));
    }
    vr_end_object(&r->b);
    rig_put(r);
}

/* "Objects": the event table, row by row (the valid rows; "missing" is a
 * null column, not a Variant). */
static void test_vshred_spec_event_object_example(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - name: event\n    type: variant\n    shred:\n"
                 "      event_type: string\n      event_ts: \"timestamp(us,utc)\"\n");
    event(&r, "noop", false, 1729794114937, NULL, NULL, NULL);
    event(&r, "login", false, 1729794146402, NULL, "email", "user@example.com");
    event(&r, NULL, false, 0, NULL, "error_msg", "malformed: ...");
    vr_string(&r.b, "malformed: not an object", 24);
    rig_put(&r);
    event(&r, NULL, false, 1729794240241, NULL, "click", "_button");
    event(&r, NULL, true, 1729794954163, NULL, NULL, NULL);
    event(&r, "noop", false, 0, "2024-10-24", NULL, NULL);
    event(&r, NULL, false, 0, NULL, NULL, NULL); /* {} */
    vr_null(&r.b);
    rig_put(&r);
    /* partial objects: header 02, 1 field, id, offsets 0 and end, then the
     * kept value copied as it was (short strings 0x41 = len 16, 0x39 = 14,
     * 0x1d = 7). Ids follow the record's sorted dictionary. */
    expect_leaf(&r, "event.value",
                "1 2:02010000114175736572406578616d706c652e636f6d "
                "2:020100000f396d616c666f726d65643a202e2e2e "
                "2:616d616c666f726d65643a206e6f7420616e206f626a656374 "
                "2:02010000081d5f627574746f6e 1 1 1 2:00");
    expect_leaf(&r, "event.typed_value.event_type.value", "2 2 2 1 2 3:00 2 2 1");
    expect_leaf(&r, "event.typed_value.event_type.typed_value",
                "3:noop 3:login 2 1 2 2 3:noop 2 1");
    expect_leaf(&r, "event.typed_value.event_ts.value",
                "2 2 2 1 2 2 3:29323032342d31302d3234 2 1");
    expect_leaf(&r, "event.typed_value.event_ts.typed_value",
                "3:1729794114937 3:1729794146402 2 1 3:1729794240241 3:1729794954163 2 2 1");
    rig_close(&r);
}

/* "Nesting": an object field shredded as an object, another as an array of
 * objects, and a Variant inside a LIST column (rep from the caller). */
static void test_vshred_nested_levels(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: v, type: variant, shred: "
                 "{loc: {lat: double}, hits: [{id: int32}]}}\n");
    /* {"hits": [{"id": 1}, {"id": "x", "z": true}, 7], "loc": {"lat": 1.5}} */
    vr_begin_object(&r.b);
    vr_key(&r.b, "hits", 4);
    vr_begin_array(&r.b);
    vr_begin_object(&r.b);
    vr_key(&r.b, "id", 2);
    vr_int(&r.b, 1);
    vr_end_object(&r.b);
    vr_begin_object(&r.b);
    vr_key(&r.b, "id", 2);
    vr_string(&r.b, "x", 1);
    vr_key(&r.b, "z", 1);
    vr_bool(&r.b, true);
    vr_end_object(&r.b);
    vr_int(&r.b, 7);
    vr_end_array(&r.b);
    vr_key(&r.b, "loc", 3);
    vr_begin_object(&r.b);
    vr_key(&r.b, "lat", 3);
    vr_double(&r.b, 1.5);
    vr_end_object(&r.b);
    vr_end_object(&r.b);
    rig_put(&r);
    /* {"loc": "here"}: hits missing, loc not an object */
    vr_begin_object(&r.b);
    vr_key(&r.b, "loc", 3);
    vr_string(&r.b, "here", 4);
    vr_end_object(&r.b);
    rig_put(&r);
    expect_leaf(&r, "v.value", "1 1");
    expect_leaf(&r, "v.typed_value.loc.value", "2 3:1168657265");
    expect_leaf(&r, "v.typed_value.loc.typed_value.lat.value", "3 2");
    expect_leaf(&r, "v.typed_value.loc.typed_value.lat.typed_value", "4:1.5 2");
    expect_leaf(&r, "v.typed_value.hits.value", "2 2");
    /* levels: v 1, v.typed_value 2, hits.typed_value 3, list/element 4,
     * element.typed_value 5, id.value / id.typed_value 6. Element 1 keeps
     * {"z": true} (02 01 04 00 01 04: z is key 4 of hits,id,lat,loc,z) in
     * element.value while id goes to id.value ("x" = 05 78); element 2 (7)
     * is not an object, so its typed_value group is null (def 4). */
    expect_leaf(&r, "v.typed_value.hits.typed_value.list.element.value",
                "4/0 5/1:020104000104 5/1:0c07 2/0");
    expect_leaf(&r, "v.typed_value.hits.typed_value.list.element.typed_value.id.value",
                "5/0 6/1:0578 4/1 2/0");
    expect_leaf(&r, "v.typed_value.hits.typed_value.list.element.typed_value.id.typed_value",
                "6/0:1 5/1 4/1 2/0");
    rig_close(&r);

    /* list<variant>: element Variants at rep 0 then 1 */
    rig_open(&r, "columns:\n  - {name: l, type: \"list<variant>\", shred: string}\n");
    const sc_type *t = r.spec->columns[0].type->elem;
    const char *words[] = {"a", NULL};
    for (int i = 0; i < 2; i++) {
        words[i] ? vr_string(&r.b, words[i], 1) : vr_int(&r.b, 5);
        vr_variant v;
        fail_if(vr_finish(&r.b, &v), &r.b.err, "finish");
        fail_if(vs_write(&r.st, pq_writer_rowgroup(r.w), t, &v, (uint16_t)i, &r.err), &r.err,
                "vs_write");
        vr_builder_reset(&r.b);
    }
    expect_leaf(&r, "l.list.element.metadata", "3/0:010000 3/1:010000");
    expect_leaf(&r, "l.list.element.value", "3/0 4/1:0c05");
    expect_leaf(&r, "l.list.element.typed_value", "4/0:a 3/1");
    rig_close(&r);
}

/* ---- tests: type matching --------------------------------------------------------- */

static const sc_type *shred_type(const sc_schema *spec, const char *field)
{
    const sc_shred *root = spec->columns[0].type->shred;
    for (size_t i = 0; i < root->n_fields; i++)
        if (strcmp(root->fields[i].name, field) == 0)
            return root->fields[i].shred->type;
    fail_msg("no shred field %s", field);
    return NULL;
}

static vr_prim P(vr_type t, int64_t i)
{
    return (vr_prim){.type = t, .i = i};
}

static vr_prim DEC(vr_type t, vr_i128 unscaled, uint32_t scale)
{
    return (vr_prim){.type = t, .unscaled = unscaled, .scale = scale};
}

/* VariantEncoding.md equivalence classes: a value goes to typed_value when
 * the column's type is in its class and the conversion is exact. */
static void test_vshred_type_matching_rules(void **state)
{
    (void)state;
    const char *yaml =
        "columns:\n  - name: v\n    type: variant\n    shred: {i8: int8, i64: int64, "
        "d92: \"decimal(9,2)\", d38: \"decimal(38,9)\", f: float, d: double, b: bool, "
        "tu: \"timestamp(us,utc)\", tn: \"timestamp(ns,utc)\", tl: \"timestamp(us,local)\", "
        "t: time, dt: date, s: string, bin: binary, u: uuid}\n";
    sc_schema *spec;
    pq_err err = {0};
    fail_if(sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &spec, &err), &err, "load");
    const sc_type *i8 = shred_type(spec, "i8"), *i64 = shred_type(spec, "i64"),
                  *d92 = shred_type(spec, "d92"), *d38 = shred_type(spec, "d38"),
                  *f = shred_type(spec, "f"), *d = shred_type(spec, "d"),
                  *b = shred_type(spec, "b"), *tu = shred_type(spec, "tu"),
                  *tn = shred_type(spec, "tn"), *tl = shred_type(spec, "tl"),
                  *t = shred_type(spec, "t"), *dt = shred_type(spec, "dt"),
                  *str = shred_type(spec, "s"), *bin = shred_type(spec, "bin"),
                  *u = shred_type(spec, "u");
    vs_typed o;
    vr_prim p;
    /* Exact Numeric into intN: any width that holds the value */
    assert_true(vs_prim_match(i8, (p = P(VR_INT16, -128), &p), &o) && o.i == -128);
    assert_false(vs_prim_match(i8, (p = P(VR_INT16, 128), &p), &o));
    assert_true(vs_prim_match(i64, (p = P(VR_INT8, -34), &p), &o) && o.i == -34);
    assert_true(vs_prim_match(i8, (p = DEC(VR_DECIMAL4, 1200, 2), &p), &o) && o.i == 12);
    assert_false(vs_prim_match(i8, (p = DEC(VR_DECIMAL4, 15, 1), &p), &o));
    assert_false(vs_prim_match(i64, (p = DEC(VR_DECIMAL16, (vr_i128)INT64_MAX + 1, 0), &p), &o));
    /* into decimal(9,2): rescaled exactly, at most 9 digits */
    assert_true(vs_prim_match(d92, (p = P(VR_INT8, 5), &p), &o) && o.i == 500);
    assert_true(vs_prim_match(d92, (p = DEC(VR_DECIMAL4, 15, 1), &p), &o) && o.i == 150);
    assert_true(vs_prim_match(d92, (p = DEC(VR_DECIMAL4, 1230, 3), &p), &o) && o.i == 123);
    assert_false(vs_prim_match(d92, (p = DEC(VR_DECIMAL4, 1234, 3), &p), &o));
    assert_true(vs_prim_match(d92, (p = DEC(VR_DECIMAL8, 999999999, 2), &p), &o));
    assert_false(vs_prim_match(d92, (p = DEC(VR_DECIMAL8, 1000000000, 2), &p), &o));
    assert_false(vs_prim_match(d92, (p = P(VR_INT32, 10000000), &p), &o));
    /* a double by its shortest form (vnumber.c makes JSON 1.5 a double) */
    assert_true(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = 1.5}, &p), &o) &&
                o.i == 150);
    assert_true(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = 0.1}, &p), &o) &&
                o.i == 10);
    assert_true(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = -19.99}, &p), &o) &&
                o.i == -1999);
    assert_false(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = 0.125}, &p), &o));
    assert_false(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = 1e7}, &p), &o));
    assert_false(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = NAN}, &p), &o));
    assert_true(vs_prim_match(i8, (p = (vr_prim){.type = VR_DOUBLE, .d = -3.0}, &p), &o) &&
                o.i == -3);
    assert_false(vs_prim_match(i8, (p = (vr_prim){.type = VR_DOUBLE, .d = 3.5}, &p), &o));
    assert_false(vs_prim_match(i8, (p = (vr_prim){.type = VR_DOUBLE, .d = 128.0}, &p), &o));
    assert_false(vs_prim_match(i64, (p = (vr_prim){.type = VR_DOUBLE, .d = 1e19}, &p), &o));
    /* decimal(38,9) is FIXED_LEN_BYTE_ARRAY(16), big-endian */
    assert_true(vs_prim_match(d38, (p = DEC(VR_DECIMAL16, -1, 9), &p), &o));
    assert_int_equal(o.len, 16);
    for (size_t k = 0; k < 16; k++)
        assert_int_equal(o.bytes[k], 0xff);
    assert_true(vs_prim_match(d38, (p = DEC(VR_DECIMAL4, 258, 9), &p), &o));
    assert_int_equal(o.bytes[14], 1);
    assert_int_equal(o.bytes[15], 2);
    /* float and double are classes of their own */
    assert_true(vs_prim_match(f, (p = (vr_prim){.type = VR_FLOAT, .f = 1.5f}, &p), &o));
    assert_false(vs_prim_match(f, (p = (vr_prim){.type = VR_DOUBLE, .d = 1.5}, &p), &o));
    assert_true(vs_prim_match(d, (p = (vr_prim){.type = VR_DOUBLE, .d = 1.5}, &p), &o));
    assert_false(vs_prim_match(d, (p = (vr_prim){.type = VR_FLOAT, .f = 1.5f}, &p), &o));
    assert_false(vs_prim_match(d, (p = P(VR_INT8, 1), &p), &o));
    assert_true(vs_prim_match(b, (p = P(VR_FALSE, 0), &p), &o) && o.i == 0);
    assert_true(vs_prim_match(b, (p = P(VR_TRUE, 0), &p), &o) && o.i == 1);
    assert_false(vs_prim_match(b, (p = P(VR_INT8, 1), &p), &o));
    assert_false(vs_prim_match(b, (p = P(VR_NULL, 0), &p), &o));
    /* timestamps: same utc flag; us <-> ns only when exact */
    assert_true(vs_prim_match(tu, (p = P(VR_TIMESTAMP_MICROS, 7), &p), &o) && o.i == 7);
    assert_false(vs_prim_match(tu, (p = P(VR_TIMESTAMP_NTZ_MICROS, 7), &p), &o));
    assert_true(vs_prim_match(tu, (p = P(VR_TIMESTAMP_NANOS, 7000), &p), &o) && o.i == 7);
    assert_false(vs_prim_match(tu, (p = P(VR_TIMESTAMP_NANOS, 7001), &p), &o));
    assert_true(vs_prim_match(tn, (p = P(VR_TIMESTAMP_MICROS, -7), &p), &o) && o.i == -7000);
    assert_false(vs_prim_match(tn, (p = P(VR_TIMESTAMP_MICROS, INT64_MAX / 100), &p), &o));
    assert_true(vs_prim_match(tl, (p = P(VR_TIMESTAMP_NTZ_NANOS, 5000), &p), &o) && o.i == 5);
    assert_false(vs_prim_match(tl, (p = P(VR_TIMESTAMP_MICROS, 5), &p), &o));
    assert_true(vs_prim_match(t, (p = P(VR_TIME_NTZ_MICROS, 45234123456), &p), &o));
    assert_true(vs_prim_match(dt, (p = P(VR_DATE, -4438), &p), &o) && o.i == -4438);
    assert_false(vs_prim_match(dt, (p = P(VR_TIMESTAMP_MICROS, 0), &p), &o));
    assert_false(vs_prim_match(tu, (p = P(VR_DATE, 0), &p), &o));
    /* strings, binaries, uuids: their own types only */
    p = (vr_prim){.type = VR_STRING, .bytes = (const uint8_t *)"x", .len = 1};
    assert_true(vs_prim_match(str, &p, &o) && o.len == 1 && o.bytes[0] == 'x');
    assert_false(vs_prim_match(bin, &p, &o));
    p.type = VR_BINARY;
    assert_true(vs_prim_match(bin, &p, &o));
    assert_false(vs_prim_match(str, &p, &o));
    p = (vr_prim){.type = VR_UUID, .bytes = (const uint8_t *)"0123456789abcdef", .len = 16};
    assert_true(vs_prim_match(u, &p, &o) && o.len == 16);
    assert_false(vs_prim_match(str, &p, &o));
    sc_schema_free(spec);
}

/* ---- tests: through the record shredder -------------------------------------------- */

/* NDJSON into a shredded Variant column: sh_shred_line builds the Variant
 * and shv_write_variant hands it to vs_write. JSON integers arrive as the
 * smallest Variant int and still land in the int64 column. */
static void test_vshred_json_records_through_the_shredder(void **state)
{
    (void)state;
    const char *yaml = "columns:\n  - {name: e, type: variant, shred: {kind: string, n: int64, "
                       "tags: [string]}}\n";
    sc_schema *spec;
    pq_schema *ps;
    pq_writer *w;
    sh_shredder *sh;
    pq_buf out;
    pq_err err = {0};
    pq_buf_init(&out);
    fail_if(sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &spec, &err), &err, "load");
    fail_if(sc_build_parquet_schema(spec, &ps, &err), &err, "build");
    pq_sink sink = {.ctx = &out, .write = mem_write};
    fail_if(pq_writer_open(&w, ps, NULL, sink, &err), &err, "open");
    fail_if(sh_shredder_new(&sh, spec, &err), &err, "shredder");
    const char *lines[] = {
        "{\"e\": {\"kind\": \"login\", \"n\": 5, \"ip\": \"10.0.0.1\", \"tags\": [\"a\", 1]}}",
        "{\"e\": {\"n\": 12.5}}",
        "{\"e\": \"plain\"}",
        "{\"other\": 1}",
    };
    for (size_t i = 0; i < 4; i++)
        fail_if(sh_shred_line(sh, pq_writer_rowgroup(w), lines[i], strlen(lines[i]), 0, &err),
                &err, lines[i]);
    rig r = {.spec = spec, .ps = ps, .w = w};
    /* {"ip": "10.0.0.1"} stays in value (ip is key 0 of ip, kind, n, tags);
     * 12.5 is a double (1c 0000000000002940), not an int64: n.value;
     * the row without "e" is a null column (def 0 everywhere). */
    expect_leaf(&r, "e.value", "2:02010000092131302e302e302e31 1 2:15706c61696e 0");
    expect_leaf(&r, "e.typed_value.kind.value", "2 2 1 0");
    expect_leaf(&r, "e.typed_value.kind.typed_value", "3:login 2 1 0");
    expect_leaf(&r, "e.typed_value.n.value", "2 3:1c0000000000002940 1 0");
    expect_leaf(&r, "e.typed_value.n.typed_value", "3:5 2 1 0");
    expect_leaf(&r, "e.typed_value.tags.value", "2 2 1 0");
    expect_leaf(&r, "e.typed_value.tags.typed_value.list.element.value", "4/0 5/1:0c01 2/0 1/0 0/0");
    expect_leaf(&r, "e.typed_value.tags.typed_value.list.element.typed_value", "5/0:a 4/1 2/0 1/0 0/0");
    sh_shredder_destroy(sh);
    rig_close(&r);
    pq_buf_free(&out);
}

/* ---- tests: errors and random round trips ------------------------------------------ */

static void test_vshred_rejects_malformed_input(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: v, type: variant, shred: {a: int32}}\n"
                 "  - {name: s, type: string}\n");
    static const uint8_t meta[] = {0x01, 0x00, 0x00};
    static const uint8_t truncated_object[] = {0x02, 0x05};
    vr_variant v = {meta, sizeof meta, truncated_object, sizeof truncated_object};
    assert_int_equal(vs_write(&r.st, pq_writer_rowgroup(r.w), r.spec->columns[0].type, &v, 0,
                              &r.err), PQ_EPARSE);
    assert_int_equal(vs_write(&r.st, pq_writer_rowgroup(r.w), r.spec->columns[1].type, &v, 0,
                              &r.err), PQ_EINVAL);
    assert_non_null(strstr(r.err.msg, "not a variant column"));
    static const uint8_t bad_meta[] = {0x02, 0x00};
    v = (vr_variant){bad_meta, sizeof bad_meta, truncated_object, 1};
    assert_int_equal(vs_write(&r.st, pq_writer_rowgroup(r.w), r.spec->columns[0].type, &v, 0,
                              &r.err), PQ_EPARSE);
    pq_writer_abort_row(r.w); /* what a caller does after a failure */
    rig_close(&r);
}

typedef struct gen {
    pqt_rng rng;
    vr_builder *b;
} gen;

static uint64_t below(gen *g, uint64_t n)
{
    return pqt_rng_below(&g->rng, n);
}

static void gen_any(gen *g, int depth);

/* A decimal of scale <= max_scale that readers handle: the scale stays
 * below the digits of the unscaled value (vr_decimal refuses the rest). */
static void gen_decimal(gen *g, vr_i128 u, unsigned max_scale)
{
    unsigned digits = 1;
    for (vr_i128 m = u < 0 ? -u : u; m >= 10; m /= 10)
        digits++;
    unsigned scale = (unsigned)below(g, max_scale + 1);
    vr_decimal(g->b, u, scale < digits ? scale : digits - 1);
}

static void gen_prim(gen *g)
{
    static const char *words[] = {"", "a", "comedy", "drama",
                                  ("a string that is longer than sixty-three bytes, so it is "
                                   "encoded as a long string")};  /* (): one element, for clang */
    uint8_t u[16];
    for (int i = 0; i < 16; i++)
        u[i] = (uint8_t)below(g, 256);
    int64_t big = (int64_t)pqt_rng_next(&g->rng);
    switch (below(g, 16)) {
    case 0: vr_null(g->b); break;
    case 1: vr_bool(g->b, below(g, 2)); break;
    case 2: vr_int(g->b, (int64_t)below(g, 300) - 150); break;
    case 3: vr_int(g->b, big >> below(g, 63)); break;
    case 4: vr_double(g->b, (double)big / 1e9); break;
    case 5: vr_float(g->b, (float)((double)big / 1e12)); break;
    case 6: gen_decimal(g, (vr_i128)(big >> below(g, 63)) * (vr_i128)below(g, 1000), 7); break;
    case 8: vr_binary(g->b, u, below(g, 17)); break;
    case 9: vr_date(g->b, (int32_t)below(g, 40000) - 20000); break;
    case 10: vr_timestamp(g->b, big >> 12, below(g, 2) ? VR_NANOS : VR_MICROS, below(g, 2));
             break;
    case 11: vr_time(g->b, (int64_t)below(g, 86400000000ull)); break;
    case 12: vr_uuid(g->b, u); break;
    case 13: gen_decimal(g, (vr_i128)below(g, 100000) * (below(g, 2) ? 1 : -1), 3); break;
    case 14: vr_timestamp(g->b, big >> 12, VR_MICROS, true); break;
    default: { const char *w = words[below(g, 5)]; vr_string(g->b, w, strlen(w)); break; }
    }
}

static void gen_object_keys(gen *g, const char *const *keys, size_t nkeys, int depth)
{
    vr_begin_object(g->b);
    for (size_t i = 0; i < nkeys; i++)
        if (below(g, 3)) {
            vr_key(g->b, keys[i], strlen(keys[i]));
            gen_any(g, depth + 1);
        }
    vr_end_object(g->b);
}

static void gen_any(gen *g, int depth)
{
    static const char *keys[] = {"a", "b", "c", "d", "e", "f", "g", "h", "x", "y", "zz"};
    uint64_t k = depth > 3 ? 9 : below(g, 10);
    if (k == 0) {
        gen_object_keys(g, keys, 11, depth);
    } else if (k == 1) {
        vr_begin_array(g->b);
        for (uint64_t i = below(g, 4); i > 0; i--)
            gen_any(g, depth + 1);
        vr_end_array(g->b);
    } else {
        gen_prim(g);
    }
}

/* A value that matches sh more often than chance: objects with its fields
 * (and others), arrays of its element, its primitive type. */
static void gen_for(gen *g, const sc_shred *sh, int depth)
{
    if (below(g, 4) == 0 || depth > 4) {
        gen_any(g, depth);
        return;
    }
    switch (sh->kind) {
    case SC_SHRED_OBJECT:
        vr_begin_object(g->b);
        for (size_t i = 0; i < sh->n_fields; i++)
            if (below(g, 4)) {
                vr_key(g->b, sh->fields[i].name, strlen(sh->fields[i].name));
                gen_for(g, sh->fields[i].shred, depth + 1);
            }
        if (below(g, 2)) {
            vr_key(g->b, "zz", 2);
            gen_any(g, depth + 1);
        }
        vr_end_object(g->b);
        break;
    case SC_SHRED_ARRAY:
        vr_begin_array(g->b);
        for (uint64_t i = below(g, 5); i > 0; i--)
            gen_for(g, sh->elem, depth + 1);
        vr_end_array(g->b);
        break;
    case SC_SHRED_PRIMITIVE:
        switch (sh->type->kind) {
        case SC_INT: vr_int(g->b, (int64_t)below(g, 100000) - 50000); break;
        case SC_STRING: vr_string(g->b, "shredded", 8); break;
        case SC_DOUBLE: vr_double(g->b, (double)below(g, 1000) / 8); break;
        case SC_DECIMAL: gen_decimal(g, (vr_i128)below(g, 1000000), 3); break;
        case SC_TIMESTAMP: vr_timestamp(g->b, (int64_t)below(g, 1u << 30) << 20, VR_MICROS,
                                        true); break;
        default: gen_prim(g); break;
        }
        break;
    default:
        gen_any(g, depth);
        break;
    }
}

/* Random Variants (seeded; PQ_TEST_SEED replays) against a shred tree
 * with every node kind: written through vs_write over several pages and
 * row groups, read back, rebuilt: equal, and nothing INVALID. */
static void test_vshred_random_round_trip(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    gen g = {.rng = {seed}};
    caserun cr;
    memset(&cr, 0, sizeof cr);
    snprintf(cr.yaml, sizeof cr.yaml, "%s",
             "columns:\n  - {name: id, type: int32, required: true}\n"
             "  - name: var\n    type: variant\n    shred: {g: \"timestamp(us,utc)\", a: int64, "
             "d: {f: variant, e: [int32]}, b: string, c: [{y: \"decimal(18,3)\", x: double}], "
             "h: [[string]]}\n"); /* fields out of byte order on purpose */
    pq_err err = {0};
    fail_if(sc_schema_load_buffer("t.yaml", cr.yaml, strlen(cr.yaml), &cr.spec, &err), &err,
            "load");
    fail_if(sc_build_parquet_schema(cr.spec, &cr.ps, &err), &err, "build");
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.page_max_rows = 7;
    o.row_group_max_rows = 64;
    o.page_version = 1 + (int)(seed & 1);
    pq_writer *w;
    pq_buf file;
    pq_buf_init(&file);
    pq_sink sink = {.ctx = &file, .write = mem_write};
    fail_if(pq_writer_open(&w, cr.ps, &o, sink, &err), &err, "open");
    vr_builder b;
    assert_int_equal(vr_builder_init(&b, NULL), 0);
    g.b = &b;
    vs_state st;
    vs_state_init(&st);
    const sc_type *t = cr.spec->columns[1].type;
    enum { ROWS = 300 };
    pq_buf *in = calloc(ROWS, sizeof *in);
    size_t *mlen = calloc(ROWS, sizeof *mlen);
    for (size_t r = 0; r < ROWS; r++) {
        assert_int_equal(pq_column_put_i32(pq_writer_column(w, 0), 0, (int32_t)r), 0);
        pq_buf_init(&in[r]);
        if (below(&g, 20) == 0) { /* a null Variant */
            for (int l = t->leaf; l < t->leaf + t->n_leaves; l++)
                assert_int_equal(pq_column_put_null(pq_writer_column(w, (size_t)l), 0, 0), 0);
        } else {
            vr_builder_reset(&b);
            gen_for(&g, t->shred, 0);
            vr_variant v;
            if (vr_finish(&b, &v) != 0)
                fail_msg("seed %" PRIu64 " row %zu: %s", seed, r, b.err.msg);
            pq_buf_append(&in[r], v.metadata, v.metadata_len);
            pq_buf_append(&in[r], v.value, v.value_len);
            mlen[r] = v.metadata_len;
            if (vs_write(&st, pq_writer_rowgroup(w), t, &v, 0, &err) != 0)
                fail_msg("seed %" PRIu64 " row %zu: %s", seed, r, err.msg);
        }
        fail_if(pq_writer_end_row(w, &err), &err, "end_row");
    }
    fail_if(pq_writer_close(w, &err), &err, "close");
    pq_writer_destroy(w);
    fdata_open_mem(&cr.ours, &file, "random");
    assert_true(pqf_num_row_groups(&cr.ours.f) > 1);
    for (size_t j = 0; j < cr.ours.nleaves; j++) /* every path taken */
        if (cr.ours.leaves[j].nv == 0)
            fail_msg("seed %" PRIu64 ": no value in %s", seed, cr.ours.leaves[j].path);
    rebuilt *rows = calloc(ROWS, sizeof *rows);
    char viol[256];
    rebuild_file(&cr.ours, cr.spec, cr.ps, true, rows, viol, sizeof viol);
    if (viol[0])
        fail_msg("seed %" PRIu64 ": %s", seed, viol);
    for (size_t r = 0; r < ROWS; r++) {
        if (in[r].len == 0) {
            PQT_CHECK(rows[r].null, seed);
            continue;
        }
        int eq = vread_equal(in[r].data, mlen[r], in[r].data + mlen[r], in[r].len - mlen[r],
                             rows[r].meta, rows[r].mlen, rows[r].value.data, rows[r].value.len,
                             &err);
        if (eq != 1)
            fail_msg("seed %" PRIu64 " row %zu: rebuilt Variant differs (%s)", seed, r, err.msg);
        /* metadata is passed through unchanged */
        PQT_CHECK(rows[r].mlen == mlen[r] && memcmp(rows[r].meta, in[r].data, mlen[r]) == 0,
                  seed);
        pq_buf_free(&in[r]);
    }
    rebuilt_free(rows, ROWS);
    free(rows);
    free(in);
    free(mlen);
    vs_state_free(&st);
    vr_builder_free(&b);
    fdata_close(&cr.ours);
    pq_buf_free(&file);
    pq_schema_destroy(cr.ps);
    sc_schema_free(cr.spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vshred_valid_cases_match_case_files),
        cmocka_unit_test(test_vshred_invalid_cases_flagged_and_never_written),
        cmocka_unit_test(test_vshred_unsupported_typed_value_types_cannot_be_configured),
        cmocka_unit_test(test_vshred_spec_measurement_example),
        cmocka_unit_test(test_vshred_spec_tags_array_example),
        cmocka_unit_test(test_vshred_spec_event_object_example),
        cmocka_unit_test(test_vshred_nested_levels),
        cmocka_unit_test(test_vshred_type_matching_rules),
        cmocka_unit_test(test_vshred_json_records_through_the_shredder),
        cmocka_unit_test(test_vshred_rejects_malformed_input),
        cmocka_unit_test(test_vshred_random_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
