/* test_config_output.c - the `output:` section (daemon/config/
 * config_output.c): the path template checks, every output key, partial
 * settings keeping defaults, encryption, and their errors at FILE:LINE:COL. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_test.h"

/* output.path is parsed by daemon/output/pathtpl.c (its own tests cover
 * the grammar); here: its refusals land at the offending column, and the
 * 0x7F that the loader's old copy of the grammar let through. */
static void test_path_template_errors_at_their_column(void **state)
{
    (void)state;
    cf_config c;
    load("output:\n  path: \"dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet\"\n", &c);
    cf_config_free(&c);
    load("output:\n  path: 100%%/{seq}\n", &c);
    cf_config_free(&c);
    assert_error("output:\n  path: \"/abs/{seq}\"\n",
                 "c.yaml:2:10: output.path: absolute path; it must be relative to the output "
                 "directory");
    assert_error("output:\n  path: a/../{seq}\n",
                 "c.yaml:2:11: output.path: '..' would leave the output directory");
    assert_error("output:\n  path: \"a//{seq}\"\n",
                 "c.yaml:2:11: output.path: empty directory name in the path");
    assert_error("output:\n  path: \"%D/{seq}\"\n",
                 "c.yaml:2:10: output.path: unsupported % field (use %Y %m %d %H %M %S %j %F %s "
                 "... or %% for '%')");
    assert_error("output:\n  path: \"{seq}}\"\n",
                 "c.yaml:2:15: output.path: '}' without an opening '{'");
    assert_error("output:\n  path: \"a\\x7Fb/{seq}\"\n",
                 "c.yaml:2:9: output.path: control character in the path");
    assert_error("output:\n  path: \"a/{{x..y}}/{seq}\"\n",
                 "c.yaml:2:16: output.path: empty key in a dotted path (for keys containing dots "
                 "use a JSON Pointer like {{/id.orig_h}})");
}

static void test_output_values(void **state)
{
    (void)state;
    cf_config c;
    load("output:\n"
         "  dir: /var/lib/parqd/out\n"
         "  path: \"dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet\"\n"
         "  rotate:    {max_bytes: 256MiB, max_rows: 0, max_age: 5m}\n"
         "  row_group: {max_bytes: 64MiB,  max_rows: 1000000, max_age: 60s}\n"
         "  page:      {max_bytes: 1MiB, version: 2, crc: true}\n"
         "  compression: lz4_raw\n"
         "  statistics: false\n"
         "  max_open_files: 40\n", &c);
    assert_string_equal(c.output.dir, "/var/lib/parqd/out");
    assert_int_equal(c.output.max_open_files, 40);
    assert_string_equal(c.output.path, "dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet");
    assert_int_equal(c.output.rotate.max_age_ms, 300000);
    assert_int_equal(c.output.codec, PQ_CODEC_LZ4_RAW);
    assert_false(c.output.statistics);
    cf_config_free(&c);
}

static void test_output_partial_roll_keeps_defaults(void **state)
{
    (void)state;
    cf_config c;
    load("output:\n  rotate: {max_age: 1h}\n", &c);
    assert_int_equal(c.output.rotate.max_age_ms, 3600000);
    assert_int_equal(c.output.max_open_files, CF_MAX_OPEN_FILES_DEFAULT);
    assert_int_equal(c.output.rotate.max_bytes, 256u << 20);
    cf_config_free(&c);
}

static void test_output_errors(void **state)
{
    (void)state;
    assert_error("output:\n  rotate: {max_bytes: 256MB}\n",
                 "c.yaml:2:23: output.rotate.max_bytes: '256MB': unknown unit (expected B, KiB, "
                 "MiB, GiB or TiB; KB/MB/GB are ambiguous) (expected a size like 1048576, 64KiB, "
                 "256MiB, 2GiB)");
    assert_error("output:\n  row_group: {max_age: 60}\n",
                 "c.yaml:2:24: output.row_group.max_age: '60': missing unit (expected ms, s, m or "
                 "h, e.g. 60s) (expected a duration like 500ms, 60s, 5m, 1h30m)");
    assert_error("output:\n  row_group: {max_bytes: 0, max_rows: 0, max_age: 0}\n",
                 "c.yaml:2:14: output.row_group: at least one of max_bytes, max_rows and max_age "
                 "must be set, or rows would buffer without bound");
    assert_error("output:\n  page: {version: 3}\n",
                 "c.yaml:2:19: output.page.version: 3 is out of range 1..2");
    assert_error("output:\n  page: {max_bytes: 100}\n",
                 "c.yaml:2:21: output.page.max_bytes: at least 1KiB");
    assert_error("output:\n  compression: lz4\n",
                 "c.yaml:2:16: output.compression: unknown codec 'lz4' (expected none, snappy, "
                 "gzip, brotli, lz4_raw, zstd)");
    assert_error("output:\n  compression: gzip\n  compression_level: 10\n",
                 "c.yaml:3:22: output.compression_level: compression level 10 out of range for "
                 "gzip: use 1..9, or 0 for the default");
    assert_error("output:\n  path: \"x/{host}-{sec}.parquet\"\n",
                 "c.yaml:2:19: output.path: unknown placeholder '{sec}' (expected {host}, {pid}, {seq}, "
                 "{uuid} or {{FIELD}})");
    assert_error("output:\n  path: x/{host}.parquet\n",
                 "c.yaml:2:25: output.path: must contain {seq} or {uuid}, or files rotated within the same "
                 "period would collide");
    assert_error("output:\n  statistics: {truncate: 0}\n",
                 "c.yaml:2:26: output.statistics.truncate: 0 is out of range 1..2147483647");
    assert_error("output:\n  dictionary: {max_bytes: 0}\n",
                 "c.yaml:2:27: output.dictionary.max_bytes: must be at least 1");
    assert_error("output:\n  max_open_files: 0\n",
                 "c.yaml:2:19: output.max_open_files: 0 is out of range 1..65536");
    assert_error("output:\n  page_index: yes\n",
                 "c.yaml:2:15: output.page_index: expected true or false, found 'yes'");
    assert_error("output:\n  rotation: {max_age: 5m}\n",
                 "c.yaml:2:3: output: unknown key 'rotation' (did you mean 'rotate'?)");
}

static void test_encryption_full(void **state)
{
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%s"
             "output:\n"
             "  encryption:\n"
             "    algorithm: AES_GCM_CTR_V1\n"
             "    footer: plaintext\n"
             "    footer_key: {id: k0, file: /etc/parqd/keys/k0.hex}\n"
             "    columns:\n"
             "      - {column: user.email, key: {id: k1, file: /etc/parqd/keys/k1.hex}}\n"
             "      - {column: card, key: {id: k2, file: /etc/parqd/keys/k2.hex}}\n"
             "    aad_prefix: logs-prod\n"
             "    store_aad_prefix: false\n", enc_schema);
    cf_config c;
    load(yaml, &c);
    const cf_encryption *e = &c.output.encryption;
    assert_true(e->enabled);
    assert_int_equal(e->algorithm, PQ_AES_GCM_CTR_V1);
    assert_false(e->footer_encrypted);
    assert_string_equal(e->footer_key.id, "k0");
    assert_string_equal(e->footer_key.file, "/etc/parqd/keys/k0.hex");
    assert_int_equal(e->n_columns, 2);
    assert_string_equal(e->columns[0].column, "user.email");
    assert_string_equal(e->columns[0].key.file, "/etc/parqd/keys/k1.hex");
    assert_string_equal(e->aad_prefix, "logs-prod");
    assert_false(e->store_aad_prefix);
    /* the keys reached the schema's leaves */
    assert_string_equal(c.schema->leaves[0].opts.key_id, "k1");
    assert_null(c.schema->leaves[1].opts.key_id);
    assert_string_equal(c.schema->leaves[2].opts.key_id, "k2");
    cf_config_free(&c);
}

static void test_encryption_defaults(void **state)
{
    (void)state;
    cf_config c;
    load("output:\n  encryption: {footer_key: {id: k0, file: k0.hex}}\n", &c);
    assert_int_equal(c.output.encryption.algorithm, PQ_AES_GCM_V1);
    assert_true(c.output.encryption.footer_encrypted);
    assert_true(c.output.encryption.store_aad_prefix);
    assert_null(c.output.encryption.aad_prefix);
    cf_config_free(&c);
}

static void test_encryption_errors(void **state)
{
    (void)state;
    assert_error("output:\n  encryption: {algorithm: AES_GCM_V2, footer_key: {id: k, file: f}}\n",
                 "c.yaml:2:27: output.encryption.algorithm: unknown value 'AES_GCM_V2' (expected "
                 "AES_GCM_V1, AES_GCM_CTR_V1)");
    assert_error("output:\n  encryption: {footer: encrypted}\n",
                 "c.yaml:2:15: output.encryption: missing key 'footer_key' ({id: ..., file: ...})");
    assert_error("output:\n  encryption: {footer_key: {id: k}}\n",
                 "c.yaml:2:28: output.encryption.footer_key: needs both id and file");
    assert_error("output:\n  encryption: {footer_key: {id: k, file: f}, store_aad_prefix: false}\n",
                 "c.yaml:2:64: output.encryption.store_aad_prefix: false needs aad_prefix (there "
                 "is nothing to withhold)");
    assert_error("output:\n"
                 "  encryption:\n"
                 "    footer_key: {id: k0, file: a}\n"
                 "    columns:\n"
                 "      - {column: event, key: {id: k0, file: b}}\n",
                 "c.yaml:5:7: output.encryption.columns[0].key: id 'k0' is the footer key's id "
                 "but names another file");
}

/* output.time_from is checked once the schema is known (it may come
 * after output:, or from --schema): its errors point at its value. */
static void test_time_from(void **state)
{
    (void)state;
    cf_config c;
    load("output:\n  path: \"h=%H/{seq}\"\n  time_from: ts\n", &c);   /* default schema */
    assert_string_equal(c.output.time_from, "ts");
    assert_true(c.output.partitioned);
    cf_config_free(&c);
    load("output:\n  time_from: at\n"
         "schema:\n  columns:\n    - {name: at, type: \"timestamp(ns, utc)\", from: t}\n", &c);
    cf_config_free(&c);
    assert_error("output:\n  time_from: \"\"\n",
                 "c.yaml:2:14: output.time_from: expected a non-empty string, found ''");
    assert_error("output:\n  time_from: n\n"
                 "schema:\n  columns:\n    - {name: n, type: int64}\n",
                 "c.yaml:2:14: output.time_from: column 'n' is int64, not a timestamp read from "
                 "the record");
    assert_error("output:\n  time_from: t\n"
                 "schema:\n  columns:\n    - {name: n, type: int64}\n",
                 "c.yaml:2:14: output.time_from: no column 't' in the schema (time_from names a "
                 "timestamp column, or a field of the record when a column takes the rest, "
                 "from: \"*\")");
    assert_error("output:\n  time_from: \"a..b\"\n",
                 "c.yaml:2:14: output.time_from: 'a..b', offset 2: empty key in a dotted path "
                 "(for keys containing dots use a JSON Pointer like {{/id.orig_h}})");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_template_errors_at_their_column),
        cmocka_unit_test(test_output_values),
        cmocka_unit_test(test_output_partial_roll_keeps_defaults),
        cmocka_unit_test(test_output_errors),
        cmocka_unit_test(test_encryption_full),
        cmocka_unit_test(test_encryption_defaults),
        cmocka_unit_test(test_encryption_errors),
        cmocka_unit_test(test_time_from),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
