/* test_config.c - the configuration (schema/config.c) and its value
 * parsers (schema/units.c): built-in defaults, every section and key,
 * schema paths and inline schemas, encryption key binding, the writer
 * options mapping, size/duration/listen/path-template edge cases, and
 * errors with their exact FILE:LINE:COL. */
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

#include "config.h"
#include "tmpdir.h"
#include "units.h"

/* ---- helpers ------------------------------------------------------------ */

static void load(const char *yaml, cf_config *c)
{
    pq_err err = {0};
    int rc = cf_config_load_buffer("c.yaml", yaml, strlen(yaml), c, &err);
    if (rc != 0)
        print_message("unexpected error: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void assert_error(const char *yaml, const char *expected)
{
    cf_config c;
    pq_err err = {0};
    int rc = cf_config_load_buffer("c.yaml", yaml, strlen(yaml), &c, &err);
    cf_config_free(&c);
    assert_int_equal(rc, PQ_EINVAL);
    if (strcmp(err.msg, expected) != 0)
        print_message("got:      %s\nexpected: %s\n", err.msg, expected);
    assert_string_equal(err.msg, expected);
}

static uint64_t size_of(const char *s)
{
    uint64_t v = 12345;
    const char *why = NULL;
    int rc = un_parse_size(s, &v, &why);
    if (rc != 0)
        print_message("'%s': %s\n", s, why);
    assert_int_equal(rc, 0);
    return v;
}

static const char *size_error(const char *s)
{
    uint64_t v = 0;
    const char *why = NULL;
    assert_int_equal(un_parse_size(s, &v, &why), PQ_EINVAL);
    assert_non_null(why);
    return why;
}

static uint64_t ms_of(const char *s)
{
    uint64_t v = 12345;
    const char *why = NULL;
    int rc = un_parse_duration_ms(s, &v, &why);
    if (rc != 0)
        print_message("'%s': %s\n", s, why);
    assert_int_equal(rc, 0);
    return v;
}

static const char *duration_error(const char *s)
{
    uint64_t v = 0;
    const char *why = NULL;
    assert_int_equal(un_parse_duration_ms(s, &v, &why), PQ_EINVAL);
    assert_non_null(why);
    return why;
}

/* ---- sizes and durations ---------------------------------------------- */

static void test_size_plain_and_binary_units(void **state)
{
    (void)state;
    assert_int_equal(size_of("0"), 0);
    assert_int_equal(size_of("1"), 1);
    assert_int_equal(size_of("1048576"), 1048576);
    assert_int_equal(size_of("1B"), 1);
    assert_int_equal(size_of("1KiB"), 1024);
    assert_int_equal(size_of("64MiB"), 64u << 20);
    assert_int_equal(size_of("64 MiB"), 64u << 20);
    assert_int_equal(size_of("64mib"), 64u << 20);
    assert_int_equal(size_of("2GiB"), (uint64_t)2 << 30);
    assert_int_equal(size_of("3TiB"), (uint64_t)3 << 40);
    assert_int_equal(size_of("18446744073709551615"), UINT64_MAX);
    assert_int_equal(size_of("16777215TiB"), (uint64_t)16777215 << 40);
}

static void test_size_rejects_overflow(void **state)
{
    (void)state;
    assert_string_equal(size_error("18446744073709551616"), "number too large");
    assert_string_equal(size_error("16777216TiB"), "size too large");
    assert_string_equal(size_error("99999999999999999999999GiB"), "number too large");
}

static void test_size_rejects_garbage_and_ambiguous_units(void **state)
{
    (void)state;
    assert_string_equal(size_error(""), "expected a whole number");
    assert_string_equal(size_error("abc"), "expected a whole number");
    assert_string_equal(size_error("-1"), "negative values are not allowed");
    assert_string_equal(size_error("+1"), "write the number without a sign");
    assert_string_equal(size_error("1.5MiB"), "fractions are not allowed (use a smaller unit)");
    const char *ambiguous = "unknown unit (expected B, KiB, MiB, GiB or TiB; KB/MB/GB are ambiguous)";
    assert_string_equal(size_error("64MB"), ambiguous);
    assert_string_equal(size_error("1K"), ambiguous);
    assert_string_equal(size_error("12abc"), ambiguous);
    assert_string_equal(size_error("1 KiB x"), ambiguous);
}

static void test_duration_units(void **state)
{
    (void)state;
    assert_int_equal(ms_of("0"), 0);
    assert_int_equal(ms_of("0s"), 0);
    assert_int_equal(ms_of("250ms"), 250);
    assert_int_equal(ms_of("60s"), 60000);
    assert_int_equal(ms_of("5m"), 300000);
    assert_int_equal(ms_of("2h"), 7200000);
    assert_int_equal(ms_of("1h30m"), 5400000);
    assert_int_equal(ms_of("1h 30m 15s"), 5415000);
    assert_int_equal(ms_of("1m500ms"), 60500);
}

static void test_duration_rejects_bad_input(void **state)
{
    (void)state;
    assert_string_equal(duration_error("5"), "missing unit (expected ms, s, m or h, e.g. 60s)");
    assert_string_equal(duration_error("5d"), "unknown unit (expected ms, s, m or h)");
    assert_string_equal(duration_error("-1s"), "negative values are not allowed");
    assert_string_equal(duration_error("1.5s"), "fractions are not allowed (use a smaller unit)");
    assert_string_equal(duration_error(""), "expected a duration like 500ms, 60s, 5m or 1h");
    assert_string_equal(duration_error("s"), "expected a whole number");
    assert_string_equal(duration_error("18446744073709551615h"), "duration too large");
    assert_string_equal(duration_error("99999999999999999999ms"), "number too large");
}

static void test_size_and_duration_formatting(void **state)
{
    (void)state;
    char b[32];
    un_format_size(64u << 20, b, sizeof b);
    assert_string_equal(b, "64MiB");
    un_format_size(1000, b, sizeof b);
    assert_string_equal(b, "1000");
    un_format_size(0, b, sizeof b);
    assert_string_equal(b, "0");
    un_format_duration_ms(5400000, b, sizeof b);
    assert_string_equal(b, "1h30m");
    un_format_duration_ms(1500, b, sizeof b);
    assert_string_equal(b, "1500ms");
    un_format_duration_ms(60000, b, sizeof b);
    assert_string_equal(b, "1m");
}

/* ---- listen addresses and path templates ---------------------------------- */

static void test_listen_forms(void **state)
{
    (void)state;
    cf_addr a = {0};
    const char *why;
    assert_int_equal(cf_parse_listen("127.0.0.1:5170", &a, &why), 0);
    assert_string_equal(a.host, "127.0.0.1");
    assert_int_equal(a.port, 5170);
    assert_int_equal(cf_parse_listen("[::1]:9", &a, &why), 0);
    assert_string_equal(a.host, "::1");
    assert_int_equal(a.port, 9);
    assert_int_equal(cf_parse_listen("localhost:65535", &a, &why), 0);
    assert_string_equal(a.host, "localhost");
    free(a.host);
}

static void test_listen_errors(void **state)
{
    (void)state;
    cf_addr a = {0};
    const char *why;
    assert_int_equal(cf_parse_listen("::1:5170", &a, &why), PQ_EINVAL);
    assert_string_equal(why, "IPv6 addresses need brackets, e.g. [::1]:5170");
    assert_int_equal(cf_parse_listen("127.0.0.1", &a, &why), PQ_EINVAL);
    assert_string_equal(why, "expected host:port, e.g. 127.0.0.1:5170");
    assert_int_equal(cf_parse_listen(":5170", &a, &why), PQ_EINVAL);
    assert_string_equal(why, "missing host (use 0.0.0.0 or [::] for every interface)");
    assert_int_equal(cf_parse_listen("host:0", &a, &why), PQ_EINVAL);
    assert_string_equal(why, "port must be a number from 1 to 65535");
    assert_int_equal(cf_parse_listen("host:65536", &a, &why), PQ_EINVAL);
    assert_int_equal(cf_parse_listen("host:", &a, &why), PQ_EINVAL);
    assert_string_equal(why, "missing port after ':'");
    assert_int_equal(cf_parse_listen("[zz]:1", &a, &why), PQ_EINVAL);
    assert_string_equal(why, "not an IPv6 address inside [ ]");
    assert_int_equal(cf_parse_listen("a b:1", &a, &why), PQ_EINVAL);
    assert_null(a.host);
}

static void assert_path_error(const char *tmpl, size_t off, const char *why_expected)
{
    size_t o;
    const char *why;
    assert_int_equal(cf_path_check(tmpl, &o, &why), PQ_EINVAL);
    assert_string_equal(why, why_expected);
    assert_int_equal(o, off);
}

static void test_path_template_checks(void **state)
{
    (void)state;
    size_t off;
    const char *why;
    assert_int_equal(cf_path_check("dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet", &off, &why), 0);
    assert_int_equal(cf_path_check("{seq}.parquet", &off, &why), 0);
    assert_int_equal(cf_path_check("100%%/{seq}", &off, &why), 0);
    assert_int_equal(cf_path_check("dt=%F/{host}-{uuid}.parquet", &off, &why), 0);
    assert_path_error("{host}-{pod}-{seq}", 7, "unknown placeholder (expected {host}, {pid}, {seq} or {uuid})");
    assert_path_error("{host}.parquet", 14, "must contain {seq} or {uuid}, or files rotated within the same "
                      "period would collide");
    assert_path_error("/abs/{seq}", 0, "must be relative to output.dir");
    assert_path_error("a/../{seq}", 2, "'..' would leave output.dir");
    assert_path_error("a//{seq}", 1, "empty directory name in the path");
    assert_path_error("%D/{seq}", 0, "unsupported % field (use %Y %m %d %H %M %S %j %F %s ... or "
                      "%% for '%')");
    assert_path_error("{seq", 0, "'{' without a closing '}'");
    assert_path_error("{seq}}", 5, "'}' without an opening '{'");
}

/* ---- defaults ------------------------------------------------------------- */

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

/* ---- sections ------------------------------------------------------------- */

static void test_inputs_tcp_and_unix(void **state)
{
    (void)state;
    cf_config c;
    load("inputs:\n"
         "  - {type: tcp, listen: \"[::1]:6000\"}\n"
         "  - {type: unix, path: /run/parqd/parqd.sock, mode: \"0660\"}\n"
         "  - {type: unix, path: /tmp/b.sock, mode: \"600\"}\n", &c);
    assert_int_equal(c.n_inputs, 3);
    assert_string_equal(c.inputs[0].listen.host, "::1");
    assert_int_equal(c.inputs[0].listen.port, 6000);
    assert_int_equal(c.inputs[0].pos.line, 2);
    assert_string_equal(c.inputs[1].path, "/run/parqd/parqd.sock");
    assert_int_equal(c.inputs[1].mode, 0660);
    assert_int_equal(c.inputs[2].mode, 0600);
    cf_config_free(&c);
}

static void test_inputs_errors(void **state)
{
    (void)state;
    assert_error("inputs:\n  - {type: tcp, listen: \"::1:5170\"}\n",
                 "c.yaml:2:25: inputs[0].listen: '::1:5170': IPv6 addresses need brackets, e.g. "
                 "[::1]:5170");
    assert_error("inputs:\n  - {type: udp, listen: \"a:1\"}\n",
                 "c.yaml:2:12: inputs[0].type: unknown value 'udp' (expected tcp, unix)");
    assert_error("inputs:\n  - {type: unix, path: /x.sock, mode: \"0999\"}\n",
                 "c.yaml:2:39: inputs[0].mode: expected an octal permission string like \"0660\"");
    assert_error("inputs:\n  - {type: tcp, path: /x.sock}\n",
                 "c.yaml:2:17: inputs[0]: unknown key 'path' (expected type, listen, tls)");
    assert_error("inputs:\n  - {type: tcp}\n", "c.yaml:2:5: inputs[0]: missing key 'listen'");
    assert_error("inputs:\n  - {type: tcp, listen: \"a:1\"}\n  - {type: tcp, listen: \"a:1\"}\n",
                 "c.yaml:3:5: inputs[1]: same address as inputs[0]");
    assert_error("inputs: []\n", "c.yaml:1:9: inputs: empty list (leave the key out for the "
                 "defaults: tcp 127.0.0.1:5170 and unix ./parqd.sock)");
}

static void test_inputs_tls_and_peer_ids(void **state)
{
    (void)state;
    cf_config c;
    load("inputs:\n"
         "  - {type: unix, path: /x.sock, mode: \"0660\", allow_uids: [1000, root],\n"
         "     allow_gids: [0, 4]}\n"
         "  - type: tcp\n"
         "    listen: \"0.0.0.0:5171\"\n"
         "    tls: {cert: s.crt, key: s.key, client_ca: ca.crt,\n"
         "          allow_subjects: [\"CN=web-7\", \"CN=db,O=Example\"], min_version: \"1.3\",\n"
         "          handshake_timeout: 3s}\n"
         "  - {type: tcp, listen: \"127.0.0.1:5172\", tls: {cert: a.crt, key: a.key}}\n"
         "metrics: {listen: \"127.0.0.1:9170\"}\n", &c);
    assert_int_equal(c.n_inputs, 3);
    assert_null(c.inputs[0].tls);
    assert_int_equal(c.inputs[0].n_allow_uids, 2);
    assert_int_equal(c.inputs[0].allow_uids[0], 1000);
    assert_int_equal(c.inputs[0].allow_uids[1], 0);      /* root, by name */
    assert_int_equal(c.inputs[0].n_allow_gids, 2);
    assert_int_equal(c.inputs[0].allow_gids[1], 4);
    const cf_tls *t = c.inputs[1].tls;
    assert_non_null(t);
    assert_string_equal(t->cert, "s.crt");
    assert_string_equal(t->key, "s.key");
    assert_string_equal(t->client_ca, "ca.crt");
    assert_int_equal(t->n_allow_subjects, 2);
    assert_string_equal(t->allow_subjects[1], "CN=db,O=Example");
    assert_int_equal(t->min_version, 13);
    assert_int_equal(t->handshake_timeout_ms, 3000);
    t = c.inputs[2].tls;
    assert_null(t->client_ca);
    assert_int_equal(t->min_version, 12);                 /* the defaults */
    assert_int_equal(t->handshake_timeout_ms, CF_TLS_HANDSHAKE_TIMEOUT_MS);
    cf_config_free(&c);
}

static void test_inputs_tls_and_peer_id_errors(void **state)
{
    (void)state;
    assert_error("inputs:\n  - {type: tcp, listen: \"a:1\", tls: {cert: a.crt}}\n",
                 "c.yaml:2:37: inputs[0].tls: needs both cert and key (PEM files)");
    assert_error("inputs:\n  - {type: tcp, listen: \"a:1\", tls: {cert: a, key: b, "
                 "min_version: \"1.1\"}}\n",
                 "c.yaml:2:68: inputs[0].tls.min_version: '1.1': expected \"1.2\" or \"1.3\" "
                 "(older versions are not offered)");
    assert_error("inputs:\n  - {type: tcp, listen: \"a:1\", tls: {cert: a, key: b, "
                 "allow_subjects: [\"CN=x\"]}}\n",
                 "c.yaml:2:71: inputs[0].tls.allow_subjects: needs client_ca (without it no "
                 "client certificate is asked for)");
    assert_error("inputs:\n  - {type: tcp, listen: \"a:1\", tls: {cert: a, key: b, "
                 "client_ca: c, allow_subjects: [\"web-7\"]}}\n",
                 "c.yaml:2:86: inputs[0].tls.allow_subjects[0]: 'web-7': expected ATTRIBUTE=value "
                 "pairs joined by ',', e.g. \"CN=web-7\" or \"CN=web-7,O=Example\"");
    assert_error("inputs:\n  - {type: tcp, listen: \"a:1\", tls: {cert: a, key: b, "
                 "handshake_timeout: 0s}}\n",
                 "c.yaml:2:74: inputs[0].tls.handshake_timeout: must be more than 0 (a client "
                 "that never finishes its handshake would hold a connection forever)");
    assert_error("inputs:\n  - {type: unix, path: /x, allow_uids: [no-such-user-parqd]}\n",
                 "c.yaml:2:41: inputs[0].allow_uids[0]: no user named 'no-such-user-parqd' on "
                 "this machine");
    assert_error("inputs:\n  - {type: unix, path: /x, allow_gids: []}\n",
                 "c.yaml:2:40: inputs[0].allow_gids: empty list (leave the key out to allow "
                 "every peer that can open the socket)");
    assert_error("inputs:\n  - {type: unix, path: /x, tls: {cert: a, key: b}}\n",
                 "c.yaml:2:28: inputs[0]: unknown key 'tls' (expected type, path, mode, "
                 "allow_uids, allow_gids)");
    assert_error("inputs:\n  - {type: tcp, listen: \"0.0.0.0:5170\"}\n"
                 "metrics: {listen: \"127.0.0.1:5170\"}\n",
                 "c.yaml:3:19: metrics.listen: '127.0.0.1:5170' is the address of inputs[0]; "
                 "give the metrics endpoint a port of its own");
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
         "  statistics: false\n", &c);
    assert_string_equal(c.output.dir, "/var/lib/parqd/out");
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
                 "c.yaml:2:19: output.path: unknown placeholder (expected {host}, {pid}, {seq} or {uuid})");
    assert_error("output:\n  path: x/{host}.parquet\n",
                 "c.yaml:2:25: output.path: must contain {seq} or {uuid}, or files rotated within the same "
                 "period would collide");
    assert_error("output:\n  statistics: {truncate: 0}\n",
                 "c.yaml:2:26: output.statistics.truncate: 0 is out of range 1..2147483647");
    assert_error("output:\n  dictionary: {max_bytes: 0}\n",
                 "c.yaml:2:27: output.dictionary.max_bytes: must be at least 1");
    assert_error("output:\n  page_index: yes\n",
                 "c.yaml:2:15: output.page_index: expected true or false, found 'yes'");
    assert_error("output:\n  rotation: {max_age: 5m}\n",
                 "c.yaml:2:3: output: unknown key 'rotation' (did you mean 'rotate'?)");
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

/* ---- schema ------------------------------------------------------------- */

static void test_schema_inline(void **state)
{
    (void)state;
    cf_config c;
    load("schema:\n"
         "  columns:\n"
         "    - {name: ts, type: timestamp, unit: ms, from: time, required: true}\n"
         "    - {name: rest, type: variant, from: \"*\"}\n", &c);
    assert_int_equal(c.schema->n_columns, 2);
    assert_null(c.schema_file);
    assert_int_equal(c.schema->columns[0].pos.line, 3);
    cf_config_free(&c);
}

static void test_schema_inline_error_points_into_config(void **state)
{
    (void)state;
    const char *yaml = "output: {dir: x}\n"
                       "schema:\n"
                       "  columns:\n"
                       "    - {name: ts, type: timestmp}\n";
    const char *want = "c.yaml:4:24: column 'ts': unknown type 'timestmp' (expected bool, ";
    cf_config c;
    pq_err err = {0};
    assert_int_equal(cf_config_load_buffer("c.yaml", yaml, strlen(yaml), &c, &err), PQ_EINVAL);
    cf_config_free(&c);
    assert_true(strncmp(err.msg, want, strlen(want)) == 0);
}


static void write_file(const char *dir, const char *name, const char *text)
{
    assert_int_equal(pqt_write_file(dir, name, text, 0644), 0);
}

static void remove_files(const char *dir, const char *const *names)
{
    char p[256];
    for (size_t i = 0; names[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/schemas", dir);
    rmdir(p);
    rmdir(dir);
}

static void test_schema_path_relative_to_config_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/parqd-test-config-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[128], cfg[128], want[160];
    snprintf(sub, sizeof sub, "%s/schemas", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    write_file(dir, "schemas/s.yaml", "columns:\n  - {name: a, type: int64}\n");
    write_file(dir, "c.yaml", "schema: schemas/s.yaml\n");
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    snprintf(want, sizeof want, "%s/schemas/s.yaml", dir);
    cf_config c;
    pq_err err = {0};
    int rc = cf_config_load(cfg, &c, &err);
    if (rc != 0)
        print_message("%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_string_equal(c.schema_file, want);
    assert_string_equal(c.schema->columns[0].name, "a");
    cf_config_free(&c);
    remove_files(dir, (const char *const[]){"schemas/s.yaml", "c.yaml", NULL});
}

static void test_schema_file_errors_name_their_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/parqd-test-config-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cfg[128], want[256];
    write_file(dir, "s.yaml", "columns:\n  - {name: a, type: int64, bloom: sure}\n");
    write_file(dir, "c.yaml", "schema: s.yaml\n");
    write_file(dir, "d.yaml", "output: {dir: x}\nschema: nope.yaml\n");
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    cf_config c;
    pq_err err = {0};
    assert_int_equal(cf_config_load(cfg, &c, &err), PQ_EINVAL);
    cf_config_free(&c);
    snprintf(want, sizeof want, "%s/s.yaml:2:35: column 'a': bloom: expected true or false, "
             "found 'sure'", dir);
    assert_string_equal(err.msg, want);
    snprintf(cfg, sizeof cfg, "%s/d.yaml", dir);
    assert_int_equal(cf_config_load(cfg, &c, &err), PQ_EINVAL);
    cf_config_free(&c);
    snprintf(want, sizeof want, "%s/d.yaml:2:9: schema: %s/nope.yaml: cannot open: No such file "
             "or directory", dir, dir);
    assert_string_equal(err.msg, want);
    /* --schema replaces the file's schema, which is then not even read. */
    char sfile[128];
    snprintf(sfile, sizeof sfile, "%s/s2.yaml", dir);
    write_file(dir, "s2.yaml", "columns:\n  - {name: b, type: string}\n");
    assert_int_equal(cf_config_load_ex(cfg, sfile, &c, &err), 0);
    assert_string_equal(c.schema->columns[0].name, "b");
    assert_string_equal(c.schema_file, sfile);
    cf_config_free(&c);
    remove_files(dir, (const char *const[]){"s.yaml", "s2.yaml", "c.yaml", "d.yaml", NULL});
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

/* ---- encryption ---------------------------------------------------------- */

static const char enc_schema[] =
    "schema:\n"
    "  columns:\n"
    "    - {name: user, type: struct, fields: [{name: email, type: string},\n"
    "                                          {name: id, type: int64}]}\n"
    "    - {name: card, type: string, key: k2}\n";

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

static void test_encryption_binds_to_schema(void **state)
{
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%s"
             "output:\n"
             "  encryption:\n"
             "    footer_key: {id: k0, file: a}\n"
             "    columns:\n"
             "      - {column: user.phone, key: {id: k1, file: b}}\n"
             "      - {column: card, key: {id: k2, file: c}}\n", enc_schema);
    assert_error(yaml, "c.yaml:10:18: output.encryption.columns[0].column: no column "
                 "'user.phone' in the schema");
    snprintf(yaml, sizeof yaml, "%s"
             "output:\n"
             "  encryption: {footer_key: {id: k0, file: a}}\n", enc_schema);
    assert_error(yaml, "c.yaml:5:7: column 'card': key 'k2' is not defined in output.encryption "
                 "(footer_key or columns[].key)");
    assert_error(enc_schema, "c.yaml:5:7: column 'card': key 'k2' is set but output.encryption "
                 "is not configured");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_plain_and_binary_units),
        cmocka_unit_test(test_size_rejects_overflow),
        cmocka_unit_test(test_size_rejects_garbage_and_ambiguous_units),
        cmocka_unit_test(test_duration_units),
        cmocka_unit_test(test_duration_rejects_bad_input),
        cmocka_unit_test(test_size_and_duration_formatting),
        cmocka_unit_test(test_listen_forms),
        cmocka_unit_test(test_listen_errors),
        cmocka_unit_test(test_path_template_checks),
        cmocka_unit_test(test_builtin_defaults),
        cmocka_unit_test(test_empty_file_means_defaults),
        cmocka_unit_test(test_writer_opts_from_config),
        cmocka_unit_test(test_inputs_tcp_and_unix),
        cmocka_unit_test(test_inputs_errors),
        cmocka_unit_test(test_inputs_tls_and_peer_ids),
        cmocka_unit_test(test_inputs_tls_and_peer_id_errors),
        cmocka_unit_test(test_output_values),
        cmocka_unit_test(test_output_partial_roll_keeps_defaults),
        cmocka_unit_test(test_output_errors),
        cmocka_unit_test(test_spool_limits_errors_metrics),
        cmocka_unit_test(test_spool_limits_errors_metrics_errors),
        cmocka_unit_test(test_schema_inline),
        cmocka_unit_test(test_schema_inline_error_points_into_config),
        cmocka_unit_test(test_schema_path_relative_to_config_dir),
        cmocka_unit_test(test_schema_file_errors_name_their_file),
        cmocka_unit_test(test_missing_config_file),
        cmocka_unit_test(test_encryption_full),
        cmocka_unit_test(test_encryption_defaults),
        cmocka_unit_test(test_encryption_errors),
        cmocka_unit_test(test_encryption_binds_to_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
