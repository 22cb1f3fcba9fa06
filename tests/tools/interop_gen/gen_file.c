/* gen_file.c - one file of the matrix: schema, writer, rows and
 * expectation; a failed file leaves neither .parquet nor .expect.json. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

/* Set by main; counted here. */
const char *outdir;
uint64_t seed;
int files_ok, files_failed;

static void fail_file(const char *name, const char *what, const pq_err *err)
{
    fprintf(stderr, "interop_gen: %s: %s: %s (%s)\n", name, what, err->msg, pq_err_name(err->code));
    files_failed++;
}

/* The file's schema with every column's levels resolved, or NULL (the
 * failure counted). */
static pq_schema *file_schema(const file_spec *fs)
{
    pq_err err;
    pq_err_clear(&err);
    pq_schema *s = pq_schema_new(NULL);
    if (!s) {
        fprintf(stderr, "interop_gen: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < fs->ncols; i++) {
        reset_counts(fs->cols[i]);
        if (build(s, 0, fs->cols[i], 0, 0, &err) < 0) {
            fail_file(fs->name, "schema", &err);
            goto fail;
        }
    }
    if (pq_schema_finish(s, &err) < 0) {
        fail_file(fs->name, "pq_schema_finish", &err);
        goto fail;
    }
    for (size_t i = 0; i < fs->ncols; i++) {
        if (resolve(s, fs->cols[i], &err) < 0) {
            fail_file(fs->name, "levels", &err);
            goto fail;
        }
    }
    return s;

fail:
    pq_schema_destroy(s);
    return NULL;
}

/* The expectation up to its rows: writer, seed, options, footer, columns. */
static void j_header(FILE *jf, const file_spec *fs, const pq_schema *s)
{
    fprintf(jf, "{\"writer\":\"parqd interop_gen\",\"seed\":\"%" PRIu64 "\",", seed);
    fprintf(jf, "\"note\":\"codec %d, page v%d, page_max_rows %zu, row_group_max_rows %zu, dictionary_max_bytes %zu\",",
            (int)fs->wo.codec, fs->wo.page_version, fs->wo.page_max_rows, fs->wo.row_group_max_rows,
            fs->wo.dictionary_max_bytes);
    if (fs->skip_json)
        fprintf(jf, "\"skip\":%s,", fs->skip_json);
    j_footer(jf, fs, s);
    fputs("\"columns\":[", jf);
    for (size_t i = 0; i < fs->ncols; i++) {
        if (i)
            fputc(',', jf);
        j_type(jf, fs->cols[i]);
    }
    fputs("],\n\"rows\":[\n", jf);
}

/* Generates every row, puts it into the writer and writes it to the
 * expectation; err is set (code != 0) when a row could not be put. */
static void write_rows(pq_writer *w, FILE *jf, const file_spec *fs, pq_err *err)
{
    gval *vals = calloc(fs->ncols ? fs->ncols : 1, sizeof *vals);
    if (!vals) {
        fprintf(stderr, "interop_gen: out of memory\n");
        exit(2);
    }
    for (size_t row = 0; row < fs->rows; row++) {
        for (size_t i = 0; i < fs->ncols; i++) {
            gen_value(fs->cols[i], &vals[i], row, 0);
            shred(fs->cols[i], &vals[i], 0, 0);
        }
        if (put_failed) {
            pq_err_set(err, put_failed, "row %zu: a put call failed (see above)", row);
            break;
        }
        if (pq_writer_end_row(w, err) < 0)
            break;
        fputs(row ? ",\n[" : "[", jf);
        for (size_t i = 0; i < fs->ncols; i++) {
            if (i)
                fputc(',', jf);
            j_value(jf, fs->cols[i], &vals[i]);
        }
        fputc(']', jf);
        arena_reset();
    }
    free(vals);
    arena_free();
    fputs("\n]}\n", jf);
}

/* Writes NAME.parquet and NAME.expect.json; on failure removes both. */
void write_file(const file_spec *fs)
{
    char ppath[4096], epath[4096];
    snprintf(ppath, sizeof ppath, "%s/%s.parquet", outdir, fs->name);
    snprintf(epath, sizeof epath, "%s/%s.expect.json", outdir, fs->name);
    pq_err err;
    pq_err_clear(&err);
    pq_writer *w = NULL;
    FILE *jf = NULL;
    int fd = -1;
    put_failed = 0;
    cur_rows = fs->rows;

    pq_schema *s = file_schema(fs);
    if (!s)
        goto cleanup;
    fd = open(ppath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    jf = fopen(epath, "w");
    if (fd < 0 || !jf) {
        pq_err_set(&err, PQ_EIO, "cannot create %s: %s", fd < 0 ? ppath : epath, strerror(errno));
        fail_file(fs->name, "open", &err);
        goto cleanup;
    }
    if (pq_writer_open(&w, s, &fs->wo, pq_sink_fd(&fd), &err) < 0) {
        w = NULL;
        fail_file(fs->name, "pq_writer_open", &err);
        goto cleanup;
    }
    for (size_t i = 0; i < fs->ncols; i++)
        attach(w, fs->cols[i]);

    j_header(jf, fs, s);
    write_rows(w, jf, fs, &err);
    if (err.code != 0) {
        fail_file(fs->name, "writing rows", &err);
        goto cleanup;
    }
    if (pq_writer_close(w, &err) < 0) {
        fail_file(fs->name, "pq_writer_close", &err);
        goto cleanup;
    }
    if (fflush(jf) != 0 || ferror(jf)) {
        pq_err_set(&err, PQ_EIO, "writing %s failed", epath);
        fail_file(fs->name, "expectation", &err);
        goto cleanup;
    }
    printf("  %-44s %6zu rows %8" PRIu64 " bytes\n", fs->name, fs->rows, pq_writer_bytes_written(w));
    files_ok++;
    pq_writer_destroy(w);
    pq_schema_destroy(s);
    fclose(jf);
    close(fd);
    return;

cleanup:
    if (w)
        pq_writer_destroy(w);
    pq_schema_destroy(s);
    if (jf)
        fclose(jf);
    if (fd >= 0)
        close(fd);
    unlink(ppath);
    unlink(epath);
}
