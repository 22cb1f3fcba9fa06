/* batch_int.h - the inside of a pl_batch, shared by batch.c (filling) and
 * the pipeline's workers (shredding, assembly: pipeline_int.h includes
 * it). Owners outside the pipeline use only batch.h. It includes nothing
 * of the pipeline: marker holds the pipeline's PL_MARK_* as a plain int. */
#ifndef PQ_BATCH_INT_H
#define PQ_BATCH_INT_H

#include "batch.h"
#include "buf.h"
#include "err.h"
#include "rowgroup.h"

/* A rejected line: its index in the batch and why (offset into reasons,
 * NUL-terminated). */
typedef struct pl_reject {
    size_t line;
    size_t reason_off;
    int kind;                    /* dm_reject */
} pl_reject;

struct pl_batch {
    uint64_t first_seq;
    size_t n_lines;
    pq_buf text;                 /* line bytes back to back */
    const uint8_t *populated_base; /* text.data when populated was counted */
    size_t populated;            /* text's first bytes faulted in (batch.c) */
    pq_buf lines;                /* pl_line[n_lines] */
    pq_buf sources;              /* NUL-terminated source strings */
    size_t last_source;
    bool has_source;
    /* shredding results (one worker) */
    pq_rowgroup *rows;           /* one row per accepted line */
    pq_buf row_lines;            /* uint32 line index of each row */
    pq_buf rejects;              /* pl_reject[] */
    pq_buf reasons;
    /* partitioned output (output.path with {{FIELD}}s): each line's
     * partition key (uint32 offset into keys, which holds each distinct
     * key of the batch once, NUL-terminated; UINT32_MAX: refused) */
    pq_buf keys;
    pq_buf key_off;
    pq_buf key_time;             /* int64 per line: the second its key's time
                                    fields render (event or ingestion time) */
    /* and the lines shredded grouped by key (groups in order of first
     * appearance, seq order within a group) into rows, so that one key's
     * rows are contiguous (row_lines lists them group after group): group
     * g's rows end at grp_end[g] (n_groups); the assembler copies them
     * into the key's file (pq_rowgroup_copy_rows, with rix) */
    pq_row_index rix;
    pq_buf grp_end;
    size_t n_groups;
    bool shredded;
    int fatal;                   /* shredding failed (memory, limits) */
    pq_err err;
    /* queueing */
    int marker;                  /* PL_MARK_*: a request, not data */
    struct pl_batch *next;       /* submission order (or the free list) */
    struct pl_batch *next_shred; /* waiting to be shredded */
};

static inline const pl_line *pl_batch_line(const pl_batch *b, size_t i)
{
    return (const pl_line *)(const void *)b->lines.data + i;
}

#endif
