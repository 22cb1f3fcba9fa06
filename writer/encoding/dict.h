/* dict.h - dictionary builder for RLE_DICTIONARY columns (Encodings.md,
 * "Dictionary Encoding"): maps each distinct value to a dense index and
 * writes the PLAIN dictionary page body. Knows nothing of pages. */
#ifndef PQ_DICT_H
#define PQ_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "types.h"

struct pq_dict_ent; /* private: hash and location of one entry */

/* Owns its memory: pq_dict_init ... pq_dict_free. Values are compared as
 * bytes, so FLOAT/DOUBLE entries are distinct by bit pattern (see dict.c). */
typedef struct pq_dict {
    pq_physical_type type;
    size_t width;             /* bytes per value; 0 for BYTE_ARRAY */
    pq_buf arena;             /* entry bytes back to back, in index order */
    struct pq_dict_ent *ents; /* per index */
    size_t count, ents_cap;
    uint32_t *slots;          /* open addressing: index + 1, 0 = empty */
    size_t nslots;            /* power of two, or 0 before the first insert */
    size_t plain_bytes;
    uint32_t generation;      /* bumped by pq_dict_reset: indices renumbered */
} pq_dict;

/* width: INT32/FLOAT 4, INT64/DOUBLE 8, INT96 12, FIXED_LEN_BYTE_ARRAY its
 * type_length, BYTE_ARRAY 0. BOOLEAN (or a mismatched width) is PQ_EINVAL:
 * a two-value dictionary never beats bit-packed PLAIN. */
int pq_dict_init(pq_dict *d, pq_physical_type type, size_t width);
void pq_dict_free(pq_dict *d);
/* Drops every entry but keeps the memory, for the next column chunk. */
void pq_dict_reset(pq_dict *d);
/* Empties d and frees its tables; it grows again from empty on insert. */
void pq_dict_trim(pq_dict *d);
/* Empties d, keeping its arena and tables only while their room fits in
 * *budget (taken from it); what does not fit is freed. d then holds
 * memory and no entries, for pq_dict_init_in (a column writer passed on
 * to another file's leaf) or pq_dict_free. */
void pq_dict_release(pq_dict *d, size_t *budget);
/* pq_dict_init on a released (or zeroed) d, reusing the memory it kept. */
int pq_dict_init_in(pq_dict *d, pq_physical_type type, size_t width);

/* Finds or adds a value; *index_out gets its index (dense, from 0, stable
 * until reset). Amortised O(1). PQ_ELIMIT past UINT32_MAX - 1 entries.
 * insert_bytes also takes fixed-width values whose len equals the width. */
int pq_dict_insert_fixed(pq_dict *d, const void *val, uint32_t *index_out);
int pq_dict_insert_bytes(pq_dict *d, const uint8_t *p, uint32_t len, uint32_t *index_out);
/* The same for n values at once (a page's), their indices in
 * index_out[0..n): fixed-width values back to back at vals; byte arrays
 * [off[i], off[i + 1]) of heap (NULL only if every value is empty), as a
 * pq_column holds them. Stops at the first error, entries added so far
 * kept. BYTE_ARRAY dictionaries only for _bytes_n, the others for
 * _fixed_n. */
int pq_dict_insert_fixed_n(pq_dict *d, const uint8_t *vals, size_t n, uint32_t *index_out);
int pq_dict_insert_bytes_n(pq_dict *d, const uint8_t *heap, const uint32_t *off, size_t n,
                           uint32_t *index_out);

size_t pq_dict_count(const pq_dict *d);
/* Size of pq_dict_write_plain's output. */
size_t pq_dict_plain_bytes(const pq_dict *d);
/* The dictionary page body: every entry PLAIN-encoded, in index order. */
int pq_dict_write_plain(const pq_dict *d, pq_buf *out);

/* Entry bytes (without a length prefix) and their length, or NULL if index
 * is out of range. Valid until the next insert, reset or free. */
const uint8_t *pq_dict_entry(const pq_dict *d, uint32_t index, uint32_t *len_out);

#endif
