/* store.h - where published files go: an ops table (in the manner of
 * SQLite's sqlite3_io_methods) with three implementations: the local
 * directory (store_local.c, filesink.c's temporary file and no-replace
 * rename), S3 (store_s3.c, a PUT or a multipart upload completed at
 * publication) and a fault-injecting wrapper for tests (store_fault.c).
 *
 *     st_store *s;  st_local_new(&s, "/var/lib/parqd/out", &err);
 *     st_file *f;   st_open(s, "dt=2024-05-01/h-000001.parquet", &f, &err);
 *     pq_writer_open(&w, schema, &opts, st_sink(f), &err); ... rows ...
 *     st_finish(f, "0-1000", &err);       durable, still invisible
 *     while (st_publish(f, name, &err) == ST_EXISTS) name = <next {seq}>;
 *     st_free(f);                          (st_abort on any failure)
 *
 * Threads: a store is created and destroyed by its owner (cmd_run.c,
 * cmd_convert.c); its files are used by one thread at a time (the
 * pipeline's assembly then write token); `published` is called from the
 * loop thread while the spool opens. An implementation keeps its shared
 * state (connections, metrics) safe for several files at once. */
#ifndef PQ_STORE_H
#define PQ_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "pq_writer.h"

#define ST_EXISTS 1              /* st_publish: the name is taken (local only) */
#define ST_WHERE_MAX 4608        /* st_locate's result, NUL included */

typedef struct st_store st_store;
typedef struct st_file st_file;

typedef struct st_ops {
    const char *kind;            /* "dir", "s3", "fault" */
    /* Names deterministic for a spool range: the daemon renders {seq} from
     * the file's first spool seq, so a replay writes the same name. */
    bool replay_same_name;
    int (*open)(st_store *s, const char *name, st_file **out, pq_err *err);
    int (*append)(st_file *f, const void *p, size_t n, pq_err *err);
    /* Every byte written and durable but not visible; range "FIRST-END"
     * (the file's parqd.spool), or NULL. */
    int (*finish)(st_file *f, const char *range, pq_err *err);
    /* Atomic: visible under name, whole, or not at all. 0 / ST_EXISTS / error. */
    int (*publish)(st_file *f, const char *name, pq_err *err);
    /* Nothing of an unpublished file remains (no-op once published). */
    int (*abort)(st_file *f, pq_err *err);
    /* Removes a published file again (convert's all or nothing). */
    int (*unpublish)(st_file *f, pq_err *err);
    void (*free)(st_file *f);
    uint64_t (*bytes)(const st_file *f);
    /* Full path or URL of a published file (valid until free). */
    const char *(*where)(const st_file *f);
    /* The full path or URL a name would publish to (for intents and logs). */
    int (*locate)(st_store *s, const char *name, char *out, size_t cap, pq_err *err);
    /* Crash recovery: was `where` (st_locate's form) published, holding
     * the records below end (0: any)? A store that cannot tell the range
     * answers by existence. */
    int (*published)(st_store *s, const char *where, uint64_t end, bool *yes, pq_err *err);
    void (*destroy)(st_store *s);
    /* Deferred durability (st_defer_sync): makes every file finished, and
     * every directory entry published, since the last call durable. NULL:
     * finish and publish are durable on their own (S3). */
    int (*sync)(st_store *s, pq_err *err);
    /* Asks finish and publish to leave their fsyncs to sync (before any
     * open); a store without deferred durability ignores it. */
    void (*defer_sync)(st_store *s);
} st_ops;

/* Every store starts with this. */
struct st_store {
    const st_ops *ops;
};

/* Every file starts with this. */
struct st_file {
    st_store *store;
};

static inline int st_open(st_store *s, const char *name, st_file **out, pq_err *err)
{
    return s->ops->open(s, name, out, err);
}
static inline int st_append(st_file *f, const void *p, size_t n, pq_err *err)
{
    return f->store->ops->append(f, p, n, err);
}
static inline int st_finish(st_file *f, const char *range, pq_err *err)
{
    return f->store->ops->finish(f, range, err);
}
static inline int st_publish(st_file *f, const char *name, pq_err *err)
{
    return f->store->ops->publish(f, name, err);
}
static inline int st_abort(st_file *f, pq_err *err)
{
    return f == NULL ? 0 : f->store->ops->abort(f, err);
}
static inline int st_unpublish(st_file *f, pq_err *err)
{
    return f->store->ops->unpublish(f, err);
}
static inline void st_free(st_file *f)
{
    if (f != NULL)
        f->store->ops->free(f);
}
static inline uint64_t st_bytes(const st_file *f) { return f->store->ops->bytes(f); }
static inline const char *st_where(const st_file *f) { return f->store->ops->where(f); }
static inline int st_locate(st_store *s, const char *name, char *out, size_t cap, pq_err *err)
{
    return s->ops->locate(s, name, out, cap, err);
}
static inline int st_published(st_store *s, const char *where, uint64_t end, bool *yes,
                               pq_err *err)
{
    return s->ops->published(s, where, end, yes, err);
}
static inline void st_destroy(st_store *s)
{
    if (s != NULL)
        s->ops->destroy(s);
}

/* parqd convert publishes every file at the end: with st_defer_sync
 * before the first open, it calls st_sync once after the last finish
 * (the files' data) and once after the last publish (the directories),
 * instead of two fsyncs a file one after another. */
static inline void st_defer_sync(st_store *s)
{
    if (s->ops->defer_sync != NULL)
        s->ops->defer_sync(s);
}
static inline int st_sync(st_store *s, pq_err *err)
{
    return s->ops->sync != NULL ? s->ops->sync(s, err) : 0;
}
/* A pq_sink appending to f. */
pq_sink st_sink(st_file *f);

/* ---- the local directory (store_local.c) ---------------------------------- */

/* Files under dir (filesink.h). 0 or PQ_ENOMEM. */
int st_local_new(st_store **out, const char *dir, pq_err *err);
bool st_is_local(const st_store *s);
/* The local store's file is a filesink fs_file: moves it into *dst (the
 * st_file is freed). For pl_finished's compatibility field. */
struct fs_file;
void st_local_take(st_file *f, struct fs_file *dst);

/* ---- faults for tests (store_fault.c) ------------------------------------- */

typedef enum st_fault_op {
    ST_FAULT_OPEN, ST_FAULT_APPEND, ST_FAULT_FINISH, ST_FAULT_PUBLISH, ST_FAULT_PUBLISHED,
    ST_FAULT_N
} st_fault_op;

/* Wraps inner (borrowed): the nth call (1-based) of op fails with code and
 * msg; 0 never. Counts are atomic, so workers may share it. */
int st_fault_new(st_store **out, st_store *inner, pq_err *err);
void st_fault_set(st_store *s, st_fault_op op, uint64_t nth, int code, const char *msg);
uint64_t st_fault_calls(const st_store *s, st_fault_op op);

#endif
