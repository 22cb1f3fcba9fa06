/* test_store.c - the output-store interface (daemon/output/store.h): the
 * local store behind it behaves as filesink.c does (hidden temporary,
 * no-replace publication, abort, the recovery question), the fault store
 * fails the nth call as asked, and the pipeline, given a store that
 * fails, fails the file and leaves nothing visible. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "filesink.h"
#include "pipeline.h"
#include "store.h"
#include "tmpdir.h"

static char root[64];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/test_store.XXXXXX");
    assert_non_null(mkdtemp(root));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pqt_rm_rf(root);
    return 0;
}

/* Entries in dir (hidden ones too). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void test_store_local_publishes_atomically_and_never_replaces(void **state)
{
    (void)state;
    st_store *s;
    st_file *f, *g;
    pq_err err = {0};
    char where[ST_WHERE_MAX], dir[128];
    bool yes = true;
    assert_int_equal(st_local_new(&s, root, &err), 0);
    assert_int_equal(st_open(s, "d/a.parquet", &f, &err), 0);
    pq_sink sink = st_sink(f);
    assert_int_equal(sink.write(sink.ctx, "PAR1", 4, &err), 0);
    assert_int_equal(st_finish(f, "1-2", &err), 0);
    snprintf(dir, sizeof dir, "%s/d", root);
    assert_int_equal(entries(dir), 1);                  /* only the hidden temporary */
    assert_int_equal(st_locate(s, "d/a.parquet", where, sizeof where, &err), 0);
    assert_int_equal(st_published(s, where, 2, &yes, &err), 0);
    assert_false(yes);
    assert_int_equal(st_publish(f, "d/a.parquet", &err), 0);
    assert_string_equal(st_where(f), where);
    assert_int_equal(st_bytes(f), 4);
    assert_int_equal(st_published(s, where, 2, &yes, &err), 0);
    assert_true(yes);
    /* the same name again: ST_EXISTS, the first file untouched */
    assert_int_equal(st_open(s, "d/a.parquet", &g, &err), 0);
    assert_int_equal(st_finish(g, NULL, &err), 0);
    assert_int_equal(st_publish(g, "d/a.parquet", &err), ST_EXISTS);
    assert_int_equal(st_abort(g, &err), 0);
    st_free(g);
    st_free(f);
    assert_int_equal(entries(dir), 1);
    struct stat st;
    assert_int_equal(stat(where, &st), 0);
    assert_int_equal(st.st_size, 4);
    st_destroy(s);
}

static void test_store_local_abort_and_unpublish_leave_nothing(void **state)
{
    (void)state;
    st_store *s;
    st_file *f;
    pq_err err = {0};
    assert_int_equal(st_local_new(&s, root, &err), 0);
    assert_int_equal(st_open(s, "x.parquet", &f, &err), 0);
    assert_int_equal(st_append(f, "abc", 3, &err), 0);
    st_free(f);                                         /* free aborts an open file */
    assert_int_equal(entries(root), 0);
    assert_int_equal(st_open(s, "y.parquet", &f, &err), 0);
    assert_int_equal(st_finish(f, NULL, &err), 0);
    assert_int_equal(st_publish(f, "y.parquet", &err), 0);
    assert_int_equal(entries(root), 1);
    assert_int_equal(st_unpublish(f, &err), 0);
    assert_int_equal(entries(root), 0);
    st_free(f);
    st_destroy(s);
}

static void test_store_fault_fails_the_nth_call_only(void **state)
{
    (void)state;
    st_store *local, *s;
    st_file *f;
    pq_err err = {0};
    assert_int_equal(st_local_new(&local, root, &err), 0);
    assert_int_equal(st_fault_new(&s, local, &err), 0);
    st_fault_set(s, ST_FAULT_APPEND, 2, PQ_EIO, "injected: device gone");
    assert_int_equal(st_open(s, "f.parquet", &f, &err), 0);
    assert_int_equal(st_append(f, "a", 1, &err), 0);
    assert_int_equal(st_append(f, "b", 1, &err), PQ_EIO);
    assert_string_equal(err.msg, "injected: device gone");
    assert_int_equal(st_append(f, "c", 1, &err), 0);
    assert_int_equal(st_fault_calls(s, ST_FAULT_APPEND), 3);
    assert_int_equal(st_bytes(f), 2);
    assert_int_equal(st_abort(f, &err), 0);
    st_free(f);
    assert_int_equal(entries(root), 0);
    st_destroy(s);
    st_destroy(local);
}

static void test_store_pipeline_with_a_failing_store_publishes_nothing(void **state)
{
    (void)state;
    cf_config cf;
    pq_writer_opts wopts;
    pq_err e = {0};
    st_store *local, *s;
    char out[96];
    snprintf(out, sizeof out, "%s/out", root);
    assert_int_equal(cf_config_default(&cf, &e), 0);
    cf_writer_opts(&cf, &wopts);
    assert_int_equal(st_local_new(&local, out, &e), 0);
    assert_int_equal(st_fault_new(&s, local, &e), 0);
    st_fault_set(s, ST_FAULT_PUBLISH, 1, PQ_EIO, "injected: the store refused the upload");
    pl_config pc = {.schema = cf.schema, .writer = &wopts, .out_dir = out, .store = s,
                    .path_template = "{seq}.parquet", .row_group = {.max_rows = 100},
                    .publish = PL_PUBLISH_EACH, .workers = 2, .first_seq = 1, .host = "t",
                    .max_line_bytes = 1 << 20};
    pl_callbacks cb = {0};
    pl_pipeline *p;
    assert_int_equal(pl_new(&p, &pc, &cb, &e), 0);
    pl_batch *b = pl_batch_get(p);
    pl_batch_reset(b, 1);
    for (uint64_t i = 1; i <= 50; i++)
        assert_int_equal(pl_batch_add(b, "t:1", "{\"a\":1}", 7, 7, false, 1700000000000000, i),
                         0);
    pl_submit(p, b);
    pl_close_files(p);
    assert_int_not_equal(pl_drain(p, &e), 0);
    assert_non_null(strstr(e.msg, "injected: the store refused the upload"));
    assert_true(pl_failed(p));
    pl_destroy(p);
    assert_int_equal(st_fault_calls(s, ST_FAULT_PUBLISH), 1);
    assert_int_equal(entries(out), 0);                  /* no file, no temporary */
    st_destroy(s);
    st_destroy(local);
    cf_config_free(&cf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_local_publishes_atomically_and_never_replaces,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_local_abort_and_unpublish_leave_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_store_fault_fails_the_nth_call_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_store_pipeline_with_a_failing_store_publishes_nothing,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
