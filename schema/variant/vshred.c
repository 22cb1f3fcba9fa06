/* vshred.c - Variant shredding (VariantShredding.md): one finished Variant
 * into `metadata`, `value` and the typed_value tree of its column, with the
 * definition/repetition levels colspec laid out (colspec.h, sc_shred).
 *
 * One recursive walk over the value and the shred tree together. Each node
 * puts exactly one level entry into each of its leaves (an array node puts
 * one per element into its element's leaves), so the order in which
 * sibling leaves are filled does not matter; that is what lets an object
 * write its fields first and its partial `value` last, reusing one scratch
 * buffer at every depth. Field values are never copied: typed values are
 * read in place and `value` entries are slices of v->value, except the
 * re-encoded partial objects (vr_object_append_without). */
#include "vshred.h"

#include <string.h>

/* The walk's fixed context. */
typedef struct vs_ctx {
    vs_state *st;
    pq_rowgroup *rg;
    vr_meta meta;
    pq_err *err;
} vs_ctx;

void vs_state_init(vs_state *st)
{
    pq_buf_init(&st->partial);
    pq_buf_init(&st->drop);
}

void vs_state_free(vs_state *st)
{
    pq_buf_free(&st->partial);
    pq_buf_free(&st->drop);
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
    return pq_rowgroup_column(x->rg, (size_t)leaf);
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

/* Not of the shredded kind: the whole value in `value`. */
static int put_unshredded(const vs_ctx *x, const sc_shred *sh, const uint8_t *val, size_t len,
                          uint16_t rep)
{
    int rc = pq_column_put_bytes(col(x, sh->value_leaf), rep, val, len);
    return rc ? rc : null_typed(x, sh, rep, sh->def);
}

static int name_cmp(vr_str x, vr_str y)
{
    size_t n = x.len < y.len ? x.len : y.len;
    int c = memcmp(x.s, y.s, n);
    return c ? c : (x.len > y.len) - (x.len < y.len);
}

/* Insertion sort: shred objects list a handful of fields, often already in
 * order (then this is one pass), and unlike qsort it never allocates. */
static void sort_names(vr_str *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        vr_str k = v[i];
        size_t j = i;
        for (; j > 0 && name_cmp(v[j - 1], k) > 0; j--)
            v[j] = v[j - 1];
        v[j] = k;
    }
}

/* The object's fields that sh does not shred, as a partial object in
 * `value` (null when there are none). found = fields of obj that sh
 * shreds, so the re-encoding is skipped when nothing is left. */
static int put_rest(const vs_ctx *x, const sc_shred *sh, const vr_container *c,
                    const uint8_t *obj, size_t len, size_t found, uint16_t rep)
{
    pq_column *vc = col(x, sh->value_leaf);
    if (found == c->n)
        return pq_column_put_null(vc, rep, sh->def);
    vs_state *st = x->st;
    pq_buf_reset(&st->drop);
    if (pq_buf_reserve(&st->drop, sh->n_fields * sizeof(vr_str)) != 0)
        return pq_err_set(x->err, PQ_ENOMEM, "variant shredding: out of memory");
    vr_str *drop = (vr_str *)(void *)st->drop.data;
    for (size_t i = 0; i < sh->n_fields; i++)
        drop[i] = (vr_str){sh->fields[i].name, strlen(sh->fields[i].name)};
    /* sorted per object rather than cached per node: a cache keyed by the
     * borrowed schema could outlive it */
    sort_names(drop, sh->n_fields);
    pq_buf_reset(&st->partial);
    size_t kept = 0;
    int rc = vr_object_append_without(&st->partial, &x->meta, obj, len, drop, sh->n_fields,
                                      &kept, x->err);
    if (rc != 0)
        return rc;
    return kept ? pq_column_put_bytes(vc, rep, st->partial.data, st->partial.len)
                : pq_column_put_null(vc, rep, sh->def);
}

static int write_node(const vs_ctx *x, const sc_shred *sh, const uint8_t *val, size_t len,
                      uint16_t rep);

/* The field id of object field i (little-endian, id_size bytes). */
static uint32_t field_id_at(const vr_container *c, uint32_t i)
{
    const uint8_t *p = c->ids + (size_t)i * c->id_size;
    uint32_t v = 0;
    for (unsigned b = 0; b < c->id_size; b++)
        v |= (uint32_t)p[b] << (8 * b);
    return v;
}

/* Field `want` of object c: 1 and its value, or 0 when absent. Object
 * fields are in key-name order (VariantEncoding.md), so when the shred
 * fields come in that order too (automatic trees always do), one forward
 * merge over the object finds them all: *cursor is where the merge
 * stopped and *prev the name it last looked for. A name out of that
 * order is found by binary search, leaving the merge where it was. */
static int find_field(const vs_ctx *x, const vr_container *c, vr_str want, vr_str *prev,
                      uint32_t *cursor, const uint8_t **fv, size_t *fl)
{
    /* every object field before *cursor sorts at or before *prev */
    if (prev->s != NULL && name_cmp(*prev, want) >= 0)
        return vr_object_find(c, &x->meta, want.s, want.len, fv, fl, x->err);
    *prev = want;
    for (uint32_t i = *cursor; i < c->n; i++) {
        vr_str k;
        int rc = vr_meta_key(&x->meta, field_id_at(c, i), &k, x->err);
        if (rc != 0)
            return rc;
        int cmp = name_cmp(k, want);
        if (cmp >= 0) {
            *cursor = i + (cmp == 0);
            if (cmp > 0)
                return 0;
            rc = vr_container_get(c, i, NULL, fv, fl, x->err);
            return rc ? rc : 1;
        }
    }
    *cursor = c->n;
    return 0;
}

static int write_object(const vs_ctx *x, const sc_shred *sh, const vr_container *c,
                        const uint8_t *val, size_t len, uint16_t rep)
{
    size_t found = 0;
    int rc = PQ_OK;
    vr_str prev = {NULL, 0};
    uint32_t cursor = 0;
    for (size_t i = 0; rc == 0 && i < sh->n_fields; i++) {
        const sc_shred *f = sh->fields[i].shred;
        const char *name = sh->fields[i].name;
        const uint8_t *fv;
        size_t fl;
        rc = find_field(x, c, (vr_str){name, strlen(name)}, &prev, &cursor, &fv, &fl);
        if (rc == 1) {
            found++;
            rc = write_node(x, f, fv, fl, rep);
        } else if (rc == 0) { /* missing field: value and typed_value null */
            rc = pq_column_put_null(col(x, f->value_leaf), rep, f->def);
            rc = rc ? rc : null_typed(x, f, rep, f->def);
        }
    }
    return rc ? rc : put_rest(x, sh, c, val, len, found, rep);
}

static int write_array(const vs_ctx *x, const sc_shred *sh, const vr_container *c, uint16_t rep)
{
    int rc = pq_column_put_null(col(x, sh->value_leaf), rep, sh->def);
    if (rc == 0 && c->n == 0) { /* present, empty list */
        rc = pq_column_put_null(col(x, sh->elem->value_leaf), rep, sh->typed_def);
        return rc ? rc : null_typed(x, sh->elem, rep, sh->typed_def);
    }
    for (uint32_t i = 0; rc == 0 && i < c->n; i++) {
        const uint8_t *ev;
        size_t el;
        rc = vr_container_get(c, i, NULL, &ev, &el, x->err);
        rc = rc ? rc : write_node(x, sh->elem, ev, el, i == 0 ? rep : sh->elem->rep);
    }
    return rc;
}

static int write_node(const vs_ctx *x, const sc_shred *sh, const uint8_t *val, size_t len,
                      uint16_t rep)
{
    int type = vr_value_type(val, len);
    if (type < 0)
        return pq_err_set(x->err, type, "variant shredding: malformed value (type byte 0x%02x)",
                          len ? val[0] : 0);
    vr_container c;
    int rc;
    switch (sh->kind) {
    case SC_SHRED_PRIMITIVE: {
        if (type == VR_OBJECT || type == VR_ARRAY)
            break;
        vr_prim p;
        vs_typed tv;
        if ((rc = vr_value_read(val, len, &p, x->err)) != 0)
            return rc;
        if (!vs_prim_match(sh->type, &p, &tv))
            break;
        rc = put_typed(col(x, sh->type->leaf), sh->type, rep, &tv);
        return rc ? rc : pq_column_put_null(col(x, sh->value_leaf), rep, sh->def);
    }
    case SC_SHRED_OBJECT:
        if (type != VR_OBJECT)
            break;
        if ((rc = vr_container_open(&c, val, len, x->err)) != 0)
            return rc;
        return write_object(x, sh, &c, val, len, rep);
    case SC_SHRED_ARRAY:
        if (type != VR_ARRAY)
            break;
        if ((rc = vr_container_open(&c, val, len, x->err)) != 0)
            return rc;
        return write_array(x, sh, &c, rep);
    default:
        break;
    }
    return put_unshredded(x, sh, val, len, rep);
}

static int write_variant(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                         uint16_t rep, bool metadata, pq_err *err)
{
    if (t->kind != SC_VARIANT || t->shred == NULL)
        return pq_err_set(err, PQ_EINVAL, "variant shredding: not a variant column");
    vs_ctx x = {.st = st, .rg = rg, .err = err};
    int rc = vr_meta_open(&x.meta, v->metadata, v->metadata_len, err);
    if (rc == 0 && metadata)
        rc = pq_column_put_bytes(col(&x, t->metadata_leaf), rep, v->metadata, v->metadata_len);
    return rc ? rc : write_node(&x, t->shred, v->value, v->value_len, rep);
}

int vs_write(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v, uint16_t rep,
             pq_err *err)
{
    return write_variant(st, rg, t, v, rep, true, err);
}

int vs_write_value(vs_state *st, pq_rowgroup *rg, const sc_type *t, const vr_variant *v,
                   uint16_t rep, pq_err *err)
{
    return write_variant(st, rg, t, v, rep, false, err);
}
