/* test_config_s3.c - output.s3 (daemon/config/config_s3.c): values and
 * defaults, the three credential forms, and errors naming file, line,
 * column and key; with s3 the path template may not use {pid} / {uuid}
 * and defaults to one without {pid}. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "config_test.h"

static void test_config_s3_values_and_defaults(void **state)
{
    (void)state;
    cf_config c;
    load("output:\n  s3:\n    bucket: logs\n    prefix: \"prod/app/\"\n"
         "    endpoint: \"http://127.0.0.1:7480/\"\n    region: eu-west-1\n"
         "    path_style: true\n    credentials: profile ingest\n    part_size: 8MiB\n", &c);
    assert_non_null(c.output.s3);
    assert_string_equal(c.output.s3->bucket, "logs");
    assert_string_equal(c.output.s3->prefix, "prod/app/");
    assert_string_equal(c.output.s3->endpoint, "http://127.0.0.1:7480");
    assert_string_equal(c.output.s3->region, "eu-west-1");
    assert_true(c.output.s3->path_style);
    assert_int_equal(c.output.s3->creds, CF_S3_PROFILE);
    assert_string_equal(c.output.s3->profile, "ingest");
    assert_int_equal(c.output.s3->part_size, 8u << 20);
    assert_string_equal(c.output.path, "dt=%Y-%m-%d/%H%M%S-{host}-{seq}.parquet");
    cf_config_free(&c);
    load("output:\n  s3: {bucket: b-1.x}\n", &c);
    assert_string_equal(c.output.s3->prefix, "");
    assert_null(c.output.s3->endpoint);
    assert_int_equal(c.output.s3->creds, CF_S3_ENV);
    assert_int_equal(c.output.s3->part_size, 16u << 20);
    cf_config_free(&c);
    load("output:\n  s3: {bucket: bbb, credentials: {access_key_id_file: /k/id, "
         "secret_access_key_file: /k/secret}}\n", &c);
    assert_int_equal(c.output.s3->creds, CF_S3_FILES);
    assert_string_equal(c.output.s3->secret_file, "/k/secret");
    cf_config_free(&c);
    load("output:\n  dir: /x\n", &c);
    assert_null(c.output.s3);
    cf_config_free(&c);
}

static void test_config_s3_errors_name_the_place(void **state)
{
    (void)state;
    assert_error("output:\n  s3: {prefix: x/}\n", "c.yaml:2:7: output.s3: missing key 'bucket'");
    assert_error("output:\n  s3: {bucket: Logs_Big!}\n",
                 "c.yaml:2:16: output.s3.bucket: 'Logs_Big!' is not a bucket name (3 to 63 "
                 "characters of a-z, 0-9, '.', '-')");
    assert_error("output:\n  dir: /x\n  s3: {bucket: logs}\n",
                 "c.yaml:3:7: output: give either dir (local files) or s3 (object storage), "
                 "not both");
    assert_error("output:\n  s3: {bucket: logs, part_size: 1MiB}\n",
                 "c.yaml:2:33: output.s3.part_size: at least 5MiB (S3's smallest multipart "
                 "part)");
    assert_error("output:\n  s3: {bucket: logs, endpoint: \"ftp://h\"}\n",
                 "c.yaml:2:32: output.s3.endpoint: 'ftp://h' is not an http:// or https:// URL");
    assert_error("output:\n  s3: {bucket: logs, credentials: vault}\n",
                 "c.yaml:2:35: output.s3.credentials: expected env, 'profile NAME' or "
                 "{access_key_id_file: F, secret_access_key_file: F}");
    assert_error("output:\n  s3: {bucket: logs, credentials: {access_key_id_file: /a}}\n",
                 "c.yaml:2:35: output.s3.credentials: needs both access_key_id_file and "
                 "secret_access_key_file");
    assert_error("output:\n  s3: {bucket: logs, buckets: x}\n",
                 "c.yaml:2:22: output.s3: unknown key 'buckets' (did you mean 'bucket'?)");
    /* partitioned: 256 open files x 3 parts of 16MiB do not fit 512MiB */
    assert_error("output:\n  s3: {bucket: logs}\n  path: \"s={{svc}}/{seq}.parquet\"\n",
                 "c.yaml:2:3: output.max_open_files: 256 open S3 files may hold 3 parts of "
                 "output.s3.part_size (16 MiB) each, 12288 MiB, more than "
                 "limits.max_buffered_bytes (512 MiB): lower max_open_files or part_size, or "
                 "raise the limit");
    assert_error("output:\n  s3: {bucket: logs, part_size: 5MiB}\n"
                 "  path: \"s={{svc}}/{seq}.parquet\"\n  max_open_files: 40\n",
                 "c.yaml:4:19: output.max_open_files: 40 open S3 files may hold 3 parts of "
                 "output.s3.part_size (5 MiB) each, 600 MiB, more than "
                 "limits.max_buffered_bytes (512 MiB): lower max_open_files or part_size, or "
                 "raise the limit");
    cf_config c;
    load("output:\n  s3: {bucket: logs, part_size: 5MiB}\n"
         "  path: \"s={{svc}}/{seq}.parquet\"\n  max_open_files: 30\n", &c);
    assert_true(c.output.partitioned);
    cf_config_free(&c);
}

static void test_config_s3_path_may_not_differ_between_runs(void **state)
{
    (void)state;
    assert_error("output:\n  s3: {bucket: logs}\n  path: \"{host}-{pid}-{seq}.parquet\"\n",
                 "c.yaml:3:17: output.path: {pid} differs between runs, so with output.s3 a "
                 "file written again after a crash would land as a second object; use {host} "
                 "and {seq} (the file's first spool seq)");
    assert_error("output:\n  path: \"{uuid}.parquet\"\n  s3: {bucket: logs}\n",
                 "c.yaml:2:10: output.path: {uuid} differs between runs, so with output.s3 a "
                 "file written again after a crash would land as a second object; use {host} "
                 "and {seq} (the file's first spool seq)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_s3_values_and_defaults),
        cmocka_unit_test(test_config_s3_errors_name_the_place),
        cmocka_unit_test(test_config_s3_path_may_not_differ_between_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
