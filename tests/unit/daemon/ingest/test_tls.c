/* test_tls.c - daemon/ingest/tls.c in process: an OpenSSL client (memory BIOs)
 * talks to tl_conn through a pump, with a PKI made at test time
 * (tests/support/tlspki.h). Checked: records reach the sink only after
 * the handshake (and the subject check) succeed; mutual TLS refuses a
 * client without a certificate, with one from another CA and with a
 * subject not allowed, and none of their bytes reach the sink; TLS 1.1
 * and plaintext are refused; close_notify ends the stream; a key file
 * readable by group or others is refused with its mode named and without
 * its contents; TLS 1.3 only refuses a TLS 1.2 client. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tlspki.h"
#include "tls.h"
#include "tmpdir.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/pq_tls_XXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(pqt_tls_pki(dir), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pqt_rm_rf(dir);
    return 0;
}

/* ---- helpers --------------------------------------------------------------- */

static char *path_of(const char *name)
{
    static char bufs[8][256];
    static int next;
    char *p = bufs[next++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

typedef struct sink {
    char data[4096];
    size_t len;
    int calls;
} sink;

static int to_sink(void *user, const char *data, size_t len)
{
    sink *s = user;
    assert_true(s->len + len <= sizeof s->data);
    memcpy(s->data + s->len, data, len);
    s->len += len;
    s->calls++;
    return 0;
}

/* The server side as the daemon runs it, built from a cf_tls. */
static tl_ctx *server_ctx(const char *client_ca, const char *allow, int min_version)
{
    char *subjects[1] = {(char *)allow};
    cf_tls cfg = {.cert = path_of("server.crt"), .key = path_of("server.key"),
                  .client_ca = (char *)client_ca, .allow_subjects = allow ? subjects : NULL,
                  .n_allow_subjects = allow ? 1 : 0, .min_version = min_version,
                  .handshake_timeout_ms = 10000};
    tl_ctx *c = NULL;
    pq_err err = {0};
    if (tl_ctx_new(&c, &cfg, "inputs[0].tls", &err) != 0)
        fail_msg("tl_ctx_new: %s", err.msg);
    return c;
}

typedef struct client {
    SSL_CTX *ctx;
    SSL *ssl;
    BIO *in, *out;               /* in: from the server; out: to the server */
} client;

static void client_new(client *c, const char *name, int max_version)
{
    c->ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(c->ctx);
    SSL_CTX_set_security_level(c->ctx, 0);       /* let it offer what the server must refuse */
    SSL_CTX_set_min_proto_version(c->ctx, TLS1_VERSION);
    if (max_version != 0)
        SSL_CTX_set_max_proto_version(c->ctx, max_version);
    if (max_version != 0 && max_version < TLS1_2_VERSION)
        SSL_CTX_set_cipher_list(c->ctx, "DEFAULT:@SECLEVEL=0");
    assert_int_equal(SSL_CTX_load_verify_locations(c->ctx, path_of("ca.crt"), NULL), 1);
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
    if (name != NULL) {
        char crt[64], key[64];
        snprintf(crt, sizeof crt, "%s.crt", name);
        snprintf(key, sizeof key, "%s.key", name);
        assert_int_equal(SSL_CTX_use_certificate_file(c->ctx, path_of(crt), SSL_FILETYPE_PEM), 1);
        assert_int_equal(SSL_CTX_use_PrivateKey_file(c->ctx, path_of(key), SSL_FILETYPE_PEM), 1);
    }
    c->ssl = SSL_new(c->ctx);
    c->in = BIO_new(BIO_s_mem());
    c->out = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(c->in, -1);
    SSL_set_bio(c->ssl, c->in, c->out);
    SSL_set_connect_state(c->ssl);
    SSL_set_tlsext_host_name(c->ssl, "localhost");
}

static void client_free(client *c)
{
    SSL_free(c->ssl);
    SSL_CTX_free(c->ctx);
    ERR_clear_error();
}

/* Moves bytes both ways until neither side has anything to say; returns
 * the server's last result (the first that was not TL_OK). text (may be
 * NULL) is written by the client as soon as its side of the handshake is
 * done: with TLS 1.3 that is in the same flight as its Finished, before
 * the server has checked the client's certificate, the hardest case for
 * "nothing a refused client sent lands". */
static tl_result pump(client *c, tl_conn *t, sink *s, const char *text)
{
    tl_result r = TL_OK;
    for (int round = 0; round < 50 && r == TL_OK; round++) {
        if (!SSL_is_init_finished(c->ssl))
            SSL_do_handshake(c->ssl);
        if (text != NULL && SSL_is_init_finished(c->ssl)) {
            assert_int_equal(SSL_write(c->ssl, text, (int)strlen(text)), (int)strlen(text));
            text = NULL;
        }
        char buf[16384], plain[4096];
        int n = BIO_read(c->out, buf, sizeof buf);
        char why[256] = "";
        r = tl_conn_feed(t, buf, n > 0 ? (size_t)n : 0, plain, sizeof plain, to_sink, s, why,
                         sizeof why);
        size_t m, moved = 0;
        while ((m = tl_conn_take(t, buf, sizeof buf)) > 0) {
            BIO_write(c->in, buf, (int)m);
            moved += m;
        }
        if (n <= 0 && moved == 0 && SSL_is_init_finished(c->ssl) && text == NULL)
            break;
    }
    return r;
}

static tl_result run(client *c, tl_conn *t, sink *s, const char *text)
{
    return pump(c, t, s, text);
}

/* ---- tests ------------------------------------------------------------------- */

static void test_tls_records_reach_the_sink_after_the_handshake(void **state)
{
    (void)state;
    tl_ctx *ctx = server_ctx(NULL, NULL, 12);
    tl_conn t;
    client c;
    sink s = {0};
    assert_int_equal(tl_conn_init(&t, ctx), 0);
    client_new(&c, NULL, 0);
    assert_int_equal(run(&c, &t, &s, "{\"a\":1}\n{\"a\":2}\n"), TL_OK);
    assert_true(t.established);
    assert_int_equal(SSL_version(c.ssl), TLS1_3_VERSION);        /* 1.3 preferred */
    assert_int_equal(s.len, 16);
    assert_memory_equal(s.data, "{\"a\":1}\n{\"a\":2}\n", 16);
    SSL_shutdown(c.ssl);                                         /* close_notify */
    assert_int_equal(pump(&c, &t, &s, NULL), TL_CLOSED);
    client_free(&c);
    tl_conn_free(&t);
    tl_ctx_unref(ctx);
}

static void test_tls_mutual_accepts_an_allowed_subject(void **state)
{
    (void)state;
    tl_ctx *ctx = server_ctx(path_of("ca.crt"), "CN=web-7,O=pqt", 12);
    tl_conn t;
    client c;
    sink s = {0};
    assert_int_equal(tl_conn_init(&t, ctx), 0);
    client_new(&c, "web7", 0);
    assert_int_equal(run(&c, &t, &s, "{\"ok\":true}\n"), TL_OK);
    assert_int_equal(s.len, 12);
    client_free(&c);
    tl_conn_free(&t);
    tl_ctx_unref(ctx);
}

static void refused(const char *client_cert, const char *allow, int max_version,
                    tl_result want, int min_version)
{
    tl_ctx *ctx = server_ctx(allow ? path_of("ca.crt") : NULL, allow, min_version);
    tl_conn t;
    client c;
    sink s = {0};
    assert_int_equal(tl_conn_init(&t, ctx), 0);
    client_new(&c, client_cert, max_version);
    assert_int_equal(run(&c, &t, &s, "{\"must\":\"not land\"}\n"), want);
    assert_false(t.established);
    assert_int_equal(s.calls, 0);                /* nothing it sent reached the sink */
    client_free(&c);
    tl_conn_free(&t);
    tl_ctx_unref(ctx);
}

static void test_tls_mutual_refuses_a_client_without_a_certificate(void **state)
{
    (void)state;
    refused(NULL, "CN=web-7", 0, TL_REFUSED_HANDSHAKE, 12);
}

static void test_tls_mutual_refuses_a_certificate_from_another_ca(void **state)
{
    (void)state;
    refused("other", "CN=web-7", 0, TL_REFUSED_HANDSHAKE, 12);
}

static void test_tls_mutual_refuses_a_subject_not_allowed(void **state)
{
    (void)state;
    refused("intruder", "CN=web-7", 0, TL_REFUSED_SUBJECT, 12);
    /* Every attribute of an entry must match: web-7 is not O=other. */
    refused("web7", "CN=web-7,O=other", 0, TL_REFUSED_SUBJECT, 12);
}

static void test_tls_refuses_tls_1_1_and_1_0(void **state)
{
    (void)state;
    refused(NULL, NULL, TLS1_1_VERSION, TL_REFUSED_HANDSHAKE, 12);
    refused(NULL, NULL, TLS1_VERSION, TL_REFUSED_HANDSHAKE, 12);
}

static void test_tls_min_version_1_3_refuses_tls_1_2(void **state)
{
    (void)state;
    refused(NULL, NULL, TLS1_2_VERSION, TL_REFUSED_HANDSHAKE, 13);
}

static void test_tls_refuses_plaintext(void **state)
{
    (void)state;
    tl_ctx *ctx = server_ctx(NULL, NULL, 12);
    tl_conn t;
    sink s = {0};
    char why[256] = "", plain[256];
    static const char line[] = "{\"plaintext\":\"on a TLS port\"}\n";
    assert_int_equal(tl_conn_init(&t, ctx), 0);
    assert_int_equal(tl_conn_feed(&t, line, sizeof line - 1, plain, sizeof plain, to_sink, &s,
                                  why, sizeof why), TL_REFUSED_HANDSHAKE);
    assert_non_null(strstr(why, "handshake: "));
    assert_int_equal(s.calls, 0);
    tl_conn_free(&t);
    tl_ctx_unref(ctx);
}

static void test_tls_refuses_a_key_readable_by_group_or_others(void **state)
{
    (void)state;
    cf_tls cfg = {.cert = path_of("server.crt"), .key = path_of("server.key"),
                  .min_version = 12, .handshake_timeout_ms = 1000};
    tl_ctx *c = NULL;
    pq_err err = {0};
    char want[96];
    FILE *f = fopen(cfg.key, "r");
    char key_text[512] = "";
    assert_non_null(f);
    assert_true(fread(key_text, 1, sizeof key_text - 1, f) > 100);
    fclose(f);
    const char *body = strchr(key_text, '\n') + 1;          /* the base64, past the BEGIN line */
    char first[33];
    snprintf(first, sizeof first, "%s", body);
    assert_int_equal(chmod(cfg.key, 0644), 0);
    assert_int_equal(tl_ctx_new(&c, &cfg, "inputs[3].tls", &err), PQ_EINVAL);
    assert_null(c);
    snprintf(want, sizeof want, "%s is readable by group or others (mode 0644); chmod 600 it",
             cfg.key);
    assert_non_null(strstr(err.msg, want));
    assert_non_null(strstr(err.msg, "inputs[3].tls"));
    assert_null(strstr(err.msg, first));
    /* Mode fine, contents broken: the error names the file, not its bytes. */
    assert_int_equal(chmod(cfg.key, 0600), 0);
    char broken[256];
    snprintf(broken, sizeof broken, "%s/broken.key", dir);
    f = fopen(broken, "w");
    fprintf(f, "-----BEGIN PRIVATE KEY-----\n%.40s\n-----END PRIVATE KEY-----\n", body);
    fclose(f);
    chmod(broken, 0600);
    cfg.key = broken;
    assert_int_not_equal(tl_ctx_new(&c, &cfg, "inputs[3].tls", &err), 0);
    assert_non_null(strstr(err.msg, "broken.key"));
    assert_null(strstr(err.msg, first));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls_records_reach_the_sink_after_the_handshake),
        cmocka_unit_test(test_tls_mutual_accepts_an_allowed_subject),
        cmocka_unit_test(test_tls_mutual_refuses_a_client_without_a_certificate),
        cmocka_unit_test(test_tls_mutual_refuses_a_certificate_from_another_ca),
        cmocka_unit_test(test_tls_mutual_refuses_a_subject_not_allowed),
        cmocka_unit_test(test_tls_refuses_tls_1_1_and_1_0),
        cmocka_unit_test(test_tls_min_version_1_3_refuses_tls_1_2),
        cmocka_unit_test(test_tls_refuses_plaintext),
        cmocka_unit_test(test_tls_refuses_a_key_readable_by_group_or_others),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
