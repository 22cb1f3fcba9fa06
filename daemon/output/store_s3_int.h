/* store_s3_int.h - what the S3 store's files share: store_s3.c (the ops:
 * open, finish, publish, abort, recovery questions), store_s3_parts.c
 * (staging and part uploads) and store_s3_journal.c (parqd's own
 * incomplete uploads). Nothing else includes it. */
#ifndef PQ_STORE_S3_INT_H
#define PQ_STORE_S3_INT_H

#include <pthread.h>

#include "store_s3.h"

typedef struct s3_store {
    st_store base;
    s3_client *cli;
    char *journal;               /* path, or NULL */
    pthread_mutex_t jmu;         /* appends to the journal */
    bool upload_at_finish;       /* st_s3_upload_at_finish */
} s3_store;

struct s3_file;

/* A part's staging buffer; while `running`, its thread owns it. */
typedef struct s3_slot {
    struct s3_file *f;
    pq_buf data;
    int number;                  /* part number, 1-based */
    pthread_t th;
    bool running;
    int rc;
    pq_err err;
    char etag[128];
} s3_slot;

typedef enum s3_fstate { S3F_OPEN, S3F_FINISHED, S3F_PUBLISHED, S3F_GONE } s3_fstate;

typedef struct s3_file {
    st_file base;
    s3_store *s;
    s3_fstate state;
    char *key;                   /* prefix + name */
    char *where;                 /* s3://bucket/key */
    char upload_id[512];         /* "" until the first part */
    char range[48];
    uint64_t bytes;
    s3_slot slots[S3_PARTS_IN_MEMORY];
    int cur;                     /* the slot being filled */
    int next_part;
    char (*etags)[128];          /* by part number - 1 */
    size_t cap_etags;
    bool failed;                 /* a part failed: err kept in fail_err */
    pq_err fail_err;
} s3_file;

/* store_s3_parts.c */
int s3p_append(s3_file *f, const void *p, size_t n, pq_err *err);
/* Uploads what is staged as the last part and waits for every part. */
int s3p_flush_all(s3_file *f, pq_err *err);
/* Waits for every running part (errors kept in fail_err). */
void s3p_join_all(s3_file *f);
/* Frees the staging buffers (every part uploaded); the ETags stay. */
void s3p_release(s3_file *f);
void s3p_free(s3_file *f);

/* store_s3_journal.c */
/* Before CreateMultipartUpload: the key, durably. */
int s3j_record(s3_store *s, const char *key, pq_err *err);

#endif
