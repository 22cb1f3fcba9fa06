/* colspec_test.h - what the schema-language tests (tests/unit/schema/
 * colspec/) share: load a schema from YAML text, print the pq_schema built
 * from it, and compare error messages whole or by prefix. Include after
 * cmocka.h. The helpers are static inline so a test that does not use one
 * does not warn. */
#ifndef PQ_TEST_COLSPEC_TEST_H
#define PQ_TEST_COLSPEC_TEST_H

#include "buf.h"
#include "colspec.h"
#include "schema.h"

static inline sc_schema *load(const char *yaml)
{
    sc_schema *s = NULL;
    pq_err err = {0};
    int rc = sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &s, &err);
    if (rc != 0)
        print_message("unexpected error: %s\n", err.msg);
    assert_int_equal(rc, 0);
    return s;
}

/* Loads, builds and prints; returns the text (caller frees). */
static inline char *printed(const char *yaml)
{
    sc_schema *s = load(yaml);
    pq_schema *ps = NULL;
    pq_err err = {0};
    int rc = sc_build_parquet_schema(s, &ps, &err);
    if (rc != 0)
        print_message("build error: %s\n", err.msg);
    assert_int_equal(rc, 0);
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_schema_print(ps, &b), 0);
    pq_buf_push(&b, '\0');
    char *text = strdup((const char *)b.data);
    pq_buf_free(&b);
    pq_schema_destroy(ps);
    sc_schema_free(s);
    return text;
}

static inline void assert_printed(const char *yaml, const char *expected)
{
    char *text = printed(yaml);
    if (strcmp(text, expected) != 0)
        print_message("got:\n%s\nexpected:\n%s\n", text, expected);
    assert_string_equal(text, expected);
    free(text);
}

/* The load of yaml must fail with PQ_EINVAL and no schema; *err says why. */
static inline void load_fails(const char *yaml, pq_err *err)
{
    sc_schema *s = NULL;
    int rc = sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &s, err);
    assert_null(s);
    assert_int_equal(rc, PQ_EINVAL);
}

/* The whole message must equal `expected`. */
static inline void assert_error(const char *yaml, const char *expected)
{
    pq_err err = {0};
    load_fails(yaml, &err);
    if (strcmp(err.msg, expected) != 0)
        print_message("got:      %s\nexpected: %s\n", err.msg, expected);
    assert_string_equal(err.msg, expected);
}

/* The message must start with `prefix` (long "expected ..." tails). */
static inline void assert_error_prefix(const char *yaml, const char *prefix)
{
    pq_err err = {0};
    load_fails(yaml, &err);
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
        print_message("got:      %s\nexpected: %s...\n", err.msg, prefix);
    assert_true(strncmp(err.msg, prefix, strlen(prefix)) == 0);
}

#define M(body) "message schema {\n" body "}\n"

#endif
