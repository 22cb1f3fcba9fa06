/* pqcrypt.c - test-only decrypting Parquet reader (Encryption.md 4-5,
 * BloomFilter.md "Encryption", PageIndex.md). See pqcrypt.h.
 *
 * This file: opening and closing a file, the column value lists, and the
 * record of modules decrypted; the parts are listed in pqcrypt_int.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "pqcrypt_int.h"


uint32_t pqc_rd_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

const char *pqc_module_name(int type)
{
    static const char *const t[] = { "footer", "column metadata", "data page",
        "dictionary page", "data page header", "dictionary page header",
        "column index", "offset index", "bloom filter header", "bloom filter bitset" };
    return type >= 0 && type < 10 ? t[type] : "(no module)";
}

void pqc_set_fail(pqc_file *f, int type, int32_t rg, int32_t col, int32_t page,
                  size_t off, int code)
{
    f->fail_module = type;
    f->fail_rg = rg;
    f->fail_col = col;
    f->fail_page = page;
    f->fail_offset = off;
    f->fail_code = code;
}

int pqc_add_module(pqc_file *f, int type, int32_t rg, int32_t col, int32_t page,
                   size_t off, size_t len, bool gcm, bool in_footer)
{
    if (f->nmodules == f->modules_cap) {
        size_t ncap = f->modules_cap ? f->modules_cap * 2 : 64;
        pqc_module *m = realloc(f->modules, ncap * sizeof *m);
        if (m == NULL)
            return PQ_ENOMEM;
        f->modules = m;
        f->modules_cap = ncap;
    }
    f->modules[f->nmodules++] = (pqc_module){ type, rg, col, page, off, len, gcm, in_footer };
    return 0;
}

/* Appends one value's bytes to a column. */
int pqc_col_push(pqc_column *c, const void *p, size_t len)
{
    pqt_bytes *v = &c->values;
    if (v->n + 2 > c->values_cap_off) {
        size_t ncap = c->values_cap_off ? c->values_cap_off * 2 : 1024;
        uint32_t *o = realloc(v->off, ncap * sizeof *o);
        if (o == NULL)
            return PQ_ENOMEM;
        if (v->off == NULL)
            o[0] = 0;
        v->off = o;
        c->values_cap_off = ncap;
    }
    size_t used = v->off[v->n];
    if (used + len > c->values_cap_heap) {
        size_t ncap = c->values_cap_heap ? c->values_cap_heap : 4096;
        while (ncap < used + len)
            ncap *= 2;
        uint8_t *h = realloc(v->heap, ncap);
        if (h == NULL)
            return PQ_ENOMEM;
        v->heap = h;
        c->values_cap_heap = ncap;
    }
    if (len > 0)
        memcpy(v->heap + used, p, len);
    v->off[v->n + 1] = (uint32_t)(used + len);
    v->n++;
    return 0;
}

int pqc_col_levels(pqc_column *c, size_t n, uint16_t **def, uint16_t **rep)
{
    uint16_t *d = realloc(c->def, (c->n_levels + n + 1) * sizeof *d);
    if (d == NULL)
        return PQ_ENOMEM;
    c->def = d;
    uint16_t *r = realloc(c->rep, (c->n_levels + n + 1) * sizeof *r);
    if (r == NULL)
        return PQ_ENOMEM;
    c->rep = r;
    *def = c->def + c->n_levels;
    *rep = c->rep + c->n_levels;
    c->n_levels += n;
    return 0;
}

bool pqc_bloom_check(const pqc_bloom *b, uint64_t h)
{
    static const uint32_t salt[8] = { 0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                      0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U };
    if (b->bitset == NULL || b->num_bytes < 32)
        return true; /* no filter: cannot exclude */
    uint64_t blocks = b->num_bytes / 32;
    uint64_t i = ((h >> 32) * blocks) >> 32;
    const uint8_t *blk = b->bitset + i * 32;
    uint32_t x = (uint32_t)h;
    for (int w = 0; w < 8; w++) {
        uint32_t bit = (uint32_t)(x * salt[w]) >> 27;
        if ((pqc_rd_le32(blk + 4 * w) & (UINT32_C(1) << bit)) == 0)
            return false;
    }
    return true;
}

static void free_internals(pqc_file *f)
{
    for (size_t i = 0; i < f->ncols; i++) {
        pqc_column *c = &f->cols[i];
        free(c->def);
        free(c->rep);
        pqt_bytes_free(&c->values);
        free(c->rg_first_value);
        for (size_t g = 0; c->blooms != NULL && g < f->num_row_groups; g++)
            free(c->blooms[g].bitset);
        free(c->blooms);
    }
    free(f->cols);
    f->cols = NULL;
    f->ncols = 0;
    pqf_close(&f->pf);
    pq_buf_free(&f->file_aad);
    free(f->modules);
    f->modules = NULL;
    f->nmodules = f->modules_cap = 0;
    free(f->data);
    f->data = NULL;
    free(f->name);
    f->name = NULL;
}

static int open_data(pqc_file *f, const pqc_opts *o, pq_err *err)
{
    if (f->size < 12)
        return pq_err_set(err, PQ_EPARSE, "%zu bytes: not a Parquet file", f->size);
    const uint8_t *tail = f->data + f->size - 4;
    bool pare = memcmp(tail, "PARE", 4) == 0;
    if (!pare && memcmp(tail, "PAR1", 4) != 0)
        return pq_err_set(err, PQ_EPARSE, "no PAR1/PARE magic at the end");
    if (memcmp(f->data, tail, 4) != 0)
        return pq_err_set(err, PQ_EPARSE, "magic at offset 0 differs from the final magic");
    uint32_t len = pqc_rd_le32(f->data + f->size - 8);
    if (len == 0 || len > f->size - 12)
        return pq_err_set(err, PQ_EPARSE, "footer length %u does not fit %zu bytes", len, f->size);
    f->footer_offset = f->size - 8 - len;
    int rc = pare ? pqc_open_encrypted_footer(f, o, f->footer_offset, len, err)
                  : pqc_open_plain_footer(f, o, f->footer_offset, len, err);
    if (rc != 0)
        return rc;
    f->num_row_groups = pqf_num_row_groups(&f->pf);
    f->num_rows = tr_field_int(f->pf.meta, 3, -1);
    f->ncols = f->pf.nleaves;
    f->cols = calloc(f->ncols ? f->ncols : 1, sizeof *f->cols);
    if (f->cols == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    for (size_t i = 0; i < f->ncols; i++) {
        pqc_column *c = &f->cols[i];
        const pqf_leaf *l = &f->pf.leaves[i];
        c->path = l->path;
        c->type = l->type;
        c->type_length = l->type_length;
        c->max_def = l->max_def;
        c->max_rep = l->max_rep;
        c->rg_first_value = calloc(f->num_row_groups + 1, sizeof *c->rg_first_value);
        c->blooms = calloc(f->num_row_groups + 1, sizeof *c->blooms);
        if (c->rg_first_value == NULL || c->blooms == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    int64_t rows = 0;
    for (size_t g = 0; g < f->num_row_groups; g++) {
        const tr_node *rgn = pqf_row_group(&f->pf, g);
        rows += tr_field_int(rgn, 3, 0);
        if (pqf_num_columns(&f->pf, g) != f->ncols)
            return pq_err_set(err, PQ_EPARSE, "row group %zu has %zu chunks for %zu leaves", g,
                              pqf_num_columns(&f->pf, g), f->ncols);
        for (size_t c = 0; c < f->ncols; c++)
            if ((rc = pqc_read_chunk(f, o, (int32_t)g, (int32_t)c, err)) != 0)
                return rc;
    }
    if (rows != f->num_rows)
        return pq_err_set(err, PQ_EPARSE, "row groups hold %lld rows, FileMetaData says %lld",
                          (long long)rows, (long long)f->num_rows);
    return 0;
}

static int open_common(pqc_file *f, const pqc_opts *o, pq_err *err)
{
    int rc = open_data(f, o, err);
    if (rc != 0) {
        if (f->fail_code == 0 && f->fail_module >= 0)
            f->fail_code = rc;
        char name[256];
        snprintf(name, sizeof name, "%s", f->name ? f->name : "?");
        free_internals(f);
        return pq_err_prefix(err, rc, "%s", name);
    }
    return 0;
}

static void init_file(pqc_file *f)
{
    memset(f, 0, sizeof *f);
    pq_buf_init(&f->file_aad);
    f->fail_module = -1;
    f->fail_rg = f->fail_col = f->fail_page = -1;
}

int pqc_open(pqc_file *f, const char *path, const pqc_opts *o, pq_err *err)
{
    init_file(f);
    f->name = strdup(path);
    if (f->name == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    int rc = pqc_read_whole(path, &f->data, &f->size, err);
    if (rc != 0) {
        free_internals(f);
        return rc;
    }
    return open_common(f, o, err);
}

int pqc_open_mem(pqc_file *f, const uint8_t *p, size_t n, const char *name,
                 const pqc_opts *o, pq_err *err)
{
    init_file(f);
    f->name = strdup(name ? name : "<memory>");
    f->data = malloc(n ? n : 1);
    if (f->name == NULL || f->data == NULL) {
        free_internals(f);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    memcpy(f->data, p, n);
    f->size = n;
    return open_common(f, o, err);
}

void pqc_close(pqc_file *f)
{
    if (f == NULL)
        return;
    free_internals(f);
}

const pqc_column *pqc_column_by_path(const pqc_file *f, const char *path)
{
    for (size_t i = 0; i < f->ncols; i++)
        if (strcmp(f->cols[i].path, path) == 0)
            return &f->cols[i];
    return NULL;
}
