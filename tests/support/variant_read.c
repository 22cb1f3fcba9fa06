/* variant_read.c - test-only Variant decoder (VariantEncoding.md):
 * validation, canonical JSON, equality, and the reference tree. See
 * variant_read.h for the canonical JSON form. Recursive by design (tests
 * only); depth is capped at VREAD_MAX_DEPTH. */
#include "variant_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 vd_u128;

typedef struct vd_ctx {
    const uint8_t *root;        /* for byte offsets in messages */
    const uint8_t *offs;        /* dictionary offsets */
    const uint8_t *bytes;       /* dictionary strings */
    unsigned osz;
    uint32_t dict_n;
    unsigned flags;
    pq_err *err;
    pq_buf *json;               /* render here when not NULL */
} vd_ctx;

static uint64_t vd_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    while (n--)
        v = v << 8 | p[n];
    return v;
}

static unsigned vd_width(uint64_t v)
{
    unsigned w = 1;
    while (w < 4 && v >> (8 * w))
        w++;
    return w;
}

/* Decodes code points one by one; rejects overlongs, surrogates, > U+10FFFF. */
static bool vd_utf8(const uint8_t *s, size_t n)
{
    static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
    for (size_t i = 0; i < n;) {
        unsigned extra = s[i] < 0x80 ? 0 : (s[i] & 0xE0) == 0xC0 ? 1
                       : (s[i] & 0xF0) == 0xE0 ? 2 : (s[i] & 0xF8) == 0xF0 ? 3 : 9;
        if (extra == 9 || n - i <= extra)
            return false;
        uint32_t cp = s[i] & (0x7F >> extra);
        for (unsigned k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min_cp[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += extra + 1;
    }
    return true;
}

static int vd_bad(vd_ctx *c, const uint8_t *at, const char *what)
{
    return pq_err_set(c->err, PQ_EPARSE, "variant value byte %zu: %s",
                      (size_t)(at - c->root), what);
}

static int vd_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    int r = memcmp(a, b, alen < blen ? alen : blen);
    return r ? r : (alen > blen) - (alen < blen);
}

/* ---- metadata ------------------------------------------------------------ */

static void vd_key(const vd_ctx *c, uint32_t id, const uint8_t **s, size_t *len)
{
    uint64_t a = vd_le(c->offs + (size_t)id * c->osz, c->osz);
    *s = c->bytes + a;
    *len = vd_le(c->offs + ((size_t)id + 1) * c->osz, c->osz) - a;
}

static int vd_meta_keys(vd_ctx *c, bool sorted, uint64_t blen)
{
    uint64_t prev = 0;
    for (uint32_t i = 0; i <= c->dict_n; i++) {
        uint64_t o = vd_le(c->offs + (size_t)i * c->osz, c->osz);
        if ((i == 0 && o != 0) || o < prev || o > blen)
            return pq_err_set(c->err, PQ_EPARSE, "variant metadata: offset %u is %llu", i,
                              (unsigned long long)o);
        prev = o;
    }
    for (uint32_t i = 0; i < c->dict_n; i++) {
        const uint8_t *s, *t;
        size_t n, m;
        vd_key(c, i, &s, &n);
        if (!vd_utf8(s, n))
            return pq_err_set(c->err, PQ_EPARSE, "variant metadata: key %u not UTF-8", i);
        if (sorted && i > 0) {
            vd_key(c, i - 1, &t, &m);
            if (vd_cmp(t, m, s, n) >= 0)
                return pq_err_set(c->err, PQ_EPARSE, "variant metadata: sorted_strings "
                                  "set but key %u is not above key %u", i, i - 1);
        }
    }
    return 0;
}

static int vd_meta(vd_ctx *c, const uint8_t *m, size_t len)
{
    if (len < 2 || (m[0] & 0x0F) != 1)
        return pq_err_set(c->err, PQ_EPARSE, "variant metadata: %s",
                          len < 2 ? "shorter than 2 bytes" : "version is not 1");
    c->osz = (m[0] >> 6) + 1;
    if (len < 1 + 2 * (size_t)c->osz)
        return pq_err_set(c->err, PQ_EPARSE, "variant metadata: truncated header");
    uint64_t n = vd_le(m + 1, c->osz);
    uint64_t head = 1 + c->osz + (n + 1) * c->osz;
    if (head > len)
        return pq_err_set(c->err, PQ_EPARSE, "variant metadata: %llu keys overrun %zu bytes",
                          (unsigned long long)n, len);
    c->dict_n = (uint32_t)n;
    c->offs = m + 1 + c->osz;
    c->bytes = m + head;
    uint64_t blen = vd_le(c->offs + n * c->osz, c->osz);
    if (head + blen != len)
        return pq_err_set(c->err, PQ_EPARSE, "variant metadata: %zu bytes, layout says %llu",
                          len, (unsigned long long)(head + blen));
    if ((c->flags & VREAD_CANONICAL) && c->osz != vd_width(n > blen ? n : blen))
        return pq_err_set(c->err, PQ_EPARSE, "variant metadata: offset_size %u not minimal",
                          c->osz);
    return vd_meta_keys(c, (m[0] >> 4) & 1, blen);
}

/* ---- canonical JSON of primitives (shared by decoder and tree) ---------- */

static int vd_printf(pq_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int vd_printf(pq_buf *o, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return pq_buf_append(o, buf, (size_t)n);
}

static int vd_json_string(pq_buf *o, const uint8_t *s, size_t n)
{
    int rc = pq_buf_push(o, '"');
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint8_t ch = s[i];
        if (ch == '"' || ch == '\\')
            rc = vd_printf(o, "\\%c", ch);
        else if (ch == '\n')
            rc = vd_printf(o, "\\n");
        else if (ch == '\t')
            rc = vd_printf(o, "\\t");
        else if (ch < 0x20)
            rc = vd_printf(o, "\\u%04x", ch);
        else
            rc = pq_buf_push(o, ch);
    }
    return rc ? rc : pq_buf_push(o, '"');
}

static int vd_json_decimal(pq_buf *o, vr_i128 v, unsigned scale)
{
    char d[48];
    size_t len = 0;
    vd_u128 mag = v < 0 ? -(vd_u128)v : (vd_u128)v;
    do {
        d[sizeof d - 1 - len++] = (char)('0' + (int)(mag % 10));
        mag /= 10;
    } while (mag != 0);
    const char *digits = d + sizeof d - len;
    int rc = v < 0 ? pq_buf_push(o, '-') : 0;
    if (scale == 0)
        return rc ? rc : pq_buf_append(o, digits, len);
    if (len <= scale) {
        rc = rc ? rc : pq_buf_append(o, "0.", 2);
        for (size_t i = len; rc == 0 && i < scale; i++)
            rc = pq_buf_push(o, '0');
        return rc ? rc : pq_buf_append(o, digits, len);
    }
    rc = rc ? rc : pq_buf_append(o, digits, len - scale);
    rc = rc ? rc : pq_buf_push(o, '.');
    return rc ? rc : pq_buf_append(o, digits + len - scale, scale);
}

/* Shortest "%.*g" text that reads back to the same value. */
static int vd_json_real(pq_buf *o, double d, bool is_float)
{
    if (isnan(d))
        return vd_printf(o, "\"NaN\"");
    if (isinf(d))
        return vd_printf(o, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    char buf[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, d);
        if (is_float ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d)
            break;
        /* At a power of two the lower half-gap is half the upper one: the
         * nearest p-digit decimal may miss while its neighbour on the other
         * side reads back. That neighbour is then the shortest form. */
        char e[48], digits[24];
        snprintf(e, sizeof e, "%.*e", p - 1, fabs(d));
        size_t nd = 0;
        const char *c = e;
        for (; *c && *c != 'e'; c++)
            if (*c >= '0' && *c <= '9')
                digits[nd++] = *c;
        digits[nd] = 0;
        long ex = strtol(c + 1, NULL, 10);
        unsigned long long m = strtoull(digits, NULL, 10);
        double near = strtod(e, NULL);
        m = near < fabs(d) ? m + 1 : m - 1;
        snprintf(e, sizeof e, "%s%llue%ld", d < 0 ? "-" : "", m, ex - (long)(nd - 1));
        if (m == 0 || (is_float ? strtof(e, NULL) != (float)d : strtod(e, NULL) != d))
            continue;
        snprintf(digits, sizeof digits, "%llu", m);   /* as d.ddde+XX, like %e */
        size_t k = strlen(digits);
        long x10 = ex - (long)(nd - 1) + (long)k - 1;
        snprintf(buf, sizeof buf, "%s%c%s%.*se%c%02ld", d < 0 ? "-" : "", digits[0],
                 k > 1 ? "." : "", (int)(k - 1), digits + 1, x10 < 0 ? '-' : '+',
                 x10 < 0 ? -x10 : x10);
        break;
    }
    return vd_printf(o, "%s", buf);
}

/* Days since 1970-01-01 to the proleptic Gregorian date (H. Hinnant). */
static void vd_civil(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int vd_json_date(pq_buf *o, int64_t days)
{
    int64_t y;
    unsigned m, d;
    vd_civil(days, &y, &m, &d);
    if (y >= 0 && y <= 9999)
        return vd_printf(o, "%04lld-%02u-%02u", (long long)y, m, d);
    return vd_printf(o, "%+lld-%02u-%02u", (long long)y, m, d);
}

/* v in units of 10^-digits seconds; with a date when days is true. */
static int vd_json_clock(pq_buf *o, int64_t v, unsigned digits, bool with_date)
{
    int64_t per_sec = digits == 9 ? 1000000000 : 1000000, per_day = per_sec * 86400;
    int64_t days = v / per_day, rem = v % per_day;
    if (rem < 0)
        days--, rem += per_day;
    int64_t secs = rem / per_sec, frac = rem % per_sec;
    int rc = with_date ? vd_json_date(o, days) : 0;
    rc = rc ? rc : (with_date ? pq_buf_push(o, 'T') : 0);
    return rc ? rc : vd_printf(o, "%02lld:%02lld:%02lld.%0*lld", (long long)(secs / 3600),
                               (long long)(secs / 60 % 60), (long long)(secs % 60),
                               (int)digits, (long long)frac);
}

static int vd_json_base64(pq_buf *o, const uint8_t *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int rc = pq_buf_push(o, '"');
    for (size_t i = 0; rc == 0 && i < n; i += 3) {
        uint32_t w = (uint32_t)p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        char q[4] = {a[w >> 18], a[(w >> 12) & 63], i + 1 < n ? a[(w >> 6) & 63] : '=',
                     i + 2 < n ? a[w & 63] : '='};
        rc = pq_buf_append(o, q, 4);
    }
    return rc ? rc : pq_buf_push(o, '"');
}

static int vd_json_uuid(pq_buf *o, const uint8_t *u)
{
    int rc = pq_buf_push(o, '"');
    for (int i = 0; rc == 0 && i < 16; i++)
        rc = vd_printf(o, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
    return rc ? rc : pq_buf_push(o, '"');
}

static int vd_json_prim(pq_buf *o, const vr_prim *p)
{
    int rc;
    switch (p->type) {
    case VR_NULL: return vd_printf(o, "null");
    case VR_TRUE: return vd_printf(o, "true");
    case VR_FALSE: return vd_printf(o, "false");
    case VR_INT8: case VR_INT16: case VR_INT32: case VR_INT64:
        return vd_printf(o, "%lld", (long long)p->i);
    case VR_DOUBLE: return vd_json_real(o, p->d, false);
    case VR_FLOAT: return vd_json_real(o, p->f, true);
    case VR_DECIMAL4: case VR_DECIMAL8: case VR_DECIMAL16:
        return vd_json_decimal(o, p->unscaled, p->scale);
    case VR_STRING: return vd_json_string(o, p->bytes, p->len);
    case VR_BINARY: return vd_json_base64(o, p->bytes, p->len);
    case VR_UUID: return vd_json_uuid(o, p->bytes);
    case VR_DATE:
        rc = pq_buf_push(o, '"');
        rc = rc ? rc : vd_json_date(o, p->i);
        return rc ? rc : pq_buf_push(o, '"');
    case VR_TIME_NTZ_MICROS:
        if (p->i < 0 || p->i >= 86400000000LL)  /* not a time of day: raw micros */
            return vd_printf(o, "%lld", (long long)p->i);
        rc = pq_buf_push(o, '"');
        rc = rc ? rc : vd_json_clock(o, p->i, 6, false);
        return rc ? rc : pq_buf_push(o, '"');
    default: {                           /* the four timestamps */
        bool nanos = p->type == VR_TIMESTAMP_NANOS || p->type == VR_TIMESTAMP_NTZ_NANOS;
        bool utc = p->type == VR_TIMESTAMP_NANOS || p->type == VR_TIMESTAMP_MICROS;
        rc = pq_buf_push(o, '"');
        rc = rc ? rc : vd_json_clock(o, p->i, nanos ? 9 : 6, true);
        rc = rc ? rc : (utc ? vd_printf(o, "+00:00") : 0);
        return rc ? rc : pq_buf_push(o, '"');
    }
    }
}

/* ---- value decoding ------------------------------------------------------ */

static int64_t vd_sext(uint64_t u, unsigned n)
{
    unsigned sh = 64 - 8 * n;
    return (int64_t)(u << sh) >> sh;
}

/* value_data bytes per primitive type; binary/string: the length prefix. */
static const uint8_t vd_fixed[VR_UUID + 1] = {0, 0, 0, 1, 2, 4, 8, 8, 5, 9, 17,
                                              4, 8, 8, 4, 4, 4, 8, 8, 8, 16};

static unsigned vd_digits(vd_u128 u)
{
    unsigned d = 1;
    for (; u >= 10; u /= 10)
        d++;
    return d;
}

static int vd_decimal(vd_ctx *c, const uint8_t *v, vr_prim *p)
{
    unsigned n = vd_fixed[p->type] - 1u;
    vd_u128 u = 0;
    for (unsigned i = 0; i < n; i++)
        u |= (vd_u128)v[2 + i] << (8 * i);
    if (n < 16 && (v[1 + n] & 0x80))
        u |= ~(vd_u128)0 << (8 * n);
    p->unscaled = (vr_i128)u;
    p->scale = v[1];
    vd_u128 mag = p->unscaled < 0 ? -(vd_u128)p->unscaled : (vd_u128)p->unscaled;
    unsigned prec = vd_digits(mag);
    if (p->scale > 38 || prec > 38)
        return vd_bad(c, v, "decimal scale or precision above 38");
    vr_type want = prec <= 9 ? VR_DECIMAL4 : prec <= 18 ? VR_DECIMAL8 : VR_DECIMAL16;
    if ((c->flags & VREAD_CANONICAL) && p->type != want)
        return vd_bad(c, v, "decimal wider than its precision needs");
    /* readers take the precision from the unscaled digits: DuckDB 1.5.6
     * dies on scale > precision and prints scale == precision as ".5" */
    if ((c->flags & VREAD_CANONICAL) && p->scale > 0 && p->scale >= prec)
        return vd_bad(c, v, "decimal scale not below its implied precision (no integer digit)");
    return 0;
}

static int vd_fixed_prim(vd_ctx *c, const uint8_t *v, vr_prim *p)
{
    unsigned n = vd_fixed[p->type];
    switch (p->type) {
    case VR_INT8: case VR_INT16: case VR_INT32: case VR_INT64:
        p->i = vd_sext(vd_le(v + 1, n), n);
        if ((c->flags & VREAD_CANONICAL) && n > 1 &&
            p->i >= -(INT64_C(1) << (4 * n - 1)) && p->i < (INT64_C(1) << (4 * n - 1)))
            return vd_bad(c, v, "integer wider than its value needs");
        return 0;
    case VR_DOUBLE: {
        uint64_t bits = vd_le(v + 1, 8);
        memcpy(&p->d, &bits, 8);
        return 0;
    }
    case VR_FLOAT: {
        uint32_t bits = (uint32_t)vd_le(v + 1, 4);
        memcpy(&p->f, &bits, 4);
        return 0;
    }
    case VR_DECIMAL4: case VR_DECIMAL8: case VR_DECIMAL16:
        return vd_decimal(c, v, p);
    case VR_UUID:
        p->bytes = v + 1;
        p->len = 16;
        return 0;
    default:                            /* null, bools, date, times */
        p->i = n ? vd_sext(vd_le(v + 1, n), n) : 0;
        return 0;
    }
}

static int vd_prim(vd_ctx *c, const uint8_t *v, size_t avail, size_t *used, vr_prim *p)
{
    memset(p, 0, sizeof *p);
    unsigned t = v[0] >> 2;
    if ((v[0] & 3) == VR_BASIC_SHORT_STRING) {
        p->type = VR_STRING;
        p->bytes = v + 1;
        p->len = t;
        *used = 1 + t;
        if (*used > avail)
            return vd_bad(c, v, "short string overruns its container");
        return vd_utf8(p->bytes, t) ? 0 : vd_bad(c, v, "short string is not UTF-8");
    }
    if (t > VR_UUID)
        return vd_bad(c, v, "unknown primitive type");
    p->type = (vr_type)t;
    *used = 1 + (size_t)vd_fixed[t];
    if (*used > avail)
        return vd_bad(c, v, "primitive overruns its container");
    if (t != VR_BINARY && t != VR_STRING)
        return vd_fixed_prim(c, v, p);
    p->len = vd_le(v + 1, 4);
    p->bytes = v + 5;
    if (p->len > avail - 5)
        return vd_bad(c, v, "string/binary length overruns its container");
    *used = 5 + p->len;
    if (t == VR_STRING && !vd_utf8(p->bytes, p->len))
        return vd_bad(c, v, "string is not UTF-8");
    if (t == VR_STRING && (c->flags & VREAD_CANONICAL) && p->len < 64)
        return vd_bad(c, v, "long string under 64 bytes");
    return 0;
}

typedef struct vd_cont {
    bool obj;
    uint64_t n;
    unsigned idw, offw;
    const uint8_t *ids, *offs, *data;
    uint64_t dlen, size;
} vd_cont;

static int vd_cont_open(vd_ctx *c, const uint8_t *v, size_t avail, vd_cont *k)
{
    unsigned h = v[0] >> 2;
    k->obj = (v[0] & 3) == VR_BASIC_OBJECT;
    k->offw = (h & 3) + 1;
    k->idw = k->obj ? ((h >> 2) & 3) + 1 : 0;
    bool large = k->obj ? (h >> 4) & 1 : (h >> 2) & 1;
    unsigned nsz = large ? 4 : 1;
    if (avail < 1 + nsz)
        return vd_bad(c, v, "truncated num_elements");
    k->n = vd_le(v + 1, nsz);
    uint64_t hdr = 1 + nsz + k->n * k->idw + (k->n + 1) * k->offw;
    if (hdr > avail)
        return vd_bad(c, v, "container header overruns");
    k->ids = v + 1 + nsz;
    k->offs = k->ids + k->n * k->idw;
    k->data = v + hdr;
    k->dlen = vd_le(k->offs + k->n * k->offw, k->offw);
    if (k->dlen > avail - hdr)
        return vd_bad(c, v, "container data overruns");
    k->size = hdr + k->dlen;
    if ((c->flags & VREAD_CANONICAL) && (large != (k->n > 255) || k->offw != vd_width(k->dlen)))
        return vd_bad(c, v, "is_large or field_offset_size not minimal");
    return 0;
}

static uint64_t vd_off(const vd_cont *k, uint64_t i) { return vd_le(k->offs + i * k->offw, k->offw); }
static uint32_t vd_id(const vd_cont *k, uint64_t i) { return (uint32_t)vd_le(k->ids + i * k->idw, k->idw); }

static int vd_value(vd_ctx *c, const uint8_t *v, size_t avail, size_t *used, unsigned depth);

typedef struct vd_span {
    uint64_t off, len;
} vd_span;

static int vd_span_cmp(const void *a, const void *b)
{
    const vd_span *x = a, *y = b;
    return (x->off > y->off) - (x->off < y->off);
}

/* Canonical layout: the child values cover the data area exactly. */
static int vd_tiles(vd_ctx *c, const uint8_t *v, vd_span *s, uint64_t n, uint64_t dlen)
{
    if (n > 1)
        qsort(s, n, sizeof *s, vd_span_cmp);
    uint64_t end = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (s[i].off != end)
            return vd_bad(c, v, "container values leave a gap or overlap");
        end += s[i].len;
    }
    return end == dlen ? 0 : vd_bad(c, v, "container data has bytes no value uses");
}

static int vd_field_key(vd_ctx *c, const uint8_t *v, const vd_cont *k, uint64_t i,
                        uint32_t *maxid)
{
    uint32_t id = vd_id(k, i);
    if (id >= c->dict_n)
        return vd_bad(c, v, "field id outside the dictionary");
    *maxid = id > *maxid ? id : *maxid;
    const uint8_t *s, *t;
    size_t n, m;
    vd_key(c, id, &s, &n);
    if (i > 0) {
        vd_key(c, vd_id(k, i - 1), &t, &m);
        if (vd_cmp(t, m, s, n) >= 0)
            return vd_bad(c, v, "object keys not in byte-wise order, or duplicated");
    }
    if (c->json == NULL)
        return 0;
    int rc = i > 0 ? pq_buf_push(c->json, ',') : 0;
    rc = rc ? rc : vd_json_string(c->json, s, n);
    return rc ? rc : pq_buf_push(c->json, ':');
}

static int vd_children(vd_ctx *c, const uint8_t *v, const vd_cont *k, vd_span *spans,
                       unsigned depth, uint32_t *maxid)
{
    for (uint64_t i = 0; i < k->n; i++) {
        uint64_t off = vd_off(k, i);
        size_t len;
        if (off >= k->dlen)
            return vd_bad(c, v, "field offset outside the container");
        int rc = k->obj ? vd_field_key(c, v, k, i, maxid)
                        : (c->json && i > 0 ? pq_buf_push(c->json, ',') : 0);
        rc = rc ? rc : vd_value(c, k->data + off, k->dlen - off, &len, depth + 1);
        if (rc != 0)
            return rc;
        if (spans != NULL)
            spans[i] = (vd_span){off, len};
    }
    return 0;
}

static int vd_container(vd_ctx *c, const uint8_t *v, size_t avail, size_t *used,
                        unsigned depth)
{
    vd_cont k;
    int rc = vd_cont_open(c, v, avail, &k);
    if (rc != 0)
        return rc;
    bool canon = c->flags & VREAD_CANONICAL;
    vd_span *spans = canon && k.n ? malloc(k.n * sizeof *spans) : NULL;
    if (canon && k.n && spans == NULL)
        return PQ_ENOMEM;
    uint32_t maxid = 0;
    rc = c->json ? pq_buf_push(c->json, k.obj ? '{' : '[') : 0;
    rc = rc ? rc : vd_children(c, v, &k, spans, depth, &maxid);
    rc = rc ? rc : (c->json ? pq_buf_push(c->json, k.obj ? '}' : ']') : 0);
    if (rc == 0 && canon && k.obj && k.idw != vd_width(maxid))
        rc = vd_bad(c, v, "field_id_size not minimal");
    if (rc == 0 && canon)
        rc = vd_tiles(c, v, spans, k.n, k.dlen);
    free(spans);
    *used = (size_t)k.size;
    return rc;
}

static int vd_value(vd_ctx *c, const uint8_t *v, size_t avail, size_t *used, unsigned depth)
{
    if (depth > VREAD_MAX_DEPTH)
        return vd_bad(c, v, "nesting deeper than VREAD_MAX_DEPTH");
    if (avail == 0)
        return vd_bad(c, v, "missing value (0 bytes)");
    if ((v[0] & 3) >= VR_BASIC_OBJECT)
        return vd_container(c, v, avail, used, depth);
    vr_prim p;
    int rc = vd_prim(c, v, avail, used, &p);
    return rc == 0 && c->json ? vd_json_prim(c->json, &p) : rc;
}

static int vd_run(vd_ctx *c, const uint8_t *meta, size_t mlen, const uint8_t *val,
                  size_t vlen)
{
    c->root = val;
    int rc = vd_meta(c, meta, mlen);
    size_t used = 0;
    rc = rc ? rc : vd_value(c, val, vlen, &used, 0);
    if (rc == 0 && used != vlen)
        rc = pq_err_set(c->err, PQ_EPARSE, "variant value: %zu bytes after the value",
                        vlen - used);
    return rc;
}

int vread_validate(const uint8_t *meta, size_t mlen, const uint8_t *val, size_t vlen,
                   unsigned flags, pq_err *err)
{
    vd_ctx c = {.flags = flags, .err = err};
    return vd_run(&c, meta, mlen, val, vlen);
}

int vread_to_json(pq_buf *out, const uint8_t *meta, size_t mlen, const uint8_t *val,
                  size_t vlen, pq_err *err)
{
    vd_ctx c = {.err = err};
    int rc = vd_run(&c, meta, mlen, val, vlen);    /* validate before writing */
    if (rc == 0) {
        c.json = out;
        rc = vd_run(&c, meta, mlen, val, vlen);
    }
    return rc;
}

/* ---- equality ------------------------------------------------------------ */

static bool vd_exact_numeric(int t)
{
    return (t >= VR_INT8 && t <= VR_INT64) || (t >= VR_DECIMAL4 && t <= VR_DECIMAL16);
}

/* Smallest scale: 100 scale 2 and int 1 both become (1, 0). */
static void vd_norm(const vr_prim *p, vr_i128 *u, unsigned *s)
{
    bool dec = p->type >= VR_DECIMAL4 && p->type <= VR_DECIMAL16;
    *u = dec ? p->unscaled : (vr_i128)p->i;
    *s = dec ? p->scale : 0;
    while (*s > 0 && *u % 10 == 0)
        *u /= 10, (*s)--;
}

static bool vd_prim_eq(const vr_prim *a, const vr_prim *b)
{
    if (vd_exact_numeric(a->type) && vd_exact_numeric(b->type)) {
        vr_i128 ua, ub;
        unsigned sa, sb;
        vd_norm(a, &ua, &sa);
        vd_norm(b, &ub, &sb);
        return ua == ub && sa == sb;
    }
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case VR_DOUBLE: return memcmp(&a->d, &b->d, sizeof a->d) == 0;
    case VR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case VR_STRING: case VR_BINARY: case VR_UUID:
        return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
    default: return a->i == b->i;
    }
}

/* Both sides are validated before this runs. */
static int vd_eq(vd_ctx *ca, const uint8_t *a, size_t alen, vd_ctx *cb, const uint8_t *b,
                 size_t blen)
{
    bool ka = (a[0] & 3) >= VR_BASIC_OBJECT, kb = (b[0] & 3) >= VR_BASIC_OBJECT;
    size_t used;
    if (!ka && !kb) {
        vr_prim pa, pb;
        int rc = vd_prim(ca, a, alen, &used, &pa);
        rc = rc ? rc : vd_prim(cb, b, blen, &used, &pb);
        return rc ? rc : vd_prim_eq(&pa, &pb);
    }
    vd_cont x, y;
    if (ka != kb || (a[0] & 3) != (b[0] & 3))
        return 0;
    int rc = vd_cont_open(ca, a, alen, &x);
    rc = rc ? rc : vd_cont_open(cb, b, blen, &y);
    if (rc != 0 || x.n != y.n)
        return rc ? rc : 0;
    for (uint64_t i = 0; i < x.n; i++) {
        if (x.obj) {
            const uint8_t *s, *t;
            size_t n, m;
            vd_key(ca, vd_id(&x, i), &s, &n);
            vd_key(cb, vd_id(&y, i), &t, &m);
            if (vd_cmp(s, n, t, m) != 0)
                return 0;
        }
        uint64_t oa = vd_off(&x, i), ob = vd_off(&y, i);
        rc = vd_eq(ca, x.data + oa, x.dlen - oa, cb, y.data + ob, y.dlen - ob);
        if (rc != 1)
            return rc;
    }
    return 1;
}

int vread_equal(const uint8_t *m1, size_t m1len, const uint8_t *v1, size_t v1len,
                const uint8_t *m2, size_t m2len, const uint8_t *v2, size_t v2len,
                pq_err *err)
{
    vd_ctx a = {.err = err}, b = {.err = err};
    int rc = vd_run(&a, m1, m1len, v1, v1len);
    rc = rc ? rc : vd_run(&b, m2, m2len, v2, v2len);
    return rc ? rc : vd_eq(&a, v1, v1len, &b, v2, v2len);
}

/* ---- reference tree ------------------------------------------------------ */

static vread_node *vd_node(int kind)
{
    vread_node *n = calloc(1, sizeof *n);
    if (n != NULL)
        n->kind = n->p.type = kind;
    return n;
}

vread_node *vread_new(vr_type t) { return vd_node(t); }

vread_node *vread_new_int(int64_t v)
{
    vread_node *n = vd_node(VR_INT64);
    if (n != NULL)
        n->p.i = v;
    return n;
}

vread_node *vread_new_double(double v)
{
    vread_node *n = vd_node(VR_DOUBLE);
    if (n != NULL)
        n->p.d = v;
    return n;
}

vread_node *vread_new_float(float v)
{
    vread_node *n = vd_node(VR_FLOAT);
    if (n != NULL)
        n->p.f = v;
    return n;
}

vread_node *vread_new_decimal(vr_i128 unscaled, uint32_t scale)
{
    vread_node *n = vd_node(VR_DECIMAL16);
    if (n != NULL) {
        n->p.unscaled = unscaled;
        n->p.scale = scale;
    }
    return n;
}

static vread_node *vd_node_bytes(int kind, const void *p, size_t len)
{
    vread_node *n = vd_node(kind);
    uint8_t *copy = n ? malloc(len + 1) : NULL;
    if (copy == NULL) {
        free(n);
        return NULL;
    }
    if (len > 0)
        memcpy(copy, p, len);
    n->p.bytes = copy;
    n->p.len = len;
    return n;
}

vread_node *vread_new_string(const char *s, size_t len) { return vd_node_bytes(VR_STRING, s, len); }
vread_node *vread_new_binary(const void *p, size_t len) { return vd_node_bytes(VR_BINARY, p, len); }
vread_node *vread_new_uuid(const uint8_t u[16]) { return vd_node_bytes(VR_UUID, u, 16); }

vread_node *vread_new_temporal(vr_type t, int64_t v)
{
    vread_node *n = vd_node(t);
    if (n != NULL)
        n->p.i = v;
    return n;
}

int vread_add(vread_node *parent, const char *key, size_t klen, vread_node *child)
{
    if (child == NULL || (parent->kind != VR_OBJECT && parent->kind != VR_ARRAY)) {
        vread_free(child);
        return child ? PQ_EINVAL : PQ_ENOMEM;
    }
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 4;
        char **k = realloc(parent->keys, cap * sizeof *k);
        parent->keys = k ? k : parent->keys;
        size_t *l = k ? realloc(parent->key_lens, cap * sizeof *l) : NULL;
        parent->key_lens = l ? l : parent->key_lens;
        vread_node **c = l ? realloc(parent->kids, cap * sizeof *c) : NULL;
        parent->kids = c ? c : parent->kids;
        if (c == NULL) {
            vread_free(child);
            return PQ_ENOMEM;
        }
        parent->cap = cap;
    }
    char *kc = malloc(klen + 1);
    if (kc == NULL) {
        vread_free(child);
        return PQ_ENOMEM;
    }
    if (klen > 0)
        memcpy(kc, key, klen);
    parent->keys[parent->n] = kc;
    parent->key_lens[parent->n] = klen;
    parent->kids[parent->n++] = child;
    return 0;
}

void vread_free(vread_node *n)
{
    if (n == NULL)
        return;
    for (size_t i = 0; i < n->n; i++) {
        free(n->keys[i]);
        vread_free(n->kids[i]);
    }
    free(n->keys);
    free(n->key_lens);
    free(n->kids);
    free((void *)n->p.bytes);
    free(n);
}

static int vd_idx_cmp(const void *a, const void *b, void *ctx)
{
    const vread_node *n = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = vd_cmp((const uint8_t *)n->keys[i], n->key_lens[i], (const uint8_t *)n->keys[j],
                   n->key_lens[j]);
    return c ? c : (i > j) - (i < j);
}

static int vd_node_object_json(pq_buf *out, const vread_node *n)
{
    size_t *idx = malloc((n->n + 1) * sizeof *idx);
    if (idx == NULL)
        return PQ_ENOMEM;
    for (size_t i = 0; i < n->n; i++)
        idx[i] = i;
    qsort_r(idx, n->n, sizeof *idx, vd_idx_cmp, (void *)n);
    int rc = pq_buf_push(out, '{');
    bool first = true;
    for (size_t i = 0; rc == 0 && i < n->n; i++) {
        size_t a = idx[i];
        if (i + 1 < n->n && vd_cmp((const uint8_t *)n->keys[a], n->key_lens[a],
                                   (const uint8_t *)n->keys[idx[i + 1]],
                                   n->key_lens[idx[i + 1]]) == 0)
            continue;                   /* a later duplicate wins */
        rc = first ? 0 : pq_buf_push(out, ',');
        first = false;
        rc = rc ? rc : vd_json_string(out, (const uint8_t *)n->keys[a], n->key_lens[a]);
        rc = rc ? rc : pq_buf_push(out, ':');
        rc = rc ? rc : vread_node_json(out, n->kids[a]);
    }
    free(idx);
    return rc ? rc : pq_buf_push(out, '}');
}

int vread_node_json(pq_buf *out, const vread_node *n)
{
    if (n->kind == VR_OBJECT)
        return vd_node_object_json(out, n);
    if (n->kind != VR_ARRAY)
        return vd_json_prim(out, &n->p);
    int rc = pq_buf_push(out, '[');
    for (size_t i = 0; rc == 0 && i < n->n; i++) {
        rc = i ? pq_buf_push(out, ',') : 0;
        rc = rc ? rc : vread_node_json(out, n->kids[i]);
    }
    return rc ? rc : pq_buf_push(out, ']');
}

static int vd_feed_prim(vr_builder *b, const vread_node *n)
{
    const vr_prim *p = &n->p;
    switch (n->kind) {
    case VR_NULL: return vr_null(b);
    case VR_TRUE: return vr_bool(b, true);
    case VR_FALSE: return vr_bool(b, false);
    case VR_INT64: return vr_int(b, p->i);
    case VR_DOUBLE: return vr_double(b, p->d);
    case VR_FLOAT: return vr_float(b, p->f);
    case VR_DECIMAL16: return vr_decimal(b, p->unscaled, p->scale);
    case VR_STRING: return vr_string(b, (const char *)p->bytes, p->len);
    case VR_BINARY: return vr_binary(b, p->bytes, p->len);
    case VR_UUID: return vr_uuid(b, p->bytes);
    case VR_DATE: return vr_date(b, (int32_t)p->i);
    case VR_TIME_NTZ_MICROS: return vr_time(b, p->i);
    case VR_TIMESTAMP_MICROS: return vr_timestamp(b, p->i, VR_MICROS, true);
    case VR_TIMESTAMP_NTZ_MICROS: return vr_timestamp(b, p->i, VR_MICROS, false);
    case VR_TIMESTAMP_NANOS: return vr_timestamp(b, p->i, VR_NANOS, true);
    case VR_TIMESTAMP_NTZ_NANOS: return vr_timestamp(b, p->i, VR_NANOS, false);
    default: return PQ_EINVAL;
    }
}

int vread_node_feed(vr_builder *b, const vread_node *n)
{
    if (n->kind != VR_OBJECT && n->kind != VR_ARRAY)
        return vd_feed_prim(b, n);
    bool obj = n->kind == VR_OBJECT;
    int rc = obj ? vr_begin_object(b) : vr_begin_array(b);
    for (size_t i = 0; rc == 0 && i < n->n; i++) {
        rc = obj ? vr_key(b, n->keys[i], n->key_lens[i]) : 0;
        rc = rc ? rc : vread_node_feed(b, n->kids[i]);
    }
    return rc ? rc : (obj ? vr_end_object(b) : vr_end_array(b));
}
