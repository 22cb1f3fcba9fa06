/* pq_writer.h - the public API of parqd's Parquet writer library.
 *
 * The writer knows nothing of JSON, YAML or sockets. A caller builds a
 * pq_schema (groups and primitive leaves), opens a pq_writer on a sink,
 * appends values leaf by leaf with explicit repetition/definition levels,
 * ends rows, and closes. Row groups are flushed when a limit is reached or
 * on request; a file is valid after any row group once closed.
 *
 * Ownership: pq_schema_new/pq_schema_destroy; the writer borrows the schema
 * (it must outlive the writer) and copies the options.
 * pq_writer_open/pq_writer_destroy; pq_writer_close writes the footer. */
#ifndef PQ_WRITER_H
#define PQ_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crypto.h"
#include "err.h"
#include "types.h"

/* ---- schema ------------------------------------------------------------ */

typedef struct pq_schema pq_schema;

/* Per-leaf writing options. Start from pq_column_opts_default(). */
typedef struct pq_column_opts {
    pq_encoding encoding;        /* PQ_ENC_AUTO: writer picks per type */
    int codec;                   /* -1: writer default, else pq_codec */
    int codec_level;             /* 0: codec default */
    int dictionary;              /* -1: auto, 0: off, 1: on (with fallback) */
    size_t dictionary_max_bytes; /* 0: writer default */
    int statistics;              /* -1: writer default, 0: off, 1: on */
    size_t stats_truncate;       /* 0: writer default; byte-array min/max cap */
    int bloom;                   /* -1: auto, 0: off, 1: on */
    double bloom_fpp;            /* 0: default 0.01 */
    uint64_t bloom_ndv;          /* 0: from the row group's distinct count */
    const char *key_id;          /* encryption: column key id, NULL = footer key / plaintext */
} pq_column_opts;

void pq_column_opts_default(pq_column_opts *o);

typedef struct pq_node_spec {
    const char *name;
    pq_repetition repetition;
    pq_physical_type type;       /* leaves only */
    int32_t type_length;         /* FIXED_LEN_BYTE_ARRAY only */
    pq_logical logical;          /* .kind = PQ_LT_NONE for none */
    int32_t field_id;            /* < 0: none */
    const pq_column_opts *opts;  /* leaves only; NULL: defaults */
} pq_node_spec;

/* The root node (id 0) is the message named root_name ("schema" if NULL). */
pq_schema *pq_schema_new(const char *root_name);
void pq_schema_destroy(pq_schema *s);

/* Each returns the new node's id (>= 0) or a negative error code. */
int pq_schema_add_group(pq_schema *s, int parent, const pq_node_spec *spec, pq_err *err);
int pq_schema_add_leaf(pq_schema *s, int parent, const pq_node_spec *spec, pq_err *err);

/* 3-level LIST: `<rep> group name (LIST) { repeated group list { ... } }`.
 * Returns the id of the repeated `list` group; add exactly one child named
 * "element" to it (leaf or group). */
int pq_schema_add_list(pq_schema *s, int parent, const char *name,
                       pq_repetition rep, int32_t field_id, pq_err *err);

/* MAP: `<rep> group name (MAP) { repeated group key_value { ... } }`.
 * Returns the id of `key_value`; add a required child "key" and a child
 * "value". */
int pq_schema_add_map(pq_schema *s, int parent, const char *name,
                      pq_repetition rep, int32_t field_id, pq_err *err);

/* Validates the tree and numbers the leaves in depth-first order. Called by
 * pq_writer_open; call it earlier to query leaves. */
int pq_schema_finish(pq_schema *s, pq_err *err);

size_t pq_schema_num_leaves(const pq_schema *s);
/* Leaf index (column ordinal) of a leaf node id, or -1. */
int pq_schema_leaf_of_node(const pq_schema *s, int node);
uint16_t pq_schema_max_def(const pq_schema *s, size_t leaf);
uint16_t pq_schema_max_rep(const pq_schema *s, size_t leaf);
/* Dotted path of a leaf ("a.list.element"). Valid until the schema dies. */
const char *pq_schema_leaf_path(const pq_schema *s, size_t leaf);

/* Appends the schema in the spec's textual form
 * (`message schema { optional int64 ts (TIMESTAMP(MICROS,true)); }`). */
struct pq_buf;
int pq_schema_print(const pq_schema *s, struct pq_buf *out);

/* ---- writer -------------------------------------------------------------- */

/* Where bytes go. write must write all n bytes or fail (fill err). */
typedef struct pq_sink {
    void *ctx;
    int (*write)(void *ctx, const void *data, size_t n, pq_err *err);
} pq_sink;

/* A sink writing to an open file descriptor (not closed by the writer). */
pq_sink pq_sink_fd(int *fd);

/* Parquet Modular Encryption (Encryption.md). Keys are borrowed and must
 * outlive the writer: a key counts its cipher invocations across every file
 * it encrypts, so the caller keeps one pq_crypto_key per key for the life
 * of the process and rotates keys when a write reports PQ_ELIMIT. */
typedef struct pq_column_key {
    const char *column;          /* top-level column or dotted leaf path; covers
                                    every leaf below it */
    pq_crypto_key *key;
    const char *key_id;          /* key_metadata stored in the file; NULL: none */
} pq_column_key;

typedef struct pq_encryption_opts {
    pq_crypto_algorithm algorithm;
    bool plaintext_footer;       /* signed PAR1 footer instead of PARE */
    pq_crypto_key *footer_key;
    const char *footer_key_id;
    const pq_column_key *columns; /* n_columns == 0: every column uses the
                                     footer key (uniform encryption); else only
                                     the listed columns are encrypted */
    size_t n_columns;
    const void *aad_prefix;      /* NULL: none */
    size_t aad_prefix_len;
    bool store_aad_prefix;       /* false: readers must supply the prefix */
} pq_encryption_opts;

typedef struct pq_writer_opts {
    pq_codec codec;              /* default ZSTD */
    int codec_level;             /* 0: codec default */
    int page_version;            /* 1 or 2 (default 2) */
    bool crc;                    /* page CRC32 (default true) */
    size_t page_max_bytes;       /* default 1 MiB (uncompressed values) */
    size_t page_max_rows;        /* default 20000 */
    size_t dictionary_max_bytes; /* default 1 MiB */
    size_t stats_truncate;       /* default 64 */
    bool statistics;             /* default true */
    size_t row_group_max_rows;   /* 0: no limit (default 1000000) */
    size_t row_group_max_bytes;  /* 0: no limit (default 64 MiB buffered) */
    bool page_index;             /* ColumnIndex + OffsetIndex (default true) */
    bool decide_each_row_group;  /* every row group's chunks choose their
                                    encodings and zstd levels afresh, as
                                    pq_writer_encode's (row groups encoded
                                    apart) always do: set it where the files
                                    of both paths must be byte-identical.
                                    Default false: a column keeps its choice
                                    for the file's next row groups, sparing
                                    the measurements */
    size_t small_chunk_bytes;    /* a chunk of one data page whose page body
                                    and dictionary are each fewer bytes is
                                    written UNCOMPRESSED (the codec is per
                                    chunk; each page is compressed alone):
                                    zstd's frame costs more than it saves
                                    there, and a call costs thousands of
                                    instructions. 0 (default): every chunk
                                    takes the codec */
    size_t small_page_bytes;     /* a zstd page (data or dictionary) whose
                                    compressed part is fewer bytes, in a
                                    column whose level is left to the writer
                                    (codec_level 0), is compressed at level
                                    -1: no Huffman table for its literals,
                                    which cost ~20,000 instructions a page
                                    and saved little on pages this small.
                                    0 (default): pages take the chunk's
                                    level */
    const char *created_by;      /* NULL: "parqd version <v>" */
    const pq_encryption_opts *encryption; /* NULL: plaintext file; copied
                                             at open, keys borrowed */
} pq_writer_opts;

void pq_writer_opts_default(pq_writer_opts *o);

typedef struct pq_writer pq_writer;
typedef struct pq_column pq_column;

int pq_writer_open(pq_writer **out, pq_schema *schema, const pq_writer_opts *opts,
                   pq_sink sink, pq_err *err);
/* Frees everything; does not write a footer (use pq_writer_close first). */
void pq_writer_destroy(pq_writer *w);

/* Adds footer key-value metadata (copied). */
int pq_writer_add_metadata(pq_writer *w, const char *key, const char *value, pq_err *err);

pq_column *pq_writer_column(pq_writer *w, size_t leaf);

/* Values for one leaf, in order. rep is the repetition level of this value
 * (0 starts a new row). The put_* calls carry a defined value (definition
 * level = the leaf's max); put_null carries an undefined one with def <
 * max. FLBA values go through put_bytes with len == type_length; INT96
 * through put_bytes with len 12; FLOAT16 through put_bytes with len 2. */
int pq_column_put_bool(pq_column *c, uint16_t rep, bool v);
int pq_column_put_i32(pq_column *c, uint16_t rep, int32_t v);
int pq_column_put_i64(pq_column *c, uint16_t rep, int64_t v);
int pq_column_put_float(pq_column *c, uint16_t rep, float v);
int pq_column_put_double(pq_column *c, uint16_t rep, double v);
int pq_column_put_bytes(pq_column *c, uint16_t rep, const void *p, size_t len);
int pq_column_put_null(pq_column *c, uint16_t rep, uint16_t def);

/* Marks the end of a row across all columns; flushes a row group when a
 * row-group limit has been reached. */
int pq_writer_end_row(pq_writer *w, pq_err *err);

/* Drops every value put since the last pq_writer_end_row, so a record that
 * turns out to be bad halfway through (a required field missing, a value
 * that does not convert) leaves no trace in any column. */
void pq_writer_abort_row(pq_writer *w);

/* Drops the values put into one leaf since the last end_row (a duplicate
 * JSON key replaces the earlier value: last wins). */
void pq_writer_abort_leaf(pq_writer *w, size_t leaf);

/* Encodes and writes the buffered rows as one row group (no-op if empty). */
int pq_writer_flush_row_group(pq_writer *w, pq_err *err);

/* Flushes, writes page indexes and the footer. The writer is then closed;
 * destroy it afterwards. */
int pq_writer_close(pq_writer *w, pq_err *err);

uint64_t pq_writer_bytes_written(const pq_writer *w);  /* on the sink so far */
size_t pq_writer_buffered_bytes(const pq_writer *w);   /* not yet flushed */
uint64_t pq_writer_rows_written(const pq_writer *w);   /* in flushed row groups */
uint64_t pq_writer_rows_buffered(const pq_writer *w);

/* ---- parallel encoding ---------------------------------------------------
 *
 * A row group can be encoded (dictionary, pages, statistics, compression,
 * bloom filter, page-index entries, encryption) into memory on any thread,
 * then appended to the file in order. This lets the daemon's workers encode
 * several row groups at once while one thread does the file I/O.
 *
 *     pq_encoded *e = pq_encoded_new();
 *     (any thread)  pq_writer_encode(w, rg, ordinal, e, &err);
 *     (in order)    pq_writer_append_encoded(w, e, &err);
 *     pq_encoded_destroy(e);
 *
 * `ordinal` is the row group's index in the file (0, 1, ...): encrypted
 * module AADs include it, so it is fixed before encoding. Encodes of one
 * writer may run concurrently with each other and with
 * pq_writer_append_encoded of an earlier ordinal; nothing else may touch the
 * writer meanwhile. Encryption keys (pq_crypto_key) may be shared by
 * concurrent encodes. */
typedef struct pq_encoded pq_encoded;

pq_encoded *pq_encoded_new(void);            /* NULL when out of memory */
void pq_encoded_destroy(pq_encoded *e);
uint64_t pq_encoded_bytes(const pq_encoded *e); /* bytes the row group adds to the file */
uint64_t pq_encoded_rows(const pq_encoded *e);
/* Frees e's buffers (it stays usable): a row group's bytes, once
 * appended, need not stay allocated until the next one. */
void pq_encoded_trim(pq_encoded *e);
/* Moves the memory of from's pieces (a streamed row group's large chunks'
 * data pages, handed over whole: pq_stream_finish) to `to`, freeing
 * to's; nothing when from has none. Both lose the row group they held
 * (appended or abandoned: pq_encoded_drop). The next pq_stream_finish
 * into `to` gives that memory to its column writers for their next
 * chunks' pages: encodeds that a pipeline's row groups pass through in
 * turn, moving it along, keep a row group's pages in memory touched
 * before, not fresh memory each time. */
void pq_encoded_move_pieces(pq_encoded *to, pq_encoded *from);

/* rg is only read (it may be reset or reused once this returns). An empty
 * rg gives an encoded group of 0 rows that append skips. Reuses e's
 * buffers. */
struct pq_rowgroup;
int pq_writer_encode(pq_writer *w, const struct pq_rowgroup *rg, int32_t ordinal,
                     pq_encoded *e, pq_err *err);
/* One row group's encoding split between threads: each part encodes the
 * leaves [first, end) (same rg and ordinal; together the parts cover every
 * leaf, in order), then pq_encoded_join appends each next part to the
 * first (its bytes copied, its chunks moved; part is left empty), and
 * the first is appended as a whole. pq_writer_encode is the one part
 * [0, leaves). */
int pq_writer_encode_leaves(pq_writer *w, const struct pq_rowgroup *rg, int32_t ordinal,
                            size_t first, size_t end, pq_encoded *e, pq_err *err);
int pq_encoded_join(pq_encoded *e, pq_encoded *part, pq_err *err);

/* Writes e's bytes to the sink at the current offset, rebasing its page,
 * dictionary and index offsets, and records its metadata for the footer.
 * Ordinals must arrive in order without gaps (PQ_ESTATE otherwise). After
 * a failed append the writer is unusable (destroy it, abort the file). */
int pq_writer_append_encoded(pq_writer *w, pq_encoded *e, pq_err *err);

/* The writer's own row buffer, which pq_writer_column / end_row fill. */
struct pq_rowgroup *pq_writer_rowgroup(pq_writer *w);
/* Flushes the writer's own buffer as a row group when a row-group limit
 * (rows, bytes) is reached; what pq_writer_end_row does after counting. */
int pq_writer_check_limits(pq_writer *w, pq_err *err);
/* Row groups appended so far (the next ordinal). */
int32_t pq_writer_row_groups(const pq_writer *w);

#endif
