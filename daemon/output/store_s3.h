/* store_s3.h - the S3 store (store.h) over s3_client.h: a file is a
 * single PUT when it stays under part_size, else a multipart upload whose
 * parts go up while the file is written.
 *
 * Staging: S3_PARTS_IN_MEMORY buffers of part_size each; append fills
 * one, a full one is uploaded by its own thread while the next fills, and
 * append waits for the oldest upload when every buffer is busy. Memory is
 * therefore at most S3_PARTS_IN_MEMORY x part_size per open file,
 * whatever the file's size (48 MiB at the default 16 MiB).
 *
 * Publication: PutObject (Content-MD5, the payload's SHA-256, the spool
 * range in x-amz-meta-parqd-spool), or CompleteMultipartUpload. Keys are
 * prefix + the rendered path; with {seq} from the first spool seq they
 * are the same when a range is written again, so a replay overwrites.
 * "Was it published?" is a HEAD of the key.
 *
 * Incomplete uploads: each key is appended (and fsynced) to a journal in
 * the state directory (the spool's) before its CreateMultipartUpload;
 * st_s3_recover, at start, lists the incomplete uploads under the prefix
 * and aborts those whose key the journal names - parqd's own, never
 * another writer's - then empties the journal.
 *
 * Threads: as store.h; part uploads run on short-lived threads of their
 * own (parqd-s3p). */
#ifndef PQ_STORE_S3_H
#define PQ_STORE_S3_H

#include "config.h"
#include "s3_client.h"
#include "store.h"

#define S3_PARTS_IN_MEMORY 3

/* Takes ownership of cli. state_dir: where the journal lives (NULL: no
 * journal; an interrupted upload is aborted by the process itself only). */
int st_s3_new(st_store **out, s3_client *cli, const char *state_dir, pq_err *err);
s3_client *st_s3_client(st_store *s);

/* Aborts parqd's incomplete uploads under the prefix (see above); *aborted
 * and *others (left alone) for the log. 0 or PQ_EIO with the S3 error. */
int st_s3_recover(st_store *s, unsigned *aborted, unsigned *others, pq_err *err);

/* Files finished long before they are published (convert keeps every
 * file hidden until the input ends): finish uploads even a small file, as
 * a one-part multipart upload, instead of keeping it in memory for a PUT
 * at publication, so memory stays bounded whatever the number of files.
 * Call before any file opens. */
void st_s3_upload_at_finish(st_store *s);

/* A real request that needs the bucket and the credentials (parqd check
 * --connect, start-up): ListMultipartUploads on the prefix. */
int st_s3_check(st_store *s, pq_err *err);

#endif
