/* pqcrypt.c - test-only decrypting Parquet reader (Encryption.md 4-5,
 * BloomFilter.md "Encryption", PageIndex.md). See pqcrypt.h. */
#include "pqcrypt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "decompress.h"
#include "decrypt.h"
#include "thrift_read.h"

/* ---- small helpers ------------------------------------------------------- */

static uint32_t rd_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

const char *pqc_module_name(int type)
{
    static const char *const t[] = { "footer", "column metadata", "data page",
        "dictionary page", "data page header", "dictionary page header",
        "column index", "offset index", "bloom filter header", "bloom filter bitset" };
    return type >= 0 && type < 10 ? t[type] : "(no module)";
}


static void set_fail(pqc_file *f, int type, int32_t rg, int32_t col, int32_t page,
                     size_t off, int code)
{
    f->fail_module = type;
    f->fail_rg = rg;
    f->fail_col = col;
    f->fail_page = page;
    f->fail_offset = off;
    f->fail_code = code;
}

static int add_module(pqc_file *f, int type, int32_t rg, int32_t col, int32_t page,
                      size_t off, size_t len, bool gcm, bool in_footer)
{
    if (f->nmodules == f->modules_cap) {
        size_t ncap = f->modules_cap ? f->modules_cap * 2 : 64;
        pqc_module *m = realloc(f->modules, ncap * sizeof *m);
        if (m == NULL)
            return PQ_ENOMEM;
        f->modules = m;
        f->modules_cap = ncap;
    }
    f->modules[f->nmodules++] = (pqc_module){ type, rg, col, page, off, len, gcm, in_footer };
    return 0;
}

/* Appends one value's bytes to a column. */
static int col_push(pqc_column *c, const void *p, size_t len)
{
    pqt_bytes *v = &c->values;
    if (v->n + 2 > c->values_cap_off) {
        size_t ncap = c->values_cap_off ? c->values_cap_off * 2 : 1024;
        uint32_t *o = realloc(v->off, ncap * sizeof *o);
        if (o == NULL)
            return PQ_ENOMEM;
        if (v->off == NULL)
            o[0] = 0;
        v->off = o;
        c->values_cap_off = ncap;
    }
    size_t used = v->off[v->n];
    if (used + len > c->values_cap_heap) {
        size_t ncap = c->values_cap_heap ? c->values_cap_heap : 4096;
        while (ncap < used + len)
            ncap *= 2;
        uint8_t *h = realloc(v->heap, ncap);
        if (h == NULL)
            return PQ_ENOMEM;
        v->heap = h;
        c->values_cap_heap = ncap;
    }
    if (len > 0)
        memcpy(v->heap + used, p, len);
    v->off[v->n + 1] = (uint32_t)(used + len);
    v->n++;
    return 0;
}

static int col_levels(pqc_column *c, size_t n, uint16_t **def, uint16_t **rep)
{
    uint16_t *d = realloc(c->def, (c->n_levels + n + 1) * sizeof *d);
    if (d == NULL)
        return PQ_ENOMEM;
    c->def = d;
    uint16_t *r = realloc(c->rep, (c->n_levels + n + 1) * sizeof *r);
    if (r == NULL)
        return PQ_ENOMEM;
    c->rep = r;
    *def = c->def + c->n_levels;
    *rep = c->rep + c->n_levels;
    c->n_levels += n;
    return 0;
}

bool pqc_bloom_check(const pqc_bloom *b, uint64_t h)
{
    static const uint32_t salt[8] = { 0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                      0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U };
    if (b->bitset == NULL || b->num_bytes < 32)
        return true; /* no filter: cannot exclude */
    uint64_t blocks = b->num_bytes / 32;
    uint64_t i = ((h >> 32) * blocks) >> 32;
    const uint8_t *blk = b->bitset + i * 32;
    uint32_t x = (uint32_t)h;
    for (int w = 0; w < 8; w++) {
        uint32_t bit = (uint32_t)(x * salt[w]) >> 27;
        if ((rd_le32(blk + 4 * w) & (UINT32_C(1) << bit)) == 0)
            return false;
    }
    return true;
}

/* ---- keys and AADs ------------------------------------------------------- */

static const pq_crypto_key *find_key(const pqc_opts *o, const uint8_t *id, size_t len)
{
    for (size_t i = 0; o != NULL && i < o->n_keys; i++)
        if (id != NULL && strlen(o->keys[i].id) == len && memcmp(o->keys[i].id, id, len) == 0)
            return o->keys[i].key;
    return NULL;
}

/* Module AAD, built here rather than with the writer's
 * pq_crypto_module_aad so the two are checked against each other
 * (Encryption.md 4.4.2 table): file AAD || type || row group (LE16) ||
 * column (LE16) || page ordinal (LE16), the ordinals only for the types
 * that carry them. */
static int module_aad(const pqc_file *f, pq_buf *aad, int type, int32_t rg, int32_t col,
                      int32_t page, pq_err *err)
{
    pq_buf_reset(aad);
    uint8_t suffix[7];
    size_t n = 0;
    suffix[n++] = (uint8_t)type;
    if (type != PQ_MODULE_FOOTER) {
        if (rg < 0 || rg > 32767 || col < 0 || col > 32767)
            return pq_err_set(err, PQ_EPARSE, "ordinals rg %d col %d do not fit an AAD", rg, col);
        suffix[n++] = (uint8_t)rg;
        suffix[n++] = (uint8_t)(rg >> 8);
        suffix[n++] = (uint8_t)col;
        suffix[n++] = (uint8_t)(col >> 8);
    }
    if (type == PQ_MODULE_DATA_PAGE || type == PQ_MODULE_DATA_PAGE_HEADER) {
        if (page < 0 || page > 32767)
            return pq_err_set(err, PQ_EPARSE, "page ordinal %d does not fit an AAD", page);
        suffix[n++] = (uint8_t)page;
        suffix[n++] = (uint8_t)(page >> 8);
    }
    if (pq_buf_append(aad, f->file_aad.data, f->file_aad.len) != 0 ||
        pq_buf_append(aad, suffix, n) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return 0;
}

/* Decrypts the GCM module at file offset off (limit: end of its region)
 * and records it. */
static int gcm_at(pqc_file *f, const pq_crypto_key *key, int type, int32_t rg, int32_t col,
                  int32_t page, size_t off, size_t limit, pq_buf *out, size_t *consumed,
                  pq_err *err)
{
    pq_buf aad;
    pq_buf_init(&aad);
    size_t used = 0;
    int rc = PQ_EPARSE;
    if (off > limit || limit > f->size) {
        pq_err_set(err, PQ_EPARSE, "module at offset %zu outside the file", off);
    } else {
        rc = module_aad(f, &aad, type, rg, col, page, err);
        if (rc == 0)
            rc = pqt_decrypt_gcm_module(key, aad.data, aad.len, f->data + off, limit - off, out,
                                        &used, err);
    }
    pq_buf_free(&aad);
    if (rc != 0) {
        set_fail(f, type, rg, col, page, off, rc);
        return pq_err_prefix(err, rc, "rg %d col %d %s (page ordinal %d) at offset %zu", rg, col,
                       pqc_module_name(type), page, off);
    }
    if (consumed != NULL)
        *consumed = used;
    if (add_module(f, type, rg, col, page, off, used, true, false) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return 0;
}

/* ---- footer ---------------------------------------------------------------- */

static int read_whole(const char *path, uint8_t **out, size_t *n, pq_err *err)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return pq_err_set(err, PQ_EIO, "%s: cannot open", path);
    long len = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        len = ftell(fp);
    int rc = 0;
    if (len < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        rc = pq_err_set(err, PQ_EIO, "%s: cannot size", path);
    } else if ((*out = malloc(len > 0 ? (size_t)len : 1)) == NULL) {
        rc = pq_err_set(err, PQ_ENOMEM, "%s: out of memory", path);
    } else if (fread(*out, 1, (size_t)len, fp) != (size_t)len) {
        free(*out);
        *out = NULL;
        rc = pq_err_set(err, PQ_EIO, "%s: short read", path);
    } else {
        *n = (size_t)len;
    }
    fclose(fp);
    return rc;
}

static int set_file_aad(pqc_file *f, const pqt_crypto_meta *m, const pqc_opts *o, pq_err *err)
{
    f->algorithm = m->algorithm;
    f->aad_prefix_stored = m->aad_prefix != NULL;
    f->supply_aad_prefix = m->supply_aad_prefix;
    pq_buf_reset(&f->file_aad);
    int rc = pqt_file_aad(m, o ? o->aad_prefix : NULL, o ? o->aad_prefix_len : 0,
                          &f->file_aad, err);
    f->file_aad_ok = rc == 0;
    return rc;
}

/* Wraps the plaintext FileMetaData in PAR1 || footer || len || PAR1 so
 * pqfile parses, validates it and builds the schema leaves. */
static int open_footer(pqc_file *f, const uint8_t *footer, size_t n, pq_err *err)
{
    size_t total = n + 12;
    uint8_t *frame = malloc(total);
    if (frame == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    memcpy(frame, "PAR1", 4);
    memcpy(frame + 4, footer, n);
    frame[4 + n] = (uint8_t)n;
    frame[5 + n] = (uint8_t)(n >> 8);
    frame[6 + n] = (uint8_t)(n >> 16);
    frame[7 + n] = (uint8_t)(n >> 24);
    memcpy(frame + 8 + n, "PAR1", 4);
    int rc = pqf_open_mem(&f->pf, frame, total, f->name, err);
    free(frame);
    if (rc != 0) {
        set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, f->footer_offset, rc);
        return pq_err_prefix(err, rc, "FileMetaData");
    }
    if (f->pf.footer_consumed != n)
        f->padded_modules++;
    return 0;
}

/* PARE: FileCryptoMetaData then the footer module fill [start, size - 8). */
static int open_encrypted_footer(pqc_file *f, const pqc_opts *o, size_t start, size_t len,
                                 pq_err *err)
{
    pqt_crypto_meta m;
    size_t used = 0;
    int rc = pqt_parse_file_crypto_metadata(f->data + start, len, &m, &used, err);
    if (rc != 0) {
        set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc);
        return pq_err_prefix(err, rc, "FileCryptoMetaData at offset %zu", start);
    }
    f->encrypted_footer = true;
    const pq_crypto_key *key = o && o->footer_key ? o->footer_key
                                                  : find_key(o, m.key_metadata, m.key_metadata_len);
    if (key == NULL)
        set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, PQ_ECRYPTO);
    if (key == NULL)
        return pq_err_set(err, PQ_ECRYPTO, "encrypted footer: no footer key (key id '%.*s')",
                          (int)m.key_metadata_len, m.key_metadata ? (const char *)m.key_metadata : "");
    if ((rc = set_file_aad(f, &m, o, err)) != 0) {
        set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc);
        return rc;
    }
    pq_buf footer;
    pq_buf_init(&footer);
    size_t mod_used = 0;
    rc = gcm_at(f, key, PQ_MODULE_FOOTER, -1, -1, -1, start + used, start + len, &footer,
                &mod_used, err);
    if (rc == 0 && used + mod_used != len)
        rc = pq_err_set(err, PQ_EPARSE, "encrypted footer: %zu bytes after the footer module",
                        len - used - mod_used);
    if (rc == 0)
        rc = open_footer(f, footer.data, footer.len, err);
    pq_buf_free(&footer);
    return rc;
}

/* PAR1: FileMetaData, then (signed files) nonce || tag. */
static int open_plain_footer(pqc_file *f, const pqc_opts *o, size_t start, size_t len,
                             pq_err *err)
{
    pqt_crypto_meta m;
    size_t used = 0;
    int rc = pqt_parse_footer_crypto(f->data + start, len, &m, &used, err);
    if (rc != 0) {
        set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc);
        return pq_err_prefix(err, rc, "FileMetaData at offset %zu", start);
    }
    if (m.algorithm == 0) {
        if (used != len) {
            set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, PQ_EPARSE);
            return pq_err_set(err, PQ_EPARSE, "footer: %zu bytes after FileMetaData (no "
                              "encryption_algorithm, so no signature expected)", len - used);
        }
        return open_footer(f, f->data + start, len, err);
    }
    f->signed_footer = true;
    if (len - used != PQ_CRYPTO_SIGNATURE_LEN) {
        set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, PQ_EPARSE);
        return pq_err_set(err, PQ_EPARSE, "signed footer: %zu bytes follow FileMetaData, want %d",
                          len - used, PQ_CRYPTO_SIGNATURE_LEN);
    }
    rc = set_file_aad(f, &m, o, err);
    const pq_crypto_key *key = o && o->footer_key ? o->footer_key
                                                  : find_key(o, m.key_metadata, m.key_metadata_len);
    if (o && o->skip_signature && rc == 0) {
        /* tamper tests: read on without checking the signature */
    } else if (key == NULL || rc != 0) {
        if (!(o && o->allow_missing_keys)) {
            set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc != 0 ? rc : PQ_ECRYPTO);
            return rc != 0 ? rc : pq_err_set(err, PQ_ECRYPTO,
                "plaintext footer: no footer signing key (key id '%.*s')",
                (int)m.key_metadata_len, m.key_metadata ? (const char *)m.key_metadata : "");
        }
    } else {
        pq_buf aad;
        pq_buf_init(&aad);
        rc = module_aad(f, &aad, PQ_MODULE_FOOTER, -1, -1, -1, err);
        if (rc == 0)
            rc = pqt_verify_footer_signature(key, aad.data, aad.len, f->data + start, used,
                                             f->data + start + used, err);
        pq_buf_free(&aad);
        if (rc != 0) {
            set_fail(f, PQ_MODULE_FOOTER, -1, -1, -1, start, rc);
            return pq_err_prefix(err, rc, "plaintext footer signature");
        }
        f->signature_verified = true;
        if (add_module(f, PQ_MODULE_FOOTER, -1, -1, -1, start, len, true, false) != 0)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    return open_footer(f, f->data + start, used, err);
}

/* ---- values ---------------------------------------------------------------- */

static size_t type_width(const pqc_column *c)
{
    switch (c->type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32:
    case PQ_FLOAT: return 4;
    case PQ_INT64:
    case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return c->type_length > 0 ? (size_t)c->type_length : 0;
    default: return 0; /* BYTE_ARRAY */
    }
}

/* PLAIN values into a pqt_bytes (dictionary pages and PLAIN data pages). */
static int plain_values(const pqc_column *c, const uint8_t *p, size_t len, size_t n,
                        pqt_bytes *out, pq_err *err)
{
    memset(out, 0, sizeof *out);
    size_t used = 0;
    if (c->type == PQ_BYTE_ARRAY) {
        if (pqt_plain_decode_bytes(p, len, n, out, &used) != 0)
            return pq_err_set(err, PQ_EPARSE, "PLAIN byte arrays: %zu values do not decode", n);
        return 0;
    }
    size_t w = type_width(c);
    if (w == 0)
        return pq_err_set(err, PQ_EPARSE, "FLBA without a type_length");
    out->off = malloc((n + 1) * sizeof *out->off);
    out->heap = malloc(n * w + 1);
    if (out->off == NULL || out->heap == NULL) {
        pqt_bytes_free(out);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    int rc = c->type == PQ_BOOLEAN ? pqt_plain_decode_bool(p, len, out->heap, n, &used)
                                   : pqt_plain_decode_fixed(p, len, out->heap, n, w, &used);
    if (rc != 0) {
        pqt_bytes_free(out);
        return pq_err_set(err, PQ_EPARSE, "PLAIN: %zu values of %zu bytes do not fit %zu bytes",
                          n, w, len);
    }
    for (size_t i = 0; i <= n; i++)
        out->off[i] = (uint32_t)(i * w);
    out->n = n;
    return 0;
}

static int push_all(pqc_column *c, const pqt_bytes *b, pq_err *err)
{
    for (size_t i = 0; i < b->n; i++)
        if (col_push(c, b->heap + b->off[i], b->off[i + 1] - b->off[i]) != 0)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return 0;
}

static int push_fixed(pqc_column *c, const uint8_t *raw, size_t n, size_t w, pq_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (col_push(c, raw + i * w, w) != 0)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return 0;
}

/* n defined values of one data page in encoding enc. */
static int decode_values(pqc_column *c, int enc, const uint8_t *p, size_t len, size_t n,
                         const pqt_bytes *dict, pq_err *err)
{
    size_t w = type_width(c);
    int rc = 0;
    if (n == 0)
        return 0;
    switch (enc) {
    case PQ_ENC_PLAIN: {
        pqt_bytes b;
        if ((rc = plain_values(c, p, len, n, &b, err)) != 0)
            return rc;
        rc = push_all(c, &b, err);
        pqt_bytes_free(&b);
        return rc;
    }
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: {
        if (dict == NULL)
            return pq_err_set(err, PQ_EPARSE, "dictionary-encoded page without a dictionary page");
        if (len < 1 || p[0] > 32)
            return pq_err_set(err, PQ_EPARSE, "dictionary indices: bad bit width");
        uint32_t *idx = malloc((n + 1) * sizeof *idx);
        if (idx == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        if (pqt_rle_decode(p + 1, len - 1, p[0], idx, n, NULL) != 0)
            rc = pq_err_set(err, PQ_EPARSE, "dictionary indices: %zu do not decode", n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (idx[i] >= dict->n)
                rc = pq_err_set(err, PQ_EPARSE, "dictionary index %u >= %zu entries", idx[i],
                                dict->n);
            else if (col_push(c, dict->heap + dict->off[idx[i]],
                              dict->off[idx[i] + 1] - dict->off[idx[i]]) != 0)
                rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
        }
        free(idx);
        return rc;
    }
    case PQ_ENC_RLE: { /* booleans: 4-byte length, then the hybrid, width 1 */
        if (c->type != PQ_BOOLEAN || len < 4 || rd_le32(p) > len - 4)
            return pq_err_set(err, PQ_EPARSE, "RLE values: not a well-formed boolean run");
        uint32_t *v = malloc((n + 1) * sizeof *v);
        if (v == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        if (pqt_rle_decode(p + 4, rd_le32(p), 1, v, n, NULL) != 0)
            rc = pq_err_set(err, PQ_EPARSE, "RLE booleans: %zu do not decode", n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            uint8_t b = (uint8_t)v[i];
            if (col_push(c, &b, 1) != 0)
                rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
        }
        free(v);
        return rc;
    }
    case PQ_ENC_DELTA_BINARY_PACKED: {
        if (c->type != PQ_INT32 && c->type != PQ_INT64)
            return pq_err_set(err, PQ_EPARSE, "DELTA_BINARY_PACKED on a non-integer column");
        size_t got = 0;
        uint8_t *raw = malloc(n * w + 1);
        if (raw == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        rc = c->type == PQ_INT32 ? pqt_delta_decode_i32(p, len, (int32_t *)(void *)raw, n, &got, NULL)
                                 : pqt_delta_decode_i64(p, len, (int64_t *)(void *)raw, n, &got, NULL);
        if (rc != 0 || got != n)
            rc = pq_err_set(err, PQ_EPARSE, "DELTA_BINARY_PACKED: %zu of %zu values", got, n);
        else
            rc = push_fixed(c, raw, n, w, err);
        free(raw);
        return rc;
    }
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY: {
        pqt_bytes b = { 0 };
        rc = enc == PQ_ENC_DELTA_BYTE_ARRAY ? pqt_delta_bytes_decode(p, len, &b, NULL)
                                            : pqt_delta_length_decode(p, len, &b, NULL);
        if (rc != 0 || b.n != n)
            rc = pq_err_set(err, PQ_EPARSE, "%s: %zu of %zu values", pqf_encoding_name(enc),
                            b.n, n);
        else
            rc = push_all(c, &b, err);
        pqt_bytes_free(&b);
        return rc;
    }
    case PQ_ENC_BYTE_STREAM_SPLIT: {
        if (w == 0 || c->type == PQ_BOOLEAN)
            return pq_err_set(err, PQ_EPARSE, "BYTE_STREAM_SPLIT on %s", pqf_type_name(c->type));
        uint8_t *raw = malloc(n * w + 1);
        if (raw == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        if (pqt_bss_decode(p, len, raw, n, w, NULL) != 0)
            rc = pq_err_set(err, PQ_EPARSE, "BYTE_STREAM_SPLIT: %zu values do not decode", n);
        else
            rc = push_fixed(c, raw, n, w, err);
        free(raw);
        return rc;
    }
    default:
        return pq_err_set(err, PQ_EPARSE, "unsupported value encoding %d (%s)", enc,
                          pqf_encoding_name(enc));
    }
}

/* ---- pages ------------------------------------------------------------------ */

/* Fills pg from a parsed, validated PageHeader (as pqfile does for
 * plaintext pages); data/compressed_size are set by the caller. */
static int page_from_header(pqf_page *pg, tr_node *h, pq_err *err)
{
    memset(pg, 0, sizeof *pg);
    pg->num_values = pg->encoding = -1;
    pg->def_encoding = pg->rep_encoding = -1;
    pg->num_nulls = pg->num_rows = pg->def_len = pg->rep_len = -1;
    pg->is_compressed = true;
    pg->header = h;
    pg->type = (int)tr_field_int(h, 1, -1);
    pg->uncompressed_size = (int32_t)tr_field_int(h, 2, -1);
    pg->compressed_size = (int32_t)tr_field_int(h, 3, -1);
    pg->has_crc = tr_has(h, 4);
    pg->crc = (uint32_t)tr_field_int(h, 4, 0);
    const tr_node *s;
    switch (pg->type) {
    case PQ_PAGE_DATA:
        if ((s = tr_field_struct(h, 5)) == NULL)
            return pq_err_set(err, PQ_EPARSE, "DATA_PAGE without data_page_header");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->encoding = (int32_t)tr_field_int(s, 2, -1);
        pg->def_encoding = (int32_t)tr_field_int(s, 3, -1);
        pg->rep_encoding = (int32_t)tr_field_int(s, 4, -1);
        return 0;
    case PQ_PAGE_DICTIONARY:
        if ((s = tr_field_struct(h, 7)) == NULL)
            return pq_err_set(err, PQ_EPARSE, "DICTIONARY_PAGE without its header");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->encoding = (int32_t)tr_field_int(s, 2, -1);
        return 0;
    case PQ_PAGE_DATA_V2:
        if ((s = tr_field_struct(h, 8)) == NULL)
            return pq_err_set(err, PQ_EPARSE, "DATA_PAGE_V2 without data_page_header_v2");
        pg->num_values = (int32_t)tr_field_int(s, 1, -1);
        pg->num_nulls = (int32_t)tr_field_int(s, 2, -1);
        pg->num_rows = (int32_t)tr_field_int(s, 3, -1);
        pg->encoding = (int32_t)tr_field_int(s, 4, -1);
        pg->def_len = (int32_t)tr_field_int(s, 5, -1);
        pg->rep_len = (int32_t)tr_field_int(s, 6, -1);
        pg->is_compressed = tr_field_bool(s, 7, true);
        return 0;
    default:
        return pq_err_set(err, PQ_EPARSE, "page type %d (%s) in a column chunk", pg->type,
                          pqf_page_type_name(pg->type));
    }
}

/* Decodes one uncompressed data page into c. */
static int data_page_values(pqc_column *c, const pqf_page *pg, const uint8_t *page, size_t len,
                            const pqt_bytes *dict, pq_err *err)
{
    pqf_parts parts;
    int rc = pqf_page_split(pg, page, len, c->max_rep, c->max_def, &parts, err);
    if (rc != 0)
        return rc;
    if (pg->num_values < 0)
        return pq_err_set(err, PQ_EPARSE, "data page without num_values");
    size_t n = (size_t)pg->num_values;
    uint16_t *def, *rep;
    if (col_levels(c, n, &def, &rep) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    if ((rc = pqf_levels_decode(parts.rep, parts.rep_len, c->max_rep, n, rep, NULL, err)) != 0 ||
        (rc = pqf_levels_decode(parts.def, parts.def_len, c->max_def, n, def, NULL, err)) != 0)
        return pq_err_prefix(err, rc, "levels");
    size_t defined = 0;
    for (size_t i = 0; i < n; i++)
        defined += def[i] == (uint16_t)c->max_def;
    if (pg->type == PQ_PAGE_DATA_V2 && pg->num_nulls >= 0 &&
        (size_t)pg->num_nulls != n - defined)
        return pq_err_set(err, PQ_EPARSE, "v2 num_nulls %d, levels say %zu", pg->num_nulls,
                          n - defined);
    return decode_values(c, pg->encoding, parts.values, parts.values_len, defined, dict, err);
}

typedef struct chunk_ctx {
    pqc_file *f;
    pqc_column *c;
    const pq_crypto_key *key;  /* NULL: plaintext column */
    bool skip_crc;
    int32_t rg, col;
    const tr_node *md;         /* ColumnMetaData (decrypted if it was encrypted) */
    int codec;
    int64_t num_values;
    size_t start, end;
    /* data page header offsets, for the offset index check */
    size_t *page_off, *page_len;
    int64_t *page_first_row;
    size_t npages, pages_cap;
} chunk_ctx;

static int note_page(chunk_ctx *x, size_t off, size_t len, int64_t first_row)
{
    if (x->npages == x->pages_cap) {
        size_t ncap = x->pages_cap ? x->pages_cap * 2 : 16;
        size_t *a = realloc(x->page_off, ncap * sizeof *a);
        if (a == NULL)
            return PQ_ENOMEM;
        x->page_off = a;
        size_t *b = realloc(x->page_len, ncap * sizeof *b);
        if (b == NULL)
            return PQ_ENOMEM;
        x->page_len = b;
        int64_t *r = realloc(x->page_first_row, ncap * sizeof *r);
        if (r == NULL)
            return PQ_ENOMEM;
        x->page_first_row = r;
        x->pages_cap = ncap;
    }
    x->page_off[x->npages] = off;
    x->page_len[x->npages] = len;
    x->page_first_row[x->npages] = first_row;
    x->npages++;
    return 0;
}

/* The page header at off, decrypted when the column is encrypted, into
 * *pg (which may point into *h); *hdr_used = its bytes in the file. */
static int read_page_header(chunk_ctx *x, size_t off, int32_t ord, bool want_dict, pq_buf *hdr,
                            tr_node **h, pqf_page *pg, size_t *hdr_used, pq_err *err)
{
    pqc_file *f = x->f;
    const uint8_t *hdr_bytes;
    size_t hdr_avail;
    int rc;

    if (x->key != NULL) {
        rc = gcm_at(f, x->key, want_dict ? PQ_MODULE_DICT_PAGE_HEADER : PQ_MODULE_DATA_PAGE_HEADER,
                    x->rg, x->col, ord, off, x->end, hdr, hdr_used, err);
        if (rc != 0)
            return rc;
        hdr_bytes = hdr->data;
        hdr_avail = hdr->len;
    } else {
        hdr_bytes = f->data + off;
        hdr_avail = x->end - off;
    }
    size_t consumed = 0;
    rc = tr_parse(hdr_bytes, hdr_avail, h, &consumed, err);
    if (rc == 0)
        rc = tr_validate(*h, &pqf_spec_page_header, err);
    if (rc == 0)
        rc = page_from_header(pg, *h, err);
    if (rc != 0) {
        set_fail(f, want_dict ? PQ_MODULE_DICT_PAGE_HEADER : PQ_MODULE_DATA_PAGE_HEADER, x->rg,
                 x->col, ord, off, rc);
        return pq_err_prefix(err, rc, "rg %d col %d page header at offset %zu", x->rg, x->col, off);
    }
    if (x->key != NULL && consumed != hdr->len)
        f->padded_modules++;
    if (x->key == NULL)
        *hdr_used = consumed;
    return 0;
}

/* The page CRC, when the header carries one and the caller wants it. */
static int check_page_crc(chunk_ctx *x, const pqf_page *pg, size_t off, size_t boff, int32_t ord,
                          bool is_dict, pq_err *err)
{
    pqc_file *f = x->f;
    if (!pg->has_crc || x->skip_crc)
        return 0;
    /* parquet.thrift: over the bytes as written (after compression
     * and encryption), header excluded */
    uint32_t crc = (uint32_t)crc32(0L, f->data + boff, (uInt)pg->compressed_size);
    if (crc != pg->crc) {
        set_fail(f, is_dict ? PQ_MODULE_DICT_PAGE : PQ_MODULE_DATA_PAGE, x->rg, x->col, ord,
                 boff, PQ_EPARSE);
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d page at %zu: CRC %08x in the header, "
                          "%08x over the %d page bytes as written", x->rg, x->col, off, pg->crc,
                          crc, pg->compressed_size);
    }
    f->crc_pages++;
    return 0;
}

/* The page body at boff: decrypted into body when the column is encrypted
 * (GCM, or CTR under AES_GCM_CTR_V1), else in place; pg->data points at
 * it. *body_used = its bytes in the file. */
static int read_page_body(chunk_ctx *x, pqf_page *pg, size_t boff, int32_t ord, bool is_dict,
                          pq_buf *body, size_t *body_used, pq_err *err)
{
    pqc_file *f = x->f;
    if (x->key == NULL) {
        pg->data = f->data + boff;
        *body_used = (size_t)pg->compressed_size;
        return 0;
    }
    int mt = is_dict ? PQ_MODULE_DICT_PAGE : PQ_MODULE_DATA_PAGE;
    size_t limit = boff + (size_t)pg->compressed_size;
    int rc;
    if (f->algorithm == PQ_AES_GCM_CTR_V1) {
        rc = pqt_decrypt_ctr_module(x->key, f->data + boff, limit - boff, body, body_used, err);
        if (rc != 0) {
            set_fail(f, mt, x->rg, x->col, ord, boff, rc);
            return pq_err_prefix(err, rc, "rg %d col %d %s at offset %zu", x->rg, x->col,
                                 pqc_module_name(mt), boff);
        }
        if (add_module(f, mt, x->rg, x->col, ord, boff, *body_used, false, false) != 0)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    } else if ((rc = gcm_at(f, x->key, mt, x->rg, x->col, ord, boff, limit, body, body_used,
                            err)) != 0) {
        return rc;
    }
    /* Encryption.md does not say; parquet-mr and Arrow store the
     * encrypted module size (length prefix included) here. */
    if (*body_used != (size_t)pg->compressed_size) {
        set_fail(f, mt, x->rg, x->col, ord, boff, PQ_EPARSE);
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d %s at %zu: compressed_page_size %d "
                          "but the encrypted module is %zu bytes", x->rg, x->col,
                          pqc_module_name(mt), boff, pg->compressed_size, *body_used);
    }
    pg->data = body->data;
    pg->compressed_size = (int32_t)body->len;
    return 0;
}

/* The decompressed page's values: a dictionary page replaces *dict; a
 * data page appends to the column, and its place (span bytes at
 * pg->offset) and first row are noted for the offset index check. */
static int page_values(chunk_ctx *x, const pqf_page *pg, const uint8_t *plain, size_t plain_len,
                       pqt_bytes *dict, size_t span, int32_t *data_ordinal,
                       int64_t *rows_so_far, pq_err *err)
{
    pqc_column *c = x->c;
    int rc;
    if (pg->type == PQ_PAGE_DICTIONARY) {
        pqt_bytes_free(dict);
        if (pg->encoding != PQ_ENC_PLAIN && pg->encoding != PQ_ENC_PLAIN_DICTIONARY)
            rc = pq_err_set(err, PQ_EPARSE, "dictionary page encoding %d", pg->encoding);
        else
            rc = plain_values(c, plain, plain_len, pg->num_values < 0 ? 0 : (size_t)pg->num_values,
                              dict, err);
        c->dict_pages++;
        return rc;
    }
    size_t before = c->n_levels;
    rc = data_page_values(c, pg, plain, plain_len, dict->n ? dict : NULL, err);
    if (rc == 0) {
        int64_t rows = 0;
        for (size_t i = before; i < c->n_levels; i++)
            rows += c->rep[i] == 0;
        rc = note_page(x, pg->offset, span, *rows_so_far) != 0
                 ? pq_err_set(err, PQ_ENOMEM, "out of memory") : 0;
        *rows_so_far += rows;
    }
    (*data_ordinal)++;
    c->data_pages++;
    return rc;
}

/* One page at *pos: header (decrypted when the column is encrypted), then
 * the body; dictionary pages fill *dict. */
static int read_page(chunk_ctx *x, size_t *pos, int32_t *data_ordinal, bool first,
                     pqt_bytes *dict, int64_t *rows_so_far, pq_err *err)
{
    pqc_file *f = x->f;
    size_t off = *pos;
    bool want_dict = first && tr_field_int(x->md, 11, -1) >= 0;
    int32_t ord = want_dict ? -1 : *data_ordinal;
    pq_buf hdr, body;
    pq_buf_init(&hdr);
    pq_buf_init(&body);
    tr_node *h = NULL;
    pqf_page pg;
    memset(&pg, 0, sizeof pg);
    uint8_t *plain = NULL;
    size_t plain_len = 0, hdr_used = 0, body_used = 0;

    int rc = read_page_header(x, off, ord, want_dict, &hdr, &h, &pg, &hdr_used, err);
    if (rc != 0)
        goto out;
    bool is_dict = pg.type == PQ_PAGE_DICTIONARY;
    if (is_dict != want_dict) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d page at offset %zu is %s but %s",
                        x->rg, x->col, off, pqf_page_type_name(pg.type),
                        want_dict ? "dictionary_page_offset points at it"
                                  : "it is not the first page at dictionary_page_offset");
        goto out;
    }
    size_t boff = off + hdr_used;
    if (pg.compressed_size < 0 || (size_t)pg.compressed_size > x->end - boff) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d page at %zu: compressed_page_size %d runs "
                        "past the chunk end %zu", x->rg, x->col, off, pg.compressed_size, x->end);
        goto out;
    }
    if ((rc = check_page_crc(x, &pg, off, boff, ord, is_dict, err)) != 0 ||
        (rc = read_page_body(x, &pg, boff, ord, is_dict, &body, &body_used, err)) != 0)
        goto out;
    pg.offset = off;
    pg.header_len = hdr_used;
    rc = pqf_page_decompress(&pg, (pq_codec)x->codec, &plain, &plain_len, err);
    if (rc == 0)
        rc = page_values(x, &pg, plain, plain_len, dict, hdr_used + body_used, data_ordinal,
                         rows_so_far, err);
    if (rc != 0) {
        if (f->fail_module < 0)
            set_fail(f, is_dict ? PQ_MODULE_DICT_PAGE : PQ_MODULE_DATA_PAGE, x->rg, x->col, ord,
                     boff, rc);
        rc = pq_err_prefix(err, rc, "rg %d col %d (%s) %s page at offset %zu", x->rg, x->col,
                           x->c->path, is_dict ? "dictionary" : "data", off);
        goto out;
    }
    *pos = boff + body_used;
out:
    free(plain);
    tr_free(h);
    pq_buf_free(&hdr);
    pq_buf_free(&body);
    return rc;
}

/* ---- indexes and bloom filters --------------------------------------------- */

/* Parses a ColumnIndex / OffsetIndex / BloomFilterHeader: decrypted from
 * the module at off when the column is encrypted, else in place. *used =
 * bytes taken in the file. */
static int index_struct(chunk_ctx *x, int mtype, size_t off, size_t limit,
                        const tr_sspec *spec, tr_node **out, pq_buf *plain, size_t *used,
                        pq_err *err)
{
    pqc_file *f = x->f;
    *out = NULL;
    if (off >= f->size || limit > f->size || off >= limit) {
        set_fail(f, mtype, x->rg, x->col, -1, off, PQ_EPARSE);
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d %s at [%zu, %zu) outside the file",
                          x->rg, x->col, pqc_module_name(mtype), off, limit);
    }
    const uint8_t *p = f->data + off;
    size_t n = limit - off;
    if (x->key != NULL) {
        int rc = gcm_at(f, x->key, mtype, x->rg, x->col, -1, off, limit, plain, used, err);
        if (rc != 0)
            return rc;
        p = plain->data;
        n = plain->len;
    }
    size_t consumed = 0;
    int rc = tr_parse(p, n, out, &consumed, err);
    if (rc == 0)
        rc = tr_validate(*out, spec, err);
    if (rc == 0 && x->key != NULL && consumed != n)
        f->padded_modules++;
    if (rc != 0) {
        tr_free(*out);
        *out = NULL;
        set_fail(f, mtype, x->rg, x->col, -1, off, rc);
        return pq_err_prefix(err, rc, "rg %d col %d %s at offset %zu", x->rg, x->col,
                       pqc_module_name(mtype), off);
    }
    if (x->key == NULL)
        *used = consumed;
    return 0;
}

/* OffsetIndex: one PageLocation per data page, at the page header, sized
 * header + page (encrypted modules included), first_row_index as read. */
static int check_offset_index(chunk_ctx *x, pq_err *err)
{
    const tr_node *cc = tr_list_at(tr_field_list(pqf_row_group(&x->f->pf, (size_t)x->rg), 1),
                                   (size_t)x->col);
    int64_t off = tr_field_int(cc, 4, -1), len = tr_field_int(cc, 5, -1);
    if (off < 0)
        return 0;
    if (len <= 0)
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d: offset index without a length", x->rg,
                          x->col);
    tr_node *oi = NULL;
    pq_buf plain;
    pq_buf_init(&plain);
    size_t used = 0;
    int rc = index_struct(x, PQ_MODULE_OFFSET_INDEX, (size_t)off, (size_t)off + (size_t)len,
                          &pqf_spec_offset_index, &oi, &plain, &used, err);
    if (rc == 0 && used != (size_t)len)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: offset_index_length %lld, module/struct "
                        "is %zu bytes", x->rg, x->col, (long long)len, used);
    const tr_node *locs = rc == 0 ? tr_field_list(oi, 1) : NULL;
    if (rc == 0 && tr_list_len(locs) != x->npages)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: offset index has %zu pages, chunk has %zu "
                        "data pages", x->rg, x->col, tr_list_len(locs), x->npages);
    for (size_t i = 0; rc == 0 && i < x->npages; i++) {
        const tr_node *pl = tr_list_at(locs, i);
        int64_t po = tr_field_int(pl, 1, -1), ps = tr_field_int(pl, 2, -1),
                fr = tr_field_int(pl, 3, -1);
        if (po != (int64_t)x->page_off[i] || ps != (int64_t)x->page_len[i] ||
            fr != x->page_first_row[i])
            rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: offset index page %zu says "
                            "(offset %lld, size %lld, first row %lld), the page is (%zu, %zu, "
                            "%lld)", x->rg, x->col, i, (long long)po, (long long)ps,
                            (long long)fr, x->page_off[i], x->page_len[i],
                            (long long)x->page_first_row[i]);
    }
    if (rc != 0 && x->f->fail_module < 0)
        set_fail(x->f, PQ_MODULE_OFFSET_INDEX, x->rg, x->col, -1, (size_t)off, rc);
    if (rc == 0)
        x->c->offset_indexes++;
    tr_free(oi);
    pq_buf_free(&plain);
    return rc;
}

static int check_column_index(chunk_ctx *x, pq_err *err)
{
    const tr_node *cc = tr_list_at(tr_field_list(pqf_row_group(&x->f->pf, (size_t)x->rg), 1),
                                   (size_t)x->col);
    int64_t off = tr_field_int(cc, 6, -1), len = tr_field_int(cc, 7, -1);
    if (off < 0)
        return 0;
    if (len <= 0)
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d: column index without a length", x->rg,
                          x->col);
    tr_node *ci = NULL;
    pq_buf plain;
    pq_buf_init(&plain);
    size_t used = 0;
    int rc = index_struct(x, PQ_MODULE_COLUMN_INDEX, (size_t)off, (size_t)off + (size_t)len,
                          &pqf_spec_column_index, &ci, &plain, &used, err);
    if (rc == 0 && used != (size_t)len)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: column_index_length %lld, module/struct "
                        "is %zu bytes", x->rg, x->col, (long long)len, used);
    if (rc == 0 && tr_list_len(tr_field_list(ci, 1)) != x->npages)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: column index has %zu null_pages, chunk "
                        "has %zu data pages", x->rg, x->col, tr_list_len(tr_field_list(ci, 1)),
                        x->npages);
    if (rc != 0 && x->f->fail_module < 0)
        set_fail(x->f, PQ_MODULE_COLUMN_INDEX, x->rg, x->col, -1, (size_t)off, rc);
    if (rc == 0)
        x->c->column_indexes++;
    tr_free(ci);
    pq_buf_free(&plain);
    return rc;
}

/* Header then bitset: two modules when encrypted (BloomFilter.md). */
static int read_bloom(chunk_ctx *x, pq_err *err)
{
    pqc_file *f = x->f;
    int64_t off = tr_field_int(x->md, 14, -1), len = tr_field_int(x->md, 15, -1);
    if (off < 0)
        return 0;
    size_t limit = len > 0 ? (size_t)off + (size_t)len : f->size;
    tr_node *h = NULL;
    pq_buf plain, bits;
    pq_buf_init(&plain);
    pq_buf_init(&bits);
    size_t used = 0, bused = 0;
    int rc = index_struct(x, PQ_MODULE_BLOOM_HEADER, (size_t)off, limit, &pqf_spec_bloom_header,
                          &h, &plain, &used, err);
    int64_t nb = rc == 0 ? tr_field_int(h, 1, -1) : -1;
    size_t boff = (size_t)off + used;
    if (rc == 0 && (nb < 32 || nb % 32 != 0))
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: bloom numBytes %lld", x->rg, x->col,
                        (long long)nb);
    const uint8_t *bitset = NULL;
    if (rc == 0 && x->key != NULL) {
        rc = gcm_at(f, x->key, PQ_MODULE_BLOOM_BITSET, x->rg, x->col, -1, boff, limit, &bits,
                    &bused, err);
        if (rc == 0 && bits.len != (size_t)nb) {
            set_fail(f, PQ_MODULE_BLOOM_BITSET, x->rg, x->col, -1, boff, PQ_EPARSE);
            rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: bloom bitset module holds %zu bytes, "
                            "header says %lld", x->rg, x->col, bits.len, (long long)nb);
        }
        bitset = bits.data;
    } else if (rc == 0) {
        if ((size_t)nb > limit - boff)
            rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: bloom bitset runs past its end",
                            x->rg, x->col);
        bitset = f->data + boff;
        bused = (size_t)nb;
    }
    if (rc == 0 && len > 0 && used + bused != (size_t)len)
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: bloom_filter_length %lld, header + bitset "
                        "take %zu", x->rg, x->col, (long long)len, used + bused);
    if (rc == 0) {
        pqc_bloom *b = &x->c->blooms[x->rg];
        b->bitset = malloc((size_t)nb);
        if (b->bitset == NULL) {
            rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
        } else {
            memcpy(b->bitset, bitset, (size_t)nb);
            b->num_bytes = (size_t)nb;
        }
    }
    tr_free(h);
    pq_buf_free(&plain);
    pq_buf_free(&bits);
    return rc;
}

/* ---- column chunks ----------------------------------------------------------- */

static int chunk_key(pqc_file *f, const pqc_opts *o, pqc_column *c, const tr_node *cc,
                     const pq_crypto_key **key, pq_err *err)
{
    *key = NULL;
    const tr_node *cm = tr_field_struct(cc, 8);
    if (cm == NULL)
        return 0;
    c->encrypted = true;
    if (!f->file_aad_ok)
        return pq_err_set(err, PQ_ECRYPTO, "column %s is encrypted but the file AAD is unknown "
                          "(AAD prefix not supplied?)", c->path);
    if (tr_has(cm, 1)) {
        c->footer_key = true;
        *key = o ? o->footer_key : NULL;
        if (*key == NULL) {
            size_t kl = 0;
            const uint8_t *km = NULL;
            pqt_crypto_meta m;
            pq_err ignored;
            /* the footer key id: FileCryptoMetaData / FileMetaData field 9 */
            if (f->encrypted_footer &&
                pqt_parse_file_crypto_metadata(f->data + f->footer_offset,
                                               f->size - 8 - f->footer_offset, &m, NULL,
                                               &ignored) == 0) {
                km = m.key_metadata;
                kl = m.key_metadata_len;
            } else if (!f->encrypted_footer &&
                       pqt_parse_footer_crypto(f->data + f->footer_offset,
                                               f->size - 8 - f->footer_offset, &m, NULL,
                                               &ignored) == 0) {
                km = m.key_metadata;
                kl = m.key_metadata_len;
            }
            *key = find_key(o, km, kl);
        }
    } else {
        const tr_node *ck = tr_field_struct(cm, 2);
        size_t kl = 0;
        const uint8_t *km = tr_field_bin(ck, 2, &kl);
        snprintf(c->key_id, sizeof c->key_id, "%.*s", (int)kl, km ? (const char *)km : "");
        if (!pqf_leaf_matches(&f->pf, &f->pf.leaves[c - f->cols], tr_field_list(ck, 1)))
            return pq_err_set(err, PQ_EPARSE, "column %s: EncryptionWithColumnKey.path_in_schema "
                              "names another column", c->path);
        *key = find_key(o, km, kl);
    }
    if (*key == NULL) {
        if (o && o->allow_missing_keys) {
            c->skipped = true;
            return 0;
        }
        return pq_err_set(err, PQ_ECRYPTO, "column %s: no key for key id '%s'", c->path,
                          c->footer_key ? "(footer key)" : c->key_id);
    }
    return 0;
}

/* The ColumnMetaData module inside the footer (encrypted_column_metadata,
 * framed as usual), decrypted into plain and parsed into *decmeta, which
 * x->md then reads. Fields that differ from the plaintext copy are
 * counted (meta_mismatches). */
static int decrypt_column_meta(chunk_ctx *x, const tr_node *cc, const uint8_t *enc, size_t elen,
                               pq_buf *plain, tr_node **decmeta, pq_err *err)
{
    pqc_file *f = x->f;
    int32_t rg = x->rg, col = x->col;
    if (elen < 4 || rd_le32(enc) != elen - 4)
        return pq_err_set(err, PQ_EPARSE, "rg %d col %d: encrypted_column_metadata of %zu bytes "
                          "is not one length-prefixed module", rg, col, elen);
    pq_buf aad;
    pq_buf_init(&aad);
    size_t used = 0;
    int rc = module_aad(f, &aad, PQ_MODULE_COLUMN_META, rg, col, -1, err);
    if (rc == 0)
        rc = pqt_decrypt_gcm_module(x->key, aad.data, aad.len, enc, elen, plain, &used, err);
    pq_buf_free(&aad);
    size_t foff = f->encrypted_footer ? (size_t)(enc - f->pf.data) - 4
                                      : f->footer_offset + (size_t)(enc - f->pf.data) - 4;
    if (rc != 0) {
        set_fail(f, PQ_MODULE_COLUMN_META, rg, col, -1, foff, rc);
        return pq_err_prefix(err, rc, "rg %d col %d column metadata", rg, col);
    }
    if (add_module(f, PQ_MODULE_COLUMN_META, rg, col, -1, foff, used, true, true) != 0)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    size_t consumed = 0;
    rc = tr_parse(plain->data, plain->len, decmeta, &consumed, err);
    if (rc == 0 && consumed != plain->len)
        f->padded_modules++;
    if (rc != 0) {
        set_fail(f, PQ_MODULE_COLUMN_META, rg, col, -1, foff, rc);
        return pq_err_prefix(err, rc, "rg %d col %d decrypted ColumnMetaData", rg, col);
    }
    const tr_node *plain_md = tr_field_struct(cc, 3);
    static const int16_t same[] = { 1, 4, 5, 6, 7, 9, 10, 11, 14, 15 };
    for (size_t k = 0; plain_md != NULL && k < sizeof same / sizeof same[0]; k++)
        if (tr_field_int(plain_md, same[k], -1) != tr_field_int(*decmeta, same[k], -1)) {
            f->meta_mismatches++;
            break;
        }
    x->md = *decmeta;
    x->c->encmeta = true;
    return 0;
}

static int read_chunk(pqc_file *f, const pqc_opts *o, int32_t rg, int32_t col, pq_err *err)
{
    pqc_column *c = &f->cols[col];
    const tr_node *rgn = pqf_row_group(&f->pf, (size_t)rg);
    const tr_node *cc = tr_list_at(tr_field_list(rgn, 1), (size_t)col);
    int32_t rg_ord = (int32_t)tr_field_int(rgn, 7, rg);
    if (rg_ord != rg)
        return pq_err_set(err, PQ_EPARSE, "row group %d has ordinal %d", rg, rg_ord);
    chunk_ctx x = { .f = f, .c = c, .rg = rg, .col = col, .skip_crc = o && o->skip_crc };
    tr_node *decmeta = NULL;
    pq_buf plain;
    pq_buf_init(&plain);
    pqt_bytes dict = { 0 };
    int rc = chunk_key(f, o, c, cc, &x.key, err);
    if (rc != 0 || c->skipped)
        goto out;
    x.md = tr_field_struct(cc, 3);
    size_t elen = 0;
    const uint8_t *enc = tr_field_bin(cc, 9, &elen);
    if (enc != NULL && x.key != NULL &&
        (rc = decrypt_column_meta(&x, cc, enc, elen, &plain, &decmeta, err)) != 0)
        goto out;
    if (x.md == NULL) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: no ColumnMetaData", rg, col);
        goto out;
    }
    if (tr_field_int(x.md, 1, -1) != c->type) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: ColumnMetaData type %lld, schema says %s",
                        rg, col, (long long)tr_field_int(x.md, 1, -1), pqf_type_name(c->type));
        goto out;
    }
    x.codec = (int)tr_field_int(x.md, 4, -1);
    x.num_values = tr_field_int(x.md, 5, -1);
    int64_t dpo = tr_field_int(x.md, 9, -1), dico = tr_field_int(x.md, 11, -1),
            tcs = tr_field_int(x.md, 7, -1);
    int64_t start = dico >= 0 ? dico : dpo;
    if (start < 4 || tcs < 0 || (uint64_t)start + (uint64_t)tcs > f->size) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: chunk [%lld, +%lld) outside the file", rg,
                        col, (long long)start, (long long)tcs);
        goto out;
    }
    x.start = (size_t)start;
    x.end = x.start + (size_t)tcs;
    size_t pos = x.start, levels_before = c->n_levels;
    int32_t ordinal = 0;
    int64_t rows = 0;
    c->rg_first_value[rg] = c->values.n;
    while (rc == 0 && pos < x.end)
        rc = read_page(&x, &pos, &ordinal, pos == x.start, &dict, &rows, err);
    if (rc != 0)
        goto out;
    if ((int64_t)(c->n_levels - levels_before) != x.num_values) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: pages hold %zu values, metadata says %lld",
                        rg, col, c->n_levels - levels_before, (long long)x.num_values);
        goto out;
    }
    if (rows != tr_field_int(rgn, 3, -1)) {
        rc = pq_err_set(err, PQ_EPARSE, "rg %d col %d: %lld rows, row group says %lld", rg, col,
                        (long long)rows, (long long)tr_field_int(rgn, 3, -1));
        goto out;
    }
    rc = check_offset_index(&x, err);
    if (rc == 0)
        rc = check_column_index(&x, err);
    if (rc == 0)
        rc = read_bloom(&x, err);
out:
    c->rg_first_value[rg + 1] = c->values.n;
    pqt_bytes_free(&dict);
    tr_free(decmeta);
    pq_buf_free(&plain);
    free(x.page_off);
    free(x.page_len);
    free(x.page_first_row);
    return rc;
}

/* ---- open / close ------------------------------------------------------------- */

static void free_internals(pqc_file *f)
{
    for (size_t i = 0; i < f->ncols; i++) {
        pqc_column *c = &f->cols[i];
        free(c->def);
        free(c->rep);
        pqt_bytes_free(&c->values);
        free(c->rg_first_value);
        for (size_t g = 0; c->blooms != NULL && g < f->num_row_groups; g++)
            free(c->blooms[g].bitset);
        free(c->blooms);
    }
    free(f->cols);
    f->cols = NULL;
    f->ncols = 0;
    pqf_close(&f->pf);
    pq_buf_free(&f->file_aad);
    free(f->modules);
    f->modules = NULL;
    f->nmodules = f->modules_cap = 0;
    free(f->data);
    f->data = NULL;
    free(f->name);
    f->name = NULL;
}

static int open_data(pqc_file *f, const pqc_opts *o, pq_err *err)
{
    if (f->size < 12)
        return pq_err_set(err, PQ_EPARSE, "%zu bytes: not a Parquet file", f->size);
    const uint8_t *tail = f->data + f->size - 4;
    bool pare = memcmp(tail, "PARE", 4) == 0;
    if (!pare && memcmp(tail, "PAR1", 4) != 0)
        return pq_err_set(err, PQ_EPARSE, "no PAR1/PARE magic at the end");
    if (memcmp(f->data, tail, 4) != 0)
        return pq_err_set(err, PQ_EPARSE, "magic at offset 0 differs from the final magic");
    uint32_t len = rd_le32(f->data + f->size - 8);
    if (len == 0 || len > f->size - 12)
        return pq_err_set(err, PQ_EPARSE, "footer length %u does not fit %zu bytes", len, f->size);
    f->footer_offset = f->size - 8 - len;
    int rc = pare ? open_encrypted_footer(f, o, f->footer_offset, len, err)
                  : open_plain_footer(f, o, f->footer_offset, len, err);
    if (rc != 0)
        return rc;
    f->num_row_groups = pqf_num_row_groups(&f->pf);
    f->num_rows = tr_field_int(f->pf.meta, 3, -1);
    f->ncols = f->pf.nleaves;
    f->cols = calloc(f->ncols ? f->ncols : 1, sizeof *f->cols);
    if (f->cols == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    for (size_t i = 0; i < f->ncols; i++) {
        pqc_column *c = &f->cols[i];
        const pqf_leaf *l = &f->pf.leaves[i];
        c->path = l->path;
        c->type = l->type;
        c->type_length = l->type_length;
        c->max_def = l->max_def;
        c->max_rep = l->max_rep;
        c->rg_first_value = calloc(f->num_row_groups + 1, sizeof *c->rg_first_value);
        c->blooms = calloc(f->num_row_groups + 1, sizeof *c->blooms);
        if (c->rg_first_value == NULL || c->blooms == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    int64_t rows = 0;
    for (size_t g = 0; g < f->num_row_groups; g++) {
        const tr_node *rgn = pqf_row_group(&f->pf, g);
        rows += tr_field_int(rgn, 3, 0);
        if (pqf_num_columns(&f->pf, g) != f->ncols)
            return pq_err_set(err, PQ_EPARSE, "row group %zu has %zu chunks for %zu leaves", g,
                              pqf_num_columns(&f->pf, g), f->ncols);
        for (size_t c = 0; c < f->ncols; c++)
            if ((rc = read_chunk(f, o, (int32_t)g, (int32_t)c, err)) != 0)
                return rc;
    }
    if (rows != f->num_rows)
        return pq_err_set(err, PQ_EPARSE, "row groups hold %lld rows, FileMetaData says %lld",
                          (long long)rows, (long long)f->num_rows);
    return 0;
}

static int open_common(pqc_file *f, const pqc_opts *o, pq_err *err)
{
    int rc = open_data(f, o, err);
    if (rc != 0) {
        if (f->fail_code == 0 && f->fail_module >= 0)
            f->fail_code = rc;
        char name[256];
        snprintf(name, sizeof name, "%s", f->name ? f->name : "?");
        free_internals(f);
        return pq_err_prefix(err, rc, "%s", name);
    }
    return 0;
}

static void init_file(pqc_file *f)
{
    memset(f, 0, sizeof *f);
    pq_buf_init(&f->file_aad);
    f->fail_module = -1;
    f->fail_rg = f->fail_col = f->fail_page = -1;
}

int pqc_open(pqc_file *f, const char *path, const pqc_opts *o, pq_err *err)
{
    init_file(f);
    f->name = strdup(path);
    if (f->name == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    int rc = read_whole(path, &f->data, &f->size, err);
    if (rc != 0) {
        free_internals(f);
        return rc;
    }
    return open_common(f, o, err);
}

int pqc_open_mem(pqc_file *f, const uint8_t *p, size_t n, const char *name,
                 const pqc_opts *o, pq_err *err)
{
    init_file(f);
    f->name = strdup(name ? name : "<memory>");
    f->data = malloc(n ? n : 1);
    if (f->name == NULL || f->data == NULL) {
        free_internals(f);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    memcpy(f->data, p, n);
    f->size = n;
    return open_common(f, o, err);
}

void pqc_close(pqc_file *f)
{
    if (f == NULL)
        return;
    free_internals(f);
}

const pqc_column *pqc_column_by_path(const pqc_file *f, const char *path)
{
    for (size_t i = 0; i < f->ncols; i++)
        if (strcmp(f->cols[i].path, path) == 0)
            return &f->cols[i];
    return NULL;
}
