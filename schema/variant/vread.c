/* vread.c - bounds-checked readers of Variant bytes (VariantEncoding.md):
 * metadata dictionaries, a value's type and size, primitives, and the
 * elements of objects and arrays, for the shredder and the builder's own
 * re-walks. Every length is checked against the bytes present, so hostile
 * input gives PQ_EPARSE, never a read out of bounds. No state, any
 * thread. */
#include "variant_int.h"

int vr_meta_open(vr_meta *m, const uint8_t *p, size_t len, pq_err *err)
{
    if (len < 1 || (p[0] & 0x0F) != 1)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: %s", len < 1 ? "empty"
                          : "version is not 1");
    unsigned osz = (p[0] >> 6) + 1;
    if (len < 1 + (size_t)osz)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: truncated dictionary_size");
    uint64_t n = vr_get_le(p + 1, osz);
    if ((n + 1) > (len - 1 - osz) / osz)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: %llu offsets overrun %zu bytes",
                          (unsigned long long)n + 1, len);
    m->size = (uint32_t)n;
    m->offset_size = (uint8_t)osz;
    m->sorted = (p[0] >> 4) & 1;
    m->offsets = p + 1 + osz;
    m->bytes = m->offsets + (n + 1) * osz;
    size_t avail = len - (size_t)(m->bytes - p);
    m->bytes_len = vr_get_le(m->offsets + n * osz, osz);
    if (m->bytes_len > avail)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: %zu string bytes, %zu present",
                          m->bytes_len, avail);
    return 0;
}

int vr_meta_key(const vr_meta *m, uint32_t id, vr_str *key, pq_err *err)
{
    if (id >= m->size)
        return pq_err_set(err, PQ_EPARSE, "variant: field id %u outside a %u-key dictionary",
                          id, m->size);
    uint64_t a = vr_get_le(m->offsets + (size_t)id * m->offset_size, m->offset_size);
    uint64_t z = vr_get_le(m->offsets + ((size_t)id + 1) * m->offset_size, m->offset_size);
    if (a > z || z > m->bytes_len)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: bad offsets for key %u", id);
    key->s = (const char *)m->bytes + a;
    key->len = (size_t)(z - a);
    return 0;
}

int vr_value_type(const uint8_t *v, size_t len)
{
    if (len == 0)
        return PQ_EPARSE;
    unsigned basic = v[0] & 3, h = v[0] >> 2;
    if (basic == VR_BASIC_PRIMITIVE)
        return h <= VR_UUID ? (int)h : PQ_EPARSE;
    return basic == VR_BASIC_SHORT_STRING ? VR_STRING
           : basic == VR_BASIC_OBJECT     ? VR_OBJECT
                                          : VR_ARRAY;
}

/* value_data bytes per primitive type; -1: 4-byte length prefix. */
static const int8_t vr_fixed_size[VR_UUID + 1] = {
    0, 0, 0, 1, 2, 4, 8, 8, 5, 9, 17, 4, 8, 8, 4, -1, -1, 8, 8, 8, 16};

int vr_value_size(const uint8_t *v, size_t avail, size_t *size, pq_err *err)
{
    *size = 0;                          /* defined on every return */
    if (avail == 0)
        return pq_err_set(err, PQ_EPARSE, "variant value: no value_metadata byte");
    unsigned basic = v[0] & 3, h = v[0] >> 2;
    uint64_t n;
    if (basic == VR_BASIC_SHORT_STRING) {
        n = 1 + h;
    } else if (basic == VR_BASIC_PRIMITIVE) {
        if (h > VR_UUID)
            return pq_err_set(err, PQ_EPARSE, "variant value: unknown primitive type %u", h);
        if (vr_fixed_size[h] >= 0)
            n = 1 + (uint64_t)vr_fixed_size[h];
        else if (avail < 5)
            return pq_err_set(err, PQ_EPARSE, "variant value: truncated length");
        else
            n = 5 + vr_get_le(v + 1, 4);
    } else {
        vr_container c;
        int rc = vr_container_open(&c, v, avail, err);
        if (rc != 0)
            return rc;
        n = c.size;
    }
    if (n > avail)
        return pq_err_set(err, PQ_EPARSE, "variant value: %llu bytes overrun the %zu left",
                          (unsigned long long)n, avail);
    *size = (size_t)n;
    return 0;
}

static int64_t vr_sext(uint64_t u, unsigned n)
{
    uint64_t sign = (uint64_t)1 << (8 * n - 1);
    return n == 8 ? (int64_t)u : (int64_t)((u ^ sign) - sign);
}

static void vr_read_decimal(const uint8_t *v, unsigned n, vr_prim *out)
{
    unsigned __int128 u = 0;
    for (unsigned i = 0; i < n; i++)
        u |= (unsigned __int128)v[2 + i] << (8 * i);
    if (n < 16 && (v[1 + n] & 0x80))
        u |= ~(unsigned __int128)0 << (8 * n);
    out->unscaled = (vr_i128)u;
    out->scale = v[1];
}

int vr_value_read(const uint8_t *v, size_t len, vr_prim *out, pq_err *err)
{
    size_t size;
    int rc = vr_value_size(v, len, &size, err);
    if (rc != 0)
        return rc;
    memset(out, 0, sizeof *out);
    out->type = (vr_type)vr_value_type(v, len);
    unsigned h = v[0] >> 2;
    if ((v[0] & 3) == VR_BASIC_SHORT_STRING) {
        out->bytes = v + 1;
        out->len = h;
        return 0;
    }
    if ((v[0] & 3) != VR_BASIC_PRIMITIVE)
        return 0;
    unsigned n = h <= VR_UUID && vr_fixed_size[h] > 0 ? (unsigned)vr_fixed_size[h] : 0;
    switch (h) {
    case VR_DOUBLE: {
        uint64_t bits = vr_get_le(v + 1, 8);
        memcpy(&out->d, &bits, 8);
        break;
    }
    case VR_FLOAT: {
        uint32_t bits = (uint32_t)vr_get_le(v + 1, 4);
        memcpy(&out->f, &bits, 4);
        break;
    }
    case VR_DECIMAL4: case VR_DECIMAL8: case VR_DECIMAL16:
        vr_read_decimal(v, n - 1, out);
        if (out->scale > VR_MAX_DECIMAL_DIGITS)
            return pq_err_set(err, PQ_EPARSE, "variant value: decimal scale %u > 38", out->scale);
        break;
    case VR_BINARY: case VR_STRING:
        out->bytes = v + 5;
        out->len = size - 5;
        break;
    case VR_UUID:
        out->bytes = v + 1;
        out->len = 16;
        break;
    default:                            /* ints, date, times: signed LE */
        if (n > 0)
            out->i = vr_sext(vr_get_le(v + 1, n), n);
    }
    return 0;
}

int vr_container_open(vr_container *c, const uint8_t *v, size_t len, pq_err *err)
{
    if (len == 0 || (v[0] & 3) < VR_BASIC_OBJECT)
        return pq_err_set(err, PQ_EPARSE, "variant value: not an object or array");
    unsigned h = v[0] >> 2;
    bool obj = (v[0] & 3) == VR_BASIC_OBJECT;
    size_t nsz = (obj ? (h >> 4) & 1 : (h >> 2) & 1) ? 4 : 1;
    c->basic = v[0] & 3;
    c->offset_size = (uint8_t)((h & 3) + 1);
    c->id_size = obj ? (uint8_t)(((h >> 2) & 3) + 1) : 0;
    if (len < 1 + nsz)
        return pq_err_set(err, PQ_EPARSE, "variant value: truncated num_elements");
    c->n = (uint32_t)vr_get_le(v + 1, (unsigned)nsz);
    uint64_t pos = 1 + nsz + (uint64_t)c->n * c->id_size;
    uint64_t end = pos + ((uint64_t)c->n + 1) * c->offset_size;
    if (end > len)
        return pq_err_set(err, PQ_EPARSE, "variant value: header of %u elements overruns "
                          "%zu bytes", c->n, len);
    c->ids = obj ? v + 1 + nsz : NULL;
    c->offsets = v + pos;
    c->data = v + end;
    c->data_len = vr_get_le(c->offsets + (uint64_t)c->n * c->offset_size, c->offset_size);
    if (c->data_len > len - end)
        return pq_err_set(err, PQ_EPARSE, "variant value: %zu data bytes, %zu present",
                          c->data_len, (size_t)(len - end));
    c->size = (size_t)end + c->data_len;
    return 0;
}

int vr_container_get(const vr_container *c, uint32_t i, uint32_t *field_id,
                     const uint8_t **val, size_t *val_len, pq_err *err)
{
    if (i >= c->n)
        return pq_err_set(err, PQ_EINVAL, "variant: element %u of %u", i, c->n);
    const uint8_t *v = NULL;
    size_t avail = 0;
    int rc = vr_container_at(c, i, &v, &avail, err);
    rc = rc ? rc : vr_value_size(v, avail, val_len, err);
    if (rc != 0)
        return rc;
    if (field_id != NULL && c->basic == VR_BASIC_OBJECT)
        *field_id = vr_container_id(c, i);
    *val = v;
    return 0;
}

int vr_object_find(const vr_container *c, const vr_meta *m, const char *name, size_t len,
                   const uint8_t **val, size_t *val_len, pq_err *err)
{
    if (c->basic != VR_BASIC_OBJECT)
        return pq_err_set(err, PQ_EINVAL, "variant: field lookup in an array");
    vr_str want = {name, len}, k = {NULL, 0}; /* set by vr_meta_key (GCC -O3 cannot tell) */
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t id = (uint32_t)vr_get_le(c->ids + (size_t)mid * c->id_size, c->id_size);
        int rc = vr_meta_key(m, id, &k, err);
        if (rc != 0)
            return rc;
        int cmp = vr_strcmp(k, want);
        if (cmp == 0) {
            rc = vr_container_get(c, mid, NULL, val, val_len, err);
            return rc != 0 ? rc : 1;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}
