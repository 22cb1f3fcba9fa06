/* config_test.h - what the configuration tests (tests/unit/schema/
 * config/) share: load a configuration from YAML text, compare a load
 * error's message whole, and a schema with key ids for the encryption
 * tests. Include after cmocka.h; the helpers are static inline so a test
 * that does not use one does not warn. */
#ifndef PQ_TEST_CONFIG_TEST_H
#define PQ_TEST_CONFIG_TEST_H

#include "config.h"

static inline void load(const char *yaml, cf_config *c)
{
    pq_err err = {0};
    int rc = cf_config_load_buffer("c.yaml", yaml, strlen(yaml), c, &err);
    if (rc != 0)
        print_message("unexpected error: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

static inline void assert_error(const char *yaml, const char *expected)
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

static const char enc_schema[] =
    "schema:\n"
    "  columns:\n"
    "    - {name: user, type: struct, fields: [{name: email, type: string},\n"
    "                                          {name: id, type: int64}]}\n"
    "    - {name: card, type: string, key: k2}\n";

#endif
