/* bench_open_files.c - what one open output file costs in memory with the
 * streaming writer (issue 20: partitioned output keeps many files open).
 * Opens N files of one schema (a writer into a counting sink and its
 * pq_stream each), feeds every file R shredded log records as the open
 * row group, and prints, per open file, the bytes its stream says it holds
 * (compressed pages, open pages, dictionaries) and the growth of the
 * process's resident memory (writer, stream, rows of the last feed freed).
 * Figures are for humans; nothing asserts on them.
 *
 * usage: bench_open_files [N [R [SCHEMA.yaml]]]   (default 256 files, 1000
 * records each, the default schema: one Variant column and _ingest_ts) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec.h"
#include "pq_writer.h"
#include "rowgroup.h"
#include "shred.h"
#include "stream.h"

static int count_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    (void)data;
    (void)err;
    *(uint64_t *)ctx += n;
    return 0;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb;
}

/* One web-server-like record; file i's values differ from file j's, as
 * partitions' do. */
static size_t make_line(char *buf, size_t cap, size_t file, size_t i)
{
    static const char *const paths[] = {"/", "/login", "/api/v1/items", "/static/app.js"};
    return (size_t)snprintf(buf, cap,
                            "{\"ts\":\"2026-03-01T12:%02zu:%02zu.%06zuZ\",\"service\":\"svc-%zu\","
                            "\"level\":\"%s\",\"status\":%d,\"latency_ms\":%.3f,\"path\":\"%s\","
                            "\"user\":{\"id\":\"u%zu\",\"ip\":\"10.%zu.%zu.%zu\"},"
                            "\"msg\":\"request %zu of file %zu done\"}",
                            i / 60 % 60, i % 60, i * 7919 % 1000000, file,
                            i % 50 ? "info" : "error", i % 17 ? 200 : 503,
                            (double)(i * 37 % 1000) / 7.0, paths[i % 4], i % 300, file % 256,
                            i % 256, (i * 13) % 256, i, file);
}

typedef struct open_file {
    pq_writer *w;
    pq_stream *s;
    uint64_t bytes;
} open_file;

static int open_and_feed(open_file *f, size_t id, size_t rows, pq_schema *ps, sh_shredder *sh,
                         pq_rowgroup *rg, pq_encoded *scratch, pq_err *err)
{
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    pq_sink sink = {.ctx = &f->bytes, .write = count_write};
    int rc = pq_writer_open(&f->w, ps, &o, sink, err);
    rc = rc ? rc : pq_stream_new(&f->s, f->w, err);
    rc = rc ? rc : pq_stream_begin(f->s, 0, err);
    char line[512];
    pq_rowgroup_reset(rg);
    sh_shredder_new_batch(sh);
    for (size_t i = 0; rc == 0 && i < rows; i++) {
        size_t n = make_line(line, sizeof line, id, i);
        rc = sh_shred_line(sh, rg, line, n, 1772366400000000 + (int64_t)i, err);
    }
    rc = rc ? rc : pq_stream_feed(f->s, rg, 0, pq_schema_num_leaves(ps), scratch, err);
    if (rc == 0)
        pq_stream_add_rows(f->s, pq_rowgroup_rows(rg));
    return rc;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
    size_t rows = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
    pq_err err = {0};
    sc_schema *spec = NULL;
    pq_schema *ps = NULL;
    sh_shredder *sh = NULL;
    pq_rowgroup *rg = NULL;
    pq_encoded *scratch = pq_encoded_new();
    open_file *files = calloc(n ? n : 1, sizeof *files);
    int rc = argc > 3 ? sc_schema_load_file(argv[3], &spec, &err) : sc_schema_default(&spec, &err);
    rc = rc ? rc : sc_build_parquet_schema(spec, &ps, &err);
    rc = rc ? rc : sh_shredder_new(&sh, spec, &err);
    rc = rc ? rc : pq_rowgroup_new(&rg, ps, &err);
    if (rc == 0 && (scratch == NULL || files == NULL))
        rc = pq_err_set(&err, PQ_ENOMEM, "out of memory");
    /* The first file warms the allocator and the shredder up. */
    open_file warm = {0};
    rc = rc ? rc : open_and_feed(&warm, n, rows, ps, sh, rg, scratch, &err);
    long before = rss_kb();
    size_t held = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = open_and_feed(&files[i], i, rows, ps, sh, rg, scratch, &err);
        held += rc == 0 ? pq_stream_held_bytes(files[i].s) : 0;
    }
    long after = rss_kb();
    if (rc != 0) {
        fprintf(stderr, "bench_open_files: %s\n", err.msg);
        return 1;
    }
    printf("%zu open files, %zu records each, %zu leaves\n", n, rows, pq_schema_num_leaves(ps));
    printf("per open file: stream holds %.1f KiB; resident memory grew %.1f KiB\n",
           (double)held / 1024.0 / (double)n, (double)(after - before) / (double)n);
    for (size_t i = 0; i < n; i++) {
        pq_stream_destroy(files[i].s);
        pq_writer_destroy(files[i].w);
    }
    pq_stream_destroy(warm.s);
    pq_writer_destroy(warm.w);
    free(files);
    pq_encoded_destroy(scratch);
    pq_rowgroup_destroy(rg);
    sh_shredder_destroy(sh);
    pq_schema_destroy(ps);
    sc_schema_free(spec);
    return 0;
}
