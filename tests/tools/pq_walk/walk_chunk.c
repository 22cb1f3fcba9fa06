/* walk_chunk.c - a column chunk's totals and metadata against its pages:
 * sizes, value counts, SizeStatistics histograms, chunk Statistics,
 * encodings and encoding_stats. */
#include <stdint.h>
#include <string.h>

#include "walk.h"

int check_totals(walk *w, const chunk_state *cs, int64_t rg_rows)
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
int check_chunk_stats(walk *w, chunk_state *cs)
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
int check_encodings(walk *w, const chunk_state *cs)
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
int check_encoding_stats(walk *w, const chunk_state *cs)
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

int check_chunk_meta(walk *w, const pqf_chunk *ch)
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
