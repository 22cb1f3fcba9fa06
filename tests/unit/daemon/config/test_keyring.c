/* test_keyring.c - config encryption section + schema key ids to writer
 * encryption options: keys loaded once per id, schema `key:` ids resolved,
 * undeclared ids and conflicting files refused without printing keys. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyring.h"
#include "tmpdir.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
    assert_int_equal(pqt_write_file(dir, name, text, 0600), 0);   /* key files must be private */
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/pq_keyring_XXXXXX");
    assert_non_null(mkdtemp(dir));
    write_file("k0.hex", "000102030405060708090a0b0c0d0e0f\n");
    write_file("k1.hex", "101112131415161718191a1b1c1d1e1f101112131415161718191a1b1c1d1e1f");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static int load(const char *yaml, cf_config *c, kr_keyring *k, pq_err *err)
{
    char text[2048];
    snprintf(text, sizeof text, yaml, dir, dir, dir);
    int rc = cf_config_load_buffer("test.yaml", text, strlen(text), c, err);
    if (rc != 0)
        fail_msg("config: %s", err->msg);
    return kr_keyring_load(k, c, err);
}

static const char *CONFIG =
    "schema:\n"
    "  columns:\n"
    "    - {name: email, type: string, key: k1}\n"
    "    - {name: ip, type: string}\n"
    "    - {name: n, type: int64}\n"
    "output:\n"
    "  encryption:\n"
    "    algorithm: AES_GCM_CTR_V1\n"
    "    footer: plaintext\n"
    "    footer_key: {id: k0, file: %s/k0.hex}\n"
    "    columns:\n"
    "      - {column: ip, key: {id: k1, file: %s/k1.hex}}\n"
    "      - {column: n, key: {id: k1, file: %s/k1.hex}}\n"
    "    aad_prefix: logs-prod\n";

static void test_keyring_builds_writer_options_from_config_and_schema(void **state)
{
    (void)state;
    cf_config c;
    kr_keyring k;
    pq_err err = {0};
    assert_int_equal(load(CONFIG, &c, &k, &err), 0);
    const pq_encryption_opts *o = kr_keyring_opts(&k);
    assert_non_null(o);
    assert_int_equal(o->algorithm, PQ_AES_GCM_CTR_V1);
    assert_true(o->plaintext_footer);
    assert_string_equal(o->footer_key_id, "k0");
    assert_int_equal(o->footer_key->len, 16);
    assert_int_equal(k.n_keys, 2); /* k1 twice in config, once in schema: loaded once */
    assert_int_equal(o->n_columns, 3);
    for (size_t i = 0; i < o->n_columns; i++) {
        assert_string_equal(o->columns[i].key_id, "k1");
        assert_int_equal(o->columns[i].key->len, 32);
    }
    assert_int_equal(o->aad_prefix_len, strlen("logs-prod"));
    kr_keyring_free(&k);
    cf_config_free(&c);
}

/* The config loader catches an undeclared id first, with its position. */
static void test_keyring_refuses_undeclared_schema_key_without_leaking_keys(void **state)
{
    (void)state;
    cf_config c;
    kr_keyring k;
    pq_err err = {0};
    const char *yaml =
        "schema:\n  columns:\n    - {name: email, type: string, key: nope}\n"
        "output:\n  encryption:\n    footer_key: {id: k0, file: %s/k0.hex}\n";
    char text[512];
    snprintf(text, sizeof text, yaml, dir);
    assert_int_not_equal(cf_config_load_buffer("test.yaml", text, strlen(text), &c, &err), 0);
    assert_non_null(strstr(err.msg, "test.yaml:3:7: column 'email': key 'nope'"));
    assert_null(strstr(err.msg, "0001020304"));
    cf_config_free(&c); /* needed after a failed load too (config.h) */
    (void)k;
}

/* As ssh: a key file that group or others may read is refused, and the
 * message names the file and its mode, never the key. */
static void test_keyring_refuses_group_or_world_readable_key_file(void **state)
{
    (void)state;
    static const mode_t modes[] = {0640, 0604, 0644, 0620};
    char path[128];
    snprintf(path, sizeof path, "%s/k1.hex", dir);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        cf_config c;
        kr_keyring k;
        pq_err err = {0};
        char want[64];
        assert_int_equal(chmod(path, modes[i]), 0);
        assert_int_not_equal(load(CONFIG, &c, &k, &err), 0);
        snprintf(want, sizeof want, "(mode %04o); chmod 600 it", (unsigned)modes[i]);
        assert_non_null(strstr(err.msg, path));
        assert_non_null(strstr(err.msg, want));
        assert_non_null(strstr(err.msg, (modes[i] & 044) ? "is readable by group or others"
                                                          : "is accessible by group or others"));
        assert_null(strstr(err.msg, "1011121314"));
        kr_keyring_free(&k);
        cf_config_free(&c);
    }
    assert_int_equal(chmod(path, 0400), 0);  /* owner-only stays fine */
    cf_config c;
    kr_keyring k;
    pq_err err = {0};
    assert_int_equal(load(CONFIG, &c, &k, &err), 0);
    kr_keyring_free(&k);
    cf_config_free(&c);
    assert_int_equal(chmod(path, 0600), 0);
}

static void test_keyring_off_without_encryption(void **state)
{
    (void)state;
    cf_config c;
    kr_keyring k;
    pq_err err = {0};
    assert_int_equal(load("schema:\n  columns:\n    - {name: a, type: int32}\n", &c, &k, &err), 0);
    assert_null(kr_keyring_opts(&k));
    kr_keyring_free(&k);
    cf_config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyring_builds_writer_options_from_config_and_schema),
        cmocka_unit_test(test_keyring_refuses_undeclared_schema_key_without_leaking_keys),
        cmocka_unit_test(test_keyring_refuses_group_or_world_readable_key_file),
        cmocka_unit_test(test_keyring_off_without_encryption),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
