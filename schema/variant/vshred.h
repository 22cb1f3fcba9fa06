/* vshred.h - writes one finished Variant (metadata + value) into the leaves
 * of a Variant column, shredded per the column's sc_shred tree
 * (VariantShredding.md "Value Shredding", "Objects", "Arrays", "Nesting").
 *
 *     vs_state st;
 *     vs_state_init(&st);
 *     for each value:
 *         rc = vs_write(&st, rg, col->type, &variant, rep, &err);
 *     vs_state_free(&st);
 *
 * What goes where (sh = a shred node, present at level sh->def):
 *   - metadata: always, unchanged.
 *   - a value whose type matches sh (vs_prim_match; objects for OBJECT,
 *     arrays for ARRAY) goes to typed_value and `value` is null, except
 *     for an object with fields outside the shred schema: those stay in
 *     `value` as a partial object (same metadata, kept field values copied
 *     byte for byte). A partial object never holds a shredded field.
 *   - anything else (Variant null included) goes to `value` whole and
 *     typed_value is null (def = sh->def).
 *   - a shredded object field missing from the object: value and
 *     typed_value both null (def = the field group's level); present with
 *     a Variant null: value = 00.
 *   - arrays: every element is written through the element node, so an
 *     element is never missing (null elements are value = 00); an empty
 *     array is a present, empty LIST (def = sh->typed_def).
 * So value and typed_value are never both non-null except for a partially
 * shredded object, and typed_value is non-null exactly when the value is
 * of the shredded kind: the shapes VariantShredding.md calls INVALID
 * cannot come out of here.
 *
 * Cost: no allocation per value once st's buffers have grown to the
 * largest partial object and metadata seen. Object fields are matched to
 * shred fields by metadata id through maps learnt once per distinct
 * metadata (one shared dictionary serves a whole batch of records), not
 * by comparing key names per object. Trees are keyed by address: see
 * vs_state_forget. Every leaf of the column gets exactly one level entry
 * per call (arrays: per element).
 * On failure some leaves may already hold this value's entries: the
 * caller aborts the row (pq_rowgroup_abort_row), as sh_shred_line does. */
#ifndef PQ_VSHRED_H
#define PQ_VSHRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "colspec.h"
#include "err.h"
#include "pq_writer.h"
#include "rowgroup.h"
#include "variant.h"

/* An object node's answer to "which of my fields is metadata key id?",
 * learnt per key as objects show it and valid while the metadata stays
 * the same bytes (vs_state.meta_gen). */
typedef struct vs_slot {
    uint32_t gen;     /* vs_state.meta_gen when field was learnt; 0 never */
    int32_t field;    /* index into the node's fields, -1 not shredded */
} vs_slot;

/* plan: what the node's last object did, field by field, reused by the
 * next object with the same field ids under the same metadata (a stream
 * of records of one shape), which then skips the per-field lookups, the
 * repeated-key check and the search for missing fields. */
typedef struct vs_fieldmap {
    const sc_shred *node;
    vs_slot *slots;   /* by metadata field id */
    uint32_t n_slots;
    uint64_t *seen;   /* per field: the object visit that found it */
    size_t n_seen;
    uint32_t plan_gen;     /* vs_state.meta_gen of the plan; 0 none */
    uint32_t plan_n;       /* the object's fields */
    uint8_t plan_id_size;
    uint32_t plan_found;   /* of them shredded */
    uint8_t *plan_ids;     /* its field ids, as encoded */
    int32_t *plan_field;   /* per object field: the node's field, -1 kept */
    uint32_t *plan_missing; /* the node's fields it lacks, in order */
    size_t plan_cap;       /* plan_ids bytes and plan_field entries */
} vs_fieldmap;

/* Scratch reused across values. All-zero is a valid empty state. */
typedef struct vs_state {
    pq_buf partial;   /* the `value` of a partially shredded object */
    pq_buf kept;      /* vr_field[]: an object's fields left in `value` */
    pq_buf meta;      /* the metadata the field maps were learnt from */
    pq_buf texts;     /* vs_write_strings: its kept strings, encoded */
    uint32_t meta_gen;
    bool meta_checked; /* meta compared with the value being written */
    uint64_t visits;  /* object visits so far (vs_fieldmap.seen stamps) */
    bool general;     /* vs_state_set_fast(false) */
    vs_fieldmap *maps;
    size_t n_maps, cap_maps;
} vs_state;

void vs_state_init(vs_state *st);
void vs_state_free(vs_state *st);
/* Forgets what st learnt about shred trees: call it before writing
 * through a tree other than the ones written before, when those may have
 * been freed (their addresses key st's field maps). Keeps the memory. */
void vs_state_forget(vs_state *st);

/* With on false, every object takes the field-by-field walk, never a
 * plan (vs_fieldmap), and every primitive but a string for a string node
 * the general reading (vr_value_read, vs_prim_match), not write_node's
 * in-place reads of integers, doubles and booleans; a string no longer
 * skips the value's type decoding: the walk as it was, the same leaves.
 * For the differential fuzz targets (fuzz_vauto, fuzz_shred), which check
 * exactly that. */
void vs_state_set_fast(vs_state *st, bool on);

/* Writes v into the leaves of t (kind SC_VARIANT) at repetition level rep
 * (0 for a top-level column; the list's level for a Variant inside one).
 * Returns 0, a writer error, or PQ_EPARSE / PQ_EINVAL for a malformed
 * Variant (err says where). */
int vs_write(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v, uint16_t rep,
             pq_err *err);

/* vs_write without the metadata leaf, for a caller that fills that leaf
 * in bulk (the pipeline converting a row group moves it unchanged). */
int vs_write_value(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                   uint16_t rep, pq_err *err);

/* vs_write of a Variant a builder has just finished (vr_finish: well-formed,
 * its value exactly one value) into a column whose shred tree is empty
 * (SC_SHRED_NONE: metadata and value only): the two byte strings put as
 * they are, without vs_write's checks and decoding, same leaves. Any other
 * column takes vs_write. */
int vs_write_built(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                   uint16_t rep, pq_err *err);

/* A member of an object left in `value` by vs_write_strings: a string,
 * its key's id in the metadata. */
typedef struct vs_kept {
    uint32_t id;
    const char *s;
    size_t len;
} vs_kept;

/* vs_write of an object whose members are all strings (the shredder's
 * direct read of a JSON object, shred_direct.c), without the object being
 * built: strs[f] for each field f of t->shred (an SC_SHRED_OBJECT), s NULL
 * when missing, else the field's node is a string primitive; kept, n_kept
 * the other members, by ascending id, v->metadata the builder's (a sorted
 * dictionary: ids in key-name order; v->value unused). The same leaves
 * and bytes as vs_write of the built object. */
int vs_write_strings(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                     const vr_str *strs, const vs_kept *kept, size_t n_kept, uint16_t rep,
                     pq_err *err);

/* A primitive converted to a shredded column's physical type. */
typedef struct vs_typed {
    int64_t i;            /* BOOLEAN (0/1), INT32, INT64 */
    float f;
    double d;
    const uint8_t *bytes; /* BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY */
    size_t len;
    uint8_t be[16];       /* decimal bytes live here (bytes points at it) */
} vs_typed;

/* True when the encoded primitive p (one Variant value) may be stored in a
 * typed_value of type t, and then its converted form. The rule: t's type
 * must be in the value's equivalence class (VariantEncoding.md "Encoding
 * types") and the conversion exact, so that reading typed_value back
 * (VariantShredding.md's table) gives an equal value:
 *   boolean      -> bool
 *   int8..int64, decimal4/8/16 (Exact Numeric)
 *                -> intN (signed) when the value is an integer in range;
 *                -> decimal(P,S) when it rescales exactly to scale S and
 *                   then has at most P digits (S < P: colspec refuses
 *                   S = P for shreds, which DuckDB prints as ".5")
 *   double       -> double; and -> intN / decimal(P,S) as above by its
 *                   shortest decimal form: vnumber.c makes a JSON number
 *                   a double only when that form is the number as written,
 *                   so the choice between double and decimal never keeps
 *                   a JSON number out of an exact typed_value
 *   float -> float (no cross-class widening)
 *   date -> date; time -> time(us, local)
 *   timestamp(us|ns, utc) / timestampntz(us|ns)
 *                -> timestamp with the same utc flag; us -> ns when it
 *                   fits int64, ns -> us when it is whole microseconds
 *   string (short or long) -> string; binary -> binary; uuid -> uuid
 *   null, objects, arrays -> never (they are not primitives). */
bool vs_prim_match(const sc_type *t, const vr_prim *p, vs_typed *out);

#endif
