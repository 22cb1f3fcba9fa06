/* pqfile.h - test-side Parquet file reader: footer, schema leaves, column
 * chunks, page headers, page decompression and level splitting
 * (parquet-format-README.md "File format", parquet.thrift, PageIndex.md).
 * Independent of the writer; shares only err.h / types.h with it.
 *
 * The whole file is read into memory. Nodes returned by accessors point
 * into the pqf_file and stay valid until pqf_close. Encrypted footers
 * (PARE magic) are rejected. */
#ifndef PQ_PQFILE_H
#define PQ_PQFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "thrift_read.h"
#include "types.h"

/* One primitive column, in schema (= column chunk) order. */
typedef struct pqf_leaf {
    const tr_node *elem;      /* its SchemaElement */
    char *path;               /* dotted, for display only: names may hold dots */
    size_t *chain;            /* schema indices from top-level field to leaf */
    size_t depth;             /* entries in chain */
    int type;                 /* pq_physical_type */
    int32_t type_length;      /* FIXED_LEN_BYTE_ARRAY; -1 otherwise */
    int16_t max_def, max_rep;
} pqf_leaf;

typedef struct pqf_file {
    char *name;               /* for messages */
    uint8_t *data;
    size_t size;
    size_t footer_offset;     /* first byte of the serialized FileMetaData */
    uint32_t footer_len;      /* from the 4 bytes before the final magic */
    size_t footer_consumed;   /* bytes FileMetaData actually used */
    tr_node *meta;            /* FileMetaData */
    pqf_leaf *leaves;
    size_t nleaves;
} pqf_file;

/* Thrift tables for tr_validate, field ids from parquet.thrift. */
extern const tr_sspec pqf_spec_file_metadata;
extern const tr_sspec pqf_spec_page_header;
extern const tr_sspec pqf_spec_offset_index;
extern const tr_sspec pqf_spec_column_index;
extern const tr_sspec pqf_spec_bloom_header;

/* Reads and checks magic, footer length and FileMetaData (parsed and
 * validated against pqf_spec_file_metadata), and builds the leaves. On
 * failure f is left closed (pqf_close is still safe). */
int pqf_open(pqf_file *f, const char *path, pq_err *err);
/* Same, from a caller buffer that is copied. */
int pqf_open_mem(pqf_file *f, const uint8_t *p, size_t n, const char *name,
                 pq_err *err);
void pqf_close(pqf_file *f);

size_t pqf_num_schema(const pqf_file *f);
const tr_node *pqf_schema_at(const pqf_file *f, size_t i);
size_t pqf_num_row_groups(const pqf_file *f);
const tr_node *pqf_row_group(const pqf_file *f, size_t rg);
size_t pqf_num_columns(const pqf_file *f, size_t rg);
/* True when a path_in_schema list names exactly this leaf. */
bool pqf_leaf_matches(const pqf_file *f, const pqf_leaf *leaf,
                      const tr_node *path_in_schema);

/* Decoded ColumnChunk + ColumnMetaData; absent optional fields are -1. */
typedef struct pqf_chunk {
    const tr_node *cc;            /* ColumnChunk */
    const tr_node *md;            /* ColumnChunk.meta_data */
    const pqf_leaf *leaf;         /* same index in the schema */
    int type;                     /* pq_physical_type */
    int codec;                    /* pq_codec */
    int64_t num_values;
    int64_t total_uncompressed_size, total_compressed_size;
    int64_t data_page_offset, dictionary_page_offset, index_page_offset;
    int64_t bloom_filter_offset, bloom_filter_length;
    int64_t file_offset;          /* ColumnChunk.file_offset */
    int64_t offset_index_offset, offset_index_length;
    int64_t column_index_offset, column_index_length;
    int64_t start;                /* first page: dictionary if set, else data */
} pqf_chunk;

/* Fails for chunks in other files (file_path) or with encrypted metadata. */
int pqf_chunk_get(const pqf_file *f, size_t rg, size_t col, pqf_chunk *out,
                  pq_err *err);

typedef struct pqf_page {
    size_t ordinal;               /* 0-based in the chunk, dictionary included */
    size_t offset;                /* file offset of the PageHeader */
    size_t header_len;
    tr_node *header;              /* PageHeader, owned (pqf_page_clear) */
    int type;                     /* pq_page_type */
    int32_t uncompressed_size, compressed_size;
    bool has_crc;
    uint32_t crc;
    const uint8_t *data;          /* compressed_size bytes, in the file */
    int32_t num_values;           /* data, v2 and dictionary pages */
    int32_t encoding;
    int32_t def_encoding, rep_encoding;   /* v1 levels; -1 otherwise */
    int32_t num_nulls, num_rows;          /* v2; -1 otherwise */
    int32_t def_len, rep_len;             /* v2 level byte lengths; -1 */
    bool is_compressed;           /* v2 flag (default true); true otherwise */
    const tr_node *stats;         /* page Statistics, NULL if none */
} pqf_page;

/* Parses and validates the PageHeader at off; header and page data must
 * end at or before limit. */
int pqf_page_read(const pqf_file *f, size_t off, size_t limit, pqf_page *pg,
                  pq_err *err);
/* Fills pg from a PageHeader parsed and validated elsewhere (pqcrypt
 * decrypts it first); pg->header = h, which the caller still owns. Sets
 * neither data nor offset. */
int pqf_page_from_header(pqf_page *pg, tr_node *h, pq_err *err);
void pqf_page_clear(pqf_page *pg);
bool pqf_page_is_data(const pqf_page *pg);   /* DATA_PAGE or DATA_PAGE_V2 */

/* Walks a chunk's pages from pqf_chunk.start until total_compressed_size
 * is consumed; a page crossing that end is an error. */
typedef struct pqf_pages {
    const pqf_file *f;
    size_t pos, end, ordinal;
    pqf_page page;                /* current page after next() returned 1 */
} pqf_pages;

int pqf_pages_init(pqf_pages *it, const pqf_file *f, const pqf_chunk *ch,
                   pq_err *err);
/* 1 = it->page holds the next page, 0 = chunk done, < 0 = error. */
int pqf_pages_next(pqf_pages *it, pq_err *err);
void pqf_pages_free(pqf_pages *it);

/* Decompresses a page into *out (malloc'd, exactly uncompressed_size
 * bytes; free it). V2 level bytes are copied as stored, and the values are
 * decompressed only when is_compressed. */
int pqf_page_decompress(const pqf_page *pg, pq_codec codec, uint8_t **out,
                        size_t *out_len, pq_err *err);

/* The pieces of an uncompressed data page. Level slices exclude the v1
 * 4-byte length prefix and are empty when the max level is 0. */
typedef struct pqf_parts {
    const uint8_t *rep, *def, *values;
    size_t rep_len, def_len, values_len;
} pqf_parts;

int pqf_page_split(const pqf_page *pg, const uint8_t *page, size_t len,
                   int max_rep, int max_def, pqf_parts *out, pq_err *err);

/* Decodes num levels of the RLE / bit-packed hybrid (Encodings.md, no
 * length prefix) with the bit width of max_level. Levels above max_level
 * and runs past num are errors. out (num entries) and hist (max_level + 1
 * counters, incremented) may each be NULL, so counting needs no memory
 * proportional to num. */
int pqf_levels_decode(const uint8_t *p, size_t len, int max_level, size_t num,
                      uint16_t *out, int64_t *hist, pq_err *err);

/* Parses one struct at [off, off + len) of the file and validates it;
 * len is a limit, *consumed (optional) reports what the struct used. */
int pqf_parse_at(const pqf_file *f, size_t off, size_t len,
                 const tr_sspec *spec, tr_node **out, size_t *consumed,
                 pq_err *err);

/* Names for enums, "?" when unknown. */
const char *pqf_type_name(int type);
const char *pqf_codec_name(int codec);
const char *pqf_encoding_name(int enc);
const char *pqf_page_type_name(int type);
const char *pqf_repetition_name(int rep);
const char *pqf_converted_name(int ct);

#endif
