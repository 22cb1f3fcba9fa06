/* variant_dump.c - reads an unshredded Variant column of a parqd file with
 * the test-side readers only (tests/support: pqfile.c for pages and
 * levels, decode.c for values, variant_read.c for the Variant bytes) and
 * prints each row's value as variant_read.h's canonical JSON: our own
 * decoder's view, which tests/interop/logs.mjs compares with the source
 * like any other reader (reader `c-decoder`).
 *
 *     variant_dump FILE COLUMN
 *
 * COLUMN is a top-level Variant group with `metadata` and `value` and no
 * `typed_value` (a default-schema `event`, a `*` rest column, an
 * unshredded variant column). One line per row: the canonical JSON, or
 * NULL for a null column. Every value must pass VREAD_CANONICAL (valid,
 * minimal, no decimal with a scale not below its implied precision).
 * Exit 0, or 1 with the reason on stderr (2: usage). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "pqfile.h"
#include "variant_read.h"

/* One leaf's values over all row groups: per level entry the value or
 * NULL (def below max). */
typedef struct leafvals {
    pqt_bytes *chunks;       /* one per decoded page, values in order */
    size_t nchunks;
    const uint8_t **p;       /* per entry; NULL = null */
    uint32_t *len;
    size_t n, cap;
} leafvals;

static int die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "variant_dump: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 1;
}

static int push(leafvals *lv, const uint8_t *p, uint32_t len)
{
    if (lv->n == lv->cap) {
        size_t c = lv->cap ? lv->cap * 2 : 1024;
        const uint8_t **np = realloc(lv->p, c * sizeof *np);
        uint32_t *nl = np ? realloc(lv->len, c * sizeof *nl) : NULL;
        if (np)
            lv->p = np;
        if (!np || !nl)
            return PQ_ENOMEM;
        lv->len = nl;
        lv->cap = c;
    }
    lv->p[lv->n] = p;
    lv->len[lv->n++] = len;
    return 0;
}

static pqt_bytes *new_chunk(leafvals *lv)
{
    pqt_bytes *c = realloc(lv->chunks, (lv->nchunks + 1) * sizeof *c);
    if (c == NULL)
        return NULL;
    lv->chunks = c;
    memset(&c[lv->nchunks], 0, sizeof *c);
    return &c[lv->nchunks++];
}

/* BYTE_ARRAY values of one page into a new chunk; dictionary indexes map
 * through dict. */
static int decode_page(leafvals *lv, int enc, const uint8_t *p, size_t len, size_t n,
                       const pqt_bytes *dict, pqt_bytes **out, pq_err *err)
{
    pqt_bytes *c = new_chunk(lv);
    if (c == NULL)
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    *out = c;
    switch (enc) {
    case PQ_ENC_PLAIN:
        return pqt_plain_decode_bytes(p, len, n, c, NULL);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        return pqt_delta_length_decode(p, len, c, NULL);
    case PQ_ENC_DELTA_BYTE_ARRAY:
        return pqt_delta_bytes_decode(p, len, c, NULL);
    case PQ_ENC_PLAIN_DICTIONARY: case PQ_ENC_RLE_DICTIONARY: {
        if (dict == NULL || len < 1)
            return pq_err_set(err, PQ_EPARSE, "dictionary page missing or empty indexes");
        uint32_t *idx = malloc((n + 1) * sizeof *idx);
        int rc = idx ? pqt_rle_decode(p + 1, len - 1, p[0], idx, n, NULL) : PQ_ENOMEM;
        size_t total = 0;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (idx[i] >= dict->n)
                rc = pq_err_set(err, PQ_EPARSE, "dictionary index out of range");
            else
                total += dict->off[idx[i] + 1] - dict->off[idx[i]];
        }
        if (rc == 0) {
            c->heap = malloc(total + 1);
            c->off = malloc((n + 1) * sizeof *c->off);
            rc = c->heap && c->off ? 0 : PQ_ENOMEM;
        }
        size_t pos = 0;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            uint32_t a = dict->off[idx[i]], z = dict->off[idx[i] + 1];
            c->off[i] = (uint32_t)pos;
            memcpy(c->heap + pos, dict->heap + a, z - a);
            pos += z - a;
        }
        if (rc == 0) {
            c->off[n] = (uint32_t)pos;
            c->n = n;
        }
        free(idx);
        return rc;
    }
    default:
        return pq_err_set(err, PQ_EPARSE, "encoding %d of a BYTE_ARRAY page not handled", enc);
    }
}

static int read_leaf(const pqf_file *f, size_t li, leafvals *lv, pq_err *err)
{
    const pqf_leaf *leaf = &f->leaves[li];
    if (leaf->type != PQ_BYTE_ARRAY || leaf->max_rep != 0)
        return pq_err_set(err, PQ_EINVAL, "%s is not a top-level BYTE_ARRAY leaf", leaf->path);
    int rc = 0;
    for (size_t rg = 0; rc == 0 && rg < pqf_num_row_groups(f); rg++) {
        pqf_chunk ch;
        pqf_pages it;
        pqt_bytes dict = {0};
        bool have_dict = false;
        if ((rc = pqf_chunk_get(f, rg, li, &ch, err)) != 0 ||
            (rc = pqf_pages_init(&it, f, &ch, err)) != 0)
            return rc;
        int more;
        while (rc == 0 && (more = pqf_pages_next(&it, err)) == 1) {
            const pqf_page *pg = &it.page;
            uint8_t *buf = NULL;
            size_t blen;
            if ((rc = pqf_page_decompress(pg, (pq_codec)ch.codec, &buf, &blen, err)) != 0)
                break;
            if (pg->type == PQ_PAGE_DICTIONARY) {
                pqt_bytes_free(&dict);
                rc = pqt_plain_decode_bytes(buf, blen, (size_t)pg->num_values, &dict, NULL);
                have_dict = rc == 0;
                free(buf);
                continue;
            }
            pqf_parts parts;
            size_t n = (size_t)pg->num_values;
            uint16_t *def = malloc((n + 1) * sizeof *def);
            rc = def ? pqf_page_split(pg, buf, blen, 0, leaf->max_def, &parts, err) : PQ_ENOMEM;
            if (rc == 0 && leaf->max_def > 0)
                rc = pqf_levels_decode(parts.def, parts.def_len, leaf->max_def, n, def, NULL, err);
            else if (rc == 0)
                memset(def, 0, n * sizeof *def);
            size_t nn = 0;
            for (size_t i = 0; rc == 0 && i < n; i++)
                nn += def[i] == leaf->max_def;
            pqt_bytes *vals = NULL;
            if (rc == 0)
                rc = decode_page(lv, pg->encoding, parts.values, parts.values_len, nn,
                                 have_dict ? &dict : NULL, &vals, err);
            if (rc == 0 && vals->n != nn)
                rc = pq_err_set(err, PQ_EPARSE, "%s: %zu values for %zu defined entries",
                                leaf->path, vals->n, nn);
            for (size_t i = 0, k = 0; rc == 0 && i < n; i++) {
                if (def[i] != leaf->max_def) {
                    rc = push(lv, NULL, 0);
                    continue;
                }
                uint32_t a = vals->off[k], z = vals->off[k + 1];
                k++;
                rc = push(lv, vals->heap ? vals->heap + a : (const uint8_t *)"", z - a);
            }
            free(def);
            free(buf);
        }
        if (rc == 0 && more < 0)
            rc = more;
        pqf_pages_free(&it);
        pqt_bytes_free(&dict);
    }
    return rc;
}

static void free_leaf(leafvals *lv)
{
    for (size_t i = 0; i < lv->nchunks; i++)
        pqt_bytes_free(&lv->chunks[i]);
    free(lv->chunks);
    free(lv->p);
    free(lv->len);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: variant_dump FILE COLUMN\n");
        return 2;
    }
    pqf_file f;
    pq_err err = {0};
    if (pqf_open(&f, argv[1], &err) != 0)
        return die("%s: %s", argv[1], err.msg);
    size_t col = strlen(argv[2]);
    long mi = -1, vi = -1;
    for (size_t i = 0; i < f.nleaves; i++) {
        const char *p = f.leaves[i].path;
        if (strncmp(p, argv[2], col) != 0 || p[col] != '.' || f.leaves[i].depth != 2)
            continue;
        if (strcmp(p + col + 1, "metadata") == 0)
            mi = (long)i;
        else if (strcmp(p + col + 1, "value") == 0)
            vi = (long)i;
    }
    bool shredded = false;
    for (size_t i = 0; i < f.nleaves; i++)
        shredded |= strncmp(f.leaves[i].path, argv[2], col) == 0 &&
                    strncmp(f.leaves[i].path + col, ".typed_value", 12) == 0;
    if (shredded || mi < 0 || vi < 0) {
        pqf_close(&f);
        return die(shredded ? "%s: column %s is shredded (only unshredded Variants are read here)"
                            : "%s: no top-level Variant column %s (metadata + value)",
                   argv[1], argv[2]);
    }
    leafvals m = {0}, v = {0};
    int rc = read_leaf(&f, (size_t)mi, &m, &err);
    rc = rc ? rc : read_leaf(&f, (size_t)vi, &v, &err);
    if (rc == 0 && m.n != v.n)
        rc = pq_err_set(&err, PQ_EPARSE, "metadata has %zu rows, value %zu", m.n, v.n);
    pq_buf out;
    pq_buf_init(&out);
    for (size_t r = 0; rc == 0 && r < m.n; r++) {
        pq_buf_reset(&out);
        if (m.p[r] == NULL) {
            if (v.p[r] != NULL)
                rc = pq_err_set(&err, PQ_EPARSE, "row %zu: value without metadata", r);
            else
                fputs("NULL\n", stdout);
            continue;
        }
        if (v.p[r] == NULL) {
            rc = pq_err_set(&err, PQ_EPARSE, "row %zu: metadata without value (not shredded)", r);
            continue;
        }
        rc = vread_validate(m.p[r], m.len[r], v.p[r], v.len[r], VREAD_CANONICAL, &err);
        if (rc == 0)
            rc = vread_to_json(&out, m.p[r], m.len[r], v.p[r], v.len[r], &err);
        if (rc != 0)
            rc = pq_err_prefix(&err, rc, "row %zu", r);
        else
            printf("%.*s\n", (int)out.len, (const char *)out.data);
    }
    pq_buf_free(&out);
    free_leaf(&m);
    free_leaf(&v);
    pqf_close(&f);
    if (rc != 0)
        return die("%s: %s", argv[1], err.msg);
    return fflush(stdout) == 0 ? 0 : 1;
}
