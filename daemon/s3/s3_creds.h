/* s3_creds.h - S3 credentials from where output.s3.credentials says
 * (README "Object storage"): the environment (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), a profile of the shared
 * credentials file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials),
 * or two key files that must be private to their owner (keyfile.h's rule).
 * Web identity and instance metadata are not supported yet.
 *
 * Secrets never enter an error message: errors name the source, the file
 * and the missing setting only.
 *
 * Threads: called by the store's owner at start and at every reload. */
#ifndef PQ_S3_CREDS_H
#define PQ_S3_CREDS_H

#include "config.h"
#include "err.h"
#include "s3_sigv4.h"

/* Fills out. 0, or PQ_EINVAL (missing, too long, a key file readable by
 * others) / PQ_EIO (cannot read) with err. */
int s3_creds_load(const cf_s3 *cfg, s3_creds *out, pq_err *err);

/* Overwrites the secrets in memory. */
void s3_creds_wipe(s3_creds *c);

#endif
