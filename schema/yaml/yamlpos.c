/* yamlpos.c - libyaml document loading, the up-front safety check of a
 * loaded document (depth, alias cycles and expansion, NULs), and scalar
 * getters whose errors carry FILE:LINE:COL and the key at fault. */
#include "yamlpos.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

unsigned long yp_line(const yaml_node_t *n) { return (unsigned long)n->start_mark.line + 1; }
unsigned long yp_col(const yaml_node_t *n) { return (unsigned long)n->start_mark.column + 1; }

static int verr(const yp_doc *d, unsigned long line, unsigned long col, pq_err *err,
                const char *fmt, va_list ap)
{
    char msg[sizeof err->msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return pq_err_set(err, PQ_EINVAL, "%s:%lu:%lu: %s", d->file ? d->file : "<config>", line, col,
                      msg);
}

int yp_err(const yp_doc *d, const yaml_node_t *n, pq_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = verr(d, n ? yp_line(n) : 1, n ? yp_col(n) : 1, err, fmt, ap);
    va_end(ap);
    return rc;
}

/* Quoted scalars start one character before their text; escapes or line
 * breaks would make the offset a guess, so those fall back to the start. */
int yp_err_at(const yp_doc *d, const yaml_node_t *n, size_t off, pq_err *err, const char *fmt, ...)
{
    unsigned long col = yp_col(n);
    if (n->type == YAML_SCALAR_NODE && n->start_mark.line == n->end_mark.line) {
        yaml_scalar_style_t st = n->data.scalar.style;
        size_t width = n->end_mark.column - n->start_mark.column;
        if (st == YAML_PLAIN_SCALAR_STYLE && width == n->data.scalar.length)
            col += off;
        else if ((st == YAML_SINGLE_QUOTED_SCALAR_STYLE || st == YAML_DOUBLE_QUOTED_SCALAR_STYLE) &&
                 width == n->data.scalar.length + 2)
            col += off + 1;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = verr(d, yp_line(n), col, err, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- loading -------------------------------------------------------------- */

static void line_col_of(const char *buf, size_t n, size_t off, unsigned long *line,
                        unsigned long *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < n; i++) {
        if (buf[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static int parser_error(yp_doc *d, const yaml_parser_t *p, const char *buf, size_t n, pq_err *err)
{
    unsigned long line, col;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->error == YAML_READER_ERROR) {
        line_col_of(buf, n, p->problem_offset, &line, &col);
        return pq_err_set(err, PQ_EINVAL, "%s:%lu:%lu: YAML: %s", d->file, line, col, problem);
    }
    if (p->error == YAML_MEMORY_ERROR)
        return pq_err_set(err, PQ_ENOMEM, "%s: out of memory while parsing YAML", d->file);
    line = (unsigned long)p->problem_mark.line + 1;
    col = (unsigned long)p->problem_mark.column + 1;
    if (p->context)
        return pq_err_set(err, PQ_EINVAL, "%s:%lu:%lu: YAML syntax error: %s %s (line %lu)",
                          d->file, line, col, problem, p->context,
                          (unsigned long)p->context_mark.line + 1);
    return pq_err_set(err, PQ_EINVAL, "%s:%lu:%lu: YAML syntax error: %s", d->file, line, col,
                      problem);
}

typedef struct walk {
    yp_doc *d;
    uint8_t *state;     /* 0 new, 1 on the current path, 2 done */
    uint32_t *size;     /* expanded size of done nodes, capped */
} walk;

/* Depth-first over the node graph. Memoised expanded sizes make a
 * "billion laughs" document cost one visit per distinct node. */
static int check_node(walk *w, int id, int depth, uint32_t *size, pq_err *err)
{
    yaml_node_t *n = yp_node(w->d, id);
    if (w->state[id - 1] == 2) {
        *size = w->size[id - 1];
        return PQ_OK;
    }
    if (w->state[id - 1] == 1)
        return yp_err(w->d, n, err, "recursive alias: a node may not contain itself");
    if (depth > YP_MAX_DEPTH)
        return yp_err(w->d, n, err, "nested deeper than %d levels", YP_MAX_DEPTH);
    w->state[id - 1] = 1;
    uint64_t total = 1;
    uint32_t sub;
    int rc = PQ_OK;
    if (n->type == YAML_SCALAR_NODE && strlen((const char *)n->data.scalar.value) !=
                                           n->data.scalar.length)
        rc = yp_err(w->d, n, err, "NUL character inside a value");
    if (n->type == YAML_SEQUENCE_NODE)
        for (yaml_node_item_t *it = n->data.sequence.items.start;
             rc == 0 && it < n->data.sequence.items.top; it++)
            if ((rc = check_node(w, *it, depth + 1, &sub, err)) == 0)
                total += sub;
    if (n->type == YAML_MAPPING_NODE)
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
             rc == 0 && p < n->data.mapping.pairs.top; p++) {
            if ((rc = check_node(w, p->key, depth + 1, &sub, err)) == 0)
                total += sub;
            if (rc == 0 && (rc = check_node(w, p->value, depth + 1, &sub, err)) == 0)
                total += sub;
        }
    if (rc == 0 && total > YP_MAX_NODES)
        rc = yp_err(w->d, n, err, "document too large: more than %d values once aliases are "
                    "expanded", YP_MAX_NODES);
    w->state[id - 1] = 2;
    w->size[id - 1] = (uint32_t)(total > YP_MAX_NODES ? YP_MAX_NODES + 1 : total);
    *size = w->size[id - 1];
    return rc;
}

static int check_document(yp_doc *d, pq_err *err)
{
    size_t n = (size_t)(d->doc.nodes.top - d->doc.nodes.start);
    if (n == 0)
        return PQ_OK;
    walk w = {.d = d, .state = calloc(n, 1), .size = calloc(n, sizeof(uint32_t))};
    uint32_t size;
    int rc = (w.state && w.size) ? check_node(&w, 1, 0, &size, err)
                                 : pq_err_set(err, PQ_ENOMEM, "%s: out of memory", d->file);
    free(w.state);
    free(w.size);
    return rc;
}

/* Loads the first document, then insists that the stream ends there. */
static int load_docs(yp_doc *d, yaml_parser_t *p, const char *buf, size_t n, pq_err *err)
{
    if (!yaml_parser_load(p, &d->doc))
        return parser_error(d, p, buf, n, err);
    d->loaded = true;
    yaml_document_t extra;
    if (!yaml_parser_load(p, &extra))
        return parser_error(d, p, buf, n, err);
    yaml_node_t *root = yaml_document_get_root_node(&extra);
    int rc = PQ_OK;
    if (root != NULL)
        rc = pq_err_set(err, PQ_EINVAL, "%s:%lu:%lu: only one YAML document is allowed per file",
                        d->file, yp_line(root), yp_col(root));
    yaml_document_delete(&extra);
    return rc ? rc : check_document(d, err);
}

int yp_load_buffer(yp_doc *d, const char *name, const void *buf, size_t n, pq_err *err)
{
    memset(d, 0, sizeof *d);
    d->file = strdup(name ? name : "<memory>");
    if (d->file == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return pq_err_set(err, PQ_ENOMEM, "%s: cannot initialise the YAML parser", d->file);
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, n);
    int rc = load_docs(d, &p, buf, n, err);
    yaml_parser_delete(&p);
    return rc;
}

int yp_load_file(yp_doc *d, const char *path, pq_err *err)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return pq_err_set(err, PQ_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(YP_MAX_FILE_BYTES + 1);
    size_t n = buf ? fread(buf, 1, YP_MAX_FILE_BYTES + 1, f) : 0;
    int rc = PQ_OK;
    if (buf == NULL)
        rc = pq_err_set(err, PQ_ENOMEM, "%s: out of memory", path);
    else if (ferror(f))
        rc = pq_err_set(err, PQ_EIO, "%s: read error: %s", path, strerror(errno));
    else if (n > YP_MAX_FILE_BYTES)
        rc = pq_err_set(err, PQ_EINVAL, "%s: larger than %zu MiB; not a configuration file?",
                        path, YP_MAX_FILE_BYTES >> 20);
    fclose(f);
    if (rc == 0)
        rc = yp_load_buffer(d, path, buf, n, err);
    free(buf);
    return rc;
}

void yp_free(yp_doc *d)
{
    if (d->loaded)
        yaml_document_delete(&d->doc);
    free(d->file);
    memset(d, 0, sizeof *d);
}

yaml_node_t *yp_root(yp_doc *d)
{
    return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

yaml_node_t *yp_node(yp_doc *d, int id)
{
    return yaml_document_get_node(&d->doc, id);
}

/* ---- shapes and keys -------------------------------------------------- */

const char *yp_scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

bool yp_is_null(const yaml_node_t *n)
{
    const char *s = yp_scalar(n);
    if (s == NULL || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
           strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

const char *yp_describe(const yaml_node_t *n, char *buf, size_t len)
{
    if (n == NULL)
        return "nothing";
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a list";
    if (yp_is_null(n))
        return "an empty value";
    const char *s = yp_scalar(n);
    size_t o = 0;
    if (len < 8)
        return "a value";
    buf[o++] = '\'';
    for (size_t i = 0; s[i] && o + 5 < len; i++)
        buf[o++] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
    if (strlen(s) + 5 >= len) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

static int want(const yp_doc *d, const yaml_node_t *n, yaml_node_type_t t, const char *what,
                const char *shape, pq_err *err)
{
    if (n->type == t)
        return PQ_OK;
    char b[48];
    return yp_err(d, n, err, "%s: expected %s, found %s", what, shape, yp_describe(n, b, sizeof b));
}

int yp_want_map(const yp_doc *d, const yaml_node_t *n, const char *what, pq_err *err)
{
    return want(d, n, YAML_MAPPING_NODE, what, "a mapping (key: value)", err);
}

int yp_want_seq(const yp_doc *d, const yaml_node_t *n, const char *what, pq_err *err)
{
    return want(d, n, YAML_SEQUENCE_NODE, what, "a list", err);
}

yaml_node_t *yp_get(yp_doc *d, const yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const char *k = yp_scalar(yp_node(d, p->key));
        if (k != NULL && strcmp(k, key) == 0)
            return yp_node(d, p->value);
    }
    return NULL;
}

yaml_node_t *yp_key_of(yp_doc *d, const yaml_node_t *map, const yaml_node_t *value)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
        if (yp_node(d, p->value) == value)
            return yp_node(d, p->key);
    return NULL;
}

/* Edit distance; only "close enough to be a typo" matters, so anything
 * above 3 is reported as 4. */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40 || (la > lb ? la - lb : lb - la) > 3)
        return 4;
    int row[41];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > 4 ? 4 : row[lb];
}

static void join_names(const char *const *names, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; names[i] && o + 1 < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", names[i]);
}

int yp_check_keys(yp_doc *d, const yaml_node_t *map, const char *what,
                  const char *const *allowed, pq_err *err)
{
    int rc = yp_want_map(d, map, what, err);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         rc == 0 && p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yp_node(d, p->key);
        const char *k = yp_scalar(kn);
        if (k == NULL)
            return yp_err(d, kn, err, "%s: keys must be plain names, not %s", what,
                          kn->type == YAML_MAPPING_NODE ? "mappings" : "lists");
        size_t i = 0;
        while (allowed[i] && strcmp(allowed[i], k) != 0)
            i++;
        if (allowed[i] == NULL) {
            char list[160];
            /* Two edits for short keys, three from 7 characters on
             * ("rotation" -> "rotate"). */
            int best = strlen(k) >= 7 ? 4 : 3;
            const char *guess = NULL;
            for (size_t j = 0; allowed[j]; j++) {
                int dist = distance(k, allowed[j]);
                if (dist < best) {
                    best = dist;
                    guess = allowed[j];
                }
            }
            if (guess != NULL)
                return yp_err(d, kn, err, "%s: unknown key '%.40s' (did you mean '%s'?)", what, k,
                              guess);
            join_names(allowed, list, sizeof list);
            return yp_err(d, kn, err, "%s: unknown key '%.40s' (expected %s)", what, k, list);
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            const char *k2 = yp_scalar(yp_node(d, q->key));
            if (k2 && strcmp(k, k2) == 0)
                return yp_err(d, kn, err, "%s: duplicate key '%s' (first at line %lu)", what, k,
                              yp_line(yp_node(d, q->key)));
        }
    }
    return rc;
}

/* ---- scalars ------------------------------------------------------------ */

static int want_scalar(const yp_doc *d, const yaml_node_t *n, const char *what,
                       const char *expected, const char **s, pq_err *err)
{
    *s = yp_scalar(n);
    if (*s != NULL && !yp_is_null(n))
        return PQ_OK;
    char b[48];
    return yp_err(d, n, err, "%s: expected %s, found %s", what, expected,
                  yp_describe(n, b, sizeof b));
}

int yp_bool(const yp_doc *d, const yaml_node_t *n, const char *what, bool *out, pq_err *err)
{
    const char *s;
    int rc = want_scalar(d, n, what, "true or false", &s, err);
    if (rc != 0)
        return rc;
    if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0) {
        *out = strcasecmp(s, "true") == 0;
        return PQ_OK;
    }
    char b[48];
    return yp_err(d, n, err, "%s: expected true or false, found %s", what,
                  yp_describe(n, b, sizeof b));
}

int yp_int(const yp_doc *d, const yaml_node_t *n, const char *what, int64_t min, int64_t max,
           int64_t *out, pq_err *err)
{
    const char *s;
    int rc = want_scalar(d, n, what, "a whole number", &s, err);
    if (rc != 0)
        return rc;
    const char *p = s + (*s == '-');
    bool digits = isdigit((unsigned char)*p);
    while (isdigit((unsigned char)*p))
        p++;
    errno = 0;
    long long v = digits && *p == '\0' ? strtoll(s, NULL, 10) : 0;
    char b[48];
    if (!digits || *p != '\0')
        return yp_err(d, n, err, "%s: expected a whole number, found %s", what,
                      yp_describe(n, b, sizeof b));
    if (errno == ERANGE || v < min || v > max)
        return yp_err(d, n, err, "%s: %s is out of range %lld..%lld", what, s, (long long)min,
                      (long long)max);
    *out = v;
    return PQ_OK;
}

int yp_double(const yp_doc *d, const yaml_node_t *n, const char *what, double *out, pq_err *err)
{
    const char *s;
    int rc = want_scalar(d, n, what, "a number", &s, err);
    if (rc != 0)
        return rc;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    bool ok = *end == '\0' && s[0] != '\0' && errno != ERANGE && isfinite(v) &&
              strpbrk(s, "xXiInN") == NULL && !isspace((unsigned char)s[0]);
    char b[48];
    if (!ok)
        return yp_err(d, n, err, "%s: expected a number, found %s", what,
                      yp_describe(n, b, sizeof b));
    *out = v;
    return PQ_OK;
}

int yp_size(const yp_doc *d, const yaml_node_t *n, const char *what, uint64_t max, uint64_t *out,
            pq_err *err)
{
    const char *s, *why;
    int rc = want_scalar(d, n, what, "a size like 1048576, 64KiB, 256MiB or 2GiB", &s, err);
    if (rc != 0)
        return rc;
    char b[48];
    if (un_parse_size(s, out, &why) != 0)
        return yp_err(d, n, err, "%s: %s: %s (expected a size like 1048576, 64KiB, 256MiB, 2GiB)",
                      what, yp_describe(n, b, sizeof b), why);
    if (*out > max) {
        char m[32];
        un_format_size(max, m, sizeof m);
        return yp_err(d, n, err, "%s: %s is larger than the maximum %s", what,
                      yp_describe(n, b, sizeof b), m);
    }
    return PQ_OK;
}

int yp_duration_ms(const yp_doc *d, const yaml_node_t *n, const char *what, uint64_t *out,
                   pq_err *err)
{
    const char *s, *why;
    int rc = want_scalar(d, n, what, "a duration like 500ms, 60s, 5m or 1h", &s, err);
    if (rc != 0)
        return rc;
    char b[48];
    if (un_parse_duration_ms(s, out, &why) != 0)
        return yp_err(d, n, err, "%s: %s: %s (expected a duration like 500ms, 60s, 5m, 1h30m)",
                      what, yp_describe(n, b, sizeof b), why);
    return PQ_OK;
}

int yp_str(const yp_doc *d, const yaml_node_t *n, const char *what, const char **out, pq_err *err)
{
    int rc = want_scalar(d, n, what, "a non-empty string", out, err);
    if (rc == 0 && (*out)[0] == '\0')
        return yp_err(d, n, err, "%s: expected a non-empty string, found ''", what);
    return rc;
}

int yp_strdup(const yp_doc *d, const yaml_node_t *n, const char *what, char **out, pq_err *err)
{
    const char *s;
    int rc = yp_str(d, n, what, &s, err);
    if (rc != 0)
        return rc;
    char *copy = strdup(s);
    if (copy == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    free(*out);
    *out = copy;
    return PQ_OK;
}

int yp_enum(const yp_doc *d, const yaml_node_t *n, const char *what, const char *const *names,
            int *index, pq_err *err)
{
    char list[160];
    join_names(names, list, sizeof list);
    const char *s;
    int rc = want_scalar(d, n, what, list, &s, err);
    if (rc != 0)
        return rc;
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], s) == 0) {
            *index = i;
            return PQ_OK;
        }
    char b[48];
    return yp_err(d, n, err, "%s: unknown value %s (expected %s)", what,
                  yp_describe(n, b, sizeof b), list);
}
