/* tls.h - TLS on TCP inputs (DESIGN.md "Configuration" inputs[].tls):
 * the server context built from a cf_tls (certificate chain, private key,
 * optional client CA and subject allow-list) and one connection's TLS
 * state, driven through memory BIOs so the socket stays libuv's.
 *
 *     tl_ctx *ctx;  tl_ctx_new(&ctx, cf_input.tls, "inputs[1]", &err);
 *     tl_conn t;    tl_conn_init(&t, ctx);            per connection (takes a ref)
 *     rc = tl_conn_feed(&t, cipher, n, plain, cap, sink, user, &why);
 *     while ((n = tl_conn_pending(&t)) > 0)  tl_conn_take(&t, out, n);   -> socket
 *     tl_conn_free(&t);  tl_ctx_unref(ctx);
 *
 * Policy (stricter than the library's defaults): TLS 1.2 at least (1.3
 * with min_version "1.3"); for 1.2 only ECDHE key exchange with AEAD
 * ciphers (AES-GCM, ChaCha20-Poly1305); no renegotiation, no compression,
 * no session tickets or cache (a log shipper reconnects rarely, and a
 * ticket key would be one more secret to guard). With client_ca every
 * client must present a certificate that chains to it; with
 * allow_subjects its subject must also match one entry ("CN=web-7" matches
 * a subject whose CN is web-7; "CN=a,O=b" needs both).
 *
 * No plaintext is handed to the sink before the handshake and the
 * subject check succeed, so a refused client's bytes never land.
 *
 * Keys: the private key file's mode is checked first (keyfile.h); its
 * text is read into OpenSSL's secure heap (mlock'd and MADV_DONTDUMP once
 * tl_secure_heap_init ran) and wiped; errors name files, never contents.
 *
 * Thread: the loop thread. A tl_ctx is reference counted (plain counter,
 * loop thread only), so a reload can replace a listener's context while
 * connections made with the old one finish with it. */
#ifndef PQ_TLS_H
#define PQ_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"

typedef struct tl_ctx tl_ctx;

/* Returns 0, or PQ_EIO / PQ_EINVAL / PQ_ENOMEM with err saying which file
 * and why, prefixed by what ("inputs[1].tls"). *out has one reference. */
int tl_ctx_new(tl_ctx **out, const cf_tls *cfg, const char *what, pq_err *err);
void tl_ctx_ref(tl_ctx *c);
/* Drops a reference; the last one frees the context. NULL is a no-op. */
void tl_ctx_unref(tl_ctx *c);
uint64_t tl_ctx_handshake_timeout_ms(const tl_ctx *c);

/* Once per process, before any key is read: OpenSSL's secure heap for
 * private key material. Returns false when it could not be set up (keys
 * then live in ordinary memory; the caller logs it). */
bool tl_secure_heap_init(void);

typedef struct tl_conn {
    struct ssl_st *ssl;
    struct bio_st *net_in;       /* ciphertext from the peer, written by tl_conn_feed */
    struct bio_st *net_out;      /* ciphertext to the peer, taken by tl_conn_take */
    tl_ctx *ctx;
    bool established;            /* handshake done and subject allowed */
} tl_conn;

typedef enum tl_result {
    TL_OK = 0,                   /* fed; more may come */
    TL_CLOSED,                   /* the peer sent close_notify */
    TL_REFUSED_HANDSHAKE,        /* the handshake failed: plaintext client, old version,
                                    no/unknown client certificate, garbage */
    TL_REFUSED_SUBJECT,          /* the certificate is valid, its subject not allowed */
    TL_BROKEN,                   /* after the handshake: a bad record, or the sink failed */
    TL_NOMEM,
} tl_result;

/* Plaintext out of tl_conn_feed; returns 0, non-zero to stop (TL_BROKEN). */
typedef int (*tl_sink)(void *user, const char *data, size_t len);

/* Returns 0 or PQ_ENOMEM. Takes a reference on ctx. */
int tl_conn_init(tl_conn *t, tl_ctx *ctx);
void tl_conn_free(tl_conn *t);

/* Feeds len ciphertext bytes received from the peer (0 is allowed: it
 * only advances the state machine). Decrypted bytes go to sink in chunks
 * of up to cap bytes through plain (a caller's buffer). On a refusal or
 * failure *why (if not NULL) is set to a short reason fit for the log
 * ("handshake: wrong version number", "subject CN=evil not allowed"). */
tl_result tl_conn_feed(tl_conn *t, const void *data, size_t len, char *plain, size_t cap,
                       tl_sink sink, void *user, char *why, size_t why_cap);

/* Encrypts len plaintext bytes (a reply) into the pending ciphertext.
 * 0, or -1 before the handshake finished or on failure. */
int tl_conn_write(tl_conn *t, const void *data, size_t len);
/* Ciphertext waiting to be sent (handshake records, alerts, replies). */
size_t tl_conn_pending(const tl_conn *t);
/* Moves up to cap pending bytes into out; returns how many. */
size_t tl_conn_take(tl_conn *t, void *out, size_t cap);

#endif
