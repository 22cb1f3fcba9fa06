/* scalar.h - JSON scalars to Parquet column values (DESIGN.md
 * "Conversions"): RFC 3339 timestamps, epoch numbers, dates, times, exact
 * decimals, UUIDs, base64, float16, ISO 8601 intervals and integer ranges.
 * Every function returns 0, or PQ_ETYPE when the text is not of the form,
 * or PQ_ELIMIT when it is but the value does not fit. */
#ifndef PQ_SCALAR_H
#define PQ_SCALAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "json.h"
#include "types.h"

/* "2024-05-01T12:34:56.123456789+02:00" (also 't', ' ' as separator, 'Z',
 * no zone = UTC) to the unit since the epoch; digits below the unit are
 * dropped toward negative infinity. */
int sk_parse_timestamp(const char *s, size_t n, pq_time_unit unit, int64_t *out);
/* The same without sk_parse_timestamp's fast path for the common fixed
 * layout: the reference tests/fuzz/fuzz_timestamp.c compares it with. */
int sk_parse_timestamp_general(const char *s, size_t n, pq_time_unit unit, int64_t *out);

/* An epoch number: integers are in the column's unit; numbers with a
 * fraction or exponent are seconds (Zeek's `ts`), converted exactly. */
int sk_epoch_number(const json_number *num, pq_time_unit unit, int64_t *out);

int sk_parse_date(const char *s, size_t n, int32_t *days);
/* "HH:MM:SS[.frac]" to the unit since midnight. */
int sk_parse_time(const char *s, size_t n, pq_time_unit unit, int64_t *out);

/* Exact decimal at the given scale: trailing fractional digits beyond the
 * scale must be zero (no rounding), and the result must fit precision. */
int sk_decimal_from_number(const json_number *num, int precision, int scale, json_int128 *out);
int sk_decimal_from_string(const char *s, size_t n, int precision, int scale, json_int128 *out);
/* Big-endian two's complement in exactly len bytes (FIXED), or the
 * minimal length (len == 0, BYTE_ARRAY); returns the length written. */
size_t sk_decimal_bytes(json_int128 v, uint8_t out[16], size_t len);

int sk_parse_uuid(const char *s, size_t n, uint8_t out[16]);
/* Standard or URL-safe alphabet, padding optional; appends to out. */
int sk_base64_decode(const char *s, size_t n, pq_buf *out);
/* IEEE half precision, round to nearest even. */
uint16_t sk_float16_from_double(double d);
/* ISO 8601 duration "P1Y2M3DT4H5M6.789S" to Parquet INTERVAL (months,
 * days, milliseconds; all unsigned, so negative durations are refused). */
int sk_parse_interval(const char *s, size_t n, uint8_t out[12]);

/* Integer columns: int8..int64 and uint8..uint64 range checks. */
int sk_int_signed(const json_number *num, int bits, int64_t *out);
int sk_int_unsigned(const json_number *num, int bits, uint64_t *out);

#endif
