/* test_column.c - writer/rows/column.c's pq_column_reserve: after room for
 * n rows is reserved, n rows of values and nulls are written without the
 * levels', fixed-width values' or byte-array offsets' buffers moving (no
 * reallocation), and they read back; pq_column_put_bytes's short-string
 * path (no call, buffers with room) and its general one write the same
 * values, offsets and levels, whatever the length and the room left.
 * (The other put_* paths are tested with the row group, test_rowgroup.c.) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "column.h"
#include "err.h"

#define ROWS 300

static void init_leaf(pq_node *node, pq_physical_type type)
{
    memset(node, 0, sizeof *node);
    node->type = type;
    node->max_def = 1;
    node->path = (char *)"s";
}

static void test_column_reserve_keeps_buffers_in_place_for_the_rows(void **state)
{
    (void)state;
    pq_node node;
    init_leaf(&node, PQ_INT64);
    pq_column c;
    assert_int_equal(pq_column_init(&c, &node), 0);
    assert_int_equal(pq_column_reserve(&c, ROWS, ROWS, 0), PQ_OK);
    const uint8_t *def = c.def.data, *values = c.values.data;
    for (int64_t r = 0; r < ROWS; r++)
        assert_int_equal(r % 3 ? pq_column_put_i64(&c, 0, r) : pq_column_put_null(&c, 0, 0), 0);
    assert_ptr_equal(c.def.data, def);
    assert_ptr_equal(c.values.data, values);
    assert_int_equal(c.n_levels, ROWS);
    assert_int_equal(c.n_values, ROWS - ROWS / 3);
    pq_column_free(&c);

    init_leaf(&node, PQ_BYTE_ARRAY);
    assert_int_equal(pq_column_init(&c, &node), 0);
    assert_int_equal(pq_column_reserve(&c, ROWS, ROWS, 2 * ROWS), PQ_OK);
    const uint8_t *offsets = c.offsets.data, *heap = c.heap.data;
    def = c.def.data;
    for (size_t r = 0; r < ROWS; r++)
        assert_int_equal(pq_column_put_bytes(&c, 0, "ab", 2), 0);
    assert_ptr_equal(c.def.data, def);
    assert_ptr_equal(c.offsets.data, offsets);
    assert_ptr_equal(c.heap.data, heap);
    assert_int_equal(pq_column_offsets(&c)[ROWS], 2 * ROWS);
    assert_memory_equal(pq_column_bytes(&c, ROWS - 1), "ab", 2);
    pq_column_free(&c);
}

/* Byte arrays of every length from 0 to 47 (the short path takes up to
 * 32 bytes) into a column that grows from empty, so that each buffer's
 * growth falls on puts of every kind: each value, offset and level reads
 * back; a repeated leaf's puts (the general path) too; the general
 * path's errors stay. */
static void test_column_put_bytes_every_length_and_room(void **state)
{
    (void)state;
    uint8_t src[48];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)('a' + i % 26);
    for (int max_def = 0; max_def <= 1; max_def++) {
        for (int max_rep = 0; max_rep <= 1; max_rep++) {
            pq_node node;
            init_leaf(&node, PQ_BYTE_ARRAY);
            node.max_def = (uint16_t)max_def;
            node.max_rep = (uint16_t)max_rep;
            pq_column c;
            assert_int_equal(pq_column_init(&c, &node), 0);
            const size_t n = 3 * sizeof src;
            size_t heap = 0;
            for (size_t k = 0; k < n; k++) {
                const size_t len = (k * 7) % sizeof src;
                const uint16_t rep = max_rep && k % 3 == 1 ? 1 : 0;
                assert_int_equal(pq_column_put_bytes(&c, rep, src + k % 5, len < 44 ? len : 43), 0);
                heap += len < 44 ? len : 43;
            }
            assert_int_equal(c.n_values, n);
            assert_int_equal(c.n_levels, n);
            assert_int_equal(c.n_rows, max_rep ? n - n / 3 : n);
            assert_int_equal(c.heap.len, heap);
            assert_int_equal(c.offsets.len, 4 * (n + 1));
            assert_int_equal(c.def.len, max_def ? 2 * n : 0);
            assert_int_equal(c.rep.len, max_rep ? 2 * n : 0);
            for (size_t k = 0; k < n; k++) {
                const size_t len = (k * 7) % sizeof src < 44 ? (k * 7) % sizeof src : 43;
                assert_int_equal(pq_column_offsets(&c)[k + 1] - pq_column_offsets(&c)[k], len);
                if (len > 0)
                    assert_memory_equal(pq_column_bytes(&c, k), src + k % 5, len);
                uint16_t lv;
                if (max_def) {
                    memcpy(&lv, c.def.data + 2 * k, 2);
                    assert_int_equal(lv, 1);
                }
                if (max_rep) {
                    memcpy(&lv, c.rep.data + 2 * k, 2);
                    assert_int_equal(lv, k % 3 == 1 ? 1 : 0);
                }
            }
            /* a repeat past the leaf's level, a first value continuing a row */
            assert_int_equal(pq_column_put_bytes(&c, (uint16_t)(max_rep + 1), "x", 1), PQ_EINVAL);
            pq_column_reset(&c);
            if (max_rep)
                assert_int_equal(pq_column_put_bytes(&c, 1, "x", 1), PQ_EINVAL);
            assert_int_equal(c.n_values, 0);
            pq_column_free(&c);
        }
    }
    pq_node node;
    init_leaf(&node, PQ_INT64);
    pq_column c;
    assert_int_equal(pq_column_init(&c, &node), 0);
    assert_int_equal(pq_column_put_bytes(&c, 0, "ab", 2), PQ_ETYPE);
    pq_column_free(&c);
}

/* Fixed-width values and nulls, mixed, into columns that grow from empty
 * (the short paths of put_fixed and pq_column_put_null, and the general
 * ones at each growth and for a repeated leaf): values and levels read
 * back; the general paths' errors stay. */
static void test_column_put_fixed_and_null_every_room(void **state)
{
    (void)state;
    for (int max_rep = 0; max_rep <= 1; max_rep++) {
        for (int max_def = 0; max_def <= 2; max_def++) {
            pq_node node;
            init_leaf(&node, PQ_INT64);
            node.max_def = (uint16_t)max_def;
            node.max_rep = (uint16_t)max_rep;
            pq_column c;
            assert_int_equal(pq_column_init(&c, &node), 0);
            size_t nv = 0;
            for (int64_t k = 0; k < 200; k++) {
                const uint16_t rep = max_rep && k % 4 == 3 ? 1 : 0;
                if (max_def > 0 && k % 3 == 0) {
                    assert_int_equal(pq_column_put_null(&c, rep, (uint16_t)(k % max_def)), 0);
                } else {
                    assert_int_equal(pq_column_put_i64(&c, rep, k * 1000003), 0);
                    nv++;
                }
            }
            assert_int_equal(c.n_levels, 200);
            assert_int_equal(c.n_values, nv);
            assert_int_equal(c.n_rows, max_rep ? 150 : 200);
            assert_int_equal(c.values.len, 8 * nv);
            for (int64_t k = 0, v = 0; k < 200; k++) {
                uint16_t lv;
                if (max_def > 0) {
                    memcpy(&lv, c.def.data + 2 * k, 2);
                    assert_int_equal(lv, k % 3 == 0 ? (uint16_t)(k % max_def) : (uint16_t)max_def);
                }
                if (max_rep) {
                    memcpy(&lv, c.rep.data + 2 * k, 2);
                    assert_int_equal(lv, k % 4 == 3 ? 1 : 0);
                }
                if (max_def == 0 || k % 3 != 0) {
                    int64_t got;
                    memcpy(&got, c.values.data + 8 * v++, 8);
                    assert_int_equal(got, k * 1000003);
                }
            }
            assert_int_equal(pq_column_put_null(&c, 0, (uint16_t)max_def), PQ_EINVAL);
            assert_int_equal(pq_column_put_i64(&c, (uint16_t)(max_rep + 1), 1), PQ_EINVAL);
            assert_int_equal(pq_column_put_i32(&c, 0, 1), PQ_ETYPE);
            assert_int_equal(pq_column_put_double(&c, 0, 1.0), PQ_ETYPE);
            assert_int_equal(c.n_levels, 200);
            pq_column_free(&c);
        }
    }
    /* the other widths, one byte to eight */
    pq_node node;
    pq_column c;
    init_leaf(&node, PQ_BOOLEAN);
    assert_int_equal(pq_column_init(&c, &node), 0);
    for (int k = 0; k < 100; k++)
        assert_int_equal(pq_column_put_bool(&c, 0, k % 3 == 0), 0);
    for (int k = 0; k < 100; k++)
        assert_int_equal(c.values.data[k], k % 3 == 0);
    pq_column_free(&c);
    init_leaf(&node, PQ_DOUBLE);
    assert_int_equal(pq_column_init(&c, &node), 0);
    for (int k = 0; k < 100; k++)
        assert_int_equal(pq_column_put_double(&c, 0, k * 0.25), 0);
    for (int k = 0; k < 100; k++) {
        double d;
        memcpy(&d, c.values.data + 8 * k, 8);
        assert_true(d == k * 0.25);
    }
    pq_column_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_column_reserve_keeps_buffers_in_place_for_the_rows),
        cmocka_unit_test(test_column_put_bytes_every_length_and_room),
        cmocka_unit_test(test_column_put_fixed_and_null_every_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
