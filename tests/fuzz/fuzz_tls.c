/* fuzz_tls.c - libFuzzer target for a TLS input's record path
 * (daemon/ingest/tls.c: tl_conn_feed, the code read_cb runs for a TLS
 * connection), without sockets: the input decides the bytes a peer sends
 * and where the reads split them.
 *
 * Input: byte 0 picks the start: even, the bytes are the peer's first
 * (ClientHello parsing, alerts, record framing); odd, an in-process
 * OpenSSL client first completes a real handshake (TLS 1.2 or 1.3 by bit
 * 1; mutual TLS with a client certificate by bit 2, against a server
 * with client_ca and allow_subjects), then the bytes follow as if the
 * client sent them on the established session (record decryption,
 * alerts, key updates, renegotiation attempts). Then reads: a length byte
 * L > 0 and L bytes; L == 0 and two bytes (c, k) is a read of (k + 1) *
 * 64 copies of c.
 *
 * Checked: no plaintext reaches the sink before the handshake and the
 * subject check succeed; after a refusal or a broken record nothing more
 * is delivered (the daemon closes the connection; here the feed stops);
 * what the server wants to send is drained without bound problems; no
 * crash, leak or undefined behaviour (ASan/UBSan). The PKI is made once
 * at start-up with OpenSSL's API (tests/support/tlspki.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "../support/tlspki.h"
#include "tls.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_tls: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

static char dir[64];
static tl_ctx *plain_ctx, *mutual_ctx;
static SSL_CTX *client12, *client13;

static char *path_of(const char *name)
{
    static char bufs[4][256];
    static int next;
    char *p = bufs[next++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static SSL_CTX *client_ctx(int version)
{
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    CHECK(c != NULL);
    SSL_CTX_set_min_proto_version(c, version);
    SSL_CTX_set_max_proto_version(c, version);
    CHECK(SSL_CTX_use_certificate_file(c, path_of("web7.crt"), SSL_FILETYPE_PEM) == 1);
    CHECK(SSL_CTX_use_PrivateKey_file(c, path_of("web7.key"), SSL_FILETYPE_PEM) == 1);
    return c;
}

/* The PKI files are read once, at start-up: remove them at exit. */
static void remove_pki(void)
{
    static const char *const files[] = {"ca.crt", "server.crt", "server.key", "web7.crt",
                                        "web7.key", "intruder.crt", "intruder.key", "other.crt",
                                        "other.key"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        unlink(path_of(files[i]));
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(dir, sizeof dir, "/tmp/fuzz_tls_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    atexit(remove_pki);
    CHECK(pqt_tls_pki(dir) == 0);
    char *allow[1] = {"CN=web-7"};
    cf_tls cfg = {.cert = path_of("server.crt"), .key = path_of("server.key"), .min_version = 12,
                  .handshake_timeout_ms = 1000};
    pq_err err = {0};
    CHECK(tl_ctx_new(&plain_ctx, &cfg, "fuzz", &err) == 0);
    cfg.client_ca = path_of("ca.crt");
    cfg.allow_subjects = allow;
    cfg.n_allow_subjects = 1;
    CHECK(tl_ctx_new(&mutual_ctx, &cfg, "fuzz", &err) == 0);
    client12 = client_ctx(TLS1_2_VERSION);
    client13 = client_ctx(TLS1_3_VERSION);
    return 0;
}

typedef struct fz {
    tl_conn *t;
    size_t delivered;
} fz;

static int sink(void *user, const char *data, size_t len)
{
    fz *z = user;
    (void)data;
    CHECK(z->t->established);    /* never before the handshake and subject check */
    z->delivered += len;
    return 0;
}

static void drain(tl_conn *t, BIO *to)
{
    char buf[4096];
    size_t n;
    while ((n = tl_conn_take(t, buf, sizeof buf)) > 0)
        if (to != NULL)
            BIO_write(to, buf, (int)n);
    CHECK(tl_conn_pending(t) == 0);
}

/* A real handshake; returns false when it did not complete. */
static bool handshake(tl_conn *t, SSL_CTX *cctx, fz *z)
{
    SSL *c = SSL_new(cctx);
    BIO *in = BIO_new(BIO_s_mem()), *out = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(in, -1);
    SSL_set_bio(c, in, out);
    SSL_set_connect_state(c);
    char buf[16384], plain[1024];
    tl_result r = TL_OK;
    for (int i = 0; i < 20 && r == TL_OK && !t->established; i++) {
        SSL_do_handshake(c);
        int n = BIO_read(out, buf, sizeof buf);
        r = tl_conn_feed(t, buf, n > 0 ? (size_t)n : 0, plain, sizeof plain, sink, z, NULL, 0);
        drain(t, in);
    }
    SSL_free(c);
    ERR_clear_error();
    return r == TL_OK && t->established;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t mode = data[0];
    tl_conn t;
    fz z = {.t = &t};
    CHECK(tl_conn_init(&t, (mode & 4) ? mutual_ctx : plain_ctx) == 0);
    if ((mode & 1) && !handshake(&t, (mode & 2) ? client13 : client12, &z)) {
        tl_conn_free(&t);
        return 0;
    }
    char plain[2048], rep[64 * 256];
    tl_result r = TL_OK;
    for (size_t i = 1; i < size && r == TL_OK;) {
        size_t len = data[i++];
        const void *p = data + i;
        if (len == 0) {
            if (i + 2 > size)
                break;
            len = ((size_t)data[i + 1] + 1) * 64;
            memset(rep, data[i], len);
            p = rep;
            i += 2;
        } else {
            if (len > size - i)
                len = size - i;
            i += len;
        }
        size_t before = z.delivered;
        bool was = t.established;
        char why[128];
        r = tl_conn_feed(&t, p, len, plain, sizeof plain, sink, &z, why, sizeof why);
        drain(&t, NULL);
        if (r == TL_REFUSED_HANDSHAKE || r == TL_REFUSED_SUBJECT)
            CHECK(!was && z.delivered == before && z.delivered == 0);
    }
    tl_conn_free(&t);
    ERR_clear_error();
    return 0;
}
