/* config.c - the configuration file (DESIGN.md "Configuration (YAML)"):
 * built-in defaults, section-by-section validation with FILE:LINE:COL
 * errors, the schema (path or inline, bound to the encryption keys), the
 * output path template, and the mapping onto pq_writer_opts. */
#include "config.h"
#include "compress.h"
#include "config_int.h"
#include "units.h"
#include "yamlpos.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CF_MAX_UNIX_PATH 107         /* sizeof(sockaddr_un.sun_path) - 1 */

typedef struct cx {
    yp_doc *d;
    cf_config *c;
    pq_err *err;
} cx;

static int nomem(pq_err *err) { return pq_err_set(err, PQ_ENOMEM, "config: out of memory"); }

static cf_pos pos_of(const yaml_node_t *n)
{
    return (cf_pos){(uint32_t)yp_line(n), (uint32_t)yp_col(n)};
}

/* ---- listen addresses ------------------------------------------------- */

static int parse_port(const char *p, uint16_t *port, const char **why)
{
    unsigned long v = 0;
    if (*p == '\0') {
        *why = "missing port after ':'";
        return PQ_EINVAL;
    }
    for (const char *q = p; *q; q++) {
        if (!isdigit((unsigned char)*q) || (v = v * 10 + (unsigned long)(*q - '0')) > 65535) {
            *why = "port must be a number from 1 to 65535";
            return PQ_EINVAL;
        }
    }
    if (v == 0) {
        *why = "port must be a number from 1 to 65535";
        return PQ_EINVAL;
    }
    *port = (uint16_t)v;
    return PQ_OK;
}

int cf_parse_listen(const char *s, cf_addr *out, const char **why)
{
    const char *host = s, *colon;
    size_t hlen;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':') {
            *why = "expected [IPv6]:port, e.g. [::1]:5170";
            return PQ_EINVAL;
        }
        host = s + 1;
        hlen = (size_t)(close - host);
        colon = close + 1;
        char tmp[INET6_ADDRSTRLEN + 1];
        struct in6_addr a6;
        if (hlen == 0 || hlen >= sizeof tmp || (memcpy(tmp, host, hlen), tmp[hlen] = '\0',
                                                inet_pton(AF_INET6, tmp, &a6) != 1)) {
            *why = "not an IPv6 address inside [ ]";
            return PQ_EINVAL;
        }
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL) {
            *why = "expected host:port, e.g. 127.0.0.1:5170";
            return PQ_EINVAL;
        }
        hlen = (size_t)(colon - s);
        if (memchr(s, ':', hlen) != NULL) {
            *why = "IPv6 addresses need brackets, e.g. [::1]:5170";
            return PQ_EINVAL;
        }
        if (hlen == 0) {
            *why = "missing host (use 0.0.0.0 or [::] for every interface)";
            return PQ_EINVAL;
        }
        for (size_t i = 0; i < hlen; i++)
            if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '-' && s[i] != '_') {
                *why = "host may contain only letters, digits, '.', '-' and '_'";
                return PQ_EINVAL;
            }
    }
    if (parse_port(colon + 1, &out->port, why) != 0)
        return PQ_EINVAL;
    char *h = strndup(host, hlen);
    if (h == NULL) {
        *why = "out of memory";
        return PQ_ENOMEM;
    }
    free(out->host);
    out->host = h;
    return PQ_OK;
}

/* ---- output path template ------------------------------------------- */

/* strftime conversions that make sense in a file name: no %n/%t, no
 * locale-dependent %c/%x/%X, and no %D (its slashes would nest directories
 * by accident). */
static const char path_conversions[] = "YmdHMSjyCGgVuUWwaAbBhepIlkszZFTR%";

int cf_path_check(const char *tmpl, size_t *off, const char **why)
{
    static const char *const names[] = {"host", "pid", "seq", "uuid"};
    bool seq = false;
    *off = 0;
    if (tmpl[0] == '/') {
        *why = "must be relative to output.dir";
        return PQ_EINVAL;
    }
    for (size_t i = 0; tmpl[i]; i++) {
        *off = i;
        char ch = tmpl[i];
        if (ch == '%') {
            if (tmpl[i + 1] == '\0' || strchr(path_conversions, tmpl[i + 1]) == NULL) {
                *why = "unsupported % field (use %Y %m %d %H %M %S %j %F %s ... or %% for '%')";
                return PQ_EINVAL;
            }
            i++;
        } else if (ch == '{') {
            const char *close = strchr(tmpl + i, '}');
            size_t k = 0, len = close ? (size_t)(close - tmpl - i - 1) : 0;
            while (close && k < 4 && (strlen(names[k]) != len || strncmp(names[k], tmpl + i + 1, len)))
                k++;
            if (close == NULL || k == 4) {
                *why = close ? "unknown placeholder (expected {host}, {pid}, {seq} or {uuid})"
                             : "'{' without a closing '}'";
                return PQ_EINVAL;
            }
            seq |= k >= 2;
            i += len + 1;
        } else if (ch == '}') {
            *why = "'}' without an opening '{'";
            return PQ_EINVAL;
        } else if ((unsigned char)ch < 0x20) {
            *why = "control character in the path";
            return PQ_EINVAL;
        } else if (ch == '/' && (i == 0 || tmpl[i + 1] == '/' || tmpl[i + 1] == '\0')) {
            *why = "empty directory name in the path";
            return PQ_EINVAL;
        } else if (ch == '.' && (i == 0 || tmpl[i - 1] == '/') && tmpl[i + 1] == '.' &&
                   (tmpl[i + 2] == '/' || tmpl[i + 2] == '\0')) {
            *why = "'..' would leave output.dir";
            return PQ_EINVAL;
        }
    }
    if (!seq) {
        *off = strlen(tmpl);
        *why = "must contain {seq} or {uuid}, or files rotated within the same period would collide";
        return PQ_EINVAL;
    }
    return PQ_OK;
}

/* ---- defaults ----------------------------------------------------------- */

static int set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? strdup(s) : NULL;
    return s && *dst == NULL ? PQ_ENOMEM : PQ_OK;
}

static int default_inputs(cf_config *c)
{
    c->inputs = calloc(2, sizeof *c->inputs);
    if (c->inputs == NULL)
        return PQ_ENOMEM;
    c->n_inputs = 2;
    c->inputs[0] = (cf_input){.type = CF_INPUT_TCP, .mode = -1};
    c->inputs[0].listen.port = 5170;
    c->inputs[1] = (cf_input){.type = CF_INPUT_UNIX, .mode = -1};
    int rc = set_str(&c->inputs[0].listen.host, "127.0.0.1");
    return rc ? rc : set_str(&c->inputs[1].path, "./parqd.sock");
}

static int set_defaults(cf_config *c)
{
    memset(c, 0, sizeof *c);
    cf_output *o = &c->output;
    o->rotate = (cf_roll){256u << 20, 0, 5 * 60 * 1000};
    o->row_group = (cf_roll){64u << 20, 1000000, 60 * 1000};
    o->page_max_bytes = 1u << 20;
    o->page_version = 2;
    o->crc = true;
    o->codec = PQ_CODEC_ZSTD;
    o->dictionary_max_bytes = 1u << 20;
    o->statistics = true;
    o->stats_truncate = 64;
    o->page_index = true;
    o->encryption.algorithm = PQ_AES_GCM_V1;
    o->encryption.footer_encrypted = true;
    o->encryption.store_aad_prefix = true;
    c->spool.sync = CF_SYNC_BATCH;
    c->limits.max_line_bytes = 1u << 20;
    c->limits.max_connections = 1024;
    c->limits.max_buffered_bytes = (size_t)512 << 20;
    c->limits.idle_timeout_ms = 5 * 60 * 1000;
    c->log.level = CF_LOG_INFO;
    int rc = default_inputs(c);
    rc = rc ? rc : set_str(&o->dir, "./out");
    rc = rc ? rc : set_str(&o->path, "dt=%Y-%m-%d/%H%M%S-{host}-{pid}-{seq}.parquet");
    rc = rc ? rc : set_str(&c->spool.dir, "./spool");
    rc = rc ? rc : set_str(&c->errors.dead_letter, "./rejects.ndjson");
    return rc;
}

static void free_inputs(cf_config *c)
{
    for (size_t i = 0; i < c->n_inputs; i++) {
        free(c->inputs[i].listen.host);
        free(c->inputs[i].path);
        cf_tls_free(c->inputs[i].tls);
        free(c->inputs[i].allow_uids);
        free(c->inputs[i].allow_gids);
    }
    free(c->inputs);
    c->inputs = NULL;
    c->n_inputs = 0;
}

void cf_config_free(cf_config *c)
{
    free(c->file);
    free_inputs(c);
    sc_schema_free(c->schema);
    free(c->schema_file);
    free(c->output.dir);
    free(c->output.path);
    cf_encryption *e = &c->output.encryption;
    free(e->footer_key.id);
    free(e->footer_key.file);
    for (size_t i = 0; i < e->n_columns; i++) {
        free(e->columns[i].column);
        free(e->columns[i].key.id);
        free(e->columns[i].key.file);
    }
    free(e->columns);
    free(e->aad_prefix);
    free(c->spool.dir);
    free(c->errors.dead_letter);
    free(c->metrics.listen.host);
    memset(c, 0, sizeof *c);
}

/* ---- inputs ------------------------------------------------------------- */

static int parse_mode(cx *x, yaml_node_t *n, const char *what, int *mode)
{
    const char *s;
    int rc = yp_str(x->d, n, what, &s, x->err);
    if (rc != 0)
        return rc;
    size_t len = strlen(s);
    long v = 0;
    bool ok = len >= 3 && len <= 4;
    for (size_t i = 0; ok && i < len; i++)
        ok = s[i] >= '0' && s[i] <= '7' && (v = v * 8 + (s[i] - '0')) <= 0777;
    if (!ok)
        return yp_err(x->d, n, x->err, "%s: expected an octal permission string like \"0660\"",
                      what);
    *mode = (int)v;
    return PQ_OK;
}

static int parse_tcp_input(cx *x, yaml_node_t *m, const char *what, cf_input *in)
{
    char kw[96];
    const char *s, *why;
    yaml_node_t *v = yp_get(x->d, m, "listen");
    if (v == NULL)
        return yp_err(x->d, m, x->err, "%s: missing key 'listen'", what);
    snprintf(kw, sizeof kw, "%s.listen", what);
    int rc = yp_str(x->d, v, kw, &s, x->err);
    if (rc == 0 && (rc = cf_parse_listen(s, &in->listen, &why)) != 0)
        return yp_err(x->d, v, x->err, "%s: '%s': %s", kw, s, why);
    if (rc == 0 && (v = yp_get(x->d, m, "tls")) != NULL) {
        snprintf(kw, sizeof kw, "%s.tls", what);
        rc = cf_parse_tls(x->d, v, kw, &in->tls, x->err);
    }
    return rc;
}

static int parse_unix_input(cx *x, yaml_node_t *m, const char *what, cf_input *in)
{
    char kw[96];
    yaml_node_t *v = yp_get(x->d, m, "path");
    if (v == NULL)
        return yp_err(x->d, m, x->err, "%s: missing key 'path'", what);
    snprintf(kw, sizeof kw, "%s.path", what);
    int rc = yp_strdup(x->d, v, kw, &in->path, x->err);
    if (rc == 0 && strlen(in->path) > CF_MAX_UNIX_PATH)
        return yp_err(x->d, v, x->err, "%s: longer than %d bytes, the limit for Unix socket "
                      "paths", kw, CF_MAX_UNIX_PATH);
    if (rc == 0 && (v = yp_get(x->d, m, "mode")) != NULL) {
        snprintf(kw, sizeof kw, "%s.mode", what);
        rc = parse_mode(x, v, kw, &in->mode);
    }
    if (rc == 0 && (v = yp_get(x->d, m, "allow_uids")) != NULL) {
        snprintf(kw, sizeof kw, "%s.allow_uids", what);
        rc = cf_parse_ids(x->d, v, kw, false, &in->allow_uids, &in->n_allow_uids, x->err);
    }
    if (rc == 0 && (v = yp_get(x->d, m, "allow_gids")) != NULL) {
        snprintf(kw, sizeof kw, "%s.allow_gids", what);
        rc = cf_parse_ids(x->d, v, kw, true, &in->allow_gids, &in->n_allow_gids, x->err);
    }
    return rc;
}

static int parse_input(cx *x, yaml_node_t *m, size_t idx, cf_input *in)
{
    static const char *const types[] = {"tcp", "unix", NULL};
    static const char *const tcp_keys[] = {"type", "listen", "tls", NULL};
    static const char *const unix_keys[] = {"type", "path", "mode", "allow_uids", "allow_gids",
                                            NULL};
    char what[64], kw[96];
    int type;
    snprintf(what, sizeof what, "inputs[%zu]", idx);
    in->mode = -1;
    int rc = yp_want_map(x->d, m, what, x->err);
    yaml_node_t *tn = rc ? NULL : yp_get(x->d, m, "type");
    if (rc == 0 && tn == NULL)
        return yp_err(x->d, m, x->err, "%s: missing key 'type' (expected tcp or unix)", what);
    snprintf(kw, sizeof kw, "%s.type", what);
    rc = rc ? rc : yp_enum(x->d, tn, kw, types, &type, x->err);
    rc = rc ? rc : yp_check_keys(x->d, m, what, type == 0 ? tcp_keys : unix_keys, x->err);
    if (rc != 0)
        return rc;
    in->type = type == 0 ? CF_INPUT_TCP : CF_INPUT_UNIX;
    in->pos = pos_of(m);
    return type == 0 ? parse_tcp_input(x, m, what, in) : parse_unix_input(x, m, what, in);
}

static bool same_input(const cf_input *a, const cf_input *b)
{
    if (a->type != b->type)
        return false;
    if (a->type == CF_INPUT_UNIX)
        return strcmp(a->path, b->path) == 0;
    return a->listen.port == b->listen.port && strcmp(a->listen.host, b->listen.host) == 0;
}

static int parse_inputs(cx *x, yaml_node_t *seq)
{
    int rc = yp_want_seq(x->d, seq, "inputs", x->err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return yp_err(x->d, seq, x->err, "inputs: empty list (leave the key out for the "
                      "defaults: tcp 127.0.0.1:5170 and unix ./parqd.sock)");
    free_inputs(x->c);
    if ((x->c->inputs = calloc(n, sizeof *x->c->inputs)) == NULL)
        return nomem(x->err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        yaml_node_t *m = yp_node(x->d, seq->data.sequence.items.start[i]);
        x->c->n_inputs = i + 1;
        rc = parse_input(x, m, i, &x->c->inputs[i]);
        /* Inputs are few; a quadratic check is fine (bounded by the
         * document size limit anyway). */
        for (size_t k = 0; rc == 0 && k < i && k < 4096; k++)
            if (same_input(&x->c->inputs[k], &x->c->inputs[i]))
                rc = yp_err(x->d, m, x->err, "inputs[%zu]: same address as inputs[%zu]", i, k);
    }
    return rc;
}

/* ---- output ------------------------------------------------------------- */

static int parse_roll(cx *x, yaml_node_t *m, const char *what, cf_roll *r)
{
    static const char *const keys[] = {"max_bytes", "max_rows", "max_age", NULL};
    char kw[64];
    int rc = yp_check_keys(x->d, m, what, keys, x->err);
    yaml_node_t *v;
    int64_t rows;
    if (rc == 0 && (v = yp_get(x->d, m, "max_bytes")) != NULL) {
        snprintf(kw, sizeof kw, "%s.max_bytes", what);
        rc = yp_size(x->d, v, kw, SIZE_MAX, &r->max_bytes, x->err);
    }
    if (rc == 0 && (v = yp_get(x->d, m, "max_rows")) != NULL) {
        snprintf(kw, sizeof kw, "%s.max_rows", what);
        if ((rc = yp_int(x->d, v, kw, 0, INT64_MAX, &rows, x->err)) == 0)
            r->max_rows = (uint64_t)rows;
    }
    if (rc == 0 && (v = yp_get(x->d, m, "max_age")) != NULL) {
        snprintf(kw, sizeof kw, "%s.max_age", what);
        rc = yp_duration_ms(x->d, v, kw, &r->max_age_ms, x->err);
    }
    return rc;
}

static int parse_page(cx *x, yaml_node_t *m, cf_output *o)
{
    static const char *const keys[] = {"max_bytes", "version", "crc", NULL};
    int rc = yp_check_keys(x->d, m, "output.page", keys, x->err);
    yaml_node_t *v;
    uint64_t bytes;
    int64_t version;
    if (rc == 0 && (v = yp_get(x->d, m, "max_bytes")) != NULL) {
        rc = yp_size(x->d, v, "output.page.max_bytes", (uint64_t)1 << 30, &bytes, x->err);
        if (rc == 0 && bytes < 1024)
            rc = yp_err(x->d, v, x->err, "output.page.max_bytes: at least 1KiB");
        o->page_max_bytes = (size_t)bytes;
    }
    if (rc == 0 && (v = yp_get(x->d, m, "version")) != NULL) {
        rc = yp_int(x->d, v, "output.page.version", 1, 2, &version, x->err);
        o->page_version = (int)version;
    }
    if (rc == 0 && (v = yp_get(x->d, m, "crc")) != NULL)
        rc = yp_bool(x->d, v, "output.page.crc", &o->crc, x->err);
    return rc;
}

static int parse_compression(cx *x, yaml_node_t *m, cf_output *o)
{
    yaml_node_t *v = yp_get(x->d, m, "compression"), *lv = yp_get(x->d, m, "compression_level");
    const char *name;
    int rc = PQ_OK;
    if (v != NULL) {
        rc = yp_str(x->d, v, "output.compression", &name, x->err);
        if (rc == 0 && pq_codec_from_name(name, &o->codec) != 0)
            return yp_err(x->d, v, x->err, "output.compression: unknown codec '%.40s' (expected "
                          "none, snappy, gzip, brotli, lz4_raw, zstd)", name);
        o->codec_level = 0;
    }
    if (rc != 0 || lv == NULL)
        return rc;
    int64_t level;
    pq_err e2;
    rc = yp_int(x->d, lv, "output.compression_level", -1000000, 1000, &level, x->err);
    if (rc == 0 && pq_codec_check_level(o->codec, (int)level, &e2) != 0)
        return yp_err(x->d, lv, x->err, "output.compression_level: %s", e2.msg);
    o->codec_level = (int)level;
    return rc;
}

static int parse_statistics(cx *x, yaml_node_t *v, cf_output *o)
{
    static const char *const keys[] = {"truncate", NULL};
    if (v->type != YAML_MAPPING_NODE)
        return yp_bool(x->d, v, "output.statistics", &o->statistics, x->err);
    int rc = yp_check_keys(x->d, v, "output.statistics", keys, x->err);
    yaml_node_t *t = yp_get(x->d, v, "truncate");
    int64_t n;
    o->statistics = true;
    if (rc == 0 && t != NULL &&
        (rc = yp_int(x->d, t, "output.statistics.truncate", 1, INT32_MAX, &n, x->err)) == 0)
        o->stats_truncate = (size_t)n;
    return rc;
}

static int parse_dictionary(cx *x, yaml_node_t *v, cf_output *o)
{
    static const char *const keys[] = {"max_bytes", NULL};
    int rc = yp_check_keys(x->d, v, "output.dictionary", keys, x->err);
    yaml_node_t *mb = yp_get(x->d, v, "max_bytes");
    uint64_t n;
    if (rc == 0 && mb != NULL &&
        (rc = yp_size(x->d, mb, "output.dictionary.max_bytes", (uint64_t)1 << 31, &n, x->err)) == 0) {
        if (n == 0)
            return yp_err(x->d, mb, x->err, "output.dictionary.max_bytes: must be at least 1");
        o->dictionary_max_bytes = (size_t)n;
    }
    return rc;
}

static int parse_key(cx *x, yaml_node_t *m, const char *what, cf_key *k)
{
    static const char *const keys[] = {"id", "file", NULL};
    char kw[96];
    int rc = yp_check_keys(x->d, m, what, keys, x->err);
    yaml_node_t *id = yp_get(x->d, m, "id"), *file = yp_get(x->d, m, "file");
    if (rc == 0 && (id == NULL || file == NULL))
        return yp_err(x->d, m, x->err, "%s: needs both id and file", what);
    snprintf(kw, sizeof kw, "%s.id", what);
    rc = rc ? rc : yp_strdup(x->d, id, kw, &k->id, x->err);
    snprintf(kw, sizeof kw, "%s.file", what);
    return rc ? rc : yp_strdup(x->d, file, kw, &k->file, x->err);
}

/* A key id names one key file; the same id with two files is a typo. */
static int check_key_ids(cx *x, const cf_encryption *e, yaml_node_t *at)
{
    for (size_t i = 0; i < e->n_columns; i++) {
        const cf_key *a = &e->columns[i].key;
        if (strcmp(a->id, e->footer_key.id) == 0 && strcmp(a->file, e->footer_key.file) != 0)
            return yp_err(x->d, at, x->err, "output.encryption.columns[%zu].key: id '%s' is the "
                          "footer key's id but names another file", i, a->id);
        for (size_t k = 0; k < i; k++) {
            const cf_column_key *b = &e->columns[k];
            if (strcmp(a->id, b->key.id) == 0 && strcmp(a->file, b->key.file) != 0)
                return yp_err(x->d, at, x->err, "output.encryption.columns[%zu].key: id '%s' "
                              "already names file '%s'", i, a->id, b->key.file);
            if (strcmp(e->columns[i].column, b->column) == 0)
                return yp_err(x->d, at, x->err, "output.encryption.columns[%zu]: column '%s' "
                              "already has a key", i, b->column);
        }
    }
    return PQ_OK;
}

static int parse_enc_columns(cx *x, yaml_node_t *seq, cf_encryption *e)
{
    static const char *const keys[] = {"column", "key", NULL};
    int rc = yp_want_seq(x->d, seq, "output.encryption.columns", x->err);
    size_t n = rc ? 0 : (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (rc != 0 || n == 0)
        return rc;
    if (n > 4096)
        return yp_err(x->d, seq, x->err, "output.encryption.columns: more than 4096 entries");
    if ((e->columns = calloc(n, sizeof *e->columns)) == NULL)
        return nomem(x->err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char what[64], kw[96];
        yaml_node_t *m = yp_node(x->d, seq->data.sequence.items.start[i]);
        cf_column_key *ck = &e->columns[i];
        e->n_columns = i + 1;
        snprintf(what, sizeof what, "output.encryption.columns[%zu]", i);
        rc = yp_check_keys(x->d, m, what, keys, x->err);
        yaml_node_t *col = rc ? NULL : yp_get(x->d, m, "column");
        yaml_node_t *key = rc ? NULL : yp_get(x->d, m, "key");
        if (rc == 0 && (col == NULL || key == NULL))
            return yp_err(x->d, m, x->err, "%s: needs column and key", what);
        snprintf(kw, sizeof kw, "%s.column", what);
        rc = rc ? rc : yp_strdup(x->d, col, kw, &ck->column, x->err);
        snprintf(kw, sizeof kw, "%s.key", what);
        rc = rc ? rc : parse_key(x, key, kw, &ck->key);
        ck->pos = pos_of(col ? col : m);
    }
    return rc ? rc : check_key_ids(x, e, seq);
}

static int parse_encryption(cx *x, yaml_node_t *m, cf_encryption *e)
{
    static const char *const keys[] = {"algorithm", "footer", "footer_key", "columns",
                                       "aad_prefix", "store_aad_prefix", NULL};
    static const char *const algos[] = {"AES_GCM_V1", "AES_GCM_CTR_V1", NULL};
    static const char *const footers[] = {"encrypted", "plaintext", NULL};
    int rc = yp_check_keys(x->d, m, "output.encryption", keys, x->err), idx;
    yaml_node_t *v;
    e->enabled = true;
    if (rc == 0 && (v = yp_get(x->d, m, "algorithm")) != NULL &&
        (rc = yp_enum(x->d, v, "output.encryption.algorithm", algos, &idx, x->err)) == 0)
        e->algorithm = idx == 0 ? PQ_AES_GCM_V1 : PQ_AES_GCM_CTR_V1;
    if (rc == 0 && (v = yp_get(x->d, m, "footer")) != NULL &&
        (rc = yp_enum(x->d, v, "output.encryption.footer", footers, &idx, x->err)) == 0)
        e->footer_encrypted = idx == 0;
    v = rc ? NULL : yp_get(x->d, m, "footer_key");
    if (rc == 0 && v == NULL)
        return yp_err(x->d, m, x->err, "output.encryption: missing key 'footer_key' "
                      "({id: ..., file: ...})");
    rc = rc ? rc : parse_key(x, v, "output.encryption.footer_key", &e->footer_key);
    if (rc == 0 && (v = yp_get(x->d, m, "columns")) != NULL)
        rc = parse_enc_columns(x, v, e);
    if (rc == 0 && (v = yp_get(x->d, m, "aad_prefix")) != NULL)
        rc = yp_strdup(x->d, v, "output.encryption.aad_prefix", &e->aad_prefix, x->err);
    if (rc == 0 && (v = yp_get(x->d, m, "store_aad_prefix")) != NULL) {
        rc = yp_bool(x->d, v, "output.encryption.store_aad_prefix", &e->store_aad_prefix, x->err);
        if (rc == 0 && !e->store_aad_prefix && e->aad_prefix == NULL)
            rc = yp_err(x->d, v, x->err, "output.encryption.store_aad_prefix: false needs "
                        "aad_prefix (there is nothing to withhold)");
    }
    return rc;
}

static int parse_path(cx *x, yaml_node_t *v, cf_output *o)
{
    const char *why;
    size_t off;
    int rc = yp_strdup(x->d, v, "output.path", &o->path, x->err);
    if (rc == 0 && cf_path_check(o->path, &off, &why) != 0)
        return yp_err_at(x->d, v, off, x->err, "output.path: %s", why);
    return rc;
}

static int parse_output(cx *x, yaml_node_t *m)
{
    static const char *const keys[] = {
        "dir", "path", "rotate", "row_group", "page", "compression", "compression_level",
        "dictionary", "statistics", "page_index", "encryption", NULL};
    cf_output *o = &x->c->output;
    int rc = yp_check_keys(x->d, m, "output", keys, x->err);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(x->d, m, "dir")) != NULL)
        rc = yp_strdup(x->d, v, "output.dir", &o->dir, x->err);
    if (rc == 0 && (v = yp_get(x->d, m, "path")) != NULL)
        rc = parse_path(x, v, o);
    if (rc == 0 && (v = yp_get(x->d, m, "rotate")) != NULL)
        rc = parse_roll(x, v, "output.rotate", &o->rotate);
    if (rc == 0 && (v = yp_get(x->d, m, "row_group")) != NULL) {
        rc = parse_roll(x, v, "output.row_group", &o->row_group);
        if (rc == 0 && o->row_group.max_bytes == 0 && o->row_group.max_rows == 0 &&
            o->row_group.max_age_ms == 0)
            rc = yp_err(x->d, v, x->err, "output.row_group: at least one of max_bytes, max_rows "
                        "and max_age must be set, or rows would buffer without bound");
    }
    if (rc == 0 && (v = yp_get(x->d, m, "page")) != NULL)
        rc = parse_page(x, v, o);
    rc = rc ? rc : parse_compression(x, m, o);
    if (rc == 0 && (v = yp_get(x->d, m, "dictionary")) != NULL)
        rc = parse_dictionary(x, v, o);
    if (rc == 0 && (v = yp_get(x->d, m, "statistics")) != NULL)
        rc = parse_statistics(x, v, o);
    if (rc == 0 && (v = yp_get(x->d, m, "page_index")) != NULL)
        rc = yp_bool(x->d, v, "output.page_index", &o->page_index, x->err);
    if (rc == 0 && (v = yp_get(x->d, m, "encryption")) != NULL)
        rc = parse_encryption(x, v, &o->encryption);
    return rc;
}

/* ---- spool, limits, errors, metrics --------------------------------------- */

static int parse_spool(cx *x, yaml_node_t *m)
{
    static const char *const keys[] = {"dir", "sync", NULL};
    static const char *const syncs[] = {"none", "batch", "always", NULL};
    int rc = yp_check_keys(x->d, m, "spool", keys, x->err), idx;
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(x->d, m, "dir")) != NULL)
        rc = yp_strdup(x->d, v, "spool.dir", &x->c->spool.dir, x->err);
    if (rc == 0 && (v = yp_get(x->d, m, "sync")) != NULL &&
        (rc = yp_enum(x->d, v, "spool.sync", syncs, &idx, x->err)) == 0)
        x->c->spool.sync = (cf_sync)idx;
    return rc;
}

static int parse_limits(cx *x, yaml_node_t *m)
{
    static const char *const keys[] = {"max_line_bytes", "max_connections",
                                       "max_buffered_bytes", "idle_timeout", NULL};
    int rc = yp_check_keys(x->d, m, "limits", keys, x->err);
    yaml_node_t *v, *buffered = NULL;
    uint64_t n;
    int64_t conns;
    if (rc == 0 && (v = yp_get(x->d, m, "max_line_bytes")) != NULL) {
        rc = yp_size(x->d, v, "limits.max_line_bytes", (uint64_t)1 << 30, &n, x->err);
        if (rc == 0 && n < 64)
            rc = yp_err(x->d, v, x->err, "limits.max_line_bytes: at least 64 bytes");
        x->c->limits.max_line_bytes = (size_t)n;
    }
    if (rc == 0 && (v = yp_get(x->d, m, "max_connections")) != NULL &&
        (rc = yp_int(x->d, v, "limits.max_connections", 1, 1000000, &conns, x->err)) == 0)
        x->c->limits.max_connections = (size_t)conns;
    if (rc == 0 && (buffered = yp_get(x->d, m, "max_buffered_bytes")) != NULL &&
        (rc = yp_size(x->d, buffered, "limits.max_buffered_bytes", SIZE_MAX, &n, x->err)) == 0)
        x->c->limits.max_buffered_bytes = (size_t)n;
    if (rc == 0 && (v = yp_get(x->d, m, "idle_timeout")) != NULL)
        rc = yp_duration_ms(x->d, v, "limits.idle_timeout", &x->c->limits.idle_timeout_ms, x->err);
    if (rc == 0 && x->c->limits.max_buffered_bytes < x->c->limits.max_line_bytes)
        rc = yp_err(x->d, buffered ? buffered : m, x->err, "limits.max_buffered_bytes: smaller "
                    "than max_line_bytes (%zu), so one long line could never be buffered",
                    x->c->limits.max_line_bytes);
    return rc;
}

static int parse_errors(cx *x, yaml_node_t *m)
{
    static const char *const keys[] = {"dead_letter", NULL};
    int rc = yp_check_keys(x->d, m, "errors", keys, x->err);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(x->d, m, "dead_letter")) != NULL)
        rc = yp_strdup(x->d, v, "errors.dead_letter", &x->c->errors.dead_letter, x->err);
    return rc;
}

static int parse_metrics(cx *x, yaml_node_t *m)
{
    static const char *const keys[] = {"listen", NULL};
    int rc = yp_check_keys(x->d, m, "metrics", keys, x->err);
    yaml_node_t *v = rc ? NULL : yp_get(x->d, m, "listen");
    const char *s, *why;
    if (rc == 0 && v == NULL)
        return yp_err(x->d, m, x->err, "metrics: missing key 'listen' (e.g. \"127.0.0.1:9170\")");
    rc = rc ? rc : yp_str(x->d, v, "metrics.listen", &s, x->err);
    if (rc == 0 && (rc = cf_parse_listen(s, &x->c->metrics.listen, &why)) != 0)
        return yp_err(x->d, v, x->err, "metrics.listen: '%s': %s", s, why);
    /* The metrics endpoint is never served on an input port: an input's
     * clients would reach it, and a scraper would reach the input. */
    for (size_t i = 0; rc == 0 && i < x->c->n_inputs; i++) {
        const cf_input *in = &x->c->inputs[i];
        if (in->type == CF_INPUT_TCP && cf_addr_overlaps(&in->listen, &x->c->metrics.listen))
            return yp_err(x->d, v, x->err, "metrics.listen: '%s' is the address of inputs[%zu]; "
                          "give the metrics endpoint a port of its own", s, i);
    }
    x->c->metrics.enabled = rc == 0;
    return rc;
}

/* ---- schema and keys ----------------------------------------------------- */

/* "dir/of/config.yaml" + "schemas/a.yaml" -> "dir/of/schemas/a.yaml". */
static char *relative_to(const char *config, const char *path)
{
    const char *slash = strrchr(config, '/');
    if (path[0] == '/' || slash == NULL)
        return strdup(path);
    size_t dl = (size_t)(slash - config) + 1, pl = strlen(path);
    char *p = malloc(dl + pl + 1);
    if (p != NULL) {
        memcpy(p, config, dl);
        memcpy(p + dl, path, pl + 1);
    }
    return p;
}

static int parse_schema(cx *x, yaml_node_t *v)
{
    if (v->type == YAML_MAPPING_NODE)
        return sc_schema_load_node(x->d, v, &x->c->schema, x->err);
    const char *s;
    int rc = yp_str(x->d, v, "schema", &s, x->err);
    if (rc != 0)
        return rc;
    if ((x->c->schema_file = relative_to(x->d->file, s)) == NULL)
        return nomem(x->err);
    pq_err e2;
    rc = sc_schema_load_file(x->c->schema_file, &x->c->schema, &e2);
    if (rc == PQ_EIO)
        return yp_err(x->d, v, x->err, "schema: %s", e2.msg);
    if (rc != 0)
        *x->err = e2;
    return rc;
}

static bool key_defined(const cf_encryption *e, const char *id)
{
    if (strcmp(e->footer_key.id, id) == 0)
        return true;
    for (size_t i = 0; i < e->n_columns; i++)
        if (strcmp(e->columns[i].key.id, id) == 0)
            return true;
    return false;
}

/* Schema `key:` options must name keys the configuration defines, and
 * output.encryption.columns must name columns the schema has. */
static int bind_keys(cf_config *c, pq_err *err)
{
    const cf_encryption *e = &c->output.encryption;
    sc_schema *s = c->schema;
    for (size_t i = 0; i < s->n_leaves; i++) {
        const char *id = s->leaves[i].opts.key_id;
        const sc_column *col = s->leaves[i].column;
        if (id == NULL)
            continue;
        if (!e->enabled)
            return pq_err_set(err, PQ_EINVAL, "%s:%u:%u: column '%s': key '%s' is set but "
                              "output.encryption is not configured", col->pos.file,
                              col->pos.line, col->pos.col, col->name, id);
        if (!key_defined(e, id))
            return pq_err_set(err, PQ_EINVAL, "%s:%u:%u: column '%s': key '%s' is not defined "
                              "in output.encryption (footer_key or columns[].key)",
                              col->pos.file, col->pos.line, col->pos.col, col->name, id);
    }
    for (size_t i = 0; i < e->n_columns; i++) {
        pq_err e2;
        const cf_column_key *ck = &e->columns[i];
        if (sc_schema_set_key(s, ck->column, ck->key.id, &e2) != 0)
            return pq_err_set(err, e2.code, "%s:%u:%u: output.encryption.columns[%zu].column: "
                              "%s", c->file ? c->file : "<config>", ck->pos.line, ck->pos.col, i,
                              e2.msg);
    }
    return PQ_OK;
}

static int parse_log(cx *x, yaml_node_t *m)
{
    static const char *const keys[] = {"level", NULL};
    static const char *const levels[] = {"error", "warning", "info", "debug", NULL};
    int rc = yp_check_keys(x->d, m, "log", keys, x->err), idx;
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(x->d, m, "level")) != NULL &&
        (rc = yp_enum(x->d, v, "log.level", levels, &idx, x->err)) == 0)
        x->c->log.level = (cf_log_level)idx;
    return rc;
}

/* ---- top level ------------------------------------------------------------ */

static int parse_root(cx *x, yaml_node_t *root, bool want_schema)
{
    static const char *const keys[] = {"inputs", "schema", "output", "spool", "limits",
                                       "errors", "metrics", "log", NULL};
    if (root == NULL || yp_is_null(root))
        return PQ_OK; /* an empty file: every default */
    int rc = yp_check_keys(x->d, root, "config", keys, x->err);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(x->d, root, "inputs")) != NULL)
        rc = parse_inputs(x, v);
    if (rc == 0 && (v = yp_get(x->d, root, "output")) != NULL)
        rc = parse_output(x, v);
    if (rc == 0 && (v = yp_get(x->d, root, "spool")) != NULL)
        rc = parse_spool(x, v);
    if (rc == 0 && (v = yp_get(x->d, root, "limits")) != NULL)
        rc = parse_limits(x, v);
    if (rc == 0 && (v = yp_get(x->d, root, "errors")) != NULL)
        rc = parse_errors(x, v);
    if (rc == 0 && (v = yp_get(x->d, root, "metrics")) != NULL)
        rc = parse_metrics(x, v);
    if (rc == 0 && (v = yp_get(x->d, root, "log")) != NULL)
        rc = parse_log(x, v);
    if (rc == 0 && want_schema && (v = yp_get(x->d, root, "schema")) != NULL && !yp_is_null(v))
        rc = parse_schema(x, v);
    return rc;
}

static int finish_load(cf_config *c, yp_doc *d, const char *schema_file, pq_err *err)
{
    cx x = {.d = d, .c = c, .err = err};
    int rc = set_str(&c->file, d->file) ? nomem(err) : PQ_OK;
    rc = rc ? rc : parse_root(&x, yp_root(d), schema_file == NULL);
    if (rc == 0 && schema_file != NULL)
        return cf_config_use_schema_file(c, schema_file, err);
    if (rc == 0 && c->schema == NULL)
        rc = sc_schema_default(&c->schema, err);
    return rc ? rc : bind_keys(c, err);
}

int cf_config_default(cf_config *out, pq_err *err)
{
    if (set_defaults(out) != 0)
        return nomem(err);
    return sc_schema_default(&out->schema, err);
}

int cf_config_load_ex(const char *path, const char *schema_file, cf_config *out, pq_err *err)
{
    yp_doc d;
    if (set_defaults(out) != 0)
        return nomem(err);
    int rc = yp_load_file(&d, path, err);
    rc = rc ? rc : finish_load(out, &d, schema_file, err);
    yp_free(&d);
    return rc;
}

int cf_config_load(const char *path, cf_config *out, pq_err *err)
{
    return cf_config_load_ex(path, NULL, out, err);
}

int cf_config_load_buffer(const char *name, const void *buf, size_t len, cf_config *out,
                          pq_err *err)
{
    yp_doc d;
    if (set_defaults(out) != 0)
        return nomem(err);
    int rc = yp_load_buffer(&d, name, buf, len, err);
    rc = rc ? rc : finish_load(out, &d, NULL, err);
    yp_free(&d);
    return rc;
}

int cf_config_use_schema_file(cf_config *c, const char *schema_file, pq_err *err)
{
    sc_schema *s;
    int rc = sc_schema_load_file(schema_file, &s, err);
    if (rc != 0)
        return rc;
    sc_schema_free(c->schema);
    c->schema = s;
    if (set_str(&c->schema_file, schema_file) != 0)
        return nomem(err);
    return bind_keys(c, err);
}

void cf_writer_opts(const cf_config *c, pq_writer_opts *o)
{
    const cf_output *out = &c->output;
    pq_writer_opts_default(o);
    o->codec = out->codec;
    o->codec_level = out->codec_level;
    o->page_version = out->page_version;
    o->crc = out->crc;
    o->page_max_bytes = out->page_max_bytes;
    o->dictionary_max_bytes = out->dictionary_max_bytes;
    o->statistics = out->statistics;
    o->stats_truncate = out->stats_truncate;
    o->row_group_max_rows = (size_t)out->row_group.max_rows;
    o->row_group_max_bytes = (size_t)out->row_group.max_bytes;
    o->page_index = out->page_index;
}
