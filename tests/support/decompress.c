/* decompress.c - test-only decompressors for every parqd codec
 * (Compression.md). Strict: the output must be exactly the expected size,
 * which is what a reader trusting the page header would rely on. */
#include "decompress.h"

#include <limits.h>
#include <string.h>

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

static int size_mismatch(pq_err *err, const char *codec, size_t got, size_t want)
{
    return pq_err_set(err, PQ_ECODEC, "%s: page decompressed to %zu bytes, header "
                      "says %zu", codec, got, want);
}

static int snappy_page(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                       pq_err *err)
{
    size_t want = 0;
    if (snappy_uncompressed_length((const char *)src, n, &want) != SNAPPY_OK)
        return pq_err_set(err, PQ_ECODEC, "snappy: corrupt length preamble");
    if (want != dst_len)
        return size_mismatch(err, "snappy", want, dst_len);
    size_t got = dst_len;
    if (snappy_uncompress((const char *)src, n, (char *)dst, &got) != SNAPPY_OK)
        return pq_err_set(err, PQ_ECODEC, "snappy: corrupt compressed data");
    return got == dst_len ? PQ_OK : size_mismatch(err, "snappy", got, dst_len);
}

/* Loops over gzip members: Compression.md says readers should accept
 * pages holding several. */
static int gzip_page(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                     pq_err *err)
{
    if (n > UINT_MAX || dst_len > UINT_MAX)
        return pq_err_set(err, PQ_ELIMIT, "gzip: page too large for this test reader");
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 31) != Z_OK)
        return pq_err_set(err, PQ_ECODEC, "gzip: inflateInit2 failed");
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    zs.next_out = dst;
    zs.avail_out = (uInt)dst_len;
    int rc = PQ_OK;
    for (;;) {
        int z = inflate(&zs, Z_FINISH);
        if (z == Z_STREAM_END && zs.avail_in == 0)
            break;
        if (z == Z_STREAM_END) {
            inflateReset(&zs);
            continue;
        }
        rc = pq_err_set(err, PQ_ECODEC, "gzip: inflate failed (%d: %s)", z,
                        zs.msg ? zs.msg : "truncated or oversized data");
        break;
    }
    size_t got = dst_len - zs.avail_out;
    inflateEnd(&zs);
    if (rc == PQ_OK && got != dst_len)
        rc = size_mismatch(err, "gzip", got, dst_len);
    return rc;
}

static int brotli_page(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                       pq_err *err)
{
    size_t got = dst_len;
    if (BrotliDecoderDecompress(n, src, &got, dst) != BROTLI_DECODER_RESULT_SUCCESS)
        return pq_err_set(err, PQ_ECODEC, "brotli: corrupt data or output larger "
                          "than %zu bytes", dst_len);
    return got == dst_len ? PQ_OK : size_mismatch(err, "brotli", got, dst_len);
}

static int zstd_page(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                     pq_err *err)
{
    size_t got = ZSTD_decompress(dst, dst_len, src, n);
    if (ZSTD_isError(got))
        return pq_err_set(err, PQ_ECODEC, "zstd: %s", ZSTD_getErrorName(got));
    return got == dst_len ? PQ_OK : size_mismatch(err, "zstd", got, dst_len);
}

static int lz4_page(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                    pq_err *err)
{
    if (n > INT_MAX || dst_len > INT_MAX)
        return pq_err_set(err, PQ_ELIMIT, "lz4_raw: page too large for one block");
    int got = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)dst_len);
    if (got < 0)
        return pq_err_set(err, PQ_ECODEC, "lz4_raw: corrupt block (error %d)", got);
    return (size_t)got == dst_len ? PQ_OK : size_mismatch(err, "lz4_raw", (size_t)got,
                                                          dst_len);
}

int pqt_decompress(pq_codec codec, const uint8_t *src, size_t n,
                   uint8_t *dst, size_t dst_len, pq_err *err)
{
    if ((src == NULL && n > 0) || (dst == NULL && dst_len > 0))
        return pq_err_set(err, PQ_EINVAL, "NULL buffer with a non-zero size");
    /* Some libraries reject NULL even for empty buffers; nothing is ever
     * written through `none` because its size is then 0. */
    static uint8_t none[1];
    if (src == NULL)
        src = none;
    if (dst == NULL)
        dst = none;
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (n != dst_len)
            return size_mismatch(err, "uncompressed", n, dst_len);
        if (n > 0)
            memcpy(dst, src, n);
        return PQ_OK;
    case PQ_CODEC_SNAPPY: return snappy_page(src, n, dst, dst_len, err);
    case PQ_CODEC_GZIP: return gzip_page(src, n, dst, dst_len, err);
    case PQ_CODEC_BROTLI: return brotli_page(src, n, dst, dst_len, err);
    case PQ_CODEC_ZSTD: return zstd_page(src, n, dst, dst_len, err);
    case PQ_CODEC_LZ4_RAW: return lz4_page(src, n, dst, dst_len, err);
    }
    return pq_err_set(err, PQ_EINVAL, "unknown compression codec %d", (int)codec);
}
