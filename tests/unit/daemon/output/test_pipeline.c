/* test_pipeline.c - the shared write pipeline (daemon/output/pipeline.c,
 * workers.c, stages.c, outfile.c): rows keep input order across workers
 * and files, row groups and files close exactly at their row limits,
 * rejects reach the dead letters, published files carry contiguous spool
 * ranges, a failure removes every unpublished file and resumes at the
 * watermark, and routed files (one per key) are created off the assembly
 * path but fail the pipeline as before when they cannot be.
 *
 * Files are read back with the test-side reader (tests/support/pqfile):
 * row counts from the footer, and the single int64 column's values
 * through its chunk statistics per row group (min/max of consecutive ids
 * prove the order without a full decoder). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "colspec.h"
#include "config.h"
#include "counters.h"
#include "decode.h"
#include "pipeline.h"
#include "pqfile.h"
#include "tmpdir.h"

typedef struct fixture {
    char dir[64];
    cf_config cf;
    pq_writer_opts wopts;
    dl_file dl;
    /* callback records */
    char published[64][512];
    uint64_t ends[64];
    size_t n_published;
    int fail_intent_at;          /* fail the Nth intent (1-based); 0 never */
    int intents;
    uint64_t resume;
    int failures;
    const char *tmpl;            /* output path; NULL: "{seq}.parquet" */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test_pipeline.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    pq_err e = {0};
    const char *yaml = "columns:\n  - {name: i, type: int64, required: true}\n"
                       "  - {name: s, type: string}\n";
    char path[128];
    snprintf(path, sizeof path, "%s/schema.yaml", f->dir);
    FILE *fp = fopen(path, "w");
    fputs(yaml, fp);
    fclose(fp);
    assert_int_equal(cf_config_default(&f->cf, &e), 0);
    assert_int_equal(cf_config_use_schema_file(&f->cf, path, &e), 0);
    cf_writer_opts(&f->cf, &f->wopts);
    snprintf(path, sizeof path, "%s/rejects.ndjson", f->dir);
    assert_int_equal(dl_init(&f->dl, path, DL_SYNC_CLOSE, &e), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dl_free(&f->dl);
    cf_config_free(&f->cf);
    pqt_rm_rf(f->dir);
    free(f);
    return 0;
}

static int on_intent(void *user, const char *path, uint64_t end, pq_err *err)
{
    fixture *f = user;
    (void)path;
    (void)end;
    if (++f->intents == f->fail_intent_at)
        return pq_err_set(err, PQ_EIO, "injected: the spool could not record the intent");
    return 0;
}

static void on_published(void *user, const char *path, uint64_t end, uint64_t rows,
                         uint64_t bytes)
{
    fixture *f = user;
    (void)rows;
    (void)bytes;
    snprintf(f->published[f->n_published], sizeof f->published[0], "%s", path);
    f->ends[f->n_published++] = end;
}

static void on_failure(void *user, uint64_t resume, const pq_err *err)
{
    fixture *f = user;
    (void)err;
    f->resume = resume;
    f->failures++;
}

static pl_pipeline *start(fixture *f, pl_publish mode, size_t workers, uint64_t rg_rows,
                          uint64_t file_rows, uint64_t first_seq)
{
    pq_err e = {0};
    char out[96];
    snprintf(out, sizeof out, "%s/out", f->dir);
    pl_config pc = {.schema = f->cf.schema, .writer = &f->wopts, .out_dir = out,
                    .path_template = f->tmpl ? f->tmpl : "{seq}.parquet",
                    .row_group = {.max_rows = rg_rows},
                    .rotate = {.max_rows = file_rows}, .publish = mode,
                    .dead_letters = &f->dl, .workers = workers, .first_seq = first_seq,
                    .host = "test", .max_line_bytes = 1 << 20};
    pl_callbacks cb = {.user = f, .on_publish_intent = on_intent, .on_published = on_published,
                       .on_failure = on_failure};
    pl_pipeline *p = NULL;
    if (pl_new(&p, &pc, &cb, &e) != 0)
        fail_msg("pl_new: %s", e.msg);
    return p;
}

/* Submits lines with ids [from, to) in batches of seeded random sizes;
 * every id divisible by bad_every (if > 0) is not JSON. */
static void submit_ids(pl_pipeline *p, pqt_rng *rng, uint64_t from, uint64_t to,
                       uint64_t bad_every)
{
    uint64_t id = from;
    while (id < to) {
        pl_batch *b = pl_batch_get(p);
        assert_non_null(b);
        pl_batch_reset(b, id);
        uint64_t n = 1 + pqt_rng_below(rng, 700);
        for (uint64_t k = 0; k < n && id < to; k++, id++) {
            char line[96];
            int len = bad_every && id % bad_every == 0
                          ? snprintf(line, sizeof line, "{\"i\":%" PRIu64 ",", id)
                          : snprintf(line, sizeof line, "{\"i\":%" PRIu64 ",\"s\":\"v%" PRIu64
                                     "\"}", id, id);
            assert_int_equal(pl_batch_add(b, "test:src", line, (size_t)len, (uint64_t)len,
                                          false, 1700000000000000, id), 0);
        }
        pl_submit(p, b);
    }
}

/* Row counts and the i column's min/max of each row group of one file. */
typedef struct rg_info {
    int64_t rows, min, max;
} rg_info;

static size_t read_row_groups(const char *path, rg_info *out, size_t cap)
{
    pqf_file pf;
    pq_err e = {0};
    if (pqf_open(&pf, path, &e) != 0)
        fail_msg("%s: %s", path, e.msg);
    size_t n = pqf_num_row_groups(&pf);
    assert_true(n <= cap);
    for (size_t g = 0; g < n; g++) {
        pqf_chunk ch;
        assert_int_equal(pqf_chunk_get(&pf, g, 0, &ch, &e), 0);
        const tr_node *st = tr_field(ch.md, 12);          /* ColumnMetaData.statistics */
        size_t len = 0;
        const uint8_t *mn = tr_bin(tr_field(st, 6), &len); /* min_value */
        assert_int_equal(len, 8);
        memcpy(&out[g].min, mn, 8);
        const uint8_t *mx = tr_bin(tr_field(st, 5), &len); /* max_value */
        assert_int_equal(len, 8);
        memcpy(&out[g].max, mx, 8);
        out[g].rows = tr_int(tr_field(pqf_row_group(&pf, g), 3));
    }
    pqf_close(&pf);
    return n;
}

static void finished_path(const fixture *f, const pl_finished *d, char *out, size_t cap)
{
    snprintf(out, cap, "%s", d->file.tmp_path);
    (void)f;
}

/* 20,000 rows over 4 workers: files of exactly 3,000 rows, row groups of
 * exactly 777 (the last of each file shorter), ids ascending throughout. */
static void test_pipeline_rows_keep_input_order_across_workers_and_files(void **state)
{
    fixture *f = *state;
    pqt_rng rng;
    uint64_t seed = pqt_seed();
    rng.state = seed;
    pl_pipeline *p = start(f, PL_PUBLISH_HOLD, 4, 777, 3000, 1);
    submit_ids(p, &rng, 1, 20001, 0);
    pl_close_files(p);
    pq_err e = {0};
    assert_int_equal(pl_drain(p, &e), 0);
    size_t n = 0;
    pl_finished *done = pl_take_finished(p, &n);
    assert_int_equal(n, 7);      /* 6 x 3000 + 2000 */
    int64_t next = 1;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        rg_info rg[16];
        finished_path(f, &done[i], path, sizeof path);
        size_t groups = read_row_groups(path, rg, 16);
        int64_t in_file = 0;
        for (size_t g = 0; g < groups; g++) {
            if (rg[g].min != next || rg[g].max != next + rg[g].rows - 1)
                fail_msg("seed %" PRIu64 ": file %zu group %zu holds %" PRId64 "..%" PRId64
                         " (%" PRId64 " rows), expected to start at %" PRId64, seed, i, g,
                         rg[g].min, rg[g].max, rg[g].rows, next);
            assert_true(rg[g].rows <= 777);
            if (g + 1 < groups)
                assert_int_equal(rg[g].rows, 777);
            next += rg[g].rows;
            in_file += rg[g].rows;
        }
        assert_int_equal(in_file, i + 1 < n ? 3000 : 2000);
        assert_int_equal(done[i].rows, in_file);
        fs_abort(&done[i].file, NULL);
        fs_free(&done[i].file);
    }
    assert_int_equal(next, 20001);
    free(done);
    pl_destroy(p);
}

/* One worker or three: the same bytes. */
static void test_pipeline_worker_count_does_not_change_the_file(void **state)
{
    fixture *f = *state;
    uint8_t *bytes[2] = {NULL, NULL};
    size_t sizes[2] = {0, 0};
    for (int run = 0; run < 2; run++) {
        pqt_rng rng;
        rng.state = 42;
        pl_pipeline *p = start(f, PL_PUBLISH_HOLD, run == 0 ? 1 : 3, 1000, 0, 1);
        submit_ids(p, &rng, 1, 12001, 0);
        pl_close_files(p);
        assert_int_equal(pl_drain(p, NULL), 0);
        size_t n = 0;
        pl_finished *done = pl_take_finished(p, &n);
        assert_int_equal(n, 1);
        FILE *fp = fopen(done[0].file.tmp_path, "rb");
        assert_non_null(fp);
        fseek(fp, 0, SEEK_END);
        sizes[run] = (size_t)ftell(fp);
        rewind(fp);
        bytes[run] = malloc(sizes[run]);
        assert_int_equal(fread(bytes[run], 1, sizes[run], fp), sizes[run]);
        fclose(fp);
        fs_abort(&done[0].file, NULL);
        fs_free(&done[0].file);
        free(done);
        pl_destroy(p);
    }
    assert_int_equal(sizes[0], sizes[1]);
    assert_memory_equal(bytes[0], bytes[1], sizes[0]);
    free(bytes[0]);
    free(bytes[1]);
}

static size_t count_lines(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return 0;
    size_t n = 0;
    int c;
    while ((c = fgetc(fp)) != EOF)
        n += c == '\n';
    fclose(fp);
    return n;
}

/* Published one by one: intent before each rename, ends contiguous and
 * covering every line (rejected ones included), rejects in the dead
 * letters with their source and line number. */
static void test_pipeline_publishes_in_order_with_contiguous_ranges(void **state)
{
    fixture *f = *state;
    pqt_rng rng;
    rng.state = pqt_seed();
    pl_pipeline *p = start(f, PL_PUBLISH_EACH, 2, 500, 2000, 1);
    uint64_t closed[DM_CLOSE_COUNT];
    for (int r = 0; r < DM_CLOSE_COUNT; r++)
        closed[r] = dm_get(&dm_counters_global.files_closed[r]);
    submit_ids(p, &rng, 1, 9001, 100);          /* 90 bad lines */
    pl_close_files(p);
    assert_int_equal(pl_drain(p, NULL), 0);
    pl_stats st;
    pl_get_stats(p, &st);
    assert_int_equal(st.rows, 8910);
    assert_int_equal(st.rejected, 90);
    assert_int_equal(f->n_published, 5);        /* 4 x 2000 + 910 */
    /* /metrics: four closed by rotate.max_rows, the last by the close. */
    assert_int_equal(dm_get(&dm_counters_global.files_closed[DM_CLOSE_ROWS]) - closed[DM_CLOSE_ROWS], 4);
    assert_int_equal(dm_get(&dm_counters_global.files_closed[DM_CLOSE_SHUTDOWN]) -
                     closed[DM_CLOSE_SHUTDOWN], 1);
    assert_int_equal(dm_get(&dm_counters_global.files_closed[DM_CLOSE_SIZE]) - closed[DM_CLOSE_SIZE], 0);
    assert_int_equal(dm_get(&dm_counters_global.files_closed[DM_CLOSE_AGE]) - closed[DM_CLOSE_AGE], 0);
    assert_int_equal(f->intents, 5);
    for (size_t i = 0; i + 1 < f->n_published; i++)
        assert_true(f->ends[i] < f->ends[i + 1]);
    assert_int_equal(f->ends[f->n_published - 1], 9001);
    for (size_t i = 0; i < f->n_published; i++)
        assert_int_equal(access(f->published[i], F_OK), 0);
    pl_destroy(p);
    assert_int_equal(dl_close(&f->dl, NULL), 0);
    assert_int_equal(count_lines(f->dl.path), 90);
    char buf[512];
    FILE *fp = fopen(f->dl.path, "r");
    assert_non_null(fgets(buf, sizeof buf, fp));
    fclose(fp);
    assert_non_null(strstr(buf, "\"source\":\"test:src:100\""));
    assert_non_null(strstr(buf, "invalid JSON"));
}

static size_t files_in(const char *dir, bool temp)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.' ? !temp : strstr(e->d_name, ".tmp") != NULL && temp;
    closedir(d);
    return n;
}

/* The third publication fails: the two published files stay, nothing
 * else is left on disk, on_failure names the watermark, batches are
 * dropped until pl_resume, and resubmitting from the watermark lands
 * every line exactly once. */
static void test_pipeline_failure_resumes_at_the_watermark(void **state)
{
    fixture *f = *state;
    pqt_rng rng;
    rng.state = pqt_seed();
    char out[96];
    snprintf(out, sizeof out, "%s/out", f->dir);
    f->fail_intent_at = 3;
    pl_pipeline *p = start(f, PL_PUBLISH_EACH, 2, 400, 1000, 1);
    submit_ids(p, &rng, 1, 5001, 0);
    pl_close_files(p);
    pq_err e = {0};
    assert_int_not_equal(pl_drain(p, &e), 0);
    assert_non_null(strstr(e.msg, "injected"));
    assert_int_equal(f->failures, 1);
    assert_int_equal(f->resume, 2001);
    assert_int_equal(f->n_published, 2);
    assert_int_equal(files_in(out, false), 2);
    assert_int_equal(files_in(out, true), 0);
    assert_true(pl_failed(p));
    submit_ids(p, &rng, 2001, 2100, 0);         /* dropped while failed */
    assert_int_equal(pl_buffered_bytes(p), 0);
    pl_resume(p);
    submit_ids(p, &rng, f->resume, 5001, 0);
    pl_close_files(p);
    assert_int_equal(pl_drain(p, &e), 0);
    assert_int_equal(f->n_published, 5);
    assert_int_equal(f->ends[4], 5001);
    assert_int_equal(files_in(out, false), 5);
    int64_t rows = 0;
    for (size_t i = 0; i < f->n_published; i++) {
        rg_info rg[8];
        size_t g = read_row_groups(f->published[i], rg, 8);
        for (size_t k = 0; k < g; k++)
            rows += rg[k].rows;
    }
    assert_int_equal(rows, 5000);
    pl_destroy(p);
}

/* The drained pipeline finished exactly one file of `rows` rows: it is
 * removed, and the pipeline destroyed. */
static void expect_one_file_and_destroy(pl_pipeline *p, uint64_t rows)
{
    size_t n = 0;
    pl_finished *done = pl_take_finished(p, &n);
    assert_int_equal(n, 1);
    assert_int_equal(done[0].rows, rows);
    fs_abort(&done[0].file, NULL);
    fs_free(&done[0].file);
    free(done);
    pl_destroy(p);
}

/* Buffered bytes count what is in flight; pl_wait_below returns once the
 * batches are assembled even though the row group they went into is not
 * full (it waits for more lines: counting it would wait forever), and
 * everything drains to zero once written. */
static void test_pipeline_buffered_bytes_drain_to_zero(void **state)
{
    fixture *f = *state;
    pqt_rng rng;
    rng.state = 7;
    pl_pipeline *p = start(f, PL_PUBLISH_HOLD, 2, 0, 0, 1);
    submit_ids(p, &rng, 1, 3001, 0);
    assert_true(pl_buffered_bytes(p) > 0);
    pl_wait_below(p, 0, 0);
    assert_true(pl_buffered_bytes(p) > 0);      /* the open row group */
    pl_close_files(p);
    assert_int_equal(pl_drain(p, NULL), 0);
    assert_int_equal(pl_buffered_bytes(p), 0);
    expect_one_file_and_destroy(p, 3000);
}

/* The /metrics `reason` label of a reject comes from the shredder's code
 * (sh_reject) mapped once, never from the message: each class of bad line
 * lands under its label, and so would with any wording of its message. */
static void test_pipeline_reject_reasons_are_counted_by_code(void **state)
{
    fixture *f = *state;
    static const struct { const char *line; bool oversized; dm_reject label; } lines[] = {
        {"", false, DM_REJECT_INVALID_JSON},
        {"{\"i\":1,", false, DM_REJECT_INVALID_JSON},
        {"[1,2]", false, DM_REJECT_INVALID_JSON},
        {"{\"s\":\"no i\"}", false, DM_REJECT_SCHEMA},
        {"{\"i\":\"one\"}", false, DM_REJECT_SCHEMA},
        {"{\"i\":1,\"s\":[1]}", false, DM_REJECT_SCHEMA},
        {"{\"i\":2,\"s\":\"cut", true, DM_REJECT_TOO_LONG},
        {"{\"i\":3,\"s\":\"fine\"}", false, DM_REJECT_COUNT},   /* a row */
    };
    const size_t n = sizeof lines / sizeof lines[0];
    uint64_t before[DM_REJECT_COUNT], want[DM_REJECT_COUNT] = {0};
    for (int r = 0; r < DM_REJECT_COUNT; r++)
        before[r] = dm_get(&dm_counters_global.records_rejected[r]);
    pl_pipeline *p = start(f, PL_PUBLISH_HOLD, 2, 0, 0, 1);
    pl_batch *b = pl_batch_get(p);
    pl_batch_reset(b, 1);
    for (size_t i = 0; i < n; i++) {
        const size_t len = strlen(lines[i].line);
        assert_int_equal(pl_batch_add(b, "test:src", lines[i].line, len,
                                      lines[i].oversized ? (uint64_t)len << 30 : len,
                                      lines[i].oversized, 1700000000000000, i + 1), 0);
        if (lines[i].label != DM_REJECT_COUNT)
            want[lines[i].label]++;
    }
    pl_submit(p, b);
    pl_close_files(p);
    assert_int_equal(pl_drain(p, NULL), 0);
    for (int r = 0; r < DM_REJECT_COUNT; r++)
        assert_int_equal(dm_get(&dm_counters_global.records_rejected[r]) - before[r], want[r]);
    expect_one_file_and_destroy(p, 1);
}

/* output.path's directories have a minute field: a file holds only
 * records whose ingestion time renders its minute, whatever the batches;
 * the seconds in the file name only stamp it. 3000 lines 50 ms apart from
 * 22:13:20 UTC span minutes 13, 14 and 15. */
static void test_pipeline_files_split_where_the_directories_time_changes(void **state)
{
    fixture *f = *state;
    f->tmpl = "m=%M/%S-{seq}.parquet";
    pqt_rng rng;
    rng.state = pqt_seed();
    uint64_t before = dm_get(&dm_counters_global.files_closed[DM_CLOSE_PERIOD]);
    pl_pipeline *p = start(f, PL_PUBLISH_EACH, 2, 0, 0, 1);
    for (uint64_t id = 1; id <= 3000;) {
        pl_batch *b = pl_batch_get(p);
        assert_non_null(b);
        pl_batch_reset(b, id);
        uint64_t n = 1 + pqt_rng_below(&rng, 700);
        for (uint64_t k = 0; k < n && id <= 3000; k++, id++) {
            char line[64];
            int len = snprintf(line, sizeof line, "{\"i\":%" PRIu64 "}", id);
            int64_t t_us = 1700000000000000 + (int64_t)id * 50000;
            assert_int_equal(pl_batch_add(b, "test:src", line, (size_t)len, (uint64_t)len,
                                          false, t_us, id), 0);
        }
        pl_submit(p, b);
    }
    pl_close_files(p);
    assert_int_equal(pl_drain(p, NULL), 0);
    pl_destroy(p);
    assert_int_equal(f->n_published, 3);
    assert_int_equal(f->ends[0], 800);           /* 22:14:00.000 is line 800 */
    assert_int_equal(f->ends[1], 2000);
    assert_int_equal(f->ends[2], 3001);
    assert_non_null(strstr(f->published[0], "/m=13/20-000001.parquet"));
    assert_non_null(strstr(f->published[1], "/m=14/00-000002.parquet"));
    assert_non_null(strstr(f->published[2], "/m=15/00-000003.parquet"));
    assert_int_equal(dm_get(&dm_counters_global.files_closed[DM_CLOSE_PERIOD]) - before, 2);
    rg_info rg[8];
    assert_int_equal(read_row_groups(f->published[1], rg, 8), 1);
    assert_int_equal(rg[0].rows, 1200);
    assert_int_equal(rg[0].min, 800);
    assert_int_equal(rg[0].max, 1999);
}

/* ---- partitioned output ------------------------------------------------------ */

typedef struct range_rec {
    char key[64];
    uint64_t first, end, watermark, rows;
} range_rec;

static range_rec ranges[256];
static size_t n_ranges;

static void on_published_range(void *user, const char *path, const char *key, uint64_t first,
                               uint64_t end, uint64_t watermark, uint64_t dl_done, uint64_t rows,
                               uint64_t bytes)
{
    (void)user;
    (void)bytes;
    (void)dl_done;
    assert_true(n_ranges < 256);
    assert_non_null(strstr(path, key[0] == 'k' ? "/s=k" : "/s=")); /* under its own value */
    range_rec *r = &ranges[n_ranges++];
    snprintf(r->key, sizeof r->key, "%s", key);
    r->first = first;
    r->end = end;
    r->watermark = watermark;
    r->rows = rows;
}

/* Lines in runs of 10 over 3 values with max_open_files 2: a third value
 * in a batch closes the least recently written file. Each published file is one
 * key's range: ranges of a key do not overlap, the watermark never passes
 * a file still to be published nor goes back, and the rows add up. */
static void test_pipeline_routes_by_field_with_max_open_files(void **state)
{
    fixture *f = *state;
    pq_err e = {0};
    char out[96];
    snprintf(out, sizeof out, "%s/out", f->dir);
    pl_config pc = {.schema = f->cf.schema, .writer = &f->wopts, .out_dir = out,
                    .path_template = "s={{s}}/{seq}.parquet", .publish = PL_PUBLISH_EACH,
                    .dead_letters = &f->dl, .workers = 2, .first_seq = 1, .host = "test",
                    .max_line_bytes = 1 << 20, .max_open_files = 2};
    pl_callbacks cb = {.user = f, .on_published_range = on_published_range,
                       .on_failure = on_failure};
    n_ranges = 0;
    uint64_t before = dm_get(&dm_counters_global.files_closed[DM_CLOSE_MAX_OPEN]);
    pl_pipeline *p = NULL;
    if (pl_new(&p, &pc, &cb, &e) != 0)
        fail_msg("pl_new: %s", e.msg);
    const uint64_t N = 600;
    for (uint64_t id = 1; id <= N;) {
        pl_batch *b = pl_batch_get(p);
        assert_non_null(b);
        pl_batch_reset(b, id);
        for (uint64_t k = 0; k < 37 && id <= N; k++, id++) {
            char line[64];
            int len = snprintf(line, sizeof line, "{\"i\":%" PRIu64 ",\"s\":\"k%" PRIu64 "\"}",
                               id, id / 10 % 3);
            assert_int_equal(pl_batch_add(b, "test:src", line, (size_t)len, (uint64_t)len,
                                          false, 1700000000000000, id), 0);
        }
        pl_submit(p, b);
    }
    pl_close_files(p);
    assert_int_equal(pl_drain(p, NULL), 0);
    pl_destroy(p);
    assert_int_equal(f->failures, 0);
    /* batches of 37 lines touch 3 or 4 runs: about one close a batch */
    assert_true(dm_get(&dm_counters_global.files_closed[DM_CLOSE_MAX_OPEN]) - before >= 10);
    uint64_t rows = 0, last_w = 0;
    for (size_t i = 0; i < n_ranges; i++) {
        const range_rec *r = &ranges[i];
        rows += r->rows;
        assert_true(r->first < r->end && r->watermark >= last_w);
        last_w = r->watermark;
        for (size_t j = 0; j < n_ranges; j++) {
            if (j == i || strcmp(ranges[j].key, r->key) != 0)
                continue;
            assert_true(ranges[j].end <= r->first || ranges[j].first >= r->end);
            if (j > i)               /* published later: not below this watermark */
                assert_true(ranges[j].first >= r->watermark);
        }
    }
    assert_int_equal(rows, N);
    assert_int_equal(last_w, N + 1);
}

/* Rejected lines inside a batch's key groups (a batch is shredded grouped
 * by key into one row buffer, each key's rows copied out of it): every
 * key's files hold exactly its accepted lines, and the dead letters list
 * the rejected ones in seq order. */
static void test_pipeline_routes_rows_around_rejected_lines(void **state)
{
    fixture *f = *state;
    pq_err e = {0};
    char out[96];
    snprintf(out, sizeof out, "%s/out", f->dir);
    pl_config pc = {.schema = f->cf.schema, .writer = &f->wopts, .out_dir = out,
                    .path_template = "s={{s}}/{seq}.parquet", .publish = PL_PUBLISH_EACH,
                    .dead_letters = &f->dl, .workers = 2, .first_seq = 1, .host = "test",
                    .max_line_bytes = 1 << 20, .max_open_files = 8,
                    .row_group = {.max_rows = 7}};
    pl_callbacks cb = {.user = f, .on_published_range = on_published_range,
                       .on_failure = on_failure};
    n_ranges = 0;
    pl_pipeline *p = NULL;
    if (pl_new(&p, &pc, &cb, &e) != 0)
        fail_msg("pl_new: %s", e.msg);
    const uint64_t N = 500;
    uint64_t want[5] = {0}, bad = 0;
    for (uint64_t id = 1; id <= N;) {
        pl_batch *b = pl_batch_get(p);
        assert_non_null(b);
        pl_batch_reset(b, id);
        for (uint64_t k = 0; k < 61 && id <= N; k++, id++) {
            char line[64];
            int len = snprintf(line, sizeof line, "{\"i\":%" PRIu64 ",\"s\":\"k%" PRIu64 "\"}",
                               id, id % 5);
            if (id % 7 == 0 || id % 11 == 0) {   /* not JSON, in every key's group */
                len = snprintf(line, sizeof line, "{\"s\":\"k%" PRIu64 "\", nope", id % 5);
                bad++;
            } else {
                want[id % 5]++;
            }
            assert_int_equal(pl_batch_add(b, "test:src", line, (size_t)len, (uint64_t)len,
                                          false, 1700000000000000, id), 0);
        }
        pl_submit(p, b);
    }
    pl_close_files(p);
    assert_int_equal(pl_drain(p, NULL), 0);
    pl_destroy(p);
    assert_int_equal(f->failures, 0);
    uint64_t got[5] = {0};
    for (size_t i = 0; i < n_ranges; i++) {
        assert_true(ranges[i].key[0] == 'k' && ranges[i].key[1] >= '0' && ranges[i].key[1] < '5');
        got[ranges[i].key[1] - '0'] += ranges[i].rows;
    }
    for (int k = 0; k < 5; k++)
        assert_int_equal(got[k], want[k]);
    assert_int_equal(dl_close(&f->dl, NULL), 0);
    assert_int_equal(count_lines(f->dl.path), bad);
    FILE *fp = fopen(f->dl.path, "r");
    assert_non_null(fp);
    char buf[512];
    uint64_t last = 0;
    while (fgets(buf, sizeof buf, fp) != NULL) {
        const char *src = strstr(buf, "\"source\":\"test:src:");
        assert_non_null(src);
        uint64_t id = strtoull(src + strlen("\"source\":\"test:src:"), NULL, 10);
        assert_true(id > last && (id % 7 == 0 || id % 11 == 0));
        last = id;
    }
    fclose(fp);
}

/* Routed files are created by the workers or the writer, not the
 * assembler (outfile.c): one key's directory blocked by a regular file
 * fails the pipeline with that file's creation error, the files of the
 * other keys are removed unpublished (no temporary file stays), and once
 * the way is clear a resume from the watermark publishes every line. */
static void submit_keys(pl_pipeline *p, uint64_t from, uint64_t to)
{
    for (uint64_t id = from; id < to;) {
        pl_batch *b = pl_batch_get(p);
        assert_non_null(b);
        pl_batch_reset(b, id);
        for (uint64_t k = 0; k < 50 && id < to; k++, id++) {
            char line[64];
            int len = snprintf(line, sizeof line, "{\"i\":%" PRIu64 ",\"s\":\"k%" PRIu64 "\"}",
                               id, id % 5);
            assert_int_equal(pl_batch_add(b, "test:src", line, (size_t)len, (uint64_t)len,
                                          false, 1700000000000000, id), 0);
        }
        pl_submit(p, b);
    }
}

static void test_pipeline_routed_file_creation_failure_fails_the_pipeline(void **state)
{
    fixture *f = *state;
    pq_err e = {0};
    char out[96], block[128], sub[160];
    snprintf(out, sizeof out, "%s/out", f->dir);
    snprintf(block, sizeof block, "%s/s=k3", out);
    assert_int_equal(mkdir(out, 0755), 0);
    FILE *fp = fopen(block, "w");     /* where k3's directory should go */
    assert_non_null(fp);
    fclose(fp);
    pl_config pc = {.schema = f->cf.schema, .writer = &f->wopts, .out_dir = out,
                    .path_template = "s={{s}}/{seq}.parquet", .publish = PL_PUBLISH_EACH,
                    .dead_letters = &f->dl, .workers = 2, .first_seq = 1, .host = "test",
                    .max_line_bytes = 1 << 20, .max_open_files = 8};
    pl_callbacks cb = {.user = f, .on_published_range = on_published_range,
                       .on_failure = on_failure};
    n_ranges = 0;
    pl_pipeline *p = NULL;
    if (pl_new(&p, &pc, &cb, &e) != 0)
        fail_msg("pl_new: %s", e.msg);
    submit_keys(p, 1, 1001);
    pl_close_files(p);
    assert_int_not_equal(pl_drain(p, &e), 0);
    assert_non_null(strstr(e.msg, "s=k3"));
    assert_int_equal(f->failures, 1);
    /* Files are created by a worker, so another key's file may have been
     * published before k3's creation failed: what is on disk is exactly
     * what was published, nothing half written. */
    size_t on_disk = 0;
    for (int k = 0; k < 5; k++) {
        snprintf(sub, sizeof sub, "%s/s=k%d", out, k);
        assert_int_equal(files_in(sub, true), 0);
        on_disk += files_in(sub, false);
    }
    assert_int_equal(on_disk, n_ranges);
    assert_int_equal(unlink(block), 0);
    pl_resume(p);
    submit_keys(p, f->resume, 1001);
    pl_close_files(p);
    assert_int_equal(pl_drain(p, &e), 0);
    pl_destroy(p);
    uint64_t rows = 0;
    for (size_t i = 0; i < n_ranges; i++)
        rows += ranges[i].rows;
    assert_int_equal(n_ranges, 5);       /* one file a key, published before or after */
    assert_int_equal(rows, 1000);        /* every line exactly once */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_pipeline_rows_keep_input_order_across_workers_and_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_worker_count_does_not_change_the_file,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_publishes_in_order_with_contiguous_ranges,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_failure_resumes_at_the_watermark, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_buffered_bytes_drain_to_zero, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_reject_reasons_are_counted_by_code, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_pipeline_files_split_where_the_directories_time_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pipeline_routed_file_creation_failure_fails_the_pipeline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_routes_rows_around_rejected_lines, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_routes_by_field_with_max_open_files,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
