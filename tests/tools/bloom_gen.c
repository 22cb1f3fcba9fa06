/* bloom_gen.c - writes parqd files with split-block bloom filters over
 * 1,000,000 distinct strings and 1,000,000 distinct int64s, and checks
 * them with its own reader (BloomFilter.md; tests/scripts/
 * test_bloom_interop.sh, tests/interop/bloom_probe.mjs).
 *
 *     bloom_gen OUTDIR
 *
 * Values (the JS side regenerates them from this description):
 *     mix(x)   = splitmix64's finalizer on 64-bit x (mod 2^64):
 *                x ^= x >> 30; x *= 0xbf58476d1ce4e5b9;
 *                x ^= x >> 27; x *= 0x94d049bb133111eb; x ^= x >> 31
 *                (a bijection, so distinct inputs give distinct outputs)
 *     int64    present i = (int64) mix(SEED_INT ^ 2i),  absent i = (int64) mix(SEED_INT ^ (2i+1))
 *     string   present i = hex16(mix(SEED_STR ^ 2i)) + "-" + "abcdefghijkl"[0 .. i % 13)
 *              absent  i = hex16(mix(SEED_STR ^ (2i+1))) + the same suffix
 *     hex16 = 16 lowercase hex digits, zero-padded
 * for i in [0, 1,000,000). Present and absent sets are disjoint and
 * duplicate-free (mix is a bijection). Row i of every file holds
 * s = present string i, v = present int64 i.
 *
 * Files (columns s: required string, v: required int64, bloom on,
 * dictionary off, ZSTD):
 *   bloom_fpp01.parquet  fpp 0.01, ndv from the row group (writer default),
 *                        199,174-row row groups: the most rows a 256 KiB
 *                        filter holds at 1 %, so the measured rate should be
 *                        close to 1 % (a loose filter would prove little)
 *   bloom_fpp05.parquet  fpp 0.05, 290,260-row row groups (256 KiB at 5 %)
 *   bloom_ndv.parquet    fpp 0.01, explicit ndv 1,000,000, 250,000-row row
 *                        groups: filters sized for the ndv (2 MiB), not the
 *                        row count (512 KiB)
 *
 * The checker (independent of writer/chunk/bloom.c: pqfile + XXH64 + the SBBF
 * check of tests/support/pqcrypt.c) reads every file back: every value
 * decodes to the generated one, each chunk's filter size is the sizing
 * model's for (ndv, fpp), every present value is in its row group's filter
 * (no false negatives), and all 1,000,000 absent values are probed against
 * every chunk filter; false positives / probes is the FPR, which must be at
 * most 1.5 x fpp per file and per chunk. OUTDIR/manifest.json records the
 * derivation, the files and the C checker's counts per chunk so the JS
 * reader can be compared count for count. Exit 1 on any failure. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "bloom.h"
#include "pq_writer.h"
#include "pqcrypt.h"
#include "pqfile.h"
#include "tmpdir.h"

#define N_VALUES 1000000u
#define SEED_INT UINT64_C(0x5eed0000b10f0001)
#define SEED_STR UINT64_C(0x5eed0000b10f0002)

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

static int64_t int_value(uint64_t i, bool absent)
{
    return (int64_t)mix(SEED_INT ^ (2 * i + (absent ? 1 : 0)));
}

/* Writes the string into buf (>= 32 bytes); returns its length. */
static size_t str_value(uint64_t i, bool absent, char *buf)
{
    int n = snprintf(buf, 32, "%016" PRIx64 "-%.*s", mix(SEED_STR ^ (2 * i + (absent ? 1 : 0))),
                     (int)(i % 13), "abcdefghijkl");
    return (size_t)n;
}

typedef struct file_spec {
    const char *name;
    double fpp;
    uint64_t ndv;        /* 0: writer default (row group's distinct count) */
    size_t rg_rows;
} file_spec;

static const file_spec FILES[] = {
    { "bloom_fpp01", 0.01, 0, 199174 },
    { "bloom_fpp05", 0.05, 0, 290260 },
    { "bloom_ndv", 0.01, 1000000, 250000 },
};
#define NFILES (sizeof FILES / sizeof FILES[0])

static int write_file(const file_spec *fs, const char *path, pq_err *err)
{
    pq_column_opts o;
    pq_column_opts_default(&o);
    o.bloom = 1;
    o.bloom_fpp = fs->fpp;
    o.bloom_ndv = fs->ndv;
    o.dictionary = 0;
    pq_schema *s = pq_schema_new(NULL);
    pq_logical str = { .kind = PQ_LT_STRING };
    if (pq_schema_add_leaf(s, 0, &(pq_node_spec){ .name = "s", .repetition = PQ_REQUIRED,
            .type = PQ_BYTE_ARRAY, .logical = str, .field_id = -1, .opts = &o }, err) < 0 ||
        pq_schema_add_leaf(s, 0, &(pq_node_spec){ .name = "v", .repetition = PQ_REQUIRED,
            .type = PQ_INT64, .field_id = -1, .opts = &o }, err) < 0) {
        pq_schema_destroy(s);
        return err->code;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        pq_schema_destroy(s);
        return pq_err_set(err, PQ_EIO, "%s: %s", path, strerror(errno));
    }
    pq_writer_opts wo;
    pq_writer_opts_default(&wo);
    wo.row_group_max_rows = fs->rg_rows;
    wo.row_group_max_bytes = 0;
    pq_writer *w = NULL;
    int rc = pq_writer_open(&w, s, &wo, pq_sink_fd(&fd), err);
    char buf[32];
    for (uint64_t i = 0; rc == 0 && i < N_VALUES; i++) {
        size_t len = str_value(i, false, buf);
        rc = pq_column_put_bytes(pq_writer_column(w, 0), 0, buf, len);
        if (rc == 0)
            rc = pq_column_put_i64(pq_writer_column(w, 1), 0, int_value(i, false));
        if (rc != 0)
            pq_err_set(err, rc, "row %" PRIu64 ": put failed", i);
        else
            rc = pq_writer_end_row(w, err);
    }
    if (rc == 0)
        rc = pq_writer_close(w, err);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
    if (close(fd) != 0 && rc == 0)
        rc = pq_err_set(err, PQ_EIO, "%s: close: %s", path, strerror(errno));
    return rc;
}

/* ---- checking ------------------------------------------------------------------ */

typedef struct chunk_result {
    size_t rg, col;
    uint64_t first_row, rows;
    size_t num_bytes, model_bytes;
    double model_fpp;
    uint64_t present_misses, absent_probes, false_positives;
} chunk_result;

static uint64_t hash_value(size_t col, uint64_t i, bool absent)
{
    if (col == 0) {
        char buf[32];
        size_t len = str_value(i, absent, buf);
        return XXH64(buf, len, 0);
    }
    int64_t v = int_value(i, absent); /* PLAIN: 8 bytes little-endian */
    uint8_t le[8];
    for (int b = 0; b < 8; b++)
        le[b] = (uint8_t)((uint64_t)v >> (8 * b));
    return XXH64(le, 8, 0);
}

/* Reads one chunk's filter (header via pqfile's Thrift tables, bitset
 * after it) into b (bitset points into the file). */
static int read_filter(const pqf_file *f, size_t rg, size_t col, pqc_bloom *b, pq_err *err)
{
    pqf_chunk ch;
    int rc = pqf_chunk_get(f, rg, col, &ch, err);
    if (rc != 0)
        return rc;
    if (ch.bloom_filter_offset < 0 || ch.bloom_filter_length <= 0)
        return pq_err_set(err, PQ_EPARSE, "rg %zu col %zu: no bloom_filter_offset/length", rg, col);
    tr_node *h = NULL;
    size_t used = 0;
    rc = pqf_parse_at(f, (size_t)ch.bloom_filter_offset, (size_t)ch.bloom_filter_length,
                      &pqf_spec_bloom_header, &h, &used, err);
    if (rc != 0)
        return rc;
    int64_t nb = tr_field_int(h, 1, -1);
    tr_free(h);
    if (nb < 32 || nb % 32 != 0 || used + (size_t)nb != (size_t)ch.bloom_filter_length)
        return pq_err_set(err, PQ_EPARSE, "rg %zu col %zu: numBytes %lld + header %zu != "
                          "bloom_filter_length %lld", rg, col, (long long)nb, used,
                          (long long)ch.bloom_filter_length);
    b->bitset = f->data + ch.bloom_filter_offset + used;
    b->num_bytes = (size_t)nb;
    return 0;
}

/* Every row's values, decoded by the test-side reader. */
static int check_values(const char *path, pq_err *err)
{
    pqc_file f;
    int rc = pqc_open(&f, path, NULL, err);
    if (rc != 0)
        return rc;
    const pqc_column *s = pqc_column_by_path(&f, "s"), *v = pqc_column_by_path(&f, "v");
    if (s == NULL || v == NULL || s->values.n != N_VALUES || v->values.n != N_VALUES)
        rc = pq_err_set(err, PQ_EPARSE, "%s: want columns s and v with %u values", path, N_VALUES);
    char buf[32];
    for (uint64_t i = 0; rc == 0 && i < N_VALUES; i++) {
        size_t len, want = str_value(i, false, buf);
        const uint8_t *p = pqc_value(s, i, &len);
        if (len != want || memcmp(p, buf, len) != 0)
            rc = pq_err_set(err, PQ_EPARSE, "%s: s row %" PRIu64 " differs", path, i);
        int64_t x;
        memcpy(&x, pqc_value(v, i, &len), 8);
        if (rc == 0 && x != int_value(i, false))
            rc = pq_err_set(err, PQ_EPARSE, "%s: v row %" PRIu64 " differs", path, i);
    }
    pqc_close(&f);
    return rc;
}

static int check_file(const file_spec *fs, const char *path, chunk_result **out, size_t *nout,
                      pq_err *err)
{
    pqf_file f;
    int rc = pqf_open(&f, path, err);
    if (rc != 0)
        return rc;
    size_t nrg = pqf_num_row_groups(&f);
    chunk_result *res = calloc(nrg * 2, sizeof *res);
    uint64_t *absent_hash = malloc(N_VALUES * sizeof *absent_hash);
    if (res == NULL || absent_hash == NULL) {
        free(res);
        free(absent_hash);
        pqf_close(&f);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    for (size_t col = 0; rc == 0 && col < 2; col++) {
        for (uint64_t i = 0; i < N_VALUES; i++)
            absent_hash[i] = hash_value(col, i, true);
        uint64_t first = 0;
        for (size_t rg = 0; rc == 0 && rg < nrg; rg++) {
            chunk_result *r = &res[col * nrg + rg];
            uint64_t rows = (uint64_t)tr_field_int(pqf_row_group(&f, rg), 3, 0);
            *r = (chunk_result){ .rg = rg, .col = col, .first_row = first, .rows = rows };
            pqc_bloom b;
            if ((rc = read_filter(&f, rg, col, &b, err)) != 0)
                break;
            r->num_bytes = b.num_bytes;
            uint64_t ndv = fs->ndv ? fs->ndv : rows;
            r->model_bytes = pq_bloom_optimal_bytes(ndv, fs->fpp);
            r->model_fpp = pq_bloom_expected_fpp(b.num_bytes, rows);
            for (uint64_t i = first; i < first + rows; i++)
                r->present_misses += !pqc_bloom_check(&b, hash_value(col, i, false));
            for (uint64_t i = 0; i < N_VALUES; i++)
                r->false_positives += pqc_bloom_check(&b, absent_hash[i]);
            r->absent_probes = N_VALUES;
            first += rows;
        }
        if (rc == 0 && first != N_VALUES)
            rc = pq_err_set(err, PQ_EPARSE, "%s: row groups hold %" PRIu64 " rows", path, first);
    }
    free(absent_hash);
    pqf_close(&f);
    *out = res;
    *nout = nrg * 2;
    return rc;
}

int main(int argc, char **argv)
{
    const char *dir = pqt_tool_outdir(argc, argv, "bloom_gen");
    if (dir == NULL)
        return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    FILE *mf = fopen(path, "w");
    if (mf == NULL) {
        fprintf(stderr, "bloom_gen: cannot write %s\n", path);
        return 2;
    }
    fprintf(mf, "{\"n\": %u, \"seed_int\": \"%" PRIu64 "\", \"seed_str\": \"%" PRIu64 "\",\n"
            " \"derivation\": \"mix = splitmix64 finalizer; int64 present i = mix(seed_int ^ 2i), "
            "absent i = mix(seed_int ^ (2i+1)) as int64; string = hex16(mix(seed_str ^ 2i or "
            "2i+1)) + '-' + 'abcdefghijkl'.slice(0, i %% 13); row i holds present i\",\n"
            " \"files\": [", N_VALUES, SEED_INT, SEED_STR);
    int failed = 0;
    for (size_t k = 0; k < NFILES; k++) {
        const file_spec *fs = &FILES[k];
        pq_err err = { 0 };
        snprintf(path, sizeof path, "%s/%s.parquet", dir, fs->name);
        struct timespec t0, t1, t2;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = write_file(fs, path, &err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (rc == 0)
            rc = check_values(path, &err);
        chunk_result *res = NULL;
        size_t nres = 0;
        if (rc == 0)
            rc = check_file(fs, path, &res, &nres, &err);
        clock_gettime(CLOCK_MONOTONIC, &t2);
        uint64_t fp[2] = { 0, 0 }, probes[2] = { 0, 0 }, misses = 0;
        double worst = 0;
        for (size_t i = 0; rc == 0 && i < nres; i++) {
            const chunk_result *r = &res[i];
            fp[r->col] += r->false_positives;
            probes[r->col] += r->absent_probes;
            misses += r->present_misses;
            double rate = (double)r->false_positives / (double)r->absent_probes;
            worst = rate > worst ? rate : worst;
            if (r->num_bytes != r->model_bytes)
                rc = pq_err_set(&err, PQ_EPARSE, "rg %zu col %zu: %zu-byte filter, the sizing for "
                                "ndv %" PRIu64 " at fpp %g is %zu", r->rg, r->col, r->num_bytes,
                                fs->ndv ? fs->ndv : r->rows, fs->fpp, r->model_bytes);
        }
        double rate_s = probes[0] ? (double)fp[0] / (double)probes[0] : 0;
        double rate_v = probes[1] ? (double)fp[1] / (double)probes[1] : 0;
        if (rc == 0 && misses != 0)
            rc = pq_err_set(&err, PQ_EPARSE, "%" PRIu64 " false negatives", misses);
        if (rc == 0 && (rate_s > 1.5 * fs->fpp || rate_v > 1.5 * fs->fpp || worst > 1.5 * fs->fpp))
            rc = pq_err_set(&err, PQ_EPARSE, "FPR s %.5f v %.5f (worst chunk %.5f) above 1.5 x "
                            "fpp %g", rate_s, rate_v, worst, fs->fpp);
        if (rc != 0) {
            fprintf(stderr, "FAIL %s: %s\n", fs->name, err.msg);
            failed++;
        } else {
            printf("PASS %s.parquet (fpp %g, ndv %s, %zu row groups): %u values per column, "
                   "all decoded equal, 0 false negatives; FPR over %" PRIu64 " absent probes: "
                   "s %.5f, v %.5f (%.2fx, %.2fx the fpp; worst chunk %.5f); write %.1f s, C check "
                   "%.1f s\n", fs->name, fs->fpp, fs->ndv ? "explicit" : "from row group",
                   nres / 2, N_VALUES, probes[0], rate_s, rate_v, rate_s / fs->fpp,
                   rate_v / fs->fpp, worst,
                   (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                   (double)(t2.tv_sec - t1.tv_sec) + (double)(t2.tv_nsec - t1.tv_nsec) / 1e9);
        }
        fprintf(mf, "%s\n  {\"file\": \"%s.parquet\", \"fpp\": %g, \"ndv\": %" PRIu64 ", "
                "\"rg_rows\": %zu, \"c_check\": \"%s\", \"chunks\": [", k ? "," : "", fs->name,
                fs->fpp, fs->ndv, fs->rg_rows, rc == 0 ? "pass" : "fail");
        for (size_t i = 0; i < nres; i++) {
            const chunk_result *r = &res[i];
            fprintf(mf, "%s\n    {\"rg\": %zu, \"column\": \"%s\", \"first_row\": %" PRIu64
                    ", \"rows\": %" PRIu64 ", \"num_bytes\": %zu, \"model_fpp\": %.6f, "
                    "\"c_present_misses\": %" PRIu64 ", \"c_absent_probes\": %" PRIu64
                    ", \"c_false_positives\": %" PRIu64 "}", i ? "," : "", r->rg,
                    r->col ? "v" : "s", r->first_row, r->rows, r->num_bytes, r->model_fpp,
                    r->present_misses, r->absent_probes, r->false_positives);
        }
        fprintf(mf, "]}");
        free(res);
    }
    fprintf(mf, "\n]}\n");
    fclose(mf);
    printf("bloom_gen: %zu files checked, %d failed\n", NFILES, failed);
    return failed ? 1 : 0;
}
