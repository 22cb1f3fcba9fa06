/* config_input.c - the `inputs:` section of the configuration (README.md
 * "Configuration"): TCP and Unix socket inputs of NDJSON lines, and
 * HTTP inputs over either (`type: http` with `listen:` or `path:`), each
 * checked with FILE:LINE:COL errors, and no two on the same address.
 * Their security settings (tls, allow_uids, allow_gids) are
 * config_sec.c's; an http input's max_body_bytes and auth are here.
 *
 * Thread: whichever loads the configuration. */
#include "config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CF_MAX_UNIX_PATH 107         /* sizeof(sockaddr_un.sun_path) - 1 */

void cf_free_inputs(cf_config *c)
{
    for (size_t i = 0; i < c->n_inputs; i++) {
        free(c->inputs[i].listen.host);
        free(c->inputs[i].path);
        cf_tls_free(c->inputs[i].tls);
        free(c->inputs[i].allow_uids);
        free(c->inputs[i].allow_gids);
        free(c->inputs[i].http.bearer_token_file);
        free(c->inputs[i].http.basic_file);
    }
    free(c->inputs);
    c->inputs = NULL;
    c->n_inputs = 0;
}

static int parse_mode(cf_ctx *x, yaml_node_t *n, const char *what, int *mode)
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

static int parse_tcp_input(cf_ctx *x, yaml_node_t *m, const char *what, cf_input *in)
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

static int parse_unix_input(cf_ctx *x, yaml_node_t *m, const char *what, cf_input *in)
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

/* auth: {bearer_token_file: F} or {basic_file: F}, not both. */
static int parse_auth(cf_ctx *x, yaml_node_t *m, const char *what, cf_http *h)
{
    static const char *const keys[] = {"bearer_token_file", "basic_file", NULL};
    char kw[128];
    int rc = yp_want_map(x->d, m, what, x->err);
    rc = rc ? rc : yp_check_keys(x->d, m, what, keys, x->err);
    yaml_node_t *t = rc ? NULL : yp_get(x->d, m, "bearer_token_file");
    yaml_node_t *b = rc ? NULL : yp_get(x->d, m, "basic_file");
    if (rc == 0 && (t == NULL) == (b == NULL))
        return yp_err(x->d, m, x->err, "%s: expected one of bearer_token_file or basic_file",
                      what);
    if (rc == 0 && t != NULL) {
        snprintf(kw, sizeof kw, "%s.bearer_token_file", what);
        rc = yp_strdup(x->d, t, kw, &h->bearer_token_file, x->err);
    }
    if (rc == 0 && b != NULL) {
        snprintf(kw, sizeof kw, "%s.basic_file", what);
        rc = yp_strdup(x->d, b, kw, &h->basic_file, x->err);
    }
    return rc;
}

/* max_header_bytes, max_headers, header_timeout: bounded both ways, as a
 * limit of 0 (or of hours) would refuse every request (or help slowloris). */
static int parse_http_limits(cf_ctx *x, yaml_node_t *m, const char *what, cf_http *h)
{
    char kw[96];
    yaml_node_t *v;
    int rc = 0;
    h->max_header_bytes = CF_HTTP_MAX_HEADER_BYTES_DEFAULT;
    h->max_headers = CF_HTTP_MAX_HEADERS_DEFAULT;
    h->header_timeout_ms = CF_HTTP_HEADER_TIMEOUT_DEFAULT_MS;
    if ((v = yp_get(x->d, m, "max_header_bytes")) != NULL) {
        snprintf(kw, sizeof kw, "%s.max_header_bytes", what);
        rc = yp_size(x->d, v, kw, (uint64_t)1 << 20, &h->max_header_bytes, x->err);
        if (rc == 0 && h->max_header_bytes < 1024)
            rc = yp_err(x->d, v, x->err, "%s: must be at least 1KiB", kw);
    }
    if (rc == 0 && (v = yp_get(x->d, m, "max_headers")) != NULL) {
        snprintf(kw, sizeof kw, "%s.max_headers", what);
        int64_t n = 0;
        rc = yp_int(x->d, v, kw, 8, 10000, &n, x->err);
        h->max_headers = (uint64_t)n;
    }
    if (rc == 0 && (v = yp_get(x->d, m, "header_timeout")) != NULL) {
        snprintf(kw, sizeof kw, "%s.header_timeout", what);
        rc = yp_duration_ms(x->d, v, kw, &h->header_timeout_ms, x->err);
        if (rc == 0 && (h->header_timeout_ms < 100 || h->header_timeout_ms > 3600000))
            rc = yp_err(x->d, v, x->err, "%s: must be between 100ms and 1h", kw);
    }
    return rc;
}

/* type: http: the transport by listen: (TCP, tls: allowed) or path:
 * (Unix), then max_body_bytes and auth. */
static int parse_http_input(cf_ctx *x, yaml_node_t *m, const char *what, cf_input *in)
{
    char kw[96];
    bool tcp = yp_get(x->d, m, "listen") != NULL, unx = yp_get(x->d, m, "path") != NULL;
    if (tcp == unx)
        return yp_err(x->d, m, x->err, "%s: an http input needs one of 'listen' (TCP) or "
                      "'path' (Unix socket)", what);
    if (!tcp && yp_get(x->d, m, "tls") != NULL)
        return yp_err(x->d, yp_get(x->d, m, "tls"), x->err, "%s: tls is for TCP inputs "
                      "(listen:)", what);
    if (tcp && (yp_get(x->d, m, "mode") || yp_get(x->d, m, "allow_uids") ||
                yp_get(x->d, m, "allow_gids")))
        return yp_err(x->d, m, x->err, "%s: mode, allow_uids and allow_gids are for Unix "
                      "socket inputs (path:)", what);
    in->type = tcp ? CF_INPUT_TCP : CF_INPUT_UNIX;
    int rc = tcp ? parse_tcp_input(x, m, what, in) : parse_unix_input(x, m, what, in);
    yaml_node_t *v;
    in->http.max_body_bytes = CF_HTTP_MAX_BODY_DEFAULT;
    if (rc == 0 && (v = yp_get(x->d, m, "max_body_bytes")) != NULL) {
        snprintf(kw, sizeof kw, "%s.max_body_bytes", what);
        rc = yp_size(x->d, v, kw, (uint64_t)1 << 30, &in->http.max_body_bytes, x->err);
        if (rc == 0 && in->http.max_body_bytes == 0)
            rc = yp_err(x->d, v, x->err, "%s: must be at least 1 byte", kw);
    }
    if (rc == 0)
        rc = parse_http_limits(x, m, what, &in->http);
    if (rc == 0 && (v = yp_get(x->d, m, "auth")) != NULL) {
        snprintf(kw, sizeof kw, "%s.auth", what);
        rc = parse_auth(x, v, kw, &in->http);
    }
    return rc;
}

static int parse_input(cf_ctx *x, yaml_node_t *m, size_t idx, cf_input *in)
{
    static const char *const types[] = {"tcp", "unix", "http", NULL};
    static const char *const tcp_keys[] = {"type", "listen", "tls", NULL};
    static const char *const unix_keys[] = {"type", "path", "mode", "allow_uids", "allow_gids",
                                            NULL};
    static const char *const http_keys[] = {"type", "listen", "tls", "path", "mode",
                                            "allow_uids", "allow_gids", "max_body_bytes",
                                            "max_header_bytes", "max_headers",
                                            "header_timeout", "auth", NULL};
    static const char *const *const keys[] = {tcp_keys, unix_keys, http_keys};
    char what[64], kw[96];
    int type;
    snprintf(what, sizeof what, "inputs[%zu]", idx);
    in->mode = -1;
    int rc = yp_want_map(x->d, m, what, x->err);
    yaml_node_t *tn = rc ? NULL : yp_get(x->d, m, "type");
    if (rc == 0 && tn == NULL)
        return yp_err(x->d, m, x->err, "%s: missing key 'type' (expected tcp, unix or http)",
                      what);
    snprintf(kw, sizeof kw, "%s.type", what);
    rc = rc ? rc : yp_enum(x->d, tn, kw, types, &type, x->err);
    rc = rc ? rc : yp_check_keys(x->d, m, what, keys[type], x->err);
    if (rc != 0)
        return rc;
    in->pos = cf_pos_of(m);
    switch (type) {
    case 0:
        in->type = CF_INPUT_TCP;
        return parse_tcp_input(x, m, what, in);
    case 1:
        in->type = CF_INPUT_UNIX;
        return parse_unix_input(x, m, what, in);
    default:
        in->proto = CF_PROTO_HTTP;
        return parse_http_input(x, m, what, in);
    }
}

static bool same_input(const cf_input *a, const cf_input *b)
{
    if (a->type != b->type)
        return false;
    if (a->type == CF_INPUT_UNIX)
        return strcmp(a->path, b->path) == 0;
    return a->listen.port == b->listen.port && strcmp(a->listen.host, b->listen.host) == 0;
}

int cf_parse_inputs(cf_ctx *x, yaml_node_t *seq)
{
    int rc = yp_want_seq(x->d, seq, "inputs", x->err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return yp_err(x->d, seq, x->err, "inputs: empty list (leave the key out for the "
                      "defaults: tcp 127.0.0.1:5170 and unix ./parqd.sock)");
    cf_free_inputs(x->c);
    if ((x->c->inputs = calloc(n, sizeof *x->c->inputs)) == NULL)
        return cf_nomem(x->err);
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
