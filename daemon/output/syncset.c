/* syncset.c - paths fsynced together (see syncset.h).
 *
 * Threads: the owner's thread adds and calls fs_syncset_sync, which runs
 * the fsyncs on up to FS_SYNC_THREADS threads of its own and joins them
 * before it returns; they only read the (sorted) path array. */
#include "syncset.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tests replace this to simulate a failing device. */
#ifndef FS_FSYNC
#define FS_FSYNC fsync
#endif

void fs_syncset_init(fs_syncset *s) { memset(s, 0, sizeof *s); }

static void drop_all(fs_syncset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->paths[i]);
    s->n = 0;
}

void fs_syncset_free(fs_syncset *s)
{
    drop_all(s);
    free(s->paths);
    memset(s, 0, sizeof *s);
}

static int add_owned(fs_syncset *s, char *p, pq_err *err)
{
    if (p == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    if (s->n > 0 && strcmp(s->paths[s->n - 1], p) == 0) {
        free(p);                 /* the common repeat: the same directory again */
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **n = realloc(s->paths, cap * sizeof *n);
        if (n == NULL) {
            free(p);
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        }
        s->paths = n;
        s->cap = cap;
    }
    s->paths[s->n++] = p;
    return 0;
}

int fs_syncset_add(fs_syncset *s, const char *path, pq_err *err)
{
    return add_owned(s, strdup(path), err);
}

int fs_syncset_add_dir_of(fs_syncset *s, const char *path, pq_err *err)
{
    const char *slash = strrchr(path, '/');
    char *d = slash == NULL ? strdup(".") : slash == path ? strdup("/")
                                          : strndup(path, (size_t)(slash - path));
    return add_owned(s, d, err);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts and removes duplicates. */
static void unique(fs_syncset *s)
{
    if (s->n < 2)
        return;
    qsort(s->paths, s->n, sizeof *s->paths, by_name);
    size_t k = 1;
    for (size_t i = 1; i < s->n; i++) {
        if (strcmp(s->paths[i], s->paths[k - 1]) == 0)
            free(s->paths[i]);
        else
            s->paths[k++] = s->paths[i];
    }
    s->n = k;
}

typedef struct sync_run {
    char *const *paths;
    size_t n;
    bool dirs;
    atomic_size_t next;
    atomic_size_t failed;        /* index + 1 of a failed path, 0: none */
    atomic_int failed_errno;
} sync_run;

int fs_sync_path(const char *path, bool dir)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
    if (fd < 0)
        return errno;
    int e = FS_FSYNC(fd) == 0 || (dir && errno == EINVAL) ? 0 : errno;
    close(fd);
    return e;
}

static void *sync_thread(void *arg)
{
    sync_run *r = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->n || atomic_load(&r->failed) != 0)
            return NULL;
        int e = fs_sync_path(r->paths[i], r->dirs);
        size_t none = 0;
        if (e != 0 && atomic_compare_exchange_strong(&r->failed, &none, i + 1))
            atomic_store(&r->failed_errno, e);
    }
}

int fs_syncset_sync(fs_syncset *s, bool dirs, pq_err *err)
{
    unique(s);
    sync_run r = {.paths = s->paths, .n = s->n, .dirs = dirs};
    atomic_init(&r.next, 0);
    atomic_init(&r.failed, 0);
    atomic_init(&r.failed_errno, 0);
    pthread_t t[FS_SYNC_THREADS];
    size_t started = 0;
    const size_t want = s->n < FS_SYNC_THREADS ? s->n : FS_SYNC_THREADS;
    while (started + 1 < want && pthread_create(&t[started], NULL, sync_thread, &r) == 0)
        started++;
    sync_thread(&r);             /* this thread takes its share (all, if none started) */
    for (size_t i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    int rc = PQ_OK;
    size_t bad = atomic_load(&r.failed);
    if (bad != 0)
        rc = pq_err_set(err, PQ_EIO, "%s %s: fsync failed: %s", dirs ? "directory" : "output file",
                        s->paths[bad - 1], strerror(atomic_load(&r.failed_errno)));
    drop_all(s);
    return rc;
}
