/* batch.h - a batch of framed lines, the unit the owner of a pipeline
 * (the daemon's loop thread, convert's reading thread) fills and hands to
 * the pipeline with pl_submit (pipeline.h). What is inside a batch, and
 * what shredding it produced, is batch_int.h, for the pipeline's workers.
 *
 * Below the pipeline: pipeline.h includes this header, never the other
 * way round, so a batch knows nothing of the pipeline that takes it. */
#ifndef PQ_BATCH_H
#define PQ_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A `_bulk` record's Elasticsearch index travels in its source, after
 * this tag ("tcp:192.0.2.7:5123 _index=logs": daemon/ingest/http_bulk.c),
 * through the spool and the batch to the shredder's from: _index columns
 * (shredstage.c). */
#define PL_INDEX_TAG " _index="

/* One framed line in a batch. */
typedef struct pl_line {
    size_t off, len;             /* bytes in the batch's text */
    uint64_t total;              /* the line's full length (> len when oversized) */
    int64_t ingest_us;           /* receive time */
    uint32_t source_off;         /* NUL-terminated source in the batch's sources */
    uint64_t lineno;             /* 0: none; else appended to the source (":17") */
    bool oversized;
} pl_line;

/* Lines with consecutive seqs from first_seq. Built by the owner with
 * pl_batch_add; owned by the pipeline after pl_submit. */
typedef struct pl_batch pl_batch;

pl_batch *pl_batch_new(void);
void pl_batch_destroy(pl_batch *b);
/* Starts an empty batch whose first line gets seq first_seq. */
void pl_batch_reset(pl_batch *b, uint64_t first_seq);
/* Copies a line. source is interned per batch (consecutive lines from one
 * source share it). Returns 0 or PQ_ENOMEM. */
int pl_batch_add(pl_batch *b, const char *source, const void *line, size_t len, uint64_t total,
                 bool oversized, int64_t ingest_us, uint64_t lineno);
size_t pl_batch_lines(const pl_batch *b);
size_t pl_batch_bytes(const pl_batch *b);
uint64_t pl_batch_end_seq(const pl_batch *b);   /* first_seq + lines */

/* Owners hand a batch on once it holds this many bytes of lines: large
 * enough to amortize the hand-off, small enough that two cores share a
 * small input. A new batch reserves room for it up front (address space:
 * pages are touched as lines arrive), so filling one never copies it
 * again while it grows. */
#define PL_BATCH_BYTES ((size_t)1 << 20)

#endif
