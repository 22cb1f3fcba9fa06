/* colspec_int.h - what the parts of schema/colspec/ share; not for other
 * modules (they include colspec.h).
 *
 * The schema language (DESIGN.md "Schema (YAML)") is read YAML -> column-
 * spec tree with positioned errors, then laid out leaf by leaf, then built
 * into a pq_schema. One file per idea, in layers: a part calls only parts
 * above it in this list, never one below (tests/scripts/code_shape.py
 * checks that no two parts call each other):
 *     typeinfo.c     names of types, units and physical types; error-message
 *                    key paths; the Parquet physical/logical mapping
 *     specnode.c     making, freeing and copying nodes
 *     typestr.c      the type-string grammar
 *     shredtree.c    Variant shred trees (YAML in, JSON out)
 *     defaults.c     `default:` values
 *     colopts.c      per-column writer options; encoding names
 *     typeparams.c   type parameters given as keys beside `type`
 *     columns.c      one column and lists of them (struct fields recurse)
 *     schemacheck.c  checks across the whole schema
 *     leaflayout.c   leaf numbering, levels, effective options
 *     specload.c     the loaders and the built-in default schema
 *     pqbuild.c      the pq_schema builder
 *     derive.c       per-file schemas (automatic Variant shredding)
 * Each declaration below names the file that defines it.
 *
 * Thread: whichever loads a schema; nothing here keeps global state. */
#ifndef PQ_COLSPEC_INT_H
#define PQ_COLSPEC_INT_H

#include "colspec.h"
#include "yamlpos.h"

/* Types the type-string grammar knows, for "expected ..." in errors. */
#define SC_TYPES "bool, int8..int64, uint8..uint64, float, double, float16, decimal(p,s), " \
    "string, enum, json, bson, binary, uuid, date, time, timestamp, interval, geometry, " \
    "geography, list<T>, map<string,T>, struct, variant"

/* A set of physical types (pq_physical_type bits) / of sc_kinds. */
#define SC_PH(x) (1u << (x))
#define SC_KIND_BIT(kind) (1u << (kind))

/* What every part of a load works on: the document (for positions), the
 * schema being filled, and where errors go. */
typedef struct sc_loader {
    yp_doc *d;
    sc_schema *s;
    pq_err *err;
} sc_loader;

static inline int sc_nomem(pq_err *err)
{
    return pq_err_set(err, PQ_ENOMEM, "schema: out of memory");
}

/* ---- typeinfo.c ---------------------------------------------------------- */

/* A type-string keyword other than list and map. */
typedef struct sc_prim {
    const char *name;
    sc_kind kind;
    int bits;
    bool is_signed;
} sc_prim;

const sc_prim *sc_prim_find(const char *name);      /* NULL: not a type name */
const char *sc_kind_name(const sc_type *t);          /* "int16", "list", ... */
extern const char *const sc_unit_names[];           /* by pq_time_unit - 1 */
extern const char *const sc_phys_names[];           /* by pq_physical_type */
/* "boolean, int32, ..." for a set of SC_PH bits, cut to fit buf. */
void sc_mask_names(unsigned mask, char *buf, size_t len);
/* a, b and c joined into buf, cut to fit (a plain copy: snprintf would make
 * GCC warn about truncation that is intended here). */
void sc_fmt_cat(char *buf, size_t len, const char *a, const char *b, const char *c);
/* "what: key" into buf, cut to fit; returns buf. */
char *sc_keypath(char *buf, size_t len, const char *what, const char *key);
/* Index of the first name (in document order) that repeats an earlier one,
 * or -1. */
long sc_find_duplicate(const char **names, size_t n);
/* Sets physical/type_length of a primitive from its (final) parameters. */
void sc_set_physical(sc_type *t);
pq_logical sc_type_logical(const sc_type *t);
bool sc_is_primitive(sc_kind k);
/* Physical types (SC_PH bits) of every leaf under t. */
unsigned sc_phys_mask(const sc_type *t);

/* ---- specnode.c ---------------------------------------------------------- */

sc_type *sc_type_alloc(sc_kind kind);                /* NULL: out of memory */
void sc_type_free(sc_type *t);
/* Copies c into an all-zero d; false when out of memory (d freeable). */
bool sc_column_clone(sc_column *d, const sc_column *c);

/* ---- typestr.c ----------------------------------------------------------- */

/* Parses the type string of node n; *out is set (possibly partial) even on
 * error, so the caller always frees it. what: "column 'x'" for errors. */
int sc_parse_type_string(sc_loader *L, const yaml_node_t *n, const char *what, sc_type **out);

/* ---- shredtree.c --------------------------------------------------------- */

/* Parses the shred tree at n into the zeroed node s (freed by the caller
 * also on error). */
int sc_parse_shred(sc_loader *L, yaml_node_t *n, const char *what, sc_shred *s);
/* Gives every node of s the no-leaf sentinel, -1 (layout assigns them). */
void sc_shred_reset_leaves(sc_shred *s);

/* ---- defaults.c ---------------------------------------------------------- */

/* c->def from the `default:` node n, checked against c->type. */
int sc_parse_default(sc_loader *L, yaml_node_t *n, const char *what, sc_column *c);

/* ---- colopts.c ----------------------------------------------------------- */

/* c->opts and c->field_id from the column mapping m. */
int sc_parse_options(sc_loader *L, yaml_node_t *m, const char *what, sc_column *c);

/* ---- typeparams.c -------------------------------------------------------- */

/* The one node of `kinds` (SC_KIND_BIT set) in type t, or an error at kn
 * naming why key cannot apply. */
int sc_target_of(sc_loader *L, yaml_node_t *kn, const char *what, const char *key, sc_type *t,
                 unsigned kinds, const char *kinds_text, sc_type **out);
int sc_param_time(sc_loader *L, yaml_node_t *m, const char *what, sc_column *c);
int sc_param_geo(sc_loader *L, yaml_node_t *m, const char *what, sc_column *c);
/* `shred:` of mapping m; parent is NULL for a top-level column. */
int sc_param_shred(sc_loader *L, yaml_node_t *m, const char *what, const char *parent,
                   sc_column *c);
sc_auto sc_auto_defaults(void);
/* Every struct got fields, every variant a shred root, every primitive its
 * physical type. tn: the `type` node, for errors. */
int sc_finish_type(sc_loader *L, yaml_node_t *tn, const char *what, sc_type *t);

/* ---- columns.c ----------------------------------------------------------- */

/* The column list seq (top-level when parent is NULL, else the fields of
 * struct column path `parent`) into *out, *n_out (freeable on error). */
int sc_parse_columns(sc_loader *L, yaml_node_t *seq, const char *parent, sc_column **out,
                     size_t *n_out);

/* ---- schemacheck.c ------------------------------------------------------- */

int sc_check_field_ids(sc_schema *s, pq_err *err);
int sc_check_rest(sc_schema *s, pq_err *err);      /* also sets s->rest */

/* ---- leaflayout.c -------------------------------------------------------- */

/* Numbers the leaves of s (s->leaves) and the levels of every node. */
int sc_layout(sc_schema *s, pq_err *err);

#endif
