/* test_crypto_reference.c - writer/crypto.c and tests/support/decrypt.c
 * against the encrypted parquet-testing reference files (Encryption.md):
 * their encrypted footers decrypted, plaintext-footer signatures verified,
 * a CTR page decrypted like its GCM twin, and their encrypted bloom filter
 * compared with ours. The Thrift reader's rejection of truncated and
 * corrupt FileCryptoMetaData too. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom.h"
#include "buf.h"
#include "crypto.h"
#include "decode.h"
#include "decrypt.h"
#include "err.h"
#include "testdata.h"
#include "tmpdir.h"

#define DATA_DIR "parquet-testing/data"

/* README 2c: the documented keys are ASCII strings, not byte values. */
static const char KF128[] = "0123456789012345";
static const char KF256[] = "01234567890123456789012345678901";

/* A reference file whole (name: under DATA_DIR); it must hold at least the
 * two magics and a footer length. */
static uint8_t *read_file(const char *name, size_t *len)
{
    const char *path = pqt_testdata_path(DATA_DIR, name);
    uint8_t *p = pqt_read_file(path, len);
    if (p == NULL)
        fail_msg("cannot open %s", path);
    assert_true(*len > 12);
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
    { "uniform_encryption.parquet.encrypted", KF128, NULL, PQ_AES_GCM_V1 },
    { "encrypt_columns_and_footer.parquet.encrypted", KF128, NULL, PQ_AES_GCM_V1 },
    { "encrypt_columns_and_footer_aad.parquet.encrypted", KF128, NULL, PQ_AES_GCM_V1 },
    { "encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", KF128,
      "tester", PQ_AES_GCM_V1 },
    { "encrypt_columns_and_footer_ctr.parquet.encrypted", KF128, NULL, PQ_AES_GCM_CTR_V1 },
    { "encrypt_columns_and_footer_bloom_filter.parquet.encrypted", KF128, NULL,
      PQ_AES_GCM_V1 },
    { "aes256/uniform_encryption.parquet.encrypted", KF256, NULL, PQ_AES_GCM_V1 },
    { "aes256/encrypt_columns_and_footer.parquet.encrypted", KF256, NULL, PQ_AES_GCM_V1 },
    { "aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", KF256,
      "tester", PQ_AES_GCM_V1 },
    { "aes256/encrypt_columns_and_footer_ctr.parquet.encrypted", KF256, NULL,
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
    const char *f128 = "encrypt_columns_plaintext_footer.parquet.encrypted";
    const char *f256 = "aes256/encrypt_columns_plaintext_footer.parquet.encrypted";
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
    uint64_t seed = pqt_test_seed(__func__, 0xC0FFEEull), s = seed;
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

    file = read_file("encrypt_columns_plaintext_footer.parquet.encrypted", &size);
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
            copy[pqt_splitmix64(&s) % fmd_len] = (uint8_t)pqt_splitmix64(&s);
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
    ref_dict_page("encrypt_columns_and_footer.parquet.encrypted", 2117, false, &gcm);
    ref_dict_page("encrypt_columns_and_footer_ctr.parquet.encrypted", 2084, true, &ctr);
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
#define BLOOM_REF "encrypt_columns_and_footer_bloom_filter.parquet.encrypted"
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

int main(void)
{
    pqt_testdata_require("test_crypto_reference", DATA_DIR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crypto_decrypts_reference_encrypted_footers),
        cmocka_unit_test(test_crypto_reference_footer_wrong_key_fails),
        cmocka_unit_test(test_crypto_reference_footer_needs_right_aad_prefix),
        cmocka_unit_test(test_crypto_verifies_reference_plaintext_footer_signature),
        cmocka_unit_test(test_crypto_thrift_reader_rejects_truncated_and_corrupt),
        cmocka_unit_test(test_crypto_reference_ctr_page_matches_gcm_page),
        cmocka_unit_test(test_crypto_reference_encrypted_bloom_filter_matches_ours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
