/* page.h - one page as stored: PageHeader + (compressed) page bytes. Pages
 * know nothing of chunks or files; chunk.c decides what goes in them. */
#ifndef PQ_PAGE_H
#define PQ_PAGE_H

#include "buf.h"
#include "crypto.h"
#include "err.h"
#include "thrift.h"
#include "types.h"

/* Statistics as serialized (parquet.thrift Statistics). */
typedef struct pq_stats_out {
    bool has_minmax;
    const uint8_t *min, *max;
    size_t min_len, max_len;
    bool min_exact, max_exact;
    bool legacy_minmax;      /* also write deprecated min/max (fields 1, 2) */
    int64_t null_count;      /* < 0: omit */
    bool has_nan_count;
    int64_t nan_count;
} pq_stats_out;

void pq_thrift_statistics(pq_thrift *t, int16_t fid, const pq_stats_out *s);

/* Modular encryption of one page (Encryption.md 4.4.2): the page bytes and
 * then the header become modules; ordinals go into their AADs. */
typedef struct pq_page_crypto {
    const pq_crypto_file *file;
    pq_crypto_key *key;
    int32_t row_group, column;
    int32_t page;                /* data-page ordinal in the chunk */
    pq_buf *scratch;             /* reusable */
} pq_page_crypto;

typedef struct pq_page_spec {
    pq_page_type type;       /* DATA, DATA_V2 or DICTIONARY */
    int32_t num_values;      /* levels (data) or entries (dictionary) */
    int32_t num_nulls;       /* v2 */
    int32_t num_rows;        /* v2 */
    pq_encoding encoding;
    /* v1: body = prefixed rep levels + prefixed def levels + values, all
     * compressed. v2: levels = rep levels + def levels (never compressed),
     * body = values. dictionary: body = PLAIN entries. */
    const uint8_t *levels;
    size_t rep_len, def_len;
    const uint8_t *body;
    size_t body_len;
    const pq_stats_out *stats; /* NULL: none */
    const pq_page_crypto *crypto; /* NULL: plaintext */
} pq_page_spec;

typedef struct pq_page_result {
    size_t header_len;
    size_t compressed_len;   /* bytes after the header */
    size_t uncompressed_len; /* the header's uncompressed_page_size */
} pq_page_result;

typedef struct pq_compressor pq_compressor;

struct pq_compressor;

/* Appends header + page bytes to out. `scratch` is a reusable buffer; comp
 * caches codec contexts across pages. */
int pq_page_build(const pq_page_spec *spec, struct pq_compressor *comp, pq_codec codec,
                  int level, bool crc, pq_buf *scratch, pq_buf *out, pq_page_result *res,
                  pq_err *err);

#endif
