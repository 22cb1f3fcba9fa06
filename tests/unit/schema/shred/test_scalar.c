/* test_scalar.c - typed-column conversions: timestamps, epochs, dates,
 * times, exact decimals, UUIDs, base64, float16, intervals, int ranges. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "scalar.h"

static json_number captured;

static int on_number(void *user, const json_number *num)
{
    (void)user;
    captured = *num;
    return 0;
}

/* Numbers come from the real parser; `text` must outlive the result. */
static const json_number *number(const char *text)
{
    json_parser p;
    json_handler h = {.number = on_number};
    pq_err err = {0};
    assert_int_equal(json_parser_init(&p, 0), 0);
    if (json_parse_line(&p, text, strlen(text), &h, NULL, &err) != 0)
        fail_msg("parse %s: %s", text, err.msg);
    json_parser_free(&p);
    return &captured;
}

static int64_t ts(const char *s, pq_time_unit unit)
{
    int64_t v = 0;
    int rc = sk_parse_timestamp(s, strlen(s), unit, &v);
    if (rc != 0)
        fail_msg("timestamp '%s' rc %d", s, rc);
    return v;
}

static void test_scalar_timestamp_rfc3339_offsets_and_fractions(void **state)
{
    (void)state;
    assert_int_equal(ts("1970-01-01T00:00:00Z", PQ_UNIT_MICROS), 0);
    assert_int_equal(ts("2024-02-29T12:00:00Z", PQ_UNIT_MILLIS), 1709208000000LL);
    assert_int_equal(ts("2024-02-29T14:00:00+02:00", PQ_UNIT_MILLIS), 1709208000000LL);
    assert_int_equal(ts("2024-02-29t07:30:00-0430", PQ_UNIT_MILLIS), 1709208000000LL);
    assert_int_equal(ts("2024-02-29 12:00:00", PQ_UNIT_MILLIS), 1709208000000LL);
    assert_int_equal(ts("1970-01-01T00:00:00.123456789Z", PQ_UNIT_NANOS), 123456789);
    assert_int_equal(ts("1970-01-01T00:00:00.123456789Z", PQ_UNIT_MICROS), 123456);
    /* before the epoch, sub-unit digits round toward negative infinity */
    assert_int_equal(ts("1969-12-31T23:59:59.9999Z", PQ_UNIT_MILLIS), -1);
    assert_int_equal(ts("1900-01-01T00:00:00Z", PQ_UNIT_MICROS), -2208988800000000LL);
}

static void test_scalar_timestamp_rejects_malformed_and_out_of_range(void **state)
{
    (void)state;
    int64_t v;
    const char *bad[] = {"2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z",
                         "2024-01-01T24:00:00Z", "2024-01-01", "2024-01-01T00:00:00+25:00",
                         "2024-01-01T00:00:00Zjunk", "2024-01-01T00:00:00.Z", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sk_parse_timestamp(bad[i], strlen(bad[i]), PQ_UNIT_MICROS, &v), PQ_ETYPE);
    const char *far = "9999-12-31T00:00:00Z"; /* beyond int64 nanoseconds */
    assert_int_equal(sk_parse_timestamp(far, strlen(far), PQ_UNIT_NANOS, &v), PQ_ELIMIT);
    assert_int_equal(sk_parse_timestamp(far, strlen(far), PQ_UNIT_MICROS, &v), 0);
}

/* The fixed-layout fast path of sk_parse_timestamp against the general
 * parse, at the edges of its layout: each string gives the same code and
 * value both ways, in every unit. */
static void test_scalar_timestamp_fixed_layout_matches_general(void **state)
{
    (void)state;
    const char *cases[] = {
        "2024-05-14T06:59:59.968+01:00", "2024-05-14T05:59:59.966Z", "2024-05-14T05:59:59Z",
        "2024-05-14T05:59:59", "2024-05-14T05:59:59.1", "2024-05-14T05:59:59.123456789Z",
        "2024-05-14T05:59:59.1234567891Z", "2024-05-14T05:59:59.Z", "2024-05-14T05:59:59,5Z",
        "1969-12-31T23:59:59.999-00:30", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z",
        "2024-05-14T05:59:60Z", "2024-05-14T24:00:00Z", "2024-05-14T05:59:59+24:00",
        "2024-05-14T05:59:59+05", "2024-05-14T05:59:59+0530", "2024-05-14T05:59:59+05:3",
        "2024-05-14T05:59:59+05:30x", "2024-05-14T05:59:59z", "2024-05-14t05:59:59Z",
        "2024-05-14 05:59:59Z", "2024-5-14T05:59:59Z", "2024-05-14T05:59:5", "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999999+23:59", "2024-00-14T05:59:59Z", "2024-05-00T05:59:59Z",
        "2024-05-14T05:60:00Z", "2024-05-14T05:59:59.12a",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int unit = PQ_UNIT_MILLIS; unit <= PQ_UNIT_NANOS; unit++) {
            int64_t fast = 42, general = 42;
            const size_t n = strlen(cases[i]);
            const int rf = sk_parse_timestamp(cases[i], n, (pq_time_unit)unit, &fast);
            const int rg = sk_parse_timestamp_general(cases[i], n, (pq_time_unit)unit, &general);
            if (rf != rg || (rf == 0 && fast != general))
                fail_msg("'%s' unit %d: rc %d value %lld, general rc %d value %lld", cases[i],
                         unit, rf, (long long)fast, rg, (long long)general);
        }
    }
    /* the layout the fast path takes, checked by value too */
    assert_int_equal(ts("2024-05-14T06:59:59.968+01:00", PQ_UNIT_MICROS), 1715666399968000LL);
    assert_int_equal(ts("1969-12-31T23:59:59.9999Z", PQ_UNIT_MILLIS), -1);
}

/* Zeek writes `ts` as float seconds; integers are in the column's unit. */
static void test_scalar_epoch_numbers_fraction_means_seconds(void **state)
{
    (void)state;
    int64_t v;
    assert_int_equal(sk_epoch_number(number("1520467200.000031"), PQ_UNIT_MICROS, &v), 0);
    assert_int_equal(v, 1520467200000031LL);
    assert_int_equal(sk_epoch_number(number("1520467200.5"), PQ_UNIT_MILLIS, &v), 0);
    assert_int_equal(v, 1520467200500LL);
    assert_int_equal(sk_epoch_number(number("1520467200123"), PQ_UNIT_MILLIS, &v), 0);
    assert_int_equal(v, 1520467200123LL);
    assert_int_equal(sk_epoch_number(number("1.5e9"), PQ_UNIT_NANOS, &v), 0);
    assert_int_equal(v, 1500000000000000000LL);
    assert_int_equal(sk_epoch_number(number("1e12"), PQ_UNIT_NANOS, &v), PQ_ELIMIT);
}

static void test_scalar_date_and_time(void **state)
{
    (void)state;
    int32_t d;
    int64_t t;
    assert_int_equal(sk_parse_date("2000-03-01", 10, &d), 0);
    assert_int_equal(d, 11017);
    assert_int_equal(sk_parse_date("1969-12-31", 10, &d), 0);
    assert_int_equal(d, -1);
    assert_int_equal(sk_parse_date("2000-3-01", 9, &d), PQ_ETYPE);
    assert_int_equal(sk_parse_time("23:59:59.5", 10, PQ_UNIT_MILLIS, &t), 0);
    assert_int_equal(t, 86399500);
    assert_int_equal(sk_parse_time("00:00:01", 8, PQ_UNIT_NANOS, &t), 0);
    assert_int_equal(t, 1000000000);
    assert_int_equal(sk_parse_time("24:00:00", 8, PQ_UNIT_MILLIS, &t), PQ_ETYPE);
}

static void test_scalar_decimals_are_exact_never_rounded(void **state)
{
    (void)state;
    json_int128 v;
    assert_int_equal(sk_decimal_from_number(number("123.45"), 9, 2, &v), 0);
    assert_true(v == 12345);
    assert_int_equal(sk_decimal_from_number(number("-1.5"), 9, 3, &v), 0);
    assert_true(v == -1500);
    assert_int_equal(sk_decimal_from_number(number("1.2300"), 5, 2, &v), 0);
    assert_true(v == 123);
    assert_int_equal(sk_decimal_from_number(number("1.234"), 9, 2, &v), PQ_ELIMIT);
    assert_int_equal(sk_decimal_from_number(number("1000"), 5, 2, &v), PQ_ELIMIT);
    assert_int_equal(sk_decimal_from_string("1.5e2", 5, 6, 1, &v), 0);
    assert_true(v == 1500);
    assert_int_equal(sk_decimal_from_string("-0.07", 5, 4, 2, &v), 0);
    assert_true(v == -7);
    const char *big = "12345678901234567890123456789012345678"; /* 38 digits */
    assert_int_equal(sk_decimal_from_string(big, strlen(big), 38, 0, &v), 0);
    assert_int_equal(sk_decimal_from_string(big, strlen(big), 37, 0, &v), PQ_ELIMIT);
    assert_int_equal(sk_decimal_from_string("12a", 3, 9, 0, &v), PQ_ETYPE);
}

static void test_scalar_decimal_bytes_are_big_endian_twos_complement(void **state)
{
    (void)state;
    uint8_t out[16];
    assert_int_equal(sk_decimal_bytes(-1, out, 4), 4);
    assert_memory_equal(out, "\xff\xff\xff\xff", 4);
    assert_int_equal(sk_decimal_bytes(128, out, 0), 2); /* 0x0080: keeps the sign byte */
    assert_memory_equal(out, "\x00\x80", 2);
    assert_int_equal(sk_decimal_bytes(-129, out, 0), 2);
    assert_memory_equal(out, "\xff\x7f", 2);
    assert_int_equal(sk_decimal_bytes(0, out, 0), 1);
    assert_int_equal(out[0], 0);
}

static void test_scalar_uuid_and_base64(void **state)
{
    (void)state;
    uint8_t u[16];
    const char *s = "123E4567-e89b-12d3-a456-426614174000";
    assert_int_equal(sk_parse_uuid(s, strlen(s), u), 0);
    assert_memory_equal(u, "\x12\x3e\x45\x67\xe8\x9b\x12\xd3\xa4\x56\x42\x66\x14\x17\x40\x00", 16);
    assert_int_equal(sk_parse_uuid("123e4567e89b12d3a456426614174000", 32, u), PQ_ETYPE);
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(sk_base64_decode("aGVsbG8=", 8, &b), 0);
    assert_int_equal(b.len, 5);
    assert_memory_equal(b.data, "hello", 5);
    pq_buf_reset(&b);
    assert_int_equal(sk_base64_decode("_-8", 3, &b), 0); /* URL-safe, no padding */
    assert_memory_equal(b.data, "\xff\xef", 2);
    assert_int_equal(sk_base64_decode("a*==", 4, &b), PQ_ETYPE);
    pq_buf_free(&b);
}

/* Reference bits from IEEE 754 binary16. */
static void test_scalar_float16_rounds_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(sk_float16_from_double(1.0), 0x3C00);
    assert_int_equal(sk_float16_from_double(-2.0), 0xC000);
    assert_int_equal(sk_float16_from_double(65504.0), 0x7BFF);
    assert_int_equal(sk_float16_from_double(65520.0), 0x7C00); /* rounds up to inf */
    assert_int_equal(sk_float16_from_double(5.960464477539063e-08), 0x0001);
    assert_int_equal(sk_float16_from_double(1.0 + 1.0 / 2048), 0x3C00); /* tie to even */
    assert_int_equal(sk_float16_from_double(-0.0), 0x8000);
    assert_int_equal(sk_float16_from_double(1e-10), 0x0000);
    assert_true((sk_float16_from_double(NAN) & 0x7C00) == 0x7C00);
}

static void test_scalar_interval_from_iso8601_duration(void **state)
{
    (void)state;
    uint8_t iv[12];
    const char *s = "P1Y2M3W4DT5H6M7.089S";
    assert_int_equal(sk_parse_interval(s, strlen(s), iv), 0);
    assert_memory_equal(iv, "\x0e\x00\x00\x00", 4);         /* 14 months */
    assert_memory_equal(iv + 4, "\x19\x00\x00\x00", 4);     /* 25 days */
    uint32_t ms = 5 * 3600000u + 6 * 60000u + 7089u;
    uint8_t want[4] = {(uint8_t)ms, (uint8_t)(ms >> 8), (uint8_t)(ms >> 16), (uint8_t)(ms >> 24)};
    assert_memory_equal(iv + 8, want, 4);
    assert_int_equal(sk_parse_interval("PT0.0001S", 9, iv), PQ_ETYPE); /* below 1 ms */
    assert_int_equal(sk_parse_interval("P1H", 3, iv), PQ_ETYPE);
}

static void test_scalar_integer_ranges(void **state)
{
    (void)state;
    int64_t i;
    uint64_t u;
    assert_int_equal(sk_int_signed(number("127"), 8, &i), 0);
    assert_int_equal(sk_int_signed(number("128"), 8, &i), PQ_ELIMIT);
    assert_int_equal(sk_int_signed(number("-9223372036854775808"), 64, &i), 0);
    assert_int_equal(i, INT64_MIN);
    assert_int_equal(sk_int_signed(number("127"), 8, &i), 0);
    assert_int_equal(i, 127);
    assert_int_equal(sk_int_signed(number("-128"), 8, &i), 0);
    assert_int_equal(i, -128);
    assert_int_equal(sk_int_signed(number("128"), 8, &i), PQ_ELIMIT);
    assert_int_equal(sk_int_signed(number("-129"), 8, &i), PQ_ELIMIT);
    assert_int_equal(sk_int_signed(number("-2147483648"), 32, &i), 0);
    assert_int_equal(sk_int_signed(number("2147483648"), 32, &i), PQ_ELIMIT);
    assert_int_equal(sk_int_signed(number("9223372036854775807"), 64, &i), 0);
    assert_true(i == INT64_MAX);
    assert_int_equal(sk_int_signed(number("9223372036854775808"), 64, &i), PQ_ELIMIT);
    assert_int_equal(sk_int_signed(number("1e3"), 16, &i), 0);
    assert_int_equal(i, 1000);
    assert_int_equal(sk_int_signed(number("1.5"), 32, &i), PQ_ETYPE);
    assert_int_equal(sk_int_unsigned(number("18446744073709551615"), 64, &u), 0);
    assert_true(u == UINT64_MAX);
    assert_int_equal(sk_int_unsigned(number("-1"), 64, &u), PQ_ELIMIT);
    assert_int_equal(sk_int_unsigned(number("65536"), 16, &u), PQ_ELIMIT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_timestamp_rfc3339_offsets_and_fractions),
        cmocka_unit_test(test_scalar_timestamp_rejects_malformed_and_out_of_range),
        cmocka_unit_test(test_scalar_timestamp_fixed_layout_matches_general),
        cmocka_unit_test(test_scalar_epoch_numbers_fraction_means_seconds),
        cmocka_unit_test(test_scalar_date_and_time),
        cmocka_unit_test(test_scalar_decimals_are_exact_never_rounded),
        cmocka_unit_test(test_scalar_decimal_bytes_are_big_endian_twos_complement),
        cmocka_unit_test(test_scalar_uuid_and_base64),
        cmocka_unit_test(test_scalar_float16_rounds_to_nearest_even),
        cmocka_unit_test(test_scalar_interval_from_iso8601_duration),
        cmocka_unit_test(test_scalar_integer_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
