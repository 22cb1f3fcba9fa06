/* pq_walk.c - independent verifier for Parquet files: footer, every page
 * of every column chunk (order, sizes, CRC, decompression, levels, values),
 * row group totals, chunk placement, page indexes (PageIndex.md), statistics
 * and bloom filter headers (BloomFilter.md). Built on tests/support only,
 * never on the writer, so it is a second opinion on what parqd writes.
 *
 *   pq_walk [--quiet] [--strict] [--all] [--dump] [--pages] FILE...
 *
 * Every data page's values are decoded (dictionary indices through the
 * dictionary page; PLAIN, RLE booleans, DELTA_*, BYTE_STREAM_SPLIT via
 * decode.h) and their true min/max taken in the column's sort order
 * (LogicalTypes.md; parquet.thrift ColumnOrder: signed/unsigned integers,
 * floats without NaN and with the -0/+0 rules or IEEE 754 total order,
 * FLOAT16, unsigned bytes, big-endian DECIMAL, INT96 chronological).
 * ColumnIndex min_values/max_values, null_pages, null_counts, nan_counts
 * and boundary_order, page and chunk Statistics and the unencoded byte
 * array sizes are compared with them. Bounds of fixed-width values must
 * be exact; a BYTE_ARRAY bound may be truncated (a min to a prefix, a max
 * to a shorter larger value), consistently within the file. Columns whose
 * order is undefined (INTERVAL, GEOMETRY, Variant metadata/value...) must
 * carry no min/max.
 *
 * Stops at the first problem per file (--all: keeps going after problems
 * that do not break the walk, e.g. CRC mismatches), naming file, row group,
 * column, page and offset. Exit status 1 when any file failed.
 *
 * Quirks of shipped writers that the spec forbids or leaves open (see each
 * note() call) are printed as "note:" and pass; --strict fails them, and
 * is what tests of parqd's own files should use. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

/* ---- reporting ---- */

static void vprint(const walk *w, FILE *out, const char *tag, const char *fmt,
                   va_list ap)
{
    fprintf(out, "%s: %s", w->path, tag);
    if (w->rg >= 0)
        fprintf(out, "row group %ld, ", w->rg);
    if (w->col >= 0)
        fprintf(out, "column %ld '%s', ", w->col, w->col_path ? w->col_path : "?");
    if (w->page >= 0)
        fprintf(out, "page %ld (%s), ", w->page, w->page_kind ? w->page_kind : "?");
    if (w->off >= 0)
        fprintf(out, "offset %lld: ", w->off);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
}

static void vreport(walk *w, const char *fmt, va_list ap)
{
    vprint(w, stderr, "", fmt, ap);
    w->nerr++;
}

/* Problems after which the walk cannot continue (bad bounds, bad Thrift). */
static int hard(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int hard(walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(w, fmt, ap);
    va_end(ap);
    return -1;
}

/* Problems that leave the structure walkable; --all continues past them. */
static int soft(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int soft(walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(w, fmt, ap);
    va_end(ap);
    return w->o->all ? 0 : -1;
}

/* Deviations that the spec forbids but shipped writers produced and
 * readers accept (each call site says which). Reported, not failed, unless
 * --strict, which the tests of our own writer use. */
static int note(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (w->o->strict)
        vreport(w, fmt, ap);
    else if (!w->o->quiet)
        vprint(w, stdout, "note: ", fmt, ap);
    va_end(ap);
    w->nnotes++;
    return (w->o->strict && !w->o->all) ? -1 : 0;
}

static void at(walk *w, long rg, long col, long page, long long off)
{
    w->rg = rg;
    w->col = col;
    w->page = page;
    w->off = off;
    if (col < 0)
        w->col_path = NULL;
}

static int add_region(walk *w, size_t start, size_t end, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_region(walk *w, size_t start, size_t end, const char *fmt, ...)
{
    if (w->nregions == w->cap_regions) {
        size_t ncap = w->cap_regions ? w->cap_regions * 2 : 64;
        region *r = realloc(w->regions, ncap * sizeof *r);
        if (r == NULL)
            return hard(w, "out of memory");
        w->regions = r;
        w->cap_regions = ncap;
    }
    region *r = &w->regions[w->nregions++];
    r->start = start;
    r->end = end;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->what, sizeof r->what, fmt, ap);
    va_end(ap);
    return 0;
}

/* ---- dump (--dump): a readable footer ---- */

static void print_bin(const tr_node *n, size_t max)
{
    size_t len;
    const uint8_t *p = tr_bin(n, &len);
    printf("%zu:", len);
    for (size_t i = 0; i < len && i < max; i++)
        printf("%02x", p[i]);
    if (len > max)
        printf("..");
}

static void print_str(const tr_node *n)
{
    size_t len;
    const uint8_t *p = tr_bin(n, &len);
    printf("\"%.*s\"", (int)(len > 200 ? 200 : len), p ? (const char *)p : "");
}

static const char *unit_name(const tr_node *t)
{
    const tr_node *u = tr_field_struct(t, 2);
    return tr_has(u, 1) ? "MILLIS" : tr_has(u, 2) ? "MICROS" : tr_has(u, 3) ? "NANOS" : "?";
}

static void print_logical(const tr_node *lt)
{
    static const char *const names[] = { NULL, "STRING", "MAP", "LIST", "ENUM",
        "DECIMAL", "DATE", "TIME", "TIMESTAMP", NULL, "INTEGER", "UNKNOWN",
        "JSON", "BSON", "UUID", "FLOAT16", "VARIANT", "GEOMETRY", "GEOGRAPHY",
        "FILE" };
    if (lt == NULL || lt->n != 1)
        return;
    const tr_node *m = &lt->kids[0];
    int id = m->fid;
    const char *nm = (id > 0 && id < 20 && names[id]) ? names[id] : "?";
    printf(", logical %s", nm);
    if (id == 5)
        printf("(%lld,%lld)", (long long)tr_field_int(m, 2, -1),
               (long long)tr_field_int(m, 1, -1));
    if (id == 7 || id == 8)
        printf("(%s, utc=%d)", unit_name(m), tr_field_bool(m, 1, false));
    if (id == 10)
        printf("(%lld, signed=%d)", (long long)tr_field_int(m, 1, -1),
               tr_field_bool(m, 2, false));
    if (id == 16 && tr_has(m, 1))
        printf("(v%lld)", (long long)tr_field_int(m, 1, 0));
    if ((id == 17 || id == 18) && tr_has(m, 1)) {
        printf("(crs ");
        print_str(tr_field(m, 1));
        printf(")");
    }
}

static void dump_schema_elem(const tr_node *el, size_t depth)
{
    printf("  %*s", (int)(2 * depth), "");
    print_str(tr_field(el, 4));
    printf(": %s", depth ? pqf_repetition_name((int)tr_field_int(el, 3, -1)) : "root");
    if (tr_has(el, 1))
        printf(" %s", pqf_type_name((int)tr_field_int(el, 1, -1)));
    else
        printf(" group[%lld]", (long long)tr_field_int(el, 5, 0));
    if (tr_has(el, 2))
        printf("(%lld)", (long long)tr_field_int(el, 2, 0));
    if (tr_has(el, 6))
        printf(", converted %s", pqf_converted_name((int)tr_field_int(el, 6, -1)));
    if (tr_has(el, 7) || tr_has(el, 8))
        printf(" scale %lld precision %lld", (long long)tr_field_int(el, 7, -1),
               (long long)tr_field_int(el, 8, -1));
    print_logical(tr_field_struct(el, 10));
    if (tr_has(el, 9))
        printf(", field_id %lld", (long long)tr_field_int(el, 9, 0));
    printf("\n");
}

/* Depth-first, mirroring the flattened schema list. */
static size_t dump_schema_from(const pqf_file *f, size_t i, size_t depth)
{
    const tr_node *el = pqf_schema_at(f, i);
    if (el == NULL || depth > 64)
        return i + 1;
    dump_schema_elem(el, depth);
    size_t next = i + 1;
    int64_t nch = tr_has(el, 1) ? 0 : tr_field_int(el, 5, 0);
    for (int64_t k = 0; k < nch && next < pqf_num_schema(f); k++)
        next = dump_schema_from(f, next, depth + 1);
    return next;
}

static void dump_stats(const tr_node *st)
{
    static const char *const names[] = { NULL, "max", "min", "null_count",
        "distinct_count", "max_value", "min_value", "is_max_value_exact",
        "is_min_value_exact", "nan_count" };
    if (st == NULL)
        return;
    printf("      statistics:");
    for (size_t i = 0; i < st->n; i++) {
        const tr_node *k = &st->kids[i];
        int id = k->fid;
        printf(" %s=", (id > 0 && id < 10) ? names[id] : "?");
        if (k->type == TR_BINARY)
            print_bin(k, 16);
        else
            printf("%lld", (long long)(k->type == TR_BOOL ? k->v.b : tr_int(k)));
    }
    printf("\n");
}

static void dump_chunk(const pqf_chunk *c, size_t col)
{
    printf("    column %zu '%s': %s %s, %lld values, %lld compressed, "
           "%lld uncompressed\n", col, c->leaf ? c->leaf->path : "?",
           pqf_type_name(c->type), pqf_codec_name(c->codec),
           (long long)c->num_values, (long long)c->total_compressed_size,
           (long long)c->total_uncompressed_size);
    printf("      encodings");
    const tr_node *enc = tr_field_list(c->md, 2);
    for (size_t i = 0; i < tr_list_len(enc); i++)
        printf(" %s", pqf_encoding_name((int)tr_int(tr_list_at(enc, i))));
    printf("; data_page_offset %lld", (long long)c->data_page_offset);
    if (c->dictionary_page_offset >= 0)
        printf(", dictionary_page_offset %lld", (long long)c->dictionary_page_offset);
    printf(", file_offset %lld\n", (long long)c->file_offset);
    dump_stats(tr_field_struct(c->md, 12));
    if (c->bloom_filter_offset >= 0)
        printf("      bloom filter at %lld, length %lld\n",
               (long long)c->bloom_filter_offset, (long long)c->bloom_filter_length);
    if (c->offset_index_offset >= 0)
        printf("      offset index at %lld +%lld\n", (long long)c->offset_index_offset,
               (long long)c->offset_index_length);
    if (c->column_index_offset >= 0)
        printf("      column index at %lld +%lld\n", (long long)c->column_index_offset,
               (long long)c->column_index_length);
    if (tr_has(c->md, 13))
        printf("      encoding_stats: %zu entries\n", tr_list_len(tr_field_list(c->md, 13)));
    if (tr_has(c->md, 16))
        printf("      size_statistics present\n");
}

static void dump_row_group(const pqf_file *f, size_t rg)
{
    const tr_node *r = pqf_row_group(f, rg);
    printf("  row group %zu: %lld rows, total_byte_size %lld", rg,
           (long long)tr_field_int(r, 3, -1), (long long)tr_field_int(r, 2, -1));
    if (tr_has(r, 6))
        printf(", total_compressed_size %lld", (long long)tr_field_int(r, 6, -1));
    if (tr_has(r, 5))
        printf(", file_offset %lld", (long long)tr_field_int(r, 5, -1));
    if (tr_has(r, 7))
        printf(", ordinal %lld", (long long)tr_field_int(r, 7, -1));
    printf("\n");
    for (size_t c = 0; c < pqf_num_columns(f, rg); c++) {
        pqf_chunk ch;
        if (pqf_chunk_get(f, rg, c, &ch, NULL) == 0)
            dump_chunk(&ch, c);
        else
            printf("    column %zu: unreadable\n", c);
    }
}

static void dump_footer(const pqf_file *f)
{
    printf("%s: %zu bytes, FileMetaData at %zu, %u bytes\n", f->name, f->size,
           f->footer_offset, f->footer_len);
    printf("  version %lld, num_rows %lld, created_by ",
           (long long)tr_field_int(f->meta, 1, -1), (long long)tr_field_int(f->meta, 3, -1));
    print_str(tr_field(f->meta, 6));
    printf("\n");
    const tr_node *kv = tr_field_list(f->meta, 5);
    for (size_t i = 0; i < tr_list_len(kv); i++) {
        size_t vlen;
        tr_field_bin(tr_list_at(kv, i), 2, &vlen);
        printf("  key_value ");
        print_str(tr_field(tr_list_at(kv, i), 1));
        printf(" (%zu bytes)\n", vlen);
    }
    printf("  schema (%zu elements, %zu leaves):\n", pqf_num_schema(f), f->nleaves);
    dump_schema_from(f, 0, 0);
    if (tr_has(f->meta, 7))
        printf("  column_orders: %zu\n", tr_list_len(tr_field_list(f->meta, 7)));
    for (size_t rg = 0; rg < pqf_num_row_groups(f); rg++)
        dump_row_group(f, rg);
}

static void dump_page(const pqf_page *pg)
{
    printf("      page %zu %s at %zu: header %zu, compressed %d, uncompressed %d, "
           "values %d, encoding %s", pg->ordinal, pqf_page_type_name(pg->type),
           pg->offset, pg->header_len, pg->compressed_size, pg->uncompressed_size,
           pg->num_values, pqf_encoding_name(pg->encoding));
    if (pg->type == PQ_PAGE_DATA_V2)
        printf(", nulls %d, rows %d, rep %d def %d bytes%s", pg->num_nulls,
               pg->num_rows, pg->rep_len, pg->def_len,
               pg->is_compressed ? "" : ", not compressed");
    if (pg->has_crc)
        printf(", crc 0x%08x", pg->crc);
    printf("%s\n", pg->stats ? ", statistics" : "");
}

/* ---- values: sort orders, decoding, true min/max ---- */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (size_t i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (size_t i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static bool elem_named(const tr_node *el, const char *name)
{
    size_t len;
    const uint8_t *p = tr_field_bin(el, 4, &len);
    return p != NULL && len == strlen(name) && memcmp(p, name, len) == 0;
}

/* The LogicalType union member (parquet.thrift field id), 0 = none. */
static int logical_id(const tr_node *el)
{
    const tr_node *lt = tr_field_struct(el, 10);
    return (lt != NULL && lt->n == 1) ? lt->kids[0].fid : 0;
}

/* Variant `metadata` and `value` leaves hold Variant-encoded bytes, whose
 * order is undefined (VARIANT in ColumnOrder). `typed_value` leaves of a
 * shredded Variant keep their own type's order: VariantShredding.md
 * expects their statistics to be used for skipping. */
static bool variant_bytes_leaf(const pqf_file *f, const pqf_leaf *leaf)
{
    for (size_t i = 0; i + 1 < leaf->depth; i++)
        if (logical_id(pqf_schema_at(f, leaf->chain[i])) == 16)
            return elem_named(leaf->elem, "metadata") || elem_named(leaf->elem, "value");
    return false;
}

/* LogicalTypes.md, by annotation; an annotation on a physical type it
 * does not allow leaves the order undefined. */
static ord_kind logical_order(const tr_node *el, int type, int32_t tlen,
                              const char **name, bool *text)
{
    static const char *const names[] = { NULL, "STRING", "MAP", "LIST", "ENUM",
        "DECIMAL", "DATE", "TIME", "TIMESTAMP", NULL, "INTEGER", "UNKNOWN",
        "JSON", "BSON", "UUID", "FLOAT16", "VARIANT", "GEOMETRY", "GEOGRAPHY",
        "FILE" };
    bool ints = type == PQ_INT32 || type == PQ_INT64;
    bool bin = type == PQ_BYTE_ARRAY || type == PQ_FIXED_LEN_BYTE_ARRAY;
    int id = logical_id(el);
    *name = (id > 0 && id < 20 && names[id]) ? names[id] : "an unknown logical type";
    switch (id) {
    case 1: case 4: case 12:
        *text = true;
        return type == PQ_BYTE_ARRAY ? ORD_BYTES : ORD_NONE;
    case 13: return type == PQ_BYTE_ARRAY ? ORD_BYTES : ORD_NONE;
    case 14: return type == PQ_FIXED_LEN_BYTE_ARRAY && tlen == 16 ? ORD_BYTES : ORD_NONE;
    case 5: return ints ? ORD_SIGNED : bin ? ORD_DECIMAL : ORD_NONE;
    case 6: return type == PQ_INT32 ? ORD_SIGNED : ORD_NONE;
    case 7: case 8: return ints ? ORD_SIGNED : ORD_NONE;
    case 10: {
        bool sgn = tr_field_bool(&tr_field_struct(el, 10)->kids[0], 2, true);
        *name = sgn ? "INTEGER(signed)" : "INTEGER(unsigned)";
        return !ints ? ORD_NONE : sgn ? ORD_SIGNED : ORD_UNSIGNED;
    }
    case 15: return type == PQ_FIXED_LEN_BYTE_ARRAY && tlen == 2 ? ORD_FLOAT : ORD_NONE;
    default: return ORD_NONE;   /* MAP, LIST, UNKNOWN, VARIANT, GEO*, FILE */
    }
}

/* Files without a LogicalType: the ConvertedType, else the physical type. */
static ord_kind converted_order(int64_t ct, int type, const char **name, bool *text)
{
    bool ints = type == PQ_INT32 || type == PQ_INT64;
    bool bin = type == PQ_BYTE_ARRAY || type == PQ_FIXED_LEN_BYTE_ARRAY;
    *name = pqf_converted_name((int)ct);
    switch (ct) {
    case 0: case 4: case 19:
        *text = true;
        return type == PQ_BYTE_ARRAY ? ORD_BYTES : ORD_NONE;
    case 20: return type == PQ_BYTE_ARRAY ? ORD_BYTES : ORD_NONE;
    case 5: return ints ? ORD_SIGNED : bin ? ORD_DECIMAL : ORD_NONE;
    case 6: case 7: case 8: case 9: case 10:
    case 15: case 16: case 17: case 18: return ints ? ORD_SIGNED : ORD_NONE;
    case 11: case 12: case 13: case 14: return ints ? ORD_UNSIGNED : ORD_NONE;
    default: return ORD_NONE;   /* INTERVAL, MAP, LIST... */
    }
}

static ord_kind physical_order(int type)
{
    switch (type) {
    case PQ_BOOLEAN: return ORD_BOOLEAN;
    case PQ_INT32: case PQ_INT64: return ORD_SIGNED;
    case PQ_INT96: return ORD_INT96;
    case PQ_FLOAT: case PQ_DOUBLE: return ORD_FLOAT;
    default: return ORD_BYTES;
    }
}

static size_t type_width(const pqf_leaf *leaf)
{
    switch (leaf->type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return leaf->type_length > 0 ? (size_t)leaf->type_length : 0;
    default: return 0;
    }
}

static void leaf_order(const pqf_file *f, size_t col, col_order *o)
{
    const pqf_leaf *leaf = &f->leaves[col];
    const char *name = pqf_type_name(leaf->type);
    memset(o, 0, sizeof *o);
    if (logical_id(leaf->elem) != 0)
        o->kind = logical_order(leaf->elem, leaf->type, leaf->type_length, &name, &o->text);
    else if (tr_has(leaf->elem, 6))
        o->kind = converted_order(tr_field_int(leaf->elem, 6, -1), leaf->type, &name, &o->text);
    else
        o->kind = physical_order(leaf->type);
    if (variant_bytes_leaf(f, leaf)) {
        o->kind = ORD_NONE;
        name = "VARIANT metadata/value";
    }
    o->width = type_width(leaf);
    if (o->kind != ORD_NONE && leaf->type == PQ_FIXED_LEN_BYTE_ARRAY && o->width == 0)
        o->kind = ORD_NONE;   /* no type_length: no value to compare */
    snprintf(o->name, sizeof o->name, "%s", name);
    const tr_node *orders = tr_field_list(f->meta, 7);
    const tr_node *u = tr_list_at(orders, col);
    o->declared = orders == NULL ? 0 : (u != NULL && u->n == 1) ? u->kids[0].fid : -1;
    o->total = o->declared == 2 && o->kind == ORD_FLOAT;
}

/* Length every bound of a fixed-width order must have; 0 = variable. */
static size_t fixed_len(const col_order *o)
{
    switch (o->kind) {
    case ORD_BOOLEAN: return 1;
    case ORD_NONE: return 0;
    default: return o->width;   /* BYTE_ARRAY: 0 */
    }
}

static uint64_t float_bits(const col_order *o, const uint8_t *p)
{
    return o->width == 2 ? (uint64_t)(p[0] | p[1] << 8) : o->width == 4 ? le32(p) : le64(p);
}

static bool is_nan(const col_order *o, const uint8_t *p)
{
    uint64_t b = float_bits(o, p);
    switch (o->width) {
    case 2: return (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0;
    case 4: return (b & 0x7f800000) == 0x7f800000 && (b & 0x7fffff) != 0;
    default:
        return (b & 0x7ff0000000000000u) == 0x7ff0000000000000u &&
               (b & 0xfffffffffffffu) != 0;
    }
}

static bool float_neg(const col_order *o, const uint8_t *p)
{
    return (p[o->width - 1] & 0x80) != 0;
}

static double float_val(const col_order *o, const uint8_t *p)
{
    uint64_t b = float_bits(o, p);
    if (o->width == 2) {
        int e = (int)(b >> 10 & 0x1f);
        double m = (double)(b & 0x3ff);
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m != 0 ? NAN : INFINITY)
                                                    : ldexp(m + 1024, e - 25);
        return (b & 0x8000) ? -v : v;
    }
    if (o->width == 4) {
        uint32_t u = (uint32_t)b;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* IEEE 754 totalOrder as an unsigned key: -NaN < -inf < ... < -0 < +0 <
 * ... < +inf < +NaN, distinct bit patterns distinct keys. */
static uint64_t total_key(const col_order *o, const uint8_t *p)
{
    unsigned bits = (unsigned)o->width * 8;
    uint64_t b = float_bits(o, p), sign = (uint64_t)1 << (bits - 1);
    uint64_t mask = bits == 64 ? UINT64_MAX : (sign << 1) - 1;
    return (b & sign) ? (~b & mask) : (b | sign);
}

#define CMP3(x, y) (((x) > (y)) - ((x) < (y)))

static int bytes_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    size_t n = la < lb ? la : lb;
    int c = n ? memcmp(a, b, n) : 0;
    return c != 0 ? CMP3(c, 0) : CMP3(la, lb);
}

/* Two's complement big-endian of any lengths: sign-extend to the longer. */
static int decimal_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    bool na = la > 0 && (a[0] & 0x80), nb = lb > 0 && (b[0] & 0x80);
    if (na != nb)
        return na ? -1 : 1;
    uint8_t ext = na ? 0xff : 0x00;
    size_t n = la > lb ? la : lb;
    for (size_t i = 0; i < n; i++) {
        uint8_t x = i < n - la ? ext : a[i - (n - la)];
        uint8_t y = i < n - lb ? ext : b[i - (n - lb)];
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

/* Compares two PLAIN values (no length prefix) of this column; fixed
 * widths must have been checked. NaNs compare as numbers (unordered) under
 * TYPE_ORDER: callers keep them out. */
static int ord_cmp(const col_order *o, const uint8_t *a, size_t la, const uint8_t *b,
                   size_t lb)
{
    switch (o->kind) {
    case ORD_SIGNED:
        if (o->width == 4)
            return CMP3((int32_t)le32(a), (int32_t)le32(b));
        return CMP3((int64_t)le64(a), (int64_t)le64(b));
    case ORD_UNSIGNED:
        return o->width == 4 ? CMP3(le32(a), le32(b)) : CMP3(le64(a), le64(b));
    case ORD_BOOLEAN: return CMP3(a[0] & 1, b[0] & 1);
    case ORD_FLOAT:
        if (o->total)
            return CMP3(total_key(o, a), total_key(o, b));
        return CMP3(float_val(o, a), float_val(o, b));
    case ORD_DECIMAL: return decimal_cmp(a, la, b, lb);
    case ORD_INT96: {
        int32_t da = (int32_t)le32(a + 8), db = (int32_t)le32(b + 8);
        return da != db ? CMP3(da, db) : CMP3((int64_t)le64(a), (int64_t)le64(b));
    }
    default: return bytes_cmp(a, la, b, lb);
    }
}

/* Replaces *cur by cand when cand is more extreme (want -1: smaller). */
static void keep_extreme(const col_order *o, vref *cur, vref cand, int want)
{
    if (cand.p == NULL)
        return;
    if (cur->p == NULL || ord_cmp(o, cand.p, cand.len, cur->p, cur->len) * want > 0)
        *cur = cand;
}

static void fold_value(const col_order *o, vacc *a, const uint8_t *p, size_t len)
{
    vref v = { p, len };
    a->n++;
    if (o->width == 0)
        a->ba_bytes += (int64_t)len;
    if (o->kind == ORD_NONE)
        return;
    if (o->kind == ORD_FLOAT && is_nan(o, p)) {
        a->nans++;
        if (o->total) {
            keep_extreme(o, &a->nan_min, v, -1);
            keep_extreme(o, &a->nan_max, v, 1);
        }
        return;
    }
    keep_extreme(o, &a->min, v, -1);
    keep_extreme(o, &a->max, v, 1);
}

static void merge_vacc(const col_order *o, vacc *into, const vacc *from)
{
    into->n += from->n;
    into->nans += from->nans;
    into->ba_bytes += from->ba_bytes;
    keep_extreme(o, &into->min, from->min, -1);
    keep_extreme(o, &into->max, from->max, 1);
    keep_extreme(o, &into->nan_min, from->nan_min, -1);
    keep_extreme(o, &into->nan_max, from->nan_max, 1);
}

/* Copies the bounds out of the page buffers into one allocation. */
static int pin_vacc(vacc *v, uint8_t **own)
{
    vref *refs[4] = { &v->min, &v->max, &v->nan_min, &v->nan_max };
    size_t total = 0, pos = 0;
    for (size_t i = 0; i < 4; i++)
        total += refs[i]->p ? refs[i]->len : 0;
    *own = malloc(total ? total : 1);
    if (*own == NULL)
        return -1;
    for (size_t i = 0; i < 4; i++) {
        if (refs[i]->p == NULL)
            continue;
        if (refs[i]->len)
            memcpy(*own + pos, refs[i]->p, refs[i]->len);
        refs[i]->p = *own + pos;
        pos += refs[i]->len;
    }
    return 0;
}

/* The bound a writer must store: the non-NaN extreme, or under
 * IEEE_754_TOTAL_ORDER the NaN extreme when every value is NaN. */
static vref want_bound(const col_order *o, const vacc *v, bool is_max)
{
    vref r = is_max ? v->max : v->min;
    if (r.p == NULL && o->total)
        r = is_max ? v->nan_max : v->nan_min;
    return r;
}

static const char *fmt_hex(const uint8_t *p, size_t len, char *buf, size_t cap)
{
    size_t pos = (size_t)snprintf(buf, cap, "0x");
    for (size_t i = 0; i < len && i < 24 && pos + 3 < cap; i++)
        pos += (size_t)snprintf(buf + pos, cap - pos, "%02x", p[i]);
    if (len > 24 || len == 0)
        snprintf(buf + pos, cap - pos, "%s (%zu bytes)", len ? ".." : "", len);
    return buf;
}

static const char *fmt_bytes(const uint8_t *p, size_t len, char *buf, size_t cap)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] < 0x20 || p[i] > 0x7e || p[i] == '"')
            return fmt_hex(p, len, buf, cap);
    if (len <= 48)
        snprintf(buf, cap, "\"%.*s\"", (int)len, (const char *)p);
    else
        snprintf(buf, cap, "\"%.40s\"... (%zu bytes)", (const char *)p, len);
    return buf;
}

/* A value for messages: numbers as numbers, text quoted, else hex. */
static const char *fmt_val(const col_order *o, const uint8_t *p, size_t len, char *buf,
                           size_t cap)
{
    size_t fixed = fixed_len(o);
    if (p == NULL)
        return "(none)";
    if (fixed != 0 && len != fixed)
        return fmt_hex(p, len, buf, cap);
    switch (o->kind) {
    case ORD_SIGNED:
        snprintf(buf, cap, "%lld", o->width == 4 ? (long long)(int32_t)le32(p)
                                                 : (long long)(int64_t)le64(p));
        return buf;
    case ORD_UNSIGNED:
        snprintf(buf, cap, "%llu", o->width == 4 ? (unsigned long long)le32(p)
                                                 : (unsigned long long)le64(p));
        return buf;
    case ORD_BOOLEAN: return (p[0] & 1) ? "true" : "false";
    case ORD_FLOAT:
        if (is_nan(o, p))
            snprintf(buf, cap, "NaN (0x%0*llx)", (int)o->width * 2,
                     (unsigned long long)float_bits(o, p));
        else
            snprintf(buf, cap, "%.*g", o->width == 8 ? 17 : 9, float_val(o, p));
        return buf;
    case ORD_INT96:
        snprintf(buf, cap, "day %d + %lld ns", (int32_t)le32(p + 8), (long long)le64(p));
        return buf;
    case ORD_BYTES: return fmt_bytes(p, len, buf, cap);
    default: return fmt_hex(p, len, buf, cap);
    }
}

/* RFC 3629 well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF). */
static bool utf8_valid(const uint8_t *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = p[i];
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0 || n > len - i)
            return false;
        uint32_t cp = n == 1 ? c : (uint32_t)(c & (0x7f >> n));
        for (size_t k = 1; k < n; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (p[i + k] & 0x3f);
        }
        static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n;
    }
    return true;
}

/* ---- values: decoding a page (Encodings.md) ---- */

/* Pages beyond this many non-null values are not decoded (a corrupt
 * header could otherwise ask for gigabytes of index memory). */
#define MAX_PAGE_VALUES ((size_t)1 << 26)

static const uint8_t no_bytes[1];

typedef struct page_scratch {
    uint8_t *mem;                 /* fixed-width values, PLAIN layout */
    uint32_t *idx;                /* dictionary indices, RLE booleans */
    pqt_bytes b;                  /* byte arrays */
} page_scratch;

static void scratch_free(page_scratch *s)
{
    free(s->mem);
    free(s->idx);
    pqt_bytes_free(&s->b);
}

static void fold_fixed(const col_order *o, vacc *a, const uint8_t *p, size_t n,
                       size_t width)
{
    for (size_t i = 0; i < n; i++)
        fold_value(o, a, p + i * width, width);
}

static void fold_bytes(const col_order *o, vacc *a, const pqt_bytes *b)
{
    const uint8_t *heap = b->heap ? b->heap : no_bytes;
    for (size_t i = 0; i < b->n; i++)
        fold_value(o, a, heap + b->off[i], b->off[i + 1] - b->off[i]);
}

static int alloc_scratch(walk *w, void **p, size_t n, size_t size)
{
    *p = malloc(n ? n * size : 1);
    return *p ? 0 : hard(w, "out of memory for %zu values", n);
}

/* Bytes left after the values: the spec defines none. */
static int trailing(walk *w, const char *enc, size_t used, size_t len, size_t n)
{
    if (used >= len)
        return 0;
    return note(w, "%s: %zu bytes follow the %zu encoded values in the page",
                enc, len - used, n);
}

static int decode_plain(walk *w, const chunk_state *cs, const pqf_parts *parts,
                        size_t n, vacc *a, page_scratch *s)
{
    const col_order *o = &cs->ord;
    size_t used = 0;
    if (cs->ch.type == PQ_BYTE_ARRAY) {
        if (pqt_plain_decode_bytes(parts->values, parts->values_len, n, &s->b, &used) != 0)
            return soft(w, "PLAIN: %zu byte arrays do not decode from %zu bytes", n,
                        parts->values_len);
        fold_bytes(o, a, &s->b);
        return 0;
    }
    if (cs->ch.type == PQ_BOOLEAN) {
        if (alloc_scratch(w, (void **)&s->mem, n, 1) != 0)
            return -1;
        if (pqt_plain_decode_bool(parts->values, parts->values_len, s->mem, n, &used) != 0)
            return soft(w, "PLAIN: %zu booleans do not decode from %zu bytes", n,
                        parts->values_len);
        fold_fixed(o, a, s->mem, n, 1);
        return 0;
    }
    if (o->width == 0 || parts->values_len / o->width < n)
        return soft(w, "PLAIN: %zu %s values do not fit in %zu bytes", n,
                    pqf_type_name(cs->ch.type), parts->values_len);
    fold_fixed(o, a, parts->values, n, o->width);
    return 0;
}

/* RLE booleans carry a 4-byte length in v1 and v2 pages (Encodings.md). */
static int decode_rle_bool(walk *w, const chunk_state *cs, const pqf_parts *parts,
                           size_t n, vacc *a, page_scratch *s)
{
    size_t len = parts->values_len, used = 0;
    if (cs->ch.type != PQ_BOOLEAN)
        return soft(w, "RLE values in a %s column (RLE is for BOOLEAN values only)",
                    pqf_type_name(cs->ch.type));
    if (len < 4 || le32(parts->values) > len - 4)
        return soft(w, "RLE booleans: the 4-byte length prefix %s", len < 4 ?
                    "is missing" : "runs past the page");
    size_t body = le32(parts->values);
    if (alloc_scratch(w, (void **)&s->idx, n, sizeof *s->idx) != 0 ||
        alloc_scratch(w, (void **)&s->mem, n, 1) != 0)
        return -1;
    if (pqt_rle_decode(parts->values + 4, body, 1, s->idx, n, &used) != 0)
        return soft(w, "RLE booleans: %zu values do not decode from %zu bytes", n, body);
    for (size_t i = 0; i < n; i++)
        s->mem[i] = (uint8_t)s->idx[i];
    fold_fixed(&cs->ord, a, s->mem, n, 1);
    if (used < body && trailing(w, "RLE booleans", used, body, n) != 0)
        return -1;
    return trailing(w, "RLE booleans", 4 + body, len, n);
}

/* Dictionary indices: bit width byte, then the hybrid without length. */
static int decode_dict_ids(walk *w, const chunk_state *cs, const pqf_page *pg,
                           const pqf_parts *parts, size_t n, vacc *a, page_scratch *s)
{
    const char *enc = pqf_encoding_name(pg->encoding);
    size_t len = parts->values_len, used = 0;
    if (!cs->dict_ok)
        return soft(w, "%s page, but the chunk has no decodable dictionary page", enc);
    if (len < 1 || parts->values[0] > 32)
        return soft(w, "%s: %s", enc, len < 1 ? "no bit width byte"
                                            : "bit width above 32");
    if (alloc_scratch(w, (void **)&s->idx, n, sizeof *s->idx) != 0)
        return -1;
    if (pqt_rle_decode(parts->values + 1, len - 1, parts->values[0], s->idx, n, &used) != 0)
        return soft(w, "%s: %zu indices of %d bits do not decode from %zu bytes", enc, n,
                    parts->values[0], len - 1);
    const pqt_bytes *d = &cs->dict;
    const uint8_t *heap = d->heap ? d->heap : no_bytes;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = s->idx[i];
        if (k >= d->n)
            return soft(w, "%s: value %zu is dictionary index %u, the dictionary has "
                        "%zu entries", enc, i, k, d->n);
        fold_value(&cs->ord, a, heap + d->off[k], d->off[k + 1] - d->off[k]);
    }
    return trailing(w, enc, 1 + used, len, n);
}

static int decode_delta_ints(walk *w, const chunk_state *cs, const pqf_parts *parts,
                             size_t n, vacc *a, page_scratch *s)
{
    size_t got = 0, used = 0;
    bool is32 = cs->ch.type == PQ_INT32;
    if (!is32 && cs->ch.type != PQ_INT64)
        return soft(w, "DELTA_BINARY_PACKED in a %s column (INT32/INT64 only)",
                    pqf_type_name(cs->ch.type));
    size_t width = is32 ? 4 : 8;
    if (alloc_scratch(w, (void **)&s->mem, n, width) != 0)
        return -1;
    int rc = is32 ? pqt_delta_decode_i32(parts->values, parts->values_len,
                                         (int32_t *)(void *)s->mem, n, &got, &used)
                  : pqt_delta_decode_i64(parts->values, parts->values_len,
                                         (int64_t *)(void *)s->mem, n, &got, &used);
    if (rc == PQ_ELIMIT)
        return soft(w, "DELTA_BINARY_PACKED header counts more values than the "
                    "%zu non-null levels", n);
    if (rc != 0)
        return soft(w, "DELTA_BINARY_PACKED: %zu values do not decode from %zu bytes",
                    n, parts->values_len);
    if (got != n)
        return soft(w, "DELTA_BINARY_PACKED header counts %zu values, the levels "
                    "say %zu non-null", got, n);
    for (size_t i = 0; i < n; i++) {   /* native ints to PLAIN bytes, in place */
        uint8_t *p = s->mem + i * width;
        if (is32) {
            int32_t v;
            memcpy(&v, p, 4);
            put_le32(p, (uint32_t)v);
        } else {
            int64_t v;
            memcpy(&v, p, 8);
            put_le64(p, (uint64_t)v);
        }
    }
    fold_fixed(&cs->ord, a, s->mem, n, width);
    return trailing(w, "DELTA_BINARY_PACKED", used, parts->values_len, n);
}

static int decode_delta_bytes(walk *w, const chunk_state *cs, const pqf_page *pg,
                              const pqf_parts *parts, size_t n, vacc *a, page_scratch *s)
{
    const char *enc = pqf_encoding_name(pg->encoding);
    bool front = pg->encoding == PQ_ENC_DELTA_BYTE_ARRAY;
    size_t used = 0;
    if (cs->ch.type != PQ_BYTE_ARRAY &&
        !(front && cs->ch.type == PQ_FIXED_LEN_BYTE_ARRAY))
        return soft(w, "%s in a %s column", enc, pqf_type_name(cs->ch.type));
    int rc = front ? pqt_delta_bytes_decode(parts->values, parts->values_len, &s->b, &used)
                   : pqt_delta_length_decode(parts->values, parts->values_len, &s->b, &used);
    if (rc != 0)
        return soft(w, "%s: the values do not decode from %zu bytes", enc,
                    parts->values_len);
    if (s->b.n != n)
        return soft(w, "%s holds %zu values, the levels say %zu non-null", enc, s->b.n, n);
    for (size_t i = 0; cs->ch.type == PQ_FIXED_LEN_BYTE_ARRAY && i < n; i++)
        if (s->b.off[i + 1] - s->b.off[i] != cs->ord.width)
            return soft(w, "%s: value %zu is %u bytes in a FIXED_LEN_BYTE_ARRAY(%zu) "
                        "column", enc, i, s->b.off[i + 1] - s->b.off[i], cs->ord.width);
    fold_bytes(&cs->ord, a, &s->b);
    return trailing(w, enc, used, parts->values_len, n);
}

static int decode_bss(walk *w, const chunk_state *cs, const pqf_parts *parts, size_t n,
                      vacc *a, page_scratch *s)
{
    size_t width = cs->ord.width, used = 0;
    int t = cs->ch.type;
    if (t == PQ_BOOLEAN || t == PQ_BYTE_ARRAY || t == PQ_INT96 || width == 0)
        return soft(w, "BYTE_STREAM_SPLIT in a %s column", pqf_type_name(t));
    /* The value count of a stream split is its length / width. */
    if (parts->values_len / width != n || parts->values_len % width != 0)
        return soft(w, "BYTE_STREAM_SPLIT: %zu bytes, %zu non-null values of %zu bytes "
                    "need %zu", parts->values_len, n, width, n * width);
    if (alloc_scratch(w, (void **)&s->mem, n, width) != 0)
        return -1;
    if (pqt_bss_decode(parts->values, parts->values_len, s->mem, n, width, &used) != 0)
        return soft(w, "BYTE_STREAM_SPLIT: %zu values do not decode", n);
    fold_fixed(&cs->ord, a, s->mem, n, width);
    return 0;
}

static int decode_values(walk *w, const chunk_state *cs, const pqf_page *pg,
                         const pqf_parts *parts, size_t n, vacc *a, page_scratch *s)
{
    switch (pg->encoding) {
    case PQ_ENC_PLAIN: return decode_plain(w, cs, parts, n, a, s);
    case PQ_ENC_RLE: return decode_rle_bool(w, cs, parts, n, a, s);
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: return decode_dict_ids(w, cs, pg, parts, n, a, s);
    case PQ_ENC_DELTA_BINARY_PACKED: return decode_delta_ints(w, cs, parts, n, a, s);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY: return decode_delta_bytes(w, cs, pg, parts, n, a, s);
    case PQ_ENC_BYTE_STREAM_SPLIT: return decode_bss(w, cs, parts, n, a, s);
    default:
        return soft(w, "values in encoding %s cannot be decoded (not a value "
                    "encoding of a data page)", pqf_encoding_name(pg->encoding));
    }
}

/* PLAIN dictionary page values, kept for the chunk's dictionary pages. */
static int decode_dict(walk *w, chunk_state *cs, const pqf_page *pg, const uint8_t *buf,
                       size_t len)
{
    size_t n = (size_t)pg->num_values, used = 0, width = cs->ord.width;
    pqt_bytes *d = &cs->dict;
    int rc;
    if (cs->ch.type == PQ_BYTE_ARRAY) {
        rc = pqt_plain_decode_bytes(buf, len, n, d, &used);
    } else {
        bool is_bool = cs->ch.type == PQ_BOOLEAN;
        if (width == 0 || (is_bool ? n / 8 > len : n > len / width))
            return soft(w, "dictionary: %zu %s values do not fit in %zu bytes", n,
                        pqf_type_name(cs->ch.type), len);
        d->heap = malloc(n ? n * width : 1);
        d->off = malloc((n + 1) * sizeof *d->off);
        if (d->heap == NULL || d->off == NULL)
            return hard(w, "out of memory for a %zu-entry dictionary", n);
        for (size_t i = 0; i <= n; i++)
            d->off[i] = (uint32_t)(i * width);
        d->n = n;
        rc = is_bool ? pqt_plain_decode_bool(buf, len, d->heap, n, &used)
                     : pqt_plain_decode_fixed(buf, len, d->heap, n, width, &used);
    }
    if (rc != 0)
        return soft(w, "dictionary: %zu PLAIN %s values do not decode from %zu bytes",
                    n, pqf_type_name(cs->ch.type), len);
    if (used != len)
        return soft(w, "dictionary: %zu values take %zu of the page's %zu bytes", n,
                    used, len);
    cs->dict_ok = true;
    return 0;
}

/* ---- min/max against the values (Statistics, ColumnIndex) ---- */

/* Whether this column's min/max can be checked at all: 1 yes, 0 no (the
 * reason was reported), -1 stop. Decided once per chunk. */
static int minmax_allowed(walk *w, chunk_state *cs, const char *what)
{
    const col_order *o = &cs->ord;
    int rc = 1;
    if (cs->allowed != -2)
        return cs->allowed;
    if (o->kind == ORD_NONE)
        rc = note(w, "%s has min/max, but the sort order of %s is undefined "
                  "(LogicalTypes.md): no min/max may be written for it", what,
                  o->name) != 0 ? -1 : 0;
    else if (o->declared < 0 || o->declared > 3)
        rc = note(w, "%s has min/max, but the column's ColumnOrder is %s: readers "
                  "ignore them", what, o->declared < 0 ? "missing" : "unknown")
             != 0 ? -1 : 0;
    else if (o->declared == 2 && o->kind != ORD_FLOAT)
        rc = soft(w, "ColumnOrder IEEE_754_TOTAL_ORDER on a %s column (floating "
                  "point only)", o->name) != 0 ? -1 : 0;
    else if (o->declared == 3 && o->kind != ORD_INT96)
        rc = soft(w, "ColumnOrder INT96_TIMESTAMP_ORDER on a %s column (INT96 "
                  "only)", o->name) != 0 ? -1 : 0;
    else if (o->kind == ORD_INT96 && o->declared != 3)
        rc = note(w, "%s has INT96 min/max under %s: readers must ignore them; "
                  "writers that emit them must declare INT96_TIMESTAMP_ORDER", what,
                  o->declared == 0 ? "no ColumnOrder" : "TYPE_ORDER") != 0 ? -1 : 0;
    else if (o->declared == 0 && !w->said_no_orders) {
        w->said_no_orders = true;
        if (note(w, "%s has min/max, but FileMetaData has no column_orders, "
                 "without which their order is undefined (checked here by the "
                 "type-defined order)", what) != 0)
            rc = -1;
    }
    cs->allowed = rc;
    return rc;
}

typedef struct bound_chk {
    const char *what;             /* "ColumnIndex.min_values[3]" */
    const char *scope;            /* "page", "column chunk" */
    bool is_max;
    int exact;                    /* is_*_value_exact: 1, 0, -1 absent */
} bound_chk;

/* Remembers truncated byte-array bounds for check_truncation. */
static void record_cut(walk *w, const bound_chk *b, size_t len, size_t value_len)
{
    w->ncut++;
    if (len > w->cut_longest)
        w->cut_longest = len;
    if (value_len < w->cut_shortest) {
        w->cut_shortest = value_len;
        snprintf(w->cut_where, sizeof w->cut_where, "%s (row group %ld, column '%s')",
                 b->what, w->rg, w->col_path ? w->col_path : "?");
    }
}

/* A BYTE_ARRAY bound that differs from the value: PageIndex.md allows a
 * shorter one ("B" for "Blart Versenwald III"); a min must be a prefix of
 * the value, a max shorter than it; text stays valid UTF-8. */
static int check_cut(walk *w, const chunk_state *cs, const bound_chk *b, const uint8_t *p,
                     size_t len, vref want, const char *got_s, const char *want_s)
{
    const char *ext = b->is_max ? "largest" : "smallest";
    bool ok = len < want.len && (b->is_max || len == 0 || memcmp(p, want.p, len) == 0);
    if (!ok && note(w, "%s = %s, the %s's %s value is %s: a truncated %s must be %s",
                    b->what, got_s, b->scope, ext, want_s, b->is_max ? "max" : "min",
                    b->is_max ? "shorter than the value" : "a prefix of the value") != 0)
        return -1;
    if (cs->ord.text && !utf8_valid(p, len) && utf8_valid(want.p, want.len) &&
        note(w, "%s = %s is not valid UTF-8, but must still be a %s value (the %s's "
             "%s value %s is)", b->what, got_s, cs->ord.name, b->scope, ext, want_s) != 0)
        return -1;
    record_cut(w, b, len, want.len);
    return 0;
}

/* Bound equal to the value: the exact flag must not deny it, and TYPE_ORDER
 * zeros are written as -0.0 (min) and +0.0 (max). */
static int check_equal(walk *w, const chunk_state *cs, const bound_chk *b, const uint8_t *p,
                       const char *got_s)
{
    const col_order *o = &cs->ord;
    if (b->exact == 0)
        return note(w, "%s = %s is the %s's actual %s value, but is_%s_value_exact is "
                    "false", b->what, got_s, b->scope, b->is_max ? "largest" : "smallest",
                    b->is_max ? "max" : "min");
    if (o->kind == ORD_FLOAT && !o->total && float_val(o, p) == 0.0 &&
        float_neg(o, p) == b->is_max)
        return note(w, "%s is %s: a zero %s should be written as %s (parquet.thrift "
                    "ColumnOrder)", b->what, got_s, b->is_max ? "max" : "min",
                    b->is_max ? "+0.0" : "-0.0");
    return 0;
}

/* One stored bound against the true extreme `want` of the values. */
static int check_bound(walk *w, const chunk_state *cs, const bound_chk *b, const uint8_t *p,
                       size_t len, vref want)
{
    const col_order *o = &cs->ord;
    const char *ext = b->is_max ? "largest" : "smallest";
    char got_s[160], want_s[160];
    size_t fixed = fixed_len(o);
    if (p == NULL)
        p = no_bytes;
    fmt_val(o, p, len, got_s, sizeof got_s);
    fmt_val(o, want.p, want.len, want_s, sizeof want_s);
    w->nbounds++;
    if (fixed != 0 && len != fixed) {
        if (o->kind != ORD_BYTES && o->kind != ORD_DECIMAL)
            return soft(w, "%s is %zu bytes, a %s value is %zu", b->what, len,
                        o->name, fixed);
        return note(w, "%s is %zu bytes (%s), but a FIXED_LEN_BYTE_ARRAY(%zu) value "
                    "must be whole", b->what, len, got_s, fixed);
    }
    if (o->kind == ORD_FLOAT && !o->total && is_nan(o, p))
        return soft(w, "%s is %s: under TYPE_ORDER bounds must not be NaN", b->what, got_s);
    int c = ord_cmp(o, p, len, want.p, want.len);
    if (b->is_max ? c < 0 : c > 0)
        return soft(w, "%s = %s is %s the %s's %s value %s", b->what, got_s,
                    b->is_max ? "below" : "above", b->scope, ext, want_s);
    if (c == 0)
        return check_equal(w, cs, b, p, got_s);
    if (b->exact == 1)
        return soft(w, "%s = %s, but is_%s_value_exact is true and the %s's %s value "
                    "is %s", b->what, got_s, b->is_max ? "max" : "min", b->scope, ext,
                    want_s);
    if (o->kind == ORD_BYTES && o->width == 0)
        return check_cut(w, cs, b, p, len, want, got_s, want_s);
    return note(w, "%s = %s, the %s's %s value is %s: %s bounds are exact "
                "(only byte arrays may be truncated)", b->what, got_s, b->scope, ext,
                want_s, o->name);
}

/* Statistics field `fid` (binary) with its exact flag `xfid` (0: none). */
static int check_stat_field(walk *w, const chunk_state *cs, const tr_node *st, int16_t fid,
                            int16_t xfid, const char *what, const char *field,
                            const char *scope, vref want)
{
    if (!tr_has(st, fid))
        return 0;
    char name[128];
    size_t len;
    const uint8_t *p = tr_field_bin(st, fid, &len);
    snprintf(name, sizeof name, "%s.%s", what, field);
    bound_chk b = { name, scope, fid == 1 || fid == 5,
                    xfid && tr_has(st, xfid) ? tr_field_bool(st, xfid, false) : -1 };
    return check_bound(w, cs, &b, p, len, want);
}

/* The deprecated min/max are "determined by signed comparison only" and
 * "may be set when the column order is signed"; when min == max (one
 * distinct value, parquet-mr sets them then) every order agrees. */
static bool legacy_ok(const col_order *o, const tr_node *st)
{
    size_t la, lb;
    const uint8_t *a = tr_field_bin(st, 2, &la), *b = tr_field_bin(st, 1, &lb);
    if (a != NULL && b != NULL && la == lb && (la == 0 || memcmp(a, b, la) == 0))
        return true;
    return o->kind == ORD_SIGNED || o->kind == ORD_BOOLEAN ||
           (o->kind == ORD_FLOAT && o->width != 2);
}

static int check_nan_count(walk *w, chunk_state *cs, const tr_node *st, const vacc *v,
                           const char *what, const char *scope)
{
    bool isfloat = cs->ord.kind == ORD_FLOAT;
    if (tr_has(st, 9) && !isfloat)
        return note(w, "%s.nan_count is set for a %s column (FLOAT, DOUBLE and FLOAT16 "
                    "only)", what, cs->ord.name);
    if (tr_has(st, 9) && tr_field_int(st, 9, -1) != v->nans)
        return soft(w, "%s.nan_count is %lld, the %s holds %lld NaNs", what,
                    (long long)tr_field_int(st, 9, -1), scope, (long long)v->nans);
    if (!tr_has(st, 9) && isfloat && !cs->said_nan_count) {
        cs->said_nan_count = true;
        return note(w, "%s has no nan_count, which must be set for floating-point "
                    "columns even if zero (parquet.thrift ColumnOrder)", what);
    }
    return 0;
}

/* Statistics (page header or ColumnMetaData) against the values. */
static int check_stats_values(walk *w, chunk_state *cs, const tr_node *st, const vacc *v,
                              const char *what, const char *scope)
{
    const col_order *o = &cs->ord;
    if (st == NULL)
        return 0;
    if (check_nan_count(w, cs, st, v, what, scope) != 0)
        return -1;
    bool has_new = tr_has(st, 5) || tr_has(st, 6), has_old = tr_has(st, 1) || tr_has(st, 2);
    if (!has_new && !has_old)
        return 0;
    int ok = minmax_allowed(w, cs, what);
    if (ok <= 0)
        return ok;
    vref wmin = want_bound(o, v, false), wmax = want_bound(o, v, true);
    if (wmin.p == NULL && v->n == 0)
        return soft(w, "%s has min/max, but the %s has no non-null values", what, scope);
    if (wmin.p == NULL)
        return soft(w, "%s has min/max, but all %lld non-null values of the %s are NaN "
                    "(under TYPE_ORDER none may be written then)", what,
                    (long long)v->n, scope);
    if (check_stat_field(w, cs, st, 6, 8, what, "min_value", scope, wmin) != 0 ||
        check_stat_field(w, cs, st, 5, 7, what, "max_value", scope, wmax) != 0)
        return -1;
    if (!has_old)
        return 0;
    if (!legacy_ok(o, st))
        return note(w, "%s sets the deprecated min/max (signed order only) for a %s "
                    "column", what, o->name);
    if (check_stat_field(w, cs, st, 2, 0, what, "min", scope, wmin) != 0)
        return -1;
    return check_stat_field(w, cs, st, 1, 0, what, "max", scope, wmax);
}

static int check_ci_nans(walk *w, const chunk_state *cs, const tr_node *ci)
{
    const tr_node *nans = tr_field_list(ci, 8);
    if (nans == NULL)
        return 0;
    if (cs->ord.kind != ORD_FLOAT)
        return note(w, "ColumnIndex.nan_counts is set for a %s column (FLOAT, DOUBLE "
                    "and FLOAT16 only)", cs->ord.name);
    for (size_t k = 0; k < cs->npages; k++) {
        const page_info *pi = &cs->pages[k];
        int64_t got = tr_int(tr_list_at(nans, k));
        if (!pi->vals_ok || got == pi->v.nans)
            continue;
        at(w, w->rg, w->col, (long)pi->ordinal, (long long)pi->offset);
        w->page_kind = pqf_page_type_name(pi->type);
        return soft(w, "ColumnIndex.nan_counts[%zu] is %lld, the page holds %lld NaNs",
                    k, (long long)got, (long long)pi->v.nans);
    }
    return 0;
}

/* Pages whose bounds say something: not null pages, count not unknown. */
static bool ci_page_bounded(const tr_node *ci, size_t k)
{
    const tr_node *nc = tr_field_list(ci, 5);
    return !tr_bool(tr_list_at(tr_field_list(ci, 1), k)) &&
           (nc == NULL || tr_int(tr_list_at(nc, k)) >= 0);
}

static int ci_page_bounds(walk *w, const chunk_state *cs, const tr_node *ci, size_t k)
{
    const page_info *pi = &cs->pages[k];
    const col_order *o = &cs->ord;
    at(w, w->rg, w->col, (long)pi->ordinal, (long long)pi->offset);
    w->page_kind = pqf_page_type_name(pi->type);
    vref wmin = want_bound(o, &pi->v, false), wmax = want_bound(o, &pi->v, true);
    if (wmin.p == NULL && pi->v.nans > 0)
        return soft(w, "all %lld non-null values of data page %zu are NaN: under "
                    "TYPE_ORDER a ColumnIndex must not be written for this chunk",
                    (long long)pi->v.n, k);
    if (wmin.p == NULL)
        return 0;   /* no values: null_pages was checked */
    char name[64];
    size_t len;
    const uint8_t *p = tr_bin(tr_list_at(tr_field_list(ci, 2), k), &len);
    snprintf(name, sizeof name, "ColumnIndex.min_values[%zu]", k);
    bound_chk b = { name, "page", false, -1 };
    if (check_bound(w, cs, &b, p, len, wmin) != 0)
        return -1;
    p = tr_bin(tr_list_at(tr_field_list(ci, 3), k), &len);
    snprintf(name, sizeof name, "ColumnIndex.max_values[%zu]", k);
    b.is_max = true;
    return check_bound(w, cs, &b, p, len, wmax);
}

/* ASCENDING / DESCENDING: min_values and max_values of the non-null pages
 * never decrease / increase (PageIndex.md, parquet.thrift BoundaryOrder). */
static int check_boundary_order(walk *w, const chunk_state *cs, const tr_node *ci)
{
    const col_order *o = &cs->ord;
    int64_t bo = tr_field_int(ci, 4, -1);
    if (bo != 1 && bo != 2)
        return 0;
    int want = bo == 1 ? 1 : -1;   /* cmp(prev, next) * want > 0 breaks it */
    size_t fixed = fixed_len(o), prev = SIZE_MAX;
    for (size_t k = 0; k < cs->npages; k++) {
        if (!ci_page_bounded(ci, k))
            continue;
        for (int16_t fid = 2; fid <= 3 && prev != SIZE_MAX; fid++) {
            size_t la, lb;
            const uint8_t *a = tr_bin(tr_list_at(tr_field_list(ci, fid), prev), &la);
            const uint8_t *b = tr_bin(tr_list_at(tr_field_list(ci, fid), k), &lb);
            if (fixed != 0 && (la != fixed || lb != fixed))
                continue;   /* reported by ci_page_bounds */
            if (ord_cmp(o, a ? a : no_bytes, la, b ? b : no_bytes, lb) * want <= 0)
                continue;
            char as[160], bs[160];
            const char *list = fid == 2 ? "min_values" : "max_values";
            at(w, w->rg, w->col, (long)cs->pages[k].ordinal, (long long)cs->pages[k].offset);
            w->page_kind = pqf_page_type_name(cs->pages[k].type);
            return soft(w, "ColumnIndex.boundary_order is %s, but %s[%zu] = %s %s "
                        "%s[%zu] = %s", bo == 1 ? "ASCENDING" : "DESCENDING", list, prev,
                        fmt_val(o, a ? a : no_bytes, la, as, sizeof as),
                        bo == 1 ? ">" : "<", list, k,
                        fmt_val(o, b ? b : no_bytes, lb, bs, sizeof bs));
        }
        prev = k;
    }
    return 0;
}

/* --pages: each ColumnIndex entry with the file offset of its bounds
 * (tests patch them to prove the checks fail). */
static void dump_ci(const walk *w, const chunk_state *cs, const tr_node *ci)
{
    static const char *const orders[] = { "UNORDERED", "ASCENDING", "DESCENDING" };
    const tr_node *bo = tr_field(ci, 4);
    int64_t b = tr_int(bo);
    char s[160];
    /* A compact-protocol i32 of 0..2 is one zigzag byte ending the field. */
    printf("      ColumnIndex of column %ld '%s': boundary_order %s, byte at %lld\n",
           w->col, w->col_path ? w->col_path : "?", b >= 0 && b <= 2 ? orders[b] : "?",
           bo ? (long long)cs->ch.column_index_offset + (long long)bo->end - 1 : -1LL);
    for (size_t k = 0; k < tr_list_len(tr_field_list(ci, 2)) && k < cs->npages; k++) {
        printf("      ColumnIndex[%zu] of column %ld '%s', page at %zu: null_page %d", k,
               w->col, w->col_path ? w->col_path : "?", cs->pages[k].offset,
               tr_bool(tr_list_at(tr_field_list(ci, 1), k)));
        for (int16_t fid = 2; fid <= 3; fid++) {
            size_t len;
            const uint8_t *p = tr_bin(tr_list_at(tr_field_list(ci, fid), k), &len);
            if (p == NULL)
                p = no_bytes;
            printf(", %s at %zu +%zu = %s", fid == 2 ? "min" : "max",
                   len ? (size_t)(p - w->f.data) : 0, len,
                   fmt_val(&cs->ord, p, len, s, sizeof s));
        }
        printf("\n");
    }
}

/* ColumnIndex min_values/max_values against the values of each page. */
static int check_ci_bounds(walk *w, chunk_state *cs, const tr_node *ci)
{
    const col_order *o = &cs->ord;
    at(w, w->rg, w->col, -1, -1);
    if (w->o->pages)
        dump_ci(w, cs, ci);
    size_t first = 0;   /* the first page with bounds, if any */
    while (first < cs->npages && !ci_page_bounded(ci, first))
        first++;
    if (first < cs->npages && o->kind == ORD_NONE) {
        at(w, w->rg, w->col, (long)cs->pages[first].ordinal,
           (long long)cs->pages[first].offset);
        w->page_kind = pqf_page_type_name(cs->pages[first].type);
    }
    if (first < cs->npages && o->kind == ORD_NONE)
        return note(w, "ColumnIndex.min_values[%zu]/max_values[%zu] hold bounds, but "
                    "the sort order of %s is undefined: no min/max may be written for "
                    "it", first, first, o->name);
    if (o->kind == ORD_INT96 && o->declared != 3)
        return note(w, "ColumnIndex on an INT96 column without INT96_TIMESTAMP_ORDER, "
                    "which parquet.thrift says must not be written");
    if (o->kind == ORD_NONE)
        return 0;   /* only null pages: nothing to compare */
    int ok = minmax_allowed(w, cs, "ColumnIndex");
    if (ok <= 0)
        return ok;
    if (check_ci_nans(w, cs, ci) != 0)
        return -1;
    for (size_t k = 0; k < cs->npages; k++)
        if (ci_page_bounded(ci, k) && cs->pages[k].vals_ok &&
            ci_page_bounds(w, cs, ci, k) != 0)
            return -1;
    at(w, w->rg, w->col, -1, -1);
    return check_boundary_order(w, cs, ci);
}

/* A value no longer than the truncation length is stored whole. The
 * length is not in the file, but a writer that keeps L bytes of some
 * truncated bound truncates at >= L, so a value of <= L bytes that was cut
 * elsewhere in the file shows inconsistent truncation. */
static int check_truncation(walk *w)
{
    if (w->cut_shortest > w->cut_longest)
        return 0;
    at(w, -1, -1, -1, -1);
    return note(w, "byte-array bounds are truncated inconsistently: %s cuts a "
                "%zu-byte value, while another truncated bound keeps %zu bytes",
                w->cut_where, w->cut_shortest, w->cut_longest);
}

/* ---- pages ---- */

static page_info *push_page(walk *w, chunk_state *cs)
{
    if (cs->npages == cs->cap) {
        size_t ncap = cs->cap ? cs->cap * 2 : 16;
        page_info *p = realloc(cs->pages, ncap * sizeof *p);
        if (p == NULL) {
            hard(w, "out of memory");
            return NULL;
        }
        cs->pages = p;
        cs->cap = ncap;
    }
    page_info *pi = &cs->pages[cs->npages];
    memset(pi, 0, sizeof *pi);
    pi->def_hist = calloc((size_t)cs->max_def + 1, sizeof *pi->def_hist);
    pi->rep_hist = calloc((size_t)cs->max_rep + 1, sizeof *pi->rep_hist);
    cs->npages++;   /* counted now so chunk_free releases the histograms */
    if (pi->def_hist == NULL || pi->rep_hist == NULL) {
        hard(w, "out of memory");
        return NULL;
    }
    return pi;
}

static void chunk_free(chunk_state *cs)
{
    for (size_t i = 0; i < cs->npages; i++) {
        free(cs->pages[i].def_hist);
        free(cs->pages[i].rep_hist);
        free(cs->pages[i].own);
    }
    free(cs->pages);
    pqt_bytes_free(&cs->dict);
}

/* Legacy layout (parquet-mr 1.12 in alltypes_tiny_pages.parquet, older
 * parquet-cpp): no dictionary_page_offset, and data_page_offset points at
 * the dictionary page. Readers detect it from the first page's type. */
static int check_legacy_dict(walk *w, chunk_state *cs, const pqf_page *pg)
{
    if (cs->ch.dictionary_page_offset >= 0 ||
        cs->ch.data_page_offset != (int64_t)pg->offset)
        return soft(w, "dictionary_page_offset is %lld, but the dictionary "
                    "page is at %zu", (long long)cs->ch.dictionary_page_offset,
                    pg->offset);
    cs->dict_at_data_offset = true;
    return note(w, "no dictionary_page_offset; data_page_offset points at the "
                "dictionary page (legacy writers)");
}

/* Dictionary first and at most once; the offsets in ColumnMetaData must
 * point at the dictionary page and at the first data page. */
static int check_page_order(walk *w, chunk_state *cs, const pqf_page *pg)
{
    const pqf_chunk *ch = &cs->ch;
    if (pg->type == PQ_PAGE_DICTIONARY) {
        if (pg->ordinal != 0)
            return hard(w, "dictionary page is not the first page of the chunk");
        if (ch->dictionary_page_offset != (int64_t)pg->offset)
            return check_legacy_dict(w, cs, pg);
        return 0;
    }
    if (pqf_page_is_data(pg) && cs->npages == 0 && !cs->dict_at_data_offset &&
        ch->data_page_offset != (int64_t)pg->offset)
        return soft(w, "data_page_offset is %lld, but the first data page is "
                    "at %zu", (long long)ch->data_page_offset, pg->offset);
    return 0;
}

/* PageHeader.crc: CRC-32 (zlib polynomial) of the page bytes as stored,
 * i.e. after compression (parquet.thrift PageHeader.crc). */
static int check_crc(walk *w, const pqf_page *pg)
{
    if (!pg->has_crc)
        return 0;
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32(c, pg->data, (uInt)pg->compressed_size);
    if ((uint32_t)c != pg->crc)
        return soft(w, "crc mismatch: header has 0x%08x, the %d stored bytes "
                    "give 0x%08x", pg->crc, pg->compressed_size, (uint32_t)c);
    return 0;
}

static int check_dict_page(walk *w, chunk_state *cs, const pqf_page *pg)
{
    cs->has_dict = true;
    cs->dict_encoding = pg->encoding;
    if (pg->num_values < 0)
        return hard(w, "dictionary page num_values %d", pg->num_values);
    if (pg->encoding != PQ_ENC_PLAIN && pg->encoding != PQ_ENC_PLAIN_DICTIONARY)
        return soft(w, "dictionary page encoding %s, expected PLAIN or "
                    "PLAIN_DICTIONARY", pqf_encoding_name(pg->encoding));
    uint8_t *buf;
    size_t len;
    pq_err err;
    if (pqf_page_decompress(pg, (pq_codec)cs->ch.codec, &buf, &len, &err) != 0)
        return hard(w, "decompress: %s", err.msg);
    int rc = decode_dict(w, cs, pg, buf, len);
    free(buf);
    return rc;
}

/* V2 header consistency, before anything trusts its lengths. */
static int check_v2_header(walk *w, const pqf_page *pg)
{
    if (pg->num_values < 0 || pg->num_nulls < 0 || pg->num_rows < 0)
        return hard(w, "v2 page with negative counts (values %d, nulls %d, "
                    "rows %d)", pg->num_values, pg->num_nulls, pg->num_rows);
    if (pg->num_rows > pg->num_values)
        return soft(w, "v2 num_rows %d > num_values %d", pg->num_rows, pg->num_values);
    if (pg->num_nulls > pg->num_values)
        return soft(w, "v2 num_nulls %d > num_values %d", pg->num_nulls, pg->num_values);
    int64_t lv = (int64_t)pg->rep_len + pg->def_len;
    if (pg->rep_len < 0 || pg->def_len < 0 || lv > pg->compressed_size ||
        lv > pg->uncompressed_size)
        return hard(w, "v2 level lengths (rep %d + def %d) do not fit the page "
                    "(%d compressed, %d uncompressed)", pg->rep_len, pg->def_len,
                    pg->compressed_size, pg->uncompressed_size);
    return 0;
}

/* For flat columns a null is def < max_def. For repeated ones the spec
 * does not say whether null and empty lists count as nulls: parquet-mr
 * counts every def < max_def, parquet-cpp 1.5 (list_columns.parquet) only
 * null elements (def == max_def - 1 of an optional leaf). Both are
 * accepted there, and only there. */
static bool nulls_match(const chunk_state *cs, int64_t nulls, int64_t leaf_nulls,
                        int64_t claimed)
{
    return claimed == nulls || (cs->max_rep > 0 && claimed == leaf_nulls);
}

/* Other counts in repeated columns are noted, not failed, for the same
 * reason (DuckDB 1.5 counts more nulls than there are undefined levels in
 * list<struct> leaves); --strict holds our own writer to the two above. */
static int nulls_mismatch(walk *w, const chunk_state *cs, const char *what,
                          int64_t claimed, int64_t nulls)
{
    if (cs->max_rep > 0)
        return note(w, "%s %lld in a repeated column, the levels say %lld "
                    "(def < max_def)", what, (long long)claimed, (long long)nulls);
    return soft(w, "%s %lld, the levels say %lld", what, (long long)claimed,
                (long long)nulls);
}

/* Nulls = def < max_def, rows = rep == 0, both from the histograms; only
 * repeated columns need the first level (does the page start a row?). */
static int page_levels(walk *w, const chunk_state *cs, const pqf_page *pg,
                       const pqf_parts *parts, page_info *pi)
{
    size_t n = (size_t)pg->num_values;
    pq_err err;
    if (pqf_levels_decode(parts->def, parts->def_len, cs->max_def, n, NULL,
                          pi->def_hist, &err) != 0)
        return hard(w, "definition levels: %s", err.msg);
    pi->nulls = (int64_t)n - pi->def_hist[cs->max_def];
    if (cs->max_def > 0 && tr_field_int(cs->ch.leaf->elem, 3, -1) == PQ_OPTIONAL)
        pi->leaf_nulls = pi->def_hist[cs->max_def - 1];
    uint16_t *lv = cs->max_rep > 0 ? malloc(n ? n * sizeof *lv : 1) : NULL;
    if (cs->max_rep > 0 && lv == NULL)
        return hard(w, "out of memory for %zu levels", n);
    int rc = pqf_levels_decode(parts->rep, parts->rep_len, cs->max_rep, n, lv,
                               pi->rep_hist, &err);
    pi->rows = pi->rep_hist[0];
    pi->row_start = (n == 0 || lv == NULL || lv[0] == 0);
    free(lv);
    if (rc != 0)
        return hard(w, "repetition levels: %s", err.msg);
    return 0;
}

/* Bytes per PLAIN value of a fixed-width type; 0 = variable or bit-packed. */
static size_t plain_width(const chunk_state *cs)
{
    switch (cs->ch.type) {
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        return cs->ch.leaf->type_length > 0 ? (size_t)cs->ch.leaf->type_length : 0;
    }
    return 0;
}

/* PLAIN BYTE_ARRAY: 4-byte little-endian length, then the bytes. */
static int plain_byte_arrays(walk *w, const pqf_parts *parts, int64_t want)
{
    size_t pos = 0, len = parts->values_len;
    const uint8_t *p = parts->values;
    int64_t n = 0;
    while (pos < len && n < want) {
        if (len - pos < 4)
            return soft(w, "PLAIN value %lld: length prefix truncated", (long long)n);
        size_t l = (size_t)p[pos] | (size_t)p[pos + 1] << 8 |
                   (size_t)p[pos + 2] << 16 | (size_t)p[pos + 3] << 24;
        if (l > len - pos - 4)
            return soft(w, "PLAIN value %lld: %zu bytes claimed, %zu left",
                        (long long)n, l, len - pos - 4);
        pos += 4 + l;
        n++;
    }
    if (n != want || pos != len)
        return soft(w, "PLAIN byte arrays: %lld values in %zu of %zu bytes, "
                    "levels say %lld non-null", (long long)n, pos, len,
                    (long long)want);
    return 0;
}

/* A PLAIN page holds exactly one value per non-null level. */
static int check_plain_size(walk *w, const chunk_state *cs, const pqf_parts *parts,
                            int64_t nonnull)
{
    if (cs->ch.type == PQ_BYTE_ARRAY)
        return plain_byte_arrays(w, parts, nonnull);
    size_t width = plain_width(cs);
    size_t want = cs->ch.type == PQ_BOOLEAN ? ((size_t)nonnull + 7) / 8
                                            : (size_t)nonnull * width;
    if ((width == 0 && cs->ch.type != PQ_BOOLEAN) || parts->values_len == want)
        return 0;
    return soft(w, "PLAIN values take %zu bytes, %lld non-null %s values need %zu",
                parts->values_len, (long long)nonnull,
                pqf_type_name(cs->ch.type), want);
}

/* Decodes the page's non-null values (dictionary pages through the
 * dictionary) and keeps their count, NaNs and true min/max in pi for the
 * Statistics and ColumnIndex checks. */
static int check_page_values(walk *w, const chunk_state *cs, const pqf_page *pg,
                             const pqf_parts *parts, page_info *pi)
{
    int64_t nonnull = pi->values - pi->nulls;
    if (pg->encoding == PQ_ENC_PLAIN && check_plain_size(w, cs, parts, nonnull) != 0)
        return -1;
    if ((uint64_t)nonnull > MAX_PAGE_VALUES)
        return hard(w, "%lld non-null values: pq_walk decodes at most %zu per page",
                    (long long)nonnull, MAX_PAGE_VALUES);
    page_scratch s = { 0 };
    vacc a = { 0 };
    int before = w->nerr;
    int rc = nonnull == 0 ? 0 : decode_values(w, cs, pg, parts, (size_t)nonnull, &a, &s);
    if (rc == 0 && w->nerr == before) {
        if (pin_vacc(&a, &pi->own) != 0)
            rc = hard(w, "out of memory");
        pi->v = a;
        pi->vals_ok = rc == 0;
    }
    scratch_free(&s);
    return rc;
}

static int check_data_body(walk *w, chunk_state *cs, const pqf_page *pg,
                           page_info *pi)
{
    uint8_t *buf;
    size_t len;
    pq_err err;
    if (pqf_page_decompress(pg, (pq_codec)cs->ch.codec, &buf, &len, &err) != 0)
        return hard(w, "decompress: %s", err.msg);
    pqf_parts parts;
    int rc = pqf_page_split(pg, buf, len, cs->max_rep, cs->max_def, &parts, &err);
    if (rc != 0)
        rc = hard(w, "page layout: %s", err.msg);
    if (rc == 0)
        rc = page_levels(w, cs, pg, &parts, pi);
    if (rc == 0)
        rc = check_page_values(w, cs, pg, &parts, pi);
    free(buf);
    return rc;
}

static int check_data_page(walk *w, chunk_state *cs, const pqf_page *pg)
{
    if (pg->num_values < 0)
        return hard(w, "num_values %d", pg->num_values);
    if (pg->type == PQ_PAGE_DATA_V2 && check_v2_header(w, pg) != 0)
        return -1;
    page_info *pi = push_page(w, cs);
    if (pi == NULL)
        return -1;
    pi->offset = pg->offset;
    pi->ordinal = pg->ordinal;
    pi->span = pg->header_len + (size_t)pg->compressed_size;
    pi->type = pg->type;
    pi->encoding = pg->encoding;
    pi->values = pg->num_values;
    if (check_data_body(w, cs, pg, pi) != 0)
        return -1;
    cs->sum_values += pi->values;
    cs->sum_rows += pi->rows;
    int64_t claimed = tr_field_int(pg->stats, 3, -1);
    if (tr_has(pg->stats, 3) && !nulls_match(cs, pi->nulls, pi->leaf_nulls, claimed) &&
        nulls_mismatch(w, cs, "page Statistics.null_count", claimed, pi->nulls) != 0)
        return -1;
    if (pi->vals_ok &&
        check_stats_values(w, cs, pg->stats, &pi->v, "page Statistics", "page") != 0)
        return -1;
    if (pg->type != PQ_PAGE_DATA_V2)
        return 0;
    if (pi->nulls != pg->num_nulls)
        return soft(w, "v2 num_nulls %d, definition levels say %lld",
                    pg->num_nulls, (long long)pi->nulls);
    if (pi->rows != pg->num_rows)
        return soft(w, "v2 num_rows %d, repetition levels say %lld",
                    pg->num_rows, (long long)pi->rows);
    return 0;
}

static int check_page(walk *w, chunk_state *cs, const pqf_page *pg)
{
    at(w, w->rg, w->col, (long)pg->ordinal, (long long)pg->offset);
    w->page_kind = pqf_page_type_name(pg->type);
    if (w->o->pages)
        dump_page(pg);
    if (check_page_order(w, cs, pg) != 0 || check_crc(w, pg) != 0)
        return -1;
    cs->nall++;
    cs->sum_comp += (int64_t)pg->header_len + pg->compressed_size;
    cs->sum_uncomp += (int64_t)pg->header_len + pg->uncompressed_size;
    if (pg->type == PQ_PAGE_DICTIONARY)
        return check_dict_page(w, cs, pg);
    if (!pqf_page_is_data(pg))
        return soft(w, "unexpected %s in a column chunk", pqf_page_type_name(pg->type));
    return check_data_page(w, cs, pg);
}

static int walk_pages(walk *w, chunk_state *cs)
{
    pqf_pages it;
    pq_err err;
    if (pqf_pages_init(&it, &w->f, &cs->ch, &err) != 0)
        return hard(w, "%s", err.msg);
    int rc;
    while ((rc = pqf_pages_next(&it, &err)) == 1) {
        if (check_page(w, cs, &it.page) != 0) {
            pqf_pages_free(&it);
            return -1;
        }
    }
    pqf_pages_free(&it);
    w->total_pages += cs->nall;
    if (rc < 0) {
        at(w, w->rg, w->col, (long)it.ordinal, (long long)it.pos);
        w->page_kind = "unparsed";
        return hard(w, "%s", err.msg);
    }
    at(w, w->rg, w->col, -1, -1);
    return 0;
}

/* ---- column chunk totals and metadata ---- */

static int check_totals(walk *w, const chunk_state *cs, int64_t rg_rows)
{
    const pqf_chunk *ch = &cs->ch;
    if (cs->npages == 0)
        return soft(w, "chunk has no data pages");
    if (ch->dictionary_page_offset >= 0 && !cs->has_dict)
        return soft(w, "dictionary_page_offset %lld set, but the chunk has no "
                    "dictionary page", (long long)ch->dictionary_page_offset);
    if (cs->sum_comp != ch->total_compressed_size)
        return soft(w, "pages (headers + compressed_page_size) total %lld bytes, "
                    "total_compressed_size is %lld", (long long)cs->sum_comp,
                    (long long)ch->total_compressed_size);
    if (cs->sum_uncomp != ch->total_uncompressed_size)
        return soft(w, "pages (headers + uncompressed_page_size) total %lld "
                    "bytes, total_uncompressed_size is %lld",
                    (long long)cs->sum_uncomp, (long long)ch->total_uncompressed_size);
    if (cs->sum_values != ch->num_values)
        return soft(w, "data pages hold %lld values, num_values is %lld",
                    (long long)cs->sum_values, (long long)ch->num_values);
    if (cs->sum_rows != rg_rows)
        return soft(w, "data pages hold %lld rows, the row group has %lld",
                    (long long)cs->sum_rows, (long long)rg_rows);
    return 0;
}

/* SizeStatistics histograms are the sums of the per-page histograms. */
static int check_size_hist(walk *w, const chunk_state *cs, const tr_node *list,
                           const char *name, bool rep)
{
    size_t levels = (size_t)(rep ? cs->max_rep : cs->max_def) + 1;
    if (list == NULL)
        return 0;
    if (tr_list_len(list) != levels)
        return soft(w, "SizeStatistics.%s has %zu entries, max level is %zu",
                    name, tr_list_len(list), levels - 1);
    for (size_t l = 0; l < levels; l++) {
        int64_t sum = 0;
        for (size_t k = 0; k < cs->npages; k++)
            sum += rep ? cs->pages[k].rep_hist[l] : cs->pages[k].def_hist[l];
        if (tr_int(tr_list_at(list, l)) != sum)
            return soft(w, "SizeStatistics.%s[%zu] is %lld, the levels say %lld",
                        name, l, (long long)tr_int(tr_list_at(list, l)),
                        (long long)sum);
    }
    return 0;
}

/* The chunk's values: all pages merged; false if some page did not decode. */
static bool chunk_values(const chunk_state *cs, vacc *v)
{
    memset(v, 0, sizeof *v);
    for (size_t k = 0; k < cs->npages; k++) {
        if (!cs->pages[k].vals_ok)
            return false;
        merge_vacc(&cs->ord, v, &cs->pages[k].v);
    }
    return true;
}

/* SizeStatistics.unencoded_byte_array_data_bytes: the BYTE_ARRAY value
 * lengths, without the 4-byte prefixes (parquet.thrift SizeStatistics). */
static int check_ba_bytes(walk *w, const chunk_state *cs, const tr_node *ss, const vacc *v)
{
    if (!tr_has(ss, 1))
        return 0;
    if (cs->ch.type != PQ_BYTE_ARRAY)
        return note(w, "SizeStatistics.unencoded_byte_array_data_bytes is set for a %s "
                    "column (BYTE_ARRAY only)", pqf_type_name(cs->ch.type));
    if (tr_field_int(ss, 1, -1) != v->ba_bytes)
        return soft(w, "SizeStatistics.unencoded_byte_array_data_bytes is %lld, the "
                    "chunk's values hold %lld bytes", (long long)tr_field_int(ss, 1, -1),
                    (long long)v->ba_bytes);
    return 0;
}

/* Chunk statistics: counts from the levels, min/max from the values. */
static int check_chunk_stats(walk *w, chunk_state *cs)
{
    const tr_node *st = tr_field_struct(cs->ch.md, 12);
    int64_t nulls = 0, leaf_nulls = 0;
    for (size_t k = 0; k < cs->npages; k++) {
        nulls += cs->pages[k].nulls;
        leaf_nulls += cs->pages[k].leaf_nulls;
    }
    int64_t claimed = tr_field_int(st, 3, -1);
    if (tr_has(st, 3) && !nulls_match(cs, nulls, leaf_nulls, claimed) &&
        nulls_mismatch(w, cs, "Statistics.null_count", claimed, nulls) != 0)
        return -1;
    const tr_node *ss = tr_field_struct(cs->ch.md, 16);
    vacc v;
    if (chunk_values(cs, &v) &&
        (check_stats_values(w, cs, st, &v, "ColumnMetaData.statistics",
                            "column chunk") != 0 ||
         check_ba_bytes(w, cs, ss, &v) != 0))
        return -1;
    at(w, w->rg, w->col, -1, -1);
    if (check_size_hist(w, cs, tr_field_list(ss, 2), "repetition_level_histogram",
                        true) != 0)
        return -1;
    return check_size_hist(w, cs, tr_field_list(ss, 3),
                           "definition_level_histogram", false);
}

static bool listed(const tr_node *list, int64_t v)
{
    for (size_t i = 0; i < tr_list_len(list); i++)
        if (tr_int(tr_list_at(list, i)) == v)
            return true;
    return false;
}

/* DuckDB 1.5 lists PLAIN_DICTIONARY but not the PLAIN of the dictionary
 * page itself; a dictionary encoding in the list implies the dictionary. */
static int check_dict_listed(walk *w, const chunk_state *cs, const tr_node *enc)
{
    if (listed(enc, PQ_ENC_PLAIN_DICTIONARY) || listed(enc, PQ_ENC_RLE_DICTIONARY))
        return note(w, "dictionary page encoding %s is not in ColumnMetaData."
                    "encodings, only the dictionary encoding of the data pages",
                    pqf_encoding_name(cs->dict_encoding));
    return soft(w, "dictionary page encoding %s is not in "
                "ColumnMetaData.encodings", pqf_encoding_name(cs->dict_encoding));
}

/* ColumnMetaData.encodings is "the set of all encodings used for pages in
 * this column chunk"; level encodings are not required to be listed
 * (writers disagree on them), value encodings are. */
static int check_encodings(walk *w, const chunk_state *cs)
{
    const tr_node *enc = tr_field_list(cs->ch.md, 2);
    if (cs->has_dict && !listed(enc, cs->dict_encoding))
        return check_dict_listed(w, cs, enc);
    for (size_t i = 0; i < cs->npages; i++)
        if (!listed(enc, cs->pages[i].encoding)) {
            at(w, w->rg, w->col, -1, (long long)cs->pages[i].offset);
            return soft(w, "data page encoding %s is not in "
                        "ColumnMetaData.encodings",
                        pqf_encoding_name(cs->pages[i].encoding));
        }
    return 0;
}

static int64_t count_pages(const chunk_state *cs, int64_t type, int64_t enc)
{
    int64_t n = 0;
    if (type == PQ_PAGE_DICTIONARY)
        return (cs->has_dict && cs->dict_encoding == enc) ? 1 : 0;
    for (size_t i = 0; i < cs->npages; i++)
        n += (cs->pages[i].type == type && cs->pages[i].encoding == enc);
    return n;
}

/* encoding_stats, when present, must count exactly the pages walked. */
static int check_encoding_stats(walk *w, const chunk_state *cs)
{
    const tr_node *es = tr_field_list(cs->ch.md, 13);
    if (es == NULL)
        return 0;
    int64_t listed_total = 0;
    for (size_t i = 0; i < tr_list_len(es); i++) {
        const tr_node *e = tr_list_at(es, i);
        int64_t type = tr_field_int(e, 1, -1), enc = tr_field_int(e, 2, -1);
        int64_t count = tr_field_int(e, 3, -1);
        int64_t got = count_pages(cs, type, enc);
        listed_total += count;
        if (got != count)
            return soft(w, "encoding_stats[%zu] says %lld %s pages with %s, "
                        "found %lld", i, (long long)count,
                        pqf_page_type_name((int)type),
                        pqf_encoding_name((int)enc), (long long)got);
    }
    if (listed_total != (int64_t)cs->nall)
        return soft(w, "encoding_stats count %lld pages, the chunk has %zu",
                    (long long)listed_total, cs->nall);
    return 0;
}

static int check_chunk_meta(walk *w, const pqf_chunk *ch)
{
    if (ch->leaf == NULL)
        return hard(w, "more column chunks than schema leaves (%zu)", w->f.nleaves);
    if (!pqf_leaf_matches(&w->f, ch->leaf, tr_field_list(ch->md, 3)))
        return soft(w, "path_in_schema does not name schema leaf %ld", w->col);
    if (ch->type != ch->leaf->type)
        return soft(w, "ColumnMetaData.type %s, schema says %s",
                    pqf_type_name(ch->type), pqf_type_name(ch->leaf->type));
    if (ch->num_values < 0 || ch->total_compressed_size < 0 ||
        ch->total_uncompressed_size < 0)
        return hard(w, "negative num_values or sizes in ColumnMetaData");
    if (ch->dictionary_page_offset >= 0 &&
        ch->dictionary_page_offset >= ch->data_page_offset)
        return soft(w, "dictionary_page_offset %lld is not before "
                    "data_page_offset %lld", (long long)ch->dictionary_page_offset,
                    (long long)ch->data_page_offset);
    /* Deprecated and used inconsistently (parquet.thrift): 0, or some
     * offset inside the data area, is all one can ask for. */
    if (ch->file_offset != 0 &&
        (ch->file_offset < 4 || (uint64_t)ch->file_offset > w->f.footer_offset))
        return soft(w, "ColumnChunk.file_offset %lld is outside the data area",
                    (long long)ch->file_offset);
    return 0;
}

/* ---- page indexes (PageIndex.md) and bloom filters (BloomFilter.md) ---- */

/* Parses the struct at [off, off + len), which must lie in the data area
 * and be used exactly, and records its region. */
static int parse_index(walk *w, int64_t off, int64_t len, const tr_sspec *spec,
                       tr_node **out)
{
    *out = NULL;
    at(w, w->rg, w->col, -1, (long long)off);
    if (off < 4 || len <= 0 || (uint64_t)off > w->f.footer_offset ||
        (uint64_t)len > w->f.footer_offset - (uint64_t)off)
        return hard(w, "%s [%lld, +%lld) is not inside the data area [4, %zu)",
                    spec->name, (long long)off, (long long)len, w->f.footer_offset);
    size_t used;
    pq_err err;
    if (pqf_parse_at(&w->f, (size_t)off, (size_t)len, spec, out, &used, &err) != 0)
        return hard(w, "%s", err.msg);
    if (add_region(w, (size_t)off, (size_t)(off + len), "%s of row group %ld "
                   "column %ld", spec->name, w->rg, w->col) != 0)
        return -1;
    if (used != (size_t)len)
        return soft(w, "%s uses %zu of its %lld bytes", spec->name, used, (long long)len);
    return 0;
}

/* offset_index_offset and _length (likewise for the column index) come as
 * a pair. Returns 1 when present, 0 when absent, -1 on a problem. */
static int index_present(walk *w, int64_t off, int64_t len, const char *what)
{
    if (off < 0 && len < 0)
        return 0;
    if (off < 0 || len < 0) {
        at(w, w->rg, w->col, -1, -1);
        return soft(w, "%s offset and length must both be set (%lld, %lld)",
                    what, (long long)off, (long long)len) ? -1 : 0;
    }
    return 1;
}

static int check_page_location(walk *w, const chunk_state *cs, size_t k,
                               const tr_node *loc, int64_t first_row)
{
    const page_info *pi = &cs->pages[k];
    int64_t off = tr_field_int(loc, 1, -1), size = tr_field_int(loc, 2, -1);
    int64_t row = tr_field_int(loc, 3, -1);
    at(w, w->rg, w->col, -1, (long long)pi->offset);
    if (off != (int64_t)pi->offset)
        return soft(w, "OffsetIndex page_locations[%zu].offset %lld, data page "
                    "%zu is at %zu", k, (long long)off, k, pi->offset);
    if (size != (int64_t)pi->span)
        return soft(w, "OffsetIndex page_locations[%zu].compressed_page_size "
                    "%lld, the page (header + data) is %zu bytes", k,
                    (long long)size, pi->span);
    if (row != first_row)
        return soft(w, "OffsetIndex page_locations[%zu].first_row_index %lld, "
                    "the levels say %lld", k, (long long)row, (long long)first_row);
    if (!pi->row_start)
        return soft(w, "data page %zu does not start at a row boundary, as an "
                    "OffsetIndex requires", k);
    return 0;
}

/* Per page, as SizeStatistics.unencoded_byte_array_data_bytes. */
static int check_oi_ba_bytes(walk *w, const chunk_state *cs, const tr_node *ub)
{
    if (cs->ch.type != PQ_BYTE_ARRAY)
        return note(w, "OffsetIndex.unencoded_byte_array_data_bytes is set for a %s "
                    "column (BYTE_ARRAY only)", pqf_type_name(cs->ch.type));
    for (size_t k = 0; k < cs->npages; k++) {
        const page_info *pi = &cs->pages[k];
        int64_t got = tr_int(tr_list_at(ub, k));
        if (!pi->vals_ok || got == pi->v.ba_bytes)
            continue;
        at(w, w->rg, w->col, (long)pi->ordinal, (long long)pi->offset);
        w->page_kind = pqf_page_type_name(pi->type);
        return soft(w, "OffsetIndex.unencoded_byte_array_data_bytes[%zu] is %lld, the "
                    "page's values hold %lld bytes", k, (long long)got,
                    (long long)pi->v.ba_bytes);
    }
    return 0;
}

static int check_offset_index(walk *w, const chunk_state *cs)
{
    const pqf_chunk *ch = &cs->ch;
    int p = index_present(w, ch->offset_index_offset, ch->offset_index_length,
                          "offset index");
    if (p <= 0)
        return p;
    tr_node *oi;
    int rc = parse_index(w, ch->offset_index_offset, ch->offset_index_length,
                         &pqf_spec_offset_index, &oi);
    const tr_node *locs = tr_field_list(oi, 1);
    if (rc == 0 && tr_list_len(locs) != cs->npages)
        rc = soft(w, "OffsetIndex lists %zu pages, the chunk has %zu data pages",
                  tr_list_len(locs), cs->npages);
    int64_t first_row = 0;
    for (size_t k = 0; rc == 0 && k < tr_list_len(locs) && k < cs->npages; k++) {
        rc = check_page_location(w, cs, k, tr_list_at(locs, k), first_row);
        first_row += cs->pages[k].rows;
    }
    const tr_node *ub = tr_field_list(oi, 2);
    if (rc == 0 && ub != NULL && tr_list_len(ub) != cs->npages)
        rc = soft(w, "OffsetIndex unencoded_byte_array_data_bytes has %zu "
                  "entries for %zu pages", tr_list_len(ub), cs->npages);
    else if (rc == 0 && ub != NULL)
        rc = check_oi_ba_bytes(w, cs, ub);
    tr_free(oi);
    return rc;
}

/* A ColumnIndex list with one entry per page (histograms: per page and
 * level), compared against what the levels said. */
static int check_ci_list(walk *w, const tr_node *ci, int16_t fid,
                         const char *name, size_t per_page, size_t npages)
{
    const tr_node *l = tr_field_list(ci, fid);
    if (l == NULL || tr_list_len(l) == npages * per_page)
        return 0;
    return soft(w, "ColumnIndex.%s has %zu entries, expected %zu (%zu pages)",
                name, tr_list_len(l), npages * per_page, npages);
}

static int check_hist(walk *w, const tr_node *list, const char *name, size_t k,
                      const int64_t *hist, size_t levels)
{
    for (size_t l = 0; list != NULL && l < levels; l++) {
        int64_t got = tr_int(tr_list_at(list, k * levels + l));
        if (got != hist[l])
            return soft(w, "ColumnIndex.%s page %zu level %zu is %lld, the "
                        "levels say %lld", name, k, l, (long long)got,
                        (long long)hist[l]);
    }
    return 0;
}

static int check_ci_hists(walk *w, const chunk_state *cs, const tr_node *ci,
                          size_t k)
{
    const page_info *pi = &cs->pages[k];
    if (check_hist(w, tr_field_list(ci, 6), "repetition_level_histograms", k,
                   pi->rep_hist, (size_t)cs->max_rep + 1) != 0)
        return -1;
    return check_hist(w, tr_field_list(ci, 7), "definition_level_histograms", k,
                      pi->def_hist, (size_t)cs->max_def + 1);
}

/* parquet-mr (1.13, datapage_v1-*-checksum.parquet) indexes pages written
 * without statistics as null_pages = true, empty bounds, null_counts = -1.
 * A negative count is no count at all, so those pages' null_pages and
 * bounds say nothing and are not compared; noted once per index. */
static int ci_unknown_counts(walk *w, const tr_node *ci)
{
    const tr_node *nc = tr_field_list(ci, 5);
    size_t unknown = 0;
    for (size_t k = 0; k < tr_list_len(nc); k++)
        unknown += tr_int(tr_list_at(nc, k)) < 0;
    if (unknown == 0)
        return 0;
    at(w, w->rg, w->col, -1, -1);
    return note(w, "ColumnIndex.null_counts is negative (unknown) for %zu of %zu "
                "pages; null_pages and bounds of those pages not checked",
                unknown, tr_list_len(nc));
}

static int check_ci_page(walk *w, const chunk_state *cs, const tr_node *ci, size_t k)
{
    const page_info *pi = &cs->pages[k];
    bool all_null = pi->nulls == pi->values;
    bool np = tr_bool(tr_list_at(tr_field_list(ci, 1), k));
    size_t minlen, maxlen;
    tr_bin(tr_list_at(tr_field_list(ci, 2), k), &minlen);
    tr_bin(tr_list_at(tr_field_list(ci, 3), k), &maxlen);
    const tr_node *nc = tr_field_list(ci, 5);
    at(w, w->rg, w->col, -1, (long long)pi->offset);
    if (nc != NULL && tr_int(tr_list_at(nc, k)) < 0)
        return check_ci_hists(w, cs, ci, k);   /* unknown: see ci_unknown_counts */
    if (np != all_null)
        return soft(w, "ColumnIndex.null_pages[%zu] is %d, but the page has "
                    "%lld nulls in %lld values", k, np, (long long)pi->nulls,
                    (long long)pi->values);
    if (np && (minlen != 0 || maxlen != 0))
        return soft(w, "ColumnIndex: null page %zu must have empty min/max "
                    "(%zu, %zu bytes)", k, minlen, maxlen);
    int64_t claimed = tr_int(tr_list_at(nc, k));
    if (nc != NULL && !nulls_match(cs, pi->nulls, pi->leaf_nulls, claimed) &&
        nulls_mismatch(w, cs, "ColumnIndex.null_counts entry", claimed, pi->nulls) != 0)
        return -1;
    return check_ci_hists(w, cs, ci, k);
}

static int check_ci_lists(walk *w, const chunk_state *cs, const tr_node *ci)
{
    size_t n = cs->npages;
    if (check_ci_list(w, ci, 1, "null_pages", 1, n) != 0 ||
        check_ci_list(w, ci, 2, "min_values", 1, n) != 0 ||
        check_ci_list(w, ci, 3, "max_values", 1, n) != 0 ||
        check_ci_list(w, ci, 5, "null_counts", 1, n) != 0 ||
        check_ci_list(w, ci, 8, "nan_counts", 1, n) != 0 ||
        check_ci_list(w, ci, 6, "repetition_level_histograms",
                      (size_t)cs->max_rep + 1, n) != 0 ||
        check_ci_list(w, ci, 7, "definition_level_histograms",
                      (size_t)cs->max_def + 1, n) != 0)
        return -1;
    int64_t bo = tr_field_int(ci, 4, -1);
    if (bo < 0 || bo > 2)
        return soft(w, "ColumnIndex.boundary_order %lld is not a BoundaryOrder",
                    (long long)bo);
    return 0;
}

static int check_column_index(walk *w, chunk_state *cs)
{
    const pqf_chunk *ch = &cs->ch;
    int p = index_present(w, ch->column_index_offset, ch->column_index_length,
                          "column index");
    if (p <= 0)
        return p;
    tr_node *ci;
    int rc = parse_index(w, ch->column_index_offset, ch->column_index_length,
                         &pqf_spec_column_index, &ci);
    int before = w->nerr;
    if (rc == 0)
        rc = check_ci_lists(w, cs, ci);
    /* Per-page comparisons need complete lists; with --all a short list
     * has been reported already and the rest would only add noise. */
    bool complete = (w->nerr == before);
    if (rc == 0 && complete)
        rc = ci_unknown_counts(w, ci);
    for (size_t k = 0; rc == 0 && complete && k < cs->npages; k++)
        rc = check_ci_page(w, cs, ci, k);
    if (rc == 0 && complete)
        rc = check_ci_bounds(w, cs, ci);
    tr_free(ci);
    return rc;
}

/* bloom_filter_length is optional (added in format 2.10; parquet-mr
 * omitted it), so without it the filter's size comes from its header:
 * serialized header + numBytes, which must still fit before the footer. */
static int check_bloom(walk *w, const chunk_state *cs)
{
    int64_t off = cs->ch.bloom_filter_offset, len = cs->ch.bloom_filter_length;
    at(w, w->rg, w->col, -1, off >= 0 ? (long long)off : -1);
    if (off < 0)
        return len >= 0 ? soft(w, "bloom_filter_length without bloom_filter_offset") : 0;
    size_t room = w->f.footer_offset;
    if (off < 4 || (uint64_t)off >= room || (len >= 0 && (uint64_t)len > room - (uint64_t)off))
        return hard(w, "bloom filter [%lld, +%lld) is not inside the data area "
                    "[4, %zu)", (long long)off, (long long)len, room);
    size_t limit = len >= 0 ? (size_t)len : room - (size_t)off;
    tr_node *h;
    size_t used;
    pq_err err;
    if (pqf_parse_at(&w->f, (size_t)off, limit, &pqf_spec_bloom_header, &h, &used, &err) != 0)
        return hard(w, "%s", err.msg);
    int64_t nbytes = tr_field_int(h, 1, -1);
    tr_free(h);
    if (nbytes <= 0 || nbytes % 32 != 0)
        return soft(w, "bloom filter numBytes %lld is not a positive multiple "
                    "of the 32-byte block", (long long)nbytes);
    if ((uint64_t)nbytes > limit - used)
        return hard(w, "bloom filter bitset (%lld bytes after a %zu-byte header) "
                    "runs past %s", (long long)nbytes, used,
                    len >= 0 ? "bloom_filter_length" : "the data area");
    size_t total = used + (size_t)nbytes;
    if (add_region(w, (size_t)off, (size_t)off + total, "bloom filter of row "
                   "group %ld column %ld", w->rg, w->col) != 0)
        return -1;
    if (len >= 0 && (size_t)len != total)
        return soft(w, "bloom_filter_length %lld, header + bitset is %zu bytes",
                    (long long)len, total);
    return 0;
}

/* ---- chunks, row groups, file ---- */

static int check_chunk_body(walk *w, chunk_state *cs, int64_t rg_rows)
{
    const pqf_chunk *ch = &cs->ch;
    if (check_chunk_meta(w, ch) != 0)
        return -1;
    leaf_order(&w->f, (size_t)w->col, &cs->ord);
    cs->allowed = -2;
    cs->max_def = ch->leaf->max_def;
    cs->max_rep = ch->leaf->max_rep;
    if (add_region(w, (size_t)(ch->start < 0 ? 0 : ch->start),
                   (size_t)(ch->start < 0 ? 0 : ch->start) +
                       (size_t)ch->total_compressed_size,
                   "column chunk of row group %ld column %ld", w->rg, w->col) != 0)
        return -1;
    if (walk_pages(w, cs) != 0)
        return -1;
    if (check_totals(w, cs, rg_rows) != 0 || check_encodings(w, cs) != 0 ||
        check_encoding_stats(w, cs) != 0 || check_chunk_stats(w, cs) != 0)
        return -1;
    at(w, w->rg, w->col, -1, -1);
    if (check_offset_index(w, cs) != 0 || check_column_index(w, cs) != 0)
        return -1;
    return check_bloom(w, cs);
}

/* Checks one chunk; *start gets its first page offset for the row group. */
static int check_chunk(walk *w, size_t col, int64_t rg_rows, int64_t *start,
                       int64_t *comp, int64_t *uncomp)
{
    chunk_state cs;
    memset(&cs, 0, sizeof cs);
    pq_err err;
    at(w, w->rg, (long)col, -1, -1);
    w->col_path = col < w->f.nleaves ? w->f.leaves[col].path : NULL;
    if (pqf_chunk_get(&w->f, (size_t)w->rg, col, &cs.ch, &err) != 0)
        return hard(w, "%s", err.msg);
    *start = cs.ch.start;
    *comp = cs.ch.total_compressed_size;
    *uncomp = cs.ch.total_uncompressed_size;
    int rc = check_chunk_body(w, &cs, rg_rows);
    chunk_free(&cs);
    return rc;
}

/* total_byte_size is "all the uncompressed column data"; parquet-cpp 1.5
 * (list_columns.parquet) and the Rust writer of nested_structs.rust.parquet
 * stored the compressed total instead. */
static int check_total_byte_size(walk *w, const tr_node *r, int64_t comp_sum,
                                 int64_t uncomp_sum)
{
    int64_t tbs = tr_field_int(r, 2, -1);
    if (tbs == uncomp_sum)
        return 0;
    if (tbs == comp_sum)
        return note(w, "RowGroup.total_byte_size %lld is the compressed total; "
                    "uncompressed is %lld", (long long)tbs, (long long)uncomp_sum);
    return soft(w, "RowGroup.total_byte_size %lld, its chunks total %lld "
                "uncompressed", (long long)tbs, (long long)uncomp_sum);
}

static int check_row_group_fields(walk *w, const tr_node *r, int64_t first,
                                  int64_t comp_sum, int64_t uncomp_sum)
{
    at(w, w->rg, -1, -1, -1);
    if (check_total_byte_size(w, r, comp_sum, uncomp_sum) != 0)
        return -1;
    if (tr_has(r, 6) && tr_field_int(r, 6, -1) != comp_sum)
        return soft(w, "RowGroup.total_compressed_size %lld, its chunks total "
                    "%lld", (long long)tr_field_int(r, 6, -1), (long long)comp_sum);
    if (tr_has(r, 5) && tr_field_int(r, 5, -1) != first)
        return soft(w, "RowGroup.file_offset %lld, the first page of its first "
                    "column is at %lld", (long long)tr_field_int(r, 5, -1),
                    (long long)first);
    if (tr_has(r, 7) && tr_field_int(r, 7, -1) != w->rg)
        return soft(w, "RowGroup.ordinal %lld, expected %ld",
                    (long long)tr_field_int(r, 7, -1), w->rg);
    return 0;
}

static int check_row_group(walk *w, size_t rg, int64_t *rows)
{
    const tr_node *r = pqf_row_group(&w->f, rg);
    at(w, (long)rg, -1, -1, -1);
    *rows = tr_field_int(r, 3, -1);
    if (*rows <= 0 && soft(w, "num_rows is %lld", (long long)*rows) != 0)
        return -1;
    size_t ncols = pqf_num_columns(&w->f, rg);
    if (ncols != w->f.nleaves)
        return hard(w, "%zu column chunks for %zu schema leaves", ncols, w->f.nleaves);
    int64_t first = -1, comp_sum = 0, uncomp_sum = 0;
    for (size_t c = 0; c < ncols; c++) {
        int64_t start = -1, comp = 0, uncomp = 0;
        if (check_chunk(w, c, *rows, &start, &comp, &uncomp) != 0)
            return -1;
        if (c == 0)
            first = start;
        comp_sum += comp;
        uncomp_sum += uncomp;
    }
    return check_row_group_fields(w, r, first, comp_sum, uncomp_sum);
}

static int cmp_region(const void *a, const void *b)
{
    const region *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Chunks, indexes, bloom filters, magic and footer: pairwise disjoint. */
static int check_regions(walk *w)
{
    at(w, -1, -1, -1, -1);
    if (add_region(w, 0, 4, "leading magic") != 0 ||
        add_region(w, w->f.footer_offset, w->f.size, "footer") != 0)
        return -1;
    qsort(w->regions, w->nregions, sizeof *w->regions, cmp_region);
    for (size_t i = 1; i < w->nregions; i++) {
        const region *a = &w->regions[i - 1], *b = &w->regions[i];
        if (b->start < a->end && b->start != b->end)
            return soft(w, "%s [%zu, %zu) overlaps %s [%zu, %zu)", b->what,
                        b->start, b->end, a->what, a->start, a->end);
    }
    return 0;
}

static int check_footer(walk *w)
{
    const pqf_file *f = &w->f;
    at(w, -1, -1, -1, (long long)f->footer_offset);
    if (f->footer_consumed != f->footer_len)
        return soft(w, "FileMetaData uses %zu of the %u footer bytes",
                    f->footer_consumed, f->footer_len);
    int64_t version = tr_field_int(f->meta, 1, -1);
    if (version != 1 && version != 2)
        return soft(w, "FileMetaData.version %lld, expected 1 or 2", (long long)version);
    if (f->nleaves == 0)
        return soft(w, "schema has no leaf columns");
    const tr_node *orders = tr_field_list(f->meta, 7);
    if (orders != NULL && tr_list_len(orders) != f->nleaves)
        return soft(w, "FileMetaData.column_orders has %zu entries for %zu leaf "
                    "columns", tr_list_len(orders), f->nleaves);
    return 0;
}

static int check_file(walk *w)
{
    if (check_footer(w) != 0)
        return -1;
    int64_t total = 0;
    for (size_t rg = 0; rg < pqf_num_row_groups(&w->f); rg++) {
        int64_t rows;
        if (check_row_group(w, rg, &rows) != 0)
            return -1;
        total += rows;
    }
    at(w, -1, -1, -1, -1);
    int64_t want = tr_field_int(w->f.meta, 3, -1);
    if (total != want && soft(w, "row groups hold %lld rows, FileMetaData."
                              "num_rows is %lld", (long long)total,
                              (long long)want) != 0)
        return -1;
    if (check_truncation(w) != 0)
        return -1;
    return check_regions(w);
}

static int walk_file(const opts *o, const char *path)
{
    walk w = { .o = o, .path = path, .cut_shortest = SIZE_MAX };
    at(&w, -1, -1, -1, -1);
    pq_err err;
    if (pqf_open(&w.f, path, &err) != 0)
        return hard(&w, "%s", err.msg);
    if (o->dump)
        dump_footer(&w.f);
    int rc = check_file(&w);
    if (rc == 0 && w.nerr > 0)
        rc = -1;   /* --all: soft problems were reported */
    if (rc == 0 && !o->quiet)
        printf("OK %s: %zu row groups, %zu columns, %zu pages, %lld rows, "
               "%lld min/max checked (%lld truncated), %d notes\n", path,
               pqf_num_row_groups(&w.f), w.f.nleaves, w.total_pages,
               (long long)tr_field_int(w.f.meta, 3, -1), w.nbounds, w.ncut, w.nnotes);
    free(w.regions);
    pqf_close(&w.f);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: pq_walk [--quiet] [--strict] [--all] [--dump] "
            "[--pages] FILE...\n"
            "  --quiet  no line for files that pass, no notes\n"
            "  --strict fail on legacy quirks that are otherwise only noted\n"
            "  --all    keep checking a file after problems that allow it\n"
            "  --dump   print the footer (schema, row groups, chunks)\n"
            "  --pages  print every page header and ColumnIndex entry (with the\n"
            "           file offsets of its bounds) while walking\n");
    return 2;
}

int main(int argc, char **argv)
{
    opts o = { 0 };
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        const char *a = argv[first];
        if (strcmp(a, "--") == 0) {
            first++;
            break;
        }
        if (strcmp(a, "--quiet") == 0) o.quiet = true;
        else if (strcmp(a, "--all") == 0) o.all = true;
        else if (strcmp(a, "--dump") == 0) o.dump = true;
        else if (strcmp(a, "--pages") == 0) o.pages = true;
        else if (strcmp(a, "--strict") == 0) o.strict = true;
        else return usage();
    }
    if (first >= argc)
        return usage();
    int failed = 0;
    for (int i = first; i < argc; i++)
        failed += (walk_file(&o, argv[i]) != 0);
    return failed ? 1 : 0;
}
