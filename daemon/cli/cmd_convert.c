/* cmd_convert.c - `parqd convert [--config FILE] [--schema FILE] [-o OUT]
 * [INPUT...|-]`: NDJSON files or stdin to Parquet, through the daemon's
 * write path (DESIGN.md "Command line"): configuration -> sc_schema ->
 * pq_schema -> writer options; framer -> shredder -> writer -> file sink
 * with rotation; rejects to the dead-letter file.
 *
 * Output (-o):
 *   none          output.dir + output.path from the configuration, as the
 *                 daemon writes them.
 *   -o DIR/       a directory when OUT ends in '/' or is an existing
 *                 directory: output.path rendered under it.
 *   -o FILE       anything else names one file. If rotation (output.rotate
 *                 max_bytes / max_rows) closes a file before the input
 *                 ends, the files are named FILE's stem + "-000001",
 *                 "-000002", ... + its extension (out.parquet ->
 *                 out-000001.parquet, ...) instead: nothing is lost, no
 *                 error after the work is done, and the summary names them.
 *                 An existing FILE is refused up front (exit 1): convert
 *                 never overwrites.
 *   -o -          standard output, as one complete file (rotation does not
 *                 apply). It is staged in a private directory under
 *                 $TMPDIR (default /tmp), then copied out, so stdout may be
 *                 a pipe; a terminal is refused (exit 1).
 * Rotation by max_age, and row groups by age, do not apply: a batch has
 * no idle stream to bound, and age limits would make the output depend on
 * how fast the machine is.
 *
 * All or nothing: finished files stay hidden (filesink temp names) until
 * every input has been read, then are published together; on any I/O or
 * internal failure (exit 3), or SIGINT/SIGTERM, every temporary file is
 * removed and no output file appears.
 *
 * Dead letters: errors.dead_letter when the configuration file sets it;
 * otherwise beside the output: FILE minus ".parquet" + ".rejects.ndjson"
 * (out.parquet -> out.rejects.ndjson), DIR + ".rejects.ndjson" (out/ ->
 * out.rejects.ndjson), or, without -o and with -o -, the configuration's
 * default (./rejects.ndjson). Created only when a record is rejected; appended to.
 * Sources read "file:/abs/path/in.ndjson:LINE" or "stdin:LINE".
 *
 * Exit: 0 every record written; 1 usage/configuration (missing input
 * files, an existing -o FILE); 2 some records rejected (the rest landed);
 * 3 I/O or internal failure, dead-letter write failures included. A
 * one-line summary goes to stderr, after at most 10 reject messages. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "colspec.h"
#include "config.h"
#include "deadletter.h"
#include "filesink.h"
#include "store.h"
#include "store_config.h"
#include "store_s3.h"
#include "keyring.h"
#include "framer.h"
#include "pathtpl.h"
#include "pipeline.h"
#include "pq_writer.h"

#define READ_CHUNK (1u << 20)
#define MAX_REJECT_MESSAGES 10
/* A batch is what one worker shreds at a time (PL_BATCH_BYTES); reading
 * stays at most READ_AHEAD_BATCHES batches ahead of the workers. */
#define BATCH_LINES 16384
#define READ_AHEAD_BATCHES 3
/* Partitioned output: each key's rows of a batch are copied into its
 * file's columns, a cache miss per column buffer whether the key has one
 * row or ten, so a batch gives each open file about this much (with 1,000
 * open files and a typed schema of 30 leaves, 1 MiB batches left one or
 * two rows a key and made the copies a third of the run's CPU). */
#define ROUTED_BYTES_PER_FILE ((size_t)8 << 10)
#define ROUTED_BATCH_MAX ((size_t)8 << 20)


typedef struct conv {
    /* settings */
    cf_config cf;
    bool cf_loaded;
    pq_writer_opts wopts;
    kr_keyring keys;
    bool file_mode;              /* -o FILE (and -o -, staged) */
    char *stage_dir;             /* -o -: the private directory the file waits in */
    char *out_dir;               /* where files go */
    char *out_file;              /* file mode: FILE's name within out_dir */
    st_store *store;             /* out_dir's store: local, or S3 (-o s3://) */
    const char *tmpl;            /* template mode: output.path */
    char host[256];
    long pid;
    uint64_t seq;                /* last {seq} used */
    /* pipeline */
    fr_framer fr;
    dl_file dl;
    bool dl_ready;
    pl_pipeline *pl;
    pl_batch *batch;             /* being filled */
    size_t batch_bytes;          /* submitted at: PL_BATCH_BYTES, more when routed */
    size_t batch_lines;
    uint64_t next_seq;           /* seq of the next line (1-based, all inputs) */
    const char *source;          /* "file:/abs" or "stdin" */
    int64_t now_us;              /* receive time of the chunk being framed */
    /* finished files, published at the end */
    pl_finished *done;
    size_t n_done;
    /* counters */
    uint64_t in, written, rejected, files_bytes;
    _Atomic unsigned reject_msgs;
    bool verbose;                /* -v: name each file's automatic shredding */
    pq_err err;                  /* the fatal error, once there is one */
    bool failed;
} conv;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

static void usage(void)
{
    fputs("usage: parqd convert [--config FILE] [--schema FILE] [-o OUT] [-v] [INPUT...|-]\n"
          "  OUT is one file, or a directory when it ends in '/' or exists as one,\n"
          "  or '-' for standard output (one file, written once complete);\n"
          "  no INPUT (or '-') reads stdin; -v names the fields each file's\n"
          "  automatically shredded Variant columns shred (shred: auto).\n", stderr);
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Records the first fatal error; returns -1 for the framer callback. */
static int fail(conv *c, const pq_err *e)
{
    if (!c->failed) {
        c->err = *e;
        c->failed = true;
    }
    return -1;
}

/* ---- arguments ------------------------------------------------------------ */

typedef struct args {
    const char *config, *schema, *out;
    bool verbose;
    const char **inputs;
    size_t n_inputs;
} args;


static int parse_args(int argc, char **argv, args *a)
{
    bool opts_done = false;
    a->inputs = calloc((size_t)argc + 1, sizeof *a->inputs);
    if (a->inputs == NULL)
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL, **dst = NULL;
        if (opts_done || argv[i][0] != '-' || strcmp(argv[i], "-") == 0) {
            a->inputs[a->n_inputs++] = argv[i];
            continue;
        }
        if (strcmp(argv[i], "--") == 0) {
            opts_done = true;
            continue;
        }
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            a->verbose = true;
            continue;
        }
        if (cli_take_opt(argc, argv, &i, "--config", &v))
            dst = &a->config;
        else if (cli_take_opt(argc, argv, &i, "--schema", &v))
            dst = &a->schema;
        else if (cli_take_opt(argc, argv, &i, "-o", &v))
            dst = &a->out;
        if (cli_store_opt("convert", "unknown option", dst, v, argv[i]) != 0)
            return -1;
    }
    return 0;
}

/* Every input must be readable before anything is written. */
static int check_inputs(const args *a)
{
    for (size_t i = 0; i < a->n_inputs; i++) {
        struct stat st;
        const char *p = a->inputs[i];
        if (strcmp(p, "-") == 0)
            continue;
        if (stat(p, &st) != 0 || access(p, R_OK) != 0) {
            fprintf(stderr, "parqd convert: input %s: %s\n", p, strerror(errno));
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "parqd convert: input %s: is a directory\n", p);
            return -1;
        }
    }
    return 0;
}

/* ---- encryption keys ------------------------------------------------------ */

static int load_keys(conv *c, pq_err *err)
{
    int rc = kr_keyring_load(&c->keys, &c->cf, err);
    c->wopts.encryption = rc == 0 ? kr_keyring_opts(&c->keys) : NULL;
    return rc;
}

/* ---- output files ------------------------------------------------------------ */

/* file mode, file i of n: FILE itself when n == 1, else stem-<seq>.ext */
static int file_mode_name(const conv *c, size_t i, size_t n, char *out, size_t cap)
{
    const char *name = c->out_file;
    if (n == 1)
        return snprintf(out, cap, "%s", name) < (int)cap ? 0 : -1;
    const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
    const char *dot = strrchr(base, '.');
    if (dot == NULL || dot == base)
        dot = name + strlen(name);
    int len = snprintf(out, cap, "%.*s-%0*zu%s", (int)(dot - name), name, PT_SEQ_DIGITS, i + 1,
                       dot);
    return len >= 0 && len < (int)cap ? 0 : -1;
}

/* Empty input still gives one (empty) file: -o FILE promised one. */
static int write_empty_file(conv *c)
{
    pq_err e = {0};
    pq_schema *ps = NULL;
    pq_writer *w = NULL;
    pl_finished *d = calloc(1, sizeof *d);
    if (d == NULL)
        return fail(c, &(pq_err){PQ_ENOMEM, "out of memory"});
    d->file.fd = -1;
    d->first_time = time(NULL);
    int rc = 0;
    if (c->file_mode)
        snprintf(d->name, sizeof d->name, "%s", c->out_file);
    else
        rc = pt_render(c->tmpl, d->first_time, c->host, c->pid, ++c->seq, d->name,
                       sizeof d->name, &e);
    rc = rc ? rc : sc_build_parquet_schema(c->cf.schema, &ps, &e);
    rc = rc ? rc : st_open(c->store, d->name, &d->out, &e);
    rc = rc ? rc : pq_writer_open(&w, ps, &c->wopts, st_sink(d->out), &e);
    rc = rc ? rc : pq_writer_close(w, &e);
    rc = rc ? rc : st_finish(d->out, "1-1", &e);
    pq_writer_destroy(w);
    pq_schema_destroy(ps);
    free(c->done);
    c->done = d;
    c->n_done = 1;
    return rc ? fail(c, &e) : 0;
}

/* Publishes every finished file. Template mode bumps {seq} past names that
 * exist; file mode names are fixed, and one that exists fails the run. */
static int commit_all(conv *c)
{
    pq_err e = {0};
    char name[PT_PATH_MAX];
    if (c->file_mode) {
        /* Check every name first, so a clash leaves nothing half published. */
        for (size_t i = 0; i < c->n_done; i++) {
            char full[ST_WHERE_MAX];
            bool taken = false;
            if (file_mode_name(c, i, c->n_done, name, sizeof name) != 0)
                return fail(c, &(pq_err){PQ_ELIMIT, "output file name too long"});
            if (st_locate(c->store, name, full, sizeof full, &e) != 0 ||
                st_published(c->store, full, 0, &taken, &e) != 0)
                return fail(c, &e);
            if (taken) {
                pq_err_set(&e, PQ_EIO, "output file %s already exists; not overwriting it "
                           "(%zu files were to be written)", full, c->n_done);
                return fail(c, &e);
            }
        }
    }
    /* Every file's data durable before any name appears, the names
     * durable before we report success (st_sync, twice). */
    if (st_sync(c->store, &e) != 0)
        return fail(c, &e);
    for (size_t i = 0; i < c->n_done; i++) {
        pl_finished *d = &c->done[i];
        int rc;
        if (c->file_mode) {
            file_mode_name(c, i, c->n_done, name, sizeof name);
            rc = st_publish(pl_finished_file(d), name, &e);
            if (rc == ST_EXISTS)
                rc = pq_err_set(&e, PQ_EIO, "output file %s/%s appeared while converting; not "
                                "overwriting it", c->out_dir, name);
        } else {
            snprintf(name, sizeof name, "%s", d->name);
            uint64_t seq = c->seq;
            while ((rc = st_publish(pl_finished_file(d), name, &e)) == ST_EXISTS) {
                /* Taken (an earlier run of the same pid, or another writer):
                 * the next {seq} after every one this run used. */
                if ((rc = pt_render(c->tmpl, d->first_time, c->host, c->pid, ++seq, name, sizeof name,
                                    &e)) != 0)
                    break;
            }
            c->seq = seq;
        }
        if (rc != 0)
            return fail(c, &e);
        c->files_bytes += st_bytes(pl_finished_file(d));
    }
    return st_sync(c->store, &e) != 0 ? fail(c, &e) : 0;
}

/* Removes every temporary file, and with unpublish any file this run
 * already published (a failure while publishing must not leave half the
 * output visible). */
static void abort_all(conv *c, bool unpublish)
{
    pq_err e = {0};
    for (size_t i = 0; i < c->n_done; i++) {
        if (c->done[i].out == NULL && c->done[i].file.base.store == NULL)
            continue;            /* never opened */
        st_file *f = pl_finished_file(&c->done[i]);
        if (unpublish && st_where(f) != NULL) {
            if (st_unpublish(f, &e) != 0)
                fprintf(stderr, "parqd convert: %s\n", e.msg);
        } else if (st_abort(f, &e) != 0) {
            fprintf(stderr, "parqd convert: %s\n", e.msg);
        }
        st_free(f);
    }
    c->n_done = 0;
}

/* ---- -o -: standard output ------------------------------------------------------ */

/* -o -: file mode into a private directory (0700, mkdtemp) under $TMPDIR;
 * rotation is off, so the input makes one file. stdout_copy writes it out
 * once published; teardown removes it and the directory. */
static int stdout_stage(conv *c)
{
    if (isatty(STDOUT_FILENO)) {
        fprintf(stderr, "parqd convert: -o -: standard output is a terminal; not writing "
                "Parquet bytes to it (redirect it to a file or pipe it to a reader)\n");
        return 1;
    }
    const char *tmp = getenv("TMPDIR");
    if (asprintf(&c->stage_dir, "%s/parqd-convert-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
        c->stage_dir = NULL;
        fprintf(stderr, "parqd convert: out of memory\n");
        return 3;
    }
    if (mkdtemp(c->stage_dir) == NULL) {
        fprintf(stderr, "parqd convert: -o -: cannot create the staging directory %s: %s "
                "(set TMPDIR to a writable directory)\n", c->stage_dir, strerror(errno));
        free(c->stage_dir);
        c->stage_dir = NULL;
        return 3;
    }
    c->file_mode = true;
    c->out_dir = strdup(c->stage_dir);
    c->out_file = strdup("stdout.parquet");
    c->cf.output.rotate.max_bytes = 0;
    c->cf.output.rotate.max_rows = 0;
    return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = EIO;                 /* no progress: report it as an I/O error */
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copies the published (staged) file to standard output. */
static int stdout_copy(conv *c)
{
    pq_err e = {0};
    const st_file *f = pl_finished_file(&c->done[0]);
    const char *path = st_where(f);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        pq_err_set(&e, PQ_EIO, "-o -: cannot open the staged file %s: %s", path, strerror(errno));
        return fail(c, &e);
    }
    char buf[1 << 16];
    uint64_t done = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            pq_err_set(&e, PQ_EIO, "-o -: reading the staged file %s: %s", path, strerror(errno));
        else if (n > 0 && write_all(STDOUT_FILENO, buf, (size_t)n) != 0)
            pq_err_set(&e, PQ_EIO, "-o -: writing standard output failed after %" PRIu64
                       " of %" PRIu64 " bytes: %s", done, st_bytes(f),
                       strerror(errno));
        if (n <= 0 || e.code != 0)
            break;
        done += (uint64_t)n;
    }
    close(fd);
    return e.code != 0 ? fail(c, &e) : 0;
}

/* After abort_all: the staging directory, empty by then. */
static void stdout_unstage(conv *c)
{
    if (c->stage_dir != NULL && rmdir(c->stage_dir) != 0)
        fprintf(stderr, "parqd convert: cannot remove the staging directory %s: %s\n",
                c->stage_dir, strerror(errno));
    free(c->stage_dir);
    c->stage_dir = NULL;
}

/* ---- records ------------------------------------------------------------------ */

/* Pipeline worker, in order: the first rejects are also shown on stderr. */
static void on_reject(void *user, const char *source, const char *reason)
{
    conv *c = user;
    unsigned n = atomic_fetch_add(&c->reject_msgs, 1);
    if (n < MAX_REJECT_MESSAGES)
        fprintf(stderr, "parqd convert: %s: rejected: %s\n", source, reason);
    else if (n == MAX_REJECT_MESSAGES)
        fprintf(stderr, "parqd convert: (further rejects only in %s)\n", c->dl.path);
}

/* Pipeline assembler, in file order: a file's `shred: auto` column got its
 * layout. Files are named by their first record: their names are
 * temporary until the end. */
static void on_shred(void *user, const char *file, uint64_t first_seq, const char *column,
                     const char *layout)
{
    conv *c = user;
    (void)file;
    if (c->verbose)
        fprintf(stderr, "parqd convert: file from record %" PRIu64 ": column %s shredded as %s\n",
                first_seq, column, layout);
}

static int submit_batch(conv *c)
{
    if (pl_batch_lines(c->batch) == 0)
        return 0;
    c->next_seq = pl_batch_end_seq(c->batch);
    pl_submit(c->pl, c->batch);
    c->batch = pl_batch_get(c->pl);
    if (c->batch == NULL)
        return fail(c, &(pq_err){PQ_ENOMEM, "out of memory"});
    pl_batch_reset(c->batch, c->next_seq);
    /* Backpressure: reading waits while the workers are behind. A file is
     * at hand, so a few batches per worker keep them busy; reading further
     * ahead would only cost memory. One closed row group may wait for its
     * encoder while the next fills; a second one stops reading. A row
     * group closes once it holds max_bytes or a little more, so the limit
     * is one and a half: at max_bytes itself, reading stopped at every
     * close and one worker sat idle while the other encoded (an
     * auto-shredded row group, converted first, made that 30% of a run). */
    size_t limit = c->cf.limits.max_buffered_bytes;
    size_t rg = c->cf.output.row_group.max_bytes, pending = rg + rg / 2;
    const size_t ahead = READ_AHEAD_BATCHES * c->batch_bytes;
    pl_wait_below(c->pl, limit < ahead ? limit : ahead, rg && pending < limit ? pending : limit);
    return 0;
}

static int on_line(void *user, const fr_line *l)
{
    conv *c = user;
    c->in++;
    if (pl_batch_add(c->batch, c->source, l->data, l->len, l->total, l->oversized, c->now_us,
                     l->lineno) != 0)
        return fail(c, &(pq_err){PQ_ENOMEM, "out of memory"});
    if (pl_batch_bytes(c->batch) >= c->batch_bytes || pl_batch_lines(c->batch) >= c->batch_lines)
        return submit_batch(c);
    return 0;
}

static int read_input(conv *c, const char *path, char *buf)
{
    pq_err e = {0};
    char abs[PATH_MAX + 8];
    const bool is_stdin = strcmp(path, "-") == 0;
    int fd = STDIN_FILENO;
    if (is_stdin) {
        c->source = "stdin";
    } else {
        char real[PATH_MAX];
        snprintf(abs, sizeof abs, "file:%s", realpath(path, real) ? real : path);
        c->source = abs;
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
            pq_err_set(&e, PQ_EIO, "input %s: %s", path, strerror(errno));
            return fail(c, &e);
        }
    }
    fr_reset(&c->fr);
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, READ_CHUNK);
        if (interrupted) {
            pq_err_set(&e, PQ_EIO, "interrupted by signal %d", (int)interrupted);
            rc = fail(c, &e);
            break;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            pq_err_set(&e, PQ_EIO, "input %s: read failed: %s", is_stdin ? "stdin" : path,
                       strerror(errno));
            rc = fail(c, &e);
            break;
        }
        c->now_us = now_us();
        if (n == 0) {
            rc = fr_finish(&c->fr, on_line, c);
            break;
        }
        if ((rc = fr_push(&c->fr, buf, (size_t)n, on_line, c)) != 0)
            break;
        if (pl_failed(c->pl))
            break;
    }
    if (rc == PQ_ENOMEM)
        fail(c, &(pq_err){PQ_ENOMEM, "out of memory"});
    if (!is_stdin)
        close(fd);
    return c->failed ? -1 : 0;
}

/* ---- setup ------------------------------------------------------------------------ */

static char *strip_suffix_dup(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (n > k && strcmp(s + n - k, suffix) == 0)
        n -= k;
    return strndup(s, n);
}

/* -o s3://bucket/prefix/: files named by output.path under the prefix;
 * dead letters where the configuration says. */
static int setup_s3_output(conv *c, const char *url)
{
    pq_err e = {0};
    bool plain = false;
    if (pt_check(c->tmpl, &e) != 0 ||
        st_from_s3_url(url, &c->cf.output, &c->store, &plain, &e) != 0) {
        fprintf(stderr, "parqd convert: %s\n", e.msg);
        return e.code == PQ_ENOMEM ? 3 : 1;
    }
    if (plain)
        fprintf(stderr, "parqd convert: warning: %s is reached over plain http\n", url);
    st_s3_upload_at_finish(c->store);    /* files stay hidden until the end */
    size_t n = strlen(url);
    c->out_dir = strndup(url, n > 0 ? n - 1 : 0);
    if (c->out_dir == NULL ||
        dl_init(&c->dl, c->cf.errors.dead_letter, DL_SYNC_CLOSE, &e) != 0) {
        fprintf(stderr, "parqd convert: %s\n", c->out_dir ? e.msg : "out of memory");
        return 3;
    }
    c->dl_ready = true;
    return 0;
}

/* Output mode and the dead-letter path (see the header comment). */
static int setup_output(conv *c, const args *a, bool config_given)
{
    const char *dl = c->cf.errors.dead_letter;
    char *dl_own = NULL;
    pq_err e = {0};
    struct stat st;
    cf_config def;
    bool dl_explicit = false;
    if (config_given && cf_config_default(&def, &e) == 0)
        dl_explicit = strcmp(def.errors.dead_letter, dl) != 0;
    if (config_given)
        cf_config_free(&def);
    c->tmpl = c->cf.output.path;
    if (st_is_s3_url(a->out))
        return setup_s3_output(c, a->out);
    if (a->out == NULL) {
        c->out_dir = strdup(c->cf.output.dir);
    } else if (strcmp(a->out, "-") == 0) {
        int rc = stdout_stage(c);
        if (rc != 0)
            return rc;
    } else {
        size_t n = strlen(a->out);
        bool is_dir = a->out[n - 1] == '/' || (stat(a->out, &st) == 0 && S_ISDIR(st.st_mode));
        if (is_dir) {
            char *trim = strndup(a->out, n);
            while (n > 1 && trim[n - 1] == '/')
                trim[--n] = '\0';
            c->out_dir = trim;
            if (!dl_explicit && trim != NULL && asprintf(&dl_own, "%s.rejects.ndjson", trim) < 0)
                dl_own = NULL;
        } else {
            if (lstat(a->out, &st) == 0) {
                fprintf(stderr, "parqd convert: output file %s already exists; convert does "
                        "not overwrite (remove it, or name a new file or a directory)\n",
                        a->out);
                return 1;
            }
            const char *slash = strrchr(a->out, '/');
            c->file_mode = true;
            c->out_dir = slash == NULL ? strdup(".") : slash == a->out ? strdup("/")
                                       : strndup(a->out, (size_t)(slash - a->out));
            c->out_file = strdup(slash ? slash + 1 : a->out);
            if (!dl_explicit) {
                char *stem = strip_suffix_dup(a->out, ".parquet");
                if (stem != NULL && asprintf(&dl_own, "%s.rejects.ndjson", stem) < 0)
                    dl_own = NULL;
                free(stem);
            }
        }
    }
    if (c->out_dir == NULL || (c->file_mode && c->out_file == NULL) ||
        (!dl_explicit && a->out != NULL && c->stage_dir == NULL && dl_own == NULL)) {
        free(dl_own);
        fprintf(stderr, "parqd convert: out of memory\n");
        return 3;
    }
    if (!c->file_mode && pt_check(c->tmpl, &e) != 0) {
        free(dl_own);
        fprintf(stderr, "parqd convert: %s\n", e.msg);
        return 1;
    }
    if (c->store == NULL && st_local_new(&c->store, c->out_dir, &e) != 0) {
        free(dl_own);
        fprintf(stderr, "parqd convert: %s\n", e.msg);
        return 1;
    }
    /* Nothing is visible before commit_all: the files' fsyncs, and the
     * directories', wait for it and run there together. */
    st_defer_sync(c->store);
    int rc = dl_init(&c->dl, dl_own ? dl_own : dl, DL_SYNC_CLOSE, &e);
    free(dl_own);
    if (rc != 0) {
        fprintf(stderr, "parqd convert: %s\n", e.msg);
        return 3;
    }
    c->dl_ready = true;
    return 0;
}

/* PL_BATCH_BYTES, or for partitioned output ROUTED_BYTES_PER_FILE per
 * open file, up to ROUTED_BATCH_MAX (README "What one open file costs"
 * counts it). Lines scale alike. */
static void set_batch_size(conv *c)
{
    c->batch_bytes = PL_BATCH_BYTES;
    if (pl_routed(c->pl)) {
        const size_t files = c->cf.output.max_open_files ? c->cf.output.max_open_files
                                                         : PL_MAX_OPEN_FILES_DEFAULT;
        const size_t want = files * ROUTED_BYTES_PER_FILE;
        c->batch_bytes = want < PL_BATCH_BYTES ? PL_BATCH_BYTES
                       : want > ROUTED_BATCH_MAX ? ROUTED_BATCH_MAX : want;
    }
    c->batch_lines = BATCH_LINES * (c->batch_bytes / PL_BATCH_BYTES);
}

/* Rotation by max_age, and row groups by age, do not apply (see the
 * header comment); the other limits are the configuration's. */
static int start_pipeline(conv *c)
{
    pq_err e = {0};
    const cf_output *o = &c->cf.output;
    pl_config pc = {
        .schema = c->cf.schema,
        .writer = &c->wopts,
        .out_dir = c->out_dir,
        .store = c->store,
        .path_template = c->tmpl,
        .time_from = o->time_from,
        .file_name = c->file_mode ? c->out_file : NULL,
        .row_group = {.max_bytes = o->row_group.max_bytes, .max_rows = o->row_group.max_rows},
        .rotate = {.max_bytes = o->rotate.max_bytes, .max_rows = o->rotate.max_rows},
        .publish = PL_PUBLISH_HOLD,
        .dead_letters = &c->dl,
        .first_seq = 1,
        .host = c->host,
        .max_line_bytes = c->cf.limits.max_line_bytes,
        .max_open_files = c->cf.output.max_open_files,
        .max_buffered_bytes = c->cf.limits.max_buffered_bytes,
    };
    pl_callbacks cb = {.user = c, .on_reject = on_reject, .on_shred = on_shred};
    int rc = pl_new(&c->pl, &pc, &cb, &e);
    if (rc == 0 && (c->batch = pl_batch_get(c->pl)) == NULL)
        rc = pq_err_set(&e, PQ_ENOMEM, "out of memory");
    if (rc != 0) {
        fprintf(stderr, "parqd convert: %s\n", e.msg);
        return rc == PQ_ENOMEM ? 3 : 1;
    }
    c->next_seq = 1;
    pl_batch_reset(c->batch, c->next_seq);
    set_batch_size(c);
    return 0;
}

static int setup(conv *c, const args *a)
{
    c->verbose = a->verbose;
    pq_err e = {0};
    int rc;
    if (a->config != NULL) {
        rc = cf_config_load_ex(a->config, a->schema, &c->cf, &e);
    } else {
        rc = cf_config_default(&c->cf, &e);
        if (rc == 0 && a->schema != NULL)
            rc = cf_config_use_schema_file(&c->cf, a->schema, &e);
    }
    c->cf_loaded = true;
    if (rc != 0) {
        fprintf(stderr, "parqd: %s\n", e.msg);
        return rc == PQ_ENOMEM ? 3 : 1;
    }
    cf_writer_opts(&c->cf, &c->wopts);
    if ((rc = load_keys(c, &e)) != 0) {
        fprintf(stderr, "parqd convert: %s\n", e.msg);
        return rc == PQ_ENOMEM ? 3 : 1;
    }
    if (fr_init(&c->fr, c->cf.limits.max_line_bytes) != 0) {
        fprintf(stderr, "parqd convert: limits.max_line_bytes must be positive\n");
        return 1;
    }
    c->pid = (long)getpid();
    if (gethostname(c->host, sizeof c->host) != 0)
        snprintf(c->host, sizeof c->host, "localhost");
    c->host[sizeof c->host - 1] = '\0';
    rc = setup_output(c, a, a->config != NULL);
    return rc ? rc : start_pipeline(c);
}

static void teardown(conv *c)
{
    abort_all(c, c->stage_dir != NULL);  /* -o -: the staged file goes too */
    stdout_unstage(c);
    free(c->done);
    pl_batch_destroy(c->batch);
    pl_destroy(c->pl);           /* before the dead letters and keys it borrows */
    if (c->dl_ready)
        dl_free(&c->dl);
    fr_free(&c->fr);
    kr_keyring_free(&c->keys);
    if (c->cf_loaded)
        cf_config_free(&c->cf);
    st_destroy(c->store);
    free(c->out_dir);
    free(c->out_file);
}

/* Takes the finished files and the counts from the pipeline. */
static void finish_counts(conv *c)
{
    pl_stats st;
    pl_get_stats(c->pl, &st);
    c->written = st.rows;
    c->rejected = st.rejected;
    free(c->done);
    c->done = pl_take_finished(c->pl, &c->n_done);
}

static void summary(const conv *c, int status)
{
    char rej[PATH_MAX + 32] = "", blank[48] = "";
    if (c->rejected > 0)
        snprintf(rej, sizeof rej, " (dead letters: %s)", c->dl.path);
    if (c->fr.blank > 0)
        snprintf(blank, sizeof blank, ", %" PRIu64 " blank lines skipped", c->fr.blank);
    if (status == 3) {
        fprintf(stderr, "parqd convert: %" PRIu64 " records in, %" PRIu64 " rejected%s%s; "
                "failed, no output file published\n", c->in, c->rejected, rej, blank);
        return;
    }
    char where[2 * PATH_MAX + 16] = "";
    if (c->stage_dir != NULL)
        snprintf(where, sizeof where, ": standard output");
    else if (c->n_done == 1)
        snprintf(where, sizeof where, ": %s", st_where(pl_finished_file((pl_finished *)&c->done[0])));
    else if (c->n_done > 1 && c->file_mode)
        snprintf(where, sizeof where, ": %s .. %s", st_where(pl_finished_file((pl_finished *)&c->done[0])),
                 st_where(pl_finished_file((pl_finished *)&c->done[c->n_done - 1])));
    else if (c->n_done > 1)
        snprintf(where, sizeof where, " under %s/", c->out_dir);
    fprintf(stderr, "parqd convert: %" PRIu64 " records in, %" PRIu64 " written, %" PRIu64
            " rejected%s, %zu file%s, %" PRIu64 " bytes%s%s\n", c->in, c->written, c->rejected,
            rej, c->n_done, c->n_done == 1 ? "" : "s", c->files_bytes, where, blank);
}

int cmd_convert(int argc, char **argv)
{
    args a = {0};
    conv c;
    memset(&c, 0, sizeof c);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage();
        return 0;
    }
    if (parse_args(argc, argv, &a) != 0) {
        usage();
        free(a.inputs);
        return 1;
    }
    if (a.n_inputs == 0)
        a.inputs[a.n_inputs++] = "-";
    int status = check_inputs(&a) != 0 ? 1 : setup(&c, &a);
    char *buf = status == 0 ? malloc(READ_CHUNK) : NULL;
    if (status == 0 && buf == NULL) {
        fprintf(stderr, "parqd convert: out of memory\n");
        status = 3;
    }
    if (status != 0) {
        teardown(&c);
        free(a.inputs);
        return status;
    }
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term, old_pipe, old_xfsz;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigaction(SIGPIPE, &ign, &old_pipe);  /* EPIPE is reported, not fatal */
    sigaction(SIGXFSZ, &ign, &old_xfsz);  /* EFBIG is reported, not fatal */

    for (size_t i = 0; i < a.n_inputs && !c.failed; i++)
        read_input(&c, a.inputs[i], buf);
    pq_err e = {0};
    if (!c.failed)
        submit_batch(&c);
    pl_close_files(c.pl);
    if (pl_drain(c.pl, &e) != 0)
        fail(&c, &e);
    finish_counts(&c);
    /* Always at least one file, even for empty input (-o FILE promised one). */
    if (!c.failed && c.n_done == 0)
        write_empty_file(&c);
    if (!c.failed && interrupted)
        fail(&c, &(pq_err){PQ_EIO, "interrupted"});
    /* Dead letters are durable before any output appears. */
    if (dl_close(&c.dl, &e) != 0)
        fail(&c, &e);
    if (!c.failed)
        commit_all(&c);
    if (!c.failed && c.stage_dir != NULL)
        stdout_copy(&c);
    if (c.failed) {
        fprintf(stderr, "parqd convert: %s\n", c.err.msg);
        summary(&c, 3);
        abort_all(&c, true);
        status = 3;
    } else {
        status = c.rejected > 0 ? 2 : 0;
        summary(&c, status);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    sigaction(SIGXFSZ, &old_xfsz, NULL);
    free(buf);
    teardown(&c);
    free(a.inputs);
    return status;
}
