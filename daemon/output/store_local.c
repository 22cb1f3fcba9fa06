/* store_local.c - the local-directory store (store.h): each file is a
 * filesink fs_file (hidden temporary file, fsync, no-replace rename,
 * directory fsync), so publishing into a directory behaves exactly as
 * filesink.c does on its own; recovery asks whether the path exists.
 * Also st_sink, the pq_sink over any store's file.
 *
 * Threads: as store.h; the store itself holds only its directory. */
#include "filesink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct local_store {
    st_store base;
    char *dir;
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
    return fs_finish(as_fs(f), err);
}

static int l_publish(st_file *f, const char *name, pq_err *err)
{
    return fs_commit(as_fs(f), name, err);
}

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
    free(ls->dir);
    free(ls);
}

static const st_ops local_ops = {
    .kind = "dir",
    .replay_same_name = false,
    .open = l_open, .append = l_append, .finish = l_finish, .publish = l_publish,
    .abort = l_abort, .unpublish = l_unpublish, .free = l_free, .bytes = l_bytes,
    .where = l_where, .locate = l_locate, .published = l_published, .destroy = l_destroy,
};

int st_local_new(st_store **out, const char *dir, pq_err *err)
{
    local_store *ls = calloc(1, sizeof *ls);
    if (ls == NULL || (ls->dir = strdup(dir)) == NULL) {
        free(ls);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
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
