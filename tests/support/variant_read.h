/* variant_read.h - test-only Variant decoder (VariantEncoding.md): full,
 * bounds-checked validation of a (metadata, value) pair, rendering to
 * canonical JSON, value equality, and a reference tree that tests and
 * fuzzers build by hand, render, and feed to the encoder.
 *
 * Written apart from schema/variant/ (it shares only type ids and the
 * vr_prim struct) so that it can catch the encoder's mistakes.
 *
 * Canonical JSON, the form every test compares:
 *   objects  keys in byte-wise order (as the encoding stores them), no
 *            spaces: {"a":1,"b":[true,null]}
 *   numbers  ints as decimal text; decimals exact with their scale
 *            ("12.34", "0.0010", "-5"); double/float as the shortest text
 *            that reads back to the same value ("1.5", "1e+300"); NaN and
 *            infinities as the strings "NaN", "Infinity", "-Infinity"
 *   strings  JSON-escaped UTF-8 (only " \ and controls escaped)
 *   binary   base64 string; uuid "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
 *   date     "YYYY-MM-DD"; time "HH:MM:SS.ffffff"
 *   timestamp "YYYY-MM-DDTHH:MM:SS.ffffff" (9 digits for nanos), with
 *            "+00:00" appended when adjusted to UTC */
#ifndef PQ_VARIANT_READ_H
#define PQ_VARIANT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "variant.h"

/* Also require what parqd's encoder promises beyond validity: minimal
 * metadata offset size, minimal field id / offset widths, is_large only
 * above 255 elements, minimal int and decimal widths, decimal scales
 * below the implied precision (what readers need, see schema/variant/vnumber.c),
 * long strings only from 64 bytes, and container values that tile their data area exactly
 * (no gaps, no overlaps). */
#define VREAD_CANONICAL 1u
#define VREAD_MAX_DEPTH 10000

int vread_validate(const uint8_t *meta, size_t mlen, const uint8_t *val, size_t vlen,
                   unsigned flags, pq_err *err);

/* Validates, then appends the canonical JSON of the value to out. */
int vread_to_json(pq_buf *out, const uint8_t *meta, size_t mlen, const uint8_t *val,
                  size_t vlen, pq_err *err);

/* 1 if the two variants hold the same value, 0 if not, < 0 if either is
 * invalid. Dictionaries, field ids and physical layout may differ. Exact
 * numerics (int8..int64, decimal4..16) compare by numeric value and
 * short/long strings by content (the spec's equivalence classes); other
 * primitives need the same type id and the same bytes. */
int vread_equal(const uint8_t *m1, size_t m1len, const uint8_t *v1, size_t v1len,
                const uint8_t *m2, size_t m2len, const uint8_t *v2, size_t v2len,
                pq_err *err);

/* ---- reference tree ------------------------------------------------------ */

typedef struct vread_node {
    int kind;                   /* VR_OBJECT, VR_ARRAY or a primitive vr_type */
    vr_prim p;                  /* primitive value; p.bytes owned */
    size_t n, cap;              /* children, insertion order, duplicates kept */
    char **keys;                /* objects: owned copies */
    size_t *key_lens;
    struct vread_node **kids;
} vread_node;

/* Constructors return NULL only when out of memory. */
vread_node *vread_new(vr_type t);   /* VR_NULL, VR_TRUE, VR_FALSE, VR_OBJECT, VR_ARRAY */
vread_node *vread_new_int(int64_t v);
vread_node *vread_new_double(double v);
vread_node *vread_new_float(float v);
vread_node *vread_new_decimal(vr_i128 unscaled, uint32_t scale);
vread_node *vread_new_string(const char *s, size_t len);
vread_node *vread_new_binary(const void *p, size_t len);
vread_node *vread_new_uuid(const uint8_t u[16]);
/* VR_DATE, VR_TIME_NTZ_MICROS or one of the four timestamp types. */
vread_node *vread_new_temporal(vr_type t, int64_t v);

/* Appends child (ownership passes, also on failure). key is ignored for
 * arrays. Returns 0 or PQ_ENOMEM / PQ_EINVAL. */
int vread_add(vread_node *parent, const char *key, size_t klen, vread_node *child);
void vread_free(vread_node *n);

/* Canonical JSON of the tree; for duplicate keys the last one wins. */
int vread_node_json(pq_buf *out, const vread_node *n);

/* Drives the encoder with the tree's events, duplicates included. */
int vread_node_feed(vr_builder *b, const vread_node *n);

#endif
