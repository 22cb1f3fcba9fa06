/* metrics.h - the HTTP endpoint of metrics.listen: GET /metrics
 * (Prometheus text exposition format 0.0.4, from dm_counters_global) and
 * GET /health (200 "ok\n", or 503 with health.h's problems). Anything
 * else gets 404/405; requests are bounded (8 KiB, 10 s), one response per
 * connection (Connection: close). Never served on an input port.
 *
 * Thread: the loop thread. */
#ifndef PQ_METRICS_H
#define PQ_METRICS_H

#include <stdint.h>
#include <uv.h>

#include "buf.h"
#include "config.h"
#include "err.h"

typedef struct mt_server mt_server;

/* Listens on addr. 0, or PQ_EIO with err naming the address. */
int mt_server_new(mt_server **out, uv_loop_t *loop, const cf_addr *addr, pq_err *err);
/* The port listened on (useful with port 0: tests), or -1. */
int mt_server_port(const mt_server *s);
/* Changes the 10 s limit from accept to the end of the response for
 * connections accepted from now on (tests). */
void mt_server_set_timeout(mt_server *s, uint64_t ms);
/* Closes the listener and open connections (asynchronously: run the loop),
 * then frees itself. NULL is a no-op. */
void mt_server_close(mt_server *s);

/* The /metrics body (tests; the server uses it). Returns a malloc'd
 * NUL-terminated string or NULL when out of memory. */
char *mt_render(void);

/* Families another module renders after the built-in ones (the S3
 * store's, when output.s3 is set); NULL: none. Set before the loop runs. */
typedef void (*mt_extra_fn)(pq_buf *out);
void mt_set_extra(mt_extra_fn fn);

#endif
