/* filesink.c - temporary output files, atomic publication and the rotation
 * policy (see filesink.h). */
#include "filesink.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pathtpl.h"

/* Tests replace these to simulate a full disk or a failing device. */
#ifndef FS_WRITE
#define FS_WRITE write
#endif
#ifndef FS_FSYNC
#define FS_FSYNC fsync
#endif

static const char *why(int e)
{
    switch (e) {
    case ENOSPC: return "disk full (No space left on device)";
    case EDQUOT: return "disk quota exceeded";
    case EFBIG: return "file too large (size limit reached)";
    default: return strerror(e);
    }
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p == NULL)
        return NULL;
    memcpy(p, dir, a);
    size_t o = a;
    if (a > 0 && dir[a - 1] != '/')
        p[o++] = '/';
    memcpy(p + o, name, b + 1);
    return p;
}

/* `mkdir -p` for path's directory; *made (when not NULL) gets a copy of
 * the topmost directory it created, or NULL: that directory's entry, and
 * those of the ones below it, are durable only once their parents are
 * fsynced (fs_commit does it). */
static int mkdirs(const char *path, char **made, pq_err *err)
{
    const char *last = strrchr(path, '/');
    if (made != NULL)
        *made = NULL;
    if (last == NULL || last == path)
        return PQ_OK;
    char *d = strndup(path, (size_t)(last - path));
    if (d == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    struct stat st;
    int rc = PQ_OK;
    if (stat(d, &st) == 0 && S_ISDIR(st.st_mode))
        goto out;
    /* Walk down, creating each missing component. */
    for (char *p = d + 1;; p++) {
        const bool end = *p == '\0';
        if (!end && *p != '/')
            continue;
        *p = '\0';
        if (mkdir(d, 0777) == 0) {
            if (made != NULL && *made == NULL && (*made = strdup(d)) == NULL) {
                rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
                goto out;
            }
        } else if (errno != EEXIST) {
            rc = pq_err_set(err, PQ_EIO, "cannot create directory %s: %s", d, strerror(errno));
            goto out;
        }
        if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
            rc = pq_err_set(err, PQ_EIO, "cannot create directory %s: a file of that name is "
                            "in the way", d);
            goto out;
        }
        if (end)
            break;
        *p = '/';
    }
out:
    free(d);
    return rc;
}

int fs_mkdirs_for(const char *path, pq_err *err)
{
    return mkdirs(path, NULL, err);
}

/* ".<basename>.<pid>-<n>.tmp" beside the final name. The basename is cut
 * to keep the component under NAME_MAX. */
static char *temp_name(const char *full, unsigned n)
{
    const char *slash = strrchr(full, '/');
    const size_t dlen = slash ? (size_t)(slash - full) + 1 : 0;
    const char *base = full + dlen;
    size_t blen = strlen(base);
    if (blen > 200)
        blen = 200;
    size_t cap = dlen + blen + 64;
    char *p = malloc(cap);
    if (p != NULL)
        snprintf(p, cap, "%.*s.%.*s.%ld-%u.tmp", (int)dlen, full, (int)blen, base,
                 (long)getpid(), n);
    return p;
}

int fs_open(fs_file *f, const char *dir, const char *name, pq_err *err)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    int rc = pt_check_relative(name, err);
    if (rc != 0)
        return rc;
    char *full = join(dir, name);
    f->dir = strdup(dir);
    if (full == NULL || f->dir == NULL) {
        rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = mkdirs(full, &f->made_top, err)) != 0)
        goto fail;
    for (unsigned n = 0; n < 1000; n++) {
        free(f->tmp_path);
        if ((f->tmp_path = temp_name(full, n)) == NULL) {
            rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
            goto fail;
        }
        f->fd = open(f->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (f->fd >= 0 || errno != EEXIST)
            break;
    }
    if (f->fd < 0) {
        rc = pq_err_set(err, PQ_EIO, "cannot create output file %s: %s", f->tmp_path,
                        why(errno));
        goto fail;
    }
    /* Held while the file is written: a daemon starting on the same
     * output directory (another container on a shared volume, where our
     * pid means nothing) removes only temporary files nobody holds. */
    flock(f->fd, LOCK_EX | LOCK_NB);
    free(full);
    f->state = FS_OPEN;
    return PQ_OK;
fail:
    free(full);
    fs_free(f);
    return rc;
}

static int sink_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    fs_file *f = ctx;
    const char *p = data;
    if (f->state != FS_OPEN)
        return pq_err_set(err, PQ_ESTATE, "output file %s: write after close",
                          f->tmp_path ? f->tmp_path : "?");
    while (n > 0) {
        ssize_t w = FS_WRITE(f->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return pq_err_set(err, PQ_EIO, "output file %s: write failed after %llu bytes: %s",
                              f->tmp_path, (unsigned long long)f->bytes,
                              w < 0 ? why(errno) : "no progress");
        p += w;
        n -= (size_t)w;
        f->bytes += (uint64_t)w;
    }
    return PQ_OK;
}

pq_sink fs_sink(fs_file *f)
{
    pq_sink s = {.ctx = f, .write = sink_write};
    return s;
}

int fs_finish(fs_file *f, pq_err *err)
{
    if (f->state != FS_OPEN)
        return pq_err_set(err, PQ_ESTATE, "output file: finish without an open file");
    int rc = PQ_OK;
    if (f->defer_sync) {
#ifdef SYNC_FILE_RANGE_WRITE
        /* Start writing it out now, while there is other work: the
         * deferred fsync then mostly waits for nothing. */
        (void)sync_file_range(f->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
    } else if (FS_FSYNC(f->fd) != 0) {
        rc = pq_err_set(err, PQ_EIO, "output file %s: fsync failed: %s", f->tmp_path,
                        why(errno));
    }
    if (close(f->fd) != 0 && rc == 0)
        rc = pq_err_set(err, PQ_EIO, "output file %s: close failed: %s", f->tmp_path,
                        why(errno));
    f->fd = -1;
    f->state = FS_FINISHED;
    return rc;
}

static int sync_dir(void *ctx, const char *d, pq_err *err)
{
    (void)ctx;
    int e = fs_sync_path(d, true);
    return e == 0 ? PQ_OK : pq_err_set(err, PQ_EIO, "directory %s: fsync failed: %s", d, why(e));
}

static int add_dir(void *ctx, const char *d, pq_err *err)
{
    return fs_syncset_add(ctx, d, err);
}

static size_t dir_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
}

/* fn with the directory part of path ("." when none). */
static int call_dir_of(const char *path, int (*fn)(void *, const char *, pq_err *), void *ctx,
                       pq_err *err)
{
    const size_t len = dir_len(path);
    if (len == 0)
        return fn(ctx, ".", err);
    char *d = strndup(path, len);
    if (d == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    int rc = fn(ctx, d, err);
    free(d);
    return rc;
}

static bool same_dir(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    size_t la = sa ? (size_t)(sa - a) : 0, lb = sb ? (size_t)(sb - b) : 0;
    return la == lb && strncmp(a, b, la) == 0;
}

/* Calls fn with each directory whose entries a commit changed: the final
 * name's, the temporary name's when another, and the parents of the
 * directories fs_open created (made_top and those below it). */
static int each_changed_dir(const fs_file *f, int (*fn)(void *, const char *, pq_err *),
                            void *ctx, pq_err *err)
{
    int rc = call_dir_of(f->final_path, fn, ctx, err);
    if (rc == 0 && !same_dir(f->tmp_path, f->final_path))
        rc = call_dir_of(f->tmp_path, fn, ctx, err);
    if (rc != 0 || f->made_top == NULL)
        return rc;
    char *d = strdup(f->tmp_path);          /* in the directory fs_open made */
    if (d == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    const size_t stop = strlen(f->made_top);
    size_t len = dir_len(d);
    while (rc == 0 && len >= stop && len > 0) {
        d[len] = '\0';                      /* d: a directory fs_open made */
        rc = call_dir_of(d, fn, ctx, err);   /* its entry, in its parent */
        len = dir_len(d);
    }
    free(d);
    return rc;
}

/* Renames without replacing: RENAME_NOREPLACE, else link + unlink, else
 * (file systems without hard links) a check then a rename, which only a
 * concurrent writer of the same name could race. Returns 0, FS_EXISTS, or
 * -1 with errno. */
static int rename_noreplace(const char *from, const char *to)
{
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno == EEXIST)
        return FS_EXISTS;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return -1;
    if (link(from, to) == 0)
        return unlink(from) == 0 || errno == ENOENT ? 0 : -1;
    if (errno == EEXIST)
        return FS_EXISTS;
    if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP)
        return -1;
    struct stat st;
    if (lstat(to, &st) == 0)
        return FS_EXISTS;
    return rename(from, to);
}

int fs_commit(fs_file *f, const char *name, pq_err *err)
{
    if (f->state != FS_FINISHED)
        return pq_err_set(err, PQ_ESTATE, "output file: commit before finish");
    int rc = pt_check_relative(name, err);
    if (rc != 0)
        return rc;
    char *full = join(f->dir, name);
    if (full == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    if ((rc = fs_mkdirs_for(full, err)) != 0)
        goto out;
    int r = rename_noreplace(f->tmp_path, full);
    if (r == FS_EXISTS) {
        rc = FS_EXISTS;
        goto out;
    }
    if (r != 0) {
        rc = pq_err_set(err, PQ_EIO, "cannot rename %s to %s: %s", f->tmp_path, full,
                        why(errno));
        goto out;
    }
    f->state = FS_COMMITTED;
    f->final_path = full;
    full = NULL;
    /* The rename is only durable once the directory entry is (deferred:
     * the caller's syncset does it, fs_dirs_to_sync). */
    if (!f->defer_sync)
        rc = each_changed_dir(f, sync_dir, NULL, err);
out:
    free(full);
    return rc;
}

int fs_abort(fs_file *f, pq_err *err)
{
    int rc = PQ_OK;
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if ((f->state == FS_OPEN || f->state == FS_FINISHED) && f->tmp_path != NULL &&
        unlink(f->tmp_path) != 0 && errno != ENOENT)
        rc = pq_err_set(err, PQ_EIO, "cannot remove temporary file %s: %s", f->tmp_path,
                        strerror(errno));
    if (f->state != FS_COMMITTED)
        f->state = FS_CLOSED;
    return rc;
}

void fs_free(fs_file *f)
{
    if (f->state == FS_OPEN || f->state == FS_FINISHED)
        fs_abort(f, NULL);
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    free(f->dir);
    free(f->tmp_path);
    free(f->final_path);
    free(f->made_top);
    f->dir = f->tmp_path = f->final_path = f->made_top = NULL;
    f->state = FS_CLOSED;
}

int fs_dirs_to_sync(const fs_file *f, fs_syncset *into, pq_err *err)
{
    if (f->state != FS_COMMITTED)
        return pq_err_set(err, PQ_ESTATE, "output file: directories to sync before commit");
    return each_changed_dir(f, add_dir, into, err);
}

bool fs_rotate_due(const fs_rotate *r, const fs_usage *u)
{
    const uint64_t rows = u->rows_written + u->rows_buffered;
    if (rows == 0)
        return false;
    if (r->max_rows != 0 && rows >= r->max_rows)
        return true;
    if (r->max_bytes != 0 && u->bytes_written + u->bytes_buffered >= r->max_bytes)
        return true;
    return r->max_age_ms != 0 && u->age_ms >= r->max_age_ms;
}
