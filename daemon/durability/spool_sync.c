/* spool_sync.c - the spool's background sync (spool.h): sp_sync's
 * fdatasyncs on a helper thread, so that with sync: batch the loop thread
 * goes on reading sockets and appending while the disk commits the last
 * batch. The daemon hands a batch to the pipeline only once a sync that
 * covers it is done, as it did when the loop waited for the fdatasync
 * itself (a fdatasync took 5 ms a batch here, a third of the loop's time
 * at 100 MB/s).
 *
 * Threads: the appender (the loop thread) starts a job and collects it;
 * the helper "parqd-sync" runs it. The job's fds are the job's own (the
 * rolled segments' fds move into it; the current segment's is dup'd, as
 * the appender may retire it meanwhile), so the helper touches nothing
 * else of the spool. sync_mu orders the hand-over both ways. */
#include "spool_int.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef SP_FDATASYNC
#define SP_FDATASYNC fdatasync
#endif

/* Helper thread: syncs fds in order, then the directory; stops at the
 * first failure, leaving the rest (the failed one included) open. */
static void run_job(const char *dir, sp_sync_job *j)
{
    j->rc = 0;
    for (; j->done < j->n; j->done++) {
        if (SP_FDATASYNC(j->fds[j->done].fd) != 0) {
            j->rc = pq_err_set(&j->err, PQ_EIO, "spool %s: fdatasync of the segment from "
                               "seq %" PRIu64 " failed: %s", dir, j->fds[j->done].first,
                               strerror(errno));
            return;
        }
        close(j->fds[j->done].fd);
    }
    if (j->dir) {
        j->rc = sp_fsync_dir(dir, &j->err);
        if (j->rc == 0)
            j->dir = false;
    }
}

static void *sync_main(void *arg)
{
    sp_spool *s = arg;
    dm_mutex_lock(&s->sync_mu);
    for (;;) {
        while (s->sync_state != SP_SYNC_QUEUED && !s->sync_quit)
            dm_cond_wait(&s->sync_cv, &s->sync_mu);
        if (s->sync_state != SP_SYNC_QUEUED)
            break;
        dm_mutex_unlock(&s->sync_mu);
        run_job(s->dir, &s->job);
        dm_mutex_lock(&s->sync_mu);
        s->sync_state = SP_SYNC_DONE;
        /* Under the lock: sp_sync_wait sees DONE only after the notify,
         * so the notified handle outlives it (the daemon closes it only
         * after waiting). */
        if (s->sync_notify != NULL)
            s->sync_notify(s->sync_user);
        pthread_cond_broadcast(&s->sync_cv);
    }
    dm_mutex_unlock(&s->sync_mu);
    return NULL;
}

static int start_thread(sp_spool *s, pq_err *err)
{
    if (s->sync_thread_up)
        return PQ_OK;
    if (pthread_cond_init(&s->sync_cv, NULL) != 0)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: cannot start its sync thread", s->dir);
    if (pthread_create(&s->sync_thread, NULL, sync_main, s) != 0) {
        pthread_cond_destroy(&s->sync_cv);
        return pq_err_set(err, PQ_ENOMEM, "spool %s: cannot start its sync thread", s->dir);
    }
#ifdef __linux__
    pthread_setname_np(s->sync_thread, "parqd-sync");
#endif
    s->sync_thread_up = true;
    return PQ_OK;
}

/* Fills the job from the appender's dirty state (sync_state IDLE). */
static int fill_job(sp_spool *s, pq_err *err)
{
    sp_sync_job *j = &s->job;
    memset(j, 0, sizeof *j);
    if (s->fd >= 0 && s->dirty) {
        int fd = dup(s->fd);
        if (fd < 0)
            return pq_err_set(err, PQ_EIO, "spool %s: dup failed: %s", s->dir, strerror(errno));
        j->fds[SP_UNSYNCED_MAX] = (sp_unsynced){fd, s->cur_first};
        j->cur = true;
    }
    memcpy(j->fds, s->unsynced, s->nunsynced * sizeof *s->unsynced);
    j->n = s->nunsynced;
    if (j->cur)
        j->fds[j->n++] = j->fds[SP_UNSYNCED_MAX];
    j->dir = s->dir_dirty;
    j->target = s->flushed_seq;
    s->nunsynced = 0;
    s->dirty = false;
    s->dir_dirty = false;
    return PQ_OK;
}

int sp_sync_start(sp_spool *s, void (*notify)(void *), void *user, pq_err *err)
{
    if (sp_sync_running(s))
        return PQ_OK;
    int rc = sp_sync_poll(s, err);
    if (rc != 0)
        return rc;
    if ((rc = start_thread(s, err)) != 0 || (rc = fill_job(s, err)) != 0)
        return rc;
    dm_mutex_lock(&s->sync_mu);
    assert(s->sync_state == SP_SYNC_IDLE);   /* one job at a time */
    s->sync_notify = notify;
    s->sync_user = user;
    s->sync_state = SP_SYNC_QUEUED;
    pthread_cond_broadcast(&s->sync_cv);
    dm_mutex_unlock(&s->sync_mu);
    return PQ_OK;
}

bool sp_sync_running(sp_spool *s)
{
    if (!s->sync_thread_up)
        return false;
    dm_mutex_lock(&s->sync_mu);
    bool running = s->sync_state == SP_SYNC_QUEUED;
    dm_mutex_unlock(&s->sync_mu);
    return running;
}

/* Gives what a failed job did not sync back to the appender: the rolled
 * segments' fds in front of any rolled since (the oldest closed unsynced
 * if the table overflows, as retire_current does), the current one's
 * dirtiness, the directory's. */
static void give_back(sp_spool *s, sp_sync_job *j)
{
    if (j->cur) {
        close(j->fds[--j->n].fd);
        s->dirty = true;
    }
    size_t left = j->n - j->done;
    while (left + s->nunsynced > SP_UNSYNCED_MAX) {
        close(j->fds[j->done++].fd);
        left--;
    }
    memmove(s->unsynced + left, s->unsynced, s->nunsynced * sizeof *s->unsynced);
    memcpy(s->unsynced, j->fds + j->done, left * sizeof *s->unsynced);
    s->nunsynced += left;
    if (j->dir)
        s->dir_dirty = true;
}

/* Collects a DONE job (sync_mu not held; the helper is idle). */
static int collect(sp_spool *s, pq_err *err)
{
    sp_sync_job *j = &s->job;
    int rc = j->rc;
    if (rc == 0) {
        if (j->target > s->synced_seq)
            s->synced_seq = j->target;
    } else {
        give_back(s, j);
        *err = j->err;
    }
    dm_mutex_lock(&s->sync_mu);
    assert(s->sync_state == SP_SYNC_DONE);   /* the helper is done with the job */
    s->sync_state = SP_SYNC_IDLE;
    dm_mutex_unlock(&s->sync_mu);
    return rc;
}

int sp_sync_poll(sp_spool *s, pq_err *err)
{
    if (!s->sync_thread_up)
        return PQ_OK;
    dm_mutex_lock(&s->sync_mu);
    bool done = s->sync_state == SP_SYNC_DONE;
    dm_mutex_unlock(&s->sync_mu);
    return done ? collect(s, err) : PQ_OK;
}

int sp_sync_wait(sp_spool *s, pq_err *err)
{
    if (!s->sync_thread_up)
        return PQ_OK;
    dm_mutex_lock(&s->sync_mu);
    while (s->sync_state == SP_SYNC_QUEUED)
        dm_cond_wait(&s->sync_cv, &s->sync_mu);
    bool done = s->sync_state == SP_SYNC_DONE;
    dm_mutex_unlock(&s->sync_mu);
    return done ? collect(s, err) : PQ_OK;
}

uint64_t sp_synced_seq(const sp_spool *s) { return s->synced_seq; }

void sp_sync_stop(sp_spool *s)
{
    if (!s->sync_thread_up)
        return;
    dm_mutex_lock(&s->sync_mu);
    s->sync_quit = true;
    pthread_cond_broadcast(&s->sync_cv);
    dm_mutex_unlock(&s->sync_mu);
    pthread_join(s->sync_thread, NULL);
    pthread_cond_destroy(&s->sync_cv);
    s->sync_thread_up = false;
    /* A job still QUEUED ran before the helper saw the quit; a DONE one
     * that nobody collected keeps the fds it did not sync. */
    if (s->sync_state == SP_SYNC_DONE)
        for (size_t i = s->job.done; i < s->job.n; i++)
            close(s->job.fds[i].fd);
    s->sync_state = SP_SYNC_IDLE;
}
