/* chunk.h - a leaf's column chunk, encoded as its rows arrive (the
 * streaming column writer; its types are colwriter.h's): pages, their
 * statistics and page-index records, the chunk's dictionary and bloom
 * filter; and the scratch and metadata helpers the file modules use. */
#ifndef PQ_CHUNK_H
#define PQ_CHUNK_H

#include "colwriter.h"

int pq_out_write(pq_out *o, const void *p, size_t n, pq_err *err);
/* With o->spill: hands what o->mem gathered to the sink and empties it. */
int pq_out_spill(pq_out *o, pq_err *err);

void pq_chunk_meta_free(pq_chunk_meta *m);
/* Gives back the growth room of its arrays: a file keeps every chunk's
 * metadata, page-index entries and statistics until its footer, and a
 * partitioned output's many files with many small row groups held more
 * in that room than in the entries (8 page entries for one page). */
void pq_chunk_meta_compact(pq_chunk_meta *m);

void pq_chunk_work_init(pq_chunk_work *w);
void pq_chunk_work_free(pq_chunk_work *w);

/* Checks an explicitly configured encoding against the leaf's type. */
int pq_chunk_check_encoding(const pq_node *node, pq_encoding enc, pq_err *err);

/* ---- the streaming column writer --------------------------------------------
 *
 * One leaf's column chunk, encoded as its rows arrive: values and levels
 * fill the open page; when it reaches page_max_bytes of values or
 * page_max_rows (at a row boundary) it is encoded, compressed and
 * encrypted at once into `pages`, with its statistics, page-index entry
 * and level histograms. Only the open page's raw values, the dictionary
 * and the compressed pages are held until the chunk finishes.
 *
 *     pq_colwriter_init(&cw, node, &opts);            once per leaf
 *     pq_colwriter_begin(&cw, row_group_ordinal);      each chunk
 *     pq_colwriter_feed(&cw, work, col, &err);         any number of times
 *     pq_colwriter_finish(&cw, work, out, &meta, &err);
 *     pq_colwriter_free(&cw);
 *
 * A colwriter is used by one thread at a time (any thread); `work` is
 * that thread's scratch. The encoding decisions (chooser.c) are made on
 * the chunk's first page with values and kept; a dictionary that passes
 * dictionary_max_bytes makes the later pages fall back. */
int pq_colwriter_init(pq_colwriter *cw, const pq_node *node, const pq_chunk_opts *o);
void pq_colwriter_free(pq_colwriter *cw);
/* A colwriter done with its leaf (its file closed) keeps its buffers'
 * memory for another leaf's: everything else is freed, and each buffer
 * (pages, open page, dictionary, statistics' bounds, ...) is kept while
 * its room fits in *budget (taken from it), else freed. Then only
 * pq_colwriter_init_in, pq_colwriter_release or pq_colwriter_free. A
 * partitioned output's small files each grew ~15 buffers a leaf from
 * nothing, and freed them at the close. */
void pq_colwriter_release(pq_colwriter *cw, size_t *budget);
/* pq_colwriter_init on a released (or zeroed) cw, reusing its memory. */
int pq_colwriter_init_in(pq_colwriter *cw, const pq_node *node, const pq_chunk_opts *o);
/* Starts a chunk of row group `ordinal` (module AADs), keeping buffers. */
int pq_colwriter_begin(pq_colwriter *cw, int32_t ordinal, pq_err *err);
/* Appends every row of col (whole rows: its first level starts a row). */
int pq_colwriter_feed(pq_colwriter *cw, pq_chunk_work *w, const pq_column *col, pq_err *err);
/* The same when pq_colwriter_finish comes next (no other feed between):
 * the chunk's last page, if no rows of an earlier feed are open, is
 * encoded from col instead of being copied into the open page for finish
 * to encode (a partitioned file's one-segment row group copied every
 * value once more, and grew the open page's buffers to hold them). The
 * same bytes as feed then finish. */
int pq_colwriter_feed_last(pq_colwriter *cw, pq_chunk_work *w, const pq_column *col,
                           pq_err *err);
/* Encodes the open page, then appends the chunk (dictionary page first)
 * to out; meta gets the chunk's metadata, offsets counted from out's
 * start (caller frees it). The colwriter is ready for the next begin.
 * take: NULL, or an emptied buffer: data pages of PQ_CW_SPLICE_MIN bytes
 * or more are then not appended to out but swapped into take (the
 * colwriter keeps take's memory for its next chunk's pages); they belong
 * at out's end as finish leaves it, and meta counts them there. take->len
 * stays 0 when they were appended. */
int pq_colwriter_finish(pq_colwriter *cw, pq_chunk_work *w, pq_buf *out, pq_buf *take,
                        pq_chunk_meta *meta, pq_err *err);
/* Between a finish and the next begin: frees what the chunk's buffers
 * held (pages, open page, dictionary, bloom hashes and estimate), so an
 * idle colwriter costs its struct. For a file among many (partitioned
 * output) whose next row group may be far off; keeping them saves the
 * regrowth for the next chunk of a busy one. */
void pq_colwriter_trim(pq_colwriter *cw);
/* At most the bytes finish appends to out (for reserving them up front),
 * given a take buffer or not. */
size_t pq_colwriter_finish_bound(const pq_colwriter *cw, bool take);
/* Bytes held: open page, dictionary, encoded pages, bloom hashes. */
size_t pq_colwriter_held_bytes(const pq_colwriter *cw);
/* Value bytes fed since begin, counted as the row group's buffered bytes
 * were before streaming (row_group.max_bytes keeps its meaning). */
size_t pq_colwriter_fed_bytes(const pq_colwriter *cw);

/* The whole of col as one chunk (begin, feed, finish with a colwriter of
 * its own), appended to out->mem; meta as above, offsets from out->offset. */
int pq_chunk_write(pq_chunk_work *w, const pq_column *col, const pq_chunk_opts *o,
                   pq_out *out, pq_chunk_meta *meta, pq_err *err);

#endif
