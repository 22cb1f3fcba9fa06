/* test_memeq.c - pq_memeq agrees with memcmp == 0 at every length its
 * branches split on (0, 1-3, 4-7, 8-32 in overlapping words, above 32 by
 * memcmp), whichever byte differs, and reads no byte past n. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "memeq.h"

#include <stdlib.h>

static void test_memeq_matches_memcmp_at_every_length_and_position(void **state)
{
    (void)state;
    uint8_t a[80], b[80];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = b[i] = (uint8_t)(i * 7 + 1);
    for (size_t n = 0; n <= 70; n++) {
        assert_true(pq_memeq(a, b, n));
        for (size_t at = 0; at < n; at++) {
            b[at] ^= 0x20;
            assert_false(pq_memeq(a, b, n));
            assert_false(pq_memeq(b, a, n));
            b[at] ^= 0x20;
        }
        b[n] ^= 0xFF; /* a byte past n never counts */
        assert_true(pq_memeq(a, b, n));
        b[n] ^= 0xFF;
    }
}

/* Each string at the very end of a heap block of its own size: under
 * ASan, a load past n would fault. */
static void test_memeq_reads_only_n_bytes(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 40; n++) {
        uint8_t *x = malloc(n), *y = malloc(n);
        assert_non_null(x);
        assert_non_null(y);
        memset(x, 'k', n);
        memset(y, 'k', n);
        assert_true(pq_memeq(x, y, n));
        y[n - 1] = 'j';
        assert_false(pq_memeq(x, y, n));
        free(x);
        free(y);
    }
    assert_true(pq_memeq(NULL, NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memeq_matches_memcmp_at_every_length_and_position),
        cmocka_unit_test(test_memeq_reads_only_n_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
