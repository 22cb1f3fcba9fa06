/* s3_creds.c - S3 credentials (see s3_creds.h). */
#include "s3_creds.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyfile.h"

void s3_creds_wipe(s3_creds *c) { OPENSSL_cleanse(c, sizeof *c); }

static int set(char *dst, size_t cap, const char *v, const char *what, const char *from,
               pq_err *err)
{
    size_t n = strlen(v);
    if (n == 0)
        return pq_err_set(err, PQ_EINVAL, "S3 credentials: %s is empty in %s", what, from);
    if (n >= cap)
        return pq_err_set(err, PQ_EINVAL, "S3 credentials: %s in %s is longer than %zu bytes",
                          what, from, cap - 1);
    memcpy(dst, v, n + 1);
    return 0;
}

static int from_env(s3_creds *c, pq_err *err)
{
    const char *id = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
    const char *tok = getenv("AWS_SESSION_TOKEN");
    if (id == NULL || sk == NULL)
        return pq_err_set(err, PQ_EINVAL, "S3 credentials: %s is not set in the environment "
                          "(output.s3.credentials: env)",
                          id == NULL ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY");
    int rc = set(c->access_key, sizeof c->access_key, id, "AWS_ACCESS_KEY_ID", "the environment",
                 err);
    rc = rc ? rc : set(c->secret_key, sizeof c->secret_key, sk, "AWS_SECRET_ACCESS_KEY",
                       "the environment", err);
    if (rc == 0 && tok != NULL && *tok != '\0')
        rc = set(c->session_token, sizeof c->session_token, tok, "AWS_SESSION_TOKEN",
                 "the environment", err);
    return rc;
}

/* Strips blanks at both ends, in place. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
                     s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* One "key = value" line of the wanted section. */
static int profile_line(char *line, s3_creds *c, const char *file, pq_err *err)
{
    char *eq = strchr(line, '=');
    if (eq == NULL)
        return 0;
    *eq = '\0';
    char *k = trim(line), *v = trim(eq + 1);
    if (strcmp(k, "aws_access_key_id") == 0)
        return set(c->access_key, sizeof c->access_key, v, k, file, err);
    if (strcmp(k, "aws_secret_access_key") == 0)
        return set(c->secret_key, sizeof c->secret_key, v, k, file, err);
    if (strcmp(k, "aws_session_token") == 0)
        return set(c->session_token, sizeof c->session_token, v, k, file, err);
    return 0;
}

static int from_profile(const char *profile, s3_creds *c, pq_err *err)
{
    char path[4096];
    const char *env = getenv("AWS_SHARED_CREDENTIALS_FILE"), *home = getenv("HOME");
    if (env != NULL && *env != '\0')
        snprintf(path, sizeof path, "%s", env);
    else
        snprintf(path, sizeof path, "%s/.aws/credentials", home ? home : "");
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return pq_err_set(err, PQ_EIO, "S3 credentials: cannot open %s: %s", path,
                          strerror(errno));
    char line[4096];
    bool in = false, found = false;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        char *t = trim(line);
        if (*t == '[') {
            char *end = strchr(t, ']');
            if (end != NULL)
                *end = '\0';
            in = strcmp(trim(t + 1), profile) == 0;
            found = found || in;
        } else if (in && *t != '#' && *t != ';') {
            rc = profile_line(t, c, path, err);
        }
    }
    OPENSSL_cleanse(line, sizeof line);
    fclose(f);
    if (rc == 0 && !found)
        rc = pq_err_set(err, PQ_EINVAL, "S3 credentials: no profile [%s] in %s", profile, path);
    if (rc == 0 && (c->access_key[0] == '\0' || c->secret_key[0] == '\0'))
        rc = pq_err_set(err, PQ_EINVAL, "S3 credentials: profile [%s] in %s lacks %s", profile,
                        path, c->access_key[0] ? "aws_secret_access_key" : "aws_access_key_id");
    return rc;
}

static int read_key_file(const char *path, const char *what, char *dst, size_t cap,
                         pq_err *err)
{
    int rc = kf_check_mode(path, "S3 key file", err);
    if (rc != 0)
        return rc;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return pq_err_set(err, PQ_EIO, "S3 key file %s: cannot open: %s", path, strerror(errno));
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    rc = set(dst, cap, trim(buf), what, path, err);
    OPENSSL_cleanse(buf, sizeof buf);
    return rc;
}

int s3_creds_load(const cf_s3 *cfg, s3_creds *out, pq_err *err)
{
    memset(out, 0, sizeof *out);
    int rc;
    switch (cfg->creds) {
    case CF_S3_PROFILE:
        rc = from_profile(cfg->profile, out, err);
        break;
    case CF_S3_FILES:
        rc = read_key_file(cfg->key_id_file, "the access key id", out->access_key,
                           sizeof out->access_key, err);
        rc = rc ? rc : read_key_file(cfg->secret_file, "the secret access key", out->secret_key,
                                     sizeof out->secret_key, err);
        break;
    default:
        rc = from_env(out, err);
        break;
    }
    if (rc != 0)
        s3_creds_wipe(out);
    return rc;
}
