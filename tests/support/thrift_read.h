/* thrift_read.h - test-side Thrift COMPACT protocol decoder. Decodes one
 * struct into a tree without knowing its schema (the writer's encoder is
 * deliberately not reused: this is the second opinion), plus a small
 * table-driven validator that checks a tree against field ids and types
 * copied from parquet.thrift.
 *
 * Every read is bounds-checked; malformed input yields PQ_EPARSE with the
 * byte offset of the problem, never an out-of-bounds read. Binary values
 * point into the input buffer, so the caller keeps it alive while the tree
 * is in use. */
#ifndef PQ_THRIFT_READ_H
#define PQ_THRIFT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Node types: the compact protocol type ids, except that both boolean ids
 * (1 = true, 2 = false) become TR_BOOL. */
typedef enum tr_type {
    TR_BOOL = 1,
    TR_I8 = 3,
    TR_I16 = 4,
    TR_I32 = 5,
    TR_I64 = 6,
    TR_DOUBLE = 7,
    TR_BINARY = 8,
    TR_LIST = 9,
    TR_SET = 10,
    TR_MAP = 11,
    TR_STRUCT = 12
} tr_type;

/* Nesting deeper than this is rejected (Parquet needs fewer than 10). */
#define TR_MAX_DEPTH 64

typedef struct tr_node {
    tr_type type;
    int16_t fid;          /* field id when the node is a struct field */
    size_t offset;        /* input offset of the value (field: its header) */
    size_t end;           /* input offset just past the value */
    union {
        int64_t i;        /* TR_I8 .. TR_I64 */
        double d;         /* TR_DOUBLE */
        bool b;           /* TR_BOOL */
        struct { const uint8_t *p; size_t len; } bin;   /* TR_BINARY */
    } v;
    tr_type elem_type;    /* list/set elements; map keys */
    tr_type val_type;     /* map values */
    size_t n;             /* kids: struct fields, list elements, or
                           * 2 * map entries (key, value, key, value...) */
    struct tr_node *kids;
} tr_node;

/* Decodes one struct from p[0..n). On success *root owns the tree (free
 * with tr_free) and *consumed is the number of bytes the struct used, which
 * may be less than n. */
int tr_parse(const uint8_t *p, size_t n, tr_node **root, size_t *consumed,
             pq_err *err);
void tr_free(tr_node *root);

/* "i32", "struct", ... for messages. */
const char *tr_type_name(tr_type t);

/* Accessors. All accept NULL and answer "absent" (NULL, 0, false). */
const tr_node *tr_field(const tr_node *st, int16_t fid);
bool tr_has(const tr_node *st, int16_t fid);
int64_t tr_int(const tr_node *node);                 /* 0 unless integer */
bool tr_bool(const tr_node *node);
double tr_double(const tr_node *node);
const uint8_t *tr_bin(const tr_node *node, size_t *len);
size_t tr_list_len(const tr_node *node);             /* list/set/map size */
const tr_node *tr_list_at(const tr_node *node, size_t i);
const tr_node *tr_map_key(const tr_node *map, size_t i);
const tr_node *tr_map_val(const tr_node *map, size_t i);

/* Field shortcuts: the default is returned when the field is absent or has
 * a different type class (integer / bool / binary / list / struct). */
int64_t tr_field_int(const tr_node *st, int16_t fid, int64_t dflt);
bool tr_field_bool(const tr_node *st, int16_t fid, bool dflt);
const uint8_t *tr_field_bin(const tr_node *st, int16_t fid, size_t *len);
const tr_node *tr_field_list(const tr_node *st, int16_t fid);
const tr_node *tr_field_struct(const tr_node *st, int16_t fid);

/* Schema tables for tr_validate: one tr_fspec per known field. Unknown
 * field ids are accepted (forward compatibility, as Thrift readers do). */
typedef struct tr_sspec tr_sspec;
typedef struct tr_fspec {
    int16_t fid;
    const char *name;
    tr_type type;
    bool required;
    tr_type elem;            /* TR_LIST / TR_SET element type */
    const tr_sspec *sub;     /* struct type of the field or its elements */
} tr_fspec;
struct tr_sspec {
    const char *name;
    bool is_union;           /* exactly one field must be set */
    size_t nfields;
    const tr_fspec *fields;
};

/* Checks types, required fields and union arity recursively. Messages name
 * the path ("FileMetaData.row_groups[0].columns[1].meta_data.codec"), the
 * field id and the byte offset relative to the parsed buffer. */
int tr_validate(const tr_node *st, const tr_sspec *spec, pq_err *err);

#endif
