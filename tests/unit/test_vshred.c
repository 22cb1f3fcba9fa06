/* test_vshred.c - Variant shredding (schema/vshred.c) against
 * VariantShredding.md and the parquet-testing shredded_variant cases
 * (testdata README 2b).
 *
 * Case files. For every case, the `var` group's Parquet schema is turned
 * into schema-language YAML (`shred: {a: int32, b: string}`, `[string]`,
 * ...) and loaded with sc_schema_load_buffer. We generate YAML rather than
 * build the sc_shred tree by hand so that the layout under test (leaf
 * order, def/rep/typed_def of every node) is the one colspec computes for
 * real configurations; the first check of every case is that this layout
 * names the same leaves with the same physical types and max levels as the
 * case file. The case's expected Variants (.variant.bin) then go through
 * vs_write into a pq_writer, the file is closed, and both files are read
 * with the test-side reader (pqfile + decode.h) and compared leaf by leaf:
 * definition and repetition levels always exactly, values byte for byte,
 * or by decoded value where the spec allows another encoding (the table
 * `by_value` below says which cases and why).
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
            offs[n] = heap.len;
            if (!rebuild(v, sh->elem, &heap, where)) {
                violation(v, "%s: array element with value and typed_value both null", where);
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
        static char msg[300];
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
        fail_if(vs_write(st, w, t, &v, 0, &err), &err, "vs_write");
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
        rebuilt *rows = calloc(cr.theirs.nrows + 1, sizeof *rows);
        char viol[256];
        rebuild_file(&cr.theirs, cr.spec, cr.ps, false, rows, viol, sizeof viol);
        if (viol[0])
            printf("case %03d: their file: %s\n", c->number, viol);
        expect_rows(c, rows, cr.theirs.nrows, "their file");
        rebuilt_free(rows, cr.theirs.nrows);
        case_write(&cr);
        rebuild_file(&cr.ours, cr.spec, cr.ps, true, rows, viol, sizeof viol);
        if (viol[0])
            fail_msg("case %03d: our file: %s", c->number, viol);
        expect_rows(c, rows, cr.ours.nrows, "our file");
        rebuilt_free(rows, cr.ours.nrows);
        free(rows);
        cmpres res;
        case_compare(&cr, &res);
        bool ex = !res.extra_leaves && !res.value_by_value && !res.typed_by_value &&
                  !res.level_diffs[0];
        if (res.level_diffs[0])
            printf("case %03d levels differ: %s\n", c->number, res.level_diffs);
        exact += ex;
        if (!ex)
            printf("case %03d %-48s extra-null-leaves %d, value-by-value %d, typed-by-value %d%s\n",
                   c->number, c->test, res.extra_leaves, res.value_by_value, res.typed_by_value,
                   res.physical_differs ? " (physical type differs)" : "");
        ran++;
        case_close(&cr);
    }
    printf("%zu valid cases, %zu byte- and level-exact\n", ran, exact);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vshred_valid_cases_match_case_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
