/* test_rowgroup.c - writer/rows/rowgroup.c: row counting, abort, check, and
 * pq_rowgroup_move_rows between row groups of one schema (every physical
 * type, required and optional leaves, lists, a map, a struct, a list of
 * lists, a list of structs; see tests/support/rowgen.h).
 *
 * A move is right when both row groups end up with exactly the buffers
 * (levels, values, byte-array heap and offsets, counts) of row groups into
 * which the same rows were put directly: that is what the encoder reads,
 * so equal buffers mean equal files. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "schema_tree.h"
#include "decode.h"
#include "rowgroup.h"
#include "rowgen.h"

#define SEED 7

static pq_rowgroup *rg_new(pq_schema *s)
{
    pq_err err = {0};
    pq_rowgroup *rg = NULL;
    if (pq_rowgroup_new(&rg, s, &err) != 0)
        fail_msg("pq_rowgroup_new: %s", err.msg);
    return rg;
}

/* Puts rows [from, to) of seed into rg. */
static void put_rows(pq_rowgroup *rg, uint64_t seed, uint64_t from, uint64_t to)
{
    for (uint64_t r = from; r < to; r++)
        assert_int_equal(pqt_rowgen_rg(rg, seed, r), 0);
}

static void assert_buf_equal(const pq_buf *a, const pq_buf *b, const char *what,
                             const char *path)
{
    if (a->len != b->len)
        fail_msg("%s of '%s': %zu bytes, expected %zu", what, path, a->len, b->len);
    if (a->len > 0 && memcmp(a->data, b->data, a->len) != 0)
        fail_msg("%s of '%s' differ", what, path);
}

/* Same rows, same buffers, leaf by leaf. */
static void assert_rg_equal(pq_rowgroup *got, pq_rowgroup *want)
{
    assert_int_equal(pq_rowgroup_rows(got), pq_rowgroup_rows(want));
    assert_int_equal(pq_rowgroup_num_columns(got), pq_rowgroup_num_columns(want));
    for (size_t i = 0; i < pq_rowgroup_num_columns(got); i++) {
        const pq_column *a = pq_rowgroup_column(got, i), *b = pq_rowgroup_column(want, i);
        const char *p = b->node->path;
        if (a->n_levels != b->n_levels || a->n_values != b->n_values || a->n_rows != b->n_rows)
            fail_msg("'%s': %zu levels %zu values %zu rows, expected %zu %zu %zu", p,
                     a->n_levels, a->n_values, a->n_rows, b->n_levels, b->n_values, b->n_rows);
        assert_buf_equal(&a->def, &b->def, "definition levels", p);
        assert_buf_equal(&a->rep, &b->rep, "repetition levels", p);
        assert_buf_equal(&a->values, &b->values, "values", p);
        assert_buf_equal(&a->heap, &b->heap, "byte-array heap", p);
        assert_buf_equal(&a->offsets, &b->offsets, "byte-array offsets", p);
    }
}

/* A copy of rg's rows [from, to) built by putting them directly. */
static pq_rowgroup *reference(pq_schema *s, uint64_t seed, uint64_t from, uint64_t to)
{
    pq_rowgroup *rg = rg_new(s);
    put_rows(rg, seed, from, to);
    return rg;
}

static void test_rowgroup_move_all_rows_into_empty_destination(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_rowgroup *src = reference(s, SEED, 0, 100), *dst = rg_new(s);
    pq_rowgroup *want = reference(s, SEED, 0, 100), *empty = rg_new(s);
    pq_err err = {0};
    assert_int_equal(pq_rowgroup_move_rows(dst, src, 100, &err), 0);
    assert_rg_equal(dst, want);
    assert_rg_equal(src, empty);
    assert_int_equal(pq_rowgroup_buffered_bytes(src), pq_rowgroup_buffered_bytes(empty));
    assert_int_equal(pq_rowgroup_check(dst, &err), 0);
    /* the emptied source takes new rows as a fresh one would */
    put_rows(src, SEED, 500, 510);
    put_rows(empty, SEED, 500, 510);
    assert_rg_equal(src, empty);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_rowgroup_destroy(want);
    pq_rowgroup_destroy(empty);
    pq_schema_destroy(s);
}

/* A released row group serves another schema's rows (its schema freed
 * meanwhile) as a fresh one would, in the same struct with its leaves'
 * buffers kept; one of fewer leaves frees the others' buffers, and they
 * are made again for more; a shell with room for fewer leaves than the
 * schema has is freed (ASan: no leak) and a new row group made. */
static void test_rowgroup_released_shell_takes_another_schema(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_schema *s = pqt_rowgen_schema(NULL), *t = pqt_rowgen_schema(NULL);
    pq_schema *one = pq_schema_new(NULL);
    pq_node_spec leaf = {.name = "x", .repetition = PQ_OPTIONAL, .type = PQ_BYTE_ARRAY,
                         .field_id = -1};
    assert_true(pq_schema_add_leaf(one, 0, &leaf, &err) > 0);
    pq_rowgroup *rg = reference(s, SEED, 0, 300);
    const uint8_t *def0 = pq_rowgroup_column(rg, 0)->def.data;
    size_t room = pq_rowgroup_capacity(rg);
    pq_rowgroup_release(rg);
    pq_schema_destroy(s);        /* the shell references nothing */
    pq_rowgroup *again = NULL;
    assert_int_equal(pq_rowgroup_new_in(&again, rg, t, &err), 0);
    assert_ptr_equal(again, rg);
    assert_int_equal(pq_rowgroup_capacity(again), room);
    if (def0 != NULL)
        assert_ptr_equal(pq_rowgroup_column(again, 0)->def.data, def0);
    pq_rowgroup *want = reference(t, SEED + 1, 0, 0);
    assert_rg_equal(again, want);
    put_rows(again, SEED + 1, 0, 120);
    put_rows(want, SEED + 1, 0, 120);
    assert_rg_equal(again, want);
    /* fewer leaves: the others' buffers freed; more again: made again */
    pq_rowgroup_release(again);
    pq_rowgroup *small = NULL, *big = NULL;
    assert_int_equal(pq_rowgroup_new_in(&small, again, one, &err), 0);
    assert_ptr_equal(small, again);
    assert_int_equal(pq_rowgroup_num_columns(small), 1);
    assert_int_equal(pq_column_put_bytes(pq_rowgroup_column(small, 0), 0, "ab", 2), 0);
    pq_rowgroup_end_row(small);
    pq_rowgroup_release(small);
    assert_int_equal(pq_rowgroup_new_in(&big, small, t, &err), 0);
    put_rows(big, SEED + 2, 0, 50);
    pq_rowgroup *want_big = reference(t, SEED + 2, 0, 50);
    assert_rg_equal(big, want_big);
    pq_rowgroup_destroy(big);
    pq_rowgroup *narrow = rg_new(one), *wide = NULL;
    pq_rowgroup_release(narrow);
    assert_int_equal(pq_rowgroup_new_in(&wide, narrow, t, &err), 0);
    put_rows(wide, SEED + 2, 0, 50);
    assert_rg_equal(wide, want_big);
    pq_rowgroup_destroy(wide);
    pq_rowgroup_destroy(want_big);
    pq_rowgroup_destroy(want);
    pq_schema_destroy(t);
    pq_schema_destroy(one);
}

/* Moving the first n of m rows: dst gets rows [0, n), src keeps [n, m)
 * at its front, for n at and around the edges. */
static void test_rowgroup_move_first_rows_leaves_the_rest_in_front(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    const uint64_t m = 100, ns[] = {0, 1, 2, 37, 98, 99, 100};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        pq_err err = {0};
        pq_rowgroup *src = reference(s, SEED, 0, m), *dst = rg_new(s);
        assert_int_equal(pq_rowgroup_move_rows(dst, src, ns[k], &err), 0);
        pq_rowgroup *head = reference(s, SEED, 0, ns[k]), *tail = reference(s, SEED, ns[k], m);
        assert_rg_equal(dst, head);
        assert_rg_equal(src, tail);
        pq_rowgroup_destroy(src);
        pq_rowgroup_destroy(dst);
        pq_rowgroup_destroy(head);
        pq_rowgroup_destroy(tail);
    }
    pq_schema_destroy(s);
}

/* Appending to a row group that already holds rows: byte-array offsets
 * are rebased onto dst's heap, levels and values follow dst's. */
static void test_rowgroup_move_into_non_empty_destination(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_err err = {0};
    pq_rowgroup *dst = reference(s, SEED, 1000, 1050), *src = reference(s, SEED, 0, 80);
    assert_int_equal(pq_rowgroup_move_rows(dst, src, 30, &err), 0);
    pq_rowgroup *want = reference(s, SEED, 1000, 1050), *rest = reference(s, SEED, 30, 80);
    put_rows(want, SEED, 0, 30);
    assert_rg_equal(dst, want);
    assert_rg_equal(src, rest);
    /* and everything that is left, on top */
    assert_int_equal(pq_rowgroup_move_rows(dst, src, 50, &err), 0);
    put_rows(want, SEED, 30, 80);
    assert_rg_equal(dst, want);
    assert_int_equal(pq_rowgroup_rows(src), 0);
    pq_rowgroup_destroy(dst);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(want);
    pq_rowgroup_destroy(rest);
    pq_schema_destroy(s);
}

/* A source keeps working after a partial move: new rows go after the ones
 * left, and an aborted row leaves no trace. */
static void test_rowgroup_source_keeps_working_after_a_partial_move(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_err err = {0};
    pq_rowgroup *src = reference(s, SEED, 0, 40), *dst = rg_new(s);
    assert_int_equal(pq_rowgroup_move_rows(dst, src, 25, &err), 0);
    put_rows(src, SEED, 40, 45);
    /* half a row, then abandoned */
    assert_int_equal(pq_column_put_i64(pq_rowgroup_column(src, 2), 0, 12345), 0);
    assert_int_equal(pq_column_put_bytes(pq_rowgroup_column(src, 8), 0, "partial", 7), 0);
    pq_rowgroup_abort_row(src);
    pq_rowgroup *want = reference(s, SEED, 25, 45);
    assert_rg_equal(src, want);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_rowgroup_destroy(want);
    pq_schema_destroy(s);
}

/* The pipeline's pattern, at random: rows arrive in batches of random
 * size, are moved on in random amounts (often splitting a batch), and the
 * destination is checked and reset now and then. Whatever the cuts, the
 * destination holds the rows in input order. */
static void test_rowgroup_random_moves_keep_rows_in_order(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    printf("[ seed     ] PQ_TEST_SEED=%" PRIu64 "\n", seed);
    pqt_rng r = {.state = seed};
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_rowgroup *src = rg_new(s), *dst = rg_new(s);
    uint64_t next = 0, dst_first = 0;
    for (int step = 0; step < 200; step++) {
        uint64_t batch = pqt_rng_below(&r, 40);
        put_rows(src, seed, next, next + batch);
        next += batch;
        uint64_t n = pqt_rng_below(&r, pq_rowgroup_rows(src) + 1);
        pq_err err = {0};
        PQT_CHECK(pq_rowgroup_move_rows(dst, src, n, &err) == 0, seed);
        if (pqt_rng_below(&r, 10) == 0 || step == 199) {
            uint64_t end = dst_first + pq_rowgroup_rows(dst);
            pq_rowgroup *want = reference(s, seed, dst_first, end);
            assert_rg_equal(dst, want);
            pq_rowgroup_destroy(want);
            want = reference(s, seed, end, next);
            assert_rg_equal(src, want);
            pq_rowgroup_destroy(want);
            pq_rowgroup_reset(dst);
            dst_first = end;
        }
    }
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_schema_destroy(s);
}

/* ---- copying rows out of an indexed row group (pq_rowgroup_copy_rows) ------------ */

/* A batch's rows dealt in runs to a few destinations, as the pipeline
 * deals a batch to its keys' files: each destination gets exactly its
 * rows, in order, from runs of any length at any place (repeated leaves
 * included), and the source is unchanged. */
static void test_rowgroup_copy_rows_deals_runs_to_destinations(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    printf("[ seed     ] PQ_TEST_SEED=%" PRIu64 "\n", seed);
    pqt_rng r = {.state = seed};
    pq_schema *s = pqt_rowgen_schema(NULL);
    enum { ROWS = 300, DESTS = 5 };
    pq_rowgroup *src = reference(s, seed, 0, ROWS), *dst[DESTS], *want[DESTS];
    for (int d = 0; d < DESTS; d++) {
        dst[d] = rg_new(s);
        want[d] = rg_new(s);
    }
    pq_row_index ix;
    pq_row_index_init(&ix);
    pq_err err = {0};
    PQT_CHECK(pq_rowgroup_index(src, &ix, &err) == 0, seed);
    for (uint64_t row = 0, n; row < ROWS; row += n) {
        n = 1 + pqt_rng_below(&r, pqt_rng_below(&r, 2) ? 3 : 40);   /* single rows and runs */
        n = n < ROWS - row ? n : ROWS - row;
        const int d = (int)pqt_rng_below(&r, DESTS);
        PQT_CHECK(pq_rowgroup_copy_rows(dst[d], src, &ix, row, n, &err) == 0, seed);
        put_rows(want[d], seed, row, row + n);
    }
    for (int d = 0; d < DESTS; d++) {
        assert_rg_equal(dst[d], want[d]);
        assert_int_equal(pq_rowgroup_check(dst[d], &err), 0);
        pq_rowgroup_destroy(dst[d]);
        pq_rowgroup_destroy(want[d]);
    }
    pq_rowgroup *whole = reference(s, seed, 0, ROWS);
    assert_rg_equal(src, whole);
    pq_rowgroup_destroy(whole);
    pq_row_index_free(&ix);
    pq_rowgroup_destroy(src);
    pq_schema_destroy(s);
}

/* Rows past the source, or an index of another state of the source:
 * refused, the destination unchanged. */
static void test_rowgroup_copy_rows_refuses_rows_past_the_source_and_a_stale_index(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_rowgroup *src = reference(s, SEED, 0, 20), *dst = reference(s, SEED, 100, 103);
    pq_rowgroup *want = reference(s, SEED, 100, 103);
    pq_row_index ix;
    pq_row_index_init(&ix);
    pq_err err = {0};
    assert_int_equal(pq_rowgroup_index(src, &ix, &err), 0);
    assert_int_equal(pq_rowgroup_copy_rows(dst, src, &ix, 19, 2, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "rows 19 to 21"));
    put_rows(src, SEED, 20, 21);   /* the index is of 20 rows */
    assert_int_equal(pq_rowgroup_copy_rows(dst, src, &ix, 2, 1, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "index"));
    assert_rg_equal(dst, want);
    pq_row_index_free(&ix);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_rowgroup_destroy(want);
    pq_schema_destroy(s);
}

/* ---- errors leave both row groups unchanged ----------------------------------- */

static void test_rowgroup_move_refuses_a_source_with_an_unfinished_row(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_err err = {0};
    pq_rowgroup *src = reference(s, SEED, 0, 10), *dst = reference(s, SEED, 100, 105);
    assert_int_equal(pq_column_put_i64(pq_rowgroup_column(src, 2), 0, 99), 0); /* no end_row */
    size_t src_bytes = pq_rowgroup_buffered_bytes(src), dst_bytes = pq_rowgroup_buffered_bytes(dst);
    assert_int_equal(pq_rowgroup_move_rows(dst, src, 5, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "unfinished row"));
    assert_non_null(strstr(err.msg, "i64"));
    assert_int_equal(pq_rowgroup_buffered_bytes(src), src_bytes);
    pq_rowgroup_abort_row(src); /* drops only the unfinished row */
    pq_rowgroup *want_src = reference(s, SEED, 0, 10), *want_dst = reference(s, SEED, 100, 105);
    assert_rg_equal(src, want_src);
    assert_rg_equal(dst, want_dst);
    assert_int_equal(pq_rowgroup_buffered_bytes(dst), dst_bytes);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_rowgroup_destroy(want_src);
    pq_rowgroup_destroy(want_dst);
    pq_schema_destroy(s);
}

/* Rows appended after dst's half-written row would be misaligned. */
static void test_rowgroup_move_refuses_a_destination_with_an_unfinished_row(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_err err = {0};
    pq_rowgroup *src = reference(s, SEED, 0, 10), *dst = reference(s, SEED, 100, 105);
    assert_int_equal(pq_column_put_bytes(pq_rowgroup_column(dst, 8), 0, "half", 4), 0);
    assert_int_equal(pq_rowgroup_move_rows(dst, src, 5, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "destination"));
    pq_rowgroup_abort_row(dst);
    pq_rowgroup *want_src = reference(s, SEED, 0, 10), *want_dst = reference(s, SEED, 100, 105);
    assert_rg_equal(src, want_src);
    assert_rg_equal(dst, want_dst);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_rowgroup_destroy(want_src);
    pq_rowgroup_destroy(want_dst);
    pq_schema_destroy(s);
}

/* Equal-looking schemas are still different objects: leaves are matched
 * by the schema they were built from, not by shape. */
static void test_rowgroup_move_refuses_another_schema(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL), *t = pqt_rowgen_schema(NULL);
    pq_err err = {0};
    pq_rowgroup *src = reference(s, SEED, 0, 10), *dst = reference(t, SEED, 100, 105);
    assert_int_equal(pq_rowgroup_move_rows(dst, src, 5, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "schema"));
    pq_rowgroup *want_src = reference(s, SEED, 0, 10), *want_dst = reference(t, SEED, 100, 105);
    assert_rg_equal(src, want_src);
    assert_rg_equal(dst, want_dst);
    assert_int_equal(pq_rowgroup_move_rows(src, src, 1, &err), PQ_EINVAL);
    assert_rg_equal(src, want_src);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_rowgroup_destroy(want_src);
    pq_rowgroup_destroy(want_dst);
    pq_schema_destroy(s);
    pq_schema_destroy(t);
}

static void test_rowgroup_move_refuses_more_rows_than_the_source_has(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_err err = {0};
    pq_rowgroup *src = reference(s, SEED, 0, 10), *dst = reference(s, SEED, 100, 105);
    assert_int_equal(pq_rowgroup_move_rows(dst, src, 11, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "11 rows asked, the source has 10"));
    pq_rowgroup *want_src = reference(s, SEED, 0, 10), *want_dst = reference(s, SEED, 100, 105);
    assert_rg_equal(src, want_src);
    assert_rg_equal(dst, want_dst);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_rowgroup_destroy(want_src);
    pq_rowgroup_destroy(want_dst);
    pq_schema_destroy(s);
}

/* ---- bookkeeping ------------------------------------------------------------ */

/* After reserve_like for k batches' worth of rows, moving k batches in
 * never moves a buffer (each value is copied once, into place), and the
 * rows are the same as without the reservation. */
static void test_rowgroup_reserve_like_makes_moves_copy_once(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    const uint64_t batch = 50, batches = 8;
    pq_rowgroup *dst = rg_new(s), *like = reference(s, SEED, 0, batch);
    pq_err err = {0};
    /* generated rows vary in size: leave room for that */
    assert_int_equal(pq_rowgroup_reserve_like(dst, like, 2 * batch * batches, &err), 0);
    size_t n = pq_rowgroup_num_columns(dst);
    const uint8_t **before = calloc(5 * n, sizeof *before);
    assert_non_null(before);
    for (size_t i = 0; i < n; i++) {
        const pq_column *c = pq_rowgroup_column(dst, i);
        const pq_buf *b[5] = {&c->def, &c->rep, &c->values, &c->heap, &c->offsets};
        for (size_t j = 0; j < 5; j++)
            before[5 * i + j] = b[j]->data;
    }
    for (uint64_t k = 0; k < batches; k++) {
        pq_rowgroup *src = reference(s, SEED, k * batch, (k + 1) * batch);
        assert_int_equal(pq_rowgroup_move_rows(dst, src, batch, &err), 0);
        pq_rowgroup_destroy(src);
    }
    for (size_t i = 0; i < n; i++) {
        const pq_column *c = pq_rowgroup_column(dst, i);
        const pq_buf *b[5] = {&c->def, &c->rep, &c->values, &c->heap, &c->offsets};
        for (size_t j = 0; j < 5; j++)
            if (b[j]->len > 0 && before[5 * i + j] != b[j]->data)
                fail_msg("'%s': buffer %zu moved while rows were appended", c->node->path, j);
    }
    pq_rowgroup *want = reference(s, SEED, 0, batch * batches);
    assert_rg_equal(dst, want);
    /* nothing to reserve from, or for: a no-op */
    pq_rowgroup *empty = rg_new(s);
    assert_int_equal(pq_rowgroup_reserve_like(dst, empty, 1000, &err), 0);
    assert_int_equal(pq_rowgroup_reserve_like(dst, like, 0, &err), 0);
    assert_rg_equal(dst, want);
    free(before);
    pq_rowgroup_destroy(empty);
    pq_rowgroup_destroy(want);
    pq_rowgroup_destroy(like);
    pq_rowgroup_destroy(dst);
    pq_schema_destroy(s);
}

static void test_rowgroup_reserve_like_refuses_another_schema(void **state)
{
    (void)state;
    pq_schema *s1 = pqt_rowgen_schema(NULL), *s2 = pqt_rowgen_schema(NULL);
    pq_rowgroup *a = rg_new(s1), *b = reference(s2, SEED, 0, 10);
    pq_err err = {0};
    assert_int_equal(pq_rowgroup_reserve_like(a, b, 100, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "different schemas"));
    pq_rowgroup_destroy(a);
    pq_rowgroup_destroy(b);
    pq_schema_destroy(s1);
    pq_schema_destroy(s2);
}

static void test_rowgroup_check_names_a_column_missing_a_row(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_err err = {0};
    pq_rowgroup *rg = reference(s, SEED, 0, 3);
    assert_int_equal(pq_rowgroup_check(rg, &err), 0);
    assert_int_equal(pq_column_put_bool(pq_rowgroup_column(rg, 0), 0, true), 0);
    pq_rowgroup_end_row(rg); /* only leaf 0 got a value */
    assert_int_equal(pq_rowgroup_check(rg, &err), PQ_ESTATE);
    assert_non_null(strstr(err.msg, "'i32' has 3 rows, the row group has 4"));
    pq_rowgroup_destroy(rg);
    pq_schema_destroy(s);
}

static void test_rowgroup_abort_leaf_drops_only_that_leaf(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_rowgroup *rg = reference(s, SEED, 0, 2);
    pq_column *str = pq_rowgroup_column(rg, 8);
    size_t heap = str->heap.len;
    assert_int_equal(pq_column_put_i64(pq_rowgroup_column(rg, 2), 0, 5), 0);
    assert_int_equal(pq_column_put_bytes(str, 0, "first", 5), 0);
    pq_rowgroup_abort_leaf(rg, 8); /* a duplicate key: the later value wins */
    assert_int_equal(str->heap.len, heap);
    assert_int_equal(pq_rowgroup_column(rg, 2)->n_rows, 3);
    assert_null(pq_rowgroup_column(rg, pq_rowgroup_num_columns(rg)));
    pq_rowgroup_destroy(rg);
    pq_schema_destroy(s);
}

static void test_rowgroup_reset_drops_rows_and_keeps_working(void **state)
{
    (void)state;
    pq_schema *s = pqt_rowgen_schema(NULL);
    pq_rowgroup *rg = reference(s, SEED, 0, 50), *empty = rg_new(s);
    assert_true(pq_rowgroup_buffered_bytes(rg) > pq_rowgroup_buffered_bytes(empty));
    pq_rowgroup_reset(rg);
    assert_rg_equal(rg, empty);
    put_rows(rg, SEED, 7, 9);
    put_rows(empty, SEED, 7, 9);
    assert_rg_equal(rg, empty);
    pq_rowgroup_destroy(rg);
    pq_rowgroup_destroy(empty);
    pq_schema_destroy(s);
}

static void test_rowgroup_new_finishes_the_schema_or_reports_why_not(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_schema *s = pq_schema_new(NULL);
    pq_rowgroup *rg = NULL;
    assert_int_equal(pq_rowgroup_new(&rg, s, &err), PQ_EINVAL); /* no columns */
    assert_null(rg);
    assert_non_null(strstr(err.msg, "no columns"));
    pq_node_spec id = {.name = "id", .repetition = PQ_REQUIRED, .type = PQ_INT64, .field_id = -1};
    assert_true(pq_schema_add_leaf(s, 0, &id, &err) > 0);
    assert_int_equal(pq_rowgroup_new(&rg, s, &err), 0);
    assert_int_equal(pq_rowgroup_num_columns(rg), 1);
    assert_ptr_equal(pq_rowgroup_schema(rg), s);
    assert_int_equal(pq_schema_max_def(s, 0), 0); /* finished: levels are known */
    pq_rowgroup_destroy(rg);
    pq_schema_destroy(s);
}

/* column.c's puts copy a value's bytes without memcpy up to 16 bytes
 * (overlapping loads): every length 0..40, values back to back in the
 * heap with their offsets, fixed-width values at their widths. */
static void test_column_put_copies_every_length(void **state)
{
    (void)state;
    pq_node node;
    memset(&node, 0, sizeof node);
    node.type = PQ_BYTE_ARRAY;
    node.max_def = 1;
    node.path = (char *)"s";
    pq_column c;
    assert_int_equal(pq_column_init(&c, &node), 0);
    uint8_t src[41], want[41 * 41];
    size_t at = 0;
    for (size_t len = 0; len <= 40; len++) {
        for (size_t k = 0; k < len; k++)
            src[k] = (uint8_t)(len * 7 + k + 1);
        assert_int_equal(pq_column_put_bytes(&c, 0, src, len), 0);
        memcpy(want + at, src, len);
        at += len;
        assert_int_equal(pq_column_offsets(&c)[len + 1], at);
    }
    assert_int_equal(c.heap.len, at);
    assert_memory_equal(c.heap.data, want, at);
    pq_column_free(&c);
    node.type = PQ_INT64;
    assert_int_equal(pq_column_init(&c, &node), 0);
    const int64_t v[3] = {-2, INT64_MAX, 0x0102030405060708};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(pq_column_put_i64(&c, 0, v[i]), 0);
    assert_int_equal(c.values.len, sizeof v);
    assert_memory_equal(c.values.data, v, sizeof v);
    pq_column_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_column_put_copies_every_length),
        cmocka_unit_test(test_rowgroup_move_all_rows_into_empty_destination),
        cmocka_unit_test(test_rowgroup_released_shell_takes_another_schema),
        cmocka_unit_test(test_rowgroup_move_first_rows_leaves_the_rest_in_front),
        cmocka_unit_test(test_rowgroup_move_into_non_empty_destination),
        cmocka_unit_test(test_rowgroup_source_keeps_working_after_a_partial_move),
        cmocka_unit_test(test_rowgroup_random_moves_keep_rows_in_order),
        cmocka_unit_test(test_rowgroup_move_refuses_a_source_with_an_unfinished_row),
        cmocka_unit_test(test_rowgroup_move_refuses_a_destination_with_an_unfinished_row),
        cmocka_unit_test(test_rowgroup_move_refuses_another_schema),
        cmocka_unit_test(test_rowgroup_move_refuses_more_rows_than_the_source_has),
        cmocka_unit_test(test_rowgroup_copy_rows_deals_runs_to_destinations),
        cmocka_unit_test(test_rowgroup_copy_rows_refuses_rows_past_the_source_and_a_stale_index),
        cmocka_unit_test(test_rowgroup_reserve_like_makes_moves_copy_once),
        cmocka_unit_test(test_rowgroup_reserve_like_refuses_another_schema),
        cmocka_unit_test(test_rowgroup_check_names_a_column_missing_a_row),
        cmocka_unit_test(test_rowgroup_abort_leaf_drops_only_that_leaf),
        cmocka_unit_test(test_rowgroup_reset_drops_rows_and_keeps_working),
        cmocka_unit_test(test_rowgroup_new_finishes_the_schema_or_reports_why_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
