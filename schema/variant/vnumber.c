/* vnumber.c - JSON numbers as Variant values: which Variant type each JSON
 * number becomes (VariantEncoding.md, "Encoding types"), and the shortest
 * round-trip test that choice rests on. README "Numbers in Variant
 * columns" states the same rule for users.
 *
 * The rule (vr_number_from_json, vr_json_number), for every Variant parqd
 * builds from JSON (Variant columns, `*` rest columns, Variants inside
 * structs and lists; shredding then stores the result, see vshred.h):
 *   1. Integer syntax (no '.', no exponent): the narrowest of int8, int16,
 *      int32, int64 that holds it ("-0" is int8 0); beyond int64, up to 38
 *      digits, a decimal with scale 0 (Variant has no wider or unsigned
 *      integer; a decimal keeps it exact and in the Exact Numeric class,
 *      so a 64-bit counter never flips type with its value).
 *   2. Fraction or exponent ("2.5", "1.0", "1E+2", "1e0"): a double when
 *      the shortest decimal that reads back as that double -- what DuckDB,
 *      JavaScript, Python and Java print for it -- has the text's value:
 *      0.1, 19.990, 25.122, 1E+2, 0.30000000000000004, 5e-324. Every
 *      reader then shows the number as written (up to trailing zeros and
 *      exponent form). Zero is a double and keeps its sign ("-0.0").
 *   3. A fraction whose digits no double keeps (12345678901234567.8,
 *      3.14159265358979323846): a decimal with the digits as written
 *      (trailing zeros dropped), when it has an integer digit (|x| >= 1)
 *      and at most 38 significant digits; an integral value written with
 *      an exponent (1.8446744073709551615e19) is a decimal with scale 0.
 *   4. Everything else is the correctly rounded double, as before this
 *      rule and as JSON readers do: |x| < 1 with more digits than a double
 *      keeps (0.20579910278320313 reads back 0.20579910278320312, Zeek's
 *      17-digit rounding of the double ...8125), more than 38 significant
 *      digits, integers of 39 or more digits. This is the only lossy case;
 *      the value is the one every JSON parser gives the text. A number
 *      whose double is infinite is refused (PQ_ETYPE; the JSON parser
 *      refuses such lines before they get here).
 *
 * Why. Readers derive a Variant decimal's precision from the digits of its
 * unscaled value (VariantEncoding.md: "implied precision"), so a decimal
 * below 1 has scale >= precision. DuckDB 1.5.6 dies on scale > precision
 * (SIGFPE in CAST(v AS JSON); variant_typeof says DECIMAL(16, 17)) and
 * prints scale == precision as ".75", which is not JSON; its own JSON to
 * VARIANT cast stores fractions as doubles. So: doubles where they are
 * exact in the sense readers show, decimals only where a double would lose
 * digits and the decimal is one readers handle (scale < precision, which
 * vr_decimal enforces), and the double where nothing exact is valid.
 * Strings would keep those digits but change the JSON type of the field in
 * some rows (a number in most rows, a string in a few), which breaks
 * queries and downstream JSON consumers more than the 17th digit does.
 *
 * Cost. Numbers of up to 15 significant digits in the normal double range
 * are decided without any conversion (C's DBL_DIG guarantee, below); 16
 * and 17 digits (Zeek's durations and timestamps) are decided in 128-bit
 * integer arithmetic when the magnitudes allow
 * (vn_is_shortest_exact: about 1e-13 .. 1e15), otherwise by two
 * strtod and one snprintf (about 0.5 us); 18 or more digits cannot be a
 * shortest form. */
#include "variant.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the shortest round-trip test ---------------------------------------- */

/* strtod of m * 10^e, written without a radix character, so that no locale
 * can change how it reads. */
static double vn_strtod_me(uint64_t m, int64_t e)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%" PRIu64 "e%" PRId64, m, e);
    return strtod(buf, NULL);
}

/* Drops trailing zeros of m (m != 0), raising e to match. */
static void vn_trim(unsigned __int128 *m, int64_t *e)
{
    while (*m % 10 == 0) {
        *m /= 10;
        ++*e;
    }
}

static unsigned vn_digits(unsigned __int128 u)
{
    unsigned d = 1;
    for (; u >= 10; u /= 10)
        d++;
    return d;
}

/* The nd-digit decimal nearest to x > 0, as (m, e) with trailing zeros
 * dropped. glibc's printf converts exactly, ties to even (as shortest-form
 * printers break ties); digits are read around the radix character, which
 * the locale may change. trim false: m keeps its nd digits. */
static void vn_nearest_raw(double x, unsigned nd, bool trim, uint64_t *m, int64_t *e)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%.*e", (int)nd - 1, x);
    unsigned __int128 d = 0;
    const char *p = buf;
    unsigned k = 0;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            d = d * 10 + (unsigned)(*p - '0'), k++;
    int64_t q = *p == 'e' ? strtol(p + 1, NULL, 10) : 0;
    int64_t ex = q - (int64_t)k + 1;
    if (d != 0 && trim)
        vn_trim(&d, &ex);
    *m = (uint64_t)d;
    *e = ex;
}

static void vn_nearest(double x, unsigned nd, uint64_t *m, int64_t *e)
{
    vn_nearest_raw(x, nd, true, m, e);
}

/* 5^k, k <= 31 (< 2^72). */
static unsigned __int128 vn_pow5(unsigned k)
{
    unsigned __int128 p = 1;
    while (k--)
        p *= 5;
    return p;
}

/* vn_is_shortest in exact integer arithmetic, for the common magnitudes:
 * 1 (yes), 0 (no), -1 (out of range: ask the slow path). With x = M * 2^q
 * and the decimal m * 10^e, e = -k, everything is scaled by 4 * 2^s * 10^k
 * (s = -(q + k)), which makes x, the decimal, the half-gaps around x and
 * the decimal grid all integers below 2^128 when 0 <= k <= 31 and
 * 0 <= s <= 68 (numbers from about 1e-13 to 1e15 with 16 or 17 digits:
 * Zeek's durations and epoch timestamps). On exact values: the decimal
 * rounds to x, neither neighbour one digit shorter does, and no nd-digit
 * decimal nearer to x rounds to x (a tie goes to the even digit, as
 * shortest-form printers break it). */
static int vn_is_shortest_exact(uint64_t m, int64_t e, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    unsigned bexp = (unsigned)(bits >> 52) & 0x7FF;
    uint64_t frac = bits & ((UINT64_C(1) << 52) - 1);
    uint64_t mant = bexp ? frac | UINT64_C(1) << 52 : frac;
    int64_t q = bexp ? (int64_t)bexp - 1075 : -1074;
    int64_t k = -e, s = -(q + k);
    if (k < 0 || k > 31 || s < 0 || s > 68)
        return -1;
    unsigned __int128 p5 = vn_pow5((unsigned)k);
    unsigned __int128 X = ((unsigned __int128)mant * p5) << 2;      /* x */
    unsigned __int128 hi = p5 << 1;                                 /* half gap above */
    unsigned __int128 lo = frac == 0 && bexp > 1 ? p5 : hi;          /* below: half at 2^n */
    unsigned __int128 unit = (unsigned __int128)4 << s;             /* 10^e */
    bool closed = (mant & 1) == 0;                                  /* ties to even */
    /* does the decimal d (in units of 10^e) round to x? */
#define VN_ROUNDS_TO_X(d)                                                        \
    (closed ? (d) * unit >= X - lo && (d) * unit <= X + hi                      \
            : (d) * unit > X - lo && (d) * unit < X + hi)
    unsigned __int128 D = (unsigned __int128)m;
    if (!VN_ROUNDS_TO_X(D))
        return 0;                                   /* not x's decimal at all */
    uint64_t f = m / 10;
    if (f > 0 && (VN_ROUNDS_TO_X((unsigned __int128)f * 10) ||
                  VN_ROUNDS_TO_X((unsigned __int128)(f + 1) * 10)))
        return 0;                                   /* a shorter one reads back */
    /* Of the nd-digit decimals that read back as x, m must be the nearest:
     * only its neighbour towards x can be nearer (m has nd >= 16 digits and
     * no trailing zero, so that neighbour has nd digits too). */
    unsigned __int128 Ds = D * unit, half = unit >> 1;
    unsigned __int128 diff = Ds > X ? Ds - X : X - Ds;
    unsigned __int128 toward = Ds > X ? D - 1 : D + 1;
    bool near_ok = VN_ROUNDS_TO_X(toward);
#undef VN_ROUNDS_TO_X
    if (diff < half)
        return 1;
    if (diff > half)
        return !near_ok;
    return (m & 1) == 0 || !near_ok;                /* a tie: the even digit */
}

/* True when m * 10^e (nd digits, no trailing zero, m > 0) is the shortest
 * decimal that reads back as x, the correctly rounded double of that same
 * value (x > 0, finite) -- the decimal DuckDB, JavaScript's Number#toString
 * and Python's repr print for x: fewest significant digits, then nearest
 * to x. False positives would change numbers, so every shortcut is exact;
 * a false negative would only make the caller pick a decimal (exact too)
 * or the same double. */
static bool vn_is_shortest(uint64_t m, unsigned nd, int64_t e, double x)
{
    if (nd > 17)
        return false;                   /* 17 digits always suffice */
    /* DBL_DIG (15): two different decimals of <= 15 digits never round to
     * the same normal double, so the only one x reads back as is this one,
     * and no shorter one reads back as x either. */
    if (nd <= 15 && x >= DBL_MIN)
        return true;
    int exact = vn_is_shortest_exact(m, e, x);
    if (exact >= 0)
        return exact;
    /* No (nd-1)-digit decimal reads back as x: the set of decimals that
     * round to x is an interval containing m * 10^e, so if any shorter one
     * is in it, so is one of the two shorter neighbours of m * 10^e. */
    if (nd > 1) {
        uint64_t f = m / 10;
        if (vn_strtod_me(f, e + 1) == x || vn_strtod_me(f + 1, e + 1) == x)
            return false;
    }
    /* Of the nd-digit decimals that round to x, the nearest is printed.
     * When the nearest of all, n, is another one, only n or m's neighbour
     * towards it can be nearer than m; if neither reads back as x (at a
     * power of two, whose lower half-gap is half the upper one), m is the
     * nearest one that does. */
    uint64_t nm;
    int64_t ne;
    vn_nearest(x, nd, &nm, &ne);
    if (nm == m && ne == e)
        return true;
    if (ne < e || ne - e > 19)
        return false;                   /* not on m's grid: cannot happen */
    unsigned __int128 n = nm;
    for (int64_t i = 0; i < ne - e; i++)
        n *= 10;
    if (n == 0 || n >= (unsigned __int128)UINT64_MAX)
        return false;
    uint64_t toward = n < m ? m - 1 : m + 1;
    return vn_strtod_me((uint64_t)n, e) != x && vn_strtod_me(toward, e) != x &&
           vn_strtod_me(m, e) == x;
}

bool vr_double_decimal(double x, uint32_t scale, vr_i128 *unscaled)
{
    if (!isfinite(x) || scale > VR_MAX_DECIMAL_DIGITS || (x == 0 && signbit(x)))
        return false;                   /* -0.0: an exact type would drop the sign */
    if (x == 0) {
        *unscaled = 0;
        return true;
    }
    double a = fabs(x);
    /* The shortest form has the fewest digits of any decimal that reads
     * back as x, so it is found at the first length where the nearest
     * decimal, or its neighbour on x's other side (at a power of two, whose
     * lower half-gap is the narrower), reads back as x. */
    for (unsigned nd = 1; nd <= 17; nd++) {
        uint64_t n0;
        int64_t e0;
        vn_nearest_raw(a, nd, false, &n0, &e0);
        uint64_t cand[2] = {n0, vn_strtod_me(n0, e0) < a ? n0 + 1 : n0 - 1};
        for (int c = 0; c < 2; c++) {
            unsigned __int128 m = cand[c];
            int64_t e = e0;
            if (m == 0)
                continue;
            vn_trim(&m, &e);
            unsigned k = vn_digits(m);
            if (vn_strtod_me((uint64_t)m, e) != a || !vn_is_shortest((uint64_t)m, k, e, a))
                continue;
            /* m * 10^e at `scale`: no digit below 10^-scale, below 10^38 */
            if (e < -(int64_t)scale || (int64_t)k + e + scale > VR_MAX_DECIMAL_DIGITS)
                return false;
            unsigned __int128 u = m;
            for (int64_t i = 0; i < e + (int64_t)scale; i++)
                u *= 10;
            *unscaled = x < 0 ? -(vr_i128)u : (vr_i128)u;
            return true;
        }
    }
    return false;                       /* not reached: 17 digits read back */
}

/* ---- JSON numbers -------------------------------------------------------- */

/* Digit i of int_digits followed by frac_digits. */
static int vn_digit(const vr_json_num *n, size_t i)
{
    return (i < n->int_len ? n->int_digits[i] : n->frac_digits[i - n->int_len]) - '0';
}

/* The significant digits digit(lead) .. digit(lead + nd - 1), as a number
 * (nd <= 38). */
static unsigned __int128 vn_value(const vr_json_num *n, size_t lead, size_t nd)
{
    unsigned __int128 u = 0;
    for (size_t i = lead; i < lead + nd; i++)
        u = u * 10 + (unsigned)vn_digit(n, i);
    return u;
}

static int vn_double(vr_builder *b, const vr_json_num *n)
{
    if (!isfinite(n->d))
        return pq_err_set(&b->err, PQ_ETYPE, "variant: number with %zu digits and exponent "
                          "%lld is out of double range", n->int_len + n->frac_len,
                          (long long)n->exp10);
    return vr_double(b, n->d);
}

/* u * 10^pad as a decimal of scale `scale` (sign from n); digits <= 38. */
static int vn_decimal(vr_builder *b, const vr_json_num *n, unsigned __int128 u, int64_t pad,
                      uint32_t scale)
{
    while (pad-- > 0)
        u *= 10;
    return vr_decimal(b, n->negative ? -(vr_i128)u : (vr_i128)u, scale);
}

/* Integer syntax: rule 1 (digits counted from the first non-zero one). */
static int vn_integer(vr_builder *b, const vr_json_num *n, size_t lead, size_t total)
{
    size_t digits = total - lead;
    if (digits == 0)
        return vr_int(b, 0);            /* "0", "-0": integers have no -0 */
    if (digits <= 19) {
        uint64_t u = 0;                 /* < 10^19 < 2^64: no overflow */
        for (size_t i = lead; i < total; i++)
            u = u * 10 + (unsigned)vn_digit(n, i);
        if (!n->negative)
            return vr_uint64(b, u);     /* above INT64_MAX: decimal, scale 0 */
        if (u <= (uint64_t)INT64_MAX + 1)
            return vr_int(b, u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u);
    }
    if (digits <= VR_MAX_DECIMAL_DIGITS)
        return vn_decimal(b, n, vn_value(n, lead, digits), 0, 0);
    return vn_double(b, n);
}

int vr_number_from_json(vr_builder *b, const vr_json_num *n)
{
    size_t total = n->int_len + n->frac_len;
    if (n->int_len == 0 || n->int_digits == NULL || (n->frac_len && n->frac_digits == NULL) ||
        total < n->int_len || n->frac_len > INT32_MAX)
        return pq_err_set(&b->err, PQ_EINVAL, "variant: malformed JSON number parts");
    for (size_t i = 0; i < total; i++)
        if ((unsigned)vn_digit(n, i) > 9)
            return pq_err_set(&b->err, PQ_EINVAL, "variant: JSON number digit is not 0-9");
    size_t lead = 0;
    while (lead < total && vn_digit(n, lead) == 0)
        lead++;
    if (n->frac_len == 0 && n->exp10 == 0 && !n->has_exp)
        return vn_integer(b, n, lead, total);
    if (lead == total)                  /* 0.0, -0.0, 0e5: the sign stays */
        return vr_double(b, n->negative ? -0.0 : 0.0);
    if (!isfinite(n->d))
        return vn_double(b, n);
    /* |value| = digits[lead, lead + nd) * 10^e, no trailing zero */
    size_t last = total - 1;
    while (vn_digit(n, last) == 0)
        last--;
    size_t nd = last - lead + 1;
    int64_t x10 = n->exp10 > 2000000000 ? 2000000000
                : n->exp10 < -2000000000 ? -2000000000 : n->exp10;
    int64_t e = x10 - (int64_t)n->frac_len + (int64_t)(total - 1 - last);
    if (nd <= 17 && vn_is_shortest((uint64_t)vn_value(n, lead, nd), (unsigned)nd, e,
                                   fabs(n->d)))
        return vr_double(b, n->d);                          /* rule 2 */
    if (e >= 0 && (int64_t)nd + e <= VR_MAX_DECIMAL_DIGITS)
        return vn_decimal(b, n, vn_value(n, lead, nd), e, 0);   /* rule 3, integral */
    if (e < 0 && nd <= VR_MAX_DECIMAL_DIGITS && -e < (int64_t)nd)
        return vn_decimal(b, n, vn_value(n, lead, nd), 0, (uint32_t)-e);  /* rule 3 */
    return vn_double(b, n);                                 /* rule 4 */
}

static size_t vn_scan_digits(const char *t, size_t i, size_t len)
{
    while (i < len && t[i] >= '0' && t[i] <= '9')
        i++;
    return i;
}

/* Splits text by RFC 8259's number grammar. The double comes from strtod
 * of the digits with the exponent adjusted ("12.5e3" reads as "125e2"),
 * so no radix character is involved and no locale can change it. */
int vr_json_number(vr_builder *b, const char *text, size_t len)
{
    vr_json_num n = {0};
    size_t i = 0, j;
    if (i < len && text[i] == '-')
        n.negative = true, i++;
    j = vn_scan_digits(text, i, len);
    n.int_digits = text + i;
    n.int_len = j - i;
    bool bad = n.int_len == 0 || (n.int_len > 1 && text[i] == '0');
    i = j;
    if (!bad && i < len && text[i] == '.') {
        j = vn_scan_digits(text, i + 1, len);
        n.frac_digits = text + i + 1;
        n.frac_len = j - i - 1;
        bad = n.frac_len == 0;
        i = j;
    }
    if (!bad && i < len && (text[i] == 'e' || text[i] == 'E')) {
        n.has_exp = true;
        bool neg = ++i < len && text[i] == '-';
        i += i < len && (text[i] == '-' || text[i] == '+');
        j = vn_scan_digits(text, i, len);
        bad = j == i;
        for (; i < j; i++)              /* saturate: 1e9 is past any limit */
            n.exp10 = n.exp10 >= 1000000000 ? n.exp10 : n.exp10 * 10 + (text[i] - '0');
        n.exp10 = neg ? -n.exp10 : n.exp10;
    }
    if (bad || i != len)
        return pq_err_set(&b->err, PQ_EINVAL, "variant: \"%.*s\" is not a JSON number",
                          (int)(len > 64 ? 64 : len), text);
    char ex[24];
    int exlen = snprintf(ex, sizeof ex, "e%lld", (long long)(n.exp10 - (int64_t)n.frac_len));
    pq_buf_reset(&b->numbuf);
    if ((n.negative && pq_buf_push(&b->numbuf, '-') != 0) ||
        pq_buf_append(&b->numbuf, n.int_digits, n.int_len) != 0 ||
        pq_buf_append(&b->numbuf, n.frac_digits, n.frac_len) != 0 ||
        pq_buf_append(&b->numbuf, ex, (size_t)exlen) != 0 || pq_buf_push(&b->numbuf, 0) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory copying a number");
    n.d = strtod((const char *)b->numbuf.data, NULL);
    return vr_number_from_json(b, &n);
}
