/* run_store.h - the daemon's output store (run_store.c): made from the
 * configuration with each pipeline (so a reload reads S3 credentials
 * again), and, at start, asked about the spool's pending publication and
 * told to abort parqd's own incomplete S3 uploads.
 *
 * Thread: the loop thread (start-up, reload, shutdown). */
#ifndef PQ_RUN_STORE_H
#define PQ_RUN_STORE_H

#include "daemon.h"

/* Opens the spool (sp_open_with, asking the configured store about a
 * pending intent) after aborting parqd's incomplete uploads. 0 or an error
 * (logged by the caller); PQ_ESTATE when the store cannot even be made
 * (missing credentials, a key file others may read): a usage error. */
int rs_open_spool(dm_daemon *d, sp_open_report *rep, pq_err *err);

/* d->store from d->cf.output (a plain-http S3 endpoint off loopback is
 * warned about). 0 or an error. */
int rs_start(dm_daemon *d, pq_err *err);
/* After the pipeline is destroyed. */
void rs_stop(dm_daemon *d);

/* "DIR" or "s3://bucket/prefix" for log lines (valid until the next call). */
const char *rs_output_name(const dm_daemon *d);

#endif
