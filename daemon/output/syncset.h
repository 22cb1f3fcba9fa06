/* syncset.h - a set of paths made durable together: files whose fsync was
 * deferred, and directories whose entries changed, fsynced with several
 * calls in flight at once.
 *
 * Why: `parqd convert` publishes every file at the end (all or nothing).
 * With partitioned output that is thousands of files, each with a file
 * fsync and a directory fsync; one at a time, each waits for the device
 * (0.3-1 ms here), which added a second of waiting with 1,000 partitions.
 * In flight together, the block layer merges their cache flushes.
 *
 *     fs_syncset s;  fs_syncset_init(&s);
 *     fs_syncset_add(&s, "/out/a/.f.tmp", &err);   (duplicates are kept once)
 *     fs_syncset_sync(&s, false, &err);            files; true: directories
 *     fs_syncset_free(&s);
 *
 * Not thread-safe: the owner (store_local.c) locks around it. The sync
 * itself starts up to FS_SYNC_THREADS short-lived threads. */
#ifndef PQ_SYNCSET_H
#define PQ_SYNCSET_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define FS_SYNC_THREADS 8

typedef struct fs_syncset {
    char **paths;
    size_t n, cap;
} fs_syncset;

void fs_syncset_init(fs_syncset *s);
void fs_syncset_free(fs_syncset *s);

/* Adds a copy of path. Returns 0 or PQ_ENOMEM. */
int fs_syncset_add(fs_syncset *s, const char *path, pq_err *err);

/* Adds the directory part of path (everything before its last '/'; "."
 * when there is none). Returns 0 or PQ_ENOMEM. */
int fs_syncset_add_dir_of(fs_syncset *s, const char *path, pq_err *err);

/* fsync of one path, opened read-only (dir: as a directory, where a file
 * system that cannot fsync one, EINVAL, is not an error). 0 or errno. */
int fs_sync_path(const char *path, bool dir);

/* fsyncs every path once (dirs: opened as directories; a file system
 * that cannot fsync a directory, EINVAL, is not an error), then empties
 * the set. Returns 0, or PQ_EIO naming the first path that failed (the
 * set is emptied either way: the caller fails the run). */
int fs_syncset_sync(fs_syncset *s, bool dirs, pq_err *err);

#endif
