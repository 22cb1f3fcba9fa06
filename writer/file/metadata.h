/* metadata.h - Thrift serialization of the footer (FileMetaData) and of
 * the page index structs (ColumnIndex, OffsetIndex). */
#ifndef PQ_METADATA_H
#define PQ_METADATA_H

#include "chunk.h"

typedef struct pq_row_group_meta {
    pq_chunk_meta *chunks;       /* one per leaf */
    int64_t num_rows;
    int64_t file_offset;
    int64_t total_byte_size;     /* uncompressed */
    int64_t total_compressed_size;
} pq_row_group_meta;

typedef struct pq_kv {
    char *key, *value;
} pq_kv;

typedef struct pq_file_meta {
    const pq_schema *schema;
    int32_t version;
    int64_t num_rows;
    pq_row_group_meta *row_groups;
    size_t n_row_groups;
    const pq_kv *kv;
    size_t n_kv;
    const char *created_by;
    pq_crypto_file *crypto;      /* NULL: plaintext file */
    bool plaintext_footer;
    const pq_crypto_key *footer_key;
    const char *footer_key_id;
} pq_file_meta;

int pq_meta_write_file(const pq_file_meta *fm, pq_buf *out);
/* ColumnMetaData as a top-level struct (for encrypted_column_metadata). */
int pq_meta_write_column_metadata(const pq_chunk_meta *m, pq_buf *out);
int pq_meta_write_column_index(const pq_chunk_meta *m, pq_buf *out);
int pq_meta_write_offset_index(const pq_chunk_meta *m, pq_buf *out);

#endif
