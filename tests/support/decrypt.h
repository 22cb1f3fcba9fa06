/* decrypt.h - test-only Parquet Modular Encryption reader side
 * (Encryption.md 4-5): GCM module decryption with tag check, CTR module
 * decryption, plaintext-footer signature verification, file AAD recovery,
 * and a tiny bounded Thrift parser for FileCryptoMetaData and for the
 * encryption fields of a plaintext FileMetaData.
 *
 * Independent of writer/crypto.c's encryption path (a fresh OpenSSL
 * context per call), so a round trip checks one against the other. Only
 * pq_crypto_key (bytes + name) and pq_crypto_module_aad are shared. */
#ifndef PQT_DECRYPT_H
#define PQT_DECRYPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "crypto.h"
#include "err.h"

/* Pointers refer into the parsed input; NULL/0 when a field is absent. */
typedef struct pqt_crypto_meta {
    int algorithm;                 /* PQ_AES_GCM_V1, PQ_AES_GCM_CTR_V1; 0 = none */
    const uint8_t *aad_prefix;
    size_t aad_prefix_len;
    const uint8_t *aad_file_unique;
    size_t aad_file_unique_len;
    bool supply_aad_prefix;
    const uint8_t *key_metadata;   /* FileCryptoMetaData 2 or FileMetaData 9 */
    size_t key_metadata_len;
} pqt_crypto_meta;

/* FileCryptoMetaData at p[0..n); *consumed = its length (the encrypted
 * footer module follows). PQ_EPARSE on malformed or truncated input. */
int pqt_parse_file_crypto_metadata(const uint8_t *p, size_t n, pqt_crypto_meta *m,
                                   size_t *consumed, pq_err *err);
/* A plaintext FileMetaData at p[0..n): fills m from fields 8
 * (encryption_algorithm) and 9 (footer_signing_key_metadata), skipping
 * everything else. m->algorithm == 0 when the footer has no field 8. */
int pqt_parse_footer_crypto(const uint8_t *p, size_t n, pqt_crypto_meta *m,
                            size_t *consumed, pq_err *err);

/* Appends the file AAD (aad_prefix || aad_file_unique): the stored prefix,
 * or `supplied` when the file says supply_aad_prefix. A supplied prefix
 * that differs from a stored one, or a missing one, is PQ_ECRYPTO. */
int pqt_file_aad(const pqt_crypto_meta *m, const void *supplied, size_t supplied_len,
                 pq_buf *out, pq_err *err);

/* module = length(LE32) || nonce || ciphertext || tag, at most n bytes
 * available. Appends the plaintext to out; *consumed = 4 + length.
 * PQ_EPARSE for a bad length, PQ_ECRYPTO when the tag does not verify
 * (wrong key, wrong AAD, or tampering). */
int pqt_decrypt_gcm_module(const pq_crypto_key *key, const void *aad, size_t aad_len,
                           const uint8_t *module, size_t n, pq_buf *out,
                           size_t *consumed, pq_err *err);
/* module = length(LE32) || nonce || ciphertext (AES_GCM_CTR_V1 pages).
 * Unauthenticated: a wrong key yields garbage, not an error. */
int pqt_decrypt_ctr_module(const pq_crypto_key *key, const uint8_t *module, size_t n,
                           pq_buf *out, size_t *consumed, pq_err *err);
/* Re-encrypts footer[0..n) with the signature's nonce and compares tags
 * in constant time. 0 or PQ_ECRYPTO. */
int pqt_verify_footer_signature(const pq_crypto_key *key, const void *aad, size_t aad_len,
                                const uint8_t *footer, size_t n,
                                const uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err);

#endif
