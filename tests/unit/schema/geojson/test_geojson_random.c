/* test_geojson_random.c - a seeded random round-trip of the GeoJSON to
 * WKB converter (schema/geojson/geojson.c), checked byte for byte and
 * through writer/chunk/geo.c's independent WKB reader (PQ_TEST_SEED replays). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "geo.h"
#include "geojson.h"
#include "geojson_fixture.h"

/* ---- seeded random round-trip ------------------------------------------------
 * A generator writes random GeoJSON (random member order, foreign members,
 * whitespace) and, independently, the WKB it must become, while tracking
 * the min/max of every coordinate. The converter must produce exactly those
 * bytes, and geo.c must accept them and compute exactly that box. */

typedef struct gen {
    uint64_t s;
    pq_buf json, wkb;
    unsigned dim;
    double lo[4], hi[4];
    size_t positions;
} gen;

static uint64_t rnd(gen *g) /* splitmix64 */
{
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t below(gen *g, size_t n) { return (size_t)(rnd(g) % n); }

static void js(gen *g, const char *s) { pq_buf_append(&g->json, s, strlen(s)); }

static void ws(gen *g)
{
    static const char *const w[] = {"", "", "", " ", "\n", " \t "};
    js(g, w[below(g, 6)]);
}

static void w32(gen *g, uint32_t v) { pq_buf_put_u32le(&g->wkb, v); }

static void whdr(gen *g, uint32_t base)
{
    pq_buf_push(&g->wkb, 1);
    w32(g, base + (g->dim == 3 ? 1000 : g->dim == 4 ? 3000 : 0));
}

static double rnd_double(gen *g)
{
    switch (below(g, 4)) {
    case 0: return (double)((int64_t)below(g, 2001) - 1000);
    case 1: return (double)((int64_t)below(g, 2000001) - 1000000) / 1000.0;
    case 2: return ((double)rnd(g) / 18446744073709551616.0 - 0.5) * 360.0;
    default: {
        double d;
        do {
            uint64_t u = rnd(g);
            memcpy(&d, &u, 8);
        } while (!isfinite(d));
        return d;
    }
    }
}

/* One position: as JSON (%.17g round-trips every double) and WKB. */
static void gen_pos(gen *g, const double *v)
{
    char b[40];
    js(g, "[");
    for (unsigned k = 0; k < g->dim; k++) {
        if (k)
            js(g, ",");
        ws(g);
        snprintf(b, sizeof b, "%.17g", v[k]);
        js(g, b);
        uint64_t u;
        memcpy(&u, &v[k], 8);
        pq_buf_put_u64le(&g->wkb, u);
        if (v[k] < g->lo[k]) g->lo[k] = v[k];
        if (v[k] > g->hi[k]) g->hi[k] = v[k];
    }
    js(g, "]");
    g->positions++;
}

static void gen_new_pos(gen *g)
{
    double v[4];
    for (unsigned k = 0; k < g->dim; k++)
        v[k] = rnd_double(g);
    gen_pos(g, v);
}

/* A LineString's positions (or a ring's, closed, >= 4) after the count. */
static void gen_path(gen *g, bool ring)
{
    size_t n = ring ? 4 + below(g, 4) : below(g, 6);
    if (!ring && n == 1)
        n = 2;
    w32(g, (uint32_t)n);
    js(g, "[");
    double first[4];
    for (size_t i = 0; i < n; i++) {
        if (i)
            js(g, ",");
        ws(g);
        double v[4];
        for (unsigned k = 0; k < g->dim; k++)
            v[k] = ring && i == n - 1 ? first[k] : rnd_double(g);
        if (i == 0)
            memcpy(first, v, sizeof v);
        gen_pos(g, v);
    }
    js(g, "]");
}

static void gen_polygon(gen *g)
{
    size_t n = below(g, 3);
    whdr(g, 3);
    w32(g, (uint32_t)n);
    js(g, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            js(g, ",");
        gen_path(g, true);
    }
    js(g, "]");
}

static void gen_coords(gen *g, int type)
{
    switch (type) {
    case 1:
        whdr(g, 1);
        if (below(g, 8) == 0) {
            js(g, "[]");
            for (unsigned k = 0; k < g->dim; k++)
                pq_buf_put_u64le(&g->wkb, 0x7FF8000000000000ull);
        } else {
            gen_new_pos(g);
        }
        return;
    case 2: whdr(g, 2); gen_path(g, false); return;
    case 3: gen_polygon(g); return;
    default: {
        size_t n = below(g, 4);
        whdr(g, (uint32_t)type);
        w32(g, (uint32_t)n);
        js(g, "[");
        for (size_t i = 0; i < n; i++) {
            if (i)
                js(g, ",");
            ws(g);
            if (type == 4) {
                whdr(g, 1);
                gen_new_pos(g);
            } else if (type == 5) {
                whdr(g, 2);
                gen_path(g, false);
            } else {
                gen_polygon(g);
            }
        }
        js(g, "]");
    }
    }
}

static void gen_geom(gen *g, int depth);

/* Members in random order: type, coordinates or geometries, and maybe
 * foreign ones. */
static void gen_geom(gen *g, int depth)
{
    static const char *const names[8] = {"", "Point", "LineString", "Polygon",
                                         "MultiPoint", "MultiLineString",
                                         "MultiPolygon", "GeometryCollection"};
    int type = 1 + (int)below(g, depth < 3 ? 7 : 6);
    int order[4] = {0, 1, 2, 3}; /* 0 type, 1 body, 2 bbox, 3 properties */
    for (int i = 3; i > 0; i--) {
        int j = (int)below(g, (size_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    const bool foreign = below(g, 3) == 0;
    bool first = true;
    js(g, "{");
    for (int i = 0; i < 4; i++) {
        if (order[i] >= 2 && !foreign)
            continue;
        if (!first)
            js(g, ",");
        first = false;
        ws(g);
        switch (order[i]) {
        case 0:
            js(g, "\"type\":");
            ws(g);
            js(g, "\"");
            js(g, names[type]);
            js(g, "\"");
            break;
        case 1:
            if (type == 7) {
                size_t n = below(g, 4);
                whdr(g, 7);
                w32(g, (uint32_t)n);
                js(g, "\"geometries\":[");
                for (size_t k = 0; k < n; k++) {
                    if (k)
                        js(g, ",");
                    gen_geom(g, depth + 1);
                }
                js(g, "]");
            } else {
                js(g, "\"coordinates\":");
                ws(g);
                gen_coords(g, type);
            }
            break;
        case 2: js(g, "\"bbox\":[-1e9,\"x\",{\"type\":\"Point\"}]"); break;
        default: js(g, "\"properties\":{\"coordinates\":null,\"a\":[[[]]]}"); break;
        }
        ws(g);
    }
    js(g, "}");
}

static void test_gj_random_round_trip_bytes_and_bbox(void **state)
{
    (void)state;
    const char *env = getenv("PQ_TEST_SEED");
    const uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    print_message("test_gj_random_round_trip: seed %llu (PQ_TEST_SEED=%llu replays)\n",
                  (unsigned long long)seed, (unsigned long long)seed);
    gen g = {.s = seed};
    pq_buf_init(&g.json);
    pq_buf_init(&g.wkb);
    gj_converter c;
    pq_buf out;
    pq_err err;
    assert_int_equal(gj_converter_init(&c), 0);
    pq_buf_init(&out);
    for (int iter = 0; iter < 3000; iter++) {
        pq_buf_reset(&g.json);
        pq_buf_reset(&g.wkb);
        pq_buf_reset(&out);
        g.dim = 2 + (unsigned)below(&g, 3);
        g.positions = 0;
        for (int k = 0; k < 4; k++) {
            g.lo[k] = INFINITY;
            g.hi[k] = -INFINITY;
        }
        const uint64_t before = g.s;
        gen_geom(&g, 0);
        /* Nothing but empty geometries: the converter writes XY (no position
         * says otherwise). Without positions the random stream does not
         * depend on dim, so generating again as XY gives the same text. */
        const bool empty = g.positions == 0;
        if (empty && g.dim != 2) {
            pq_buf_reset(&g.json);
            pq_buf_reset(&g.wkb);
            g.s = before;
            g.dim = 2;
            gen_geom(&g, 0);
            assert_int_equal(g.positions, 0);
        }
        if (gj_to_wkb(&c, (const char *)g.json.data, g.json.len, &out, &err) != 0)
            fail_msg("seed %llu iter %d: %.*s\n -> %s", (unsigned long long)seed, iter,
                     (int)g.json.len, (const char *)g.json.data, err.msg);
        if (out.len != g.wkb.len || memcmp(out.data, g.wkb.data, out.len) != 0) {
            print_message("seed %llu iter %d: %.*s\n", (unsigned long long)seed, iter,
                          (int)g.json.len, (const char *)g.json.data);
            hexdump("got", out.data, out.len);
            hexdump("want", g.wkb.data, g.wkb.len);
            fail();
        }
        pq_geo_stats s;
        pq_geo_stats_init(&s, false);
        if (pq_geo_stats_add_wkb(&s, out.data, out.len, &err) != 0)
            fail_msg("seed %llu iter %d: geo.c rejects: %s", (unsigned long long)seed,
                     iter, err.msg);
        pq_geo_bbox box;
        if (empty) {
            assert_false(pq_geo_stats_bbox(&s, &box));
            pq_geo_stats_free(&s);
            continue;
        }
        assert_true(pq_geo_stats_bbox(&s, &box));
        if (box.xmin != g.lo[0] || box.xmax != g.hi[0] || box.ymin != g.lo[1] ||
            box.ymax != g.hi[1] || box.has_z != (g.dim >= 3) || box.has_m != (g.dim == 4) ||
            (g.dim >= 3 && (box.zmin != g.lo[2] || box.zmax != g.hi[2])) ||
            (g.dim == 4 && (box.mmin != g.lo[3] || box.mmax != g.hi[3])))
            fail_msg("seed %llu iter %d: box x %g..%g y %g..%g, generated x %g..%g "
                     "y %g..%g (dim %u)", (unsigned long long)seed, iter, box.xmin,
                     box.xmax, box.ymin, box.ymax, g.lo[0], g.hi[0], g.lo[1], g.hi[1],
                     g.dim);
        pq_geo_stats_free(&s);
    }
    pq_buf_free(&out);
    pq_buf_free(&g.json);
    pq_buf_free(&g.wkb);
    gj_converter_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gj_random_round_trip_bytes_and_bbox),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
