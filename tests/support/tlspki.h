/* tlspki.h - a throwaway PKI made with OpenSSL's API for the TLS unit test
 * and the TLS fuzz target (no openssl command, no files checked in):
 *
 *   pqt_tls_pki(dir) writes, EC P-256 keys at mode 0600:
 *     ca.crt                        the CA (CN=pqt-ca)
 *     server.crt / server.key       CN=localhost, signed by ca
 *     web7.crt / web7.key           client CN=web-7, O=pqt, signed by ca
 *     intruder.crt / intruder.key   client CN=intruder, signed by ca
 *     other.crt / other.key         client CN=web-7, self-signed (another "CA")
 *
 * Header-only (static functions) so the fuzz target, which links no test
 * support library, can include it too. */
#ifndef PQT_TLSPKI_H
#define PQT_TLSPKI_H

#include <stdio.h>
#include <sys/stat.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static EVP_PKEY *pqt_tls_key(void)
{
    return EVP_EC_gen("P-256");
}

static int pqt_tls_write(const char *dir, const char *name, X509 *crt, EVP_PKEY *key)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.crt", dir, name);
    FILE *f = fopen(path, "w");
    int ok = f != NULL && PEM_write_X509(f, crt) == 1;
    if (f != NULL)
        fclose(f);
    if (!ok || key == NULL)
        return ok ? 0 : -1;
    snprintf(path, sizeof path, "%s/%s.key", dir, name);
    f = fopen(path, "w");
    ok = f != NULL && PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) == 1;
    if (f != NULL)
        fclose(f);
    return ok && chmod(path, 0600) == 0 ? 0 : -1;
}

/* A certificate for key with subject cn/o, signed by issuer_key as
 * issuer (NULL: self-signed). */
static X509 *pqt_tls_cert(EVP_PKEY *key, const char *cn, const char *o, X509 *issuer,
                          EVP_PKEY *issuer_key, int serial, int is_ca)
{
    X509 *x = X509_new();
    if (x == NULL)
        return NULL;
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 3 * 24 * 3600);
    X509_set_pubkey(x, key);
    X509_NAME *n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    if (o != NULL)
        X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC, (const unsigned char *)o, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n);
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints,
                                              is_ca ? "critical,CA:TRUE" : "CA:FALSE");
    if (ext != NULL) {
        X509_add_ext(x, ext, -1);
        X509_EXTENSION_free(ext);
    }
    if (X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()) == 0) {
        X509_free(x);
        return NULL;
    }
    return x;
}

/* 0, or -1 when anything could not be made or written. */
static int pqt_tls_pki(const char *dir)
{
    EVP_PKEY *ca_key = pqt_tls_key(), *keys[4] = {pqt_tls_key(), pqt_tls_key(), pqt_tls_key(),
                                                  pqt_tls_key()};
    static const char *const names[4] = {"server", "web7", "intruder", "other"};
    static const char *const cns[4] = {"localhost", "web-7", "intruder", "web-7"};
    X509 *ca = ca_key ? pqt_tls_cert(ca_key, "pqt-ca", NULL, NULL, NULL, 1, 1) : NULL;
    int rc = ca != NULL ? pqt_tls_write(dir, "ca", ca, NULL) : -1;
    for (int i = 0; i < 4; i++) {
        X509 *x = NULL;
        if (rc == 0 && keys[i] != NULL)
            x = i == 3 ? pqt_tls_cert(keys[i], cns[i], "pqt", NULL, NULL, 10 + i, 0)
                       : pqt_tls_cert(keys[i], cns[i], i ? "pqt" : NULL, ca, ca_key, 10 + i, 0);
        rc = rc == 0 && x != NULL ? pqt_tls_write(dir, names[i], x, keys[i]) : -1;
        X509_free(x);
        EVP_PKEY_free(keys[i]);
    }
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    return rc;
}

#endif
