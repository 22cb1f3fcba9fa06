/* fuzz_numrule.h - the JSON number rule (schema/variant/vnumber.c) as the fuzz
 * targets check it: given a number's text and the Variant parqd built for
 * it, abort unless
 *   - the Variant is valid and canonical, which includes VREAD_CANONICAL's
 *     "decimal scale below its implied precision" (no decimal a reader
 *     crashes on or prints as ".5" is ever written);
 *   - an integer or decimal holds the text's exact value, a double is
 *     strtod's value of the text (sign of zero included);
 *   - the type is the rule's: integer syntax -> int when it fits int64,
 *     else decimal up to 38 digits, else double; a fraction/exponent ->
 *     double when the double's shortest form is the text's value, else a
 *     decimal when one with an integer digit and <= 38 digits holds it,
 *     else the double.
 * The shortest form is found here the plain way (the fewest %.*e digits
 * that read back), apart from vnumber.c's test; where the two can differ
 * (a power of two whose nearest decimal of the shortest length lies just
 * outside its narrower lower half-gap) the harness asks whether a shorter
 * decimal reads back before it calls a choice wrong.
 *
 * Include after "../support/variant_read.c". Header-only: each fuzz
 * target is one translation unit. */
#ifndef FUZZ_NUMRULE_H
#define FUZZ_NUMRULE_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal text as (sign, significant digits, exponent of the last one),
 * no leading or trailing zero digit; zero is nd = 0, exp 0, neg false.
 * The first FZ_DIGITS significant digits are kept; any after them are
 * counted (lost), and lost_nonzero says whether one was not a zero. Lost
 * zeros change nothing (exp still counts their places), so a text is held
 * exactly unless lost_nonzero: then it has more than FZ_DIGITS significant
 * digits, more than any decimal (38) or shortest double (17) has, and
 * equals none of them. */
#define FZ_DIGITS 160
typedef struct fz_dec {
    bool neg;
    char dig[FZ_DIGITS];
    size_t nd;
    int64_t exp;
    size_t lost;
    bool lost_nonzero;
} fz_dec;

static void fz_norm(const char *t, size_t n, fz_dec *d)
{
    size_t i = 0;
    int64_t frac = 0, e = 0;
    bool in_frac = false, eneg = false;
    memset(d, 0, sizeof *d);
    if (i < n && t[i] == '-')
        d->neg = true, i++;
    for (; i < n && t[i] != 'e' && t[i] != 'E'; i++) {
        if (t[i] < '0' || t[i] > '9') {         /* '.' or a locale's radix */
            in_frac = true;
            continue;
        }
        if (d->nd == sizeof d->dig) {           /* past FZ_DIGITS: counted, not kept */
            e += !in_frac;
            d->lost++;
            d->lost_nonzero |= t[i] != '0';
            continue;
        }
        frac += in_frac;
        if (d->nd > 0 || t[i] != '0')
            d->dig[d->nd++] = t[i];
    }
    if (i < n && ++i < n && (t[i] == '+' || t[i] == '-'))
        eneg = t[i++] == '-';
    int64_t x = 0;
    for (; i < n; i++)
        x = x > 1000000000000LL ? x : x * 10 + (t[i] - '0');
    e += eneg ? -x : x;
    while (!d->lost_nonzero && d->nd > 0 && d->dig[d->nd - 1] == '0')
        d->nd--, frac--;
    d->exp = e - frac;
    if (d->nd == 0)
        d->neg = false, d->exp = 0;
}

/* Equal values; a text with a non-zero digit past FZ_DIGITS equals none. */
static bool fz_dec_eq(const fz_dec *a, const fz_dec *b)
{
    return !a->lost_nonzero && !b->lost_nonzero && a->neg == b->neg && a->nd == b->nd && a->exp == b->exp &&
           memcmp(a->dig, b->dig, a->nd) == 0;
}

/* The fewest %.*e digits of x (finite, != 0) that read back as x. */
static void fz_shortest(double x, fz_dec *out)
{
    char buf[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    fz_norm(buf, strlen(buf), out);
}

/* Does a decimal with fewer significant digits than in (nd >= 1, <= 19)
 * read back as x? Its two neighbours one digit shorter decide it. */
static bool fz_shorter_reads_back(const fz_dec *in, double x)
{
    if (in->nd < 2 || in->nd > 19 || in->lost_nonzero)
        return false;
    unsigned long long m = 0;
    for (size_t i = 0; i + 1 < in->nd; i++)
        m = m * 10 + (unsigned long long)(in->dig[i] - '0');
    char buf[64];
    for (int k = 0; k < 2; k++) {
        snprintf(buf, sizeof buf, "%s%llue%lld", in->neg ? "-" : "", m + (unsigned)k,
                 (long long)in->exp + 1);
        if (strtod(buf, NULL) == x)
            return true;
    }
    return false;
}

static void fz_rule_fail(const char *text, size_t n, const char *json, const char *why)
{
    fprintf(stderr, "number rule: %.*s -> %s: %s\n", (int)n, text, json, why);
    abort();
}

/* text: the JSON number (grammar already checked); v: what parqd built. */
static void fz_check_number_rule(const char *text, size_t n, const vr_variant *v)
{
    if (vread_validate(v->metadata, v->metadata_len, v->value, v->value_len, VREAD_CANONICAL,
                       NULL) != 0)
        fz_rule_fail(text, n, "?", "not a valid canonical Variant (e.g. a decimal scale "
                     "not below its precision)");
    pq_buf got;
    pq_buf_init(&got);
    if (vread_to_json(&got, v->metadata, v->metadata_len, v->value, v->value_len, NULL) != 0 ||
        pq_buf_push(&got, 0) != 0)
        abort();
    const char *json = (const char *)got.data;
    char *tbuf = malloc(n + 1);                 /* NUL-terminated for strto* */
    if (tbuf == NULL)
        abort();
    memcpy(tbuf, text, n);
    tbuf[n] = 0;
    bool int_syntax = memchr(text, '.', n) == NULL && memchr(text, 'e', n) == NULL &&
                      memchr(text, 'E', n) == NULL;
    fz_dec in, out;
    fz_norm(text, n, &in);
    int type = vr_value_type(v->value, v->value_len);
    bool is_int = type >= VR_INT8 && type <= VR_INT64;
    bool is_dec = type >= VR_DECIMAL4 && type <= VR_DECIMAL16;
    if (is_int || is_dec) {
        fz_norm(json, strlen(json), &out);
        if (!fz_dec_eq(&in, &out))
            fz_rule_fail(text, n, json, "an exact type not holding the exact value");
    } else if (type == VR_DOUBLE) {
        vr_prim p;
        double want = strtod(tbuf, NULL);
        if (vr_value_read(v->value, v->value_len, &p, NULL) != 0 ||
            memcmp(&p.d, &want, sizeof want) != 0)
            fz_rule_fail(text, n, json, "a double that is not strtod's value of the text");
    } else {
        fz_rule_fail(text, n, json, "not a number type");
    }
    bool valid_dec = !in.lost_nonzero && in.nd <= 38 && (in.exp >= 0 ? (int64_t)in.nd + in.exp <= 38
                                                 : -in.exp < (int64_t)in.nd);
    if (int_syntax) {
        errno = 0;
        (void)strtoll(tbuf, NULL, 10);
        bool fits64 = errno == 0;
        if (fits64 != is_int)
            fz_rule_fail(text, n, json, fits64 ? "an int64 not stored as an integer"
                                                : "an integer beyond int64");
        if (!fits64 && valid_dec != is_dec)
            fz_rule_fail(text, n, json, valid_dec ? "a wide integer not stored as a decimal"
                                                  : "a decimal beyond 38 digits");
    } else if (is_int) {
        fz_rule_fail(text, n, json, "a fraction or exponent stored as an integer");
    } else if (in.nd == 0) {
        if (is_dec)
            fz_rule_fail(text, n, json, "a zero with a fraction not stored as a double");
    } else {
        double x = strtod(tbuf, NULL);
        fz_dec s = {0};
        if (isfinite(x) && x != 0)
            fz_shortest(fabs(x), &s);
        s.neg = in.neg;
        bool exact_dbl = isfinite(x) && x != 0 && fz_dec_eq(&s, &in);
        if (is_dec && !valid_dec)
            fz_rule_fail(text, n, json, "a decimal readers cannot take");
        if (is_dec && exact_dbl && !fz_shorter_reads_back(&in, x))
            fz_rule_fail(text, n, json, "a decimal where the double prints back as the text");
        /* a double where a valid decimal was possible: only when the text is
         * the double's shortest form (printf's search may miss it by a
         * digit at a power of two: then the text reads back and nothing
         * shorter does) */
        if (type == VR_DOUBLE && !exact_dbl && valid_dec &&
            !(in.nd <= 17 &&
              !fz_shorter_reads_back(&in, x) && s.nd > in.nd))
            fz_rule_fail(text, n, json, "a needless loss: a decimal would hold it");
    }
    free(tbuf);
    pq_buf_free(&got);
}

#endif
