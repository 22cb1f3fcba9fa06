/* colspec.h - the schema language of DESIGN.md "Schema (YAML)": loading a
 * column-spec tree from YAML (a file, a buffer, or a mapping inside the
 * configuration), and building the Parquet schema (pq_schema) from it.
 *
 *     sc_schema *spec;
 *     if (sc_schema_load_file("schemas/access.yaml", &spec, &err) != 0) ...
 *     pq_schema *ps;
 *     if (sc_build_parquet_schema(spec, &ps, &err) != 0) ...
 *     ... shred records with spec->columns[i] and spec->leaves[] ...
 *     pq_schema_destroy(ps);
 *     sc_schema_free(spec);
 *
 * Layout. While loading, every type node learns which Parquet leaves it
 * owns (leaf indices in pq_schema's depth-first order) and the definition /
 * repetition level it reaches when present, so a shredder can map a record
 * to columns without walking the pq_schema. sc_build_parquet_schema checks
 * that the pq_schema it builds agrees leaf by leaf.
 *
 * Parquet shapes (repetitions in brackets):
 *   column               [required if `required: true`, else optional]
 *   list<T>              group (LIST) { repeated group list { [opt] element } }
 *   map<string,T>        group (MAP) { repeated group key_value {
 *                            required binary key (STRING); [opt] value } }
 *   struct               group { fields, each [required if required: true] }
 *   variant              group (VARIANT) { required binary metadata;
 *                            value [required unshredded, optional shredded];
 *                            [opt] typed_value (shred tree) }
 *   shred object         [opt] group typed_value {
 *                            required group <field> { optional binary value;
 *                                                     optional typed_value } }
 *   shred array [T]      [opt] group typed_value (LIST) { repeated group list {
 *                            required group element { optional binary value;
 *                                                     optional typed_value } } }
 *   shred primitive      [opt] <type> typed_value
 * (VariantShredding.md). A shred field typed `variant` has no typed_value. */
#ifndef PQ_COLSPEC_H
#define PQ_COLSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "pq_writer.h"

struct yp_doc;
struct yaml_node_s;

typedef struct sc_pos {
    const char *file;            /* owned by the sc_schema */
    uint32_t line, col;          /* 1-based */
} sc_pos;

typedef enum sc_kind {
    SC_BOOL, SC_INT, SC_FLOAT, SC_DOUBLE, SC_FLOAT16, SC_DECIMAL,
    SC_STRING, SC_ENUM, SC_JSON, SC_BSON, SC_BINARY, SC_UUID,
    SC_DATE, SC_TIME, SC_TIMESTAMP, SC_INTERVAL, SC_GEOMETRY, SC_GEOGRAPHY,
    SC_LIST, SC_MAP, SC_STRUCT, SC_VARIANT
} sc_kind;

struct sc_column;
struct sc_shred;

/* `shred: auto` on a top-level Variant column (the default for one
 * without `shred:`): each file decides its own shred tree from its first
 * row group (daemon/output/autoshred.c, schema/variant/vauto.h); the loaded schema keeps
 * the column unshredded, which is what the record shredder writes. */
typedef struct sc_auto {
    bool on;
    uint32_t max_columns;        /* shredded primitive fields, at most */
    uint32_t max_depth;          /* object/array levels below the root */
    double min_presence;         /* share of the parent's rows */
} sc_auto;

#define SC_AUTO_MAX_COLUMNS 256
#define SC_AUTO_MAX_DEPTH 4
#define SC_AUTO_MIN_PRESENCE 0.5

typedef struct sc_type {
    sc_kind kind;
    int bit_width;               /* SC_INT: 8, 16, 32, 64 */
    bool is_signed;              /* SC_INT */
    int precision, scale;        /* SC_DECIMAL */
    pq_time_unit unit;           /* SC_TIME, SC_TIMESTAMP */
    bool utc;                    /* SC_TIME, SC_TIMESTAMP: isAdjustedToUTC */
    char *crs;                   /* SC_GEOMETRY/GEOGRAPHY; NULL = OGC:CRS84 */
    pq_edge_algorithm algorithm; /* SC_GEOGRAPHY */
    struct sc_type *elem;        /* SC_LIST element, SC_MAP value */
    struct sc_column *fields;    /* SC_STRUCT */
    size_t n_fields;
    struct sc_shred *shred;      /* SC_VARIANT: root (value + typed_value) */
    sc_auto autoshred;           /* SC_VARIANT, top-level columns only */
    /* Parquet mapping (see header comment). */
    pq_physical_type physical;   /* primitives */
    int32_t type_length;         /* FIXED_LEN_BYTE_ARRAY */
    int leaf;                    /* primitives: leaf index; others: first leaf
                                    (SC_MAP: the key leaf) */
    int n_leaves;                /* leaves under this node */
    int metadata_leaf;           /* SC_VARIANT */
    uint16_t def, rep;           /* levels when this node is present */
    bool has_args;               /* parameters were written in the type string */
} sc_type;

typedef enum sc_shred_kind {
    SC_SHRED_NONE,               /* value only (unshredded / "variant") */
    SC_SHRED_PRIMITIVE,          /* typed_value is a leaf of .type */
    SC_SHRED_OBJECT,             /* typed_value groups one entry per field */
    SC_SHRED_ARRAY               /* typed_value is a LIST of .elem */
} sc_shred_kind;

typedef struct sc_shred_field {
    char *name;                  /* object key, also the group name */
    size_t name_len;             /* strlen(name): the lookups by key compare it first */
    struct sc_shred *shred;
} sc_shred_field;

typedef struct sc_shred {
    sc_shred_kind kind;
    sc_type *type;               /* PRIMITIVE: the typed_value leaf */
    sc_shred_field *fields;      /* OBJECT, in schema order */
    size_t n_fields;
    struct sc_shred *elem;       /* ARRAY */
    int value_leaf;              /* leaf index of `value` */
    int typed_leaf;              /* first leaf under typed_value, -1 none */
    uint16_t def, rep;           /* levels of the enclosing group when present */
    uint16_t typed_def;          /* def level when typed_value is non-null */
    sc_pos pos;
} sc_shred;

typedef enum sc_source {
    SC_SRC_PATH,                 /* from: a dotted path or JSON Pointer */
    SC_SRC_REST,                 /* from: "*" */
    SC_SRC_INGEST_TIME,          /* ingest_time: true (the receive clock) */
    SC_SRC_INDEX                 /* from: _index (an Elasticsearch bulk action's index,
                                    not a field of the record; null for other inputs) */
} sc_source;

/* A parsed default (only for scalar types). */
typedef struct sc_default {
    bool set;
    char *text;                  /* the scalar as written */
    bool b;                      /* SC_BOOL */
    int64_t i;                   /* INT (signed), DATE (days), TIME/TIMESTAMP
                                    (in unit), DECIMAL p<=18 (unscaled) */
    uint64_t u;                  /* INT (unsigned) */
    double d;                    /* FLOAT, DOUBLE, FLOAT16 */
    uint8_t uuid[16];            /* SC_UUID */
    enum { SC_DEF_STRING, SC_DEF_BOOL, SC_DEF_INT, SC_DEF_DOUBLE } variant_kind;
} sc_default;

typedef struct sc_column {
    char *name;
    char *from;                  /* as written; NULL = name */
    char **path;                 /* from split into keys (unescaped) */
    size_t path_len;
    sc_source source;
    sc_type *type;
    bool required;
    sc_default def;
    pq_column_opts opts;         /* as set on this column/field (unset = default) */
    int32_t field_id;            /* -1 none */
    sc_pos pos;                  /* the column's mapping */
} sc_column;

/* One Parquet leaf: effective options (column options inherited by every
 * leaf below, struct fields overriding) and where it came from. */
typedef struct sc_leaf {
    const sc_column *column;     /* top-level column */
    const sc_type *type;         /* the primitive; NULL for variant binaries */
    pq_physical_type physical;
    pq_column_opts opts;         /* key_id points into the sc_schema */
    char *path;                  /* dotted Parquet path ("attrs.typed_value...") */
    uint16_t max_def, max_rep;
} sc_leaf;

typedef struct sc_schema {
    sc_column *columns;
    size_t n_columns;
    int rest;                    /* index of the `*` column, -1 none */
    sc_leaf *leaves;
    size_t n_leaves;
    char *file;                  /* source file for positions */
    char **keys;                 /* key ids given by sc_schema_set_key */
    size_t n_keys;
} sc_schema;

/* Loaders. Errors read "FILE:LINE:COL: column 'x': ... (expected ...)". */
int sc_schema_load_file(const char *path, sc_schema **out, pq_err *err);
int sc_schema_load_buffer(const char *name, const void *buf, size_t len, sc_schema **out,
                          pq_err *err);
/* From a node of an already loaded document (`schema:` inline in config). */
int sc_schema_load_node(struct yp_doc *doc, struct yaml_node_s *node, sc_schema **out,
                        pq_err *err);
/* No schema configured: `event` variant from "*", plus `_ingest_ts`
 * timestamp(us, utc) required, filled with the ingestion time. */
int sc_schema_default(sc_schema **out, pq_err *err);
/* The same with an `_index` string column (from: _index), for a daemon
 * with an http input: a `_bulk` record's index is never lost. */
int sc_schema_default_index(sc_schema **out, pq_err *err);
void sc_schema_free(sc_schema *s);

/* Gives every leaf under `path` (a column name or struct field path
 * "user.email", or any Parquet leaf path prefix) the encryption key id.
 * PQ_EINVAL if nothing matches or a leaf already has another key. */
int sc_schema_set_key(sc_schema *s, const char *path, const char *key_id, pq_err *err);

/* Builds the pq_schema (finished, leaves numbered) and checks the layout.
 * The caller destroys *out. */
int sc_build_parquet_schema(const sc_schema *spec, pq_schema **out, pq_err *err);

/* A copy of base whose columns i with roots[i] != NULL (top-level Variant
 * columns) are shredded per roots[i] (ownership passes, also on failure;
 * roots itself is the caller's), laid out anew. Leaves keep base's key ids
 * (a new leaf of a Variant column takes its `value` leaf's). Key ids and
 * positions point into base, which must outlive *out. */
int sc_schema_derive(const sc_schema *base, sc_shred **roots, sc_schema **out, pq_err *err);

/* Shred-tree nodes for building trees in code (vauto.c). sc_shred_new
 * gives an empty SC_SHRED_NONE node; sc_type_new_shred_prim a primitive
 * type ready for a shred (physical type set); NULL when out of memory. */
sc_shred *sc_shred_new(void);
void sc_shred_free(sc_shred *s);
sc_type *sc_type_new_shred_prim(sc_kind kind, int bit_width, int precision, int scale);

/* The index of the field of OBJECT node s named by the len bytes of
 * name, or -1. guess (objects of one source list their keys in one
 * order: the field after the last one found) is tried first; names are
 * unique within a node, so a guess cannot find another field. */
int sc_shred_field_index(const sc_shred *s, const char *name, size_t len, size_t guess);

/* The shred tree as compact JSON in the schema language's terms:
 * {"status":"int16","request":{"path":"string"},"tags":["string"]};
 * a NONE root gives "variant". Appends to out; PQ_ENOMEM. */
struct pq_buf;
int sc_shred_format_json(const sc_shred *s, struct pq_buf *out);

/* Type as written in the schema language ("list<timestamp(us,utc)>"). */
int sc_type_format(const sc_type *t, char *buf, size_t len);
const char *sc_encoding_name(pq_encoding e);

#endif
