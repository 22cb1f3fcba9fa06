/* err.h - error codes and the caller-provided error record used by every
 * parqd module. A callee fills the record with what failed, where and why;
 * the caller decides whether to log, retry or give up. */
#ifndef PQ_ERR_H
#define PQ_ERR_H

#include <stddef.h>

enum {
    PQ_OK = 0,
    PQ_EINVAL = -1,   /* caller passed something the spec or API forbids */
    PQ_ENOMEM = -2,   /* allocation failed */
    PQ_EIO = -3,      /* read/write/fsync failed */
    PQ_ECODEC = -4,   /* a compression library reported an error */
    PQ_ECRYPTO = -5,  /* OpenSSL reported an error, or a key is unusable */
    PQ_ELIMIT = -6,   /* a size limit (page, chunk, key usage) was reached */
    PQ_ESTATE = -7,   /* call not valid in the object's current state */
    PQ_EPARSE = -8,   /* malformed input (JSON, YAML, Thrift, ...) */
    PQ_ETYPE = -9     /* a value does not fit the column's type */
};

typedef struct pq_err {
    int code;
    char msg[512];
} pq_err;

/* Fills err (when not NULL) and returns code, so callers can write
 * `return pq_err_set(err, PQ_EINVAL, "...", ...);`. */
int pq_err_set(pq_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "<context>: " to the message a callee already put in err and
 * sets code rc, so errors read outermost first ("page 3 of column 'x':
 * decompression failed: ..."). Returns rc. */
int pq_err_prefix(pq_err *err, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void pq_err_clear(pq_err *err);

/* A short constant name for a code ("EINVAL"), for logs and tests. */
const char *pq_err_name(int code);

#endif
