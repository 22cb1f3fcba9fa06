/* shred.h - one NDJSON record becomes one row: typed columns, Variant
 * columns (shredded or not) and the `*` rest column, per an sc_schema
 * (DESIGN.md "Schema" and "Bad input and lost data").
 *
 *     sh_shredder *sh;
 *     sh_shredder_new(&sh, spec, &err);            spec outlives sh
 *     pq_rowgroup *rg = ... on sc_build_parquet_schema(spec), e.g.
 *                           pq_writer_rowgroup(w)
 *     for each line:
 *         rc = sh_shred_line(sh, rg, line, len, ingest_us, &err);
 *         rc == 0            row added (pq_rowgroup_end_row done; nothing
 *                            is flushed: the caller applies row-group
 *                            limits, e.g. pq_writer_check_limits)
 *         rc == SH_REJECTED  record rejected, nothing added; err.msg says
 *                            why (for the dead-letter file)
 *         rc < 0             the row buffer failed (memory, the 4 GiB
 *                            column limit): the row was dropped
 *     sh_shredder_destroy(sh);
 *
 * A value that does not fit its typed column goes to the rest column when
 * there is one (the typed column gets null); otherwise the record is
 * rejected. A missing `required` column rejects the record. */
#ifndef PQ_SHRED_H
#define PQ_SHRED_H

#include <stddef.h>
#include <stdint.h>

#include "colspec.h"
#include "err.h"
#include "pq_writer.h"
#include "rowgroup.h"
#include "shred_reject.h"

#define SH_REJECTED 1

typedef struct sh_shredder sh_shredder;

int sh_shredder_new(sh_shredder **out, const sc_schema *spec, pq_err *err);
void sh_shredder_destroy(sh_shredder *s);

/* line excludes the newline; a trailing '\r' is ignored. ingest_us is the
 * receive time (microseconds since the epoch, UTC) for ingest-time
 * columns such as the default schema's `_ingest_ts`. */
/* The Elasticsearch index of the next line (from: _index columns; the
 * daemon's `_bulk` records carry it beside the record, never in it). It
 * applies to the next sh_shred_line only; without it such columns get
 * null. index need not be NUL-terminated and must live until then. */
void sh_set_index(sh_shredder *s, const char *index, size_t len);

int sh_shred_line(sh_shredder *s, pq_rowgroup *rg, const char *line, size_t len,
                  int64_t ingest_us, pq_err *err);

/* Variant columns share one key dictionary between consecutive records
 * (vr_opts.shared_dict). Starting it afresh at the start of each batch of
 * lines makes every record's bytes depend only on the batch it is in, not
 * on which worker's shredder shredded what before: the same input gives
 * the same file with any number of workers. */
void sh_shredder_new_batch(sh_shredder *s);

/* With on false, every value takes the general path (shred.c's
 * fast_scalar is skipped): the same rows, errors and bytes, more slowly.
 * For the differential fuzz target, which checks exactly that. */
void sh_shredder_set_fast(sh_shredder *s, bool on);

/* The reason of the last SH_REJECTED (SH_REJECT_NONE after a row). */
sh_reject sh_last_reject(const sh_shredder *s);

#endif
