/* types.h - Parquet enums with the exact numeric values of parquet.thrift,
 * plus the sort orders the statistics code needs. Shared by every writer
 * module; values are written to files as-is, so never renumber. */
#ifndef PQ_TYPES_H
#define PQ_TYPES_H

#include <stdbool.h>
#include <stdint.h>

typedef enum pq_physical_type {
    PQ_BOOLEAN = 0,
    PQ_INT32 = 1,
    PQ_INT64 = 2,
    PQ_INT96 = 3,
    PQ_FLOAT = 4,
    PQ_DOUBLE = 5,
    PQ_BYTE_ARRAY = 6,
    PQ_FIXED_LEN_BYTE_ARRAY = 7
} pq_physical_type;

typedef enum pq_repetition {
    PQ_REQUIRED = 0,
    PQ_OPTIONAL = 1,
    PQ_REPEATED = 2
} pq_repetition;

typedef enum pq_encoding {
    PQ_ENC_PLAIN = 0,
    PQ_ENC_PLAIN_DICTIONARY = 2,
    PQ_ENC_RLE = 3,
    PQ_ENC_BIT_PACKED = 4,
    PQ_ENC_DELTA_BINARY_PACKED = 5,
    PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
    PQ_ENC_DELTA_BYTE_ARRAY = 7,
    PQ_ENC_RLE_DICTIONARY = 8,
    PQ_ENC_BYTE_STREAM_SPLIT = 9,
    PQ_ENC_AUTO = -1 /* not in the spec: let the writer choose */
} pq_encoding;

typedef enum pq_codec {
    PQ_CODEC_UNCOMPRESSED = 0,
    PQ_CODEC_SNAPPY = 1,
    PQ_CODEC_GZIP = 2,
    PQ_CODEC_BROTLI = 4,
    PQ_CODEC_ZSTD = 6,
    PQ_CODEC_LZ4_RAW = 7
} pq_codec;

typedef enum pq_page_type {
    PQ_PAGE_DATA = 0,
    PQ_PAGE_INDEX = 1,
    PQ_PAGE_DICTIONARY = 2,
    PQ_PAGE_DATA_V2 = 3
} pq_page_type;

/* LogicalType union member ids from parquet.thrift. INTERVAL has no
 * LogicalType (only ConvertedType INTERVAL), so it gets an id of its own. */
typedef enum pq_logical_kind {
    PQ_LT_NONE = 0,
    PQ_LT_STRING = 1,
    PQ_LT_MAP = 2,
    PQ_LT_LIST = 3,
    PQ_LT_ENUM = 4,
    PQ_LT_DECIMAL = 5,
    PQ_LT_DATE = 6,
    PQ_LT_TIME = 7,
    PQ_LT_TIMESTAMP = 8,
    PQ_LT_INTEGER = 10,
    PQ_LT_UNKNOWN = 11,
    PQ_LT_JSON = 12,
    PQ_LT_BSON = 13,
    PQ_LT_UUID = 14,
    PQ_LT_FLOAT16 = 15,
    PQ_LT_VARIANT = 16,
    PQ_LT_GEOMETRY = 17,
    PQ_LT_GEOGRAPHY = 18,
    PQ_LT_INTERVAL = 100
} pq_logical_kind;

/* ConvertedType values from parquet.thrift; -1 = none. */
typedef enum pq_converted_type {
    PQ_CT_NONE = -1,
    PQ_CT_UTF8 = 0,
    PQ_CT_MAP = 1,
    PQ_CT_MAP_KEY_VALUE = 2,
    PQ_CT_LIST = 3,
    PQ_CT_ENUM = 4,
    PQ_CT_DECIMAL = 5,
    PQ_CT_DATE = 6,
    PQ_CT_TIME_MILLIS = 7,
    PQ_CT_TIME_MICROS = 8,
    PQ_CT_TIMESTAMP_MILLIS = 9,
    PQ_CT_TIMESTAMP_MICROS = 10,
    PQ_CT_UINT_8 = 11,
    PQ_CT_UINT_16 = 12,
    PQ_CT_UINT_32 = 13,
    PQ_CT_UINT_64 = 14,
    PQ_CT_INT_8 = 15,
    PQ_CT_INT_16 = 16,
    PQ_CT_INT_32 = 17,
    PQ_CT_INT_64 = 18,
    PQ_CT_JSON = 19,
    PQ_CT_BSON = 20,
    PQ_CT_INTERVAL = 21
} pq_converted_type;

typedef enum pq_time_unit {
    PQ_UNIT_MILLIS = 1,
    PQ_UNIT_MICROS = 2,
    PQ_UNIT_NANOS = 3
} pq_time_unit;

/* EdgeInterpolationAlgorithm for GEOGRAPHY. */
typedef enum pq_edge_algorithm {
    PQ_EDGE_SPHERICAL = 0,
    PQ_EDGE_VINCENTY = 1,
    PQ_EDGE_THOMAS = 2,
    PQ_EDGE_ANDOYER = 3,
    PQ_EDGE_KARNEY = 4
} pq_edge_algorithm;

typedef struct pq_logical {
    pq_logical_kind kind;
    int32_t scale, precision;      /* DECIMAL */
    pq_time_unit unit;             /* TIME, TIMESTAMP */
    bool utc;                      /* TIME, TIMESTAMP: isAdjustedToUTC */
    int8_t bit_width;              /* INTEGER: 8, 16, 32, 64 */
    bool is_signed;                /* INTEGER */
    const char *crs;               /* GEOMETRY, GEOGRAPHY; NULL = default */
    pq_edge_algorithm algorithm;   /* GEOGRAPHY */
    int8_t variant_version;        /* VARIANT specification_version; 0 = omit */
} pq_logical;

/* How min/max statistics compare values (LogicalTypes.md "Sort Order",
 * parquet.thrift ColumnOrder). */
typedef enum pq_sort_order {
    PQ_ORDER_NONE = 0,        /* undefined: write no min/max */
    PQ_ORDER_SIGNED,          /* INT32/INT64 as signed integers */
    PQ_ORDER_UNSIGNED,        /* INT32/INT64 with unsigned INTEGER types */
    PQ_ORDER_BOOLEAN,         /* false < true */
    PQ_ORDER_FLOAT,           /* FLOAT, with NaN/-0/+0 rules */
    PQ_ORDER_DOUBLE,          /* DOUBLE, with NaN/-0/+0 rules */
    PQ_ORDER_FLOAT16,         /* FIXED[2] FLOAT16, same rules */
    PQ_ORDER_BYTES,           /* unsigned byte-wise lexicographic */
    PQ_ORDER_DECIMAL_BE,      /* two's complement big-endian, signed */
    PQ_ORDER_INT96            /* legacy INT96 timestamps */
} pq_sort_order;

#endif
