/* vshred.c - Variant shredding (VariantShredding.md): one finished Variant
 * into `metadata`, `value` and the typed_value tree of its column, with the
 * definition/repetition levels colspec laid out (colspec.h, sc_shred).
 *
 * One recursive walk over the value and the shred tree together. Each node
 * puts exactly one level entry into each of its leaves (an array node puts
 * one per element into its element's leaves), so the order in which
 * sibling leaves are filled does not matter; that is what lets an object
 * write its fields first and its partial `value` last, reusing one scratch
 * buffer at every depth. An object is walked once, in its own field order,
 * its keys matched to shred fields by metadata id (vs_fieldmap). Field
 * values are never copied: typed values are read in place and `value`
 * entries are slices of v->value, except the re-encoded partial objects
 * (vr_value_append_object). */
#include "vshred.h"
#include "column.h"
#include "variant_int.h"

#include <stdlib.h>
#include <string.h>

/* The walk's fixed context. */
typedef struct vs_ctx {
    vs_state *st;
    pq_rowgroup *rg;
    pq_column *cols;             /* rg's columns (pq_rowgroup_columns) */
    size_t n_cols;
    vr_meta meta;
    const uint8_t *meta_bytes;   /* the value's metadata, as given */
    size_t meta_len;
    pq_err *err;
} vs_ctx;

void vs_state_init(vs_state *st)
{
    *st = (vs_state){0};
    pq_buf_init(&st->partial);
    pq_buf_init(&st->kept);
    pq_buf_init(&st->meta);
    pq_buf_init(&st->texts);
}

void vs_state_free(vs_state *st)
{
    pq_buf_free(&st->partial);
    pq_buf_free(&st->kept);
    pq_buf_free(&st->meta);
    pq_buf_free(&st->texts);
    for (size_t i = 0; i < st->cap_maps; i++) {
        free(st->maps[i].slots);
        free(st->maps[i].seen);
        free(st->maps[i].plan_ids);
        free(st->maps[i].plan_field);
        free(st->maps[i].plan_missing);
    }
    free(st->maps);
    *st = (vs_state){0};
}

static void next_generation(vs_state *st);

void vs_state_set_fast(vs_state *st, bool on)
{
    st->general = !on;
}

void vs_state_forget(vs_state *st)
{
    for (size_t i = 0; i < st->n_maps; i++)
        st->maps[i].node = NULL;
    st->n_maps = 0;
    pq_buf_reset(&st->meta);
    next_generation(st);
}

/* ---- type matching ------------------------------------------------------ */

static vr_i128 pow10_i128(unsigned n)
{
    vr_i128 p = 1;
    while (n--)
        p *= 10;
    return p;
}

static vr_i128 abs_i128(vr_i128 v)
{
    return v < 0 ? -v : v;
}

/* Exact numerics as (unscaled, scale); false for other types. */
static bool exact_numeric(const vr_prim *p, vr_i128 *unscaled, unsigned *scale)
{
    switch (p->type) {
    case VR_INT8: case VR_INT16: case VR_INT32: case VR_INT64:
        *unscaled = p->i;
        *scale = 0;
        return true;
    case VR_DECIMAL4: case VR_DECIMAL8: case VR_DECIMAL16:
        if (p->scale > VR_MAX_DECIMAL_DIGITS)
            return false;
        *unscaled = p->unscaled;
        *scale = p->scale;
        return true;
    default:
        return false;
    }
}

/* u at scale k, rescaled exactly to scale s: false when digits would be
 * lost (k > s and u is not a multiple of 10^(k-s)) or the result has more
 * than `digits` digits. */
static bool rescale(vr_i128 u, unsigned k, unsigned s, unsigned digits, vr_i128 *out)
{
    if (k > s) {
        vr_i128 d = pow10_i128(k - s);
        if (u % d != 0)
            return false;
        u /= d;
    } else if (k < s) {
        unsigned up = s - k;
        if (up > digits)
            return u == 0 ? (*out = 0, true) : false;
        if (abs_i128(u) >= pow10_i128(digits - up))
            return false;
        *out = u * pow10_i128(up);
        return true;
    }
    if (abs_i128(u) >= pow10_i128(digits))
        return false;
    *out = u;
    return true;
}

/* p exactly at scale s with at most `digits` digits. Exact numerics
 * rescale; a double counts by its shortest decimal form (vr_double_decimal),
 * which for parqd's Variants is the JSON number as written: vnumber.c
 * stores a number as a double only when that form is the text's value, so
 * a schema that shreds a field as intN or decimal(P,S) gets its JSON
 * numbers there whichever of double or decimal the rule chose, and the
 * reader sees the type the schema asked for with the value of the text
 * (for a number the rule could only keep as the nearest double: the value
 * every reader shows for that double). -0.0 stays a double (its sign). */
static bool exact_at(const vr_prim *p, unsigned s, unsigned digits, vr_i128 *out)
{
    vr_i128 u;
    unsigned k;
    if (exact_numeric(p, &u, &k))
        return rescale(u, k, s, digits, out);
    return p->type == VR_DOUBLE && vr_double_decimal(p->d, s, out) &&
           abs_i128(*out) < pow10_i128(digits);
}

static bool match_int(const sc_type *t, const vr_prim *p, vs_typed *out)
{
    vr_i128 v;
    if (!t->is_signed)
        return false;
    /* integers, the common case, without the 38-digit decimal check */
    if (p->type == VR_INT8 || p->type == VR_INT16 || p->type == VR_INT32 || p->type == VR_INT64)
        v = p->i;
    else if (!exact_at(p, 0, 38, &v))
        return false;
    vr_i128 hi = ((vr_i128)1 << (t->bit_width - 1)) - 1, lo = -hi - 1;
    if (v < lo || v > hi)
        return false;
    out->i = (int64_t)v;
    return true;
}

static bool match_decimal(const sc_type *t, const vr_prim *p, vs_typed *out)
{
    vr_i128 v;
    if (t->precision < 1 || t->precision > VR_MAX_DECIMAL_DIGITS || t->scale < 0 ||
        t->scale >= t->precision ||
        !exact_at(p, (unsigned)t->scale, (unsigned)t->precision, &v))
        return false;
    if (t->physical == PQ_INT32 || t->physical == PQ_INT64) {
        out->i = (int64_t)v;
        return true;
    }
    /* big-endian two's complement: type_length bytes for FLBA, minimal for
     * BYTE_ARRAY (DECIMAL in LogicalTypes.md) */
    unsigned __int128 bits = (unsigned __int128)v;
    uint8_t be[16];
    for (int i = 15; i >= 0; i--, bits >>= 8)
        be[i] = (uint8_t)bits;
    size_t start = 0;
    if (t->physical == PQ_FIXED_LEN_BYTE_ARRAY) {
        if (t->type_length < 1 || t->type_length > 16)
            return false;
        start = 16 - (size_t)t->type_length;
    } else {
        while (start < 15 && ((be[start] == 0x00 && !(be[start + 1] & 0x80)) ||
                              (be[start] == 0xFF && (be[start + 1] & 0x80))))
            start++;
    }
    memcpy(out->be, be + start, 16 - start);
    out->bytes = out->be;
    out->len = 16 - start;
    return true;
}

static bool match_timestamp(const sc_type *t, const vr_prim *p, vs_typed *out)
{
    bool utc, nanos;
    switch (p->type) {
    case VR_TIMESTAMP_MICROS: utc = true; nanos = false; break;
    case VR_TIMESTAMP_NTZ_MICROS: utc = false; nanos = false; break;
    case VR_TIMESTAMP_NANOS: utc = true; nanos = true; break;
    case VR_TIMESTAMP_NTZ_NANOS: utc = false; nanos = true; break;
    default: return false;
    }
    if (utc != t->utc)
        return false;
    int64_t v = p->i;
    if (t->unit == PQ_UNIT_NANOS && !nanos) {
        if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)
            return false;
        v *= 1000;
    } else if (t->unit == PQ_UNIT_MICROS && nanos) {
        if (v % 1000 != 0)
            return false;
        v /= 1000;
    } else if (t->unit != PQ_UNIT_MICROS && t->unit != PQ_UNIT_NANOS) {
        return false;
    }
    out->i = v;
    return true;
}

bool vs_prim_match(const sc_type *t, const vr_prim *p, vs_typed *out)
{
    switch (t->kind) {
    case SC_BOOL:
        out->i = p->type == VR_TRUE;
        return p->type == VR_TRUE || p->type == VR_FALSE;
    case SC_INT:
        return match_int(t, p, out);
    case SC_DECIMAL:
        return match_decimal(t, p, out);
    case SC_FLOAT:
        out->f = p->f;
        return p->type == VR_FLOAT;
    case SC_DOUBLE:
        out->d = p->d;
        return p->type == VR_DOUBLE;
    case SC_DATE:
        out->i = p->i;
        return p->type == VR_DATE;
    case SC_TIME:
        out->i = p->i;
        return p->type == VR_TIME_NTZ_MICROS && t->unit == PQ_UNIT_MICROS && !t->utc;
    case SC_TIMESTAMP:
        return match_timestamp(t, p, out);
    case SC_STRING:
    case SC_BINARY:
    case SC_UUID:
        out->bytes = p->bytes;
        out->len = p->len;
        return p->type == (t->kind == SC_STRING ? VR_STRING
                           : t->kind == SC_BINARY ? VR_BINARY : VR_UUID);
    default:
        return false; /* colspec refuses other shred types */
    }
}

static int put_typed(pq_column *c, const sc_type *t, uint16_t rep, const vs_typed *v)
{
    switch (t->physical) {
    case PQ_BOOLEAN: return pq_column_put_bool(c, rep, v->i != 0);
    case PQ_INT32: return pq_column_put_i32(c, rep, (int32_t)v->i);
    case PQ_INT64: return pq_column_put_i64(c, rep, v->i);
    case PQ_FLOAT: return pq_column_put_float(c, rep, v->f);
    case PQ_DOUBLE: return pq_column_put_double(c, rep, v->d);
    default: return pq_column_put_bytes(c, rep, v->bytes, v->len);
    }
}

/* ---- the walk ------------------------------------------------------------ */

static pq_column *col(const vs_ctx *x, int leaf)
{
    return (size_t)leaf < x->n_cols ? &x->cols[leaf] : NULL;
}

/* Every leaf under typed_value of sh is undefined at def. */
static int null_typed(const vs_ctx *x, const sc_shred *sh, uint16_t rep, uint16_t def)
{
    int rc = PQ_OK;
    switch (sh->kind) {
    case SC_SHRED_PRIMITIVE:
        return pq_column_put_null(col(x, sh->type->leaf), rep, def);
    case SC_SHRED_OBJECT:
        for (size_t i = 0; rc == 0 && i < sh->n_fields; i++) {
            const sc_shred *f = sh->fields[i].shred;
            rc = pq_column_put_null(col(x, f->value_leaf), rep, def);
            rc = rc ? rc : null_typed(x, f, rep, def);
        }
        return rc;
    case SC_SHRED_ARRAY:
        rc = pq_column_put_null(col(x, sh->elem->value_leaf), rep, def);
        return rc ? rc : null_typed(x, sh->elem, rep, def);
    default:
        return PQ_OK;
    }
}

/* Not of the shredded kind: the whole value (the one starting at val,
 * within avail bytes) in `value`. */
static int put_unshredded(const vs_ctx *x, const sc_shred *sh, const uint8_t *val, size_t avail,
                          uint16_t rep)
{
    size_t len;
    int rc = vr_value_size(val, avail, &len, x->err);
    rc = rc ? rc : pq_column_put_bytes(col(x, sh->value_leaf), rep, val, len);
    return rc ? rc : null_typed(x, sh, rep, sh->def);
}

/* ---- field maps: which shred field a metadata key is ----------------- */

/* A value with other metadata bytes than the last one starts a new
 * generation, which makes every learnt slot stale at once. */
static void next_generation(vs_state *st)
{
    if (++st->meta_gen == 0) { /* wrapped: no old stamp may look current */
        for (size_t i = 0; i < st->cap_maps; i++) {
            for (uint32_t k = 0; k < st->maps[i].n_slots; k++)
                st->maps[i].slots[k].gen = 0;
            st->maps[i].plan_gen = 0;
        }
        st->meta_gen = 1;
    }
}

/* Called before the first object of a value is matched (values without
 * one never pay for the compare). */
static int track_metadata(const vs_ctx *x)
{
    vs_state *st = x->st;
    st->meta_checked = true;
    if (st->meta_gen != 0 && st->meta.len == x->meta_len &&
        memcmp(st->meta.data, x->meta_bytes, x->meta_len) == 0)
        return 0;
    pq_buf_reset(&st->meta);
    if (pq_buf_append(&st->meta, x->meta_bytes, x->meta_len) != 0)
        return pq_err_set(x->err, PQ_ENOMEM, "variant shredding: out of memory");
    next_generation(st);
    return 0;
}

/* The index in st->maps of object node sh's map (an index, not a pointer:
 * nested objects may grow the array). Trees have a handful of object
 * nodes, so a linear search is the cheap way. */
static int fieldmap_of(const vs_ctx *x, const sc_shred *sh, size_t *mi)
{
    vs_state *st = x->st;
    if (!st->meta_checked) {
        int rc = track_metadata(x);
        if (rc != 0)
            return rc;
    }
    for (size_t i = 0; i < st->n_maps; i++)
        if (st->maps[i].node == sh) {
            *mi = i;
            return 0;
        }
    if (st->n_maps == st->cap_maps) {
        size_t cap = st->cap_maps ? 2 * st->cap_maps : 8;
        vs_fieldmap *m = realloc(st->maps, cap * sizeof *m);
        if (m == NULL)
            return pq_err_set(x->err, PQ_ENOMEM, "variant shredding: out of memory");
        memset(m + st->cap_maps, 0, (cap - st->cap_maps) * sizeof *m);
        st->maps = m;
        st->cap_maps = cap;
    }
    vs_fieldmap *fm = &st->maps[st->n_maps];
    if (fm->n_seen < sh->n_fields) {
        uint64_t *seen = realloc(fm->seen, sh->n_fields * sizeof *seen);
        if (seen != NULL)
            fm->seen = seen;
        uint32_t *missing = realloc(fm->plan_missing, sh->n_fields * sizeof *missing);
        if (missing != NULL)
            fm->plan_missing = missing;
        if (seen == NULL || missing == NULL)
            return pq_err_set(x->err, PQ_ENOMEM, "variant shredding: out of memory");
        fm->n_seen = sh->n_fields;
    }
    fm->plan_gen = 0;
    /* memory of a forgotten node: nothing it learnt may carry over */
    memset(fm->seen, 0, fm->n_seen * sizeof *fm->seen);
    if (fm->n_slots > 0)
        memset(fm->slots, 0, fm->n_slots * sizeof *fm->slots);
    fm->node = sh;
    *mi = st->n_maps++;
    return 0;
}

/* field_for_id's first sight of key id under this metadata: by name. */
static int learn_field(const vs_ctx *x, size_t mi, uint32_t id, int32_t *field)
{
    vs_fieldmap *fm = &x->st->maps[mi];
    vr_str key;
    int rc = vr_meta_key(&x->meta, id, &key, x->err);
    if (rc != 0)
        return rc;
    if (fm->n_slots < x->meta.size) {
        vs_slot *slots = realloc(fm->slots, (size_t)x->meta.size * sizeof *slots);
        if (slots == NULL)
            return pq_err_set(x->err, PQ_ENOMEM, "variant shredding: out of memory");
        memset(slots + fm->n_slots, 0, (size_t)(x->meta.size - fm->n_slots) * sizeof *slots);
        fm->slots = slots;
        fm->n_slots = x->meta.size;
    }
    const sc_shred *sh = fm->node;
    *field = sc_shred_field_index(sh, key.s, key.len, SIZE_MAX);
    fm->slots[id] = (vs_slot){.gen = x->st->meta_gen, .field = *field};
    return 0;
}

/* The node's field named by metadata key id (*field = -1: none). Inline:
 * it runs for every field of every object, and almost always hits. */
static inline int field_for_id(const vs_ctx *x, size_t mi, uint32_t id, int32_t *field)
{
    const vs_fieldmap *fm = &x->st->maps[mi];
    if (id < fm->n_slots && fm->slots[id].gen == x->st->meta_gen) {
        *field = fm->slots[id].field;
        return 0;
    }
    return learn_field(x, mi, id, field);
}

/* ---- objects ------------------------------------------------------------- */

/* The object's fields that sh does not shred, as a partial object in
 * `value` (null when there are none); found = fields of c that sh
 * shreds; plan, when not NULL, says which they are (vs_fieldmap), else
 * field_for_id does. Kept values are copied byte for byte, in the
 * object's order. */
static int put_rest(const vs_ctx *x, const sc_shred *sh, size_t mi, const vr_container *c,
                    size_t found, const int32_t *plan, uint16_t rep)
{
    pq_column *vc = col(x, sh->value_leaf);
    if (found == c->n)
        return pq_column_put_null(vc, rep, sh->def);
    vs_state *st = x->st;
    pq_buf_reset(&st->kept);
    if (pq_buf_reserve(&st->kept, (c->n - found) * sizeof(vr_field)) != 0)
        return pq_err_set(x->err, PQ_ENOMEM, "variant shredding: out of memory");
    vr_field *kept = (vr_field *)(void *)st->kept.data;
    size_t n = 0;
    int rc = PQ_OK;
    for (uint32_t i = 0; rc == 0 && i < c->n; i++) {
        uint32_t id = vr_container_id(c, i);
        int32_t f = plan ? plan[i] : -1;
        if (plan == NULL)
            rc = field_for_id(x, mi, id, &f);
        if (rc != 0 || f >= 0)
            continue;
        kept[n].id = id;
        rc = vr_container_get(c, i, NULL, &kept[n].value, &kept[n].len, x->err);
        n++;
    }
    pq_buf_reset(&st->partial);
    rc = rc ? rc : vr_value_append_object(&st->partial, &x->meta, kept, n, x->err);
    return rc ? rc : pq_column_put_bytes(vc, rep, st->partial.data, st->partial.len);
}

/* A string value into a string node's typed_value: the commonest shredded
 * field, read here without vr_value_read's general decoding. */
static int put_string(const vs_ctx *x, const sc_shred *sh, const uint8_t *val, size_t avail,
                      uint16_t rep)
{
    size_t head = 1, len = val[0] >> 2;           /* short string */
    if ((val[0] & 3) == VR_BASIC_PRIMITIVE) {     /* 4-byte length first */
        if (avail < 5)
            return pq_err_set(x->err, PQ_EPARSE, "variant value: truncated string length");
        head = 5;
        len = (size_t)val[1] | (size_t)val[2] << 8 | (size_t)val[3] << 16 | (size_t)val[4] << 24;
    }
    if (len > avail - head)
        return pq_err_set(x->err, PQ_EPARSE, "variant value: string of %zu bytes overruns %zu",
                          len, avail - head);
    int rc = pq_column_put_bytes(col(x, sh->type->leaf), rep, val + head, len);
    return rc ? rc : pq_column_put_null(col(x, sh->value_leaf), rep, sh->def);
}

/* The value starting at val (within avail bytes) through node sh. */
static int write_node(const vs_ctx *x, const sc_shred *sh, const uint8_t *val, size_t avail,
                      uint16_t rep);

/* The builder's common primitives matched and read in place, as
 * vr_value_read and vs_prim_match would: an integer (int8..int64) for a
 * signed integer node, a double for a double node, a boolean for a
 * boolean node. true when that was the case (*rc: the puts' result);
 * false for any other pairing or too few bytes, which the general reading
 * decides (and reports). */
static bool put_quick(const vs_ctx *x, const sc_shred *sh, const uint8_t *val, size_t avail,
                      uint16_t rep, int *rc)
{
    const sc_type *t = sh->type;
    unsigned h = val[0] >> 2;
    vs_typed tv;
    if ((val[0] & 3) != VR_BASIC_PRIMITIVE)
        return false;
    if (t->kind == SC_INT && t->is_signed && h >= VR_INT8 && h <= VR_INT64) {
        unsigned n = 1u << (h - VR_INT8);
        if (avail < 1 + (size_t)n)
            return false;
        uint64_t u = vr_get_le(val + 1, n);
        int64_t v = n == 8 ? (int64_t)u : (int64_t)((u ^ (1ull << (8 * n - 1))) -
                                                    (1ull << (8 * n - 1)));
        if (t->bit_width < 64) {
            int64_t hi = ((int64_t)1 << (t->bit_width - 1)) - 1;
            if (v > hi || v < -hi - 1)
                return false;
        }
        tv.i = v;
    } else if (t->kind == SC_DOUBLE && h == VR_DOUBLE) {
        if (avail < 9)
            return false;
        uint64_t bits = vr_get_le(val + 1, 8);
        memcpy(&tv.d, &bits, 8);
    } else if (t->kind == SC_BOOL && (h == VR_TRUE || h == VR_FALSE)) {
        tv.i = h == VR_TRUE;
    } else {
        return false;
    }
    *rc = put_typed(col(x, t->leaf), t, rep, &tv);
    *rc = *rc ? *rc : pq_column_put_null(col(x, sh->value_leaf), rep, sh->def);
    return true;
}

/* Room in node mi's plan for an object of c's fields; the old plan is
 * void from here on. */
static int plan_room(const vs_ctx *x, size_t mi, const vr_container *c)
{
    vs_fieldmap *fm = &x->st->maps[mi];
    fm->plan_gen = 0;
    size_t ids = (size_t)c->n * c->id_size;
    size_t need = ids > c->n ? ids : c->n;
    if (fm->plan_cap >= need)
        return 0;
    uint8_t *pi = realloc(fm->plan_ids, need);
    if (pi != NULL)
        fm->plan_ids = pi;
    int32_t *pf = realloc(fm->plan_field, need * sizeof *pf);
    if (pf != NULL)
        fm->plan_field = pf;
    if (pi == NULL || pf == NULL)
        return PQ_ENOMEM;
    fm->plan_cap = need;
    return 0;
}

/* The field-by-field walk: each field sh shreds is written through its
 * node, then the shred fields the object lacks get nulls (value and
 * typed_value), then the rest goes to `value`. What it finds becomes the
 * node's plan (unless plans are off), for the next object of the same
 * field ids; an object that fails leaves no plan. */
static int write_fields(const vs_ctx *x, const sc_shred *sh, size_t mi, const vr_container *c,
                        uint16_t rep)
{
    int32_t *plan = NULL;
    uint32_t *missing = NULL;
    if (!x->st->general && plan_room(x, mi, c) == 0) {
        plan = x->st->maps[mi].plan_field;
        missing = x->st->maps[mi].plan_missing;
    }
    uint64_t visit = ++x->st->visits;
    size_t found = 0;
    int rc = PQ_OK;
    for (uint32_t i = 0; rc == 0 && i < c->n; i++) {
        int32_t f = -1;
        rc = field_for_id(x, mi, vr_container_id(c, i), &f);
        if (plan != NULL)
            plan[i] = f;
        if (rc != 0 || f < 0)
            continue;
        uint64_t *seen = &x->st->maps[mi].seen[f];
        if (*seen == visit)
            return pq_err_set(x->err, PQ_EPARSE, "variant value: key \"%s\" twice in one "
                              "object", sh->fields[f].name);
        *seen = visit;
        found++;
        const uint8_t *fv = NULL;
        size_t avail = 0;
        rc = vr_container_at(c, i, &fv, &avail, x->err);
        rc = rc ? rc : write_node(x, sh->fields[f].shred, fv, avail, rep);
    }
    for (size_t f = 0, k = 0; rc == 0 && found < sh->n_fields && f < sh->n_fields; f++) {
        if (x->st->maps[mi].seen[f] == visit)
            continue;
        if (missing != NULL)
            missing[k++] = (uint32_t)f;
        const sc_shred *fs = sh->fields[f].shred;
        rc = pq_column_put_null(col(x, fs->value_leaf), rep, fs->def);
        rc = rc ? rc : null_typed(x, fs, rep, fs->def);
    }
    rc = rc ? rc : put_rest(x, sh, mi, c, found, plan, rep);
    if (rc == 0 && plan != NULL) {
        vs_fieldmap *fm = &x->st->maps[mi];
        size_t ids = (size_t)c->n * c->id_size;
        if (ids > 0)
            memcpy(fm->plan_ids, c->ids, ids);
        fm->plan_n = c->n;
        fm->plan_id_size = c->id_size;
        fm->plan_found = (uint32_t)found;
        fm->plan_gen = x->st->meta_gen;
    }
    return rc;
}

/* Whether node mi's plan is for objects with c's field ids. */
static bool plan_fits(const vs_ctx *x, size_t mi, const vr_container *c)
{
    const vs_fieldmap *fm = &x->st->maps[mi];
    size_t ids = (size_t)c->n * c->id_size;
    return fm->plan_gen == x->st->meta_gen && fm->plan_n == c->n &&
           fm->plan_id_size == c->id_size && (ids == 0 || memcmp(fm->plan_ids, c->ids, ids) == 0);
}

/* An object through its node: by the node's plan when the object has the
 * last one's field ids (records of one shape), else field by field. */
static int write_object(const vs_ctx *x, const sc_shred *sh, const vr_container *c,
                        uint16_t rep)
{
    size_t mi = 0;
    int rc = fieldmap_of(x, sh, &mi);
    if (rc != 0)
        return rc;
    if (x->st->general || !plan_fits(x, mi, c))
        return write_fields(x, sh, mi, c, rep);
    /* a node is never inside its own subtree: the writes below may move
     * st->maps, never this node's plan arrays */
    const vs_fieldmap *fm = &x->st->maps[mi];
    const int32_t *plan = fm->plan_field;
    const uint32_t *missing = fm->plan_missing;
    size_t found = fm->plan_found, n_missing = sh->n_fields - found;
    for (uint32_t i = 0; rc == 0 && i < c->n; i++) {
        if (plan[i] < 0)
            continue;
        const uint8_t *fv = NULL;
        size_t avail = 0;
        rc = vr_container_at(c, i, &fv, &avail, x->err);
        rc = rc ? rc : write_node(x, sh->fields[plan[i]].shred, fv, avail, rep);
    }
    for (size_t k = 0; rc == 0 && k < n_missing; k++) {
        const sc_shred *fs = sh->fields[missing[k]].shred;
        rc = pq_column_put_null(col(x, fs->value_leaf), rep, fs->def);
        rc = rc ? rc : null_typed(x, fs, rep, fs->def);
    }
    return rc ? rc : put_rest(x, sh, mi, c, found, plan, rep);
}

static int write_array(const vs_ctx *x, const sc_shred *sh, const vr_container *c, uint16_t rep)
{
    int rc = pq_column_put_null(col(x, sh->value_leaf), rep, sh->def);
    if (rc == 0 && c->n == 0) { /* present, empty list */
        rc = pq_column_put_null(col(x, sh->elem->value_leaf), rep, sh->typed_def);
        return rc ? rc : null_typed(x, sh->elem, rep, sh->typed_def);
    }
    for (uint32_t i = 0; rc == 0 && i < c->n; i++) {
        const uint8_t *ev = NULL;
        size_t avail = 0;
        rc = vr_container_at(c, i, &ev, &avail, x->err);
        rc = rc ? rc : write_node(x, sh->elem, ev, avail, i == 0 ? rep : sh->elem->rep);
    }
    return rc;
}

/* write_node of anything but a string for a string node. Not inlined:
 * write_node stays small for the string fields that most values are. */
static __attribute__((noinline)) int write_general(const vs_ctx *x, const sc_shred *sh,
                                                   const uint8_t *val, size_t avail, uint16_t rep)
{
    int type = vr_value_type(val, avail);
    if (type < 0)
        return pq_err_set(x->err, type, "variant shredding: malformed value (type byte 0x%02x)",
                          avail ? val[0] : 0);
    vr_container c;
    int rc;
    switch (sh->kind) {
    case SC_SHRED_PRIMITIVE: {
        if (type == VR_OBJECT || type == VR_ARRAY)
            break;
        if (type == VR_STRING && sh->type->kind == SC_STRING)
            return put_string(x, sh, val, avail, rep);
        if (!x->st->general && put_quick(x, sh, val, avail, rep, &rc))
            return rc;
        vr_prim p;
        vs_typed tv;
        if ((rc = vr_value_read(val, avail, &p, x->err)) != 0)
            return rc;
        if (!vs_prim_match(sh->type, &p, &tv))
            break;
        rc = put_typed(col(x, sh->type->leaf), sh->type, rep, &tv);
        return rc ? rc : pq_column_put_null(col(x, sh->value_leaf), rep, sh->def);
    }
    case SC_SHRED_OBJECT:
        if (type != VR_OBJECT)
            break;
        if ((rc = vr_container_open(&c, val, avail, x->err)) != 0)
            return rc;
        return write_object(x, sh, &c, rep);
    case SC_SHRED_ARRAY:
        if (type != VR_ARRAY)
            break;
        if ((rc = vr_container_open(&c, val, avail, x->err)) != 0)
            return rc;
        return write_array(x, sh, &c, rep);
    default:
        break;
    }
    return put_unshredded(x, sh, val, avail, rep);
}

static int write_node(const vs_ctx *x, const sc_shred *sh, const uint8_t *val, size_t avail,
                      uint16_t rep)
{
    if (!x->st->general && avail > 0 && sh->kind == SC_SHRED_PRIMITIVE &&
        sh->type->kind == SC_STRING &&
        ((val[0] & 3) == VR_BASIC_SHORT_STRING || val[0] == VR_STRING << 2))
        return put_string(x, sh, val, avail, rep);
    return write_general(x, sh, val, avail, rep);
}

static int write_variant(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                         uint16_t rep, bool metadata, pq_err *err)
{
    if (t->kind != SC_VARIANT || t->shred == NULL)
        return pq_err_set(err, PQ_EINVAL, "variant shredding: not a variant column");
    vs_ctx x = {.st = st, .rg = rg, .err = err};
    x.cols = pq_rowgroup_columns(rg, &x.n_cols);
    int rc = vr_meta_open(&x.meta, v->metadata, v->metadata_len, err);
    x.meta_bytes = v->metadata;
    x.meta_len = v->metadata_len;
    st->meta_checked = false;
    if (rc == 0 && metadata)
        rc = pq_column_put_bytes(col(&x, t->metadata_leaf), rep, v->metadata, v->metadata_len);
    return rc ? rc : write_node(&x, t->shred, v->value, v->value_len, rep);
}

int vs_write(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v, uint16_t rep,
             pq_err *err)
{
    return write_variant(st, rg, t, v, rep, true, err);
}

int vs_write_built(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                   uint16_t rep, pq_err *err)
{
    size_t n = 0;
    pq_column *cols = pq_rowgroup_columns(rg, &n);
    if (t->kind != SC_VARIANT || t->shred == NULL || t->shred->kind != SC_SHRED_NONE ||
        (size_t)t->metadata_leaf >= n || (size_t)t->shred->value_leaf >= n)
        return vs_write(st, rg, t, v, rep, err);
    int rc = pq_column_put_bytes(&cols[t->metadata_leaf], rep, v->metadata, v->metadata_len);
    return rc ? rc : pq_column_put_bytes(&cols[t->shred->value_leaf], rep, v->value, v->value_len);
}

/* vs_write_strings's partial object: each kept string encoded as the
 * builder encodes it (vr_value_append_string), then the object as
 * put_rest appends it. */
static int put_kept(const vs_ctx *x, const sc_shred *sh, const vs_kept *kept, size_t n,
                    uint16_t rep)
{
    vs_state *st = x->st;
    vr_meta meta;
    int rc = vr_meta_open(&meta, x->meta_bytes, x->meta_len, x->err);
    pq_buf_reset(&st->texts);
    pq_buf_reset(&st->kept);
    if (rc == 0 && pq_buf_reserve(&st->kept, n * sizeof(vr_field)) != 0)
        rc = pq_err_set(x->err, PQ_ENOMEM, "variant shredding: out of memory");
    vr_field *fields = (vr_field *)(void *)st->kept.data;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const size_t at = st->texts.len;
        if (vr_value_append_string(&st->texts, kept[i].s, kept[i].len) != 0)
            rc = pq_err_set(x->err, PQ_ENOMEM, "variant shredding: out of memory");
        fields[i] = (vr_field){.id = kept[i].id, .len = st->texts.len - at};
    }
    if (rc != 0)
        return rc;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {  /* texts is where it will stay now */
        fields[i].value = st->texts.data + pos;
        pos += fields[i].len;
    }
    pq_buf_reset(&st->partial);
    rc = vr_value_append_object(&st->partial, &meta, fields, n, x->err);
    return rc ? rc : pq_column_put_bytes(col(x, sh->value_leaf), rep, st->partial.data,
                                         st->partial.len);
}

/* What write_object makes of such an object: put_string per string field,
 * nulls per missing field, put_rest's partial object of the kept fields
 * (by id, which under a sorted dictionary is key-name order, as the
 * object's own order is). */
int vs_write_strings(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                     const vr_str *strs, const vs_kept *kept, size_t n_kept, uint16_t rep,
                     pq_err *err)
{
    vs_ctx x = {.st = st, .rg = rg, .meta_bytes = v->metadata, .meta_len = v->metadata_len,
                .err = err};
    x.cols = pq_rowgroup_columns(rg, &x.n_cols);
    const sc_shred *sh = t->shred;
    int rc = pq_column_put_bytes(col(&x, t->metadata_leaf), rep, v->metadata, v->metadata_len);
    for (size_t f = 0; rc == 0 && f < sh->n_fields; f++) {
        const sc_shred *fs = sh->fields[f].shred;
        if (strs[f].s != NULL) {
            rc = pq_column_put_bytes(col(&x, fs->type->leaf), rep, strs[f].s, strs[f].len);
            rc = rc ? rc : pq_column_put_null(col(&x, fs->value_leaf), rep, fs->def);
            continue;
        }
        rc = pq_column_put_null(col(&x, fs->value_leaf), rep, fs->def);
        rc = rc ? rc : null_typed(&x, fs, rep, fs->def);
    }
    if (rc != 0 || n_kept == 0)
        return rc ? rc : pq_column_put_null(col(&x, sh->value_leaf), rep, sh->def);
    return put_kept(&x, sh, kept, n_kept, rep);
}

int vs_write_value(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                   uint16_t rep, pq_err *err)
{
    return write_variant(st, rg, t, v, rep, false, err);
}
