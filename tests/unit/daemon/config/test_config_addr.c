/* test_config_addr.c - TCP addresses in the configuration
 * (daemon/config/config_addr.c): the host:port and [v6]:port forms and
 * their errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen_forms),
        cmocka_unit_test(test_listen_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
