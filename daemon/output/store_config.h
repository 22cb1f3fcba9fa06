/* store_config.h - the output store for a configuration (store_config.c).
 * Thread: the owner's. */
#ifndef PQ_STORE_CONFIG_H
#define PQ_STORE_CONFIG_H

#include <stdbool.h>

#include "config.h"
#include "store.h"

/* output.dir or output.s3; state_dir (the spool's) holds the S3 upload
 * journal. *plain_http: an http:// endpoint that is not loopback (the
 * caller warns). 0 or an error naming the setting (credentials missing, a
 * key file readable by others, a bad endpoint). */
int st_from_config(const cf_output *o, const char *state_dir, st_store **out, bool *plain_http,
                   pq_err *err);

/* "s3://..." */
bool st_is_s3_url(const char *s);
/* convert -o s3://bucket/prefix/ (see store_config.c). */
int st_from_s3_url(const char *url, const cf_output *o, st_store **out, bool *plain_http,
                   pq_err *err);

#endif
