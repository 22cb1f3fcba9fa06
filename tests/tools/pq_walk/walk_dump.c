/* walk_dump.c - --dump and --pages: the footer (schema, row groups, column
 * chunks, statistics) and each page header in readable form. */
#include <stdint.h>
#include <stdio.h>

#include "walk.h"

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

void dump_footer(const pqf_file *f)
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

void dump_page(const pqf_page *pg)
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
