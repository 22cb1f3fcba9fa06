/* fuzz_geojson.c - libFuzzer target for schema/geojson/geojson.c.
 *
 * The input is the text of one GeoJSON value. Whatever it holds:
 *   - gj_to_wkb returns 0 or PQ_ETYPE (PQ_ENOMEM aside), and on error
 *     leaves out as it was and says "GeoJSON: ..." in err;
 *   - when it succeeds, writer/chunk/geo.c's independent WKB reader accepts the
 *     bytes, and the WKB is a fixed point: printed back as GeoJSON (by the
 *     small WKB walker below, %.17g numbers) and converted again, it gives
 *     the same bytes; converting the input a second time on the reused
 *     converter also gives the same bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo.h"
#include "geojson.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_geojson: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

static gj_converter conv;
static pq_buf out, again, text;

static uint32_t rd32(const uint8_t *p, size_t *pos, size_t len)
{
    CHECK(*pos + 4 <= len);
    uint32_t v = (uint32_t)p[*pos] | (uint32_t)p[*pos + 1] << 8 |
                 (uint32_t)p[*pos + 2] << 16 | (uint32_t)p[*pos + 3] << 24;
    *pos += 4;
    return v;
}

static double rdf(const uint8_t *p, size_t *pos, size_t len)
{
    CHECK(*pos + 8 <= len);
    uint64_t u = 0;
    for (int k = 0; k < 8; k++)
        u |= (uint64_t)p[*pos + k] << (8 * k);
    *pos += 8;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static void put(const char *s) { pq_buf_append(&text, s, strlen(s)); }

static void put_pos(const uint8_t *p, size_t *pos, size_t len, unsigned dim)
{
    char b[40];
    put("[");
    for (unsigned k = 0; k < dim; k++) {
        double d = rdf(p, pos, len);
        CHECK(isfinite(d));
        snprintf(b, sizeof b, "%s%.17g", k ? "," : "", d);
        put(b);
    }
    put("]");
}

static void put_path(const uint8_t *p, size_t *pos, size_t len, unsigned dim)
{
    uint32_t n = rd32(p, pos, len);
    put("[");
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            put(",");
        put_pos(p, pos, len, dim);
    }
    put("]");
}

/* The coordinates member value of a geometry of type base whose header
 * has been read; Multi* members are re-checked to have the member type. */
static void put_body(const uint8_t *p, size_t *pos, size_t len, uint32_t base,
                     unsigned dim)
{
    uint32_t n;
    switch (base) {
    case 1: {
        size_t at = *pos;
        if (isnan(rdf(p, pos, len))) {
            for (unsigned k = 1; k < dim; k++)
                CHECK(isnan(rdf(p, pos, len)));
            put("[]");
            return;
        }
        *pos = at;
        put_pos(p, pos, len, dim);
        return;
    }
    case 2: put_path(p, pos, len, dim); return;
    case 3:
        n = rd32(p, pos, len);
        put("[");
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                put(",");
            put_path(p, pos, len, dim);
        }
        put("]");
        return;
    default:
        n = rd32(p, pos, len);
        put("[");
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                put(",");
            CHECK(*pos + 5 <= len && p[*pos] == 1);
            (*pos)++;
            uint32_t code = rd32(p, pos, len);
            CHECK(code % 1000 == base - 3);
            put_body(p, pos, len, base - 3, dim);
        }
        put("]");
    }
}

static void put_geom(const uint8_t *p, size_t *pos, size_t len, int depth)
{
    static const char *const names[8] = {"", "Point", "LineString", "Polygon",
                                         "MultiPoint", "MultiLineString",
                                         "MultiPolygon", "GeometryCollection"};
    CHECK(depth < GJ_MAX_DEPTH);
    CHECK(*pos + 5 <= len && p[*pos] == 1);
    (*pos)++;
    uint32_t code = rd32(p, pos, len);
    uint32_t base = code % 1000, dcode = code / 1000;
    CHECK(base >= 1 && base <= 7 && (dcode == 0 || dcode == 1 || dcode == 3));
    unsigned dim = dcode == 0 ? 2 : dcode == 1 ? 3 : 4;
    put("{\"type\":\"");
    put(names[base]);
    if (base == 7) {
        put("\",\"geometries\":[");
        uint32_t n = rd32(p, pos, len);
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                put(",");
            put_geom(p, pos, len, depth + 1);
        }
        put("]}");
        return;
    }
    put("\",\"coordinates\":");
    put_body(p, pos, len, base, dim);
    put("}");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        CHECK(gj_converter_init(&conv) == 0);
        pq_buf_init(&out);
        pq_buf_init(&again);
        pq_buf_init(&text);
        ready = 1;
    }
    pq_err err;
    pq_buf_reset(&out);
    pq_buf_append(&out, "pre", 3);
    int rc = gj_to_wkb(&conv, (const char *)data, size, &out, &err);
    if (rc == PQ_ENOMEM)
        return 0;
    if (rc != 0) {
        CHECK(rc == PQ_ETYPE && err.code == PQ_ETYPE);
        CHECK(strncmp(err.msg, "GeoJSON: ", 9) == 0);
        CHECK(out.len == 3 && memcmp(out.data, "pre", 3) == 0);
        return 0;
    }
    CHECK(err.code == 0 && out.len > 3);
    const uint8_t *wkb = out.data + 3;
    const size_t wlen = out.len - 3;

    pq_geo_stats s;
    pq_geo_stats_init(&s, false);
    if (pq_geo_stats_add_wkb(&s, wkb, wlen, &err) != 0) {
        fprintf(stderr, "fuzz_geojson: geo.c rejects our WKB: %s\n", err.msg);
        abort();
    }
    pq_geo_stats_free(&s);

    /* Same input on the reused converter: same bytes. */
    pq_buf_reset(&again);
    CHECK(gj_to_wkb(&conv, (const char *)data, size, &again, &err) == 0);
    CHECK(again.len == wlen && memcmp(again.data, wkb, wlen) == 0);

    /* WKB -> GeoJSON -> WKB is a fixed point. */
    pq_buf_reset(&text);
    size_t pos = 0;
    put_geom(wkb, &pos, wlen, 0);
    CHECK(pos == wlen);
    pq_buf_reset(&again);
    if (gj_to_wkb(&conv, (const char *)text.data, text.len, &again, &err) != 0) {
        fprintf(stderr, "fuzz_geojson: reprinted text rejected: %s\n%.*s\n", err.msg,
                (int)text.len, (const char *)text.data);
        abort();
    }
    CHECK(again.len == wlen && memcmp(again.data, wkb, wlen) == 0);
    return 0;
}
