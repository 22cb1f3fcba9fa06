/* config_output.c - the `output:` section of the configuration (DESIGN.md
 * "Configuration (YAML)"): directory and path template, rotation and row
 * groups, pages, compression, dictionary, statistics, page index and
 * Parquet modular encryption (keys by id and file), with FILE:LINE:COL
 * errors.
 *
 * Thread: whichever loads the configuration. */
#include "config_int.h"
#include "compress.h"
#include "pathtpl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the output: mapping ------------------------------------------------ */

static int parse_roll(cf_ctx *x, yaml_node_t *m, const char *what, cf_roll *r)
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

static int parse_page(cf_ctx *x, yaml_node_t *m, cf_output *o)
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

static int parse_compression(cf_ctx *x, yaml_node_t *m, cf_output *o)
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

static int parse_statistics(cf_ctx *x, yaml_node_t *v, cf_output *o)
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

static int parse_dictionary(cf_ctx *x, yaml_node_t *v, cf_output *o)
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

static int parse_key(cf_ctx *x, yaml_node_t *m, const char *what, cf_key *k)
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
static int check_key_ids(cf_ctx *x, const cf_encryption *e, yaml_node_t *at)
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

static int parse_enc_columns(cf_ctx *x, yaml_node_t *seq, cf_encryption *e)
{
    static const char *const keys[] = {"column", "key", NULL};
    int rc = yp_want_seq(x->d, seq, "output.encryption.columns", x->err);
    size_t n = rc ? 0 : (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (rc != 0 || n == 0)
        return rc;
    if (n > 4096)
        return yp_err(x->d, seq, x->err, "output.encryption.columns: more than 4096 entries");
    if ((e->columns = calloc(n, sizeof *e->columns)) == NULL)
        return cf_nomem(x->err);
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
        ck->pos = cf_pos_of(col ? col : m);
    }
    return rc ? rc : check_key_ids(x, e, seq);
}

static int parse_encryption(cf_ctx *x, yaml_node_t *m, cf_encryption *e)
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

/* The template's one grammar is pathtpl.c's; here its refusals get the
 * file, line and column. With output.s3, {pid} and {uuid} are refused too.
 * {{FIELD}}s route records to many open files (pipeline.h). */
static int parse_path(cf_ctx *x, yaml_node_t *v, cf_output *o)
{
    pt_template t;
    size_t off = 0;
    int rc = yp_strdup(x->d, v, "output.path", &o->path, x->err);
    if (rc != 0)
        return rc;
    pq_err why = {0};
    rc = pt_parse(o->path, &t, &off, &why);
    if (rc == PQ_ENOMEM)
        rc = cf_nomem(x->err);
    else if (rc != 0)
        rc = yp_err_at(x->d, v, off, x->err, "output.path: %s", why.msg);
    o->partitioned = rc == 0 && t.n_fields > 0;
    if (rc == 0 && o->s3 != NULL && (t.has_pid || t.has_uuid))
        rc = yp_err_at(x->d, v, t.has_pid ? t.pid_off : t.uuid_off, x->err, "output.path: %s "
                       "differs between runs, so with output.s3 a file written again after a "
                       "crash would land as a second object; use {host} and {seq} (the file's "
                       "first spool seq)", t.has_pid ? "{pid}" : "{uuid}");
    pt_free(&t);
    return rc;
}

int cf_parse_output(cf_ctx *x, yaml_node_t *m)
{
    static const char *const keys[] = {
        "dir", "path", "time_from", "max_open_files", "rotate", "row_group", "page", "compression", "compression_level",
        "dictionary", "statistics", "page_index", "encryption", "s3", NULL};
    cf_output *o = &x->c->output;
    int rc = yp_check_keys(x->d, m, "output", keys, x->err);
    yaml_node_t *v;
    if (rc == 0 && (v = yp_get(x->d, m, "dir")) != NULL)
        rc = yp_strdup(x->d, v, "output.dir", &o->dir, x->err);
    if (rc == 0 && (v = yp_get(x->d, m, "s3")) != NULL) {
        if (yp_get(x->d, m, "dir") != NULL)
            return yp_err(x->d, v, x->err, "output: give either dir (local files) or s3 "
                          "(object storage), not both");
        rc = cf_parse_s3(x, v, &o->s3);
    }
    if (rc == 0 && (v = yp_get(x->d, m, "path")) != NULL)
        rc = parse_path(x, v, o);
    rc = rc ? rc : cf_s3_check_path(x, yp_get(x->d, m, "path"), o);
    if (rc == 0 && (v = yp_get(x->d, m, "time_from")) != NULL) {
        /* checked against the schema once it is known (config_schema.c) */
        rc = yp_strdup(x->d, v, "output.time_from", &o->time_from, x->err);
        o->time_from_pos = cf_pos_of(v);
        o->partitioned = true;
    }
    if (rc == 0 && (v = yp_get(x->d, m, "max_open_files")) != NULL) {
        int64_t n;
        if ((rc = yp_int(x->d, v, "output.max_open_files", 1, CF_MAX_OPEN_FILES_MAX, &n,
                         x->err)) == 0)
            o->max_open_files = (uint32_t)n;
    }
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
