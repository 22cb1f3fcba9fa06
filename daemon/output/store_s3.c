/* store_s3.c - the S3 store's operations (see store_s3.h): open, append
 * (store_s3_parts.c), finish, publish by PutObject or
 * CompleteMultipartUpload, abort, unpublish, and the recovery question
 * (HeadObject).
 *
 * Threads: as store.h. */
#include "store_s3_int.h"

#include <openssl/evp.h>
#include <openssl/md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pathtpl.h"

static const st_ops s3_ops;

static s3_file *as_s3(st_file *f) { return (s3_file *)f; }

static int s_open(st_store *st, const char *name, st_file **out, pq_err *err)
{
    s3_store *s = (s3_store *)st;
    int rc = pt_check_relative(name, err);
    if (rc != 0)
        return rc;
    s3_file *f = calloc(1, sizeof *f);
    const char *prefix = s3_client_prefix(s->cli);
    size_t kl = strlen(prefix) + strlen(name) + 1;
    char *key = malloc(kl), *where = malloc(kl + 300);
    if (f == NULL || key == NULL || where == NULL) {
        free(f);
        free(key);
        free(where);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    snprintf(key, kl, "%s%s", prefix, name);
    s3_client_url(s->cli, key, where, kl + 300);
    f->base.store = st;
    f->s = s;
    f->key = key;
    f->where = where;
    f->state = S3F_OPEN;
    *out = &f->base;
    return 0;
}

static int s_append(st_file *sf, const void *p, size_t n, pq_err *err)
{
    s3_file *f = as_s3(sf);
    if (f->state != S3F_OPEN)
        return pq_err_set(err, PQ_ESTATE, "S3 %s: write after finish", f->where);
    return s3p_append(f, p, n, err);
}

static int s_finish(st_file *sf, const char *range, pq_err *err)
{
    s3_file *f = as_s3(sf);
    if (f->state != S3F_OPEN)
        return pq_err_set(err, PQ_ESTATE, "S3 %s: finish twice", f->where);
    snprintf(f->range, sizeof f->range, "%s", range ? range : "");
    /* Under one part: kept for a single PUT at publication, unless the
     * owner publishes late (st_s3_upload_at_finish). */
    int rc = 0;
    if (f->next_part > 0 || f->s->upload_at_finish) {
        rc = s3p_flush_all(f, err);
        if (rc == 0)
            s3p_release(f);      /* every byte is up: no memory held until publication */
    }
    if (rc == 0)
        f->state = S3F_FINISHED;
    return rc;
}

static void content_md5(const void *p, size_t n, char out[32])
{
    unsigned char md[MD5_DIGEST_LENGTH];
    EVP_Digest(p, n, md, NULL, EVP_md5(), NULL);
    EVP_EncodeBlock((unsigned char *)out, md, sizeof md);
}

static int put_object(s3_file *f, pq_err *err)
{
    const pq_buf *d = &f->slots[f->cur].data;
    char md5[32];
    content_md5(d->data ? (const void *)d->data : "", d->len, md5);
    s3_header h[] = {{"Content-MD5", md5}, {"x-amz-meta-parqd-writer", "parqd"},
                     {"x-amz-meta-parqd-spool", f->range}};
    s3_request r = {.op = S3_OP_PUT, .method = "PUT", .key = f->key, .headers = h,
                    .n_headers = f->range[0] ? 3 : 2, .body = d->data, .body_len = d->len};
    s3_response resp;
    s3_response_init(&resp);
    int rc = s3_client_do(f->s->cli, &r, &resp, err);
    s3_response_free(&resp);
    return rc;
}

static int complete_body(s3_file *f, pq_buf *b)
{
    int rc = pq_buf_append(b, "<CompleteMultipartUpload>", 25);
    for (int i = 0; rc == 0 && i < f->next_part; i++) {
        char part[256];
        int n = snprintf(part, sizeof part, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag>"
                         "</Part>", i + 1, f->etags[i]);
        rc = pq_buf_append(b, part, (size_t)n);
    }
    return rc ? rc : pq_buf_append(b, "</CompleteMultipartUpload>", 26);
}

/* Was the key published (HEAD)? For a Complete whose first reply was lost. */
static int head(s3_store *s, const char *key, bool *yes, s3_response *resp, pq_err *err)
{
    s3_request r = {.op = S3_OP_HEAD, .method = "HEAD", .key = key, .ok_404 = true};
    int rc = s3_client_do(s->cli, &r, resp, err);
    *yes = rc == 0 && resp->status >= 200 && resp->status < 300;
    return rc;
}

static int complete(s3_file *f, pq_err *err)
{
    pq_buf body;
    pq_buf_init(&body);
    if (complete_body(f, &body) != 0) {
        pq_buf_free(&body);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    s3_param q[] = {{"uploadId", f->upload_id}};
    s3_request r = {.op = S3_OP_COMPLETE_MPU, .method = "POST", .key = f->key, .params = q,
                    .n_params = 1, .body = body.data, .body_len = body.len};
    s3_response resp;
    s3_response_init(&resp);
    int rc = s3_client_do(f->s->cli, &r, &resp, err);
    if (rc != 0 && strcmp(resp.error.code, "NoSuchUpload") == 0) {
        /* A retry after a Complete that did succeed: the object is there. */
        bool yes = false;
        pq_err herr = {0};
        if (head(f->s, f->key, &yes, &resp, &herr) == 0 && yes)
            rc = 0;
    }
    s3_response_free(&resp);
    pq_buf_free(&body);
    return rc;
}

static int s_publish(st_file *sf, const char *name, pq_err *err)
{
    s3_file *f = as_s3(sf);
    if (f->state != S3F_FINISHED)
        return pq_err_set(err, PQ_ESTATE, "S3 %s: publish before finish", f->where);
    size_t pl = strlen(s3_client_prefix(f->s->cli));
    if (strcmp(f->key + pl, name) != 0)
        return pq_err_set(err, PQ_EINVAL, "S3 %s: cannot publish under another name (%s)",
                          f->where, name);
    int rc = f->next_part > 0 ? complete(f, err) : put_object(f, err);
    if (rc != 0)
        return rc;
    f->state = S3F_PUBLISHED;
    s3_metrics_published();
    s3p_free(f);                 /* the staged bytes are not needed any more */
    return 0;
}

static int abort_upload(s3_file *f, pq_err *err)
{
    s3_param q[] = {{"uploadId", f->upload_id}};
    s3_request r = {.op = S3_OP_ABORT_MPU, .method = "DELETE", .key = f->key, .params = q,
                    .n_params = 1, .ok_404 = true};
    s3_response resp;
    s3_response_init(&resp);
    int rc = s3_client_do(f->s->cli, &r, &resp, err);
    s3_response_free(&resp);
    return rc;
}

static int s_abort(st_file *sf, pq_err *err)
{
    s3_file *f = as_s3(sf);
    if (f->state == S3F_PUBLISHED || f->state == S3F_GONE)
        return 0;
    s3p_join_all(f);
    int rc = f->upload_id[0] != '\0' ? abort_upload(f, err) : 0;
    f->state = S3F_GONE;
    return rc;
}

static int s_unpublish(st_file *sf, pq_err *err)
{
    s3_file *f = as_s3(sf);
    if (f->state != S3F_PUBLISHED)
        return 0;
    s3_request r = {.op = S3_OP_DELETE, .method = "DELETE", .key = f->key, .ok_404 = true};
    s3_response resp;
    s3_response_init(&resp);
    int rc = s3_client_do(f->s->cli, &r, &resp, err);
    s3_response_free(&resp);
    if (rc == 0)
        f->state = S3F_GONE;
    return rc;
}

static void s_free(st_file *sf)
{
    s3_file *f = as_s3(sf);
    if (f->state == S3F_OPEN || f->state == S3F_FINISHED)
        s_abort(sf, NULL);
    s3p_free(f);
    free(f->key);
    free(f->where);
    free(f);
}

static uint64_t s_bytes(const st_file *f) { return ((const s3_file *)f)->bytes; }

static const char *s_where(const st_file *sf)
{
    const s3_file *f = (const s3_file *)sf;
    return f->state == S3F_PUBLISHED ? f->where : NULL;
}

static int s_locate(st_store *st, const char *name, char *out, size_t cap, pq_err *err)
{
    s3_store *s = (s3_store *)st;
    int n = snprintf(out, cap, "s3://%s/%s%s", s3_client_bucket(s->cli),
                     s3_client_prefix(s->cli), name);
    if (n < 0 || (size_t)n >= cap)
        return pq_err_set(err, PQ_ELIMIT, "S3 key %s%s is too long", s3_client_prefix(s->cli),
                          name);
    return 0;
}

/* where: "s3://bucket/key" of this store's bucket. A single-PUT object
 * names its range (x-amz-meta-parqd-spool "FIRST-END"): it counts only
 * when END is the intent's (a key left by an older spool does not). A
 * multipart object's range is not known when its upload starts; it counts
 * by existence (its key holds the first seq). */
static int s_published(st_store *st, const char *where, uint64_t end, bool *yes, pq_err *err)
{
    s3_store *s = (s3_store *)st;
    const char *b = s3_client_bucket(s->cli);
    size_t bl = strlen(b);
    *yes = false;
    if (strncmp(where, "s3://", 5) != 0 || strncmp(where + 5, b, bl) != 0 ||
        where[5 + bl] != '/')
        return pq_err_set(err, PQ_EINVAL, "%s is not an object of bucket %s (was the output "
                          "changed while a publication was pending?)", where, b);
    s3_response resp;
    s3_response_init(&resp);
    int rc = head(s, where + 6 + bl, yes, &resp, err);
    const char *dash = strchr(resp.meta_spool, '-');
    if (rc == 0 && *yes && end != 0 && dash != NULL)
        *yes = strtoull(dash + 1, NULL, 10) == end;
    s3_response_free(&resp);
    return rc;
}

static void s_destroy(st_store *st)
{
    s3_store *s = (s3_store *)st;
    s3_client_free(s->cli);
    pthread_mutex_destroy(&s->jmu);
    free(s->journal);
    free(s);
}

static const st_ops s3_ops = {
    .kind = "s3",
    .replay_same_name = true,
    .open = s_open, .append = s_append, .finish = s_finish, .publish = s_publish,
    .abort = s_abort, .unpublish = s_unpublish, .free = s_free, .bytes = s_bytes,
    .where = s_where, .locate = s_locate, .published = s_published, .destroy = s_destroy,
};

int st_s3_new(st_store **out, s3_client *cli, const char *state_dir, pq_err *err)
{
    s3_store *s = calloc(1, sizeof *s);
    if (s == NULL) {
        s3_client_free(cli);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    s->base.ops = &s3_ops;
    s->cli = cli;
    pthread_mutex_init(&s->jmu, NULL);
    if (state_dir != NULL && asprintf(&s->journal, "%s/s3-uploads", state_dir) < 0) {
        s->journal = NULL;
        s_destroy(&s->base);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    *out = &s->base;
    return 0;
}

s3_client *st_s3_client(st_store *st) { return ((s3_store *)st)->cli; }

void st_s3_upload_at_finish(st_store *st) { ((s3_store *)st)->upload_at_finish = true; }
