/* s3_sigv4.h - AWS Signature Version 4 over OpenSSL's HMAC-SHA256, as S3
 * wants it ("Authenticating Requests (AWS Signature Version 4)" in the S3
 * API reference): the canonical request (method, URI-encoded path, sorted
 * encoded query, sorted lower-case headers with trimmed values, signed
 * header list, payload hash), the string to sign, the signing key derived
 * from the secret by date, region and service, and the Authorization
 * header. The path is encoded once (S3's rule; other services encode it
 * twice), '/' kept.
 *
 *     s3_param q[] = {{"uploadId", id}, {"partNumber", "3"}};
 *     s3_header h[] = {{"host", "b.s3.amazonaws.com"}, {"x-amz-date", date},
 *                      {"x-amz-content-sha256", hash}};
 *     s3_sig_request r = {"PUT", "/prefix/a b.parquet", q, 2, h, 3, hash};
 *     s3_sign(&creds, "eu-west-1", "s3", date, &r, &auth, &err);
 *
 * Threads: pure functions; any thread. Secrets are copied into nothing
 * but the HMAC context and never into an error message. */
#ifndef PQ_S3_SIGV4_H
#define PQ_S3_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define S3_SHA256_HEX 65         /* 64 hex digits + NUL */
#define S3_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

typedef struct s3_param {
    const char *key, *value;     /* not encoded; value NULL = "" */
} s3_param;

typedef struct s3_header {
    const char *name, *value;    /* any case; the value is trimmed */
} s3_header;

typedef struct s3_sig_request {
    const char *method;
    const char *path;            /* "/bucket/key" or "/key", not encoded */
    const s3_param *params;
    size_t n_params;
    const s3_header *headers;    /* those to sign; must include host */
    size_t n_headers;
    const char *payload_hash;    /* hex SHA-256, or "UNSIGNED-PAYLOAD" */
} s3_sig_request;

typedef struct s3_creds {
    char access_key[128];
    char secret_key[128];
    char session_token[2048];    /* "" when none */
} s3_creds;

/* AWS URI encoding: unreserved (A-Z a-z 0-9 - . _ ~) kept, '/' kept when
 * keep_slash, every other byte %XX (upper case). Appends to out. */
int s3_uri_encode(pq_buf *out, const char *s, size_t n, int keep_slash);

/* The encoded query, pairs sorted by encoded key then value, "k=v&k2="
 * (an empty value keeps its '='). Appends to out; 0 or PQ_ENOMEM. Also
 * what the request's URL carries, so the two cannot differ. */
int s3_canonical_query(pq_buf *out, const s3_param *p, size_t n);

/* The canonical request (appended to out) and the signed header list
 * ("host;x-amz-date", appended to signed_headers). 0, PQ_ENOMEM, or
 * PQ_EINVAL (more than 64 headers, a header name with a control byte). */
int s3_canonical_request(const s3_sig_request *r, pq_buf *out, pq_buf *signed_headers,
                         pq_err *err);

/* hex(SHA-256(p[0..n))) into out[S3_SHA256_HEX]. */
void s3_sha256_hex(const void *p, size_t n, char out[S3_SHA256_HEX]);

/* The Authorization header's value (without "Authorization: ") into auth
 * (reset first). amz_date: "YYYYMMDDTHHMMSSZ". 0, PQ_ENOMEM, PQ_EINVAL. */
int s3_sign(const s3_creds *c, const char *region, const char *service, const char *amz_date,
            const s3_sig_request *r, pq_buf *auth, pq_err *err);

/* The string to sign for a canonical request (for tests). */
int s3_string_to_sign(const char *amz_date, const char *region, const char *service,
                      const char *canonical, size_t n, pq_buf *out);

#endif
