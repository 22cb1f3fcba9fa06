/* vshred_rebuild.h - the Variant shredding tests' independent reader:
 * every leaf of a Parquet file read with the test-side reader (pqfile +
 * decode.h), and `rebuild`, VariantShredding.md's construct_variant over
 * those levels, which also flags every shape the spec calls INVALID.
 * Also the case (vcase) and one run over it (caserun) that the tests fill.
 * Written apart from schema/variant/vshred.c on purpose. Header only
 * (static inline): each test file is one program. */
#ifndef VSHRED_REBUILD_H
#define VSHRED_REBUILD_H

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
#include "memsink.h"
#include "testdata.h"

/* the shredded_variant cases, under the test data directory (testdata.h) */
#define CASE_DIR "parquet-testing/shredded_variant"

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

static inline void fail_if(int rc, const pq_err *err, const char *what)
{
    if (rc != 0)
        fail_msg("%s: %s (%d)", what, err->msg, rc);
}

static inline const uint8_t *val_at(const leafdata *l, size_t v, size_t *len)
{
    const uint32_t *off = (const uint32_t *)(const void *)l->off.data;
    *len = off[v + 1] - off[v];
    return l->heap.data ? l->heap.data + off[v] : (const uint8_t *)""; /* all empty */
}

static inline void push_val(leafdata *l, const void *p, size_t len)
{
    uint32_t end;
    assert_int_equal(pq_buf_append(&l->heap, p, len), 0);
    end = (uint32_t)l->heap.len;
    assert_int_equal(pq_buf_append(&l->off, &end, 4), 0);
    l->nv++;
}

static inline size_t plain_width(const leafdata *l)
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
static inline void decode_values(leafdata *l, int enc, const uint8_t *p, size_t len, size_t n,
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

static inline void read_leaf(const pqf_file *f, size_t li, leafdata *l)
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

static inline void fdata_open_common(fdata *d)
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

static inline void fdata_open(fdata *d, const char *path)
{
    pq_err err = {0};
    fail_if(pqf_open(&d->f, path, &err), &err, path);
    fdata_open_common(d);
}

static inline void fdata_open_mem(fdata *d, const pq_buf *b, const char *name)
{
    pq_err err = {0};
    fail_if(pqf_open_mem(&d->f, b->data, b->len, name, &err), &err, name);
    fdata_open_common(d);
}

static inline void fdata_close(fdata *d)
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

static inline leafdata *leaf_by_path(fdata *d, const char *path)
{
    for (size_t i = 0; i < d->nleaves; i++)
        if (strcmp(d->leaves[i].path, path) == 0)
            return &d->leaves[i];
    return NULL;
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

static inline void violation(view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void violation(view *v, const char *fmt, ...)
{
    if (v->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why, sizeof v->why, fmt, ap);
    va_end(ap);
}

static inline bool has(const view *v, int leaf)
{
    return leaf >= 0 && v->lf[leaf] != NULL;
}

static inline uint16_t cdef(const view *v, int leaf)
{
    const leafdata *l = v->lf[leaf];
    if (v->pos[leaf] >= l->n)
        fail_msg("%s: read past the last level entry", l->path);
    return l->def[v->pos[leaf]];
}

static inline bool defined(const view *v, int leaf)
{
    return has(v, leaf) && cdef(v, leaf) == v->lf[leaf]->max_def;
}

static inline const uint8_t *cval(const view *v, int leaf, size_t *len)
{
    const leafdata *l = v->lf[leaf];
    return val_at(l, l->vidx[v->pos[leaf]], len);
}

static inline void adv(view *v, int leaf)
{
    if (has(v, leaf))
        v->pos[leaf]++;
}

static int first_leaf(const view *v, const sc_shred *sh);

static inline int first_typed_leaf(const view *v, const sc_shred *sh)
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

static inline int first_leaf(const view *v, const sc_shred *sh)
{
    return has(v, sh->value_leaf) ? sh->value_leaf : first_typed_leaf(v, sh);
}

static inline void skip_node(view *v, const sc_shred *sh);

static inline void skip_typed(view *v, const sc_shred *sh)
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

static inline void skip_node(view *v, const sc_shred *sh)
{
    adv(v, sh->value_leaf);
    skip_typed(v, sh);
}

static inline int64_t le_int(const uint8_t *p, size_t n)
{
    uint64_t u = 0;
    for (size_t i = 0; i < n; i++)
        u |= (uint64_t)p[i] << (8 * i);
    if (n < 8 && (p[n - 1] & 0x80))
        u |= ~(uint64_t)0 << (8 * n);
    return (int64_t)u;
}

static inline vr_i128 be_int(const uint8_t *p, size_t n)
{
    unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < n; i++)
        u = (u << 8) | p[i];
    return (vr_i128)u;
}

/* VariantShredding.md's table, read backwards: a typed value as Variant. */
static inline void typed_variant(const sc_type *t, int physical, const uint8_t *p, size_t len,
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

static inline uint32_t meta_id(view *v, const char *name)
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

static inline int kv_cmp(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = memcmp(x->key.s, y->key.s, n);
    return c ? c : (x->key.len > y->key.len) - (x->key.len < y->key.len);
}

static int rebuild(view *v, const sc_shred *sh, pq_buf *out, const char *where);

static inline void rebuild_array(view *v, const sc_shred *sh, int tl, pq_buf *out, const char *where)
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

static inline void rebuild_object(view *v, const sc_shred *sh, const uint8_t *vb, size_t vl,
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
static inline int rebuild(view *v, const sc_shred *sh, pq_buf *out, const char *where)
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
static inline void rebuild_file(fdata *d, const sc_schema *spec, const pq_schema *ps, bool strict,
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

static inline void rebuilt_free(rebuilt *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pq_buf_free(&rows[i].value);
}

/* Row r rebuilt equals the case's expected Variant (or both are null). */

typedef struct vcase {
    int number;
    char kind[16];               /* single-row, multi-row, error, no-files */
    char test[96];
    char file[64];
} vcase;


typedef struct caserun {
    vcase c;
    char yaml[2048];
    sc_schema *spec;
    pq_schema *ps;
    fdata theirs, ours;
    bool have_ours;
    pq_buf file;
} caserun;

static inline bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

#endif
