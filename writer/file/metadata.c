/* metadata.c - FileMetaData, RowGroup, ColumnChunk, ColumnMetaData,
 * SizeStatistics, ColumnIndex and OffsetIndex in the Thrift compact
 * protocol, with field ids exactly as in parquet.thrift; the schema's
 * SchemaElement list comes from writer/schema/schema_thrift.c. */
#include "metadata.h"
#include "page.h"
#include "stats.h"

/* path_in_schema's elements, encoded by pq_schema_finish. */
static void write_path(pq_thrift *t, const pq_node *n)
{
    if (n->path_thrift.len > 0) {
        pq_thrift_raw(t, n->path_thrift.data, n->path_thrift.len);
        return;
    }
    for (size_t i = 0; i < n->n_path; i++)
        pq_thrift_list_binary(t, n->path_parts[i], strlen(n->path_parts[i]));
}

static void write_hist(pq_thrift *t, int16_t fid, const uint64_t *h, uint16_t max)
{
    pq_thrift_field_list_begin(t, fid, PQ_TT_I64, (size_t)max + 1);
    for (size_t i = 0; i <= max; i++)
        pq_thrift_list_i64(t, (int64_t)h[i]);
}

static void write_size_statistics(pq_thrift *t, const pq_chunk_meta *m)
{
    const pq_node *n = m->node;
    pq_thrift_field_struct_begin(t, 16);
    if (n->type == PQ_BYTE_ARRAY)
        pq_thrift_field_i64(t, 1, m->unencoded_ba_bytes);
    if (m->rep_hist)
        write_hist(t, 2, m->rep_hist, n->max_rep);
    if (m->def_hist)
        write_hist(t, 3, m->def_hist, n->max_def);
    pq_thrift_struct_end(t);
}

static size_t count_bits(uint32_t v)
{
    size_t n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

static void write_encodings(pq_thrift *t, const pq_chunk_meta *m)
{
    pq_thrift_field_list_begin(t, 2, PQ_TT_I32, count_bits(m->encodings));
    for (int e = 0; e < 32; e++)
        if (m->encodings & (1u << e))
            pq_thrift_list_i32(t, e);
}

static void write_encoding_stats(pq_thrift *t, const pq_chunk_meta *m)
{
    size_t n = m->n_dict_pages > 0;
    for (int e = 0; e < 10; e++)
        n += m->data_pages[e] > 0;
    pq_thrift_field_list_begin(t, 13, PQ_TT_STRUCT, n);
    if (m->n_dict_pages > 0) {
        pq_thrift_struct_begin(t);
        pq_thrift_field_i32(t, 1, PQ_PAGE_DICTIONARY);
        pq_thrift_field_i32(t, 2, PQ_ENC_PLAIN);
        pq_thrift_field_i32(t, 3, m->n_dict_pages);
        pq_thrift_struct_end(t);
    }
    for (int e = 0; e < 10; e++) {
        if (m->data_pages[e] == 0)
            continue;
        pq_thrift_struct_begin(t);
        pq_thrift_field_i32(t, 1, m->data_page_type);
        pq_thrift_field_i32(t, 2, e);
        pq_thrift_field_i32(t, 3, m->data_pages[e]);
        pq_thrift_struct_end(t);
    }
}

static void write_chunk_statistics(pq_thrift *t, const pq_chunk_meta *m)
{
    pq_stats_out s = {
        .has_minmax = m->has_minmax,
        .min = m->min.data, .min_len = m->min.len, .min_exact = m->min_exact,
        .max = m->max.data, .max_len = m->max.len, .max_exact = m->max_exact,
        .legacy_minmax = m->legacy_minmax,
        .null_count = m->null_count,
        .has_nan_count = m->has_nan_count,
        .nan_count = m->nan_count,
    };
    pq_thrift_statistics(t, 12, &s);
}

static void write_geo_statistics(pq_thrift *t, const pq_chunk_meta *m)
{
    if (!m->has_geo_bbox && m->n_geo_types == 0)
        return;
    const pq_geo_bbox *b = &m->geo_bbox;
    pq_thrift_field_struct_begin(t, 17);
    if (m->has_geo_bbox) {
        pq_thrift_field_struct_begin(t, 1);
        pq_thrift_field_double(t, 1, b->xmin);
        pq_thrift_field_double(t, 2, b->xmax);
        pq_thrift_field_double(t, 3, b->ymin);
        pq_thrift_field_double(t, 4, b->ymax);
        if (b->has_z) {
            pq_thrift_field_double(t, 5, b->zmin);
            pq_thrift_field_double(t, 6, b->zmax);
        }
        if (b->has_m) {
            pq_thrift_field_double(t, 7, b->mmin);
            pq_thrift_field_double(t, 8, b->mmax);
        }
        pq_thrift_struct_end(t);
    }
    if (m->n_geo_types > 0) {
        pq_thrift_field_list_begin(t, 2, PQ_TT_I32, m->n_geo_types);
        for (size_t i = 0; i < m->n_geo_types; i++)
            pq_thrift_list_i32(t, m->geo_types[i]);
    }
    pq_thrift_struct_end(t);
}

/* The fields of ColumnMetaData; `stripped` leaves out what a plaintext
 * footer must not reveal about an encrypted column (Encryption.md 5.5). */
static void write_column_metadata_fields(pq_thrift *t, const pq_chunk_meta *m, bool stripped)
{
    const pq_node *n = m->node;
    pq_thrift_field_i32(t, 1, n->type);
    write_encodings(t, m);
    pq_thrift_field_list_begin(t, 3, PQ_TT_BINARY, n->n_path);
    write_path(t, n);
    pq_thrift_field_i32(t, 4, m->codec);
    pq_thrift_field_i64(t, 5, m->num_values);
    pq_thrift_field_i64(t, 6, m->total_uncompressed);
    pq_thrift_field_i64(t, 7, m->total_compressed);
    pq_thrift_field_i64(t, 9, m->data_page_offset);
    if (m->dictionary_page_offset >= 0)
        pq_thrift_field_i64(t, 11, m->dictionary_page_offset);
    if (m->has_stats && !stripped)
        write_chunk_statistics(t, m);
    write_encoding_stats(t, m);
    if (m->bloom_length > 0) {
        pq_thrift_field_i64(t, 14, m->bloom_offset);
        pq_thrift_field_i32(t, 15, m->bloom_length);
    }
    if (!stripped) {
        write_size_statistics(t, m);
        write_geo_statistics(t, m);
    }
}

int pq_meta_write_column_metadata(const pq_chunk_meta *m, pq_buf *out)
{
    pq_thrift t;
    pq_thrift_init(&t, out);
    pq_thrift_struct_begin(&t);
    write_column_metadata_fields(&t, m, false);
    pq_thrift_struct_end(&t);
    return pq_thrift_error(&t);
}

static int64_t chunk_start(const pq_chunk_meta *m)
{
    return m->dictionary_page_offset >= 0 ? m->dictionary_page_offset : m->data_page_offset;
}

static void write_crypto_metadata(pq_thrift *t, const pq_chunk_meta *m, const pq_file_meta *fm)
{
    if (m->crypto_key == fm->footer_key) {
        pq_thrift_field_struct_begin(t, 8);
        pq_thrift_field_struct_begin(t, 1); /* ENCRYPTION_WITH_FOOTER_KEY */
        pq_thrift_struct_end(t);
        pq_thrift_struct_end(t);
        return;
    }
    const char *id = m->crypto_key_id;
    pq_thrift_field_struct_begin(t, 8);
    pq_thrift_field_struct_begin(t, 2); /* ENCRYPTION_WITH_COLUMN_KEY */
    pq_thrift_field_list_begin(t, 1, PQ_TT_BINARY, m->node->n_path);
    write_path(t, m->node);
    if (id != NULL)
        pq_thrift_field_binary(t, 2, id, strlen(id));
    pq_thrift_struct_end(t);
    pq_thrift_struct_end(t);
}

/* Encrypted footer: a column with its own key hides its metadata in
 * encrypted_column_metadata only. Plaintext footer: every encrypted column
 * keeps a stripped meta_data for legacy readers plus the encrypted copy. */
static void write_column_chunk(pq_thrift *t, const pq_chunk_meta *m, const pq_file_meta *fm)
{
    bool encrypted = m->crypto_key != NULL;
    bool hidden = encrypted && !fm->plaintext_footer && m->crypto_key != fm->footer_key;
    pq_thrift_struct_begin(t);
    pq_thrift_field_i64(t, 2, chunk_start(m));
    if (!hidden) {
        pq_thrift_field_struct_begin(t, 3);
        write_column_metadata_fields(t, m, encrypted && fm->plaintext_footer);
        pq_thrift_struct_end(t);
    }
    if (m->offset_index_length > 0) {
        pq_thrift_field_i64(t, 4, m->offset_index_offset);
        pq_thrift_field_i32(t, 5, m->offset_index_length);
    }
    if (m->column_index_length > 0) {
        pq_thrift_field_i64(t, 6, m->column_index_offset);
        pq_thrift_field_i32(t, 7, m->column_index_length);
    }
    if (encrypted)
        write_crypto_metadata(t, m, fm);
    if (m->encrypted_meta.len > 0)
        pq_thrift_field_binary(t, 9, m->encrypted_meta.data, m->encrypted_meta.len);
    pq_thrift_struct_end(t);
}

static void write_row_group(pq_thrift *t, const pq_row_group_meta *rg, size_t n_leaves,
                            size_t ordinal, const pq_file_meta *fm)
{
    pq_thrift_struct_begin(t);
    pq_thrift_field_list_begin(t, 1, PQ_TT_STRUCT, n_leaves);
    for (size_t i = 0; i < n_leaves; i++)
        write_column_chunk(t, &rg->chunks[i], fm);
    pq_thrift_field_i64(t, 2, rg->total_byte_size);
    pq_thrift_field_i64(t, 3, rg->num_rows);
    pq_thrift_field_i64(t, 5, rg->file_offset);
    pq_thrift_field_i64(t, 6, rg->total_compressed_size);
    if (ordinal <= INT16_MAX) /* the field is an i16; later groups omit it */
        pq_thrift_field_i16(t, 7, (int16_t)ordinal);
    pq_thrift_struct_end(t);
}

int pq_meta_write_file(const pq_file_meta *fm, pq_buf *out)
{
    const pq_schema *s = fm->schema;
    pq_thrift t;
    pq_thrift_init(&t, out);
    pq_thrift_struct_begin(&t);
    pq_thrift_field_i32(&t, 1, fm->version);
    pq_thrift_field_list_begin(&t, 2, PQ_TT_STRUCT, s->n_nodes);
    /* encoded once by pq_schema_finish (a partitioned convert writes a
     * footer per file, all of a layout's files sharing its schema) */
    if (s->finished && s->elements.len > 0)
        pq_thrift_raw(&t, s->elements.data, s->elements.len);
    else
        pq_schema_write_elements(&t, s);
    pq_thrift_field_i64(&t, 3, fm->num_rows);
    pq_thrift_field_list_begin(&t, 4, PQ_TT_STRUCT, fm->n_row_groups);
    for (size_t i = 0; i < fm->n_row_groups; i++)
        write_row_group(&t, &fm->row_groups[i], s->n_leaves, i, fm);
    if (fm->n_kv > 0) {
        pq_thrift_field_list_begin(&t, 5, PQ_TT_STRUCT, fm->n_kv);
        for (size_t i = 0; i < fm->n_kv; i++) {
            pq_thrift_struct_begin(&t);
            pq_thrift_field_string(&t, 1, fm->kv[i].key);
            if (fm->kv[i].value)
                pq_thrift_field_string(&t, 2, fm->kv[i].value);
            pq_thrift_struct_end(&t);
        }
    }
    pq_thrift_field_string(&t, 6, fm->created_by);
    pq_thrift_field_list_begin(&t, 7, PQ_TT_STRUCT, s->n_leaves);
    for (size_t i = 0; i < s->n_leaves; i++) {
        const pq_node *n = pq_schema_leaf_node(s, i);
        pq_sort_order order = pq_leaf_sort_order(n);
        pq_thrift_struct_begin(&t);
        pq_thrift_field_struct_begin(&t, (int16_t)pq_stats_column_order(order));
        pq_thrift_struct_end(&t);
        pq_thrift_struct_end(&t);
    }
    if (fm->crypto != NULL && fm->plaintext_footer) {
        pq_crypto_thrift_algorithm(fm->crypto, &t, 8);
        if (fm->footer_key_id != NULL)
            pq_thrift_field_binary(&t, 9, fm->footer_key_id, strlen(fm->footer_key_id));
    }
    pq_thrift_struct_end(&t);
    return pq_thrift_error(&t);
}

static void write_page_hists(pq_thrift *t, int16_t fid, const pq_buf *h)
{
    size_t n = h->len / sizeof(uint64_t);
    const uint64_t *v = (const uint64_t *)(const void *)h->data;
    pq_thrift_field_list_begin(t, fid, PQ_TT_I64, n);
    for (size_t i = 0; i < n; i++)
        pq_thrift_list_i64(t, (int64_t)v[i]);
}

/* A min or max value's bytes in index_bytes. All-null pages add none, so
 * the buffer may never have been allocated: NULL + 0 is undefined. */
static const uint8_t *index_value(const pq_chunk_meta *m, size_t off)
{
    return m->index_bytes.data != NULL ? m->index_bytes.data + off : NULL;
}

int pq_meta_write_column_index(const pq_chunk_meta *m, pq_buf *out)
{
    pq_thrift t;
    pq_thrift_init(&t, out);
    pq_thrift_struct_begin(&t);
    pq_thrift_field_list_begin(&t, 1, PQ_TT_BOOL_TRUE, m->n_pages);
    for (size_t i = 0; i < m->n_pages; i++)
        pq_thrift_list_bool(&t, m->pages[i].null_page);
    pq_thrift_field_list_begin(&t, 2, PQ_TT_BINARY, m->n_pages);
    for (size_t i = 0; i < m->n_pages; i++)
        pq_thrift_list_binary(&t, index_value(m, m->pages[i].min_off), m->pages[i].min_len);
    pq_thrift_field_list_begin(&t, 3, PQ_TT_BINARY, m->n_pages);
    for (size_t i = 0; i < m->n_pages; i++)
        pq_thrift_list_binary(&t, index_value(m, m->pages[i].max_off), m->pages[i].max_len);
    pq_thrift_field_i32(&t, 4, m->boundary_order);
    pq_thrift_field_list_begin(&t, 5, PQ_TT_I64, m->n_pages);
    for (size_t i = 0; i < m->n_pages; i++)
        pq_thrift_list_i64(&t, m->pages[i].null_count);
    if (m->page_rep_hist.len > 0)
        write_page_hists(&t, 6, &m->page_rep_hist);
    if (m->page_def_hist.len > 0)
        write_page_hists(&t, 7, &m->page_def_hist);
    pq_thrift_struct_end(&t);
    return pq_thrift_error(&t);
}

int pq_meta_write_offset_index(const pq_chunk_meta *m, pq_buf *out)
{
    pq_thrift t;
    pq_thrift_init(&t, out);
    pq_thrift_struct_begin(&t);
    pq_thrift_field_list_begin(&t, 1, PQ_TT_STRUCT, m->n_pages);
    for (size_t i = 0; i < m->n_pages; i++) {
        pq_thrift_struct_begin(&t);
        pq_thrift_field_i64(&t, 1, m->pages[i].offset);
        pq_thrift_field_i32(&t, 2, m->pages[i].size);
        pq_thrift_field_i64(&t, 3, m->pages[i].first_row);
        pq_thrift_struct_end(&t);
    }
    if (m->node->type == PQ_BYTE_ARRAY) {
        pq_thrift_field_list_begin(&t, 2, PQ_TT_I64, m->n_pages);
        for (size_t i = 0; i < m->n_pages; i++)
            pq_thrift_list_i64(&t, m->pages[i].unencoded_ba_bytes);
    }
    pq_thrift_struct_end(&t);
    return pq_thrift_error(&t);
}
