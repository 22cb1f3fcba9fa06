/* crypto.c - Parquet Modular Encryption primitives (Encryption.md 4-5):
 * AES keys with a per-key invocation counter, module AADs, AES-GCM and
 * AES-CTR module serialization, plaintext-footer signing, and the
 * EncryptionAlgorithm / FileCryptoMetaData / ColumnCryptoMetaData structs.
 * All cryptography is OpenSSL EVP; nonces come from RAND_bytes. */
#include "crypto.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
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

static void pool_free(_Atomic(EVP_CIPHER_CTX *) *pool)
{
    for (size_t i = 0; i < PQ_CRYPTO_CTX_POOL; i++)
        EVP_CIPHER_CTX_free(atomic_exchange(&pool[i], NULL)); /* wipes the key schedule */
}

void pq_crypto_key_free(pq_crypto_key *k)
{
    OPENSSL_cleanse(k->bytes, sizeof k->bytes);
    pool_free(k->gcm);
    pool_free(k->ctr);
    k->len = 0;
    atomic_store(&k->uses, 0);
    k->max_uses = 0;
}

void pq_crypto_key_set_limit(pq_crypto_key *k, uint64_t max_uses)
{
    k->max_uses = max_uses < PQ_CRYPTO_MAX_INVOCATIONS ? max_uses
                                                       : PQ_CRYPTO_MAX_INVOCATIONS;
}

/* Counts one cipher invocation before it happens: a nonce is spent even if
 * OpenSSL then fails. A compare-and-swap rather than a plain increment, so
 * that concurrent callers can never take the budget past max_uses. */
static int key_spend(pq_crypto_key *k, pq_err *err)
{
    if (k->len == 0)
        return pq_err_set(err, PQ_ESTATE, "key %s: not initialized", k->name);
    uint64_t used = atomic_load_explicit(&k->uses, memory_order_relaxed);
    do {
        if (used >= k->max_uses)
            return pq_err_set(err, PQ_ELIMIT,
                              "key %s: already used for %llu encryptions, the limit for "
                              "one key (NIST SP 800-38D, Encryption.md 4.1.4); write "
                              "further data to a new file with a new key",
                              k->name, (unsigned long long)used);
    } while (!atomic_compare_exchange_weak_explicit(&k->uses, &used, used + 1,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
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

/* A context with the key schedule set up, for one module: taken from the
 * key's pool (slots are swapped out atomically, so each context has one
 * holder), else made. Setting up the key schedule is most of the cost of
 * a small module (page headers), and concurrent row-group encodes share
 * keys. Measured on the 2-core build machine (AES-256-GCM, 100-byte / 64
 * KiB modules, ns per module): a mutex around the cipher call 1460-1820 /
 * 20300-25400 on one thread but 2100 / 30000 on two (it serializes the
 * cipher work); a context per call 2570-2850 / 25200-26200; this pool
 * 1560-1940 / 22200-22900 on one thread and 930-1230 / 11700-15000 on two. */
static EVP_CIPHER_CTX *ctx_take(pq_crypto_key *k, bool ctr, pq_err *err)
{
    _Atomic(EVP_CIPHER_CTX *) *pool = ctr ? k->ctr : k->gcm;
    for (size_t i = 0; i < PQ_CRYPTO_CTX_POOL; i++) {
        if (atomic_load_explicit(&pool[i], memory_order_relaxed) == NULL)
            continue;
        EVP_CIPHER_CTX *ctx = atomic_exchange_explicit(&pool[i], NULL, memory_order_acquire);
        if (ctx != NULL)
            return ctx;
    }
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL ||
        EVP_EncryptInit_ex(ctx, key_cipher(k->len, ctr), NULL, k->bytes, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        crypto_fail(err, k, ctr ? "AES-CTR setup" : "AES-GCM setup");
        return NULL;
    }
    return ctx;
}

/* Puts a context back into a free slot, or frees it when all are taken. */
static void ctx_give(pq_crypto_key *k, bool ctr, EVP_CIPHER_CTX *ctx)
{
    _Atomic(EVP_CIPHER_CTX *) *pool = ctr ? k->ctr : k->gcm;
    for (size_t i = 0; i < PQ_CRYPTO_CTX_POOL; i++) {
        EVP_CIPHER_CTX *empty = NULL;
        if (atomic_compare_exchange_strong_explicit(&pool[i], &empty, ctx, memory_order_release,
                                                    memory_order_relaxed))
            return;
    }
    EVP_CIPHER_CTX_free(ctx);
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

/* The module-specific AAD suffix: type || row group || column || page, each
 * ordinal only where 4.4.2 says the type carries it. */
typedef struct aad_suffix {
    uint8_t bytes[7];
    size_t len;
} aad_suffix;

static int aad_suffix_build(aad_suffix *sfx, pq_crypto_module type, int32_t row_group,
                            int32_t column, int32_t page, pq_err *err)
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
    size_t n = 0;
    sfx->bytes[n++] = (uint8_t)type;
    if (rg_col) {
        aad_put_ordinal(sfx->bytes + n, row_group);
        aad_put_ordinal(sfx->bytes + n + 2, column);
        n += 4;
    }
    if (has_page) {
        aad_put_ordinal(sfx->bytes + n, page);
        n += 2;
    }
    sfx->len = n;
    return 0;
}

int pq_crypto_module_aad(pq_buf *out, const void *file_aad, size_t file_aad_len,
                         pq_crypto_module type, int32_t row_group, int32_t column,
                         int32_t page, pq_err *err)
{
    aad_suffix sfx;
    int rc = aad_suffix_build(&sfx, type, row_group, column, page, err);
    if (rc != 0)
        return rc;
    if (pq_buf_append(out, file_aad, file_aad_len) != 0 ||
        pq_buf_append(out, sfx.bytes, sfx.len) != 0)
        return pq_err_set(err, PQ_ENOMEM, "encryption AAD: out of memory");
    return 0;
}

/* ---- GCM and CTR ----------------------------------------------------------- */

/* A GCM AAD in two parts (file AAD, module suffix): GCM hashes AAD given in
 * several updates as if concatenated, so modules need no AAD buffer, and
 * the shared pq_crypto_file stays read-only. */
typedef struct gcm_aad {
    const void *a, *b;
    size_t a_len, b_len;
} gcm_aad;

/* Runs one GCM encryption. ct == NULL discards the ciphertext (footer
 * signing): it goes through a small stack buffer instead of a copy of the
 * whole footer. */
static int gcm_run(pq_crypto_key *k, EVP_CIPHER_CTX *ctx, const uint8_t *nonce,
                   const gcm_aad *aad, const uint8_t *pt, size_t n,
                   uint8_t *ct, uint8_t *tag, pq_err *err)
{
    uint8_t sink[4096];
    int len;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1)
        return crypto_fail(err, k, "AES-GCM nonce setup");
    if ((aad->a_len > 0 && EVP_EncryptUpdate(ctx, NULL, &len, aad->a, (int)aad->a_len) != 1) ||
        (aad->b_len > 0 && EVP_EncryptUpdate(ctx, NULL, &len, aad->b, (int)aad->b_len) != 1))
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

static int gcm_encrypt(pq_crypto_key *key, const gcm_aad *aad, const void *pt, size_t n,
                       pq_buf *out, pq_err *err)
{
    int rc = module_check(key, n, aad->a_len + aad->b_len, PQ_CRYPTO_GCM_OVERHEAD, err);
    if (rc != 0 || (rc = key_spend(key, err)) != 0)
        return rc;
    if (pq_buf_reserve(out, n + PQ_CRYPTO_GCM_OVERHEAD) != 0)
        return pq_err_set(err, PQ_ENOMEM, "key %s: no memory for a %zu-byte module",
                          key->name, n);
    uint8_t *p = out->data + out->len;
    uint8_t *nonce = p + PQ_CRYPTO_LEN_LEN, *ct = nonce + PQ_CRYPTO_NONCE_LEN;
    put_le32(p, (uint32_t)(n + PQ_CRYPTO_NONCE_LEN + PQ_CRYPTO_TAG_LEN));
    if (RAND_bytes(nonce, PQ_CRYPTO_NONCE_LEN) != 1)
        return crypto_fail(err, key, "nonce generation (RAND_bytes)");
    EVP_CIPHER_CTX *ctx = ctx_take(key, false, err);
    if (ctx == NULL)
        return PQ_ECRYPTO;
    rc = gcm_run(key, ctx, nonce, aad, pt, n, ct, ct + n, err);
    ctx_give(key, false, ctx); /* the next nonce setup resets a failed run */
    if (rc != 0)
        return rc;
    out->len += n + PQ_CRYPTO_GCM_OVERHEAD;
    return 0;
}

int pq_crypto_gcm_encrypt(pq_crypto_key *key, const void *aad, size_t aad_len,
                          const void *pt, size_t n, pq_buf *out, pq_err *err)
{
    gcm_aad a = {.a = aad, .a_len = aad_len};
    return gcm_encrypt(key, &a, pt, n, out, err);
}

static int ctr_run(pq_crypto_key *k, EVP_CIPHER_CTX *ctx, const uint8_t *nonce,
                   const uint8_t *pt, size_t n, uint8_t *ct, pq_err *err)
{
    /* 4.2.2: IV = nonce || 31 zero bits || a one bit (big-endian counter 1) */
    uint8_t iv[16] = { 0 };
    memcpy(iv, nonce, PQ_CRYPTO_NONCE_LEN);
    iv[15] = 1;
    int len;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv) != 1 ||
        (n > 0 && EVP_EncryptUpdate(ctx, ct, &len, pt, (int)n) != 1) ||
        EVP_EncryptFinal_ex(ctx, ct + n, &len) != 1)
        return crypto_fail(err, k, "AES-CTR encryption");
    return 0;
}

int pq_crypto_ctr_encrypt(pq_crypto_key *key, const void *pt, size_t n,
                          pq_buf *out, pq_err *err)
{
    int rc = module_check(key, n, 0, PQ_CRYPTO_CTR_OVERHEAD, err);
    if (rc != 0 || (rc = key_spend(key, err)) != 0)
        return rc;
    if (pq_buf_reserve(out, n + PQ_CRYPTO_CTR_OVERHEAD) != 0)
        return pq_err_set(err, PQ_ENOMEM, "key %s: no memory for a %zu-byte module",
                          key->name, n);
    uint8_t *p = out->data + out->len;
    uint8_t *nonce = p + PQ_CRYPTO_LEN_LEN, *ct = nonce + PQ_CRYPTO_NONCE_LEN;
    put_le32(p, (uint32_t)(n + PQ_CRYPTO_NONCE_LEN));
    if (RAND_bytes(nonce, PQ_CRYPTO_NONCE_LEN) != 1)
        return crypto_fail(err, key, "nonce generation (RAND_bytes)");
    EVP_CIPHER_CTX *ctx = ctx_take(key, true, err);
    if (ctx == NULL)
        return PQ_ECRYPTO;
    rc = ctr_run(key, ctx, nonce, pt, n, ct, err);
    ctx_give(key, true, ctx);
    if (rc != 0)
        return rc;
    out->len += n + PQ_CRYPTO_CTR_OVERHEAD;
    return 0;
}

static int gcm_sign(pq_crypto_key *key, const gcm_aad *aad, const void *msg, size_t n,
                    uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err)
{
    int rc = module_check(key, n, aad->a_len + aad->b_len, PQ_CRYPTO_GCM_OVERHEAD, err);
    if (rc != 0 || (rc = key_spend(key, err)) != 0)
        return rc;
    if (RAND_bytes(sig, PQ_CRYPTO_NONCE_LEN) != 1)
        return crypto_fail(err, key, "nonce generation (RAND_bytes)");
    EVP_CIPHER_CTX *ctx = ctx_take(key, false, err);
    if (ctx == NULL)
        return PQ_ECRYPTO;
    rc = gcm_run(key, ctx, sig, aad, msg, n, NULL, sig + PQ_CRYPTO_NONCE_LEN, err);
    ctx_give(key, false, ctx);
    return rc;
}

int pq_crypto_gcm_sign(pq_crypto_key *key, const void *aad, size_t aad_len,
                       const void *msg, size_t n,
                       uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err)
{
    gcm_aad a = {.a = aad, .a_len = aad_len};
    return gcm_sign(key, &a, msg, n, sig, err);
}

/* ---- per-file state ------------------------------------------------------ */

int pq_crypto_file_init(pq_crypto_file *f, pq_crypto_algorithm alg,
                        const void *aad_prefix, size_t prefix_len,
                        bool store_prefix, pq_err *err)
{
    memset(f, 0, sizeof *f);
    pq_buf_init(&f->file_aad);
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
}

int pq_crypto_encrypt_module(const pq_crypto_file *f, pq_crypto_key *key,
                             pq_crypto_module type, int32_t row_group,
                             int32_t column, int32_t page, const void *pt,
                             size_t n, pq_buf *out, pq_err *err)
{
    /* The AAD is built for CTR pages too: it validates the ordinals, so
     * both algorithms refuse the same files. */
    aad_suffix sfx;
    int rc = aad_suffix_build(&sfx, type, row_group, column, page, err);
    if (rc != 0)
        return rc;
    bool page_data = type == PQ_MODULE_DATA_PAGE || type == PQ_MODULE_DICT_PAGE;
    if (f->algorithm == PQ_AES_GCM_CTR_V1 && page_data)
        return pq_crypto_ctr_encrypt(key, pt, n, out, err);
    gcm_aad aad = {.a = f->file_aad.data, .a_len = f->file_aad.len,
                   .b = sfx.bytes, .b_len = sfx.len};
    return gcm_encrypt(key, &aad, pt, n, out, err);
}

int pq_crypto_sign_footer(const pq_crypto_file *f, pq_crypto_key *key,
                          const void *footer, size_t n,
                          uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err)
{
    aad_suffix sfx;
    int rc = aad_suffix_build(&sfx, PQ_MODULE_FOOTER, 0, 0, 0, err);
    if (rc != 0)
        return rc;
    gcm_aad aad = {.a = f->file_aad.data, .a_len = f->file_aad.len,
                   .b = sfx.bytes, .b_len = sfx.len};
    return gcm_sign(key, &aad, footer, n, sig, err);
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
