/* filesink.h - output files (DESIGN.md "Bad input and lost data": "Files
 * are written under a temporary name and renamed only once complete, so a
 * reader never sees a partial file").
 *
 *     fs_file f;
 *     fs_open(&f, "/var/lib/parqd/out", "dt=2024-05-01/host-1-000001.parquet", &err);
 *     pq_writer_open(&w, schema, &opts, fs_sink(&f), &err);
 *     ... rows ...; pq_writer_close(w, &err);
 *     fs_finish(&f, &err);                        fsync + close, still hidden
 *     while ((rc = fs_commit(&f, name, &err)) == FS_EXISTS)
 *         name = <the same template with the next {seq}>;
 *     fs_free(&f);                    (or fs_abort on any failure)
 *
 * Temporary file: `<dir>/<dirname of the name>/.<basename>.<pid>-<n>.tmp`,
 * in the directory of the final file so the rename never crosses a file
 * system, hidden (a leading '.', and not ending in .parquet) so globbing
 * readers, Hive-style partition discovery and Spark skip it. Missing
 * directories are created (mode 0777 & ~umask), like `mkdir -p`.
 *
 * Commit: rename to the final name with RENAME_NOREPLACE (link + unlink
 * where the file system lacks it), so an existing file is never replaced;
 * when the name is taken fs_commit returns FS_EXISTS and the caller picks
 * the next {seq}. Then the directory is fsynced so the rename itself is
 * durable. fs_finish and fs_commit are separate so a caller can keep
 * several finished files hidden and publish them together (`parqd
 * convert` does, to leave nothing visible when it fails part-way); the
 * daemon calls them back to back.
 *
 * Writes loop until every byte is written (EINTR and short writes are
 * retried); ENOSPC, EDQUOT, EFBIG and EIO fail with the file's path and the
 * cause in err, after which the caller aborts the file. */
#ifndef PQ_FILESINK_H
#define PQ_FILESINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "pq_writer.h"
#include "store.h"
#include "syncset.h"

#define FS_EXISTS ST_EXISTS      /* fs_commit: the final name is taken */

typedef enum fs_state { FS_CLOSED, FS_OPEN, FS_FINISHED, FS_COMMITTED } fs_state;

typedef struct fs_file {
    st_file base;                /* the local store's file (store_local.c) */
    bool heap;                   /* allocated by the local store */
    fs_state state;
    int fd;
    char *dir;                   /* output directory, as given */
    char *tmp_path;              /* full path of the temporary file */
    char *final_path;            /* full path once committed */
    uint64_t bytes;              /* written through the sink */
    char *made_top;              /* the topmost directory fs_open created, or NULL */
    bool defer_sync;             /* set before fs_finish: the caller fsyncs (below) */
} fs_file;

/* Creates the temporary file for `name` (relative to dir; checked with
 * pt_check_relative's rules) and any missing directories. Returns 0 or
 * PQ_EINVAL / PQ_EIO / PQ_ENOMEM; on failure nothing is left behind but
 * directories it made. */
int fs_open(fs_file *f, const char *dir, const char *name, pq_err *err);

/* A pq_sink writing to the open file. f must stay at the same address. */
pq_sink fs_sink(fs_file *f);

/* fsync and close the temporary file. Returns 0 or PQ_EIO. With
 * defer_sync it only starts writing the file out and closes it: the
 * caller fsyncs tmp_path before fs_commit (a syncset of many files). */
int fs_finish(fs_file *f, pq_err *err);

/* Publishes a finished file as dir/name (missing directories created),
 * then fsyncs every directory whose entries changed: the file's, and the
 * parents of the directories fs_open created (their entries are not
 * durable otherwise, on a file system without a journal). With
 * defer_sync it leaves those to the caller (fs_dirs_to_sync). Returns 0,
 * FS_EXISTS (nothing changed; try another name), or PQ_EIO / PQ_EINVAL. */
int fs_commit(fs_file *f, const char *name, pq_err *err);

/* Adds to into the directories a committed file's publication changed
 * (those fs_commit fsyncs without defer_sync). 0, PQ_ENOMEM, PQ_ESTATE. */
int fs_dirs_to_sync(const fs_file *f, fs_syncset *into, pq_err *err);

/* Closes and removes the temporary file (open or finished). No-op after
 * fs_commit. Returns 0, or PQ_EIO when the file could not be removed (err
 * says which, for the log; err may be NULL). */
int fs_abort(fs_file *f, pq_err *err);

/* Frees memory; aborts a file that is still open or finished. */
void fs_free(fs_file *f);

/* `mkdir -p` for the directory part of path (everything before the last
 * '/'). Returns 0 or PQ_EIO with the component that failed. */
int fs_mkdirs_for(const char *path, pq_err *err);

/* ---- rotation policy -------------------------------------------------- */

/* When to close a file (DESIGN.md output.rotate); 0 = no limit on that
 * axis. */
typedef struct fs_rotate {
    uint64_t max_bytes;
    uint64_t max_rows;
    uint64_t max_age_ms;
} fs_rotate;

/* What the current file holds, from the writer: pq_writer_bytes_written,
 * pq_writer_buffered_bytes, pq_writer_rows_written, pq_writer_rows_buffered,
 * and how long ago it was opened. */
typedef struct fs_usage {
    uint64_t bytes_written, bytes_buffered;
    uint64_t rows_written, rows_buffered;
    uint64_t age_ms;
} fs_usage;

/* True when the file should be closed now: the caller flushes the row
 * group (pq_writer_flush_row_group), closes the writer and the file, and
 * opens the next one, so rotation always happens at a row-group boundary.
 * Check after every row (rows: exact), and on a timer (age).
 *
 * Bytes count written plus buffered: buffered bytes are uncompressed, so
 * the estimate errs high and files land at or a little under max_bytes
 * rather than a row group over it. An empty file (no rows) never rotates:
 * closing it would only publish an empty file. */
bool fs_rotate_due(const fs_rotate *r, const fs_usage *u);

#endif
