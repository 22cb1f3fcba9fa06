/* config_sec.c - the security settings of inputs (DESIGN.md
 * "Configuration (YAML)" inputs): a TCP input's `tls:` mapping and a Unix
 * input's `allow_uids` / `allow_gids`, with FILE:LINE:COL errors.
 *
 * Only syntax and names are checked here: the certificate and key files
 * are read by the daemon (daemon/ingest/tls.c), which also checks the key file's
 * mode (keyfile.h), so `parqd check` on another machine does not need them.
 *
 * Thread: whichever loads the configuration. */
#include "config_int.h"

#include <ctype.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cf_tls_free(cf_tls *t)
{
    if (t == NULL)
        return;
    free(t->cert);
    free(t->key);
    free(t->client_ca);
    for (size_t i = 0; i < t->n_allow_subjects; i++)
        free(t->allow_subjects[i]);
    free(t->allow_subjects);
    free(t);
}

/* "CN=web-7" or "CN=web-7,O=Example": attribute=value pairs joined by
 * commas, attribute names made of letters and digits (the OpenSSL short
 * or long names, resolved when the daemon builds its TLS context). NULL
 * when s is well formed, else why not. */
static const char *subject_syntax(const char *s)
{
    for (const char *p = s;;) {
        const char *start = p;
        while (isalnum((unsigned char)*p))
            p++;
        if (p == start || *p != '=')
            return "expected ATTRIBUTE=value pairs joined by ',', e.g. \"CN=web-7\" or "
                   "\"CN=web-7,O=Example\"";
        const char *val = ++p;
        while (*p != '\0' && *p != ',')
            p++;
        if (p == val)
            return "an attribute with an empty value";
        if (*p == '\0')
            return NULL;
        p++;
    }
}

static int parse_subjects(yp_doc *d, yaml_node_t *seq, const char *what, cf_tls *t,
                          pq_err *err)
{
    char kw[96];
    snprintf(kw, sizeof kw, "%s.allow_subjects", what);
    int rc = yp_want_seq(d, seq, kw, err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return yp_err(d, seq, err, "%s: empty list (leave the key out to allow every "
                      "certificate the client_ca signed)", kw);
    if ((t->allow_subjects = calloc(n, sizeof *t->allow_subjects)) == NULL)
        return cf_nomem(err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        yaml_node_t *v = yp_node(d, seq->data.sequence.items.start[i]);
        char kwi[128];
        snprintf(kwi, sizeof kwi, "%s[%zu]", kw, i);
        t->n_allow_subjects = i + 1;
        rc = yp_strdup(d, v, kwi, &t->allow_subjects[i], err);
        const char *why = rc == 0 ? subject_syntax(t->allow_subjects[i]) : NULL;
        if (why != NULL)
            rc = yp_err(d, v, err, "%s: '%.60s': %s", kwi, t->allow_subjects[i], why);
    }
    return rc;
}

static int parse_version(yp_doc *d, yaml_node_t *v, const char *what, int *out, pq_err *err)
{
    char kw[96];
    const char *s;
    snprintf(kw, sizeof kw, "%s.min_version", what);
    int rc = yp_str(d, v, kw, &s, err);
    if (rc != 0)
        return rc;
    if (strcmp(s, "1.2") == 0 || strcmp(s, "1.3") == 0) {
        *out = s[2] == '2' ? 12 : 13;
        return PQ_OK;
    }
    return yp_err(d, v, err, "%s: '%.20s': expected \"1.2\" or \"1.3\" (older versions are "
                  "not offered)", kw, s);
}

static int tls_file(yp_doc *d, yaml_node_t *m, const char *what, const char *key, char **out,
                    pq_err *err)
{
    char kw[96];
    yaml_node_t *v = yp_get(d, m, key);
    if (v == NULL)
        return PQ_OK;
    snprintf(kw, sizeof kw, "%s.%s", what, key);
    return yp_strdup(d, v, kw, out, err);
}

int cf_parse_tls(yp_doc *d, yaml_node_t *m, const char *what, cf_tls **out, pq_err *err)
{
    static const char *const keys[] = {"cert", "key", "client_ca", "allow_subjects",
                                       "min_version", "handshake_timeout", NULL};
    char kw[96];
    int rc = yp_want_map(d, m, what, err);
    rc = rc ? rc : yp_check_keys(d, m, what, keys, err);
    if (rc != 0)
        return rc;
    cf_tls *t = calloc(1, sizeof *t);
    if (t == NULL)
        return cf_nomem(err);
    *out = t;
    t->min_version = 12;
    t->handshake_timeout_ms = CF_TLS_HANDSHAKE_TIMEOUT_MS;
    t->pos = (cf_pos){(uint32_t)yp_line(m), (uint32_t)yp_col(m)};
    if (yp_get(d, m, "cert") == NULL || yp_get(d, m, "key") == NULL)
        return yp_err(d, m, err, "%s: needs both cert and key (PEM files)", what);
    rc = tls_file(d, m, what, "cert", &t->cert, err);
    rc = rc ? rc : tls_file(d, m, what, "key", &t->key, err);
    rc = rc ? rc : tls_file(d, m, what, "client_ca", &t->client_ca, err);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(d, m, "allow_subjects")) != NULL) {
        if (t->client_ca == NULL)
            return yp_err(d, v, err, "%s.allow_subjects: needs client_ca (without it no "
                          "client certificate is asked for)", what);
        rc = parse_subjects(d, v, what, t, err);
    }
    if (rc == 0 && (v = yp_get(d, m, "min_version")) != NULL)
        rc = parse_version(d, v, what, &t->min_version, err);
    if (rc == 0 && (v = yp_get(d, m, "handshake_timeout")) != NULL) {
        snprintf(kw, sizeof kw, "%s.handshake_timeout", what);
        rc = yp_duration_ms(d, v, kw, &t->handshake_timeout_ms, err);
        if (rc == 0 && t->handshake_timeout_ms == 0)
            rc = yp_err(d, v, err, "%s: must be more than 0 (a client that never finishes "
                        "its handshake would hold a connection forever)", kw);
    }
    return rc;
}

/* A user or group name, or a number. */
static int resolve_id(yp_doc *d, yaml_node_t *v, const char *kw, bool groups, uint32_t *id,
                      pq_err *err)
{
    const char *s;
    int rc = yp_str(d, v, kw, &s, err);
    if (rc != 0)
        return rc;
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (isdigit((unsigned char)s[0]) && *end == '\0') {
        if (n >= UINT32_MAX)
            return yp_err(d, v, err, "%s: %s is out of range", kw, s);
        *id = (uint32_t)n;
        return PQ_OK;
    }
    if (groups) {
        struct group *g = getgrnam(s);
        if (g != NULL) {
            *id = (uint32_t)g->gr_gid;
            return PQ_OK;
        }
    } else {
        struct passwd *p = getpwnam(s);
        if (p != NULL) {
            *id = (uint32_t)p->pw_uid;
            return PQ_OK;
        }
    }
    return yp_err(d, v, err, "%s: no %s named '%.40s' on this machine", kw,
                  groups ? "group" : "user", s);
}

int cf_parse_ids(yp_doc *d, yaml_node_t *seq, const char *what, bool groups, uint32_t **out,
                 size_t *n_out, pq_err *err)
{
    int rc = yp_want_seq(d, seq, what, err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return yp_err(d, seq, err, "%s: empty list (leave the key out to allow every peer "
                      "that can open the socket)", what);
    free(*out);
    *n_out = 0;
    if ((*out = calloc(n, sizeof **out)) == NULL)
        return cf_nomem(err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char kw[128];
        snprintf(kw, sizeof kw, "%s[%zu]", what, i);
        rc = resolve_id(d, yp_node(d, seq->data.sequence.items.start[i]), kw, groups,
                        &(*out)[i], err);
        if (rc == 0)
            *n_out = i + 1;
    }
    return rc;
}
