/* units.c - parsing and printing of configuration sizes and durations
 * (see units.h for the accepted forms and why KB/MB/GB are refused). */
#include "units.h"
#include "err.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Reads digits into *v; fails on none or on uint64 overflow. */
static int read_digits(const char **pp, uint64_t *v, const char **why)
{
    const char *p = *pp;
    uint64_t x = 0;
    if (!isdigit((unsigned char)*p)) {
        *why = "expected a whole number";
        return PQ_EINVAL;
    }
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10) {
            *why = "number too large";
            return PQ_EINVAL;
        }
        x = x * 10 + d;
    }
    *pp = p;
    *v = x;
    return PQ_OK;
}

/* A leading sign or a fraction gets its own message: both are plausible
 * things to type, and "expected a whole number" alone would not say why. */
static int reject_common(const char *p, const char **why)
{
    p = skip_space(p);
    if (*p == '-') {
        *why = "negative values are not allowed";
        return PQ_EINVAL;
    }
    if (*p == '+') {
        *why = "write the number without a sign";
        return PQ_EINVAL;
    }
    const char *q = p;
    while (isdigit((unsigned char)*q))
        q++;
    if (q > p && (*q == '.' || *q == ',') && isdigit((unsigned char)q[1])) {
        *why = "fractions are not allowed (use a smaller unit)";
        return PQ_EINVAL;
    }
    return PQ_OK;
}

static const struct { const char *name; unsigned shift; } size_units[] = {
    {"", 0}, {"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40},
};

int un_parse_size(const char *s, uint64_t *out, const char **why)
{
    if (s == NULL) {
        *why = "missing value";
        return PQ_EINVAL;
    }
    if (reject_common(s, why) != 0)
        return PQ_EINVAL;
    const char *p = skip_space(s);
    uint64_t v;
    if (read_digits(&p, &v, why) != 0)
        return PQ_EINVAL;
    p = skip_space(p);
    size_t ulen = strlen(p);
    while (ulen > 0 && (p[ulen - 1] == ' ' || p[ulen - 1] == '\t'))
        ulen--;
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strlen(size_units[i].name) != ulen || strncasecmp(p, size_units[i].name, ulen) != 0)
            continue;
        unsigned sh = size_units[i].shift;
        if (sh > 0 && v > (UINT64_MAX >> sh)) {
            *why = "size too large";
            return PQ_EINVAL;
        }
        *out = v << sh;
        return PQ_OK;
    }
    *why = "unknown unit (expected B, KiB, MiB, GiB or TiB; KB/MB/GB are ambiguous)";
    return PQ_EINVAL;
}

static const struct { const char *name; uint64_t ms; } dur_units[] = {
    {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000},
};

/* Matches the longest unit at p ("ms" before "m"). */
static int read_dur_unit(const char **pp, uint64_t *ms)
{
    const char *p = *pp;
    size_t n = 0;
    while (isalpha((unsigned char)p[n]))
        n++;
    for (size_t i = 0; i < sizeof dur_units / sizeof dur_units[0]; i++)
        if (strlen(dur_units[i].name) == n && strncmp(p, dur_units[i].name, n) == 0) {
            *ms = dur_units[i].ms;
            *pp = p + n;
            return PQ_OK;
        }
    return PQ_EINVAL;
}

int un_parse_duration_ms(const char *s, uint64_t *out, const char **why)
{
    if (s == NULL) {
        *why = "missing value";
        return PQ_EINVAL;
    }
    if (reject_common(s, why) != 0)
        return PQ_EINVAL;
    const char *p = skip_space(s);
    uint64_t total = 0;
    bool any = false;
    while (*p != '\0') {
        uint64_t v, unit;
        if (read_digits(&p, &v, why) != 0)
            return PQ_EINVAL;
        p = skip_space(p);
        if (*p == '\0' && !any && v == 0)
            break; /* a bare 0 needs no unit */
        if (*p == '\0') {
            *why = "missing unit (expected ms, s, m or h, e.g. 60s)";
            return PQ_EINVAL;
        }
        if (read_dur_unit(&p, &unit) != 0) {
            *why = "unknown unit (expected ms, s, m or h)";
            return PQ_EINVAL;
        }
        if (v > UINT64_MAX / unit || total > UINT64_MAX - v * unit) {
            *why = "duration too large";
            return PQ_EINVAL;
        }
        total += v * unit;
        any = true;
        p = skip_space(p);
    }
    if (!any && p == skip_space(s)) {
        *why = "expected a duration like 500ms, 60s, 5m or 1h";
        return PQ_EINVAL;
    }
    *out = total;
    return PQ_OK;
}

int un_format_size(uint64_t bytes, char *buf, size_t n)
{
    static const char *names[] = {"TiB", "GiB", "MiB", "KiB"};
    static const unsigned shifts[] = {40, 30, 20, 10};
    for (size_t i = 0; bytes != 0 && i < 4; i++)
        if ((bytes & ((UINT64_C(1) << shifts[i]) - 1)) == 0)
            return snprintf(buf, n, "%" PRIu64 "%s", bytes >> shifts[i], names[i]);
    return snprintf(buf, n, "%" PRIu64, bytes);
}

int un_format_duration_ms(uint64_t ms, char *buf, size_t n)
{
    if (ms == 0)
        return snprintf(buf, n, "0");
    if (ms % 1000 != 0)
        return snprintf(buf, n, "%" PRIu64 "ms", ms);
    uint64_t s = ms / 1000, h = s / 3600, m = (s / 60) % 60, sec = s % 60;
    char tmp[64];
    size_t len = 0;
    if (h)
        len += (size_t)snprintf(tmp + len, sizeof tmp - len, "%" PRIu64 "h", h);
    if (m)
        len += (size_t)snprintf(tmp + len, sizeof tmp - len, "%" PRIu64 "m", m);
    if (sec)
        snprintf(tmp + len, sizeof tmp - len, "%" PRIu64 "s", sec);
    return snprintf(buf, n, "%s", tmp);
}
