/* vauto.c - the `shred: auto` decision (vauto.h): a walk over encoded
 * Variant values counting, per object path, presences and type classes;
 * then the choice of a shred tree within the column's limits.
 *
 * Runs on whichever thread owns the va_stats (the pipeline's assembler). */
#include "vauto.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
    VA_NULL, VA_BOOL, VA_INT, VA_DEC, VA_DOUBLE, VA_FLOAT, VA_STRING, VA_OBJECT, VA_ARRAY,
    VA_OTHER, VA_NCLASS
};

struct va_node {
    char *name;                  /* object field name (NUL-terminated copy) */
    size_t name_len;
    uint64_t seen;               /* values observed here (nulls included) */
    uint64_t n[VA_NCLASS];
    int int_bits;                /* widest integer seen */
    uint32_t dec_scale, dec_digits; /* decimals: largest scale, integer digits */
    va_node **kids;              /* object fields, sorted by name */
    size_t n_kids, cap_kids;
    va_node **by_id;             /* kids by field id of the metadata of
                                    generation by_id_gen (NULL: not yet) */
    uint32_t n_by_id;
    uint64_t by_id_gen;
    va_node *elem;               /* array elements */
    /* the choice */
    int cls;                     /* VA_NCLASS: not shredded */
    double score;                /* typed values / observed rows */
    size_t order;                /* among the candidates, in name order */
    bool keep;                   /* within max_columns */
    bool shadowed;               /* a sibling differing only in case wins */
};

static va_node *node_new(va_stats *s, const char *name, size_t len)
{
    if (s->n_nodes >= VA_MAX_NODES)
        return NULL;
    va_node *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->name = malloc(len + 1);
    if (n->name == NULL) {
        free(n);
        return NULL;
    }
    memcpy(n->name, name, len);
    n->name[len] = '\0';
    n->name_len = len;
    s->n_nodes++;
    return n;
}

static void node_free(va_node *n)
{
    if (n == NULL)
        return;
    for (size_t i = 0; i < n->n_kids; i++)
        node_free(n->kids[i]);
    free(n->kids);
    free(n->by_id);
    node_free(n->elem);
    free(n->name);
    free(n);
}

int va_stats_init(va_stats *s, const sc_auto *lim)
{
    memset(s, 0, sizeof *s);
    s->lim = *lim;
    s->meta_gen = 1;             /* nodes start at 0: nothing remembered */
    s->root = node_new(s, "", 0);
    return s->root ? PQ_OK : PQ_ENOMEM;
}

void va_stats_free(va_stats *s)
{
    node_free(s->root);
    s->root = NULL;
    free(s->meta);
    s->meta = NULL;
    s->meta_len = s->meta_cap = 0;
}

/* ---- observing ------------------------------------------------------------ */

static int cmp_name(const char *a, size_t la, const char *b, size_t lb)
{
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la < lb ? -1 : la > lb);
}

/* The child named key, added when new; NULL when the node limit is
 * reached (the field is then not tracked: it stays unshredded). */
static va_node *kid(va_stats *s, va_node *n, const char *key, size_t len, size_t *hint,
                    bool *nomem)
{
    /* An object's fields come in name order, as n's kids do: the field
     * after the last one found is usually the next kid (its length is
     * compared first: most misses differ there, without a memcmp call). */
    if (*hint < n->n_kids && n->kids[*hint]->name_len == len &&
        memcmp(n->kids[*hint]->name, key, len) == 0)
        return n->kids[(*hint)++];
    size_t lo = 0, hi = n->n_kids;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = cmp_name(n->kids[mid]->name, n->kids[mid]->name_len, key, len);
        if (c == 0) {
            *hint = mid + 1;
            return n->kids[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (n->n_kids == n->cap_kids) {
        size_t cap = n->cap_kids ? n->cap_kids * 2 : 8;
        va_node **k = realloc(n->kids, cap * sizeof *k);
        if (k == NULL) {
            *nomem = true;
            return NULL;
        }
        n->kids = k;
        n->cap_kids = cap;
    }
    va_node *c = node_new(s, key, len);
    if (c == NULL) {
        *nomem = s->n_nodes < VA_MAX_NODES;
        return NULL;
    }
    memmove(&n->kids[lo + 1], &n->kids[lo], (n->n_kids - lo) * sizeof *n->kids);
    n->kids[lo] = c;
    n->n_kids++;
    *hint = lo + 1;
    return c;
}

/* Field id -> kid, remembered under n for the rows whose metadata is
 * the same bytes (generation gen). A failed allocation only forgets. */
static void remember(va_node *n, uint64_t gen, uint32_t size, uint32_t id, va_node *k)
{
    if (n->by_id_gen != gen) {
        if (n->n_by_id < size) {
            va_node **b = realloc(n->by_id, size * sizeof *b);
            if (b != NULL) {
                n->by_id = b;
                n->n_by_id = size;
            }
        }
        if (n->by_id != NULL)
            memset(n->by_id, 0, n->n_by_id * sizeof *n->by_id);
        n->by_id_gen = gen;
    }
    if (id < n->n_by_id)
        n->by_id[id] = k;
}

/* The kid of object n for field id of the row's metadata m. Records of
 * one source mostly share their metadata (on the bench's access logs
 * 99.6% of rows have the previous row's): the id then names the kid
 * found before, without reading the key or comparing names (a third of
 * the walk's instructions). */
static va_node *kid_of(va_stats *s, va_node *n, const vr_meta *m, uint32_t id, size_t *hint,
                       bool *nomem, int *rc, pq_err *err)
{
    if (n->by_id_gen == s->meta_gen && id < n->n_by_id && n->by_id[id] != NULL)
        return n->by_id[id];
    vr_str key;
    if ((*rc = vr_meta_key(m, id, &key, err)) != 0)
        return NULL;
    va_node *k = kid(s, n, key.s, key.len, hint, nomem);
    if (k != NULL)
        remember(n, s->meta_gen, m->size, id, k);
    return k;
}

/* Keeps the row's metadata when it differs from the last row's, and
 * moves to a new generation. Without memory for the copy, nothing is
 * kept and every row is a new generation. */
static void track_meta(va_stats *s, const vr_variant *v)
{
    size_t n = v->metadata_len;
    if (n == s->meta_len && n > 0 && memcmp(s->meta, v->metadata, n) == 0)
        return;
    s->meta_gen++;
    s->meta_len = 0;
    if (n > s->meta_cap) {
        uint8_t *p = realloc(s->meta, n);
        if (p == NULL)
            return;
        s->meta = p;
        s->meta_cap = n;
    }
    if (n > 0) {
        memcpy(s->meta, v->metadata, n);
        s->meta_len = n;
    }
}

static uint32_t digits128(vr_i128 v)
{
    uint32_t d = 1;
    if (v < 0)
        v = -v;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

static int observe_prim(va_node *n, int type, const uint8_t *v, size_t len, pq_err *err)
{
    static const int bits[] = {[VR_INT8] = 8, [VR_INT16] = 16, [VR_INT32] = 32, [VR_INT64] = 64};
    vr_prim p;
    switch (type) {
    case VR_NULL: n->n[VA_NULL]++; return 0;
    case VR_TRUE: case VR_FALSE: n->n[VA_BOOL]++; return 0;
    case VR_INT8: case VR_INT16: case VR_INT32: case VR_INT64:
        n->n[VA_INT]++;
        if (bits[type] > n->int_bits)
            n->int_bits = bits[type];
        return 0;
    case VR_DOUBLE: n->n[VA_DOUBLE]++; return 0;
    case VR_FLOAT: n->n[VA_FLOAT]++; return 0;
    case VR_STRING: n->n[VA_STRING]++; return 0;
    case VR_DECIMAL4: case VR_DECIMAL8: case VR_DECIMAL16: {
        int rc = vr_value_read(v, len, &p, err);
        if (rc != 0)
            return rc;
        uint32_t d = digits128(p.unscaled);
        uint32_t ints = d > p.scale ? d - p.scale : 1;
        n->n[VA_DEC]++;
        if (p.scale > n->dec_scale)
            n->dec_scale = p.scale;
        if (ints > n->dec_digits)
            n->dec_digits = ints;
        return 0;
    }
    default:
        n->n[VA_OTHER]++;
        return 0;
    }
}

static inline int observe(va_stats *s, va_node *n, const vr_meta *m, const uint8_t *v,
                          size_t len, uint32_t depth, pq_err *err);

/* Not inlined: observe, run once per value (most of them primitives, a
 * few dozen per record), then stays small enough to inline into this
 * loop; with this loop inlined into it, each primitive paid the loop's
 * frame (a tenth of the walk's instructions). */
__attribute__((noinline)) static int observe_container(va_stats *s, va_node *n,
                                                       const vr_meta *m, const uint8_t *v,
                                                       size_t len, uint32_t depth, pq_err *err)
{
    vr_container c;
    int rc = vr_container_open(&c, v, len, err);
    if (rc != 0 || depth >= s->lim.max_depth)
        return rc;
    bool nomem = false;
    size_t hint = 0;
    for (uint32_t i = 0; rc == 0 && i < c.n; i++) {
        const uint8_t *fv = NULL;
        size_t fl = 0;
        rc = vr_container_at(&c, i, &fv, &fl, err);
        va_node *k = NULL;
        if (rc == 0 && c.basic == VR_BASIC_OBJECT) {
            k = kid_of(s, n, m, vr_container_id(&c, i), &hint, &nomem, &rc, err);
        } else if (rc == 0) {
            k = n->elem ? n->elem : (n->elem = node_new(s, "", 0));
            nomem = k == NULL && s->n_nodes < VA_MAX_NODES;
        }
        if (nomem)
            return pq_err_set(err, PQ_ENOMEM, "auto shred: out of memory");
        if (rc == 0 && k != NULL)
            rc = observe(s, k, m, fv, fl, depth + 1, err);
    }
    return rc;
}

static inline int observe(va_stats *s, va_node *n, const vr_meta *m, const uint8_t *v,
                          size_t len, uint32_t depth, pq_err *err)
{
    int type = vr_value_type(v, len);
    if (type < 0)
        return pq_err_set(err, PQ_EPARSE, "auto shred: malformed Variant value");
    n->seen++;
    if (type == VR_OBJECT || type == VR_ARRAY) {
        n->n[type == VR_OBJECT ? VA_OBJECT : VA_ARRAY]++;
        return observe_container(s, n, m, v, len, depth, err);
    }
    return observe_prim(n, type, v, len, err);
}

int va_observe(va_stats *s, const vr_variant *v, pq_err *err)
{
    vr_meta m;
    s->rows++;
    track_meta(s, v);
    int rc = vr_meta_open(&m, v->metadata, v->metadata_len, err);
    return rc ? rc : observe(s, s->root, &m, v->value, v->value_len, 0, err);
}

void va_observe_null(va_stats *s)
{
    s->rows++;
}

/* ---- choosing ----------------------------------------------------------------- */

static bool name_ok(const va_node *k)
{
    return k->name_len > 0 && k->name_len <= 255 && strcmp(k->name, "value") != 0 &&
           strcmp(k->name, "typed_value") != 0 && strlen(k->name) == k->name_len;
}

/* The most common non-null class of n, or VA_NCLASS. */
static int dominant(const va_node *n)
{
    int best = VA_NCLASS;
    uint64_t most = 0;
    for (int c = VA_BOOL; c < VA_OTHER; c++) {
        if (n->n[c] > most) {
            most = n->n[c];
            best = c;
        }
    }
    return best;
}

/* Collects the primitive candidates (for the max_columns ranking). */
typedef struct va_list_ {
    va_node **v;
    size_t n, cap;
    bool nomem;
} va_list_;

static void cand_add(va_list_ *l, va_node *n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        va_node **v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            l->nomem = true;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    n->order = l->n;
    l->v[l->n++] = n;
}

static int cmp_fold(const void *a, const void *b)
{
    const va_node *x = *(va_node *const *)a, *y = *(va_node *const *)b;
    int c = strcasecmp(x->name, y->name);
    if (c != 0)
        return c;
    if (x->seen != y->seen)
        return x->seen > y->seen ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Readers fold the ASCII case of field names (DuckDB 1.5.6 reads "a"
 * beside "A" back as "a_1"), so of the fields of one object whose names
 * differ only in case just the most frequent is shredded; the others stay
 * in `value`. False when out of memory. */
static bool shadow_case_twins(va_node *n)
{
    if (n->n_kids < 2)
        return true;
    va_node **v = malloc(n->n_kids * sizeof *v);
    if (v == NULL)
        return false;
    memcpy(v, n->kids, n->n_kids * sizeof *v);
    qsort(v, n->n_kids, sizeof *v, cmp_fold);
    for (size_t i = 0; i < n->n_kids; i++)
        v[i]->shadowed = i > 0 && strcasecmp(v[i - 1]->name, v[i]->name) == 0;
    free(v);
    return true;
}

/* Marks n->cls (VA_NCLASS when not shredded) for n seen among `of`
 * parents; returns whether n is shredded. */
static bool mark(const va_stats *s, va_node *n, uint64_t of, va_list_ *cands)
{
    n->cls = VA_NCLASS;
    n->keep = false;
    int c = dominant(n);
    if (of == 0 || c == VA_NCLASS || (double)n->n[c] < s->lim.min_presence * (double)of)
        return false;
    bool any = false;
    switch (c) {
    case VA_OBJECT:
        cands->nomem |= !shadow_case_twins(n);
        for (size_t i = 0; i < n->n_kids; i++)
            if (name_ok(n->kids[i]) && !n->kids[i]->shadowed)
                any |= mark(s, n->kids[i], n->n[VA_OBJECT], cands);
        break;
    case VA_ARRAY:
        any = n->elem != NULL && mark(s, n->elem, n->elem->seen, cands);
        break;
    case VA_DEC:
        any = n->n[VA_INT] == 0 && n->n[VA_DOUBLE] == 0 &&
              n->dec_digits + n->dec_scale <= VR_MAX_DECIMAL_DIGITS;
        break;
    case VA_BOOL: case VA_INT: case VA_DOUBLE: case VA_FLOAT: case VA_STRING:
        any = true;
        break;
    default:
        break;
    }
    if (!any)
        return false;
    n->cls = c;
    n->score = s->rows ? (double)n->n[c] / (double)s->rows : 0;
    if (c != VA_OBJECT && c != VA_ARRAY)
        cand_add(cands, n);
    return true;
}

/* Most frequent first; ties in name order (the order they were found). */
static int cmp_score(const void *a, const void *b)
{
    const va_node *x = *(va_node *const *)a, *y = *(va_node *const *)b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static sc_type *prim_type(const va_node *n)
{
    switch (n->cls) {
    case VA_BOOL: return sc_type_new_shred_prim(SC_BOOL, 0, 0, 0);
    case VA_INT: return sc_type_new_shred_prim(SC_INT, n->int_bits, 0, 0);
    case VA_DOUBLE: return sc_type_new_shred_prim(SC_DOUBLE, 0, 0, 0);
    case VA_FLOAT: return sc_type_new_shred_prim(SC_FLOAT, 0, 0, 0);
    case VA_STRING: return sc_type_new_shred_prim(SC_STRING, 0, 0, 0);
    default: {
        /* precision above the scale: DuckDB prints decimal(p,p) as ".5" */
        int p = (int)(n->dec_digits + n->dec_scale);
        return sc_type_new_shred_prim(SC_DECIMAL, 0, p > (int)n->dec_scale ? p : p + 1,
                                      (int)n->dec_scale);
    }
    }
}

static int build(const va_node *n, sc_shred **out);

static int build_object(const va_node *n, sc_shred *sh)
{
    size_t k = 0;
    sh->kind = SC_SHRED_OBJECT;
    sh->fields = calloc(n->n_kids ? n->n_kids : 1, sizeof *sh->fields);
    if (sh->fields == NULL)
        return PQ_ENOMEM;
    for (size_t i = 0; i < n->n_kids; i++) {
        sc_shred *f = NULL;
        int rc = n->kids[i]->cls == VA_NCLASS ? 0 : build(n->kids[i], &f);
        if (rc != 0)
            return rc;
        if (f == NULL)
            continue;
        sh->fields[k].shred = f;
        if ((sh->fields[k].name = strdup(n->kids[i]->name)) == NULL) {
            sh->n_fields = k + 1;
            return PQ_ENOMEM;
        }
        sh->fields[k].name_len = strlen(sh->fields[k].name);
        sh->n_fields = ++k;
    }
    return PQ_OK;
}

/* The shred node for a marked n, NULL in *out when nothing under it is
 * kept. */
static int build(const va_node *n, sc_shred **out)
{
    *out = NULL;
    if (n->cls == VA_NCLASS || ((n->cls != VA_OBJECT && n->cls != VA_ARRAY) && !n->keep))
        return PQ_OK;
    sc_shred *sh = sc_shred_new();
    if (sh == NULL)
        return PQ_ENOMEM;
    int rc = PQ_OK;
    if (n->cls == VA_OBJECT) {
        rc = build_object(n, sh);
    } else if (n->cls == VA_ARRAY) {
        sh->kind = SC_SHRED_ARRAY;
        rc = build(n->elem, &sh->elem);
    } else {
        sh->kind = SC_SHRED_PRIMITIVE;
        rc = (sh->type = prim_type(n)) ? PQ_OK : PQ_ENOMEM;
    }
    bool empty = (sh->kind == SC_SHRED_OBJECT && sh->n_fields == 0) ||
                 (sh->kind == SC_SHRED_ARRAY && sh->elem == NULL);
    if (rc != 0 || empty) {
        sc_shred_free(sh);
        return rc;
    }
    *out = sh;
    return PQ_OK;
}

int va_choose(const va_stats *s, sc_shred **out, pq_err *err)
{
    *out = NULL;
    va_list_ cands = {0};
    /* Only an object root is worth shredding: a column of scalars has no
     * fields to give readers, and a scalar root gains nothing. */
    if (dominant(s->root) != VA_OBJECT || !mark(s, s->root, s->rows, &cands)) {
        free(cands.v);
        return cands.nomem ? pq_err_set(err, PQ_ENOMEM, "auto shred: out of memory") : PQ_OK;
    }
    if (cands.nomem) {
        free(cands.v);
        return pq_err_set(err, PQ_ENOMEM, "auto shred: out of memory");
    }
    qsort(cands.v, cands.n, sizeof *cands.v, cmp_score);
    for (size_t i = 0; i < cands.n && i < s->lim.max_columns; i++)
        cands.v[i]->keep = true;
    free(cands.v);
    int rc = build(s->root, out);
    return rc ? pq_err_set(err, rc, "auto shred: out of memory") : PQ_OK;
}
