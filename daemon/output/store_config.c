/* store_config.c - the output store a configuration names: the local
 * directory output.dir, or output.s3 (credentials read now, so a reload
 * reads them again); and, for `parqd convert -o s3://bucket/prefix/`, an
 * S3 store for that bucket and prefix with the rest of output.s3 (or, with
 * none, credentials from the environment and the endpoint from
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, path-style).
 *
 * Threads: the owner's (start-up, reload, convert's main thread). */
#include "store_config.h"

#include <stdlib.h>
#include <string.h>

#include "s3_creds.h"
#include "store_s3.h"

static int make_s3(const cf_s3 *cfg, const char *state_dir, st_store **out, bool *plain_http,
                   pq_err *err)
{
    s3_creds creds;
    int rc = s3_creds_load(cfg, &creds, err);
    s3_client *cli = NULL;
    rc = rc ? rc : s3_client_new(&cli, cfg, &creds, plain_http, err);
    s3_creds_wipe(&creds);
    return rc ? rc : st_s3_new(out, cli, state_dir, err);
}

int st_from_config(const cf_output *o, const char *state_dir, st_store **out, bool *plain_http,
                   pq_err *err)
{
    *plain_http = false;
    if (o->s3 == NULL)
        return st_local_new(out, o->dir, err);
    return make_s3(o->s3, state_dir, out, plain_http, err);
}

bool st_is_s3_url(const char *s) { return s != NULL && strncmp(s, "s3://", 5) == 0; }

int st_from_s3_url(const char *url, const cf_output *o, st_store **out, bool *plain_http,
                   pq_err *err)
{
    const char *b = url + 5, *slash = strchr(b, '/');
    size_t n = strlen(url);
    if (slash == NULL || slash == b || url[n - 1] != '/')
        return pq_err_set(err, PQ_EINVAL, "-o %s: an S3 output is a bucket and a prefix ending "
                          "in '/' (s3://bucket/prefix/); files are named by output.path", url);
    cf_s3 c;
    memset(&c, 0, sizeof c);
    if (o->s3 != NULL)
        c = *o->s3;              /* borrowed strings; bucket and prefix replaced */
    else {
        const char *ep = getenv("AWS_ENDPOINT_URL_S3");
        c.endpoint = (char *)(ep && *ep ? ep : getenv("AWS_ENDPOINT_URL"));
        c.path_style = c.endpoint != NULL;
        c.part_size = (uint64_t)16 << 20;
    }
    char *bucket = strndup(b, (size_t)(slash - b)), *prefix = strdup(slash + 1);
    int rc = bucket && prefix ? 0 : pq_err_set(err, PQ_ENOMEM, "out of memory");
    c.bucket = bucket;
    c.prefix = prefix;
    rc = rc ? rc : make_s3(&c, NULL, out, plain_http, err);
    free(bucket);
    free(prefix);
    return rc;
}
