/* gen_model.c - the column model: leaves, groups, lists and maps with
 * their logical types, column options and value generators, and the list
 * of allocations that live until exit. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

/* Column descriptions and file names live until exit; they are recorded
 * here and freed together. */
static void **owned;
static size_t n_owned, cap_owned;

void *own(void *p)
{
    if (!p) {
        fprintf(stderr, "interop_gen: out of memory\n");
        exit(2);
    }
    if (n_owned == cap_owned) {
        cap_owned = cap_owned ? 2 * cap_owned : 256;
        void **n = realloc(owned, cap_owned * sizeof *owned);
        if (!n) {
            fprintf(stderr, "interop_gen: out of memory\n");
            exit(2);
        }
        owned = n;
    }
    owned[n_owned++] = p;
    return p;
}

void free_owned(void)
{
    for (size_t i = 0; i < n_owned; i++)
        free(owned[i]);
    free(owned);
}

static gtype *new_type(void)
{
    gtype *t = own(calloc(1, sizeof *t));
    t->null_pct = 10;
    t->leaf = -1;
    return t;
}

pq_logical lt_none(void) { pq_logical l; memset(&l, 0, sizeof l); l.kind = PQ_LT_NONE; return l; }
pq_logical lt_kind(pq_logical_kind k) { pq_logical l = lt_none(); l.kind = k; return l; }
pq_logical lt_int(int bits, bool sign)
{
    pq_logical l = lt_kind(PQ_LT_INTEGER);
    l.bit_width = (int8_t)bits;
    l.is_signed = sign;
    return l;
}
pq_logical lt_dec(int p, int s)
{
    pq_logical l = lt_kind(PQ_LT_DECIMAL);
    l.precision = p;
    l.scale = s;
    return l;
}
pq_logical lt_time(pq_logical_kind k, pq_time_unit u, bool utc)
{
    pq_logical l = lt_kind(k);
    l.unit = u;
    l.utc = utc;
    return l;
}

gtype *leaf(const char *name, pq_repetition rep, pq_physical_type phys, int32_t tlen,
            pq_logical lt, const char *jtype, enum gen gen)
{
    gtype *t = new_type();
    t->name = name;
    t->kind = K_LEAF;
    t->rep = rep;
    t->phys = phys;
    t->tlen = tlen;
    t->lt = lt;
    t->jtype = jtype;
    t->gen = gen;
    return t;
}

gtype *l_bool(const char *n, pq_repetition r) { return leaf(n, r, PQ_BOOLEAN, 0, lt_none(), "bool", G_BOOL); }
gtype *l_i32(const char *n, pq_repetition r, enum gen g) { return leaf(n, r, PQ_INT32, 0, lt_none(), "int32", g); }
gtype *l_i64(const char *n, pq_repetition r, enum gen g) { return leaf(n, r, PQ_INT64, 0, lt_none(), "int64", g); }
gtype *l_float(const char *n, pq_repetition r) { return leaf(n, r, PQ_FLOAT, 0, lt_none(), "float", G_FLOAT); }
gtype *l_double(const char *n, pq_repetition r, enum gen g) { return leaf(n, r, PQ_DOUBLE, 0, lt_none(), "double", g); }
gtype *l_str(const char *n, pq_repetition r, enum gen g) { return leaf(n, r, PQ_BYTE_ARRAY, 0, lt_kind(PQ_LT_STRING), "string", g); }
gtype *l_bin(const char *n, pq_repetition r) { return leaf(n, r, PQ_BYTE_ARRAY, 0, lt_none(), "binary", G_BIN); }
gtype *l_fixed(const char *n, pq_repetition r, int32_t len) { return leaf(n, r, PQ_FIXED_LEN_BYTE_ARRAY, len, lt_none(), "fixed", G_FIXED); }
gtype *l_f16(const char *n, pq_repetition r) { return leaf(n, r, PQ_FIXED_LEN_BYTE_ARRAY, 2, lt_kind(PQ_LT_FLOAT16), "float16", G_F16); }
gtype *l_int(const char *n, int bits, bool sign)
{
    static const char *names[2][4] = { { "uint8", "uint16", "uint32", "uint64" }, { "int8", "int16", "int32", "int64" } };
    static const enum gen gens[2][4] = { { G_U8, G_U16, G_U32, G_U64 }, { G_I8, G_I16, G_I32, G_I64 } };
    int k = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
    return leaf(n, OPT, bits == 64 ? PQ_INT64 : PQ_INT32, 0, lt_int(bits, sign), names[sign][k], gens[sign][k]);
}
gtype *l_dec(const char *n, pq_physical_type phys, int32_t tlen, int p, int s)
{
    return leaf(n, OPT, phys, tlen, lt_dec(p, s), "decimal", G_DEC);
}

gtype *group(const char *name, pq_repetition rep, size_t n, gtype **kids)
{
    gtype *t = new_type();
    t->name = name;
    t->kind = K_STRUCT;
    t->jtype = "struct";
    t->rep = rep;
    for (size_t i = 0; i < n; i++)
        t->child[t->nchild++] = kids[i];
    return t;
}

gtype *list_of(const char *name, pq_repetition rep, gtype *element)
{
    gtype *t = new_type();
    t->name = name;
    t->kind = K_LIST;
    t->jtype = "list";
    t->rep = rep;
    element->name = "element";
    t->child[t->nchild++] = element;
    return t;
}

gtype *map_of(const char *name, pq_repetition rep, gtype *key, gtype *value)
{
    gtype *t = new_type();
    t->name = name;
    t->kind = K_MAP;
    t->jtype = "map";
    t->rep = rep;
    key->name = "key";
    key->rep = PQ_REQUIRED;
    value->name = "value";
    t->child[t->nchild++] = key;
    t->child[t->nchild++] = value;
    return t;
}

gtype *with_enc(gtype *t, pq_encoding enc, int dictionary)
{
    pq_column_opts_default(&t->opts);
    t->opts.encoding = enc;
    t->opts.dictionary = dictionary;
    t->has_opts = true;
    return t;
}

gtype *with_bloom(gtype *t)
{
    if (!t->has_opts) {
        pq_column_opts_default(&t->opts);
        t->has_opts = true;
    }
    t->opts.bloom = 1;
    return t;
}

gtype *with_nulls(gtype *t, int null_pct)
{
    t->null_pct = null_pct;
    return t;
}
