/* spool_reap.c - the spool's segment remover (spool.h sp_reap_start):
 * the unlinks of committed segments on a helper thread, "parqd-reap",
 * instead of on the publishing worker.
 *
 * Why: on ext4 mounted with `discard` an unlink frees the blocks there
 * and then; a fdatasync'd 64 MiB segment took 25-90 ms here (a 64 MiB
 * file never written back: 3.5 ms), with the write token held, and at a
 * clean stop three of them were half of the time from SIGTERM to exit.
 *
 * The rule stays the spool's: a segment is removed only once every record
 * in it is in a published file or the dead letters. The trim takes a
 * committed segment off the list (seg_mu) and queues its first seq here;
 * the file goes later. Removing later is always safe: a committed segment
 * that is still on disk is what a crash between the checkpoint and the
 * unlink leaves, which sp_open removes (before replay, which starts at
 * the watermark and never reads below it). So a removal that fails, or
 * that sp_reap_hold (a clean stop) or sp_close leaves queued, is redone
 * by the next sp_open, which queues such segments here too (without
 * reading them), so a start does not wait for them either.
 *
 * Threads: sp_open prequeues, before the spool is shared; the publisher
 * queues (sp_trim, through sp_reap_queue); the
 * appender (the loop thread) starts, holds and, in sp_close, stops the
 * helper; the helper only unlinks files named by the queue. reap_mu
 * guards the queue and the flags, never held across an unlink. */
#include "spool_int.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Helper thread: the next seq to remove, or false to stop. reap_mu held. */
static bool next_job(sp_spool *s, uint64_t *first)
{
    while ((s->reap_n == 0 || s->reap_hold) && !s->reap_quit)
        dm_cond_wait(&s->reap_cv, &s->reap_mu);
    if (s->reap_quit)
        return false;
    *first = s->reap_q[0];
    memmove(s->reap_q, s->reap_q + 1, (s->reap_n - 1) * sizeof *s->reap_q);
    s->reap_n--;
    return true;
}

static void *reap_main(void *arg)
{
    sp_spool *s = arg;
    uint64_t first;
    dm_mutex_lock(&s->reap_mu);
    while (next_job(s, &first)) {
        dm_mutex_unlock(&s->reap_mu);
        sp_seg_path(s->reap_path, s->dir, first);
        /* A failure leaves the file for the next sp_open (top of file). */
        (void)unlink(s->reap_path);
        dm_mutex_lock(&s->reap_mu);
    }
    dm_mutex_unlock(&s->reap_mu);
    return NULL;
}

int sp_reap_start(sp_spool *s, pq_err *err)
{
    if (s->reap_up)
        return PQ_OK;
    s->reap_path = malloc(strlen(s->dir) + SP_NAME_LEN + 2);
    if (s->reap_path == NULL || pthread_cond_init(&s->reap_cv, NULL) != 0) {
        free(s->reap_path);
        s->reap_path = NULL;
        return pq_err_set(err, PQ_ENOMEM, "spool %s: cannot start its remover thread", s->dir);
    }
    if (pthread_create(&s->reap_thread, NULL, reap_main, s) != 0) {
        pthread_cond_destroy(&s->reap_cv);
        free(s->reap_path);
        s->reap_path = NULL;
        return pq_err_set(err, PQ_ENOMEM, "spool %s: cannot start its remover thread", s->dir);
    }
#ifdef __linux__
    pthread_setname_np(s->reap_thread, "parqd-reap");
#endif
    dm_mutex_lock(&s->reap_mu);
    s->reap_up = true;
    dm_mutex_unlock(&s->reap_mu);
    return PQ_OK;
}

bool sp_reap_prequeue(sp_spool *s, const uint64_t *firsts, size_t n)
{
    assert(!s->reap_up && s->reap_n == 0);
    s->reap_q = malloc(n * sizeof *s->reap_q);
    if (s->reap_q == NULL)
        return false;
    memcpy(s->reap_q, firsts, n * sizeof *firsts);
    s->reap_n = s->reap_cap = n;
    return true;
}

bool sp_reap_queue(sp_spool *s, uint64_t first)
{
    dm_mutex_lock(&s->reap_mu);
    bool ok = s->reap_up;
    if (ok && s->reap_n == s->reap_cap) {
        size_t cap = s->reap_cap ? 2 * s->reap_cap : 8;
        uint64_t *q = realloc(s->reap_q, cap * sizeof *q);
        if (q == NULL)
            ok = false;          /* the caller unlinks it itself */
        else
            s->reap_q = q, s->reap_cap = cap;
    }
    if (ok) {
        s->reap_q[s->reap_n++] = first;
        pthread_cond_signal(&s->reap_cv);
    }
    dm_mutex_unlock(&s->reap_mu);
    return ok;
}

void sp_reap_hold(sp_spool *s)
{
    dm_mutex_lock(&s->reap_mu);
    s->reap_hold = true;
    dm_mutex_unlock(&s->reap_mu);
}

/* Without a remover, what sp_open queued goes now (s->path is free:
 * nothing appends any more). */
static void unlink_queued(sp_spool *s)
{
    for (size_t i = 0; i < s->reap_n && s->path != NULL; i++) {
        sp_seg_path(s->path, s->dir, s->reap_q[i]);
        (void)unlink(s->path);   /* a failure: the next sp_open tries again */
    }
    s->reap_n = 0;
}

void sp_reap_stop(sp_spool *s)
{
    dm_mutex_lock(&s->reap_mu);
    bool up = s->reap_up;
    s->reap_quit = true;
    s->reap_up = false;          /* later trims unlink themselves */
    if (up)                      /* reap_cv exists only once started */
        pthread_cond_signal(&s->reap_cv);
    dm_mutex_unlock(&s->reap_mu);
    if (!up) {
        unlink_queued(s);
        return;
    }
    pthread_join(s->reap_thread, NULL);  /* at most the unlink under way */
    pthread_cond_destroy(&s->reap_cv);
}
