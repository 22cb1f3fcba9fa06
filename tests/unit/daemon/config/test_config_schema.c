/* test_config_schema.c - the `schema:` of the configuration
 * (daemon/config/config_schema.c): inline and by path (relative to the
 * configuration file), errors that name their file, and schema key ids
 * bound to output.encryption. */
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

#include "config_test.h"
#include "tmpdir.h"

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
        cmocka_unit_test(test_schema_inline),
        cmocka_unit_test(test_schema_inline_error_points_into_config),
        cmocka_unit_test(test_schema_path_relative_to_config_dir),
        cmocka_unit_test(test_schema_file_errors_name_their_file),
        cmocka_unit_test(test_encryption_binds_to_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
