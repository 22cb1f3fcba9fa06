/* shred_state.h - the shredder's state, shared by shred.c (routing, rest
 * column, record loop) and shred_value.c (typed values, levels, Variant
 * columns): the path trie, the container frames, where the next value
 * goes, and the frame stack's push. Header only, so that both files can use
 * it while shred.c calls shred_value.c and never the other way round.
 * Runs on the thread that shreds the record (one shredder per thread). */
#ifndef PQ_SHRED_STATE_H
#define PQ_SHRED_STATE_H

#include "colspec.h"
#include "column.h"
#include "err.h"
#include "geojson.h"
#include "json.h"
#include "pq_writer.h"
#include "rowgroup.h"
#include "shred_reject.h"
#include "variant.h"
#include "vshred.h"

#include <stdlib.h>

/* shred.h's, restated: this header may not include shred.h, the API of
 * shred.c, which includes this one (code_shape.py: no include cycles).
 * shred.c includes both, so a change to only one fails to compile
 * (-Werror: macro redefined). */
typedef struct sh_shredder sh_shredder;
#define SH_REJECTED 1

/* A key as the schema-directed parse compares it (shred_direct.c): the
 * bytes `"key":` with byte masks in up to four 8-byte words, so a key of
 * up to 29 bytes is confirmed with a few loads. lit: JSON writes the key
 * as is (printable ASCII without '"' or '\\'); n_words 0 when it does not
 * or the key is longer (then a byte compare). Built once (shd_setup). */
typedef struct sh_keypat {
    uint64_t w[4], m[4];
    uint8_t n_words;
    uint8_t len;                 /* bytes of `"key":` when n_words > 0 */
    bool lit;
} sh_keypat;

/* Trie of `from` paths: a node either owns a column or has children. */
typedef struct sh_trie {
    char *key;
    size_t key_len;
    struct sh_trie *children;
    size_t n_children, cap_children;
    uint32_t *slots;             /* open-addressing index of children by key
                                    hash: child index + 1, 0 empty */
    size_t slot_mask;            /* slots has slot_mask + 1 entries */
    uint32_t *after;             /* key order of the last record: after[i]
                                    is the child (index + 1) that followed
                                    child i - 1 (after[0]: the first key);
                                    0 unknown. Written while shredding (one
                                    shredder per thread owns its trie) */
    int column;                  /* index into spec->columns, -1 none */
    bool plain;                  /* column's values are plain scalars
                                    (shv_is_plain_scalar) */
    bool plain_list;             /* a list of plain scalars: its arrays
                                    are read by shred_direct.c */
    sh_keypat pat;               /* its key, for shred_direct.c */
} sh_trie;

typedef enum sh_mode {
    FM_ROUTE,                    /* object on a column path: keys route */
    FM_REST,                     /* mirrored into the rest builder */
    FM_TYPED,                    /* container of a typed column */
    FM_VARIANT,                  /* mirrored into a variant column builder */
    FM_JSON,                     /* re-serialized into a json column */
    FM_SKIP                      /* ignored (unmapped, or a failed column) */
} sh_mode;

typedef struct sh_frame {
    uint8_t mode;
    bool is_object;
    bool column_root;            /* the container that is a column's value */
    bool rest_open;              /* FM_ROUTE: opened in the rest builder */
    bool first;                  /* FM_TYPED list/map: no entry yet */
    const sh_trie *node;         /* FM_ROUTE */
    uint32_t last_child;         /* FM_ROUTE: child (index + 1) of the last
                                    key found, 0 before the first; FM_TYPED
                                    struct: field index + 1 of the last key */
    const char *key;             /* this container's key in its parent */
    size_t key_len;
    const sc_type *type;         /* FM_TYPED: LIST, MAP or STRUCT */
    uint16_t rep;                /* FM_TYPED: rep level of the next child */
    size_t seen_off;             /* FM_TYPED struct: field flags in seen */
    int column;                  /* owning column, -1 for route/rest */
    vr_builder *vb;              /* FM_VARIANT: the builder receiving events */
    pq_buf *jb;                  /* FM_JSON: the text receiving events */
    bool nested_root;            /* a variant/json value inside a typed
                                    container: written at its end with rep */
    bool geo_root;               /* a GeoJSON object for a geometry leaf */
    size_t raw_start;            /* geo_root: byte offset of the object */
} sh_frame;

/* Where the next value event goes (set by a key, or by a list frame). */
typedef enum sh_target_kind {
    T_IGNORE, T_REST, T_ROUTE, T_COLUMN, T_TYPED
} sh_target_kind;

typedef struct sh_target {
    sh_target_kind kind;
    const sh_trie *node;         /* T_ROUTE */
    int column;                  /* T_COLUMN, T_TYPED */
    const sc_type *type;         /* T_TYPED */
    bool nullable;               /* T_TYPED */
    uint16_t rep;                /* T_TYPED */
    const char *key;             /* key text, for the rest column */
    size_t key_len;
} sh_target;

/* Whether the value after the last key may skip on_value's dispatch
 * (shred.c: fast_scalar): the key led to a plain scalar column. */
typedef enum sh_fast {
    FAST_NONE,
    FAST_COLUMN,                 /* a top-level column: target.column */
    FAST_FIELD                   /* a struct field or map value: target's
                                    column, type and rep, as T_TYPED */
} sh_fast;

/* A plain scalar struct field's key, as shred_direct.c compares it with
 * the line's bytes: at sh_shredder.field_keys[the field's leaf], valid
 * when type is the field's type (a struct field's first leaf may be a
 * nested field's). Built once (shd_setup). */
typedef struct sh_field_key {
    const sc_type *type;
    const char *key;
    size_t key_len;
    sh_keypat pat;
} sh_field_key;

/* Most members shred_direct.c's direct_variant reads in one object,
 * and most fields of the shred tree it writes. */
#define SHD_VMAX 32

/* A key of a shredded Variant column's objects as direct_variant last
 * met it: its `"key":` pattern and bytes, its dictionary id and shred
 * field, so the next record's same key costs one compare instead of a
 * dictionary look-up and a field search. */
typedef struct sh_vkey {
    sh_keypat pat;
    char key[32];
    uint8_t key_len;
    uint8_t next;                /* the entry after it last time; SHD_VMAX none */
    int16_t field;               /* sc_shred_field_index, -1 none */
    uint32_t id;
    uint64_t object;             /* sh_vcache.object it was last read in */
} sh_vkey;

/* A Variant column's known keys, valid while its builder's dictionary
 * keeps its ids (vr_builder_dict_epoch is epoch): a dictionary reset or
 * renumbering empties it before its ids are used. */
typedef struct sh_vcache {
    uint64_t epoch;
    uint64_t object;             /* objects read, for repeated keys */
    uint8_t n, first;            /* first: entry of the first key last time */
    sh_vkey keys[SHD_VMAX];
} sh_vcache;

/* Per top-level column state for the current record. */
typedef struct sh_colstate {
    bool seen;
    bool failed;                 /* value did not fit: goes to rest */
    size_t raw_start;            /* byte offset of the value in the line */
    const char *key;             /* its key, for replay into rest */
    size_t key_len;
    size_t parent_frame;         /* route frame the value sits in */
} sh_colstate;

struct sh_shredder {
    const sc_schema *spec;
    sh_trie root;
    json_parser parser;          /* the record */
    json_parser replay;          /* a failed value, re-read into rest */
    vr_builder rest;             /* the `*` column */
    vr_builder **variants;       /* per column, NULL unless variant */
    pq_buf *json_text;           /* per column, for json columns */
    sh_colstate *cols;
    sh_frame *frames;
    size_t n_frames, cap_frames;
    pq_buf seen;                 /* struct field flags */
    pq_buf scratch;              /* conversions */
    vr_builder nested;           /* a variant inside a list/map/struct */
    pq_buf nested_json;          /* a json value inside a list/map/struct */
    vs_state vshred;             /* Variant shredding scratch */
    gj_converter geo;            /* GeoJSON to WKB */
    pq_buf wkb;
    sh_target target;
    uint8_t fast;                /* sh_fast: set by a key, taken by the
                                    value event right after it */
    bool general_only;           /* sh_shredder_set_fast(false) */
    uint8_t *from_line;          /* per column: 1 when its value comes from
                                    the line (a path, not the rest column),
                                    so a seen one needs nothing at the
                                    record's end (finish_columns) */
    sh_field_key *field_keys;    /* per leaf (shd_setup) */
    sh_field_key *struct_keys;   /* struct-valued struct fields, by first
                                    leaf (shd_setup; shred_direct.c) */
    size_t n_field_keys;
    sh_vcache **vcache;          /* per column, shred_direct.c's known
                                    keys of a shredded Variant (made on
                                    first use) */
    const char *direct_declined; /* shred_direct.c: the key it last declined
                                    (the parser then reads it; asking again
                                    would decline again) */
    uint64_t direct_objects;     /* shred_direct.c: Variant objects written
                                    without their builder, and struct
                                    column values without events (for
                                    tests) */
    /* per record */
    pq_rowgroup *rg;
    pq_column *leaves;           /* rg's columns (pq_rowgroup_columns) */
    size_t n_leaves;
    const char *line;
    size_t line_len;
    int64_t ingest_us;
    const char *index;           /* sh_set_index, for the next line; NULL: none */
    size_t index_len;
    pq_err *err;
    sh_reject reject;            /* SH_REJECT_NONE until decided */
    int fatal;                   /* writer error */
    bool has_rest_value;         /* the rest builder holds the record root */
    /* why the last column failed, for rejects: as long as any pq_err
     * message, since a callee's whole message may land here */
    char fail_why[sizeof ((pq_err *)0)->msg];
};

/* The row group's column of leaf, as pq_rowgroup_column, without a call
 * per value. */
static inline pq_column *sh_leaf(const sh_shredder *s, int leaf)
{
    return (size_t)leaf < s->n_leaves ? &s->leaves[leaf] : NULL;
}

/* Whether the schema has a `*` rest column. */
static inline bool sh_has_rest(const sh_shredder *s)
{
    return s->spec->rest >= 0;
}

/* Pushes a copy of *f on the frame stack, which grows geometrically and
 * is kept between records. */
static inline int sh_push(sh_shredder *s, const sh_frame *f)
{
    if (s->n_frames == s->cap_frames) {
        size_t cap = s->cap_frames ? s->cap_frames * 2 : 16;
        sh_frame *p = realloc(s->frames, cap * sizeof *p);
        if (p == NULL)
            return PQ_ENOMEM;
        s->frames = p;
        s->cap_frames = cap;
    }
    s->frames[s->n_frames++] = *f;
    return PQ_OK;
}

/* Event kinds passed to the value helpers. */
enum { EV_BEGIN_OBJECT, EV_BEGIN_ARRAY, EV_STRING, EV_NUMBER, EV_BOOL, EV_NULL };

typedef struct sh_str {
    const char *s;
    size_t len;
} sh_str;

#endif
