/* test_crc32c.c - CRC32C (daemon/durability/crc32c.c), the spool's record
 * checksum: the known vectors, the hardware and table versions agreeing
 * at every length and alignment (seeded, SPOOL_SEED=<n> replays one).
 * Its speed is bench_spool's to report: timings decide no test. */
#include "spool_fixture.h"

/* ---- CRC32C ------------------------------------------------------------------- */

static void test_crc32c_known_vectors(void **state)
{
    (void)state;
    uint8_t zeros[32] = {0}, ones[32], inc[32];
    memset(ones, 0xFF, sizeof ones);
    for (int i = 0; i < 32; i++)
        inc[i] = (uint8_t)i;
    /* RFC 3720 B.4 (iSCSI) and the "123456789" check value. */
    uint32_t (*const impls[2])(uint32_t, const void *, size_t) = {crc32c, crc32c_sw};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(impls[k](0, "123456789", 9), 0xE3069283u);
        assert_int_equal(impls[k](0, zeros, 32), 0x8A9136AAu);
        assert_int_equal(impls[k](0, ones, 32), 0x62A8AB43u);
        assert_int_equal(impls[k](0, inc, 32), 0x46DD794Eu);
        assert_int_equal(impls[k](0, "", 0), 0);
    }
}

static void test_crc32c_hardware_and_tables_agree_at_every_length_and_alignment(void **state)
{
    (void)state;
    seed_rng(__func__);
    uint8_t buf[4096];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rnd();
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= 520; n++) {
            const uint32_t a = crc32c(0, buf + off, n), b = crc32c_sw(0, buf + off, n);
            assert_int_equal(a, b);
            /* Extending equals the CRC of the concatenation. */
            const size_t cut = n / 3;
            assert_int_equal(crc32c(crc32c(0, buf + off, cut), buf + off + cut, n - cut), a);
        }
    /* Past 3 * 64 and 3 * 512 bytes the hardware version runs three
     * streams and joins them: every length up to 4 KiB - 8 (both block
     * sizes, with every tail), at every alignment. */
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 521; n + off <= sizeof buf; n++)
            assert_int_equal(crc32c(0, buf + off, n), crc32c_sw(0, buf + off, n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_known_vectors),
        cmocka_unit_test(test_crc32c_hardware_and_tables_agree_at_every_length_and_alignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
