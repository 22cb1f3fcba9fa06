/* pathtpl.c - the grammar of output path templates (see pathtpl.h): what
 * a template may contain, the {{FIELD}} paths split into record keys, and
 * every refusal with the byte offset it concerns. Rendering is in
 * pathtpl_render.c.
 *
 * Thread: any (no shared state). */
#include "pathtpl.h"

#include <stdlib.h>
#include <string.h>

static const char *const placeholders[] = {"host", "pid", "seq", "uuid"};
enum { PH_HOST, PH_PID, PH_SEQ, PH_UUID, PH_COUNT };

/* The error of a parse: the problem and where. */
static int bad(size_t *off, size_t at, pq_err *err, int code, const char *why)
{
    *off = at;
    return pq_err_set(err, code, "%s", why);
}

/* {name} at s: its index or -1 unknown, -2 unterminated; *len includes the
 * braces. */
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

static int add_key(pt_field *f, const char *p, size_t len, size_t cap, pq_err *err)
{
    if (f->keys == NULL && (f->keys = calloc(cap, sizeof *f->keys)) == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    if ((f->keys[f->n_keys] = strndup(p, len)) == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    f->n_keys++;
    return PQ_OK;
}

/* RFC 6901: "/a~1b/m~0n" -> ["a/b", "m~n"], unescaped in place of the
 * copy. *bad_at: offset in s of a '~' not followed by 0 or 1. */
static int split_pointer(pt_field *f, const char *s, size_t *bad_at, pq_err *err)
{
    size_t parts = 0;
    for (const char *p = s; *p; p++)
        parts += *p == '/';
    for (const char *p = s + 1;; p++) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int rc = add_key(f, p, len, parts, err);
        if (rc != 0)
            return rc;
        char *k = f->keys[f->n_keys - 1], *o = k;
        for (size_t i = 0; i < len; i++, o++) {
            *o = p[i];
            if (p[i] != '~')
                continue;
            if (i + 1 >= len || (p[i + 1] != '0' && p[i + 1] != '1')) {
                *bad_at = (size_t)(p + i - s);
                return pq_err_set(err, PQ_EINVAL, "'~' must be followed by 0 or 1 in a JSON "
                                  "Pointer (~0 is '~', ~1 is '/')");
            }
            *o = p[++i] == '0' ? '~' : '/';
        }
        *o = '\0';
        if (end == NULL)
            return PQ_OK;
        p = end;
    }
}

static int split_dotted(pt_field *f, const char *s, size_t *bad_at, pq_err *err)
{
    size_t parts = 1;
    for (const char *p = s; *p; p++)
        parts += *p == '.';
    for (const char *p = s;;) {
        const char *end = strchr(p, '.');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) {
            *bad_at = (size_t)(p - s);
            return pq_err_set(err, PQ_EINVAL, "empty key in a dotted path (for keys "
                              "containing dots use a JSON Pointer like {{/id.orig_h}})");
        }
        int rc = add_key(f, p, len, parts, err);
        if (rc != 0 || end == NULL)
            return rc;
        p = end + 1;
    }
}

/* {{FIELD}} at tmpl + at; *len includes the braces. */
static int parse_field(pt_template *t, const char *tmpl, size_t at, size_t *len, size_t *off,
                       pq_err *err)
{
    const char *s = tmpl + at + 2, *close = strstr(s, "}}");
    if (close == NULL)
        return bad(off, at, err, PQ_EINVAL, "'{{' without a closing '}}'");
    size_t n = (size_t)(close - s);
    *len = n + 4;
    if (n == 0)
        return bad(off, at, err, PQ_EINVAL, "empty field name in '{{}}'");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7F || s[i] == '{' || s[i] == '}')
            return bad(off, at + 2 + i, err, PQ_EINVAL, s[i] == '{' || s[i] == '}'
                       ? "a field name may not contain '{' or '}'"
                       : "control character in a field name");
    if (t->n_fields == PT_FIELDS_MAX)
        return bad(off, at, err, PQ_ELIMIT, "more than 16 {{FIELD}}s in one template");
    pt_field *f = &t->fields[t->n_fields++];
    char *text = strndup(s, n);
    if (text == NULL)
        return bad(off, at, err, PQ_ENOMEM, "out of memory");
    size_t bad_at = 0;
    int rc = pt_field_parse(text, f, &bad_at, err);
    free(text);
    f->off = at;
    *off = at + 2 + bad_at;
    return rc;
}

int pt_field_parse(const char *text, pt_field *f, size_t *off, pq_err *err)
{
    memset(f, 0, sizeof *f);
    *off = 0;
    if ((f->text = strdup(text)) == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    if (strcmp(f->text, "_index") == 0) {
        f->index = true;
        return PQ_OK;
    }
    if (f->text[0] == '\0')
        return pq_err_set(err, PQ_EINVAL, "empty field name");
    return f->text[0] == '/' ? split_pointer(f, f->text, off, err)
                             : split_dotted(f, f->text, off, err);
}

void pt_field_free(pt_field *f)
{
    for (size_t k = 0; k < f->n_keys; k++)
        free(f->keys[k]);
    free(f->keys);
    free(f->text);
    memset(f, 0, sizeof *f);
}

/* '{' at tmpl + i: a placeholder or a field; *seq set by {seq}/{uuid}. */
static int parse_brace(pt_template *t, const char *tmpl, size_t i, size_t *len, bool *seq,
                       size_t *off, pq_err *err)
{
    if (tmpl[i + 1] == '{')
        return parse_field(t, tmpl, i, len, off, err);
    int k = placeholder_at(tmpl + i, len);
    if (k == -2)
        return bad(off, i, err, PQ_EINVAL, "'{' without a closing '}'");
    if (k < 0) {
        *off = i;
        return pq_err_set(err, PQ_EINVAL, "unknown placeholder '%.*s' (expected {host}, {pid}, "
                          "{seq}, {uuid} or {{FIELD}})", (int)*len, tmpl + i);
    }
    *seq |= k == PH_SEQ || k == PH_UUID;
    if (k == PH_PID && !t->has_pid) {
        t->has_pid = true;
        t->pid_off = i;
    }
    if (k == PH_UUID && !t->has_uuid) {
        t->has_uuid = true;
        t->uuid_off = i;
    }
    return PQ_OK;
}

/* Everything that is neither '%' nor a brace. */
static int check_plain(const char *tmpl, size_t i, size_t *off, pq_err *err)
{
    const unsigned char ch = (unsigned char)tmpl[i];
    if (ch == '}')
        return bad(off, i, err, PQ_EINVAL, "'}' without an opening '{'");
    if (ch < 0x20 || ch == 0x7F)
        return bad(off, i, err, PQ_EINVAL, "control character in the path");
    if (ch == '/' && (tmpl[i + 1] == '/' || tmpl[i + 1] == '\0'))
        return bad(off, i, err, PQ_EINVAL, "empty directory name in the path");
    if (ch == '.' && (i == 0 || tmpl[i - 1] == '/') && tmpl[i + 1] == '.' &&
        (tmpl[i + 2] == '/' || tmpl[i + 2] == '\0'))
        return bad(off, i, err, PQ_EINVAL, "'..' would leave the output directory");
    return PQ_OK;
}

static int parse_body(pt_template *t, const char *tmpl, size_t *off, pq_err *err)
{
    bool seq = false;
    size_t first_pct = SIZE_MAX; /* outside the braces, which parse_brace takes whole */
    for (size_t i = 0; tmpl[i]; i++) {
        int rc = PQ_OK;
        size_t len = 1;
        if (tmpl[i] == '%') {
            if (tmpl[i + 1] == '\0' || strchr(PT_STRFTIME_FIELDS, tmpl[i + 1]) == NULL)
                return bad(off, i, err, PQ_EINVAL, "unsupported % field (use %Y %m %d %H %M %S "
                           "%j %F %s ... or %% for '%')");
            t->has_time |= tmpl[i + 1] != '%';
            if (first_pct == SIZE_MAX)
                first_pct = i;
            len = 2;
        } else if (tmpl[i] == '{') {
            rc = parse_brace(t, tmpl, i, &len, &seq, off, err);
        } else {
            rc = check_plain(tmpl, i, off, err);
        }
        if (rc != 0)
            return rc;
        if (tmpl[i] == '/')
            t->dir_len = i;
        i += len - 1;
    }
    t->dir_time = first_pct < t->dir_len;
    if (!seq)
        return bad(off, strlen(tmpl), err, PQ_EINVAL, "must contain {seq} or {uuid}, or files "
                   "rotated within the same period would collide");
    return PQ_OK;
}

int pt_parse(const char *tmpl, pt_template *out, size_t *off, pq_err *err)
{
    memset(out, 0, sizeof *out);
    *off = 0;
    if (tmpl == NULL || tmpl[0] == '\0')
        return pq_err_set(err, PQ_EINVAL, "empty template");
    if (tmpl[0] == '/')
        return pq_err_set(err, PQ_EINVAL, "absolute path; it must be relative to the output "
                          "directory");
    if ((out->text = strdup(tmpl)) == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return parse_body(out, tmpl, off, err);
}

void pt_free(pt_template *t)
{
    for (size_t i = 0; i < t->n_fields; i++)
        pt_field_free(&t->fields[i]);
    free(t->text);
    memset(t, 0, sizeof *t);
}

int pt_check(const char *tmpl, pq_err *err)
{
    pt_template t;
    size_t off = 0;
    int rc = pt_parse(tmpl, &t, &off, err);
    pt_free(&t);
    if (rc != 0)
        pq_err_prefix(err, rc, "output path, offset %zu", off);
    if (rc != 0 && err != NULL && tmpl != NULL && strlen(err->msg) + strlen(tmpl) + 8 < sizeof err->msg) {
        strcat(err->msg, " in '");
        strcat(err->msg, tmpl);
        strcat(err->msg, "'");
    }
    return rc;
}
