/* listener_cb.h - where the ingest server delivers framed lines
 * (ls_callbacks; listener.h says when each callback runs).
 *
 * A header of its own so that the parts below the server take it without
 * the server's API: a connection's byte stream (connection.h) calls these
 * callbacks, and listener.h includes this header, never the other way.
 *
 * Thread: the loop thread; every callback runs on it. */
#ifndef PQ_LISTENER_CB_H
#define PQ_LISTENER_CB_H

#include <stdbool.h>
#include <stdint.h>

#include "framer.h"

typedef struct ls_callbacks {
    void *user;
    /* source: "tcp:192.0.2.7:51234", "tcp:[2001:db8::1]:51234", "unix:/run/parqd.sock"
     * (the peer for TCP, the socket path for Unix), valid during the call.
     * Returns 0; non-zero closes the connection. */
    int (*on_line)(void *user, const char *source, const fr_line *line);
    void (*on_read_done)(void *user);
    /* HTTP inputs only (NULL for lines-only servers): */
    /* The seq the next accepted record gets: a request's records are all
     * below it once on_line returned for each. */
    uint64_t (*next_seq)(void *user);
    /* A reply waits for the spool: make it durable soon (per spool.sync)
     * and report with ls_server_durable (group commit: once per loop
     * iteration, however many requests wait). */
    void (*want_durable)(void *user);
    /* Whether the daemon is behind (reading paused): new requests get 429. */
    bool (*busy)(void *user);
} ls_callbacks;

#endif
