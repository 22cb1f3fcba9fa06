/* scalar.c - text and number conversions for typed columns (see scalar.h).
 * All arithmetic is exact: integers and 128-bit decimals, never doubles,
 * so a timestamp or decimal lands bit-for-bit what the log said. */
#include "scalar.h"
#include "err.h"

#include <math.h>
#include <string.h>

static const int64_t UNITS_PER_SEC[] = {0, 1000, 1000000, 1000000000};

/* Howard Hinnant's days_from_civil: proleptic Gregorian, any year. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* Reads exactly `width` digits at s[*i]. */
static bool digits(const char *s, size_t n, size_t *i, int width, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < width; k++, (*i)++) {
        if (*i >= n || s[*i] < '0' || s[*i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[*i] - '0');
    }
    *out = v;
    return true;
}

static int parse_ymd(const char *s, size_t n, size_t *i, int64_t *days)
{
    unsigned y, m, d;
    if (!digits(s, n, i, 4, &y) || *i >= n || s[(*i)++] != '-' ||
        !digits(s, n, i, 2, &m) || *i >= n || s[(*i)++] != '-' || !digits(s, n, i, 2, &d))
        return PQ_ETYPE;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
        return PQ_ETYPE;
    *days = days_from_civil(y, m, d);
    return PQ_OK;
}

/* HH:MM:SS[.fraction] to nanoseconds since midnight. */
static int parse_hms(const char *s, size_t n, size_t *i, int64_t *nanos)
{
    unsigned h, mi, se;
    if (!digits(s, n, i, 2, &h) || *i >= n || s[(*i)++] != ':' ||
        !digits(s, n, i, 2, &mi) || *i >= n || s[(*i)++] != ':' || !digits(s, n, i, 2, &se))
        return PQ_ETYPE;
    if (h > 23 || mi > 59 || se > 60) /* 60: a leap second, folded below */
        return PQ_ETYPE;
    int64_t frac = 0;
    if (*i < n && (s[*i] == '.' || s[*i] == ',')) {
        (*i)++;
        int nd = 0;
        for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++, nd++)
            if (nd < 9)
                frac = frac * 10 + (s[*i] - '0');
        if (nd == 0)
            return PQ_ETYPE;
        for (; nd < 9; nd++)
            frac *= 10;
    }
    if (se == 60)
        se = 59, frac = 999999999; /* POSIX time has no leap seconds */
    *nanos = ((int64_t)h * 3600 + mi * 60 + se) * 1000000000LL + frac;
    return PQ_OK;
}

static int parse_zone(const char *s, size_t n, size_t *i, int64_t *offset_sec)
{
    *offset_sec = 0;
    if (*i == n)
        return PQ_OK; /* no zone: taken as UTC */
    if (s[*i] == 'Z' || s[*i] == 'z') {
        (*i)++;
        return PQ_OK;
    }
    if (s[*i] != '+' && s[*i] != '-')
        return PQ_ETYPE;
    int sign = s[(*i)++] == '-' ? -1 : 1;
    unsigned hh, mm = 0;
    if (!digits(s, n, i, 2, &hh))
        return PQ_ETYPE;
    if (*i < n && s[*i] == ':')
        (*i)++;
    if (*i < n && !digits(s, n, i, 2, &mm))
        return PQ_ETYPE;
    if (hh > 23 || mm > 59)
        return PQ_ETYPE;
    *offset_sec = sign * ((int64_t)hh * 3600 + mm * 60);
    return PQ_OK;
}

static inline int floor_div(int64_t a, int64_t b, int64_t *out)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    *out = q;
    return PQ_OK;
}

/* seconds and nanoseconds to the unit, with overflow checks. */
static inline int to_unit(int64_t secs, int64_t nanos, pq_time_unit unit, int64_t *out)
{
    int64_t per = UNITS_PER_SEC[unit], sub, v;
    /* each unit's divisor a constant: the compiler's multiply, not two
     * 64-bit idivs (tens of cycles each) per timestamp */
    switch (unit) {
    case PQ_UNIT_MILLIS: floor_div(nanos, 1000000, &sub); break;
    case PQ_UNIT_MICROS: floor_div(nanos, 1000, &sub); break;
    case PQ_UNIT_NANOS: sub = nanos; break;
    default: floor_div(nanos, 1000000000LL / per, &sub); break;
    }
    if (__builtin_mul_overflow(secs, per, &v) || __builtin_add_overflow(v, sub, &v))
        return PQ_ELIMIT;
    *out = v;
    return PQ_OK;
}

int sk_parse_timestamp_general(const char *s, size_t n, pq_time_unit unit, int64_t *out)
{
    size_t i = 0;
    int64_t days, nanos, zone;
    if (parse_ymd(s, n, &i, &days) != 0 || i >= n ||
        (s[i] != 'T' && s[i] != 't' && s[i] != ' '))
        return PQ_ETYPE;
    i++;
    if (parse_hms(s, n, &i, &nanos) != 0 || parse_zone(s, n, &i, &zone) != 0 || i != n)
        return PQ_ETYPE;
    int64_t secs = days * 86400 + nanos / 1000000000LL - zone;
    return to_unit(secs, nanos % 1000000000LL, unit, out);
}

/* Two ASCII digits at p into *v; false if either is not a digit. */
static inline bool two_digits(const char *p, unsigned *v)
{
    const unsigned a = (unsigned)(unsigned char)p[0] - '0';
    const unsigned b = (unsigned)(unsigned char)p[1] - '0';
    *v = a * 10 + b;
    return a < 10 && b < 10;
}

/* The layout nearly every log writes: "YYYY-MM-DDTHH:MM:SS", then
 * optionally '.' and 1 to 9 digits, then "Z", "+HH:MM", "-HH:MM" or
 * nothing, each field at its fixed place. One length check instead of one
 * per digit, no leap second: the general parse's cost was mostly its
 * bounds checks and calls (about 500 instructions a timestamp, callgrind
 * of the access-log convert). Fills the seconds since the epoch and the
 * nanoseconds, as the general parse computes them, and returns true; false
 * for anything else, which the general parse then decides. */
static bool timestamp_fixed(const char *s, size_t n, int64_t *secs, int64_t *nanos)
{
    unsigned y1, y2, mo, d, h, mi, se;
    if (n < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':' || !two_digits(s, &y1) || !two_digits(s + 2, &y2) ||
        !two_digits(s + 5, &mo) || !two_digits(s + 8, &d) || !two_digits(s + 11, &h) ||
        !two_digits(s + 14, &mi) || !two_digits(s + 17, &se))
        return false;
    const unsigned y = y1 * 100 + y2;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59)
        return false;
    size_t i = 19;
    int64_t frac = 0;
    if (i < n && s[i] == '.') {
        const size_t f = ++i;
        while (i < n && i - f < 9 && (unsigned)(unsigned char)s[i] - '0' < 10)
            frac = frac * 10 + (s[i++] - '0');
        if (i == f || (i < n && (unsigned)(unsigned char)s[i] - '0' < 10))
            return false; /* no digit, or more than 9 */
        static const int64_t scale[] = {1,         10,        100,     1000, 10000,
                                        100000,    1000000,   10000000, 100000000,
                                        1000000000};
        frac *= scale[9 - (i - f)];
    }
    int64_t zone = 0;
    if (i < n && s[i] == 'Z') {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        unsigned zh, zm;
        if (n - i < 6 || s[i + 3] != ':' || !two_digits(s + i + 1, &zh) ||
            !two_digits(s + i + 4, &zm) || zh > 23 || zm > 59)
            return false;
        zone = (s[i] == '-' ? -1 : 1) * ((int64_t)zh * 3600 + zm * 60);
        i += 6;
    }
    if (i != n)
        return false;
    *secs = days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + mi * 60 + se - zone;
    *nanos = frac;
    return true;
}

int sk_parse_timestamp(const char *s, size_t n, pq_time_unit unit, int64_t *out)
{
    int64_t secs, nanos;
    if (timestamp_fixed(s, n, &secs, &nanos))
        return to_unit(secs, nanos, unit, out);
    return sk_parse_timestamp_general(s, n, unit, out);
}

int sk_epoch_number(const json_number *num, pq_time_unit unit, int64_t *out)
{
    if (num->kind == JSON_NUM_INT64) {
        *out = num->i;
        return PQ_OK;
    }
    json_int128 v;
    int32_t scale;
    if (json_number_decimal(num, &v, &scale) != 0)
        return PQ_ELIMIT;
    /* seconds * 10^unit_digits, then drop the remaining fraction (floor) */
    int unit_digits = unit == PQ_UNIT_MILLIS ? 3 : unit == PQ_UNIT_MICROS ? 6 : 9;
    int shift = unit_digits - scale;
    for (; shift > 0; shift--)
        if (__builtin_mul_overflow(v, (json_int128)10, &v))
            return PQ_ELIMIT;
    for (; shift < 0; shift++) {
        json_int128 q = v / 10;
        if (v % 10 != 0 && v < 0)
            q--;
        v = q;
    }
    if (v > INT64_MAX || v < INT64_MIN)
        return PQ_ELIMIT;
    *out = (int64_t)v;
    return PQ_OK;
}

int sk_parse_date(const char *s, size_t n, int32_t *days)
{
    size_t i = 0;
    int64_t d;
    if (parse_ymd(s, n, &i, &d) != 0 || i != n)
        return PQ_ETYPE;
    if (d > INT32_MAX || d < INT32_MIN)
        return PQ_ELIMIT;
    *days = (int32_t)d;
    return PQ_OK;
}

int sk_parse_time(const char *s, size_t n, pq_time_unit unit, int64_t *out)
{
    size_t i = 0;
    int64_t nanos;
    if (parse_hms(s, n, &i, &nanos) != 0 || i != n)
        return PQ_ETYPE;
    return to_unit(nanos / 1000000000LL, nanos % 1000000000LL, unit, out);
}

static json_int128 pow10_128(int k)
{
    json_int128 p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

/* v * 10^-from_scale as an unscaled value at to_scale, exactly. */
static int rescale(json_int128 v, int from_scale, int to_scale, int precision,
                   json_int128 *out)
{
    if (from_scale > to_scale) {
        json_int128 p = pow10_128(from_scale - to_scale > 38 ? 38 : from_scale - to_scale);
        if (from_scale - to_scale > 38 || v % p != 0)
            return PQ_ELIMIT; /* digits below the scale: would need rounding */
        v /= p;
    }
    for (int k = from_scale; k < to_scale; k++)
        if (__builtin_mul_overflow(v, (json_int128)10, &v))
            return PQ_ELIMIT;
    json_int128 limit = pow10_128(precision);
    if (v >= limit || v <= -limit)
        return PQ_ELIMIT;
    *out = v;
    return PQ_OK;
}

int sk_decimal_from_number(const json_number *num, int precision, int scale, json_int128 *out)
{
    json_int128 v;
    int32_t sc;
    if (json_number_decimal(num, &v, &sc) != 0)
        return PQ_ELIMIT;
    return rescale(v, sc, scale, precision, out);
}

int sk_decimal_from_string(const char *s, size_t n, int precision, int scale, json_int128 *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    unsigned __int128 v = 0;
    int nd = 0, frac = 0;
    bool seen_digit = false, in_frac = false;
    for (; i < n; i++) {
        if (s[i] == '.' && !in_frac) {
            in_frac = true;
            continue;
        }
        if (s[i] < '0' || s[i] > '9')
            break;
        seen_digit = true;
        if (v != 0 || s[i] != '0')
            nd++;
        if (nd > 38)
            return PQ_ELIMIT;
        v = v * 10 + (unsigned)(s[i] - '0');
        frac += in_frac;
    }
    int64_t exp = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = i < n && s[i] == '-';
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t start = i;
        for (; i < n && s[i] >= '0' && s[i] <= '9' && exp < 1000; i++)
            exp = exp * 10 + (s[i] - '0');
        if (i == start)
            return PQ_ETYPE;
        exp = eneg ? -exp : exp;
    }
    if (!seen_digit || i != n)
        return PQ_ETYPE;
    json_int128 sv = neg ? -(json_int128)v : (json_int128)v;
    int64_t sc = frac - exp;
    if (sc < -38 || sc > 76)
        return PQ_ELIMIT;
    for (; sc < 0; sc++) /* a positive exponent: scale the digits up */
        if (__builtin_mul_overflow(sv, (json_int128)10, &sv))
            return PQ_ELIMIT;
    return rescale(sv, (int)sc, scale, precision, out);
}

size_t sk_decimal_bytes(json_int128 v, uint8_t out[16], size_t len)
{
    uint8_t be[16];
    unsigned __int128 u = (unsigned __int128)v;
    for (int i = 15; i >= 0; i--, u >>= 8)
        be[i] = (uint8_t)u;
    if (len == 0) { /* minimal: drop sign-extension bytes */
        size_t start = 0;
        while (start < 15 && ((be[start] == 0x00 && !(be[start + 1] & 0x80)) ||
                              (be[start] == 0xFF && (be[start + 1] & 0x80))))
            start++;
        len = 16 - start;
    }
    memcpy(out, be + 16 - len, len);
    return len;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int sk_parse_uuid(const char *s, size_t n, uint8_t out[16])
{
    if (n != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
        return PQ_ETYPE;
    size_t o = 0;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            continue;
        int hi = hexval(s[i]), lo = hexval(s[i + 1]);
        if (hi < 0 || lo < 0)
            return PQ_ETYPE;
        out[o++] = (uint8_t)(hi << 4 | lo);
        i++;
    }
    return PQ_OK;
}

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

int sk_base64_decode(const char *s, size_t n, pq_buf *out)
{
    while (n > 0 && s[n - 1] == '=')
        n--;
    if (n % 4 == 1)
        return PQ_ETYPE;
    if (pq_buf_reserve(out, n / 4 * 3 + 3) != 0)
        return PQ_ENOMEM;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val(s[i]);
        if (v < 0)
            return PQ_ETYPE;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out->data[out->len++] = (uint8_t)(acc >> bits);
        }
    }
    return PQ_OK;
}

/* Via the float bits: exponent rebias, round to nearest even on the
 * dropped mantissa bits, overflow to infinity, subnormals by shifting. */
uint16_t sk_float16_from_double(double d)
{
    float f = (float)d;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t mant = x & 0x7FFFFF;
    int exp = (int)((x >> 23) & 0xFF);
    if (exp == 0xFF)
        return sign | 0x7C00 | (mant ? 0x200 : 0);
    int e = exp - 127 + 15;
    if (e >= 31)
        return sign | 0x7C00;
    if (e <= 0) {
        if (e < -10)
            return sign;
        mant |= 0x800000;
        int shift = 14 - e;
        uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return sign | (uint16_t)half;
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1FFF;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
        half++; /* may carry into the exponent, up to infinity: correct */
    return sign | (uint16_t)half;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* One "<number><designator>" item; the number may have a fraction only
 * for seconds. Returns the designator or 0. */
static char duration_item(const char *s, size_t n, size_t *i, uint64_t *whole, uint64_t *milli)
{
    uint64_t w = 0;
    size_t start = *i;
    for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++)
        if (__builtin_mul_overflow(w, 10, &w) || __builtin_add_overflow(w, (uint64_t)(s[*i] - '0'), &w))
            return 0;
    if (*i == start)
        return 0;
    *milli = 0;
    if (*i < n && (s[*i] == '.' || s[*i] == ',')) {
        (*i)++;
        int nd = 0;
        for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++, nd++) {
            if (nd < 3)
                *milli = *milli * 10 + (uint64_t)(s[*i] - '0');
            else if (s[*i] != '0')
                return 0; /* below a millisecond: INTERVAL cannot hold it */
        }
        for (; nd < 3; nd++)
            *milli *= 10;
        if (*i >= n || s[*i] != 'S')
            return 0;
    }
    *whole = w;
    return *i < n ? s[(*i)++] : 0;
}

int sk_parse_interval(const char *s, size_t n, uint8_t out[12])
{
    size_t i = 0;
    if (n < 2 || s[i++] != 'P')
        return PQ_ETYPE;
    uint64_t months = 0, days = 0, millis = 0;
    bool in_time = false;
    while (i < n) {
        if (s[i] == 'T' && !in_time) {
            in_time = true;
            i++;
            continue;
        }
        uint64_t w = 0, ms = 0;
        char d = duration_item(s, n, &i, &w, &ms);
        uint64_t add;
        if (!in_time && d == 'Y') months += w * 12;
        else if (!in_time && d == 'M') months += w;
        else if (!in_time && d == 'W') days += w * 7;
        else if (!in_time && d == 'D') days += w;
        else if (in_time && d == 'H' && !__builtin_mul_overflow(w, 3600000, &add)) millis += add;
        else if (in_time && d == 'M' && !__builtin_mul_overflow(w, 60000, &add)) millis += add;
        else if (in_time && d == 'S' && !__builtin_mul_overflow(w, 1000, &add)) millis += add + ms;
        else return PQ_ETYPE;
    }
    if (months > UINT32_MAX || days > UINT32_MAX || millis > UINT32_MAX)
        return PQ_ELIMIT;
    put_le32(out, (uint32_t)months);
    put_le32(out + 4, (uint32_t)days);
    put_le32(out + 8, (uint32_t)millis);
    return PQ_OK;
}

/* A number is an integer when its exact decimal form has no fraction
 * (so 1e3 and 10.0 are integers, 1.5 is not). */
static int exact_integer(const json_number *num, json_int128 *out)
{
    if (num->kind == JSON_NUM_INT64) {
        *out = num->i;
        return PQ_OK;
    }
    if (num->kind == JSON_NUM_UINT64) {
        *out = num->u;
        return PQ_OK;
    }
    json_int128 v;
    int32_t sc;
    if (json_number_decimal(num, &v, &sc) != 0)
        return PQ_ELIMIT;
    return rescale(v, sc, 0, 38, out) == 0 ? PQ_OK : PQ_ETYPE;
}

int sk_int_signed(const json_number *num, int bits, int64_t *out)
{
    /* the common case in 64 bits: the 128-bit path below cost an integer
     * column about 35 instructions a value */
    if (num->kind == JSON_NUM_INT64 && bits >= 1 && bits <= 64) {
        const int64_t lim = bits == 64 ? 0 : (int64_t)1 << (bits - 1);
        if (bits != 64 && (num->i >= lim || num->i < -lim))
            return PQ_ELIMIT;
        *out = num->i;
        return PQ_OK;
    }
    json_int128 v;
    int rc = exact_integer(num, &v);
    if (rc != 0)
        return rc;
    json_int128 max = ((json_int128)1 << (bits - 1)) - 1;
    if (v > max || v < -max - 1)
        return PQ_ELIMIT;
    *out = (int64_t)v;
    return PQ_OK;
}

int sk_int_unsigned(const json_number *num, int bits, uint64_t *out)
{
    json_int128 v;
    int rc = exact_integer(num, &v);
    if (rc != 0)
        return rc;
    json_int128 max = bits == 64 ? (json_int128)UINT64_MAX : ((json_int128)1 << bits) - 1;
    if (v < 0 || v > max)
        return PQ_ELIMIT;
    *out = (uint64_t)v;
    return PQ_OK;
}
