/* s3_client.c - signed S3 requests over libcurl (see s3_client.h). */
#include "s3_client.h"
#include "s3_creds.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define POOL_MAX 16
#define BODY_MAX ((size_t)1 << 20)
#define CONNECT_TIMEOUT_MS 5000L
#define LOW_SPEED_SECS 30L       /* a stalled transfer (under 1 B/s) fails */
#define BACKOFF_MAX_MS 10000u

struct s3_client {
    char *scheme_host;           /* "http://127.0.0.1:7480" */
    char *hostport;              /* "127.0.0.1:7480" */
    char *bucket, *prefix, *region, *ca_file;
    bool path_style;
    s3_creds creds;
    uint64_t part_size;
    int attempts;
    unsigned first_ms;
    pthread_mutex_t mu;
    CURL *idle[POOL_MAX];
    size_t n_idle;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

void s3_response_init(s3_response *r)
{
    memset(r, 0, sizeof *r);
    pq_buf_init(&r->body);
}

void s3_response_free(s3_response *r) { pq_buf_free(&r->body); }

static bool is_loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strncmp(host, "localhost", 9) == 0 ||
           strncmp(host, "[::1]", 5) == 0;
}

/* Splits "scheme://host[:port][/path]" into scheme_host and hostport. */
static int parse_endpoint(s3_client *c, const char *ep, bool *plain_remote, pq_err *err)
{
    const char *rest = strncmp(ep, "https://", 8) == 0 ? ep + 8
                     : strncmp(ep, "http://", 7) == 0 ? ep + 7 : NULL;
    if (rest == NULL || *rest == '\0' || *rest == '/')
        return pq_err_set(err, PQ_EINVAL, "output.s3.endpoint '%s' is not an http:// or "
                          "https:// URL", ep);
    size_t hl = strcspn(rest, "/?#");
    c->hostport = strndup(rest, hl);
    c->scheme_host = strndup(ep, (size_t)(rest - ep) + hl);
    if (c->hostport == NULL || c->scheme_host == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    *plain_remote = rest == ep + 7 && !is_loopback(c->hostport);
    return 0;
}

static const char *default_region(const cf_s3 *cfg)
{
    const char *r = cfg->region;
    if (r == NULL || *r == '\0')
        r = getenv("AWS_REGION");
    if (r == NULL || *r == '\0')
        r = getenv("AWS_DEFAULT_REGION");
    return r != NULL && *r != '\0' ? r : "us-east-1";
}

int s3_client_new(s3_client **out, const cf_s3 *cfg, const s3_creds *creds,
                  bool *plaintext_warning, pq_err *err)
{
    pthread_once(&curl_once, curl_init);
    s3_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    c->creds = *creds;
    c->part_size = cfg->part_size ? cfg->part_size : (uint64_t)16 << 20;
    c->path_style = cfg->path_style;
    c->attempts = S3_ATTEMPTS;
    c->first_ms = 200;
    c->bucket = strdup(cfg->bucket);
    c->prefix = strdup(cfg->prefix ? cfg->prefix : "");
    c->region = strdup(default_region(cfg));
    c->ca_file = cfg->ca_file ? strdup(cfg->ca_file) : NULL;
    char ep[512];
    if (cfg->endpoint != NULL)
        snprintf(ep, sizeof ep, "%s", cfg->endpoint);
    else
        snprintf(ep, sizeof ep, "https://s3.%s.amazonaws.com", c->region);
    bool plain = false;
    int rc = !c->bucket || !c->prefix || !c->region || (cfg->ca_file && !c->ca_file)
                 ? pq_err_set(err, PQ_ENOMEM, "out of memory")
                 : parse_endpoint(c, ep, &plain, err);
    if (rc != 0) {
        s3_client_free(c);
        return rc;
    }
    if (plaintext_warning != NULL)
        *plaintext_warning = plain;
    *out = c;
    return 0;
}

void s3_client_free(s3_client *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n_idle; i++)
        curl_easy_cleanup(c->idle[i]);
    s3_creds_wipe(&c->creds);
    pthread_mutex_destroy(&c->mu);
    free(c->scheme_host);
    free(c->hostport);
    free(c->bucket);
    free(c->prefix);
    free(c->region);
    free(c->ca_file);
    free(c);
}

void s3_client_set_retry(s3_client *c, int attempts, unsigned first_ms)
{
    c->attempts = attempts > 0 ? attempts : 1;
    c->first_ms = first_ms;
}

const char *s3_client_bucket(const s3_client *c) { return c->bucket; }
const char *s3_client_prefix(const s3_client *c) { return c->prefix; }
uint64_t s3_client_part_size(const s3_client *c) { return c->part_size; }

int s3_client_url(const s3_client *c, const char *key, char *out, size_t cap)
{
    int n = snprintf(out, cap, "s3://%s/%s", c->bucket, key ? key : "");
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* ---- one attempt ------------------------------------------------------------ */

static CURL *take(s3_client *c)
{
    pthread_mutex_lock(&c->mu);
    CURL *h = c->n_idle > 0 ? c->idle[--c->n_idle] : NULL;
    pthread_mutex_unlock(&c->mu);
    if (h == NULL)
        h = curl_easy_init();
    else
        curl_easy_reset(h);      /* keeps the live connection */
    return h;
}

static void give_back(s3_client *c, CURL *h)
{
    pthread_mutex_lock(&c->mu);
    if (c->n_idle < POOL_MAX) {
        c->idle[c->n_idle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    if (h != NULL)
        curl_easy_cleanup(h);
}

static size_t on_body(char *p, size_t size, size_t n, void *user)
{
    s3_response *r = user;
    size_t k = size * n;
    if (r->body.len + k <= BODY_MAX && pq_buf_append(&r->body, p, k) != 0)
        return 0;
    return k;
}

static void header_value(const char *p, size_t n, size_t name_len, char *out, size_t cap)
{
    const char *v = p + name_len;
    size_t k = n - name_len;
    while (k > 0 && (*v == ' ' || *v == '\t'))
        v++, k--;
    while (k > 0 && (v[k - 1] == '\r' || v[k - 1] == '\n' || v[k - 1] == ' '))
        k--;
    if (k >= cap)
        k = cap - 1;
    memcpy(out, v, k);
    out[k] = '\0';
}

static size_t on_header(char *p, size_t size, size_t n, void *user)
{
    s3_response *r = user;
    size_t k = size * n;
    if (k > 5 && strncasecmp(p, "etag:", 5) == 0)
        header_value(p, k, 5, r->etag, sizeof r->etag);
    else if (k > 23 && strncasecmp(p, "x-amz-meta-parqd-spool:", 23) == 0)
        header_value(p, k, 23, r->meta_spool, sizeof r->meta_spool);
    return k;
}

/* What one request needs besides the request itself: URL, path, query,
 * the signed headers and curl's header list. */
typedef struct built {
    pq_buf url, path, query, auth, scratch;
    char host[300], date[20], hash[S3_SHA256_HEX];
    struct curl_slist *hdrs;
} built;

static void built_free(built *b)
{
    pq_buf_free(&b->url);
    pq_buf_free(&b->path);
    pq_buf_free(&b->query);
    pq_buf_free(&b->auth);
    pq_buf_free(&b->scratch);
    curl_slist_free_all(b->hdrs);
}

static int add_header(built *b, const char *name, const char *value)
{
    pq_buf_reset(&b->scratch);
    size_t nl = strlen(name), vl = strlen(value);
    if (pq_buf_reserve(&b->scratch, nl + vl + 3) != 0)
        return PQ_ENOMEM;
    pq_buf_append(&b->scratch, name, nl);
    pq_buf_append(&b->scratch, ": ", 2);
    pq_buf_append(&b->scratch, value, vl);
    pq_buf_push(&b->scratch, '\0');
    struct curl_slist *n = curl_slist_append(b->hdrs, (const char *)b->scratch.data);
    if (n == NULL)
        return PQ_ENOMEM;
    b->hdrs = n;
    return 0;
}

static void amz_date(char out[20])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 20, "%Y%m%dT%H%M%SZ", &tm);
}

/* Path ("/bucket/key" or "/key"), URL, host; then sign. */
static int build(s3_client *c, const s3_request *r, built *b, pq_err *err)
{
    int rc = 0;
    const char *slash = "/";
    if (c->path_style) {
        snprintf(b->host, sizeof b->host, "%s", c->hostport);
        rc = pq_buf_append(&b->path, slash, 1);
        rc = rc ? rc : pq_buf_append(&b->path, c->bucket, strlen(c->bucket));
        if (rc == 0 && r->key != NULL)
            rc = pq_buf_append(&b->path, slash, 1);
    } else {
        snprintf(b->host, sizeof b->host, "%s.%s", c->bucket, c->hostport);
        rc = pq_buf_append(&b->path, slash, 1);
    }
    if (rc == 0 && r->key != NULL)
        rc = pq_buf_append(&b->path, r->key, strlen(r->key));
    rc = rc ? rc : pq_buf_push(&b->path, '\0');
    rc = rc ? rc : s3_canonical_query(&b->query, r->params, r->n_params);
    rc = rc ? rc : pq_buf_push(&b->query, '\0');
    if (rc != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    const char *scheme_end = strstr(c->scheme_host, "://") + 3;
    rc = pq_buf_append(&b->url, c->scheme_host, (size_t)(scheme_end - c->scheme_host));
    rc = rc ? rc : pq_buf_append(&b->url, b->host, strlen(b->host));
    rc = rc ? rc : s3_uri_encode(&b->url, (const char *)b->path.data, b->path.len - 1, 1);
    if (rc == 0 && b->query.len > 1) {
        rc = pq_buf_push(&b->url, '?');
        rc = rc ? rc : pq_buf_append(&b->url, b->query.data, b->query.len - 1);
    }
    rc = rc ? rc : pq_buf_push(&b->url, '\0');
    return rc ? pq_err_set(err, PQ_ENOMEM, "out of memory") : 0;
}

static int sign(s3_client *c, const s3_request *r, built *b, pq_err *err)
{
    s3_header h[24];
    size_t n = 0;
    amz_date(b->date);
    s3_sha256_hex(r->body ? r->body : "", r->body_len, b->hash);
    h[n++] = (s3_header){"host", b->host};
    h[n++] = (s3_header){"x-amz-date", b->date};
    h[n++] = (s3_header){"x-amz-content-sha256", b->hash};
    if (c->creds.session_token[0] != '\0')
        h[n++] = (s3_header){"x-amz-security-token", c->creds.session_token};
    for (size_t i = 0; i < r->n_headers && n < sizeof h / sizeof h[0]; i++)
        h[n++] = r->headers[i];
    s3_sig_request sr = {r->method, (const char *)b->path.data, r->params, r->n_params,
                         h, n, b->hash};
    int rc = s3_sign(&c->creds, c->region, "s3", b->date, &sr, &b->auth, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = add_header(b, h[i].name, h[i].value);
    rc = rc ? rc : add_header(b, "Authorization", (const char *)b->auth.data);
    if (rc == 0) {
        /* no "Expect: 100-continue" round trip; S3 ignores the type */
        struct curl_slist *x = curl_slist_append(b->hdrs, "Expect:");
        x = x ? curl_slist_append(x, "Content-Type: application/octet-stream") : NULL;
        rc = x == NULL ? PQ_ENOMEM : 0;
        if (x != NULL)
            b->hdrs = x;
    }
    return rc ? pq_err_set(err, rc, "S3 %s: cannot sign the request: %s", s3_op_name(r->op),
                           rc == PQ_ENOMEM ? "out of memory" : err->msg)
              : 0;
}

static void setup(s3_client *c, CURL *h, const s3_request *r, built *b, s3_response *resp)
{
    curl_easy_setopt(h, CURLOPT_URL, (const char *)b->url.data);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, b->hdrs);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, LOW_SPEED_SECS);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, resp);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (c->ca_file != NULL)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    if (strcmp(r->method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (strcmp(r->method, "GET") != 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    }
}

static bool retryable_code(const char *code)
{
    return strcmp(code, "SlowDown") == 0 || strcmp(code, "RequestTimeout") == 0 ||
           strcmp(code, "InternalError") == 0 || strcmp(code, "ServiceUnavailable") == 0;
}

/* Reads the outcome into resp and err. */
static int classify(s3_client *c, const s3_request *r, CURLcode cc, s3_response *resp,
                    pq_err *err)
{
    char where[1200];
    s3_client_url(c, r->key, where, sizeof where);
    if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE ||
        cc == CURLE_SSL_CERTPROBLEM || cc == CURLE_UNSUPPORTED_PROTOCOL)
        return pq_err_set(err, PQ_EIO, "S3 %s %s: %s: %s (not retried: check the endpoint and "
                          "output.s3.ca_file)", s3_op_name(r->op), where, c->scheme_host,
                          curl_easy_strerror(cc));
    if (cc != CURLE_OK) {
        resp->retryable = true;
        return pq_err_set(err, PQ_EIO, "S3 %s %s: cannot reach %s: %s", s3_op_name(r->op),
                          where, c->scheme_host, curl_easy_strerror(cc));
    }
    pq_err xe = {0};
    int isxml = resp->body.len > 0 && s3_xml_error_parse((const char *)resp->body.data,
                                                         resp->body.len, &resp->error, &xe) == 1;
    long st = resp->status;
    if (st >= 200 && st < 300 && !isxml)
        return 0;
    if (st == 404 && r->ok_404)
        return 0;
    if (!isxml)
        snprintf(resp->error.code, sizeof resp->error.code, "%s",
                 st == 403 ? "Forbidden" : st == 404 ? "NotFound" : st == 400 ? "BadRequest"
                 : st >= 500 ? "ServerError" : "HTTPError");
    resp->retryable = st >= 500 || st == 429 || st == 408 || (st >= 200 && st < 300) ||
                      retryable_code(resp->error.code);
    return pq_err_set(err, PQ_EIO, "S3 %s %s: %ld %s%s%s", s3_op_name(r->op), where, st,
                      resp->error.code, resp->error.message[0] ? ": " : "",
                      resp->error.message);
}

static int once(s3_client *c, const s3_request *r, s3_response *resp, pq_err *err)
{
    built b;
    memset(&b, 0, sizeof b);
    pq_buf_init(&b.url);
    pq_buf_init(&b.path);
    pq_buf_init(&b.query);
    pq_buf_init(&b.auth);
    pq_buf_init(&b.scratch);
    pq_buf_reset(&resp->body);
    resp->status = 0;
    resp->etag[0] = resp->meta_spool[0] = '\0';
    memset(&resp->error, 0, sizeof resp->error);
    resp->retryable = false;
    int rc = build(c, r, &b, err);
    rc = rc ? rc : sign(c, r, &b, err);
    CURL *h = rc ? NULL : take(c);
    if (rc == 0 && h == NULL)
        rc = pq_err_set(err, PQ_ENOMEM, "S3: cannot create a curl handle");
    if (rc == 0) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        setup(c, h, r, &b, resp);
        CURLcode cc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        uint64_t us = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000 +
                                 (t1.tv_nsec - t0.tv_nsec) / 1000);
        s3_metrics_request(r->op, cc == CURLE_OK ? resp->status : 0, us);
        rc = classify(c, r, cc, resp, err);
        if (rc == 0 && r->body_len > 0)
            s3_metrics_uploaded(r->body_len);
        give_back(c, h);
    }
    built_free(&b);
    return rc;
}

/* Equal jitter: half the backoff fixed, half random, so retries of many
 * writers spread out but never come back at once. */
static void backoff(const s3_client *c, int attempt)
{
    unsigned ms = c->first_ms << (attempt < 16 ? attempt : 16);
    if (ms > BACKOFF_MAX_MS || ms == 0)
        ms = BACKOFF_MAX_MS;
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&ms;
    ms = ms / 2 + (unsigned)rand_r(&seed) % (ms / 2 + 1);
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int s3_client_do(s3_client *c, const s3_request *r, s3_response *resp, pq_err *err)
{
    pq_err local = {0};
    if (err == NULL)
        err = &local;
    for (int attempt = 0;; attempt++) {
        int rc = once(c, r, resp, err);
        if (rc == 0 || !resp->retryable || attempt + 1 >= c->attempts)
            return rc;
        s3_metrics_retry();
        backoff(c, attempt);
    }
}
