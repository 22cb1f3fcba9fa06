/* store_s3_parts.c - the S3 store's staging buffers and part uploads
 * (see store_s3.h): append fills the current slot; a full slot starts
 * CreateMultipartUpload (the first time) and its own upload thread; the
 * next slot is reused once its earlier upload has finished, so at most
 * S3_PARTS_IN_MEMORY parts are in memory or in flight per file.
 *
 * Threads: s3p_* run on the thread holding the file (the pipeline's write
 * token); part_main on the part's own thread, touching only its slot. */
#include "store_s3_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *part_main(void *arg)
{
    s3_slot *sl = arg;
    s3_file *f = sl->f;
    char num[16];
    snprintf(num, sizeof num, "%d", sl->number);
    s3_param q[] = {{"partNumber", num}, {"uploadId", f->upload_id}};
    s3_request r = {.op = S3_OP_UPLOAD_PART, .method = "PUT", .key = f->key, .params = q,
                    .n_params = 2, .body = sl->data.data, .body_len = sl->data.len};
    s3_response resp;
    s3_response_init(&resp);
    sl->rc = s3_client_do(f->s->cli, &r, &resp, &sl->err);
    if (sl->rc == 0 && resp.etag[0] == '\0')
        sl->rc = pq_err_set(&sl->err, PQ_EIO, "S3 UploadPart %s part %d: no ETag in the reply",
                            f->where, sl->number);
    snprintf(sl->etag, sizeof sl->etag, "%s", resp.etag);
    s3_response_free(&resp);
    s3_metrics_parts_in_flight(-1);
    return NULL;
}

/* Waits for a slot's upload; keeps its ETag or the first error. */
static void join(s3_file *f, s3_slot *sl)
{
    if (!sl->running)
        return;
    pthread_join(sl->th, NULL);
    sl->running = false;
    if (sl->rc != 0 && !f->failed) {
        f->failed = true;
        f->fail_err = sl->err;
    } else if (sl->rc == 0) {
        memcpy(f->etags[sl->number - 1], sl->etag, sizeof sl->etag);
    }
    pq_buf_reset(&sl->data);
}

void s3p_join_all(s3_file *f)
{
    for (int i = 0; i < S3_PARTS_IN_MEMORY; i++)
        join(f, &f->slots[i]);
}

static int initiate(s3_file *f, pq_err *err)
{
    s3_param q[] = {{"uploads", NULL}};
    s3_header h[] = {{"x-amz-meta-parqd-writer", "parqd"}};
    s3_request r = {.op = S3_OP_CREATE_MPU, .method = "POST", .key = f->key, .params = q,
                    .n_params = 1, .headers = h, .n_headers = 1};
    int rc = s3j_record(f->s, f->key, err);
    if (rc != 0)
        return rc;
    s3_response resp;
    s3_response_init(&resp);
    rc = s3_client_do(f->s->cli, &r, &resp, err);
    pq_err xe = {0};
    if (rc == 0 && s3_xml_text((const char *)resp.body.data, resp.body.len, "UploadId",
                               f->upload_id, sizeof f->upload_id, &xe) != 1)
        rc = pq_err_set(err, PQ_EIO, "S3 CreateMultipartUpload %s: no UploadId in the reply",
                        f->where);
    s3_response_free(&resp);
    return rc;
}

static int grow_etags(s3_file *f, int number, pq_err *err)
{
    if ((size_t)number <= f->cap_etags)
        return 0;
    size_t cap = f->cap_etags ? f->cap_etags * 2 : 64;
    while (cap < (size_t)number)
        cap *= 2;
    char (*e)[128] = realloc(f->etags, cap * sizeof *e);
    if (e == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    f->etags = e;
    f->cap_etags = cap;
    return 0;
}

/* Starts the current slot's upload and moves to the next slot. */
static int ship(s3_file *f, pq_err *err)
{
    if (f->next_part >= 10000)
        return pq_err_set(err, PQ_ELIMIT, "S3 %s: more than 10000 parts; raise "
                          "output.s3.part_size or lower output.rotate.max_bytes", f->where);
    int rc = f->upload_id[0] == '\0' ? initiate(f, err) : 0;
    s3_slot *sl = &f->slots[f->cur];
    rc = rc ? rc : grow_etags(f, f->next_part + 1, err);
    if (rc != 0)
        return rc;
    sl->f = f;
    sl->number = ++f->next_part;
    sl->rc = 0;
    s3_metrics_parts_in_flight(1);
    if (pthread_create(&sl->th, NULL, part_main, sl) != 0) {
        s3_metrics_parts_in_flight(-1);
        return pq_err_set(err, PQ_EIO, "S3 %s: cannot start a part upload thread", f->where);
    }
    sl->running = true;
    f->cur = (f->cur + 1) % S3_PARTS_IN_MEMORY;
    join(f, &f->slots[f->cur]);  /* the buffer to fill next must be free */
    if (f->failed)
        return pq_err_set(err, f->fail_err.code ? f->fail_err.code : PQ_EIO, "%s",
                          f->fail_err.msg);
    return 0;
}

int s3p_append(s3_file *f, const void *p, size_t n, pq_err *err)
{
    const uint64_t part = s3_client_part_size(f->s->cli);
    const char *c = p;
    while (n > 0) {
        s3_slot *sl = &f->slots[f->cur];
        if (sl->data.cap < part && pq_buf_reserve(&sl->data, part - sl->data.len) != 0)
            return pq_err_set(err, PQ_ENOMEM, "S3 %s: out of memory for a part", f->where);
        size_t room = (size_t)part - sl->data.len, k = n < room ? n : room;
        pq_buf_append(&sl->data, c, k);
        c += k;
        n -= k;
        f->bytes += k;
        if (sl->data.len == part) {
            int rc = ship(f, err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

int s3p_flush_all(s3_file *f, pq_err *err)
{
    int rc = 0;
    if (f->slots[f->cur].data.len > 0 || f->next_part == 0)
        rc = ship(f, err);
    s3p_join_all(f);
    if (rc == 0 && f->failed)
        rc = pq_err_set(err, PQ_EIO, "%s", f->fail_err.msg);
    return rc;
}

void s3p_release(s3_file *f)
{
    s3p_join_all(f);
    for (int i = 0; i < S3_PARTS_IN_MEMORY; i++)
        pq_buf_free(&f->slots[i].data);
}

void s3p_free(s3_file *f)
{
    s3p_release(f);
    free(f->etags);
    f->etags = NULL;
}
