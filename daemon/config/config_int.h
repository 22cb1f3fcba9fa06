/* config_int.h - what the parts of the configuration loader share; not
 * for other modules (they include config.h). The parts, each a section of
 * the file: config.c (defaults, the top level, spool, limits, errors,
 * metrics, log), config_input.c (inputs), config_sec.c (the security
 * settings of inputs: tls, allow_uids, allow_gids), config_output.c
 * (output), config_schema.c (schema and its keys); config_addr.c
 * (addresses) serves inputs and metrics. config.c calls the others; they
 * call neither config.c nor each other in a circle.
 *
 * Thread: whichever loads the configuration. */
#ifndef PQ_CONFIG_INT_H
#define PQ_CONFIG_INT_H

#include "config.h"
#include "yamlpos.h"

/* What every section's parser works on: the document (for positions), the
 * configuration being filled, and where errors go. */
typedef struct cf_ctx {
    yp_doc *d;
    cf_config *c;
    pq_err *err;
} cf_ctx;

static inline int cf_nomem(pq_err *err)
{
    return pq_err_set(err, PQ_ENOMEM, "config: out of memory");
}

static inline cf_pos cf_pos_of(const yaml_node_t *n)
{
    return (cf_pos){(uint32_t)yp_line(n), (uint32_t)yp_col(n)};
}

/* config_input.c: `inputs:` (a list replacing the default inputs). */
int cf_parse_inputs(cf_ctx *x, yaml_node_t *seq);
/* Frees c's inputs and leaves none. */
void cf_free_inputs(cf_config *c);

/* config_output.c: the `output:` mapping. */
int cf_parse_output(cf_ctx *x, yaml_node_t *m);
/* output.s3 (config_s3.c). */
int cf_parse_s3(cf_ctx *x, yaml_node_t *m, cf_s3 **out);
/* After output.path: with s3 and no output.path, the S3 default. */
int cf_s3_check_path(cf_ctx *x, yaml_node_t *path_node, cf_output *o);

/* config_schema.c: `schema:` (a path relative to the configuration file, or
 * a mapping), and the check that schema `key:` options and
 * output.encryption.columns agree, which gives the leaves their keys. */
int cf_parse_schema(cf_ctx *x, yaml_node_t *v);
int cf_bind_keys(cf_config *c, pq_err *err);

/* config_sec.c: inputs[i].tls: a mapping; *out is allocated (cf_tls_free)
 * even on failure once parsing started. what: "inputs[2].tls". */
int cf_parse_tls(yp_doc *d, yaml_node_t *m, const char *what, cf_tls **out, pq_err *err);

/* config_sec.c: inputs[i].allow_uids / allow_gids: a list of numbers or
 * user / group names, resolved now (getpwnam / getgrnam), so an unknown
 * name is an error at FILE:LINE:COL rather than a peer refused later. */
int cf_parse_ids(yp_doc *d, yaml_node_t *seq, const char *what, bool groups, uint32_t **out,
                 size_t *n, pq_err *err);

#endif
