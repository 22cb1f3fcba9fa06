/* mutex.h - a pthread mutex that knows its owner, so a function whose
 * comment says "lock held" can assert it (dm_mutex_assert_held) in debug
 * builds, in the spirit of zstd's liberal asserts. With NDEBUG it is a
 * plain pthread_mutex_t and the asserts cost nothing.
 *
 * Threads: any. The owner fields are written only by the thread that
 * holds the mutex, and read by a thread that claims to hold it: if the
 * claim is true the read is ordered by the mutex; if it is false the
 * assert fires (and ThreadSanitizer reports the unguarded read too). */
#ifndef PQ_DM_MUTEX_H
#define PQ_DM_MUTEX_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>

typedef struct dm_mutex {
    pthread_mutex_t mu;
#ifndef NDEBUG
    pthread_t owner;
    bool held;
#endif
} dm_mutex;

static inline int dm_mutex_init(dm_mutex *m)
{
#ifndef NDEBUG
    m->held = false;
#endif
    return pthread_mutex_init(&m->mu, NULL);
}

static inline void dm_mutex_destroy(dm_mutex *m)
{
    pthread_mutex_destroy(&m->mu);
}

static inline void dm_mutex_took(dm_mutex *m)
{
#ifndef NDEBUG
    assert(!m->held);
    m->owner = pthread_self();
    m->held = true;
#else
    (void)m;
#endif
}

static inline void dm_mutex_giving_up(dm_mutex *m)
{
#ifndef NDEBUG
    assert(m->held && pthread_equal(m->owner, pthread_self()));
    m->held = false;
#else
    (void)m;
#endif
}

static inline void dm_mutex_lock(dm_mutex *m)
{
    pthread_mutex_lock(&m->mu);
    dm_mutex_took(m);
}

static inline void dm_mutex_unlock(dm_mutex *m)
{
    dm_mutex_giving_up(m);
    pthread_mutex_unlock(&m->mu);
}

/* pthread_cond_wait on a dm_mutex the caller holds. */
static inline void dm_cond_wait(pthread_cond_t *cv, dm_mutex *m)
{
    dm_mutex_giving_up(m);
    pthread_cond_wait(cv, &m->mu);
    dm_mutex_took(m);
}

/* pthread_cond_timedwait likewise; returns its result. */
static inline int dm_cond_timedwait(pthread_cond_t *cv, dm_mutex *m, const struct timespec *at)
{
    dm_mutex_giving_up(m);
    int rc = pthread_cond_timedwait(cv, &m->mu, at);
    dm_mutex_took(m);
    return rc;
}

/* Debug builds: the calling thread holds m. */
static inline void dm_mutex_assert_held(const dm_mutex *m)
{
#ifndef NDEBUG
    assert(m->held && pthread_equal(m->owner, pthread_self()));
#else
    (void)m;
#endif
}

#endif
