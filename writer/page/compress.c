/* compress.c - page compression (Compression.md): UNCOMPRESSED, SNAPPY,
 * GZIP, BROTLI, ZSTD and LZ4_RAW. Owns the codec level table and the
 * mapping from library errors to PQ_ECODEC messages. The deprecated
 * Hadoop-framed LZ4 and LZO are deliberately not offered. */
#include "compress.h"

#include <limits.h>
#include <stdlib.h>
#include <strings.h>

#include <brotli/encode.h>
#include <lz4.h>
#include <lz4hc.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#define GZIP_DEFAULT_LEVEL 6
/* Quality 10-11 is an order of magnitude slower than 5 for a few percent;
 * a daemon compressing pages inline cannot afford that by default. */
#define BROTLI_DEFAULT_LEVEL 5
#define GZIP_WINDOW_BITS 31 /* 15-bit window + 16: gzip header/trailer */

/* PageHeader sizes are i32, so a larger page cannot be described anyway;
 * checking once here also keeps every library's int/uInt sizes safe. */
#define PQ_MAX_PAGE_BYTES ((size_t)INT32_MAX)

void pq_compressor_init(pq_compressor *c)
{
    c->zstd = NULL;
    c->zlib = NULL;
    c->zlib_level = 0;
    c->lz4hc = NULL;
}

void pq_compressor_free(pq_compressor *c)
{
    ZSTD_freeCCtx(c->zstd);
    if (c->zlib != NULL) {
        deflateEnd(c->zlib);
        free(c->zlib);
    }
    free(c->lz4hc);
    pq_compressor_init(c);
}

const char *pq_codec_name(pq_codec codec)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED: return "uncompressed";
    case PQ_CODEC_SNAPPY: return "snappy";
    case PQ_CODEC_GZIP: return "gzip";
    case PQ_CODEC_BROTLI: return "brotli";
    case PQ_CODEC_ZSTD: return "zstd";
    case PQ_CODEC_LZ4_RAW: return "lz4_raw";
    }
    return "unknown";
}

int pq_codec_from_name(const char *name, pq_codec *out)
{
    static const struct { const char *name; pq_codec codec; } names[] = {
        {"none", PQ_CODEC_UNCOMPRESSED}, {"uncompressed", PQ_CODEC_UNCOMPRESSED},
        {"snappy", PQ_CODEC_SNAPPY},     {"gzip", PQ_CODEC_GZIP},
        {"brotli", PQ_CODEC_BROTLI},     {"zstd", PQ_CODEC_ZSTD},
        {"lz4_raw", PQ_CODEC_LZ4_RAW},
    };
    if (name == NULL)
        return PQ_EINVAL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].codec;
            return PQ_OK;
        }
    }
    return PQ_EINVAL;
}

int pq_codec_check_level(pq_codec codec, int level, pq_err *err)
{
    int lo, hi;
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
    case PQ_CODEC_SNAPPY: lo = 0; hi = 0; break;
    case PQ_CODEC_GZIP: lo = 1; hi = 9; break;
    case PQ_CODEC_BROTLI: lo = 1; hi = BROTLI_MAX_QUALITY; break;
    case PQ_CODEC_ZSTD: lo = ZSTD_minCLevel(); hi = ZSTD_maxCLevel(); break;
    case PQ_CODEC_LZ4_RAW: lo = 1; hi = LZ4HC_CLEVEL_MAX; break;
    default:
        return pq_err_set(err, PQ_EINVAL, "unknown compression codec %d", (int)codec);
    }
    if (level == 0 || (level >= lo && level <= hi))
        return PQ_OK;
    if (hi == 0)
        return pq_err_set(err, PQ_EINVAL, "compression level %d: codec %s has no levels "
                          "(use 0)", level, pq_codec_name(codec));
    return pq_err_set(err, PQ_EINVAL, "compression level %d out of range for %s: "
                      "use %d..%d, or 0 for the default", level,
                      pq_codec_name(codec), lo, hi);
}

static int compress_snappy(const uint8_t *src, size_t n, pq_buf *out, pq_err *err)
{
    size_t cap = snappy_max_compressed_length(n);
    if (pq_buf_reserve(out, cap) != 0)
        return pq_err_set(err, PQ_ENOMEM, "snappy: cannot allocate %zu bytes", cap);
    size_t got = cap;
    snappy_status st = snappy_compress((const char *)src, n,
                                       (char *)out->data + out->len, &got);
    if (st != SNAPPY_OK)
        return pq_err_set(err, PQ_ECODEC, "snappy: compression failed (status %d) "
                          "on a %zu-byte page", (int)st, n);
    out->len += got;
    return PQ_OK;
}

/* A z_stream is ~6 KB plus 256 KB of window and hash tables; keeping it
 * across pages and calling deflateReset avoids that allocation per page. */
static int gzip_stream(pq_compressor *c, int level, pq_err *err)
{
    if (c->zlib != NULL && c->zlib_level == level)
        return deflateReset(c->zlib) == Z_OK
            ? PQ_OK : pq_err_set(err, PQ_ECODEC, "gzip: deflateReset failed");
    if (c->zlib != NULL) {
        deflateEnd(c->zlib);
        free(c->zlib);
        c->zlib = NULL;
    }
    z_stream *zs = calloc(1, sizeof *zs);
    if (zs == NULL)
        return pq_err_set(err, PQ_ENOMEM, "gzip: cannot allocate a deflate stream");
    int rc = deflateInit2(zs, level, Z_DEFLATED, GZIP_WINDOW_BITS, 8, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        free(zs);
        return pq_err_set(err, rc == Z_MEM_ERROR ? PQ_ENOMEM : PQ_ECODEC,
                          "gzip: deflateInit2(level %d) failed: %s", level, zError(rc));
    }
    c->zlib = zs;
    c->zlib_level = level;
    return PQ_OK;
}

static int compress_gzip(pq_compressor *c, int level, const uint8_t *src, size_t n,
                         pq_buf *out, pq_err *err)
{
    int rc = gzip_stream(c, level ? level : GZIP_DEFAULT_LEVEL, err);
    if (rc != PQ_OK)
        return rc;
    z_stream *zs = c->zlib;
    /* deflateBound covers the gzip header and trailer for windowBits 31. */
    size_t cap = deflateBound(zs, (uLong)n);
    if (pq_buf_reserve(out, cap) != 0)
        return pq_err_set(err, PQ_ENOMEM, "gzip: cannot allocate %zu bytes", cap);
    zs->next_in = (Bytef *)(uintptr_t)src; /* zlib's API is not const-correct */
    zs->avail_in = (uInt)n;
    zs->next_out = out->data + out->len;
    zs->avail_out = (uInt)cap;
    rc = deflate(zs, Z_FINISH);
    if (rc != Z_STREAM_END)
        return pq_err_set(err, PQ_ECODEC, "gzip: deflate did not finish a %zu-byte "
                          "page (zlib %d: %s)", n, rc, zs->msg ? zs->msg : zError(rc));
    out->len += cap - zs->avail_out;
    return PQ_OK;
}

static int compress_brotli(int level, const uint8_t *src, size_t n, pq_buf *out,
                           pq_err *err)
{
    size_t cap = BrotliEncoderMaxCompressedSize(n);
    if (cap == 0)
        return pq_err_set(err, PQ_ELIMIT, "brotli: a %zu-byte page is too large", n);
    if (pq_buf_reserve(out, cap) != 0)
        return pq_err_set(err, PQ_ENOMEM, "brotli: cannot allocate %zu bytes", cap);
    size_t got = cap;
    if (!BrotliEncoderCompress(level ? level : BROTLI_DEFAULT_LEVEL, BROTLI_DEFAULT_WINDOW,
                               BROTLI_MODE_GENERIC, n, src, &got, out->data + out->len))
        return pq_err_set(err, PQ_ECODEC, "brotli: compression failed on a %zu-byte "
                          "page (quality %d)", n, level);
    out->len += got;
    return PQ_OK;
}

/* One ZSTD frame with the content size in its header, so readers can
 * allocate exactly; the CCtx (~1 MB at level 3) is created once. */
static int compress_zstd(pq_compressor *c, int level, const uint8_t *src, size_t n,
                         pq_buf *out, pq_err *err)
{
    if (c->zstd == NULL && (c->zstd = ZSTD_createCCtx()) == NULL)
        return pq_err_set(err, PQ_ENOMEM, "zstd: cannot allocate a compression context");
    size_t cap = ZSTD_compressBound(n);
    if (pq_buf_reserve(out, cap) != 0)
        return pq_err_set(err, PQ_ENOMEM, "zstd: cannot allocate %zu bytes", cap);
    size_t got = ZSTD_compressCCtx(c->zstd, out->data + out->len, cap, src, n,
                                   level ? level : ZSTD_CLEVEL_DEFAULT);
    if (ZSTD_isError(got))
        return pq_err_set(err, PQ_ECODEC, "zstd: compression failed on a %zu-byte page "
                          "(level %d): %s", n, level, ZSTD_getErrorName(got));
    out->len += got;
    return PQ_OK;
}

static int compress_lz4(pq_compressor *c, int level, const uint8_t *src, size_t n,
                        pq_buf *out, pq_err *err)
{
    if (n > (size_t)LZ4_MAX_INPUT_SIZE)
        return pq_err_set(err, PQ_ELIMIT, "lz4_raw: a %zu-byte page exceeds the LZ4 "
                          "block limit of %d bytes", n, LZ4_MAX_INPUT_SIZE);
    int cap = LZ4_compressBound((int)n);
    if (pq_buf_reserve(out, (size_t)cap) != 0)
        return pq_err_set(err, PQ_ENOMEM, "lz4_raw: cannot allocate %d bytes", cap);
    char *dst = (char *)out->data + out->len;
    int got;
    if (level < LZ4HC_CLEVEL_MIN) {
        got = LZ4_compress_default((const char *)src, dst, (int)n, cap);
    } else {
        if (c->lz4hc == NULL && (c->lz4hc = malloc((size_t)LZ4_sizeofStateHC())) == NULL)
            return pq_err_set(err, PQ_ENOMEM, "lz4_raw: cannot allocate the HC state");
        got = LZ4_compress_HC_extStateHC(c->lz4hc, (const char *)src, dst, (int)n, cap,
                                         level);
    }
    /* 0 is also a valid result for empty input: an empty LZ4 block is one
     * zero token byte, which both compressors emit, so 0 means failure. */
    if (got <= 0)
        return pq_err_set(err, PQ_ECODEC, "lz4_raw: compression failed on a %zu-byte "
                          "page (level %d)", n, level);
    out->len += (size_t)got;
    return PQ_OK;
}

int pq_compressor_run(pq_compressor *c, pq_codec codec, int level,
                      const uint8_t *src, size_t n, pq_buf *out, pq_err *err)
{
    int rc = pq_codec_check_level(codec, level, err);
    if (rc != PQ_OK)
        return rc;
    if (n > PQ_MAX_PAGE_BYTES)
        return pq_err_set(err, PQ_ELIMIT, "%s: a %zu-byte page exceeds the Parquet "
                          "page size limit of %zu bytes", pq_codec_name(codec), n,
                          PQ_MAX_PAGE_BYTES);
    if (src == NULL && n > 0)
        return pq_err_set(err, PQ_EINVAL, "%s: NULL source with %zu bytes",
                          pq_codec_name(codec), n);
    static const uint8_t empty[1];
    if (src == NULL)
        src = empty; /* some libraries reject NULL even for zero bytes */
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (pq_buf_append(out, src, n) != 0)
            return pq_err_set(err, PQ_ENOMEM, "cannot allocate %zu bytes", n);
        return PQ_OK;
    case PQ_CODEC_SNAPPY: return compress_snappy(src, n, out, err);
    case PQ_CODEC_GZIP: return compress_gzip(c, level, src, n, out, err);
    case PQ_CODEC_BROTLI: return compress_brotli(level, src, n, out, err);
    case PQ_CODEC_ZSTD: return compress_zstd(c, level, src, n, out, err);
    case PQ_CODEC_LZ4_RAW: return compress_lz4(c, level, src, n, out, err);
    }
    return pq_err_set(err, PQ_EINVAL, "unknown compression codec %d", (int)codec);
}

int pq_compress(pq_codec codec, int level, const uint8_t *src, size_t n,
                pq_buf *out, pq_err *err)
{
    pq_compressor c;
    pq_compressor_init(&c);
    int rc = pq_compressor_run(&c, codec, level, src, n, out, err);
    pq_compressor_free(&c);
    return rc;
}
