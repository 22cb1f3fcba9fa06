/* test_config_input.c - the `inputs:` section (daemon/config/
 * config_input.c, config_sec.c): TCP and Unix inputs, tls and peer ids,
 * and their errors at FILE:LINE:COL. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_test.h"

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
                 "c.yaml:2:12: inputs[0].type: unknown value 'udp' (expected tcp, unix, http)");
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

static void test_inputs_http(void **state)
{
    (void)state;
    cf_config c;
    load("inputs:\n"
         "  - {type: http, listen: \"127.0.0.1:9200\", max_body_bytes: 1MiB,\n"
         "     auth: {bearer_token_file: /etc/parqd/t}}\n"
         "  - {type: http, path: /run/parqd/http.sock, mode: \"0660\"}\n"
         "  - {type: tcp, listen: \"127.0.0.1:5170\"}\n", &c);
    assert_int_equal(c.n_inputs, 3);
    assert_int_equal(c.inputs[0].type, CF_INPUT_TCP);
    assert_int_equal(c.inputs[0].proto, CF_PROTO_HTTP);
    assert_int_equal(c.inputs[0].http.max_body_bytes, 1 << 20);
    assert_string_equal(c.inputs[0].http.bearer_token_file, "/etc/parqd/t");
    assert_null(c.inputs[0].http.basic_file);
    assert_int_equal(c.inputs[1].type, CF_INPUT_UNIX);
    assert_int_equal(c.inputs[1].proto, CF_PROTO_HTTP);
    assert_int_equal(c.inputs[1].http.max_body_bytes, CF_HTTP_MAX_BODY_DEFAULT);
    assert_int_equal(c.inputs[1].mode, 0660);
    assert_int_equal(c.inputs[2].proto, CF_PROTO_LINES);
    cf_config_free(&c);
    assert_error("inputs:\n  - {type: http}\n",
                 "c.yaml:2:5: inputs[0]: an http input needs one of 'listen' (TCP) or 'path' "
                 "(Unix socket)");
    assert_error("inputs:\n  - {type: http, listen: \"a:1\", auth: {basic_file: x, "
                 "bearer_token_file: y}}\n",
                 "c.yaml:2:39: inputs[0].auth: expected one of bearer_token_file or basic_file");
    assert_error("inputs:\n  - {type: http, listen: \"a:1\", max_body_bytes: 0}\n",
                 "c.yaml:2:49: inputs[0].max_body_bytes: must be at least 1 byte");
}

/* The header limits: defaults, values, and the bounds checked when the
 * file is read. */
static void test_inputs_http_header_limits(void **state)
{
    (void)state;
    cf_config c;
    load("inputs:\n"
         "  - {type: http, listen: \"127.0.0.1:9200\", max_header_bytes: 4KiB, max_headers: 20,\n"
         "     header_timeout: 2s}\n"
         "  - {type: http, listen: \"127.0.0.1:9201\"}\n", &c);
    assert_int_equal(c.inputs[0].http.max_header_bytes, 4096);
    assert_int_equal(c.inputs[0].http.max_headers, 20);
    assert_int_equal(c.inputs[0].http.header_timeout_ms, 2000);
    assert_int_equal(c.inputs[1].http.max_header_bytes, 16384);
    assert_int_equal(c.inputs[1].http.max_headers, 100);
    assert_int_equal(c.inputs[1].http.header_timeout_ms, 10000);
    cf_config_free(&c);
    assert_error("inputs:\n  - {type: http, listen: \"a:1\", max_header_bytes: 100}\n",
                 "c.yaml:2:51: inputs[0].max_header_bytes: must be at least 1KiB");
    assert_error("inputs:\n  - {type: http, listen: \"a:1\", max_headers: 3}\n",
                 "c.yaml:2:46: inputs[0].max_headers: 3 is out of range 8..10000");
    assert_error("inputs:\n  - {type: http, listen: \"a:1\", header_timeout: 0s}\n",
                 "c.yaml:2:49: inputs[0].header_timeout: must be between 100ms and 1h");
    assert_error("inputs:\n  - {type: tcp, listen: \"a:1\", header_timeout: 1s}\n",
                 "c.yaml:2:32: inputs[0]: unknown key 'header_timeout' (expected type, listen, "
                 "tls)");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inputs_tcp_and_unix),
        cmocka_unit_test(test_inputs_errors),
        cmocka_unit_test(test_inputs_http),
        cmocka_unit_test(test_inputs_http_header_limits),
        cmocka_unit_test(test_inputs_tls_and_peer_ids),
        cmocka_unit_test(test_inputs_tls_and_peer_id_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
