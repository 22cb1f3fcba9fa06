/* test_column.c - writer/rows/column.c's pq_column_reserve: after room for
 * n rows is reserved, n rows of values and nulls are written without the
 * levels', fixed-width values' or byte-array offsets' buffers moving (no
 * reallocation), and they read back. (The put_* paths themselves are
 * tested with the row group, test_rowgroup.c.) */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_column_reserve_keeps_buffers_in_place_for_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
