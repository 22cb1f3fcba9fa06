/* chooser.c - how a column chunk encodes its values: dictionary or not,
 * and which encoding when not. Runs on the thread feeding the chunk's
 * colwriter (chunk.c), once per chunk, on its first page with values.
 *
 * Streaming means the writer no longer holds a whole chunk when it
 * decides, so it decides from the first page with values (up to
 * page_max_bytes of values or page_max_rows rows, 1 MiB / 20,000 by
 * default) and keeps the choice for the chunk:
 *   - the dictionary is kept where the page's values repeat (at most half
 *     of them distinct) and, for 1,024 distinct values or more, where it
 *     measures smaller than the best fallback on a sample of the page
 *     (the dictionary page counted once for the values the previous chunk
 *     of this column held, or the page's, for the first chunk);
 *   - otherwise the fallback is measured the same way: each candidate
 *     encoding of a sample of the page compressed, the smallest kept.
 * A kept dictionary takes every later value; when it passes
 * dictionary_max_bytes, the pages after that one fall back (Arrow's
 * CheckDictionarySizeLimit), to an encoding measured on the next page
 * with values (never on that page: see check_dictionary in chunk.c), and
 * the pages already written keep their indices.
 *
 * The decision is kept for the file's next chunks of the column (the
 * colwriter lives as long as the file): a chunk that reuses it skips the
 * samples (the sampling was 6% of a typed convert's instructions, paid per
 * row group), and one kept as a fallback skips the dictionary inserts as
 * well. A kept dictionary is still confirmed on each chunk's first page
 * (it must fit and its values repeat), and every PQ_KEEP_CHUNKS chunks the
 * column is measured afresh, so a column whose values change kind costs
 * at most a few chunks in a worse encoding, never a wrong value.
 *
 * zstd's level, when the operator leaves it unset (0), is measured too:
 * levels 1 and 3 on the chosen encoding's sample, 3 kept only where it
 * saves PQ_LEVEL_MARGIN (it costs about 1.5x the time). Measured on the
 * bench inputs (2026-11): level 1 is the smaller on random ids, paths and
 * counts (trace_id -2%, span_id -4%, path -4%, status -3.5%), level 3 on
 * Variant value blobs (-6.6%) and delta-encoded timestamps (-2.5%). */
#include "chooser.h"
#include "rle.h"
#include "values.h"

#include <stdint.h>

/* The sample: about 128 KiB of the page's last values (at most 16384, at
 * least 1024, the whole page when it is smaller), where a dictionary's
 * indices show their steady cost. */
#define PQ_SAMPLE_BYTES (128u * 1024u)
#define PQ_SAMPLE_MAX 16384u
#define PQ_SAMPLE_MIN 1024u
#define PQ_SAMPLE_MARGIN 0.97   /* what an alternative must save to be chosen */
#define PQ_DICT_MEASURE_MIN 1024
#define PQ_KEEP_CHUNKS 8        /* chunks that reuse a decision before a new one */
#define PQ_LEVEL_MARGIN 0.97    /* what zstd level 3 must save over level 1 */
/* A first page of fewer values is not measured: its fallback is the
 * type's first candidate and zstd's level 1. Each measure compresses the
 * whole page again (two to four times for one real compression), which
 * for a partitioned output's many small files was a third of a convert's
 * instructions, and a few hundred values rank the candidates poorly
 * anyway. Such a decision is not kept for the file's next chunks. */
#define PQ_MEASURE_MIN 1024u

/* [v0, v0 + n) of the column; p0 is the page's first value (index 0 of
 * w->indices). */
typedef struct sample_range {
    size_t p0, v0, n;
} sample_range;

static sample_range encoding_sample(const pq_column *c, size_t v0, size_t n_page)
{
    size_t bytes;
    if (c->node->type == PQ_BYTE_ARRAY) {
        const uint32_t *off = pq_column_offsets(c);
        bytes = (size_t)(off[v0 + n_page] - off[v0]) + 4 * n_page;
    } else {
        bytes = c->width * n_page;
    }
    size_t avg = n_page ? bytes / n_page + 1 : 1;
    size_t n = PQ_SAMPLE_BYTES / avg;
    n = n > PQ_SAMPLE_MAX ? PQ_SAMPLE_MAX : n < PQ_SAMPLE_MIN ? PQ_SAMPLE_MIN : n;
    n = n < n_page ? n : n_page;
    return (sample_range){v0, v0 + n_page - n, n};
}

/* Samples compress at the codec's fastest level: the ranking of the
 * candidates is what matters, and it holds across levels. */
static int sample_level(pq_codec codec, int level)
{
    bool leveled = codec == PQ_CODEC_ZSTD || codec == PQ_CODEC_GZIP || codec == PQ_CODEC_BROTLI;
    return leveled && level != 1 ? 1 : level;
}

static int sample_compress_at(pq_colwriter *cw, pq_chunk_work *w, int level, pq_err *err)
{
    pq_buf_reset(&w->scratch);
    return pq_compressor_run(&w->comp, cw->o.codec, level, w->body.data, w->body.len,
                             &w->scratch, err);
}

static int sample_compress(pq_colwriter *cw, pq_chunk_work *w, pq_err *err)
{
    return sample_compress_at(cw, w, sample_level(cw->o.codec, cw->o.codec_level), err);
}

/* The sample in one encoding, into w->body (RLE_DICTIONARY: its indices). */
static int sample_encode(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c,
                         pq_encoding enc, sample_range r, pq_err *err)
{
    pq_buf_reset(&w->body);
    int rc;
    if (enc == PQ_ENC_RLE_DICTIONARY) {
        const uint32_t *idx = (const uint32_t *)(const void *)w->indices.data + (r.v0 - r.p0);
        rc = pq_values_encode(&w->body, c, enc, 0, r.n, idx, cw->dict_bit_width, &w->wide);
    } else {
        rc = pq_values_encode(&w->body, c, enc, r.v0, r.n, NULL, 0, &w->wide);
    }
    return rc ? pq_err_set(err, rc, "column '%s': encoding a sample failed", c->node->path) : 0;
}

/* Compressed size of the sample in one encoding (RLE_DICTIONARY: of its
 * indices, without the dictionary page), kept in w->sample_sizes for
 * choose_level, which weighs the chosen one again. */
static int sample_size(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, pq_encoding enc,
                       sample_range r, size_t *size, pq_err *err)
{
    *size = SIZE_MAX;
    int rc = sample_encode(cw, w, c, enc, r, err);
    if (rc != 0)
        return rc;
    rc = sample_compress(cw, w, err);
    *size = w->scratch.len;
    if (rc == 0 && (size_t)enc < sizeof w->sample_sizes / sizeof w->sample_sizes[0])
        w->sample_sizes[enc] = *size;
    return rc;
}

/* The encodings auto mode weighs for values outside a dictionary; the
 * first is kept unless another saves PQ_SAMPLE_MARGIN on the sample.
 * Integers: deltas for counters and sorted ids, PLAIN for random ones.
 * Floats: PLAIN for decimal-looking values, BYTE_STREAM_SPLIT for noisy
 * ones. Strings: prefix deltas for paths and URLs, PLAIN for random ids. */
static size_t fallback_candidates(pq_physical_type type, int page_version, pq_encoding out[2])
{
    out[0] = pq_values_default_encoding(type, page_version);
    switch (type) {
    case PQ_INT32: case PQ_INT64: case PQ_BYTE_ARRAY:
        out[1] = PQ_ENC_PLAIN;
        return 2;
    case PQ_FLOAT: case PQ_DOUBLE:
        out[0] = PQ_ENC_PLAIN;
        out[1] = PQ_ENC_BYTE_STREAM_SPLIT;
        return 2;
    default:
        return 1;
    }
}

/* Sets cw->enc to the candidate chosen on the sample, *size to its
 * compressed sample size (SIZE_MAX when there was nothing to weigh). */
static int measure_fallback(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c,
                            sample_range r, size_t *size, pq_err *err)
{
    pq_encoding cand[2];
    size_t n = fallback_candidates(c->node->type, cw->o.page_version, cand);
    cw->enc = cand[0];
    *size = SIZE_MAX;
    if (r.n < PQ_MEASURE_MIN || n == 1)
        return PQ_OK;
    for (size_t i = 0; i < n; i++) {
        size_t sz;
        int rc = sample_size(cw, w, c, cand[i], r, &sz, err);
        if (rc != 0)
            return rc;
        if (i == 0 || (double)sz < (double)*size * PQ_SAMPLE_MARGIN) {
            *size = sz;
            cw->enc = cand[i];
        }
    }
    return PQ_OK;
}

static bool auto_mode(const pq_colwriter *cw)
{
    return cw->o.encoding == PQ_ENC_AUTO;
}

static bool dict_encoding(const pq_colwriter *cw)
{
    return cw->o.encoding == PQ_ENC_RLE_DICTIONARY || cw->o.encoding == PQ_ENC_PLAIN_DICTIONARY;
}

int pq_choose_fallback(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                       size_t n, pq_err *err)
{
    cw->mode = PQ_CW_FALLBACK;
    if (auto_mode(cw)) {
        size_t ignored;
        return measure_fallback(cw, w, c, encoding_sample(c, v0, n), &ignored, err);
    }
    cw->enc = dict_encoding(cw) ? pq_values_default_encoding(c->node->type, cw->o.page_version)
                                : cw->o.encoding;
    return PQ_OK;
}

int pq_choose_dict_append(pq_colwriter *cw, const pq_column *c, size_t v0, size_t n,
                          pq_buf *out, pq_err *err)
{
    if (pq_buf_reserve(out, n * sizeof(uint32_t)) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", c->node->path);
    uint32_t *idx = (uint32_t *)(void *)(out->data + out->len);
    int rc = n == 0 ? 0 : c->node->type == PQ_BYTE_ARRAY
        ? pq_dict_insert_bytes_n(&cw->dict, c->heap.data, pq_column_offsets(c) + v0, n, idx)
        : pq_dict_insert_fixed_n(&cw->dict, c->values.data + v0 * c->width, n, idx);
    if (rc != 0)
        return pq_err_set(err, rc, "column '%s': dictionary insert failed", c->node->path);
    out->len += n * sizeof(uint32_t);
    size_t count = pq_dict_count(&cw->dict);
    cw->dict_bit_width = pq_rle_bit_width(count ? (uint32_t)(count - 1) : 0);
    return PQ_OK;
}

int pq_choose_dict_insert(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                          size_t n, pq_err *err)
{
    pq_buf_reset(&w->indices);
    return pq_choose_dict_append(cw, c, v0, n, &w->indices, err);
}

/* A large dictionary does not always pay: random ports or byte counts have
 * thousands of distinct values whose indices compress worse than the
 * values themselves. Estimated for the chunk (as many values as the
 * previous chunk, at least the page's): the compressed dictionary page
 * once plus the indices, against the fallback's values. */
static int dictionary_pays(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                           size_t n, bool *pays, pq_err *err)
{
    sample_range r = encoding_sample(c, v0, n);
    size_t idx, fb;
    *pays = true;
    int rc = sample_size(cw, w, c, PQ_ENC_RLE_DICTIONARY, r, &idx, err);
    pq_encoding keep = cw->enc;
    rc = rc ? rc : measure_fallback(cw, w, c, r, &fb, err);
    if (rc != 0 || fb == SIZE_MAX)
        return rc;
    pq_buf_reset(&w->body);
    if (pq_dict_write_plain(&cw->dict, &w->body) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", c->node->path);
    rc = sample_compress(cw, w, err);
    double chunk = (double)(cw->prev_values > n ? cw->prev_values : n);
    double scale = chunk / (double)r.n;
    *pays = rc != 0 || ((double)w->scratch.len + (double)idx * scale) * PQ_SAMPLE_MARGIN <=
                           (double)fb * scale;
    if (*pays)
        cw->enc = keep;
    return rc;
}

/* Inserts the first page's values, giving up (as the whole-chunk
 * decision did) past dictionary_max_bytes: *fits says whether it held.
 * With `repeat` (the caller keeps the dictionary only where at most half
 * the page's values are distinct), the inserts stop, a block at a time,
 * once more than half are: the count only grows, so the decision is the
 * one all the inserts gave, and ids, timestamps and addresses are no
 * longer put whole into a dictionary that is dropped. On 100 partitions
 * of 288 records that was ~40% of the inserts. */
#define PQ_REPEAT_BLOCK 32u
static int first_page_dictionary(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c,
                                 size_t v0, size_t n, bool repeat, bool *fits, pq_err *err)
{
    if (!repeat) {
        int rc = pq_choose_dict_insert(cw, w, c, v0, n, err);
        *fits = rc == 0 && pq_dict_plain_bytes(&cw->dict) <= cw->o.dictionary_max_bytes;
        return rc;
    }
    pq_buf_reset(&w->indices);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n && pq_dict_count(&cw->dict) * 2 <= n;
         i += PQ_REPEAT_BLOCK) {
        size_t k = n - i < PQ_REPEAT_BLOCK ? n - i : PQ_REPEAT_BLOCK;
        rc = pq_choose_dict_append(cw, c, v0 + i, k, &w->indices, err);
    }
    *fits = rc == 0 && pq_dict_plain_bytes(&cw->dict) <= cw->o.dictionary_max_bytes;
    return rc;
}

static int decide(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0, size_t n,
                  pq_err *err)
{
    const pq_chunk_opts *o = &cw->o;
    bool want_dict = cw->has_dict && o->dictionary != 0 &&
                     (o->dictionary == 1 || auto_mode(cw) || dict_encoding(cw));
    cw->enc = o->encoding;
    if (want_dict && n > 0) {
        bool fits;
        bool repeat = o->dictionary != 1 && auto_mode(cw);
        int rc = first_page_dictionary(cw, w, c, v0, n, repeat, &fits, err);
        if (rc != 0)
            return rc;
        size_t distinct = pq_dict_count(&cw->dict);
        bool worth = o->dictionary == 1 || !auto_mode(cw) || distinct * 2 <= n;
        if (fits && worth) {
            bool pays = true;
            if (auto_mode(cw) && o->dictionary != 1 && distinct >= PQ_DICT_MEASURE_MIN &&
                (rc = dictionary_pays(cw, w, c, v0, n, &pays, err)) != 0)
                return rc;
            if (pays) {
                cw->mode = PQ_CW_DICT;
                cw->enc = PQ_ENC_RLE_DICTIONARY;
                return PQ_OK;
            }
            cw->mode = PQ_CW_FALLBACK; /* dictionary_pays left the best fallback */
            pq_dict_reset(&cw->dict);
            return PQ_OK;
        }
        pq_dict_reset(&cw->dict);
    }
    return pq_choose_fallback(cw, w, c, v0, n, err);
}

/* zstd level 1 or 3 for the chunk's pages (see the header), on the sample
 * of the encoding just chosen; w->body holds that sample's encoding after
 * sample_size. Any other codec, or a level the operator set, stays. */
static int choose_level(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                        size_t n, pq_err *err)
{
    cw->level = cw->o.codec_level;
    if (cw->o.codec != PQ_CODEC_ZSTD || cw->o.codec_level != 0 || n == 0)
        return PQ_OK;
    if (n < PQ_MEASURE_MIN) {
        cw->level = 1;
        return PQ_OK;
    }
    sample_range r = encoding_sample(c, v0, n);
    size_t fast = (size_t)cw->enc < sizeof w->sample_sizes / sizeof w->sample_sizes[0]
                      ? w->sample_sizes[cw->enc] : SIZE_MAX;
    /* the decision measured it already, at level 1, on the same sample */
    int rc = fast != SIZE_MAX ? sample_encode(cw, w, c, cw->enc, r, err)
                              : sample_size(cw, w, c, cw->enc, r, &fast, err);
    rc = rc ? rc : sample_compress_at(cw, w, 3, err);
    if (rc != 0)
        return rc;
    cw->level = (double)w->scratch.len < (double)fast * PQ_LEVEL_MARGIN ? 3 : 1;
    return PQ_OK;
}

/* The kept decision for this chunk, when there is one young enough:
 * *reused says whether it was taken. A kept dictionary is confirmed on
 * this first page (inserted, as it would be anyway): it must fit and its
 * values repeat, else the chunk decides afresh. */
static int reuse_decision(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                          size_t n, bool *reused, pq_err *err)
{
    *reused = false;
    if (!cw->kept || cw->kept_age >= PQ_KEEP_CHUNKS || !auto_mode(cw) || n == 0)
        return PQ_OK;
    if (cw->kept_mode == PQ_CW_DICT) {
        bool fits;
        int rc = first_page_dictionary(cw, w, c, v0, n, true, &fits, err);
        if (rc != 0)
            return rc;
        if (!fits || pq_dict_count(&cw->dict) * 2 > n) {
            pq_dict_reset(&cw->dict);
            return PQ_OK;
        }
    }
    cw->mode = cw->kept_mode;
    cw->enc = cw->kept_enc;
    cw->level = cw->kept_level;
    cw->kept_age++;
    *reused = true;
    return PQ_OK;
}

int pq_choose_first_page(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, size_t v0,
                         size_t n, pq_err *err)
{
    bool reused;
    int rc = reuse_decision(cw, w, c, v0, n, &reused, err);
    if (rc != 0 || reused)
        return rc;
    for (size_t i = 0; i < sizeof w->sample_sizes / sizeof w->sample_sizes[0]; i++)
        w->sample_sizes[i] = SIZE_MAX;
    rc = decide(cw, w, c, v0, n, err);
    rc = rc ? rc : choose_level(cw, w, c, v0, n, err);
    if (rc != 0)
        return rc;
    /* an unmeasured decision is not kept: the next chunk measures */
    cw->kept = cw->keep_decisions && n >= PQ_MEASURE_MIN &&
               (cw->mode == PQ_CW_DICT || cw->mode == PQ_CW_FALLBACK);
    cw->kept_mode = cw->mode;
    cw->kept_enc = cw->enc;
    cw->kept_level = cw->level;
    cw->kept_age = 0;
    return PQ_OK;
}
