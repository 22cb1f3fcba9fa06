/* colopts.c - per-column writer options in the schema language (DESIGN.md
 * "Schema (YAML)"): encoding, compression, dictionary, bloom, statistics,
 * key and field_id, each checked against the physical types of the leaves
 * it will apply to (Encodings.md), and the names of encodings.
 *
 * Thread: whichever loads a schema. */
#include "colspec_int.h"
#include "compress.h"

#include <stdlib.h>

static const char *const enc_names[] = {
    "plain", "rle", "dictionary", "delta_binary_packed", "delta_length_byte_array",
    "delta_byte_array", "byte_stream_split", NULL};
static const pq_encoding enc_values[] = {
    PQ_ENC_PLAIN, PQ_ENC_RLE, PQ_ENC_RLE_DICTIONARY, PQ_ENC_DELTA_BINARY_PACKED,
    PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_ENC_DELTA_BYTE_ARRAY, PQ_ENC_BYTE_STREAM_SPLIT};

const char *sc_encoding_name(pq_encoding e)
{
    if (e == PQ_ENC_AUTO)
        return "auto";
    for (size_t i = 0; enc_names[i]; i++)
        if (enc_values[i] == e)
            return enc_names[i];
    return "?";
}

/* Physical types each encoding accepts (Encodings.md). */
static unsigned enc_allowed(pq_encoding e)
{
    switch (e) {
    case PQ_ENC_PLAIN: return 0xFFu;
    case PQ_ENC_RLE: return SC_PH(PQ_BOOLEAN);
    case PQ_ENC_RLE_DICTIONARY: return 0xFFu & ~SC_PH(PQ_BOOLEAN);
    case PQ_ENC_DELTA_BINARY_PACKED: return SC_PH(PQ_INT32) | SC_PH(PQ_INT64);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return SC_PH(PQ_BYTE_ARRAY);
    case PQ_ENC_DELTA_BYTE_ARRAY: return SC_PH(PQ_BYTE_ARRAY) | SC_PH(PQ_FIXED_LEN_BYTE_ARRAY);
    case PQ_ENC_BYTE_STREAM_SPLIT:
        return SC_PH(PQ_FLOAT) | SC_PH(PQ_DOUBLE) | SC_PH(PQ_INT32) | SC_PH(PQ_INT64) |
               SC_PH(PQ_FIXED_LEN_BYTE_ARRAY);
    default: return 0;
    }
}

static int opt_encoding(sc_loader *L, yaml_node_t *v, const char *what, sc_column *c)
{
    char kw[160], b[160];
    int idx;
    int rc = yp_enum(L->d, v, sc_keypath(kw, sizeof kw, what, "encoding"), enc_names, &idx, L->err);
    if (rc != 0)
        return rc;
    pq_encoding e = enc_values[idx];
    unsigned have = sc_phys_mask(c->type), ok = enc_allowed(e), bad = have & ~ok;
    if (bad != 0) {
        int first = __builtin_ctz(bad);
        sc_mask_names(ok, b, sizeof b);
        return yp_err(L->d, v, L->err, "%s: encoding '%s' is not valid for %s values "
                      "(valid for %s)", what, enc_names[idx], sc_phys_names[first],
                      ok == 0xFFu ? "every type" : b);
    }
    c->opts.encoding = e;
    return PQ_OK;
}

static int opt_compression(sc_loader *L, yaml_node_t *m, const char *what, sc_column *c)
{
    char kw[160];
    yaml_node_t *v = yp_get(L->d, m, "compression"), *lv = yp_get(L->d, m, "compression_level");
    pq_codec codec = PQ_CODEC_UNCOMPRESSED;
    const char *name;
    if (v != NULL) {
        int rc = yp_str(L->d, v, sc_keypath(kw, sizeof kw, what, "compression"), &name, L->err);
        if (rc != 0)
            return rc;
        if (pq_codec_from_name(name, &codec) != 0)
            return yp_err(L->d, v, L->err, "%s: unknown compression '%.40s' (expected none, "
                          "snappy, gzip, brotli, lz4_raw, zstd)", what, name);
        c->opts.codec = (int)codec;
    }
    if (lv == NULL)
        return PQ_OK;
    if (v == NULL)
        return yp_err(L->d, lv, L->err, "%s: compression_level needs compression on the same "
                      "column", what);
    int64_t level;
    pq_err e2;
    int rc = yp_int(L->d, lv, sc_keypath(kw, sizeof kw, what, "compression_level"), -1000000, 1000,
                    &level, L->err);
    if (rc == 0 && pq_codec_check_level(codec, (int)level, &e2) != 0)
        return yp_err(L->d, lv, L->err, "%s: compression_level: %s", what, e2.msg);
    c->opts.codec_level = (int)level;
    return rc;
}

static int opt_dictionary(sc_loader *L, yaml_node_t *v, const char *what, sc_column *c)
{
    char kw[160];
    static const char *const keys[] = {"max_bytes", NULL};
    sc_keypath(kw, sizeof kw, what, "dictionary");
    int rc;
    if (v->type == YAML_MAPPING_NODE) {
        yaml_node_t *mb = yp_get(L->d, v, "max_bytes");
        uint64_t n = 0;
        rc = yp_check_keys(L->d, v, kw, keys, L->err);
        if (rc == 0 && mb != NULL && (rc = yp_size(L->d, mb, kw, (uint64_t)1 << 31, &n, L->err)) == 0 &&
            n == 0)
            rc = yp_err(L->d, mb, L->err, "%s: max_bytes must be at least 1 (use dictionary: "
                        "false to disable)", kw);
        c->opts.dictionary_max_bytes = (size_t)n;
    } else {
        bool on = false;
        rc = yp_bool(L->d, v, kw, &on, L->err);
        if (rc == 0)
            c->opts.dictionary = on;
    }
    if (rc != 0)
        return rc;
    bool wants = c->opts.dictionary == 1 || c->opts.dictionary_max_bytes != 0;
    pq_encoding e = c->opts.encoding;
    /* dictionary: true with another encoding: dictionary first, that
     * encoding when the dictionary outgrows its limit (writer/chunk/chunk.c) */
    if (c->opts.dictionary == 0 && e == PQ_ENC_RLE_DICTIONARY)
        return yp_err(L->d, v, L->err, "%s: false conflicts with encoding: dictionary", kw);
    if (wants && sc_phys_mask(c->type) == SC_PH(PQ_BOOLEAN))
        return yp_err(L->d, v, L->err, "%s: booleans are never dictionary-encoded", kw);
    return PQ_OK;
}

static int opt_bloom(sc_loader *L, yaml_node_t *v, const char *what, sc_column *c)
{
    char kw[160], kw2[192];
    static const char *const keys[] = {"fpp", "ndv", NULL};
    sc_keypath(kw, sizeof kw, what, "bloom");
    int rc;
    bool on = true;
    if (v->type == YAML_MAPPING_NODE) {
        yaml_node_t *fpp = yp_get(L->d, v, "fpp"), *ndv = yp_get(L->d, v, "ndv");
        rc = yp_check_keys(L->d, v, kw, keys, L->err);
        if (rc == 0 && fpp && (rc = yp_double(L->d, fpp, sc_keypath(kw2, sizeof kw2, kw, "fpp"),
                                              &c->opts.bloom_fpp, L->err)) == 0 &&
            !(c->opts.bloom_fpp > 0 && c->opts.bloom_fpp < 1))
            rc = yp_err(L->d, fpp, L->err, "%s: fpp must be between 0 and 1 (exclusive), e.g. "
                        "0.01", kw);
        int64_t n = 0;
        if (rc == 0 && ndv && (rc = yp_int(L->d, ndv, sc_keypath(kw2, sizeof kw2, kw, "ndv"), 1,
                                           INT64_MAX, &n, L->err)) == 0)
            c->opts.bloom_ndv = (uint64_t)n;
    } else {
        rc = yp_bool(L->d, v, kw, &on, L->err);
    }
    if (rc != 0)
        return rc;
    c->opts.bloom = on;
    if (on && sc_phys_mask(c->type) == SC_PH(PQ_BOOLEAN))
        return yp_err(L->d, v, L->err, "%s: a bloom filter on a bool column filters nothing", kw);
    return PQ_OK;
}

static int opt_statistics(sc_loader *L, yaml_node_t *v, const char *what, sc_column *c)
{
    char kw[160], kw2[192];
    static const char *const keys[] = {"truncate", NULL};
    sc_keypath(kw, sizeof kw, what, "statistics");
    if (v->type != YAML_MAPPING_NODE) {
        bool on = false;
        int rc = yp_bool(L->d, v, kw, &on, L->err);
        if (rc == 0)
            c->opts.statistics = on;
        return rc;
    }
    yaml_node_t *tr = yp_get(L->d, v, "truncate");
    int64_t n = 0;
    int rc = yp_check_keys(L->d, v, kw, keys, L->err);
    if (rc == 0 && tr)
        rc = yp_int(L->d, tr, sc_keypath(kw2, sizeof kw2, kw, "truncate"), 1, INT32_MAX, &n,
                    L->err);
    c->opts.statistics = 1;
    c->opts.stats_truncate = (size_t)n;
    return rc;
}

int sc_parse_options(sc_loader *L, yaml_node_t *m, const char *what, sc_column *c)
{
    char kw[160];
    yaml_node_t *v;
    int rc = PQ_OK;
    if ((v = yp_get(L->d, m, "encoding")) != NULL)
        rc = opt_encoding(L, v, what, c);
    rc = rc ? rc : opt_compression(L, m, what, c);
    if (rc == 0 && (v = yp_get(L->d, m, "dictionary")) != NULL)
        rc = opt_dictionary(L, v, what, c);
    if (rc == 0 && (v = yp_get(L->d, m, "bloom")) != NULL)
        rc = opt_bloom(L, v, what, c);
    if (rc == 0 && (v = yp_get(L->d, m, "statistics")) != NULL)
        rc = opt_statistics(L, v, what, c);
    if (rc == 0 && (v = yp_get(L->d, m, "key")) != NULL) {
        char *key = NULL;
        rc = yp_strdup(L->d, v, sc_keypath(kw, sizeof kw, what, "key"), &key, L->err);
        c->opts.key_id = key;
    }
    int64_t id;
    if (rc == 0 && (v = yp_get(L->d, m, "field_id")) != NULL &&
        (rc = yp_int(L->d, v, sc_keypath(kw, sizeof kw, what, "field_id"), 0, INT32_MAX, &id,
                     L->err)) == 0)
        c->field_id = (int32_t)id;
    return rc;
}
