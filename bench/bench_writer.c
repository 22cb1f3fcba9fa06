/* bench_writer.c - writer micro-benchmark: for each column kind found in
 * logs x encoding x codec, writes N values through the public API into a
 * counting sink and prints input MB/s and bytes on disk. Timings are for
 * humans; no test asserts on them.
 *
 * usage: bench_writer [N]   (default 500000 values per run) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pq_writer.h"

typedef enum { K_TS, K_STATUS, K_LATENCY, K_LEVEL, K_URL, K_UUID } kind;

static const struct {
    kind k;
    const char *name;
    pq_physical_type type;
    pq_logical_kind lt;
} KINDS[] = {
    {K_TS, "int64 timestamp", PQ_INT64, PQ_LT_NONE},
    {K_STATUS, "int32 status", PQ_INT32, PQ_LT_NONE},
    {K_LATENCY, "double latency", PQ_DOUBLE, PQ_LT_NONE},
    {K_LEVEL, "string level", PQ_BYTE_ARRAY, PQ_LT_STRING},
    {K_URL, "string url", PQ_BYTE_ARRAY, PQ_LT_STRING},
    {K_UUID, "string uuid", PQ_BYTE_ARRAY, PQ_LT_STRING},
};

static const struct {
    pq_encoding enc;
    int dictionary;
    const char *name;
} ENCODINGS[] = {
    {PQ_ENC_AUTO, -1, "auto"},
    {PQ_ENC_PLAIN, 0, "plain"},
    {PQ_ENC_RLE_DICTIONARY, 1, "dictionary"},
    {PQ_ENC_DELTA_BINARY_PACKED, 0, "delta_binary_packed"},
    {PQ_ENC_BYTE_STREAM_SPLIT, 0, "byte_stream_split"},
    {PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, 0, "delta_length_byte_array"},
    {PQ_ENC_DELTA_BYTE_ARRAY, 0, "delta_byte_array"},
};

static const pq_codec CODECS[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_LZ4_RAW,
                                  PQ_CODEC_ZSTD, PQ_CODEC_GZIP, PQ_CODEC_BROTLI};
static const char *CODEC_NAMES[] = {"none", "snappy", "lz4_raw", "zstd", "gzip", "brotli"};

static int count_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    (void)data;
    (void)err;
    *(uint64_t *)ctx += n;
    return 0;
}

static uint64_t rng_state = 42;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Puts value i of kind k; returns its plain-encoded size. */
static size_t put_value(pq_column *c, kind k, size_t i, char *tmp)
{
    static const char *levels[] = {"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"};
    static const int32_t statuses[] = {200, 200, 200, 200, 304, 404, 500, 201};
    switch (k) {
    case K_TS:
        pq_column_put_i64(c, 0, 1700000000000000LL + (int64_t)i * 1000 + (int64_t)(rng() % 900));
        return 8;
    case K_STATUS:
        pq_column_put_i32(c, 0, statuses[rng() % 8]);
        return 4;
    case K_LATENCY:
        pq_column_put_double(c, 0, (double)(rng() % 100000) / 100.0);
        return 8;
    case K_LEVEL: {
        const char *s = levels[rng() % 6];
        pq_column_put_bytes(c, 0, s, strlen(s));
        return 4 + strlen(s);
    }
    case K_URL: {
        int n = snprintf(tmp, 128, "/api/v2/users/%llu/orders/%llu",
                         (unsigned long long)(rng() % 50000), (unsigned long long)(rng() % 1000));
        pq_column_put_bytes(c, 0, tmp, (size_t)n);
        return 4 + (size_t)n;
    }
    case K_UUID: {
        uint64_t a = rng(), b = rng();
        int n = snprintf(tmp, 128, "%08llx-%04llx-4%03llx-a%03llx-%012llx",
                         (unsigned long long)(a >> 32), (unsigned long long)(a & 0xffff),
                         (unsigned long long)((a >> 16) & 0xfff), (unsigned long long)(b & 0xfff),
                         (unsigned long long)(b >> 16));
        pq_column_put_bytes(c, 0, tmp, (size_t)n);
        return 4 + (size_t)n;
    }
    }
    return 0;
}

static bool encoding_fits(pq_physical_type t, pq_encoding e)
{
    switch (e) {
    case PQ_ENC_DELTA_BINARY_PACKED: return t == PQ_INT32 || t == PQ_INT64;
    case PQ_ENC_BYTE_STREAM_SPLIT: return t != PQ_BYTE_ARRAY;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: case PQ_ENC_DELTA_BYTE_ARRAY: return t == PQ_BYTE_ARRAY;
    default: return true;
    }
}

static int run(size_t ki, size_t ei, size_t ci, size_t n)
{
    pq_err err = {0};
    pq_schema *s = pq_schema_new(NULL);
    pq_column_opts co;
    pq_column_opts_default(&co);
    co.encoding = ENCODINGS[ei].enc;
    co.dictionary = ENCODINGS[ei].dictionary;
    pq_node_spec spec = {.name = "v", .repetition = PQ_REQUIRED, .type = KINDS[ki].type,
                         .logical = {.kind = KINDS[ki].lt}, .field_id = -1, .opts = &co};
    pq_schema_add_leaf(s, 0, &spec, &err);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.codec = CODECS[ci];
    uint64_t bytes = 0;
    pq_sink sink = {.ctx = &bytes, .write = count_write};
    pq_writer *w;
    if (pq_writer_open(&w, s, &o, sink, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        pq_schema_destroy(s);
        return 1;
    }
    char tmp[128];
    size_t raw = 0;
    rng_state = 42;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pq_column *c = pq_writer_column(w, 0);
    for (size_t i = 0; i < n; i++) {
        raw += put_value(c, KINDS[ki].k, i, tmp);
        pq_writer_end_row(w, &err);
    }
    int rc = pq_writer_close(w, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (rc != 0)
        fprintf(stderr, "close: %s\n", err.msg);
    else
        printf("%-16s %-24s %-8s %9.1f MB/s %11llu bytes %6.3f bytes/value\n", KINDS[ki].name,
               ENCODINGS[ei].name, CODEC_NAMES[ci], (double)raw / sec / 1e6,
               (unsigned long long)bytes, (double)bytes / (double)n);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
    return rc != 0;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 500000;
    int failed = 0;
    printf("bench_writer: %zu values per run; MB/s of PLAIN-sized input\n", n);
    for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0]; k++)
        for (size_t e = 0; e < sizeof ENCODINGS / sizeof ENCODINGS[0]; e++)
            for (size_t c = 0; c < sizeof CODECS / sizeof CODECS[0]; c++)
                if (encoding_fits(KINDS[k].type, ENCODINGS[e].enc))
                    failed |= run(k, e, c, n);
    return failed;
}
