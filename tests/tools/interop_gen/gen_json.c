/* gen_json.c - the expectation file NAME.expect.json: every value
 * written, each column's type, and what the footer must say
 * (tests/interop/README.md). */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

static void j_str(FILE *f, const uint8_t *p, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void j_hex(FILE *f, const uint8_t *p, size_t n)
{
    fputs("{\"hex\":\"", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
    fputs("\"}", f);
}

static void j_double(FILE *f, double d)
{
    if (isnan(d))
        fputs("\"NaN\"", f);
    else if (isinf(d))
        fputs(d > 0 ? "\"Infinity\"" : "\"-Infinity\"", f);
    else if (d == 0 && signbit(d))
        fputs("-0.0", f);
    else
        fprintf(f, "%.17g", d);
}

static void j_decimal(FILE *f, i128 v, int scale)
{
    char digits[64];
    size_t n = 0;
    bool neg = v < 0;
    __extension__ unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while ((int)n < scale + 1)
        digits[n++] = '0';
    fputc('"', f);
    if (neg)
        fputc('-', f);
    for (size_t i = n; i-- > 0;) {
        fputc(digits[i], f);
        if ((int)i == scale && scale > 0)
            fputc('.', f);
    }
    fputc('"', f);
}

void j_value(FILE *f, const gtype *t, const gval *v)
{
    if (v->null) {
        fputs("null", f);
        return;
    }
    switch (t->kind) {
    case K_STRUCT:
        fputc('{', f);
        for (size_t i = 0; i < t->nchild; i++) {
            fprintf(f, "%s\"%s\":", i ? "," : "", t->child[i]->name);
            j_value(f, t->child[i], &v->items[i]);
        }
        fputc('}', f);
        return;
    case K_LIST:
        fputc('[', f);
        for (size_t i = 0; i < v->nitems; i++) {
            if (i)
                fputc(',', f);
            j_value(f, t->child[0], &v->items[i]);
        }
        fputc(']', f);
        return;
    case K_MAP:
        fputc('[', f);
        for (size_t i = 0; i < v->nitems; i++) {
            fputs(i ? ",[" : "[", f);
            j_value(f, t->child[0], &v->items[2 * i]);
            fputc(',', f);
            j_value(f, t->child[1], &v->items[2 * i + 1]);
            fputc(']', f);
        }
        fputc(']', f);
        return;
    case K_LEAF:
        break;
    }
    const char *jt = t->jtype;
    if (!strcmp(jt, "bool"))
        fputs(v->i ? "true" : "false", f);
    else if (!strcmp(jt, "uint64"))
        fprintf(f, "\"%" PRIu64 "\"", (uint64_t)v->i);
    else if (!strcmp(jt, "uint32"))
        fprintf(f, "\"%" PRIu32 "\"", (uint32_t)v->i);
    else if (!strcmp(jt, "float") || !strcmp(jt, "double") || !strcmp(jt, "float16"))
        j_double(f, !strcmp(jt, "float") ? (double)(float)v->d : v->d);
    else if (!strcmp(jt, "decimal"))
        j_decimal(f, v->dec, t->lt.scale);
    else if (!strcmp(jt, "string") || !strcmp(jt, "enum") || !strcmp(jt, "json"))
        j_str(f, v->p, v->n);
    else if (!strcmp(jt, "uuid")) {
        fputc('"', f);
        for (size_t i = 0; i < 16; i++)
            fprintf(f, "%s%02x", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", v->p[i]);
        fputc('"', f);
    } else if (!strcmp(jt, "interval"))
        fprintf(f, "{\"months\":%" PRIu32 ",\"days\":%" PRIu32 ",\"millis\":%" PRIu32 "}",
                get_le32(v->p), get_le32(v->p + 4), get_le32(v->p + 8));
    else if (!strcmp(jt, "binary") || !strcmp(jt, "fixed") || !strcmp(jt, "bson") ||
             !strcmp(jt, "geometry") || !strcmp(jt, "geography"))
        j_hex(f, v->p, v->n);
    else /* signed ints, date, time, timestamp, int96 */
        fprintf(f, "\"%" PRId64 "\"", v->i);
}

static const char *phys_name(pq_physical_type p)
{
    switch (p) {
    case PQ_INT32: return "int32";
    case PQ_INT64: return "int64";
    case PQ_FIXED_LEN_BYTE_ARRAY: return "fixed";
    case PQ_BYTE_ARRAY: return "binary";
    default: return "other";
    }
}

void j_type(FILE *f, const gtype *t)
{
    fprintf(f, "{\"name\":\"%s\",\"type\":\"%s\"", t->name, t->jtype);
    if (t->kind == K_LEAF) {
        if (t->lt.kind == PQ_LT_DECIMAL)
            fprintf(f, ",\"precision\":%d,\"scale\":%d,\"physical\":\"%s\"", (int)t->lt.precision,
                    (int)t->lt.scale, phys_name(t->phys));
        if (t->lt.kind == PQ_LT_TIME || t->lt.kind == PQ_LT_TIMESTAMP)
            fprintf(f, ",\"utc\":%s", t->lt.utc ? "true" : "false");
        if (t->phys == PQ_FIXED_LEN_BYTE_ARRAY)
            fprintf(f, ",\"length\":%d", (int)t->tlen);
    }
    if (t->kind == K_LIST) {
        fputs(",\"element\":", f);
        j_type(f, t->child[0]);
    } else if (t->kind == K_MAP) {
        fputs(",\"key\":", f);
        j_type(f, t->child[0]);
        fputs(",\"value\":", f);
        j_type(f, t->child[1]);
    } else if (t->kind == K_STRUCT) {
        fputs(",\"fields\":[", f);
        for (size_t i = 0; i < t->nchild; i++) {
            if (i)
                fputc(',', f);
            j_type(f, t->child[i]);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

static const char *codec_name(pq_codec c)
{
    switch (c) {
    case PQ_CODEC_UNCOMPRESSED: return "UNCOMPRESSED";
    case PQ_CODEC_SNAPPY: return "SNAPPY";
    case PQ_CODEC_GZIP: return "GZIP";
    case PQ_CODEC_BROTLI: return "BROTLI";
    case PQ_CODEC_ZSTD: return "ZSTD";
    case PQ_CODEC_LZ4_RAW: return "LZ4_RAW";
    }
    return "?";
}

static const char *encoding_name(pq_encoding e)
{
    switch (e) {
    case PQ_ENC_PLAIN: return "PLAIN";
    case PQ_ENC_PLAIN_DICTIONARY: return "PLAIN_DICTIONARY";
    case PQ_ENC_RLE: return "RLE";
    case PQ_ENC_BIT_PACKED: return "BIT_PACKED";
    case PQ_ENC_DELTA_BINARY_PACKED: return "DELTA_BINARY_PACKED";
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return "DELTA_LENGTH_BYTE_ARRAY";
    case PQ_ENC_DELTA_BYTE_ARRAY: return "DELTA_BYTE_ARRAY";
    case PQ_ENC_RLE_DICTIONARY: return "RLE_DICTIONARY";
    case PQ_ENC_BYTE_STREAM_SPLIT: return "BYTE_STREAM_SPLIT";
    case PQ_ENC_AUTO: return "AUTO";
    }
    return "?";
}

/* The data-page encoding a leaf asked for, or NULL when the writer chooses. */
static const char *asked_encoding(const gtype *t)
{
    if (!t->has_opts)
        return NULL;
    if (t->opts.encoding != PQ_ENC_AUTO)
        return encoding_name(t->opts.encoding);
    return t->opts.dictionary == 1 ? "RLE_DICTIONARY" : NULL;
}

/* "path": "ENCODING" pairs (mixed == false) or "path" names of dictionary
 * leaves (mixed == true), comma-separated after the first. */
static void j_encodings(FILE *f, const pq_schema *s, const gtype *t, bool mixed, bool *first)
{
    if (t->kind != K_LEAF) {
        for (size_t i = 0; i < t->nchild; i++)
            j_encodings(f, s, t->child[i], mixed, first);
        return;
    }
    const char *enc = asked_encoding(t);
    if (!enc || mixed != (strcmp(enc, "RLE_DICTIONARY") == 0))
        return;
    fprintf(f, "%s\"%s\"", *first ? "" : ",", pq_schema_leaf_path(s, (size_t)t->leaf));
    if (!mixed)
        fprintf(f, ":\"%s\"", enc);
    *first = false;
}

/* What the file is meant to test, as footer.mjs checks it. */
void j_footer(FILE *f, const file_spec *fs, const pq_schema *s)
{
    size_t rgs = fs->rows == 0 ? 0
        : fs->wo.row_group_max_rows ? (fs->rows + fs->wo.row_group_max_rows - 1) / fs->wo.row_group_max_rows : 1;
    bool mixed = fs->flags & F_DICT_MIXED, first = true;
    fprintf(f, "\"footer\":{\"num_rows\":%zu,", fs->rows);
    if (!(fs->flags & F_RG_BY_BYTES))
        fprintf(f, "\"row_groups\":%zu,", rgs);
    fprintf(f, "\"codec\":\"%s\",\"page_type\":\"%s\",\"encodings\":{",
            codec_name(fs->wo.codec), fs->wo.page_version == 1 ? "DATA_PAGE" : "DATA_PAGE_V2");
    for (size_t i = 0; i < fs->ncols; i++)
        j_encodings(f, s, fs->cols[i], false, &first);
    fputs("},\"dictionary_mixed\":[", f);
    first = true;
    if (mixed)
        for (size_t i = 0; i < fs->ncols; i++)
            j_encodings(f, s, fs->cols[i], true, &first);
    fputs("],\"dictionary_fallback_in_chunk\":[", f);
    first = true;
    if (fs->flags & F_DICT_IN_CHUNK)
        for (size_t i = 0; i < fs->ncols; i++)
            j_encodings(f, s, fs->cols[i], true, &first);
    fputs("]},", f);
}
