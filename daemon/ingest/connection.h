/* connection.h - one ingest connection's byte stream: received bytes in,
 * framed lines out to the listener's callbacks (listener_cb.h), with the
 * ingest counters kept on the way. No socket here, so the same code runs
 * under read_cb (connection.c) and under the fuzzer (fuzz_conn.c).
 *
 *     cn_stream st;
 *     cn_stream_init(&st, cf->limits.max_line_bytes, "tcp:192.0.2.7:51234", &cb);
 *     cn_stream_feed(&st, buf, n);        every read
 *     cn_stream_finish(&st);              EOF, reset, idle close, shutdown
 *     cn_stream_free(&st);
 *
 * Thread: the loop thread (one stream is never shared). */
#ifndef PQ_CONNECTION_H
#define PQ_CONNECTION_H

#include <stddef.h>
#include <stdint.h>

#include "framer.h"
#include "listener_cb.h"

typedef struct cn_stream {
    fr_framer fr;                /* the unfinished line, at most max_line_bytes + 1 */
    const char *source;          /* kept, not copied: must outlive the stream */
    const ls_callbacks *cb;      /* kept, not copied */
    uint64_t delivered;          /* lines handed to on_line by the current call */
} cn_stream;

/* Returns 0 or PQ_EINVAL (max_line_bytes == 0). Allocates nothing. */
int cn_stream_init(cn_stream *st, size_t max_line_bytes, const char *source,
                   const ls_callbacks *cb);
void cn_stream_free(cn_stream *st);

/* Frames len received bytes: every complete line goes to cb->on_line
 * (oversized ones truncated, flagged, and delivered once they end), then
 * cb->on_read_done once if any line was delivered. Counts bytes_received
 * and records_received. Returns 0, PQ_ENOMEM, or on_line's non-zero (the
 * connection is then to be closed; the rest of the bytes are dropped).
 * The line buffer is released whenever no line is unfinished, so an idle
 * connection holds no buffer at all. */
int cn_stream_feed(cn_stream *st, const void *data, size_t len);

/* The stream ended (EOF, reset, idle, shutdown): delivers the unfinished
 * last line if there is one, then on_read_done if it did. */
int cn_stream_finish(cn_stream *st);

#endif
