/* stats.h - min/max/null/NaN statistics by sort order, for page and
 * column-chunk Statistics and the ColumnIndex (parquet.thrift Statistics,
 * ColumnOrder, ColumnIndex; LogicalTypes.md "sort order" of each type),
 * plus the level histograms of SizeStatistics.
 *
 * Ownership: pq_stats_init/pq_stats_free. pq_stats_reset keeps the
 * buffers, so one pq_stats per column is reused page after page without
 * allocating. Values are fed in batches; nothing keeps a pointer to them.
 *
 * Floating point (FLOAT, DOUBLE, FLOAT16) follows the TYPE_ORDER writer
 * rules: NaNs never become min/max and are counted in nan_count; when
 * every non-null value is NaN there is no min/max; a zero min is written
 * as -0.0 and a zero max as +0.0. */
#ifndef PQ_STATS_H
#define PQ_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "types.h"

/* The order min/max must follow for a leaf of physical `type` annotated
 * with `lt` (NULL or kind PQ_LT_NONE: no annotation):
 *   INT32/INT64 (incl. DATE, TIME, TIMESTAMP, signed INTEGER, DECIMAL)
 *                                          SIGNED
 *   INTEGER(unsigned)                      UNSIGNED
 *   BYTE_ARRAY/FLBA plain, STRING, ENUM, JSON, BSON, UUID   BYTES
 *   DECIMAL on BYTE_ARRAY/FLBA             DECIMAL_BE
 *   FLOAT16 (FLBA[2])                      FLOAT16
 *   FLOAT, DOUBLE, BOOLEAN                 their own
 *   INT96                                  INT96: chronological order,
 *       which must be announced as ColumnOrder INT96_TIMESTAMP_ORDER (see
 *       pq_stats_column_order); TYPE_ORDER stats on INT96 are ignored.
 *   INTERVAL, LIST, MAP, VARIANT, GEOMETRY, GEOGRAPHY, UNKNOWN, and any
 *   annotation on a physical type it does not allow     NONE
 * Leaves inside a VARIANT group carry no annotation of their own; pass
 * PQ_LT_VARIANT for them to get NONE. */
pq_sort_order pq_sort_order_for(pq_physical_type type, const pq_logical *lt);

/* The leaf's statistics sort order. Variant-encoded binaries (`metadata`,
 * `value` under a VARIANT group) have none: parquet.thrift ColumnOrder says
 * VARIANT is undefined, and byte order of Variant encodings means nothing.
 * typed_value leaves keep their own types' orders. */
struct pq_node;
pq_sort_order pq_leaf_sort_order(const struct pq_node *n);

/* The ColumnOrder union field to write in FileMetaData.column_orders for
 * a column with this order: 3 (INT96_TIMESTAMP_ORDER) for PQ_ORDER_INT96,
 * else 1 (TYPE_ORDER; for NONE readers then ignore min/max, and parqd
 * writes none). */
int pq_stats_column_order(pq_sort_order order);

typedef struct pq_stats {
    pq_sort_order order;
    pq_physical_type type;
    size_t width;              /* bytes per value in pq_stats_add_fixed */
    uint64_t null_count;
    uint64_t nan_count;
    uint64_t value_count;      /* non-null values, NaNs included */
    uint64_t byte_array_bytes; /* sum of BYTE_ARRAY lengths (SizeStatistics) */
    bool has_min_max;
    bool lost;                 /* a bound could not be stored (no memory):
                                * min/max are dropped, counts stay right */
    /* SIGNED: .i; UNSIGNED and BOOLEAN: .u; FLOAT and DOUBLE: .d. */
    union { int64_t i; uint64_t u; double d; } min, max;
    /* BYTES, DECIMAL_BE, FLOAT16 and INT96: the raw min/max values. */
    pq_buf min_bytes, max_bytes;
} pq_stats;

/* type_length is the FLBA width; ignored for other physical types. */
void pq_stats_init(pq_stats *s, pq_sort_order order, pq_physical_type type,
                   size_t type_length);
void pq_stats_free(pq_stats *s);
/* Forgets all values and counts; keeps order, type and buffers. */
void pq_stats_reset(pq_stats *s);

/* n non-null values in memory layout: INT32/INT64/FLOAT/DOUBLE as native
 * C arrays (int32_t[], ...; any alignment), BOOLEAN one byte each (0 =
 * false), INT96 12 bytes each, FLBA type_length bytes each. */
void pq_stats_add_fixed(pq_stats *s, const void *vals, size_t n);

/* n non-null variable-length values: value i is heap[off[i]..off[i+1])
 * (off has n+1 entries). For BYTE_ARRAY; FLBA/INT96 values may come this
 * way too when each length equals the physical width. */
void pq_stats_add_bytes(pq_stats *s, const uint8_t *heap, const uint32_t *off,
                        size_t n);

/* As pq_stats_add_bytes for n BYTE_ARRAY values, whose min and max are
 * among the n_pick values at the indices in pick (ascending): a
 * dictionary page offers each distinct value's first occurrence in the
 * page only (openpage.c), and those decide min and max as all would. */
void pq_stats_add_bytes_picked(pq_stats *s, const uint8_t *heap, const uint32_t *off,
                               size_t n, const uint32_t *pick, size_t n_pick);

void pq_stats_add_nulls(pq_stats *s, uint64_t n);

/* Folds `from` into `into` (both must have the same order and type), so
 * column-chunk statistics can be built from page statistics. Returns 0,
 * PQ_EINVAL on an order/type mismatch, or PQ_ENOMEM. */
int pq_stats_merge(pq_stats *into, const pq_stats *from);

/* False for order NONE, when there were no non-null values, or when all
 * non-null values were NaN (then a TYPE_ORDER ColumnIndex must not be
 * written for the chunk: compare value_count with nan_count). */
bool pq_stats_has_min_max(const pq_stats *s);

/* APPENDS min and max to the two buffers in PLAIN encoding without a
 * length prefix, as Statistics.min_value/max_value and ColumnIndex hold
 * them. BYTES-order BYTE_ARRAY values longer than `truncate` bytes (0 = no
 * limit) become a prefix (min) and an incremented prefix (max), cut at a
 * UTF-8 character boundary when the prefix is valid UTF-8, so STRING
 * bounds stay valid strings; a max that cannot be incremented (all 0xFF)
 * stays whole. *_exact tells whether the bound is an actual value. Other
 * orders are never truncated: a shorter DECIMAL or FLBA would not be a
 * valid value of the type. Returns 0, PQ_ESTATE when there is no min/max,
 * or PQ_ENOMEM. */
int pq_stats_min_max(const pq_stats *s, size_t truncate, pq_buf *min, bool *min_exact,
                     pq_buf *max, bool *max_exact);

/* Compares two min/max values as written (PLAIN, no length prefix). */
int pq_stats_compare_plain(pq_sort_order order, const uint8_t *a, size_t la,
                           const uint8_t *b, size_t lb);

uint64_t pq_stats_null_count(const pq_stats *s);
uint64_t pq_stats_nan_count(const pq_stats *s);
uint64_t pq_stats_value_count(const pq_stats *s);
/* SizeStatistics.unencoded_byte_array_data_bytes for BYTE_ARRAY columns. */
uint64_t pq_stats_byte_array_bytes(const pq_stats *s);

/* hist[l] += number of levels equal to l. hist must have max_level + 1
 * slots and every level must be <= max_level (our own invariant). */
void pq_level_histogram_add(uint64_t *hist, const uint16_t *levels, size_t n);

#endif
