/* thrift.h - Thrift compact protocol encoder (the footer, page headers,
 * page indexes and bloom filter headers are all compact-protocol structs).
 *
 * Errors are sticky: calls after a failed allocation do nothing, and
 * pq_thrift_error() reports the first failure once the struct is done. */
#ifndef PQ_THRIFT_H
#define PQ_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Compact protocol element type ids. */
enum {
    PQ_TT_BOOL_TRUE = 1,
    PQ_TT_BOOL_FALSE = 2,
    PQ_TT_BYTE = 3,
    PQ_TT_I16 = 4,
    PQ_TT_I32 = 5,
    PQ_TT_I64 = 6,
    PQ_TT_DOUBLE = 7,
    PQ_TT_BINARY = 8,
    PQ_TT_LIST = 9,
    PQ_TT_SET = 10,
    PQ_TT_MAP = 11,
    PQ_TT_STRUCT = 12
};

#define PQ_THRIFT_MAX_DEPTH 32

typedef struct pq_thrift {
    pq_buf *out;
    int16_t last_fid[PQ_THRIFT_MAX_DEPTH];
    int depth;
    int error;
} pq_thrift;

/* Appends to out (not owned). */
void pq_thrift_init(pq_thrift *t, pq_buf *out);
int pq_thrift_error(const pq_thrift *t);

/* A top-level struct, or a struct element of a list. */
void pq_thrift_struct_begin(pq_thrift *t);
/* Writes the stop byte and returns to the enclosing struct. */
void pq_thrift_struct_end(pq_thrift *t);

void pq_thrift_field_bool(pq_thrift *t, int16_t fid, bool v);
void pq_thrift_field_i8(pq_thrift *t, int16_t fid, int8_t v);
void pq_thrift_field_i16(pq_thrift *t, int16_t fid, int16_t v);
void pq_thrift_field_i32(pq_thrift *t, int16_t fid, int32_t v);
void pq_thrift_field_i64(pq_thrift *t, int16_t fid, int64_t v);
void pq_thrift_field_double(pq_thrift *t, int16_t fid, double v);
void pq_thrift_field_binary(pq_thrift *t, int16_t fid, const void *p, size_t n);
void pq_thrift_field_string(pq_thrift *t, int16_t fid, const char *s);
/* A struct-valued field: end it with pq_thrift_struct_end. An empty struct
 * (a union member such as StringType) is begin + end. */
void pq_thrift_field_struct_begin(pq_thrift *t, int16_t fid);
/* A list-valued field of n elements of elem_type; then write the n
 * elements with the element writers below (structs: struct_begin/end). */
void pq_thrift_field_list_begin(pq_thrift *t, int16_t fid, int elem_type, size_t n);

/* List elements. */
void pq_thrift_list_bool(pq_thrift *t, bool v);
void pq_thrift_list_i32(pq_thrift *t, int32_t v);
void pq_thrift_list_i64(pq_thrift *t, int64_t v);
void pq_thrift_list_binary(pq_thrift *t, const void *p, size_t n);
/* Bytes encoded beforehand, copied as they are: list elements (structs
 * start their field ids afresh, so their bytes do not depend on what
 * precedes them). */
void pq_thrift_raw(pq_thrift *t, const void *p, size_t n);

#endif
