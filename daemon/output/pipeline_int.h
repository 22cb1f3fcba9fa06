/* pipeline_int.h - the pipeline's state, shared by pipeline.c (pools,
 * failure, accounting), workers.c (worker threads, queues, life cycle),
 * shredstage.c (shred), stages.c (assemble, write), outfile.c (output
 * files) and autoshred.c (each file's own layout). Nothing outside the
 * pipeline includes it.
 *
 * Who calls whom: workers.c calls shredstage.c, stages.c, outfile.c,
 * autoshred.c and pipeline.c; shredstage.c calls none of them (only the
 * batch, the shredder and the key extractor); stages.c calls outfile.c,
 * autoshred.c and pipeline.c; outfile.c calls autoshred.c. No call goes
 * back up, and pipeline.c (the state's own operations) calls none of
 * them. */
#ifndef PQ_PIPELINE_INT_H
#define PQ_PIPELINE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "batch_int.h"
#include "counters.h"
#include "evtime.h"
#include "mutex.h"
#include "pathtpl.h"
#include "pipeline.h"
#include "rowgroup.h"
#include "shred.h"
#include "stream.h"
#include "vshred.h"

#define PL_WORKERS_MAX 64
#define PL_POOL_MAX 2            /* closed files' streams, converted row groups kept */
/* A released converted row group is kept for the next file's conversion
 * only while its buffers' room is at most this (a segment's, doubled). */
#define PL_FREE_CONV_BYTES (2 * PL_SEGMENT_BYTES)
/* Batches (with their row buffers) kept for reuse: as many as a daemon
 * at full speed has in flight (its 16 MiB input window of 1 MiB batches),
 * so backpressure's pause and resume do not free batches only to map and
 * fault in new ones (16 TCP clients, 200 MB: 120 batches allocated with 2
 * kept, none with 16; the process's page faults 64k -> 38k). What is kept
 * was in flight at once before, so the peak RSS does not grow. */
#define PL_FREE_BATCHES_MAX 16
/* The shredded rows of a batch are needed only from its shredding to its
 * assembly: a batch takes a row buffer from the pipeline's when a worker
 * takes it to shred, and gives it back when it is assembled, instead of
 * keeping its own. Only the batches between those two steps hold one
 * (1-3 mostly; up to 8 seen on 2 busy cores, a worker preempted in the
 * batch the assembler waits for), not every batch in the input window (a
 * daemon's 16, each row buffer about 2 MiB of fresh memory to fault in
 * once). As many are kept as were in use at once, up to the batches'
 * bound: what is kept was in flight at once before (peak RSS). */
#define PL_FREE_ROWS_MAX PL_FREE_BATCHES_MAX
#define PL_ENCODE_PARTS 4        /* workers that may share one segment's encoding */
/* A row group is assembled and encoded in segments: the assembler closes
 * a segment at PL_SEGMENT_BYTES of raw rows or PL_SEGMENT_ROWS rows (a
 * file's first segment is also the sample its automatic Variant shredding
 * decides from), and a worker feeds it to the file's stream (stream.h),
 * which keeps only compressed pages, open pages and dictionaries. */
#define PL_SEGMENT_BYTES ((size_t)2 << 20)
#define PL_SEGMENT_ROWS 8192
/* A file's first segment is larger: the sample its automatic shredding
 * decides from should see the file's kinds of records, not only the
 * first few thousand lines of one source. */
#define PL_SAMPLE_BYTES ((size_t)6 << 20)
#define PL_SAMPLE_ROWS 16384
/* Segments waiting for their encoder stop the reader past this (convert,
 * and the daemon's replay): one filling, one being fed, one or two
 * waiting (with one, the reader stopped too often and the default schema,
 * whose segments are converted first, ran 5-10% slower). */
#define PL_PENDING_MAX (2 * PL_SEGMENT_BYTES)
/* Segments' row buffers kept for reuse: as many as are in flight at once
 * (one filling, one being fed, PL_PENDING_MAX's two waiting). With 2 kept,
 * each pile-up behind a row group's finish made segments that were freed
 * when it drained and made again at the next, their buffers fresh memory
 * to fault in: parqd convert of the 200 MB bench inputs, page faults 23.0k
 * -> 21.7k typed, 27.3k -> 22.1k default schema, same peak RSS (what is
 * kept was in flight at once before). */
#define PL_SEGMENT_POOL_MAX 4
/* Smaller segments are fed by one worker: a split costs a job hand-over
 * per part (each worker encodes with its own scratch). */
#define PL_SPLIT_MIN_BYTES ((size_t)2 << 20)

/* Routed files (many, often small): a column chunk of one data page whose
 * page body and dictionary page are each fewer bytes is written
 * UNCOMPRESSED (pq_writer_opts.small_chunk_bytes). On 1,000 partitions of
 * the bench input 35,000 of the 55,000 chunks are that small; zstd made
 * them 13% larger, and below this the files are smallest. Unpartitioned
 * output keeps the codec on every chunk. */
#define PL_SMALL_CHUNK_BYTES 192
/* Routed files: zstd pages of fewer bytes compress at level -1, their
 * literals raw (pq_writer_opts.small_page_bytes). On 1,000 partitions of
 * the 200 MB bench input (29,000 zstd pages, 15.7 G instructions) pages
 * under 192 bytes came out smaller that way (level 1's Huffman table
 * outweighs what it saves) and 192-256 bytes 13% larger, for ~220 M
 * instructions fewer and 0.36% more bytes in all; 1 KiB would save
 * ~480 M for 1.3% (5.7% on a 20 MB prefix, files of 29 rows). */
#define PL_SMALL_PAGE_BYTES 256

#define PL_PERIOD_KEY_MAX 128    /* the directories' time fields, rendered */
#define PL_LAYOUTS_KEPT 4        /* automatic-shredding layouts kept for reuse */

/* Marker batches: requests ordered with the data (workers.c). */
enum { PL_MARK_NONE, PL_MARK_CLOSE, PL_MARK_FLUSH, PL_MARK_TICK };

/* What the assembler keeps of a file's open row group (partitioned
 * output: the current file's is in pl_pipeline, the others' here). */
typedef struct pl_asm {
    pq_rowgroup *cur_rg;
    bool cur_reserved;           /* cur_rg was reserved for the rows it is expected to reach */
    int64_t rg_started_us;
    bool rg_open;
    uint64_t rg_rows;
    size_t rg_fed;
    uint64_t last_rg_rows;
    size_t cur_bytes;            /* cur_rg's buffered bytes, taken when the file
                                    stopped being current (unchanged since) */
} pl_asm;

/* A published file's range of its key (partitioned output): replay skips
 * the records of that key in [first, end). */
typedef struct pl_range {
    uint64_t first, end;
    char *key;
} pl_range;

/* Where a routed file's store file is (outfile.c, lock held): the
 * assembler queues its creation, a worker with nothing more urgent
 * creates it; the writer creates it itself if it is still queued. */
enum { PL_OUT_QUEUED = 1, PL_OUT_OPENING, PL_OUT_DONE };

/* A Parquet file being written: opened by the assembler, appended to and
 * closed by the writer. */
typedef struct pl_file {
    pq_writer *w;
    st_file *out;                /* the store's file (routed: once out_state
                                    is PL_OUT_DONE; NULL if that failed) */
    pq_sink sink;                /* the writer's: st_sink(out), or (routed)
                                    outfile.c's, which creates out first */
    /* Routed files (outfile.c): out's creation (lock held), the queue of
     * files waiting for it, and the writer's side: its first few bytes
     * (the magic, written when the writer opens on the assembler) wait
     * in head until out exists; out_ready: the writer has seen it. */
    int out_state;               /* 0 (not routed), PL_OUT_* */
    int out_rc;
    pq_err out_err;
    struct pl_file *next_out;
    struct pl_pipeline *pipe;
    uint8_t head[8];
    size_t head_len;
    bool out_ready;
    char name[PT_PATH_MAX];      /* rendered, relative to out_dir */
    time_t first_time;           /* time of its first record (event time with
                                    output.time_from, else ingestion) */
    /* The seconds [lo, hi) whose records render its directories (the
     * template's time fields there; outfile.c), the key they render.
     * Routed files: [lo, hi) is the period of the key's time
     * (route_period_s; INT64_MAX: none), for the period close. */
    int64_t period_lo, period_hi;
    char period_key[PL_PERIOD_KEY_MAX];
    int64_t opened_us;           /* monotonic, for rotate.max_age */
    int64_t written_us;          /* monotonic, last rows moved in (routed: idle) */
    uint64_t first_seq, end_seq; /* lines [first, end) went into it */
    uint64_t rows;               /* assembled into it */
    int32_t ordinals;            /* row groups created for it */
    _Atomic uint64_t pending_bytes; /* uncompressed bytes of its row groups
                                    not yet appended: changed under the
                                    lock, read by the assembler without it */
    _Atomic uint64_t appended_bytes;
    /* every file not yet published, by first_seq (p->files) */
    struct pl_file *next_live, *prev_live;
    /* Partitioned output (p->route), the assembler's: the key (set
     * before the file is shared, then read-only), the hash chain, the
     * list by last write and the open row group while not current. */
    char *key;
    struct pl_file *hnext, *lru_prev, *lru_next;
    pl_asm a;
    /* Automatic Variant shredding (autoshred.c): the file's own layout,
     * decided from its first row group; spec NULL = the pipeline's. The
     * three are the layout's (shared by the files that decided alike). */
    struct pl_layout *layout;
    const sc_schema *spec;
    pq_schema *ps;
    const int *leaf_map;         /* pipeline leaf -> file leaf; -1: auto column */
    pq_writer_opts wopts;
    pq_encryption_opts enc;      /* wopts.encryption, with the shredded leaves' keys */
    pq_column_key *keys;
    char **key_paths;
    size_t n_keys;
    pq_rowgroup *conv[PL_POOL_MAX]; /* converted row groups for reuse (lock held) */
    size_t n_conv;
    /* The row group being encoded, segment by segment, in order: one job
     * of the file feeds it at a time (stream_busy, lock held). Made by the
     * worker that feeds the file's first segment (workers.c), not by the
     * assembler starting the file: at the end of a convert the assembler
     * starts hundreds of files at once, before the first closes, and
     * their streams could not be made in closed files' (the pool). */
    pq_stream *stream;
    bool started;                /* layout decided, writer open (assembler's) */
    bool closing;                /* its last row group is being closed (assembler's) */
    bool stream_busy;
    size_t stream_held;          /* its bytes, counted in p->stream_mem */
} pl_file;

typedef enum pl_job_kind { PL_JOB_ROWGROUP, PL_JOB_CLOSE } pl_job_kind;

/* One segment of a row group to encode (the last one finishes the row
 * group into enc, which is then appended), or the close of a file.
 *
 * A large segment is fed by several workers at once (workers.c): the
 * first to take it converts it (auto-shredded files) and cuts its leaves
 * into n_parts ranges by buffered bytes; part k feeds leaves
 * [cut[k], cut[k+1]) to the file's stream (with its worker's scratch)
 * while the job stays at the head of the encode queue for the
 * next part's taker; the last part to finish counts the rows and, for
 * the row group's last segment, finishes the stream into enc. */
typedef struct pl_job {
    pl_job_kind kind;
    pl_file *file;
    pq_rowgroup *rg;             /* until encoded */
    pq_rowgroup *enc_rg;         /* what is encoded: rg or its conversion */
    pq_encoded *enc;
    size_t cut[PL_ENCODE_PARTS + 1];
    size_t n_parts, next_part, parts_done;
    int part_rc;                 /* the first failing part's code and error */
    pq_err part_err;
    int32_t ordinal;
    bool first, last;            /* the row group's first / last segment */
    bool closes;                 /* the file's last: its close follows, so
                                    its stream goes back to the pool once
                                    finished (finish_parts) */
    bool sample;                 /* the file's first segment, PL_SAMPLE_* large:
                                    its buffers are freed, not pooled */
    bool converting, converted;  /* converted ahead, while the file's previous
                                    segment was fed (workers.c) */
    uint64_t rows;
    size_t mem;                  /* counted in pending_rows_mem: raw rows until
                                    encoded, then the encoded row group's bytes */
    bool ready;                  /* encoded, or a close */
    struct pl_job *next;         /* write order */
    struct pl_job *next_encode;
} pl_job;

typedef struct pl_worker {
    struct pl_pipeline *p;
    pthread_t thread;
    bool started;
    sh_shredder *sh;
    vs_state vs;                 /* converting row groups of auto-shredded files */
    pq_encoded *scratch;         /* encode buffers and compressors */
    /* partitioned output: the lines' keys, and grouping a batch by key */
    struct pk_extractor *pk;
    pq_buf ktab;                 /* uint32 slots: group + 1, 0 empty */
    pq_buf kgroups;              /* pl_kgroup[] */
    pq_buf korder;               /* uint32 line indices, grouped */
} pl_worker;

struct pl_pipeline {
    pl_config cfg;
    pl_callbacks cb;
    pq_writer_opts wopts;
    char *out_dir, *tmpl, *file_name, *host;
    pt_template tpl;             /* tmpl parsed (not with file_name) */
    int64_t period_s;            /* pt_dir_period: 0, the directories have no time */
    int64_t route_period_s;      /* the same, for routed files (their period close) */
    et_source ts;                /* output.time_from (evtime.h); ts.set false: none */
    /* Partitioned output: output.path has {{FIELD}}s, so records are
     * routed by their keys (pathkey.h) to many open files (stages.c). The
     * open files (assembler only): a hash by key and a list by last write,
     * most recent first. */
    bool route;
    pl_file **htab;
    size_t hcap, n_open;
    pl_file *lru_head, *lru_tail;
    pl_file *out_head, *out_tail; /* routed files to create (lock held) */
    bool creating;               /* a worker is creating one of them */
    /* Sums over the open files but the current one (assembler): their
     * a.cur_bytes and a.rg_fed, so that the bytes of every open row group
     * are known without visiting each file's columns after each batch
     * (1,000 files x 55 leaves, twice a batch, mostly cache misses). */
    size_t idle_cur_bytes, idle_fed_bytes;
    int64_t now_us;              /* the batch being routed: when (assembler) */
    /* Published ranges above the watermark, and the seq below which every
     * reject is in the dead letters (lock held: the writer adds, the
     * assembler reads once per batch). */
    pl_range *skip;
    size_t n_skip, cap_skip;
    uint64_t skip_max_end;
    uint64_t dl_done;
    uint64_t assembled;          /* lock held: lines < this are assembled */
    st_store *store, *own_store; /* where files go; own_store: made here */
    long pid;
    pq_schema *ps;
    size_t *auto_cols;           /* columns with `shred: auto` (autoshred.c) */
    size_t n_auto;
    /* The last layouts decided (assembler; each holds a reference): a file
     * that decides the same trees shares one (autoshred.c). */
    struct pl_layout *layouts[PL_LAYOUTS_KEPT];
    size_t next_layout;
    pl_worker *workers;
    size_t n_workers;
    size_t split_min_bytes;      /* row groups this large share their encoding */

    dm_mutex mu;
    pthread_cond_t work_cv;      /* workers wait for work */
    pthread_cond_t done_cv;      /* owners wait for progress / drain */
    dm_mutex dl_mu;              /* the dead-letter file */
    bool stopping;
    size_t busy;                 /* shreds and encodes in progress */
    bool assembling, writing;    /* the two ordered stages' tokens */

    /* batches: every submitted one in order; the unshredded ones in FIFO */
    pl_batch *order_head, *order_tail;
    pl_batch *shred_head, *shred_tail;
    uint64_t queued_batches;
    uint64_t expect_seq;         /* first seq of the next batch to submit */
    /* jobs: write order; the unencoded ones in FIFO */
    pl_job *job_head, *job_tail;
    pl_job *encode_head, *encode_tail;
    /* assembly state (assembly token) */
    pl_file *cur_file;
    pq_rowgroup *cur_rg;
    bool cur_reserved;           /* partitioned: see route_reserve (stages.c) */
    int64_t rg_started_us;       /* monotonic */
    bool rg_open;                /* a row group has segments queued */
    uint64_t rg_rows;            /* rows of the row group in queued segments */
    size_t rg_fed;               /* their raw bytes */
    uint64_t last_rg_rows;       /* rows of the last row group closed (assembler) */
    uint64_t next_seq;           /* first line not yet in a file or the dead letters */
    _Atomic uint64_t file_seq;   /* {seq} of the last file named */
    /* Live files (lock held), in first_seq order: the watermark is the
     * first's, and a file leaves in O(1), for cleanup and publishing. */
    pl_file *files, *files_tail;
    /* published watermark */
    uint64_t committed;

    /* buffered bytes: input of unassembled batches + row buffers not yet
     * appended (lock held; mirrored in buffered_atomic for lock-free reads) */
    size_t buffered_input, pending_rows_mem, cur_rg_mem, buffered;
    size_t stream_mem;           /* what the files' streams hold */
    _Atomic size_t buffered_atomic;
    _Atomic size_t input_atomic;     /* buffered_input, likewise */

    bool failed, cleanup_pending, fail_reported;
    pq_err fail_err;

    pl_stats stats;
    pl_finished *finished;
    size_t n_finished, cap_finished;

    /* pools */
    pl_batch *free_batches;
    size_t n_free_batches;
    pq_rowgroup *free_rows[PL_FREE_ROWS_MAX]; /* batches' row buffers */
    size_t n_free_rows;
    pq_rowgroup *pool[PL_SEGMENT_POOL_MAX];
    size_t n_pool;
    pl_job *free_jobs;
    /* the last written row group's pieces' memory (pq_encoded_move_pieces),
     * until a file's stream adopts it (pl_job_pieces); NULL until one is
     * kept */
    pq_encoded *spare_pieces;
    /* closed files' streams, released (pq_stream_release: the array of
     * column writers and their buffers' memory kept for the next file's
     * stream) */
    pq_stream *free_streams[PL_POOL_MAX];
    size_t n_free_streams;
    /* idle files' converted row groups, released (pq_rowgroup_release:
     * buffers kept, no schema), each at most PL_FREE_CONV_BYTES */
    pq_rowgroup *free_conv[PL_POOL_MAX];
    size_t n_free_conv;
};

/* Monotonic microseconds, for row-group and file ages and busy time. */
static inline int64_t pl_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* pipeline.c (lock held unless said) */
pq_rowgroup *pl_rowgroup_get(pl_pipeline *p, pq_err *err);
void pl_rowgroup_put(pl_pipeline *p, pq_rowgroup *rg);
void pl_batch_put(pl_pipeline *p, pl_batch *b);
/* A batch taken to be shredded gets a kept row buffer, if there is one
 * (else pl_shred_batch makes it); pl_batch_put takes it back. */
void pl_batch_take_rows(pl_pipeline *p, pl_batch *b);
pl_job *pl_job_get(pl_pipeline *p, pq_err *err);
void pl_job_put(pl_pipeline *p, pl_job *j);
/* Lock not held (taken here): before j's segment is fed, its file's
 * stream adopts the memory of the last written row group's pieces. */
void pl_job_pieces(pl_pipeline *p, pl_job *j);
/* Lock not held (taken here): frees the pieces' memory kept, if any. */
void pl_pieces_drop(pl_pipeline *p);
/* Lock not held (they take it): f's stream, made in a released one's
 * array when one is kept (the worker feeding f's first segment); a closed file's
 * stream, released and kept, or freed (the writer). */
int pl_stream_new(pl_pipeline *p, pl_file *f, pq_err *err);
void pl_stream_put(pl_pipeline *p, pq_stream *s);
/* Lock not held: an idle file's converted row group, released and kept
 * (pl_auto_convert makes the next file's in it), or freed. */
void pl_conv_put(pl_pipeline *p, pq_rowgroup *rg);
void pl_fail(pl_pipeline *p, const pq_err *e);
void pl_update_buffered(pl_pipeline *p);
void pl_pools_free(pl_pipeline *p);

/* Assembler, debug builds: asserts that the idle sums (idle_cur_bytes,
 * idle_fed_bytes) are what visiting every open file but the current one
 * gives; nothing otherwise. */
void pl_check_idle_sums(const pl_pipeline *p);

/* A partition key's hash (FNV-1a): the batch's key groups (shredstage.c)
 * and the open files by key (stages.c). */
static inline uint64_t pl_key_hash(const char *k)
{
    uint64_t h = 1469598103934665603u;
    for (; *k; k++)
        h = (h ^ (uint8_t)*k) * 1099511628211u;
    return h;
}

/* shredstage.c */
/* The metric label (`reason`) of a shredder's reject code. */
dm_reject pl_reject_reason(sh_reject why);
/* No lock: shreds b with the worker's shredder. */
void pl_shred_batch(pl_pipeline *p, pl_worker *wk, pl_batch *b);

/* stages.c */
/* Lock held on entry and exit; takes the assembly token and assembles
 * every batch that is ready, in order. */
void pl_assemble_run(pl_pipeline *p);
/* Lock held on entry and exit; takes the write token and writes every job
 * that is ready, in order. */
void pl_write_run(pl_pipeline *p);

/* autoshred.c */
/* pl_new: finds the `shred: auto` columns. */
int pl_auto_init(pl_pipeline *p, pq_err *err);
/* Assembler: decides the file's layout from its first row group (NULL: the
 * file has no rows) and opens its writer. */
int pl_file_start(pl_pipeline *p, pl_file *f, const pq_rowgroup *first, pq_err *err);
/* Encoder (no lock): the row group to encode for j: j->rg itself, or j->rg
 * converted into a row group of the file's layout (put back with
 * pl_auto_put). */
int pl_auto_convert(pl_pipeline *p, pl_worker *wk, pl_job *j, pq_rowgroup **out, pq_err *err);
void pl_auto_put(pl_pipeline *p, pl_file *f, pq_rowgroup *rg);
/* Frees the file's layout (its writer is already destroyed). */
void pl_file_auto_free(pl_file *f);
/* pl_destroy: the layouts kept for reuse. */
void pl_auto_free(pl_pipeline *p);

/* outfile.c */
/* Assembler: opens the next file for lines from first_seq on; key: its
 * partition key (partitioned output), else NULL. */
int pl_file_open(pl_pipeline *p, int64_t first_ingest_us, uint64_t first_seq, const char *key,
                 pl_file **out, pq_err *err);
/* Lock held: adds a published range to the skip list, drops those at or
 * below the watermark. */
int pl_skip_add(pl_pipeline *p, const char *key, uint64_t first, uint64_t end,
                uint64_t watermark);
/* Writer: footer, fsync, then publish (or hold). Returns 0 or the error;
 * the file is then freed (published) or left for cleanup (failed). */
int pl_file_close(pl_pipeline *p, pl_file *f, pq_err *err);
/* Assembler: whether a record of ingestion second t renders f's
 * directories (when t is past f's period but renders the same ones, a
 * coarser field, f's period moves on to t's). */
bool pl_file_takes(const pl_pipeline *p, pl_file *f, int64_t t);
/* A routed file's close by age at a tick (wall clock now_s, monotonic
 * now_us): once its period (the directories' time fields) has passed,
 * when it has been idle for rotate.max_age (late records keep it open
 * while they come; evtime.h), DM_CLOSE_PERIOD; before, or without time
 * directories, rotate.max_age after it opened, DM_CLOSE_AGE;
 * DM_CLOSE_COUNT: not due. */
dm_close pl_file_age_due(const pl_pipeline *p, const pl_file *f, int64_t now_us, int64_t now_s);
/* Lock held: the next routed file to create (taken off the queue), or
 * NULL. A worker then creates it with pl_file_create (no lock). */
pl_file *pl_file_create_next(pl_pipeline *p);
void pl_file_create(pl_pipeline *p, pl_file *f);
/* Removes the temporary file and frees f. */
void pl_file_abort(pl_file *f);
/* Appends one record to the dead letters (dl_mu held). */
int pl_dead_letter(pl_pipeline *p, const dl_record *r, pq_err *err);

#endif
