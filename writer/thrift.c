/* thrift.c - Thrift compact protocol encoder (Thrift's
 * "compact-protocol.md"): field headers carry the field-id delta in the
 * high nibble when it fits in 1..15, else a zigzag i16 follows; integers
 * are zigzag varints; bools in fields live in the header's type nibble. */
#include "thrift.h"
#include "err.h"

static void tc_byte(pq_thrift *t, uint8_t b)
{
    if (t->error == 0 && pq_buf_push(t->out, b) != 0)
        t->error = PQ_ENOMEM;
}

static void tc_bytes(pq_thrift *t, const void *p, size_t n)
{
    if (t->error == 0 && pq_buf_append(t->out, p, n) != 0)
        t->error = PQ_ENOMEM;
}

static void tc_uvarint(pq_thrift *t, uint64_t v)
{
    if (t->error == 0 && pq_buf_put_uvarint(t->out, v) != 0)
        t->error = PQ_ENOMEM;
}

static void tc_zigzag(pq_thrift *t, int64_t v)
{
    if (t->error == 0 && pq_buf_put_zigzag(t->out, v) != 0)
        t->error = PQ_ENOMEM;
}

static void tc_field_header(pq_thrift *t, int16_t fid, int type)
{
    if (t->depth <= 0) {
        t->error = PQ_ESTATE; /* a field outside any struct is our bug */
        return;
    }
    int16_t *last = &t->last_fid[t->depth - 1];
    int delta = (int)fid - (int)*last;
    if (delta > 0 && delta <= 15) {
        tc_byte(t, (uint8_t)((delta << 4) | type));
    } else {
        tc_byte(t, (uint8_t)type);
        tc_zigzag(t, fid);
    }
    *last = fid;
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
    tc_field_header(t, fid, PQ_TT_I16);
    tc_zigzag(t, v);
}

void pq_thrift_field_i32(pq_thrift *t, int16_t fid, int32_t v)
{
    tc_field_header(t, fid, PQ_TT_I32);
    tc_zigzag(t, v);
}

void pq_thrift_field_i64(pq_thrift *t, int16_t fid, int64_t v)
{
    tc_field_header(t, fid, PQ_TT_I64);
    tc_zigzag(t, v);
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

void pq_thrift_list_binary(pq_thrift *t, const void *p, size_t n)
{
    tc_uvarint(t, n);
    tc_bytes(t, p, n);
}
