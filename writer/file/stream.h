/* stream.h - pq_stream: one row group of a file encoded as its rows
 * arrive, so that a row group in memory costs its compressed pages, one
 * open page per leaf and its dictionaries, not its raw values.
 *
 *     pq_stream *s;
 *     pq_stream_new(&s, writer, &err);             one per file (writer)
 *     pq_stream_begin(s, ordinal, &err);            each row group
 *     pq_stream_feed(s, rows, 0, leaves, scratch, &err);  any number of times
 *     pq_stream_add_rows(s, pq_rowgroup_rows(rows));
 *     pq_stream_finish(s, encoded, &err);           then append `encoded`
 *     pq_stream_destroy(s);                         before the writer
 *
 * Feeding copies nothing it need not: a page that lies whole in `rows` is
 * encoded from there; only a page still open when the feed ends keeps
 * its rows (in the stream). `rows` may be reset once the feed returns.
 *
 * Threads: one row group's leaves may be fed by several threads at once
 * when their leaf ranges do not overlap (each with its own scratch, the
 * pq_encoded whose compressors and buffers it borrows); everything else
 * runs on one thread at a time, after those feeds have returned. A
 * stream's files are byte-identical however its leaves were shared out:
 * every page boundary and encoding decision depends only on the leaf's
 * own values. */
#ifndef PQ_STREAM_H
#define PQ_STREAM_H

#include "colwriter.h"
#include "pq_writer.h"
#include "rowgroup.h"

typedef struct pq_stream pq_stream;

/* The writer is borrowed (only its options and crypto state are read:
 * several streams, on several threads, may encode for one writer).
 * Defined by writer.c, which calls pq_stream_create with its leaves'
 * resolved options. */
int pq_stream_new(pq_stream **out, pq_writer *w, pq_err *err);
/* A stream of n_cols leaves of schema, with their options (copied);
 * crypto: the file is encrypted (ordinals are then limited); row groups
 * it finishes are w's. keep: each leaf keeps its encoding decision for the
 * file's next row groups (chooser.c); pq_stream_new keeps unless the
 * writer's options say decide_each_row_group. */
int pq_stream_create(pq_stream **out, const pq_schema *schema, const pq_chunk_opts *opts,
                     size_t n_cols, bool crypto, bool keep, const pq_writer *w, pq_err *err);
void pq_stream_destroy(pq_stream *s);
/* Releases s's column writers (pq_colwriter_release) and keeps s and its
 * array of them, as a shell for pq_stream_create_in / pq_stream_new_in: a
 * pipeline of many short files (partitioned output) made and freed 1,000
 * of those arrays (1.6 KiB a leaf), each fresh memory to fault in, and
 * ~15 buffers a leaf grown from nothing. The column writers keep their
 * buffers' memory, at most PQ_STREAM_KEEP_BYTES of it in all (the first
 * leaves' first), for the next stream's leaves. A shell references no
 * schema or writer; only pq_stream_destroy may free it. */
#define PQ_STREAM_KEEP_BYTES ((size_t)1 << 20)
void pq_stream_release(pq_stream *s);
/* pq_stream_create, taking over shell (a released stream, or NULL): its
 * struct and array are reused when they have room for n_cols, else freed.
 * shell is consumed either way, even on error. */
int pq_stream_create_in(pq_stream **out, pq_stream *shell, const pq_schema *schema,
                        const pq_chunk_opts *opts, size_t n_cols, bool crypto, bool keep,
                        const pq_writer *w, pq_err *err);
/* pq_stream_new, taking over shell as pq_stream_create_in does. */
int pq_stream_new_in(pq_stream **out, pq_stream *shell, pq_writer *w, pq_err *err);

/* Starts row group `ordinal` of the file (module AADs depend on it);
 * drops whatever an unfinished row group held. */
int pq_stream_begin(pq_stream *s, int32_t ordinal, pq_err *err);
/* Appends every row of `rows` (same schema, whole rows) for leaves
 * [first, end). */
int pq_stream_feed(pq_stream *s, const pq_rowgroup *rows, size_t first, size_t end,
                   pq_encoded *scratch, pq_err *err);
/* The same when pq_stream_finish comes next for these leaves (no other
 * feed of them between): each leaf's last page is encoded from `rows`
 * rather than copied into the stream for finish (pq_colwriter_feed_last).
 * The same bytes as pq_stream_feed. */
int pq_stream_feed_last(pq_stream *s, const pq_rowgroup *rows, size_t first, size_t end,
                        pq_encoded *scratch, pq_err *err);
/* Gives the column writers whose pages buffer is empty the memory of e's
 * pieces (pq_writer.h, pq_encoded_move_pieces): each piece's to the leaf
 * whose pages it held, when that has less; frees the rest. e's row group
 * is dropped. Not while a feed runs. A row group's pages then fill memory
 * the pages of an earlier one touched, not fresh memory; handed over as
 * its pages begin, the memory is not held beside a whole row group's. */
void pq_stream_adopt_pieces(pq_stream *s, pq_encoded *e);
/* Counts rows once every leaf has been fed them. */
void pq_stream_add_rows(pq_stream *s, uint64_t rows);
/* Encodes the open pages (with scratch's buffers and compressors, which
 * may be e's own) and moves the row group into e (as pq_writer_encode
 * would have), ready to append; the stream is empty. */
int pq_stream_finish(pq_stream *s, pq_encoded *e, pq_encoded *scratch, pq_err *err);

/* After a finish: frees what its column writers' buffers held
 * (pq_colwriter_trim); the next begin grows them again. */
void pq_stream_trim(pq_stream *s);

uint64_t pq_stream_rows(const pq_stream *s);
int32_t pq_stream_ordinal(const pq_stream *s);
/* Bytes held now: open pages, encoded pages, dictionaries, filter hashes. */
size_t pq_stream_held_bytes(const pq_stream *s);
/* The room a released stream's column writers kept (pq_stream_release),
 * at most PQ_STREAM_KEEP_BYTES. */
size_t pq_stream_kept_bytes(const pq_stream *s);
/* Raw bytes fed since begin, counted as a buffered row group's were
 * (pq_rowgroup_buffered_bytes): what row_group.max_bytes limits. */
size_t pq_stream_fed_bytes(const pq_stream *s);

#endif
