/* decrypt.c - test-only decryption for Parquet Modular Encryption
 * (Encryption.md 4-5): GCM/CTR module decryption, footer signature
 * verification, file AAD recovery, and a bounded Thrift compact-protocol
 * reader for just the crypto fields of FileCryptoMetaData / FileMetaData.
 * Every read is bounds-checked; hostile input gives PQ_EPARSE. */
#include "decrypt.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

/* ---- bounded Thrift compact reader --------------------------------------- */

#define CP_MAX_DEPTH 32

typedef struct cp_reader {
    const uint8_t *p;
    size_t n, pos;
    pq_err *err;
} cp_reader;

static int cp_fail(cp_reader *r, const char *what)
{
    return pq_err_set(r->err, PQ_EPARSE, "thrift: %s at byte %zu of %zu", what,
                      r->pos, r->n);
}

static int cp_byte(cp_reader *r, uint8_t *b)
{
    if (r->pos >= r->n)
        return cp_fail(r, "truncated input");
    *b = r->p[r->pos++];
    return 0;
}

static int cp_uvarint(cp_reader *r, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t b = 0;
        if (cp_byte(r, &b) != 0)
            return PQ_EPARSE;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0)
            return 0;
    }
    return cp_fail(r, "varint longer than 10 bytes");
}

static int cp_take(cp_reader *r, uint64_t len, const uint8_t **p)
{
    if (len > r->n - r->pos)
        return cp_fail(r, "length runs past the end");
    *p = r->p + r->pos;
    r->pos += (size_t)len;
    return 0;
}

static int cp_binary(cp_reader *r, const uint8_t **p, size_t *len)
{
    uint64_t n = 0;
    if (cp_uvarint(r, &n) != 0 || cp_take(r, n, p) != 0)
        return PQ_EPARSE;
    *len = (size_t)n;
    return 0;
}

static int cp_skip_struct(cp_reader *r, int depth);

/* Skips a list or set: the header holds the size (15 = varint follows)
 * and element type. Every element takes at least one byte, which bounds
 * the loop by the input left. */
static int cp_skip_list(cp_reader *r, int depth);

static int cp_skip(cp_reader *r, int type, bool in_list, int depth)
{
    uint64_t v = 0;
    const uint8_t *p;
    if (depth > CP_MAX_DEPTH)
        return cp_fail(r, "nesting too deep");
    switch (type) {
    case PQ_TT_BOOL_TRUE:
    case PQ_TT_BOOL_FALSE: /* a field's bool lives in its header */
        return in_list ? cp_take(r, 1, &p) : 0;
    case PQ_TT_BYTE: return cp_take(r, 1, &p);
    case PQ_TT_I16:
    case PQ_TT_I32:
    case PQ_TT_I64: return cp_uvarint(r, &v);
    case PQ_TT_DOUBLE: return cp_take(r, 8, &p);
    case PQ_TT_BINARY: return cp_uvarint(r, &v) != 0 ? PQ_EPARSE : cp_take(r, v, &p);
    case PQ_TT_LIST:
    case PQ_TT_SET: return cp_skip_list(r, depth);
    case PQ_TT_STRUCT: return cp_skip_struct(r, depth + 1);
    case PQ_TT_MAP: {
        uint8_t kv = 0;
        if (cp_uvarint(r, &v) != 0 || (v > 0 && cp_byte(r, &kv) != 0))
            return PQ_EPARSE;
        if (v > r->n - r->pos)
            return cp_fail(r, "map size exceeds the input");
        for (uint64_t i = 0; i < v; i++)
            if (cp_skip(r, kv >> 4, true, depth + 1) != 0 ||
                cp_skip(r, kv & 0x0f, true, depth + 1) != 0)
                return PQ_EPARSE;
        return 0;
    }
    default: return cp_fail(r, "unknown element type");
    }
}

static int cp_skip_list(cp_reader *r, int depth)
{
    uint8_t h = 0;
    if (cp_byte(r, &h) != 0)
        return PQ_EPARSE;
    uint64_t size = h >> 4;
    if (size == 15 && cp_uvarint(r, &size) != 0)
        return PQ_EPARSE;
    if (size > r->n - r->pos)
        return cp_fail(r, "list size exceeds the input");
    for (uint64_t i = 0; i < size; i++)
        if (cp_skip(r, h & 0x0f, true, depth + 1) != 0)
            return PQ_EPARSE;
    return 0;
}

/* Reads one field header; *type = 0 at the struct's stop byte. */
static int cp_field(cp_reader *r, int16_t *last, int *type, int16_t *fid)
{
    uint8_t h = 0;
    if (cp_byte(r, &h) != 0)
        return PQ_EPARSE;
    *type = h & 0x0f;
    if (h == 0)
        return 0;
    if ((h >> 4) != 0) {
        *fid = (int16_t)(*last + (h >> 4));
    } else {
        uint64_t z = 0;
        if (cp_uvarint(r, &z) != 0)
            return PQ_EPARSE;
        *fid = (int16_t)((z >> 1) ^ (~(z & 1) + 1)); /* zigzag */
    }
    *last = *fid;
    return 0;
}

static int cp_skip_struct(cp_reader *r, int depth)
{
    int16_t last = 0, fid = 0;
    int type = 0;
    for (;;) {
        if (cp_field(r, &last, &type, &fid) != 0)
            return PQ_EPARSE;
        if (type == 0)
            return 0;
        if (cp_skip(r, type, false, depth) != 0)
            return PQ_EPARSE;
    }
}

/* ---- crypto structs ------------------------------------------------------ */

/* AesGcmV1 / AesGcmCtrV1 { 1: aad_prefix, 2: aad_file_unique,
 * 3: supply_aad_prefix }. */
static int cp_aes_member(cp_reader *r, pqt_crypto_meta *m)
{
    int16_t last = 0, fid = 0;
    int type = 0;
    for (;;) {
        if (cp_field(r, &last, &type, &fid) != 0)
            return PQ_EPARSE;
        if (type == 0)
            return 0;
        int rc = 0;
        bool is_bool = type == PQ_TT_BOOL_TRUE || type == PQ_TT_BOOL_FALSE;
        if (fid == 1 && type == PQ_TT_BINARY)
            rc = cp_binary(r, &m->aad_prefix, &m->aad_prefix_len);
        else if (fid == 2 && type == PQ_TT_BINARY)
            rc = cp_binary(r, &m->aad_file_unique, &m->aad_file_unique_len);
        else if (fid == 3 && is_bool)
            m->supply_aad_prefix = type == PQ_TT_BOOL_TRUE; /* value in the header */
        else if (fid >= 1 && fid <= 3)
            rc = cp_fail(r, "AesGcm field has the wrong type");
        else
            rc = cp_skip(r, type, false, 1);
        if (rc != 0)
            return PQ_EPARSE;
    }
}

/* union EncryptionAlgorithm { 1: AesGcmV1, 2: AesGcmCtrV1 } */
static int cp_algorithm(cp_reader *r, pqt_crypto_meta *m)
{
    int16_t last = 0, fid = 0;
    int type = 0;
    for (;;) {
        if (cp_field(r, &last, &type, &fid) != 0)
            return PQ_EPARSE;
        if (type == 0)
            break;
        if ((fid == 1 || fid == 2) && type == PQ_TT_STRUCT) {
            m->algorithm = fid;
            if (cp_aes_member(r, m) != 0)
                return PQ_EPARSE;
        } else if (cp_skip(r, type, false, 1) != 0) {
            return PQ_EPARSE;
        }
    }
    return m->algorithm != 0 ? 0 : cp_fail(r, "EncryptionAlgorithm names no known algorithm");
}

/* Parses a struct whose field alg_fid is an EncryptionAlgorithm and whose
 * field km_fid is key metadata; skips the rest. */
static int cp_crypto_struct(const uint8_t *p, size_t n, int16_t alg_fid, int16_t km_fid,
                            pqt_crypto_meta *m, size_t *consumed, pq_err *err)
{
    cp_reader r = { p, n, 0, err };
    memset(m, 0, sizeof *m);
    int16_t last = 0, fid = 0;
    int type = 0;
    for (;;) {
        if (cp_field(&r, &last, &type, &fid) != 0)
            return PQ_EPARSE;
        if (type == 0)
            break;
        int rc;
        if (fid == alg_fid && type == PQ_TT_STRUCT)
            rc = cp_algorithm(&r, m);
        else if (fid == km_fid && type == PQ_TT_BINARY)
            rc = cp_binary(&r, &m->key_metadata, &m->key_metadata_len);
        else
            rc = cp_skip(&r, type, false, 1);
        if (rc != 0)
            return PQ_EPARSE;
    }
    if (consumed != NULL)
        *consumed = r.pos;
    return 0;
}

int pqt_parse_file_crypto_metadata(const uint8_t *p, size_t n, pqt_crypto_meta *m,
                                   size_t *consumed, pq_err *err)
{
    int rc = cp_crypto_struct(p, n, 1, 2, m, consumed, err);
    if (rc == 0 && m->algorithm == 0)
        return pq_err_set(err, PQ_EPARSE,
                          "FileCryptoMetaData: required encryption_algorithm missing");
    return rc;
}

int pqt_parse_footer_crypto(const uint8_t *p, size_t n, pqt_crypto_meta *m,
                            size_t *consumed, pq_err *err)
{
    return cp_crypto_struct(p, n, 8, 9, m, consumed, err);
}

int pqt_file_aad(const pqt_crypto_meta *m, const void *supplied, size_t supplied_len,
                 pq_buf *out, pq_err *err)
{
    const void *prefix = m->aad_prefix;
    size_t prefix_len = m->aad_prefix_len;
    if (m->aad_prefix != NULL && supplied != NULL &&
        (supplied_len != prefix_len || memcmp(supplied, prefix, prefix_len) != 0))
        return pq_err_set(err, PQ_ECRYPTO, "supplied AAD prefix differs from the stored one");
    if (m->aad_prefix == NULL && m->supply_aad_prefix) {
        if (supplied == NULL)
            return pq_err_set(err, PQ_ECRYPTO,
                              "file requires an AAD prefix (supply_aad_prefix) and none was given");
        prefix = supplied;
        prefix_len = supplied_len;
    } else if (m->aad_prefix == NULL && supplied != NULL) {
        return pq_err_set(err, PQ_ECRYPTO, "AAD prefix given but the file was written without one");
    }
    if (pq_buf_append(out, prefix, prefix_len) != 0 ||
        pq_buf_append(out, m->aad_file_unique, m->aad_file_unique_len) != 0)
        return pq_err_set(err, PQ_ENOMEM, "file AAD: out of memory");
    return 0;
}

/* ---- decryption ---------------------------------------------------------- */

static const EVP_CIPHER *dec_cipher(size_t len, bool ctr)
{
    switch (len) {
    case 16: return ctr ? EVP_aes_128_ctr() : EVP_aes_128_gcm();
    case 24: return ctr ? EVP_aes_192_ctr() : EVP_aes_192_gcm();
    case 32: return ctr ? EVP_aes_256_ctr() : EVP_aes_256_gcm();
    default: return NULL;
    }
}

/* Validates length(LE32) against what is available and the minimum body. */
static int dec_frame(const uint8_t *module, size_t n, size_t min_body, uint32_t *len,
                     pq_err *err)
{
    if (n < PQ_CRYPTO_LEN_LEN)
        return pq_err_set(err, PQ_EPARSE, "encrypted module: %zu bytes, no room for a length", n);
    *len = (uint32_t)module[0] | (uint32_t)module[1] << 8 | (uint32_t)module[2] << 16 |
           (uint32_t)module[3] << 24;
    if (*len < min_body || *len > n - PQ_CRYPTO_LEN_LEN)
        return pq_err_set(err, PQ_EPARSE,
                          "encrypted module: length %u outside %zu..%zu", *len, min_body,
                          n - PQ_CRYPTO_LEN_LEN);
    return 0;
}

static bool dec_gcm_run(EVP_CIPHER_CTX *ctx, const pq_crypto_key *key, const uint8_t *nonce,
                       const void *aad, size_t aad_len, const uint8_t *ct, size_t ct_len,
                       const uint8_t *tag, uint8_t *pt)
{
    int len;
    uint8_t fin[16];
    return EVP_DecryptInit_ex(ctx, dec_cipher(key->len, false), NULL, key->bytes, nonce) == 1 &&
           (aad_len == 0 || EVP_DecryptUpdate(ctx, NULL, &len, aad, (int)aad_len) == 1) &&
           (ct_len == 0 || EVP_DecryptUpdate(ctx, pt, &len, ct, (int)ct_len) == 1) &&
           EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, PQ_CRYPTO_TAG_LEN, (void *)tag) == 1 &&
           EVP_DecryptFinal_ex(ctx, fin, &len) == 1;
}

int pqt_decrypt_gcm_module(const pq_crypto_key *key, const void *aad, size_t aad_len,
                           const uint8_t *module, size_t n, pq_buf *out,
                           size_t *consumed, pq_err *err)
{
    uint32_t len = 0;
    int rc = dec_frame(module, n, PQ_CRYPTO_NONCE_LEN + PQ_CRYPTO_TAG_LEN, &len, err);
    if (rc != 0)
        return rc;
    if (dec_cipher(key->len, false) == NULL)
        return pq_err_set(err, PQ_EINVAL, "key %s: not an AES key", key->name);
    const uint8_t *nonce = module + PQ_CRYPTO_LEN_LEN, *ct = nonce + PQ_CRYPTO_NONCE_LEN;
    size_t ct_len = len - PQ_CRYPTO_NONCE_LEN - PQ_CRYPTO_TAG_LEN;
    if (pq_buf_reserve(out, ct_len + 1) != 0)
        return pq_err_set(err, PQ_ENOMEM, "decrypt: out of memory");
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    bool ok = ctx != NULL && dec_gcm_run(ctx, key, nonce, aad, aad_len, ct, ct_len,
                                         ct + ct_len, out->data + out->len);
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) { /* unauthenticated plaintext must not be used: wipe it */
        OPENSSL_cleanse(out->data + out->len, ct_len);
        return pq_err_set(err, PQ_ECRYPTO,
                          "key %s: GCM tag mismatch (wrong key, wrong AAD or tampered module)",
                          key->name);
    }
    out->len += ct_len;
    if (consumed != NULL)
        *consumed = PQ_CRYPTO_LEN_LEN + (size_t)len;
    return 0;
}

int pqt_decrypt_ctr_module(const pq_crypto_key *key, const uint8_t *module, size_t n,
                           pq_buf *out, size_t *consumed, pq_err *err)
{
    uint32_t len = 0;
    int rc = dec_frame(module, n, PQ_CRYPTO_NONCE_LEN, &len, err);
    if (rc != 0)
        return rc;
    const EVP_CIPHER *cipher = dec_cipher(key->len, true);
    if (cipher == NULL)
        return pq_err_set(err, PQ_EINVAL, "key %s: not an AES key", key->name);
    uint8_t iv[16] = { 0 };
    memcpy(iv, module + PQ_CRYPTO_LEN_LEN, PQ_CRYPTO_NONCE_LEN);
    iv[15] = 1; /* Encryption.md 4.2.2: counter field starts at 1 */
    const uint8_t *ct = module + PQ_CRYPTO_LEN_LEN + PQ_CRYPTO_NONCE_LEN;
    size_t ct_len = len - PQ_CRYPTO_NONCE_LEN;
    if (pq_buf_reserve(out, ct_len + 16) != 0)
        return pq_err_set(err, PQ_ENOMEM, "decrypt: out of memory");
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int l1 = 0, l2 = 0;
    bool ok = ctx != NULL && EVP_DecryptInit_ex(ctx, cipher, NULL, key->bytes, iv) == 1 &&
              (ct_len == 0 || EVP_DecryptUpdate(ctx, out->data + out->len, &l1, ct,
                                                (int)ct_len) == 1) &&
              EVP_DecryptFinal_ex(ctx, out->data + out->len + l1, &l2) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok)
        return pq_err_set(err, PQ_ECRYPTO, "key %s: AES-CTR decryption failed", key->name);
    out->len += (size_t)l1 + (size_t)l2;
    if (consumed != NULL)
        *consumed = PQ_CRYPTO_LEN_LEN + (size_t)len;
    return 0;
}

/* GCM over the footer with the signature's nonce; only the tag matters,
 * the ciphertext goes through a small buffer. */
static bool dec_footer_tag(EVP_CIPHER_CTX *ctx, const pq_crypto_key *key, const uint8_t *nonce,
                           const void *aad, size_t aad_len, const uint8_t *footer, size_t n,
                           uint8_t tag[PQ_CRYPTO_TAG_LEN])
{
    uint8_t sink[4096];
    int len;
    if (EVP_EncryptInit_ex(ctx, dec_cipher(key->len, false), NULL, key->bytes, nonce) != 1 ||
        (aad_len > 0 && EVP_EncryptUpdate(ctx, NULL, &len, aad, (int)aad_len) != 1))
        return false;
    for (size_t off = 0; off < n;) {
        size_t chunk = n - off < sizeof sink ? n - off : sizeof sink;
        if (EVP_EncryptUpdate(ctx, sink, &len, footer + off, (int)chunk) != 1)
            return false;
        off += chunk;
    }
    return EVP_EncryptFinal_ex(ctx, sink, &len) == 1 &&
           EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, PQ_CRYPTO_TAG_LEN, tag) == 1;
}

int pqt_verify_footer_signature(const pq_crypto_key *key, const void *aad, size_t aad_len,
                                const uint8_t *footer, size_t n,
                                const uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err)
{
    if (dec_cipher(key->len, false) == NULL)
        return pq_err_set(err, PQ_EINVAL, "key %s: not an AES key", key->name);
    if (n > INT32_MAX || aad_len > INT32_MAX)
        return pq_err_set(err, PQ_ELIMIT, "footer of %zu bytes is too large", n);
    uint8_t tag[PQ_CRYPTO_TAG_LEN];
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    bool ok = ctx != NULL && dec_footer_tag(ctx, key, sig, aad, aad_len, footer, n, tag);
    EVP_CIPHER_CTX_free(ctx);
    if (!ok)
        return pq_err_set(err, PQ_ECRYPTO, "key %s: footer signature computation failed",
                          key->name);
    if (CRYPTO_memcmp(tag, sig + PQ_CRYPTO_NONCE_LEN, PQ_CRYPTO_TAG_LEN) != 0)
        return pq_err_set(err, PQ_ECRYPTO,
                          "key %s: footer signature mismatch (wrong key, wrong AAD or "
                          "tampered footer)", key->name);
    return 0;
}
