/* keyring.h - the encryption keys of a configuration: loads every key file
 * once, keeps the keys for the life of the process (a key counts its
 * cipher invocations across files, Encryption.md 4.1.4), and builds the
 * writer's pq_encryption_opts from the config and the schema's per-column
 * `key:` ids. Key bytes are wiped on kr_keyring_free and never logged;
 * they live in OpenSSL's secure heap when the process set one up
 * (tl_secure_heap_init), so they are locked and left out of core dumps.
 * A key file readable by group or others is refused (keyfile.h). */
#ifndef PQ_KEYRING_H
#define PQ_KEYRING_H

#include "config.h"
#include "pq_writer.h"

typedef struct kr_entry {
    char *id;                    /* key_metadata written to files */
    char *file;
    pq_crypto_key key;
} kr_entry;

typedef struct kr_keyring {
    kr_entry *keys;              /* OPENSSL_secure_zalloc'd, cap_keys entries */
    size_t n_keys, cap_keys;
    pq_column_key *columns;      /* for pq_encryption_opts */
    size_t n_columns;
    pq_encryption_opts opts;
    bool enabled;
} kr_keyring;

/* Loads the keys named in c->output.encryption and the schema's leaf key
 * ids (each must name a key declared in the config). Errors name the key
 * id and file, never the key. */
int kr_keyring_load(kr_keyring *k, const cf_config *c, pq_err *err);
void kr_keyring_free(kr_keyring *k);

/* The writer options, or NULL when encryption is off. Valid while k and the
 * config it was loaded from live (column paths point into the config). */
const pq_encryption_opts *kr_keyring_opts(const kr_keyring *k);

#endif
