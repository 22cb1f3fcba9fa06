/* writer_int.h - the layout of pq_writer, for writer.c's parts only.
 * Everyone else uses pq_writer.h. */
#ifndef PQ_WRITER_INT_H
#define PQ_WRITER_INT_H

#include "encoded.h"
#include "stream.h"
#include "rowgroup_int.h"

struct pq_writer {
    pq_schema *schema;
    pq_writer_opts opts;
    char created_by[128];
    pq_out out;
    pq_rowgroup *rg;             /* the classic API's rows; NULL until its first use */
    pq_encoded *own;             /* encodes rg on flush; made with rg */
    pq_stream *stream;           /* the classic API's row group, encoding; NULL
                                    until its first rows are fed */
    bool stream_begun;           /* stream holds row group n_rgs */
    pq_chunk_opts *chunk_opts;   /* per leaf; read-only after open */
    size_t n_cols;
    pq_row_group_meta *rgs;
    size_t n_rgs, cap_rgs;
    pq_kv *kv;
    size_t n_kv;
    uint64_t rows_written;
    uint64_t rows_size_checked;  /* rows at the last byte-size check */
    /* encryption (NULL crypto: plaintext file) */
    pq_encryption_opts enc;
    pq_crypto_file crypto_file;
    pq_crypto_file *crypto;
    char **key_ids;              /* per leaf, copied */
    char *footer_key_id;
    bool closed;
    int failed;                 /* first fatal error; the file is unusable */
};

#endif
