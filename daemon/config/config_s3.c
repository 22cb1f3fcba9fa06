/* config_s3.c - `output.s3` (DESIGN.md "Where files go"): bucket, prefix,
 * endpoint, region, path_style, credentials (env | profile NAME |
 * {access_key_id_file, secret_access_key_file}), ca_file, part_size. Only
 * the settings: credentials are read, and key files' modes checked, by
 * daemon/s3/s3_creds.c when the store starts (and at every reload).
 *
 * Object keys must be the same when a spool range is written again after
 * a crash (the replay then overwrites the object instead of adding a
 * second), so with s3 the path template may not use {pid} or {uuid} (they
 * differ between runs); {seq} is the file's first spool seq. Without an
 * output.path, s3 gets "dt=%Y-%m-%d/%H%M%S-{host}-{seq}.parquet".
 *
 * Thread: whichever loads the configuration. */
#include "config_int.h"

#include <stdlib.h>
#include <string.h>

#define S3_DEFAULT_PATH "dt=%Y-%m-%d/%H%M%S-{host}-{seq}.parquet"
#define MIB ((uint64_t)1 << 20)

void cf_s3_free(cf_s3 *s)
{
    if (s == NULL)
        return;
    free(s->bucket);
    free(s->prefix);
    free(s->endpoint);
    free(s->region);
    free(s->profile);
    free(s->key_id_file);
    free(s->secret_file);
    free(s->ca_file);
    memset(s, 0, sizeof *s);
}

/* "env", "profile NAME", or a mapping of two key files. */
static int parse_creds(cf_ctx *x, yaml_node_t *v, cf_s3 *s)
{
    static const char *const keys[] = {"access_key_id_file", "secret_access_key_file", NULL};
    const char *t = yp_scalar(v);
    if (t != NULL && strcmp(t, "env") == 0) {
        s->creds = CF_S3_ENV;
        return 0;
    }
    if (t != NULL && strncmp(t, "profile ", 8) == 0 && t[8] != '\0') {
        s->creds = CF_S3_PROFILE;
        return (s->profile = strdup(t + 8)) ? 0 : cf_nomem(x->err);
    }
    if (t != NULL)
        return yp_err(x->d, v, x->err, "output.s3.credentials: expected env, 'profile NAME' or "
                      "{access_key_id_file: F, secret_access_key_file: F}");
    int rc = yp_check_keys(x->d, v, "output.s3.credentials", keys, x->err);
    yaml_node_t *a = rc ? NULL : yp_get(x->d, v, keys[0]), *b = rc ? NULL : yp_get(x->d, v, keys[1]);
    if (rc == 0 && (a == NULL || b == NULL))
        return yp_err(x->d, v, x->err, "output.s3.credentials: needs both access_key_id_file "
                      "and secret_access_key_file");
    s->creds = CF_S3_FILES;
    rc = rc ? rc : yp_strdup(x->d, a, "output.s3.credentials.access_key_id_file",
                             &s->key_id_file, x->err);
    return rc ? rc : yp_strdup(x->d, b, "output.s3.credentials.secret_access_key_file",
                               &s->secret_file, x->err);
}

static int parse_endpoint(cf_ctx *x, yaml_node_t *v, cf_s3 *s)
{
    int rc = yp_strdup(x->d, v, "output.s3.endpoint", &s->endpoint, x->err);
    if (rc == 0 && strncmp(s->endpoint, "http://", 7) != 0 &&
        strncmp(s->endpoint, "https://", 8) != 0)
        return yp_err(x->d, v, x->err, "output.s3.endpoint: '%s' is not an http:// or "
                      "https:// URL", s->endpoint);
    size_t n = rc ? 0 : strlen(s->endpoint);
    while (n > 8 && s->endpoint[n - 1] == '/')
        s->endpoint[--n] = '\0';
    return rc;
}

static int parse_fields(cf_ctx *x, yaml_node_t *m, cf_s3 *s)
{
    yaml_node_t *v;
    int rc = 0;
    if ((v = yp_get(x->d, m, "prefix")) != NULL)
        rc = yp_strdup(x->d, v, "output.s3.prefix", &s->prefix, x->err);
    if (rc == 0 && s->prefix != NULL && s->prefix[0] == '/')
        return yp_err(x->d, v, x->err, "output.s3.prefix: must not start with '/'");
    if (rc == 0 && (v = yp_get(x->d, m, "endpoint")) != NULL)
        rc = parse_endpoint(x, v, s);
    if (rc == 0 && (v = yp_get(x->d, m, "region")) != NULL)
        rc = yp_strdup(x->d, v, "output.s3.region", &s->region, x->err);
    if (rc == 0 && (v = yp_get(x->d, m, "path_style")) != NULL)
        rc = yp_bool(x->d, v, "output.s3.path_style", &s->path_style, x->err);
    if (rc == 0 && (v = yp_get(x->d, m, "credentials")) != NULL)
        rc = parse_creds(x, v, s);
    if (rc == 0 && (v = yp_get(x->d, m, "ca_file")) != NULL)
        rc = yp_strdup(x->d, v, "output.s3.ca_file", &s->ca_file, x->err);
    if (rc == 0 && (v = yp_get(x->d, m, "part_size")) != NULL) {
        rc = yp_size(x->d, v, "output.s3.part_size", 5120 * MIB, &s->part_size, x->err);
        if (rc == 0 && s->part_size < 5 * MIB)
            rc = yp_err(x->d, v, x->err, "output.s3.part_size: at least 5MiB (S3's smallest "
                        "multipart part)");
    }
    return rc;
}

/* Bucket names: 3-63 of a-z 0-9 . - (S3's rules, loosely). */
static bool bucket_ok(const char *b)
{
    size_t n = strlen(b);
    if (n < 3 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_'))
            return false;
    }
    return true;
}

int cf_parse_s3(cf_ctx *x, yaml_node_t *m, cf_s3 **out)
{
    static const char *const keys[] = {"bucket", "prefix", "endpoint", "region", "path_style",
                                       "credentials", "ca_file", "part_size", NULL};
    int rc = yp_check_keys(x->d, m, "output.s3", keys, x->err);
    if (rc != 0)
        return rc;
    cf_s3 *s = calloc(1, sizeof *s);
    if (s == NULL)
        return cf_nomem(x->err);
    *out = s;
    s->part_size = 16 * MIB;
    s->pos = cf_pos_of(m);
    yaml_node_t *b = yp_get(x->d, m, "bucket");
    if (b == NULL)
        return yp_err(x->d, m, x->err, "output.s3: missing key 'bucket'");
    rc = yp_strdup(x->d, b, "output.s3.bucket", &s->bucket, x->err);
    if (rc == 0 && !bucket_ok(s->bucket))
        return yp_err(x->d, b, x->err, "output.s3.bucket: '%s' is not a bucket name (3 to 63 "
                      "characters of a-z, 0-9, '.', '-')", s->bucket);
    rc = rc ? rc : parse_fields(x, m, s);
    if (rc == 0 && s->prefix == NULL && (s->prefix = strdup("")) == NULL)
        rc = cf_nomem(x->err);
    return rc;
}

/* With s3 and no output.path: the default path without {pid} (a given
 * output.path with {pid} or {uuid} is refused where it is parsed,
 * config_output.c). */
int cf_s3_check_path(cf_ctx *x, yaml_node_t *path_node, cf_output *o)
{
    if (o->s3 == NULL || path_node != NULL)
        return 0;
    char *p = strdup(S3_DEFAULT_PATH);
    if (p == NULL)
        return cf_nomem(x->err);
    free(o->path);
    o->path = p;
    return 0;
}
