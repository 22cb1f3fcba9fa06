/* test_buf.c - pq_buf growth and the varint/little-endian appends. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "buf.h"
#include "err.h"

static void test_buf_append_grows_and_keeps_bytes(void **state)
{
    (void)state;
    pq_buf b;
    pq_buf_init(&b);
    for (uint32_t i = 0; i < 10000; i++)
        assert_int_equal(pq_buf_put_u32le(&b, i), 0);
    assert_int_equal(b.len, 40000);
    assert_int_equal(b.data[4 * 258 + 1], 1); /* 258 = 0x0102 little-endian */
    assert_int_equal(b.data[4 * 258], 2);
    pq_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_true(b.cap >= 40000);
    pq_buf_free(&b);
}

/* A reservation past twice the capacity is taken as asked (a segment
 * reserved for its expected rows must not get up to twice that); a small
 * one still doubles, so appends stay amortised. */
static void test_buf_reserve_takes_large_as_asked_small_doubles(void **state)
{
    (void)state;
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_buf_reserve(&b, 100000), 0);
    assert_int_equal(b.cap, 100000);
    b.len = b.cap;
    assert_int_equal(pq_buf_reserve(&b, 1), 0);
    assert_int_equal(b.cap, 200000);
    b.len = b.cap;
    assert_int_equal(pq_buf_reserve(&b, 300000), 0);
    assert_int_equal(b.cap, 500000);
    pq_buf_free(&b);
}

/* ULEB128 examples from the Thrift compact protocol spec: 300 = AC 02. */
static void test_buf_uvarint_300_is_ac_02(void **state)
{
    (void)state;
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_buf_put_uvarint(&b, 300), 0);
    assert_int_equal(b.len, 2);
    assert_int_equal(b.data[0], 0xAC);
    assert_int_equal(b.data[1], 0x02);
    pq_buf_free(&b);
}

/* Zigzag maps 0,-1,1,-2 to 0,1,2,3 and INT64_MIN to UINT64_MAX. */
static void test_buf_zigzag_maps_sign_to_low_bit(void **state)
{
    (void)state;
    const int64_t in[] = {0, -1, 1, -2, INT64_MIN};
    const uint8_t want_first[] = {0, 1, 2, 3, 0xFF};
    for (size_t i = 0; i < 5; i++) {
        pq_buf b;
        pq_buf_init(&b);
        assert_int_equal(pq_buf_put_zigzag(&b, in[i]), 0);
        assert_int_equal(b.data[0], want_first[i]);
        if (in[i] == INT64_MIN)
            assert_int_equal(b.len, 10);
        pq_buf_free(&b);
    }
}

static void test_err_set_formats_message(void **state)
{
    (void)state;
    pq_err e;
    pq_err_clear(&e);
    int rc = pq_err_set(&e, PQ_EINVAL, "line %d: %s", 7, "bad");
    assert_int_equal(rc, PQ_EINVAL);
    assert_int_equal(e.code, PQ_EINVAL);
    assert_string_equal(e.msg, "line 7: bad");
    assert_string_equal(pq_err_name(PQ_ENOMEM), "ENOMEM");
}

static void test_err_prefix_puts_context_first_and_keeps_inner(void **state)
{
    (void)state;
    pq_err e;
    pq_err_set(&e, PQ_ECODEC, "zstd: corrupted block");
    assert_int_equal(pq_err_prefix(&e, PQ_EPARSE, "page %d of column '%s'", 3, "msg"), PQ_EPARSE);
    assert_int_equal(e.code, PQ_EPARSE);
    assert_string_equal(e.msg, "page 3 of column 'msg': zstd: corrupted block");
    assert_int_equal(pq_err_prefix(NULL, PQ_EIO, "ignored"), PQ_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_append_grows_and_keeps_bytes),
        cmocka_unit_test(test_buf_reserve_takes_large_as_asked_small_doubles),
        cmocka_unit_test(test_buf_uvarint_300_is_ac_02),
        cmocka_unit_test(test_buf_zigzag_maps_sign_to_low_bit),
        cmocka_unit_test(test_err_set_formats_message),
        cmocka_unit_test(test_err_prefix_puts_context_first_and_keeps_inner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
