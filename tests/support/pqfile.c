/* pqfile.c - test-side Parquet reader: footer and schema
 * (parquet-format-README.md "File format", "Metadata"), column chunks, page
 * headers and page bodies (Compression.md for v1/v2 compression scope,
 * Encodings.md for the level hybrid). Thrift tables below are transcribed
 * from parquet.thrift; keep field ids in sync with it, not with the writer. */
#include "pqfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decompress.h"

/* ---- parquet.thrift tables (bottom-up, so each refers to earlier ones) -- */

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

/* ---- errors ---- */


/* ---- opening ---- */

static int read_whole(const char *path, uint8_t **out, size_t *n, pq_err *err)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return pq_err_set(err, PQ_EIO, "%s: cannot open", path);
    int rc = PQ_EIO;
    long len = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        len = ftell(fp);
    if (len < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        pq_err_set(err, PQ_EIO, "%s: cannot determine size", path);
        goto out;
    }
    *out = malloc(len > 0 ? (size_t)len : 1);
    if (*out == NULL) {
        rc = pq_err_set(err, PQ_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (fread(*out, 1, (size_t)len, fp) != (size_t)len) {
        pq_err_set(err, PQ_EIO, "%s: short read", path);
        free(*out);
        *out = NULL;
        goto out;
    }
    *n = (size_t)len;
    rc = 0;
out:
    fclose(fp);
    return rc;
}

/* Magic at both ends; PARE means an encrypted footer (out of scope). */
static int check_frame(pqf_file *f, pq_err *err)
{
    if (f->size < 12)
        return pq_err_set(err, PQ_EPARSE, "file is %zu bytes, smaller than "
                          "magic + footer length + magic (12)", f->size);
    const uint8_t *tail = f->data + f->size - 4;
    if (memcmp(tail, "PARE", 4) == 0 || memcmp(f->data, "PARE", 4) == 0)
        return pq_err_set(err, PQ_EPARSE, "encrypted footer (PARE magic) is "
                          "not supported by this reader");
    if (memcmp(f->data, "PAR1", 4) != 0)
        return pq_err_set(err, PQ_EPARSE, "bad magic at offset 0 (want PAR1)");
    if (memcmp(tail, "PAR1", 4) != 0)
        return pq_err_set(err, PQ_EPARSE, "bad magic at offset %zu (want PAR1)",
                          f->size - 4);
    const uint8_t *l = f->data + f->size - 8;
    f->footer_len = (uint32_t)l[0] | (uint32_t)l[1] << 8 |
                    (uint32_t)l[2] << 16 | (uint32_t)l[3] << 24;
    if (f->footer_len == 0 || f->footer_len > f->size - 12)
        return pq_err_set(err, PQ_EPARSE, "footer length %u does not fit a "
                          "%zu-byte file", f->footer_len, f->size);
    f->footer_offset = f->size - 8 - f->footer_len;
    return 0;
}

static int parse_footer(pqf_file *f, pq_err *err)
{
    int rc = tr_parse(f->data + f->footer_offset, f->footer_len, &f->meta,
                      &f->footer_consumed, err);
    if (rc != 0)
        return pq_err_prefix(err, rc, "FileMetaData at offset %zu", f->footer_offset);
    rc = tr_validate(f->meta, &pqf_spec_file_metadata, err);
    if (rc != 0)
        return pq_err_prefix(err, rc, "FileMetaData at offset %zu", f->footer_offset);
    return 0;
}

/* ---- schema leaves ---- */

#define SCHEMA_MAX_DEPTH 64

typedef struct leaf_builder {
    pqf_file *f;
    const tr_node *schema;
    size_t next;                   /* next schema element to visit */
    size_t cap;
    size_t chain[SCHEMA_MAX_DEPTH];
    pq_err *err;
} leaf_builder;

static char *join_path(const tr_node *schema, const size_t *chain, size_t depth)
{
    size_t total = 1;
    for (size_t i = 0; i < depth; i++) {
        size_t len;
        tr_field_bin(tr_list_at(schema, chain[i]), 4, &len);
        total += len + 1;
    }
    char *s = malloc(total);
    if (s == NULL)
        return NULL;
    size_t pos = 0;
    for (size_t i = 0; i < depth; i++) {
        size_t len;
        const uint8_t *name = tr_field_bin(tr_list_at(schema, chain[i]), 4, &len);
        if (i > 0)
            s[pos++] = '.';
        memcpy(s + pos, name, len);
        pos += len;
    }
    s[pos] = '\0';
    return s;
}

static int add_leaf(leaf_builder *b, const tr_node *el, size_t depth, int def,
                    int rep)
{
    pqf_file *f = b->f;
    if (f->nleaves == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 16;
        pqf_leaf *l = realloc(f->leaves, ncap * sizeof *l);
        if (l == NULL)
            return pq_err_set(b->err, PQ_ENOMEM, "out of memory");
        f->leaves = l;
        b->cap = ncap;
    }
    pqf_leaf *leaf = &f->leaves[f->nleaves];
    memset(leaf, 0, sizeof *leaf);
    leaf->chain = malloc(depth * sizeof *leaf->chain);
    leaf->path = join_path(b->schema, b->chain, depth);
    f->nleaves++;   /* counted now so pqf_close frees a half-built leaf */
    if (leaf->chain == NULL || leaf->path == NULL)
        return pq_err_set(b->err, PQ_ENOMEM, "out of memory");
    memcpy(leaf->chain, b->chain, depth * sizeof *leaf->chain);
    leaf->depth = depth;
    leaf->elem = el;
    leaf->type = (int)tr_field_int(el, 1, -1);
    leaf->type_length = (int32_t)tr_field_int(el, 2, -1);
    leaf->max_def = (int16_t)def;
    leaf->max_rep = (int16_t)rep;
    return 0;
}

/* Visits the element at b->next and, for groups, its num_children
 * descendants (the schema list is a depth-first flattening). */
static int walk_schema(leaf_builder *b, size_t depth, int def, int rep)
{
    size_t idx = b->next++;
    const tr_node *el = tr_list_at(b->schema, idx);
    if (el == NULL)
        return pq_err_set(b->err, PQ_EPARSE, "schema: num_children runs past "
                          "the last element (%zu)", tr_list_len(b->schema));
    if (depth > SCHEMA_MAX_DEPTH)
        return pq_err_set(b->err, PQ_EPARSE, "schema: element %zu nested "
                          "deeper than %d", idx, SCHEMA_MAX_DEPTH);
    if (depth > 0) {
        int64_t r = tr_field_int(el, 3, -1);
        if (r < 0 || r > 2)
            return pq_err_set(b->err, PQ_EPARSE, "schema: element %zu has no "
                              "valid repetition_type", idx);
        def += (r != PQ_REQUIRED);
        rep += (r == PQ_REPEATED);
        b->chain[depth - 1] = idx;
    }
    int64_t nch = tr_field_int(el, 5, -1);
    bool has_type = tr_has(el, 1);
    if (has_type && nch <= 0 && depth > 0)
        return add_leaf(b, el, depth, def, rep);
    if (has_type || nch <= 0)
        return pq_err_set(b->err, PQ_EPARSE, "schema: element %zu is neither "
                          "a leaf (type, no children) nor a group", idx);
    for (int64_t i = 0; i < nch; i++)
        if (walk_schema(b, depth + 1, def, rep) != 0)
            return PQ_EPARSE;
    return 0;
}

static int build_leaves(pqf_file *f, pq_err *err)
{
    leaf_builder b = { .f = f, .schema = tr_field_list(f->meta, 2), .err = err };
    if (walk_schema(&b, 0, 0, 0) != 0)
        return err ? err->code : PQ_EPARSE;
    if (b.next != tr_list_len(b.schema))
        return pq_err_set(err, PQ_EPARSE, "schema: %zu elements but the root's "
                          "tree covers %zu", tr_list_len(b.schema), b.next);
    return 0;
}

static int open_parsed(pqf_file *f, pq_err *err)
{
    int rc = check_frame(f, err);
    if (rc == 0)
        rc = parse_footer(f, err);
    if (rc == 0)
        rc = build_leaves(f, err);
    if (rc != 0)
        pqf_close(f);
    return rc;
}

int pqf_open(pqf_file *f, const char *path, pq_err *err)
{
    memset(f, 0, sizeof *f);
    f->name = strdup(path);
    if (f->name == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    int rc = read_whole(path, &f->data, &f->size, err);
    if (rc != 0) {
        pqf_close(f);
        return rc;
    }
    return open_parsed(f, err);
}

int pqf_open_mem(pqf_file *f, const uint8_t *p, size_t n, const char *name,
                 pq_err *err)
{
    memset(f, 0, sizeof *f);
    f->name = strdup(name ? name : "<memory>");
    f->data = malloc(n ? n : 1);
    if (f->name == NULL || f->data == NULL) {
        pqf_close(f);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    if (n > 0)
        memcpy(f->data, p, n);
    f->size = n;
    return open_parsed(f, err);
}

void pqf_close(pqf_file *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->nleaves; i++) {
        free(f->leaves[i].path);
        free(f->leaves[i].chain);
    }
    free(f->leaves);
    tr_free(f->meta);
    free(f->data);
    free(f->name);
    memset(f, 0, sizeof *f);
}

/* ---- footer accessors ---- */

size_t pqf_num_schema(const pqf_file *f) { return tr_list_len(tr_field_list(f->meta, 2)); }

const tr_node *pqf_schema_at(const pqf_file *f, size_t i)
{
    return tr_list_at(tr_field_list(f->meta, 2), i);
}

size_t pqf_num_row_groups(const pqf_file *f) { return tr_list_len(tr_field_list(f->meta, 4)); }

const tr_node *pqf_row_group(const pqf_file *f, size_t rg)
{
    return tr_list_at(tr_field_list(f->meta, 4), rg);
}

size_t pqf_num_columns(const pqf_file *f, size_t rg)
{
    return tr_list_len(tr_field_list(pqf_row_group(f, rg), 1));
}

bool pqf_leaf_matches(const pqf_file *f, const pqf_leaf *leaf,
                      const tr_node *path_in_schema)
{
    if (leaf == NULL || tr_list_len(path_in_schema) != leaf->depth)
        return false;
    for (size_t i = 0; i < leaf->depth; i++) {
        size_t a, b;
        const uint8_t *want = tr_field_bin(pqf_schema_at(f, leaf->chain[i]), 4, &a);
        const uint8_t *got = tr_bin(tr_list_at(path_in_schema, i), &b);
        if (got == NULL || a != b || memcmp(want, got, a) != 0)
            return false;
    }
    return true;
}

int pqf_chunk_get(const pqf_file *f, size_t rg, size_t col, pqf_chunk *out,
                  pq_err *err)
{
    memset(out, 0, sizeof *out);
    const tr_node *cc = tr_list_at(tr_field_list(pqf_row_group(f, rg), 1), col);
    if (cc == NULL)
        return pq_err_set(err, PQ_EINVAL, "no column %zu in row group %zu", col, rg);
    if (tr_has(cc, 1))
        return pq_err_set(err, PQ_EPARSE, "column chunk lives in another file "
                          "(file_path); not supported");
    const tr_node *md = tr_field_struct(cc, 3);
    if (md == NULL)
        return pq_err_set(err, PQ_EPARSE, tr_has(cc, 9)
                          ? "encrypted column metadata is not supported"
                          : "ColumnChunk has no meta_data");
    out->cc = cc;
    out->md = md;
    out->leaf = col < f->nleaves ? &f->leaves[col] : NULL;
    out->type = (int)tr_field_int(md, 1, -1);
    out->codec = (int)tr_field_int(md, 4, -1);
    out->num_values = tr_field_int(md, 5, -1);
    out->total_uncompressed_size = tr_field_int(md, 6, -1);
    out->total_compressed_size = tr_field_int(md, 7, -1);
    out->data_page_offset = tr_field_int(md, 9, -1);
    out->index_page_offset = tr_field_int(md, 10, -1);
    out->dictionary_page_offset = tr_field_int(md, 11, -1);
    out->bloom_filter_offset = tr_field_int(md, 14, -1);
    out->bloom_filter_length = tr_field_int(md, 15, -1);
    out->file_offset = tr_field_int(cc, 2, -1);
    out->offset_index_offset = tr_field_int(cc, 4, -1);
    out->offset_index_length = tr_field_int(cc, 5, -1);
    out->column_index_offset = tr_field_int(cc, 6, -1);
    out->column_index_length = tr_field_int(cc, 7, -1);
    out->start = out->dictionary_page_offset >= 0 ? out->dictionary_page_offset
                                                  : out->data_page_offset;
    return 0;
}

/* ---- pages ---- */

/* Copies the type-specific sub-header into pg; the one matching the type
 * must be present. */
static int page_subheader(pqf_page *pg, pq_err *err)
{
    const tr_node *h = pg->header;
    const tr_node *s;
    switch (pg->type) {
    case PQ_PAGE_DATA:
        if ((s = tr_field_struct(h, 5)) == NULL)
            return pq_err_set(err, PQ_EPARSE, "DATA_PAGE without data_page_header");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->encoding = (int32_t)tr_field_int(s, 2, -1);
        pg->def_encoding = (int32_t)tr_field_int(s, 3, -1);
        pg->rep_encoding = (int32_t)tr_field_int(s, 4, -1);
        pg->stats = tr_field_struct(s, 5);
        return 0;
    case PQ_PAGE_DICTIONARY:
        if ((s = tr_field_struct(h, 7)) == NULL)
            return pq_err_set(err, PQ_EPARSE,
                              "DICTIONARY_PAGE without dictionary_page_header");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->encoding = (int32_t)tr_field_int(s, 2, -1);
        return 0;
    case PQ_PAGE_DATA_V2:
        if ((s = tr_field_struct(h, 8)) == NULL)
            return pq_err_set(err, PQ_EPARSE,
                              "DATA_PAGE_V2 without data_page_header_v2");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->num_nulls = (int32_t)tr_field_int(s, 2, -1);
        pg->num_rows = (int32_t)tr_field_int(s, 3, -1);
        pg->encoding = (int32_t)tr_field_int(s, 4, -1);
        pg->def_len = (int32_t)tr_field_int(s, 5, -1);
        pg->rep_len = (int32_t)tr_field_int(s, 6, -1);
        pg->is_compressed = tr_field_bool(s, 7, true);
        pg->stats = tr_field_struct(s, 8);
        return 0;
    case PQ_PAGE_INDEX:
        return 0;
    }
    return pq_err_set(err, PQ_EPARSE, "unknown page type %d", pg->type);
}

static void page_defaults(pqf_page *pg)
{
    memset(pg, 0, sizeof *pg);
    pg->num_values = pg->encoding = -1;
    pg->def_encoding = pg->rep_encoding = -1;
    pg->num_nulls = pg->num_rows = pg->def_len = pg->rep_len = -1;
    pg->is_compressed = true;
}

static int page_fill(const pqf_file *f, size_t off, size_t limit, pqf_page *pg,
                     pq_err *err)
{
    const tr_node *h = pg->header;
    pg->type = (int)tr_field_int(h, 1, -1);
    pg->uncompressed_size = (int32_t)tr_field_int(h, 2, -1);
    pg->compressed_size = (int32_t)tr_field_int(h, 3, -1);
    pg->has_crc = tr_has(h, 4);
    pg->crc = (uint32_t)tr_field_int(h, 4, 0);
    if (pg->uncompressed_size < 0 || pg->compressed_size < 0)
        return pq_err_set(err, PQ_EPARSE, "negative page size (%d compressed, "
                          "%d uncompressed)", pg->compressed_size,
                          pg->uncompressed_size);
    size_t body = off + pg->header_len;
    if ((size_t)pg->compressed_size > limit - body)
        return pq_err_set(err, PQ_EPARSE, "compressed_page_size %d runs past "
                          "the chunk end at offset %zu", pg->compressed_size, limit);
    pg->data = f->data + body;
    return page_subheader(pg, err);
}

int pqf_page_read(const pqf_file *f, size_t off, size_t limit, pqf_page *pg,
                  pq_err *err)
{
    page_defaults(pg);
    pg->offset = off;
    if (limit > f->size || off >= limit)
        return pq_err_set(err, PQ_EPARSE, "page at offset %zu: outside "
                          "[0, %zu)", off, limit);
    int rc = tr_parse(f->data + off, limit - off, &pg->header, &pg->header_len, err);
    if (rc == 0)
        rc = tr_validate(pg->header, &pqf_spec_page_header, err);
    if (rc == 0)
        rc = page_fill(f, off, limit, pg, err);
    if (rc != 0) {
        pqf_page_clear(pg);
        pg->offset = off;
        return pq_err_prefix(err, rc, "PageHeader at offset %zu", off);
    }
    return 0;
}

void pqf_page_clear(pqf_page *pg)
{
    tr_free(pg->header);
    page_defaults(pg);
}

bool pqf_page_is_data(const pqf_page *pg)
{
    return pg->type == PQ_PAGE_DATA || pg->type == PQ_PAGE_DATA_V2;
}

int pqf_pages_init(pqf_pages *it, const pqf_file *f, const pqf_chunk *ch,
                   pq_err *err)
{
    memset(it, 0, sizeof *it);
    page_defaults(&it->page);
    it->f = f;
    if (ch->start < 4 || ch->total_compressed_size < 0 ||
        (uint64_t)ch->start > f->footer_offset ||
        (uint64_t)ch->total_compressed_size > f->footer_offset - (size_t)ch->start)
        return pq_err_set(err, PQ_EPARSE, "chunk [%lld, +%lld) is not inside "
                          "the page area [4, %zu)", (long long)ch->start,
                          (long long)ch->total_compressed_size, f->footer_offset);
    it->pos = (size_t)ch->start;
    it->end = it->pos + (size_t)ch->total_compressed_size;
    return 0;
}

int pqf_pages_next(pqf_pages *it, pq_err *err)
{
    pqf_page_clear(&it->page);
    if (it->pos == it->end)
        return 0;
    int rc = pqf_page_read(it->f, it->pos, it->end, &it->page, err);
    if (rc != 0)
        return pq_err_prefix(err, rc, "page %zu", it->ordinal);
    it->page.ordinal = it->ordinal++;
    it->pos += it->page.header_len + (size_t)it->page.compressed_size;
    return 1;
}

void pqf_pages_free(pqf_pages *it) { pqf_page_clear(&it->page); }

/* The one call into the codecs, through the shared test decompressor. */
static int decompress(pq_codec codec, const uint8_t *src, size_t n,
                      uint8_t *dst, size_t dst_len, pq_err *err)
{
    return pqt_decompress(codec, src, n, dst, dst_len, err);
}

/* V2: the level bytes are never compressed (Compression.md / thrift doc
 * of DataPageHeaderV2), so only the tail goes through the codec. */
static int decompress_v2(const pqf_page *pg, pq_codec codec, uint8_t *out,
                         pq_err *err)
{
    size_t lv = (size_t)pg->def_len + (size_t)pg->rep_len;
    if (pg->def_len < 0 || pg->rep_len < 0 ||
        lv > (size_t)pg->compressed_size || lv > (size_t)pg->uncompressed_size)
        return pq_err_set(err, PQ_EPARSE, "v2 level lengths %d + %d exceed the "
                          "page (%d compressed, %d uncompressed)", pg->rep_len,
                          pg->def_len, pg->compressed_size, pg->uncompressed_size);
    memcpy(out, pg->data, lv);
    pq_codec c = pg->is_compressed ? codec : PQ_CODEC_UNCOMPRESSED;
    return decompress(c, pg->data + lv, (size_t)pg->compressed_size - lv,
                      out + lv, (size_t)pg->uncompressed_size - lv, err);
}

int pqf_page_decompress(const pqf_page *pg, pq_codec codec, uint8_t **out,
                        size_t *out_len, pq_err *err)
{
    *out = NULL;
    size_t n = (size_t)pg->uncompressed_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (buf == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory for a %zu-byte page", n);
    int rc = pg->type == PQ_PAGE_DATA_V2
                 ? decompress_v2(pg, codec, buf, err)
                 : decompress(codec, pg->data, (size_t)pg->compressed_size, buf, n, err);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

static int bit_width(int max_level)
{
    int w = 0;
    while (w < 31 && (max_level >> w) != 0)
        w++;
    return w;
}

/* One v1 level section: RLE has a 4-byte little-endian length prefix;
 * the deprecated BIT_PACKED has none and a size fixed by the count. */
static int v1_levels(const pqf_page *pg, int enc, int max_level,
                     const uint8_t *page, size_t len, size_t *pos,
                     const uint8_t **out, size_t *out_len, pq_err *err)
{
    size_t left = len - *pos;
    size_t n;
    if (enc == PQ_ENC_RLE) {
        if (left < 4)
            return pq_err_set(err, PQ_EPARSE, "level length prefix truncated");
        const uint8_t *l = page + *pos;
        n = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
        *pos += 4;
        left -= 4;
    } else if (enc == PQ_ENC_BIT_PACKED) {
        n = ((size_t)pg->num_values * (size_t)bit_width(max_level) + 7) / 8;
    } else {
        return pq_err_set(err, PQ_EPARSE, "level encoding %d is not RLE or "
                          "BIT_PACKED", enc);
    }
    if (n > left)
        return pq_err_set(err, PQ_EPARSE, "levels claim %zu bytes, %zu left", n, left);
    *out = page + *pos;
    *out_len = n;
    *pos += n;
    return 0;
}

static int split_v1(const pqf_page *pg, const uint8_t *page, size_t len,
                    int max_rep, int max_def, pqf_parts *out, pq_err *err)
{
    size_t pos = 0;
    if (max_rep > 0 && v1_levels(pg, pg->rep_encoding, max_rep, page, len, &pos,
                                 &out->rep, &out->rep_len, err) != 0)
        return pq_err_prefix(err, PQ_EPARSE, "repetition levels");
    if (max_def > 0 && v1_levels(pg, pg->def_encoding, max_def, page, len, &pos,
                                 &out->def, &out->def_len, err) != 0)
        return pq_err_prefix(err, PQ_EPARSE, "definition levels");
    out->values = page + pos;
    out->values_len = len - pos;
    return 0;
}

/* V2: repetition levels, then definition levels, lengths in the header;
 * a max level of 0 means that section is absent. */
static int split_v2(const pqf_page *pg, const uint8_t *page, size_t len,
                    int max_rep, int max_def, pqf_parts *out, pq_err *err)
{
    if (pg->rep_len < 0 || pg->def_len < 0 ||
        (size_t)pg->rep_len + (size_t)pg->def_len > len)
        return pq_err_set(err, PQ_EPARSE, "v2 level lengths %d + %d exceed the "
                          "%zu-byte page", pg->rep_len, pg->def_len, len);
    if ((max_rep == 0 && pg->rep_len != 0) || (max_def == 0 && pg->def_len != 0))
        return pq_err_set(err, PQ_EPARSE, "v2 levels present (%d rep, %d def "
                          "bytes) for max levels %d/%d", pg->rep_len,
                          pg->def_len, max_rep, max_def);
    out->rep = page;
    out->rep_len = (size_t)pg->rep_len;
    out->def = page + out->rep_len;
    out->def_len = (size_t)pg->def_len;
    out->values = out->def + out->def_len;
    out->values_len = len - out->rep_len - out->def_len;
    return 0;
}

int pqf_page_split(const pqf_page *pg, const uint8_t *page, size_t len,
                   int max_rep, int max_def, pqf_parts *out, pq_err *err)
{
    memset(out, 0, sizeof *out);
    if (pg->type == PQ_PAGE_DATA)
        return split_v1(pg, page, len, max_rep, max_def, out, err);
    if (pg->type == PQ_PAGE_DATA_V2)
        return split_v2(pg, page, len, max_rep, max_def, out, err);
    return pq_err_set(err, PQ_EINVAL, "page %zu is %s, not a data page",
                      pg->ordinal, pqf_page_type_name(pg->type));
}

/* ---- RLE / bit-packed hybrid levels (Encodings.md) ---- */

typedef struct lvl_rd {
    const uint8_t *p;
    size_t len, pos;
    int bw, max;
    size_t i, num;                 /* levels produced so far, wanted */
    uint16_t *out;                 /* optional */
    int64_t *hist;                 /* optional */
    pq_err *err;
} lvl_rd;

static int lvl_uvarint(lvl_rd *r, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->pos >= r->len)
            return pq_err_set(r->err, PQ_EPARSE, "levels: run header truncated "
                              "at byte %zu", r->pos);
        uint8_t b = r->p[r->pos++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0)
            return 0;
    }
    return pq_err_set(r->err, PQ_EPARSE, "levels: run header overflows at "
                      "byte %zu", r->pos);
}

static int lvl_emit(lvl_rd *r, uint32_t v, uint64_t count)
{
    if ((int)v > r->max)
        return pq_err_set(r->err, PQ_EPARSE, "levels: level %u at index %zu "
                          "exceeds max level %d", v, r->i, r->max);
    if (r->hist != NULL)
        r->hist[v] += (int64_t)count;
    for (uint64_t k = 0; r->out != NULL && k < count; k++)
        r->out[r->i + k] = (uint16_t)v;
    r->i += (size_t)count;
    return 0;
}

/* Repeated value: ceil(bw / 8) little-endian bytes. */
static int lvl_rle_run(lvl_rd *r, uint64_t count)
{
    size_t nb = ((size_t)r->bw + 7) / 8;
    if (count == 0 || count > r->num - r->i)
        return pq_err_set(r->err, PQ_EPARSE, "levels: RLE run of %llu at index "
                          "%zu, %zu levels left", (unsigned long long)count,
                          r->i, r->num - r->i);
    if (nb > r->len - r->pos)
        return pq_err_set(r->err, PQ_EPARSE, "levels: RLE value truncated");
    uint32_t v = 0;
    for (size_t k = 0; k < nb; k++)
        v |= (uint32_t)r->p[r->pos + k] << (8 * k);
    r->pos += nb;
    return lvl_emit(r, v, count);
}

/* Bit-packed groups of 8, LSB first; the last group may be padding. */
static int lvl_packed_run(lvl_rd *r, uint64_t groups)
{
    if (groups == 0 || groups > (r->len - r->pos) / (size_t)r->bw)
        return pq_err_set(r->err, PQ_EPARSE, "levels: %llu bit-packed groups "
                          "do not fit %zu bytes", (unsigned long long)groups,
                          r->len - r->pos);
    const uint8_t *p = r->p + r->pos;
    size_t nvals = (size_t)groups * 8;
    for (size_t k = 0; k < nvals && r->i < r->num; k++) {
        uint32_t v = 0;
        for (int b = 0; b < r->bw; b++) {
            size_t bit = k * (size_t)r->bw + (size_t)b;
            v |= (uint32_t)((p[bit / 8] >> (bit % 8)) & 1) << b;
        }
        if (lvl_emit(r, v, 1) != 0)
            return PQ_EPARSE;
    }
    r->pos += (size_t)groups * (size_t)r->bw;
    return 0;
}

int pqf_levels_decode(const uint8_t *p, size_t len, int max_level, size_t num,
                      uint16_t *out, int64_t *hist, pq_err *err)
{
    if (max_level < 0 || max_level > UINT16_MAX)
        return pq_err_set(err, PQ_EINVAL, "levels: max level %d", max_level);
    lvl_rd r = { .p = p, .len = len, .bw = bit_width(max_level),
                 .max = max_level, .num = num, .out = out, .hist = hist,
                 .err = err };
    if (r.bw == 0)   /* max level 0: no bytes, every level is 0 */
        return lvl_emit(&r, 0, num);
    while (r.i < num) {
        uint64_t h;
        if (lvl_uvarint(&r, &h) != 0)
            return PQ_EPARSE;
        int rc = (h & 1) ? lvl_packed_run(&r, h >> 1) : lvl_rle_run(&r, h >> 1);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int pqf_parse_at(const pqf_file *f, size_t off, size_t len,
                 const tr_sspec *spec, tr_node **out, size_t *consumed,
                 pq_err *err)
{
    *out = NULL;
    if (off > f->size || len > f->size - off)
        return pq_err_set(err, PQ_EPARSE, "%s at [%zu, +%zu) lies outside the "
                          "%zu-byte file", spec->name, off, len, f->size);
    int rc = tr_parse(f->data + off, len, out, consumed, err);
    if (rc == 0)
        rc = tr_validate(*out, spec, err);
    if (rc != 0) {
        tr_free(*out);
        *out = NULL;
        return pq_err_prefix(err, rc, "%s at offset %zu", spec->name, off);
    }
    return 0;
}

/* ---- names ---- */

#define NAME_AT(tab, i) \
    (((i) >= 0 && (size_t)(i) < sizeof tab / sizeof tab[0] && tab[i]) ? tab[i] : "?")

const char *pqf_type_name(int type)
{
    static const char *const t[] = { "BOOLEAN", "INT32", "INT64", "INT96",
        "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY" };
    return NAME_AT(t, type);
}

const char *pqf_codec_name(int codec)
{
    static const char *const t[] = { "UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
        "BROTLI", "LZ4", "ZSTD", "LZ4_RAW" };
    return NAME_AT(t, codec);
}

const char *pqf_encoding_name(int enc)
{
    static const char *const t[] = { "PLAIN", NULL, "PLAIN_DICTIONARY", "RLE",
        "BIT_PACKED", "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY",
        "DELTA_BYTE_ARRAY", "RLE_DICTIONARY", "BYTE_STREAM_SPLIT", "ALP" };
    return NAME_AT(t, enc);
}

const char *pqf_page_type_name(int type)
{
    static const char *const t[] = { "DATA_PAGE", "INDEX_PAGE",
        "DICTIONARY_PAGE", "DATA_PAGE_V2" };
    return NAME_AT(t, type);
}

const char *pqf_repetition_name(int rep)
{
    static const char *const t[] = { "required", "optional", "repeated" };
    return NAME_AT(t, rep);
}

const char *pqf_converted_name(int ct)
{
    static const char *const t[] = { "UTF8", "MAP", "MAP_KEY_VALUE", "LIST",
        "ENUM", "DECIMAL", "DATE", "TIME_MILLIS", "TIME_MICROS",
        "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32",
        "UINT_64", "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON",
        "INTERVAL" };
    return NAME_AT(t, ct);
}
