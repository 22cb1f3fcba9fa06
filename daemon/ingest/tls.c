/* tls.c - TLS server contexts and per-connection TLS state over memory
 * BIOs (see tls.h for the policy).
 *
 * Thread: the loop thread.
 *
 * Why memory BIOs rather than handing OpenSSL the socket: libuv owns the
 * fd and its readiness; OpenSSL only ever sees bytes we give it and
 * produces bytes we send, so a slow or hostile peer can never block the
 * loop inside OpenSSL, and the same code runs under the fuzzer. */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "keyfile.h"

/* TLS 1.2: forward secrecy and AEAD only. TLS 1.3 suites are all AEAD
 * and keep OpenSSL's default order. */
#define TL_CIPHERS_12 "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:" \
                      "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" \
                      "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#define TL_KEY_FILE_MAX (64 * 1024)          /* a PEM private key is a few KiB */
#define TL_SECURE_HEAP ((size_t)256 * 1024)  /* power of two, as OpenSSL wants */

/* One attribute of an allow_subjects entry. */
typedef struct tl_attr {
    int nid;
    char *value;
} tl_attr;

typedef struct tl_subject {
    tl_attr *attrs;
    size_t n;
} tl_subject;

struct tl_ctx {
    SSL_CTX *ssl;
    tl_subject *allow;           /* NULL: any certificate client_ca signed */
    size_t n_allow;
    uint64_t handshake_timeout_ms;
    unsigned refs;
};

bool tl_secure_heap_init(void)
{
    if (CRYPTO_secure_malloc_initialized())
        return true;
    return CRYPTO_secure_malloc_init(TL_SECURE_HEAP, 32) != 0;
}

/* The most recent OpenSSL error, then the queue cleared (errors from one
 * connection must not show up in another's message). */
static const char *ossl_reason(char *buf, size_t cap)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    snprintf(buf, cap, "%s", r != NULL ? r : e ? "unknown OpenSSL error" : "no detail");
    ERR_clear_error();
    return buf;
}

static int ossl_err(pq_err *err, int code, const char *what, const char *fmt, const char *file)
{
    char r[160];
    ossl_reason(r, sizeof r);
    return pq_err_set(err, code, "%s: %s %s: %s", what, fmt, file, r);
}

/* ---- the allow-list --------------------------------------------------- */

static void free_allow(tl_ctx *c)
{
    for (size_t i = 0; i < c->n_allow; i++) {
        for (size_t k = 0; k < c->allow[i].n; k++)
            free(c->allow[i].attrs[k].value);
        free(c->allow[i].attrs);
    }
    free(c->allow);
    c->allow = NULL;
    c->n_allow = 0;
}

/* "CN=web-7,O=Example" (syntax checked by the config loader) into NIDs and
 * values. An attribute OpenSSL does not know is an error now rather than
 * a subject that can never match. */
static int parse_subject(tl_subject *s, const char *text, const char *what, pq_err *err)
{
    size_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    if ((s->attrs = calloc(n, sizeof *s->attrs)) == NULL)
        return pq_err_set(err, PQ_ENOMEM, "%s: out of memory", what);
    for (const char *p = text; *p;) {
        const char *eq = strchr(p, '='), *end = strchr(p, ',');
        if (end == NULL)
            end = p + strlen(p);
        if (eq == NULL || eq > end)
            return pq_err_set(err, PQ_EINVAL, "%s: allow_subjects '%s': expected "
                              "ATTRIBUTE=value pairs", what, text);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
        tl_attr *a = &s->attrs[s->n];
        if ((a->nid = OBJ_txt2nid(name)) == NID_undef)
            return pq_err_set(err, PQ_EINVAL, "%s: allow_subjects '%s': unknown attribute "
                              "'%s' (e.g. CN, O, OU, C, L, ST, emailAddress)", what, text, name);
        if ((a->value = strndup(eq + 1, (size_t)(end - eq - 1))) == NULL)
            return pq_err_set(err, PQ_ENOMEM, "%s: out of memory", what);
        s->n++;
        p = *end ? end + 1 : end;
    }
    return PQ_OK;
}

static bool attr_matches(X509_NAME *name, const tl_attr *a)
{
    for (int pos = -1; (pos = X509_NAME_get_index_by_NID(name, a->nid, pos)) >= 0;) {
        unsigned char *utf8 = NULL;
        int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, pos)));
        bool eq = len >= 0 && (size_t)len == strlen(a->value) && memcmp(utf8, a->value, (size_t)len) == 0;
        OPENSSL_free(utf8);
        if (eq)
            return true;
    }
    return false;
}

static bool subject_allowed(const tl_ctx *c, X509 *peer)
{
    if (c->allow == NULL)
        return true;
    X509_NAME *name = peer ? X509_get_subject_name(peer) : NULL;
    for (size_t i = 0; name != NULL && i < c->n_allow; i++) {
        size_t k = 0;
        while (k < c->allow[i].n && attr_matches(name, &c->allow[i].attrs[k]))
            k++;
        if (k == c->allow[i].n)
            return true;
    }
    return false;
}

/* ---- the context -------------------------------------------------------- */

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return 0;                    /* never prompt on a terminal: an encrypted key fails */
}

/* The key file is read by us, into secure memory, after its mode check on
 * the very file we opened (fstat), so a swap between check and read
 * cannot slip a readable file in. */
static int load_key(SSL_CTX *ssl, const char *path, const char *what, pq_err *err)
{
    int rc = kf_check_mode(path, "TLS private key", err);
    if (rc != 0)
        return pq_err_prefix(err, rc, "%s", what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (st.st_mode & 077) != 0 || st.st_size > TL_KEY_FILE_MAX) {
        rc = pq_err_set(err, fd < 0 ? PQ_EIO : PQ_EINVAL, "%s: TLS private key %s: %s", what,
                        path, fd < 0 ? strerror(errno) : st.st_size > TL_KEY_FILE_MAX
                        ? "larger than 64 KiB, not a PEM key" : "changed while being checked");
        if (fd >= 0)
            close(fd);
        return rc;
    }
    char *text = OPENSSL_secure_malloc(TL_KEY_FILE_MAX);
    size_t n = 0;
    ssize_t r = 0;
    while (text != NULL && n < TL_KEY_FILE_MAX &&
           ((r = read(fd, text + n, TL_KEY_FILE_MAX - n)) > 0 || (r < 0 && errno == EINTR)))
        n += r > 0 ? (size_t)r : 0;
    close(fd);
    if (text == NULL || r < 0) {
        OPENSSL_secure_clear_free(text, TL_KEY_FILE_MAX);
        return pq_err_set(err, text ? PQ_EIO : PQ_ENOMEM, "%s: TLS private key %s: %s", what,
                          path, text ? "read error" : "out of memory");
    }
    BIO *bio = BIO_new_mem_buf(text, (int)n);
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    BIO_free(bio);
    OPENSSL_secure_clear_free(text, TL_KEY_FILE_MAX);
    if (key == NULL)
        return ossl_err(err, PQ_EINVAL, what, "TLS private key", path);
    rc = SSL_CTX_use_PrivateKey(ssl, key) == 1 ? 0 : ossl_err(err, PQ_EINVAL, what,
                                                               "TLS private key", path);
    EVP_PKEY_free(key);
    if (rc == 0 && SSL_CTX_check_private_key(ssl) != 1)
        rc = ossl_err(err, PQ_EINVAL, what, "TLS private key does not match the certificate;",
                      path);
    return rc;
}

static int set_policy(SSL_CTX *ssl, const cf_tls *cfg, const char *what, pq_err *err)
{
    SSL_CTX_set_options(ssl, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET |
                             SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_session_cache_mode(ssl, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ssl, 0);
    int min = cfg->min_version == 13 ? TLS1_3_VERSION : TLS1_2_VERSION;
    if (SSL_CTX_set_min_proto_version(ssl, min) != 1 ||
        SSL_CTX_set_cipher_list(ssl, TL_CIPHERS_12) != 1)
        return ossl_err(err, PQ_EINVAL, what, "cannot set the protocol policy", "");
    if (cfg->client_ca == NULL)
        return PQ_OK;
    if (SSL_CTX_load_verify_locations(ssl, cfg->client_ca, NULL) != 1)
        return ossl_err(err, PQ_EINVAL, what, "client_ca", cfg->client_ca);
    STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->client_ca);
    if (names == NULL)
        return ossl_err(err, PQ_EINVAL, what, "client_ca (no certificate in it)",
                        cfg->client_ca);
    SSL_CTX_set_client_CA_list(ssl, names);
    SSL_CTX_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    return PQ_OK;
}

int tl_ctx_new(tl_ctx **out, const cf_tls *cfg, const char *what, pq_err *err)
{
    *out = NULL;
    tl_ctx *c = calloc(1, sizeof *c);
    if (c == NULL)
        return pq_err_set(err, PQ_ENOMEM, "%s: out of memory", what);
    c->refs = 1;
    c->handshake_timeout_ms = cfg->handshake_timeout_ms;
    ERR_clear_error();
    c->ssl = SSL_CTX_new(TLS_server_method());
    int rc = c->ssl ? 0 : ossl_err(err, PQ_ENOMEM, what, "cannot create a TLS context", "");
    rc = rc ? rc : set_policy(c->ssl, cfg, what, err);
    if (rc == 0 && SSL_CTX_use_certificate_chain_file(c->ssl, cfg->cert) != 1)
        rc = ossl_err(err, access(cfg->cert, R_OK) ? PQ_EIO : PQ_EINVAL, what, "certificate",
                      cfg->cert);
    rc = rc ? rc : load_key(c->ssl, cfg->key, what, err);
    if (rc == 0 && cfg->n_allow_subjects > 0 &&
        (c->allow = calloc(cfg->n_allow_subjects, sizeof *c->allow)) == NULL)
        rc = pq_err_set(err, PQ_ENOMEM, "%s: out of memory", what);
    for (size_t i = 0; rc == 0 && i < cfg->n_allow_subjects; i++) {
        c->n_allow = i + 1;
        rc = parse_subject(&c->allow[i], cfg->allow_subjects[i], what, err);
    }
    if (rc != 0) {
        tl_ctx_unref(c);
        return rc;
    }
    *out = c;
    return PQ_OK;
}

void tl_ctx_ref(tl_ctx *c)
{
    c->refs++;
}

void tl_ctx_unref(tl_ctx *c)
{
    if (c == NULL || --c->refs > 0)
        return;
    SSL_CTX_free(c->ssl);
    free_allow(c);
    free(c);
}

uint64_t tl_ctx_handshake_timeout_ms(const tl_ctx *c)
{
    return c->handshake_timeout_ms;
}

/* ---- one connection ------------------------------------------------------- */

int tl_conn_init(tl_conn *t, tl_ctx *ctx)
{
    memset(t, 0, sizeof *t);
    t->ssl = SSL_new(ctx->ssl);
    t->net_in = BIO_new(BIO_s_mem());
    t->net_out = BIO_new(BIO_s_mem());
    if (t->ssl == NULL || t->net_in == NULL || t->net_out == NULL) {
        SSL_free(t->ssl);
        BIO_free(t->net_in);
        BIO_free(t->net_out);
        memset(t, 0, sizeof *t);
        ERR_clear_error();
        return PQ_ENOMEM;
    }
    /* Empty memory BIOs report "retry" rather than EOF. */
    BIO_set_mem_eof_return(t->net_in, -1);
    BIO_set_mem_eof_return(t->net_out, -1);
    SSL_set_bio(t->ssl, t->net_in, t->net_out);     /* the SSL owns both now */
    SSL_set_accept_state(t->ssl);
    t->ctx = ctx;
    tl_ctx_ref(ctx);
    return PQ_OK;
}

void tl_conn_free(tl_conn *t)
{
    if (t->ssl != NULL)
        SSL_free(t->ssl);        /* frees the BIOs, wipes the session keys */
    tl_ctx_unref(t->ctx);
    memset(t, 0, sizeof *t);
}

static void set_why(char *why, size_t cap, const char *fmt, const char *detail)
{
    if (why != NULL && cap > 0)
        snprintf(why, cap, fmt, detail);
}

static tl_result handshake(tl_conn *t, char *why, size_t why_cap)
{
    char r[160];
    int rc = SSL_do_handshake(t->ssl);
    if (rc != 1) {
        int e = SSL_get_error(t->ssl, rc);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            ERR_clear_error();
            return TL_OK;
        }
        long v = SSL_get_verify_result(t->ssl);
        if (v != X509_V_OK) {
            ERR_clear_error();
            set_why(why, why_cap, "handshake: client certificate: %s",
                    X509_verify_cert_error_string(v));
        } else {
            set_why(why, why_cap, "handshake: %s", ossl_reason(r, sizeof r));
        }
        return TL_REFUSED_HANDSHAKE;
    }
    X509 *peer = SSL_get0_peer_certificate(t->ssl);
    if (!subject_allowed(t->ctx, peer)) {
        char subject[200] = "(none)";
        if (peer != NULL)
            X509_NAME_oneline(X509_get_subject_name(peer), subject, sizeof subject);
        set_why(why, why_cap, "subject %s is not on allow_subjects", subject);
        return TL_REFUSED_SUBJECT;
    }
    t->established = true;
    return TL_OK;
}

tl_result tl_conn_feed(tl_conn *t, const void *data, size_t len, char *plain, size_t cap,
                       tl_sink sink, void *user, char *why, size_t why_cap)
{
    if (len > 0 && (len > INT32_MAX || BIO_write(t->net_in, data, (int)len) != (int)len)) {
        ERR_clear_error();
        return TL_NOMEM;
    }
    if (!t->established) {
        tl_result r = handshake(t, why, why_cap);
        if (r != TL_OK || !t->established)
            return r;
    }
    for (;;) {
        size_t used = 0;
        int n = 0;
        while (used < cap && (n = SSL_read(t->ssl, plain + used, (int)(cap - used))) > 0)
            used += (size_t)n;
        if (used > 0 && sink(user, plain, used) != 0) {
            set_why(why, why_cap, "%s", "the line sink failed");
            return TL_BROKEN;
        }
        if (n > 0)
            continue;            /* the buffer filled: read on */
        int e = SSL_get_error(t->ssl, n);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            ERR_clear_error();
            return TL_OK;
        }
        if (e == SSL_ERROR_ZERO_RETURN) {
            ERR_clear_error();
            return TL_CLOSED;
        }
        char r[160];
        set_why(why, why_cap, "record: %s", ossl_reason(r, sizeof r));
        return TL_BROKEN;
    }
}

int tl_conn_write(tl_conn *t, const void *data, size_t len)
{
    if (t->ssl == NULL || !t->established)
        return -1;
    /* A memory BIO takes everything: SSL_write returns len or fails. */
    while (len > 0) {
        int n = len > INT32_MAX ? INT32_MAX : (int)len;
        int w = SSL_write(t->ssl, data, n);
        if (w <= 0) {
            ERR_clear_error();
            return -1;
        }
        data = (const char *)data + w;
        len -= (size_t)w;
    }
    return 0;
}

size_t tl_conn_pending(const tl_conn *t)
{
    return t->net_out != NULL ? BIO_ctrl_pending(t->net_out) : 0;
}

size_t tl_conn_take(tl_conn *t, void *out, size_t cap)
{
    int n = cap > INT32_MAX ? INT32_MAX : (int)cap;
    n = BIO_read(t->net_out, out, n);
    return n > 0 ? (size_t)n : 0;
}
