/* column.c - the put_* hot path: appends one value or null with its levels
 * to a leaf's buffers. No allocation per value: buffers grow geometrically
 * and are reset, not freed, between row groups. */
#include "column.h"
#include "err.h"

#include <stdlib.h>

static int offsets_start(pq_column *c)
{
    uint32_t zero = 0;
    pq_buf_reset(&c->offsets);
    return c->type == PQ_BYTE_ARRAY ? pq_buf_append(&c->offsets, &zero, sizeof zero) : 0;
}

/* What init sets from the node, buffers aside; init and init_in share
 * it so a field the column caches from its node is never left stale. */
static void column_setup(pq_column *c, const pq_node *node)
{
    memset(c, 0, sizeof *c);
    c->node = node;
    c->type = node->type;
    c->width = pq_physical_width(node->type, node->type_length);
    c->max_def = node->max_def;
    c->max_rep = node->max_rep;
}

int pq_column_init(pq_column *c, const pq_node *node)
{
    column_setup(c, node);
    pq_buf_init(&c->values);
    pq_buf_init(&c->heap);
    pq_buf_init(&c->offsets);
    pq_buf_init(&c->def);
    pq_buf_init(&c->rep);
    return offsets_start(c);
}

int pq_column_init_in(pq_column *c, const pq_node *node)
{
    pq_buf keep[5] = {c->values, c->heap, c->offsets, c->def, c->rep};
    column_setup(c, node);
    pq_buf *to[5] = {&c->values, &c->heap, &c->offsets, &c->def, &c->rep};
    for (int k = 0; k < 5; k++) {
        *to[k] = keep[k];
        pq_buf_reset(to[k]);
    }
    return offsets_start(c);
}

void pq_column_free(pq_column *c)
{
    pq_buf_free(&c->values);
    pq_buf_free(&c->heap);
    pq_buf_free(&c->offsets);
    pq_buf_free(&c->def);
    pq_buf_free(&c->rep);
}

void pq_column_reset(pq_column *c)
{
    pq_buf_reset(&c->values);
    pq_buf_reset(&c->heap);
    pq_buf_reset(&c->def);
    pq_buf_reset(&c->rep);
    c->n_levels = 0;
    c->n_values = 0;
    c->n_rows = 0;
    (void)offsets_start(c); /* capacity for one entry survives a reset */
}

void pq_column_trim(pq_column *c)
{
    pq_column_reset(c);
    pq_buf_shrink(&c->values, 0);
    pq_buf_shrink(&c->heap, 0);
    pq_buf_shrink(&c->def, 0);
    pq_buf_shrink(&c->rep, 0);
    pq_buf_shrink(&c->offsets, 0); /* keeps its first entry */
}

size_t pq_column_buffered_bytes(const pq_column *c)
{
    return c->values.len + c->heap.len + c->offsets.len + c->def.len + c->rep.len;
}

/* Inlined into each put: a call per value (every value of every column
 * passes here) cost more than its body. */
static inline __attribute__((always_inline))
int put_levels(pq_column *c, uint16_t rep, uint16_t def)
{
    if (rep > c->max_rep || (c->n_levels == 0 && rep != 0))
        return PQ_EINVAL; /* first value of a row group must start a row */
    if (c->max_def > 0 && pq_buf_append(&c->def, &def, sizeof def) != 0)
        return PQ_ENOMEM;
    if (c->max_rep > 0 && pq_buf_append(&c->rep, &rep, sizeof rep) != 0)
        return PQ_ENOMEM;
    c->n_levels++;
    c->n_rows += (rep == 0);
    return PQ_OK;
}

/* The fast puts' common end, once the caller has checked that the leaf
 * is unrepeated and the definition levels have room: a present value's
 * level (when the leaf has any) and the counts, a new row each. */
static inline __attribute__((always_inline))
void put_fast_present(pq_column *c)
{
    if (c->max_def > 0) {
        memcpy(c->def.data + c->def.len, &c->max_def, sizeof c->max_def);
        c->def.len += sizeof c->max_def;
    }
    c->n_levels++;
    c->n_rows++;
    c->n_values++;
}

/* A copy of a value's few bytes without a call to memcpy (whose call and
 * length dispatch cost more than the copy, for every value put): loads
 * and stores that overlap inside the n bytes, never past them. */
static inline void copy_short(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n > 16) {
        memcpy(dst, src, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else if (n > 0) {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/* Every case of put_fixed; the common one does not get here. n is the
 * value's width: sizeof the argument or, for FIXED_LEN_BYTE_ARRAY and
 * INT96, the checked c->width. */
static __attribute__((noinline))
int put_fixed_slow(pq_column *c, pq_physical_type want, uint16_t rep, const void *v, size_t n)
{
    if (c->type != want)
        return PQ_ETYPE;
    if (pq_buf_reserve(&c->values, n) != 0)
        return PQ_ENOMEM;
    int rc = put_levels(c, rep, c->max_def);
    if (rc != 0)
        return rc;
    memcpy(c->values.data + c->values.len, v, n);
    c->values.len += n;
    c->n_values++;
    return PQ_OK;
}

/* Inlined into each typed put with n a constant, so the value is one
 * move: the common put (an unrepeated leaf with room) without a call or
 * a frame, as pq_column_put_bytes's. */
static inline __attribute__((always_inline))
int put_fixed(pq_column *c, pq_physical_type want, uint16_t rep, const void *v, size_t n)
{
    if (c->type != want || c->max_rep != 0 || rep != 0 || c->values.cap - c->values.len <= n ||
        (c->max_def > 0 && c->def.cap - c->def.len <= 2))
        return put_fixed_slow(c, want, rep, v, n);
    memcpy(c->values.data + c->values.len, v, n);
    c->values.len += n;
    put_fast_present(c);
    return PQ_OK;
}

int pq_column_put_bool(pq_column *c, uint16_t rep, bool v)
{
    uint8_t b = v ? 1 : 0;
    return put_fixed(c, PQ_BOOLEAN, rep, &b, sizeof b);
}

int pq_column_put_i32(pq_column *c, uint16_t rep, int32_t v)
{
    return put_fixed(c, PQ_INT32, rep, &v, sizeof v);
}

int pq_column_put_i64(pq_column *c, uint16_t rep, int64_t v)
{
    return put_fixed(c, PQ_INT64, rep, &v, sizeof v);
}

int pq_column_put_float(pq_column *c, uint16_t rep, float v)
{
    return put_fixed(c, PQ_FLOAT, rep, &v, sizeof v);
}

int pq_column_put_double(pq_column *c, uint16_t rep, double v)
{
    return put_fixed(c, PQ_DOUBLE, rep, &v, sizeof v);
}

/* Every case of pq_column_put_bytes; the common one does not get here. */
static __attribute__((noinline))
int put_bytes_slow(pq_column *c, uint16_t rep, const void *p, size_t len)
{
    if (c->type == PQ_FIXED_LEN_BYTE_ARRAY || c->type == PQ_INT96) {
        if (len != c->width)
            return PQ_ETYPE;
        return put_fixed_slow(c, c->type, rep, p, c->width);
    }
    if (c->type != PQ_BYTE_ARRAY)
        return PQ_ETYPE;
    /* uint32 offsets bound a chunk's byte-array data; the writer flushes
     * row groups long before this (row_group.max_bytes). */
    if (len > UINT32_MAX - c->heap.len)
        return PQ_ELIMIT;
    if (pq_buf_reserve(&c->heap, len) != 0 || pq_buf_reserve(&c->offsets, 4) != 0)
        return PQ_ENOMEM;
    int rc = put_levels(c, rep, c->max_def);
    if (rc != 0)
        return rc;
    copy_short(c->heap.data + c->heap.len, p, len); /* len 0: neither is touched */
    c->heap.len += len;
    uint32_t end = (uint32_t)c->heap.len;
    memcpy(c->offsets.data + c->offsets.len, &end, sizeof end);
    c->offsets.len += sizeof end;
    c->n_values++;
    return PQ_OK;
}

/* A copy of at most 32 bytes without a call: copy_short, and two 16-byte
 * moves overlapping inside the n bytes above 16. */
static inline void copy_upto32(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n > 16) {
        uint8_t a[16], b[16];
        memcpy(a, src, 16);
        memcpy(b, src + n - 16, 16);
        memcpy(dst, a, 16);
        memcpy(dst + n - 16, b, 16);
        return;
    }
    copy_short(dst, src, n);
}

/* The common put first: a byte array of at most 32 bytes into an
 * unrepeated leaf whose buffers have room, with no call, so no frame
 * (every string of every record passes here: its prologue, its three
 * reserves' calls-in-waiting and the checks of rarer cases were about
 * 80 instructions a put). It does what put_bytes_slow does for it. */
int pq_column_put_bytes(pq_column *c, uint16_t rep, const void *p, size_t len)
{
    if (c->type != PQ_BYTE_ARRAY || c->max_rep != 0 || rep != 0 || len > 32 ||
        c->heap.len > UINT32_MAX - 32 || c->heap.cap - c->heap.len <= len ||
        c->offsets.cap - c->offsets.len <= 4 || (c->max_def > 0 && c->def.cap - c->def.len <= 2))
        return put_bytes_slow(c, rep, p, len);
    copy_upto32(c->heap.data + c->heap.len, p, len);
    c->heap.len += len;
    const uint32_t end = (uint32_t)c->heap.len;
    memcpy(c->offsets.data + c->offsets.len, &end, sizeof end);
    c->offsets.len += sizeof end;
    put_fast_present(c);
    return PQ_OK;
}

/* Every case of pq_column_put_null; the common one does not get here. */
static __attribute__((noinline))
int put_null_slow(pq_column *c, uint16_t rep, uint16_t def)
{
    if (def >= c->max_def)
        return PQ_EINVAL; /* a null needs a definition level below the max */
    return put_levels(c, rep, def);
}

int pq_column_put_null(pq_column *c, uint16_t rep, uint16_t def)
{
    if (def >= c->max_def || c->max_rep != 0 || rep != 0 || c->def.cap - c->def.len <= 2)
        return put_null_slow(c, rep, def);
    memcpy(c->def.data + c->def.len, &def, sizeof def);
    c->def.len += sizeof def;
    c->n_levels++;
    c->n_rows++;
    return PQ_OK;
}

static int reserve_range(pq_column *c, size_t levels, size_t values, size_t heap)
{
    size_t lb = levels * sizeof(uint16_t);
    if ((c->max_def > 0 && pq_buf_reserve(&c->def, lb) != 0) ||
        (c->max_rep > 0 && pq_buf_reserve(&c->rep, lb) != 0))
        return PQ_ENOMEM;
    if (c->type == PQ_BYTE_ARRAY)
        return pq_buf_reserve(&c->heap, heap) != 0 ||
               pq_buf_reserve(&c->offsets, values * sizeof(uint32_t)) != 0 ? PQ_ENOMEM : PQ_OK;
    return pq_buf_reserve(&c->values, values * c->width) != 0 ? PQ_ENOMEM : PQ_OK;
}

int pq_column_reserve(pq_column *c, size_t levels, size_t values, size_t heap)
{
    if (levels > SIZE_MAX / 8 || values > SIZE_MAX / 16)
        return PQ_ENOMEM;
    return reserve_range(c, levels, values, heap);
}

int pq_column_append_range(pq_column *c, const pq_column *src, size_t l0, size_t l1, size_t v0,
                           size_t v1, size_t rows)
{
    size_t nl = l1 - l0, nv = v1 - v0, h0 = 0, h1 = 0;
    if (c->type == PQ_BYTE_ARRAY) {
        h0 = pq_column_offsets(src)[v0];
        h1 = pq_column_offsets(src)[v1];
        if (h1 - h0 > UINT32_MAX - c->heap.len)
            return PQ_ELIMIT;
    }
    if (reserve_range(c, nl, nv, h1 - h0) != 0)
        return PQ_ENOMEM;
    size_t lb = nl * sizeof(uint16_t);
    if (c->max_def > 0 && lb > 0)
        memcpy(c->def.data + c->def.len, src->def.data + l0 * sizeof(uint16_t), lb);
    if (c->max_rep > 0 && lb > 0)
        memcpy(c->rep.data + c->rep.len, src->rep.data + l0 * sizeof(uint16_t), lb);
    c->def.len += c->max_def > 0 ? lb : 0;
    c->rep.len += c->max_rep > 0 ? lb : 0;
    if (c->type == PQ_BYTE_ARRAY) {
        uint32_t base = (uint32_t)c->heap.len;
        uint32_t *to = (uint32_t *)(void *)(c->offsets.data + c->offsets.len);
        const uint32_t *from = pq_column_offsets(src);
        for (size_t i = 0; i < nv; i++)
            to[i] = from[v0 + i + 1] - (uint32_t)h0 + base;
        c->offsets.len += nv * sizeof(uint32_t);
        if (h1 > h0)
            memcpy(c->heap.data + c->heap.len, src->heap.data + h0, h1 - h0);
        c->heap.len += h1 - h0;
    } else if (nv > 0) {
        memcpy(c->values.data + c->values.len, src->values.data + v0 * c->width, nv * c->width);
        c->values.len += nv * c->width;
    }
    c->n_levels += nl;
    c->n_values += nv;
    c->n_rows += rows;
    return PQ_OK;
}

/* Walks back to the level that starts row `rows` (rows are counted by
 * rep == 0), then drops every level and value from there on. Only used to
 * abandon a half-written record, so the backward scan is fine. */
void pq_column_truncate_rows(pq_column *c, size_t rows)
{
    if (c->n_rows <= rows)
        return;
    const uint16_t *rep = c->max_rep ? pq_column_rep(c) : NULL;
    const uint16_t *def = c->max_def ? pq_column_def(c) : NULL;
    size_t n_rows = c->n_rows, l = c->n_levels, dropped_values = 0;
    while (l > 0 && n_rows > rows) {
        l--;
        if (def == NULL || def[l] == c->max_def)
            dropped_values++;
        if (rep == NULL || rep[l] == 0)
            n_rows--;
    }
    c->n_levels = l;
    c->n_rows = n_rows;
    c->n_values -= dropped_values;
    if (c->max_def > 0)
        c->def.len = l * sizeof(uint16_t);
    if (c->max_rep > 0)
        c->rep.len = l * sizeof(uint16_t);
    if (c->type == PQ_BYTE_ARRAY) {
        c->offsets.len = (c->n_values + 1) * sizeof(uint32_t);
        c->heap.len = pq_column_offsets(c)[c->n_values];
    } else {
        c->values.len = c->n_values * c->width;
    }
}
