/* config_int.h - what config.c (the file, section by section) and
 * config_sec.c (the security settings of inputs: tls, allow_uids,
 * allow_gids) share. Not for other modules.
 *
 * Thread: whichever loads the configuration. */
#ifndef PQ_CONFIG_INT_H
#define PQ_CONFIG_INT_H

#include "config.h"
#include "yamlpos.h"

/* inputs[i].tls: a mapping; *out is allocated (cf_tls_free) even on
 * failure once parsing started. what: "inputs[2].tls". */
int cf_parse_tls(yp_doc *d, yaml_node_t *m, const char *what, cf_tls **out, pq_err *err);

/* inputs[i].allow_uids / allow_gids: a list of numbers or user / group
 * names, resolved now (getpwnam / getgrnam), so an unknown name is an
 * error at FILE:LINE:COL rather than a peer refused later. */
int cf_parse_ids(yp_doc *d, yaml_node_t *seq, const char *what, bool groups, uint32_t **out,
                 size_t *n, pq_err *err);

#endif
