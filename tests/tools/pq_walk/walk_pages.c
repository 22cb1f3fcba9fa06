/* walk_pages.c - every page of a column chunk in file order: order of
 * dictionary and data pages, CRC, v1/v2 headers, levels and null counts,
 * PLAIN sizes, and the decoded values of each data page. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "walk.h"

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

void chunk_free(chunk_state *cs)
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
bool nulls_match(const chunk_state *cs, int64_t nulls, int64_t leaf_nulls,
                 int64_t claimed)
{
    return claimed == nulls || (cs->max_rep > 0 && claimed == leaf_nulls);
}

/* Other counts in repeated columns are noted, not failed, for the same
 * reason (DuckDB 1.5 counts more nulls than there are undefined levels in
 * list<struct> leaves); --strict holds our own writer to the two above. */
int nulls_mismatch(walk *w, const chunk_state *cs, const char *what,
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

int walk_pages(walk *w, chunk_state *cs)
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
