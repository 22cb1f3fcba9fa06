/* test_crypto.c - writer/crypto.c and tests/support/decrypt.c against
 * Encryption.md: GCM/CTR module round trips and tamper detection, nonces,
 * footer signatures, AAD and Thrift bytes written out from the spec.
 * Reference files: test_crypto_reference.c; keys: test_crypto_keys.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "buf.h"
#include "crypto.h"
#include "decode.h"
#include "decrypt.h"
#include "err.h"
#include "thrift.h"

/* README 2c: the documented keys are ASCII strings, not byte values. */
static const char KF128[] = "0123456789012345";
static const char KF256[] = "01234567890123456789012345678901";

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void key_ascii(pq_crypto_key *k, const char *ascii)
{
    assert_int_equal(pq_crypto_key_init(k, ascii, strlen(ascii), "test", NULL), 0);
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
        p[i] = (uint8_t)pqt_splitmix64(s);
}

static void test_crypto_gcm_module_round_trip(void **state)
{
    (void)state;
    uint64_t seed = pqt_test_seed(__func__, 0xC0FFEEull), s = seed;
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
    uint64_t seed = pqt_test_seed(__func__, 0xC0FFEEull), s = seed;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
