/* keyring.c - key files to pq_crypto_key objects and pq_encryption_opts
 * (see keyring.h). */
#include "keyring.h"
#include "keyfile.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

static kr_entry *find_key(kr_keyring *k, const char *id)
{
    for (size_t i = 0; i < k->n_keys; i++)
        if (strcmp(k->keys[i].id, id) == 0)
            return &k->keys[i];
    return NULL;
}

/* The same id may appear for several columns: one key, loaded once. Two
 * files under one id would be ambiguous, so that is an error. */
static int add_key(kr_keyring *k, const cf_key *ck, kr_entry **out, pq_err *err)
{
    if (ck->id == NULL || ck->file == NULL)
        return pq_err_set(err, PQ_EINVAL, "encryption: a key needs both id and file");
    kr_entry *e = find_key(k, ck->id);
    if (e != NULL) {
        if (strcmp(e->file, ck->file) != 0)
            return pq_err_set(err, PQ_EINVAL, "encryption: key id '%s' names two files, "
                              "'%s' and '%s'", ck->id, e->file, ck->file);
        *out = e;
        return PQ_OK;
    }
    if (k->n_keys == k->cap_keys)    /* sized for every key the config names */
        return pq_err_set(err, PQ_EINVAL, "encryption: more keys than the configuration names");
    e = &k->keys[k->n_keys];
    memset(e, 0, sizeof *e);
    e->id = strdup(ck->id);
    e->file = strdup(ck->file);
    if (e->id == NULL || e->file == NULL) {
        free(e->id);
        free(e->file);
        return pq_err_set(err, PQ_ENOMEM, "encryption: out of memory");
    }
    k->n_keys++;
    int rc = kf_check_mode(ck->file, "encryption key file", err);
    rc = rc ? rc : pq_crypto_key_load_hex(&e->key, ck->file, err);
    if (rc != 0)
        return rc;
    *out = e;
    return PQ_OK;
}

static int add_column(kr_keyring *k, const char *column, const kr_entry *e, pq_err *err)
{
    pq_column_key *c = realloc(k->columns, (k->n_columns + 1) * sizeof *c);
    if (c == NULL)
        return pq_err_set(err, PQ_ENOMEM, "encryption: out of memory");
    k->columns = c;
    c[k->n_columns++] = (pq_column_key){.column = column, .key = (pq_crypto_key *)&e->key,
                                        .key_id = e->id};
    return PQ_OK;
}

/* Schema leaves that carry `key: <id>` are encrypted with that config key. */
static int add_schema_keys(kr_keyring *k, const sc_schema *s, pq_err *err)
{
    for (size_t i = 0; i < s->n_leaves; i++) {
        const char *id = s->leaves[i].opts.key_id;
        if (id == NULL)
            continue;
        kr_entry *e = find_key(k, id);
        if (e == NULL)
            return pq_err_set(err, PQ_EINVAL, "column '%s': key '%s' is not declared in the "
                              "configuration's encryption section", s->leaves[i].path, id);
        int rc = add_column(k, s->leaves[i].path, e, err);
        if (rc != 0)
            return rc;
    }
    return PQ_OK;
}

int kr_keyring_load(kr_keyring *k, const cf_config *c, pq_err *err)
{
    memset(k, 0, sizeof *k);
    const cf_encryption *e = &c->output.encryption;
    if (!e->enabled)
        return PQ_OK;
    kr_entry *footer, *col;
    /* The entries hold the key bytes: from OpenSSL's secure heap when the
     * daemon set one up (locked, not in core dumps), wiped on free. */
    k->cap_keys = 1 + e->n_columns;
    if ((k->keys = OPENSSL_secure_zalloc(k->cap_keys * sizeof *k->keys)) == NULL) {
        k->cap_keys = 0;
        return pq_err_set(err, PQ_ENOMEM, "encryption: out of memory");
    }
    int rc = add_key(k, &e->footer_key, &footer, err);
    for (size_t i = 0; rc == 0 && i < e->n_columns; i++)
        rc = add_key(k, &e->columns[i].key, &col, err);
    /* The config loader stamps each configured column's key id on the
     * schema leaves (sc_schema_set_key), so the leaves say it all. */
    rc = rc ? rc : add_schema_keys(k, c->schema, err);
    if (rc != 0) {
        kr_keyring_free(k);
        return rc;
    }
    footer = find_key(k, e->footer_key.id); /* add_key may have moved the array */
    for (size_t i = 0; i < k->n_columns; i++)
        k->columns[i].key = &find_key(k, k->columns[i].key_id)->key;
    k->opts = (pq_encryption_opts){
        .algorithm = e->algorithm,
        .plaintext_footer = !e->footer_encrypted,
        .footer_key = &footer->key,
        .footer_key_id = footer->id,
        .columns = k->columns,
        .n_columns = k->n_columns,
        .aad_prefix = e->aad_prefix,
        .aad_prefix_len = e->aad_prefix ? strlen(e->aad_prefix) : 0,
        .store_aad_prefix = e->store_aad_prefix,
    };
    k->enabled = true;
    return PQ_OK;
}

void kr_keyring_free(kr_keyring *k)
{
    for (size_t i = 0; i < k->n_keys; i++) {
        pq_crypto_key_free(&k->keys[i].key);
        free(k->keys[i].id);
        free(k->keys[i].file);
    }
    OPENSSL_secure_clear_free(k->keys, k->cap_keys * sizeof *k->keys);
    free(k->columns);
    memset(k, 0, sizeof *k);
}

const pq_encryption_opts *kr_keyring_opts(const kr_keyring *k)
{
    return k->enabled ? &k->opts : NULL;
}
