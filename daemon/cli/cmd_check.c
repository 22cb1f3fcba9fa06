/* cmd_check.c - `parqd check [--config FILE] [--schema FILE] [--connect]`:
 * validates the configuration and schema exactly as the daemon would load
 * them, prints the resulting Parquet schema (textual form) and the writing
 * settings of every leaf column, and exits 0; on the first error prints
 * "parqd: FILE:LINE:COL: ..." to stderr and exits 1 (3 if we ran out of
 * memory). --connect also reads the S3 credentials and sends one real
 * request (ListMultipartUploads on the prefix: it needs the bucket, the
 * credentials and the region to be right) and exits 1 with the S3 error
 * when it fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "buf.h"
#include "colspec.h"
#include "compress.h"
#include "config.h"
#include "store_config.h"
#include "store_s3.h"
#include "units.h"

static void check_usage(void)
{
    fputs("usage: parqd check [--config FILE] [--schema FILE] [--connect]\n", stderr);
}


static int parse_args(int argc, char **argv, const char **config, const char **schema,
                      bool *connect)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        const char **dst = NULL;
        if (strcmp(argv[i], "--connect") == 0) {
            *connect = true;
            continue;
        }
        if (cli_take_opt(argc, argv, &i, "--config", &v))
            dst = config;
        else if (cli_take_opt(argc, argv, &i, "--schema", &v))
            dst = schema;
        if (cli_store_opt("check", "unexpected argument", dst, v, argv[i]) != 0)
            return -1;
    }
    return 0;
}

static void print_codec(char *buf, size_t n, int codec, int level)
{
    if (level != 0)
        snprintf(buf, n, "%s(%d)", pq_codec_name((pq_codec)codec), level);
    else
        snprintf(buf, n, "%s", pq_codec_name((pq_codec)codec));
}

/* One line per leaf with the settings the writer will use: column options
 * where set, the output section's otherwise. */
static bool any_leaf_key(const sc_schema *s)
{
    for (size_t i = 0; i < s->n_leaves; i++)
        if (s->leaves[i].opts.key_id != NULL)
            return true;
    return false;
}

static void print_leaf(const cf_config *cf, const sc_leaf *l, int width)
{
    const pq_column_opts *o = &l->opts;
    const cf_output *out = &cf->output;
    char codec[48], dict[48], bloom[64], stats[48], dsize[24];
    if (o->codec >= 0)
        print_codec(codec, sizeof codec, o->codec, o->codec_level);
    else
        print_codec(codec, sizeof codec, (int)out->codec, out->codec_level);
    un_format_size(o->dictionary_max_bytes ? o->dictionary_max_bytes : out->dictionary_max_bytes,
                   dsize, sizeof dsize);
    if (l->physical == PQ_BOOLEAN || o->dictionary == 0)
        snprintf(dict, sizeof dict, "off");
    else
        snprintf(dict, sizeof dict, "%s(max %s)", o->dictionary == 1 ? "on" : "auto", dsize);
    if (o->bloom > 0) {
        char ndv[32] = "auto";
        if (o->bloom_ndv != 0)
            snprintf(ndv, sizeof ndv, "%llu", (unsigned long long)o->bloom_ndv);
        snprintf(bloom, sizeof bloom, "on(fpp %g, ndv %s)",
                 o->bloom_fpp > 0 ? o->bloom_fpp : 0.01, ndv);
    } else {
        snprintf(bloom, sizeof bloom, "%s", o->bloom == 0 ? "off" : "auto");
    }
    bool st = o->statistics < 0 ? out->statistics : o->statistics != 0;
    snprintf(stats, sizeof stats, st ? "on(truncate %zu)" : "off",
             o->stats_truncate ? o->stats_truncate : out->stats_truncate);
    /* what the writer will do: a leaf's own key; else, when no leaf names
     * a key, every column uses the footer key (uniform encryption); else
     * the leaf stays plaintext */
    char key[96] = "-";
    const cf_encryption *enc = &out->encryption;
    if (o->key_id != NULL)
        snprintf(key, sizeof key, "%s", o->key_id);
    else if (enc->enabled && !any_leaf_key(cf->schema))
        snprintf(key, sizeof key, "%s(footer, uniform)", enc->footer_key.id);
    else if (enc->enabled)
        snprintf(key, sizeof key, "-(plaintext)");
    printf("  %-*s encoding=%s compression=%s dictionary=%s bloom=%s statistics=%s key=%s\n",
           width, l->path, sc_encoding_name(o->encoding), codec, dict, bloom, stats, key);
}

static void print_output(const cf_config *cf)
{
    const cf_output *o = &cf->output;
    char codec[48], a[24], b[24], c[24], d[24], e[24], f[24];
    print_codec(codec, sizeof codec, (int)o->codec, o->codec_level);
    un_format_size(o->row_group.max_bytes, a, sizeof a);
    un_format_duration_ms(o->row_group.max_age_ms, b, sizeof b);
    un_format_size(o->rotate.max_bytes, c, sizeof c);
    un_format_duration_ms(o->rotate.max_age_ms, d, sizeof d);
    un_format_size(o->page_max_bytes, e, sizeof e);
    un_format_size(o->dictionary_max_bytes, f, sizeof f);
    printf("output: %s/%s\n", o->dir, o->path);
    printf("  max_open_files: %u\n", (unsigned)o->max_open_files);
    printf("  time_from: %s\n", o->time_from ? o->time_from : "(ingestion time)");
    printf("  row_group: max_bytes=%s max_rows=%llu max_age=%s\n", a,
           (unsigned long long)o->row_group.max_rows, b);
    printf("  rotate: max_bytes=%s max_rows=%llu max_age=%s\n", c,
           (unsigned long long)o->rotate.max_rows, d);
    printf("  page: v%d max_bytes=%s crc=%s; compression=%s; dictionary max_bytes=%s; "
           "page_index=%s\n", o->page_version, e, o->crc ? "on" : "off", codec, f,
           o->page_index ? "on" : "off");
    if (o->encryption.enabled)
        printf("  encryption: %s, footer %s (key %s)\n",
               o->encryption.algorithm == PQ_AES_GCM_V1 ? "AES_GCM_V1" : "AES_GCM_CTR_V1",
               o->encryption.footer_encrypted ? "encrypted" : "plaintext",
               o->encryption.footer_key.id);
}

/* How each top-level Variant column shreds: automatically per file (the
 * layout printed above is then the unshredded one, which a file keeps
 * when nothing in its first row group is stable), as the schema's tree,
 * or not at all. */
static void print_shredding(const sc_schema *s)
{
    bool header = false;
    for (size_t i = 0; i < s->n_columns; i++) {
        const sc_type *t = s->columns[i].type;
        if (t->kind != SC_VARIANT)
            continue;
        if (!header)
            printf("variant shredding:\n");
        header = true;
        if (t->autoshred.on)
            printf("  %s: auto, decided per file from its first row group (max_columns=%u "
                   "max_depth=%u min_presence=%g); files name their choice in the "
                   "key-value metadata parqd.shred.%s\n", s->columns[i].name,
                   t->autoshred.max_columns, t->autoshred.max_depth, t->autoshred.min_presence,
                   s->columns[i].name);
        else if (t->shred->kind == SC_SHRED_NONE)
            printf("  %s: none\n", s->columns[i].name);
        else
            printf("  %s: the schema's shred tree\n", s->columns[i].name);
    }
}

static int print_all(const cf_config *cf, const pq_schema *ps)
{
    pq_buf text;
    pq_buf_init(&text);
    if (pq_schema_print(ps, &text) != 0 || pq_buf_push(&text, '\0') != 0) {
        pq_buf_free(&text);
        fprintf(stderr, "parqd: out of memory\n");
        return 3;
    }
    printf("# config: %s\n", cf->file ? cf->file : "(built-in defaults)");
    if (cf->schema_file != NULL)
        printf("# schema: %s\n", cf->schema_file);
    else if (cf->schema->file[0] == '<')
        printf("# schema: (built-in default)\n");
    else
        printf("# schema: (inline in %s)\n", cf->schema->file);
    fputs((const char *)text.data, stdout);
    pq_buf_free(&text);
    print_output(cf);
    int width = 0;
    for (size_t i = 0; i < cf->schema->n_leaves; i++) {
        int len = (int)strlen(cf->schema->leaves[i].path);
        width = len > width && len <= 40 ? len : width;
    }
    printf("columns:\n");
    for (size_t i = 0; i < cf->schema->n_leaves; i++)
        print_leaf(cf, &cf->schema->leaves[i], width);
    print_shredding(cf->schema);
    return 0;
}

/* --connect: 0, or 1 with the error on stderr. */
static int check_connect(const cf_config *cf)
{
    if (cf->output.s3 == NULL) {
        printf("output: local directory %s (nothing to connect to)\n", cf->output.dir);
        return 0;
    }
    st_store *s = NULL;
    bool plain = false;
    pq_err err = {0};
    int rc = st_from_config(&cf->output, NULL, &s, &plain, &err);
    if (rc == 0)
        s3_client_set_retry(st_s3_client(s), 2, 200);    /* an answer, not patience */
    rc = rc ? rc : st_s3_check(s, &err);
    st_destroy(s);
    if (rc != 0) {
        fprintf(stderr, "parqd: output.s3: %s\n", err.msg);
        return 1;
    }
    printf("output: s3://%s/%s: credentials and bucket access verified%s\n",
           cf->output.s3->bucket, cf->output.s3->prefix,
           plain ? " (warning: plain http to a host that is not loopback)" : "");
    return 0;
}

int cmd_check(int argc, char **argv)
{
    const char *config = NULL, *schema = NULL;
    bool connect = false;
    if (parse_args(argc, argv, &config, &schema, &connect) != 0) {
        check_usage();
        return 1;
    }
    cf_config cf;
    pq_err err = {0};
    int rc;
    if (config != NULL) {
        rc = cf_config_load_ex(config, schema, &cf, &err);
    } else {
        rc = cf_config_default(&cf, &err);
        if (rc == 0 && schema != NULL)
            rc = cf_config_use_schema_file(&cf, schema, &err);
    }
    pq_schema *ps = NULL;
    if (rc == 0)
        rc = sc_build_parquet_schema(cf.schema, &ps, &err);
    int status = rc == 0 ? print_all(&cf, ps) : rc == PQ_ENOMEM ? 3 : 1;
    if (status == 0 && connect)
        status = check_connect(&cf);
    if (rc != 0)
        fprintf(stderr, "parqd: %s\n", err.msg);
    pq_schema_destroy(ps);
    cf_config_free(&cf);
    return status;
}
