/* vappend.c - stateless Variant appenders (VariantEncoding.md, "Value
 * encoding"): one primitive or string value encoded at the end of a
 * pq_buf with the narrowest type that holds it. The builder (vbuild.c)
 * writes its scalars through these; callers such as the shredder use them
 * directly. No state, any thread. */
#include "variant_int.h"

static int vr_append_fixed(pq_buf *out, vr_type t, uint64_t v, unsigned n)
{
    if (pq_buf_reserve(out, 1 + n) != 0)
        return PQ_ENOMEM;
    out->data[out->len] = vr_prim_byte(t);
    vr_put_le(out->data + out->len + 1, v, n);
    out->len += 1 + n;
    return 0;
}

int vr_value_append_null(pq_buf *out)
{
    return pq_buf_push(out, vr_prim_byte(VR_NULL));
}

int vr_value_append_bool(pq_buf *out, bool v)
{
    return pq_buf_push(out, vr_prim_byte(v ? VR_TRUE : VR_FALSE));
}

int vr_value_append_int(pq_buf *out, int64_t v)
{
    if (v >= INT8_MIN && v <= INT8_MAX)
        return vr_append_fixed(out, VR_INT8, (uint64_t)v, 1);
    if (v >= INT16_MIN && v <= INT16_MAX)
        return vr_append_fixed(out, VR_INT16, (uint64_t)v, 2);
    if (v >= INT32_MIN && v <= INT32_MAX)
        return vr_append_fixed(out, VR_INT32, (uint64_t)v, 4);
    return vr_append_fixed(out, VR_INT64, (uint64_t)v, 8);
}

int vr_value_append_double(pq_buf *out, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return vr_append_fixed(out, VR_DOUBLE, bits, 8);
}

int vr_value_append_float(pq_buf *out, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return vr_append_fixed(out, VR_FLOAT, bits, 4);
}

/* Precision picks the width (VariantEncoding.md, "Decimal table"). */
int vr_value_append_decimal(pq_buf *out, vr_i128 unscaled, uint32_t scale)
{
    unsigned __int128 mag = unscaled < 0 ? -(unsigned __int128)unscaled
                                         : (unsigned __int128)unscaled;
    if (scale > VR_MAX_DECIMAL_DIGITS || mag >= VR_POW10_38)
        return PQ_EINVAL;
    unsigned prec = vr_digits(mag);
    vr_type t = prec <= 9 ? VR_DECIMAL4 : prec <= 18 ? VR_DECIMAL8 : VR_DECIMAL16;
    unsigned n = t == VR_DECIMAL4 ? 4 : t == VR_DECIMAL8 ? 8 : 16;
    if (pq_buf_reserve(out, 2 + n) != 0)
        return PQ_ENOMEM;
    uint8_t *p = out->data + out->len;
    p[0] = vr_prim_byte(t);
    p[1] = (uint8_t)scale;
    unsigned __int128 u = (unsigned __int128)unscaled;  /* two's complement */
    for (unsigned i = 0; i < n; i++)
        p[2 + i] = (uint8_t)(u >> (8 * i));
    out->len += 2 + n;
    return 0;
}

static int vr_append_sized(pq_buf *out, uint8_t head, const void *p, size_t len)
{
    if (len > UINT32_MAX)
        return PQ_ELIMIT;
    if (pq_buf_reserve(out, 5 + len) != 0)
        return PQ_ENOMEM;
    out->data[out->len] = head;
    vr_put_le(out->data + out->len + 1, len, 4);
    out->len += 5;
    return pq_buf_append(out, p, len);
}

int vr_value_append_string(pq_buf *out, const char *s, size_t len)
{
    if (len >= 64)
        return vr_append_sized(out, vr_prim_byte(VR_STRING), s, len);
    if (pq_buf_push(out, (uint8_t)(len << 2 | VR_BASIC_SHORT_STRING)) != 0)
        return PQ_ENOMEM;
    return pq_buf_append(out, s, len);
}

int vr_value_append_binary(pq_buf *out, const void *p, size_t len)
{
    return vr_append_sized(out, vr_prim_byte(VR_BINARY), p, len);
}

int vr_value_append_date(pq_buf *out, int32_t days)
{
    return vr_append_fixed(out, VR_DATE, (uint32_t)days, 4);
}

int vr_value_append_timestamp(pq_buf *out, int64_t v, vr_unit unit, bool utc)
{
    vr_type t = unit == VR_NANOS ? (utc ? VR_TIMESTAMP_NANOS : VR_TIMESTAMP_NTZ_NANOS)
                                 : (utc ? VR_TIMESTAMP_MICROS : VR_TIMESTAMP_NTZ_MICROS);
    return vr_append_fixed(out, t, (uint64_t)v, 8);
}

int vr_value_append_time(pq_buf *out, int64_t micros)
{
    return vr_append_fixed(out, VR_TIME_NTZ_MICROS, (uint64_t)micros, 8);
}

int vr_value_append_uuid(pq_buf *out, const uint8_t uuid[16])
{
    if (pq_buf_push(out, vr_prim_byte(VR_UUID)) != 0)
        return PQ_ENOMEM;
    return pq_buf_append(out, uuid, 16);
}
