/* health.h - what /health reports: 200 "ok", or 503 with every current
 * problem, one per component ("output: No space left on device writing
 * out/x.parquet; retrying in 8s"). Any thread may set or clear a problem;
 * a mutex guards the table (problems change rarely, scrapes are rare). */
#ifndef PQ_HEALTH_H
#define PQ_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

typedef enum dm_component {
    DM_HEALTH_SPOOL,             /* the spool cannot be written */
    DM_HEALTH_OUTPUT,            /* Parquet files cannot be written */
    DM_HEALTH_DEADLETTER,        /* the dead-letter file cannot be written */
    DM_HEALTH_BACKPRESSURE,      /* reading is paused: the writer is behind */
    DM_HEALTH_COMPONENTS
} dm_component;

/* Records a problem (copied, cut to 255 bytes) or replaces it. */
void dm_health_set(dm_component c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dm_health_clear(dm_component c);
/* True when healthy. Otherwise writes the problems, "; "-separated, into
 * buf (always NUL-terminated). */
bool dm_health_get(char *buf, size_t n);

#endif
