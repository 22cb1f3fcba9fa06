/* compress.h - page compression for every codec a parqd file may carry
 * (Compression.md; CompressionCodec in parquet.thrift). The raw page bytes
 * go to each library as-is, without framing, except that GZIP is a real
 * RFC 1952 gzip member (not zlib, not raw deflate).
 *
 * Two ways in:
 *   - pq_compressor: caller-owned, caches the ZSTD context, the deflate
 *     stream and the LZ4 HC state between pages, so steady-state writing
 *     does not allocate. One per writer thread; not thread-safe.
 *   - pq_compress: a one-shot convenience that builds and frees a
 *     compressor per call (fine for tests and dictionary pages).
 *
 * Levels (0 always means "codec default"):
 *   UNCOMPRESSED, SNAPPY  only 0
 *   GZIP                  1..9                (default 6)
 *   BROTLI                1..11               (default 5)
 *   ZSTD                  ZSTD_minCLevel()..22, negative = fast modes
 *                                             (default 3)
 *   LZ4_RAW               1..12; 1-2 = fast block compressor, 3-12 = LZ4 HC
 *                                             (default: fast) */
#ifndef PQ_COMPRESS_H
#define PQ_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "types.h"

typedef struct pq_compressor {
    void *zstd;       /* ZSTD_CCtx *, created on first ZSTD page */
    void *zlib;       /* z_stream *, deflate state for GZIP */
    int zlib_level;   /* level zlib was initialised with */
    void *lz4hc;      /* LZ4 HC state, LZ4_sizeofStateHC() bytes */
} pq_compressor;

void pq_compressor_init(pq_compressor *c);
void pq_compressor_free(pq_compressor *c);

/* APPENDS the compressed form of src[0..n) to out (out->len grows; bytes
 * already in out are kept). Returns 0, PQ_EINVAL (bad codec or level),
 * PQ_ELIMIT (n does not fit a Parquet i32 page size), PQ_ENOMEM or
 * PQ_ECODEC (library failure, message says which). On error out->len is
 * unchanged. */
int pq_compressor_run(pq_compressor *c, pq_codec codec, int level,
                      const uint8_t *src, size_t n, pq_buf *out, pq_err *err);

/* One-shot form of pq_compressor_run. */
int pq_compress(pq_codec codec, int level, const uint8_t *src, size_t n,
                pq_buf *out, pq_err *err);

/* Validates a configured level for codec (see the table above), so bad
 * configuration fails at startup rather than on the first page. */
int pq_codec_check_level(pq_codec codec, int level, pq_err *err);

/* "uncompressed", "snappy", "gzip", "brotli", "zstd", "lz4_raw";
 * "unknown" for values outside pq_codec. */
const char *pq_codec_name(pq_codec codec);

/* Case-insensitive; accepts the names above plus "none". Returns 0 or
 * PQ_EINVAL ("lz4" is rejected: the deprecated Hadoop-framed codec is not
 * written by parqd). */
int pq_codec_from_name(const char *name, pq_codec *out);

#endif
