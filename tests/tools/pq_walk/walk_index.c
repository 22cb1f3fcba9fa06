/* walk_index.c - page indexes (PageIndex.md: OffsetIndex page locations
 * and sizes, ColumnIndex lists and histograms) against the pages walked,
 * and the bloom filter header and bitset placement (BloomFilter.md). */
#include <stdint.h>

#include "walk.h"

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

int check_offset_index(walk *w, const chunk_state *cs)
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

int check_column_index(walk *w, chunk_state *cs)
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
int check_bloom(walk *w, const chunk_state *cs)
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
