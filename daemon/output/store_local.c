/* store_local.c - the local-directory store (store.h): each file is a
 * filesink fs_file (hidden temporary file, fsync, no-replace rename,
 * directory fsync), so publishing into a directory behaves exactly as
 * filesink.c does on its own; recovery asks whether the path exists.
 * Also st_sink, the pq_sink over any store's file.
 *
 * With st_defer_sync (parqd convert) finish and publish leave their
 * fsyncs to st_sync, which runs them together (syncset.c).
 *
 * Threads: as store.h; the store holds its directory and, deferred, the
 * paths still to fsync, under its mutex (the writer finishes files on a
 * worker, convert's main thread publishes them). */
#include "filesink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mutex.h"

typedef struct local_store {
    st_store base;
    char *dir;
    bool defer;                  /* st_defer_sync: set before the first open */
    dm_mutex mu;                 /* guards the two sets (finish and publish may
                                    run on different threads) */
    fs_syncset files;            /* finished, not yet fsynced (temporary names) */
    fs_syncset dirs;             /* directories whose entries a publish changed */
} local_store;

static const st_ops local_ops;

static fs_file *as_fs(st_file *f) { return (fs_file *)f; }

static int l_open(st_store *s, const char *name, st_file **out, pq_err *err)
{
    local_store *ls = (local_store *)s;
    fs_file *f = malloc(sizeof *f);
    if (f == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    int rc = fs_open(f, ls->dir, name, err);
    if (rc != 0) {
        free(f);
        return rc;
    }
    f->base.store = s;
    f->heap = true;
    f->defer_sync = ls->defer;
    *out = &f->base;
    return 0;
}

static int l_append(st_file *f, const void *p, size_t n, pq_err *err)
{
    pq_sink s = fs_sink(as_fs(f));
    return s.write(s.ctx, p, n, err);
}

static int l_finish(st_file *f, const char *range, pq_err *err)
{
    (void)range;                 /* the footer holds it */
    local_store *ls = (local_store *)f->store;
    int rc = fs_finish(as_fs(f), err);
    if (rc == 0 && ls->defer) {
        dm_mutex_lock(&ls->mu);
        rc = fs_syncset_add(&ls->files, as_fs(f)->tmp_path, err);
        dm_mutex_unlock(&ls->mu);
    }
    return rc;
}

static int l_sync_files(local_store *ls, pq_err *err)
{
    dm_mutex_lock(&ls->mu);
    int rc = fs_syncset_sync(&ls->files, false, err);
    dm_mutex_unlock(&ls->mu);
    return rc;
}

static int l_publish(st_file *f, const char *name, pq_err *err)
{
    local_store *ls = (local_store *)f->store;
    /* A finished file's data is durable before its name is visible, even
     * when the caller published without st_sync first. */
    int rc = ls->defer && ls->files.n > 0 ? l_sync_files(ls, err) : 0;
    rc = rc ? rc : fs_commit(as_fs(f), name, err);
    if (rc == 0 && ls->defer) {
        dm_mutex_lock(&ls->mu);
        rc = fs_dirs_to_sync(as_fs(f), &ls->dirs, err);
        dm_mutex_unlock(&ls->mu);
    }
    return rc;
}

static int l_sync(st_store *s, pq_err *err)
{
    local_store *ls = (local_store *)s;
    int rc = l_sync_files(ls, err);
    dm_mutex_lock(&ls->mu);
    rc = rc ? rc : fs_syncset_sync(&ls->dirs, true, err);
    dm_mutex_unlock(&ls->mu);
    return rc;
}

static void l_defer_sync(st_store *s) { ((local_store *)s)->defer = true; }

static int l_abort(st_file *f, pq_err *err) { return fs_abort(as_fs(f), err); }

static int l_unpublish(st_file *f, pq_err *err)
{
    fs_file *fs = as_fs(f);
    if (fs->state != FS_COMMITTED || fs->final_path == NULL)
        return 0;
    if (unlink(fs->final_path) != 0 && errno != ENOENT)
        return pq_err_set(err, PQ_EIO, "cannot remove %s: %s", fs->final_path,
                          strerror(errno));
    return 0;
}

static void l_free(st_file *f)
{
    fs_file *fs = as_fs(f);
    const bool heap = fs->heap;
    fs_free(fs);
    if (heap)
        free(fs);
}

static uint64_t l_bytes(const st_file *f) { return ((const fs_file *)f)->bytes; }

static const char *l_where(const st_file *f) { return ((const fs_file *)f)->final_path; }

static int l_locate(st_store *s, const char *name, char *out, size_t cap, pq_err *err)
{
    local_store *ls = (local_store *)s;
    int n = snprintf(out, cap, "%s/%s", ls->dir, name);
    if (n < 0 || (size_t)n >= cap)
        return pq_err_set(err, PQ_ELIMIT, "output path %s/%s is too long", ls->dir, name);
    return 0;
}

static int l_published(st_store *s, const char *where, uint64_t end, bool *yes, pq_err *err)
{
    (void)s;
    (void)end;                   /* the rename happened after the intent: the range is it */
    *yes = false;
    if (access(where, F_OK) == 0) {
        *yes = true;
        return 0;
    }
    if (errno == ENOENT || errno == ENOTDIR)
        return 0;
    return pq_err_set(err, PQ_EIO, "cannot tell whether %s was published: %s", where,
                      strerror(errno));
}

static void l_destroy(st_store *s)
{
    local_store *ls = (local_store *)s;
    fs_syncset_free(&ls->files);
    fs_syncset_free(&ls->dirs);
    dm_mutex_destroy(&ls->mu);
    free(ls->dir);
    free(ls);
}

static const st_ops local_ops = {
    .kind = "dir",
    .replay_same_name = false,
    .open = l_open, .append = l_append, .finish = l_finish, .publish = l_publish,
    .abort = l_abort, .unpublish = l_unpublish, .free = l_free, .bytes = l_bytes,
    .where = l_where, .locate = l_locate, .published = l_published, .destroy = l_destroy,
    .sync = l_sync, .defer_sync = l_defer_sync,
};

int st_local_new(st_store **out, const char *dir, pq_err *err)
{
    local_store *ls = calloc(1, sizeof *ls);
    if (ls == NULL || (ls->dir = strdup(dir)) == NULL) {
        free(ls);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    if (dm_mutex_init(&ls->mu) != 0) {
        free(ls->dir);
        free(ls);
        return pq_err_set(err, PQ_ENOMEM, "cannot create a mutex");
    }
    fs_syncset_init(&ls->files);
    fs_syncset_init(&ls->dirs);
    ls->base.ops = &local_ops;
    *out = &ls->base;
    return 0;
}

bool st_is_local(const st_store *s) { return s != NULL && s->ops == &local_ops; }

void st_local_take(st_file *f, fs_file *dst)
{
    fs_file *src = as_fs(f);
    const bool heap = src->heap;
    *dst = *src;
    dst->heap = false;
    if (heap)
        free(src);
}

static int sink_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    return st_append(ctx, data, n, err);
}

pq_sink st_sink(st_file *f)
{
    pq_sink s = {.ctx = f, .write = sink_write};
    return s;
}
