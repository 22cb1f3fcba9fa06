/* test_crypto_keys.c - writer/crypto.c's keys (Encryption.md 4.1.4):
 * the per-key invocation limit, also with a key shared by threads, and
 * key files (hex sizes, errors that name the file and never the key). */
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

#include "buf.h"
#include "crypto.h"
#include "decrypt.h"
#include "err.h"

/* README 2c: the documented keys are ASCII strings, not byte values. */
static const char KF128[] = "0123456789012345";
static const char KF256[] = "01234567890123456789012345678901";

static void key_ascii(pq_crypto_key *k, const char *ascii)
{
    assert_int_equal(pq_crypto_key_init(k, ascii, strlen(ascii), "test", NULL), 0);
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
        cmocka_unit_test(test_crypto_key_invocation_limit),
        cmocka_unit_test(test_crypto_key_shared_by_threads_spends_exactly_its_budget),
        cmocka_unit_test(test_crypto_key_load_hex_sizes),
        cmocka_unit_test(test_crypto_key_load_hex_errors_name_file_not_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
