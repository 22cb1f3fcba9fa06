/* encoded.h - the layout of pq_encoded (pq_writer.h): one row group
 * encoded into memory, for the writer's file modules (writer.c appends
 * and joins them, stream.c finishes them). */
#ifndef PQ_ENCODED_H
#define PQ_ENCODED_H

#include "chunk.h"
#include "metadata.h"

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

/* Drops e's chunks, keeps its buffers (an encode starts with it). */
void pq_encoded_drop(pq_encoded *e);

#endif
