/* geojson.h - GeoJSON geometry objects (RFC 7946, section 3.1) to ISO WKB,
 * the value encoding of GEOMETRY and GEOGRAPHY columns (LogicalTypes.md
 * "GEOMETRY", "GEOGRAPHY"; Geospatial.md).
 *
 *     gj_converter c;
 *     gj_converter_init(&c);
 *     for each value:
 *         rc = gj_to_wkb(&c, text, len, &out, &err);   // appends to out
 *         if (rc != 0) dead_letter(err.msg);
 *     gj_converter_free(&c);
 *
 * Input: the raw JSON text of one geometry object: Point, MultiPoint,
 * LineString, MultiLineString, Polygon, MultiPolygon or GeometryCollection.
 * Members may come in any order ("coordinates" before "type" is fine), so
 * the text is parsed once into reusable arrays and the WKB is written
 * afterwards. Members other than "type", "coordinates" and "geometries"
 * ("bbox", "crs", anything else) are foreign members and ignored, and so
 * is "coordinates" on a GeometryCollection and "geometries" on anything
 * else. Feature and FeatureCollection are not geometries and are rejected
 * with a message saying so (pass the Feature's "geometry" member instead).
 *
 * Output: little-endian ISO WKB (byte order 01, uint32 type code with Z as
 * +1000 and ZM as +3000, uint32 counts, IEEE doubles exactly as the JSON
 * parser rounded them). GeoJSON x/y are longitude/latitude, which is also
 * the WKB axis order for GEOGRAPHY and OGC:CRS84, so nothing is swapped.
 *
 * Decisions where RFC 7946 leaves room:
 *   - Dimensions. [x, y] is XY, [x, y, z] is XYZ and [x, y, z, m] is XYZM
 *     (type code +3000). RFC 7946 says parsers should not interpret more
 *     than three elements; we keep the fourth as M rather than drop data,
 *     as GDAL and PostGIS do. XYM cannot be expressed in GeoJSON and is
 *     never produced. Five or more elements are rejected. All positions of
 *     one geometry, GeometryCollection members included, must have the
 *     same count (WKB members share their parent's dimension).
 *   - Empty geometries. "coordinates": [] is the empty geometry of its type
 *     and "geometries": [] the empty collection; an empty geometry with no
 *     positions anywhere is XY. POINT EMPTY is written as a point with NaN
 *     coordinates (0x7FF8000000000000), the WKB convention. Inside a
 *     MultiLineString or MultiPolygon a member written as [] is an empty
 *     member; inside a MultiPoint every member must be a position.
 *   - Validation (RFC 7946 3.1): a LineString has 0 or >= 2 positions; a
 *     polygon ring has >= 4 positions and its last equals its first
 *     (every number, compared as doubles); numbers are finite (the parser
 *     rejects overflow); geometries nest at most GJ_MAX_DEPTH levels
 *     counting the outermost as 1. Ring orientation (the right-hand rule)
 *     is not checked: RFC 7946 says parsers should not reject on it.
 *
 * Errors: every rejection is PQ_ETYPE (PQ_ENOMEM only for memory), with
 * a message starting "GeoJSON: " that names the byte offset in text
 * (0-based), e.g. "GeoJSON: Polygon ring 2 (byte 57) has 3 positions,
 * needs at least 4 and closed". Malformed JSON is PQ_ETYPE too, carrying
 * the JSON parser's message. On error out is left as it was.
 *
 * Cost: one JSON pass, then two walks over the collected arrays (the first
 * validates and sizes the WKB, the second writes it into space reserved
 * once). The arrays grow geometrically and are reused, so steady-state
 * conversion does not allocate. */
#ifndef PQ_GEOJSON_H
#define PQ_GEOJSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "json.h"

/* Deepest geometry nesting accepted (GeometryCollection in collection
 * ...), the outermost geometry being level 1. Multi* members then sit at
 * most 32 levels deep, the limit of writer/chunk/geo.c's WKB reader. */
#define GJ_MAX_DEPTH 32

struct gj_item;
struct gj_node;
struct gj_frame;

/* Caller-owned; every field is private to geojson.c. */
typedef struct gj_converter {
    json_parser parser;
    struct gj_item *items;   /* coordinates: arrays and numbers, in order */
    size_t n_items, cap_items;
    struct gj_node *nodes;   /* geometry objects, in document order */
    size_t n_nodes, cap_nodes;
    struct gj_frame *frames; /* open JSON containers, parser max depth + 1 */
    size_t n_frames;
    int pending;             /* which member the next value belongs to */
    pq_err *err;
    /* walk state */
    unsigned dim;            /* numbers per position, 0 until one is seen */
    size_t dim_off;          /* byte offset of the position that set dim */
    size_t fixed_bytes;      /* WKB bytes other than coordinates */
    size_t tuples;           /* coordinate tuples (positions, empty points) */
} gj_converter;

/* Returns 0 or PQ_ENOMEM. */
int gj_converter_init(gj_converter *c);
void gj_converter_free(gj_converter *c);

/* Converts one GeoJSON geometry object, text[0..len) (no NUL needed), and
 * appends its WKB to out. Returns 0, PQ_ETYPE with err saying what is wrong
 * and where, or PQ_ENOMEM. err may be NULL. */
int gj_to_wkb(gj_converter *c, const char *text, size_t len, pq_buf *out,
              pq_err *err);

#endif
