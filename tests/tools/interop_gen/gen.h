/* gen.h - interop_gen's private header: the column model (gtype: a
 * leaf or a STRUCT/LIST/MAP with its value generator), one generated value
 * (gval), one file of the matrix (file_spec), and the functions the parts
 * of the tool call across files. interop_gen is single-threaded. */
#ifndef GEN_H
#define GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pq_writer.h"

__extension__ typedef __int128 i128;

enum kind { K_LEAF, K_STRUCT, K_LIST, K_MAP };

/* Leaf value generators. */
enum gen {
    G_BOOL, G_I8, G_I16, G_I32, G_I64, G_U8, G_U16, G_U32, G_U64,
    G_I32_FEW, G_I64_FEW, G_I64_SEQ, G_I32_SMALLDELTA, G_STR_PHASE, G_I64_PHASE, G_DOUBLE_PHASE,
    G_MONO_I32, G_MONO_U32, G_MONO_I64, G_MONO_U64, G_MONO_FLOAT, G_MONO_DOUBLE, G_MONO_DEC,
    G_MONO_STR, G_MONO_DATE,
    G_FLOAT, G_DOUBLE, G_DOUBLE_FEW, G_F16,
    G_DEC, G_STR, G_STR_FEW, G_STR_PREFIX, G_STR_BIG, G_STR_KEY, G_ENUM, G_JSON, G_BSON,
    G_BIN, G_FIXED, G_UUID, G_DATE, G_TIME_MS, G_TIME_US, G_TIME_NS,
    G_TS_MS, G_TS_US, G_TS_NS, G_INT96, G_INTERVAL, G_INTERVAL_MAX, G_WKB, G_NULL
};

typedef struct gtype gtype;
struct gtype {
    const char *name;
    const char *jtype;           /* expectation "type" */
    enum kind kind;
    pq_repetition rep;
    pq_physical_type phys;
    int32_t tlen;
    pq_logical lt;
    pq_column_opts opts;
    bool has_opts;
    enum gen gen;
    int null_pct;                /* optional nodes: percent of nulls */
    gtype *child[8];
    size_t nchild;
    /* filled when the schema is built */
    int leaf;                    /* leaf ordinal, leaves only */
    uint16_t def_max, rep_max;   /* leaves: our own computation */
    uint16_t entry_rep;          /* list/map: rep level of entries 2.. */
    pq_column *col;
    uint64_t nvals;              /* non-null values generated (edges first) */
};

typedef struct gval {
    bool null;
    int64_t i;                   /* ints, bool, date, time, ts, int96 nanos; uint64 as bits */
    double d;                    /* float, double, float16 value */
    i128 dec;                    /* decimal unscaled */
    uint8_t *p;                  /* bytes for BYTE_ARRAY / FLBA / INT96 */
    size_t n;
    struct gval *items;          /* list elements; map k,v pairs; struct fields */
    size_t nitems;
} gval;
/* The common leaves, optional unless said otherwise. */
#define OPT PQ_OPTIONAL
#define REQ PQ_REQUIRED
#define GROUP(name, rep, ...) group(name, rep, sizeof((gtype *[]){ __VA_ARGS__ }) / sizeof(gtype *), (gtype *[]){ __VA_ARGS__ })

/* Leaves with dictionary=1 have dictionary chunks in some row groups and
 * fallback chunks in others (checked by footer.mjs). */
#define F_DICT_MIXED 1u
/* Row groups are cut by bytes: their number is the writer's to choose. */
#define F_RG_BY_BYTES 2u
/* a chunk falls back from its dictionary between pages (footer.mjs) */
#define F_DICT_IN_CHUNK 4u

typedef struct file_spec {
    const char *name;
    gtype **cols;
    size_t ncols;
    size_t rows;
    pq_writer_opts wo;
    const char *skip_json;       /* optional "skip" object text for the expectation */
    unsigned flags;
} file_spec;

/* gen_leaf.c: rows of the file being written (the G_MONO_* range). */
extern size_t cur_rows;
/* gen_shred.c: the error code of a failed put in this row, 0 if none. */
extern int put_failed;
/* gen_file.c: where files go, the seed, files written and failed. */
extern const char *outdir;
extern uint64_t seed;
extern int files_ok, files_failed;

/* gen_rng.c */
void rng_seed(uint64_t seed);
uint64_t rnd(void);
uint64_t rnd_below(uint64_t n);
int64_t rnd_range(int64_t lo, int64_t hi);
int pct(int p);

/* gen_model.c */
void *own(void *p);
void free_owned(void);
pq_logical lt_none(void);
pq_logical lt_kind(pq_logical_kind k);
pq_logical lt_int(int bits, bool sign);
pq_logical lt_dec(int p, int s);
pq_logical lt_time(pq_logical_kind k, pq_time_unit u, bool utc);
gtype *leaf(const char *name, pq_repetition rep, pq_physical_type phys, int32_t tlen,
            pq_logical lt, const char *jtype, enum gen gen);
gtype *l_bool(const char *n, pq_repetition r);
gtype *l_i32(const char *n, pq_repetition r, enum gen g);
gtype *l_i64(const char *n, pq_repetition r, enum gen g);
gtype *l_float(const char *n, pq_repetition r);
gtype *l_double(const char *n, pq_repetition r, enum gen g);
gtype *l_str(const char *n, pq_repetition r, enum gen g);
gtype *l_bin(const char *n, pq_repetition r);
gtype *l_fixed(const char *n, pq_repetition r, int32_t len);
gtype *l_f16(const char *n, pq_repetition r);
gtype *l_int(const char *n, int bits, bool sign);
gtype *l_dec(const char *n, pq_physical_type phys, int32_t tlen, int p, int s);
gtype *group(const char *name, pq_repetition rep, size_t n, gtype **kids);
gtype *list_of(const char *name, pq_repetition rep, gtype *element);
gtype *map_of(const char *name, pq_repetition rep, gtype *key, gtype *value);
gtype *with_enc(gtype *t, pq_encoding enc, int dictionary);
gtype *with_bloom(gtype *t);
gtype *with_nulls(gtype *t, int null_pct);

/* gen_leaf.c */
uint32_t get_le32(const uint8_t *p);
void gen_leaf(gtype *t, gval *v, size_t row);

/* gen_row.c */
void *arena_alloc(size_t n);
void arena_reset(void);
void arena_free(void);
void gen_value(gtype *t, gval *v, size_t row, int depth);

/* gen_shred.c */
void shred(const gtype *t, const gval *v, uint16_t rep, uint16_t def);

/* gen_json.c */
void j_value(FILE *f, const gtype *t, const gval *v);
void j_type(FILE *f, const gtype *t);
void j_footer(FILE *f, const file_spec *fs, const pq_schema *s);

/* gen_schema.c */
int build(pq_schema *s, int parent, gtype *t, uint16_t def, uint16_t rep, pq_err *err);
int resolve(const pq_schema *s, gtype *t, pq_err *err);
void attach(pq_writer *w, gtype *t);
void reset_counts(gtype *t);

/* gen_file.c */
void write_file(const file_spec *fs);

/* gen_matrix.c */
void matrix(void);

#endif
