/* s3_xml.h - a small reader for S3's XML replies: Error,
 * InitiateMultipartUploadResult, CompleteMultipartUploadResult (which can
 * also be an Error inside a 200) and ListMultipartUploadsResult. Not a
 * general XML parser: elements, text, the five entities and numeric
 * character references, CDATA; declarations, comments and processing
 * instructions skipped; attributes ignored; namespaces ignored (names
 * compared without a prefix). Anything else is PQ_EPARSE. No allocation:
 * values are copied (entity-decoded, truncated to the caller's buffer).
 *
 * Threads: pure functions; any thread. Input is untrusted (it comes off
 * the network): tests/fuzz/fuzz_s3_xml.c. */
#ifndef PQ_S3_XML_H
#define PQ_S3_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define S3_XML_MAX_DEPTH 16

/* Called for every element that holds only text (a leaf), with the names
 * of its parent and itself (no prefix) and its decoded text. Non-zero
 * stops the walk and is returned. */
typedef int (*s3_xml_leaf_fn)(void *user, const char *parent, const char *name,
                              const char *text, size_t len);
/* Called when an element with children closes (an <Upload>, say). */
typedef int (*s3_xml_close_fn)(void *user, const char *name);

/* Walks a document. 0, the callbacks' non-zero, or PQ_EPARSE with where
 * and why in err. */
int s3_xml_walk(const char *p, size_t n, s3_xml_leaf_fn leaf, s3_xml_close_fn close,
                void *user, pq_err *err);

/* The text of the first element named tag (anywhere) into out (cap bytes,
 * NUL-terminated, truncated). Returns 1 found, 0 not found, PQ_EPARSE. */
int s3_xml_text(const char *p, size_t n, const char *tag, char *out, size_t cap, pq_err *err);

typedef struct s3_xml_error {
    char code[64];               /* "AccessDenied", "NoSuchBucket", ... */
    char message[256];
    char key[256];
    char request_id[128];
} s3_xml_error;

/* An <Error> document. 1 it is one (fields filled, missing ones ""), 0
 * not an Error, PQ_EPARSE. */
int s3_xml_error_parse(const char *p, size_t n, s3_xml_error *out, pq_err *err);

/* ListMultipartUploadsResult: fn for each <Upload>'s Key and UploadId;
 * *truncated, and the markers for the next page. 0, fn's non-zero, or
 * PQ_EPARSE. */
typedef int (*s3_xml_upload_fn)(void *user, const char *key, const char *upload_id);
typedef struct s3_xml_uploads {
    bool truncated;
    char next_key[1024];
    char next_upload_id[512];
} s3_xml_uploads;
int s3_xml_list_uploads(const char *p, size_t n, s3_xml_upload_fn fn, void *user,
                        s3_xml_uploads *page, pq_err *err);

#endif
