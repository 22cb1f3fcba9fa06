/* pq_walk.c - independent structural verifier for Parquet files: footer,
 * every page of every column chunk (order, sizes, CRC, decompression,
 * levels), row group totals, chunk placement, page indexes (PageIndex.md)
 * and bloom filter headers (BloomFilter.md). Built on tests/support only,
 * never on the writer, so it is a second opinion on what parqd writes.
 *
 *   pq_walk [--quiet] [--strict] [--all] [--dump] [--pages] FILE...
 *
 * Stops at the first problem per file (--all: keeps going after problems
 * that do not break the walk, e.g. CRC mismatches), naming file, row group,
 * column, page and offset. Exit status 1 when any file failed.
 *
 * Quirks of shipped writers that the spec forbids or leaves open (see each
 * note() call) are printed as "note:" and pass; --strict fails them, and
 * is what tests of parqd's own files should use. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pqfile.h"

typedef struct opts {
    bool quiet, all, dump, pages, strict;
} opts;

/* A byte range owned by one structure; no two may overlap. */
typedef struct region {
    size_t start, end;
    char what[96];
} region;

/* What the walk learned about one data page. */
typedef struct page_info {
    size_t offset, span;          /* header + compressed data */
    int type;
    int32_t encoding;
    int64_t values, nulls, rows;  /* nulls/rows from the decoded levels */
    int64_t leaf_nulls;           /* def == max_def - 1, optional leaf only */
    bool row_start;               /* first level has repetition level 0 */
    int64_t *def_hist, *rep_hist; /* max_def + 1 / max_rep + 1 counters */
} page_info;

typedef struct chunk_state {
    pqf_chunk ch;
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
    }
    free(cs->pages);
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
    free(buf);
    return 0;
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

/* Value-level checks. For now: a PLAIN page holds exactly one value per
 * non-null level. To add later: decode values (dictionary, DELTA_*, BSS),
 * keep per-page min/max in pi for check_ci_bounds and Statistics. */
static int check_page_values(walk *w, const chunk_state *cs, const pqf_page *pg,
                             const pqf_parts *parts, page_info *pi)
{
    int64_t nonnull = pi->values - pi->nulls;
    if (pg->encoding != PQ_ENC_PLAIN)
        return 0;
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

/* Chunk statistics that the levels alone can confirm. */
static int check_chunk_stats(walk *w, const chunk_state *cs)
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

/* Later: compare min_values / max_values with the values each page holds
 * (collected by check_page_values). */
static int check_ci_bounds(walk *w, const chunk_state *cs, const tr_node *ci)
{
    (void)w, (void)cs, (void)ci;
    return 0;
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

static int check_column_index(walk *w, const chunk_state *cs)
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
    return check_regions(w);
}

static int walk_file(const opts *o, const char *path)
{
    walk w = { .o = o, .path = path };
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
               "%d notes\n", path, pqf_num_row_groups(&w.f), w.f.nleaves,
               w.total_pages, (long long)tr_field_int(w.f.meta, 3, -1), w.nnotes);
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
            "  --pages  print every page header while walking\n");
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
