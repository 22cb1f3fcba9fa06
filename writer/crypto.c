/* crypto.c - Parquet Modular Encryption primitives (Encryption.md 4-5):
 * AES keys with a per-key invocation counter, module AADs, AES-GCM and
 * AES-CTR module serialization, plaintext-footer signing, and the
 * EncryptionAlgorithm / FileCryptoMetaData / ColumnCryptoMetaData structs.
 * All cryptography is OpenSSL EVP; nonces come from RAND_bytes. */
#include "crypto.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

/* Records an OpenSSL failure with OpenSSL's reason, and clears its error
 * queue so a later, unrelated failure does not report a stale reason. */
static int crypto_fail(pq_err *err, const pq_crypto_key *k, const char *what)
{
    char reason[160] = "no OpenSSL reason";
    unsigned long e = ERR_get_error();
    if (e != 0)
        ERR_error_string_n(e, reason, sizeof reason);
    ERR_clear_error();
    return pq_err_set(err, PQ_ECRYPTO, "key %s: %s failed (%s)",
                      k ? k->name : "-", what, reason);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- keys ---------------------------------------------------------------- */

int pq_crypto_key_init(pq_crypto_key *k, const void *bytes, size_t len,
                       const char *name, pq_err *err)
{
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name ? name : "(unnamed)");
    if (bytes == NULL || (len != 16 && len != 24 && len != 32))
        return pq_err_set(err, PQ_EINVAL,
                          "key %s: %zu bytes; AES keys are 16, 24 or 32 bytes",
                          k->name, len);
    memcpy(k->bytes, bytes, len);
    k->len = len;
    k->max_uses = PQ_CRYPTO_MAX_INVOCATIONS;
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Messages give lengths and positions only: a typo'd key file must not end
 * up in a log with most of the key in it. */
static int key_parse_hex(pq_crypto_key *k, const char *text, size_t n, bool more,
                         const char *path, pq_err *err)
{
    size_t digits = n;
    if (digits > 0 && text[digits - 1] == '\n')
        digits--;
    if (digits > 0 && text[digits - 1] == '\r')
        digits--;
    if (more || (digits != 32 && digits != 48 && digits != 64))
        return pq_err_set(err, PQ_EINVAL,
                          "key file %s: expected 32, 48 or 64 hex digits (AES-128/192/256) "
                          "and an optional newline, found %s%zu characters",
                          path, more ? "more than " : "", n);
    uint8_t bytes[32];
    for (size_t i = 0; i < digits; i += 2) {
        int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
        if (hi < 0 || lo < 0) {
            OPENSSL_cleanse(bytes, sizeof bytes);
            return pq_err_set(err, PQ_EINVAL,
                              "key file %s: character %zu is not a hexadecimal digit",
                              path, i + (hi < 0 ? 1 : 2));
        }
        bytes[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    int rc = pq_crypto_key_init(k, bytes, digits / 2, path, err);
    OPENSSL_cleanse(bytes, sizeof bytes);
    return rc;
}

int pq_crypto_key_load_hex(pq_crypto_key *k, const char *path, pq_err *err)
{
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", path);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return pq_err_set(err, PQ_EIO, "key file %s: cannot open: %s", path,
                          strerror(errno));
    char text[67]; /* 64 digits + CRLF; one more byte means "too long" */
    size_t n = fread(text, 1, sizeof text - 1, f);
    char extra;
    bool more = n == sizeof text - 1 && fread(&extra, 1, 1, f) == 1;
    int failed = ferror(f);
    fclose(f);
    int rc = failed ? pq_err_set(err, PQ_EIO, "key file %s: read error", path)
                    : key_parse_hex(k, text, n, more, path, err);
    OPENSSL_cleanse(text, sizeof text);
    OPENSSL_cleanse(&extra, sizeof extra);
    return rc;
}

void pq_crypto_key_free(pq_crypto_key *k)
{
    OPENSSL_cleanse(k->bytes, sizeof k->bytes);
    EVP_CIPHER_CTX_free(k->gcm); /* frees and wipes the key schedule */
    EVP_CIPHER_CTX_free(k->ctr);
    k->gcm = k->ctr = NULL;
    k->len = 0;
    k->uses = 0;
    k->max_uses = 0;
}

void pq_crypto_key_set_limit(pq_crypto_key *k, uint64_t max_uses)
{
    k->max_uses = max_uses < PQ_CRYPTO_MAX_INVOCATIONS ? max_uses
                                                       : PQ_CRYPTO_MAX_INVOCATIONS;
}

/* Counts one cipher invocation before it happens: a nonce is spent even if
 * OpenSSL then fails. */
static int key_spend(pq_crypto_key *k, pq_err *err)
{
    if (k->len == 0)
        return pq_err_set(err, PQ_ESTATE, "key %s: not initialized", k->name);
    if (k->uses >= k->max_uses)
        return pq_err_set(err, PQ_ELIMIT,
                          "key %s: already used for %llu encryptions, the limit for "
                          "one key (NIST SP 800-38D, Encryption.md 4.1.4); write "
                          "further data to a new file with a new key",
                          k->name, (unsigned long long)k->uses);
    k->uses++;
    return 0;
}

static const EVP_CIPHER *key_cipher(size_t len, bool ctr)
{
    switch (len) {
    case 16: return ctr ? EVP_aes_128_ctr() : EVP_aes_128_gcm();
    case 24: return ctr ? EVP_aes_192_ctr() : EVP_aes_192_gcm();
    default: return ctr ? EVP_aes_256_ctr() : EVP_aes_256_gcm();
    }
}

/* The key schedule is set up once per key and mode; each module then only
 * sets a new IV, which for small modules (page headers) is most of the
 * cost saved. */
static EVP_CIPHER_CTX *key_ctx(pq_crypto_key *k, bool ctr, pq_err *err)
{
    EVP_CIPHER_CTX **slot = ctr ? &k->ctr : &k->gcm;
    if (*slot != NULL)
        return *slot;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL ||
        EVP_EncryptInit_ex(ctx, key_cipher(k->len, ctr), NULL, k->bytes, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        crypto_fail(err, k, ctr ? "AES-CTR setup" : "AES-GCM setup");
        return NULL;
    }
    *slot = ctx;
    return ctx;
}

/* ---- module AAD ---------------------------------------------------------- */

static int aad_check_ordinal(int32_t v, const char *what, const char *advice,
                             pq_err *err)
{
    if (v < 0)
        return pq_err_set(err, PQ_EINVAL, "encryption AAD: %s ordinal %d is negative",
                          what, (int)v);
    if (v > PQ_CRYPTO_MAX_ORDINAL)
        return pq_err_set(err, PQ_ELIMIT,
                          "encryption AAD: %s ordinal %d exceeds %d, the largest a "
                          "2-byte AAD ordinal holds (Encryption.md 4.4.2); %s",
                          what, (int)v, PQ_CRYPTO_MAX_ORDINAL, advice);
    return 0;
}

static void aad_put_ordinal(uint8_t *p, int32_t v)
{
    p[0] = (uint8_t)(v & 0xff);
    p[1] = (uint8_t)((v >> 8) & 0xff);
}

int pq_crypto_module_aad(pq_buf *out, const void *file_aad, size_t file_aad_len,
                         pq_crypto_module type, int32_t row_group, int32_t column,
                         int32_t page, pq_err *err)
{
    if ((int)type < PQ_MODULE_FOOTER || (int)type > PQ_MODULE_BLOOM_BITSET)
        return pq_err_set(err, PQ_EINVAL, "encryption AAD: unknown module type %d",
                          (int)type);
    /* 4.4.2 table: all but the footer carry row group and column; only
     * data pages and their headers carry a page ordinal. */
    bool rg_col = type != PQ_MODULE_FOOTER;
    bool has_page = type == PQ_MODULE_DATA_PAGE || type == PQ_MODULE_DATA_PAGE_HEADER;
    int rc = 0;
    if (rg_col && (rc = aad_check_ordinal(row_group, "row group",
                                          "start a new file", err)) != 0)
        return rc;
    if (rg_col && (rc = aad_check_ordinal(column, "column",
                                          "encrypt fewer columns per file", err)) != 0)
        return rc;
    if (has_page && (rc = aad_check_ordinal(page, "page",
                                            "start a new row group", err)) != 0)
        return rc;
    uint8_t suffix[7];
    size_t n = 0;
    suffix[n++] = (uint8_t)type;
    if (rg_col) {
        aad_put_ordinal(suffix + n, row_group);
        aad_put_ordinal(suffix + n + 2, column);
        n += 4;
    }
    if (has_page) {
        aad_put_ordinal(suffix + n, page);
        n += 2;
    }
    if (pq_buf_append(out, file_aad, file_aad_len) != 0 || pq_buf_append(out, suffix, n) != 0)
        return pq_err_set(err, PQ_ENOMEM, "encryption AAD: out of memory");
    return 0;
}

/* ---- GCM and CTR ----------------------------------------------------------- */

/* Runs one GCM encryption. ct == NULL discards the ciphertext (footer
 * signing): it goes through a small stack buffer instead of a copy of the
 * whole footer. */
static int gcm_run(pq_crypto_key *k, EVP_CIPHER_CTX *ctx, const uint8_t *nonce,
                   const void *aad, size_t aad_len, const uint8_t *pt, size_t n,
                   uint8_t *ct, uint8_t *tag, pq_err *err)
{
    uint8_t sink[4096];
    int len;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1)
        return crypto_fail(err, k, "AES-GCM nonce setup");
    if (aad_len > 0 && EVP_EncryptUpdate(ctx, NULL, &len, aad, (int)aad_len) != 1)
        return crypto_fail(err, k, "AES-GCM AAD");
    for (size_t off = 0; off < n;) {
        size_t chunk = ct ? n : (n - off < sizeof sink ? n - off : sizeof sink);
        if (EVP_EncryptUpdate(ctx, ct ? ct + off : sink, &len, pt + off, (int)chunk) != 1)
            return crypto_fail(err, k, "AES-GCM encryption");
        off += chunk;
    }
    OPENSSL_cleanse(sink, sizeof sink);
    if (EVP_EncryptFinal_ex(ctx, sink, &len) != 1 || /* GCM: writes nothing */
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, PQ_CRYPTO_TAG_LEN, tag) != 1)
        return crypto_fail(err, k, "AES-GCM tag");
    return 0;
}

/* The module length is a 4-byte field that readers treat as a signed int;
 * EVP also takes int lengths. */
static int module_check(const pq_crypto_key *k, size_t n, size_t aad_len,
                        size_t overhead, pq_err *err)
{
    size_t body_max = (size_t)INT32_MAX - (overhead - PQ_CRYPTO_LEN_LEN);
    if (n > body_max || aad_len > (size_t)INT_MAX)
        return pq_err_set(err, PQ_ELIMIT,
                          "key %s: module of %zu bytes (AAD %zu) exceeds the %zu-byte "
                          "limit of an encrypted module's 4-byte length",
                          k->name, n, aad_len, body_max);
    return 0;
}

int pq_crypto_gcm_encrypt(pq_crypto_key *key, const void *aad, size_t aad_len,
                          const void *pt, size_t n, pq_buf *out, pq_err *err)
{
    int rc = module_check(key, n, aad_len, PQ_CRYPTO_GCM_OVERHEAD, err);
    if (rc != 0 || (rc = key_spend(key, err)) != 0)
        return rc;
    EVP_CIPHER_CTX *ctx = key_ctx(key, false, err);
    if (ctx == NULL)
        return PQ_ECRYPTO;
    if (pq_buf_reserve(out, n + PQ_CRYPTO_GCM_OVERHEAD) != 0)
        return pq_err_set(err, PQ_ENOMEM, "key %s: no memory for a %zu-byte module",
                          key->name, n);
    uint8_t *p = out->data + out->len;
    uint8_t *nonce = p + PQ_CRYPTO_LEN_LEN, *ct = nonce + PQ_CRYPTO_NONCE_LEN;
    put_le32(p, (uint32_t)(n + PQ_CRYPTO_NONCE_LEN + PQ_CRYPTO_TAG_LEN));
    if (RAND_bytes(nonce, PQ_CRYPTO_NONCE_LEN) != 1)
        return crypto_fail(err, key, "nonce generation (RAND_bytes)");
    rc = gcm_run(key, ctx, nonce, aad, aad_len, pt, n, ct, ct + n, err);
    if (rc != 0)
        return rc;
    out->len += n + PQ_CRYPTO_GCM_OVERHEAD;
    return 0;
}

int pq_crypto_ctr_encrypt(pq_crypto_key *key, const void *pt, size_t n,
                          pq_buf *out, pq_err *err)
{
    int rc = module_check(key, n, 0, PQ_CRYPTO_CTR_OVERHEAD, err);
    if (rc != 0 || (rc = key_spend(key, err)) != 0)
        return rc;
    EVP_CIPHER_CTX *ctx = key_ctx(key, true, err);
    if (ctx == NULL)
        return PQ_ECRYPTO;
    if (pq_buf_reserve(out, n + PQ_CRYPTO_CTR_OVERHEAD) != 0)
        return pq_err_set(err, PQ_ENOMEM, "key %s: no memory for a %zu-byte module",
                          key->name, n);
    uint8_t *p = out->data + out->len;
    uint8_t *nonce = p + PQ_CRYPTO_LEN_LEN, *ct = nonce + PQ_CRYPTO_NONCE_LEN;
    put_le32(p, (uint32_t)(n + PQ_CRYPTO_NONCE_LEN));
    if (RAND_bytes(nonce, PQ_CRYPTO_NONCE_LEN) != 1)
        return crypto_fail(err, key, "nonce generation (RAND_bytes)");
    /* 4.2.2: IV = nonce || 31 zero bits || a one bit (big-endian counter 1) */
    uint8_t iv[16] = { 0 };
    memcpy(iv, nonce, PQ_CRYPTO_NONCE_LEN);
    iv[15] = 1;
    int len;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv) != 1 ||
        (n > 0 && EVP_EncryptUpdate(ctx, ct, &len, pt, (int)n) != 1) ||
        EVP_EncryptFinal_ex(ctx, ct + n, &len) != 1)
        return crypto_fail(err, key, "AES-CTR encryption");
    out->len += n + PQ_CRYPTO_CTR_OVERHEAD;
    return 0;
}

int pq_crypto_gcm_sign(pq_crypto_key *key, const void *aad, size_t aad_len,
                       const void *msg, size_t n,
                       uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err)
{
    int rc = module_check(key, n, aad_len, PQ_CRYPTO_GCM_OVERHEAD, err);
    if (rc != 0 || (rc = key_spend(key, err)) != 0)
        return rc;
    EVP_CIPHER_CTX *ctx = key_ctx(key, false, err);
    if (ctx == NULL)
        return PQ_ECRYPTO;
    if (RAND_bytes(sig, PQ_CRYPTO_NONCE_LEN) != 1)
        return crypto_fail(err, key, "nonce generation (RAND_bytes)");
    return gcm_run(key, ctx, sig, aad, aad_len, msg, n, NULL,
                   sig + PQ_CRYPTO_NONCE_LEN, err);
}

/* ---- per-file state ------------------------------------------------------ */

int pq_crypto_file_init(pq_crypto_file *f, pq_crypto_algorithm alg,
                        const void *aad_prefix, size_t prefix_len,
                        bool store_prefix, pq_err *err)
{
    memset(f, 0, sizeof *f);
    pq_buf_init(&f->file_aad);
    pq_buf_init(&f->scratch);
    if (alg != PQ_AES_GCM_V1 && alg != PQ_AES_GCM_CTR_V1)
        return pq_err_set(err, PQ_EINVAL, "encryption: unknown algorithm %d", (int)alg);
    if (aad_prefix == NULL && prefix_len > 0)
        return pq_err_set(err, PQ_EINVAL, "encryption: AAD prefix length %zu without bytes",
                          prefix_len);
    f->algorithm = alg;
    f->prefix_len = prefix_len;
    f->store_prefix = store_prefix;
    if (RAND_bytes(f->file_unique, sizeof f->file_unique) != 1)
        return crypto_fail(err, NULL, "aad_file_unique generation (RAND_bytes)");
    if (pq_buf_append(&f->file_aad, aad_prefix, prefix_len) != 0 ||
        pq_buf_append(&f->file_aad, f->file_unique, sizeof f->file_unique) != 0) {
        pq_buf_free(&f->file_aad);
        return pq_err_set(err, PQ_ENOMEM, "encryption: out of memory");
    }
    return 0;
}

void pq_crypto_file_free(pq_crypto_file *f)
{
    /* an unstored prefix is meant to stay out of the file; keep it out of
     * freed memory too */
    if (f->file_aad.data != NULL)
        OPENSSL_cleanse(f->file_aad.data, f->file_aad.cap);
    pq_buf_free(&f->file_aad);
    pq_buf_free(&f->scratch);
}

int pq_crypto_encrypt_module(pq_crypto_file *f, pq_crypto_key *key,
                             pq_crypto_module type, int32_t row_group,
                             int32_t column, int32_t page, const void *pt,
                             size_t n, pq_buf *out, pq_err *err)
{
    /* The AAD is built for CTR pages too: it validates the ordinals, so
     * both algorithms refuse the same files. */
    pq_buf_reset(&f->scratch);
    int rc = pq_crypto_module_aad(&f->scratch, f->file_aad.data, f->file_aad.len,
                                  type, row_group, column, page, err);
    if (rc != 0)
        return rc;
    bool page_data = type == PQ_MODULE_DATA_PAGE || type == PQ_MODULE_DICT_PAGE;
    if (f->algorithm == PQ_AES_GCM_CTR_V1 && page_data)
        return pq_crypto_ctr_encrypt(key, pt, n, out, err);
    return pq_crypto_gcm_encrypt(key, f->scratch.data, f->scratch.len, pt, n, out, err);
}

int pq_crypto_sign_footer(pq_crypto_file *f, pq_crypto_key *key,
                          const void *footer, size_t n,
                          uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err)
{
    pq_buf_reset(&f->scratch);
    int rc = pq_crypto_module_aad(&f->scratch, f->file_aad.data, f->file_aad.len,
                                  PQ_MODULE_FOOTER, 0, 0, 0, err);
    if (rc != 0)
        return rc;
    return pq_crypto_gcm_sign(key, f->scratch.data, f->scratch.len, footer, n, sig, err);
}

/* ---- Thrift structs ------------------------------------------------------ */

/* The union member AesGcmV1 / AesGcmCtrV1 (same fields, 5.2). */
static void algorithm_member(const pq_crypto_file *f, pq_thrift *t)
{
    pq_thrift_field_struct_begin(t, (int16_t)f->algorithm);
    if (f->prefix_len > 0 && f->store_prefix)
        pq_thrift_field_binary(t, 1, f->file_aad.data, f->prefix_len);
    pq_thrift_field_binary(t, 2, f->file_unique, sizeof f->file_unique);
    if (f->prefix_len > 0 && !f->store_prefix)
        pq_thrift_field_bool(t, 3, true); /* supply_aad_prefix */
    pq_thrift_struct_end(t);
}

void pq_crypto_thrift_algorithm(const pq_crypto_file *f, pq_thrift *t, int16_t fid)
{
    pq_thrift_field_struct_begin(t, fid);
    algorithm_member(f, t);
    pq_thrift_struct_end(t);
}

int pq_crypto_write_algorithm(const pq_crypto_file *f, pq_buf *out)
{
    pq_thrift t;
    pq_thrift_init(&t, out);
    pq_thrift_struct_begin(&t);
    algorithm_member(f, &t);
    pq_thrift_struct_end(&t);
    return pq_thrift_error(&t);
}

int pq_crypto_write_file_crypto_metadata(const pq_crypto_file *f,
                                         const void *key_metadata, size_t km_len,
                                         pq_buf *out)
{
    pq_thrift t;
    pq_thrift_init(&t, out);
    pq_thrift_struct_begin(&t);
    pq_crypto_thrift_algorithm(f, &t, 1);
    if (key_metadata != NULL)
        pq_thrift_field_binary(&t, 2, key_metadata, km_len);
    pq_thrift_struct_end(&t);
    return pq_thrift_error(&t);
}

void pq_crypto_thrift_column_crypto(pq_thrift *t, int16_t fid,
                                    const char *const *path, size_t path_len,
                                    const void *key_metadata, size_t km_len)
{
    pq_thrift_field_struct_begin(t, fid);
    if (path == NULL) {
        pq_thrift_field_struct_begin(t, 1); /* ENCRYPTION_WITH_FOOTER_KEY {} */
        pq_thrift_struct_end(t);
    } else {
        pq_thrift_field_struct_begin(t, 2); /* ENCRYPTION_WITH_COLUMN_KEY */
        pq_thrift_field_list_begin(t, 1, PQ_TT_BINARY, path_len);
        for (size_t i = 0; i < path_len; i++)
            pq_thrift_list_binary(t, path[i], strlen(path[i]));
        if (key_metadata != NULL)
            pq_thrift_field_binary(t, 2, key_metadata, km_len);
        pq_thrift_struct_end(t);
    }
    pq_thrift_struct_end(t);
}
