/* config.c - the configuration file (DESIGN.md "Configuration (YAML)"):
 * built-in defaults, loading section by section with FILE:LINE:COL errors
 * (inputs: config_input.c, output: config_output.c, schema:
 * config_schema.c; spool, limits, errors, metrics and log here), and the
 * mapping onto pq_writer_opts.
 *
 * Thread: whichever loads the configuration (main thread at start and on
 * reload, `parqd check`, `parqd convert`). */
#include "config_int.h"

#include <stdlib.h>
#include <string.h>

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
    o->max_open_files = CF_MAX_OPEN_FILES_DEFAULT;
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

void cf_config_free(cf_config *c)
{
    free(c->file);
    cf_free_inputs(c);
    sc_schema_free(c->schema);
    free(c->schema_file);
    free(c->output.dir);
    cf_s3_free(c->output.s3);
    free(c->output.s3);
    free(c->output.path);
    free(c->output.time_from);
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

/* ---- spool, limits, errors, metrics --------------------------------------- */

static int parse_spool(cf_ctx *x, yaml_node_t *m)
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

static int parse_limits(cf_ctx *x, yaml_node_t *m)
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

static int parse_errors(cf_ctx *x, yaml_node_t *m)
{
    static const char *const keys[] = {"dead_letter", NULL};
    int rc = yp_check_keys(x->d, m, "errors", keys, x->err);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(x->d, m, "dead_letter")) != NULL)
        rc = yp_strdup(x->d, v, "errors.dead_letter", &x->c->errors.dead_letter, x->err);
    return rc;
}

static int parse_metrics(cf_ctx *x, yaml_node_t *m)
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

static int parse_log(cf_ctx *x, yaml_node_t *m)
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

/* Partitioned output to S3: each open file holds up to three parts of
 * part_size in memory (store_s3_parts.c) and parts are not staged on
 * disk, so max_open_files of them must fit limits.max_buffered_bytes. */
static int check_s3_open_files(cf_ctx *x, yaml_node_t *root)
{
    const cf_output *o = &x->c->output;
    if (o->s3 == NULL || !o->partitioned)
        return 0;
    const uint64_t need = (uint64_t)o->max_open_files * 3 * o->s3->part_size;
    if (need <= (uint64_t)x->c->limits.max_buffered_bytes)
        return 0;
    yaml_node_t *out = yp_get(x->d, root, "output");
    yaml_node_t *at = out ? yp_get(x->d, out, "max_open_files") : NULL;
    return yp_err(x->d, at ? at : out, x->err, "output.max_open_files: %u open S3 files may hold "
                  "3 parts of output.s3.part_size (%llu MiB) each, %llu MiB, more than "
                  "limits.max_buffered_bytes (%llu MiB): lower max_open_files or part_size, or "
                  "raise the limit", (unsigned)o->max_open_files,
                  (unsigned long long)(o->s3->part_size >> 20), (unsigned long long)(need >> 20),
                  (unsigned long long)(x->c->limits.max_buffered_bytes >> 20));
}

static int parse_root(cf_ctx *x, yaml_node_t *root, bool want_schema)
{
    static const char *const keys[] = {"inputs", "schema", "output", "spool", "limits",
                                       "errors", "metrics", "log", NULL};
    if (root == NULL || yp_is_null(root))
        return PQ_OK; /* an empty file: every default */
    int rc = yp_check_keys(x->d, root, "config", keys, x->err);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(x->d, root, "inputs")) != NULL)
        rc = cf_parse_inputs(x, v);
    if (rc == 0 && (v = yp_get(x->d, root, "output")) != NULL)
        rc = cf_parse_output(x, v);
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
        rc = cf_parse_schema(x, v);
    return rc ? rc : check_s3_open_files(x, root);
}

static int finish_load(cf_config *c, yp_doc *d, const char *schema_file, pq_err *err)
{
    cf_ctx x = {.d = d, .c = c, .err = err};
    int rc = set_str(&c->file, d->file) ? cf_nomem(err) : PQ_OK;
    rc = rc ? rc : parse_root(&x, yp_root(d), schema_file == NULL);
    if (rc == 0 && schema_file != NULL)
        return cf_config_use_schema_file(c, schema_file, err);
    bool http = false;           /* README.md: the default schema keeps a bulk record's index */
    for (size_t i = 0; i < c->n_inputs; i++)
        http |= c->inputs[i].proto == CF_PROTO_HTTP;
    if (rc == 0 && c->schema == NULL)
        rc = http ? sc_schema_default_index(&c->schema, err) : sc_schema_default(&c->schema, err);
    return rc ? rc : cf_bind_keys(c, err);
}

int cf_config_default(cf_config *out, pq_err *err)
{
    if (set_defaults(out) != 0)
        return cf_nomem(err);
    return sc_schema_default(&out->schema, err);
}

int cf_config_load_ex(const char *path, const char *schema_file, cf_config *out, pq_err *err)
{
    yp_doc d;
    if (set_defaults(out) != 0)
        return cf_nomem(err);
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
        return cf_nomem(err);
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
        return cf_nomem(err);
    return cf_bind_keys(c, err);
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
