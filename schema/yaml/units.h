/* units.h - sizes ("64MiB") and durations ("5m", "1h30m") as written in
 * parqd's YAML configuration (DESIGN.md "Configuration").
 *
 * Sizes: a whole number of bytes, optionally followed by B, KiB, MiB, GiB
 * or TiB (case-insensitive, powers of 1024, optional space before the
 * unit). KB/MB/GB, K/M/G and friends are rejected on purpose: half the
 * tools that accept them mean 1000 and half mean 1024, and an operator
 * sizing a row group should not have to guess which one we picked.
 *
 * Durations: one or more <whole number><unit> parts with units ms, s, m, h
 * ("250ms", "60s", "5m", "1h30m"). A bare number is rejected (seconds or
 * milliseconds?) except 0, which means the same in every unit. Results are
 * milliseconds.
 *
 * Both reject signs, fractions, garbage and anything that overflows
 * uint64_t. On failure *why is a short static explanation for the
 * operator, e.g. "unknown unit 'MB' ...". */
#ifndef PQ_UNITS_H
#define PQ_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Both return 0 or PQ_EINVAL (with *why set). */
int un_parse_size(const char *s, uint64_t *out, const char **why);
int un_parse_duration_ms(const char *s, uint64_t *out, const char **why);

/* The shortest exact form: "64MiB", "1000 B" -> "1000", "0". Always
 * NUL-terminates; returns snprintf's count. */
int un_format_size(uint64_t bytes, char *buf, size_t n);
/* "5m", "1h30m", "250ms", "0". */
int un_format_duration_ms(uint64_t ms, char *buf, size_t n);

#endif
