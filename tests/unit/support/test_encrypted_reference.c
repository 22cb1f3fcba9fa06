/* test_encrypted_reference.c - tests/support/pqcrypt.c against every
 * encrypted parquet-testing reference file (testdata README 2c,
 * data/UPSTREAM_README.md "Encrypted Files"): each one is opened with the
 * documented ASCII keys, its footer decrypted or its signature verified,
 * every module of every column decrypted (pages, dictionary pages, column
 * and offset indexes, bloom filter header and bitset, encrypted column
 * metadata), and every value compared with the generator's formula.
 *
 * Expected values: the 8-column files (50 rows) were written by the
 * writer in Arrow's cpp/src/parquet/encryption/test_encryption_util.cc
 * (FileEncryptor::EncryptFile; the aes256 ones by parquet-mr with the same
 * data, per UPSTREAM_README). Row i holds
 *   boolean_field  i % 2 == 0
 *   int32_field    i                       (TIME_MILLIS)
 *   int64_field    a list of two: (2i) * 10^12, (2i + 1) * 10^12
 *   int96_field    uint32 words i, i + 1, i + 2
 *   float_field    (float)i * 1.1f
 *   double_field   i * 1.1111111
 *   ba_field       "parquet" + 3 digits of i for even i, null for odd i
 *   flba_field     10 bytes, each (char)i
 * The bloom filter file (parquet-mr, 2000 rows) is not described upstream;
 * its values follow name = "name_" + i, int32_field = i, double_field =
 * i + 0.5, float_field = i + 0.25, which this test checks for every row
 * (so the formula is verified, not assumed). Every file of the same data
 * must also decode to identical levels and bytes (cross-file test).
 *
 * external_key_material_java needs a KMS emulation (PKMT1 key material,
 * double wrapping): skipped with that reason. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "crypto.h"
#include "err.h"
#include "pqcrypt.h"
#include "testdata.h"

/* The reference files, under the test data directory (testdata.h). */
#define DATA_DIR "parquet-testing/data"
#define DATA(name) pqt_testdata_path(DATA_DIR, name)

/* ---- keys (README 2c: the documented digits are ASCII characters) -------- */

typedef struct keyset {
    pq_crypto_key k[9];
    pqc_key ids[9];
    size_t n;
} keyset;

static const char *const IDS[9] = { "kf", "kc1", "kc2", "kc3", "kc4", "kc5", "kc6", "kc7", "kc8" };

static void keys_init(keyset *ks, bool aes256)
{
    memset(ks, 0, sizeof *ks);
    for (int i = 0; i < 9; i++) {
        char key[33];
        if (aes256 && i == 0)
            snprintf(key, sizeof key, "01234567890123456789012345678901");
        else if (aes256)
            snprintf(key, sizeof key, "1234567890123456789012345678901%c", (char)('0' + i + 1));
        else if (i == 0)
            snprintf(key, sizeof key, "0123456789012345");
        else if (i <= 2)
            snprintf(key, sizeof key, "123456789012345%c", (char)('0' + i - 1));
        else
            break; /* 128-bit files use kf, kc1, kc2 only */
        assert_int_equal(pq_crypto_key_init(&ks->k[i], key, strlen(key), IDS[i], NULL), 0);
        ks->ids[i] = (pqc_key){ IDS[i], &ks->k[i] };
        ks->n = (size_t)i + 1;
    }
}

static void keys_free(keyset *ks)
{
    for (size_t i = 0; i < 9; i++)
        pq_crypto_key_free(&ks->k[i]);
}

/* ---- the reference files --------------------------------------------------- */

typedef struct ref {
    const char *path;
    bool aes256;
    bool pare;
    int algorithm;
    const char *aad;          /* prefix "tester" or NULL */
    bool aad_stored;
    bool uniform;             /* every column with the footer key */
} ref;

static const ref REFS[] = {
    { "uniform_encryption.parquet.encrypted", false, true, PQ_AES_GCM_V1, NULL, false, true },
    { "encrypt_columns_and_footer.parquet.encrypted", false, true, PQ_AES_GCM_V1, NULL, false, false },
    { "encrypt_columns_plaintext_footer.parquet.encrypted", false, false, PQ_AES_GCM_V1, NULL, false, false },
    { "encrypt_columns_and_footer_aad.parquet.encrypted", false, true, PQ_AES_GCM_V1, "tester", true, false },
    { "encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", false, true, PQ_AES_GCM_V1, "tester", false, false },
    { "encrypt_columns_and_footer_ctr.parquet.encrypted", false, true, PQ_AES_GCM_CTR_V1, NULL, false, false },
    { "aes256/uniform_encryption.parquet.encrypted", true, true, PQ_AES_GCM_V1, NULL, false, true },
    { "aes256/encrypt_columns_and_footer.parquet.encrypted", true, true, PQ_AES_GCM_V1, NULL, false, false },
    { "aes256/encrypt_columns_plaintext_footer.parquet.encrypted", true, false, PQ_AES_GCM_V1, NULL, false, false },
    { "aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", true, true, PQ_AES_GCM_V1, "tester", false, false },
    { "aes256/encrypt_columns_and_footer_ctr.parquet.encrypted", true, true, PQ_AES_GCM_CTR_V1, NULL, false, false },
};
#define NREFS (sizeof REFS / sizeof REFS[0])

static int open_ref(pqc_file *f, const ref *r, keyset *ks, pq_err *err)
{
    pqc_opts o = { .keys = ks->ids, .n_keys = ks->n, .aad_prefix = r->aad,
                   .aad_prefix_len = r->aad ? strlen(r->aad) : 0 };
    return pqc_open(f, DATA(r->path), &o, err);
}

/* ---- expected values -------------------------------------------------------- */

static const pqc_column *col(const pqc_file *f, const char *path)
{
    const pqc_column *c = pqc_column_by_path(f, path);
    if (c == NULL)
        fail_msg("%s: no column %s", f->name, path);
    return c;
}

static void expect_val(const pqc_column *c, size_t i, const void *want, size_t len,
                         size_t row)
{
    size_t got_len;
    const uint8_t *got = pqc_value(c, i, &got_len);
    if (got_len != len || memcmp(got, want, len) != 0)
        fail_msg("%s row %zu (value %zu): %zu bytes differ from the expected %zu", c->path, row,
                 i, got_len, len);
}

static void expect_flat(const pqc_column *c, size_t rows)
{
    assert_int_equal(c->n_levels, rows);
    for (size_t i = 0; i < rows; i++) {
        assert_int_equal(c->rep[i], 0);
        assert_int_equal(c->def[i], c->max_def);
    }
    assert_int_equal(c->values.n, rows);
}

/* The 8-column, 50-row data set (see the file comment). */
static void check_standard(const pqc_file *f, bool have_encrypted)
{
    const size_t rows = 50;
    assert_int_equal(f->num_rows, (int64_t)rows);
    assert_int_equal(f->ncols, 8);

    const pqc_column *c = col(f, "boolean_field");
    expect_flat(c, rows);
    for (size_t i = 0; i < rows; i++) {
        uint8_t b = i % 2 == 0;
        expect_val(c, i, &b, 1, i);
    }
    c = col(f, "int32_field");
    expect_flat(c, rows);
    for (size_t i = 0; i < rows; i++) {
        int32_t v = (int32_t)i;
        expect_val(c, i, &v, 4, i);
    }
    /* parquet-cpp wrote a repeated int64 leaf; parquet-mr a 3-level LIST */
    c = pqc_column_by_path(f, "int64_field");
    if (c == NULL)
        c = col(f, "int64_field.list.element");
    assert_int_equal(c->max_rep, 1);
    assert_int_equal(c->n_levels, 2 * rows);
    assert_int_equal(c->values.n, 2 * rows);
    for (size_t i = 0; i < 2 * rows; i++) {
        assert_int_equal(c->rep[i], i % 2 == 0 ? 0 : 1);
        assert_int_equal(c->def[i], c->max_def);
        int64_t v = (int64_t)i * 1000 * 1000 * 1000 * 1000;
        expect_val(c, i, &v, 8, i / 2);
    }
    c = col(f, "int96_field");
    expect_flat(c, rows);
    for (size_t i = 0; i < rows; i++) {
        uint32_t w[3] = { (uint32_t)i, (uint32_t)i + 1, (uint32_t)i + 2 };
        expect_val(c, i, w, 12, i);
    }
    c = col(f, "ba_field");
    assert_int_equal(c->n_levels, rows);
    assert_int_equal(c->values.n, rows / 2);
    for (size_t i = 0; i < rows; i++) {
        assert_int_equal(c->def[i], i % 2 == 0 ? 1 : 0);
        if (i % 2 == 0) {
            char s[16];
            snprintf(s, sizeof s, "parquet%03zu", i);
            expect_val(c, i / 2, s, 10, i);
        }
    }
    c = col(f, "flba_field");
    expect_flat(c, rows);
    assert_int_equal(c->type_length, 10);
    for (size_t i = 0; i < rows; i++) {
        uint8_t v[10];
        memset(v, (int)i, sizeof v);
        expect_val(c, i, v, 10, i);
    }
    c = col(f, "float_field");
    if (!have_encrypted) {
        assert_true(c->skipped);
        assert_true(col(f, "double_field")->skipped);
        return;
    }
    expect_flat(c, rows);
    for (size_t i = 0; i < rows; i++) {
        float v = (float)i * 1.1f;
        expect_val(c, i, &v, 4, i);
    }
    c = col(f, "double_field");
    expect_flat(c, rows);
    for (size_t i = 0; i < rows; i++) {
        double v = (double)i * 1.1111111;
        expect_val(c, i, &v, 8, i);
    }
}

static size_t count_modules(const pqc_file *f, int type, bool gcm)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nmodules; i++)
        n += f->modules[i].type == type && f->modules[i].gcm == gcm;
    return n;
}

/* Which columns are encrypted with which key, as UPSTREAM_README says. */
static void check_mode(const pqc_file *f, const ref *r)
{
    assert_int_equal(f->encrypted_footer, r->pare);
    assert_int_equal(f->meta_mismatches, 0);
    assert_int_equal(f->signed_footer, !r->pare);
    if (!r->pare)
        assert_true(f->signature_verified);
    assert_int_equal(f->algorithm, r->algorithm);
    assert_int_equal(f->aad_prefix_stored, r->aad_stored);
    assert_int_equal(f->supply_aad_prefix, r->aad != NULL && !r->aad_stored);
    for (size_t i = 0; i < f->ncols; i++) {
        const pqc_column *c = &f->cols[i];
        const char *want = NULL; /* key id, "" = footer key, NULL = plaintext */
        if (r->uniform)
            want = "";
        else if (strcmp(c->path, "double_field") == 0)
            want = "kc1";
        else if (strcmp(c->path, "float_field") == 0)
            want = "kc2";
        else if (r->aes256) /* aes256: every column has its own key */
            want = strstr(c->path, "boolean") ? "kc3" : strstr(c->path, "int32") ? "kc4"
                 : strstr(c->path, "flba") ? "kc6" : strstr(c->path, "ba_") ? "kc5"
                 : strstr(c->path, "int64") ? "kc7" : "kc8";
        if (want == NULL) {
            assert_false(c->encrypted);
            continue;
        }
        assert_true(c->encrypted);
        assert_int_equal(c->footer_key, want[0] == '\0');
        assert_string_equal(c->key_id, want);
        /* column-key columns carry encrypted ColumnMetaData (5.3) */
        assert_int_equal(c->encmeta, want[0] != '\0');
        assert_int_equal(c->offset_indexes, 1);
        /* Arrow writes no ColumnIndex for INT96 (undefined sort order) */
        assert_int_equal(c->column_indexes, c->type == PQ_INT96 ? 0 : 1);
    }
    /* page bodies: GCM, or CTR under AES_GCM_CTR_V1; headers always GCM */
    bool ctr = r->algorithm == PQ_AES_GCM_CTR_V1;
    assert_true(count_modules(f, PQ_MODULE_DATA_PAGE, !ctr) > 0);
    assert_int_equal(count_modules(f, PQ_MODULE_DATA_PAGE, ctr), 0);
    assert_true(count_modules(f, PQ_MODULE_DATA_PAGE_HEADER, true) > 0);
    assert_true(count_modules(f, PQ_MODULE_OFFSET_INDEX, true) > 0);
}

/* ---- tests ------------------------------------------------------------------ */

static void test_reference_every_file_decrypts_to_the_documented_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < NREFS; i++) {
        keyset ks;
        keys_init(&ks, REFS[i].aes256);
        pqc_file f;
        pq_err err = { 0 };
        int rc = open_ref(&f, &REFS[i], &ks, &err);
        if (rc != 0)
            fail_msg("%s: %s", REFS[i].path, err.msg);
        check_standard(&f, true);
        check_mode(&f, &REFS[i]);
        printf("[ ok       ] %-70s %zu modules decrypted (%zu with zero padding after the "
               "Thrift struct)\n", REFS[i].path, f.nmodules, f.padded_modules);
        pqc_close(&f);
        keys_free(&ks);
    }
}

/* Every file holds the same data: levels and value bytes must match the
 * first file exactly, whatever the mode, key size and writer. */
static void test_reference_every_mode_decodes_identically(void **state)
{
    (void)state;
    keyset ks0;
    keys_init(&ks0, false);
    pqc_file f0;
    pq_err err = { 0 };
    assert_int_equal(open_ref(&f0, &REFS[0], &ks0, &err), 0);
    for (size_t i = 1; i < NREFS; i++) {
        keyset ks;
        keys_init(&ks, REFS[i].aes256);
        pqc_file f;
        if (open_ref(&f, &REFS[i], &ks, &err) != 0)
            fail_msg("%s: %s", REFS[i].path, err.msg);
        for (size_t c = 0; c < f0.ncols; c++) {
            const pqc_column *a = &f0.cols[c], *b = &f.cols[c];
            if (strncmp(a->path, b->path, strlen(a->path)) != 0)
                fail_msg("%s: column %zu is %s, not %s", REFS[i].path, c, b->path, a->path);
            assert_int_equal(a->n_levels, b->n_levels);
            assert_memory_equal(a->rep, b->rep, a->n_levels * sizeof *a->rep);
            /* int64_field: a repeated leaf (max def 1) in parquet-cpp's
             * files, a LIST (max def 2) in parquet-mr's: compare which
             * slots hold a value */
            for (size_t k = 0; k < a->n_levels; k++)
                assert_int_equal(a->def[k] == a->max_def, b->def[k] == b->max_def);
            if (a->max_def == b->max_def)
                assert_memory_equal(a->def, b->def, a->n_levels * sizeof *a->def);
            if (!pqt_bytes_equal(&a->values, &b->values))
                fail_msg("%s: %s values differ from %s", REFS[i].path, a->path,
                         REFS[0].path);
        }
        pqc_close(&f);
        keys_free(&ks);
    }
    pqc_close(&f0);
    keys_free(&ks0);
}

static void test_reference_wrong_footer_key_fails_on_the_footer(void **state)
{
    (void)state;
    for (size_t i = 0; i < NREFS; i++) {
        keyset ks;
        keys_init(&ks, REFS[i].aes256);
        pq_crypto_key wrong;
        char bad[33];
        snprintf(bad, sizeof bad, "%s", REFS[i].aes256 ? "01234567890123456789012345678902"
                                                       : "0123456789012346");
        assert_int_equal(pq_crypto_key_init(&wrong, bad, strlen(bad), "wrong", NULL), 0);
        pqc_opts o = { .footer_key = &wrong, .keys = ks.ids, .n_keys = ks.n,
                       .aad_prefix = REFS[i].aad,
                       .aad_prefix_len = REFS[i].aad ? strlen(REFS[i].aad) : 0 };
        pqc_file f;
        pq_err err = { 0 };
        int rc = pqc_open(&f, DATA(REFS[i].path), &o, &err);
        if (rc == 0)
            fail_msg("%s opened with a wrong footer key", REFS[i].path);
        assert_int_equal(rc, PQ_ECRYPTO);
        assert_int_equal(f.fail_module, PQ_MODULE_FOOTER);
        pqc_close(&f);
        pq_crypto_key_free(&wrong);
        keys_free(&ks);
    }
}

/* A wrong column key fails on the first module of that column: its
 * ColumnMetaData. */
static void test_reference_wrong_column_key_fails_on_that_column(void **state)
{
    (void)state;
    keyset ks;
    keys_init(&ks, false);
    pq_crypto_key wrong;
    assert_int_equal(pq_crypto_key_init(&wrong, "1234567890123459", 16, "wrong", NULL), 0);
    ks.ids[1].key = &wrong; /* kc1: double_field */
    pqc_file f;
    pq_err err = { 0 };
    int rc = open_ref(&f, &REFS[1], &ks, &err);
    assert_int_equal(rc, PQ_ECRYPTO);
    assert_int_equal(f.fail_module, PQ_MODULE_COLUMN_META);
    assert_int_equal(f.fail_col, 5); /* double_field */
    pqc_close(&f);
    pq_crypto_key_free(&wrong);
    keys_free(&ks);
}

static void test_reference_aad_prefix_must_be_supplied_and_right(void **state)
{
    (void)state;
    for (size_t i = 0; i < NREFS; i++) {
        if (REFS[i].aad == NULL)
            continue;
        keyset ks;
        keys_init(&ks, REFS[i].aes256);
        ref r = REFS[i];
        pqc_file f;
        pq_err err = { 0 };
        r.aad = "tester2";
        assert_int_equal(open_ref(&f, &r, &ks, &err), PQ_ECRYPTO);
        pqc_close(&f);
        r.aad = NULL;
        int rc = open_ref(&f, &r, &ks, &err);
        if (REFS[i].aad_stored) {
            /* stored prefix: nothing to supply */
            if (rc != 0)
                fail_msg("%s: %s", r.path, err.msg);
            check_standard(&f, true);
        } else {
            assert_int_equal(rc, PQ_ECRYPTO);
            assert_non_null(strstr(err.msg, "supply_aad_prefix"));
        }
        pqc_close(&f);
        keys_free(&ks);
    }
}

/* A reader without keys reads the plaintext columns of a plaintext-footer
 * file (the legacy-reader case of Encryption.md 5.5); the encrypted
 * columns are skipped and the signature left unverified. */
static void test_reference_plaintext_footer_readable_without_keys(void **state)
{
    (void)state;
    pqc_opts none = { .allow_missing_keys = true };
    pqc_file f;
    pq_err err = { 0 };
    if (pqc_open(&f, DATA(REFS[2].path), &none, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(f.signed_footer);
    assert_false(f.signature_verified);
    check_standard(&f, false);
    assert_int_equal(f.nmodules, 0);
    pqc_close(&f);
    /* aes256: every column is encrypted, so everything is skipped */
    if (pqc_open(&f, DATA(REFS[8].path), &none, &err) != 0)
        fail_msg("%s", err.msg);
    for (size_t c = 0; c < f.ncols; c++)
        assert_true(f.cols[c].skipped);
    pqc_close(&f);
    /* and without allow_missing_keys a missing key is an error */
    pqc_opts strict = { 0 };
    assert_int_equal(pqc_open(&f, DATA(REFS[2].path), &strict, &err), PQ_ECRYPTO);
    pqc_close(&f);
}

/* encrypt_columns_and_footer_bloom_filter: four columns, 2000 rows in
 * several pages; double_field and float_field encrypted with bloom
 * filters (header and bitset modules) that hold every value. */
static void test_reference_bloom_filter_file(void **state)
{
    (void)state;
    keyset ks;
    keys_init(&ks, false);
    pqc_opts o = { .keys = ks.ids, .n_keys = ks.n };
    pqc_file f;
    pq_err err = { 0 };
    if (pqc_open(&f, DATA("encrypt_columns_and_footer_bloom_filter.parquet.encrypted"), &o,
                 &err) != 0)
        fail_msg("%s", err.msg);
    const size_t rows = 2000;
    assert_int_equal(f.num_rows, (int64_t)rows);
    const pqc_column *name = col(&f, "name"), *i32 = col(&f, "int32_field"),
                     *dbl = col(&f, "double_field"), *flt = col(&f, "float_field");
    expect_flat(name, rows);
    expect_flat(i32, rows);
    expect_flat(dbl, rows);
    expect_flat(flt, rows);
    assert_false(name->encrypted);
    assert_false(i32->encrypted);
    assert_string_equal(dbl->key_id, "kc1");
    assert_string_equal(flt->key_id, "kc2");
    assert_true(dbl->data_pages > 1);
    size_t fp_d = 0, fp_f = 0;
    for (size_t i = 0; i < rows; i++) {
        char s[32];
        int n = snprintf(s, sizeof s, "name_%zu", i);
        expect_val(name, i, s, (size_t)n, i);
        int32_t v = (int32_t)i;
        expect_val(i32, i, &v, 4, i);
        double d = (double)i + 0.5;
        expect_val(dbl, i, &d, 8, i);
        float x = (float)i + 0.25f;
        expect_val(flt, i, &x, 4, i);
        /* no false negatives; absent values mostly rejected */
        assert_true(pqc_bloom_check(&dbl->blooms[0], XXH64(&d, 8, 0)));
        assert_true(pqc_bloom_check(&flt->blooms[0], XXH64(&x, 4, 0)));
        double da = (double)i + 0.75;
        float xa = (float)i + 0.75f;
        fp_d += pqc_bloom_check(&dbl->blooms[0], XXH64(&da, 8, 0));
        fp_f += pqc_bloom_check(&flt->blooms[0], XXH64(&xa, 4, 0));
    }
    assert_non_null(dbl->blooms[0].bitset);
    assert_non_null(flt->blooms[0].bitset);
    assert_null(name->blooms[0].bitset);
    assert_int_equal(count_modules(&f, PQ_MODULE_BLOOM_HEADER, true), 2);
    assert_int_equal(count_modules(&f, PQ_MODULE_BLOOM_BITSET, true), 2);
    printf("[ ok       ] bloom file: %zu-byte filters, %zu + %zu of %zu absent values pass "
           "(false positives)\n", dbl->blooms[0].num_bytes, fp_d, fp_f, rows);
    assert_true(fp_d < rows / 10 && fp_f < rows / 10);
    pqc_close(&f);
    keys_free(&ks);
}

static void test_reference_external_key_material_skipped(void **state)
{
    (void)state;
    printf("[ skip     ] external_key_material_java.parquet.encrypted: footer key_metadata is "
           "PKMT1 external key material (keyReference footerKey) wrapped by parquet-mr's "
           "InMemoryKMS; unwrapping needs a KMS emulation this reader does not have\n");
    skip();
}

int main(void)
{
    pqt_testdata_require("test_encrypted_reference", DATA_DIR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_every_file_decrypts_to_the_documented_values),
        cmocka_unit_test(test_reference_every_mode_decodes_identically),
        cmocka_unit_test(test_reference_wrong_footer_key_fails_on_the_footer),
        cmocka_unit_test(test_reference_wrong_column_key_fails_on_that_column),
        cmocka_unit_test(test_reference_aad_prefix_must_be_supplied_and_right),
        cmocka_unit_test(test_reference_plaintext_footer_readable_without_keys),
        cmocka_unit_test(test_reference_bloom_filter_file),
        cmocka_unit_test(test_reference_external_key_material_skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
