/* store_s3_journal.c - which incomplete multipart uploads are parqd's own
 * (see store_s3.h): each key is appended ("key\n") and fsynced before its
 * CreateMultipartUpload is sent, so a crash at any moment leaves the key
 * named; at start, the incomplete uploads listed under the prefix whose
 * key the journal names are aborted (keys carry {host} and the spool seq:
 * no other writer uses them), the others left alone, and the journal
 * emptied.
 *
 * Threads: s3j_record from any file's thread (under jmu); st_s3_recover
 * from the owner, before any file opens. */
#include "store_s3_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int s3j_record(s3_store *s, const char *key, pq_err *err)
{
    if (s->journal == NULL)
        return 0;
    pthread_mutex_lock(&s->jmu);
    int rc = 0;
    int fd = open(s->journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = pq_err_set(err, PQ_EIO, "S3 upload journal %s: cannot open: %s", s->journal,
                        strerror(errno));
    } else {
        dprintf(fd, "%s\n", key);
        if (fdatasync(fd) != 0)
            rc = pq_err_set(err, PQ_EIO, "S3 upload journal %s: fsync failed: %s", s->journal,
                            strerror(errno));
        close(fd);
    }
    pthread_mutex_unlock(&s->jmu);
    return rc;
}

/* The journal's lines, as one buffer of "key\n". */
static char *read_journal(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    *n = 0;
    if (f == NULL)
        return NULL;
    pq_buf b;
    pq_buf_init(&b);
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        pq_buf_append(&b, chunk, k);
    fclose(f);
    pq_buf_push(&b, '\0');
    *n = b.len - 1;
    return (char *)b.data;
}

static bool journal_has(const char *j, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = j; p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len == kl && memcmp(p, key, kl) == 0)
            return true;
        p = nl ? nl + 1 : NULL;
    }
    return false;
}

typedef struct rec_ctx {
    s3_store *s;
    const char *journal;
    unsigned aborted, others;
    int rc;
    pq_err *err;
} rec_ctx;

static int on_upload(void *user, const char *key, const char *id)
{
    rec_ctx *x = user;
    if (x->journal == NULL || !journal_has(x->journal, key)) {
        x->others++;
        return 0;
    }
    s3_param q[] = {{"uploadId", id}};
    s3_request r = {.op = S3_OP_ABORT_MPU, .method = "DELETE", .key = key, .params = q,
                    .n_params = 1, .ok_404 = true};
    s3_response resp;
    s3_response_init(&resp);
    int rc = s3_client_do(x->s->cli, &r, &resp, x->err);
    s3_response_free(&resp);
    if (rc != 0)
        return rc;
    x->aborted++;
    return 0;
}

/* One page of ListMultipartUploads; markers updated. */
static int list_page(rec_ctx *x, s3_xml_uploads *page, pq_err *err)
{
    char km[1024], im[512];
    snprintf(km, sizeof km, "%s", page->next_key);
    snprintf(im, sizeof im, "%s", page->next_upload_id);
    s3_param q[4] = {{"uploads", NULL}, {"prefix", s3_client_prefix(x->s->cli)}};
    size_t nq = 2;
    if (km[0] != '\0') {
        q[nq++] = (s3_param){"key-marker", km};
        q[nq++] = (s3_param){"upload-id-marker", im};
    }
    s3_request r = {.op = S3_OP_LIST_MPU, .method = "GET", .params = q, .n_params = nq};
    s3_response resp;
    s3_response_init(&resp);
    int rc = s3_client_do(x->s->cli, &r, &resp, err);
    if (rc == 0)
        rc = s3_xml_list_uploads((const char *)resp.body.data, resp.body.len, on_upload, x,
                                 page, err);
    s3_response_free(&resp);
    return rc;
}

int st_s3_recover(st_store *st, unsigned *aborted, unsigned *others, pq_err *err)
{
    s3_store *s = (s3_store *)st;
    size_t n = 0;
    char *j = s->journal ? read_journal(s->journal, &n) : NULL;
    rec_ctx x = {.s = s, .journal = n > 0 ? j : NULL, .err = err};
    s3_xml_uploads page;
    memset(&page, 0, sizeof page);
    int rc = 0;
    for (int pages = 0; rc == 0 && pages < 1000; pages++) {
        rc = list_page(&x, &page, err);
        if (!page.truncated || page.next_key[0] == '\0')
            break;
    }
    free(j);
    if (rc == 0 && s->journal != NULL && unlink(s->journal) != 0 && errno != ENOENT)
        rc = pq_err_set(err, PQ_EIO, "S3 upload journal %s: cannot remove: %s", s->journal,
                        strerror(errno));
    *aborted = x.aborted;
    *others = x.others;
    return rc;
}

int st_s3_check(st_store *st, pq_err *err)
{
    s3_store *s = (s3_store *)st;
    s3_param q[] = {{"uploads", NULL}, {"prefix", s3_client_prefix(s->cli)},
                    {"max-uploads", "1"}};
    s3_request r = {.op = S3_OP_LIST_MPU, .method = "GET", .params = q, .n_params = 3};
    s3_response resp;
    s3_response_init(&resp);
    int rc = s3_client_do(s->cli, &r, &resp, err);
    s3_response_free(&resp);
    return rc;
}
