/* thrift_read.c - Thrift COMPACT protocol decoder into a tree, and the
 * table-driven validator (thrift-compact-protocol: field headers with id
 * deltas, zigzag varints, list/set/map headers, in-header booleans).
 * Written from the protocol description, independent of writer/thrift.c. */
#include "thrift_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rd {
    const uint8_t *p;
    size_t n;
    size_t pos;
    pq_err *err;
} rd;

static int rd_value(rd *r, tr_type t, tr_node *node, int depth);

static int truncated(rd *r, const char *what)
{
    return pq_err_set(r->err, PQ_EPARSE,
                      "thrift: truncated at byte %zu of %zu while reading %s",
                      r->pos, r->n, what);
}

static int rd_byte(rd *r, uint8_t *b, const char *what)
{
    if (r->pos >= r->n)
        return truncated(r, what);
    *b = r->p[r->pos++];
    return 0;
}

/* ULEB128, at most 10 bytes; the 10th may only carry bit 63. */
static int rd_uvarint(rd *r, uint64_t *v, const char *what)
{
    size_t start = r->pos;
    uint64_t out = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        uint8_t b = 0;
        if (rd_byte(r, &b, what) != 0)
            return PQ_EPARSE;
        if (shift == 63 && b > 1)
            break;
        out |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *v = out;
            return 0;
        }
    }
    return pq_err_set(r->err, PQ_EPARSE,
                      "thrift: varint at byte %zu overflows 64 bits (%s)",
                      start, what);
}

static int rd_zigzag(rd *r, int64_t *v, const char *what)
{
    uint64_t u;
    if (rd_uvarint(r, &u, what) != 0)
        return PQ_EPARSE;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return 0;
}

/* A zigzag varint that must fit the declared width (i16 or i32). */
static int rd_int_ranged(rd *r, int64_t lo, int64_t hi, int64_t *v,
                         const char *what)
{
    size_t start = r->pos;
    if (rd_zigzag(r, v, what) != 0)
        return PQ_EPARSE;
    if (*v < lo || *v > hi)
        return pq_err_set(r->err, PQ_EPARSE,
                          "thrift: %s at byte %zu is %lld, out of range",
                          what, start, (long long)*v);
    return 0;
}

/* Element/field type ids 1..12; both boolean ids map to TR_BOOL. */
static int rd_type_id(rd *r, uint8_t id, size_t at, tr_type *t)
{
    if (id == 1 || id == 2) {
        *t = TR_BOOL;
        return 0;
    }
    if (id >= 3 && id <= 12) {
        *t = (tr_type)id;
        return 0;
    }
    return pq_err_set(r->err, PQ_EPARSE,
                      "thrift: invalid type id %u at byte %zu", id, at);
}

/* Outside field headers (list/set/map elements) a bool is one byte.
 * Thrift's C++ and Java write 1/2; the protocol document says 1/0. */
static int rd_elem_bool(rd *r, tr_node *node)
{
    uint8_t b = 0;
    if (rd_byte(r, &b, "bool element") != 0)
        return PQ_EPARSE;
    if (b > 2)
        return pq_err_set(r->err, PQ_EPARSE,
                          "thrift: bool element at byte %zu is %u, not 0/1/2",
                          r->pos - 1, b);
    node->v.b = (b == 1);
    return 0;
}

static int rd_double(rd *r, tr_node *node)
{
    if (r->n - r->pos < 8)
        return truncated(r, "double");
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = (u << 8) | r->p[r->pos + (size_t)i];
    memcpy(&node->v.d, &u, sizeof u);
    r->pos += 8;
    return 0;
}

static int rd_binary(rd *r, tr_node *node)
{
    uint64_t len;
    size_t start = r->pos;
    if (rd_uvarint(r, &len, "binary length") != 0)
        return PQ_EPARSE;
    if (len > r->n - r->pos)
        return pq_err_set(r->err, PQ_EPARSE,
                          "thrift: binary at byte %zu claims %llu bytes, "
                          "only %zu left", start, (unsigned long long)len,
                          r->n - r->pos);
    node->v.bin.p = r->p + r->pos;
    node->v.bin.len = (size_t)len;
    r->pos += (size_t)len;
    return 0;
}

/* Every element takes at least one byte (an empty struct is its stop
 * byte), so a count larger than the bytes left is garbage; checking before
 * calloc keeps hostile sizes from allocating gigabytes. */
static int alloc_kids(rd *r, tr_node *node, uint64_t count, size_t at)
{
    size_t left = r->n - r->pos;
    if (count > left)
        return pq_err_set(r->err, PQ_EPARSE,
                          "thrift: container at byte %zu claims %llu "
                          "elements, only %zu bytes left", at,
                          (unsigned long long)count, left);
    node->n = 0;
    if (count == 0)
        return 0;
    node->kids = calloc((size_t)count, sizeof *node->kids);
    if (node->kids == NULL)
        return pq_err_set(r->err, PQ_ENOMEM, "thrift: out of memory");
    return 0;
}

/* One element of a list/set/map: bools are a byte here, not a header. */
static int rd_elem(rd *r, tr_type t, tr_node *kid, int depth)
{
    kid->type = t;
    kid->offset = r->pos;
    int rc = (t == TR_BOOL) ? rd_elem_bool(r, kid) : rd_value(r, t, kid, depth);
    kid->end = r->pos;
    return rc;
}

/* List/set header: size in the high nibble, or 15 there and a varint. */
static int rd_list(rd *r, tr_node *node, int depth)
{
    size_t at = r->pos;
    uint8_t h = 0;
    if (rd_byte(r, &h, "list header") != 0)
        return PQ_EPARSE;
    if (rd_type_id(r, h & 0x0f, at, &node->elem_type) != 0)
        return PQ_EPARSE;
    uint64_t count = h >> 4;
    if (count == 15 && rd_uvarint(r, &count, "list size") != 0)
        return PQ_EPARSE;
    int rc = alloc_kids(r, node, count, at);
    if (rc != 0)
        return rc;
    for (uint64_t i = 0; i < count; i++) {
        tr_node *kid = &node->kids[node->n++];
        if (rd_elem(r, node->elem_type, kid, depth) != 0)
            return PQ_EPARSE;
    }
    return 0;
}

/* Map header: varint size, then (if non-empty) key type << 4 | value type. */
static int rd_map(rd *r, tr_node *node, int depth)
{
    size_t at = r->pos;
    uint64_t count;
    if (rd_uvarint(r, &count, "map size") != 0)
        return PQ_EPARSE;
    if (count == 0)
        return 0;
    uint8_t h = 0;
    if (rd_byte(r, &h, "map types") != 0)
        return PQ_EPARSE;
    if (rd_type_id(r, h >> 4, at, &node->elem_type) != 0 ||
        rd_type_id(r, h & 0x0f, at, &node->val_type) != 0)
        return PQ_EPARSE;
    /* Checked before doubling so count * 2 cannot wrap. */
    if (count > (r->n - r->pos) / 2)
        return pq_err_set(r->err, PQ_EPARSE,
                          "thrift: map at byte %zu claims %llu entries, only "
                          "%zu bytes left", at, (unsigned long long)count,
                          r->n - r->pos);
    int rc = alloc_kids(r, node, count * 2, at);
    if (rc != 0)
        return rc;
    for (uint64_t i = 0; i < count * 2; i++) {
        tr_type t = (i % 2 == 0) ? node->elem_type : node->val_type;
        if (rd_elem(r, t, &node->kids[node->n++], depth) != 0)
            return PQ_EPARSE;
    }
    return 0;
}

/* Grows a struct's field array geometrically. */
static tr_node *push_field(rd *r, tr_node *st, size_t *cap)
{
    if (st->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        tr_node *k = realloc(st->kids, ncap * sizeof *k);
        if (k == NULL) {
            pq_err_set(r->err, PQ_ENOMEM, "thrift: out of memory");
            return NULL;
        }
        st->kids = k;
        *cap = ncap;
    }
    tr_node *kid = &st->kids[st->n++];
    memset(kid, 0, sizeof *kid);
    return kid;
}

/* Field header: delta in the high nibble (0 = a zigzag i16 id follows),
 * type in the low nibble; a zero byte is the stop field. */
static int rd_field_header(rd *r, int16_t *last, uint8_t *tid, int16_t *fid)
{
    size_t at = r->pos;
    uint8_t h = 0;
    if (rd_byte(r, &h, "field header") != 0)
        return PQ_EPARSE;
    *tid = h & 0x0f;
    if (h == 0)
        return 0;
    if (*tid == 0)
        return pq_err_set(r->err, PQ_EPARSE,
                          "thrift: field header 0x%02x at byte %zu has type 0",
                          h, at);
    int64_t id = *last + (h >> 4);
    if ((h >> 4) == 0 &&
        rd_int_ranged(r, INT16_MIN, INT16_MAX, &id, "field id") != 0)
        return PQ_EPARSE;
    if (id > INT16_MAX)
        return pq_err_set(r->err, PQ_EPARSE,
                          "thrift: field id delta at byte %zu overflows i16", at);
    *fid = (int16_t)id;
    *last = *fid;
    return 0;
}

static int rd_struct(rd *r, tr_node *st, int depth)
{
    size_t cap = 0;
    int16_t last = 0;
    for (;;) {
        size_t at = r->pos;
        uint8_t tid;
        int16_t fid = 0;
        if (rd_field_header(r, &last, &tid, &fid) != 0)
            return PQ_EPARSE;
        if (tid == 0)
            return 0;
        tr_node *kid = push_field(r, st, &cap);
        if (kid == NULL)
            return PQ_ENOMEM;
        kid->fid = fid;
        kid->offset = at;
        if (rd_type_id(r, tid, at, &kid->type) != 0)
            return PQ_EPARSE;
        if (kid->type == TR_BOOL)
            kid->v.b = (tid == 1);
        else if (rd_value(r, kid->type, kid, depth) != 0)
            return PQ_EPARSE;
        kid->end = r->pos;
    }
}

static int rd_value(rd *r, tr_type t, tr_node *node, int depth)
{
    if (depth >= TR_MAX_DEPTH && (t == TR_STRUCT || t == TR_LIST ||
                                  t == TR_SET || t == TR_MAP))
        return pq_err_set(r->err, PQ_EPARSE,
                          "thrift: nesting deeper than %d at byte %zu",
                          TR_MAX_DEPTH, r->pos);
    uint8_t b = 0;
    switch (t) {
    case TR_I8:
        if (rd_byte(r, &b, "i8") != 0)
            return PQ_EPARSE;
        node->v.i = (int8_t)b;
        return 0;
    case TR_I16:
        return rd_int_ranged(r, INT16_MIN, INT16_MAX, &node->v.i, "i16");
    case TR_I32:
        return rd_int_ranged(r, INT32_MIN, INT32_MAX, &node->v.i, "i32");
    case TR_I64: return rd_zigzag(r, &node->v.i, "i64");
    case TR_DOUBLE: return rd_double(r, node);
    case TR_BINARY: return rd_binary(r, node);
    case TR_LIST:
    case TR_SET: return rd_list(r, node, depth + 1);
    case TR_MAP: return rd_map(r, node, depth + 1);
    case TR_STRUCT: return rd_struct(r, node, depth + 1);
    case TR_BOOL: break; /* handled by callers: header or element byte */
    }
    return pq_err_set(r->err, PQ_EPARSE, "thrift: bad type %d", (int)t);
}

static void free_kids(tr_node *node)
{
    for (size_t i = 0; i < node->n; i++)
        free_kids(&node->kids[i]);
    free(node->kids);
}

void tr_free(tr_node *root)
{
    if (root == NULL)
        return;
    free_kids(root);
    free(root);
}

int tr_parse(const uint8_t *p, size_t n, tr_node **root, size_t *consumed,
             pq_err *err)
{
    *root = NULL;
    if (p == NULL && n > 0)
        return pq_err_set(err, PQ_EINVAL, "thrift: NULL input");
    tr_node *st = calloc(1, sizeof *st);
    if (st == NULL)
        return pq_err_set(err, PQ_ENOMEM, "thrift: out of memory");
    st->type = TR_STRUCT;
    rd r = { .p = p, .n = n, .pos = 0, .err = err };
    int rc = rd_struct(&r, st, 0);
    if (rc != 0) {
        tr_free(st);
        return rc;
    }
    st->end = r.pos;
    if (consumed != NULL)
        *consumed = r.pos;
    *root = st;
    return 0;
}

const char *tr_type_name(tr_type t)
{
    switch (t) {
    case TR_BOOL: return "bool";
    case TR_I8: return "i8";
    case TR_I16: return "i16";
    case TR_I32: return "i32";
    case TR_I64: return "i64";
    case TR_DOUBLE: return "double";
    case TR_BINARY: return "binary";
    case TR_LIST: return "list";
    case TR_SET: return "set";
    case TR_MAP: return "map";
    case TR_STRUCT: return "struct";
    }
    return "?";
}

/* ---- accessors ---- */

const tr_node *tr_field(const tr_node *st, int16_t fid)
{
    if (st == NULL || st->type != TR_STRUCT)
        return NULL;
    for (size_t i = 0; i < st->n; i++)
        if (st->kids[i].fid == fid)
            return &st->kids[i];
    return NULL;
}

bool tr_has(const tr_node *st, int16_t fid) { return tr_field(st, fid) != NULL; }

static bool is_int(const tr_node *node)
{
    return node != NULL && node->type >= TR_I8 && node->type <= TR_I64;
}

int64_t tr_int(const tr_node *node) { return is_int(node) ? node->v.i : 0; }

bool tr_bool(const tr_node *node)
{
    return node != NULL && node->type == TR_BOOL && node->v.b;
}

double tr_double(const tr_node *node)
{
    return (node != NULL && node->type == TR_DOUBLE) ? node->v.d : 0.0;
}

const uint8_t *tr_bin(const tr_node *node, size_t *len)
{
    if (node == NULL || node->type != TR_BINARY) {
        if (len != NULL)
            *len = 0;
        return NULL;
    }
    if (len != NULL)
        *len = node->v.bin.len;
    /* An empty binary still returns non-NULL so callers can tell "present". */
    return node->v.bin.len ? node->v.bin.p : (const uint8_t *)"";
}

static bool is_seq(const tr_node *node)
{
    return node != NULL && (node->type == TR_LIST || node->type == TR_SET);
}

size_t tr_list_len(const tr_node *node)
{
    if (is_seq(node))
        return node->n;
    if (node != NULL && node->type == TR_MAP)
        return node->n / 2;
    return 0;
}

const tr_node *tr_list_at(const tr_node *node, size_t i)
{
    return (is_seq(node) && i < node->n) ? &node->kids[i] : NULL;
}

const tr_node *tr_map_key(const tr_node *map, size_t i)
{
    if (map == NULL || map->type != TR_MAP || i >= map->n / 2)
        return NULL;
    return &map->kids[2 * i];
}

const tr_node *tr_map_val(const tr_node *map, size_t i)
{
    if (map == NULL || map->type != TR_MAP || i >= map->n / 2)
        return NULL;
    return &map->kids[2 * i + 1];
}

int64_t tr_field_int(const tr_node *st, int16_t fid, int64_t dflt)
{
    const tr_node *f = tr_field(st, fid);
    return is_int(f) ? f->v.i : dflt;
}

bool tr_field_bool(const tr_node *st, int16_t fid, bool dflt)
{
    const tr_node *f = tr_field(st, fid);
    return (f != NULL && f->type == TR_BOOL) ? f->v.b : dflt;
}

const uint8_t *tr_field_bin(const tr_node *st, int16_t fid, size_t *len)
{
    return tr_bin(tr_field(st, fid), len);
}

const tr_node *tr_field_list(const tr_node *st, int16_t fid)
{
    const tr_node *f = tr_field(st, fid);
    return is_seq(f) ? f : NULL;
}

const tr_node *tr_field_struct(const tr_node *st, int16_t fid)
{
    const tr_node *f = tr_field(st, fid);
    return (f != NULL && f->type == TR_STRUCT) ? f : NULL;
}

/* ---- validation against parquet.thrift tables ---- */

#define PATH_MAX_LEN 256

static int validate_struct(const tr_node *st, const tr_sspec *spec,
                           const char *path, pq_err *err);

static int validate_list(const tr_node *list, const tr_fspec *fs,
                         const char *path, pq_err *err)
{
    if (list->n > 0 && list->elem_type != fs->elem)
        return pq_err_set(err, PQ_EPARSE,
                          "%s (byte %zu): list of %s, expected list of %s",
                          path, list->offset, tr_type_name(list->elem_type),
                          tr_type_name(fs->elem));
    if (fs->sub == NULL)
        return 0;
    for (size_t i = 0; i < list->n; i++) {
        char sub[PATH_MAX_LEN];
        snprintf(sub, sizeof sub, "%.200s[%zu]", path, i);
        if (validate_struct(&list->kids[i], fs->sub, sub, err) != 0)
            return PQ_EPARSE;
    }
    return 0;
}

static int validate_field(const tr_node *f, const tr_fspec *fs,
                          const char *path, pq_err *err)
{
    if (f->type != fs->type)
        return pq_err_set(err, PQ_EPARSE,
                          "%s (field %d, byte %zu): type %s, expected %s",
                          path, fs->fid, f->offset, tr_type_name(f->type),
                          tr_type_name(fs->type));
    if (f->type == TR_STRUCT && fs->sub != NULL)
        return validate_struct(f, fs->sub, path, err);
    if (f->type == TR_LIST || f->type == TR_SET)
        return validate_list(f, fs, path, err);
    return 0;
}

/* Thrift readers keep the last of duplicated fields; a writer that emits
 * one twice is still wrong, so say so. */
static int check_duplicates(const tr_node *st, const char *path, pq_err *err)
{
    for (size_t i = 0; i < st->n; i++)
        for (size_t j = i + 1; j < st->n; j++)
            if (st->kids[i].fid == st->kids[j].fid)
                return pq_err_set(err, PQ_EPARSE,
                                  "%s: field %d appears twice (bytes %zu, %zu)",
                                  path, st->kids[i].fid, st->kids[i].offset,
                                  st->kids[j].offset);
    return 0;
}

static int validate_struct(const tr_node *st, const tr_sspec *spec,
                           const char *path, pq_err *err)
{
    if (st->type != TR_STRUCT)
        return pq_err_set(err, PQ_EPARSE, "%s (byte %zu): %s, expected %s",
                          path, st->offset, tr_type_name(st->type), spec->name);
    if (check_duplicates(st, path, err) != 0)
        return PQ_EPARSE;
    if (spec->is_union && st->n != 1)
        return pq_err_set(err, PQ_EPARSE,
                          "%s (byte %zu): union %s has %zu members set, "
                          "expected 1", path, st->offset, spec->name, st->n);
    for (size_t i = 0; i < spec->nfields; i++) {
        const tr_fspec *fs = &spec->fields[i];
        char sub[PATH_MAX_LEN];
        snprintf(sub, sizeof sub, "%.200s.%.50s", path, fs->name);
        const tr_node *f = tr_field(st, fs->fid);
        if (f == NULL && fs->required)
            return pq_err_set(err, PQ_EPARSE,
                              "%s (field %d): required field missing in struct "
                              "at byte %zu", sub, fs->fid, st->offset);
        if (f != NULL && validate_field(f, fs, sub, err) != 0)
            return PQ_EPARSE;
    }
    return 0;
}

int tr_validate(const tr_node *st, const tr_sspec *spec, pq_err *err)
{
    if (st == NULL || spec == NULL)
        return pq_err_set(err, PQ_EINVAL, "thrift: validate without a tree");
    return validate_struct(st, spec, spec->name, err);
}
