/* s3_sigv4.c - AWS Signature Version 4 (see s3_sigv4.h). */
#include "s3_sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEADERS 64

static const char hexd[] = "0123456789abcdef";

static int put(pq_buf *b, const char *s) { return pq_buf_append(b, s, strlen(s)); }

static void to_hex(const unsigned char *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hexd[p[i] >> 4];
        out[2 * i + 1] = hexd[p[i] & 15];
    }
    out[2 * n] = '\0';
}

void s3_sha256_hex(const void *p, size_t n, char out[S3_SHA256_HEX])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(p, n, md);
    to_hex(md, sizeof md, out);
}

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

int s3_uri_encode(pq_buf *out, const char *s, size_t n, int keep_slash)
{
    static const char HEX[] = "0123456789ABCDEF";
    if (pq_buf_reserve(out, n * 3) != 0)
        return PQ_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c) || (keep_slash && c == '/')) {
            out->data[out->len++] = c;
        } else {
            out->data[out->len++] = '%';
            out->data[out->len++] = (uint8_t)HEX[c >> 4];
            out->data[out->len++] = (uint8_t)HEX[c & 15];
        }
    }
    return 0;
}

/* One encoded "k=v" pair, for sorting. */
typedef struct qpair {
    size_t off, klen, len;       /* in the scratch buffer */
    const uint8_t *base;
} qpair;

static int cmp_pair(const void *a, const void *b)
{
    const qpair *x = a, *y = b;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->base + x->off, y->base + y->off, n);
    if (c != 0 || x->klen != y->klen)
        return c != 0 ? c : (x->klen < y->klen ? -1 : 1);
    n = x->len < y->len ? x->len : y->len;
    c = memcmp(x->base + x->off, y->base + y->off, n);
    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

int s3_canonical_query(pq_buf *out, const s3_param *p, size_t n)
{
    if (n == 0)
        return 0;
    pq_buf tmp;
    pq_buf_init(&tmp);
    qpair *q = malloc(n * sizeof *q);
    int rc = q == NULL ? PQ_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *v = p[i].value ? p[i].value : "";
        q[i].off = tmp.len;
        rc = s3_uri_encode(&tmp, p[i].key, strlen(p[i].key), 0);
        q[i].klen = tmp.len - q[i].off;
        rc = rc ? rc : pq_buf_push(&tmp, '=');
        rc = rc ? rc : s3_uri_encode(&tmp, v, strlen(v), 0);
        q[i].len = tmp.len - q[i].off;
    }
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            q[i].base = tmp.data;
        qsort(q, n, sizeof *q, cmp_pair);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            rc = i > 0 ? pq_buf_push(out, '&') : 0;
            rc = rc ? rc : pq_buf_append(out, tmp.data + q[i].off, q[i].len);
        }
    }
    free(q);
    pq_buf_free(&tmp);
    return rc;
}

typedef struct hdr {
    char name[64];
    const char *value;
} hdr;

static int cmp_hdr(const void *a, const void *b)
{
    return strcmp(((const hdr *)a)->name, ((const hdr *)b)->name);
}

/* Trimmed value with runs of spaces collapsed to one. */
static int put_value(pq_buf *b, const char *v)
{
    while (*v == ' ' || *v == '\t')
        v++;
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    for (size_t i = 0; i < n; i++) {
        if ((v[i] == ' ' || v[i] == '\t') && i > 0 && (v[i - 1] == ' ' || v[i - 1] == '\t'))
            continue;
        if (pq_buf_push(b, v[i] == '\t' ? ' ' : (uint8_t)v[i]) != 0)
            return PQ_ENOMEM;
    }
    return 0;
}

static int sorted_headers(const s3_sig_request *r, hdr *h, pq_err *err)
{
    if (r->n_headers > MAX_HEADERS)
        return pq_err_set(err, PQ_EINVAL, "sigv4: %zu headers to sign (at most %d)",
                          r->n_headers, MAX_HEADERS);
    for (size_t i = 0; i < r->n_headers; i++) {
        const char *nm = r->headers[i].name;
        size_t n = strlen(nm);
        if (n == 0 || n >= sizeof h[i].name)
            return pq_err_set(err, PQ_EINVAL, "sigv4: header name of %zu bytes", n);
        for (size_t k = 0; k <= n; k++) {
            unsigned char c = (unsigned char)nm[k];
            if (k < n && (c <= ' ' || c == ':' || c >= 127))
                return pq_err_set(err, PQ_EINVAL, "sigv4: header name with byte 0x%02x", c);
            h[i].name[k] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        h[i].value = r->headers[i].value ? r->headers[i].value : "";
    }
    qsort(h, r->n_headers, sizeof *h, cmp_hdr);
    return 0;
}

int s3_canonical_request(const s3_sig_request *r, pq_buf *out, pq_buf *signed_headers,
                         pq_err *err)
{
    hdr h[MAX_HEADERS];
    int rc = sorted_headers(r, h, err);
    if (rc != 0)
        return rc;
    const char *path = r->path && *r->path ? r->path : "/";
    rc = put(out, r->method);
    rc = rc ? rc : pq_buf_push(out, '\n');
    rc = rc ? rc : s3_uri_encode(out, path, strlen(path), 1);
    rc = rc ? rc : pq_buf_push(out, '\n');
    rc = rc ? rc : s3_canonical_query(out, r->params, r->n_params);
    rc = rc ? rc : pq_buf_push(out, '\n');
    for (size_t i = 0; rc == 0 && i < r->n_headers; i++) {
        rc = put(out, h[i].name);
        rc = rc ? rc : pq_buf_push(out, ':');
        rc = rc ? rc : put_value(out, h[i].value);
        rc = rc ? rc : pq_buf_push(out, '\n');
        rc = rc ? rc : (i > 0 ? pq_buf_push(signed_headers, ';') : 0);
        rc = rc ? rc : put(signed_headers, h[i].name);
    }
    rc = rc ? rc : pq_buf_push(out, '\n');
    rc = rc ? rc : pq_buf_append(out, signed_headers->data, signed_headers->len);
    rc = rc ? rc : pq_buf_push(out, '\n');
    rc = rc ? rc : put(out, r->payload_hash ? r->payload_hash : S3_EMPTY_SHA256);
    return rc ? pq_err_set(err, PQ_ENOMEM, "sigv4: out of memory") : 0;
}

int s3_string_to_sign(const char *amz_date, const char *region, const char *service,
                      const char *canonical, size_t n, pq_buf *out)
{
    char hash[S3_SHA256_HEX];
    s3_sha256_hex(canonical, n, hash);
    int rc = put(out, "AWS4-HMAC-SHA256\n");
    rc = rc ? rc : put(out, amz_date);
    rc = rc ? rc : pq_buf_push(out, '\n');
    rc = rc ? rc : pq_buf_append(out, amz_date, 8);
    rc = rc ? rc : pq_buf_push(out, '/');
    rc = rc ? rc : put(out, region);
    rc = rc ? rc : pq_buf_push(out, '/');
    rc = rc ? rc : put(out, service);
    rc = rc ? rc : put(out, "/aws4_request\n");
    return rc ? rc : put(out, hash);
}

static void hmac(const void *key, size_t klen, const void *msg, size_t n, unsigned char out[32])
{
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)klen, msg, n, out, &len);
}

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service),
 * "aws4_request"). */
static void signing_key(const s3_creds *c, const char *date8, const char *region,
                        const char *service, unsigned char out[32])
{
    char k0[4 + sizeof c->secret_key];
    size_t sl = strnlen(c->secret_key, sizeof c->secret_key - 1);
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, c->secret_key, sl);
    unsigned char a[32], b[32];
    hmac(k0, 4 + sl, date8, 8, a);
    hmac(a, 32, region, strlen(region), b);
    hmac(b, 32, service, strlen(service), a);
    hmac(a, 32, "aws4_request", 12, out);
    OPENSSL_cleanse(k0, sizeof k0);
    OPENSSL_cleanse(a, sizeof a);
    OPENSSL_cleanse(b, sizeof b);
}

int s3_sign(const s3_creds *c, const char *region, const char *service, const char *amz_date,
            const s3_sig_request *r, pq_buf *auth, pq_err *err)
{
    if (strlen(amz_date) != 16)
        return pq_err_set(err, PQ_EINVAL, "sigv4: date '%s' is not YYYYMMDDTHHMMSSZ", amz_date);
    pq_buf canon, sh, sts;
    pq_buf_init(&canon);
    pq_buf_init(&sh);
    pq_buf_init(&sts);
    int rc = s3_canonical_request(r, &canon, &sh, err);
    if (rc == 0 && s3_string_to_sign(amz_date, region, service, (const char *)canon.data,
                                     canon.len, &sts) != 0)
        rc = pq_err_set(err, PQ_ENOMEM, "sigv4: out of memory");
    if (rc == 0) {
        unsigned char key[32], sig[32];
        char hex[65];
        signing_key(c, amz_date, region, service, key);
        hmac(key, 32, sts.data, sts.len, sig);
        OPENSSL_cleanse(key, sizeof key);
        to_hex(sig, 32, hex);
        pq_buf_reset(auth);
        int w = put(auth, "AWS4-HMAC-SHA256 Credential=");
        w = w ? w : put(auth, c->access_key);
        w = w ? w : pq_buf_push(auth, '/');
        w = w ? w : pq_buf_append(auth, amz_date, 8);
        w = w ? w : pq_buf_push(auth, '/');
        w = w ? w : put(auth, region);
        w = w ? w : pq_buf_push(auth, '/');
        w = w ? w : put(auth, service);
        w = w ? w : put(auth, "/aws4_request, SignedHeaders=");
        w = w ? w : pq_buf_append(auth, sh.data, sh.len);
        w = w ? w : put(auth, ", Signature=");
        w = w ? w : put(auth, hex);
        w = w ? w : pq_buf_push(auth, '\0');
        if (w != 0)
            rc = pq_err_set(err, PQ_ENOMEM, "sigv4: out of memory");
        else
            auth->len--;         /* NUL kept after the data */
    }
    pq_buf_free(&canon);
    pq_buf_free(&sh);
    pq_buf_free(&sts);
    return rc;
}
