/* evtime.h - event time for output paths (output.time_from, ARCHITECTURE.md
 * "Partitioned output"): which value of a record gives the time its path's
 * strftime fields render, how that value becomes seconds, and when a file
 * of a past period closes.
 *
 * time_from names a column of the schema:
 *   - a timestamp column read from the record (`from:`, a dotted path or
 *     JSON Pointer): the record's value at that path, as the shredder
 *     converts it for the column: an RFC 3339 string, or an epoch number
 *     (an integer in the column's unit, a number with a fraction or an
 *     exponent in seconds);
 *   - otherwise, when the schema has a column taking the rest of the
 *     record (`from: "*"`: the default schema's `event`, a Variant), a
 *     field of the record (a dotted path or JSON Pointer, as `from:`
 *     takes): an RFC 3339 string, or an epoch number in seconds (a
 *     fraction allowed);
 *   - anything else (no such column, not a timestamp, the ingestion-time
 *     column) is refused by et_resolve, with the reason.
 * A record whose value is missing, null, of another JSON type, not a
 * timestamp or outside years 0001-9999 takes its ingestion time instead
 * (the caller counts it: parqd_records_time_fallback_total).
 *
 * Thread: any; an et_source is read-only once resolved. */
#ifndef PQ_EVTIME_H
#define PQ_EVTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "colspec.h"
#include "err.h"
#include "json.h"
#include "pathtpl.h"

typedef struct et_source {
    pt_field field;              /* the record path read (keys unescaped) */
    pq_time_unit unit;           /* of an integer epoch (a timestamp column) */
    bool int_seconds;            /* integers are seconds (a field of a `*` column) */
    bool set;                    /* time_from given */
} et_source;

/* Resolves time_from (NULL or "": out->set false) against schema s. 0, or
 * PQ_EINVAL with the reason alone in err ("no column 'x' ..."), for the
 * caller to place; PQ_ENOMEM. et_source_free it either way. */
int et_resolve(const sc_schema *s, const char *time_from, et_source *out, pq_err *err);
void et_source_free(et_source *src);

/* A value of the record at src's path, in whole seconds since the epoch
 * (floor). 0, or PQ_ETYPE (not a timestamp) / PQ_ELIMIT (out of range). */
int et_from_string(const et_source *src, const char *s, size_t n, int64_t *sec);
int et_from_number(const et_source *src, const json_number *num, int64_t *sec);

/* Whether an open file of a period ending at period_end (seconds, UTC;
 * INT64_MAX: the path has no time directories) closes for its period now
 * (now_s, wall clock): the period has passed and the file has been idle
 * (no record written) for max_age_ms (idle_ms). Until its period passes a
 * file closes by rotate.* as any file. */
bool et_period_close_due(int64_t period_end, int64_t now_s, int64_t idle_ms,
                         uint64_t max_age_ms);

#endif
