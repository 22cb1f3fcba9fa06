/* geojson.c - GeoJSON geometry objects (RFC 7946 3.1) to little-endian ISO
 * WKB for GEOMETRY / GEOGRAPHY columns. Decisions are listed in geojson.h.
 *
 * Two stages. The JSON handler records the text's structure without
 * judging it: every object that can be a geometry becomes a gj_node
 * (type, where its "coordinates" start, its "geometries" children), and
 * every "coordinates" value becomes a run of gj_items in document order
 * (an array item knows its child count and where its subtree ends, so the
 * walk can skip siblings). What is wrong with a member is noted on its
 * node but only reported when the walk needs that member, because the same
 * member can be a foreign one ("coordinates" on a GeometryCollection, a
 * "geometries" array on a Point) and foreign members are ignored whatever
 * they hold. Only errors that make the whole text unusable (malformed
 * JSON, a top-level value that is not an object) stop the parse.
 *
 * Then geom() walks from the outermost node twice: first to validate,
 * fix the dimension and count the output bytes, then, with exactly that
 * much reserved in out, to write. The walks share one code path so they
 * cannot disagree about the layout; the second cannot fail. Road not
 * taken: writing while parsing, which needs the type before the
 * coordinates (key order is free) and the dimension before the first
 * header (an empty point may precede the first position). */
#include "geojson.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NONE SIZE_MAX

enum { T_NONE = 0, /* 1..7: the WKB base codes */ T_POINT = 1, T_LINESTRING,
       T_POLYGON, T_MULTIPOINT, T_MULTILINESTRING, T_MULTIPOLYGON, T_COLLECTION,
       T_FEATURE, T_FEATURE_COLLECTION, T_UNKNOWN };

static const char *const type_names[8] = {
    "", "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString",
    "MultiPolygon", "GeometryCollection"};

/* One coordinates token: a number, or an array with n direct children
 * whose subtree ends before items[next]. */
typedef struct gj_item {
    double v;
    size_t off;   /* byte offset in the text */
    size_t n;
    size_t next;
    bool arr;
} gj_item;

/* A problem with one member, reported only if the member is used. */
enum { P_NONE, P_DUP, P_KIND, P_ELEM };
typedef struct gj_prob {
    int code;
    const char *got;  /* "a string", "null", ... */
    size_t off;
    size_t idx;       /* P_ELEM in "geometries": 1-based member number */
} gj_prob;

typedef struct gj_node {
    int type;
    size_t off;                 /* the '{' */
    size_t type_off;
    const char *type_s;         /* T_UNKNOWN: the name, for the message */
    size_t type_len;
    bool has_type, has_coords, has_geoms;
    size_t coords;              /* item index of the "coordinates" array */
    size_t first_child, last_child, next_sibling, n_children;
    gj_prob type_prob, coords_prob, geoms_prob;
} gj_node;

enum { F_GEOM, F_COORDS, F_GEOMS, F_SKIP };
typedef struct gj_frame {
    int kind;
    size_t node;   /* the geometry object this container belongs to */
    size_t item;   /* F_COORDS: its array item */
    size_t count;  /* F_GEOMS: elements seen */
} gj_frame;

/* What the next JSON value is, from where it appears. */
enum { C_ROOT, C_TYPE, C_COORDS, C_GEOMS, C_OTHER, C_COORD_ELEM, C_GEOMS_ELEM };

/* ---- growth --------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return PQ_OK;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (q == NULL)
        return PQ_ENOMEM;
    *p = q;
    *cap = n;
    return PQ_OK;
}

/* ---- stage 1: the JSON handler -------------------------------------------- */

static size_t here(const gj_converter *c)
{
    return json_parser_offset(&c->parser);
}

static int context(const gj_converter *c)
{
    if (c->n_frames == 0)
        return C_ROOT;
    const gj_frame *f = &c->frames[c->n_frames - 1];
    switch (f->kind) {
    case F_GEOM: return c->pending;
    case F_COORDS: return C_COORD_ELEM;
    case F_GEOMS: return C_GEOMS_ELEM;
    default: return C_OTHER;
    }
}

static gj_frame *top(gj_converter *c)
{
    assert(c->n_frames > 0);
    return &c->frames[c->n_frames - 1];
}

static void push(gj_converter *c, int kind, size_t node, size_t item)
{
    /* The JSON parser stops at max_depth, and frames has max_depth + 1. */
    assert(c->n_frames <= c->parser.max_depth);
    c->frames[c->n_frames++] = (gj_frame){kind, node, item, 0};
}

static void note(gj_prob *p, int code, const char *got, size_t off, size_t idx)
{
    if (p->code == P_NONE)
        *p = (gj_prob){code, got, off, idx};
}

static int oom(gj_converter *c)
{
    return pq_err_set(c->err, PQ_ENOMEM, "GeoJSON: out of memory at byte %zu",
                      here(c));
}

static int new_node(gj_converter *c, size_t parent)
{
    if (grow((void **)&c->nodes, &c->cap_nodes, c->n_nodes + 1, sizeof *c->nodes))
        return oom(c);
    size_t i = c->n_nodes++;
    c->nodes[i] = (gj_node){.off = here(c), .coords = NONE, .first_child = NONE,
                            .last_child = NONE, .next_sibling = NONE};
    if (parent != NONE) {
        gj_node *p = &c->nodes[parent];
        if (p->last_child == NONE)
            p->first_child = i;
        else
            c->nodes[p->last_child].next_sibling = i;
        p->last_child = i;
        p->n_children++;
    }
    push(c, F_GEOM, i, NONE);
    c->pending = C_OTHER;
    return PQ_OK;
}

static int new_item(gj_converter *c, bool arr, double v, size_t *out)
{
    if (grow((void **)&c->items, &c->cap_items, c->n_items + 1, sizeof *c->items))
        return oom(c);
    const size_t i = c->n_items++;
    c->items[i] = (gj_item){v, here(c), 0, i + 1, arr};
    *out = i;
    return PQ_OK;
}

/* A value of kind `got` where ctx does not take it: note it on the member
 * it spoils (or fail at the top level). */
static int misplaced(gj_converter *c, int ctx, const char *got)
{
    if (ctx == C_ROOT)
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: expected a geometry object, "
                          "got %s", got);
    if (ctx == C_OTHER)
        return PQ_OK;
    gj_frame *f = top(c);
    gj_node *n = &c->nodes[f->node];
    switch (ctx) {
    case C_TYPE: note(&n->type_prob, P_KIND, got, here(c), 0); break;
    case C_COORDS: note(&n->coords_prob, P_KIND, got, here(c), 0); break;
    case C_COORD_ELEM: note(&n->coords_prob, P_ELEM, got, here(c), 0); break;
    case C_GEOMS: note(&n->geoms_prob, P_KIND, got, here(c), 0); break;
    case C_GEOMS_ELEM: note(&n->geoms_prob, P_ELEM, got, here(c), ++f->count); break;
    default: assert(0);
    }
    return PQ_OK;
}

static int on_begin_object(void *user)
{
    gj_converter *c = user;
    int ctx = context(c);
    if (ctx == C_ROOT)
        return new_node(c, NONE);
    if (ctx == C_GEOMS_ELEM) {
        gj_frame *f = top(c);
        f->count++;
        return new_node(c, f->node);
    }
    int rc = misplaced(c, ctx, "an object");
    if (rc == PQ_OK)
        push(c, F_SKIP, top(c)->node, NONE);
    return rc;
}

static int on_begin_array(void *user)
{
    gj_converter *c = user;
    int ctx = context(c);
    size_t it;
    int rc;
    switch (ctx) {
    case C_COORDS:
        if ((rc = new_item(c, true, 0, &it)) != PQ_OK)
            return rc;
        c->nodes[top(c)->node].coords = it;
        push(c, F_COORDS, top(c)->node, it);
        return PQ_OK;
    case C_COORD_ELEM:
        if ((rc = new_item(c, true, 0, &it)) != PQ_OK)
            return rc;
        c->items[top(c)->item].n++;
        push(c, F_COORDS, top(c)->node, it);
        return PQ_OK;
    case C_GEOMS:
        push(c, F_GEOMS, top(c)->node, NONE);
        return PQ_OK;
    default:
        rc = misplaced(c, ctx, "an array");
        if (rc == PQ_OK)
            push(c, F_SKIP, top(c)->node, NONE);
        return rc;
    }
}

static int on_end(void *user)
{
    gj_converter *c = user;
    gj_frame *f = top(c);
    if (f->kind == F_COORDS)
        c->items[f->item].next = c->n_items;
    c->n_frames--;
    return PQ_OK;
}

static int on_key(void *user, const char *s, size_t len)
{
    gj_converter *c = user;
    gj_frame *f = top(c);
    if (f->kind != F_GEOM)
        return PQ_OK;
    gj_node *n = &c->nodes[f->node];
    c->pending = C_OTHER;
    if (len == 4 && memcmp(s, "type", 4) == 0) {
        if (n->has_type)
            note(&n->type_prob, P_DUP, "type", here(c), 0);
        else
            c->pending = C_TYPE;
        n->has_type = true;
    } else if (len == 11 && memcmp(s, "coordinates", 11) == 0) {
        if (n->has_coords)
            note(&n->coords_prob, P_DUP, "coordinates", here(c), 0);
        else
            c->pending = C_COORDS;
        n->has_coords = true;
    } else if (len == 10 && memcmp(s, "geometries", 10) == 0) {
        if (n->has_geoms)
            note(&n->geoms_prob, P_DUP, "geometries", here(c), 0);
        else
            c->pending = C_GEOMS;
        n->has_geoms = true;
    }
    return PQ_OK;
}

static int on_string(void *user, const char *s, size_t len)
{
    gj_converter *c = user;
    int ctx = context(c);
    if (ctx != C_TYPE)
        return misplaced(c, ctx, "a string");
    gj_node *n = &c->nodes[top(c)->node];
    n->type = T_UNKNOWN;
    n->type_off = here(c);
    n->type_s = s;
    n->type_len = len;
    for (int t = T_POINT; t <= T_COLLECTION; t++)
        if (strlen(type_names[t]) == len && memcmp(s, type_names[t], len) == 0)
            n->type = t;
    if (len == 7 && memcmp(s, "Feature", 7) == 0)
        n->type = T_FEATURE;
    else if (len == 17 && memcmp(s, "FeatureCollection", 17) == 0)
        n->type = T_FEATURE_COLLECTION;
    return PQ_OK;
}

static int on_number(void *user, const json_number *num)
{
    gj_converter *c = user;
    int ctx = context(c);
    if (ctx != C_COORD_ELEM)
        return misplaced(c, ctx, "a number");
    size_t it;
    int rc = new_item(c, false, num->d, &it);
    if (rc == PQ_OK)
        c->items[top(c)->item].n++;
    return rc;
}

static int on_boolean(void *user, bool v)
{
    gj_converter *c = user;
    return misplaced(c, context(c), v ? "true" : "false");
}

static int on_null(void *user)
{
    gj_converter *c = user;
    return misplaced(c, context(c), "null");
}

static const json_handler handler = {
    on_begin_object, on_key, on_end, on_begin_array, on_end,
    on_string, on_number, on_boolean, on_null, NULL};

/* ---- stage 2: validate + size, then write ---------------------------------- */

/* The writer's cursor; NULL in the validating walk. */
typedef uint8_t *cursor;

static uint32_t dim_code(unsigned dim)
{
    return dim == 3 ? 1000 : dim == 4 ? 3000 : 0;
}

static void put_u32(cursor *w, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        (*w)[i] = (uint8_t)(v >> (8 * i));
    *w += 4;
}

static void put_f64(cursor *w, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    for (int i = 0; i < 8; i++)
        (*w)[i] = (uint8_t)(v >> (8 * i));
    *w += 8;
}

static void put_header(gj_converter *c, cursor *w, uint32_t base)
{
    c->fixed_bytes += 5;
    if (w == NULL)
        return;
    *(*w)++ = 1; /* little-endian */
    put_u32(w, base + dim_code(c->dim));
}

static void put_count(gj_converter *c, cursor *w, size_t n)
{
    c->fixed_bytes += 4;
    if (w != NULL)
        put_u32(w, (uint32_t)n);
}

/* One coordinate tuple: the numbers of position item pos, or NaNs for
 * POINT EMPTY (pos == NONE). */
static void put_tuple(gj_converter *c, cursor *w, size_t pos)
{
    static const uint64_t nan_bits = 0x7FF8000000000000ull;
    double nan_v;
    memcpy(&nan_v, &nan_bits, sizeof nan_v);
    c->tuples++;
    if (w == NULL)
        return;
    for (size_t k = 0; k < c->dim; k++)
        put_f64(w, pos == NONE ? nan_v : c->items[pos + 1 + k].v);
}

static size_t next_sibling(const gj_converter *c, size_t i)
{
    return c->items[i].arr ? c->items[i].next : i + 1;
}

/* Who the coordinates belong to, for messages: "Polygon" or
 * "MultiPolygon polygon 3". */
typedef struct where {
    const char *type;
    const char *member_kind;   /* NULL: not a Multi* member */
    size_t member;             /* 1-based */
} where;

static const char *who(const where *at, char buf[64])
{
    if (at->member_kind == NULL)
        return at->type;
    snprintf(buf, 64, "%s %s %zu", at->type, at->member_kind, at->member);
    return buf;
}

/* items[i] must be an array holding `what`. */
static int expect_array(gj_converter *c, size_t i, const where *at, const char *what)
{
    char b[64];
    if (c->items[i].arr)
        return PQ_OK;
    return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: %s coordinates nested too "
                      "shallowly: byte %zu holds a number where %s was expected",
                      who(at, b), c->items[i].off, what);
}

static int position(gj_converter *c, cursor *w, size_t pos, const where *at)
{
    const gj_item *it = &c->items[pos];
    char b[64];
    assert(it->arr);
    if (w == NULL) {
        for (size_t k = 0, ch = pos + 1; k < it->n; k++, ch = next_sibling(c, ch))
            if (c->items[ch].arr)
                return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: %s coordinates nested "
                                  "too deeply: byte %zu holds an array inside a "
                                  "position", who(at, b), c->items[ch].off);
        if (it->n < 2 || it->n > 4)
            return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: %s position at byte %zu has "
                              "%zu numbers, needs 2 to 4 ([x, y], [x, y, z] or "
                              "[x, y, z, m])", who(at, b), it->off, it->n);
        if (c->dim == 0) {
            c->dim = (unsigned)it->n;
            c->dim_off = it->off;
        } else if (it->n != c->dim) {
            return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: position at byte %zu has %zu "
                              "numbers but the one at byte %zu has %u; one geometry "
                              "cannot mix dimensions", it->off, it->n, c->dim_off,
                              c->dim);
        }
        for (size_t k = 0; k < it->n; k++)
            if (!isfinite(c->items[pos + 1 + k].v))
                return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: number at byte %zu is "
                                  "not finite", c->items[pos + 1 + k].off);
    }
    put_tuple(c, w, pos);
    return PQ_OK;
}

/* The positions of a LineString (ring == 0) or of polygon ring `ring`
 * (1-based), after its count. */
static int path(gj_converter *c, cursor *w, size_t arr, const where *at, size_t ring)
{
    const gj_item *it = &c->items[arr];
    char b[64];
    put_count(c, w, it->n);
    size_t first = NONE, last = NONE;
    for (size_t k = 0, ch = arr + 1; k < it->n; k++, ch = next_sibling(c, ch)) {
        int rc = expect_array(c, ch, at, "a position");
        if (rc == PQ_OK)
            rc = position(c, w, ch, at);
        if (rc != PQ_OK)
            return rc;
        if (k == 0)
            first = ch;
        last = ch;
    }
    if (w != NULL)
        return PQ_OK;
    /* Counts after the positions, so that wrong nesting ("[[1,2],[3,4]]"
     * for a Polygon) is named as such rather than as a short ring. */
    if (ring == 0 && it->n == 1)
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: %s at byte %zu has 1 position, "
                          "needs at least 2 (or none, for an empty one)",
                          who(at, b), it->off);
    if (ring != 0 && it->n < 4)
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: %s ring %zu (byte %zu) has %zu "
                          "position%s, needs at least 4 and closed", who(at, b), ring,
                          it->off, it->n, it->n == 1 ? "" : "s");
    for (size_t k = 0; ring != 0 && k < c->dim; k++)
        if (c->items[first + 1 + k].v != c->items[last + 1 + k].v)
            return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: %s ring %zu (byte %zu) is not "
                              "closed: its last position (byte %zu) differs from its "
                              "first", who(at, b), ring, it->off, c->items[last].off);
    return PQ_OK;
}

static int polygon(gj_converter *c, cursor *w, size_t arr, const where *at)
{
    const gj_item *it = &c->items[arr];
    put_header(c, w, T_POLYGON);
    put_count(c, w, it->n);
    for (size_t k = 0, ch = arr + 1; k < it->n; k++, ch = next_sibling(c, ch)) {
        int rc = expect_array(c, ch, at, "a ring (an array of positions)");
        if (rc == PQ_OK)
            rc = path(c, w, ch, at, k + 1);
        if (rc != PQ_OK)
            return rc;
    }
    return PQ_OK;
}

/* A Multi* geometry: each member of the coordinates array is the
 * coordinates of one Point, LineString or Polygon. */
static int multi(gj_converter *c, cursor *w, size_t arr, int type, const where *top_at)
{
    static const char *const member_kinds[4] = {"point", "line", "polygon", ""};
    static const char *const expects[4] = {
        "a position", "a line (an array of positions)",
        "a polygon (an array of rings)", ""};
    const int base = type - 3;
    const gj_item *it = &c->items[arr];
    put_header(c, w, (uint32_t)type);
    put_count(c, w, it->n);
    for (size_t k = 0, ch = arr + 1; k < it->n; k++, ch = next_sibling(c, ch)) {
        where at = {top_at->type, member_kinds[base - 1], k + 1};
        int rc = expect_array(c, ch, top_at, expects[base - 1]);
        if (rc != PQ_OK)
            return rc;
        if (base == T_POINT) {
            put_header(c, w, T_POINT);
            rc = position(c, w, ch, &at);
        } else if (base == T_LINESTRING) {
            put_header(c, w, T_LINESTRING);
            rc = path(c, w, ch, &at, 0);
        } else {
            rc = polygon(c, w, ch, &at);
        }
        if (rc != PQ_OK)
            return rc;
    }
    return PQ_OK;
}

static int prob_error(gj_converter *c, const gj_prob *p, const char *member)
{
    switch (p->code) {
    case P_DUP:
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: second \"%s\" member at byte %zu "
                          "(a geometry has one)", member, p->off);
    case P_KIND:
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: \"%s\" at byte %zu is %s, expected "
                          "%s", member, p->off, p->got,
                          strcmp(member, "type") == 0 ? "a string" :
                          strcmp(member, "coordinates") == 0 ? "an array" :
                          "an array of geometry objects");
    case P_ELEM:
        if (strcmp(member, "geometries") == 0)
            return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: GeometryCollection member "
                              "%zu (byte %zu) is %s, expected a geometry object",
                              p->idx, p->off, p->got);
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: \"coordinates\" hold %s at byte "
                          "%zu; only numbers and arrays belong there", p->got, p->off);
    default:
        return PQ_OK;
    }
}

/* The type name as written, made printable and cut short for a message. */
static void printable(const char *s, size_t len, char out[40])
{
    size_t n = 0;
    for (size_t i = 0; i < len && n < 32; i++)
        out[n++] = s[i] >= 0x20 && s[i] < 0x7F && s[i] != '"' ? s[i] : '?';
    if (len > 32) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

static int type_error(gj_converter *c, const gj_node *n)
{
    char name[40];
    if (!n->has_type)
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: object at byte %zu has no \"type\" "
                          "member", n->off);
    if (n->type == T_FEATURE)
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: a Feature (byte %zu) is not a "
                          "geometry; pass its \"geometry\" member instead", n->off);
    if (n->type == T_FEATURE_COLLECTION)
        return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: a FeatureCollection (byte %zu) is "
                          "not a geometry; pass each feature's \"geometry\" member "
                          "instead", n->off);
    printable(n->type_s, n->type_len, name);
    for (int t = T_POINT; t <= T_COLLECTION; t++)
        if (strlen(type_names[t]) == n->type_len &&
            strncasecmp(n->type_s, type_names[t], n->type_len) == 0)
            return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: unknown geometry type \"%s\" "
                              "(byte %zu); type names are case-sensitive, did you mean "
                              "\"%s\"?", name, n->type_off, type_names[t]);
    return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: unknown geometry type \"%s\" (byte "
                      "%zu); expected Point, MultiPoint, LineString, MultiLineString, "
                      "Polygon, MultiPolygon or GeometryCollection", name, n->type_off);
}

/* One geometry object, `depth` levels inside the outermost (0). Recursion
 * is bounded by GJ_MAX_DEPTH. */
static int geom(gj_converter *c, cursor *w, size_t idx, unsigned depth)
{
    const gj_node *n = &c->nodes[idx];
    int rc;
    if (w == NULL) {
        if (depth >= GJ_MAX_DEPTH)
            return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: geometry at byte %zu is "
                              "nested %u levels deep; at most %d are allowed", n->off,
                              depth + 1, GJ_MAX_DEPTH);
        if ((rc = prob_error(c, &n->type_prob, "type")) != PQ_OK)
            return rc;
        if (n->type < T_POINT || n->type > T_COLLECTION)
            return type_error(c, n);
    }
    const where at = {type_names[n->type], NULL, 0};
    if (n->type == T_COLLECTION) {
        if (w == NULL) {
            if ((rc = prob_error(c, &n->geoms_prob, "geometries")) != PQ_OK)
                return rc;
            if (!n->has_geoms)
                return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: GeometryCollection at "
                                  "byte %zu has no \"geometries\" member", n->off);
        }
        put_header(c, w, T_COLLECTION);
        put_count(c, w, n->n_children);
        for (size_t ch = n->first_child; ch != NONE; ch = c->nodes[ch].next_sibling)
            if ((rc = geom(c, w, ch, depth + 1)) != PQ_OK)
                return rc;
        return PQ_OK;
    }
    if (w == NULL) {
        if ((rc = prob_error(c, &n->coords_prob, "coordinates")) != PQ_OK)
            return rc;
        if (!n->has_coords)
            return pq_err_set(c->err, PQ_ETYPE, "GeoJSON: %s at byte %zu has no "
                              "\"coordinates\" member", at.type, n->off);
    }
    const size_t arr = n->coords;
    assert(arr != NONE && c->items[arr].arr);
    switch (n->type) {
    case T_POINT:
        put_header(c, w, T_POINT);
        if (c->items[arr].n == 0) {
            put_tuple(c, w, NONE); /* POINT EMPTY */
            return PQ_OK;
        }
        return position(c, w, arr, &at);
    case T_LINESTRING:
        put_header(c, w, T_LINESTRING);
        return path(c, w, arr, &at, 0);
    case T_POLYGON:
        return polygon(c, w, arr, &at);
    default:
        return multi(c, w, arr, n->type, &at);
    }
}

/* ---- public API ------------------------------------------------------------ */

int gj_converter_init(gj_converter *c)
{
    memset(c, 0, sizeof *c);
    int rc = json_parser_init(&c->parser, JSON_DEFAULT_MAX_DEPTH);
    if (rc != PQ_OK)
        return rc;
    c->frames = malloc((c->parser.max_depth + 1) * sizeof *c->frames);
    if (c->frames == NULL) {
        json_parser_free(&c->parser);
        return PQ_ENOMEM;
    }
    return PQ_OK;
}

void gj_converter_free(gj_converter *c)
{
    json_parser_free(&c->parser);
    free(c->items);
    free(c->nodes);
    free(c->frames);
    memset(c, 0, sizeof *c);
}

int gj_to_wkb(gj_converter *c, const char *text, size_t len, pq_buf *out,
              pq_err *err)
{
    pq_err local;
    pq_err_clear(&local);
    c->err = &local;
    c->n_items = c->n_nodes = c->n_frames = 0;
    c->pending = C_OTHER;
    c->dim = 0;
    c->dim_off = 0;
    c->fixed_bytes = c->tuples = 0;

    /* Every count is at most the number of tokens, hence below len: with
     * len < 4 GiB no count can overflow WKB's uint32. */
    int rc = len > UINT32_MAX
        ? pq_err_set(&local, PQ_ETYPE, "GeoJSON: %zu bytes of text is more than "
                     "WKB counts can describe", len)
        : json_parse_line(&c->parser, text, len, &handler, c, &local);
    if (rc == JSON_EMPTY) {
        rc = pq_err_set(&local, PQ_ETYPE, "GeoJSON: empty text, expected a geometry "
                        "object");
    } else if (rc == PQ_EPARSE || rc == PQ_ELIMIT) {
        char why[sizeof local.msg];
        memcpy(why, local.msg, sizeof why);
        rc = pq_err_set(&local, PQ_ETYPE, "GeoJSON: invalid JSON: %s", why);
    }
    if (rc == PQ_OK) {
        assert(c->n_nodes > 0 && c->n_frames == 0);
        rc = geom(c, NULL, 0, 0);
    }
    if (rc == PQ_OK) {
        if (c->dim == 0)
            c->dim = 2; /* nothing but empty geometries: XY */
        const size_t size = c->fixed_bytes + c->tuples * 8 * c->dim;
        if (pq_buf_reserve(out, size) != 0) {
            rc = pq_err_set(&local, PQ_ENOMEM, "GeoJSON: out of memory for %zu bytes "
                            "of WKB", size);
        } else {
            cursor w = out->data + out->len;
            c->fixed_bytes = c->tuples = 0;
            rc = geom(c, &w, 0, 0);
            assert(rc == PQ_OK && (size_t)(w - (out->data + out->len)) == size);
            out->len += size;
        }
    }
    c->err = NULL;
    if (rc != PQ_OK && err != NULL)
        *err = local;
    else if (err != NULL)
        pq_err_clear(err);
    return rc;
}
