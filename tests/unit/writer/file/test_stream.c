/* test_stream.c - pq_stream (writer/file/stream.c): a row group fed in
 * pieces of any size, its leaves shared out between scratches as the
 * daemon's workers share them, its last piece fed as the last or not,
 * gives the file the classic API writes, byte for byte; what a stream
 * holds is counted, and nothing once a row group is finished; a finished
 * chunk's metadata is one allocation; a released stream's memory serves
 * the next file's leaves, of other types too; large chunks' pages are
 * handed over whole, not copied. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "encoded.h"
#include "memsink.h"
#include "pq_writer.h"
#include "rowgen.h"
#include "rowgroup.h"
#include "stream.h"

#define SCRATCHES 3

static pq_writer *writer_open(pq_schema *s, const pq_writer_opts *o, pq_buf *out)
{
    pq_err err = {0};
    pq_writer *w = NULL;
    pq_buf_init(out);
    if (pq_writer_open(&w, s, o, pqt_mem_sink(out), &err) != 0)
        fail_msg("open: %s", err.msg);
    return w;
}

static void writer_close(pq_writer *w)
{
    pq_err err = {0};
    if (pq_writer_close(w, &err) != 0)
        fail_msg("close: %s", err.msg);
    pq_writer_destroy(w);
}

/* Page versions, codecs, page cuts by rows and by bytes, a small
 * dictionary limit (fallback within chunks), statistics off. */
static void variant_opts(pq_writer_opts *o, int variant, size_t rg_rows)
{
    pq_writer_opts_default(o);
    o->row_group_max_rows = rg_rows;
    o->row_group_max_bytes = 0;
    switch (variant % 4) {
    case 0: o->page_max_rows = 64; o->dictionary_max_bytes = 512; break;
    case 1: o->page_version = 1; o->codec = PQ_CODEC_SNAPPY; o->page_max_rows = 50; break;
    case 2: o->codec = PQ_CODEC_UNCOMPRESSED; o->statistics = false; o->page_max_bytes = 300;
            break;
    default: o->page_version = 1; o->codec = PQ_CODEC_GZIP; o->page_max_bytes = 512;
             o->dictionary_max_bytes = 256; break;
    }
}

static void write_classic(pq_schema *s, const pq_writer_opts *o, uint64_t seed, uint64_t rows,
                          pq_buf *out)
{
    pq_err err = {0};
    pq_writer *w = writer_open(s, o, out);
    for (uint64_t r = 0; r < rows; r++)
        if (pqt_rowgen_writer(w, pq_schema_num_leaves(s), seed, r, &err) != 0)
            fail_msg("row %" PRIu64 ": %s", r, err.msg);
    writer_close(w);
}

/* Feeds one piece: its leaves cut at random into up to SCRATCHES ranges,
 * each fed with its own scratch, in a random order. */
static void feed_piece(pq_stream *st, const pq_rowgroup *piece, pq_encoded **scratch,
                       bool last, pqt_rng *r)
{
    pq_err err = {0};
    size_t leaves = pq_rowgroup_num_columns(piece), cut[SCRATCHES + 1] = {0};
    cut[SCRATCHES] = leaves;
    for (size_t k = 1; k < SCRATCHES; k++) {
        cut[k] = cut[k - 1] + (size_t)pqt_rng_below(r, leaves - cut[k - 1] + 1);
    }
    size_t first = (size_t)pqt_rng_below(r, SCRATCHES);
    for (size_t n = 0; n < SCRATCHES; n++) {
        size_t k = (first + n) % SCRATCHES;
        int rc = last ? pq_stream_feed_last(st, piece, cut[k], cut[k + 1], scratch[k], &err)
                      : pq_stream_feed(st, piece, cut[k], cut[k + 1], scratch[k], &err);
        if (rc != 0)
            fail_msg("feed: %s", err.msg);
    }
    pq_stream_add_rows(st, pq_rowgroup_rows(piece));
}

static void finish_append(pq_writer *w, pq_stream *st, pq_encoded *e, pq_encoded *scratch)
{
    pq_err err = {0};
    if (pq_stream_finish(st, e, scratch, &err) != 0)
        fail_msg("finish: %s", err.msg);
    assert_int_equal(pq_stream_held_bytes(st), 0);
    assert_int_equal(pq_stream_rows(st), 0);
    /* each chunk's metadata in one allocation (the column writers keep
     * their arrays for the next chunk) */
    for (size_t i = 0; e->rows > 0 && i < e->n_chunks; i++)
        assert_non_null(e->meta.chunks[i].block);
    if (pq_writer_append_encoded(w, e, &err) != 0)
        fail_msg("append: %s", err.msg);
}

/* Row groups of rg_rows, each fed in pieces of 0-80 rows, the last piece
 * of a row group fed as the last (pq_stream_feed_last) one time in two. */
static void write_streamed(pq_schema *s, const pq_writer_opts *o, uint64_t seed, uint64_t rows,
                           pqt_rng *r, pq_buf *out)
{
    pq_err err = {0};
    pq_writer *w = writer_open(s, o, out);
    pq_stream *st = NULL;
    pq_rowgroup *piece = NULL;
    if (pq_stream_new(&st, w, &err) != 0 || pq_rowgroup_new(&piece, s, &err) != 0)
        fail_msg("new: %s", err.msg);
    pq_encoded *e = pq_encoded_new(), *scratch[SCRATCHES];
    for (size_t k = 0; k < SCRATCHES; k++)
        assert_non_null(scratch[k] = pq_encoded_new());
    uint64_t next = 0, in_rg = 0;
    while (next < rows) {
        if (in_rg == 0 && pq_stream_begin(st, pq_writer_row_groups(w), &err) != 0)
            fail_msg("begin: %s", err.msg);
        uint64_t n = pqt_rng_below(r, 81);
        for (; n > 0 && next < rows && in_rg < o->row_group_max_rows; n--, next++, in_rg++)
            assert_int_equal(pqt_rowgen_rg(piece, seed, next), 0);
        bool ends = in_rg == o->row_group_max_rows || next == rows;
        feed_piece(st, piece, scratch, ends && pqt_rng_below(r, 2) == 0, r);
        pq_rowgroup_reset(piece);
        if (ends) {
            assert_true(in_rg == 0 || pq_stream_held_bytes(st) > 0);
            finish_append(w, st, e, scratch[pqt_rng_below(r, SCRATCHES)]);
            in_rg = 0;
        }
    }
    writer_close(w);
    pq_stream_destroy(st);
    pq_rowgroup_destroy(piece);
    pq_encoded_destroy(e);
    for (size_t k = 0; k < SCRATCHES; k++)
        pq_encoded_destroy(scratch[k]);
}

static void test_stream_pieces_give_the_classic_file_byte_for_byte(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    printf("[ seed     ] PQ_TEST_SEED=%" PRIu64 "\n", seed);
    pqt_rng r = {.state = seed};
    pq_schema *s = pqt_rowgen_schema(NULL);
    for (int variant = 0; variant < 8; variant++) {
        uint64_t rows = 1 + pqt_rng_below(&r, 1500), rg_rows = 1 + pqt_rng_below(&r, 700);
        pq_writer_opts o;
        variant_opts(&o, variant, (size_t)rg_rows);
        pq_buf classic, streamed;
        write_classic(s, &o, seed + (uint64_t)variant, rows, &classic);
        write_streamed(s, &o, seed + (uint64_t)variant, rows, &r, &streamed);
        if (classic.len != streamed.len || memcmp(classic.data, streamed.data, classic.len) != 0)
            fail_msg("variant %d, %" PRIu64 " rows in groups of %" PRIu64 ": files differ "
                     "(%zu vs %zu bytes); replay with PQ_TEST_SEED=%" PRIu64, variant, rows,
                     rg_rows, classic.len, streamed.len, seed);
        pq_buf_free(&classic);
        pq_buf_free(&streamed);
    }
    pq_schema_destroy(s);
}

/* A row group fed whole as the last piece keeps no copy of its rows in
 * the stream (its pages are encoded from the piece): it holds less than
 * the same piece fed as any other, and finishes to the same bytes. */
static void test_stream_last_feed_copies_no_rows(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    pq_buf out[2];
    pq_writer *w[2];
    pq_stream *st[2];
    pq_encoded *e = pq_encoded_new(), *scratch = pq_encoded_new();
    pq_rowgroup *piece = NULL;
    assert_int_equal(pq_rowgroup_new(&piece, s, &err), 0);
    for (uint64_t r = 0; r < 200; r++)
        assert_int_equal(pqt_rowgen_rg(piece, 7, r), 0);
    size_t held[2];
    for (int k = 0; k < 2; k++) {
        w[k] = writer_open(s, &o, &out[k]);
        assert_int_equal(pq_stream_new(&st[k], w[k], &err), 0);
        assert_int_equal(pq_stream_begin(st[k], 0, &err), 0);
        size_t n = pq_rowgroup_num_columns(piece);
        assert_int_equal(k ? pq_stream_feed_last(st[k], piece, 0, n, scratch, &err)
                           : pq_stream_feed(st[k], piece, 0, n, scratch, &err), 0);
        pq_stream_add_rows(st[k], pq_rowgroup_rows(piece));
        held[k] = pq_stream_held_bytes(st[k]);
        finish_append(w[k], st[k], e, scratch);
        pq_stream_destroy(st[k]);
        writer_close(w[k]);
    }
    assert_true(held[1] < held[0]);
    assert_int_equal(out[0].len, out[1].len);
    assert_memory_equal(out[0].data, out[1].data, out[0].len);
    for (int k = 0; k < 2; k++)
        pq_buf_free(&out[k]);
    pq_encoded_destroy(e);
    pq_encoded_destroy(scratch);
    pq_rowgroup_destroy(piece);
    pq_schema_destroy(s);
}

/* One row group of 150 rows through st into a file of its own. */
static void write_one(pq_schema *s, pq_writer *w, pq_stream *st)
{
    pq_err err = {0};
    pq_rowgroup *piece = NULL;
    pq_encoded *e = pq_encoded_new(), *scratch = pq_encoded_new();
    assert_int_equal(pq_rowgroup_new(&piece, s, &err), 0);
    for (uint64_t r = 0; r < 150; r++)
        assert_int_equal(pqt_rowgen_rg(piece, 11, r), 0);
    assert_int_equal(pq_stream_begin(st, 0, &err), 0);
    assert_int_equal(pq_stream_feed(st, piece, 0, pq_rowgroup_num_columns(piece), scratch,
                                    &err), 0);
    pq_stream_add_rows(st, pq_rowgroup_rows(piece));
    finish_append(w, st, e, scratch);
    pq_encoded_destroy(e);
    pq_encoded_destroy(scratch);
    pq_rowgroup_destroy(piece);
}

/* A released stream's array serves the next file's stream when it has
 * room for its leaves (the same struct comes back), and that file is the
 * one a new stream writes; a shell with too little room is freed and a
 * new stream made. */
static void test_stream_released_shell_serves_the_next_file(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_schema *s = pqt_rowgen_schema(NULL), *one = pq_schema_new(NULL);
    pq_node_spec leaf = {.name = "x", .repetition = PQ_REQUIRED, .type = PQ_INT64,
                         .field_id = -1};
    assert_true(pq_schema_add_leaf(one, 0, &leaf, &err) > 0);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    pq_buf out[3];
    pq_writer *w[3];
    pq_stream *st[3];
    for (int k = 0; k < 3; k++)
        w[k] = writer_open(s, &o, &out[k]);
    assert_int_equal(pq_stream_new(&st[0], w[0], &err), 0);
    write_one(s, w[0], st[0]);
    pq_stream_release(st[0]);
    assert_int_equal(pq_stream_new_in(&st[1], st[0], w[1], &err), 0);
    assert_ptr_equal(st[1], st[0]);           /* the same array, taken over */
    write_one(s, w[1], st[1]);
    pq_stream_release(st[1]);
    /* a shell of one leaf: too small for the next, freed (ASan: no leak) */
    pq_buf small_out;
    pq_writer *ws = writer_open(one, &o, &small_out);
    pq_stream *small = NULL;
    assert_int_equal(pq_stream_new(&small, ws, &err), 0);
    pq_stream_release(small);
    assert_int_equal(pq_stream_new_in(&st[2], small, w[2], &err), 0);
    write_one(s, w[2], st[2]);
    for (int k = 0; k < 3; k++)
        writer_close(w[k]);
    pq_stream_destroy(st[1]);
    pq_stream_destroy(st[2]);
    for (int k = 1; k < 3; k++) {
        assert_int_equal(out[k].len, out[0].len);
        assert_memory_equal(out[k].data, out[0].data, out[0].len);
    }
    for (int k = 0; k < 3; k++)
        pq_buf_free(&out[k]);
    writer_close(ws);
    pq_buf_free(&small_out);
    pq_schema_destroy(s);
    pq_schema_destroy(one);
}

/* A flat schema of six leaves of every kind of column writer (no
 * dictionary, fixed width, byte arrays), starting at type `shift`. */
static pq_schema *flat_schema(size_t shift)
{
    static const pq_physical_type types[] = {PQ_BOOLEAN, PQ_INT32, PQ_BYTE_ARRAY, PQ_DOUBLE,
                                             PQ_INT64, PQ_FIXED_LEN_BYTE_ARRAY};
    pq_err err = {0};
    pq_schema *s = pq_schema_new(NULL);
    for (size_t i = 0; i < 6; i++) {
        char name[8];
        snprintf(name, sizeof name, "c%zu", i);
        pq_physical_type t = types[(i + shift) % 6];
        pq_node_spec leaf = {.name = name, .repetition = i % 2 ? PQ_OPTIONAL : PQ_REQUIRED,
                             .type = t, .type_length = t == PQ_FIXED_LEN_BYTE_ARRAY ? 16 : 0,
                             .field_id = -1};
        assert_true(pq_schema_add_leaf(s, 0, &leaf, &err) > 0);
    }
    return s;
}

/* A released stream keeps its column writers' buffers (within
 * PQ_STREAM_KEEP_BYTES) for the next file's leaves, whatever their types:
 * each leaf of the next file gets the memory of a leaf of another type
 * (a dictionary's for a boolean, a boolean's for a dictionary), and
 * writes the file a new stream writes. */
static void test_stream_released_buffers_serve_other_types(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    for (size_t shift = 1; shift < 6; shift++) {
        pq_schema *a = flat_schema(0), *b = flat_schema(shift);
        pq_buf out_a, out_b, fresh_b;
        pq_writer *wa = writer_open(a, &o, &out_a), *wb = writer_open(b, &o, &out_b);
        pq_stream *st = NULL, *again = NULL;
        assert_int_equal(pq_stream_new(&st, wa, &err), 0);
        write_one(a, wa, st);
        pq_stream_release(st);
        assert_true(pq_stream_kept_bytes(st) > 0);
        assert_true(pq_stream_kept_bytes(st) <= PQ_STREAM_KEEP_BYTES);
        assert_int_equal(pq_stream_new_in(&again, st, wb, &err), 0);
        write_one(b, wb, again);
        pq_stream_release(again);       /* and released again: kept, not leaked */
        writer_close(wa);
        writer_close(wb);
        pq_stream_destroy(again);
        pq_writer *wf = writer_open(b, &o, &fresh_b);
        assert_int_equal(pq_stream_new(&st, wf, &err), 0);
        write_one(b, wf, st);
        writer_close(wf);
        pq_stream_destroy(st);
        assert_int_equal(out_b.len, fresh_b.len);
        assert_memory_equal(out_b.data, fresh_b.data, fresh_b.len);
        pq_buf_free(&out_a);
        pq_buf_free(&out_b);
        pq_buf_free(&fresh_b);
        pq_schema_destroy(a);
        pq_schema_destroy(b);
    }
}

/* The pieces tests' rig: two writers of one schema, uncompressed (pages
 * as large as their values) and deciding each row group afresh (as
 * pq_writer_encode's row groups do); a stream on the first, fed by the
 * test; the second written the classic way (pq_writer_encode, which
 * copies every chunk), for the first to equal. */
typedef struct piece_rig {
    pq_schema *s;
    pq_buf out[2];
    pq_writer *w[2];
    pq_stream *st;
    pq_rowgroup *rg;
    pq_encoded *scratch, *copied;
} piece_rig;

static void piece_rig_open(piece_rig *r)
{
    pq_err err = {0};
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.codec = PQ_CODEC_UNCOMPRESSED;
    o.decide_each_row_group = true;
    r->s = pqt_rowgen_schema(NULL);
    r->w[0] = writer_open(r->s, &o, &r->out[0]);
    r->w[1] = writer_open(r->s, &o, &r->out[1]);
    r->st = NULL;
    r->rg = NULL;
    assert_int_equal(pq_stream_new(&r->st, r->w[0], &err), 0);
    assert_int_equal(pq_rowgroup_new(&r->rg, r->s, &err), 0);
    r->scratch = pq_encoded_new();
    r->copied = pq_encoded_new();
}

/* Row group k of rig's rows, the classic way, into the second writer. */
static void piece_rig_write_copied(piece_rig *r, int32_t k)
{
    pq_err err = {0};
    assert_int_equal(pq_writer_encode(r->w[1], r->rg, k, r->copied, &err), 0);
    assert_int_equal(r->copied->n_pieces, 0);
    assert_int_equal(pq_writer_append_encoded(r->w[1], r->copied, &err), 0);
}

/* Closes both files, which must be the same bytes, and frees the rig. */
static void piece_rig_close_same(piece_rig *r)
{
    writer_close(r->w[0]);
    writer_close(r->w[1]);
    assert_int_equal(r->out[0].len, r->out[1].len);
    assert_memory_equal(r->out[0].data, r->out[1].data, r->out[0].len);
    pq_buf_free(&r->out[0]);
    pq_buf_free(&r->out[1]);
    pq_encoded_destroy(r->scratch);
    pq_encoded_destroy(r->copied);
    pq_stream_destroy(r->st);
    pq_rowgroup_destroy(r->rg);
    pq_schema_destroy(r->s);
}

/* Chunks whose data pages reach PQ_CW_SPLICE_MIN are handed to the
 * encoded row group whole (its pieces, encoded.h), smaller ones copied
 * into its bytes; the file is the one pq_writer_encode writes, byte for
 * byte. Two row groups through one encoded: the second's column writers
 * fill the first's pieces' memory. */
static void test_stream_large_chunks_are_pieces_of_the_same_file(void **state)
{
    (void)state;
    pq_err err = {0};
    piece_rig r;
    piece_rig_open(&r);
    pq_encoded *e = pq_encoded_new();
    const uint8_t *first_piece = NULL;
    for (int32_t k = 0; k < 2; k++) {
        for (uint64_t row = 0; row < 12000; row++)
            assert_int_equal(pqt_rowgen_rg(r.rg, 5 + (uint64_t)k, row), 0);
        assert_int_equal(pq_stream_begin(r.st, k, &err), 0);
        assert_int_equal(pq_stream_feed(r.st, r.rg, 0, pq_rowgroup_num_columns(r.rg), r.scratch,
                                        &err), 0);
        pq_stream_add_rows(r.st, pq_rowgroup_rows(r.rg));
        assert_int_equal(pq_stream_finish(r.st, e, r.scratch, &err), 0);
        assert_true(e->n_pieces > 0 && e->n_pieces < e->n_chunks);
        assert_int_equal(pq_encoded_bytes(e), e->bytes.len + e->piece_bytes);
        if (k == 0)
            first_piece = e->pieces[0].pages.data;
        else                     /* row group 0's pieces went to the column writers */
            for (size_t i = 0; i < e->n_pieces; i++)
                assert_ptr_not_equal(e->pieces[i].pages.data, first_piece);
        assert_int_equal(pq_writer_append_encoded(r.w[0], e, &err), 0);
        piece_rig_write_copied(&r, k);
        pq_rowgroup_reset(r.rg);
    }
    pq_encoded_destroy(e);
    piece_rig_close_same(&r);
}

/* The pipeline's way (daemon/output/pipeline.c): a written row group's
 * pieces go to a spare encoded (pq_encoded_move_pieces), and as the next
 * row group begins its stream adopts them (pq_stream_adopt_pieces), each
 * by the leaf whose pages it held: that row group's large chunks are
 * written from the same memory, and the file is the copied one. */
static void test_stream_adopted_pieces_hold_the_next_row_group(void **state)
{
    (void)state;
    pq_err err = {0};
    piece_rig r;
    piece_rig_open(&r);
    for (uint64_t row = 0; row < 12000; row++) /* every row group the same rows: */
        assert_int_equal(pqt_rowgen_rg(r.rg, 9, row), 0); /* the same pages */
    pq_encoded *spare = pq_encoded_new();
    const uint8_t *had[64] = {0};
    size_t leaves = pq_rowgroup_num_columns(r.rg), adopted = 0, later = 0;
    assert_true(leaves <= 64);
    for (int32_t k = 0; k < 3; k++) {
        pq_encoded *job = pq_encoded_new(), *e = pq_encoded_new();
        assert_int_equal(pq_stream_begin(r.st, k, &err), 0);
        pq_encoded_move_pieces(job, spare);
        pq_stream_adopt_pieces(r.st, job);
        for (size_t i = 0; i < job->cap_pieces; i++)
            assert_int_equal(job->pieces[i].pages.cap, 0); /* adopted or freed */
        assert_int_equal(pq_stream_feed(r.st, r.rg, 0, leaves, r.scratch, &err), 0);
        pq_stream_add_rows(r.st, pq_rowgroup_rows(r.rg));
        assert_int_equal(pq_stream_finish(r.st, e, r.scratch, &err), 0);
        assert_true(e->n_pieces > 0);
        later += k > 0 ? e->n_pieces : 0;
        for (size_t i = 0; i < e->n_pieces; i++) {
            const pq_encoded_piece *p = &e->pieces[i];
            adopted += p->pages.data == had[p->leaf];
            had[p->leaf] = p->pages.data;
        }
        assert_int_equal(pq_writer_append_encoded(r.w[0], e, &err), 0);
        pq_encoded_move_pieces(spare, e);
        piece_rig_write_copied(&r, k);
        pq_encoded_destroy(job);
        pq_encoded_destroy(e);
    }
    assert_int_equal(adopted, later);  /* each piece after row group 0 */
    pq_encoded_destroy(spare);
    piece_rig_close_same(&r);
}

/* A piece of another schema, or leaves out of range, are refused. */
static void test_stream_refuses_what_it_cannot_feed(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_schema *s = pqt_rowgen_schema(NULL), *other = pqt_rowgen_schema(NULL);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    pq_buf out;
    pq_writer *w = writer_open(s, &o, &out);
    pq_stream *st = NULL;
    pq_rowgroup *rg = NULL;
    assert_int_equal(pq_stream_new(&st, w, &err), 0);
    assert_int_equal(pq_rowgroup_new(&rg, other, &err), 0);
    pq_encoded *scratch = pq_encoded_new();
    assert_int_equal(pq_stream_begin(st, 0, &err), 0);
    assert_int_equal(pq_stream_feed(st, rg, 0, 1, scratch, &err), PQ_EINVAL);
    pq_rowgroup_destroy(rg);
    assert_int_equal(pq_rowgroup_new(&rg, s, &err), 0);
    assert_int_equal(pq_stream_feed(st, rg, 0, pq_schema_num_leaves(s) + 1, scratch, &err),
                     PQ_EINVAL);
    assert_int_equal(pq_stream_begin(st, -1, &err), PQ_EINVAL);
    pq_encoded_destroy(scratch);
    pq_rowgroup_destroy(rg);
    pq_stream_destroy(st);
    writer_close(w);
    pq_buf_free(&out);
    pq_schema_destroy(s);
    pq_schema_destroy(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_pieces_give_the_classic_file_byte_for_byte),
        cmocka_unit_test(test_stream_last_feed_copies_no_rows),
        cmocka_unit_test(test_stream_released_shell_serves_the_next_file),
        cmocka_unit_test(test_stream_released_buffers_serve_other_types),
        cmocka_unit_test(test_stream_large_chunks_are_pieces_of_the_same_file),
        cmocka_unit_test(test_stream_adopted_pieces_hold_the_next_row_group),
        cmocka_unit_test(test_stream_refuses_what_it_cannot_feed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
