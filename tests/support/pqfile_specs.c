/* pqfile_specs.c - the parquet.thrift structs the test readers parse
 * (FileMetaData and all it holds, PageHeader, OffsetIndex, ColumnIndex,
 * BloomFilterHeader) as tables for thrift_read.h, bottom-up so each
 * refers to earlier ones. Transcribed from parquet.thrift: keep field ids
 * in sync with it, not with the writer. */
#include "pqfile.h"

#define F(id, nm, t, req) { id, nm, t, req, (tr_type)0, NULL }
#define FS(id, nm, req, sub) { id, nm, TR_STRUCT, req, (tr_type)0, &sub }
#define FL(id, nm, req, el) { id, nm, TR_LIST, req, el, NULL }
#define FLS(id, nm, req, sub) { id, nm, TR_LIST, req, TR_STRUCT, &sub }
#define SPEC(nm, uni, arr) { nm, uni, sizeof arr / sizeof arr[0], arr }

static const tr_sspec s_empty = { "empty", false, 0, NULL };

static const tr_fspec f_stats[] = {
    F(1, "max", TR_BINARY, false), F(2, "min", TR_BINARY, false),
    F(3, "null_count", TR_I64, false), F(4, "distinct_count", TR_I64, false),
    F(5, "max_value", TR_BINARY, false), F(6, "min_value", TR_BINARY, false),
    F(7, "is_max_value_exact", TR_BOOL, false),
    F(8, "is_min_value_exact", TR_BOOL, false),
    F(9, "nan_count", TR_I64, false),
};
static const tr_sspec s_stats = SPEC("Statistics", false, f_stats);

static const tr_fspec f_size_stats[] = {
    F(1, "unencoded_byte_array_data_bytes", TR_I64, false),
    FL(2, "repetition_level_histogram", false, TR_I64),
    FL(3, "definition_level_histogram", false, TR_I64),
};
static const tr_sspec s_size_stats = SPEC("SizeStatistics", false, f_size_stats);

static const tr_fspec f_bbox[] = {
    F(1, "xmin", TR_DOUBLE, true), F(2, "xmax", TR_DOUBLE, true),
    F(3, "ymin", TR_DOUBLE, true), F(4, "ymax", TR_DOUBLE, true),
    F(5, "zmin", TR_DOUBLE, false), F(6, "zmax", TR_DOUBLE, false),
    F(7, "mmin", TR_DOUBLE, false), F(8, "mmax", TR_DOUBLE, false),
};
static const tr_sspec s_bbox = SPEC("BoundingBox", false, f_bbox);

static const tr_fspec f_geo_stats[] = {
    FS(1, "bbox", false, s_bbox), FL(2, "geospatial_types", false, TR_I32),
};
static const tr_sspec s_geo_stats = SPEC("GeospatialStatistics", false, f_geo_stats);

static const tr_fspec f_decimal[] = {
    F(1, "scale", TR_I32, true), F(2, "precision", TR_I32, true),
};
static const tr_sspec s_decimal = SPEC("DecimalType", false, f_decimal);

static const tr_fspec f_time_unit[] = {
    FS(1, "MILLIS", false, s_empty), FS(2, "MICROS", false, s_empty),
    FS(3, "NANOS", false, s_empty),
};
static const tr_sspec s_time_unit = SPEC("TimeUnit", true, f_time_unit);

static const tr_fspec f_time[] = {
    F(1, "isAdjustedToUTC", TR_BOOL, true), FS(2, "unit", true, s_time_unit),
};
static const tr_sspec s_time = SPEC("TimeType", false, f_time);

static const tr_fspec f_int_type[] = {
    F(1, "bitWidth", TR_I8, true), F(2, "isSigned", TR_BOOL, true),
};
static const tr_sspec s_int_type = SPEC("IntType", false, f_int_type);

static const tr_fspec f_variant[] = { F(1, "specification_version", TR_I8, false) };
static const tr_sspec s_variant = SPEC("VariantType", false, f_variant);

static const tr_fspec f_geometry[] = { F(1, "crs", TR_BINARY, false) };
static const tr_sspec s_geometry = SPEC("GeometryType", false, f_geometry);

static const tr_fspec f_geography[] = {
    F(1, "crs", TR_BINARY, false), F(2, "algorithm", TR_I32, false),
};
static const tr_sspec s_geography = SPEC("GeographyType", false, f_geography);

static const tr_fspec f_logical[] = {
    FS(1, "STRING", false, s_empty), FS(2, "MAP", false, s_empty),
    FS(3, "LIST", false, s_empty), FS(4, "ENUM", false, s_empty),
    FS(5, "DECIMAL", false, s_decimal), FS(6, "DATE", false, s_empty),
    FS(7, "TIME", false, s_time), FS(8, "TIMESTAMP", false, s_time),
    FS(10, "INTEGER", false, s_int_type), FS(11, "UNKNOWN", false, s_empty),
    FS(12, "JSON", false, s_empty), FS(13, "BSON", false, s_empty),
    FS(14, "UUID", false, s_empty), FS(15, "FLOAT16", false, s_empty),
    FS(16, "VARIANT", false, s_variant), FS(17, "GEOMETRY", false, s_geometry),
    FS(18, "GEOGRAPHY", false, s_geography), FS(19, "FILE", false, s_empty),
};
static const tr_sspec s_logical = SPEC("LogicalType", true, f_logical);

static const tr_fspec f_schema_elem[] = {
    F(1, "type", TR_I32, false), F(2, "type_length", TR_I32, false),
    F(3, "repetition_type", TR_I32, false), F(4, "name", TR_BINARY, true),
    F(5, "num_children", TR_I32, false), F(6, "converted_type", TR_I32, false),
    F(7, "scale", TR_I32, false), F(8, "precision", TR_I32, false),
    F(9, "field_id", TR_I32, false), FS(10, "logicalType", false, s_logical),
};
static const tr_sspec s_schema_elem = SPEC("SchemaElement", false, f_schema_elem);

static const tr_fspec f_kv[] = {
    F(1, "key", TR_BINARY, true), F(2, "value", TR_BINARY, false),
};
static const tr_sspec s_kv = SPEC("KeyValue", false, f_kv);

static const tr_fspec f_enc_stats[] = {
    F(1, "page_type", TR_I32, true), F(2, "encoding", TR_I32, true),
    F(3, "count", TR_I32, true),
};
static const tr_sspec s_enc_stats = SPEC("PageEncodingStats", false, f_enc_stats);

static const tr_fspec f_col_meta[] = {
    F(1, "type", TR_I32, true), FL(2, "encodings", true, TR_I32),
    FL(3, "path_in_schema", true, TR_BINARY), F(4, "codec", TR_I32, true),
    F(5, "num_values", TR_I64, true),
    F(6, "total_uncompressed_size", TR_I64, true),
    F(7, "total_compressed_size", TR_I64, true),
    FLS(8, "key_value_metadata", false, s_kv),
    F(9, "data_page_offset", TR_I64, true),
    F(10, "index_page_offset", TR_I64, false),
    F(11, "dictionary_page_offset", TR_I64, false),
    FS(12, "statistics", false, s_stats),
    FLS(13, "encoding_stats", false, s_enc_stats),
    F(14, "bloom_filter_offset", TR_I64, false),
    F(15, "bloom_filter_length", TR_I32, false),
    FS(16, "size_statistics", false, s_size_stats),
    FS(17, "geospatial_statistics", false, s_geo_stats),
};
static const tr_sspec s_col_meta = SPEC("ColumnMetaData", false, f_col_meta);

static const tr_fspec f_enc_col_key[] = {
    FL(1, "path_in_schema", true, TR_BINARY), F(2, "key_metadata", TR_BINARY, false),
};
static const tr_sspec s_enc_col_key = SPEC("EncryptionWithColumnKey", false, f_enc_col_key);

static const tr_fspec f_col_crypto[] = {
    FS(1, "ENCRYPTION_WITH_FOOTER_KEY", false, s_empty),
    FS(2, "ENCRYPTION_WITH_COLUMN_KEY", false, s_enc_col_key),
};
static const tr_sspec s_col_crypto = SPEC("ColumnCryptoMetaData", true, f_col_crypto);

static const tr_fspec f_chunk[] = {
    F(1, "file_path", TR_BINARY, false), F(2, "file_offset", TR_I64, true),
    FS(3, "meta_data", false, s_col_meta),
    F(4, "offset_index_offset", TR_I64, false),
    F(5, "offset_index_length", TR_I32, false),
    F(6, "column_index_offset", TR_I64, false),
    F(7, "column_index_length", TR_I32, false),
    FS(8, "crypto_metadata", false, s_col_crypto),
    F(9, "encrypted_column_metadata", TR_BINARY, false),
};
static const tr_sspec s_chunk = SPEC("ColumnChunk", false, f_chunk);

static const tr_fspec f_sorting[] = {
    F(1, "column_idx", TR_I32, true), F(2, "descending", TR_BOOL, true),
    F(3, "nulls_first", TR_BOOL, true),
};
static const tr_sspec s_sorting = SPEC("SortingColumn", false, f_sorting);

static const tr_fspec f_row_group[] = {
    FLS(1, "columns", true, s_chunk), F(2, "total_byte_size", TR_I64, true),
    F(3, "num_rows", TR_I64, true), FLS(4, "sorting_columns", false, s_sorting),
    F(5, "file_offset", TR_I64, false),
    F(6, "total_compressed_size", TR_I64, false),
    F(7, "ordinal", TR_I16, false),
};
static const tr_sspec s_row_group = SPEC("RowGroup", false, f_row_group);

static const tr_fspec f_col_order[] = {
    FS(1, "TYPE_ORDER", false, s_empty),
    FS(2, "IEEE_754_TOTAL_ORDER", false, s_empty),
    FS(3, "INT96_TIMESTAMP_ORDER", false, s_empty),
};
static const tr_sspec s_col_order = SPEC("ColumnOrder", true, f_col_order);

static const tr_fspec f_aes[] = {
    F(1, "aad_prefix", TR_BINARY, false), F(2, "aad_file_unique", TR_BINARY, false),
    F(3, "supply_aad_prefix", TR_BOOL, false),
};
static const tr_sspec s_aes = SPEC("AesGcmV1", false, f_aes);

static const tr_fspec f_enc_alg[] = {
    FS(1, "AES_GCM_V1", false, s_aes), FS(2, "AES_GCM_CTR_V1", false, s_aes),
};
static const tr_sspec s_enc_alg = SPEC("EncryptionAlgorithm", true, f_enc_alg);

static const tr_fspec f_file_meta[] = {
    F(1, "version", TR_I32, true), FLS(2, "schema", true, s_schema_elem),
    F(3, "num_rows", TR_I64, true), FLS(4, "row_groups", true, s_row_group),
    FLS(5, "key_value_metadata", false, s_kv), F(6, "created_by", TR_BINARY, false),
    FLS(7, "column_orders", false, s_col_order),
    FS(8, "encryption_algorithm", false, s_enc_alg),
    F(9, "footer_signing_key_metadata", TR_BINARY, false),
};
const tr_sspec pqf_spec_file_metadata = SPEC("FileMetaData", false, f_file_meta);

static const tr_fspec f_dph[] = {
    F(1, "num_values", TR_I32, true), F(2, "encoding", TR_I32, true),
    F(3, "definition_level_encoding", TR_I32, true),
    F(4, "repetition_level_encoding", TR_I32, true),
    FS(5, "statistics", false, s_stats),
};
static const tr_sspec s_dph = SPEC("DataPageHeader", false, f_dph);

static const tr_fspec f_dict_ph[] = {
    F(1, "num_values", TR_I32, true), F(2, "encoding", TR_I32, true),
    F(3, "is_sorted", TR_BOOL, false),
};
static const tr_sspec s_dict_ph = SPEC("DictionaryPageHeader", false, f_dict_ph);

static const tr_fspec f_dph2[] = {
    F(1, "num_values", TR_I32, true), F(2, "num_nulls", TR_I32, true),
    F(3, "num_rows", TR_I32, true), F(4, "encoding", TR_I32, true),
    F(5, "definition_levels_byte_length", TR_I32, true),
    F(6, "repetition_levels_byte_length", TR_I32, true),
    F(7, "is_compressed", TR_BOOL, false), FS(8, "statistics", false, s_stats),
};
static const tr_sspec s_dph2 = SPEC("DataPageHeaderV2", false, f_dph2);

static const tr_fspec f_page_header[] = {
    F(1, "type", TR_I32, true), F(2, "uncompressed_page_size", TR_I32, true),
    F(3, "compressed_page_size", TR_I32, true), F(4, "crc", TR_I32, false),
    FS(5, "data_page_header", false, s_dph),
    FS(6, "index_page_header", false, s_empty),
    FS(7, "dictionary_page_header", false, s_dict_ph),
    FS(8, "data_page_header_v2", false, s_dph2),
};
const tr_sspec pqf_spec_page_header = SPEC("PageHeader", false, f_page_header);

static const tr_fspec f_page_loc[] = {
    F(1, "offset", TR_I64, true), F(2, "compressed_page_size", TR_I32, true),
    F(3, "first_row_index", TR_I64, true),
};
static const tr_sspec s_page_loc = SPEC("PageLocation", false, f_page_loc);

static const tr_fspec f_offset_index[] = {
    FLS(1, "page_locations", true, s_page_loc),
    FL(2, "unencoded_byte_array_data_bytes", false, TR_I64),
};
const tr_sspec pqf_spec_offset_index = SPEC("OffsetIndex", false, f_offset_index);

static const tr_fspec f_column_index[] = {
    FL(1, "null_pages", true, TR_BOOL), FL(2, "min_values", true, TR_BINARY),
    FL(3, "max_values", true, TR_BINARY), F(4, "boundary_order", TR_I32, true),
    FL(5, "null_counts", false, TR_I64),
    FL(6, "repetition_level_histograms", false, TR_I64),
    FL(7, "definition_level_histograms", false, TR_I64),
    FL(8, "nan_counts", false, TR_I64),
};
const tr_sspec pqf_spec_column_index = SPEC("ColumnIndex", false, f_column_index);

static const tr_fspec f_bloom_alg[] = { FS(1, "BLOCK", false, s_empty) };
static const tr_sspec s_bloom_alg = SPEC("BloomFilterAlgorithm", true, f_bloom_alg);
static const tr_fspec f_bloom_hash[] = { FS(1, "XXHASH", false, s_empty) };
static const tr_sspec s_bloom_hash = SPEC("BloomFilterHash", true, f_bloom_hash);
static const tr_fspec f_bloom_comp[] = { FS(1, "UNCOMPRESSED", false, s_empty) };
static const tr_sspec s_bloom_comp = SPEC("BloomFilterCompression", true, f_bloom_comp);

static const tr_fspec f_bloom[] = {
    F(1, "numBytes", TR_I32, true), FS(2, "algorithm", true, s_bloom_alg),
    FS(3, "hash", true, s_bloom_hash), FS(4, "compression", true, s_bloom_comp),
};
const tr_sspec pqf_spec_bloom_header = SPEC("BloomFilterHeader", false, f_bloom);
