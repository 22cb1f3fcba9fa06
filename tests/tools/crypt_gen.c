/* crypt_gen.c - writes parqd's encrypted files for other readers
 * (tests/scripts/test_encryption_interop.sh, tests/interop/crypt_duckdb.mjs).
 *
 *     crypt_gen OUTDIR
 *
 * Every file is read back here first with the test-only decrypting reader
 * (tests/support/pqcrypt.c) and compared value by value, so a failure in
 * another reader is that reader's, not the file's. Writes OUTDIR/NAME.parquet
 * per shape and OUTDIR/manifest.json:
 *   {"keys": {"footer": "<16-char ASCII key>", "footer256": "<32 chars>",
 *             "wrong": "<16 chars>", "columns": {"kc1": "...", "kc2": "..."}},
 *    "files": [{"file", "shape", "duckdb": "expect-read" | "expect-fail",
 *               "reason", "key": "footer" | "footer256", "mode",
 *               "columns": [names], "plaintext_columns": [names],
 *               "nested": bool, "rows": [[...], ...]}]}
 * Values in "rows" are JSON: int64 as decimal strings, doubles as numbers
 * (exact: multiples of 1/4 or of 1/1000 printed with %.17g), strings,
 * booleans, null; a list column as an array.
 *
 * Shapes: DuckDB 1.5.6 reads uniformly encrypted AES_GCM_V1 files with an
 * encrypted footer only when every chunk has one v1 data page and the
 * schema is flat ("duckdb": "expect-read"); the other shapes are written so
 * the interop test can show, by name, what DuckDB rejects. Keys are ASCII
 * strings because DuckDB's add_parquet_key takes the key as text. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "crypto.h"
#include "pq_writer.h"
#include "pqcrypt.h"
#include "tmpdir.h"
#include "memsink.h"

static const char KEY_FOOTER[] = "parqd-footer-k01";                 /* AES-128 */
static const char KEY_FOOTER256[] = "parqd-footer-key-256-bit-0000001"; /* AES-256 */
static const char KEY_WRONG[] = "parqd-footer-k02";
static const char KEY_C1[] = "parqd-column-k01";
static const char KEY_C2[] = "parqd-column-k02";

typedef struct shape {
    const char *name;
    const char *duckdb;        /* expect-read / expect-fail */
    const char *reason;
    pq_crypto_algorithm alg;
    bool plain_footer;
    bool per_column;           /* id and secret with column keys, rest plaintext */
    bool aad;                  /* stored AAD prefix */
    bool aes256;
    bool nested;               /* adds a LIST<int64> column */
    int page_version;
    size_t page_rows;          /* 0: one page per chunk */
    size_t rows, rg_rows;
} shape;

static const shape SHAPES[] = {
    { "uniform_gcm_pare_v1", "expect-read",
      "uniform AES_GCM_V1, encrypted footer, flat, v1 pages, one data page per chunk",
      PQ_AES_GCM_V1, false, false, false, false, false, 1, 0, 3000, 1000 },
    { "uniform_gcm_pare_v1_aes256", "expect-read",
      "same shape with a 256-bit footer key",
      PQ_AES_GCM_V1, false, false, false, true, false, 1, 0, 3000, 1000 },
    { "plaintext_footer_columns", "expect-read",
      "signed plaintext footer (PAR1), id and secret encrypted with column keys, name/score/flag "
      "plaintext: the plaintext columns must read without keys",
      PQ_AES_GCM_V1, true, true, false, false, false, 1, 0, 3000, 1000 },
    { "uniform_gcm_pare_v1_multipage", "expect-fail",
      "several data pages per chunk: DuckDB uses page ordinal 0 for every page in the AAD, the "
      "spec counts data pages",
      PQ_AES_GCM_V1, false, false, false, false, false, 1, 250, 3000, 1000 },
    { "uniform_gcm_pare_v2", "expect-fail",
      "DATA_PAGE_V2: DuckDB reads v2 levels as plaintext (they are inside the encrypted module)",
      PQ_AES_GCM_V1, false, false, false, false, false, 2, 0, 3000, 1000 },
    { "uniform_gcm_pare_v1_nested", "expect-fail",
      "a LIST column: DuckDB fails on nested encrypted columns (also on parquet-mr's own "
      "uniform_encryption.parquet.encrypted)",
      PQ_AES_GCM_V1, false, false, false, false, true, 1, 0, 3000, 1000 },
    { "uniform_ctr_pare_v1", "expect-fail",
      "AES_GCM_CTR_V1 (CTR page bodies)",
      PQ_AES_GCM_CTR_V1, false, false, false, false, false, 1, 0, 3000, 1000 },
    { "uniform_gcm_pare_v1_aad", "expect-fail",
      "stored AAD prefix",
      PQ_AES_GCM_V1, false, false, true, false, false, 1, 0, 3000, 1000 },
    { "columns_gcm_pare_v1", "expect-fail",
      "per-column keys under an encrypted footer (DuckDB's encryption_config takes a footer key; "
      "column keys are not configurable)",
      PQ_AES_GCM_V1, false, true, false, false, false, 1, 0, 3000, 1000 },
};
#define NSHAPES (sizeof SHAPES / sizeof SHAPES[0])

static const char AAD_PREFIX[] = "parqd/crypt_gen";

/* ---- data: row r ----------------------------------------------------------- */

static int64_t v_id(uint64_t r) { return (int64_t)(r * 7919) - 1000000; }
static bool v_name_null(uint64_t r) { return r % 11 == 3; }
static double v_score(uint64_t r) { return (double)r * 0.25 - 3.5; }
static bool v_flag(uint64_t r) { return r % 3 == 0; }
static int64_t v_secret(uint64_t r) { return (int64_t)(r * r) ^ 0x5a5a; }
/* nested: null list for r % 13 == 0, else r % 4 elements r * 10 + j */

typedef struct file_out {
    pq_buf bytes;
    pq_schema *s;
} file_out;

static pq_schema *make_schema(const shape *sh, pq_err *err)
{
    pq_schema *s = pq_schema_new(NULL);
    static pq_column_opts dict, plain;
    pq_column_opts_default(&dict);
    dict.dictionary = 1;
    pq_column_opts_default(&plain);
    plain.dictionary = 0;
    pq_logical str = { .kind = PQ_LT_STRING };
    if (pq_schema_add_leaf(s, 0, &(pq_node_spec){ .name = "id", .repetition = PQ_REQUIRED,
            .type = PQ_INT64, .field_id = -1, .opts = &plain }, err) < 0 ||
        pq_schema_add_leaf(s, 0, &(pq_node_spec){ .name = "name", .repetition = PQ_OPTIONAL,
            .type = PQ_BYTE_ARRAY, .logical = str, .field_id = -1, .opts = &dict }, err) < 0 ||
        pq_schema_add_leaf(s, 0, &(pq_node_spec){ .name = "score", .repetition = PQ_REQUIRED,
            .type = PQ_DOUBLE, .field_id = -1, .opts = &plain }, err) < 0 ||
        pq_schema_add_leaf(s, 0, &(pq_node_spec){ .name = "flag", .repetition = PQ_REQUIRED,
            .type = PQ_BOOLEAN, .field_id = -1 }, err) < 0 ||
        pq_schema_add_leaf(s, 0, &(pq_node_spec){ .name = "secret", .repetition = PQ_REQUIRED,
            .type = PQ_INT64, .field_id = -1, .opts = &plain }, err) < 0) {
        pq_schema_destroy(s);
        return NULL;
    }
    if (sh->nested) {
        int list = pq_schema_add_list(s, 0, "nums", PQ_OPTIONAL, -1, err);
        if (list < 0 || pq_schema_add_leaf(s, list, &(pq_node_spec){ .name = "element",
                            .repetition = PQ_REQUIRED, .type = PQ_INT64, .field_id = -1 },
                            err) < 0) {
            pq_schema_destroy(s);
            return NULL;
        }
    }
    return s;
}

static int write_shape(const shape *sh, pq_crypto_key *kf, pq_crypto_key *kc1,
                       pq_crypto_key *kc2, pq_buf *out, pq_err *err)
{
    pq_schema *s = make_schema(sh, err);
    if (s == NULL)
        return err->code ? err->code : PQ_EINVAL;
    pq_column_key cols[2] = { { "id", kc1, "kc1" }, { "secret", kc2, "kc2" } };
    pq_encryption_opts e = {
        .algorithm = sh->alg, .plaintext_footer = sh->plain_footer, .footer_key = kf,
        .footer_key_id = "kf", .columns = sh->per_column ? cols : NULL,
        .n_columns = sh->per_column ? 2 : 0,
        .aad_prefix = sh->aad ? AAD_PREFIX : NULL,
        .aad_prefix_len = sh->aad ? strlen(AAD_PREFIX) : 0, .store_aad_prefix = true,
    };
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.encryption = &e;
    o.page_version = sh->page_version;
    o.codec = PQ_CODEC_SNAPPY;
    o.page_max_rows = sh->page_rows ? sh->page_rows : 1000000;
    o.row_group_max_rows = sh->rg_rows;
    pq_writer *w = NULL;
    int rc = pq_writer_open(&w, s, &o, pqt_mem_sink(out), err);
    for (uint64_t r = 0; rc == 0 && r < sh->rows; r++) {
        char name[32];
        snprintf(name, sizeof name, "name-%u", (unsigned)(r % 37));
        rc = pq_column_put_i64(pq_writer_column(w, 0), 0, v_id(r));
        if (rc == 0)
            rc = v_name_null(r) ? pq_column_put_null(pq_writer_column(w, 1), 0, 0)
                                : pq_column_put_bytes(pq_writer_column(w, 1), 0, name,
                                                      strlen(name));
        if (rc == 0)
            rc = pq_column_put_double(pq_writer_column(w, 2), 0, v_score(r));
        if (rc == 0)
            rc = pq_column_put_bool(pq_writer_column(w, 3), 0, v_flag(r));
        if (rc == 0)
            rc = pq_column_put_i64(pq_writer_column(w, 4), 0, v_secret(r));
        if (rc == 0 && sh->nested) {
            if (r % 13 == 0)
                rc = pq_column_put_null(pq_writer_column(w, 5), 0, 0);
            else if (r % 4 == 0)
                rc = pq_column_put_null(pq_writer_column(w, 5), 0, 1); /* empty list */
            for (uint64_t j = 0; rc == 0 && r % 13 != 0 && j < r % 4; j++)
                rc = pq_column_put_i64(pq_writer_column(w, 5), j ? 1 : 0, (int64_t)(r * 10 + j));
        }
        if (rc != 0)
            pq_err_set(err, rc, "row %" PRIu64 ": put failed", r);
        else
            rc = pq_writer_end_row(w, err);
    }
    if (rc == 0)
        rc = pq_writer_close(w, err);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
    return rc;
}

/* Reads the file back with pqcrypt and checks every value. */
static int self_check(const shape *sh, const pq_buf *file, pq_crypto_key *kf, pq_crypto_key *kc1,
                      pq_crypto_key *kc2, pq_err *err)
{
    pqc_key ids[3] = { { "kf", kf }, { "kc1", kc1 }, { "kc2", kc2 } };
    pqc_opts o = { .keys = ids, .n_keys = 3 };
    pqc_file f;
    int rc = pqc_open_mem(&f, file->data, file->len, sh->name, &o, err);
    if (rc != 0)
        return rc;
    const pqc_column *id = pqc_column_by_path(&f, "id"), *nm = pqc_column_by_path(&f, "name"),
                     *sc = pqc_column_by_path(&f, "score"), *fl = pqc_column_by_path(&f, "flag"),
                     *se = pqc_column_by_path(&f, "secret");
    size_t ni = 0;
    for (uint64_t r = 0; rc == 0 && r < sh->rows; r++) {
        size_t len;
        int64_t i64;
        double d;
        memcpy(&i64, pqc_value(id, r, &len), 8);
        if (i64 != v_id(r))
            rc = pq_err_set(err, PQ_EPARSE, "%s: id row %" PRIu64 " differs", sh->name, r);
        memcpy(&d, pqc_value(sc, r, &len), 8);
        if (d != v_score(r))
            rc = pq_err_set(err, PQ_EPARSE, "%s: score row %" PRIu64 " differs", sh->name, r);
        if ((*pqc_value(fl, r, &len) != 0) != v_flag(r))
            rc = pq_err_set(err, PQ_EPARSE, "%s: flag row %" PRIu64 " differs", sh->name, r);
        memcpy(&i64, pqc_value(se, r, &len), 8);
        if (i64 != v_secret(r))
            rc = pq_err_set(err, PQ_EPARSE, "%s: secret row %" PRIu64 " differs", sh->name, r);
        if ((nm->def[r] == 0) != v_name_null(r))
            rc = pq_err_set(err, PQ_EPARSE, "%s: name row %" PRIu64 " null differs", sh->name, r);
        if (!v_name_null(r)) {
            char want[32];
            snprintf(want, sizeof want, "name-%u", (unsigned)(r % 37));
            const uint8_t *p = pqc_value(nm, ni++, &len);
            if (len != strlen(want) || memcmp(p, want, len) != 0)
                rc = pq_err_set(err, PQ_EPARSE, "%s: name row %" PRIu64 " differs", sh->name, r);
        }
    }
    for (size_t c = 0; rc == 0 && c < f.ncols; c++)
        if (sh->page_rows == 0 && f.cols[c].data_pages != f.num_row_groups)
            rc = pq_err_set(err, PQ_EPARSE, "%s: %s has %zu data pages in %zu row groups, want "
                            "one per chunk", sh->name, f.cols[c].path, f.cols[c].data_pages,
                            f.num_row_groups);
    pqc_close(&f);
    return rc;
}

static void json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

static void manifest_file(FILE *fp, const shape *sh, bool first)
{
    fprintf(fp, "%s\n  {\"file\": \"%s.parquet\", \"shape\": ", first ? "" : ",", sh->name);
    json_str(fp, sh->name);
    fprintf(fp, ", \"duckdb\": \"%s\", \"reason\": ", sh->duckdb);
    json_str(fp, sh->reason);
    fprintf(fp, ", \"key\": \"%s\", \"mode\": \"%s %s%s%s v%d %s\"", sh->aes256 ? "footer256" : "footer",
            sh->alg == PQ_AES_GCM_V1 ? "AES_GCM_V1" : "AES_GCM_CTR_V1",
            sh->plain_footer ? "plaintext-footer" : "encrypted-footer",
            sh->per_column ? " column-keys(id:kc1,secret:kc2)" : " uniform",
            sh->aad ? " aad-prefix-stored" : "", sh->page_version,
            sh->page_rows ? "multi-page" : "one-page-per-chunk");
    fprintf(fp, ", \"nested\": %s, \"columns\": [\"id\", \"name\", \"score\", \"flag\", \"secret\"%s]",
            sh->nested ? "true" : "false", sh->nested ? ", \"nums\"" : "");
    fprintf(fp, ", \"plaintext_columns\": [%s]",
            sh->per_column ? "\"name\", \"score\", \"flag\"" : "");
    fprintf(fp, ",\n   \"rows\": [");
    for (uint64_t r = 0; r < sh->rows; r++) {
        fprintf(fp, "%s\n    [\"%" PRId64 "\", ", r ? "," : "", v_id(r));
        if (v_name_null(r))
            fprintf(fp, "null");
        else
            fprintf(fp, "\"name-%u\"", (unsigned)(r % 37));
        fprintf(fp, ", %.17g, %s, \"%" PRId64 "\"", v_score(r), v_flag(r) ? "true" : "false",
                v_secret(r));
        if (sh->nested) {
            if (r % 13 == 0) {
                fprintf(fp, ", null");
            } else {
                fprintf(fp, ", [");
                for (uint64_t j = 0; j < r % 4; j++)
                    fprintf(fp, "%s\"%" PRIu64 "\"", j ? ", " : "", r * 10 + j);
                fprintf(fp, "]");
            }
        }
        fprintf(fp, "]");
    }
    fprintf(fp, "]}");
}

int main(int argc, char **argv)
{
    const char *dir = pqt_tool_outdir(argc, argv, "crypt_gen");
    if (dir == NULL)
        return 2;
    const char *key256 = KEY_FOOTER256;
    pq_crypto_key kf, kf256, kc1, kc2;
    pq_err err = { 0 };
    if (pq_crypto_key_init(&kf, KEY_FOOTER, 16, "kf", &err) != 0 ||
        pq_crypto_key_init(&kf256, key256, 32, "kf256", &err) != 0 ||
        pq_crypto_key_init(&kc1, KEY_C1, 16, "kc1", &err) != 0 ||
        pq_crypto_key_init(&kc2, KEY_C2, 16, "kc2", &err) != 0) {
        fprintf(stderr, "crypt_gen: %s\n", err.msg);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    FILE *mf = fopen(path, "w");
    if (mf == NULL) {
        fprintf(stderr, "crypt_gen: cannot write %s\n", path);
        return 2;
    }
    fprintf(mf, "{\"keys\": {\"footer\": \"%s\", \"footer256\": \"%s\", \"wrong\": \"%s\", "
            "\"columns\": {\"kc1\": \"%s\", \"kc2\": \"%s\"}},\n \"files\": [", KEY_FOOTER, key256,
            KEY_WRONG, KEY_C1, KEY_C2);
    int failed = 0, written = 0;
    for (size_t i = 0; i < NSHAPES; i++) {
        const shape *sh = &SHAPES[i];
        pq_crypto_key *k = sh->aes256 ? &kf256 : &kf;
        pq_buf out;
        pq_buf_init(&out);
        int rc = write_shape(sh, k, &kc1, &kc2, &out, &err);
        if (rc == 0)
            rc = self_check(sh, &out, k, &kc1, &kc2, &err);
        FILE *fp = NULL;
        if (rc == 0) {
            snprintf(path, sizeof path, "%s/%s.parquet", dir, sh->name);
            fp = fopen(path, "wb");
            if (fp == NULL || fwrite(out.data, 1, out.len, fp) != out.len)
                rc = pq_err_set(&err, PQ_EIO, "cannot write %s", path);
            if (fp != NULL && fclose(fp) != 0)
                rc = pq_err_set(&err, PQ_EIO, "cannot write %s", path);
        }
        if (rc != 0) {
            fprintf(stderr, "crypt_gen: %s: %s\n", sh->name, err.msg);
            failed++;
        } else {
            printf("wrote %s.parquet (%zu bytes, %s; read back by pqcrypt, every value equal)\n",
                   sh->name, out.len, sh->reason);
            manifest_file(mf, sh, written++ == 0);
        }
        pq_buf_free(&out);
    }
    fprintf(mf, "\n]}\n");
    fclose(mf);
    pq_crypto_key_free(&kf);
    pq_crypto_key_free(&kf256);
    pq_crypto_key_free(&kc1);
    pq_crypto_key_free(&kc2);
    printf("crypt_gen: %zu written, %d failed\n", NSHAPES - (size_t)failed, failed);
    return failed ? 1 : 0;
}
