/* defaults.c - a column's `default:` (DESIGN.md "Schema (YAML)"): the
 * scalar is checked against the column's type once, at load, and kept
 * parsed (sc_default) so filling a missing value costs nothing per row.
 * Dates, times and RFC 3339 timestamps are read here without the C
 * library's locale- and time-zone-dependent functions.
 *
 * Thread: whichever loads a schema. */
#include "colspec_int.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool read_fixed(const char **p, int ndig, int *out)
{
    int v = 0;
    for (int i = 0; i < ndig; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += ndig;
    *out = v;
    return true;
}

static bool parse_date(const char **p, int64_t *days)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, m, d;
    if (!read_fixed(p, 4, &y) || *(*p)++ != '-' || !read_fixed(p, 2, &m) || *(*p)++ != '-' ||
        !read_fixed(p, 2, &d))
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1] || (m == 2 && d == 29 && !leap))
        return false;
    *days = days_from_civil(y, (unsigned)m, (unsigned)d);
    return true;
}

static int64_t unit_per_second(pq_time_unit u)
{
    return u == PQ_UNIT_MILLIS ? 1000 : u == PQ_UNIT_MICROS ? 1000000 : 1000000000;
}

/* HH:MM:SS[.fraction] in units since midnight; digits beyond the unit's
 * precision must be zero (a default should not be silently rounded). */
static bool parse_clock(const char **p, pq_time_unit unit, int64_t *out)
{
    int h, m, s;
    if (!read_fixed(p, 2, &h) || *(*p)++ != ':' || !read_fixed(p, 2, &m) || *(*p)++ != ':' ||
        !read_fixed(p, 2, &s) || h > 23 || m > 59 || s > 59)
        return false;
    int64_t per = unit_per_second(unit), frac = 0, scale = per;
    if (**p == '.') {
        (*p)++;
        if (!isdigit((unsigned char)**p))
            return false;
        for (; isdigit((unsigned char)**p); (*p)++) {
            scale /= 10;
            if (scale == 0 && **p != '0')
                return false;
            frac += scale * (**p - '0');
        }
    }
    *out = ((int64_t)h * 3600 + m * 60 + s) * per + frac;
    return true;
}

static bool parse_int_text(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    if (!(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
        return false;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

static bool parse_timestamp(const char *s, pq_time_unit unit, int64_t *out)
{
    if (parse_int_text(s, out))
        return true;
    int64_t days, clock, per = unit_per_second(unit), off = 0, v;
    const char *p = s;
    if (!parse_date(&p, &days) || (*p != 'T' && *p != 't' && *p != ' '))
        return false;
    p++;
    if (!parse_clock(&p, unit, &clock))
        return false;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om, sign = *p++ == '-' ? -1 : 1;
        if (!read_fixed(&p, 2, &oh) || *p++ != ':' || !read_fixed(&p, 2, &om) || oh > 23 ||
            om > 59)
            return false;
        off = sign * ((int64_t)oh * 3600 + om * 60);
    }
    if (*p != '\0')
        return false;
    if (__builtin_mul_overflow(days * 86400 - off, per, &v) || __builtin_add_overflow(v, clock, &v))
        return false;
    *out = v;
    return true;
}

static bool parse_uuid(const char *s, uint8_t out[16])
{
    size_t n = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '-' && (i == 8 || i == 13 || i == 18 || i == 23) && strlen(s) == 36)
            continue;
        if (!isxdigit((unsigned char)s[i]) || n == 32)
            return false;
        int v = isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10);
        out[n / 2] = (uint8_t)(n % 2 ? (out[n / 2] | v) : v << 4);
        n++;
    }
    return n == 32;
}

/* [-]digits[.digits] within precision/scale; unscaled value for p <= 18. */
static bool parse_decimal(const char *s, int precision, int scale, int64_t *unscaled)
{
    const char *p = s + (*s == '-');
    int int_digits = 0, frac_digits = 0, sig = 0;
    int64_t v = 0;
    bool seen = false;
    for (; isdigit((unsigned char)*p); p++, seen = true)
        if (sig > 0 || *p != '0') {
            sig++;
            int_digits++;
            v = sig <= 18 ? v * 10 + (*p - '0') : v;
        }
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++, seen = true) {
            if (++frac_digits > scale && *p != '0')
                return false;
            if (frac_digits <= scale && int_digits + frac_digits <= 18)
                v = v * 10 + (*p - '0');
        }
    }
    if (!seen || *p != '\0' || int_digits > precision - scale)
        return false;
    for (int i = frac_digits; i < scale && int_digits + i < 18; i++)
        v *= 10;
    *unscaled = *s == '-' ? -v : v;
    return true;
}

static bool parse_default_int(const sc_type *t, const char *s, sc_default *d)
{
    if (!t->is_signed) {
        char *end;
        errno = 0;
        if (!isdigit((unsigned char)s[0]))
            return false;
        unsigned long long v = strtoull(s, &end, 10);
        uint64_t max = t->bit_width == 64 ? UINT64_MAX : (UINT64_C(1) << t->bit_width) - 1;
        if (*end != '\0' || errno == ERANGE || v > max)
            return false;
        d->u = v;
        return true;
    }
    int64_t v, max = t->bit_width == 64 ? INT64_MAX : (INT64_C(1) << (t->bit_width - 1)) - 1;
    if (!parse_int_text(s, &v) || v > max || v < -max - 1)
        return false;
    d->i = v;
    return true;
}

static bool parse_default_float(const sc_type *t, const char *s, sc_default *d)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double max = t->kind == SC_FLOAT ? FLT_MAX : t->kind == SC_FLOAT16 ? 65504.0 : DBL_MAX;
    if (s[0] == '\0' || isspace((unsigned char)s[0]) || *end != '\0' || !isfinite(v) ||
        fabs(v) > max || strpbrk(s, "xXnN") != NULL)
        return false;
    d->d = v;
    return true;
}

static void variant_default_kind(const yaml_node_t *n, sc_default *d)
{
    const char *s = d->text;
    d->variant_kind = SC_DEF_STRING;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return;
    sc_type probe = {.kind = SC_DOUBLE};
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
        d->variant_kind = SC_DEF_BOOL;
        d->b = s[0] == 't';
    } else if (parse_int_text(s, &d->i)) {
        d->variant_kind = SC_DEF_INT;
    } else if (parse_default_float(&probe, s, d)) {
        d->variant_kind = SC_DEF_DOUBLE;
    }
}

/* What a default must look like, per kind (for the error message). */
static bool check_default(const sc_type *t, const yaml_node_t *n, sc_default *d,
                          const char **expected)
{
    const char *s = d->text;
    const char *p = s;
    switch (t->kind) {
    case SC_BOOL:
        *expected = "true or false";
        d->b = strcmp(s, "true") == 0;
        return d->b || strcmp(s, "false") == 0;
    case SC_INT: *expected = "a whole number in the type's range"; return parse_default_int(t, s, d);
    case SC_FLOAT: case SC_DOUBLE: case SC_FLOAT16:
        *expected = "a finite number in the type's range";
        return parse_default_float(t, s, d);
    case SC_DECIMAL:
        *expected = "a decimal number within the precision and scale";
        return parse_decimal(s, t->precision, t->scale, &d->i);
    case SC_UUID: *expected = "a UUID like 123e4567-e89b-12d3-a456-426614174000"; return parse_uuid(s, d->uuid);
    case SC_DATE: *expected = "a date YYYY-MM-DD"; return parse_date(&p, &d->i) && *p == '\0';
    case SC_TIME:
        *expected = "a time HH:MM:SS[.fraction] within the unit";
        return (parse_clock(&p, t->unit, &d->i) && *p == '\0') ||
               (parse_int_text(s, &d->i) && d->i >= 0 && d->i < 86400 * unit_per_second(t->unit));
    case SC_TIMESTAMP:
        *expected = "an RFC 3339 timestamp or a whole number in the unit";
        return parse_timestamp(s, t->unit, &d->i);
    case SC_VARIANT: variant_default_kind(n, d); return true;
    case SC_STRING: case SC_ENUM: case SC_JSON: case SC_BINARY: case SC_BSON: return true;
    default: *expected = NULL; return false;
    }
}

int sc_parse_default(sc_loader *L, yaml_node_t *n, const char *what, sc_column *c)
{
    char b[48], tn[64];
    sc_type_format(c->type, tn, sizeof tn);
    if (c->required)
        return yp_err(L->d, n, L->err, "%s: default: conflicts with required: true (a default "
                      "fills missing values, so none would be rejected); drop one", what);
    if (n->type != YAML_SCALAR_NODE || yp_is_null(n))
        return yp_err(L->d, n, L->err, "%s: default: expected a single value, found %s", what,
                      yp_describe(n, b, sizeof b));
    if ((c->def.text = strdup(yp_scalar(n))) == NULL)
        return sc_nomem(L->err);
    c->def.set = true;
    const char *expected = NULL;
    if (check_default(c->type, n, &c->def, &expected))
        return PQ_OK;
    if (expected == NULL)
        return yp_err(L->d, n, L->err, "%s: default: not supported for type '%s' (only scalar "
                      "types take a default)", what, tn);
    return yp_err(L->d, n, L->err, "%s: default: %s does not fit type '%s' (expected %s)", what,
                  yp_describe(n, b, sizeof b), tn, expected);
}
