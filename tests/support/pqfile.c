/* pqfile.c - test-side Parquet reader: footer and schema
 * (parquet-format-README.md "File format", "Metadata"), column chunks, page
 * headers and page bodies (Compression.md for v1/v2 compression scope,
 * Encodings.md for the level hybrid).
 *
 * This file: opening a file, its schema leaves and footer accessors; the
 * Thrift tables are pqfile_specs.c, pages pqfile_pages.c, levels
 * pqfile_levels.c, names pqfile_names.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqfile.h"

static int read_whole(const char *path, uint8_t **out, size_t *n, pq_err *err)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return pq_err_set(err, PQ_EIO, "%s: cannot open", path);
    int rc = PQ_EIO;
    long len = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        len = ftell(fp);
    if (len < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        pq_err_set(err, PQ_EIO, "%s: cannot determine size", path);
        goto out;
    }
    *out = malloc(len > 0 ? (size_t)len : 1);
    if (*out == NULL) {
        rc = pq_err_set(err, PQ_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (fread(*out, 1, (size_t)len, fp) != (size_t)len) {
        pq_err_set(err, PQ_EIO, "%s: short read", path);
        free(*out);
        *out = NULL;
        goto out;
    }
    *n = (size_t)len;
    rc = 0;
out:
    fclose(fp);
    return rc;
}

/* Magic at both ends; PARE means an encrypted footer (out of scope). */
static int check_frame(pqf_file *f, pq_err *err)
{
    if (f->size < 12)
        return pq_err_set(err, PQ_EPARSE, "file is %zu bytes, smaller than "
                          "magic + footer length + magic (12)", f->size);
    const uint8_t *tail = f->data + f->size - 4;
    if (memcmp(tail, "PARE", 4) == 0 || memcmp(f->data, "PARE", 4) == 0)
        return pq_err_set(err, PQ_EPARSE, "encrypted footer (PARE magic) is "
                          "not supported by this reader");
    if (memcmp(f->data, "PAR1", 4) != 0)
        return pq_err_set(err, PQ_EPARSE, "bad magic at offset 0 (want PAR1)");
    if (memcmp(tail, "PAR1", 4) != 0)
        return pq_err_set(err, PQ_EPARSE, "bad magic at offset %zu (want PAR1)",
                          f->size - 4);
    const uint8_t *l = f->data + f->size - 8;
    f->footer_len = (uint32_t)l[0] | (uint32_t)l[1] << 8 |
                    (uint32_t)l[2] << 16 | (uint32_t)l[3] << 24;
    if (f->footer_len == 0 || f->footer_len > f->size - 12)
        return pq_err_set(err, PQ_EPARSE, "footer length %u does not fit a "
                          "%zu-byte file", f->footer_len, f->size);
    f->footer_offset = f->size - 8 - f->footer_len;
    return 0;
}

static int parse_footer(pqf_file *f, pq_err *err)
{
    int rc = tr_parse(f->data + f->footer_offset, f->footer_len, &f->meta,
                      &f->footer_consumed, err);
    if (rc != 0)
        return pq_err_prefix(err, rc, "FileMetaData at offset %zu", f->footer_offset);
    rc = tr_validate(f->meta, &pqf_spec_file_metadata, err);
    if (rc != 0)
        return pq_err_prefix(err, rc, "FileMetaData at offset %zu", f->footer_offset);
    return 0;
}

/* ---- schema leaves ---- */

#define SCHEMA_MAX_DEPTH 64

typedef struct leaf_builder {
    pqf_file *f;
    const tr_node *schema;
    size_t next;                   /* next schema element to visit */
    size_t cap;
    size_t chain[SCHEMA_MAX_DEPTH];
    pq_err *err;
} leaf_builder;

static char *join_path(const tr_node *schema, const size_t *chain, size_t depth)
{
    size_t total = 1;
    for (size_t i = 0; i < depth; i++) {
        size_t len;
        tr_field_bin(tr_list_at(schema, chain[i]), 4, &len);
        total += len + 1;
    }
    char *s = malloc(total);
    if (s == NULL)
        return NULL;
    size_t pos = 0;
    for (size_t i = 0; i < depth; i++) {
        size_t len;
        const uint8_t *name = tr_field_bin(tr_list_at(schema, chain[i]), 4, &len);
        if (i > 0)
            s[pos++] = '.';
        memcpy(s + pos, name, len);
        pos += len;
    }
    s[pos] = '\0';
    return s;
}

static int add_leaf(leaf_builder *b, const tr_node *el, size_t depth, int def,
                    int rep)
{
    pqf_file *f = b->f;
    if (f->nleaves == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 16;
        pqf_leaf *l = realloc(f->leaves, ncap * sizeof *l);
        if (l == NULL)
            return pq_err_set(b->err, PQ_ENOMEM, "out of memory");
        f->leaves = l;
        b->cap = ncap;
    }
    pqf_leaf *leaf = &f->leaves[f->nleaves];
    memset(leaf, 0, sizeof *leaf);
    leaf->chain = malloc(depth * sizeof *leaf->chain);
    leaf->path = join_path(b->schema, b->chain, depth);
    f->nleaves++;   /* counted now so pqf_close frees a half-built leaf */
    if (leaf->chain == NULL || leaf->path == NULL)
        return pq_err_set(b->err, PQ_ENOMEM, "out of memory");
    memcpy(leaf->chain, b->chain, depth * sizeof *leaf->chain);
    leaf->depth = depth;
    leaf->elem = el;
    leaf->type = (int)tr_field_int(el, 1, -1);
    leaf->type_length = (int32_t)tr_field_int(el, 2, -1);
    leaf->max_def = (int16_t)def;
    leaf->max_rep = (int16_t)rep;
    return 0;
}

/* Visits the element at b->next and, for groups, its num_children
 * descendants (the schema list is a depth-first flattening). */
static int walk_schema(leaf_builder *b, size_t depth, int def, int rep)
{
    size_t idx = b->next++;
    const tr_node *el = tr_list_at(b->schema, idx);
    if (el == NULL)
        return pq_err_set(b->err, PQ_EPARSE, "schema: num_children runs past "
                          "the last element (%zu)", tr_list_len(b->schema));
    if (depth > SCHEMA_MAX_DEPTH)
        return pq_err_set(b->err, PQ_EPARSE, "schema: element %zu nested "
                          "deeper than %d", idx, SCHEMA_MAX_DEPTH);
    if (depth > 0) {
        int64_t r = tr_field_int(el, 3, -1);
        if (r < 0 || r > 2)
            return pq_err_set(b->err, PQ_EPARSE, "schema: element %zu has no "
                              "valid repetition_type", idx);
        def += (r != PQ_REQUIRED);
        rep += (r == PQ_REPEATED);
        b->chain[depth - 1] = idx;
    }
    int64_t nch = tr_field_int(el, 5, -1);
    bool has_type = tr_has(el, 1);
    if (has_type && nch <= 0 && depth > 0)
        return add_leaf(b, el, depth, def, rep);
    if (has_type || nch <= 0)
        return pq_err_set(b->err, PQ_EPARSE, "schema: element %zu is neither "
                          "a leaf (type, no children) nor a group", idx);
    for (int64_t i = 0; i < nch; i++)
        if (walk_schema(b, depth + 1, def, rep) != 0)
            return PQ_EPARSE;
    return 0;
}

static int build_leaves(pqf_file *f, pq_err *err)
{
    leaf_builder b = { .f = f, .schema = tr_field_list(f->meta, 2), .err = err };
    if (walk_schema(&b, 0, 0, 0) != 0)
        return err ? err->code : PQ_EPARSE;
    if (b.next != tr_list_len(b.schema))
        return pq_err_set(err, PQ_EPARSE, "schema: %zu elements but the root's "
                          "tree covers %zu", tr_list_len(b.schema), b.next);
    return 0;
}

static int open_parsed(pqf_file *f, pq_err *err)
{
    int rc = check_frame(f, err);
    if (rc == 0)
        rc = parse_footer(f, err);
    if (rc == 0)
        rc = build_leaves(f, err);
    if (rc != 0)
        pqf_close(f);
    return rc;
}

int pqf_open(pqf_file *f, const char *path, pq_err *err)
{
    memset(f, 0, sizeof *f);
    f->name = strdup(path);
    if (f->name == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    int rc = read_whole(path, &f->data, &f->size, err);
    if (rc != 0) {
        pqf_close(f);
        return rc;
    }
    return open_parsed(f, err);
}

int pqf_open_mem(pqf_file *f, const uint8_t *p, size_t n, const char *name,
                 pq_err *err)
{
    memset(f, 0, sizeof *f);
    f->name = strdup(name ? name : "<memory>");
    f->data = malloc(n ? n : 1);
    if (f->name == NULL || f->data == NULL) {
        pqf_close(f);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    if (n > 0)
        memcpy(f->data, p, n);
    f->size = n;
    return open_parsed(f, err);
}

void pqf_close(pqf_file *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->nleaves; i++) {
        free(f->leaves[i].path);
        free(f->leaves[i].chain);
    }
    free(f->leaves);
    tr_free(f->meta);
    free(f->data);
    free(f->name);
    memset(f, 0, sizeof *f);
}

size_t pqf_num_schema(const pqf_file *f) { return tr_list_len(tr_field_list(f->meta, 2)); }

const tr_node *pqf_schema_at(const pqf_file *f, size_t i)
{
    return tr_list_at(tr_field_list(f->meta, 2), i);
}

size_t pqf_num_row_groups(const pqf_file *f) { return tr_list_len(tr_field_list(f->meta, 4)); }

const tr_node *pqf_row_group(const pqf_file *f, size_t rg)
{
    return tr_list_at(tr_field_list(f->meta, 4), rg);
}

size_t pqf_num_columns(const pqf_file *f, size_t rg)
{
    return tr_list_len(tr_field_list(pqf_row_group(f, rg), 1));
}

bool pqf_leaf_matches(const pqf_file *f, const pqf_leaf *leaf,
                      const tr_node *path_in_schema)
{
    if (leaf == NULL || tr_list_len(path_in_schema) != leaf->depth)
        return false;
    for (size_t i = 0; i < leaf->depth; i++) {
        size_t a, b;
        const uint8_t *want = tr_field_bin(pqf_schema_at(f, leaf->chain[i]), 4, &a);
        const uint8_t *got = tr_bin(tr_list_at(path_in_schema, i), &b);
        if (got == NULL || a != b || memcmp(want, got, a) != 0)
            return false;
    }
    return true;
}

int pqf_chunk_get(const pqf_file *f, size_t rg, size_t col, pqf_chunk *out,
                  pq_err *err)
{
    memset(out, 0, sizeof *out);
    const tr_node *cc = tr_list_at(tr_field_list(pqf_row_group(f, rg), 1), col);
    if (cc == NULL)
        return pq_err_set(err, PQ_EINVAL, "no column %zu in row group %zu", col, rg);
    if (tr_has(cc, 1))
        return pq_err_set(err, PQ_EPARSE, "column chunk lives in another file "
                          "(file_path); not supported");
    const tr_node *md = tr_field_struct(cc, 3);
    if (md == NULL)
        return pq_err_set(err, PQ_EPARSE, tr_has(cc, 9)
                          ? "encrypted column metadata is not supported"
                          : "ColumnChunk has no meta_data");
    out->cc = cc;
    out->md = md;
    out->leaf = col < f->nleaves ? &f->leaves[col] : NULL;
    out->type = (int)tr_field_int(md, 1, -1);
    out->codec = (int)tr_field_int(md, 4, -1);
    out->num_values = tr_field_int(md, 5, -1);
    out->total_uncompressed_size = tr_field_int(md, 6, -1);
    out->total_compressed_size = tr_field_int(md, 7, -1);
    out->data_page_offset = tr_field_int(md, 9, -1);
    out->index_page_offset = tr_field_int(md, 10, -1);
    out->dictionary_page_offset = tr_field_int(md, 11, -1);
    out->bloom_filter_offset = tr_field_int(md, 14, -1);
    out->bloom_filter_length = tr_field_int(md, 15, -1);
    out->file_offset = tr_field_int(cc, 2, -1);
    out->offset_index_offset = tr_field_int(cc, 4, -1);
    out->offset_index_length = tr_field_int(cc, 5, -1);
    out->column_index_offset = tr_field_int(cc, 6, -1);
    out->column_index_length = tr_field_int(cc, 7, -1);
    out->start = out->dictionary_page_offset >= 0 ? out->dictionary_page_offset
                                                  : out->data_page_offset;
    return 0;
}

int pqf_parse_at(const pqf_file *f, size_t off, size_t len,
                 const tr_sspec *spec, tr_node **out, size_t *consumed,
                 pq_err *err)
{
    *out = NULL;
    if (off > f->size || len > f->size - off)
        return pq_err_set(err, PQ_EPARSE, "%s at [%zu, +%zu) lies outside the "
                          "%zu-byte file", spec->name, off, len, f->size);
    int rc = tr_parse(f->data + off, len, out, consumed, err);
    if (rc == 0)
        rc = tr_validate(*out, spec, err);
    if (rc != 0) {
        tr_free(*out);
        *out = NULL;
        return pq_err_prefix(err, rc, "%s at offset %zu", spec->name, off);
    }
    return 0;
}
