/* pqfile_pages.c - page headers and bodies: one page read at an offset,
 * the pages of a column chunk in order, decompression (Compression.md:
 * v2 levels stay uncompressed) and the split into levels and values. */
#include <stdlib.h>
#include <string.h>

#include "decompress.h"
#include "pqfile_int.h"

/* Copies the type-specific sub-header into pg; the one matching the type
 * must be present. */
static int page_subheader(pqf_page *pg, pq_err *err)
{
    const tr_node *h = pg->header;
    const tr_node *s;
    switch (pg->type) {
    case PQ_PAGE_DATA:
        if ((s = tr_field_struct(h, 5)) == NULL)
            return pq_err_set(err, PQ_EPARSE, "DATA_PAGE without data_page_header");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->encoding = (int32_t)tr_field_int(s, 2, -1);
        pg->def_encoding = (int32_t)tr_field_int(s, 3, -1);
        pg->rep_encoding = (int32_t)tr_field_int(s, 4, -1);
        pg->stats = tr_field_struct(s, 5);
        return 0;
    case PQ_PAGE_DICTIONARY:
        if ((s = tr_field_struct(h, 7)) == NULL)
            return pq_err_set(err, PQ_EPARSE,
                              "DICTIONARY_PAGE without dictionary_page_header");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->encoding = (int32_t)tr_field_int(s, 2, -1);
        return 0;
    case PQ_PAGE_DATA_V2:
        if ((s = tr_field_struct(h, 8)) == NULL)
            return pq_err_set(err, PQ_EPARSE,
                              "DATA_PAGE_V2 without data_page_header_v2");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->num_nulls = (int32_t)tr_field_int(s, 2, -1);
        pg->num_rows = (int32_t)tr_field_int(s, 3, -1);
        pg->encoding = (int32_t)tr_field_int(s, 4, -1);
        pg->def_len = (int32_t)tr_field_int(s, 5, -1);
        pg->rep_len = (int32_t)tr_field_int(s, 6, -1);
        pg->is_compressed = tr_field_bool(s, 7, true);
        pg->stats = tr_field_struct(s, 8);
        return 0;
    case PQ_PAGE_INDEX:
        return 0;
    }
    return pq_err_set(err, PQ_EPARSE, "unknown page type %d", pg->type);
}

static void page_defaults(pqf_page *pg)
{
    memset(pg, 0, sizeof *pg);
    pg->num_values = pg->encoding = -1;
    pg->def_encoding = pg->rep_encoding = -1;
    pg->num_nulls = pg->num_rows = pg->def_len = pg->rep_len = -1;
    pg->is_compressed = true;
}

/* The PageHeader's own fields: type, sizes, CRC. */
static void page_header_fields(pqf_page *pg)
{
    const tr_node *h = pg->header;
    pg->type = (int)tr_field_int(h, 1, -1);
    pg->uncompressed_size = (int32_t)tr_field_int(h, 2, -1);
    pg->compressed_size = (int32_t)tr_field_int(h, 3, -1);
    pg->has_crc = tr_has(h, 4);
    pg->crc = (uint32_t)tr_field_int(h, 4, 0);
}

int pqf_page_from_header(pqf_page *pg, tr_node *h, pq_err *err)
{
    page_defaults(pg);
    pg->header = h;
    page_header_fields(pg);
    return page_subheader(pg, err);
}

static int page_fill(const pqf_file *f, size_t off, size_t limit, pqf_page *pg,
                     pq_err *err)
{
    page_header_fields(pg);
    if (pg->uncompressed_size < 0 || pg->compressed_size < 0)
        return pq_err_set(err, PQ_EPARSE, "negative page size (%d compressed, "
                          "%d uncompressed)", pg->compressed_size,
                          pg->uncompressed_size);
    size_t body = off + pg->header_len;
    if ((size_t)pg->compressed_size > limit - body)
        return pq_err_set(err, PQ_EPARSE, "compressed_page_size %d runs past "
                          "the chunk end at offset %zu", pg->compressed_size, limit);
    pg->data = f->data + body;
    return page_subheader(pg, err);
}

int pqf_page_read(const pqf_file *f, size_t off, size_t limit, pqf_page *pg,
                  pq_err *err)
{
    page_defaults(pg);
    pg->offset = off;
    if (limit > f->size || off >= limit)
        return pq_err_set(err, PQ_EPARSE, "page at offset %zu: outside "
                          "[0, %zu)", off, limit);
    int rc = tr_parse(f->data + off, limit - off, &pg->header, &pg->header_len, err);
    if (rc == 0)
        rc = tr_validate(pg->header, &pqf_spec_page_header, err);
    if (rc == 0)
        rc = page_fill(f, off, limit, pg, err);
    if (rc != 0) {
        pqf_page_clear(pg);
        pg->offset = off;
        return pq_err_prefix(err, rc, "PageHeader at offset %zu", off);
    }
    return 0;
}

void pqf_page_clear(pqf_page *pg)
{
    tr_free(pg->header);
    page_defaults(pg);
}

bool pqf_page_is_data(const pqf_page *pg)
{
    return pg->type == PQ_PAGE_DATA || pg->type == PQ_PAGE_DATA_V2;
}

int pqf_pages_init(pqf_pages *it, const pqf_file *f, const pqf_chunk *ch,
                   pq_err *err)
{
    memset(it, 0, sizeof *it);
    page_defaults(&it->page);
    it->f = f;
    if (ch->start < 4 || ch->total_compressed_size < 0 ||
        (uint64_t)ch->start > f->footer_offset ||
        (uint64_t)ch->total_compressed_size > f->footer_offset - (size_t)ch->start)
        return pq_err_set(err, PQ_EPARSE, "chunk [%lld, +%lld) is not inside "
                          "the page area [4, %zu)", (long long)ch->start,
                          (long long)ch->total_compressed_size, f->footer_offset);
    it->pos = (size_t)ch->start;
    it->end = it->pos + (size_t)ch->total_compressed_size;
    return 0;
}

int pqf_pages_next(pqf_pages *it, pq_err *err)
{
    pqf_page_clear(&it->page);
    if (it->pos == it->end)
        return 0;
    int rc = pqf_page_read(it->f, it->pos, it->end, &it->page, err);
    if (rc != 0)
        return pq_err_prefix(err, rc, "page %zu", it->ordinal);
    it->page.ordinal = it->ordinal++;
    it->pos += it->page.header_len + (size_t)it->page.compressed_size;
    return 1;
}

void pqf_pages_free(pqf_pages *it) { pqf_page_clear(&it->page); }

/* The one call into the codecs, through the shared test decompressor. */
static int decompress(pq_codec codec, const uint8_t *src, size_t n,
                      uint8_t *dst, size_t dst_len, pq_err *err)
{
    return pqt_decompress(codec, src, n, dst, dst_len, err);
}

/* V2: the level bytes are never compressed (Compression.md / thrift doc
 * of DataPageHeaderV2), so only the tail goes through the codec. */
static int decompress_v2(const pqf_page *pg, pq_codec codec, uint8_t *out,
                         pq_err *err)
{
    size_t lv = (size_t)pg->def_len + (size_t)pg->rep_len;
    if (pg->def_len < 0 || pg->rep_len < 0 ||
        lv > (size_t)pg->compressed_size || lv > (size_t)pg->uncompressed_size)
        return pq_err_set(err, PQ_EPARSE, "v2 level lengths %d + %d exceed the "
                          "page (%d compressed, %d uncompressed)", pg->rep_len,
                          pg->def_len, pg->compressed_size, pg->uncompressed_size);
    memcpy(out, pg->data, lv);
    pq_codec c = pg->is_compressed ? codec : PQ_CODEC_UNCOMPRESSED;
    return decompress(c, pg->data + lv, (size_t)pg->compressed_size - lv,
                      out + lv, (size_t)pg->uncompressed_size - lv, err);
}

int pqf_page_decompress(const pqf_page *pg, pq_codec codec, uint8_t **out,
                        size_t *out_len, pq_err *err)
{
    *out = NULL;
    size_t n = (size_t)pg->uncompressed_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (buf == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory for a %zu-byte page", n);
    int rc = pg->type == PQ_PAGE_DATA_V2
                 ? decompress_v2(pg, codec, buf, err)
                 : decompress(codec, pg->data, (size_t)pg->compressed_size, buf, n, err);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

/* One v1 level section: RLE has a 4-byte little-endian length prefix;
 * the deprecated BIT_PACKED has none and a size fixed by the count. */
static int v1_levels(const pqf_page *pg, int enc, int max_level,
                     const uint8_t *page, size_t len, size_t *pos,
                     const uint8_t **out, size_t *out_len, pq_err *err)
{
    size_t left = len - *pos;
    size_t n;
    if (enc == PQ_ENC_RLE) {
        if (left < 4)
            return pq_err_set(err, PQ_EPARSE, "level length prefix truncated");
        const uint8_t *l = page + *pos;
        n = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
        *pos += 4;
        left -= 4;
    } else if (enc == PQ_ENC_BIT_PACKED) {
        n = ((size_t)pg->num_values * (size_t)pqf_bit_width(max_level) + 7) / 8;
    } else {
        return pq_err_set(err, PQ_EPARSE, "level encoding %d is not RLE or "
                          "BIT_PACKED", enc);
    }
    if (n > left)
        return pq_err_set(err, PQ_EPARSE, "levels claim %zu bytes, %zu left", n, left);
    *out = page + *pos;
    *out_len = n;
    *pos += n;
    return 0;
}

static int split_v1(const pqf_page *pg, const uint8_t *page, size_t len,
                    int max_rep, int max_def, pqf_parts *out, pq_err *err)
{
    size_t pos = 0;
    if (max_rep > 0 && v1_levels(pg, pg->rep_encoding, max_rep, page, len, &pos,
                                 &out->rep, &out->rep_len, err) != 0)
        return pq_err_prefix(err, PQ_EPARSE, "repetition levels");
    if (max_def > 0 && v1_levels(pg, pg->def_encoding, max_def, page, len, &pos,
                                 &out->def, &out->def_len, err) != 0)
        return pq_err_prefix(err, PQ_EPARSE, "definition levels");
    out->values = page + pos;
    out->values_len = len - pos;
    return 0;
}

/* V2: repetition levels, then definition levels, lengths in the header;
 * a max level of 0 means that section is absent. */
static int split_v2(const pqf_page *pg, const uint8_t *page, size_t len,
                    int max_rep, int max_def, pqf_parts *out, pq_err *err)
{
    if (pg->rep_len < 0 || pg->def_len < 0 ||
        (size_t)pg->rep_len + (size_t)pg->def_len > len)
        return pq_err_set(err, PQ_EPARSE, "v2 level lengths %d + %d exceed the "
                          "%zu-byte page", pg->rep_len, pg->def_len, len);
    if ((max_rep == 0 && pg->rep_len != 0) || (max_def == 0 && pg->def_len != 0))
        return pq_err_set(err, PQ_EPARSE, "v2 levels present (%d rep, %d def "
                          "bytes) for max levels %d/%d", pg->rep_len,
                          pg->def_len, max_rep, max_def);
    out->rep = page;
    out->rep_len = (size_t)pg->rep_len;
    out->def = page + out->rep_len;
    out->def_len = (size_t)pg->def_len;
    out->values = out->def + out->def_len;
    out->values_len = len - out->rep_len - out->def_len;
    return 0;
}

int pqf_page_split(const pqf_page *pg, const uint8_t *page, size_t len,
                   int max_rep, int max_def, pqf_parts *out, pq_err *err)
{
    memset(out, 0, sizeof *out);
    if (pg->type == PQ_PAGE_DATA)
        return split_v1(pg, page, len, max_rep, max_def, out, err);
    if (pg->type == PQ_PAGE_DATA_V2)
        return split_v2(pg, page, len, max_rep, max_def, out, err);
    return pq_err_set(err, PQ_EINVAL, "page %zu is %s, not a data page",
                      pg->ordinal, pqf_page_type_name(pg->type));
}
