/* s3_xml.c - S3's XML replies (see s3_xml.h). */
#include "s3_xml.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 64
#define TEXT_MAX 4096

typedef struct walker {
    const char *p;
    size_t n, pos;
    char names[S3_XML_MAX_DEPTH][NAME_MAX_LEN];
    bool has_child[S3_XML_MAX_DEPTH];
    int depth;
    char text[TEXT_MAX];
    size_t tlen;
    pq_err *err;
} walker;

static int bad(walker *w, const char *why)
{
    return pq_err_set(w->err, PQ_EPARSE, "S3 reply: malformed XML at byte %zu: %s", w->pos,
                      why);
}

static bool starts(const walker *w, const char *s)
{
    size_t k = strlen(s);
    return w->n - w->pos >= k && memcmp(w->p + w->pos, s, k) == 0;
}

/* Moves past the next occurrence of end; false when there is none. */
static bool skip_past(walker *w, const char *end)
{
    size_t k = strlen(end);
    for (size_t i = w->pos; i + k <= w->n; i++) {
        if (memcmp(w->p + i, end, k) == 0) {
            w->pos = i + k;
            return true;
        }
    }
    return false;
}

static void put_text(walker *w, const char *s, size_t k)
{
    size_t room = TEXT_MAX - 1 - w->tlen;
    if (k > room)
        k = room;
    memcpy(w->text + w->tlen, s, k);
    w->tlen += k;
}

static void put_utf8(walker *w, uint32_t c)
{
    char b[4];
    size_t k;
    if (c < 0x80) {
        b[0] = (char)c, k = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xC0 | c >> 6), b[1] = (char)(0x80 | (c & 63)), k = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xE0 | c >> 12), b[1] = (char)(0x80 | ((c >> 6) & 63));
        b[2] = (char)(0x80 | (c & 63)), k = 3;
    } else {
        b[0] = (char)(0xF0 | c >> 18), b[1] = (char)(0x80 | ((c >> 12) & 63));
        b[2] = (char)(0x80 | ((c >> 6) & 63)), b[3] = (char)(0x80 | (c & 63)), k = 4;
    }
    put_text(w, b, k);
}

static int entity(walker *w)
{
    static const struct { const char *name; char c; } named[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (starts(w, named[i].name)) {
            put_text(w, &named[i].c, 1);
            w->pos += strlen(named[i].name);
            return 0;
        }
    }
    if (!starts(w, "&#"))
        return bad(w, "unknown entity");
    size_t i = w->pos + 2;
    int base = 10;
    if (i < w->n && (w->p[i] == 'x' || w->p[i] == 'X'))
        base = 16, i++;
    uint32_t c = 0;
    size_t digits = 0;
    for (; i < w->n && w->p[i] != ';'; i++, digits++) {
        char ch = w->p[i];
        int d = ch >= '0' && ch <= '9' ? ch - '0'
              : base == 16 && ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
              : base == 16 && ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
        if (d < 0 || digits >= 8)
            return bad(w, "bad character reference");
        c = c * (uint32_t)base + (uint32_t)d;
    }
    if (i >= w->n || digits == 0 || c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return bad(w, "bad character reference");
    put_utf8(w, c);
    w->pos = i + 1;
    return 0;
}

/* Reads a tag name at pos into out (prefix dropped). */
static int read_name(walker *w, char out[NAME_MAX_LEN])
{
    size_t start = w->pos, colon = start;
    while (w->pos < w->n) {
        char c = w->p[w->pos];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '/' || c == '>')
            break;
        if (c == '<' || c == '&' || c == '"' || c == '\'' || c == '=')
            return bad(w, "bad character in a tag name");
        if (c == ':')
            colon = w->pos + 1;
        w->pos++;
    }
    size_t len = w->pos - colon;
    if (w->pos == start || len == 0)
        return bad(w, "empty tag name");
    if (len >= NAME_MAX_LEN)
        len = NAME_MAX_LEN - 1;
    memcpy(out, w->p + colon, len);
    out[len] = '\0';
    return 0;
}

/* Attributes ignored; quoted values may hold '>'. *empty: "/>". */
static int skip_attrs(walker *w, bool *empty)
{
    char q = 0;
    for (; w->pos < w->n; w->pos++) {
        char c = w->p[w->pos];
        if (c == '<')
            return bad(w, "'<' inside a tag");
        if (q != 0) {
            q = c == q ? 0 : q;
        } else if (c == '"' || c == '\'') {
            q = c;
        } else if (c == '>') {
            *empty = w->pos > 0 && w->p[w->pos - 1] == '/';
            w->pos++;
            return 0;
        }
    }
    return bad(w, "unterminated tag");
}

static int open_tag(walker *w, s3_xml_leaf_fn leaf, void *user)
{
    char name[NAME_MAX_LEN];
    bool empty = false;
    w->pos++;
    int rc = read_name(w, name);
    rc = rc ? rc : skip_attrs(w, &empty);
    if (rc != 0)
        return rc;
    if (w->depth > 0)
        w->has_child[w->depth - 1] = true;
    if (empty)
        return leaf ? leaf(user, w->depth > 0 ? w->names[w->depth - 1] : "", name, "", 0) : 0;
    if (w->depth == S3_XML_MAX_DEPTH)
        return bad(w, "elements nested too deep");
    memcpy(w->names[w->depth], name, NAME_MAX_LEN);
    w->has_child[w->depth] = false;
    w->depth++;
    w->tlen = 0;
    return 0;
}

static int close_tag(walker *w, s3_xml_leaf_fn leaf, s3_xml_close_fn close, void *user)
{
    char name[NAME_MAX_LEN];
    w->pos += 2;
    int rc = read_name(w, name);
    while (rc == 0 && w->pos < w->n && w->p[w->pos] != '>')
        w->pos++;
    if (rc != 0 || w->pos >= w->n)
        return rc ? rc : bad(w, "unterminated end tag");
    w->pos++;
    if (w->depth == 0 || strcmp(name, w->names[w->depth - 1]) != 0)
        return bad(w, "end tag does not match");
    w->depth--;
    const char *parent = w->depth > 0 ? w->names[w->depth - 1] : "";
    w->text[w->tlen] = '\0';
    if (!w->has_child[w->depth])
        rc = leaf ? leaf(user, parent, name, w->text, w->tlen) : 0;
    else
        rc = close ? close(user, name) : 0;
    w->tlen = 0;
    return rc;
}

static int markup(walker *w, s3_xml_leaf_fn leaf, s3_xml_close_fn close, void *user)
{
    if (starts(w, "<?"))
        return skip_past(w, "?>") ? 0 : bad(w, "unterminated <?");
    if (starts(w, "<!--"))
        return skip_past(w, "-->") ? 0 : bad(w, "unterminated comment");
    if (starts(w, "<![CDATA[")) {
        size_t from = w->pos + 9;
        w->pos = from;
        if (!skip_past(w, "]]>"))
            return bad(w, "unterminated CDATA");
        put_text(w, w->p + from, w->pos - 3 - from);
        return 0;
    }
    if (starts(w, "<!"))
        return skip_past(w, ">") ? 0 : bad(w, "unterminated declaration");
    if (starts(w, "</"))
        return close_tag(w, leaf, close, user);
    return open_tag(w, leaf, user);
}

int s3_xml_walk(const char *p, size_t n, s3_xml_leaf_fn leaf, s3_xml_close_fn close,
                void *user, pq_err *err)
{
    walker w = {.p = p, .n = n, .err = err};
    int rc = 0;
    while (rc == 0 && w.pos < n) {
        char c = p[w.pos];
        if (c == '<') {
            rc = markup(&w, leaf, close, user);
        } else if (c == '&') {
            rc = entity(&w);
        } else {
            if (w.depth == 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n')
                return bad(&w, "text outside the root element");
            put_text(&w, &p[w.pos], 1);
            w.pos++;
        }
    }
    if (rc == 0 && w.depth != 0)
        return bad(&w, "document ends inside an element");
    return rc;
}

/* ---- the replies ---------------------------------------------------------- */

typedef struct find_ctx {
    const char *tag;
    char *out;
    size_t cap;
} find_ctx;

#define FOUND 1

static void copy_out(char *out, size_t cap, const char *text, size_t len)
{
    if (cap == 0)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(out, text, len);
    out[len] = '\0';
}

static int find_leaf(void *user, const char *parent, const char *name, const char *text,
                     size_t len)
{
    (void)parent;
    find_ctx *f = user;
    if (strcmp(name, f->tag) != 0)
        return 0;
    copy_out(f->out, f->cap, text, len);
    return FOUND;
}

int s3_xml_text(const char *p, size_t n, const char *tag, char *out, size_t cap, pq_err *err)
{
    find_ctx f = {tag, out, cap};
    if (cap > 0)
        out[0] = '\0';
    int rc = s3_xml_walk(p, n, find_leaf, NULL, &f, err);
    return rc == FOUND ? 1 : rc;
}

static int error_leaf(void *user, const char *parent, const char *name, const char *text,
                      size_t len)
{
    s3_xml_error *e = user;
    if (strcmp(parent, "Error") != 0)
        return 0;
    if (strcmp(name, "Code") == 0)
        copy_out(e->code, sizeof e->code, text, len);
    else if (strcmp(name, "Message") == 0)
        copy_out(e->message, sizeof e->message, text, len);
    else if (strcmp(name, "Key") == 0)
        copy_out(e->key, sizeof e->key, text, len);
    else if (strcmp(name, "RequestId") == 0)
        copy_out(e->request_id, sizeof e->request_id, text, len);
    return 0;
}

int s3_xml_error_parse(const char *p, size_t n, s3_xml_error *out, pq_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = s3_xml_walk(p, n, error_leaf, NULL, out, err);
    if (rc != 0)
        return rc;
    return out->code[0] != '\0';
}

typedef struct list_ctx {
    s3_xml_upload_fn fn;
    void *user;
    s3_xml_uploads *page;
    char key[1024];
    char id[512];
} list_ctx;

static int list_leaf(void *user, const char *parent, const char *name, const char *text,
                     size_t len)
{
    list_ctx *l = user;
    if (strcmp(parent, "Upload") == 0) {
        if (strcmp(name, "Key") == 0)
            copy_out(l->key, sizeof l->key, text, len);
        else if (strcmp(name, "UploadId") == 0)
            copy_out(l->id, sizeof l->id, text, len);
    } else if (strcmp(parent, "ListMultipartUploadsResult") == 0) {
        if (strcmp(name, "IsTruncated") == 0)
            l->page->truncated = len == 4 && memcmp(text, "true", 4) == 0;
        else if (strcmp(name, "NextKeyMarker") == 0)
            copy_out(l->page->next_key, sizeof l->page->next_key, text, len);
        else if (strcmp(name, "NextUploadIdMarker") == 0)
            copy_out(l->page->next_upload_id, sizeof l->page->next_upload_id, text, len);
    }
    return 0;
}

static int list_close(void *user, const char *name)
{
    list_ctx *l = user;
    if (strcmp(name, "Upload") != 0)
        return 0;
    int rc = l->key[0] && l->id[0] && l->fn ? l->fn(l->user, l->key, l->id) : 0;
    l->key[0] = l->id[0] = '\0';
    return rc;
}

int s3_xml_list_uploads(const char *p, size_t n, s3_xml_upload_fn fn, void *user,
                        s3_xml_uploads *page, pq_err *err)
{
    memset(page, 0, sizeof *page);
    list_ctx l = {.fn = fn, .user = user, .page = page};
    return s3_xml_walk(p, n, list_leaf, list_close, &l, err);
}
