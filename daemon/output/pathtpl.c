/* pathtpl.c - output path templates (see pathtpl.h). */
#include "pathtpl.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static const char *const placeholders[] = {"host", "pid", "seq", "uuid"};
enum { PH_HOST, PH_PID, PH_SEQ, PH_UUID, PH_COUNT };

/* Index of the placeholder starting at s ("{...}"), -1 if unknown, -2 if
 * unterminated; *len is its length including the braces. */
static int placeholder_at(const char *s, size_t *len)
{
    const char *close = strchr(s, '}');
    const char *open2 = strchr(s + 1, '{');
    if (close == NULL || (open2 && open2 < close))
        return -2;
    *len = (size_t)(close - s) + 1;
    for (int k = 0; k < PH_COUNT; k++)
        if (strlen(placeholders[k]) == *len - 2 && strncmp(s + 1, placeholders[k], *len - 2) == 0)
            return k;
    return -1;
}

int pt_check(const char *tmpl, pq_err *err)
{
    bool seq = false;
    if (tmpl == NULL || tmpl[0] == '\0')
        return pq_err_set(err, PQ_EINVAL, "output path template is empty");
    if (tmpl[0] == '/')
        return pq_err_set(err, PQ_EINVAL, "output path is absolute; it must be relative to "
                          "output.dir: '%s'", tmpl);
    for (size_t i = 0; tmpl[i]; i++) {
        const unsigned char ch = (unsigned char)tmpl[i];
        if (ch == '%') {
            if (tmpl[i + 1] == '\0' || strchr(PT_STRFTIME_FIELDS, tmpl[i + 1]) == NULL)
                return pq_err_set(err, PQ_EINVAL, "output path, offset %zu: unsupported "
                                  "field '%%%.1s' (use %%Y %%m %%d %%H %%M %%S %%j %%F %%s ... "
                                  "or %%%% for '%%') in '%s'", i, tmpl + i + 1, tmpl);
            i++;
        } else if (ch == '{') {
            size_t len = 0;
            int k = placeholder_at(tmpl + i, &len);
            if (k == -2)
                return pq_err_set(err, PQ_EINVAL, "output path, offset %zu: '{' without a "
                                  "closing '}' in '%s'", i, tmpl);
            if (k < 0)
                return pq_err_set(err, PQ_EINVAL, "output path, offset %zu: unknown "
                                  "placeholder '%.*s' (expected {host}, {pid}, {seq} or {uuid}) in "
                                  "'%s'", i, (int)len, tmpl + i, tmpl);
            seq |= k == PH_SEQ || k == PH_UUID;
            i += len - 1;
        } else if (ch == '}') {
            return pq_err_set(err, PQ_EINVAL, "output path, offset %zu: '}' without an "
                              "opening '{' in '%s'", i, tmpl);
        } else if (ch < 0x20 || ch == 0x7F) {
            return pq_err_set(err, PQ_EINVAL, "output path, offset %zu: control character "
                              "0x%02X in '%s'", i, ch, tmpl);
        } else if (ch == '/' && (tmpl[i + 1] == '/' || tmpl[i + 1] == '\0')) {
            return pq_err_set(err, PQ_EINVAL, "output path, offset %zu: empty directory name "
                              "in '%s'", i, tmpl);
        } else if (ch == '.' && (i == 0 || tmpl[i - 1] == '/') && tmpl[i + 1] == '.' &&
                   (tmpl[i + 2] == '/' || tmpl[i + 2] == '\0')) {
            return pq_err_set(err, PQ_EINVAL, "output path, offset %zu: '..' would leave "
                              "output.dir in '%s'", i, tmpl);
        }
    }
    if (!seq)
        return pq_err_set(err, PQ_EINVAL, "output path must contain {seq} or {uuid}, or files "
                          "rotated within the same period would collide: '%s'", tmpl);
    return PQ_OK;
}

int pt_check_relative(const char *path, pq_err *err)
{
    if (path[0] == '\0')
        return pq_err_set(err, PQ_EINVAL, "output path is empty");
    if (path[0] == '/')
        return pq_err_set(err, PQ_EINVAL, "output path is absolute; it must be relative to "
                          "the output directory: '%s'", path);
    const char *c = path;
    for (;;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (n == 0)
            return pq_err_set(err, PQ_EINVAL, "output path has an empty component: '%s'", path);
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return pq_err_set(err, PQ_EINVAL, "output path has a '..' component, which would "
                              "leave the output directory: '%s'", path);
        if (n > PT_NAME_MAX)
            return pq_err_set(err, PQ_ELIMIT, "output path: a component of %zu bytes exceeds "
                              "%d: '%s'", n, PT_NAME_MAX, path);
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)c[i] < 0x20 || c[i] == 0x7F)
                return pq_err_set(err, PQ_EINVAL, "output path has a control character: '%s'",
                                  path);
        if (slash == NULL)
            break;
        c = slash + 1;
    }
    if (strcmp(c, ".") == 0)
        return pq_err_set(err, PQ_EINVAL, "output path does not name a file: '%s'", path);
    return PQ_OK;
}

typedef struct out {
    char *p;
    size_t n, len;
    bool overflow;
} out;

static void put(out *o, const char *s, size_t len)
{
    if (o->overflow || len >= o->n - o->len) {
        o->overflow = true;
        return;
    }
    memcpy(o->p + o->len, s, len);
    o->len += len;
    o->p[o->len] = '\0';
}

/* RFC 9562 version 4 UUID, lowercase, into out (37 bytes). */
static size_t uuid_v4(char *out)
{
    uint8_t b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        /* Never blocks once the pool is initialised; fall back to time and pid. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)getpid();
        for (size_t i = 0; i < sizeof b; i++, x = x * 6364136223846793005u + 1442695040888963407u)
            b[i] = (uint8_t)(x >> 56);
    }
    b[6] = (uint8_t)((b[6] & 0x0F) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3F) | 0x80);
    size_t n = 0;
    for (size_t i = 0; i < sizeof b; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[n++] = '-';
        n += (size_t)snprintf(out + n, 3, "%02x", b[i]);
    }
    return n;
}

int pt_render(const char *tmpl, time_t t, const char *host, long pid, uint64_t seq, char *buf,
              size_t n, pq_err *err)
{
    int rc = pt_check(tmpl, err);
    if (rc != 0)
        return rc;
    if (n == 0)
        return pq_err_set(err, PQ_ELIMIT, "output path: no room");
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL)
        return pq_err_set(err, PQ_EINVAL, "output path: time %lld out of range", (long long)t);
    out o = {.p = buf, .n = n};
    buf[0] = '\0';
    char tmp[64];
    for (size_t i = 0; tmpl[i]; i++) {
        if (tmpl[i] == '%' && tmpl[i + 1] == 's') {
            /* strftime's %s goes through mktime, i.e. local time. */
            put(&o, tmp, (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)t));
            i++;
        } else if (tmpl[i] == '%') {
            const char f[3] = {'%', tmpl[++i], '\0'};
            size_t w = strftime(tmp, sizeof tmp, f, &tm);
            put(&o, tmp, w);
        } else if (tmpl[i] == '{') {
            size_t len = 0;
            int k = placeholder_at(tmpl + i, &len);
            i += len - 1;
            if (k == PH_HOST) {
                for (const char *h = host ? host : "localhost"; *h; h++) {
                    const unsigned char ch = (unsigned char)*h;
                    put(&o, ch == '/' || ch < 0x20 || ch == 0x7F ? "_" : h, 1);
                }
            } else if (k == PH_PID) {
                put(&o, tmp, (size_t)snprintf(tmp, sizeof tmp, "%ld", pid));
            } else if (k == PH_UUID) {
                put(&o, tmp, uuid_v4(tmp));
            } else {
                put(&o, tmp, (size_t)snprintf(tmp, sizeof tmp, "%0*" PRIu64, PT_SEQ_DIGITS, seq));
            }
        } else {
            put(&o, tmpl + i, 1);
        }
    }
    if (o.overflow)
        return pq_err_set(err, PQ_ELIMIT, "output path from '%s' is longer than %zu bytes", tmpl,
                          n - 1);
    return pt_check_relative(buf, err);
}
