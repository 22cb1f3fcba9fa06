/* colwriter.h - the types of the streaming column writer (chunk.h) and
 * of what it produces: a leaf's resolved options, the chunk's metadata
 * and page-index records, the per-thread scratch, and the colwriter's
 * state, which its parts (chunk.c, chooser.c, openpage.c, colfinish.c)
 * share. Types only. */
#ifndef PQ_COLWRITER_H
#define PQ_COLWRITER_H

#include "bloom.h"
#include "buf.h"
#include "column.h"
#include "compress.h"
#include "dict.h"
#include "geo.h"
#include "ndv.h"
#include "pq_writer.h"
#include "stats.h"

/* Options resolved for one leaf (writer defaults overridden by the leaf). */
typedef struct pq_chunk_opts {
    pq_codec codec;
    int codec_level;
    pq_encoding encoding;        /* explicit, or PQ_ENC_AUTO */
    int dictionary;              /* -1 auto, 0 off, 1 on */
    size_t dictionary_max_bytes;
    bool statistics;
    size_t stats_truncate;
    int page_version;
    bool crc;
    size_t page_max_bytes;
    size_t page_max_rows;
    size_t small_chunk_bytes;    /* pq_writer_opts' */
    size_t small_page_bytes;     /* pq_writer_opts' */
    bool page_index;
    int bloom;                   /* -1 auto, 0 off, 1 on */
    double bloom_fpp;
    uint64_t bloom_ndv;          /* 0: the chunk's distinct count */
    /* encryption: key NULL = plaintext column. The file state is only
     * read, so concurrent encodes of one writer share it. */
    const pq_crypto_file *crypto_file;
    pq_crypto_key *crypto_key;
    const char *crypto_key_id;
    int32_t row_group, column;   /* ordinals for module AADs */
} pq_chunk_opts;

/* Where chunk bytes go, and the offset they land at: a sink at the file
 * offset, or (mem set) a memory buffer, offsets counted from where the
 * caller started it. Pages are built straight into mem, sparing a copy.
 * With spill also set, mem gathers bytes bound for the sink (offsets are
 * the file's) and hands them over once PQ_OUT_SPILL_BYTES have gathered,
 * or at pq_out_spill: the file's tail is two or three small modules per
 * column, and one write(2) each cost more than encoding them. */
typedef struct pq_out {
    pq_sink sink;
    uint64_t offset;
    pq_buf *mem;
    bool spill;
} pq_out;

#define PQ_OUT_SPILL_BYTES ((size_t)256 * 1024)

/* One data page as the OffsetIndex and ColumnIndex describe it. */
typedef struct pq_page_entry {
    int64_t offset;              /* of the page header in the file */
    int32_t size;                /* header + page bytes */
    int64_t first_row;           /* within the row group */
    int64_t unencoded_ba_bytes;
    int64_t null_count;
    bool null_page;              /* no non-null values */
    size_t min_off, min_len;     /* into pq_chunk_meta.index_bytes */
    size_t max_off, max_len;
} pq_page_entry;

typedef struct pq_chunk_meta {
    const pq_node *node;
    pq_codec codec;
    uint32_t encodings;          /* bit per pq_encoding used */
    int64_t num_values;
    int64_t total_uncompressed, total_compressed;
    int64_t dictionary_page_offset; /* -1: none */
    int64_t data_page_offset;
    int32_t n_dict_pages;
    int32_t data_pages[10];      /* count per data-page encoding */
    pq_page_type data_page_type; /* DATA or DATA_V2 */
    /* chunk statistics */
    bool has_stats, has_minmax, min_exact, max_exact, legacy_minmax;
    pq_buf min, max;
    int64_t null_count;
    bool has_nan_count;
    int64_t nan_count;
    /* GeospatialStatistics (GEOMETRY / GEOGRAPHY) */
    bool has_geo_bbox;
    pq_geo_bbox geo_bbox;
    int32_t geo_types[PQ_GEO_MAX_TYPES];
    size_t n_geo_types;
    /* SizeStatistics */
    int64_t unencoded_ba_bytes;  /* BYTE_ARRAY only */
    uint64_t *def_hist, *rep_hist; /* max level + 1 entries, NULL if max 0 */
    /* page index */
    pq_page_entry *pages;
    size_t n_pages, cap_pages;
    pq_buf index_bytes;          /* per-page min/max values */
    pq_buf page_def_hist, page_rep_hist; /* uint64 per page * (max + 1) */
    bool page_without_minmax;
    int32_t boundary_order;      /* BoundaryOrder of the page min/max */
    bool write_column_index;
    pq_crypto_key *crypto_key;   /* NULL: plaintext chunk */
    const char *crypto_key_id;   /* key_metadata of a column key */
    int32_t row_group, column;
    pq_buf encrypted_meta;       /* ColumnChunk.encrypted_column_metadata */
    pq_bloom *bloom;             /* NULL: no filter for this chunk */
    int64_t bloom_offset;
    int32_t bloom_length;
    int64_t column_index_offset, offset_index_offset;
    int32_t column_index_length, offset_index_length;
    /* Non-NULL: a finished chunk's (pq_colwriter_finish), whose page
     * entries, histograms, bounds and page-index bytes all lie in this one
     * allocation (each array exactly its length); only encrypted_meta and
     * bloom are their own. Such a meta's arrays are not grown or freed
     * one by one. */
    void *block;
} pq_chunk_meta;

/* Scratch reused across chunks; one per thread encoding (pq_encoded). */
typedef struct pq_chunk_work {
    pq_buf levels, body, scratch;
    pq_buf indices;              /* uint32 dictionary index per value of a page */
    pq_buf wide;                 /* uint16 booleans for RLE */
    pq_buf crypt;                /* encryption scratch */
    pq_buf page_min, page_max;   /* a page's statistics */
    pq_compressor comp;
    /* chooser.c: one decision's compressed sample size per encoding at
     * the sample level, SIZE_MAX until measured */
    size_t sample_sizes[10];
} pq_chunk_work;

typedef enum pq_cw_mode {
    PQ_CW_UNDECIDED,             /* no page with values yet */
    PQ_CW_DICT,                  /* pages write dictionary indices */
    PQ_CW_FALLBACK,              /* pages write values in cw->enc */
    PQ_CW_REFALL                 /* fallen back after a page of indices: the
                                    encoding is measured on the next values */
} pq_cw_mode;

/* A finished chunk's pages buffer is kept for the next chunk up to this
 * room (colfinish.c), else freed. */
#define PQ_CW_KEEP_PAGES ((size_t)64 * 1024)
/* A finished chunk's data pages of at least this many bytes are handed
 * over whole when its finish is given a buffer to take them
 * (pq_colwriter_finish), not copied: each is then a write(2) of its own,
 * which smaller ones would not repay. */
#define PQ_CW_SPLICE_MIN PQ_CW_KEEP_PAGES

/* Level histograms are allocated with at least this many slots, so that a
 * colwriter taken over by another leaf (pq_colwriter_init_in) keeps them
 * when that leaf's levels fit. */
#define PQ_CW_HIST_MIN 8

typedef struct pq_colwriter {
    const pq_node *node;
    pq_chunk_opts o;
    pq_chunk_meta meta;          /* this chunk's, so far */
    pq_buf pages;                /* encoded data pages; offsets count from 0 */
    pq_column open;              /* the open page's rows */
    /* With the dictionary in use, the open page keeps its levels in open
     * and its values only as dictionary indices (open_idx), its
     * statistics gathered as rows arrive (openpage.c). */
    bool open_dict;
    pq_buf open_idx;             /* uint32 per value */
    /* openpage.c's statistics of a dictionary page: per dictionary index
     * the page (page_stamp) that last offered it to page_stats, valid for
     * the dictionary's seen_generation; picks, the values to offer */
    pq_buf page_seen, picks;
    uint32_t page_stamp, seen_generation;
    int64_t open_ba_bytes;       /* its byte arrays' bytes (SizeStatistics) */
    size_t open_rows, open_bytes; /* its budget: rows, value bytes */
    size_t fed_bytes;            /* value and level bytes fed since begin */
    pq_cw_mode mode;
    pq_encoding enc;             /* of the next page */
    int dict_bit_width;
    bool has_dict;               /* dict is initialised */
    pq_dict dict;
    bool dict_pages;             /* some page of this chunk used the dictionary */
    bool fallback_pages;         /* some page with values did not */
    pq_sort_order order;
    pq_stats page_stats, chunk_stats;
    int64_t rows;                /* rows in encoded pages */
    uint64_t values;             /* defined values in encoded pages */
    uint64_t prev_values;        /* of the previous chunk (a decision's scale) */
    int level;                   /* codec level of this chunk's pages */
    pq_codec codec;              /* this chunk's: o.codec, or UNCOMPRESSED for
                                    a small one (o.small_chunk_bytes) */
    bool finishing;              /* the open page is the chunk's last */
    /* The first page's decision (mode DICT or FALLBACK, enc, level), kept
     * for the file's next chunks and re-measured every few (chooser.c),
     * when keep_decisions (pq_stream_create's keep) */
    bool keep_decisions;
    bool kept;
    pq_cw_mode kept_mode;
    pq_encoding kept_enc;
    int kept_level;
    uint32_t kept_age;           /* chunks that reused it */
    /* bloom filter: hashes of values outside the dictionary, and their
     * distinct-count estimate */
    bool bloom_maybe;
    pq_buf hashes;               /* uint64 per value of a fallback page */
    pq_ndv *ndv;                 /* NULL until a value misses the dictionary */
    bool geo_on;
    pq_geo_stats geo;
} pq_colwriter;

#endif
