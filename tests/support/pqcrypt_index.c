/* pqcrypt_index.c - the column chunk's ColumnIndex and OffsetIndex
 * (PageIndex.md) decrypted and checked against the pages read, and its
 * bloom filter header and bitset (BloomFilter.md "Encryption"). */
#include <stdlib.h>
#include <string.h>


#include "pqcrypt_int.h"

/* Parses a ColumnIndex / OffsetIndex / BloomFilterHeader: decrypted from
 * the module at off when the column is encrypted, else in place. *used =
 * bytes taken in the file. */
static int index_struct(chunk_ctx *x, int mtype, size_t off, size_t limit,
                        const tr_sspec *spec, tr_node **out, pq_buf *plain, size_t *used,
                        pq_err *err)
{
    pqc_file *f = x->f;
    *out = NULL;
    if (off >= f->size || limit > f->size || off >= limit) {
        pqc_set_fail(f, mtype, x->rg, x->col, -1, off, PQ_EPARSE);
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d %s at [%zu, %zu) outside the file",
                          x->rg, x->col, pqc_module_name(mtype), off, limit);
    }
    const uint8_t *p = f->data + off;
    size_t n = limit - off;
    if (x->key != NULL) {
        int rc = pqc_gcm_at(f, x->key, mtype, x->rg, x->col, -1, off, limit, plain, used, err);
        if (rc != 0)
            return rc;
        p = plain->data;
        n = plain->len;
    }
    size_t consumed = 0;
    int rc = tr_parse(p, n, out, &consumed, err);
    if (rc == 0)
        rc = tr_validate(*out, spec, err);
    if (rc == 0 && x->key != NULL && consumed != n)
        f->padded_modules++;
    if (rc != 0) {
        tr_free(*out);
        *out = NULL;
        pqc_set_fail(f, mtype, x->rg, x->col, -1, off, rc);
        return pq_err_prefix(err, rc, "rg %d col %d %s at offset %zu", x->rg, x->col,
                       pqc_module_name(mtype), off);
    }
    if (x->key == NULL)
        *used = consumed;
    return 0;
}

/* OffsetIndex: one PageLocation per data page, at the page header, sized
 * header + page (encrypted modules included), first_row_index as read. */
int pqc_check_offset_index(chunk_ctx *x, pq_err *err)
{
    const tr_node *cc = tr_list_at(tr_field_list(pqf_row_group(&x->f->pf, (size_t)x->rg), 1),
                                   (size_t)x->col);
    int64_t off = tr_field_int(cc, 4, -1), len = tr_field_int(cc, 5, -1);
    if (off < 0)
        return 0;
    if (len <= 0)
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d: offset index without a length", x->rg,
                          x->col);
    tr_node *oi = NULL;
    pq_buf plain;
    pq_buf_init(&plain);
    size_t used = 0;
    int rc = index_struct(x, PQ_MODULE_OFFSET_INDEX, (size_t)off, (size_t)off + (size_t)len,
                          &pqf_spec_offset_index, &oi, &plain, &used, err);
    if (rc == 0 && used != (size_t)len)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: offset_index_length %lld, module/struct "
                        "is %zu bytes", x->rg, x->col, (long long)len, used);
    const tr_node *locs = rc == 0 ? tr_field_list(oi, 1) : NULL;
    if (rc == 0 && tr_list_len(locs) != x->npages)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: offset index has %zu pages, chunk has %zu "
                        "data pages", x->rg, x->col, tr_list_len(locs), x->npages);
    for (size_t i = 0; rc == 0 && i < x->npages; i++) {
        const tr_node *pl = tr_list_at(locs, i);
        int64_t po = tr_field_int(pl, 1, -1), ps = tr_field_int(pl, 2, -1),
                fr = tr_field_int(pl, 3, -1);
        if (po != (int64_t)x->page_off[i] || ps != (int64_t)x->page_len[i] ||
            fr != x->page_first_row[i])
            rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: offset index page %zu says "
                            "(offset %lld, size %lld, first row %lld), the page is (%zu, %zu, "
                            "%lld)", x->rg, x->col, i, (long long)po, (long long)ps,
                            (long long)fr, x->page_off[i], x->page_len[i],
                            (long long)x->page_first_row[i]);
    }
    if (rc != 0 && x->f->fail_module < 0)
        pqc_set_fail(x->f, PQ_MODULE_OFFSET_INDEX, x->rg, x->col, -1, (size_t)off, rc);
    if (rc == 0)
        x->c->offset_indexes++;
    tr_free(oi);
    pq_buf_free(&plain);
    return rc;
}

int pqc_check_column_index(chunk_ctx *x, pq_err *err)
{
    const tr_node *cc = tr_list_at(tr_field_list(pqf_row_group(&x->f->pf, (size_t)x->rg), 1),
                                   (size_t)x->col);
    int64_t off = tr_field_int(cc, 6, -1), len = tr_field_int(cc, 7, -1);
    if (off < 0)
        return 0;
    if (len <= 0)
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d: column index without a length", x->rg,
                          x->col);
    tr_node *ci = NULL;
    pq_buf plain;
    pq_buf_init(&plain);
    size_t used = 0;
    int rc = index_struct(x, PQ_MODULE_COLUMN_INDEX, (size_t)off, (size_t)off + (size_t)len,
                          &pqf_spec_column_index, &ci, &plain, &used, err);
    if (rc == 0 && used != (size_t)len)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: column_index_length %lld, module/struct "
                        "is %zu bytes", x->rg, x->col, (long long)len, used);
    if (rc == 0 && tr_list_len(tr_field_list(ci, 1)) != x->npages)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: column index has %zu null_pages, chunk "
                        "has %zu data pages", x->rg, x->col, tr_list_len(tr_field_list(ci, 1)),
                        x->npages);
    if (rc != 0 && x->f->fail_module < 0)
        pqc_set_fail(x->f, PQ_MODULE_COLUMN_INDEX, x->rg, x->col, -1, (size_t)off, rc);
    if (rc == 0)
        x->c->column_indexes++;
    tr_free(ci);
    pq_buf_free(&plain);
    return rc;
}

/* Header then bitset: two modules when encrypted (BloomFilter.md). */
int pqc_read_bloom(chunk_ctx *x, pq_err *err)
{
    pqc_file *f = x->f;
    int64_t off = tr_field_int(x->md, 14, -1), len = tr_field_int(x->md, 15, -1);
    if (off < 0)
        return 0;
    size_t limit = len > 0 ? (size_t)off + (size_t)len : f->size;
    tr_node *h = NULL;
    pq_buf plain, bits;
    pq_buf_init(&plain);
    pq_buf_init(&bits);
    size_t used = 0, bused = 0;
    int rc = index_struct(x, PQ_MODULE_BLOOM_HEADER, (size_t)off, limit, &pqf_spec_bloom_header,
                          &h, &plain, &used, err);
    int64_t nb = rc == 0 ? tr_field_int(h, 1, -1) : -1;
    size_t boff = (size_t)off + used;
    if (rc == 0 && (nb < 32 || nb % 32 != 0))
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: bloom numBytes %lld", x->rg, x->col,
                        (long long)nb);
    const uint8_t *bitset = NULL;
    if (rc == 0 && x->key != NULL) {
        rc = pqc_gcm_at(f, x->key, PQ_MODULE_BLOOM_BITSET, x->rg, x->col, -1, boff, limit, &bits,
                    &bused, err);
        if (rc == 0 && bits.len != (size_t)nb) {
            pqc_set_fail(f, PQ_MODULE_BLOOM_BITSET, x->rg, x->col, -1, boff, PQ_EPARSE);
            rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: bloom bitset module holds %zu bytes, "
                            "header says %lld", x->rg, x->col, bits.len, (long long)nb);
        }
        bitset = bits.data;
    } else if (rc == 0) {
        if ((size_t)nb > limit - boff)
            rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: bloom bitset runs past its end",
                            x->rg, x->col);
        bitset = f->data + boff;
        bused = (size_t)nb;
    }
    if (rc == 0 && len > 0 && used + bused != (size_t)len)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: bloom_filter_length %lld, header + bitset "
                        "take %zu", x->rg, x->col, (long long)len, used + bused);
    if (rc == 0) {
        pqc_bloom *b = &x->c->blooms[x->rg];
        b->bitset = malloc((size_t)nb);
        if (b->bitset == NULL) {
            rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
        } else {
            memcpy(b->bitset, bitset, (size_t)nb);
            b->num_bytes = (size_t)nb;
        }
    }
    tr_free(h);
    pq_buf_free(&plain);
    pq_buf_free(&bits);
    return rc;
}
