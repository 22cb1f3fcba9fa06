/* batch.c - pl_batch: framed lines handed from the reading thread to the
 * pipeline's workers, and what shredding them produced (batch.h; the
 * inside: batch_int.h).
 *
 * Threads: the owner fills a batch; after pl_submit one worker at a time
 * uses it (shred, then assemble); then it returns to the pipeline's pool.
 * Buffers keep their capacity across reuse, so steady state allocates
 * nothing per line. */
#include "batch_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A batch's text is faulted in ahead of the lines, PL_POPULATE_BYTES at
 * a time, with one madvise each instead of a page fault per 4 KiB as the
 * lines land: about 5 us a page instead of 10 on the VMs measured, on the
 * reading thread (the daemon's loop fills a new batch per MiB of its input
 * window: ~4,000 first touches on a bench's 200 MB). Never more than a
 * chunk past the bytes the batch holds (a small input's one batch is not
 * made 1 MiB of RSS), and once per batch: a reused batch keeps its pages.
 * Best effort: kernels before 5.14 refuse it, and the pages then fault in
 * as before. */
#define PL_POPULATE_BYTES ((size_t)256 << 10)

static void populate_ahead(pl_batch *b, size_t need)
{
    if (b->text.data != b->populated_base) {  /* new (or moved) memory */
        b->populated_base = b->text.data;
        b->populated = 0;
    }
    if (need <= b->populated)
        return;
    size_t to = (need + PL_POPULATE_BYTES - 1) / PL_POPULATE_BYTES * PL_POPULATE_BYTES;
    if (to > b->text.cap)
        to = b->text.cap;
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t base = (uintptr_t)b->text.data;
    const uintptr_t from = (base + b->populated + page - 1) & ~(page - 1);
    const uintptr_t end = (base + to) & ~(page - 1);
    if (end > from)
        (void)madvise((void *)from, end - from, MADV_POPULATE_WRITE);
#endif
    b->populated = to;
}

pl_batch *pl_batch_new(void)
{
    pl_batch *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    pq_buf_init(&b->text);
    pq_buf_init(&b->lines);
    pq_buf_init(&b->sources);
    pq_buf_init(&b->row_lines);
    pq_buf_init(&b->rejects);
    pq_buf_init(&b->reasons);
    pq_buf_init(&b->keys);
    pq_buf_init(&b->key_off);
    pq_buf_init(&b->key_time);
    pq_row_index_init(&b->rix);
    pq_buf_init(&b->grp_end);
    /* A batch goes on at PL_BATCH_BYTES; the read that crosses it may add
     * up to one more read buffer's worth. Lines average hundreds of bytes. */
    size_t text = PL_BATCH_BYTES + ((size_t)64 << 10);
    if (pq_buf_reserve(&b->text, text) != 0 ||
        pq_buf_reserve(&b->lines, text / 256 * sizeof(pl_line)) != 0) {
        pl_batch_destroy(b);
        return NULL;
    }
    return b;
}

void pl_batch_destroy(pl_batch *b)
{
    if (b == NULL)
        return;
    pq_buf_free(&b->text);
    pq_buf_free(&b->lines);
    pq_buf_free(&b->sources);
    pq_buf_free(&b->row_lines);
    pq_buf_free(&b->rejects);
    pq_buf_free(&b->reasons);
    pq_buf_free(&b->keys);
    pq_buf_free(&b->key_off);
    pq_buf_free(&b->key_time);
    pq_row_index_free(&b->rix);
    pq_buf_free(&b->grp_end);
    pq_rowgroup_destroy(b->rows);
    free(b);
}

void pl_batch_reset(pl_batch *b, uint64_t first_seq)
{
    b->first_seq = first_seq;
    b->n_lines = 0;
    pq_buf_reset(&b->text);
    pq_buf_reset(&b->lines);
    pq_buf_reset(&b->sources);
    pq_buf_reset(&b->row_lines);
    pq_buf_reset(&b->rejects);
    pq_buf_reset(&b->reasons);
    pq_buf_reset(&b->keys);
    pq_buf_reset(&b->key_off);
    pq_buf_reset(&b->key_time);
    b->has_source = false;
    b->shredded = false;
    b->fatal = 0;
    if (b->rows != NULL)
        pq_rowgroup_reset(b->rows);
    pq_buf_reset(&b->grp_end);
    b->n_groups = 0;
}

/* Consecutive lines from one connection share one copy of its source
 * (compared first: the length is needed only for a new one). */
static int intern_source(pl_batch *b, const char *source, uint32_t *off)
{
    if (b->has_source) {
        const char *last = (const char *)b->sources.data + b->last_source;
        if (strcmp(last, source) == 0) {
            *off = b->last_source;
            return 0;
        }
    }
    size_t n = strlen(source);
    if (b->sources.len > UINT32_MAX - n - 1)
        return PQ_ELIMIT;
    *off = (uint32_t)b->sources.len;
    if (pq_buf_append(&b->sources, source, n + 1) != 0)
        return PQ_ENOMEM;
    b->last_source = *off;
    b->has_source = true;
    return 0;
}

int pl_batch_add(pl_batch *b, const char *source, const void *line, size_t len, uint64_t total,
                 bool oversized, int64_t ingest_us, uint64_t lineno)
{
    pl_line l = {.off = b->text.len, .len = len, .total = total, .ingest_us = ingest_us,
                 .lineno = lineno, .oversized = oversized};
    int rc = intern_source(b, source, &l.source_off);
    if (rc != 0)
        return rc;
    if (pq_buf_reserve(&b->lines, sizeof l) != 0 || pq_buf_reserve(&b->text, len) != 0)
        return PQ_ENOMEM;
    populate_ahead(b, b->text.len + len);
    (void)pq_buf_append(&b->text, line, len);   /* room reserved: cannot fail */
    memcpy(b->lines.data + b->lines.len, &l, sizeof l);
    b->lines.len += sizeof l;
    b->n_lines++;
    return 0;
}

size_t pl_batch_lines(const pl_batch *b) { return b->n_lines; }
size_t pl_batch_bytes(const pl_batch *b) { return b->text.len; }
uint64_t pl_batch_end_seq(const pl_batch *b) { return b->first_seq + b->n_lines; }
