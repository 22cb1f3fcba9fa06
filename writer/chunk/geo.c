/* geo.c - GeospatialStatistics from ISO WKB values (parquet.thrift
 * BoundingBox / GeospatialStatistics; Geospatial.md "Bounding Box",
 * "Geospatial Types", "Special geospatial values"; OGC SFA 1.2.1 WKB).
 *
 * A value is parsed into a scratch accumulator and folded into the stats
 * only when the whole value parsed, so a bad value never leaves half a
 * geometry in the box. The parser checks every count against the bytes
 * left before looping and caps nesting, so hostile input costs at most
 * O(len) time and bounded stack. */
#include "geo.h"

#include <math.h>
#include <string.h>

#define MAX_DEPTH 32
#define DEG (180.0 / 3.14159265358979323846)
/* Widening for the interior latitude of an edge, which is computed, not
 * read: absorbs rounding so the box never undercuts the true arc. */
#define BULGE_EPS 1e-9

static const pq_geo_range empty_range = {INFINITY, -INFINITY};

void pq_geo_stats_reset(pq_geo_stats *s)
{
    s->types_known = true;
    s->world = false;
    s->types = 0;
    s->values = 0;
    s->has_x = false;
    s->x = s->y = s->z = s->m = empty_range;
}

void pq_geo_stats_init(pq_geo_stats *s, bool geography)
{
    s->geography = geography;
    pq_geo_stats_reset(s);
}

void pq_geo_stats_free(pq_geo_stats *s)
{
    (void)s;
}

/* ---- ranges and (for GEOGRAPHY) antimeridian-aware x spans -------------- */

static void range_add(pq_geo_range *r, double v)
{
    r->lo = v < r->lo ? v : r->lo;
    r->hi = v > r->hi ? v : r->hi;
}

static void range_union(pq_geo_range *r, pq_geo_range o)
{
    if (o.lo <= o.hi) {
        range_add(r, o.lo);
        range_add(r, o.hi);
    }
}

/* A GEOGRAPHY x span is [lo, hi] when lo <= hi, else [lo, 180] U [-180, hi]
 * (Geospatial.md: xmin > xmax wraps the antimeridian). -180 and 180 stay
 * distinct numbers, because readers compare numerically. */
static double span_len(pq_geo_range a)
{
    return a.lo <= a.hi ? a.hi - a.lo : 360.0 - (a.lo - a.hi);
}

static bool span_covers(pq_geo_range c, pq_geo_range a)
{
    bool cw = c.lo > c.hi, aw = a.lo > a.hi;
    if (!aw && !cw)
        return a.lo >= c.lo && a.hi <= c.hi;
    if (!aw)
        return a.lo >= c.lo || a.hi <= c.hi;
    if (!cw)
        return c.lo <= -180.0 && c.hi >= 180.0;
    return a.lo >= c.lo && a.hi <= c.hi;
}

/* The smallest span covering both starts at one of the two lower ends and
 * stops at one of the two upper ends; the full range is the fallback. */
static pq_geo_range span_union(pq_geo_range a, pq_geo_range b)
{
    const pq_geo_range cand[5] = {
        a, b, {a.lo, b.hi}, {b.lo, a.hi}, {-180.0, 180.0},
    };
    pq_geo_range best = cand[4];
    for (size_t i = 0; i < 4; i++) {
        if (span_len(cand[i]) < span_len(best) && span_covers(cand[i], a) &&
            span_covers(cand[i], b))
            best = cand[i];
    }
    return best;
}

static void x_add_span(pq_geo_stats *t, pq_geo_range sp)
{
    if (!t->has_x)
        t->x = sp;
    else if (t->geography)
        t->x = span_union(t->x, sp);
    else
        range_union(&t->x, sp);
    t->has_x = true;
}

static void x_add(pq_geo_stats *t, double x)
{
    x_add_span(t, (pq_geo_range){x, x});
}

/* ---- coordinates and edges ----------------------------------------------- */

typedef struct coord {
    double x, y, z, m; /* z, m NaN when the geometry has none */
} coord;

/* Geospatial.md special values: NaN always; for GEOGRAPHY also anything
 * outside [-180, 180] x [-90, 90] (the comparisons are false for NaN). */
static bool x_ok(const pq_geo_stats *t, double x)
{
    return t->geography ? x >= -180.0 && x <= 180.0 : !isnan(x);
}

static bool y_ok(const pq_geo_stats *t, double y)
{
    return t->geography ? y >= -90.0 && y <= 90.0 : !isnan(y);
}

static bool xy_ok(const pq_geo_stats *t, const coord *c)
{
    return x_ok(t, c->x) && y_ok(t, c->y);
}

static void add_vertex(pq_geo_stats *t, const coord *c)
{
    if (x_ok(t, c->x))
        x_add(t, c->x);
    if (y_ok(t, c->y))
        range_add(&t->y, c->y);
    if (!isnan(c->z))
        range_add(&t->z, c->z);
    if (!isnan(c->m))
        range_add(&t->m, c->m);
}

static void set_world(pq_geo_stats *t)
{
    t->world = true;
    x_add_span(t, (pq_geo_range){-180.0, 180.0});
    range_add(&t->y, -90.0);
    range_add(&t->y, 90.0);
}

static void unit_vector(const coord *c, double v[3])
{
    double lon = c->x / DEG, lat = c->y / DEG;
    v[0] = cos(lat) * cos(lon);
    v[1] = cos(lat) * sin(lon);
    v[2] = sin(lat);
}

static void cross(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* v (on the great circle with normal n = p x q) lies on the minor arc
 * from p to q iff it is reached from p, and q from it, turning about n. */
static bool on_arc(const double p[3], const double q[3], const double n[3],
                   const double v[3])
{
    double pv[3], vq[3];
    cross(p, v, pv);
    cross(v, q, vq);
    return dot(pv, n) >= 0.0 && dot(vq, n) >= 0.0;
}

/* A great-circle arc reaches beyond its endpoints' latitudes when the
 * circle's northmost (or southmost) point lies on the arc. */
static void add_bulge(pq_geo_stats *t, const coord *a, const coord *b)
{
    double p[3], q[3], n[3];
    unit_vector(a, p);
    unit_vector(b, q);
    cross(p, q, n);
    double nn = sqrt(dot(n, n));
    if (nn < 1e-12) {
        if (dot(p, q) < 0.0)
            set_world(t); /* antipodal: no unique shortest edge */
        return;
    }
    double h = hypot(n[0], n[1]);
    if (h == 0.0)
        return; /* the equator: no bulge */
    double top[3] = {-n[2] * n[0], -n[2] * n[1], h * h};
    double bottom[3] = {-top[0], -top[1], -top[2]};
    double lat = asin(fmin(1.0, h / nn)) * DEG;
    if (on_arc(p, q, n, top))
        range_add(&t->y, fmin(90.0, lat + BULGE_EPS));
    if (on_arc(p, q, n, bottom))
        range_add(&t->y, fmax(-90.0, -lat - BULGE_EPS));
}

/* GEOGRAPHY edge a-b (both with valid x and y). Longitude moves
 * monotonically the short way round; a pole endpoint has no longitude of
 * its own, so the edge runs along the other endpoint's meridian. */
static void add_edge(pq_geo_stats *t, const coord *a, const coord *b)
{
    bool pa = fabs(a->y) == 90.0, pb = fabs(b->y) == 90.0;
    if (pa && pb) {
        if (a->y != b->y)
            set_world(t);
        return;
    }
    if (pa || pb) {
        x_add(t, pa ? b->x : a->x);
        return;
    }
    double lo = fmin(a->x, b->x), hi = fmax(a->x, b->x);
    x_add_span(t, hi - lo <= 180.0 ? (pq_geo_range){lo, hi} : (pq_geo_range){hi, lo});
    add_bulge(t, a, b);
}

/* Signed longitude step the short way, in (-180, 180]. */
static double lon_step(double from, double to)
{
    double d = to - from;
    if (d > 180.0)
        d -= 360.0;
    else if (d <= -180.0)
        d += 360.0;
    return d;
}

/* ---- WKB reader ---------------------------------------------------------- */

typedef struct wkb {
    const uint8_t *p;
    size_t len, pos;
    pq_err *err;
} wkb;

static size_t left(const wkb *r)
{
    return r->len - r->pos;
}

static int truncated(wkb *r, const char *what, size_t need)
{
    return pq_err_set(r->err, PQ_EPARSE, "WKB byte %zu: %s needs %zu bytes, %zu left",
                      r->pos, what, need, left(r));
}

static uint64_t take(wkb *r, size_t n, bool le)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = r->p[r->pos + i];
        v |= b << (8 * (le ? i : n - 1 - i));
    }
    r->pos += n;
    return v;
}

static int read_u32(wkb *r, bool le, const char *what, uint32_t *out)
{
    if (left(r) < 4)
        return truncated(r, what, 4);
    *out = (uint32_t)take(r, 4, le);
    return PQ_OK;
}

/* Caller has checked that 8 bytes are left. */
static double take_f64(wkb *r, bool le)
{
    uint64_t bits = take(r, 8, le);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* dim: 0 XY, 1 XYZ, 2 XYM, 3 XYZM (ISO code / 1000). */
static size_t coord_bytes(int dim)
{
    return 8 * (2 + (dim == 1 || dim == 2) + 2 * (dim == 3));
}

static coord take_coord(wkb *r, bool le, int dim)
{
    coord c = {0, 0, NAN, NAN};
    c.x = take_f64(r, le); /* initialiser order is unspecified in C */
    c.y = take_f64(r, le);
    if (dim == 1 || dim == 3)
        c.z = take_f64(r, le);
    if (dim == 2 || dim == 3)
        c.m = take_f64(r, le);
    return c;
}

/* Checks a count read from the input against the bytes that must follow,
 * so a lying count fails before any loop runs. */
static int check_count(wkb *r, uint32_t count, size_t min_each, const char *what)
{
    if ((uint64_t)count * min_each > left(r))
        return pq_err_set(r->err, PQ_EPARSE, "WKB byte %zu: %u %s need at least %llu "
                          "bytes, %zu left", r->pos, count, what,
                          (unsigned long long)count * min_each, left(r));
    return PQ_OK;
}

/* ---- geometries ---------------------------------------------------------- */

/* Ring state for GEOGRAPHY: the running longitude winding (a ring that
 * winds once around a pole sums to +-360) and the endpoints it needs. */
typedef struct path {
    coord first, prev;
    bool have_first, have_prev;
    double winding, first_lon, last_lon;
    bool have_lon;
} path;

static void path_vertex(pq_geo_stats *t, path *pa, const coord *c)
{
    add_vertex(t, c);
    if (!t->geography)
        return;
    if (!xy_ok(t, c)) {
        pa->have_prev = false; /* an invalid vertex breaks the chain */
        return;
    }
    if (pa->have_prev)
        add_edge(t, &pa->prev, c);
    if (!pa->have_first) {
        pa->first = *c;
        pa->have_first = true;
    }
    pa->prev = *c;
    pa->have_prev = true;
    if (fabs(c->y) == 90.0)
        return;
    if (pa->have_lon)
        pa->winding += lon_step(pa->last_lon, c->x);
    else
        pa->first_lon = c->x;
    pa->last_lon = c->x;
    pa->have_lon = true;
}

static void ring_close(pq_geo_stats *t, path *pa)
{
    if (pa->have_prev && pa->have_first &&
        (pa->prev.x != pa->first.x || pa->prev.y != pa->first.y))
        add_edge(t, &pa->prev, &pa->first);
    if (pa->have_lon)
        pa->winding += lon_step(pa->last_lon, pa->first_lon);
    if (fabs(pa->winding) > 180.0)
        set_world(t);
}

static int parse_path(wkb *r, pq_geo_stats *t, bool le, int dim, bool ring)
{
    uint32_t n = 0;
    int rc = read_u32(r, le, ring ? "ring point count" : "point count", &n);
    if (rc == PQ_OK)
        rc = check_count(r, n, coord_bytes(dim), "points");
    if (rc != PQ_OK)
        return rc;
    path pa;
    memset(&pa, 0, sizeof pa);
    for (uint32_t i = 0; i < n; i++) {
        coord c = take_coord(r, le, dim);
        path_vertex(t, &pa, &c);
    }
    if (ring && t->geography)
        ring_close(t, &pa);
    return PQ_OK;
}

static int parse_polygon(wkb *r, pq_geo_stats *t, bool le, int dim)
{
    uint32_t n = 0;
    int rc = read_u32(r, le, "ring count", &n);
    if (rc == PQ_OK)
        rc = check_count(r, n, 4, "rings");
    for (uint32_t i = 0; rc == PQ_OK && i < n; i++)
        rc = parse_path(r, t, le, dim, true);
    return rc;
}

static int parse_geometry(wkb *r, pq_geo_stats *t, int depth, uint32_t want_base,
                          int want_dim, uint32_t *code_out);

/* Multi*: every member has the matching base type; all members of a
 * multi or collection share the parent's dimension (OGC SFA). */
static int parse_members(wkb *r, pq_geo_stats *t, bool le, int depth,
                         uint32_t member_base, int dim)
{
    uint32_t n = 0;
    int rc = read_u32(r, le, "member count", &n);
    if (rc == PQ_OK)
        rc = check_count(r, n, 9, "members"); /* 9 = smallest member */
    for (uint32_t i = 0; rc == PQ_OK && i < n; i++)
        rc = parse_geometry(r, t, depth + 1, member_base, dim, NULL);
    return rc;
}

static int parse_header(wkb *r, bool *le, uint32_t *base, int *dim)
{
    if (left(r) < 5)
        return truncated(r, "geometry header", 5);
    uint8_t order = r->p[r->pos];
    if (order > 1)
        return pq_err_set(r->err, PQ_EPARSE, "WKB byte %zu: byte order %u is neither "
                          "0 (big-endian) nor 1 (little-endian)", r->pos, order);
    r->pos++;
    *le = order == 1;
    uint32_t code = (uint32_t)take(r, 4, *le);
    if (code & 0xE0000000u)
        return pq_err_set(r->err, PQ_EPARSE, "WKB byte %zu: type 0x%08x has EWKB "
                          "flags; ISO WKB (Z/M as +1000/+2000/+3000) is required",
                          r->pos - 4, code);
    *base = code % 1000;
    *dim = (int)(code / 1000);
    if (*base < 1 || *base > 7 || *dim > 3)
        return pq_err_set(r->err, PQ_EPARSE, "WKB byte %zu: unsupported geometry type "
                          "%u (expected 1..7 plus 0/1000/2000/3000)", r->pos - 4, code);
    return PQ_OK;
}

static int parse_geometry(wkb *r, pq_geo_stats *t, int depth, uint32_t want_base,
                          int want_dim, uint32_t *code_out)
{
    static const char *const names[8] = {"", "Point", "LineString", "Polygon",
                                         "MultiPoint", "MultiLineString",
                                         "MultiPolygon", "GeometryCollection"};
    if (depth > MAX_DEPTH)
        return pq_err_set(r->err, PQ_EPARSE, "WKB byte %zu: geometries nested deeper "
                          "than %d levels", r->pos, MAX_DEPTH);
    bool le = false;
    uint32_t base = 0;
    int dim = 0;
    size_t at = r->pos;
    int rc = parse_header(r, &le, &base, &dim);
    if (rc != PQ_OK)
        return rc;
    if (want_base != 0 && base != want_base)
        return pq_err_set(r->err, PQ_EPARSE, "WKB byte %zu: %s member is a %s",
                          at, names[want_base + 3], names[base]);
    if (want_dim >= 0 && dim != want_dim)
        return pq_err_set(r->err, PQ_EPARSE, "WKB byte %zu: member type %u mixes "
                          "dimensions with its parent", at, (unsigned)dim * 1000 + base);
    if (code_out != NULL)
        *code_out = (uint32_t)dim * 1000 + base;
    switch (base) {
    case 1: {
        if (left(r) < coord_bytes(dim))
            return truncated(r, "point", coord_bytes(dim));
        coord c = take_coord(r, le, dim);
        add_vertex(t, &c);
        return PQ_OK;
    }
    case 2: return parse_path(r, t, le, dim, false);
    case 3: return parse_polygon(r, t, le, dim);
    case 7: return parse_members(r, t, le, depth, 0, dim);
    default: return parse_members(r, t, le, depth, base - 3, dim);
    }
}

/* ---- public API ---------------------------------------------------------- */

static void fold(pq_geo_stats *into, const pq_geo_stats *from)
{
    if (from->has_x)
        x_add_span(into, from->x);
    range_union(&into->y, from->y);
    range_union(&into->z, from->z);
    range_union(&into->m, from->m);
    into->world |= from->world;
}

int pq_geo_stats_add_wkb(pq_geo_stats *s, const uint8_t *wkb_bytes, size_t len,
                         pq_err *err)
{
    s->values++;
    pq_geo_stats t;
    pq_geo_stats_init(&t, s->geography);
    wkb r = {wkb_bytes, wkb_bytes ? len : 0, 0, err};
    uint32_t code = 0;
    int rc = parse_geometry(&r, &t, 0, 0, -1, &code);
    if (rc == PQ_OK && r.pos != r.len)
        rc = pq_err_set(err, PQ_EPARSE, "WKB byte %zu: %zu trailing bytes after the "
                        "geometry", r.pos, r.len - r.pos);
    if (rc != PQ_OK) {
        s->types_known = false;
        return rc;
    }
    s->types |= 1u << ((code / 1000) * 7 + code % 1000 - 1);
    fold(s, &t);
    return PQ_OK;
}

int pq_geo_stats_merge(pq_geo_stats *into, const pq_geo_stats *from)
{
    if (into->geography != from->geography)
        return PQ_EINVAL;
    into->values += from->values;
    into->types |= from->types;
    into->types_known &= from->types_known;
    fold(into, from);
    return PQ_OK;
}

bool pq_geo_stats_bbox(const pq_geo_stats *s, pq_geo_bbox *out)
{
    if (!s->has_x || s->y.lo > s->y.hi)
        return false;
    memset(out, 0, sizeof *out);
    out->xmin = s->x.lo;
    out->xmax = s->x.hi;
    out->ymin = s->y.lo;
    out->ymax = s->y.hi;
    out->has_z = s->z.lo <= s->z.hi;
    out->has_m = s->m.lo <= s->m.hi;
    if (out->has_z) {
        out->zmin = s->z.lo;
        out->zmax = s->z.hi;
    }
    if (out->has_m) {
        out->mmin = s->m.lo;
        out->mmax = s->m.hi;
    }
    return true;
}

bool pq_geo_stats_types_known(const pq_geo_stats *s)
{
    return s->types_known;
}

size_t pq_geo_stats_types(const pq_geo_stats *s, int32_t out[PQ_GEO_MAX_TYPES])
{
    size_t n = 0;
    if (!s->types_known)
        return 0;
    /* Bit order is dim-major, base-minor: already ascending by code. */
    for (int bit = 0; bit < PQ_GEO_MAX_TYPES; bit++)
        if (s->types & (1u << bit))
            out[n++] = (int32_t)((bit / 7) * 1000 + bit % 7 + 1);
    return n;
}
