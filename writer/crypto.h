/* crypto.h - Parquet Modular Encryption primitives (Encryption.md):
 * keys and their invocation budget (4.1.4), module AADs (4.4), GCM and CTR
 * module serialization (5.1), plaintext-footer signatures (5.5), and the
 * EncryptionAlgorithm / FileCryptoMetaData Thrift structs (5.2, 5.4).
 *
 * A file writer typically does:
 *     pq_crypto_key_load_hex(&footer_key, path, err);       (once per key)
 *     pq_crypto_file_init(&cf, PQ_AES_GCM_V1, prefix, n, true, err);
 *     pq_crypto_encrypt_module(&cf, &col_key, PQ_MODULE_DATA_PAGE_HEADER,
 *                              rg, col, page, hdr, hdr_len, out, err);
 *     ... pages, indexes, bloom modules, then the footer:
 *     pq_crypto_write_file_crypto_metadata(&cf, "kf", 2, out);  (PARE)
 *     pq_crypto_encrypt_module(&cf, &footer_key, PQ_MODULE_FOOTER, ...)
 *   or, plaintext footer (PAR1): pq_crypto_thrift_algorithm() inside
 *     FileMetaData, then pq_crypto_sign_footer() and append the 28 bytes.
 *
 * Key material is never logged: messages name keys by pq_crypto_key.name.
 * Threads: a pq_crypto_key may be used by several threads at once (the
 * writer's concurrent row-group encodes share the file's keys); its use
 * counter is atomic and its OpenSSL contexts are handed out from a small
 * lock-free pool. Initializing, limiting and freeing a key are not
 * concurrent with its use. A pq_crypto_file is read-only once initialized
 * and may be shared the same way. */
#ifndef PQ_CRYPTO_H
#define PQ_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "thrift.h"

#define PQ_CRYPTO_NONCE_LEN 12
#define PQ_CRYPTO_TAG_LEN 16
#define PQ_CRYPTO_LEN_LEN 4
/* Bytes a module grows by: length + nonce (+ tag for GCM). */
#define PQ_CRYPTO_GCM_OVERHEAD (PQ_CRYPTO_LEN_LEN + PQ_CRYPTO_NONCE_LEN + PQ_CRYPTO_TAG_LEN)
#define PQ_CRYPTO_CTR_OVERHEAD (PQ_CRYPTO_LEN_LEN + PQ_CRYPTO_NONCE_LEN)
/* Plaintext-footer signature: nonce || tag. */
#define PQ_CRYPTO_SIGNATURE_LEN (PQ_CRYPTO_NONCE_LEN + PQ_CRYPTO_TAG_LEN)
/* Ordinals are 2-byte shorts in the AAD and i16 in RowGroup.ordinal. */
#define PQ_CRYPTO_MAX_ORDINAL 32767
/* NIST SP 800-38D 8.3 via Encryption.md 4.1.4: at most 2^32 invocations of
 * the cipher per key (page header + page = 2, hence 2^31 pages). */
#define PQ_CRYPTO_MAX_INVOCATIONS (UINT64_C(1) << 32)
/* aad_file_unique length; implementation-defined, 8 as in parquet-mr. */
#define PQ_CRYPTO_FILE_UNIQUE_LEN 8

/* Module types (Encryption.md 4.4.2). */
typedef enum pq_crypto_module {
    PQ_MODULE_FOOTER = 0,
    PQ_MODULE_COLUMN_META = 1,
    PQ_MODULE_DATA_PAGE = 2,
    PQ_MODULE_DICT_PAGE = 3,
    PQ_MODULE_DATA_PAGE_HEADER = 4,
    PQ_MODULE_DICT_PAGE_HEADER = 5,
    PQ_MODULE_COLUMN_INDEX = 6,
    PQ_MODULE_OFFSET_INDEX = 7,
    PQ_MODULE_BLOOM_HEADER = 8,
    PQ_MODULE_BLOOM_BITSET = 9
} pq_crypto_module;

/* Values are the EncryptionAlgorithm union field ids. */
typedef enum pq_crypto_algorithm {
    PQ_AES_GCM_V1 = 1,
    PQ_AES_GCM_CTR_V1 = 2
} pq_crypto_algorithm;

struct evp_cipher_ctx_st;

/* Idle OpenSSL contexts a key keeps per mode: about the number of threads
 * expected to encrypt with it at once; more threads than this still work
 * (a context is made for the call), they only pay the key schedule. */
#define PQ_CRYPTO_CTX_POOL 16

/* An AES key (16, 24 or 32 bytes). Caller-owned; never copy it by value
 * (the copy would escape pq_crypto_key_free's wipe and share contexts). */
typedef struct pq_crypto_key {
    uint8_t bytes[32];
    size_t len;
    _Atomic uint64_t uses; /* cipher invocations so far */
    uint64_t max_uses;  /* PQ_CRYPTO_MAX_INVOCATIONS unless lowered */
    /* idle contexts with the key schedule set up (made on first use); a
     * thread takes one out of a slot for one module and puts it back */
    _Atomic(struct evp_cipher_ctx_st *) gcm[PQ_CRYPTO_CTX_POOL];
    _Atomic(struct evp_cipher_ctx_st *) ctr[PQ_CRYPTO_CTX_POOL];
    char name[80];      /* for messages, e.g. the key file path */
} pq_crypto_key;

/* name (may be NULL) labels the key in messages. Returns 0 or PQ_EINVAL. */
int pq_crypto_key_init(pq_crypto_key *k, const void *bytes, size_t len,
                       const char *name, pq_err *err);
/* Reads 32, 48 or 64 hex digits (AES-128/192/256) plus an optional
 * trailing newline. Errors name the file, never its contents: PQ_EIO
 * (cannot read), PQ_EINVAL (wrong length or a non-hex character). */
int pq_crypto_key_load_hex(pq_crypto_key *k, const char *path, pq_err *err);
/* Wipes the key bytes and frees the contexts. Safe on a zeroed struct. */
void pq_crypto_key_free(pq_crypto_key *k);
/* Lowers the invocation budget (clamped to PQ_CRYPTO_MAX_INVOCATIONS), e.g.
 * to keep a safety margin, or in tests. */
void pq_crypto_key_set_limit(pq_crypto_key *k, uint64_t max_uses);

/* Appends the module AAD: file_aad (aad_prefix || aad_file_unique) ||
 * type || row_group (LE16) || column (LE16) || page (LE16), each ordinal
 * only where 4.4.2 says the type carries it; the others are ignored.
 * PQ_EINVAL for an unknown type or a negative ordinal, PQ_ELIMIT above
 * PQ_CRYPTO_MAX_ORDINAL. */
int pq_crypto_module_aad(pq_buf *out, const void *file_aad, size_t file_aad_len,
                         pq_crypto_module type, int32_t row_group, int32_t column,
                         int32_t page, pq_err *err);

/* Appends length(LE32) || nonce || ciphertext || tag (AES-GCM, fresh random
 * nonce). pt must not point into out. PQ_ELIMIT when the key's budget is
 * spent (start a new file with a new key) or the module would exceed the
 * 4-byte length; PQ_ECRYPTO on an OpenSSL failure; PQ_ENOMEM. */
int pq_crypto_gcm_encrypt(pq_crypto_key *key, const void *aad, size_t aad_len,
                          const void *pt, size_t n, pq_buf *out, pq_err *err);
/* Appends length(LE32) || nonce || ciphertext (AES-CTR, IV = nonce ||
 * 00 00 00 01, Encryption.md 4.2.2). No AAD, no tag. Same errors. */
int pq_crypto_ctr_encrypt(pq_crypto_key *key, const void *pt, size_t n,
                          pq_buf *out, pq_err *err);
/* GCM-encrypts msg with aad, discards the ciphertext and writes
 * nonce || tag to sig (Encryption.md 5.5). Counts as one invocation. */
int pq_crypto_gcm_sign(pq_crypto_key *key, const void *aad, size_t aad_len,
                       const void *msg, size_t n,
                       uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err);

/* Per-file state: algorithm, AAD prefix and a random aad_file_unique. */
typedef struct pq_crypto_file {
    pq_crypto_algorithm algorithm;
    uint8_t file_unique[PQ_CRYPTO_FILE_UNIQUE_LEN];
    pq_buf file_aad;      /* aad_prefix || file_unique */
    size_t prefix_len;    /* leading bytes of file_aad that are the prefix */
    bool store_prefix;    /* false: readers must supply the prefix */
} pq_crypto_file;

/* aad_prefix may be NULL (no file-swap protection). store_prefix = false
 * keeps the prefix out of the file (supply_aad_prefix = true). */
int pq_crypto_file_init(pq_crypto_file *f, pq_crypto_algorithm alg,
                        const void *aad_prefix, size_t prefix_len,
                        bool store_prefix, pq_err *err);
void pq_crypto_file_free(pq_crypto_file *f);

/* Encrypts one module with its AAD: CTR for data and dictionary pages
 * under AES_GCM_CTR_V1, GCM for everything else. Appends to out. */
int pq_crypto_encrypt_module(const pq_crypto_file *f, pq_crypto_key *key,
                             pq_crypto_module type, int32_t row_group,
                             int32_t column, int32_t page, const void *pt,
                             size_t n, pq_buf *out, pq_err *err);
/* Signature of a plaintext footer (serialized FileMetaData) under the
 * footer AAD. */
int pq_crypto_sign_footer(const pq_crypto_file *f, pq_crypto_key *key,
                          const void *footer, size_t n,
                          uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN], pq_err *err);

/* EncryptionAlgorithm as field fid of the struct being written
 * (FileMetaData 8, FileCryptoMetaData 1). Errors are sticky in t. */
void pq_crypto_thrift_algorithm(const pq_crypto_file *f, pq_thrift *t, int16_t fid);
/* EncryptionAlgorithm as a top-level struct. Returns 0 or PQ_ENOMEM. */
int pq_crypto_write_algorithm(const pq_crypto_file *f, pq_buf *out);
/* FileCryptoMetaData{1: algorithm, 2: key_metadata (omitted if NULL)},
 * written just before the encrypted footer in PARE files. */
int pq_crypto_write_file_crypto_metadata(const pq_crypto_file *f,
                                         const void *key_metadata, size_t km_len,
                                         pq_buf *out);
/* ColumnChunk.crypto_metadata (fid 8): ENCRYPTION_WITH_FOOTER_KEY when
 * path is NULL, else ENCRYPTION_WITH_COLUMN_KEY{path_in_schema,
 * key_metadata (omitted if NULL)}. */
void pq_crypto_thrift_column_crypto(pq_thrift *t, int16_t fid,
                                    const char *const *path, size_t path_len,
                                    const void *key_metadata, size_t km_len);

#endif
