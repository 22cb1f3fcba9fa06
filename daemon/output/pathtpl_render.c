/* pathtpl_render.c - rendering a parsed output path template (pathtpl.h):
 * strftime fields in UTC, {host} {pid} {seq} {uuid}, {{FIELD}} values
 * escaped as Hive escapes partition values, and the check of the result.
 *
 * Thread: any (no shared state). */
#include "pathtpl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

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
                              "%d: '%.200s'", n, PT_NAME_MAX, path);
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

/* Hive's FileUtils.charToEscape (its non-Windows set): the controls, DEL
 * and the characters that mean something in a path, a URI or a glob. */
static bool hive_escapes(unsigned char c)
{
    switch (c) {   /* not strchr: every byte of every record's key comes here */
    case '"': case '#': case '%': case '\'': case '*': case '/': case ':': case '=':
    case '?': case '\\': case '{': case '[': case ']': case '^':
        return true;
    default:
        return c < 0x20 || c == 0x7F;
    }
}

size_t pt_hive_escape(const char *v, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    char tmp[4];
    if (v == NULL || len == 0) {       /* no escape applies to the default */
        v = PT_HIVE_DEFAULT;
        len = sizeof PT_HIVE_DEFAULT - 1;
    }
    /* "." and ".." would name the directory or its parent: escaped (Hive
     * does not, having no such value in its paths). */
    bool dots = (len == 1 && v[0] == '.') || (len == 2 && v[0] == '.' && v[1] == '.');
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)v[i];
        if (!dots && !hive_escapes(c)) {
            if (n + 1 < cap)
                out[n] = (char)c;
            n++;
            continue;
        }
        const size_t w = (size_t)snprintf(tmp, sizeof tmp, "%%%02X", c);
        for (size_t k = 0; k < w; k++, n++)
            if (n + 1 < cap)
                out[n] = tmp[k];
    }
    if (cap > 0)
        out[n < cap ? n : cap - 1] = '\0';
    return n;
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

/* The '{' at s (already parsed): its expansion; returns the length
 * consumed. *field counts the {{FIELD}}s rendered so far. */
static size_t put_brace(out *o, const char *s, const pt_vars *v, size_t *field)
{
    char tmp[PT_PATH_MAX];
    if (s[1] == '{') {
        const pt_value *val = &v->fields[(*field)++];
        size_t w = v->escaped ? val->len : pt_hive_escape(val->p, val->len, tmp, sizeof tmp);
        if (v->escaped)
            put(o, val->p, val->len);
        else if (w >= sizeof tmp)
            o->overflow = true;  /* longer than any path: refused below */
        else
            put(o, tmp, w);
        return (size_t)(strstr(s + 2, "}}") - s) + 2;
    }
    size_t len = (size_t)(strchr(s, '}') - s) + 1;
    if (strncmp(s, "{host}", len) == 0) {
        for (const char *h = v->host ? v->host : "localhost"; *h; h++) {
            const unsigned char ch = (unsigned char)*h;
            put(o, ch == '/' || ch < 0x20 || ch == 0x7F ? "_" : h, 1);
        }
    } else if (strncmp(s, "{pid}", len) == 0) {
        put(o, tmp, (size_t)snprintf(tmp, sizeof tmp, "%ld", v->pid));
    } else if (strncmp(s, "{uuid}", len) == 0) {
        put(o, tmp, uuid_v4(tmp));
    } else {
        put(o, tmp, (size_t)snprintf(tmp, sizeof tmp, "%0*" PRIu64, PT_SEQ_DIGITS, v->seq));
    }
    return len;
}

int pt_render_vars(const pt_template *t, const pt_vars *v, char *buf, size_t n, pq_err *err)
{
    if (n == 0)
        return pq_err_set(err, PQ_ELIMIT, "output path: no room");
    if (v->n_fields != t->n_fields)
        return pq_err_set(err, PQ_EINVAL, "output path '%s': %zu field values for %zu fields",
                          t->text, v->n_fields, t->n_fields);
    struct tm tm;
    if (gmtime_r(&v->t, &tm) == NULL)
        return pq_err_set(err, PQ_EINVAL, "output path: time %lld out of range",
                          (long long)v->t);
    out o = {.p = buf, .n = n};
    buf[0] = '\0';
    char tmp[64];
    size_t field = 0;
    for (const char *s = t->text; *s; s++) {
        if (s[0] == '%' && s[1] == 's') {
            /* strftime's %s goes through mktime, i.e. local time. */
            put(&o, tmp, (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)v->t));
            s++;
        } else if (s[0] == '%') {
            const char f[3] = {'%', *++s, '\0'};
            put(&o, tmp, strftime(tmp, sizeof tmp, f, &tm));
        } else if (s[0] == '{') {
            s += put_brace(&o, s, v, &field) - 1;
        } else {
            put(&o, s, 1);
        }
    }
    if (o.overflow)
        return pq_err_set(err, PQ_ELIMIT, "output path from '%s' is longer than %zu bytes",
                          t->text, n - 1);
    return pt_check_relative(buf, err);
}

int pt_render(const char *tmpl, time_t t, const char *host, long pid, uint64_t seq, char *buf,
              size_t n, pq_err *err)
{
    if (n > 0)
        buf[0] = '\0';
    int rc = pt_check(tmpl, err);     /* the error with its offset */
    if (rc != 0)
        return rc;
    pt_template tpl;
    size_t off = 0;
    rc = pt_parse(tmpl, &tpl, &off, err);
    if (rc == 0 && tpl.n_fields > 0)
        rc = pq_err_set(err, PQ_EINVAL, "output path '%s' has {{FIELD}}s: it is rendered per "
                        "record", tmpl);
    const pt_vars v = {.t = t, .host = host, .pid = pid, .seq = seq};
    rc = rc ? rc : pt_render_vars(&tpl, &v, buf, n, err);
    pt_free(&tpl);
    return rc;
}

/* Seconds in the period of strftime field c (0: it does not change). */
static int64_t field_period(char c)
{
    if (strchr("SsT", c) != NULL)
        return 1;
    if (strchr("MR", c) != NULL)
        return 60;
    if (strchr("HIlkp", c) != NULL)
        return 3600;
    return strchr("zZ%", c) != NULL ? 0 : 86400;
}

/* Index of the next strftime conversion character of the directories at
 * or after i (the one after its '%'), or t->dir_len when there is none. */
static size_t next_dir_field(const pt_template *t, size_t i)
{
    const char *s = t->text;
    while (i < t->dir_len) {
        if (s[i] == '{' && s[i + 1] == '{')
            i = (size_t)(strstr(s + i + 2, "}}") - s) + 2;
        else if (s[i] == '%')
            return i + 1;
        else
            i++;
    }
    return t->dir_len;
}

int64_t pt_dir_period(const pt_template *t)
{
    int64_t period = 0;
    for (size_t i = next_dir_field(t, 0); i < t->dir_len; i = next_dir_field(t, i + 1)) {
        int64_t f = field_period(t->text[i]);
        if (f != 0 && (period == 0 || f < period))
            period = f;
    }
    return period;
}

int pt_dir_time_key(const pt_template *t, time_t when, char *out, size_t n, pq_err *err)
{
    struct tm tm;
    if (!t->dir_time) {
        /* no time in the directories: nothing to render (a partition key
         * is built per record, and gmtime_r was a third of it; looking
         * for a field past each {{FIELD}}'s braces was a strstr each) */
        if (n > 0)
            out[0] = '\0';
        return 0;
    }
    if (gmtime_r(&when, &tm) == NULL)
        return pq_err_set(err, PQ_EINVAL, "output path: time %lld out of range", (long long)when);
    size_t len = 0;
    char tmp[64];
    for (size_t i = next_dir_field(t, 0); i < t->dir_len; i = next_dir_field(t, i + 1)) {
        const char f[3] = {'%', t->text[i], '\0'};
        size_t w = t->text[i] == 's' ? (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)when)
                                     : strftime(tmp, sizeof tmp, f, &tm);
        if (len + w + 2 > n)
            return pq_err_set(err, PQ_ELIMIT, "output path: the directories' time is longer "
                              "than %zu bytes", n);
        memcpy(out + len, tmp, w);
        len += w;
        out[len++] = '/';
    }
    if (n > 0)
        out[len < n ? len : n - 1] = '\0';
    return 0;
}
