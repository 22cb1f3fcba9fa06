/* pqcrypt_chunk.c - one column chunk: its key (footer key or column key),
 * its encrypted ColumnMetaData, every page, and the totals, indexes and
 * bloom filter checked against the row group. */
#include <stdio.h>
#include <stdlib.h>


#include "pqcrypt_int.h"

static int chunk_key(pqc_file *f, const pqc_opts *o, pqc_column *c, const tr_node *cc,
                     const pq_crypto_key **key, pq_err *err)
{
    *key = NULL;
    const tr_node *cm = tr_field_struct(cc, 8);
    if (cm == NULL)
        return 0;
    c->encrypted = true;
    if (!f->file_aad_ok)
        return pq_err_set(err, PQ_ECRYPTO, "column %s is encrypted but the file AAD is unknown "
                          "(AAD prefix not supplied?)", c->path);
    if (tr_has(cm, 1)) {
        c->footer_key = true;
        *key = o ? o->footer_key : NULL;
        if (*key == NULL) {
            size_t kl = 0;
            const uint8_t *km = NULL;
            pqt_crypto_meta m;
            pq_err ignored;
            /* the footer key id: FileCryptoMetaData / FileMetaData field 9 */
            if (f->encrypted_footer &&
                pqt_parse_file_crypto_metadata(f->data + f->footer_offset,
                                               f->size - 8 - f->footer_offset, &m, NULL,
                                               &ignored) == 0) {
                km = m.key_metadata;
                kl = m.key_metadata_len;
            } else if (!f->encrypted_footer &&
                       pqt_parse_footer_crypto(f->data + f->footer_offset,
                                               f->size - 8 - f->footer_offset, &m, NULL,
                                               &ignored) == 0) {
                km = m.key_metadata;
                kl = m.key_metadata_len;
            }
            *key = pqc_find_key(o, km, kl);
        }
    } else {
        const tr_node *ck = tr_field_struct(cm, 2);
        size_t kl = 0;
        const uint8_t *km = tr_field_bin(ck, 2, &kl);
        snprintf(c->key_id, sizeof c->key_id, "%.*s", (int)kl, km ? (const char *)km : "");
        if (!pqf_leaf_matches(&f->pf, &f->pf.leaves[c - f->cols], tr_field_list(ck, 1)))
            return pq_err_set(err, PQ_EPARSE, "column %s: EncryptionWithColumnKey.path_in_schema "
                              "names another column", c->path);
        *key = pqc_find_key(o, km, kl);
    }
    if (*key == NULL) {
        if (o && o->allow_missing_keys) {
            c->skipped = true;
            return 0;
        }
        return pq_err_set(err, PQ_ECRYPTO, "column %s: no key for key id '%s'", c->path,
                          c->footer_key ? "(footer key)" : c->key_id);
    }
    return 0;
}

/* The ColumnMetaData module inside the footer (encrypted_column_metadata,
 * framed as usual), decrypted into plain and parsed into *decmeta, which
 * x->md then reads. Fields that differ from the plaintext copy are
 * counted (meta_mismatches). */
static int decrypt_column_meta(chunk_ctx *x, const tr_node *cc, const uint8_t *enc, size_t elen,
                               pq_buf *plain, tr_node **decmeta, pq_err *err)
{
    pqc_file *f = x->f;
    int32_t rg = x->rg, col = x->col;
    if (elen < 4 || pqc_rd_le32(enc) != elen - 4)
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d: encrypted_column_metadata of %zu bytes "
                          "is not one length-prefixed module", rg, col, elen);
    pq_buf aad;
    pq_buf_init(&aad);
    size_t used = 0;
    int rc = pqc_module_aad(f, &aad, PQ_MODULE_COLUMN_META, rg, col, -1, err);
    if (rc == 0)
        rc = pqt_decrypt_gcm_module(x->key, aad.data, aad.len, enc, elen, plain, &used, err);
    pq_buf_free(&aad);
    size_t foff = f->encrypted_footer ? (size_t)(enc - f->pf.data) - 4
                                      : f->footer_offset + (size_t)(enc - f->pf.data) - 4;
    if (rc != 0) {
        pqc_set_fail(f, PQ_MODULE_COLUMN_META, rg, col, -1, foff, rc);
        return pq_err_prefix(err, rc, "rg %d col %d column metadata", rg, col);
    }
    if (pqc_add_module(f, PQ_MODULE_COLUMN_META, rg, col, -1, foff, used, true, true) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    size_t consumed = 0;
    rc = tr_parse(plain->data, plain->len, decmeta, &consumed, err);
    if (rc == 0 && consumed != plain->len)
        f->padded_modules++;
    if (rc != 0) {
        pqc_set_fail(f, PQ_MODULE_COLUMN_META, rg, col, -1, foff, rc);
        return pq_err_prefix(err, rc, "rg %d col %d decrypted ColumnMetaData", rg, col);
    }
    const tr_node *plain_md = tr_field_struct(cc, 3);
    static const int16_t same[] = { 1, 4, 5, 6, 7, 9, 10, 11, 14, 15 };
    for (size_t k = 0; plain_md != NULL && k < sizeof same / sizeof same[0]; k++)
        if (tr_field_int(plain_md, same[k], -1) != tr_field_int(*decmeta, same[k], -1)) {
            f->meta_mismatches++;
            break;
        }
    x->md = *decmeta;
    x->c->encmeta = true;
    return 0;
}

int pqc_read_chunk(pqc_file *f, const pqc_opts *o, int32_t rg, int32_t col, pq_err *err)
{
    pqc_column *c = &f->cols[col];
    const tr_node *rgn = pqf_row_group(&f->pf, (size_t)rg);
    const tr_node *cc = tr_list_at(tr_field_list(rgn, 1), (size_t)col);
    int32_t rg_ord = (int32_t)tr_field_int(rgn, 7, rg);
    if (rg_ord != rg)
        return pq_err_set(err, PQ_EPARSE, "row group %d has ordinal %d", rg, rg_ord);
    chunk_ctx x = { .f = f, .c = c, .rg = rg, .col = col, .skip_crc = o && o->skip_crc };
    tr_node *decmeta = NULL;
    pq_buf plain;
    pq_buf_init(&plain);
    pqt_bytes dict = { 0 };
    int rc = chunk_key(f, o, c, cc, &x.key, err);
    if (rc != 0 || c->skipped)
        goto out;
    x.md = tr_field_struct(cc, 3);
    size_t elen = 0;
    const uint8_t *enc = tr_field_bin(cc, 9, &elen);
    if (enc != NULL && x.key != NULL &&
        (rc = decrypt_column_meta(&x, cc, enc, elen, &plain, &decmeta, err)) != 0)
        goto out;
    if (x.md == NULL) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: no ColumnMetaData", rg, col);
        goto out;
    }
    if (tr_field_int(x.md, 1, -1) != c->type) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: ColumnMetaData type %lld, schema says %s",
                        rg, col, (long long)tr_field_int(x.md, 1, -1), pqf_type_name(c->type));
        goto out;
    }
    x.codec = (int)tr_field_int(x.md, 4, -1);
    x.num_values = tr_field_int(x.md, 5, -1);
    int64_t dpo = tr_field_int(x.md, 9, -1), dico = tr_field_int(x.md, 11, -1),
            tcs = tr_field_int(x.md, 7, -1);
    int64_t start = dico >= 0 ? dico : dpo;
    if (start < 4 || tcs < 0 || (uint64_t)start + (uint64_t)tcs > f->size) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: chunk [%lld, +%lld) outside the file", rg,
                        col, (long long)start, (long long)tcs);
        goto out;
    }
    x.start = (size_t)start;
    x.end = x.start + (size_t)tcs;
    size_t pos = x.start, levels_before = c->n_levels;
    int32_t ordinal = 0;
    int64_t rows = 0;
    c->rg_first_value[rg] = c->values.n;
    while (rc == 0 && pos < x.end)
        rc = pqc_read_page(&x, &pos, &ordinal, pos == x.start, &dict, &rows, err);
    if (rc != 0)
        goto out;
    if ((int64_t)(c->n_levels - levels_before) != x.num_values) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: pages hold %zu values, metadata says %lld",
                        rg, col, c->n_levels - levels_before, (long long)x.num_values);
        goto out;
    }
    if (rows != tr_field_int(rgn, 3, -1)) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: %lld rows, row group says %lld", rg, col,
                        (long long)rows, (long long)tr_field_int(rgn, 3, -1));
        goto out;
    }
    rc = pqc_check_offset_index(&x, err);
    if (rc == 0)
        rc = pqc_check_column_index(&x, err);
    if (rc == 0)
        rc = pqc_read_bloom(&x, err);
out:
    c->rg_first_value[rg + 1] = c->values.n;
    pqt_bytes_free(&dict);
    tr_free(decmeta);
    pq_buf_free(&plain);
    free(x.page_off);
    free(x.page_len);
    free(x.page_first_row);
    return rc;
}
