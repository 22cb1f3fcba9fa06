/* pqcrypt_keys.c - the decrypting reader's keys and module AADs
 * (Encryption.md 4.4): a key found by its key_metadata id, the AAD of a
 * module at its place in the file, and one GCM module decrypted and
 * listed. */
#include <string.h>


#include "pqcrypt_int.h"

const pq_crypto_key *pqc_find_key(const pqc_opts *o, const uint8_t *id, size_t len)
{
    for (size_t i = 0; o != NULL && i < o->n_keys; i++)
        if (id != NULL && strlen(o->keys[i].id) == len && memcmp(o->keys[i].id, id, len) == 0)
            return o->keys[i].key;
    return NULL;
}

/* Module AAD, built here rather than with the writer's
 * pq_crypto_module_aad so the two are checked against each other
 * (Encryption.md 4.4.2 table): file AAD || type || row group (LE16) ||
 * column (LE16) || page ordinal (LE16), the ordinals only for the types
 * that carry them. */
int pqc_module_aad(const pqc_file *f, pq_buf *aad, int type, int32_t rg, int32_t col,
                   int32_t page, pq_err *err)
{
    pq_buf_reset(aad);
    uint8_t suffix[7];
    size_t n = 0;
    suffix[n++] = (uint8_t)type;
    if (type != PQ_MODULE_FOOTER) {
        if (rg < 0 || rg > 32767 || col < 0 || col > 32767)
            return pq_err_set(err, PQ_EPARSE, "ordinals rg %d col %d do not fit an AAD", rg, col);
        suffix[n++] = (uint8_t)rg;
        suffix[n++] = (uint8_t)(rg >> 8);
        suffix[n++] = (uint8_t)col;
        suffix[n++] = (uint8_t)(col >> 8);
    }
    if (type == PQ_MODULE_DATA_PAGE || type == PQ_MODULE_DATA_PAGE_HEADER) {
        if (page < 0 || page > 32767)
            return pq_err_set(err, PQ_EPARSE, "page ordinal %d does not fit an AAD", page);
        suffix[n++] = (uint8_t)page;
        suffix[n++] = (uint8_t)(page >> 8);
    }
    if (pq_buf_append(aad, f->file_aad.data, f->file_aad.len) != 0 ||
        pq_buf_append(aad, suffix, n) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return 0;
}

/* Decrypts the GCM module at file offset off (limit: end of its region)
 * and records it. */
int pqc_gcm_at(pqc_file *f, const pq_crypto_key *key, int type, int32_t rg, int32_t col,
               int32_t page, size_t off, size_t limit, pq_buf *out, size_t *consumed,
               pq_err *err)
{
    pq_buf aad;
    pq_buf_init(&aad);
    size_t used = 0;
    int rc = PQ_EPARSE;
    if (off > limit || limit > f->size) {
        pq_err_set(err, PQ_EPARSE, "module at offset %zu outside the file", off);
    } else {
        rc = pqc_module_aad(f, &aad, type, rg, col, page, err);
        if (rc == 0)
            rc = pqt_decrypt_gcm_module(key, aad.data, aad.len, f->data + off, limit - off, out,
                                        &used, err);
    }
    pq_buf_free(&aad);
    if (rc != 0) {
        pqc_set_fail(f, type, rg, col, page, off, rc);
        return pq_err_prefix(err, rc, "rg %d col %d %s (page ordinal %d) at offset %zu", rg, col,
                       pqc_module_name(type), page, off);
    }
    if (consumed != NULL)
        *consumed = used;
    if (pqc_add_module(f, type, rg, col, page, off, used, true, false) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return 0;
}
