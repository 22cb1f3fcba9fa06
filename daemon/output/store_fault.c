/* store_fault.c - a store that fails on demand, for tests (store.h): it
 * wraps another store and makes the nth open, append, finish, publish or
 * recovery question fail with a chosen error, as a full disk or a lost
 * connection would, without macro hooks in the real stores.
 *
 * Threads: the counters are atomic, so several workers may share it. */
#include "store.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct fault_store {
    st_store base;
    st_store *inner;
    _Atomic uint64_t calls[ST_FAULT_N];
    uint64_t nth[ST_FAULT_N];
    int code[ST_FAULT_N];
    char msg[ST_FAULT_N][128];
} fault_store;

typedef struct fault_file {
    st_file base;
    st_file *inner;
} fault_file;

static fault_store *fs_of(st_store *s) { return (fault_store *)s; }
static st_file *inner_of(st_file *f) { return ((fault_file *)f)->inner; }
static const st_file *cinner_of(const st_file *f) { return ((const fault_file *)f)->inner; }

/* Counts the call; non-zero (with err) when this one is to fail. */
static int hit(fault_store *s, st_fault_op op, pq_err *err)
{
    uint64_t n = atomic_fetch_add(&s->calls[op], 1) + 1;
    if (s->nth[op] == 0 || n != s->nth[op])
        return 0;
    return pq_err_set(err, s->code[op], "%s", s->msg[op]);
}

static int f_open(st_store *s, const char *name, st_file **out, pq_err *err)
{
    fault_store *fs = fs_of(s);
    int rc = hit(fs, ST_FAULT_OPEN, err);
    if (rc != 0)
        return rc;
    fault_file *f = calloc(1, sizeof *f);
    if (f == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    if ((rc = st_open(fs->inner, name, &f->inner, err)) != 0) {
        free(f);
        return rc;
    }
    f->base.store = s;
    *out = &f->base;
    return 0;
}

static int f_append(st_file *f, const void *p, size_t n, pq_err *err)
{
    int rc = hit(fs_of(f->store), ST_FAULT_APPEND, err);
    return rc ? rc : st_append(inner_of(f), p, n, err);
}

static int f_finish(st_file *f, const char *range, pq_err *err)
{
    int rc = hit(fs_of(f->store), ST_FAULT_FINISH, err);
    return rc ? rc : st_finish(inner_of(f), range, err);
}

static int f_publish(st_file *f, const char *name, pq_err *err)
{
    int rc = hit(fs_of(f->store), ST_FAULT_PUBLISH, err);
    return rc ? rc : st_publish(inner_of(f), name, err);
}

static int f_abort(st_file *f, pq_err *err) { return st_abort(inner_of(f), err); }
static int f_unpublish(st_file *f, pq_err *err) { return st_unpublish(inner_of(f), err); }

static void f_free(st_file *f)
{
    st_free(inner_of(f));
    free(f);
}

static uint64_t f_bytes(const st_file *f) { return st_bytes(cinner_of(f)); }
static const char *f_where(const st_file *f) { return st_where(cinner_of(f)); }

static int f_locate(st_store *s, const char *name, char *out, size_t cap, pq_err *err)
{
    return st_locate(fs_of(s)->inner, name, out, cap, err);
}

static int f_published(st_store *s, const char *where, uint64_t end, bool *yes, pq_err *err)
{
    int rc = hit(fs_of(s), ST_FAULT_PUBLISHED, err);
    return rc ? rc : st_published(fs_of(s)->inner, where, end, yes, err);
}

static void f_destroy(st_store *s) { free(s); }
static int f_sync(st_store *s, pq_err *err) { return st_sync(fs_of(s)->inner, err); }
static void f_defer_sync(st_store *s) { st_defer_sync(fs_of(s)->inner); }

static const st_ops fault_ops = {
    .kind = "fault",
    .open = f_open, .append = f_append, .finish = f_finish, .publish = f_publish,
    .abort = f_abort, .unpublish = f_unpublish, .free = f_free, .bytes = f_bytes,
    .where = f_where, .locate = f_locate, .published = f_published, .destroy = f_destroy,
    .sync = f_sync, .defer_sync = f_defer_sync,
};

int st_fault_new(st_store **out, st_store *inner, pq_err *err)
{
    fault_store *s = calloc(1, sizeof *s);
    if (s == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    s->base.ops = &fault_ops;
    s->inner = inner;
    *out = &s->base;
    return 0;
}

void st_fault_set(st_store *s, st_fault_op op, uint64_t nth, int code, const char *msg)
{
    fault_store *fs = fs_of(s);
    fs->nth[op] = nth;
    fs->code[op] = code;
    strncpy(fs->msg[op], msg, sizeof fs->msg[op] - 1);
}

uint64_t st_fault_calls(const st_store *s, st_fault_op op)
{
    return atomic_load(&((fault_store *)s)->calls[op]);
}
