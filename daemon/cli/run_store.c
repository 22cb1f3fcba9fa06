/* run_store.c - the daemon's output store (see run_store.h). */
#include "run_store.h"

#include <stdio.h>

#include "log.h"
#include "metrics.h"
#include "s3_metrics.h"
#include "store_config.h"
#include "store_s3.h"

static int published(void *user, const char *path, uint64_t end, bool *yes, pq_err *err)
{
    return st_published(user, path, end, yes, err);
}

static int make(dm_daemon *d, st_store **out, pq_err *err)
{
    bool plain = false;
    int rc = st_from_config(&d->cf.output, d->cf.spool.dir, out, &plain, err);
    if (rc == 0 && plain)
        lg_warning("output.s3.endpoint %s is plain http to a host that is not loopback: "
                   "requests (not the keys) and the files travel unencrypted",
                   d->cf.output.s3->endpoint);
    return rc;
}

int rs_open_spool(dm_daemon *d, sp_open_report *rep, pq_err *err)
{
    st_store *s = NULL;
    pq_err e = {0};
    if (make(d, &s, &e) != 0)    /* credentials, endpoint: the configuration's fault */
        return pq_err_set(err, PQ_ESTATE, "output%s: %s", d->cf.output.s3 ? ".s3" : "", e.msg);
    if (d->cf.output.s3 != NULL) {
        unsigned aborted = 0, others = 0;
        if (st_s3_recover(s, &aborted, &others, &e) != 0)
            lg_error("output: %s (parqd's incomplete uploads are cleaned up at the next "
                     "start)", e.msg);
        else if (aborted > 0 || others > 0)
            lg_info("output: aborted %u incomplete upload%s of parqd's; %u of other writers "
                    "left alone", aborted, aborted == 1 ? "" : "s", others);
    }
    int rc = sp_open_with(&d->spool, d->cf.spool.dir, 0, published, s, rep, err);
    st_destroy(s);
    return rc;
}

int rs_start(dm_daemon *d, pq_err *err)
{
    rs_stop(d);
    mt_set_extra(d->cf.output.s3 != NULL ? s3_metrics_render : NULL);
    return make(d, &d->store, err);
}

const char *rs_output_name(const dm_daemon *d)
{
    static char name[600];
    const cf_s3 *s3 = d->cf.output.s3;
    if (s3 == NULL)
        return d->cf.output.dir;
    snprintf(name, sizeof name, "s3://%s/%s", s3->bucket, s3->prefix);
    return name;
}

void rs_stop(dm_daemon *d)
{
    st_destroy(d->store);
    d->store = NULL;
}
