/* http_auth.c - an http input's credentials (http_auth.h): the secret
 * file read once (first line, trailing CR/LF and blanks cut), kept as the
 * exact header value expected ("Bearer t0ken", "Basic dXNlcjpwdw=="), and
 * compared in constant time.
 *
 * Thread: loading where the listeners are made; checks on the loop. */
#include "http_auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "keyfile.h"

#define HA_SECRET_MAX 4096

struct hp_auth {
    size_t len;
    char want[];                 /* the expected Authorization value */
};

/* The first line of path, without trailing CR, LF, spaces and tabs. */
static int read_secret(const char *path, char *out, size_t cap, size_t *len, pq_err *err)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return pq_err_set(err, PQ_EIO, "%s: %s", path, strerror(errno));
    size_t n = fread(out, 1, cap - 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return pq_err_set(err, PQ_EIO, "%s: read error", path);
    out[n] = '\0';
    char *nl = memchr(out, '\n', n);
    if (nl != NULL)
        n = (size_t)(nl - out);
    while (n > 0 && (out[n - 1] == '\r' || out[n - 1] == ' ' || out[n - 1] == '\t'))
        n--;
    if (n == 0)
        return pq_err_set(err, PQ_EINVAL, "%s: empty (expected the secret on the first line)",
                          path);
    *len = n;
    return PQ_OK;
}

static int build(hp_auth **out, bool basic, const char *secret, size_t n, pq_err *err)
{
    size_t cap = 6 + 4 * ((n + 2) / 3) + 1;
    hp_auth *a = malloc(sizeof *a + cap + 8);
    if (a == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    if (basic) {
        memcpy(a->want, "Basic ", 6);
        int k = EVP_EncodeBlock((unsigned char *)a->want + 6, (const unsigned char *)secret,
                                (int)n);
        a->len = 6 + (size_t)k;
    } else {
        memcpy(a->want, "Bearer ", 7);
        memcpy(a->want + 7, secret, n);
        a->len = 7 + n;
    }
    *out = a;
    return PQ_OK;
}

int hp_auth_load(hp_auth **out, const cf_http *h, size_t input, pq_err *err)
{
    *out = NULL;
    bool basic = h->basic_file != NULL;
    const char *path = basic ? h->basic_file : h->bearer_token_file;
    if (path == NULL)
        return PQ_OK;
    char what[64], secret[HA_SECRET_MAX];
    size_t n = 0;
    snprintf(what, sizeof what, "inputs[%zu].auth %s", input, basic ? "basic_file" :
             "bearer_token_file");
    int rc = kf_check_mode(path, what, err);
    rc = rc ? rc : read_secret(path, secret, sizeof secret, &n, err);
    if (rc == 0 && basic && memchr(secret, ':', n) == NULL)
        rc = pq_err_set(err, PQ_EINVAL, "%s: expected user:password on the first line", path);
    rc = rc ? rc : build(out, basic, secret, n, err);
    OPENSSL_cleanse(secret, sizeof secret);
    return rc == 0 ? 0 : pq_err_prefix(err, rc, "%s", what);
}

void hp_auth_free(hp_auth *a)
{
    if (a == NULL)
        return;
    OPENSSL_cleanse(a->want, a->len);
    free(a);
}

bool hp_auth_check(const hp_auth *a, const char *value, size_t len)
{
    if (a == NULL)
        return true;
    if (value == NULL)
        return false;
    /* Constant time in the secret: every byte of the expected value is
     * compared whatever the sent length; only the length itself (public
     * for a token of fixed format) decides early. */
    unsigned char diff = len != a->len;
    for (size_t i = 0; i < a->len; i++)
        diff |= (unsigned char)(a->want[i] ^ (i < len ? value[i] : 0));
    return diff == 0;
}
