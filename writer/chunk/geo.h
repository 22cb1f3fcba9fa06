/* geo.h - GeospatialStatistics for GEOMETRY and GEOGRAPHY columns: the
 * bounding box and the geospatial type codes of the WKB values written
 * (parquet.thrift BoundingBox / GeospatialStatistics; Geospatial.md
 * "Bounding Box", "Geospatial Types", "Special geospatial values").
 *
 * Writer rules applied:
 *   - NaN coordinates (e.g. the empty point) and empty geometries add
 *     nothing; each of X, Y, Z, M is skipped independently, and Z / M
 *     appear in the box only if some value had a non-NaN Z / M.
 *   - GEOGRAPHY: X outside [-180, 180] and Y outside [-90, 90] are special
 *     values and skipped. Edges are geodesics, so the box covers them, not
 *     just the vertices: an edge's latitude bulge is included and an edge
 *     crossing the antimeridian makes the box wrap (xmin > xmax, meaning
 *     x >= xmin OR x <= xmax), chosen only when it is the tighter box.
 *     Edges are modelled as great circles (exact for SPHERICAL, the
 *     default; for ellipsoidal algorithms the interior latitude bulge can
 *     be off by a small fraction of a degree). A polygon ring that winds
 *     around a pole makes the box the whole world, since which side is
 *     inside is not decidable without an orientation convention; other
 *     rings are taken to bound their smaller side.
 *   - Invalid WKB is rejected with PQ_EPARSE and contributes nothing to
 *     the box (a special value per Geospatial.md), but the type list then
 *     becomes unknown (an empty list on disk), because that value's type
 *     cannot be listed.
 *
 * Ownership: pq_geo_stats_init/pq_geo_stats_free. The struct holds no
 * pointers today; _free exists so callers need not change if it does. */
#ifndef PQ_GEO_H
#define PQ_GEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* 7 base types (Point .. GeometryCollection) x 4 dimensions (XY, XYZ, XYM,
 * XYZM): the most distinct codes a type list can hold. */
#define PQ_GEO_MAX_TYPES 28

typedef struct pq_geo_range {
    double lo, hi; /* lo > hi: empty */
} pq_geo_range;

typedef struct pq_geo_stats {
    bool geography;
    bool types_known;  /* false once a value failed to parse */
    bool world;        /* GEOGRAPHY: some value covers every longitude */
    uint32_t types;    /* bit dim * 7 + (base - 1) for code dim * 1000 + base */
    uint64_t values;   /* non-null values offered, valid or not */
    pq_geo_range x;    /* GEOGRAPHY: x.lo > x.hi may mean a wrap, see has_x */
    bool has_x;
    pq_geo_range y, z, m;
} pq_geo_stats;

typedef struct pq_geo_bbox {
    double xmin, xmax, ymin, ymax; /* xmin > xmax only for GEOGRAPHY */
    double zmin, zmax, mmin, mmax; /* valid when has_z / has_m */
    bool has_z, has_m;
} pq_geo_bbox;

void pq_geo_stats_init(pq_geo_stats *s, bool geography);
void pq_geo_stats_free(pq_geo_stats *s);
void pq_geo_stats_reset(pq_geo_stats *s);

/* Adds one non-null value (null values are simply not offered). Returns 0,
 * or PQ_EPARSE with the offset and reason in err for WKB that is
 * truncated, has trailing bytes, an unknown or extended (EWKB) type code,
 * mixed dimensions, or nesting deeper than 32 levels. Never reads outside
 * wkb[0..len). */
int pq_geo_stats_add_wkb(pq_geo_stats *s, const uint8_t *wkb, size_t len, pq_err *err);

/* Folds `from` into `into` (column chunk from pages, file from chunks).
 * Returns 0, or PQ_EINVAL when one is GEOMETRY and the other GEOGRAPHY. */
int pq_geo_stats_merge(pq_geo_stats *into, const pq_geo_stats *from);

/* Fills the box and returns true, or returns false when no bounding box
 * may be written (no value had a valid X and a valid Y). */
bool pq_geo_stats_bbox(const pq_geo_stats *s, pq_geo_bbox *out);

/* Writes the sorted unique ISO WKB type codes seen (at most
 * PQ_GEO_MAX_TYPES) and returns how many; 0 when unknown or no values, in
 * which case the list to write is empty ("not known"). */
size_t pq_geo_stats_types(const pq_geo_stats *s, int32_t out[PQ_GEO_MAX_TYPES]);
bool pq_geo_stats_types_known(const pq_geo_stats *s);

#endif
