/* test_autoshred.c - automatic Variant shredding in the write pipeline
 * (daemon/output/autoshred.c) with encryption and bloom filters: the default
 * schema's `event`, encrypted with a column key, lands in files whose
 * shredded leaves carry the same key, whose shredded string field with
 * many distinct values has a bloom filter (the automatic rule of typed
 * string columns), whose key-value metadata and on_shred report name the
 * chosen tree, and whose typed values are the records' values, in both row
 * groups. Files are
 * read with the test-side decrypting reader (tests/support/pqcrypt). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "config.h"
#include "keyring.h"
#include "pipeline.h"
#include "pqcrypt.h"
#include "tmpdir.h"

/* The first row group (18000 rows) is larger than the decision's sample
 * (16384 rows spread over it, autoshred.c); the second (2000 rows) is
 * converted with the layout the first chose. */
#define ROWS 20000
#define RG_ROWS 18000

typedef struct fixture {
    char dir[64];
    cf_config cf;
    kr_keyring keys;
    pq_writer_opts wopts;
    dl_file dl;
    char layout[4096];
    int shred_reports;
    char published[512];
} fixture;

/* Mode 0600: key files readable by others are refused (daemon/config/keyfile.c). */
static void write_file(const char *dir, const char *name, const char *text)
{
    assert_int_equal(pqt_write_file(dir, name, text, 0600), 0);
}

static void on_shred(void *user, const char *file, uint64_t first_seq, const char *column,
                     const char *layout)
{
    fixture *f = user;
    (void)file;
    assert_int_equal(first_seq, 1);
    assert_string_equal(column, "event");
    snprintf(f->layout, sizeof f->layout, "%s", layout);
    f->shred_reports++;
}

static void on_published(void *user, const char *path, uint64_t end, uint64_t rows,
                         uint64_t bytes)
{
    fixture *f = user;
    (void)end;
    (void)bytes;
    assert_int_equal(rows, ROWS);
    snprintf(f->published, sizeof f->published, "%s", path);
}

static void run_pipeline(fixture *f)
{
    pq_err e = {0};
    char out[96];
    snprintf(out, sizeof out, "%s/out", f->dir);
    pl_config pc = {.schema = f->cf.schema, .writer = &f->wopts, .out_dir = out,
                    .path_template = "{seq}.parquet", .row_group = {.max_rows = RG_ROWS},
                    .publish = PL_PUBLISH_EACH, .dead_letters = &f->dl, .workers = 2,
                    .first_seq = 1, .host = "test", .max_line_bytes = 1 << 20};
    pl_callbacks cb = {.user = f, .on_published = on_published, .on_shred = on_shred};
    pl_pipeline *p = NULL;
    if (pl_new(&p, &pc, &cb, &e) != 0)
        fail_msg("pl_new: %s", e.msg);
    for (uint64_t id = 0; id < ROWS;) {
        pl_batch *b = pl_batch_get(p);
        pl_batch_reset(b, id + 1);
        for (int k = 0; k < 250; k++, id++) {
            char line[128];
            int len = snprintf(line, sizeof line, "{\"user\":\"u%" PRIu64 "\",\"n\":%" PRIu64
                               ",\"o\":{\"s\":\"x\"}}", id, id % 100);
            assert_int_equal(pl_batch_add(b, "test", line, (size_t)len, (uint64_t)len, false,
                                          1700000000000000, id + 1), 0);
        }
        pl_submit(p, b);
    }
    pl_close_files(p);
    if (pl_drain(p, &e) != 0)
        fail_msg("drain: %s", e.msg);
    pl_destroy(p);
}

static const pqc_column *column(const pqc_file *pf, const char *path)
{
    for (size_t i = 0; i < pf->ncols; i++)
        if (strcmp(pf->cols[i].path, path) == 0)
            return &pf->cols[i];
    fail_msg("no column %s", path);
    return NULL;
}

static void test_autoshred_encrypted_and_bloom(void **state)
{
    (void)state;
    fixture f = {0};
    snprintf(f.dir, sizeof f.dir, "/tmp/test_autoshred.XXXXXX");
    assert_non_null(mkdtemp(f.dir));
    write_file(f.dir, "k0.hex", "000102030405060708090a0b0c0d0e0f\n");
    write_file(f.dir, "k1.hex", "101112131415161718191a1b1c1d1e1f\n");
    char cfg[1024];
    snprintf(cfg, sizeof cfg,
             "output:\n  encryption:\n    footer: plaintext\n"
             "    footer_key: {id: k0, file: %s/k0.hex}\n"
             "    columns:\n      - {column: event, key: {id: k1, file: %s/k1.hex}}\n",
             f.dir, f.dir);
    pq_err e = {0};
    if (cf_config_load_buffer("test.yaml", cfg, strlen(cfg), &f.cf, &e) != 0 ||
        kr_keyring_load(&f.keys, &f.cf, &e) != 0)
        fail_msg("config: %s", e.msg);
    cf_writer_opts(&f.cf, &f.wopts);
    f.wopts.encryption = kr_keyring_opts(&f.keys);
    char path[128];
    snprintf(path, sizeof path, "%s/rejects.ndjson", f.dir);
    assert_int_equal(dl_init(&f.dl, path, DL_SYNC_CLOSE, &e), 0);

    run_pipeline(&f);
    assert_int_equal(f.shred_reports, 1);
    assert_string_equal(f.layout, "{\"n\":\"int8\",\"o\":{\"s\":\"string\"},\"user\":\"string\"}");

    const pq_encryption_opts *eo = kr_keyring_opts(&f.keys);
    pqc_key keys[] = {{"k0", eo->footer_key}, {"k1", eo->columns[0].key}};
    pqc_opts o = {.keys = keys, .n_keys = 2};
    pqc_file pf;
    if (pqc_open(&pf, f.published, &o, &e) != 0)
        fail_msg("%s: %s", f.published, e.msg);
    assert_int_equal(pf.num_rows, ROWS);
    assert_int_equal(pf.num_row_groups, 2);
    size_t typed = 0;
    for (size_t i = 0; i < pf.ncols; i++) {
        const pqc_column *c = &pf.cols[i];
        bool in_event = strncmp(c->path, "event.", 6) == 0;
        typed += strncmp(c->path, "event.typed_value.", 18) == 0;
        /* every leaf of the encrypted column, shredded ones too, has its key */
        assert_int_equal(c->encrypted, in_event);
        if (in_event)
            assert_string_equal(c->key_id, "k1");
    }
    assert_int_equal(typed, 7); /* n, o.s, user: value + typed_value; o: value */
    const pqc_column *user = column(&pf, "event.typed_value.user.typed_value");
    const pqc_column *n = column(&pf, "event.typed_value.n.typed_value");
    /* typed values are the records' values */
    assert_int_equal(user->values.n, ROWS);
    for (size_t r = 0; r < ROWS; r++) {
        char want[32];
        int len = snprintf(want, sizeof want, "u%zu", r);
        assert_int_equal(user->values.off[r + 1] - user->values.off[r], len);
        assert_memory_equal(user->values.heap + user->values.off[r], want, (size_t)len);
    }
    /* bloom filters: the automatic rule of typed string columns (>= 1024
     * distinct values in the row group): yes for user, no for n */
    for (size_t g = 0; g < 2; g++) {
        assert_non_null(user->blooms[g].bitset);
        assert_null(n->blooms[g].bitset);
        char probe[16];
        int len = snprintf(probe, sizeof probe, "u%zu", g * RG_ROWS + 7);
        assert_true(pqc_bloom_check(&user->blooms[g], XXH64(probe, (size_t)len, 0)));
    }
    pqc_close(&pf);
    dl_free(&f.dl);
    kr_keyring_free(&f.keys);
    cf_config_free(&f.cf);
    pqt_rm_rf(f.dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_autoshred_encrypted_and_bloom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
