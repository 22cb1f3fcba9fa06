/* json.c - strict RFC 8259 JSON parser for NDJSON lines (see json.h).
 *
 * Why a parser of our own. Every record passes through here, so this is the
 * daemon's hottest loop after compression. The DOM libraries in Debian
 * build a tree of heap nodes per value (one malloc per string, number and
 * container) that the shredder would immediately walk and throw away, and
 * none of them exposes the exact decimal text of a number, which decimal
 * columns and Variant decimals need. Measured once (2026-11, a throwaway
 * program linking the Debian libraries; same input as bench/bench_json.c:
 * the 16 files under testdata/logs concatenated and repeated to 204.8 MB,
 * 160,479 lines; each line parsed, then its tree freed; gcc 12.2 -O2,
 * Debian 12, AMD EPYC VM with 2 vCPUs; best of 7 interleaved rounds):
 *
 *     MB/s (lines/s)                        run A            run B
 *     parqd json_parse_line, no handler     1472 (1.15 M)    855 (670 k)
 *     parqd, handler counting every event      -             720 (564 k)
 *     cJSON 1.7.15 ParseWithLength+Delete    329 (258 k)     164 (129 k)
 *     jansson 2.14 json_loadb+json_decref     58 (45 k)       29 (22 k)
 *
 * The VM was shared with other engineers' builds (load average 8 in run A,
 * 11 to 14 in run B, on 2 vCPUs), so absolute numbers move by 2x between
 * runs; run A predates the SSE2 string scan (SWAR only), run B is this
 * code. The ratios held: 4-5x cJSON (which does not even validate UTF-8)
 * and 25-30x jansson.
 *
 * How it is fast: one pass, no recursion (an explicit one-byte-per-level
 * container stack), no allocation per value (strings without escapes point
 * into the line; escaped ones are unescaped into one scratch buffer sized
 * to the line once), string bodies skipped sixteen bytes at a time (SSE2;
 * eight with a SWAR test elsewhere) looking for '"', '\\', < 0x20 and
 * >= 0x80, and numbers converted by Clinger's
 * exact fast path when the significand fits 2^53 and |exponent| <= 22.
 * Only the remaining numbers go to strtod_l, which glibc rounds correctly;
 * we pass it the "C" locale (plain strtod follows LC_NUMERIC and would
 * read "1,5" in a German locale) and a NUL-terminated copy of the token,
 * in a stack buffer for tokens under 64 bytes, else in p->numbuf.
 *
 * Roads not taken: SIMD structural indexing (simdjson style) would be
 * faster still on long lines, but needs a second pass over the line and
 * per-ISA code; Eisel-Lemire float parsing would spare strtod_l for long
 * significands (rare in logs: Zeek's durations like 0.000431060791015625
 * fit the fast path) at the cost of a 10 KB power table.
 */
#include "json.h"
#include "json_scan.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH_LIMIT ((size_t)1 << 20)
#define EXP_SATURATE 1000000000LL

/* String body classes. */
enum { S_PLAIN = 0, S_QUOTE, S_BSLASH, S_CTRL, S_HIGH };

static const uint8_t str_class[256] = {
    [0x00 ... 0x1F] = S_CTRL,
    ['"'] = S_QUOTE,
    ['\\'] = S_BSLASH,
    [0x80 ... 0xFF] = S_HIGH,
};

static const uint8_t ws_class[256] = {
    [' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1,
};

/* Hex digit value + 1; 0 marks a non-hex byte (so the rest of the table
 * can stay zero-initialised). */
static const uint8_t hex_val1[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
    ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
    ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Exact powers of ten for Clinger's fast path (all exact in a double). */
static const double pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static inline int is_digit(uint8_t c) { return (unsigned)(c - '0') < 10; }

/* ---- errors ----------------------------------------------------------- */

/* Writes what was found at c for "got X" parts of messages. */
static const char *describe(const uint8_t *c, const uint8_t *end, char buf[16])
{
    if (c >= end)
        return "end of line";
    if (*c == 0)
        return "NUL byte";
    if (*c >= 0x20 && *c < 0x7F)
        snprintf(buf, 16, "'%c'", *c);
    else
        snprintf(buf, 16, "byte 0x%02X", *c);
    return buf;
}

__attribute__((format(printf, 5, 6), noinline, cold))
static int fail(json_parser *p, pq_err *err, int code, const uint8_t *at,
                const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->err_offset = (size_t)(at - p->line);
    p->err_code = code;
    return pq_err_set(err, code, "byte %zu: %s", p->err_offset, msg);
}

/* "expected X, got Y" with Y described from the input. */
__attribute__((noinline, cold))
static int expected(json_parser *p, pq_err *err, const uint8_t *at,
                    const uint8_t *end, const char *what)
{
    char buf[16];
    return fail(p, err, PQ_EPARSE, at, "expected %s, got %s", what,
                describe(at, end, buf));
}

__attribute__((noinline, cold))
static int stopped(json_parser *p, pq_err *err, int rc)
{
    p->err_offset = (size_t)(p->tok - p->line);
    if (err != NULL && err->code == PQ_OK)
        pq_err_set(err, rc, "byte %zu: handler stopped parsing (%s)",
                   p->err_offset, pq_err_name(rc));
    return rc;
}

/* ---- strings ---------------------------------------------------------- */

/* c points at a byte >= 0x80 inside a string: validates one UTF-8
 * sequence (Unicode 15, table 3-7) and returns the byte after it, or NULL
 * with err filled. */
static const uint8_t *check_utf8(json_parser *p, const uint8_t *c,
                                 const uint8_t *end, pq_err *err)
{
    const uint8_t b0 = c[0];
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;

    if (b0 < 0xC0) {
        fail(p, err, PQ_EPARSE, c, "invalid UTF-8 in string: unexpected "
             "continuation byte 0x%02X", b0);
        return NULL;
    }
    if (b0 < 0xC2) {
        fail(p, err, PQ_EPARSE, c, "invalid UTF-8 in string: overlong "
             "2-byte encoding (lead byte 0x%02X)", b0);
        return NULL;
    }
    if (b0 < 0xE0) {
        need = 1;
    } else if (b0 < 0xF0) {
        need = 2;
        if (b0 == 0xE0)
            lo = 0xA0;
        else if (b0 == 0xED)
            hi = 0x9F;
    } else if (b0 < 0xF5) {
        need = 3;
        if (b0 == 0xF0)
            lo = 0x90;
        else if (b0 == 0xF4)
            hi = 0x8F;
    } else {
        fail(p, err, PQ_EPARSE, c, "invalid UTF-8 in string: byte 0x%02X "
             "cannot start a sequence%s", b0,
             b0 < 0xF8 ? " (it would encode a code point above U+10FFFF)" : "");
        return NULL;
    }
    for (size_t i = 1; i <= need; i++) {
        if (c + i >= end || (c[i] & 0xC0) != 0x80) {
            fail(p, err, PQ_EPARSE, c, "invalid UTF-8 in string: truncated "
                 "%zu-byte sequence (lead byte 0x%02X followed by %s)",
                 need + 1, b0, c + i >= end ? "end of line" : "a non-continuation byte");
            return NULL;
        }
    }
    if (c[1] < lo) {
        fail(p, err, PQ_EPARSE, c, "invalid UTF-8 in string: overlong "
             "%zu-byte encoding (0x%02X 0x%02X)", need + 1, b0, c[1]);
        return NULL;
    }
    if (c[1] > hi) {
        if (b0 == 0xED)
            fail(p, err, PQ_EPARSE, c, "invalid UTF-8 in string: UTF-16 "
                 "surrogate U+%04X encoded in UTF-8",
                 0xD000u | ((unsigned)(c[1] & 0x3F) << 6) | (c[2] & 0x3Fu));
        else
            fail(p, err, PQ_EPARSE, c, "invalid UTF-8 in string: code point "
                 "above U+10FFFF");
        return NULL;
    }
    return c + need + 1;
}

static inline int hex4(const uint8_t *c, const uint8_t *end)
{
    if (end - c < 4)
        return -1;
    const int a = hex_val1[c[0]] - 1, b = hex_val1[c[1]] - 1;
    const int d = hex_val1[c[2]] - 1, e = hex_val1[c[3]] - 1;
    if ((a | b | d | e) < 0)
        return -1;
    return (a << 12) | (b << 8) | (d << 4) | e;
}

static inline uint8_t *put_utf8(uint8_t *d, uint32_t cp)
{
    if (cp < 0x80) {
        *d++ = (uint8_t)cp;
    } else if (cp < 0x800) {
        *d++ = (uint8_t)(0xC0 | (cp >> 6));
        *d++ = (uint8_t)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *d++ = (uint8_t)(0xE0 | (cp >> 12));
        *d++ = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        *d++ = (uint8_t)(0x80 | (cp & 0x3F));
    } else {
        *d++ = (uint8_t)(0xF0 | (cp >> 18));
        *d++ = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        *d++ = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        *d++ = (uint8_t)(0x80 | (cp & 0x3F));
    }
    return d;
}

/* The slow half of parse_string: the string has an escape at c. Output
 * goes to the scratch buffer, which json_parse_line sized to the whole
 * line: unescaping never lengthens text ("\n" 2 -> 1, "\u00e9" 6 -> 2,
 * a surrogate pair 12 -> 4), so no bounds checks are needed here, and each
 * string gets its own region so earlier pointers stay valid. */
__attribute__((noinline))
static const uint8_t *parse_escaped(json_parser *p, const uint8_t *start,
                                    const uint8_t *c, const uint8_t *end,
                                    const char **out, size_t *outlen,
                                    pq_err *err)
{
    uint8_t *const d0 = p->scratch.data + p->scratch.len;
    uint8_t *d = d0;
    const uint8_t *run = start;

    for (;;) {
        c = json_skip_plain(c, end);
        if (c == end) {
            fail(p, err, PQ_EPARSE, c, "unterminated string (opened at byte "
                 "%zu): expected '\"', got end of line",
                 (size_t)(start - 1 - p->line));
            return NULL;
        }
        const uint8_t k = str_class[*c];
        if (k == S_HIGH) {
            c = check_utf8(p, c, end, err);
            if (c == NULL)
                return NULL;
            continue;
        }
        memcpy(d, run, (size_t)(c - run));
        d += c - run;
        if (k == S_QUOTE) {
            *out = (const char *)d0;
            *outlen = (size_t)(d - d0);
            p->scratch.len += *outlen;
            return c + 1;
        }
        if (k == S_CTRL) {
            fail(p, err, PQ_EPARSE, c, *c == 0
                 ? "NUL byte inside string (escape it as \\u0000)"
                 : "control character 0x%02X inside string (must be escaped)", *c);
            return NULL;
        }
        /* backslash */
        if (c + 1 == end) {
            fail(p, err, PQ_EPARSE, c + 1, "unterminated escape sequence at "
                 "end of line");
            return NULL;
        }
        switch (c[1]) {
        case '"': *d++ = '"'; break;
        case '\\': *d++ = '\\'; break;
        case '/': *d++ = '/'; break;
        case 'b': *d++ = '\b'; break;
        case 'f': *d++ = '\f'; break;
        case 'n': *d++ = '\n'; break;
        case 'r': *d++ = '\r'; break;
        case 't': *d++ = '\t'; break;
        case 'u': {
            int cp = hex4(c + 2, end);
            if (cp < 0) {
                fail(p, err, PQ_EPARSE, c, "invalid \\u escape: expected four "
                     "hex digits after \\u");
                return NULL;
            }
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                fail(p, err, PQ_EPARSE, c, "lone low surrogate \\u%04X (not "
                     "preceded by a high surrogate \\uD800-\\uDBFF)", (unsigned)cp);
                return NULL;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                const int lo = (end - c >= 12 && c[6] == '\\' && c[7] == 'u')
                               ? hex4(c + 8, end) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    fail(p, err, PQ_EPARSE, c, "lone high surrogate \\u%04X (not "
                         "followed by a low surrogate \\uDC00-\\uDFFF)", (unsigned)cp);
                    return NULL;
                }
                d = put_utf8(d, 0x10000u + (((uint32_t)cp - 0xD800u) << 10) +
                                ((uint32_t)lo - 0xDC00u));
                c += 6;
            } else {
                d = put_utf8(d, (uint32_t)cp);
            }
            c += 4;
            break;
        }
        default: {
            char buf[16];
            fail(p, err, PQ_EPARSE, c, "invalid escape: expected one of "
                 "\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after '\\', got %s",
                 describe(c + 1, end, buf));
            return NULL;
        }
        }
        c += 2;
        run = c;
    }
}

/* c points at the opening quote. Returns the byte after the closing quote
 * (or NULL with err filled) and the unescaped text in out/outlen.
 * Inlined into its two callers (a key, a value) by force: GCC 12 kept it a
 * call, whose register saves cost ~16 instructions a string, 2.6% of a
 * typed convert; the error paths it holds are cold calls already. */
__attribute__((always_inline))
static inline const uint8_t *parse_string(json_parser *p, const uint8_t *c,
                                          const uint8_t *end, const char **out,
                                          size_t *outlen, pq_err *err)
{
    const uint8_t *const start = ++c;
    for (;;) {
        c = json_skip_plain(c, end);
        if (c == end) {
            fail(p, err, PQ_EPARSE, c, "unterminated string (opened at byte "
                 "%zu): expected '\"', got end of line",
                 (size_t)(start - 1 - p->line));
            return NULL;
        }
        switch (str_class[*c]) {
        case S_QUOTE:
            *out = (const char *)start;
            *outlen = (size_t)(c - start);
            return c + 1;
        case S_HIGH:
            c = check_utf8(p, c, end, err);
            if (c == NULL)
                return NULL;
            break;
        case S_BSLASH:
            return parse_escaped(p, start, c, end, out, outlen, err);
        default:
            fail(p, err, PQ_EPARSE, c, *c == 0
                 ? "NUL byte inside string (escape it as \\u0000)"
                 : "control character 0x%02X inside string (must be escaped)", *c);
            return NULL;
        }
    }
}

/* ---- numbers ---------------------------------------------------------- */

/* Correctly rounded double of a number with fraction or exponent, or of an
 * integer too large for 64 bits. */
static double number_to_double(json_parser *p, const json_number *n)
{
    /* Significand w of all digits without leading zeros, if <= 19 digits:
     * value = w * 10^e exactly. */
    uint64_t w = 0;
    size_t nd = 0;
    for (size_t i = 0; i < n->int_len + n->frac_len; i++) {
        const uint8_t ch = (uint8_t)(i < n->int_len ? n->int_digits[i]
                                                    : n->frac_digits[i - n->int_len]);
        if (w == 0 && ch == '0')
            continue;
        if (++nd > 19)
            goto slow;
        w = w * 10 + (uint64_t)(ch - '0');
    }
    if (w == 0)
        return n->negative ? -0.0 : 0.0;
    int64_t e = n->exp10 - (int64_t)n->frac_len;
    if (w <= (1ULL << 53)) {
        /* Clinger: w and 10^|e| are exact doubles, so one IEEE operation
         * gives the correctly rounded result. 1.5e30: move 10^8 into w
         * first when that keeps w exact. */
        while (e > 22 && w <= (1ULL << 53) / 10) {
            w *= 10;
            e--;
        }
        if (e >= -22 && e <= 22) {
            const double v = e >= 0 ? (double)w * pow10_exact[e]
                                    : (double)w / pow10_exact[-e];
            return n->negative ? -v : v;
        }
    }
slow:;
    char stackbuf[64];
    char *s = stackbuf;
    if (n->len >= sizeof stackbuf) {
        pq_buf_reset(&p->numbuf);
        if (pq_buf_reserve(&p->numbuf, n->len + 1) != 0)
            return NAN; /* caller reports ENOMEM */
        s = (char *)p->numbuf.data;
    }
    memcpy(s, n->raw, n->len);
    s[n->len] = '\0';
    return strtod_l(s, NULL, (locale_t)p->c_locale);
}

/* Integer syntax, the common case in logs: num holds the digits at
 * ip..ip+int_len and m their value (wrapped past 19 digits). Fills the
 * INT64 or UINT64 value and returns true when it fits 64 bits; false sends
 * the number to the double path. */
static inline bool number_integer(json_number *num, const uint8_t *ip,
                                  size_t int_len, uint64_t m)
{
    if (int_len <= 19) {
        if (!num->negative) {
            if (m <= (uint64_t)INT64_MAX) {
                num->kind = JSON_NUM_INT64;
                num->i = (int64_t)m;
                num->u = m;
            } else {
                num->kind = JSON_NUM_UINT64;
                num->u = m;
                num->i = 0;
            }
            num->d = (double)m;
            return true;
        }
        if (m <= (uint64_t)INT64_MAX + 1) {
            num->kind = JSON_NUM_INT64;
            num->i = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
            num->u = 0;
            num->d = -(double)m;
            return true;
        }
    } else if (int_len == 20 && !num->negative) {
        /* 10^19 .. 2^64-1 still fits: recompute with overflow check. */
        uint64_t u = 0;
        for (size_t i = 0; i < 20; i++) {
            const uint64_t dg = (uint64_t)(ip[i] - '0');
            if (u > (UINT64_MAX - dg) / 10)
                return false;
            u = u * 10 + dg;
        }
        num->kind = JSON_NUM_UINT64;
        num->u = u;
        num->i = 0;
        num->d = (double)u;
        return true;
    }
    return false;
}

/* c is just past the integer part. Captures the fraction digits (an empty
 * run at c when there is no '.') and returns the byte after them, or NULL
 * with err filled. */
static inline const uint8_t *parse_fraction(json_parser *p, const uint8_t *c,
                                            const uint8_t *end,
                                            json_number *num, pq_err *err)
{
    if (*c != '.') {
        num->frac_digits = (const char *)c;
        num->frac_len = 0;
        return c;
    }
    c++;
    const uint8_t *const fp = c;
    if (c == end || !is_digit(*c)) {
        expected(p, err, c, end, "a digit after '.'");
        return NULL;
    }
    do
        c++;
    while (c < end && is_digit(*c));
    num->frac_digits = (const char *)fp;
    num->frac_len = (size_t)(c - fp);
    return c;
}

/* Reads an exponent ("e", "E", optional sign, digits) at c into *exp10,
 * saturated at +-EXP_SATURATE; none leaves 0. Returns the byte after it,
 * or NULL with err filled. */
static inline const uint8_t *parse_exponent(json_parser *p, const uint8_t *c,
                                            const uint8_t *end, int64_t *exp10,
                                            pq_err *err)
{
    int64_t e = 0;
    if (c < end && (*c | 0x20) == 'e') {
        c++;
        bool eneg = false;
        if (c < end && (*c == '+' || *c == '-')) {
            eneg = *c == '-';
            c++;
        }
        if (c == end || !is_digit(*c)) {
            expected(p, err, c, end, "a digit in the exponent");
            return NULL;
        }
        do {
            e = e * 10 + (*c - '0');
            if (e > EXP_SATURATE)
                e = EXP_SATURATE;
            c++;
        } while (c < end && is_digit(*c));
        if (eneg)
            e = -e;
    }
    *exp10 = e;
    return c;
}

/* The number in num (its exact text captured) as a DOUBLE; c is the byte
 * after it. Returns c, or NULL with err filled when the value does not fit
 * a double or memory ran out. */
static inline const uint8_t *number_double(json_parser *p, const uint8_t *c,
                                           json_number *num, pq_err *err)
{
    const uint8_t *const s = (const uint8_t *)num->raw;
    num->kind = JSON_NUM_DOUBLE;
    num->i = 0;
    num->u = 0;
    num->d = number_to_double(p, num);
    if (isnan(num->d)) {
        fail(p, err, PQ_ENOMEM, s, "out of memory converting a %zu-byte "
             "number", num->len);
        return NULL;
    }
    if (isinf(num->d)) {
        fail(p, err, PQ_ELIMIT, s, "number out of range: %.*s%s does not fit "
             "a double", num->len > 40 ? 40 : (int)num->len, num->raw,
             num->len > 40 ? "..." : "");
        return NULL;
    }
    return c;
}

/* c points at '-' or a digit. Fills num: the exact text (raw, digits of
 * the integer and fraction parts, exponent) for decimals, and the value as
 * an integer when it has integer syntax and fits 64 bits, else as a
 * double. Returns the byte after the number, or NULL with err filled. */
static inline const uint8_t *parse_number(json_parser *p, const uint8_t *c,
                                          const uint8_t *end, json_number *num,
                                          pq_err *err)
{
    const uint8_t *const s = c;
    const bool neg = *c == '-';
    uint64_t m = 0;

    if (neg)
        c++;
    const uint8_t *const ip = c;
    if (c == end || !is_digit(*c)) {
        expected(p, err, c, end, "a digit after '-'");
        return NULL;
    }
    if (*c == '0') {
        c++;
        if (c < end && is_digit(*c)) {
            fail(p, err, PQ_EPARSE, c - 1, "leading zeros are not allowed in "
                 "numbers");
            return NULL;
        }
    } else {
        do {
            m = m * 10 + (uint64_t)(*c - '0'); /* wraps past 19 digits; unused then */
            c++;
        } while (c < end && is_digit(*c));
    }
    const size_t int_len = (size_t)(c - ip);

    num->raw = (const char *)s;
    num->negative = neg;
    num->int_digits = (const char *)ip;
    num->int_len = int_len;

    if (c == end || (*c != '.' && (*c | 0x20) != 'e')) {
        num->len = (size_t)(c - s);
        num->frac_digits = (const char *)c;
        num->frac_len = 0;
        num->exp10 = 0;
        if (number_integer(num, ip, int_len, m))
            return c;
        return number_double(p, c, num, err);
    }
    c = parse_fraction(p, c, end, num, err);
    if (c == NULL)
        return NULL;
    c = parse_exponent(p, c, end, &num->exp10, err);
    if (c == NULL)
        return NULL;
    num->len = (size_t)(c - s);
    return number_double(p, c, num, err);
}

const char *json_scan_string(json_parser *p, const char *at, const char *end)
{
    const uint8_t *c = (const uint8_t *)at;
    const uint8_t *const e = (const uint8_t *)end;
    pq_err ignored;
    for (;;) {
        c = json_skip_plain(c, e);
        if (c == e)
            return NULL;
        if (*c == '"')
            return (const char *)c;
        if (*c < 0x80)
            return NULL; /* an escape or a control character */
        c = check_utf8(p, c, e, &ignored);
        if (c == NULL)
            return NULL;
    }
}

const char *json_scan_number(json_parser *p, const char *at, const char *end,
                             json_number *num)
{
    pq_err ignored;
    return (const char *)parse_number(p, (const uint8_t *)at,
                                      (const uint8_t *)end, num, &ignored);
}

int json_number_decimal(const json_number *num, json_int128 *unscaled,
                        int32_t *scale)
{
    unsigned __int128 v = 0;
    size_t nd = 0;
    for (size_t i = 0; i < num->int_len + num->frac_len; i++) {
        const uint8_t ch = (uint8_t)(i < num->int_len ? num->int_digits[i]
                                     : num->frac_digits[i - num->int_len]);
        if (v == 0 && ch == '0')
            continue;
        if (++nd > 38)
            return PQ_ELIMIT;
        v = v * 10 + (unsigned)(ch - '0');
    }
    int64_t sc = (int64_t)num->frac_len - num->exp10;
    if (v == 0) {
        sc = sc < 0 ? 0 : sc > 38 ? 38 : sc;   /* zero is exact at any scale */
    } else if (sc < 0) {
        for (; sc < 0; sc++) {                  /* at most 38 rounds */
            if (++nd > 38)
                return PQ_ELIMIT;
            v *= 10;
        }
    } else if (sc > 38) {
        return PQ_ELIMIT;
    }
    *unscaled = num->negative ? -(json_int128)v : (json_int128)v;
    *scale = (int32_t)sc;
    return 0;
}

/* ---- parser ----------------------------------------------------------- */

int json_parser_init(json_parser *p, size_t max_depth)
{
    memset(p, 0, sizeof *p);
    if (max_depth == 0)
        max_depth = JSON_DEFAULT_MAX_DEPTH;
    if (max_depth > MAX_DEPTH_LIMIT)
        return PQ_EINVAL;
    p->max_depth = max_depth;
    pq_buf_init(&p->scratch);
    pq_buf_init(&p->numbuf);
    p->stack = malloc(max_depth);
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (p->stack == NULL || loc == (locale_t)0) {
        free(p->stack);
        if (loc != (locale_t)0)
            freelocale(loc);
        p->stack = NULL;
        return PQ_ENOMEM;
    }
    p->c_locale = loc;
    return 0;
}

void json_parser_free(json_parser *p)
{
    free(p->stack);
    p->stack = NULL;
    pq_buf_free(&p->scratch);
    pq_buf_free(&p->numbuf);
    if (p->c_locale != NULL)
        freelocale((locale_t)p->c_locale);
    p->c_locale = NULL;
}

#define SKIP_WS(c) \
    do { while ((c) < end && ws_class[*(c)]) (c)++; } while (0)

/* Delivers an event; p->tok tells handlers where the token is. */
#define EMIT(cb, ...) \
    do { \
        if (h->cb != NULL) { \
            p->tok = tok; \
            const int rc_ = h->cb(user, __VA_ARGS__); \
            if (rc_ != 0) \
                return stopped(p, err, rc_); \
        } \
    } while (0)
#define EMIT0(cb) \
    do { \
        if (h->cb != NULL) { \
            p->tok = tok; \
            const int rc_ = h->cb(user); \
            if (rc_ != 0) \
                return stopped(p, err, rc_); \
        } \
    } while (0)

/* Whether the n bytes at c are the literal lit. */
static inline bool is_literal(const uint8_t *c, const uint8_t *end,
                              const char *lit, size_t n)
{
    return (size_t)(end - c) >= n && memcmp(c, lit, n) == 0;
}

__attribute__((noinline, cold))
static int bad_literal(json_parser *p, pq_err *err, const uint8_t *c,
                       const char *lit)
{
    return fail(p, err, PQ_EPARSE, c, "invalid literal: expected '%s'", lit);
}

/* A string, number or literal at *pc (the one token a value that is not a
 * container can be): delivers its event and moves *pc past it. Returns 0,
 * or the error or handler code. */
static inline int parse_scalar(json_parser *p, const uint8_t **pc,
                               const uint8_t *end, const json_handler *h,
                               void *user, pq_err *err)
{
    const uint8_t *c = *pc;
    const uint8_t *const tok = c;
    const char *str;
    size_t slen;
    json_number num;

    switch (*c) {
    case '"':
        c = parse_string(p, c, end, &str, &slen, err);
        if (c == NULL)
            return p->err_code;
        EMIT(string, str, slen);
        break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        c = parse_number(p, c, end, &num, err);
        if (c == NULL)
            return p->err_code;
        EMIT(number, &num);
        break;
    case 't':
    case 'f': {
        const bool v = *c == 't';
        const char *const lit = v ? "true" : "false";
        const size_t n = v ? 4 : 5;
        if (!is_literal(c, end, lit, n))
            return bad_literal(p, err, c, lit);
        c += n;
        EMIT(boolean, v);
        break;
    }
    case 'n':
        if (!is_literal(c, end, "null", 4))
            return bad_literal(p, err, c, "null");
        c += 4;
        EMIT0(null);
        break;
    default:
        return expected(p, err, c, end, "a value (object, array, string, "
                        "number, true, false or null)");
    }
    *pc = c;
    return 0;
}

/* Something after the top-level value (NDJSON: one value per line). */
__attribute__((noinline, cold))
static int trailing(json_parser *p, pq_err *err, const uint8_t *c,
                    const uint8_t *end)
{
    char buf[16];
    return fail(p, err, PQ_EPARSE, c, "trailing characters after the JSON "
                "value: got %s, expected end of line", describe(c, end, buf));
}

/* A container opened at max_depth: refused before it grows the stack. */
__attribute__((noinline, cold))
static int too_deep(json_parser *p, pq_err *err, const uint8_t *c)
{
    return fail(p, err, PQ_ELIMIT, c, "nesting deeper than %zu levels "
                "(max_depth)", p->max_depth);
}

/* What parse_structure does after offering a member to h->member. */
enum { MEMBER_PARSE, MEMBER_VALUE, MEMBER_AFTER, MEMBER_STOP };

/* Offers the member whose key opens at *pc to the handler's member reader
 * (json.h): MEMBER_PARSE when it declines (the parser reads the member),
 * MEMBER_VALUE when it read the key (*pc at the value), MEMBER_AFTER when
 * it read the value too (*pc past it), MEMBER_STOP when it stopped the
 * parse (*rc the code to return, err filled). */
static inline int offer_member(json_parser *p, const uint8_t **pc, const uint8_t *end,
                               const json_handler *h, void *user, pq_err *err, int *rc)
{
    const char *next = NULL;
    bool value_next = false;
    p->tok = *pc;
    *rc = h->member(user, (const char *)*pc, (const char *)end, &next, &value_next);
    if (*rc != 0) {
        *rc = stopped(p, err, *rc);
        return MEMBER_STOP;
    }
    if (next == NULL)
        return MEMBER_PARSE;
    *pc = (const uint8_t *)next;
    return value_next ? MEMBER_VALUE : MEMBER_AFTER;
}

/* The structure of the line from c (a value starts there) as a goto
 * machine over an explicit container stack: each label is a parser state,
 * and nesting costs one byte of p->stack, not a C stack frame. Scalars are
 * parse_scalar's. */
static inline int parse_structure(json_parser *p, const uint8_t *c,
                                  const uint8_t *end, const json_handler *h,
                                  void *user, pq_err *err)
{
    const uint8_t *tok;
    uint8_t *const stack = p->stack;
    size_t depth = 0;
    const char *str;
    size_t slen;
    int rc;

value:
    if (c == end)
        return expected(p, err, c, end, "a value");
    tok = c;
    if (*c == '{') {
        if (depth == p->max_depth)
            return too_deep(p, err, c);
        stack[depth++] = 1;
        EMIT0(begin_object);
        c++;
        SKIP_WS(c);
        if (c < end && *c == '}')
            goto close_object;
        if (c == end || *c != '"')
            return expected(p, err, c, end, "'\"' to start an object key or "
                            "'}' to close the object");
        goto member;
    }
    if (*c == '[') {
        if (depth == p->max_depth)
            return too_deep(p, err, c);
        stack[depth++] = 0;
        EMIT0(begin_array);
        c++;
        SKIP_WS(c);
        if (c < end && *c == ']')
            goto close_array;
        goto value;
    }
    rc = parse_scalar(p, &c, end, h, user, err);
    if (rc != 0)
        return rc;
    goto after_value;

member:
    /* c is at the opening quote of a key. */
    tok = c;
    switch (h->member != NULL ? offer_member(p, &c, end, h, user, err, &rc) : MEMBER_PARSE) {
    case MEMBER_STOP: return rc;
    case MEMBER_VALUE: goto value;
    case MEMBER_AFTER: goto after_value;
    }
    c = parse_string(p, c, end, &str, &slen, err);
    if (c == NULL)
        return p->err_code;
    EMIT(key, str, slen);
    SKIP_WS(c);
    if (c == end || *c != ':')
        return expected(p, err, c, end, "':' after object key");
    c++;
    SKIP_WS(c);
    goto value;

close_object:
    tok = c++;
    depth--;
    EMIT0(end_object);
    goto after_value;

close_array:
    tok = c++;
    depth--;
    EMIT0(end_array);

after_value:
    SKIP_WS(c);
    if (depth == 0)
        return c != end ? trailing(p, err, c, end) : 0;
    if (stack[depth - 1]) {
        if (c < end && *c == ',') {
            c++;
            SKIP_WS(c);
            if (c == end || *c != '"')
                return expected(p, err, c, end, "'\"' to start an object key "
                                "after ','");
            goto member;
        }
        if (c < end && *c == '}')
            goto close_object;
        return expected(p, err, c, end, "',' or '}' after object member");
    }
    if (c < end && *c == ',') {
        c++;
        SKIP_WS(c);
        goto value;
    }
    if (c < end && *c == ']')
        goto close_array;
    return expected(p, err, c, end, "',' or ']' after array element");
}

int json_parse_line(json_parser *p, const char *line, size_t len,
                    const json_handler *h, void *user, pq_err *err)
{
    const uint8_t *c = (const uint8_t *)line;
    const uint8_t *const end = c + len;

    pq_err_clear(err);
    p->line = c;
    p->tok = c;
    p->err_offset = 0;
    p->err_code = 0;
    pq_buf_reset(&p->scratch);
    if (pq_buf_reserve(&p->scratch, len) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory for a %zu-byte line",
                          len);

    SKIP_WS(c);
    if (c == end) {
        p->err_offset = len;
        return pq_err_set(err, JSON_EMPTY, "blank line");
    }
    return parse_structure(p, c, end, h, user, err);
}
