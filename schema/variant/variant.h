/* variant.h - Variant binary encoding (VariantEncoding.md): a streaming
 * builder that turns parse events into one (metadata, value) pair per record,
 * stateless appenders for single encoded values, and bounds-checked readers
 * that the shredder (VariantShredding.md) uses to take encoded values apart.
 *
 *     vr_builder b;
 *     vr_builder_init(&b, NULL);                  // NULL: defaults
 *     for each record:
 *         vr_builder_reset(&b);
 *         vr_begin_object(&b); vr_key(&b, "a", 1); vr_int(&b, 1); ...
 *         vr_end_object(&b);
 *         vr_variant v;
 *         if (vr_finish(&b, &v) == 0) use(v.metadata, v.value);
 *     vr_builder_free(&b);
 *
 * Every builder call returns 0 or a negative PQ_E* code; on failure b->err
 * says what and why, and the builder is unchanged (the caller may, e.g.,
 * retry a refused number as a string). The builder owns and reuses all its
 * buffers: after warm-up, a record costs no allocation.
 *
 * Choices the spec leaves open, fixed here:
 *   - Duplicate keys in one object: the LAST value wins (JSON.parse, jq and
 *     most log shippers agree); earlier values are dropped from the encoding.
 *   - Metadata: keys sorted byte-wise and unique, sorted_strings set (unless
 *     vr_opts.unsorted_dict); the empty dictionary is written 01 00 00 as
 *     Spark and Iceberg write it. All widths (offset, field id, is_large)
 *     are the minimum that holds the values.
 *   - Object field values are laid out in insertion order (as Spark does);
 *     field ids/offsets are in key-name order as the spec requires.
 *   - Unsigned integers above INT64_MAX become decimal16 with scale 0:
 *     Variant has no unsigned type and decimal keeps the exact value in the
 *     Exact Numeric class. vnumber.c has the JSON number mapping.
 *   - Every decimal the builder writes has a scale below its implied
 *     precision (DuckDB 1.5.6 crashes on, or prints non-JSON for, the
 *     others); vr_decimal refuses the rest with PQ_EINVAL. */
#ifndef PQ_VARIANT_H
#define PQ_VARIANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

__extension__ typedef __int128 vr_i128;

/* Basic types (value_metadata bits 0-1). */
enum {
    VR_BASIC_PRIMITIVE = 0,
    VR_BASIC_SHORT_STRING = 1,
    VR_BASIC_OBJECT = 2,
    VR_BASIC_ARRAY = 3
};

/* Primitive type ids (primitive_header), plus two pseudo ids returned by
 * vr_value_type for containers. */
typedef enum vr_type {
    VR_NULL = 0,
    VR_TRUE = 1,
    VR_FALSE = 2,
    VR_INT8 = 3,
    VR_INT16 = 4,
    VR_INT32 = 5,
    VR_INT64 = 6,
    VR_DOUBLE = 7,
    VR_DECIMAL4 = 8,
    VR_DECIMAL8 = 9,
    VR_DECIMAL16 = 10,
    VR_DATE = 11,
    VR_TIMESTAMP_MICROS = 12,     /* UTC */
    VR_TIMESTAMP_NTZ_MICROS = 13,
    VR_FLOAT = 14,
    VR_BINARY = 15,
    VR_STRING = 16,               /* long string; short strings report this too */
    VR_TIME_NTZ_MICROS = 17,
    VR_TIMESTAMP_NANOS = 18,      /* UTC */
    VR_TIMESTAMP_NTZ_NANOS = 19,
    VR_UUID = 20,
    VR_OBJECT = 64,
    VR_ARRAY = 65
} vr_type;

typedef enum vr_unit { VR_MICROS, VR_NANOS } vr_unit;

#define VR_DEFAULT_MAX_DEPTH 128
#define VR_MAX_DECIMAL_DIGITS 38

typedef struct vr_opts {
    uint32_t max_depth;   /* deepest container nesting; 0 = VR_DEFAULT_MAX_DEPTH */
    bool unsorted_dict;   /* keep keys in first-seen order, sorted_strings 0
                           * (what Spark writes; saves the sort at finish) */
    bool trust_utf8;      /* caller already validated keys/strings as UTF-8 */
    /* Keep the key dictionary from record to record: a record whose keys
     * are all known reuses the previous metadata as is (no sort, no id
     * renumbering, byte-identical metadata that Parquet's dictionary
     * encoding then stores once). Each record's metadata may then hold
     * keys it does not use, which VariantEncoding.md allows. The
     * dictionary starts afresh when it passes VR_SHARED_MAX_KEYS keys or
     * VR_SHARED_MAX_BYTES bytes, or when a record used under half of it
     * (a stream of differently shaped records), so metadata stays within
     * about twice a record's own. */
    bool shared_dict;
} vr_opts;

#define VR_SHARED_MAX_KEYS 1024
#define VR_SHARED_MAX_BYTES ((size_t)16 << 10)

/* One finished record. Points into the builder; valid until the next call
 * on it. */
typedef struct vr_variant {
    const uint8_t *metadata;
    size_t metadata_len;
    const uint8_t *value;
    size_t value_len;
} vr_variant;

/* A JSON number in parts, as a streaming JSON parser sees it:
 * value = (-1)^negative * int_digits.frac_digits * 10^exp10. */
typedef struct vr_json_num {
    bool negative;
    const char *int_digits;   /* "0" in "0.5"; at least one digit */
    size_t int_len;
    const char *frac_digits;  /* digits after '.', frac_len 0 if none */
    size_t frac_len;
    int64_t exp10;            /* exponent as written, 0 if none */
    bool has_exp;             /* an exponent was written, even "e0": not
                               * integer syntax (exp10 != 0 implies it) */
    double d;                 /* correctly rounded double of the same text */
} vr_json_num;

/* Builder internals; callers read only `err`. */
typedef struct vr_frame vr_frame;
typedef struct vr_ent vr_ent;
typedef struct vr_keyref vr_keyref;
typedef struct vr_slot vr_slot;
typedef struct vr_walk vr_walk;

#define VR_GUESS_DEPTH 8

typedef struct vr_builder {
    vr_opts opts;
    pq_err err;             /* why the last failing call failed */
    pq_buf stack;           /* values being built; the finished value */
    pq_buf spare;           /* old value while re-encoding (rare path) */
    pq_buf meta;            /* the finished metadata */
    pq_buf keybytes;        /* key text, in first-seen order */
    pq_buf numbuf;          /* NUL-terminated copy of a number text */
    vr_frame *frames;       /* open containers */
    size_t nframes, frames_cap;
    vr_ent *ents;           /* children of open containers */
    size_t nents, ents_cap;
    vr_ent *tmp;            /* sort scratch: 2 * entries of one container */
    size_t tmp_cap;
    vr_keyref *keys;        /* dictionary, by id */
    size_t nkeys, keys_cap;
    uint32_t *perm;         /* first-seen id -> sorted id, at finish */
    size_t perm_cap;
    vr_slot *slots;         /* key intern table, open addressing */
    size_t nslots;
    uint32_t gen;           /* slots with another gen are empty */
    uint64_t seed;          /* hash seed, secret against collision floods */
    vr_walk *walk;          /* traversal stack for finish */
    size_t walk_cap;
    bool have_root;         /* the record's top-level value has begun */
    /* shared_dict: keys [0, meta_keys) are sorted and in meta; the record
     * counter and how many distinct keys the current record used */
    size_t meta_keys;
    uint32_t record;
    size_t used_keys;
    bool forget_dict;
    /* objects' key orders learnt while the dictionary stays the same
     * (vdict.c vr_sort_children); dict_epoch counts dictionaries */
    struct vr_shape *shapes;
    uint64_t dict_epoch;
    /* the first key id last seen in an object at each depth (vr_key;
     * later keys are guessed from the key before them, vr_keyref.next) */
    uint32_t first_key_guess[VR_GUESS_DEPTH];
} vr_builder;

/* ---- builder ----------------------------------------------------------- */

/* opts may be NULL. Returns 0 or PQ_ENOMEM. */
int vr_builder_init(vr_builder *b, const vr_opts *opts);
void vr_builder_free(vr_builder *b);
/* Starts a new record; keeps every buffer. */
void vr_builder_reset(vr_builder *b);
/* shared_dict: the next record starts a fresh dictionary. */
void vr_builder_forget_dict(vr_builder *b);

/* shared_dict, for a caller that knows a record's shape without building
 * it (the shredder's direct read of a shredded Variant's object): whether
 * the next record keeps the dictionary and its finished metadata
 * (vr_builder_reset would keep them). Then the ids vr_dict_find gives are
 * the metadata's, in key-name order. */
bool vr_builder_meta_kept(const vr_builder *b);
/* Counts the builder's dictionaries: ids found by vr_dict_find name the
 * same keys for as long as it stays the same (a reset or a renumbering
 * changes it). */
static inline uint64_t vr_builder_dict_epoch(const vr_builder *b)
{
    return b->dict_epoch;
}
/* The id of key name in the dictionary; false when it has none. Changes
 * nothing. prev: the id of the key before it in its object, UINT32_MAX
 * for the first key of a root object (a hint, tried first). */
bool vr_dict_find(const vr_builder *b, uint32_t prev, const char *name, size_t len,
                  uint32_t *id);
/* Once vr_builder_meta_kept said yes: the next record is an object whose
 * n keys are the distinct dictionary ids, left as vr_builder_reset, its
 * vr_key calls (with values) and vr_finish would leave the builder, but
 * nothing encoded: out gets the unchanged metadata, and a NULL value. */
void vr_known_object(vr_builder *b, const uint32_t *ids, size_t n, vr_variant *out);

int vr_begin_object(vr_builder *b);
/* The key of the next value. name is copied; need not be NUL-terminated. */
int vr_key(vr_builder *b, const char *name, size_t len);
int vr_end_object(vr_builder *b);
int vr_begin_array(vr_builder *b);
int vr_end_array(vr_builder *b);

int vr_null(vr_builder *b);
int vr_bool(vr_builder *b, bool v);
int vr_int(vr_builder *b, int64_t v);        /* smallest of int8..int64 */
int vr_uint64(vr_builder *b, uint64_t v);    /* > INT64_MAX: decimal16 s=0 */
int vr_double(vr_builder *b, double v);
int vr_float(vr_builder *b, float v);
/* |unscaled| < 10^38, scale 0..38 and below the digits of unscaled (scale 0
 * for zero); smallest decimal4/8/16 by precision. */
int vr_decimal(vr_builder *b, vr_i128 unscaled, uint32_t scale);
int vr_string(vr_builder *b, const char *s, size_t len);  /* short if < 64 */
int vr_binary(vr_builder *b, const void *p, size_t len);
int vr_date(vr_builder *b, int32_t days_since_epoch);
int vr_timestamp(vr_builder *b, int64_t v, vr_unit unit, bool utc);
int vr_time(vr_builder *b, int64_t micros_since_midnight);
int vr_uuid(vr_builder *b, const uint8_t uuid[16]);   /* big-endian bytes */
/* A JSON number by the rule in vnumber.c: integers as int8..int64 (beyond
 * that decimal, scale 0), a fraction or exponent as a double when the
 * double's shortest form is the number's value, else as a decimal with an
 * integer digit, else as the double. PQ_ETYPE if it must become a double
 * and d is not finite. */
int vr_number_from_json(vr_builder *b, const vr_json_num *num);
/* Same, from the number's text (strict JSON number grammar). */
int vr_json_number(vr_builder *b, const char *text, size_t len);
/* The shortest decimal that reads back as x (what DuckDB, JavaScript and
 * Python print), as an unscaled value at `scale`: true when it has at most
 * `scale` fraction digits and fewer than 39 digits at that scale (0.0
 * gives 0; -0.0 gives false, an exact type would drop its sign). For
 * shredding a double into an exact typed_value. */
bool vr_double_decimal(double x, uint32_t scale, vr_i128 *unscaled);

/* Completes the record: sorts the dictionary, renumbers field ids and
 * writes the metadata. PQ_ESTATE if a container is open or no value was
 * given. After a failure, reset before reuse. */
int vr_finish(vr_builder *b, vr_variant *out);

/* vr_begin_object, vr_end_object and vr_finish on a record given no value
 * yet, with the same result and builder state; when the dictionary is
 * empty (a fresh builder, or a shared one whose last record used no key)
 * the value is a constant and nothing is encoded or sorted: the rest
 * column's record that leaves nothing over. */
int vr_finish_empty_object(vr_builder *b, vr_variant *out);

/* ---- stateless appenders: one encoded value onto out --------------------- */

int vr_value_append_null(pq_buf *out);
int vr_value_append_bool(pq_buf *out, bool v);
int vr_value_append_int(pq_buf *out, int64_t v);
int vr_value_append_double(pq_buf *out, double v);
int vr_value_append_float(pq_buf *out, float v);
int vr_value_append_decimal(pq_buf *out, vr_i128 unscaled, uint32_t scale);
int vr_value_append_string(pq_buf *out, const char *s, size_t len);
int vr_value_append_binary(pq_buf *out, const void *p, size_t len);
int vr_value_append_date(pq_buf *out, int32_t days);
int vr_value_append_timestamp(pq_buf *out, int64_t v, vr_unit unit, bool utc);
int vr_value_append_time(pq_buf *out, int64_t micros);
int vr_value_append_uuid(pq_buf *out, const uint8_t uuid[16]);

/* ---- readers (bounds-checked; PQ_EPARSE on corrupt input) --------------- */

typedef struct vr_meta {
    uint32_t size;           /* dictionary_size */
    uint8_t offset_size;
    bool sorted;
    const uint8_t *offsets;  /* size + 1 entries */
    const uint8_t *bytes;
    size_t bytes_len;
} vr_meta;

typedef struct vr_container {
    int basic;               /* VR_BASIC_OBJECT or VR_BASIC_ARRAY */
    uint32_t n;
    uint8_t id_size;         /* objects only */
    uint8_t offset_size;
    const uint8_t *ids;      /* objects only */
    const uint8_t *offsets;  /* n + 1 entries */
    const uint8_t *data;     /* first byte of the first value */
    size_t data_len;         /* = last offset */
    size_t size;             /* bytes of the whole container value */
} vr_container;

/* A decoded primitive (or short string). */
typedef struct vr_prim {
    vr_type type;
    int64_t i;               /* ints, date, timestamps, time */
    double d;
    float f;
    vr_i128 unscaled;        /* decimals */
    uint32_t scale;
    const uint8_t *bytes;    /* string, binary, uuid */
    size_t len;
} vr_prim;

typedef struct vr_str {
    const char *s;
    size_t len;
} vr_str;

typedef struct vr_slice {
    const uint8_t *p;
    size_t len;
} vr_slice;

int vr_meta_open(vr_meta *m, const uint8_t *p, size_t len, pq_err *err);
int vr_meta_key(const vr_meta *m, uint32_t id, vr_str *key, pq_err *err);

/* Type of the value at v: a vr_type, or a negative code. */
int vr_value_type(const uint8_t *v, size_t len);
/* Bytes used by the value starting at v (the rest of avail is ignored);
 * *size is 0 after a failure. */
int vr_value_size(const uint8_t *v, size_t avail, size_t *size, pq_err *err);
int vr_value_read(const uint8_t *v, size_t len, vr_prim *out, pq_err *err);

int vr_container_open(vr_container *c, const uint8_t *v, size_t len,
                      pq_err *err);
/* The i-th field (in key-name order) or element. field_id may be NULL;
 * it is left alone for arrays. */
int vr_container_get(const vr_container *c, uint32_t i, uint32_t *field_id,
                     const uint8_t **val, size_t *val_len, pq_err *err);
/* Where element i of c starts and the bytes from there to the end of c's
 * data, without finding the element's exact size (vr_container_get does):
 * for walks that read a primitive or open a container there, which bound
 * themselves. The caller keeps i < c->n. Inline: it runs per field. */
static inline int vr_container_at(const vr_container *c, uint32_t i, const uint8_t **v,
                                  size_t *avail, pq_err *err)
{
    const uint8_t *p = c->offsets + (size_t)i * c->offset_size;
    size_t off = p[0];
    for (unsigned b = 1; b < c->offset_size; b++)
        off |= (size_t)p[b] << (8 * b);
    if (off >= c->data_len)
        return pq_err_set(err, PQ_EPARSE, "variant value: element %u at offset %zu outside "
                          "%zu data bytes", i, off, c->data_len);
    *v = c->data + off;
    *avail = c->data_len - off;
    return 0;
}

/* The field id of object field i (i < c->n). */
static inline uint32_t vr_container_id(const vr_container *c, uint32_t i)
{
    const uint8_t *p = c->ids + (size_t)i * c->id_size;
    uint32_t v = p[0];
    for (unsigned b = 1; b < c->id_size; b++)
        v |= (uint32_t)p[b] << (8 * b);
    return v;
}

/* Binary search by name. Returns 1 and the value if found, 0 if absent. */
int vr_object_find(const vr_container *c, const vr_meta *m, const char *name,
                   size_t len, const uint8_t **val, size_t *val_len,
                   pq_err *err);

/* Appends to out the object obj (same metadata m) without the fields named
 * in drop (sorted byte-wise, unique): the "value" of a partially shredded
 * object. Kept values are copied as they are. *kept = fields written; with
 * 0 the caller stores a null value column instead of an empty object. */
int vr_object_append_without(pq_buf *out, const vr_meta *m,
                             const uint8_t *obj, size_t len,
                             const vr_str *drop, size_t ndrop, size_t *kept,
                             pq_err *err);

/* Appends an object from already-encoded field values (same metadata m).
 * fields must be sorted by key name and unique (checked: PQ_EINVAL). */
typedef struct vr_field {
    uint32_t id;
    const uint8_t *value;
    size_t len;
} vr_field;
int vr_value_append_object(pq_buf *out, const vr_meta *m,
                           const vr_field *fields, size_t n, pq_err *err);
int vr_value_append_array(pq_buf *out, const vr_slice *elems, size_t n,
                          pq_err *err);

#endif
