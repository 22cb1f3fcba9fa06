/* test_s3_creds.c - S3 credentials (daemon/s3/s3_creds.c) from the
 * environment, a profile of the shared credentials file and key files
 * (refused when others may read them), with errors that never carry a
 * secret; and the client's endpoint rules (daemon/s3/s3_client.c): plain
 * http off loopback warns, a bad URL is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "s3_client.h"
#include "s3_creds.h"
#include "tmpdir.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_s3_creds.XXXXXX");
    assert_non_null(mkdtemp(dir));
    unsetenv("AWS_SESSION_TOKEN");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pqt_rm_rf(dir);
    return 0;
}

static void write_file(const char *name, const char *text, mode_t mode, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static void test_s3_creds_environment(void **state)
{
    (void)state;
    cf_s3 cfg = {.creds = CF_S3_ENV};
    s3_creds c;
    pq_err err = {0};
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-env", 1);
    setenv("AWS_SESSION_TOKEN", "tok", 1);
    assert_int_equal(s3_creds_load(&cfg, &c, &err), 0);
    assert_string_equal(c.access_key, "AKIDENV");
    assert_string_equal(c.secret_key, "s3cr3t-env");
    assert_string_equal(c.session_token, "tok");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    assert_int_equal(s3_creds_load(&cfg, &c, &err), PQ_EINVAL);
    assert_string_equal(err.msg, "S3 credentials: AWS_SECRET_ACCESS_KEY is not set in the "
                                 "environment (output.s3.credentials: env)");
    assert_string_equal(c.access_key, "");          /* wiped on failure */
}

static void test_s3_creds_profile_of_the_shared_file(void **state)
{
    (void)state;
    char path[128];
    write_file("credentials", "[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key"
               " = def-secret\n\n[ingest]\n# comment\naws_access_key_id=AKIDING\n"
               "aws_secret_access_key = ing-s3cret  \n[other]\naws_access_key_id = X\n",
               0600, path, sizeof path);
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    cf_s3 cfg = {.creds = CF_S3_PROFILE, .profile = "ingest"};
    s3_creds c;
    pq_err err = {0};
    assert_int_equal(s3_creds_load(&cfg, &c, &err), 0);
    assert_string_equal(c.access_key, "AKIDING");
    assert_string_equal(c.secret_key, "ing-s3cret");
    cfg.profile = "nope";
    assert_int_equal(s3_creds_load(&cfg, &c, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "no profile [nope] in"));
    cfg.profile = "other";
    assert_int_equal(s3_creds_load(&cfg, &c, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "lacks aws_secret_access_key"));
    assert_null(strstr(err.msg, "def-secret"));
    unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

static void test_s3_creds_key_files_private_to_their_owner(void **state)
{
    (void)state;
    char id[128], secret[128];
    write_file("id", "AKIDFILE\n", 0600, id, sizeof id);
    write_file("secret", "file-s3cret\n", 0640, secret, sizeof secret);
    cf_s3 cfg = {.creds = CF_S3_FILES, .key_id_file = id, .secret_file = secret};
    s3_creds c;
    pq_err err = {0};
    assert_int_equal(s3_creds_load(&cfg, &c, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "is readable by group or others (mode 0640); chmod 600 it"));
    assert_null(strstr(err.msg, "file-s3cret"));
    chmod(secret, 0600);
    assert_int_equal(s3_creds_load(&cfg, &c, &err), 0);
    assert_string_equal(c.access_key, "AKIDFILE");
    assert_string_equal(c.secret_key, "file-s3cret");
}

static void test_s3_client_endpoint_rules(void **state)
{
    (void)state;
    s3_creds c = {.access_key = "a", .secret_key = "b"};
    s3_client *cli;
    pq_err err = {0};
    bool warn = true;
    cf_s3 cfg = {.bucket = "logs", .prefix = "p/", .endpoint = "http://127.0.0.1:7480"};
    assert_int_equal(s3_client_new(&cli, &cfg, &c, &warn, &err), 0);
    assert_false(warn);
    char url[128];
    assert_int_equal(s3_client_url(cli, "p/k.parquet", url, sizeof url), 0);
    assert_string_equal(url, "s3://logs/p/k.parquet");
    s3_client_free(cli);
    cfg.endpoint = "http://10.1.2.3:7480";
    assert_int_equal(s3_client_new(&cli, &cfg, &c, &warn, &err), 0);
    assert_true(warn);
    s3_client_free(cli);
    cfg.endpoint = "https://s3.example.net";
    assert_int_equal(s3_client_new(&cli, &cfg, &c, &warn, &err), 0);
    assert_false(warn);
    s3_client_free(cli);
    cfg.endpoint = "http:///x";
    assert_int_equal(s3_client_new(&cli, &cfg, &c, &warn, &err), PQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_s3_creds_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_s3_creds_profile_of_the_shared_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_s3_creds_key_files_private_to_their_owner, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_s3_client_endpoint_rules, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
