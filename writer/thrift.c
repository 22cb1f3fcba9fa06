/* thrift.c - Thrift compact protocol encoder (Thrift's
 * "compact-protocol.md"): field headers carry the field-id delta in the
 * high nibble when it fits in 1..15, else a zigzag i16 follows; integers
 * are zigzag varints; bools in fields live in the header's type nibble. */
#include "thrift.h"
#include "err.h"

/* Room for n more bytes at the end of the output, or NULL once an error
 * is sticky. Each field is written with one reserve and direct stores: a
 * push per byte and a call per varint made a page header's or footer's
 * i32 field ~120 instructions (footers and page headers of 1,000 small
 * partitioned files: 2% of a convert). */
static inline uint8_t *tc_room(pq_thrift *t, size_t n)
{
    if (t->error != 0)
        return NULL;
    if (pq_buf_reserve(t->out, n) != 0) {
        t->error = PQ_ENOMEM;
        return NULL;
    }
    return t->out->data + t->out->len;
}

static inline void tc_done(pq_thrift *t, const uint8_t *end)
{
    t->out->len = (size_t)(end - t->out->data);
}

static void tc_byte(pq_thrift *t, uint8_t b)
{
    uint8_t *p = tc_room(t, 1);
    if (p != NULL) {
        *p = b;
        tc_done(t, p + 1);
    }
}

static void tc_bytes(pq_thrift *t, const void *src, size_t n)
{
    if (t->error == 0 && pq_buf_append(t->out, src, n) != 0)
        t->error = PQ_ENOMEM;
}

static void tc_uvarint(pq_thrift *t, uint64_t v)
{
    if (t->error == 0 && pq_buf_put_uvarint(t->out, v) != 0)
        t->error = PQ_ENOMEM;
}

static void tc_zigzag(pq_thrift *t, int64_t v)
{
    tc_uvarint(t, pq_zigzag64(v));
}

/* A field header at p (room for 4 bytes: a type byte and a zigzag i16),
 * or NULL when the field is outside any struct. */
static inline uint8_t *tc_put_header(pq_thrift *t, uint8_t *p, int16_t fid, int type)
{
    if (t->depth <= 0) {
        t->error = PQ_ESTATE; /* a field outside any struct is our bug */
        return NULL;
    }
    int16_t *last = &t->last_fid[t->depth - 1];
    int delta = (int)fid - (int)*last;
    *last = fid;
    if (delta > 0 && delta <= 15) {
        *p++ = (uint8_t)((delta << 4) | type);
        return p;
    }
    *p++ = (uint8_t)type;
    return pq_uvarint_store(p, pq_zigzag64(fid));
}

static void tc_field_header(pq_thrift *t, int16_t fid, int type)
{
    uint8_t *p = tc_room(t, 4);
    if (p != NULL && (p = tc_put_header(t, p, fid, type)) != NULL)
        tc_done(t, p);
}

/* A header and a zigzag varint, the i16/i32/i64 fields. */
static void tc_field_int(pq_thrift *t, int16_t fid, int type, int64_t v)
{
    uint8_t *p = tc_room(t, 4 + 10);
    if (p != NULL && (p = tc_put_header(t, p, fid, type)) != NULL)
        tc_done(t, pq_uvarint_store(p, pq_zigzag64(v)));
}

void pq_thrift_init(pq_thrift *t, pq_buf *out)
{
    t->out = out;
    t->depth = 0;
    t->error = 0;
}

int pq_thrift_error(const pq_thrift *t)
{
    if (t->error == 0 && t->depth != 0)
        return PQ_ESTATE; /* unbalanced begin/end */
    return t->error;
}

void pq_thrift_struct_begin(pq_thrift *t)
{
    if (t->depth >= PQ_THRIFT_MAX_DEPTH) {
        t->error = PQ_ELIMIT;
        return;
    }
    t->last_fid[t->depth++] = 0;
}

void pq_thrift_struct_end(pq_thrift *t)
{
    if (t->depth <= 0) {
        t->error = PQ_ESTATE;
        return;
    }
    tc_byte(t, 0); /* STOP */
    t->depth--;
}

void pq_thrift_field_bool(pq_thrift *t, int16_t fid, bool v)
{
    tc_field_header(t, fid, v ? PQ_TT_BOOL_TRUE : PQ_TT_BOOL_FALSE);
}

void pq_thrift_field_i8(pq_thrift *t, int16_t fid, int8_t v)
{
    tc_field_header(t, fid, PQ_TT_BYTE);
    tc_byte(t, (uint8_t)v);
}

void pq_thrift_field_i16(pq_thrift *t, int16_t fid, int16_t v)
{
    tc_field_int(t, fid, PQ_TT_I16, v);
}

void pq_thrift_field_i32(pq_thrift *t, int16_t fid, int32_t v)
{
    tc_field_int(t, fid, PQ_TT_I32, v);
}

void pq_thrift_field_i64(pq_thrift *t, int16_t fid, int64_t v)
{
    tc_field_int(t, fid, PQ_TT_I64, v);
}

void pq_thrift_field_double(pq_thrift *t, int16_t fid, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[8];
    for (size_t i = 0; i < 8; i++)
        le[i] = (uint8_t)(bits >> (8 * i));
    tc_field_header(t, fid, PQ_TT_DOUBLE);
    tc_bytes(t, le, sizeof le);
}

void pq_thrift_field_binary(pq_thrift *t, int16_t fid, const void *p, size_t n)
{
    tc_field_header(t, fid, PQ_TT_BINARY);
    pq_thrift_list_binary(t, p, n);
}

void pq_thrift_field_string(pq_thrift *t, int16_t fid, const char *s)
{
    pq_thrift_field_binary(t, fid, s, strlen(s));
}

void pq_thrift_field_struct_begin(pq_thrift *t, int16_t fid)
{
    tc_field_header(t, fid, PQ_TT_STRUCT);
    pq_thrift_struct_begin(t);
}

void pq_thrift_field_list_begin(pq_thrift *t, int16_t fid, int elem_type, size_t n)
{
    tc_field_header(t, fid, PQ_TT_LIST);
    if (n < 15) {
        tc_byte(t, (uint8_t)((n << 4) | (size_t)elem_type));
    } else {
        tc_byte(t, (uint8_t)(0xF0 | elem_type));
        tc_uvarint(t, n);
    }
}

/* In lists, bools are whole bytes: 1 = true, 2 = false (compact spec). */
void pq_thrift_list_bool(pq_thrift *t, bool v)
{
    tc_byte(t, v ? 1 : 2);
}

void pq_thrift_list_i32(pq_thrift *t, int32_t v)
{
    tc_zigzag(t, v);
}

void pq_thrift_list_i64(pq_thrift *t, int64_t v)
{
    tc_zigzag(t, v);
}

void pq_thrift_raw(pq_thrift *t, const void *p, size_t n)
{
    tc_bytes(t, p, n);
}

void pq_thrift_list_binary(pq_thrift *t, const void *src, size_t n)
{
    uint8_t *p = n <= SIZE_MAX - 10 ? tc_room(t, 10 + n) : NULL;
    if (p == NULL) {
        if (t->error == 0)
            t->error = PQ_ENOMEM;
        return;
    }
    p = pq_uvarint_store(p, n);
    if (n > 0)
        memcpy(p, src, n);
    tc_done(t, p + n);
}
