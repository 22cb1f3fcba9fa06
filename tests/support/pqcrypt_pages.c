/* pqcrypt_pages.c - one page of a column chunk: header (decrypted when
 * the column is encrypted), CRC over the bytes as written, body (GCM or
 * CTR module), decompression and values; data page places noted for the
 * offset index check. */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "pqcrypt_int.h"

/* Fills pg from a parsed, validated PageHeader (pqfile's reading of it);
 * data/compressed_size are set by the caller. An index page has no place
 * in a column chunk. */
static int page_from_header(pqf_page *pg, tr_node *h, pq_err *err)
{
    int rc = pqf_page_from_header(pg, h, err);
    if (rc == 0 && pg->type == PQ_PAGE_INDEX)
        return pq_err_set(err, PQ_EPARSE, "page type %d (%s) in a column chunk", pg->type,
                          pqf_page_type_name(pg->type));
    return rc;
}

/* Decodes one uncompressed data page into c. */
static int data_page_values(pqc_column *c, const pqf_page *pg, const uint8_t *page, size_t len,
                            const pqt_bytes *dict, pq_err *err)
{
    pqf_parts parts;
    int rc = pqf_page_split(pg, page, len, c->max_rep, c->max_def, &parts, err);
    if (rc != 0)
        return rc;
    if (pg->num_values < 0)
        return pq_err_set(err, PQ_EPARSE, "data page without num_values");
    size_t n = (size_t)pg->num_values;
    uint16_t *def, *rep;
    if (pqc_col_levels(c, n, &def, &rep) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    if ((rc = pqf_levels_decode(parts.rep, parts.rep_len, c->max_rep, n, rep, NULL, err)) != 0 ||
        (rc = pqf_levels_decode(parts.def, parts.def_len, c->max_def, n, def, NULL, err)) != 0)
        return pq_err_prefix(err, rc, "levels");
    size_t defined = 0;
    for (size_t i = 0; i < n; i++)
        defined += def[i] == (uint16_t)c->max_def;
    if (pg->type == PQ_PAGE_DATA_V2 && pg->num_nulls >= 0 &&
        (size_t)pg->num_nulls != n - defined)
        return pq_err_set(err, PQ_EPARSE, "v2 num_nulls %d, levels say %zu", pg->num_nulls,
                          n - defined);
    return pqc_decode_values(c, pg->encoding, parts.values, parts.values_len, defined, dict, err);
}

static int note_page(chunk_ctx *x, size_t off, size_t len, int64_t first_row)
{
    if (x->npages == x->pages_cap) {
        size_t ncap = x->pages_cap ? x->pages_cap * 2 : 16;
        size_t *a = realloc(x->page_off, ncap * sizeof *a);
        if (a == NULL)
            return PQ_ENOMEM;
        x->page_off = a;
        size_t *b = realloc(x->page_len, ncap * sizeof *b);
        if (b == NULL)
            return PQ_ENOMEM;
        x->page_len = b;
        int64_t *r = realloc(x->page_first_row, ncap * sizeof *r);
        if (r == NULL)
            return PQ_ENOMEM;
        x->page_first_row = r;
        x->pages_cap = ncap;
    }
    x->page_off[x->npages] = off;
    x->page_len[x->npages] = len;
    x->page_first_row[x->npages] = first_row;
    x->npages++;
    return 0;
}

/* The page header at off, decrypted when the column is encrypted, into
 * *pg (which may point into *h); *hdr_used = its bytes in the file. */
static int read_page_header(chunk_ctx *x, size_t off, int32_t ord, bool want_dict, pq_buf *hdr,
                            tr_node **h, pqf_page *pg, size_t *hdr_used, pq_err *err)
{
    pqc_file *f = x->f;
    const uint8_t *hdr_bytes;
    size_t hdr_avail;
    int rc;

    if (x->key != NULL) {
        rc = pqc_gcm_at(f, x->key, want_dict ? PQ_MODULE_DICT_PAGE_HEADER : PQ_MODULE_DATA_PAGE_HEADER,
                    x->rg, x->col, ord, off, x->end, hdr, hdr_used, err);
        if (rc != 0)
            return rc;
        hdr_bytes = hdr->data;
        hdr_avail = hdr->len;
    } else {
        hdr_bytes = f->data + off;
        hdr_avail = x->end - off;
    }
    size_t consumed = 0;
    rc = tr_parse(hdr_bytes, hdr_avail, h, &consumed, err);
    if (rc == 0)
        rc = tr_validate(*h, &pqf_spec_page_header, err);
    if (rc == 0)
        rc = page_from_header(pg, *h, err);
    if (rc != 0) {
        pqc_set_fail(f, want_dict ? PQ_MODULE_DICT_PAGE_HEADER : PQ_MODULE_DATA_PAGE_HEADER, x->rg,
                 x->col, ord, off, rc);
        return pq_err_prefix(err, rc, "rg %d col %d page header at offset %zu", x->rg, x->col, off);
    }
    if (x->key != NULL && consumed != hdr->len)
        f->padded_modules++;
    if (x->key == NULL)
        *hdr_used = consumed;
    return 0;
}

/* The page CRC, when the header carries one and the caller wants it. */
static int check_page_crc(chunk_ctx *x, const pqf_page *pg, size_t off, size_t boff, int32_t ord,
                          bool is_dict, pq_err *err)
{
    pqc_file *f = x->f;
    if (!pg->has_crc || x->skip_crc)
        return 0;
    /* parquet.thrift: over the bytes as written (after compression
     * and encryption), header excluded */
    uint32_t crc = (uint32_t)crc32(0L, f->data + boff, (uInt)pg->compressed_size);
    if (crc != pg->crc) {
        pqc_set_fail(f, is_dict ? PQ_MODULE_DICT_PAGE : PQ_MODULE_DATA_PAGE, x->rg, x->col, ord,
                 boff, PQ_EPARSE);
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d page at %zu: CRC %08x in the header, "
                          "%08x over the %d page bytes as written", x->rg, x->col, off, pg->crc,
                          crc, pg->compressed_size);
    }
    f->crc_pages++;
    return 0;
}

/* The page body at boff: decrypted into body when the column is encrypted
 * (GCM, or CTR under AES_GCM_CTR_V1), else in place; pg->data points at
 * it. *body_used = its bytes in the file. */
static int read_page_body(chunk_ctx *x, pqf_page *pg, size_t boff, int32_t ord, bool is_dict,
                          pq_buf *body, size_t *body_used, pq_err *err)
{
    pqc_file *f = x->f;
    if (x->key == NULL) {
        pg->data = f->data + boff;
        *body_used = (size_t)pg->compressed_size;
        return 0;
    }
    int mt = is_dict ? PQ_MODULE_DICT_PAGE : PQ_MODULE_DATA_PAGE;
    size_t limit = boff + (size_t)pg->compressed_size;
    int rc;
    if (f->algorithm == PQ_AES_GCM_CTR_V1) {
        rc = pqt_decrypt_ctr_module(x->key, f->data + boff, limit - boff, body, body_used, err);
        if (rc != 0) {
            pqc_set_fail(f, mt, x->rg, x->col, ord, boff, rc);
            return pq_err_prefix(err, rc, "rg %d col %d %s at offset %zu", x->rg, x->col,
                                 pqc_module_name(mt), boff);
        }
        if (pqc_add_module(f, mt, x->rg, x->col, ord, boff, *body_used, false, false) != 0)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    } else if ((rc = pqc_gcm_at(f, x->key, mt, x->rg, x->col, ord, boff, limit, body, body_used,
                            err)) != 0) {
        return rc;
    }
    /* Encryption.md does not say; parquet-mr and Arrow store the
     * encrypted module size (length prefix included) here. */
    if (*body_used != (size_t)pg->compressed_size) {
        pqc_set_fail(f, mt, x->rg, x->col, ord, boff, PQ_EPARSE);
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d %s at %zu: compressed_page_size %d "
                          "but the encrypted module is %zu bytes", x->rg, x->col,
                          pqc_module_name(mt), boff, pg->compressed_size, *body_used);
    }
    pg->data = body->data;
    pg->compressed_size = (int32_t)body->len;
    return 0;
}

/* The decompressed page's values: a dictionary page replaces *dict; a
 * data page appends to the column, and its place (span bytes at
 * pg->offset) and first row are noted for the offset index check. */
static int page_values(chunk_ctx *x, const pqf_page *pg, const uint8_t *plain, size_t plain_len,
                       pqt_bytes *dict, size_t span, int32_t *data_ordinal,
                       int64_t *rows_so_far, pq_err *err)
{
    pqc_column *c = x->c;
    int rc;
    if (pg->type == PQ_PAGE_DICTIONARY) {
        pqt_bytes_free(dict);
        if (pg->encoding != PQ_ENC_PLAIN && pg->encoding != PQ_ENC_PLAIN_DICTIONARY)
            rc = pq_err_set(err, PQ_EPARSE, "dictionary page encoding %d", pg->encoding);
        else
            rc = pqc_plain_values(c, plain, plain_len, pg->num_values < 0 ? 0 : (size_t)pg->num_values,
                              dict, err);
        c->dict_pages++;
        return rc;
    }
    size_t before = c->n_levels;
    rc = data_page_values(c, pg, plain, plain_len, dict->n ? dict : NULL, err);
    if (rc == 0) {
        int64_t rows = 0;
        for (size_t i = before; i < c->n_levels; i++)
            rows += c->rep[i] == 0;
        rc = note_page(x, pg->offset, span, *rows_so_far) != 0
                 ? pq_err_set(err, PQ_ENOMEM, "out of memory") : 0;
        *rows_so_far += rows;
    }
    (*data_ordinal)++;
    c->data_pages++;
    return rc;
}

/* One page at *pos: header (decrypted when the column is encrypted), then
 * the body; dictionary pages fill *dict. */
int pqc_read_page(chunk_ctx *x, size_t *pos, int32_t *data_ordinal, bool first,
                  pqt_bytes *dict, int64_t *rows_so_far, pq_err *err)
{
    pqc_file *f = x->f;
    size_t off = *pos;
    bool want_dict = first && tr_field_int(x->md, 11, -1) >= 0;
    int32_t ord = want_dict ? -1 : *data_ordinal;
    pq_buf hdr, body;
    pq_buf_init(&hdr);
    pq_buf_init(&body);
    tr_node *h = NULL;
    pqf_page pg;
    memset(&pg, 0, sizeof pg);
    uint8_t *plain = NULL;
    size_t plain_len = 0, hdr_used = 0, body_used = 0;

    int rc = read_page_header(x, off, ord, want_dict, &hdr, &h, &pg, &hdr_used, err);
    if (rc != 0)
        goto out;
    bool is_dict = pg.type == PQ_PAGE_DICTIONARY;
    if (is_dict != want_dict) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d page at offset %zu is %s but %s",
                        x->rg, x->col, off, pqf_page_type_name(pg.type),
                        want_dict ? "dictionary_page_offset points at it"
                                  : "it is not the first page at dictionary_page_offset");
        goto out;
    }
    size_t boff = off + hdr_used;
    if (pg.compressed_size < 0 || (size_t)pg.compressed_size > x->end - boff) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d page at %zu: compressed_page_size %d runs "
                        "past the chunk end %zu", x->rg, x->col, off, pg.compressed_size, x->end);
        goto out;
    }
    if ((rc = check_page_crc(x, &pg, off, boff, ord, is_dict, err)) != 0 ||
        (rc = read_page_body(x, &pg, boff, ord, is_dict, &body, &body_used, err)) != 0)
        goto out;
    pg.offset = off;
    pg.header_len = hdr_used;
    rc = pqf_page_decompress(&pg, (pq_codec)x->codec, &plain, &plain_len, err);
    if (rc == 0)
        rc = page_values(x, &pg, plain, plain_len, dict, hdr_used + body_used, data_ordinal,
                         rows_so_far, err);
    if (rc != 0) {
        if (f->fail_module < 0)
            pqc_set_fail(f, is_dict ? PQ_MODULE_DICT_PAGE : PQ_MODULE_DATA_PAGE, x->rg, x->col, ord,
                     boff, rc);
        rc = pq_err_prefix(err, rc, "rg %d col %d (%s) %s page at offset %zu", x->rg, x->col,
                           x->c->path, is_dict ? "dictionary" : "data", off);
        goto out;
    }
    *pos = boff + body_used;
out:
    free(plain);
    tr_free(h);
    pq_buf_free(&hdr);
    pq_buf_free(&body);
    return rc;
}
