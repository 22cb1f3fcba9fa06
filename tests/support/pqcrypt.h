/* pqcrypt.h - test-only DECRYPTING Parquet reader (Encryption.md 4-5,
 * BloomFilter.md "Encryption", PageIndex.md). Opens a PARE file
 * (FileCryptoMetaData + encrypted footer) or a PAR1 file with or without a
 * signed plaintext footer, finds keys by key_metadata id, decrypts
 * encrypted_column_metadata, walks every column chunk's pages decrypting
 * headers and pages with the spec's module AADs (data page ordinals count
 * data pages per chunk from 0), decompresses and decodes every value, and
 * decrypts and checks ColumnIndex / OffsetIndex and bloom filter header +
 * bitset modules. Every value is returned per column for comparison.
 *
 * Second opinion, not a port: shares with the writer only pq_crypto_key
 * (bytes + name) and pq_buf. Module AADs are built here; module decryption
 * is decrypt.h (its own OpenSSL calls); Thrift is thrift_read.h; levels,
 * pages and codecs pqfile.h and decompress.h; values decode.h.
 *
 * Every encrypted module decrypted is listed (type, ordinals, file offset,
 * size), so tamper tests can flip a byte inside a known module and check
 * that exactly that module fails: on failure pqc_file.fail_* name the
 * module being read. The whole file is read into memory. */
#ifndef PQT_PQCRYPT_H
#define PQT_PQCRYPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "crypto.h"
#include "decode.h"
#include "err.h"
#include "pqfile.h"

/* A key the caller holds, found by the key_metadata the writer stored
 * (FileCryptoMetaData.key_metadata, footer_signing_key_metadata or
 * EncryptionWithColumnKey.key_metadata, compared byte for byte). */
typedef struct pqc_key {
    const char *id;
    const pq_crypto_key *key;
} pqc_key;

typedef struct pqc_opts {
    const pq_crypto_key *footer_key; /* NULL: look the footer key id up in keys */
    const pqc_key *keys;
    size_t n_keys;
    const void *aad_prefix;          /* supplied prefix; NULL: none supplied */
    size_t aad_prefix_len;
    /* true: an encrypted column whose key is unknown is skipped (its
     * pqc_column.skipped is set) instead of failing the open, and a signed
     * plaintext footer whose key is unknown is read unverified - what a
     * reader without keys does with the plaintext columns. */
    bool allow_missing_keys;
    /* Tamper tests only: do not verify a plaintext footer's signature, so
     * a flipped byte inside encrypted_column_metadata reaches that module's
     * own authentication instead of failing the footer first. */
    bool skip_signature;
    /* Tamper tests only: do not check page CRCs, so a flipped page byte
     * reaches the GCM tag check (the CRC would catch it first). */
    bool skip_crc;
} pqc_opts;

/* Where not applicable (footer: rg/col; non-page modules: page), -1. */
typedef struct pqc_module {
    int type;                  /* pq_crypto_module */
    int32_t rg, col, page;
    size_t offset;             /* file offset of the 4-byte length (footer
                                  signature files: of the FileMetaData) */
    size_t len;                /* bytes, length prefix included */
    bool gcm;                  /* false: AES-CTR page, not authenticated */
    bool in_footer;            /* encrypted_column_metadata: bytes inside the
                                  footer (offset is still a file offset for
                                  PAR1 files; inside the decrypted footer for
                                  PARE files, so not flippable in place) */
} pqc_module;

/* One row group's bloom filter of a column (bitset NULL if none). */
typedef struct pqc_bloom {
    uint8_t *bitset;
    size_t num_bytes;
} pqc_bloom;

/* One leaf, all row groups concatenated. Levels are stored for every
 * value slot (def/rep all 0 when the max level is 0); values holds only
 * the defined values, each as PLAIN-style bytes: BOOLEAN one byte 0/1,
 * INT32/INT64/FLOAT/DOUBLE little-endian, INT96 12 bytes, FLBA its width,
 * BYTE_ARRAY its bytes without the length prefix. */
typedef struct pqc_column {
    const char *path;          /* dotted (points into the file's leaf) */
    int type;                  /* pq_physical_type */
    int32_t type_length;
    int16_t max_def, max_rep;
    bool encrypted;            /* crypto_metadata present */
    bool footer_key;           /* encrypted with the footer key */
    char key_id[64];           /* column key id ("" for the footer key) */
    bool skipped;              /* key unknown and allow_missing_keys */
    size_t n_levels;
    uint16_t *def, *rep;
    pqt_bytes values;
    size_t values_cap_heap, values_cap_off;   /* private */
    size_t *rg_first_value;    /* num_row_groups + 1 entries into values */
    pqc_bloom *blooms;         /* num_row_groups entries */
    size_t data_pages, dict_pages;
    size_t column_indexes, offset_indexes;    /* chunks where present and checked */
    bool encmeta;              /* some chunk had encrypted_column_metadata */
} pqc_column;

typedef struct pqc_file {
    char *name;
    uint8_t *data;
    size_t size;
    bool encrypted_footer;     /* PARE */
    bool signed_footer;        /* PAR1 with encryption_algorithm */
    bool signature_verified;
    int algorithm;             /* PQ_AES_GCM_V1 / PQ_AES_GCM_CTR_V1, 0 = none */
    bool aad_prefix_stored, supply_aad_prefix;
    pq_buf file_aad;           /* aad_prefix || aad_file_unique */
    bool file_aad_ok;
    size_t footer_offset;      /* PARE: of the FileCryptoMetaData */
    pqf_file pf;               /* footer in a synthetic PAR1 frame: schema,
                                  leaves and the FileMetaData tree */
    size_t num_row_groups;
    int64_t num_rows;
    pqc_column *cols;
    size_t ncols;
    pqc_module *modules;
    size_t nmodules, modules_cap;
    /* Decrypted modules whose plaintext continues after the Thrift struct
     * (parquet-mr's aes256 reference files pad footers and column metadata
     * with zeros; readers ignore the rest, so this counts, not fails). */
    size_t padded_modules;
    /* Pages whose PageHeader.crc was checked: CRC-32 over the page bytes
     * as written, i.e. after compression AND encryption (parquet.thrift
     * PageHeader.crc); a mismatch fails the open. */
    size_t crc_pages;
    /* Plaintext-footer files: chunks whose plaintext (stripped) meta_data
     * disagrees with the decrypted ColumnMetaData in a field other than
     * statistics (type, codec, num_values, sizes, page/index/bloom
     * offsets). Legacy readers locate chunks with the plaintext copy. */
    size_t meta_mismatches;
    /* Set when opening fails inside a module: its type (-1: not in a
     * module), ordinals and offset; fail_code is the error code. */
    int fail_module;
    int32_t fail_rg, fail_col, fail_page;
    size_t fail_offset;
    int fail_code;
} pqc_file;

int pqc_open(pqc_file *f, const char *path, const pqc_opts *o, pq_err *err);
/* Same from memory (copied). */
int pqc_open_mem(pqc_file *f, const uint8_t *p, size_t n, const char *name,
                 const pqc_opts *o, pq_err *err);
/* Safe on a zeroed or failed pqc_file; keeps fail_* readable until then. */
void pqc_close(pqc_file *f);

/* Column by dotted path, NULL if none. */
const pqc_column *pqc_column_by_path(const pqc_file *f, const char *path);

/* Bytes of value i of c (i < c->values.n). */
static inline const uint8_t *pqc_value(const pqc_column *c, size_t i, size_t *len)
{
    *len = c->values.off[i + 1] - c->values.off[i];
    return c->values.heap + c->values.off[i];
}

/* Split-block bloom filter check of a 64-bit hash (BloomFilter.md),
 * independent of writer/chunk/bloom.c. */
bool pqc_bloom_check(const pqc_bloom *b, uint64_t hash);

const char *pqc_module_name(int type);

#endif
