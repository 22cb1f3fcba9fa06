/* writer_int.h - the layout of pq_writer and pq_encoded, for the writer's
 * file modules only (writer.c: the file; stream.c: row groups encoded as
 * their rows arrive). Everyone else uses pq_writer.h. */
#ifndef PQ_WRITER_INT_H
#define PQ_WRITER_INT_H

#include "chunk.h"
#include "metadata.h"
#include "stream.h"
#include "rowgroup_int.h"

/* One row group encoded into memory: its bytes with offsets counted from
 * 0, and its chunk metadata, which append rebases and hands to the writer. */
struct pq_encoded {
    const pq_writer *w;          /* the writer that encoded it */
    pq_chunk_work work;          /* scratch and compressors of this encoder */
    pq_buf bytes;
    pq_row_group_meta meta;      /* chunks owned here until appended */
    size_t n_chunks;
    uint64_t rows;               /* of the last encode, kept after append */
    int32_t ordinal;
    size_t first_leaf, end_leaf; /* the leaves encoded: [first, end) */
    bool ready;                  /* encoded and not yet appended */
};

struct pq_writer {
    pq_schema *schema;
    pq_writer_opts opts;
    char created_by[128];
    pq_out out;
    pq_rowgroup *rg;             /* the classic API's rows */
    pq_encoded *own;             /* encodes rg on flush */
    pq_stream *stream;           /* the classic API's row group, encoding */
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

/* stream.c: drops e's chunks (encode and stream finish start with it). */
void pq_encoded_drop(pq_encoded *e);

#endif
