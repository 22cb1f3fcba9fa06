/* walk.h - pq_walk's private header: the walk's state (one file, one
 * column chunk, one page at a time), the sort-order and value-bound
 * records, and the functions the parts of the tool call across files.
 * pq_walk is single-threaded. */
#ifndef WALK_H
#define WALK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "decode.h"
#include "pqfile.h"

typedef struct opts {
    bool quiet, all, dump, pages, strict;
} opts;

/* A byte range owned by one structure; no two may overlap. */
typedef struct region {
    size_t start, end;
    char what[96];
} region;

/* How min/max compare values of a column (LogicalTypes.md "sort order",
 * parquet.thrift ColumnOrder), decided from the schema alone. */
typedef enum ord_kind {
    ORD_NONE,       /* undefined (INTERVAL, GEOMETRY, Variant bytes, ...) */
    ORD_SIGNED,     /* INT32/INT64 as signed integers */
    ORD_UNSIGNED,   /* INT32/INT64 under INTEGER(unsigned) / UINT_* */
    ORD_BOOLEAN,    /* false < true */
    ORD_FLOAT,      /* FLOAT, DOUBLE, FLOAT16 (width 4, 8, 2) */
    ORD_BYTES,      /* unsigned byte-wise, shorter prefix first */
    ORD_DECIMAL,    /* DECIMAL on BYTE_ARRAY/FLBA: signed big-endian */
    ORD_INT96       /* days (bytes 8..11), then nanos (bytes 0..7) */
} ord_kind;

typedef struct col_order {
    ord_kind kind;
    size_t width;                 /* bytes per value; 0 = BYTE_ARRAY */
    bool total;                   /* floats under IEEE_754_TOTAL_ORDER */
    bool text;                    /* STRING/ENUM/JSON: bounds stay UTF-8 */
    int declared;                 /* column_orders entry: 1 TYPE_ORDER, 2
                                   * IEEE_754_TOTAL_ORDER, 3 INT96_TIMESTAMP;
                                   * 0 = no column_orders in the file */
    char name[48];                /* what the order came from, for messages */
} col_order;

/* A value as PLAIN bytes without a length prefix (how Statistics and the
 * ColumnIndex store bounds); p == NULL: none. */
typedef struct vref {
    const uint8_t *p;
    size_t len;
} vref;

/* What the values of a page (or chunk) are: counts and true extremes. */
typedef struct vacc {
    int64_t n;                    /* non-null values */
    int64_t nans;                 /* of which NaN (float orders) */
    int64_t ba_bytes;             /* BYTE_ARRAY: sum of value lengths */
    vref min, max;                /* over non-NaN values */
    vref nan_min, nan_max;        /* over NaNs (IEEE_754_TOTAL_ORDER) */
} vacc;

/* What the walk learned about one data page. */
typedef struct page_info {
    size_t offset, span;          /* header + compressed data */
    size_t ordinal;               /* in the chunk, dictionary page included */
    int type;
    int32_t encoding;
    int64_t values, nulls, rows;  /* nulls/rows from the decoded levels */
    int64_t leaf_nulls;           /* def == max_def - 1, optional leaf only */
    bool row_start;               /* first level has repetition level 0 */
    int64_t *def_hist, *rep_hist; /* max_def + 1 / max_rep + 1 counters */
    bool vals_ok;                 /* values decoded: v is valid */
    vacc v;                       /* bounds point into own */
    uint8_t *own;
} page_info;

typedef struct chunk_state {
    pqf_chunk ch;
    col_order ord;
    pqt_bytes dict;               /* dictionary values, PLAIN without prefix */
    bool dict_ok;                 /* dict decoded */
    int allowed;                  /* minmax_allowed verdict; -2 = not yet */
    bool said_nan_count;          /* missing nan_count noted once per chunk */
    int16_t max_def, max_rep;
    page_info *pages;             /* data pages only, in file order */
    size_t npages, cap;
    size_t nall;                  /* pages of any type */
    bool has_dict;
    bool dict_at_data_offset;     /* legacy: see check_page_order */
    int32_t dict_encoding;
    int64_t sum_comp, sum_uncomp, sum_values, sum_rows;
} chunk_state;

typedef struct walk {
    const opts *o;
    const char *path;
    pqf_file f;
    int nerr;
    int nnotes;
    long rg, col, page;           /* -1 = not inside one */
    long long off;                /* -1 = no offset to report */
    const char *page_kind;        /* page type name while inside a page */
    const char *col_path;
    region *regions;
    size_t nregions, cap_regions;
    size_t total_pages;
    bool said_no_orders;          /* "no column_orders" noted once per file */
    long long nbounds;            /* min/max compared with the values */
    long long ncut;               /* of which truncated byte arrays */
    /* Truncated byte-array bounds: the longest such bound and the shortest
     * value whose bound was cut (see check_truncation). */
    size_t cut_longest, cut_shortest;
    char cut_where[200];
} walk;

/* walk_decode.c's buffers for one page's values, reused page to page. */
typedef struct page_scratch {
    uint8_t *mem;                 /* fixed-width values, PLAIN layout */
    uint32_t *idx;                /* dictionary indices, RLE booleans */
    pqt_bytes b;                  /* byte arrays */
} page_scratch;

/* Pages beyond this many non-null values are not decoded (a corrupt
 * header could otherwise ask for gigabytes of index memory). */
#define MAX_PAGE_VALUES ((size_t)1 << 26)

/* walk_decode.c: where an empty byte range points. */
extern const uint8_t no_bytes[1];

/* walk_report.c */
int hard(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int soft(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int note(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void at(walk *w, long rg, long col, long page, long long off);
int add_region(walk *w, size_t start, size_t end, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* walk_dump.c */
void dump_footer(const pqf_file *f);
void dump_page(const pqf_page *pg);

/* walk_order.c */
uint32_t le32(const uint8_t *p);
void put_le32(uint8_t *p, uint32_t v);
void put_le64(uint8_t *p, uint64_t v);
void leaf_order(const pqf_file *f, size_t col, col_order *o);
size_t fixed_len(const col_order *o);
bool is_nan(const col_order *o, const uint8_t *p);
bool float_neg(const col_order *o, const uint8_t *p);
double float_val(const col_order *o, const uint8_t *p);
int ord_cmp(const col_order *o, const uint8_t *a, size_t la, const uint8_t *b,
            size_t lb);
void fold_value(const col_order *o, vacc *a, const uint8_t *p, size_t len);
void merge_vacc(const col_order *o, vacc *into, const vacc *from);
int pin_vacc(vacc *v, uint8_t **own);
vref want_bound(const col_order *o, const vacc *v, bool is_max);
const char *fmt_val(const col_order *o, const uint8_t *p, size_t len, char *buf,
                    size_t cap);
bool utf8_valid(const uint8_t *p, size_t len);

/* walk_decode.c */
void scratch_free(page_scratch *s);
int decode_values(walk *w, const chunk_state *cs, const pqf_page *pg,
                  const pqf_parts *parts, size_t n, vacc *a, page_scratch *s);
int decode_dict(walk *w, chunk_state *cs, const pqf_page *pg, const uint8_t *buf,
                size_t len);

/* walk_bounds.c */
int check_stats_values(walk *w, chunk_state *cs, const tr_node *st, const vacc *v,
                       const char *what, const char *scope);
int check_ci_bounds(walk *w, chunk_state *cs, const tr_node *ci);
int check_truncation(walk *w);

/* walk_pages.c */
void chunk_free(chunk_state *cs);
bool nulls_match(const chunk_state *cs, int64_t nulls, int64_t leaf_nulls,
                 int64_t claimed);
int nulls_mismatch(walk *w, const chunk_state *cs, const char *what,
                   int64_t claimed, int64_t nulls);
int walk_pages(walk *w, chunk_state *cs);

/* walk_chunk.c */
int check_totals(walk *w, const chunk_state *cs, int64_t rg_rows);
int check_chunk_stats(walk *w, chunk_state *cs);
int check_encodings(walk *w, const chunk_state *cs);
int check_encoding_stats(walk *w, const chunk_state *cs);
int check_chunk_meta(walk *w, const pqf_chunk *ch);

/* walk_index.c */
int check_offset_index(walk *w, const chunk_state *cs);
int check_column_index(walk *w, chunk_state *cs);
int check_bloom(walk *w, const chunk_state *cs);

#endif
