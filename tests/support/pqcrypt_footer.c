/* pqcrypt_footer.c - the footer (Encryption.md 5.3-5.5): a PARE file's
 * FileCryptoMetaData and encrypted FileMetaData, or a PAR1 footer and its
 * signature; the file AAD from the stored or supplied AAD prefix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "pqcrypt_int.h"

int pqc_read_whole(const char *path, uint8_t **out, size_t *n, pq_err *err)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return pq_err_set(err, PQ_EIO, "%s: cannot open", path);
    long len = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        len = ftell(fp);
    int rc = 0;
    if (len < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        rc = pq_err_set(err, PQ_EIO, "%s: cannot size", path);
    } else if ((*out = malloc(len > 0 ? (size_t)len : 1)) == NULL) {
        rc = pq_err_set(err, PQ_ENOMEM, "%s: out of memory", path);
    } else if (fread(*out, 1, (size_t)len, fp) != (size_t)len) {
        free(*out);
        *out = NULL;
        rc = pq_err_set(err, PQ_EIO, "%s: short read", path);
    } else {
        *n = (size_t)len;
    }
    fclose(fp);
    return rc;
}

static int set_file_aad(pqc_file *f, const pqt_crypto_meta *m, const pqc_opts *o, pq_err *err)
{
    f->algorithm = m->algorithm;
    f->aad_prefix_stored = m->aad_prefix != NULL;
    f->supply_aad_prefix = m->supply_aad_prefix;
    pq_buf_reset(&f->file_aad);
    int rc = pqt_file_aad(m, o ? o->aad_prefix : NULL, o ? o->aad_prefix_len : 0,
                          &f->file_aad, err);
    f->file_aad_ok = rc == 0;
    return rc;
}

/* Wraps the plaintext FileMetaData in PAR1 || footer || len || PAR1 so
 * pqfile parses, validates it and builds the schema leaves. */
static int open_footer(pqc_file *f, const uint8_t *footer, size_t n, pq_err *err)
{
    size_t total = n + 12;
    uint8_t *frame = malloc(total);
    if (frame == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    memcpy(frame, "PAR1", 4);
    memcpy(frame + 4, footer, n);
    frame[4 + n] = (uint8_t)n;
    frame[5 + n] = (uint8_t)(n >> 8);
    frame[6 + n] = (uint8_t)(n >> 16);
    frame[7 + n] = (uint8_t)(n >> 24);
    memcpy(frame + 8 + n, "PAR1", 4);
    int rc = pqf_open_mem(&f->pf, frame, total, f->name, err);
    free(frame);
    if (rc != 0) {
        pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, f->footer_offset, rc);
        return pq_err_prefix(err, rc, "FileMetaData");
    }
    if (f->pf.footer_consumed != n)
        f->padded_modules++;
    return 0;
}

/* PARE: FileCryptoMetaData then the footer module fill [start, size - 8). */
int pqc_open_encrypted_footer(pqc_file *f, const pqc_opts *o, size_t start, size_t len,
                              pq_err *err)
{
    pqt_crypto_meta m;
    size_t used = 0;
    int rc = pqt_parse_file_crypto_metadata(f->data + start, len, &m, &used, err);
    if (rc != 0) {
        pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc);
        return pq_err_prefix(err, rc, "FileCryptoMetaData at offset %zu", start);
    }
    f->encrypted_footer = true;
    const pq_crypto_key *key = o && o->footer_key ? o->footer_key
                                                  : pqc_find_key(o, m.key_metadata, m.key_metadata_len);
    if (key == NULL)
        pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, PQ_ECRYPTO);
    if (key == NULL)
        return pq_err_set(err, PQ_ECRYPTO, "encrypted footer: no footer key (key id '%.*s')",
                          (int)m.key_metadata_len, m.key_metadata ? (const char *)m.key_metadata : "");
    if ((rc = set_file_aad(f, &m, o, err)) != 0) {
        pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc);
        return rc;
    }
    pq_buf footer;
    pq_buf_init(&footer);
    size_t mod_used = 0;
    rc = pqc_gcm_at(f, key, PQ_MODULE_FOOTER, -1, -1, -1, start + used, start + len, &footer,
                &mod_used, err);
    if (rc == 0 && used + mod_used != len)
        rc = pq_err_set(err, PQ_EPARSE, "encrypted footer: %zu bytes after the footer module",
                        len - used - mod_used);
    if (rc == 0)
        rc = open_footer(f, footer.data, footer.len, err);
    pq_buf_free(&footer);
    return rc;
}

/* PAR1: FileMetaData, then (signed files) nonce || tag. */
int pqc_open_plain_footer(pqc_file *f, const pqc_opts *o, size_t start, size_t len,
                          pq_err *err)
{
    pqt_crypto_meta m;
    size_t used = 0;
    int rc = pqt_parse_footer_crypto(f->data + start, len, &m, &used, err);
    if (rc != 0) {
        pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc);
        return pq_err_prefix(err, rc, "FileMetaData at offset %zu", start);
    }
    if (m.algorithm == 0) {
        if (used != len) {
            pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, PQ_EPARSE);
            return pq_err_set(err, PQ_EPARSE, "footer: %zu bytes after FileMetaData (no "
                              "encryption_algorithm, so no signature expected)", len - used);
        }
        return open_footer(f, f->data + start, len, err);
    }
    f->signed_footer = true;
    if (len - used != PQ_CRYPTO_SIGNATURE_LEN) {
        pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, PQ_EPARSE);
        return pq_err_set(err, PQ_EPARSE, "signed footer: %zu bytes follow FileMetaData, want %d",
                          len - used, PQ_CRYPTO_SIGNATURE_LEN);
    }
    rc = set_file_aad(f, &m, o, err);
    const pq_crypto_key *key = o && o->footer_key ? o->footer_key
                                                  : pqc_find_key(o, m.key_metadata, m.key_metadata_len);
    if (o && o->skip_signature && rc == 0) {
        /* tamper tests: read on without checking the signature */
    } else if (key == NULL || rc != 0) {
        if (!(o && o->allow_missing_keys)) {
            pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc != 0 ? rc : PQ_ECRYPTO);
            return rc != 0 ? rc : pq_err_set(err, PQ_ECRYPTO,
                "plaintext footer: no footer signing key (key id '%.*s')",
                (int)m.key_metadata_len, m.key_metadata ? (const char *)m.key_metadata : "");
        }
    } else {
        pq_buf aad;
        pq_buf_init(&aad);
        rc = pqc_module_aad(f, &aad, PQ_MODULE_FOOTER, -1, -1, -1, err);
        if (rc == 0)
            rc = pqt_verify_footer_signature(key, aad.data, aad.len, f->data + start, used,
                                             f->data + start + used, err);
        pq_buf_free(&aad);
        if (rc != 0) {
            pqc_set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc);
            return pq_err_prefix(err, rc, "plaintext footer signature");
        }
        f->signature_verified = true;
        if (pqc_add_module(f, PQ_MODULE_FOOTER, -1, -1, -1, start, len, true, false) != 0)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    return open_footer(f, f->data + start, used, err);
}
