/* test_filesink.c - output files (daemon/output/filesink.c): temporary name,
 * atomic publication without overwriting, abort, directory creation,
 * write errors, and the rotation policy.
 *
 * This test compiles the modules under test directly by including their
 * .c files (the objects win over the pq_daemon library's copies at link
 * time), so that filesink.c's FS_WRITE and FS_FSYNC hooks are pointed at
 * wrappers that can fail on demand, which simulates a full disk without needing one; a second test hits the real
 * kernel path with RLIMIT_FSIZE. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static long fail_write_after = -1;   /* bytes accepted before ENOSPC; -1 never */
static int fail_write_errno = ENOSPC;
static int fail_fsync = 0;
static long written_total = 0;

static ssize_t test_write(int fd, const void *p, size_t n)
{
    if (fail_write_after >= 0) {
        if (written_total >= fail_write_after) {
            errno = fail_write_errno;
            return -1;
        }
        if (written_total + (long)n > fail_write_after)
            n = (size_t)(fail_write_after - written_total);   /* a short write first */
    }
    ssize_t w = write(fd, p, n);
    if (w > 0)
        written_total += w;
    return w;
}

/* The paths fsynced, joined by '\n' (syncset.c calls from its threads). */
static pthread_mutex_t synced_mu = PTHREAD_MUTEX_INITIALIZER;
static char synced[8192];

static int test_fsync(int fd)
{
    if (fail_fsync) {
        errno = EIO;
        return -1;
    }
    char link[64], path[1024];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = '\0';
    pthread_mutex_lock(&synced_mu);
    strncat(synced, path, sizeof synced - strlen(synced) - 2);
    strcat(synced, "\n");
    pthread_mutex_unlock(&synced_mu);
    return fsync(fd);
}

#define FS_WRITE test_write
#define FS_FSYNC test_fsync
#include "../../../../daemon/output/filesink.c"
#include "../../../../daemon/output/syncset.c"
#include "../../../../daemon/output/pathtpl.c"
#include "../../../../daemon/output/pathtpl_render.c"
#include "tmpdir.h"

static char root[256];

/* Names in a directory, sorted, joined by ' '. */
static void list_dir(const char *dir, char *out, size_t n)
{
    struct dirent **names;
    int k = scandir(dir, &names, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < k; i++) {
        if (names[i]->d_name[0] != '.' || (strcmp(names[i]->d_name, ".") != 0 &&
                                           strcmp(names[i]->d_name, "..") != 0)) {
            if (out[0])
                strncat(out, " ", n - strlen(out) - 1);
            strncat(out, names[i]->d_name, n - strlen(out) - 1);
        }
        free(names[i]);
    }
    if (k >= 0)
        free(names);
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/test_filesink_%ld", t && *t ? t : "/tmp", (long)getpid());
    pqt_rm_rf(root);
    fail_write_after = -1;
    fail_write_errno = ENOSPC;
    fail_fsync = 0;
    written_total = 0;
    synced[0] = '\0';
    return mkdir(root, 0777);
}

static int teardown(void **state)
{
    (void)state;
    pqt_rm_rf(root);
    return 0;
}

static void read_file(const char *path, char *buf, size_t n)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t k = fread(buf, 1, n - 1, fp);
    buf[k] = '\0';
    fclose(fp);
}

static void write_str(fs_file *f, const char *s)
{
    pq_err err = {0};
    pq_sink sink = fs_sink(f);
    assert_int_equal(sink.write(sink.ctx, s, strlen(s), &err), 0);
}

static void test_filesink_temp_file_then_rename_creates_directories(void **state)
{
    (void)state;
    pq_err err = {0};
    fs_file f;
    assert_int_equal(fs_open(&f, root, "dt=2024-05-01/hour=12/h-1-000001.parquet", &err), 0);
    char dir[512], names[1024];
    snprintf(dir, sizeof dir, "%s/dt=2024-05-01/hour=12", root);
    list_dir(dir, names, sizeof names);
    char want[128];
    snprintf(want, sizeof want, ".h-1-000001.parquet.%ld-0.tmp", (long)getpid());
    assert_string_equal(names, want);                  /* hidden while written */
    write_str(&f, "hello ");
    write_str(&f, "parquet");
    assert_int_equal(f.bytes, 13);
    assert_int_equal(fs_finish(&f, &err), 0);
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, want);                  /* still hidden once finished */
    assert_int_equal(fs_commit(&f, "dt=2024-05-01/hour=12/h-1-000001.parquet", &err), 0);
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "h-1-000001.parquet");
    char path[1024], buf[64];
    snprintf(path, sizeof path, "%s/h-1-000001.parquet", dir);
    assert_string_equal(f.final_path, path);
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "hello parquet");
    assert_int_equal(fs_abort(&f, &err), 0);           /* no-op once committed */
    assert_int_equal(access(path, F_OK), 0);
    fs_free(&f);
    assert_int_equal(access(path, F_OK), 0);
}

static void test_filesink_commit_never_overwrites_an_existing_file(void **state)
{
    (void)state;
    pq_err err = {0};
    char path[512], buf[64], names[1024];
    snprintf(path, sizeof path, "%s/a-000001.parquet", root);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs("precious", fp);
    fclose(fp);
    fs_file f;
    assert_int_equal(fs_open(&f, root, "a-000001.parquet", &err), 0);
    write_str(&f, "new");
    assert_int_equal(fs_finish(&f, &err), 0);
    assert_int_equal(fs_commit(&f, "a-000001.parquet", &err), FS_EXISTS);
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "precious");
    assert_int_equal(fs_commit(&f, "a-000002.parquet", &err), 0);
    list_dir(root, names, sizeof names);
    assert_string_equal(names, "a-000001.parquet a-000002.parquet");
    snprintf(path, sizeof path, "%s/a-000002.parquet", root);
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "new");
    fs_free(&f);
}

static void test_filesink_two_open_files_for_the_same_name_get_distinct_temps(void **state)
{
    (void)state;
    pq_err err = {0};
    fs_file a, b;
    assert_int_equal(fs_open(&a, root, "x.parquet", &err), 0);
    assert_int_equal(fs_open(&b, root, "x.parquet", &err), 0);
    assert_string_not_equal(a.tmp_path, b.tmp_path);
    fs_free(&a);
    fs_free(&b);
    char names[256];
    list_dir(root, names, sizeof names);
    assert_string_equal(names, "");
}

static void test_filesink_abort_removes_the_temp_file(void **state)
{
    (void)state;
    pq_err err = {0};
    char names[1024];
    fs_file f;
    assert_int_equal(fs_open(&f, root, "sub/x.parquet", &err), 0);
    write_str(&f, "partial");
    assert_int_equal(fs_abort(&f, &err), 0);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sub", root);
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "");
    fs_free(&f);
    /* Also after finish, and through fs_free. */
    assert_int_equal(fs_open(&f, root, "sub/y.parquet", &err), 0);
    assert_int_equal(fs_finish(&f, &err), 0);
    fs_free(&f);
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "");
}

static void test_filesink_disk_full_fails_with_path_and_abort_cleans_up(void **state)
{
    (void)state;
    pq_err err = {0};
    fs_file f;
    assert_int_equal(fs_open(&f, root, "full.parquet", &err), 0);
    fail_write_after = 5;
    pq_sink sink = fs_sink(&f);
    assert_int_equal(sink.write(sink.ctx, "0123456789", 10, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, f.tmp_path));
    assert_non_null(strstr(err.msg, "disk full"));
    assert_non_null(strstr(err.msg, "after 5 bytes"));
    assert_int_equal(fs_abort(&f, &err), 0);
    char names[256];
    list_dir(root, names, sizeof names);
    assert_string_equal(names, "");
    fs_free(&f);
    /* EIO reads as such. */
    fail_write_after = 0;
    fail_write_errno = EIO;
    written_total = 0;
    assert_int_equal(fs_open(&f, root, "eio.parquet", &err), 0);
    sink = fs_sink(&f);
    assert_int_equal(sink.write(sink.ctx, "x", 1, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "Input/output error"));
    fs_free(&f);
}

static void test_filesink_fsync_failure_is_an_error(void **state)
{
    (void)state;
    pq_err err = {0};
    fs_file f;
    assert_int_equal(fs_open(&f, root, "s.parquet", &err), 0);
    write_str(&f, "x");
    fail_fsync = 1;
    assert_int_equal(fs_finish(&f, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "fsync"));
    fs_free(&f);
    char names[256];
    list_dir(root, names, sizeof names);
    assert_string_equal(names, "");
}

static void test_filesink_file_size_limit_hits_the_real_write_path(void **state)
{
    (void)state;
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    pq_err err = {0};
    fs_file f;
    assert_int_equal(fs_open(&f, root, "big.parquet", &err), 0);
    lim = old;
    lim.rlim_cur = 4096;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    static char block[10000];
    pq_sink sink = fs_sink(&f);
    int rc = sink.write(sink.ctx, block, sizeof block, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, PQ_EIO);
    assert_non_null(strstr(err.msg, "file too large"));
    assert_int_equal(f.bytes, 4096);
    fs_free(&f);
}

static void test_filesink_rejects_names_outside_the_directory(void **state)
{
    (void)state;
    pq_err err = {0};
    fs_file f;
    assert_int_equal(fs_open(&f, root, "../escape.parquet", &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "'..'"));
    assert_int_equal(fs_open(&f, root, "/etc/x.parquet", &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "absolute"));
    assert_int_equal(fs_open(&f, root, "a//b.parquet", &err), PQ_EINVAL);
    assert_int_equal(fs_open(&f, root, "ok.parquet", &err), 0);
    assert_int_equal(fs_finish(&f, &err), 0);
    assert_int_equal(fs_commit(&f, "x/../../y.parquet", &err), PQ_EINVAL);
    fs_free(&f);
}

static void test_filesink_a_file_in_the_way_of_a_directory_is_reported(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/dt=1", root);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fclose(fp);
    pq_err err = {0};
    fs_file f;
    assert_int_equal(fs_open(&f, root, "dt=1/x.parquet", &err), PQ_EIO);
    assert_non_null(strstr(err.msg, path));
}

/* The writer on a file sink produces a complete file under its final name. */
static void test_filesink_carries_a_parquet_writer(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_schema *s = pq_schema_new(NULL);
    pq_node_spec leaf = {.name = "n", .repetition = PQ_REQUIRED, .type = PQ_INT64,
                         .field_id = -1};
    assert_true(pq_schema_add_leaf(s, 0, &leaf, &err) >= 0);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    fs_file f;
    assert_int_equal(fs_open(&f, root, "w/data-000001.parquet", &err), 0);
    pq_writer *w;
    assert_int_equal(pq_writer_open(&w, s, &o, fs_sink(&f), &err), 0);
    for (int64_t i = 0; i < 1000; i++) {
        assert_int_equal(pq_column_put_i64(pq_writer_column(w, 0), 0, i), 0);
        assert_int_equal(pq_writer_end_row(w, &err), 0);
    }
    assert_int_equal(pq_writer_close(w, &err), 0);
    assert_int_equal(pq_writer_bytes_written(w), f.bytes);
    pq_writer_destroy(w);
    assert_int_equal(fs_finish(&f, &err), 0);
    assert_int_equal(fs_commit(&f, "w/data-000001.parquet", &err), 0);
    struct stat st;
    assert_int_equal(stat(f.final_path, &st), 0);
    assert_int_equal((uint64_t)st.st_size, f.bytes);
    char head[5] = {0}, tail[5] = {0};
    FILE *fp = fopen(f.final_path, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(head, 1, 4, fp), 4);
    fseek(fp, -4, SEEK_END);
    assert_int_equal(fread(tail, 1, 4, fp), 4);
    fclose(fp);
    assert_string_equal(head, "PAR1");
    assert_string_equal(tail, "PAR1");
    fs_free(&f);
    pq_schema_destroy(s);
}

static void test_filesink_rotation_policy(void **state)
{
    (void)state;
    fs_rotate r = {.max_bytes = 1000, .max_rows = 10, .max_age_ms = 60000};
    fs_usage u = {0};
    assert_false(fs_rotate_due(&r, &u));
    u.age_ms = 120000;
    assert_false(fs_rotate_due(&r, &u));                 /* empty: never */
    u = (fs_usage){.rows_buffered = 9, .bytes_written = 4};
    assert_false(fs_rotate_due(&r, &u));
    u.rows_buffered = 10;
    assert_true(fs_rotate_due(&r, &u));                  /* rows: exact */
    u = (fs_usage){.rows_written = 3, .rows_buffered = 2, .bytes_written = 600,
                   .bytes_buffered = 399};
    assert_false(fs_rotate_due(&r, &u));
    u.bytes_buffered = 400;
    assert_true(fs_rotate_due(&r, &u));                  /* written + buffered */
    u = (fs_usage){.rows_buffered = 1, .age_ms = 59999};
    assert_false(fs_rotate_due(&r, &u));
    u.age_ms = 60000;
    assert_true(fs_rotate_due(&r, &u));
    fs_rotate none = {0};
    u = (fs_usage){.rows_written = UINT64_MAX / 2, .bytes_written = UINT64_MAX / 2,
                   .age_ms = UINT64_MAX / 2};
    assert_false(fs_rotate_due(&none, &u));
}

/* Whether synced holds the line dir (root's real path + rel). */
static bool was_synced(const char *rel)
{
    char real[PATH_MAX], line[PATH_MAX + 64];
    assert_non_null(realpath(root, real));
    snprintf(line, sizeof line, "\n%s%s\n", real, rel);
    char all[sizeof synced + 1];
    snprintf(all, sizeof all, "\n%s", synced);
    return strstr(all, line) != NULL;
}

static size_t n_synced(void)
{
    size_t n = 0;
    for (const char *c = synced; *c; c++)
        n += *c == '\n';
    return n;
}

/* On a file system without a journal a new directory's entry is durable
 * only once its parent is fsynced: a published partition must not lose
 * its directory in a crash. */
static void test_filesink_commit_syncs_the_parents_of_new_directories(void **state)
{
    (void)state;
    pq_err err = {0};
    fs_file f;
    assert_int_equal(fs_open(&f, root, "a/b/f.parquet", &err), 0);
    write_str(&f, "x");
    assert_int_equal(fs_finish(&f, &err), 0);
    assert_int_equal(n_synced(), 1);                   /* the file */
    synced[0] = '\0';
    assert_int_equal(fs_commit(&f, "a/b/f.parquet", &err), 0);
    assert_true(was_synced("/a/b"));                   /* the rename */
    assert_true(was_synced("/a"));                     /* b's entry */
    assert_true(was_synced(""));                       /* a's entry */
    assert_int_equal(n_synced(), 3);
    fs_free(&f);

    /* Nothing new to make durable but the rename's directory. */
    synced[0] = '\0';
    assert_int_equal(fs_open(&f, root, "a/b/g.parquet", &err), 0);
    assert_int_equal(fs_finish(&f, &err), 0);
    assert_int_equal(fs_commit(&f, "a/b/g.parquet", &err), 0);
    assert_true(was_synced("/a/b"));
    assert_int_equal(n_synced(), 2);                   /* and the file, at finish */
    fs_free(&f);
}

/* parqd convert's deferred durability: no fsync at finish or commit; the
 * syncset does the same ones later, each once. */
static void test_filesink_deferred_sync_leaves_the_fsyncs_to_a_syncset(void **state)
{
    (void)state;
    pq_err err = {0};
    fs_syncset files, dirs;
    fs_syncset_init(&files);
    fs_syncset_init(&dirs);
    fs_file f[2];
    const char *names[2] = {"t=1/x/f.parquet", "t=1/x/g.parquet"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fs_open(&f[i], root, names[i], &err), 0);
        f[i].defer_sync = true;
        write_str(&f[i], "data");
        assert_int_equal(fs_finish(&f[i], &err), 0);
        assert_int_equal(fs_syncset_add(&files, f[i].tmp_path, &err), 0);
    }
    assert_int_equal(n_synced(), 0);
    assert_int_equal(fs_syncset_sync(&files, false, &err), 0);
    assert_int_equal(n_synced(), 2);                   /* both temporary files */
    assert_int_equal(files.n, 0);
    synced[0] = '\0';
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fs_commit(&f[i], names[i], &err), 0);
        assert_int_equal(fs_dirs_to_sync(&f[i], &dirs, &err), 0);
    }
    assert_int_equal(n_synced(), 0);
    assert_int_equal(fs_syncset_sync(&dirs, true, &err), 0);
    assert_true(was_synced("/t=1/x"));
    assert_true(was_synced("/t=1"));
    assert_true(was_synced(""));
    assert_int_equal(n_synced(), 3);                   /* each directory once */
    for (int i = 0; i < 2; i++)
        fs_free(&f[i]);
    fs_syncset_free(&files);
    fs_syncset_free(&dirs);
}

static void test_filesink_syncset_failure_names_the_path(void **state)
{
    (void)state;
    pq_err err = {0};
    fs_syncset s;
    fs_syncset_init(&s);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/missing", root);
    assert_int_equal(fs_syncset_add(&s, dir, &err), 0);
    assert_int_equal(fs_syncset_sync(&s, true, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "missing"));
    assert_int_equal(s.n, 0);
    assert_int_equal(fs_syncset_add(&s, root, &err), 0);
    fail_fsync = 1;
    assert_int_equal(fs_syncset_sync(&s, true, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "fsync failed"));
    fs_syncset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_filesink_temp_file_then_rename_creates_directories,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_filesink_commit_never_overwrites_an_existing_file,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_filesink_two_open_files_for_the_same_name_get_distinct_temps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filesink_abort_removes_the_temp_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_filesink_disk_full_fails_with_path_and_abort_cleans_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filesink_fsync_failure_is_an_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_filesink_file_size_limit_hits_the_real_write_path,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_filesink_rejects_names_outside_the_directory,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_filesink_a_file_in_the_way_of_a_directory_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filesink_carries_a_parquet_writer, setup, teardown),
        cmocka_unit_test(test_filesink_rotation_policy),
        cmocka_unit_test_setup_teardown(test_filesink_commit_syncs_the_parents_of_new_directories,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_filesink_deferred_sync_leaves_the_fsyncs_to_a_syncset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filesink_syncset_failure_names_the_path, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
