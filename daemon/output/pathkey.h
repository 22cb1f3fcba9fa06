/* pathkey.h - a record's partition key (ARCHITECTURE.md "Partitioned
 * output"): the values of output.path's {{FIELD}}s in one spool record,
 * and the key they make with the directories' time fields.
 *
 * The key is a function of the spool record alone (its line, its bulk
 * `_index` and its ingestion time), so a replay routes every record as
 * the first run did. It is the escaped field values, each followed by
 * '/', then the directories' time fields (pt_dir_time_key): escaped
 * values hold no '/', so two records have the same key exactly when they
 * render the same path but for the per-file placeholders ({seq} {uuid}
 * {pid} {host}) and the file name's time fields, which only stamp a file.
 *
 * Values: a string is its unescaped bytes, a number its JSON text,
 * true/false their words, an object or array its JSON text as written; a
 * missing or null value (or a line that is not JSON, which the shredder
 * rejects anyway) is missing, which renders __HIVE_DEFAULT_PARTITION__.
 * A key repeated in one object: its first value counts. Arrays are not
 * walked (a path names object members only).
 *
 * With output.time_from (evtime.h), the same pass reads the record's
 * event time; the key then takes the event time's directories, or the
 * ingestion time's when the record has none (pk_time.found false).
 *
 * Thread: a pk_extractor belongs to one thread at a time (a worker's);
 * pk_key is pure. */
#ifndef PQ_PATHKEY_H
#define PQ_PATHKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "err.h"
#include "pathtpl.h"

#define PK_KEY_MAX PT_PATH_MAX

typedef struct pk_extractor pk_extractor;
struct et_source;

/* A record's event time: found false when time_from is not set, or the
 * record's value is missing, null or not a timestamp (evtime.h). */
typedef struct pk_time {
    bool found;
    int64_t sec;                 /* seconds since the epoch, UTC */
    bool object;                 /* the line is a JSON object (else the
                                    shredder rejects it: no fallback to count) */
} pk_time;

/* t and ts (NULL: no time_from) are borrowed and must outlive the
 * extractor. 0 or PQ_ENOMEM. */
int pk_new(pk_extractor **out, const pt_template *t, const struct et_source *ts, pq_err *err);
void pk_free(pk_extractor *x);

/* false: every line through the SAX pass, never the leading members'
 * scan (pathkey.c), so that fuzz_pathkey compares the two. */
void pk_set_fast(pk_extractor *x, bool on);

/* The template's field values in one line (values[t->n_fields]) and its
 * event time (*time; time may be NULL); index (NULL: none) is the bulk
 * action's `_index`. The values point into the line, index or the
 * extractor and stay valid until its next call. Returns 0 (a line that
 * does not parse gives every field missing, and no time) or PQ_ENOMEM. */
int pk_values(pk_extractor *x, const char *line, size_t len, const char *index,
              size_t index_len, pt_value *values, pk_time *time, pq_err *err);

/* The partition key of values and ingestion second `when` into out (cap
 * bytes, NUL included). 0, or PQ_ELIMIT (too long) / PQ_EINVAL (time out
 * of range). */
int pk_key(const pt_template *t, const pt_value *values, time_t when, char *out, size_t cap,
           pq_err *err);

/* pk_key with x's template, rendering the directories' time only when
 * `when` leaves the period (pt_dir_period) of the last one: a stream's
 * records mostly share their hour or day, and gmtime_r and a strftime per
 * field were most of a time-partitioned key. The same result and errors
 * as pk_key. */
int pk_key_memo(pk_extractor *x, const pt_value *values, time_t when, char *out, size_t cap,
                pq_err *err);

#endif
