/* encoded.h - the layout of pq_encoded (pq_writer.h): one row group
 * encoded into memory, for the writer's file modules (writer.c appends
 * and joins them, stream.c finishes them). */
#ifndef PQ_ENCODED_H
#define PQ_ENCODED_H

#include "chunk.h"
#include "metadata.h"

/* A large chunk's data pages, taken whole from its column writer
 * (pq_stream_finish) instead of copied into the row group's bytes: they
 * follow bytes[0, at) in the file. */
typedef struct pq_encoded_piece {
    size_t at;
    size_t leaf;                 /* whose pages they are */
    pq_buf pages;
} pq_encoded_piece;

/* One row group encoded into memory: its bytes with offsets counted from
 * 0, and its chunk metadata, which append rebases and hands to the writer.
 * The row group is bytes with pieces[0, n_pieces) spliced in at their
 * `at`s (in order): copying a chunk's pages into bytes made the whole row
 * group's compressed bytes twice, the copy fresh memory to fault in. The
 * pieces' buffers outlive a drop: the next finish into e swaps them into
 * its column writers (the classic API's one encoded), or a stream adopts
 * them (pq_stream_adopt_pieces: the pipeline's), and their next pages
 * fill memory touched before. */
struct pq_encoded {
    const pq_writer *w;          /* the writer that encoded it */
    pq_chunk_work work;          /* scratch and compressors of this encoder */
    pq_buf bytes;
    pq_encoded_piece *pieces;
    size_t n_pieces, cap_pieces; /* in use; allocated (their buffers kept) */
    size_t piece_bytes;          /* the pieces' pages, in all */
    pq_row_group_meta meta;      /* chunks owned here until appended */
    size_t n_chunks;
    uint64_t rows;               /* of the last encode, kept after append */
    int32_t ordinal;
    size_t first_leaf, end_leaf; /* the leaves encoded: [first, end) */
    bool ready;                  /* encoded and not yet appended */
};

/* Drops e's chunks and pieces, keeps its buffers (an encode starts with
 * it). */
void pq_encoded_drop(pq_encoded *e);

/* The buffer the next piece's pages would go into (emptied; memory of an
 * earlier piece's kept), or NULL when out of memory; pq_encoded_piece_add
 * adds it, leaf's, at bytes' end, when the pages went there. */
pq_buf *pq_encoded_piece_slot(pq_encoded *e);
void pq_encoded_piece_add(pq_encoded *e, size_t leaf);

#endif
