/* metrics.h - the HTTP endpoint of metrics.listen: GET /metrics
 * (Prometheus text exposition format 0.0.4, from dm_counters_global) and
 * GET /health (200 "ok\n", or 503 with health.h's problems). Anything
 * else gets 404/405. Served by the inputs' HTTP code (listener.h
 * ls_server_new_http): keep-alive, the header limits and timeout of
 * http_conn.h, limits.max_connections and idle_timeout. Never served on
 * an input port.
 *
 * Thread: the loop thread. */
#ifndef PQ_METRICS_H
#define PQ_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "buf.h"
#include "config.h"
#include "err.h"

/* An HTTP server (listener.h) whose one listener serves the endpoints above. */
typedef struct ls_server mt_server;

/* Listens on cf->metrics.listen with cf->limits; header_timeout_ms 0 is
 * the inputs' default (tests shorten it). 0, or an error naming the
 * address ("metrics.listen 127.0.0.1:9170: Address already in use"). */
int mt_server_new(mt_server **out, uv_loop_t *loop, const cf_config *cf,
                  uint64_t header_timeout_ms, pq_err *err);
/* The port listened on (useful with port 0: tests), or -1. */
int mt_server_port(const mt_server *s);
/* Closes the listener and open connections (asynchronously: run the loop
 * until the handles are closed, then mt_server_destroy). NULL is a no-op. */
void mt_server_close(mt_server *s);
/* Whether every handle is closed (NULL: yes); then mt_server_destroy. */
bool mt_server_closed(const mt_server *s);
void mt_server_destroy(mt_server *s);

/* The /metrics body (tests; the server uses it). Returns a malloc'd
 * NUL-terminated string or NULL when out of memory. */
char *mt_render(void);

/* Families another module renders after the built-in ones (the S3
 * store's, when output.s3 is set); NULL: none. Set before the loop runs. */
typedef void (*mt_extra_fn)(pq_buf *out);
void mt_set_extra(mt_extra_fn fn);

#endif
