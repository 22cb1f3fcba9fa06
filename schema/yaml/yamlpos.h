/* yamlpos.h - libyaml document loading with positioned errors, shared by
 * the configuration (daemon/config/) and schema (schema/colspec/) loaders.
 *
 * Every message made here starts with "FILE:LINE:COL: " (1-based; libyaml
 * marks are 0-based) so an operator can jump straight to the key at fault.
 *
 * A loaded document is checked once, up front, so the loaders can walk it
 * recursively without worrying about hostile input:
 *   - nesting deeper than YP_MAX_DEPTH and recursive aliases (`&a [*a]`,
 *     which libyaml turns into a cycle) are errors;
 *   - the tree as seen with every alias expanded may hold at most
 *     YP_MAX_NODES nodes ("billion laughs" documents are rejected);
 *   - scalars may not contain NUL characters (so C strings are exact);
 *   - only one document per file.
 *
 * Getters take `what`, the key path used in messages ("output.page.version",
 * "column 'ts': unit"), and fill err with what was expected. */
#ifndef PQ_YAMLPOS_H
#define PQ_YAMLPOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "err.h"

#define YP_MAX_DEPTH 64
#define YP_MAX_NODES 100000
#define YP_MAX_FILE_BYTES ((size_t)16 << 20)

typedef struct yp_doc {
    yaml_document_t doc;
    char *file;          /* name used in messages (owned) */
    bool loaded;
} yp_doc;

/* Both return 0, PQ_EIO (unreadable file) or PQ_EINVAL (syntax, limits).
 * An empty document loads fine and has no root. yp_free is safe after a
 * failed load and on a zeroed yp_doc. */
int yp_load_file(yp_doc *d, const char *path, pq_err *err);
int yp_load_buffer(yp_doc *d, const char *name, const void *buf, size_t n, pq_err *err);
void yp_free(yp_doc *d);

yaml_node_t *yp_root(yp_doc *d);
yaml_node_t *yp_node(yp_doc *d, int id);

/* 1-based position of a node. */
unsigned long yp_line(const yaml_node_t *n);
unsigned long yp_col(const yaml_node_t *n);

/* Fills err with "FILE:LINE:COL: <message>" and returns PQ_EINVAL. */
int yp_err(const yp_doc *d, const yaml_node_t *n, pq_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same, pointing `off` characters into a single-line scalar (for
 * errors inside a type string); falls back to the scalar's start. */
int yp_err_at(const yp_doc *d, const yaml_node_t *n, size_t off, pq_err *err,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The scalar's text, or NULL for a mapping or sequence. */
const char *yp_scalar(const yaml_node_t *n);
/* Plain `~`, `null`, `Null`, `NULL` or an empty plain scalar. */
bool yp_is_null(const yaml_node_t *n);
/* "a mapping", "a list", "'text'" (shortened, quoted) for messages. */
const char *yp_describe(const yaml_node_t *n, char *buf, size_t len);

int yp_want_map(const yp_doc *d, const yaml_node_t *n, const char *what, pq_err *err);
int yp_want_seq(const yp_doc *d, const yaml_node_t *n, const char *what, pq_err *err);

/* Value node for key in a mapping, or NULL. */
yaml_node_t *yp_get(yp_doc *d, const yaml_node_t *map, const char *key);
/* Rejects non-scalar keys, duplicate keys and keys not in `allowed`
 * (NULL-terminated), listing the allowed ones. */
int yp_check_keys(yp_doc *d, const yaml_node_t *map, const char *what,
                  const char *const *allowed, pq_err *err);
/* Key node of the pair whose value is `value` (for positions), or NULL. */
yaml_node_t *yp_key_of(yp_doc *d, const yaml_node_t *map, const yaml_node_t *value);

/* true/false (any case). */
int yp_bool(const yp_doc *d, const yaml_node_t *n, const char *what, bool *out, pq_err *err);
/* A whole number in [min, max]. */
int yp_int(const yp_doc *d, const yaml_node_t *n, const char *what, int64_t min, int64_t max,
           int64_t *out, pq_err *err);
/* A finite number (strtod syntax, no hex, no inf/nan). */
int yp_double(const yp_doc *d, const yaml_node_t *n, const char *what, double *out, pq_err *err);
/* Size / duration via units.h; max bounds the result. */
int yp_size(const yp_doc *d, const yaml_node_t *n, const char *what, uint64_t max,
            uint64_t *out, pq_err *err);
int yp_duration_ms(const yp_doc *d, const yaml_node_t *n, const char *what, uint64_t *out,
                   pq_err *err);
/* A non-empty scalar string; the pointer lives as long as the document. */
int yp_str(const yp_doc *d, const yaml_node_t *n, const char *what, const char **out,
           pq_err *err);
/* yp_str + strdup (frees and replaces *out). */
int yp_strdup(const yp_doc *d, const yaml_node_t *n, const char *what, char **out, pq_err *err);
/* One of names[] (NULL-terminated); *index gets its position. */
int yp_enum(const yp_doc *d, const yaml_node_t *n, const char *what, const char *const *names,
            int *index, pq_err *err);

#endif
