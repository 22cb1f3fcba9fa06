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
 * is what tests of parqd's own files should use.
 *
 * This file walks chunks, row groups and the file, and holds main; the
 * walk_*.c files hold the checks it calls (see walk.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk.h"

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
