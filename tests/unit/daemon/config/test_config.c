/* test_config.c - the configuration file (daemon/config/config.c):
 * built-in defaults, an empty file, the writer options mapping, the spool,
 * limits, errors and metrics sections, and a missing file, with errors at
 * their exact FILE:LINE:COL. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_test.h"

static void assert_defaults(const cf_config *c)
{
    assert_int_equal(c->n_inputs, 2);
    assert_int_equal(c->inputs[0].type, CF_INPUT_TCP);
    assert_string_equal(c->inputs[0].listen.host, "127.0.0.1");
    assert_int_equal(c->inputs[0].listen.port, 5170);
    assert_int_equal(c->inputs[1].type, CF_INPUT_UNIX);
    assert_string_equal(c->inputs[1].path, "./parqd.sock");
    assert_int_equal(c->inputs[1].mode, -1);
    assert_string_equal(c->output.dir, "./out");
    assert_string_equal(c->output.path, "dt=%Y-%m-%d/%H%M%S-{host}-{pid}-{seq}.parquet");
    assert_int_equal(c->output.rotate.max_bytes, 256u << 20);
    assert_int_equal(c->output.rotate.max_rows, 0);
    assert_int_equal(c->output.rotate.max_age_ms, 300000);
    assert_int_equal(c->output.row_group.max_bytes, 64u << 20);
    assert_int_equal(c->output.row_group.max_rows, 1000000);
    assert_int_equal(c->output.row_group.max_age_ms, 60000);
    assert_int_equal(c->output.page_max_bytes, 1u << 20);
    assert_int_equal(c->output.page_version, 2);
    assert_true(c->output.crc);
    assert_int_equal(c->output.codec, PQ_CODEC_ZSTD);
    assert_int_equal(c->output.codec_level, 0);
    assert_int_equal(c->output.dictionary_max_bytes, 1u << 20);
    assert_true(c->output.statistics);
    assert_int_equal(c->output.stats_truncate, 64);
    assert_true(c->output.page_index);
    assert_false(c->output.encryption.enabled);
    assert_string_equal(c->spool.dir, "./spool");
    assert_int_equal(c->spool.sync, CF_SYNC_BATCH);
    assert_int_equal(c->limits.max_line_bytes, 1u << 20);
    assert_int_equal(c->limits.max_connections, 1024);
    assert_int_equal(c->limits.max_buffered_bytes, (size_t)512 << 20);
    assert_string_equal(c->errors.dead_letter, "./rejects.ndjson");
    assert_false(c->metrics.enabled);
    assert_non_null(c->schema);
    assert_int_equal(c->schema->n_columns, 2);
    assert_string_equal(c->schema->columns[0].name, "event");
    assert_string_equal(c->schema->columns[1].name, "_ingest_ts");
    assert_null(c->schema_file);
}

static void test_builtin_defaults(void **state)
{
    (void)state;
    cf_config c;
    pq_err err;
    assert_int_equal(cf_config_default(&c, &err), 0);
    assert_null(c.file);
    assert_defaults(&c);
    cf_config_free(&c);
}

static void test_empty_file_means_defaults(void **state)
{
    (void)state;
    cf_config c;
    load("# nothing configured\n", &c);
    assert_string_equal(c.file, "c.yaml");
    assert_defaults(&c);
    cf_config_free(&c);
}

static void test_writer_opts_from_config(void **state)
{
    (void)state;
    cf_config c;
    load("output:\n"
         "  row_group: {max_bytes: 8MiB, max_rows: 500}\n"
         "  page: {max_bytes: 64KiB, version: 1, crc: false}\n"
         "  compression: gzip\n"
         "  compression_level: 9\n"
         "  dictionary: {max_bytes: 256KiB}\n"
         "  statistics: {truncate: 16}\n"
         "  page_index: false\n", &c);
    pq_writer_opts o;
    cf_writer_opts(&c, &o);
    assert_int_equal(o.codec, PQ_CODEC_GZIP);
    assert_int_equal(o.codec_level, 9);
    assert_int_equal(o.page_version, 1);
    assert_false(o.crc);
    assert_int_equal(o.page_max_bytes, 65536);
    assert_int_equal(o.dictionary_max_bytes, 262144);
    assert_true(o.statistics);
    assert_int_equal(o.stats_truncate, 16);
    assert_int_equal(o.row_group_max_rows, 500);
    assert_int_equal(o.row_group_max_bytes, 8u << 20);
    assert_false(o.page_index);
    cf_config_free(&c);
}

static void test_spool_limits_errors_metrics(void **state)
{
    (void)state;
    cf_config c;
    load("spool: {dir: /var/lib/parqd/spool, sync: always}\n"
         "limits: {max_line_bytes: 64KiB, max_connections: 10, max_buffered_bytes: 1GiB}\n"
         "errors: {dead_letter: /var/lib/parqd/rejects.ndjson}\n"
         "metrics: {listen: \"0.0.0.0:9170\"}\n", &c);
    assert_string_equal(c.spool.dir, "/var/lib/parqd/spool");
    assert_int_equal(c.spool.sync, CF_SYNC_ALWAYS);
    assert_int_equal(c.limits.max_line_bytes, 65536);
    assert_int_equal(c.limits.max_connections, 10);
    assert_int_equal(c.limits.max_buffered_bytes, (size_t)1 << 30);
    assert_string_equal(c.errors.dead_letter, "/var/lib/parqd/rejects.ndjson");
    assert_true(c.metrics.enabled);
    assert_string_equal(c.metrics.listen.host, "0.0.0.0");
    assert_int_equal(c.metrics.listen.port, 9170);
    cf_config_free(&c);
}

static void test_spool_limits_errors_metrics_errors(void **state)
{
    (void)state;
    assert_error("spool: {sync: sometimes}\n",
                 "c.yaml:1:15: spool.sync: unknown value 'sometimes' (expected none, batch, always)");
    assert_error("limits: {max_line_bytes: 2MiB, max_buffered_bytes: 1MiB}\n",
                 "c.yaml:1:52: limits.max_buffered_bytes: smaller than max_line_bytes (2097152), "
                 "so one long line could never be buffered");
    assert_error("limits: {max_connections: 0}\n",
                 "c.yaml:1:27: limits.max_connections: 0 is out of range 1..1000000");
    assert_error("errors: {dead_letter: \"\"}\n",
                 "c.yaml:1:23: errors.dead_letter: expected a non-empty string, found ''");
    assert_error("metrics: {}\n",
                 "c.yaml:1:10: metrics: missing key 'listen' (e.g. \"127.0.0.1:9170\")");
    assert_error("metrics: {listen: 9170}\n",
                 "c.yaml:1:19: metrics.listen: '9170': expected host:port, e.g. 127.0.0.1:5170");
    assert_error("metric: {listen: \"a:1\"}\n",
                 "c.yaml:1:1: config: unknown key 'metric' (did you mean 'metrics'?)");
    assert_error("- a\n- b\n", "c.yaml:1:1: config: expected a mapping (key: value), found a list");
}

static void test_missing_config_file(void **state)
{
    (void)state;
    cf_config c;
    pq_err err = {0};
    assert_int_equal(cf_config_load("/nonexistent/parqd.yaml", &c, &err), PQ_EIO);
    cf_config_free(&c);
    assert_string_equal(err.msg, "/nonexistent/parqd.yaml: cannot open: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_defaults),
        cmocka_unit_test(test_empty_file_means_defaults),
        cmocka_unit_test(test_writer_opts_from_config),
        cmocka_unit_test(test_spool_limits_errors_metrics),
        cmocka_unit_test(test_spool_limits_errors_metrics_errors),
        cmocka_unit_test(test_missing_config_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
