/* config_input.c - the `inputs:` section of the configuration (DESIGN.md
 * "Configuration (YAML)"): TCP and Unix socket inputs, each checked with
 * FILE:LINE:COL errors, and no two on the same address. Their security
 * settings (tls, allow_uids, allow_gids) are config_sec.c's.
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

static int parse_input(cf_ctx *x, yaml_node_t *m, size_t idx, cf_input *in)
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
    in->pos = cf_pos_of(m);
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
