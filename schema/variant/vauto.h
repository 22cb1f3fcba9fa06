/* vauto.h - choosing a Variant column's shred tree from its values
 * (`shred: auto`, DESIGN.md): per object path, how often the field is
 * present and with which Variant type, then a tree of the fields that are
 * present often enough with one type, within the column's limits.
 *
 *     va_stats st;
 *     va_stats_init(&st, &col->type->autoshred);
 *     for each sampled row: va_observe(&st, &variant, &err)  (or va_observe_null)
 *     sc_shred *root;
 *     va_choose(&st, &root, &err);    root NULL: nothing stable to shred
 *     va_stats_free(&st);
 *
 * The rule (per node, N = rows where its parent object is present, or the
 * number of elements for an array's element):
 *   - the node's most common non-null type class must cover at least
 *     min_presence * N values;
 *   - booleans -> bool; integers -> the widest of int8..int64 seen;
 *     doubles -> double; strings -> string (RFC 3339 timestamps stay
 *     strings: a typed timestamp would read back as a timestamp, not the
 *     text that was sent); decimals (only from numbers a double cannot
 *     hold) -> decimal(p,s) covering every decimal seen, only when the
 *     field has no integers or doubles (an integer in a decimal column
 *     would read back with a scale);
 *   - objects -> their qualifying fields, recursively, up to max_depth
 *     levels (an object with none stays unshredded); arrays -> [T] when
 *     their elements qualify;
 *   - at most max_columns primitive fields: the most frequent win (ties
 *     in name order);
 *   - fields named "" , "value" or "typed_value" (a hyparquet 1.31.5 bug
 *     reads a shredded field named value as null) or longer than 255 bytes
 *     are never shredded, and of sibling fields whose names differ only in
 *     ASCII case (DuckDB 1.5.6 reads "a" beside "A" back as "a_1") only
 *     the most frequent is.
 * Values that do not match the chosen type stay in `value` (vshred.h):
 * the choice affects size and speed, never what reads back.
 *
 * Cost: one node per distinct path (at most VA_MAX_NODES), found by binary
 * search per field; nothing is allocated per value once the paths are
 * known. Runs on the pipeline's assembler (daemon/output/autoshred.c). */
#ifndef PQ_VAUTO_H
#define PQ_VAUTO_H

#include <stdint.h>

#include "colspec.h"
#include "err.h"
#include "variant.h"

#define VA_MAX_NODES 16384       /* distinct paths tracked per column */

typedef struct va_node va_node;

typedef struct va_stats {
    sc_auto lim;
    va_node *root;               /* the column's value */
    uint64_t rows;               /* observed rows, null columns included */
    size_t n_nodes;
    /* The last row's metadata (a copy), and a number that changes with
     * it: nodes remember their kids by field id while it holds. */
    uint8_t *meta;
    size_t meta_len, meta_cap;
    uint64_t meta_gen;
} va_stats;

int va_stats_init(va_stats *s, const sc_auto *lim);
void va_stats_free(va_stats *s);

/* One row's value. PQ_EPARSE for a malformed Variant, PQ_ENOMEM. */
int va_observe(va_stats *s, const vr_variant *v, pq_err *err);
/* One row where the column is null. */
void va_observe_null(va_stats *s);

/* The tree (caller frees with sc_shred_free), or NULL in *out when no
 * field qualifies. Returns 0 or PQ_ENOMEM. */
int va_choose(const va_stats *s, sc_shred **out, pq_err *err);

#endif
