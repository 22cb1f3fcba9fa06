/* variant_int.h - internals shared by the parts of the Variant encoder
 * (VariantEncoding.md): the builder's private structs, the little-endian
 * and container-header helpers, key comparison, and the calls one part
 * makes into another (the builder, vbuild.c, into its key dictionary,
 * vdict.c; finishing, vfinish.c, into both). Public API: variant.h. */
#ifndef PQ_VARIANT_INT_H
#define PQ_VARIANT_INT_H

#include "utf8.h"
#include "variant.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define VR_MAX_BYTES UINT32_MAX     /* 4-byte offsets bound every size */
#define VR_DROPPED UINT32_MAX       /* entry id of a duplicate key's loser */


struct vr_frame {
    uint32_t start;      /* stack offset of the first child */
    size_t first;        /* ents index of the first child */
    uint32_t key;        /* pending key id (objects) */
    bool is_object;
    bool has_key;
};

struct vr_ent {          /* one child of an open container */
    uint32_t id;         /* key id (objects) */
    uint32_t off;        /* stack offset of the value */
    uint32_t len;
    uint32_t idx;        /* insertion index, while closing */
};

struct vr_keyref {
    uint32_t off;        /* into keybytes */
    uint32_t len;
    uint32_t next;       /* the key that followed this one last time (a hint) */
    uint32_t child;      /* the first key of the object it last held (a hint) */
    uint64_t prefix;     /* first 8 bytes, big-endian, zero-padded (vr_keycmp) */
    uint32_t record;     /* shared_dict: the last record that used it */
};

struct vr_slot {
    uint32_t id;
    uint32_t gen;
};

struct vr_walk {
    vr_container c;
    uint32_t i;
};

/* ---- small helpers ------------------------------------------------------ */

static inline int vr_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 4 / elem)
            return PQ_ENOMEM;
        c *= 2;
    }
    void *q = realloc(*p, c * elem);
    if (q == NULL)
        return PQ_ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

#define VR_GROW(arr, cap, need)                                          \
    __extension__({                                                      \
        void *p_ = (arr);                                                \
        int rc_ = vr_grow(&p_, &(cap), (need), sizeof *(arr));           \
        (arr) = p_;                                                      \
        rc_;                                                             \
    })

static inline unsigned vr_width(uint64_t v)
{
    return v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFFFF ? 3 : 4;
}

/* n bytes of v, little-endian. Widths 1 and 2 (ids and offsets of the
 * small objects records are made of, ~2 million a 20 MB convert) take
 * straight stores instead of the byte loop. */
static inline void vr_put_le(uint8_t *p, uint64_t v, unsigned n)
{
    switch (n) {
    case 1:
        p[0] = (uint8_t)v;
        return;
    case 2:
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        return;
    default:
        for (unsigned i = 0; i < n; i++)
            p[i] = (uint8_t)(v >> (8 * i));
    }
}

static inline uint64_t vr_get_le(const uint8_t *p, unsigned n)
{
    switch (n) {
    case 1:
        return p[0];
    case 2:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8;
    default: {
        uint64_t v = 0;
        for (unsigned i = 0; i < n; i++)
            v |= (uint64_t)p[i] << (8 * i);
        return v;
    }
    }
}

/* 10^38, the first value with 39 digits. */
#define VR_POW10_38 ((unsigned __int128)0x4B3B4CA85A86C47AULL << 64 | 0x098A224000000000ULL)

static inline unsigned vr_digits64(uint64_t u)
{
    unsigned d = 1;
    for (uint64_t p = 10; d < 20 && u >= p; p *= 10)
        d++;
    return d;
}

/* Decimal digits of u < 10^38; one 128-bit division at most. */
static inline unsigned vr_digits(unsigned __int128 u)
{
    const uint64_t e19 = 10000000000000000000ULL;
    if (u <= UINT64_MAX)
        return vr_digits64((uint64_t)u);
    return 19 + vr_digits64((uint64_t)(u / e19));
}

static inline uint8_t vr_prim_byte(vr_type t) { return (uint8_t)(t << 2); }

/* ---- container headers -------------------------------------------------- */

static inline size_t vr_header_size(bool obj, size_t n, unsigned idw, unsigned offw)
{
    return 1 + (n > 255 ? 4 : 1) + (obj ? n * idw : 0) + (n + 1) * offw;
}

/* Writes value_metadata and num_elements; returns where ids/offsets go. */
static inline uint8_t *vr_put_header(uint8_t *p, bool obj, size_t n, unsigned idw,
                              unsigned offw)
{
    unsigned large = n > 255;
    unsigned h = obj ? (offw - 1) | (idw - 1) << 2 | large << 4
                     : (offw - 1) | large << 2;
    p[0] = (uint8_t)(h << 2 | (obj ? VR_BASIC_OBJECT : VR_BASIC_ARRAY));
    vr_put_le(p + 1, n, large ? 4 : 1);
    return p + 1 + (large ? 4 : 1);
}

/* RFC 3629 UTF-8 (utf8.h). */
static inline bool vr_utf8_ok(const uint8_t *s, size_t n)
{
    return utf8_valid(s, n);
}

/* ---- keys ------------------------------------------------------------------ */

static inline const char *vr_key_text(const vr_builder *b, uint32_t id)
{
    const vr_keyref *k = &b->keys[id];
    return k->len ? (const char *)b->keybytes.data + k->off : "";
}

/* The first 8 bytes of a key as a big-endian number, zero-padded: two
 * keys whose prefixes differ are ordered by them, as by their bytes (a
 * zero pad sorts below any byte, as a shorter key sorts below a longer
 * one it begins). Sorting object fields and the dictionary compares keys
 * more than anything else in a Variant column; this makes most compares
 * one integer comparison. */
static inline uint64_t vr_key_prefix(const uint8_t *s, size_t len)
{
    uint64_t p = 0;
    for (size_t i = 0; i < 8; i++)
        p = p << 8 | (i < len ? s[i] : 0);
    return p;
}

/* Byte-wise order of two keys (the spec's "unsigned byte ordering"). */
static inline int vr_keycmp(const vr_builder *b, uint32_t x, uint32_t y)
{
    if (x == y)
        return 0;
    const vr_keyref *kx = &b->keys[x], *ky = &b->keys[y];
    if (kx->prefix != ky->prefix)
        return kx->prefix < ky->prefix ? -1 : 1;
    size_t n = kx->len < ky->len ? kx->len : ky->len;
    int c = n ? memcmp(b->keybytes.data + kx->off, b->keybytes.data + ky->off, n) : 0;
    if (c != 0)
        return c;
    return kx->len < ky->len ? -1 : kx->len > ky->len;
}

/* Byte-wise order of two names, as the dictionary sorts them. */
static inline int vr_strcmp(vr_str a, vr_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.s, b.s, n) : 0;
    return c != 0 ? c : a.len < b.len ? -1 : a.len > b.len;
}

/* ---- between the parts ------------------------------------------------------ */

/* vdict.c: stable sort by (key name, insertion offset); scratch holds n. */
void vr_sort(const vr_builder *b, vr_ent *a, size_t n, vr_ent *scratch);
/* vdict.c: an object's n children e, sorted by key into s (scratch after
 * s holds n more); an order seen before under this dictionary is reused. */
void vr_sort_children(vr_builder *b, const vr_ent *e, vr_ent *s, size_t n);
/* vbuild.c: an already-encoded primitive or short string, copied as is. */
int vr_raw_scalar(vr_builder *b, const uint8_t *v, size_t len);

#endif
