/* test_crypto.c - writer/crypto.c and tests/support/decrypt.c against
 * Encryption.md: decrypting the encrypted footers of the parquet-testing
 * reference files, verifying their plaintext-footer signatures, AAD and
 * Thrift bytes written out from the spec, GCM/CTR round trips and tamper
 * detection, the per-key invocation limit (also with a key shared by
 * threads), and key file errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "bloom.h"
#include "buf.h"
#include "crypto.h"
#include "decrypt.h"
#include "err.h"
#include "thrift.h"

#define DATA PQ_TESTDATA "/parquet-testing/data/"

/* README 2c: the documented keys are ASCII strings, not byte values. */
static const char KF128[] = "0123456789012345";
static const char KF256[] = "01234567890123456789012345678901";

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t test_seed(const char *test)
{
    const char *env = getenv("PQ_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : 0xC0FFEEull;
    printf("[ seed     ] %s: PQ_TEST_SEED=0x%llx\n", test, (unsigned long long)seed);
    return seed;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 12);
    rewind(f);
    uint8_t *p = malloc((size_t)n);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void key_ascii(pq_crypto_key *k, const char *ascii)
{
    assert_int_equal(pq_crypto_key_init(k, ascii, strlen(ascii), "test", NULL), 0);
}

/* Trailer: ... footer region | LE32 length | 4-byte magic. */
static const uint8_t *footer_region(const uint8_t *file, size_t size, const char *magic,
                                    size_t *len)
{
    assert_memory_equal(file, magic, 4);
    assert_memory_equal(file + size - 4, magic, 4);
    *len = le32(file + size - 8);
    assert_true(*len <= size - 12);
    return file + size - 8 - *len;
}

/* ---- (a) encrypted footers of the reference files ------------------------ */

typedef struct ref_file {
    const char *path;
    const char *key;
    const char *supply; /* AAD prefix the reader must supply, or NULL */
    int algorithm;
} ref_file;

static const ref_file pare_files[] = {
    { DATA "uniform_encryption.parquet.encrypted", KF128, NULL, PQ_AES_GCM_V1 },
    { DATA "encrypt_columns_and_footer.parquet.encrypted", KF128, NULL, PQ_AES_GCM_V1 },
    { DATA "encrypt_columns_and_footer_aad.parquet.encrypted", KF128, NULL, PQ_AES_GCM_V1 },
    { DATA "encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", KF128,
      "tester", PQ_AES_GCM_V1 },
    { DATA "encrypt_columns_and_footer_ctr.parquet.encrypted", KF128, NULL, PQ_AES_GCM_CTR_V1 },
    { DATA "encrypt_columns_and_footer_bloom_filter.parquet.encrypted", KF128, NULL,
      PQ_AES_GCM_V1 },
    { DATA "aes256/uniform_encryption.parquet.encrypted", KF256, NULL, PQ_AES_GCM_V1 },
    { DATA "aes256/encrypt_columns_and_footer.parquet.encrypted", KF256, NULL, PQ_AES_GCM_V1 },
    { DATA "aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", KF256,
      "tester", PQ_AES_GCM_V1 },
    { DATA "aes256/encrypt_columns_and_footer_ctr.parquet.encrypted", KF256, NULL,
      PQ_AES_GCM_CTR_V1 },
};

/* Decrypts rf's footer with key and the given supplied prefix; returns the
 * pq error code, and on success checks the plaintext is a FileMetaData. */
static int decrypt_ref_footer(const ref_file *rf, const char *key, const char *supply,
                              pq_err *err)
{
    size_t size, len, used;
    uint8_t *file = read_file(rf->path, &size);
    const uint8_t *region = footer_region(file, size, "PARE", &len);
    pqt_crypto_meta m;
    assert_int_equal(pqt_parse_file_crypto_metadata(region, len, &m, &used, err), 0);
    assert_int_equal(m.algorithm, rf->algorithm);
    assert_int_equal(m.key_metadata_len, 2);
    assert_memory_equal(m.key_metadata, "kf", 2);
    assert_true(m.aad_file_unique_len > 0);
    assert_int_equal(m.supply_aad_prefix, rf->supply != NULL);

    pq_crypto_key k;
    key_ascii(&k, key);
    pq_buf aad, pt;
    pq_buf_init(&aad);
    pq_buf_init(&pt);
    int rc = pqt_file_aad(&m, supply, supply ? strlen(supply) : 0, &aad, err);
    size_t file_aad_len = aad.len;
    if (rc == 0)
        rc = pq_crypto_module_aad(&aad, NULL, 0, PQ_MODULE_FOOTER, 0, 0, 0, err);
    size_t consumed = 0;
    if (rc == 0)
        rc = pqt_decrypt_gcm_module(&k, aad.data, aad.len, region + used, len - used, &pt,
                                    &consumed, err);
    if (rc == 0) {
        /* footer AAD = file AAD || 0x00; the module fills the region */
        assert_int_equal(aad.len, file_aad_len + 1);
        assert_int_equal(aad.data[file_aad_len], 0x00);
        assert_int_equal(consumed, len - used);
        assert_int_equal(pt.len, len - used - PQ_CRYPTO_GCM_OVERHEAD);
        assert_int_equal(pt.data[0], 0x15); /* field 1 (version), type i32 */
        assert_true(pt.data[1] == 0x02 || pt.data[1] == 0x04); /* version 1 or 2 */
    }
    pq_buf_free(&aad);
    pq_buf_free(&pt);
    pq_crypto_key_free(&k);
    free(file);
    return rc;
}

static void test_crypto_decrypts_reference_encrypted_footers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pare_files / sizeof pare_files[0]; i++) {
        pq_err err = { 0 };
        int rc = decrypt_ref_footer(&pare_files[i], pare_files[i].key, pare_files[i].supply,
                                    &err);
        if (rc != 0)
            fail_msg("%s: %s", pare_files[i].path, err.msg);
    }
}

static void test_crypto_reference_footer_wrong_key_fails(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pare_files / sizeof pare_files[0]; i++) {
        const ref_file *rf = &pare_files[i];
        const char *wrong = strlen(rf->key) == 16 ? "1234567890123450" /* kc1 */
                                                  : "12345678901234567890123456789012";
        pq_err err = { 0 };
        assert_int_equal(decrypt_ref_footer(rf, wrong, rf->supply, &err), PQ_ECRYPTO);
        assert_non_null(strstr(err.msg, "tag mismatch"));
    }
}

/* The AAD prefix is part of the footer AAD: the stored-prefix file fails
 * without it being used, the unstored one needs exactly "tester". */
static void test_crypto_reference_footer_needs_right_aad_prefix(void **state)
{
    (void)state;
    const ref_file *aad_file = &pare_files[2], *unstored = &pare_files[3];
    pq_err err = { 0 };
    assert_int_equal(decrypt_ref_footer(aad_file, KF128, "tester", &err), 0);
    assert_int_equal(decrypt_ref_footer(aad_file, KF128, "other", &err), PQ_ECRYPTO);
    assert_int_equal(decrypt_ref_footer(unstored, KF128, NULL, &err), PQ_ECRYPTO);
    assert_non_null(strstr(err.msg, "supply_aad_prefix"));
    assert_int_equal(decrypt_ref_footer(unstored, KF128, "tester2", &err), PQ_ECRYPTO);
    assert_non_null(strstr(err.msg, "tag mismatch"));
}

/* ---- (b) plaintext footer signature -------------------------------------- */

/* PAR1 file: FileMetaData || nonce(12) || tag(16) || LE32(len) || PAR1;
 * signed = the FileMetaData bytes, under the footer AAD. */
static int verify_plaintext_footer(const char *path, const char *key, int flip_at)
{
    size_t size, len, used;
    uint8_t *file = read_file(path, &size);
    uint8_t *region = (uint8_t *)footer_region(file, size, "PAR1", &len);
    assert_true(len > PQ_CRYPTO_SIGNATURE_LEN);
    size_t fmd_len = len - PQ_CRYPTO_SIGNATURE_LEN;
    pqt_crypto_meta m;
    pq_err err = { 0 };
    assert_int_equal(pqt_parse_footer_crypto(region, fmd_len, &m, &used, &err), 0);
    assert_int_equal(used, fmd_len); /* the FileMetaData ends at the signature */
    assert_int_equal(m.algorithm, PQ_AES_GCM_V1);
    assert_int_equal(m.key_metadata_len, 2); /* footer_signing_key_metadata "kf" */
    pq_buf aad;
    pq_buf_init(&aad);
    assert_int_equal(pqt_file_aad(&m, NULL, 0, &aad, &err), 0);
    assert_int_equal(pq_crypto_module_aad(&aad, NULL, 0, PQ_MODULE_FOOTER, 0, 0, 0, &err), 0);
    if (flip_at >= 0)
        region[flip_at] ^= 0x01;
    pq_crypto_key k;
    key_ascii(&k, key);
    int rc = pqt_verify_footer_signature(&k, aad.data, aad.len, region, fmd_len,
                                         region + fmd_len, &err);
    pq_crypto_key_free(&k);
    pq_buf_free(&aad);
    free(file);
    return rc;
}

static void test_crypto_verifies_reference_plaintext_footer_signature(void **state)
{
    (void)state;
    const char *f128 = DATA "encrypt_columns_plaintext_footer.parquet.encrypted";
    const char *f256 = DATA "aes256/encrypt_columns_plaintext_footer.parquet.encrypted";
    assert_int_equal(verify_plaintext_footer(f128, KF128, -1), 0);
    assert_int_equal(verify_plaintext_footer(f256, KF256, -1), 0);
    assert_int_equal(verify_plaintext_footer(f128, "1234567890123450", -1), PQ_ECRYPTO);
    assert_int_equal(verify_plaintext_footer(f256, "12345678901234567890123456789012", -1),
                     PQ_ECRYPTO);
    assert_int_equal(verify_plaintext_footer(f128, KF128, 40), PQ_ECRYPTO); /* footer byte */
}

/* decrypt.c's Thrift reader is bounded: every truncation of a real
 * FileCryptoMetaData / FileMetaData is PQ_EPARSE, and random corruption
 * never reads out of bounds (ASan/valgrind runs make that visible). */
static void test_crypto_thrift_reader_rejects_truncated_and_corrupt(void **state)
{
    (void)state;
    uint64_t seed = test_seed(__func__), s = seed;
    size_t size, len, used;
    uint8_t *file = read_file(pare_files[2].path, &size);
    const uint8_t *region = footer_region(file, size, "PARE", &len);
    pqt_crypto_meta m;
    assert_int_equal(pqt_parse_file_crypto_metadata(region, len, &m, &used, NULL), 0);
    for (size_t n = 0; n < used; n++) {
        uint8_t *copy = malloc(n + 1); /* own copy so ASan sees overreads */
        assert_non_null(copy);
        memcpy(copy, region, n);
        assert_int_equal(pqt_parse_file_crypto_metadata(copy, n, &m, NULL, NULL), PQ_EPARSE);
        free(copy);
    }
    free(file);

    file = read_file(DATA "encrypt_columns_plaintext_footer.parquet.encrypted", &size);
    region = footer_region(file, size, "PAR1", &len);
    size_t fmd_len = len - PQ_CRYPTO_SIGNATURE_LEN;
    uint8_t *copy = malloc(fmd_len);
    assert_non_null(copy);
    for (size_t n = 0; n < fmd_len; n += 7) {
        memcpy(copy, region, n);
        assert_int_equal(pqt_parse_footer_crypto(copy, n, &m, NULL, NULL), PQ_EPARSE);
    }
    for (int i = 0; i < 3000; i++) {
        memcpy(copy, region, fmd_len);
        for (int j = 0; j < 3; j++)
            copy[rng_next(&s) % fmd_len] = (uint8_t)rng_next(&s);
        int rc = pqt_parse_footer_crypto(copy, fmd_len, &m, &used, NULL);
        assert_true(rc == 0 || rc == PQ_EPARSE);
        if (rc == 0)
            assert_true(used <= fmd_len);
    }
    free(copy);
    free(file);
}

/* ---- CTR pages of the reference files ------------------------------------ */

/* Decrypts the dictionary page of double_field (row group 0, column 5,
 * key kc1) in a PARE reference file: header module (GCM, type 5) at
 * dict_off, then the page module (CTR, or GCM type 3). dict_off comes
 * from the file's encrypted ColumnMetaData (dictionary_page_offset). */
static void ref_dict_page(const char *path, size_t dict_off, bool ctr, pq_buf *page)
{
    size_t size, len, used, hdr_used, page_used;
    uint8_t *file = read_file(path, &size);
    const uint8_t *region = footer_region(file, size, "PARE", &len);
    pqt_crypto_meta m;
    assert_int_equal(pqt_parse_file_crypto_metadata(region, len, &m, &used, NULL), 0);
    assert_int_equal(m.algorithm, ctr ? PQ_AES_GCM_CTR_V1 : PQ_AES_GCM_V1);
    pq_crypto_key kc1;
    key_ascii(&kc1, "1234567890123450");
    pq_buf file_aad, aad, hdr;
    pq_buf_init(&file_aad);
    pq_buf_init(&aad);
    pq_buf_init(&hdr);
    assert_int_equal(pqt_file_aad(&m, NULL, 0, &file_aad, NULL), 0);
    assert_int_equal(pq_crypto_module_aad(&aad, file_aad.data, file_aad.len,
                                          PQ_MODULE_DICT_PAGE_HEADER, 0, 5, 0, NULL), 0);
    pq_err err = { 0 };
    if (pqt_decrypt_gcm_module(&kc1, aad.data, aad.len, file + dict_off, size - dict_off, &hdr,
                               &hdr_used, &err) != 0)
        fail_msg("%s: dictionary page header: %s", path, err.msg);
    assert_int_equal(hdr.data[0], 0x15); /* PageHeader 1: type = */
    assert_int_equal(hdr.data[1], 0x04); /* DICTIONARY_PAGE (2) */
    const uint8_t *pm = file + dict_off + hdr_used;
    size_t avail = size - dict_off - hdr_used;
    pq_buf_reset(&aad);
    assert_int_equal(pq_crypto_module_aad(&aad, file_aad.data, file_aad.len,
                                          PQ_MODULE_DICT_PAGE, 0, 5, 0, NULL), 0);
    int rc = ctr ? pqt_decrypt_ctr_module(&kc1, pm, avail, page, &page_used, &err)
                 : pqt_decrypt_gcm_module(&kc1, aad.data, aad.len, pm, avail, page, &page_used,
                                          &err);
    if (rc != 0)
        fail_msg("%s: dictionary page: %s", path, err.msg);
    pq_buf_free(&file_aad);
    pq_buf_free(&aad);
    pq_buf_free(&hdr);
    pq_crypto_key_free(&kc1);
    free(file);
}

/* parquet-mr wrote the same page under AES_GCM_V1 and AES_GCM_CTR_V1: the
 * CTR decryption (IV = nonce || 00000001) must give the GCM plaintext. */
static void test_crypto_reference_ctr_page_matches_gcm_page(void **state)
{
    (void)state;
    pq_buf gcm, ctr;
    pq_buf_init(&gcm);
    pq_buf_init(&ctr);
    ref_dict_page(DATA "encrypt_columns_and_footer.parquet.encrypted", 2117, false, &gcm);
    ref_dict_page(DATA "encrypt_columns_and_footer_ctr.parquet.encrypted", 2084, true, &ctr);
    assert_int_equal(gcm.len, 305);
    assert_int_equal(ctr.len, gcm.len);
    assert_memory_equal(ctr.data, gcm.data, gcm.len);
    pq_buf_free(&gcm);
    pq_buf_free(&ctr);
}

/* ---- encrypted bloom filter of the reference file ------------------------ */

/* encrypt_columns_and_footer_bloom_filter: double_field is column 0 (key
 * kc1), PLAIN DATA_PAGE_V2 pages without levels in bytes [4, 16496), and a
 * bloom filter at 29667 (both from its encrypted ColumnMetaData). */
#define BLOOM_REF DATA "encrypt_columns_and_footer_bloom_filter.parquet.encrypted"
#define BLOOM_REF_CHUNK_END 16496
#define BLOOM_REF_OFFSET 29667

typedef struct ref_ctx {
    uint8_t *file;
    size_t size;
    pq_buf file_aad, aad;
    pq_crypto_key key;
} ref_ctx;

/* Decrypts the GCM module at *off into out (reset first), advancing *off. */
static void ref_module(ref_ctx *c, size_t *off, pq_crypto_module type, int32_t page,
                       pq_buf *out)
{
    pq_buf_reset(&c->aad);
    pq_buf_reset(out);
    assert_int_equal(pq_crypto_module_aad(&c->aad, c->file_aad.data, c->file_aad.len, type, 0,
                                          0, page, NULL), 0);
    size_t used;
    pq_err err = { 0 };
    if (pqt_decrypt_gcm_module(&c->key, c->aad.data, c->aad.len, c->file + *off,
                               c->size - *off, out, &used, &err) != 0)
        fail_msg("module type %d at %zu: %s", (int)type, *off, err.msg);
    *off += used;
}

/* Rebuilding parquet-mr's filter from the decrypted column values with
 * our hashing gives the identical bitset: checks pq_bloom_hash_double, the
 * bloom module types 8/9 and page ordinals in data page AADs. */
static void test_crypto_reference_encrypted_bloom_filter_matches_ours(void **state)
{
    (void)state;
    ref_ctx c;
    size_t len, used;
    c.file = read_file(BLOOM_REF, &c.size);
    const uint8_t *region = footer_region(c.file, c.size, "PARE", &len);
    pqt_crypto_meta m;
    assert_int_equal(pqt_parse_file_crypto_metadata(region, len, &m, &used, NULL), 0);
    pq_buf_init(&c.file_aad);
    pq_buf_init(&c.aad);
    assert_int_equal(pqt_file_aad(&m, NULL, 0, &c.file_aad, NULL), 0);
    key_ascii(&c.key, "1234567890123450");

    pq_buf hdr, bits, mine_hdr, mine_bits, pt;
    pq_buf_init(&hdr);
    pq_buf_init(&bits);
    pq_buf_init(&mine_hdr);
    pq_buf_init(&mine_bits);
    pq_buf_init(&pt);
    size_t off = BLOOM_REF_OFFSET;
    ref_module(&c, &off, PQ_MODULE_BLOOM_HEADER, 0, &hdr);
    ref_module(&c, &off, PQ_MODULE_BLOOM_BITSET, 0, &bits);
    assert_int_equal(bits.len, 2048);

    pq_bloom b;
    assert_int_equal(pq_bloom_init(&b, bits.len, NULL), 0);
    size_t values = 0;
    off = 4;
    for (int32_t page = 0; off < BLOOM_REF_CHUNK_END; page++) {
        ref_module(&c, &off, PQ_MODULE_DATA_PAGE_HEADER, page, &pt);
        assert_int_equal(pt.data[0], 0x15); /* PageHeader 1: type = */
        assert_int_equal(pt.data[1], 0x06); /* DATA_PAGE_V2 (3) */
        ref_module(&c, &off, PQ_MODULE_DATA_PAGE, page, &pt);
        assert_int_equal(pt.len % 8, 0);
        for (size_t i = 0; i < pt.len; i += 8) {
            uint64_t u = 0;
            for (int j = 7; j >= 0; j--)
                u = u << 8 | pt.data[i + (size_t)j];
            double d;
            memcpy(&d, &u, sizeof d);
            pq_bloom_insert_hash(&b, pq_bloom_hash_double(d));
        }
        values += pt.len / 8;
    }
    assert_int_equal(off, BLOOM_REF_CHUNK_END);
    assert_int_equal(values, 2000);
    assert_int_equal(pq_bloom_write_split(&b, &mine_hdr, &mine_bits), 0);
    /* parquet-mr pads the header plaintext with zeros after the struct */
    assert_true(hdr.len >= mine_hdr.len);
    assert_memory_equal(hdr.data, mine_hdr.data, mine_hdr.len);
    assert_memory_equal(bits.data, mine_bits.data, bits.len);

    pq_bloom_free(&b);
    pq_buf_free(&hdr);
    pq_buf_free(&bits);
    pq_buf_free(&mine_hdr);
    pq_buf_free(&mine_bits);
    pq_buf_free(&pt);
    pq_buf_free(&c.file_aad);
    pq_buf_free(&c.aad);
    pq_crypto_key_free(&c.key);
    free(c.file);
}

/* ---- (c) round trips and tampering --------------------------------------- */

static const uint8_t UNIQUE[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

/* A file context with a known aad_file_unique, so tests can spell AADs. */
static void file_fixed(pq_crypto_file *f, pq_crypto_algorithm alg, const char *prefix,
                       bool store)
{
    assert_int_equal(pq_crypto_file_init(f, alg, prefix, prefix ? strlen(prefix) : 0,
                                         store, NULL), 0);
    memcpy(f->file_unique, UNIQUE, 8);
    memcpy(f->file_aad.data + f->prefix_len, UNIQUE, 8);
}

static void fill_random(uint8_t *p, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rng_next(s);
}

static void test_crypto_gcm_module_round_trip(void **state)
{
    (void)state;
    uint64_t seed = test_seed(__func__), s = seed;
    static const size_t sizes[] = { 0, 1, 15, 16, 17, 4095, 4096, 100003 };
    pq_crypto_key k;
    key_ascii(&k, KF256);
    pq_crypto_file f;
    file_fixed(&f, PQ_AES_GCM_V1, "tbl.part0", true);
    uint8_t *pt = malloc(100003);
    assert_non_null(pt);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        fill_random(pt, n, &s);
        pq_buf mod, aad, back;
        pq_buf_init(&mod);
        pq_buf_init(&aad);
        pq_buf_init(&back);
        assert_int_equal(pq_crypto_encrypt_module(&f, &k, PQ_MODULE_DATA_PAGE, 3, 7, 9, pt, n,
                                                  &mod, NULL), 0);
        assert_int_equal(mod.len, n + PQ_CRYPTO_GCM_OVERHEAD);
        assert_int_equal(le32(mod.data), n + 28);
        assert_int_equal(pq_crypto_module_aad(&aad, f.file_aad.data, f.file_aad.len,
                                              PQ_MODULE_DATA_PAGE, 3, 7, 9, NULL), 0);
        size_t used;
        assert_int_equal(pqt_decrypt_gcm_module(&k, aad.data, aad.len, mod.data, mod.len,
                                                &back, &used, NULL), 0);
        assert_int_equal(used, mod.len);
        assert_int_equal(back.len, n);
        if (n > 0)
            assert_memory_equal(back.data, pt, n);
        pq_buf_free(&mod);
        pq_buf_free(&aad);
        pq_buf_free(&back);
    }
    free(pt);
    pq_crypto_file_free(&f);
    pq_crypto_key_free(&k);
}

/* Any single flipped byte - length, nonce, ciphertext or tag - or a module
 * moved to another page ordinal must fail authentication. */
static void test_crypto_gcm_module_tampering_fails(void **state)
{
    (void)state;
    pq_crypto_key k;
    key_ascii(&k, KF128);
    const uint8_t pt[64] = "page header bytes page header bytes page header bytes ....";
    pq_buf mod, aad, back;
    pq_buf_init(&mod);
    pq_buf_init(&aad);
    pq_buf_init(&back);
    assert_int_equal(pq_crypto_module_aad(&aad, "x", 1, PQ_MODULE_DATA_PAGE_HEADER, 0, 1, 2,
                                          NULL), 0);
    assert_int_equal(pq_crypto_gcm_encrypt(&k, aad.data, aad.len, pt, sizeof pt, &mod, NULL), 0);
    size_t positions[] = { 0, 1, 3, 4, 10, 15, 16, 17, 40, 79, 80, 88, 95 };
    assert_int_equal(mod.len, 96);
    for (size_t i = 0; i < sizeof positions / sizeof positions[0]; i++) {
        for (uint8_t bit = 1; bit != 0; bit <<= 1) {
            mod.data[positions[i]] ^= bit;
            pq_err err = { 0 };
            back.len = 0;
            int rc = pqt_decrypt_gcm_module(&k, aad.data, aad.len, mod.data, mod.len, &back,
                                            NULL, &err);
            if (rc == 0)
                fail_msg("flip of bit 0x%02x at byte %zu went unnoticed", bit, positions[i]);
            assert_int_equal(back.len, 0);
            mod.data[positions[i]] ^= bit;
        }
    }
    assert_int_equal(pqt_decrypt_gcm_module(&k, aad.data, aad.len, mod.data, mod.len, &back,
                                            NULL, NULL), 0);
    /* same module presented as page 3 instead of page 2 */
    pq_buf_reset(&aad);
    assert_int_equal(pq_crypto_module_aad(&aad, "x", 1, PQ_MODULE_DATA_PAGE_HEADER, 0, 1, 3,
                                          NULL), 0);
    assert_int_equal(pqt_decrypt_gcm_module(&k, aad.data, aad.len, mod.data, mod.len, &back,
                                            NULL, NULL), PQ_ECRYPTO);
    pq_buf_free(&mod);
    pq_buf_free(&aad);
    pq_buf_free(&back);
    pq_crypto_key_free(&k);
}

/* AES_GCM_CTR_V1: pages use CTR (length || nonce || ciphertext), page
 * headers GCM. The first keystream block is AES(key, nonce || 00000001),
 * checked here with raw AES-ECB, independently of decrypt.c. */
static void test_crypto_ctr_page_round_trip_and_iv(void **state)
{
    (void)state;
    uint64_t seed = test_seed(__func__), s = seed;
    pq_crypto_key k;
    key_ascii(&k, KF128);
    pq_crypto_file f;
    file_fixed(&f, PQ_AES_GCM_CTR_V1, NULL, false);
    uint8_t pt[1000];
    fill_random(pt, sizeof pt, &s);
    pq_buf mod, back, hdr;
    pq_buf_init(&mod);
    pq_buf_init(&back);
    pq_buf_init(&hdr);
    assert_int_equal(pq_crypto_encrypt_module(&f, &k, PQ_MODULE_DATA_PAGE, 0, 0, 0, pt,
                                              sizeof pt, &mod, NULL), 0);
    assert_int_equal(mod.len, sizeof pt + PQ_CRYPTO_CTR_OVERHEAD);
    assert_int_equal(le32(mod.data), sizeof pt + 12);
    size_t used;
    assert_int_equal(pqt_decrypt_ctr_module(&k, mod.data, mod.len, &back, &used, NULL), 0);
    assert_int_equal(used, mod.len);
    assert_memory_equal(back.data, pt, sizeof pt);

    uint8_t ctr_block[32] = { 0 }, ks[48];
    for (int b = 0; b < 2; b++) { /* counter blocks 1 and 2 */
        memcpy(ctr_block + 16 * b, mod.data + 4, 12);
        ctr_block[16 * b + 15] = (uint8_t)(b + 1);
    }
    EVP_CIPHER_CTX *ecb = EVP_CIPHER_CTX_new();
    int l1, l2;
    assert_int_equal(EVP_EncryptInit_ex(ecb, EVP_aes_128_ecb(), NULL, k.bytes, NULL), 1);
    EVP_CIPHER_CTX_set_padding(ecb, 0);
    assert_int_equal(EVP_EncryptUpdate(ecb, ks, &l1, ctr_block, 32), 1);
    assert_int_equal(EVP_EncryptFinal_ex(ecb, ks + l1, &l2), 1);
    EVP_CIPHER_CTX_free(ecb);
    for (int i = 0; i < 32; i++)
        assert_int_equal(mod.data[16 + i], pt[i] ^ ks[i]);

    /* dictionary pages are pages too; their headers are GCM */
    pq_buf_reset(&mod);
    assert_int_equal(pq_crypto_encrypt_module(&f, &k, PQ_MODULE_DICT_PAGE, 0, 0, 0, pt, 10,
                                              &mod, NULL), 0);
    assert_int_equal(mod.len, 10 + PQ_CRYPTO_CTR_OVERHEAD);
    assert_int_equal(pq_crypto_encrypt_module(&f, &k, PQ_MODULE_DATA_PAGE_HEADER, 0, 0, 0, pt,
                                              10, &hdr, NULL), 0);
    assert_int_equal(hdr.len, 10 + PQ_CRYPTO_GCM_OVERHEAD);
    pq_buf_free(&mod);
    pq_buf_free(&back);
    pq_buf_free(&hdr);
    pq_crypto_file_free(&f);
    pq_crypto_key_free(&k);
}

/* Fresh random nonces: the same plaintext never encrypts the same way. */
static void test_crypto_nonces_differ_between_modules(void **state)
{
    (void)state;
    pq_crypto_key k;
    key_ascii(&k, KF128);
    pq_buf a, b;
    pq_buf_init(&a);
    pq_buf_init(&b);
    assert_int_equal(pq_crypto_gcm_encrypt(&k, NULL, 0, "same", 4, &a, NULL), 0);
    assert_int_equal(pq_crypto_gcm_encrypt(&k, NULL, 0, "same", 4, &b, NULL), 0);
    assert_memory_not_equal(a.data + 4, b.data + 4, 12);
    assert_int_equal(k.uses, 2);
    pq_buf_free(&a);
    pq_buf_free(&b);
    pq_crypto_key_free(&k);
}

static void test_crypto_footer_signature_round_trip(void **state)
{
    (void)state;
    pq_crypto_key k, other;
    key_ascii(&k, KF128);
    key_ascii(&other, "1234567890123451");
    pq_crypto_file f;
    file_fixed(&f, PQ_AES_GCM_V1, "tester", false);
    uint8_t footer[9000];
    for (size_t i = 0; i < sizeof footer; i++)
        footer[i] = (uint8_t)(i * 31);
    uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN];
    assert_int_equal(pq_crypto_sign_footer(&f, &k, footer, sizeof footer, sig, NULL), 0);
    static const uint8_t aad[] = { 't', 'e', 's', 't', 'e', 'r', 1, 2, 3, 4, 5, 6, 7, 8, 0 };
    assert_int_equal(pqt_verify_footer_signature(&k, aad, sizeof aad, footer, sizeof footer,
                                                 sig, NULL), 0);
    assert_int_equal(pqt_verify_footer_signature(&other, aad, sizeof aad, footer,
                                                 sizeof footer, sig, NULL), PQ_ECRYPTO);
    footer[8999] ^= 0x80;
    assert_int_equal(pqt_verify_footer_signature(&k, aad, sizeof aad, footer, sizeof footer,
                                                 sig, NULL), PQ_ECRYPTO);
    footer[8999] ^= 0x80;
    sig[27] ^= 1;
    assert_int_equal(pqt_verify_footer_signature(&k, aad, sizeof aad, footer, sizeof footer,
                                                 sig, NULL), PQ_ECRYPTO);
    pq_crypto_file_free(&f);
    pq_crypto_key_free(&k);
    pq_crypto_key_free(&other);
}

/* ---- (d) AAD bytes from the spec's layout -------------------------------- */

static void expect_aad(pq_crypto_module type, int32_t rg, int32_t col, int32_t page,
                       const uint8_t *suffix, size_t n)
{
    pq_buf out;
    pq_buf_init(&out);
    assert_int_equal(pq_crypto_module_aad(&out, "pre", 3, type, rg, col, page, NULL), 0);
    assert_int_equal(out.len, 3 + n);
    assert_memory_equal(out.data, "pre", 3);
    assert_memory_equal(out.data + 3, suffix, n);
    pq_buf_free(&out);
}

/* 4.4.2: file AAD || type || row group LE16 || column LE16 || page LE16,
 * the last three only for the types that carry them. */
static void test_crypto_module_aad_spec_layout(void **state)
{
    (void)state;
    static const uint8_t footer[] = { 0x00 };
    static const uint8_t colmeta[] = { 0x01, 0x01, 0x00, 0x02, 0x00 };
    static const uint8_t page[] = { 0x02, 0x02, 0x01, 0x03, 0x00, 0xff, 0x7f };
    static const uint8_t dict[] = { 0x03, 0x05, 0x00, 0x06, 0x00 };
    static const uint8_t page_hdr[] = { 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };
    static const uint8_t dict_hdr[] = { 0x05, 0x00, 0x00, 0x01, 0x00 };
    static const uint8_t col_idx[] = { 0x06, 0xff, 0x7f, 0x34, 0x12 };
    static const uint8_t off_idx[] = { 0x07, 0x00, 0x01, 0x00, 0x00 };
    static const uint8_t bloom_hdr[] = { 0x08, 0x02, 0x00, 0x03, 0x00 };
    static const uint8_t bloom_bits[] = { 0x09, 0x02, 0x00, 0x03, 0x00 };
    expect_aad(PQ_MODULE_FOOTER, 9, 9, 9, footer, sizeof footer);
    expect_aad(PQ_MODULE_COLUMN_META, 1, 2, 9, colmeta, sizeof colmeta);
    expect_aad(PQ_MODULE_DATA_PAGE, 0x0102, 3, 32767, page, sizeof page);
    expect_aad(PQ_MODULE_DICT_PAGE, 5, 6, 9, dict, sizeof dict);
    expect_aad(PQ_MODULE_DATA_PAGE_HEADER, 0, 0, 0, page_hdr, sizeof page_hdr);
    expect_aad(PQ_MODULE_DICT_PAGE_HEADER, 0, 1, 9, dict_hdr, sizeof dict_hdr);
    expect_aad(PQ_MODULE_COLUMN_INDEX, 32767, 0x1234, 0, col_idx, sizeof col_idx);
    expect_aad(PQ_MODULE_OFFSET_INDEX, 256, 0, 0, off_idx, sizeof off_idx);
    expect_aad(PQ_MODULE_BLOOM_HEADER, 2, 3, 0, bloom_hdr, sizeof bloom_hdr);
    expect_aad(PQ_MODULE_BLOOM_BITSET, 2, 3, 0, bloom_bits, sizeof bloom_bits);
}

static void test_crypto_module_aad_rejects_out_of_range(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    pq_err err = { 0 };
    assert_int_equal(pq_crypto_module_aad(&out, "p", 1, PQ_MODULE_DATA_PAGE, 32768, 0, 0, &err),
                     PQ_ELIMIT);
    assert_non_null(strstr(err.msg, "row group ordinal 32768"));
    assert_int_equal(pq_crypto_module_aad(&out, "p", 1, PQ_MODULE_COLUMN_INDEX, 0, 40000, 0,
                                          &err), PQ_ELIMIT);
    assert_int_equal(pq_crypto_module_aad(&out, "p", 1, PQ_MODULE_DATA_PAGE_HEADER, 0, 0,
                                          32768, &err), PQ_ELIMIT);
    assert_non_null(strstr(err.msg, "page ordinal"));
    assert_int_equal(pq_crypto_module_aad(&out, "p", 1, PQ_MODULE_DATA_PAGE, 0, -1, 0, &err),
                     PQ_EINVAL);
    assert_int_equal(pq_crypto_module_aad(&out, "p", 1, (pq_crypto_module)10, 0, 0, 0, &err),
                     PQ_EINVAL);
    assert_int_equal(out.len, 0); /* nothing appended on error */
    /* ordinals a type does not carry are not checked */
    assert_int_equal(pq_crypto_module_aad(&out, "p", 1, PQ_MODULE_DICT_PAGE, 0, 0, 99999, &err),
                     0);
    assert_int_equal(pq_crypto_module_aad(&out, "p", 1, PQ_MODULE_FOOTER, -5, 99999, 0, &err),
                     0);
    pq_crypto_key k;
    key_ascii(&k, KF128);
    pq_crypto_file f;
    file_fixed(&f, PQ_AES_GCM_CTR_V1, NULL, false);
    pq_buf_reset(&out);
    assert_int_equal(pq_crypto_encrypt_module(&f, &k, PQ_MODULE_DATA_PAGE, 0, 0, 32768, "x", 1,
                                              &out, &err), PQ_ELIMIT);
    assert_int_equal(out.len, 0);
    pq_crypto_file_free(&f);
    pq_crypto_key_free(&k);
    pq_buf_free(&out);
}

/* ---- Thrift structs ------------------------------------------------------ */

/* Same layout as the reference files' FileCryptoMetaData:
 * 1c 1c [18 len prefix] 28 08 <unique> [11] 00 00 18 02 "kf" 00. */
static void test_crypto_file_crypto_metadata_bytes(void **state)
{
    (void)state;
    pq_crypto_file f;
    pq_buf out;
    pq_buf_init(&out);
    static const uint8_t plain[] = {
        0x1c, 0x1c, 0x28, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 0x00, 0x00, 0x18, 0x02, 'k', 'f', 0x00
    };
    file_fixed(&f, PQ_AES_GCM_V1, NULL, true);
    assert_int_equal(pq_crypto_write_file_crypto_metadata(&f, "kf", 2, &out), 0);
    assert_int_equal(out.len, sizeof plain);
    assert_memory_equal(out.data, plain, sizeof plain);
    pq_crypto_file_free(&f);

    static const uint8_t stored[] = {
        0x1c, 0x2c, 0x18, 0x03, 'a', 'b', 'c', 0x18, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 0x00, 0x00,
        0x00
    };
    pq_buf_reset(&out);
    file_fixed(&f, PQ_AES_GCM_CTR_V1, "abc", true);
    assert_int_equal(pq_crypto_write_file_crypto_metadata(&f, NULL, 0, &out), 0);
    assert_int_equal(out.len, sizeof stored);
    assert_memory_equal(out.data, stored, sizeof stored);
    pq_crypto_file_free(&f);

    static const uint8_t supply[] = { 0x1c, 0x28, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x00, 0x00 };
    pq_buf_reset(&out);
    file_fixed(&f, PQ_AES_GCM_V1, "abc", false);
    assert_int_equal(pq_crypto_write_algorithm(&f, &out), 0);
    assert_int_equal(out.len, sizeof supply);
    assert_memory_equal(out.data, supply, sizeof supply);
    pq_crypto_file_free(&f);
    pq_buf_free(&out);
}

/* Our FileCryptoMetaData parses back with decrypt.c's reader, and a whole
 * PARE footer we encrypt decrypts with the AAD the reader rebuilds. */
static void test_crypto_encrypted_footer_round_trip(void **state)
{
    (void)state;
    pq_crypto_key k;
    key_ascii(&k, KF256);
    pq_crypto_file f;
    assert_int_equal(pq_crypto_file_init(&f, PQ_AES_GCM_V1, "tester", 6, false, NULL), 0);
    pq_buf tail, aad, pt;
    pq_buf_init(&tail);
    pq_buf_init(&aad);
    pq_buf_init(&pt);
    static const uint8_t fmd[] = { 0x15, 0x04, 0x00 }; /* FileMetaData{version 2} */
    assert_int_equal(pq_crypto_write_file_crypto_metadata(&f, "kf", 2, &tail), 0);
    assert_int_equal(pq_crypto_encrypt_module(&f, &k, PQ_MODULE_FOOTER, 0, 0, 0, fmd, 3, &tail,
                                              NULL), 0);
    pqt_crypto_meta m;
    size_t used;
    assert_int_equal(pqt_parse_file_crypto_metadata(tail.data, tail.len, &m, &used, NULL), 0);
    assert_true(m.supply_aad_prefix);
    assert_null(m.aad_prefix);
    assert_int_equal(m.aad_file_unique_len, PQ_CRYPTO_FILE_UNIQUE_LEN);
    assert_int_equal(pqt_file_aad(&m, "tester", 6, &aad, NULL), 0);
    assert_int_equal(pq_crypto_module_aad(&aad, NULL, 0, PQ_MODULE_FOOTER, 0, 0, 0, NULL), 0);
    assert_int_equal(pqt_decrypt_gcm_module(&k, aad.data, aad.len, tail.data + used,
                                            tail.len - used, &pt, NULL, NULL), 0);
    assert_int_equal(pt.len, 3);
    assert_memory_equal(pt.data, fmd, 3);
    pq_buf_free(&tail);
    pq_buf_free(&aad);
    pq_buf_free(&pt);
    pq_crypto_file_free(&f);
    pq_crypto_key_free(&k);
}

static void test_crypto_column_crypto_metadata_bytes(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    pq_thrift t;
    pq_thrift_init(&t, &out);
    const char *path[] = { "a", "b" };
    pq_thrift_struct_begin(&t);
    pq_crypto_thrift_column_crypto(&t, 8, NULL, 0, NULL, 0);
    pq_thrift_struct_end(&t);
    pq_thrift_struct_begin(&t);
    pq_crypto_thrift_column_crypto(&t, 8, path, 2, "kc1", 3);
    pq_thrift_struct_end(&t);
    assert_int_equal(pq_thrift_error(&t), 0);
    static const uint8_t want[] = {
        0x8c, 0x1c, 0x00, 0x00, 0x00,                              /* footer key */
        0x8c, 0x2c, 0x19, 0x28, 0x01, 'a', 0x01, 'b',              /* column key */
        0x18, 0x03, 'k', 'c', '1', 0x00, 0x00, 0x00
    };
    assert_int_equal(out.len, sizeof want);
    assert_memory_equal(out.data, want, sizeof want);
    pq_buf_free(&out);
}

/* ---- key usage limit ----------------------------------------------------- */

static void test_crypto_key_invocation_limit(void **state)
{
    (void)state;
    pq_crypto_key k;
    key_ascii(&k, KF128);
    assert_int_equal(k.max_uses, UINT64_C(1) << 32);
    pq_buf out;
    pq_buf_init(&out);
    pq_err err = { 0 };
    uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN];
    pq_crypto_key_set_limit(&k, 3);
    assert_int_equal(pq_crypto_gcm_encrypt(&k, NULL, 0, "a", 1, &out, &err), 0);
    assert_int_equal(pq_crypto_ctr_encrypt(&k, "a", 1, &out, &err), 0);
    assert_int_equal(pq_crypto_gcm_sign(&k, NULL, 0, "a", 1, sig, &err), 0);
    size_t len = out.len;
    assert_int_equal(pq_crypto_gcm_encrypt(&k, NULL, 0, "a", 1, &out, &err), PQ_ELIMIT);
    assert_non_null(strstr(err.msg, "new key"));
    assert_int_equal(pq_crypto_ctr_encrypt(&k, "a", 1, &out, &err), PQ_ELIMIT);
    assert_int_equal(pq_crypto_gcm_sign(&k, NULL, 0, "a", 1, sig, &err), PQ_ELIMIT);
    assert_int_equal(out.len, len);
    /* the default budget is the spec's 2^32 and cannot be raised */
    pq_crypto_key_set_limit(&k, UINT64_MAX);
    assert_int_equal(k.max_uses, UINT64_C(1) << 32);
    k.uses = (UINT64_C(1) << 32) - 1;
    assert_int_equal(pq_crypto_gcm_encrypt(&k, NULL, 0, "a", 1, &out, &err), 0);
    assert_int_equal(pq_crypto_gcm_encrypt(&k, NULL, 0, "a", 1, &out, &err), PQ_ELIMIT);
    assert_non_null(strstr(err.msg, "4294967296"));
    pq_buf_free(&out);
    pq_crypto_key_free(&k);
}

/* ---- (e) keys and key files ---------------------------------------------- */

static char *write_temp(const char *content, size_t n)
{
    char *path = strdup("/tmp/pq_test_keyXXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, n), (ssize_t)n);
    close(fd);
    return path;
}

static int load_text(const char *text, pq_crypto_key *k, pq_err *err, char **path_out)
{
    char *path = write_temp(text, strlen(text));
    int rc = pq_crypto_key_load_hex(k, path, err);
    unlink(path);
    if (path_out != NULL)
        *path_out = path;
    else
        free(path);
    return rc;
}

static void test_crypto_key_load_hex_sizes(void **state)
{
    (void)state;
    pq_crypto_key k;
    static const uint8_t want[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                      0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
    assert_int_equal(load_text("00112233445566778899aabbccddeeff\n", &k, NULL, NULL), 0);
    assert_int_equal(k.len, 16);
    assert_memory_equal(k.bytes, want, 16);
    pq_crypto_key_free(&k);
    assert_int_equal(load_text("00112233445566778899AABBCCDDEEFF0011223344556677\r\n", &k,
                               NULL, NULL), 0);
    assert_int_equal(k.len, 24);
    assert_memory_equal(k.bytes, want, 16);
    pq_crypto_key_free(&k);
    assert_int_equal(load_text("00112233445566778899aabbccddeeff"
                               "00112233445566778899aabbccddeeff", &k, NULL, NULL), 0);
    assert_int_equal(k.len, 32);
    pq_crypto_key_free(&k);
    for (size_t i = 0; i < sizeof k.bytes; i++) /* wiped */
        assert_int_equal(k.bytes[i], 0);
    assert_int_equal(k.len, 0);
}

static void test_crypto_key_load_hex_errors_name_file_not_key(void **state)
{
    (void)state;
    pq_crypto_key k;
    pq_err err = { 0 };
    char *path;
    assert_int_equal(load_text("00112233445566778899aabbccddee\n", &k, &err, &path), PQ_EINVAL);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "32, 48 or 64 hex digits"));
    assert_null(strstr(err.msg, "0011223344"));
    free(path);
    assert_int_equal(load_text("0011g233445566778899aabbccddeeff\n", &k, &err, &path), PQ_EINVAL);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "character 5 is not a hexadecimal digit"));
    assert_null(strstr(err.msg, "0011g2"));
    free(path);
    assert_int_equal(load_text("", &k, &err, NULL), PQ_EINVAL);
    assert_int_equal(load_text("00112233445566778899aabbccddeeff 0011223344556677\n", &k, &err,
                               NULL), PQ_EINVAL);
    assert_int_equal(load_text("00112233445566778899aabbccddeeff00112233445566778899aabbccddeef"
                               "fff\n", &k, &err, NULL), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "more than"));
    assert_int_equal(load_text("00112233445566778899aabbccddeeff\n\n", &k, &err, NULL),
                     PQ_EINVAL);
    assert_int_equal(pq_crypto_key_load_hex(&k, "/nonexistent/dir/footer.key", &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent/dir/footer.key"));
    assert_int_equal(pq_crypto_key_init(&k, "short", 5, "cli", &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "16, 24 or 32"));
    /* an unusable key refuses to encrypt rather than crash */
    pq_buf out;
    pq_buf_init(&out);
    assert_int_equal(pq_crypto_gcm_encrypt(&k, NULL, 0, "a", 1, &out, &err), PQ_ESTATE);
    pq_buf_free(&out);
    pq_crypto_key_free(&k);
}

/* ---- (f) keys shared by threads --------------------------------------------- */

#define SHARE_THREADS 4
#define SHARE_BUDGET 6000

typedef struct share_run {
    pq_crypto_key *k;
    const pq_crypto_file *f;
    const pq_buf *hdr_aad;       /* AAD of the GCM modules, built the long way */
    size_t ok;                   /* modules encrypted and checked */
    int rc;                      /* the error that ended the run */
    char bad[600];               /* a module that did not decrypt */
} share_run;

/* Alternates CTR page modules and GCM header modules (whose AAD the
 * writer passes to GCM in two parts) until the key's budget is spent;
 * decrypts each with the test reader's own code. */
static void *share_thread(void *arg)
{
    share_run *r = arg;
    pq_buf out, back;
    pq_buf_init(&out);
    pq_buf_init(&back);
    uint8_t pt[300];
    for (;; r->ok++) {
        size_t n = 1 + (r->ok * 7) % sizeof pt;
        memset(pt, (int)(r->ok & 0xff), n);
        pq_buf_reset(&out);
        pq_buf_reset(&back);
        pq_err err = {0};
        bool page = r->ok % 2 == 0;
        r->rc = pq_crypto_encrypt_module(r->f, r->k, page ? PQ_MODULE_DATA_PAGE
                                                          : PQ_MODULE_DATA_PAGE_HEADER,
                                         1, 2, 3, pt, n, &out, &err);
        if (r->rc != 0)
            break;
        int rc = page ? pqt_decrypt_ctr_module(r->k, out.data, out.len, &back, NULL, &err)
                      : pqt_decrypt_gcm_module(r->k, r->hdr_aad->data, r->hdr_aad->len,
                                               out.data, out.len, &back, NULL, &err);
        if (rc != 0 || back.len != n || memcmp(back.data, pt, n) != 0) {
            snprintf(r->bad, sizeof r->bad, "module %zu (%s): %s", r->ok,
                     page ? "CTR" : "GCM", rc ? err.msg : "wrong plaintext");
            break;
        }
    }
    pq_buf_free(&out);
    pq_buf_free(&back);
    return NULL;
}

/* Concurrent row-group encodes share a file's keys: every module is
 * sound, and together they spend exactly the budget, never more. */
static void test_crypto_key_shared_by_threads_spends_exactly_its_budget(void **state)
{
    (void)state;
    pq_crypto_key k;
    key_ascii(&k, KF256);
    pq_crypto_key_set_limit(&k, SHARE_BUDGET);
    pq_crypto_file f;
    pq_err err = {0};
    assert_int_equal(pq_crypto_file_init(&f, PQ_AES_GCM_CTR_V1, "pfx", 3, true, &err), 0);
    pq_buf aad;
    pq_buf_init(&aad);
    assert_int_equal(pq_crypto_module_aad(&aad, f.file_aad.data, f.file_aad.len,
                                          PQ_MODULE_DATA_PAGE_HEADER, 1, 2, 3, &err), 0);
    share_run runs[SHARE_THREADS];
    pthread_t t[SHARE_THREADS];
    for (int i = 0; i < SHARE_THREADS; i++) {
        runs[i] = (share_run){.k = &k, .f = &f, .hdr_aad = &aad};
        assert_int_equal(pthread_create(&t[i], NULL, share_thread, &runs[i]), 0);
    }
    size_t total = 0;
    for (int i = 0; i < SHARE_THREADS; i++) {
        pthread_join(t[i], NULL);
        if (runs[i].bad[0])
            fail_msg("thread %d: %s", i, runs[i].bad);
        assert_int_equal(runs[i].rc, PQ_ELIMIT);
        total += runs[i].ok;
    }
    assert_int_equal(total, SHARE_BUDGET);
    assert_int_equal(k.uses, SHARE_BUDGET);
    pq_buf_free(&aad);
    pq_crypto_file_free(&f);
    pq_crypto_key_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crypto_decrypts_reference_encrypted_footers),
        cmocka_unit_test(test_crypto_reference_footer_wrong_key_fails),
        cmocka_unit_test(test_crypto_reference_footer_needs_right_aad_prefix),
        cmocka_unit_test(test_crypto_verifies_reference_plaintext_footer_signature),
        cmocka_unit_test(test_crypto_thrift_reader_rejects_truncated_and_corrupt),
        cmocka_unit_test(test_crypto_reference_ctr_page_matches_gcm_page),
        cmocka_unit_test(test_crypto_reference_encrypted_bloom_filter_matches_ours),
        cmocka_unit_test(test_crypto_gcm_module_round_trip),
        cmocka_unit_test(test_crypto_gcm_module_tampering_fails),
        cmocka_unit_test(test_crypto_ctr_page_round_trip_and_iv),
        cmocka_unit_test(test_crypto_nonces_differ_between_modules),
        cmocka_unit_test(test_crypto_footer_signature_round_trip),
        cmocka_unit_test(test_crypto_module_aad_spec_layout),
        cmocka_unit_test(test_crypto_module_aad_rejects_out_of_range),
        cmocka_unit_test(test_crypto_file_crypto_metadata_bytes),
        cmocka_unit_test(test_crypto_encrypted_footer_round_trip),
        cmocka_unit_test(test_crypto_column_crypto_metadata_bytes),
        cmocka_unit_test(test_crypto_key_invocation_limit),
        cmocka_unit_test(test_crypto_key_shared_by_threads_spends_exactly_its_budget),
        cmocka_unit_test(test_crypto_key_load_hex_sizes),
        cmocka_unit_test(test_crypto_key_load_hex_errors_name_file_not_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
