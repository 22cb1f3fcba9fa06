/* deadletter.h - the dead-letter file (DESIGN.md "Bad input and lost
 * data"): every rejected record, appended as one JSON object per line.
 *
 *   {"ts":"2024-05-01T12:00:00.123456Z","source":"file:/data/in.ndjson:17",
 *    "reason":"line 17: expected ',' or '}' at byte 42","raw":"{\"a\":1 x}",
 *    "truncated":false,"bytes":9}
 *
 *   ts         receive time, RFC 3339 UTC with microseconds
 *   source     where the record came from: "file:PATH:LINE", "stdin:LINE",
 *              "tcp:HOST:PORT", "unix:PATH" ... (the caller's string)
 *   reason     why it was rejected, in words
 *   raw        the record's bytes as a JSON string, when they are valid
 *              UTF-8 (NUL and control bytes escaped as \u0000 ..., so the
 *              string decodes to exactly the bytes received)
 *   raw_b64    instead of raw, when the bytes are not valid UTF-8: standard
 *              base64 (RFC 4648, padded) of exactly the bytes received. A
 *              record has one of raw / raw_b64, never both, so a consumer
 *              recovers the bytes with `raw // (raw_b64 | @base64d)`.
 *   truncated  true when only the first bytes were kept (an oversized
 *              line); raw/raw_b64 then hold that prefix (cut back to a
 *              whole UTF-8 character when the cut split one)
 *   bytes      the record's full length in bytes
 *   seq        the daemon's spool sequence number of the line (last, and
 *              only in the daemon): after a crash, dl_recover reads the
 *              last one back, so a replay does not write a reject twice
 *
 * reason and source are escaped the same way; bytes in them that are not
 * UTF-8 become U+FFFD (they are messages, not data).
 *
 * Writing. The file is opened on the first record (no rejects, no file)
 * with O_APPEND (it is a log: never truncated, never rewritten), and each
 * record goes out in one write(2). On a failed write the partial line is cut off again
 * (ftruncate to the size before the write) so the file stays one JSON
 * object per line. Every failure is returned with the path and the cause
 * ("No space left on device" spelled out as the disk being full): a
 * record that could not be stored is data the operator has lost, so the
 * caller must treat it as an I/O failure, never skip it. fsync happens on
 * dl_close, on dl_sync, and after every record with DL_SYNC_ALWAYS. */
#ifndef PQ_DEADLETTER_H
#define PQ_DEADLETTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

typedef enum dl_sync_mode {
    DL_SYNC_CLOSE,               /* fsync on dl_sync / dl_close only */
    DL_SYNC_ALWAYS               /* fdatasync after every record */
} dl_sync_mode;

typedef struct dl_record {
    int64_t ts_us;               /* receive time, microseconds since the epoch (UTC) */
    const char *source;
    const char *reason;
    const void *raw;
    size_t raw_len;              /* bytes kept in raw */
    uint64_t bytes;              /* full length of the record (>= raw_len) */
    bool truncated;
    bool has_seq;                /* the line came through the spool: seq is its number */
    uint64_t seq;
} dl_record;

typedef struct dl_file {
    char *path;
    int fd;                      /* -1 until the first record */
    dl_sync_mode sync;
    bool dirty;                  /* written since the last fsync */
    pq_buf line;                 /* reused per record */
    uint64_t records;            /* stored */
    uint64_t bytes;              /* appended */
} dl_file;

/* Copies path. Opens nothing yet. Returns 0 or PQ_ENOMEM. */
int dl_init(dl_file *d, const char *path, dl_sync_mode sync, pq_err *err);
/* Appends one record. 0 or PQ_EIO / PQ_ENOMEM with err filled. */
int dl_write(dl_file *d, const dl_record *r, pq_err *err);
/* fsync if anything was written since the last one. */
int dl_sync(dl_file *d, pq_err *err);
/* dl_sync, then close. Safe to call twice. Returns the sync/close error. */
int dl_close(dl_file *d, pq_err *err);
/* Frees memory (closes without syncing if still open). */
void dl_free(dl_file *d);

/* After a crash, before the first dl_write: cuts a partial last record
 * off the file at `path` (a kill -9 during its write; the replay writes it
 * again) and sets *next_seq to one past the seq of the last record that
 * has one, or 0 when there is no file, no such record in its last
 * DL_TAIL_MAX bytes, or it is not a regular file (a pipe, /dev/stderr).
 * Records carrying a seq are written in seq order (the assembler's), so a
 * replay skips every reject below *next_seq. 0 or PQ_EIO with err set. */
#define DL_TAIL_MAX ((size_t)16 << 20)
int dl_recover(const char *path, uint64_t *next_seq, pq_err *err);

/* The line dl_write would append, without its '\n' (tests, other sinks). */
int dl_format(pq_buf *out, const dl_record *r);

/* True when p[0..n) is valid UTF-8 (RFC 3629: no overlongs, surrogates or
 * code points above U+10FFFF). */
bool dl_utf8_valid(const void *p, size_t n);

#endif
