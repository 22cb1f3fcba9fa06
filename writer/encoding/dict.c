/* dict.c - dictionary builder (Encodings.md, "Dictionary Encoding"): an
 * open-addressing hash table (XXH3, linear probing) over an arena of entry
 * bytes. The arena, entry array and table grow geometrically and survive
 * pq_dict_reset, so steady-state inserts do not allocate.
 *
 * Every value of a dictionary column goes through here (a tenth of a
 * typed convert's instructions), so a page's values are inserted in one
 * call (pq_dict_insert_*_n) with XXH3 inlined: a call per value and one
 * into libxxhash cost about as much as the probe itself. The page loops
 * are flattened (everything they call inlined into them): an insert
 * called per value saved and restored its registers every time. The hash only
 * places entries in the table; indices are in insertion order, so the
 * hash never shows in the output.
 *
 * Values are compared as bytes, never as numbers. For FLOAT/DOUBLE that
 * keeps -0.0 and 0.0, and NaNs with different payloads, as distinct
 * entries: a numeric compare would fold -0.0 into 0.0 (changing the bits a
 * reader gets back) and could never match a NaN at all (one new entry per
 * NaN). Bytewise, every value round-trips exactly. */
#include "dict.h"
#include "err.h"
#include "memeq.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL /* XXH3 of a short value is a few dozen instructions */
#include <xxhash.h>

struct pq_dict_ent {
    uint64_t hash; /* kept so growing the table never re-hashes bytes */
    size_t off;    /* into arena */
    uint32_t len;
};

#define DICT_MIN_SLOTS 256
#define DICT_MIN_ENTS 128
/* Slots hold index + 1, and 0 means empty. */
#define DICT_MAX_ENTRIES ((size_t)UINT32_MAX - 1)

/* Stands in for empty values, so no NULL reaches XXH3 or callers. */
static const uint8_t dict_empty[1];

static size_t dict_type_width(pq_physical_type type)
{
    switch (type) {
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    default: return 0;
    }
}

int pq_dict_init(pq_dict *d, pq_physical_type type, size_t width)
{
    memset(d, 0, sizeof *d);
    pq_buf_init(&d->arena);
    if (type == PQ_BYTE_ARRAY) {
        if (width != 0)
            return PQ_EINVAL;
    } else if (type == PQ_FIXED_LEN_BYTE_ARRAY) {
        if (width == 0 || width > INT32_MAX)
            return PQ_EINVAL;
    } else if (dict_type_width(type) == 0 || width != dict_type_width(type)) {
        return PQ_EINVAL; /* BOOLEAN, or a width that is not the type's */
    }
    d->type = type;
    d->width = width;
    return 0;
}

void pq_dict_free(pq_dict *d)
{
    pq_buf_free(&d->arena);
    free(d->ents);
    free(d->slots);
    d->ents = NULL;
    d->slots = NULL;
    d->count = d->ents_cap = d->nslots = d->plain_bytes = 0;
    d->generation++;
}

/* pq_dict_free keeps type and width: a freed dictionary is an empty one. */
void pq_dict_trim(pq_dict *d)
{
    pq_dict_free(d);
}

void pq_dict_release(pq_dict *d, size_t *budget)
{
    size_t room[3] = {d->arena.cap, d->ents_cap * sizeof *d->ents, d->nslots * sizeof *d->slots};
    bool keep[3];
    for (int k = 0; k < 3; k++) {
        keep[k] = room[k] <= *budget;
        *budget -= keep[k] ? room[k] : 0;
    }
    if (!keep[0])
        pq_buf_free(&d->arena);
    if (!keep[1]) {
        free(d->ents);
        d->ents = NULL;
        d->ents_cap = 0;
    }
    if (!keep[2]) {
        free(d->slots);
        d->slots = NULL;
        d->nslots = 0;
    }
    pq_dict_reset(d);
}

int pq_dict_init_in(pq_dict *d, pq_physical_type type, size_t width)
{
    pq_dict kept = *d;
    int rc = pq_dict_init(d, type, width);
    d->arena = kept.arena;
    d->ents = kept.ents;
    d->ents_cap = kept.ents_cap;
    d->slots = kept.slots;
    d->nslots = kept.nslots;
    pq_dict_reset(d);
    return rc;
}

void pq_dict_reset(pq_dict *d)
{
    pq_buf_reset(&d->arena);
    /* no entry, no slot in use: a column writer resets its dictionary at
     * the chunk's finish, at the next begin and when passed on (released
     * tables are kept), and clearing the table each time cost more than
     * the calloc it replaced */
    if (d->slots != NULL && d->count > 0)
        memset(d->slots, 0, d->nslots * sizeof *d->slots);
    d->count = 0;
    d->plain_bytes = 0;
    d->generation++;
}

/* Rebuilds the table at twice the size from the stored hashes. */
static int dict_grow_slots(pq_dict *d)
{
    size_t n = d->nslots ? d->nslots * 2 : DICT_MIN_SLOTS;
    if (n > SIZE_MAX / sizeof(uint32_t))
        return PQ_ENOMEM;
    uint32_t *s = calloc(n, sizeof *s);
    if (s == NULL)
        return PQ_ENOMEM;
    for (size_t i = 0; i < d->count; i++) {
        size_t j = (size_t)d->ents[i].hash & (n - 1);
        while (s[j] != 0)
            j = (j + 1) & (n - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(d->slots);
    d->slots = s;
    d->nslots = n;
    return 0;
}

static int dict_grow_ents(pq_dict *d)
{
    size_t cap = d->ents_cap ? d->ents_cap * 2 : DICT_MIN_ENTS;
    if (cap > SIZE_MAX / sizeof *d->ents)
        return PQ_ENOMEM;
    struct pq_dict_ent *e = realloc(d->ents, cap * sizeof *e);
    if (e == NULL)
        return PQ_ENOMEM;
    d->ents = e;
    d->ents_cap = cap;
    return 0;
}

/* The slow path of an insert: a new entry (cold: most values repeat). */
static int dict_add(pq_dict *d, size_t slot, uint64_t h, const uint8_t *p, uint32_t len,
                    uint32_t *index_out)
{
    if (d->count >= DICT_MAX_ENTRIES)
        return PQ_ELIMIT;
    if (d->count == d->ents_cap && dict_grow_ents(d) != 0)
        return PQ_ENOMEM;
    size_t off = d->arena.len;
    if (pq_buf_append(&d->arena, p, len) != 0)
        return PQ_ENOMEM;
    d->ents[d->count] = (struct pq_dict_ent){h, off, len};
    d->slots[slot] = (uint32_t)(d->count + 1);
    d->plain_bytes += len + (d->type == PQ_BYTE_ARRAY ? 4 : 0);
    *index_out = (uint32_t)d->count++;
    return 0;
}

/* The table is kept at most half full so linear probes stay short. p is
 * not NULL (dict_empty stands in for an empty value). */
static inline int dict_insert(pq_dict *d, const uint8_t *p, uint32_t len, uint32_t *index_out)
{
    if ((d->count + 1) * 2 > d->nslots && dict_grow_slots(d) != 0)
        return PQ_ENOMEM;
    uint64_t h = XXH3_64bits(p, len);
    size_t mask = d->nslots - 1;
    size_t j = (size_t)h & mask;
    for (uint32_t s; (s = d->slots[j]) != 0; j = (j + 1) & mask) {
        const struct pq_dict_ent *e = &d->ents[s - 1];
        /* len 0: the arena may hold no memory (NULL + 0 is undefined) */
        if (e->hash == h && e->len == len
            && (len == 0 || pq_memeq(d->arena.data + e->off, p, len))) {
            *index_out = s - 1;
            return 0;
        }
    }
    return dict_add(d, j, h, p, len, index_out);
}

int pq_dict_insert_fixed(pq_dict *d, const void *val, uint32_t *index_out)
{
    if (d->type == PQ_BYTE_ARRAY || val == NULL || index_out == NULL)
        return PQ_EINVAL;
    return dict_insert(d, val, (uint32_t)d->width, index_out);
}

int pq_dict_insert_bytes(pq_dict *d, const uint8_t *p, uint32_t len, uint32_t *index_out)
{
    if ((d->type != PQ_BYTE_ARRAY && len != d->width) || index_out == NULL ||
        (len > 0 && p == NULL))
        return PQ_EINVAL;
    return dict_insert(d, p != NULL ? p : dict_empty, len, index_out);
}

__attribute__((flatten)) int pq_dict_insert_fixed_n(pq_dict *d, const uint8_t *vals, size_t n, uint32_t *index_out)
{
    if (d->type == PQ_BYTE_ARRAY || (n > 0 && (vals == NULL || index_out == NULL)))
        return PQ_EINVAL;
    const uint32_t w = (uint32_t)d->width;
    for (size_t i = 0; i < n; i++) {
        int rc = dict_insert(d, vals + i * w, w, &index_out[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

__attribute__((flatten)) int pq_dict_insert_bytes_n(pq_dict *d, const uint8_t *heap, const uint32_t *off, size_t n,
                           uint32_t *index_out)
{
    if (d->type != PQ_BYTE_ARRAY || (n > 0 && (off == NULL || index_out == NULL)))
        return PQ_EINVAL;
    if (heap == NULL && n > 0 && off[n] != off[0])
        return PQ_EINVAL;
    for (size_t i = 0; i < n; i++) {
        uint32_t len = off[i + 1] - off[i];
        int rc = dict_insert(d, len ? heap + off[i] : dict_empty, len, &index_out[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

size_t pq_dict_count(const pq_dict *d)
{
    return d->count;
}

size_t pq_dict_plain_bytes(const pq_dict *d)
{
    return d->plain_bytes;
}

/* Fixed-width entries are already PLAIN in the arena (little-endian host,
 * see plain.c); byte arrays need their 4-byte length prefixes. */
int pq_dict_write_plain(const pq_dict *d, pq_buf *out)
{
    if (d->type != PQ_BYTE_ARRAY)
        return pq_buf_append(out, d->arena.data, d->arena.len);
    if (pq_buf_reserve(out, d->plain_bytes) != 0)
        return PQ_ENOMEM;
    for (size_t i = 0; i < d->count; i++) {
        const struct pq_dict_ent *e = &d->ents[i];
        uint8_t *dst = out->data + out->len;
        dst[0] = (uint8_t)e->len;
        dst[1] = (uint8_t)(e->len >> 8);
        dst[2] = (uint8_t)(e->len >> 16);
        dst[3] = (uint8_t)(e->len >> 24);
        if (e->len > 0)
            memcpy(dst + 4, d->arena.data + e->off, e->len);
        out->len += 4 + (size_t)e->len;
    }
    return 0;
}

const uint8_t *pq_dict_entry(const pq_dict *d, uint32_t index, uint32_t *len_out)
{
    if (index >= d->count)
        return NULL;
    if (len_out != NULL)
        *len_out = d->ents[index].len;
    if (d->ents[index].len == 0)
        return dict_empty; /* the arena may hold no bytes at all */
    return d->arena.data + d->ents[index].off;
}
