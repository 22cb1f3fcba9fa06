/* variant.c - Variant binary encoding (VariantEncoding.md): streaming record
 * builder, single-value appenders, and bounds-checked readers for the
 * shredder (VariantShredding.md, "unshredded fields stay in value").
 *
 * JSON numbers become Variant values in vnumber.c (the type rule and its
 * reasons). The one rule enforced here, in vr_decimal, is the one readers
 * need from every decimal: a scale below its implied precision.
 *
 * Building cost. A record is built in one buffer, b->stack. Scalars are
 * encoded straight into it, once. A container cannot write its header
 * first (the header's widths depend on the children's total size), so its
 * children are written first, and at end_object/end_array they are moved
 * right by the header size with one memmove and the header is written in
 * front. A byte nested d containers deep is therefore moved d times
 * (O(bytes * depth)); duplicate keys add one compacting move in that
 * object. Roads not taken: sizing in a first pass needs the events twice
 * (a tape, i.e. another copy of every scalar), and writing children after
 * a worst-case header wastes bytes or breaks minimal widths.
 *
 * Dictionary cost. Keys are interned (seeded XXH3, open addressing) and
 * get first-seen ids while building, so objects can be closed immediately.
 * vr_finish sorts the k keys (O(k log k)) and renumbers: with <= 256 keys
 * every field id is 1 byte before and after, so ids are rewritten in place
 * by one walk over the containers. Above 256 keys an object's minimal id
 * width may change, so the record is re-encoded once from the first pass
 * (rare: such a record has > 256 distinct keys). */
#include "variant.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <xxhash.h>

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

static int vr_grow(void **p, size_t *cap, size_t need, size_t elem)
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

static unsigned vr_width(uint64_t v)
{
    return v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFFFF ? 3 : 4;
}

static void vr_put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t vr_get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* RFC 3629 UTF-8: no overlongs, no surrogates, nothing above U+10FFFF. */
static bool vr_utf8_ok(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint64_t w;
        if (n - i >= 8 && (memcpy(&w, s + i, 8), (w & 0x8080808080808080ULL) == 0)) {
            i += 8;                     /* log text is mostly ASCII */
            continue;
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            k = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else
            return false;
        if (n - i <= k || s[i + 1] < lo || s[i + 1] > hi)
            return false;
        for (size_t j = 2; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
        i += k + 1;
    }
    return true;
}

/* 10^38, the first value with 39 digits. */
#define VR_POW10_38 ((unsigned __int128)0x4B3B4CA85A86C47AULL << 64 | 0x098A224000000000ULL)

static unsigned vr_digits64(uint64_t u)
{
    unsigned d = 1;
    for (uint64_t p = 10; d < 20 && u >= p; p *= 10)
        d++;
    return d;
}

/* Decimal digits of u < 10^38; one 128-bit division at most. */
static unsigned vr_digits(unsigned __int128 u)
{
    const uint64_t e19 = 10000000000000000000ULL;
    if (u <= UINT64_MAX)
        return vr_digits64((uint64_t)u);
    return 19 + vr_digits64((uint64_t)(u / e19));
}

/* ---- stateless appenders ------------------------------------------------ */

static uint8_t vr_prim_byte(vr_type t) { return (uint8_t)(t << 2); }

static int vr_append_fixed(pq_buf *out, vr_type t, uint64_t v, unsigned n)
{
    if (pq_buf_reserve(out, 1 + n) != 0)
        return PQ_ENOMEM;
    out->data[out->len] = vr_prim_byte(t);
    vr_put_le(out->data + out->len + 1, v, n);
    out->len += 1 + n;
    return 0;
}

int vr_value_append_null(pq_buf *out)
{
    return pq_buf_push(out, vr_prim_byte(VR_NULL));
}

int vr_value_append_bool(pq_buf *out, bool v)
{
    return pq_buf_push(out, vr_prim_byte(v ? VR_TRUE : VR_FALSE));
}

int vr_value_append_int(pq_buf *out, int64_t v)
{
    if (v >= INT8_MIN && v <= INT8_MAX)
        return vr_append_fixed(out, VR_INT8, (uint64_t)v, 1);
    if (v >= INT16_MIN && v <= INT16_MAX)
        return vr_append_fixed(out, VR_INT16, (uint64_t)v, 2);
    if (v >= INT32_MIN && v <= INT32_MAX)
        return vr_append_fixed(out, VR_INT32, (uint64_t)v, 4);
    return vr_append_fixed(out, VR_INT64, (uint64_t)v, 8);
}

int vr_value_append_double(pq_buf *out, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return vr_append_fixed(out, VR_DOUBLE, bits, 8);
}

int vr_value_append_float(pq_buf *out, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return vr_append_fixed(out, VR_FLOAT, bits, 4);
}

/* Precision picks the width (VariantEncoding.md, "Decimal table"). */
int vr_value_append_decimal(pq_buf *out, vr_i128 unscaled, uint32_t scale)
{
    unsigned __int128 mag = unscaled < 0 ? -(unsigned __int128)unscaled
                                         : (unsigned __int128)unscaled;
    if (scale > VR_MAX_DECIMAL_DIGITS || mag >= VR_POW10_38)
        return PQ_EINVAL;
    unsigned prec = vr_digits(mag);
    vr_type t = prec <= 9 ? VR_DECIMAL4 : prec <= 18 ? VR_DECIMAL8 : VR_DECIMAL16;
    unsigned n = t == VR_DECIMAL4 ? 4 : t == VR_DECIMAL8 ? 8 : 16;
    if (pq_buf_reserve(out, 2 + n) != 0)
        return PQ_ENOMEM;
    uint8_t *p = out->data + out->len;
    p[0] = vr_prim_byte(t);
    p[1] = (uint8_t)scale;
    unsigned __int128 u = (unsigned __int128)unscaled;  /* two's complement */
    for (unsigned i = 0; i < n; i++)
        p[2 + i] = (uint8_t)(u >> (8 * i));
    out->len += 2 + n;
    return 0;
}

static int vr_append_sized(pq_buf *out, uint8_t head, const void *p, size_t len)
{
    if (len > UINT32_MAX)
        return PQ_ELIMIT;
    if (pq_buf_reserve(out, 5 + len) != 0)
        return PQ_ENOMEM;
    out->data[out->len] = head;
    vr_put_le(out->data + out->len + 1, len, 4);
    out->len += 5;
    return pq_buf_append(out, p, len);
}

int vr_value_append_string(pq_buf *out, const char *s, size_t len)
{
    if (len >= 64)
        return vr_append_sized(out, vr_prim_byte(VR_STRING), s, len);
    if (pq_buf_push(out, (uint8_t)(len << 2 | VR_BASIC_SHORT_STRING)) != 0)
        return PQ_ENOMEM;
    return pq_buf_append(out, s, len);
}

int vr_value_append_binary(pq_buf *out, const void *p, size_t len)
{
    return vr_append_sized(out, vr_prim_byte(VR_BINARY), p, len);
}

int vr_value_append_date(pq_buf *out, int32_t days)
{
    return vr_append_fixed(out, VR_DATE, (uint32_t)days, 4);
}

int vr_value_append_timestamp(pq_buf *out, int64_t v, vr_unit unit, bool utc)
{
    vr_type t = unit == VR_NANOS ? (utc ? VR_TIMESTAMP_NANOS : VR_TIMESTAMP_NTZ_NANOS)
                                 : (utc ? VR_TIMESTAMP_MICROS : VR_TIMESTAMP_NTZ_MICROS);
    return vr_append_fixed(out, t, (uint64_t)v, 8);
}

int vr_value_append_time(pq_buf *out, int64_t micros)
{
    return vr_append_fixed(out, VR_TIME_NTZ_MICROS, (uint64_t)micros, 8);
}

int vr_value_append_uuid(pq_buf *out, const uint8_t uuid[16])
{
    if (pq_buf_push(out, vr_prim_byte(VR_UUID)) != 0)
        return PQ_ENOMEM;
    return pq_buf_append(out, uuid, 16);
}

/* ---- container headers -------------------------------------------------- */

static size_t vr_header_size(bool obj, size_t n, unsigned idw, unsigned offw)
{
    return 1 + (n > 255 ? 4 : 1) + (obj ? n * idw : 0) + (n + 1) * offw;
}

/* Writes value_metadata and num_elements; returns where ids/offsets go. */
static uint8_t *vr_put_header(uint8_t *p, bool obj, size_t n, unsigned idw,
                              unsigned offw)
{
    unsigned large = n > 255;
    unsigned h = obj ? (offw - 1) | (idw - 1) << 2 | large << 4
                     : (offw - 1) | large << 2;
    p[0] = (uint8_t)(h << 2 | (obj ? VR_BASIC_OBJECT : VR_BASIC_ARRAY));
    vr_put_le(p + 1, n, large ? 4 : 1);
    return p + 1 + (large ? 4 : 1);
}

/* ---- builder: lifecycle ------------------------------------------------- */

/* A secret seed keeps hostile keys from colliding on purpose (the table
 * is per record, but a 1 MiB line can hold ~100k keys). */
static uint64_t vr_random_seed(const void *salt)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s)
        s = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)salt;
    return s;
}

int vr_builder_init(vr_builder *b, const vr_opts *opts)
{
    memset(b, 0, sizeof *b);
    if (opts != NULL)
        b->opts = *opts;
    if (b->opts.max_depth == 0)
        b->opts.max_depth = VR_DEFAULT_MAX_DEPTH;
    pq_buf_init(&b->stack);
    pq_buf_init(&b->spare);
    pq_buf_init(&b->meta);
    pq_buf_init(&b->keybytes);
    pq_buf_init(&b->numbuf);
    b->gen = 1;
    b->seed = vr_random_seed(b);
    return 0;
}

void vr_builder_free(vr_builder *b)
{
    pq_buf_free(&b->stack);
    pq_buf_free(&b->spare);
    pq_buf_free(&b->meta);
    pq_buf_free(&b->keybytes);
    pq_buf_free(&b->numbuf);
    free(b->frames);
    free(b->ents);
    free(b->tmp);
    free(b->keys);
    free(b->perm);
    free(b->slots);
    free(b->walk);
    memset(b, 0, sizeof *b);
}

/* shared_dict: whether the next record may keep the dictionary. */
static bool vr_keep_dict(const vr_builder *b)
{
    return b->opts.shared_dict && !b->forget_dict && b->nkeys <= VR_SHARED_MAX_KEYS &&
           b->keybytes.len <= VR_SHARED_MAX_BYTES && b->used_keys * 2 >= b->nkeys &&
           b->meta_keys == b->nkeys;
}

void vr_builder_reset(vr_builder *b)
{
    bool keep = vr_keep_dict(b);
    pq_buf_reset(&b->stack);
    pq_buf_reset(&b->spare);
    b->nframes = 0;
    b->nents = 0;
    b->have_root = false;
    b->record++;
    b->used_keys = 0;
    b->forget_dict = false;
    pq_err_clear(&b->err);
    if (keep)
        return;
    pq_buf_reset(&b->meta);
    pq_buf_reset(&b->keybytes);
    b->nkeys = 0;
    b->meta_keys = 0;
    /* Bumping the generation empties the intern table in O(1). */
    if (++b->gen == 0) {
        if (b->slots != NULL)
            memset(b->slots, 0, b->nslots * sizeof *b->slots);
        b->gen = 1;
    }
}

void vr_builder_forget_dict(vr_builder *b)
{
    b->forget_dict = true;
}

/* ---- builder: key dictionary -------------------------------------------- */

static const char *vr_key_text(const vr_builder *b, uint32_t id)
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
static uint64_t vr_key_prefix(const uint8_t *s, size_t len)
{
    uint64_t p = 0;
    for (size_t i = 0; i < 8; i++)
        p = p << 8 | (i < len ? s[i] : 0);
    return p;
}

/* Byte-wise order of two keys (the spec's "unsigned byte ordering"). */
static int vr_keycmp(const vr_builder *b, uint32_t x, uint32_t y)
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

static size_t vr_slot_of(const vr_builder *b, const char *s, size_t len)
{
    return (size_t)XXH3_64bits_withSeed(s, len, b->seed) & (b->nslots - 1);
}

static int vr_rehash(vr_builder *b)
{
    size_t n = b->nslots ? b->nslots * 2 : 64;
    vr_slot *s = calloc(n, sizeof *s);
    if (s == NULL)
        return PQ_ENOMEM;
    free(b->slots);
    b->slots = s;
    b->nslots = n;
    b->gen = 1;
    for (uint32_t id = 0; id < b->nkeys; id++) {
        size_t i = vr_slot_of(b, vr_key_text(b, id), b->keys[id].len);
        while (s[i].gen == b->gen)
            i = (i + 1) & (n - 1);
        s[i].id = id;
        s[i].gen = b->gen;
    }
    return 0;
}

/* The id of key name, adding it on first sight. */
static int vr_intern(vr_builder *b, const char *name, size_t len, uint32_t *id)
{
    if ((b->nkeys + 1) * 2 > b->nslots && vr_rehash(b) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory for the key table");
    size_t mask = b->nslots - 1, i = vr_slot_of(b, name, len);
    for (;; i = (i + 1) & mask) {
        const vr_slot *s = &b->slots[i];
        if (s->gen != b->gen)
            break;
        if (b->keys[s->id].len == len &&
            (len == 0 || memcmp(vr_key_text(b, s->id), name, len) == 0)) {
            *id = s->id;
            return 0;
        }
    }
    if (len > VR_MAX_BYTES - b->keybytes.len || b->nkeys >= VR_DROPPED - 1)
        return pq_err_set(&b->err, PQ_ELIMIT,
                          "variant: keys of one record exceed 4 GiB or 2^32 names");
    if (VR_GROW(b->keys, b->keys_cap, b->nkeys + 1) != 0 ||
        pq_buf_append(&b->keybytes, name, len) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory for a %zu-byte key", len);
    b->keys[b->nkeys].off = (uint32_t)(b->keybytes.len - len);
    b->keys[b->nkeys].len = (uint32_t)len;
    b->keys[b->nkeys].prefix = vr_key_prefix((const uint8_t *)name, len);
    b->keys[b->nkeys].record = b->record - 1;
    b->slots[i].id = (uint32_t)b->nkeys;
    b->slots[i].gen = b->gen;
    *id = (uint32_t)b->nkeys++;
    return 0;
}

/* ---- builder: sorting children by key ----------------------------------- */

static bool vr_ent_less(const vr_builder *b, const vr_ent *x, const vr_ent *y)
{
    int c = vr_keycmp(b, x->id, y->id);
    return c < 0 || (c == 0 && x->off < y->off);
}

static void vr_msort(const vr_builder *b, vr_ent *a, size_t n, vr_ent *scratch)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            vr_ent t = a[i];
            size_t j = i;
            for (; j > 0 && vr_ent_less(b, &t, &a[j - 1]); j--)
                a[j] = a[j - 1];
            a[j] = t;
        }
        return;
    }
    size_t h = n / 2, i = 0, j = h, k = 0;
    vr_msort(b, a, h, scratch);
    vr_msort(b, a + h, n - h, scratch);
    while (i < h && j < n)
        scratch[k++] = vr_ent_less(b, &a[j], &a[i]) ? a[j++] : a[i++];
    while (i < h)
        scratch[k++] = a[i++];
    memcpy(a, scratch, k * sizeof *a);   /* a[j..n) is already in place */
}

/* Stable sort by (key name, insertion offset); scratch holds n entries.
 * Keys usually arrive sorted or nearly so, hence the linear check. */
static void vr_sort(const vr_builder *b, vr_ent *a, size_t n, vr_ent *scratch)
{
    size_t i = 1;
    while (i < n && !vr_ent_less(b, &a[i], &a[i - 1]))
        i++;
    if (i < n)
        vr_msort(b, a, n, scratch);
}

/* ---- builder: value slots ------------------------------------------------ */

/* Checks that a value may start here and reserves room for it, without
 * changing the builder, so a refused value leaves the record intact. */
static int vr_prepare(vr_builder *b, size_t nbytes)
{
    if (b->nframes == 0) {
        if (b->have_root)
            return pq_err_set(&b->err, PQ_ESTATE, "variant: the record already "
                              "holds a complete value; vr_builder_reset starts the next");
    } else {
        const vr_frame *f = &b->frames[b->nframes - 1];
        if (f->is_object && !f->has_key)
            return pq_err_set(&b->err, PQ_ESTATE,
                              "variant: object member without a key (vr_key comes first)");
    }
    if (nbytes > VR_MAX_BYTES - b->stack.len)
        return pq_err_set(&b->err, PQ_ELIMIT, "variant: record value exceeds 4 GiB, "
                          "the limit of 32-bit Variant offsets");
    if (pq_buf_reserve(&b->stack, nbytes) != 0 ||
        VR_GROW(b->ents, b->ents_cap, b->nents + 1) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory for a %zu-byte value",
                          nbytes);
    return 0;
}

/* Records that a value starts at the end of the stack. Cannot fail. */
static void vr_commit(vr_builder *b)
{
    if (b->nframes == 0) {
        b->have_root = true;
        return;
    }
    vr_frame *f = &b->frames[b->nframes - 1];
    vr_ent *e = &b->ents[b->nents++];
    e->id = f->key;
    e->off = (uint32_t)b->stack.len;
    e->len = 0;
    e->idx = 0;
    f->has_key = false;
}

int vr_null(vr_builder *b)
{
    int rc = vr_prepare(b, 1);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_null(&b->stack);
    }
    return rc;
}

int vr_bool(vr_builder *b, bool v)
{
    int rc = vr_prepare(b, 1);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_bool(&b->stack, v);
    }
    return rc;
}

int vr_int(vr_builder *b, int64_t v)
{
    int rc = vr_prepare(b, 9);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_int(&b->stack, v);
    }
    return rc;
}

int vr_uint64(vr_builder *b, uint64_t v)
{
    if (v <= INT64_MAX)
        return vr_int(b, (int64_t)v);
    return vr_decimal(b, (vr_i128)v, 0);
}

int vr_double(vr_builder *b, double v)
{
    int rc = vr_prepare(b, 9);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_double(&b->stack, v);
    }
    return rc;
}

int vr_float(vr_builder *b, float v)
{
    int rc = vr_prepare(b, 5);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_float(&b->stack, v);
    }
    return rc;
}

/* Readers take a Variant decimal's precision from the digits of its
 * unscaled value (VariantEncoding.md, "implied precision"); DuckDB 1.5.6
 * crashes (SIGFPE) on a scale above it and prints a scale equal to it as
 * ".5", which is not JSON. So a decimal with a fraction needs an integer
 * digit, and zero has scale 0. */
int vr_decimal(vr_builder *b, vr_i128 unscaled, uint32_t scale)
{
    unsigned __int128 mag = unscaled < 0 ? -(unsigned __int128)unscaled
                                         : (unsigned __int128)unscaled;
    if (scale > VR_MAX_DECIMAL_DIGITS || mag >= VR_POW10_38)
        return pq_err_set(&b->err, PQ_EINVAL, "variant: decimal needs |unscaled| < 10^38 "
                          "and scale 0..38 (scale %u)", scale);
    if (scale > 0 && scale >= vr_digits(mag))
        return pq_err_set(&b->err, PQ_EINVAL, "variant: decimal with scale %u and %u-digit "
                          "unscaled value: readers need the scale below the precision (an "
                          "integer digit)", scale, vr_digits(mag));
    int rc = vr_prepare(b, 18);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_decimal(&b->stack, unscaled, scale);
    }
    return rc;
}

static int vr_bytes_value(vr_builder *b, bool is_string, const void *p, size_t len)
{
    if (len > UINT32_MAX)
        return pq_err_set(&b->err, PQ_ELIMIT, "variant: %zu-byte %s exceeds 4 GiB", len,
                          is_string ? "string" : "binary");
    int rc = vr_prepare(b, 5 + len);
    if (rc == 0) {
        vr_commit(b);
        rc = is_string ? vr_value_append_string(&b->stack, p, len)
                       : vr_value_append_binary(&b->stack, p, len);
    }
    return rc;
}

int vr_string(vr_builder *b, const char *s, size_t len)
{
    if (!b->opts.trust_utf8 && !vr_utf8_ok((const uint8_t *)s, len))
        return pq_err_set(&b->err, PQ_EINVAL, "variant: string is not valid UTF-8");
    return vr_bytes_value(b, true, s, len);
}

int vr_binary(vr_builder *b, const void *p, size_t len)
{
    return vr_bytes_value(b, false, p, len);
}

int vr_date(vr_builder *b, int32_t days)
{
    int rc = vr_prepare(b, 5);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_date(&b->stack, days);
    }
    return rc;
}

int vr_timestamp(vr_builder *b, int64_t v, vr_unit unit, bool utc)
{
    int rc = vr_prepare(b, 9);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_timestamp(&b->stack, v, unit, utc);
    }
    return rc;
}

int vr_time(vr_builder *b, int64_t micros)
{
    int rc = vr_prepare(b, 9);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_time(&b->stack, micros);
    }
    return rc;
}

int vr_uuid(vr_builder *b, const uint8_t uuid[16])
{
    int rc = vr_prepare(b, 17);
    if (rc == 0) {
        vr_commit(b);
        rc = vr_value_append_uuid(&b->stack, uuid);
    }
    return rc;
}

/* An already-encoded primitive or short string, copied as is. */
static int vr_raw_scalar(vr_builder *b, const uint8_t *v, size_t len)
{
    int rc = vr_prepare(b, len);
    if (rc == 0) {
        vr_commit(b);
        rc = pq_buf_append(&b->stack, v, len);
    }
    return rc;
}

/* ---- builder: containers ------------------------------------------------ */

static int vr_begin(vr_builder *b, bool obj)
{
    if (b->nframes >= b->opts.max_depth)
        return pq_err_set(&b->err, PQ_ELIMIT, "variant: nesting deeper than max_depth %u",
                          b->opts.max_depth);
    int rc = vr_prepare(b, 0);
    if (rc != 0)
        return rc;
    if (VR_GROW(b->frames, b->frames_cap, b->nframes + 1) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory for nesting");
    vr_commit(b);
    vr_frame *f = &b->frames[b->nframes++];
    f->start = (uint32_t)b->stack.len;
    f->first = b->nents;
    f->key = 0;
    f->is_object = obj;
    f->has_key = false;
    return 0;
}

int vr_begin_object(vr_builder *b) { return vr_begin(b, true); }
int vr_begin_array(vr_builder *b) { return vr_begin(b, false); }

int vr_key(vr_builder *b, const char *name, size_t len)
{
    vr_frame *f = b->nframes ? &b->frames[b->nframes - 1] : NULL;
    if (f == NULL || !f->is_object)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: vr_key outside an object");
    if (f->has_key)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: key \"%.*s\" follows a key "
                          "that got no value", (int)(len > 64 ? 64 : len), name);
    if (!b->opts.trust_utf8 && !vr_utf8_ok((const uint8_t *)name, len))
        return pq_err_set(&b->err, PQ_EINVAL, "variant: key is not valid UTF-8");
    uint32_t id = 0;
    int rc = vr_intern(b, name, len, &id);
    if (rc != 0)
        return rc;
    if (b->keys[id].record != b->record) {
        b->keys[id].record = b->record;
        b->used_keys++;
    }
    f->key = id;
    f->has_key = true;
    return 0;
}

/* Moves the m children (data bytes from f->start) right by the header
 * size and writes the header in front: the one copy per nesting level. */
static void vr_place(vr_builder *b, const vr_frame *f, const vr_ent *s, size_t m,
                     size_t data, unsigned idw, unsigned offw, bool obj)
{
    size_t h = vr_header_size(obj, m, idw, offw);
    uint8_t *base = b->stack.data + f->start;
    memmove(base + h, base, data);
    uint8_t *p = vr_put_header(base, obj, m, idw, offw);
    for (size_t j = 0; obj && j < m; j++, p += idw)
        vr_put_le(p, s[j].id, idw);
    for (size_t j = 0; j < m; j++, p += offw)
        vr_put_le(p, s[j].off - f->start, offw);
    vr_put_le(p, data, offw);
    b->stack.len = f->start + h + data;
    b->nents = f->first;
    b->nframes--;
}

static int vr_reserve_header(vr_builder *b, size_t h)
{
    if (h > VR_MAX_BYTES - b->stack.len)
        return pq_err_set(&b->err, PQ_ELIMIT, "variant: record value exceeds 4 GiB");
    if (pq_buf_reserve(&b->stack, h) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory closing a container");
    return 0;
}

int vr_end_array(vr_builder *b)
{
    if (b->nframes == 0 || b->frames[b->nframes - 1].is_object)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: vr_end_array without an open array");
    const vr_frame *f = &b->frames[b->nframes - 1];
    size_t n = b->nents - f->first, data = b->stack.len - f->start;
    unsigned offw = vr_width(data);
    int rc = vr_reserve_header(b, vr_header_size(false, n, 1, offw));
    if (rc == 0)
        vr_place(b, f, b->ents + f->first, n, data, 1, offw, false);
    return rc;
}

/* Duplicate keys: the last value wins. s holds the children sorted by
 * (name, offset), so in each run of one key the last entry is the latest.
 * Losers are cut out of the stack (values keep insertion order), and s is
 * compacted to the winners with their new offsets. Returns bytes cut. */
static size_t vr_drop_duplicates(vr_builder *b, vr_ent *e, size_t n, vr_ent *s)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && s[i + 1].id == s[i].id)
            e[s[i].idx].id = VR_DROPPED;
        else
            s[k++] = s[i];
    }
    uint32_t shift = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].id == VR_DROPPED) {
            shift += e[i].len;
        } else if (shift != 0) {
            memmove(b->stack.data + e[i].off - shift, b->stack.data + e[i].off, e[i].len);
            e[i].off -= shift;
        }
    }
    for (size_t j = 0; j < k; j++)
        s[j].off = e[s[j].idx].off;
    b->stack.len -= shift;
    return shift;
}

int vr_end_object(vr_builder *b)
{
    vr_frame *f = b->nframes ? &b->frames[b->nframes - 1] : NULL;
    if (f == NULL || !f->is_object)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: vr_end_object without an open object");
    if (f->has_key)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: object ends after a key without value");
    vr_ent *e = b->ents + f->first;
    size_t n = b->nents - f->first;
    /* + 1: never NULL, so s + n below is defined even for {} */
    if (VR_GROW(b->tmp, b->tmp_cap, 2 * n + 1) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory sorting %zu keys", n);
    for (size_t i = 0; i < n; i++) {
        e[i].len = (uint32_t)((i + 1 < n ? e[i + 1].off : b->stack.len) - e[i].off);
        e[i].idx = (uint32_t)i;
    }
    vr_ent *s = b->tmp;
    if (n > 0)
        memcpy(s, e, n * sizeof *e);
    vr_sort(b, s, n, s + n);
    size_t m = 0, data = 0;
    uint32_t maxid = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && s[i + 1].id == s[i].id)
            continue;
        m++;
        data += s[i].len;
        maxid = s[i].id > maxid ? s[i].id : maxid;
    }
    unsigned idw = vr_width(maxid), offw = vr_width(data);
    int rc = vr_reserve_header(b, vr_header_size(true, m, idw, offw));
    if (rc != 0)
        return rc;
    if (m < n)
        vr_drop_duplicates(b, e, n, s);
    vr_place(b, f, s, m, data, idw, offw, true);
    return 0;
}

/* ---- builder: finishing the record -------------------------------------- */

static int vr_walk_push(vr_builder *b, size_t *depth, const uint8_t *v, size_t len)
{
    if (VR_GROW(b->walk, b->walk_cap, *depth + 1) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory walking the value");
    vr_walk *w = &b->walk[*depth];
    int rc = vr_container_open(&w->c, v, len, &b->err);
    if (rc != 0)
        return rc;
    w->i = 0;
    (*depth)++;
    return 0;
}

/* Renumbers field ids in place; every id is one byte (<= 256 keys). */
static int vr_remap_inplace(vr_builder *b)
{
    size_t depth = 0;
    if ((b->stack.data[0] & 3) < VR_BASIC_OBJECT)
        return 0;
    int rc = vr_walk_push(b, &depth, b->stack.data, b->stack.len);
    while (rc == 0 && depth > 0) {
        vr_walk *w = &b->walk[depth - 1];
        if (w->i == 0 && w->c.basic == VR_BASIC_OBJECT) {
            uint8_t *ids = (uint8_t *)w->c.ids;
            for (uint32_t j = 0; j < w->c.n; j++)
                ids[j] = (uint8_t)b->perm[ids[j]];
        }
        if (w->i == w->c.n) {
            depth--;
            continue;
        }
        /* Only containers matter here, so scalars are not even sized; a
         * container's open checks its own bounds against what is left. */
        size_t off = vr_get_le(w->c.offsets + (size_t)w->i++ * w->c.offset_size,
                               w->c.offset_size);
        if (off < w->c.data_len && (w->c.data[off] & 3) >= VR_BASIC_OBJECT)
            rc = vr_walk_push(b, &depth, w->c.data + off, w->c.data_len - off);
    }
    return rc;
}

static int vr_replay_value(vr_builder *b, size_t *depth, const uint8_t *v, size_t len)
{
    int basic = v[0] & 3;
    if (basic < VR_BASIC_OBJECT)
        return vr_raw_scalar(b, v, len);
    int rc = basic == VR_BASIC_OBJECT ? vr_begin_object(b) : vr_begin_array(b);
    return rc != 0 ? rc : vr_walk_push(b, depth, v, len);
}

/* Feeds the first-pass value (old ids, read through perm) back into the
 * builder, whose dictionary is already final. */
static int vr_replay(vr_builder *b, const uint8_t *v, size_t len)
{
    size_t depth = 0;
    int rc = vr_replay_value(b, &depth, v, len);
    while (rc == 0 && depth > 0) {
        vr_walk *w = &b->walk[depth - 1];
        bool obj = w->c.basic == VR_BASIC_OBJECT;
        if (w->i == w->c.n) {
            depth--;
            rc = obj ? vr_end_object(b) : vr_end_array(b);
            continue;
        }
        uint32_t id = 0;
        const uint8_t *cv;
        size_t clen;
        rc = vr_container_get(&w->c, w->i++, &id, &cv, &clen, &b->err);
        if (rc == 0 && obj) {
            uint32_t nid = b->perm[id];
            rc = vr_key(b, vr_key_text(b, nid), b->keys[nid].len);
        }
        if (rc == 0)
            rc = vr_replay_value(b, &depth, cv, clen);
    }
    return rc;
}

static int vr_reencode(vr_builder *b)
{
    pq_buf t = b->stack;
    b->stack = b->spare;
    b->spare = t;
    pq_buf_reset(&b->stack);
    b->nframes = 0;
    b->nents = 0;
    b->have_root = false;
    bool trust = b->opts.trust_utf8;
    b->opts.trust_utf8 = true;          /* checked on the first pass */
    int rc = vr_replay(b, b->spare.data, b->spare.len);
    b->opts.trust_utf8 = trust;
    pq_buf_reset(&b->spare);
    return rc;
}

/* Sorts the dictionary and renumbers the value's field ids to match. */
static int vr_sort_dict(vr_builder *b)
{
    size_t k = b->nkeys;
    if (VR_GROW(b->tmp, b->tmp_cap, 2 * k) != 0 || VR_GROW(b->perm, b->perm_cap, k) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory sorting %zu keys", k);
    vr_ent *s = b->tmp;
    for (size_t i = 0; i < k; i++)
        s[i] = (vr_ent){.id = (uint32_t)i};
    vr_sort(b, s, k, s + k);
    size_t i = 0;
    while (i < k && s[i].id == i)
        i++;
    if (i == k)
        return 0;                       /* first-seen order is sorted */
    for (i = 0; i < k; i++) {
        b->perm[s[i].id] = (uint32_t)i;
        s[i].off = b->keys[s[i].id].off;
        s[i].len = b->keys[s[i].id].len;
        s[i].idx = b->keys[s[i].id].record;
    }
    for (i = 0; i < k; i++) {
        b->keys[i].off = s[i].off;
        b->keys[i].len = s[i].len;
        b->keys[i].prefix = vr_key_prefix(b->keybytes.data + s[i].off, s[i].len);
        b->keys[i].record = s[i].idx;
    }
    for (i = 0; i < b->nslots; i++)
        if (b->slots[i].gen == b->gen)
            b->slots[i].id = b->perm[b->slots[i].id];
    return k <= 256 ? vr_remap_inplace(b) : vr_reencode(b);
}

static int vr_write_meta(vr_builder *b)
{
    size_t k = b->nkeys, total = b->keybytes.len;
    unsigned osz = vr_width(k > total ? k : total);
    size_t need = 1 + osz + (k + 1) * osz + total;
    pq_buf_reset(&b->meta);
    if (pq_buf_reserve(&b->meta, need) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory for metadata");
    uint8_t *p = b->meta.data, *bytes = p + 1 + osz + (k + 1) * osz;
    bool sorted = !b->opts.unsorted_dict && k > 0;
    p[0] = (uint8_t)(0x01 | (sorted ? 0x10 : 0) | (osz - 1) << 6);
    vr_put_le(p + 1, k, osz);
    size_t pos = 0;
    for (size_t i = 0; i < k; i++) {
        vr_put_le(p + 1 + osz + i * osz, pos, osz);
        if (b->keys[i].len > 0)
            memcpy(bytes + pos, vr_key_text(b, (uint32_t)i), b->keys[i].len);
        pos += b->keys[i].len;
    }
    vr_put_le(p + 1 + osz + k * osz, pos, osz);
    b->meta.len = need;
    return 0;
}

int vr_finish(vr_builder *b, vr_variant *out)
{
    if (b->nframes > 0)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: %zu container(s) still open at finish",
                          b->nframes);
    if (!b->have_root)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: finish without any value");
    int rc = 0;
    if (!b->opts.shared_dict || b->meta_keys != b->nkeys || b->meta.len == 0) {
        if (!b->opts.unsorted_dict && b->nkeys > 1)
            rc = vr_sort_dict(b);
        if (rc == 0)
            rc = vr_write_meta(b);
        if (rc != 0)
            return rc;
        b->meta_keys = b->nkeys;
    }
    out->metadata = b->meta.data;
    out->metadata_len = b->meta.len;
    out->value = b->stack.data;
    out->value_len = b->stack.len;
    return 0;
}

/* ---- readers ------------------------------------------------------------ */

int vr_meta_open(vr_meta *m, const uint8_t *p, size_t len, pq_err *err)
{
    if (len < 1 || (p[0] & 0x0F) != 1)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: %s", len < 1 ? "empty"
                          : "version is not 1");
    unsigned osz = (p[0] >> 6) + 1;
    if (len < 1 + (size_t)osz)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: truncated dictionary_size");
    uint64_t n = vr_get_le(p + 1, osz);
    if ((n + 1) > (len - 1 - osz) / osz)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: %llu offsets overrun %zu bytes",
                          (unsigned long long)n + 1, len);
    m->size = (uint32_t)n;
    m->offset_size = (uint8_t)osz;
    m->sorted = (p[0] >> 4) & 1;
    m->offsets = p + 1 + osz;
    m->bytes = m->offsets + (n + 1) * osz;
    size_t avail = len - (size_t)(m->bytes - p);
    m->bytes_len = vr_get_le(m->offsets + n * osz, osz);
    if (m->bytes_len > avail)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: %zu string bytes, %zu present",
                          m->bytes_len, avail);
    return 0;
}

int vr_meta_key(const vr_meta *m, uint32_t id, vr_str *key, pq_err *err)
{
    if (id >= m->size)
        return pq_err_set(err, PQ_EPARSE, "variant: field id %u outside a %u-key dictionary",
                          id, m->size);
    uint64_t a = vr_get_le(m->offsets + (size_t)id * m->offset_size, m->offset_size);
    uint64_t z = vr_get_le(m->offsets + ((size_t)id + 1) * m->offset_size, m->offset_size);
    if (a > z || z > m->bytes_len)
        return pq_err_set(err, PQ_EPARSE, "variant metadata: bad offsets for key %u", id);
    key->s = (const char *)m->bytes + a;
    key->len = (size_t)(z - a);
    return 0;
}

int vr_value_type(const uint8_t *v, size_t len)
{
    if (len == 0)
        return PQ_EPARSE;
    unsigned basic = v[0] & 3, h = v[0] >> 2;
    if (basic == VR_BASIC_PRIMITIVE)
        return h <= VR_UUID ? (int)h : PQ_EPARSE;
    return basic == VR_BASIC_SHORT_STRING ? VR_STRING
           : basic == VR_BASIC_OBJECT     ? VR_OBJECT
                                          : VR_ARRAY;
}

/* value_data bytes per primitive type; -1: 4-byte length prefix. */
static const int8_t vr_fixed_size[VR_UUID + 1] = {
    0, 0, 0, 1, 2, 4, 8, 8, 5, 9, 17, 4, 8, 8, 4, -1, -1, 8, 8, 8, 16};

int vr_value_size(const uint8_t *v, size_t avail, size_t *size, pq_err *err)
{
    *size = 0;                          /* defined on every return */
    if (avail == 0)
        return pq_err_set(err, PQ_EPARSE, "variant value: no value_metadata byte");
    unsigned basic = v[0] & 3, h = v[0] >> 2;
    uint64_t n;
    if (basic == VR_BASIC_SHORT_STRING) {
        n = 1 + h;
    } else if (basic == VR_BASIC_PRIMITIVE) {
        if (h > VR_UUID)
            return pq_err_set(err, PQ_EPARSE, "variant value: unknown primitive type %u", h);
        if (vr_fixed_size[h] >= 0)
            n = 1 + (uint64_t)vr_fixed_size[h];
        else if (avail < 5)
            return pq_err_set(err, PQ_EPARSE, "variant value: truncated length");
        else
            n = 5 + vr_get_le(v + 1, 4);
    } else {
        vr_container c;
        int rc = vr_container_open(&c, v, avail, err);
        if (rc != 0)
            return rc;
        n = c.size;
    }
    if (n > avail)
        return pq_err_set(err, PQ_EPARSE, "variant value: %llu bytes overrun the %zu left",
                          (unsigned long long)n, avail);
    *size = (size_t)n;
    return 0;
}

static int64_t vr_sext(uint64_t u, unsigned n)
{
    uint64_t sign = (uint64_t)1 << (8 * n - 1);
    return n == 8 ? (int64_t)u : (int64_t)((u ^ sign) - sign);
}

static void vr_read_decimal(const uint8_t *v, unsigned n, vr_prim *out)
{
    unsigned __int128 u = 0;
    for (unsigned i = 0; i < n; i++)
        u |= (unsigned __int128)v[2 + i] << (8 * i);
    if (n < 16 && (v[1 + n] & 0x80))
        u |= ~(unsigned __int128)0 << (8 * n);
    out->unscaled = (vr_i128)u;
    out->scale = v[1];
}

int vr_value_read(const uint8_t *v, size_t len, vr_prim *out, pq_err *err)
{
    size_t size;
    int rc = vr_value_size(v, len, &size, err);
    if (rc != 0)
        return rc;
    memset(out, 0, sizeof *out);
    out->type = (vr_type)vr_value_type(v, len);
    unsigned h = v[0] >> 2;
    if ((v[0] & 3) == VR_BASIC_SHORT_STRING) {
        out->bytes = v + 1;
        out->len = h;
        return 0;
    }
    if ((v[0] & 3) != VR_BASIC_PRIMITIVE)
        return 0;
    unsigned n = h <= VR_UUID && vr_fixed_size[h] > 0 ? (unsigned)vr_fixed_size[h] : 0;
    switch (h) {
    case VR_DOUBLE: {
        uint64_t bits = vr_get_le(v + 1, 8);
        memcpy(&out->d, &bits, 8);
        break;
    }
    case VR_FLOAT: {
        uint32_t bits = (uint32_t)vr_get_le(v + 1, 4);
        memcpy(&out->f, &bits, 4);
        break;
    }
    case VR_DECIMAL4: case VR_DECIMAL8: case VR_DECIMAL16:
        vr_read_decimal(v, n - 1, out);
        if (out->scale > VR_MAX_DECIMAL_DIGITS)
            return pq_err_set(err, PQ_EPARSE, "variant value: decimal scale %u > 38", out->scale);
        break;
    case VR_BINARY: case VR_STRING:
        out->bytes = v + 5;
        out->len = size - 5;
        break;
    case VR_UUID:
        out->bytes = v + 1;
        out->len = 16;
        break;
    default:                            /* ints, date, times: signed LE */
        if (n > 0)
            out->i = vr_sext(vr_get_le(v + 1, n), n);
    }
    return 0;
}

int vr_container_open(vr_container *c, const uint8_t *v, size_t len, pq_err *err)
{
    if (len == 0 || (v[0] & 3) < VR_BASIC_OBJECT)
        return pq_err_set(err, PQ_EPARSE, "variant value: not an object or array");
    unsigned h = v[0] >> 2;
    bool obj = (v[0] & 3) == VR_BASIC_OBJECT;
    size_t nsz = (obj ? (h >> 4) & 1 : (h >> 2) & 1) ? 4 : 1;
    c->basic = v[0] & 3;
    c->offset_size = (uint8_t)((h & 3) + 1);
    c->id_size = obj ? (uint8_t)(((h >> 2) & 3) + 1) : 0;
    if (len < 1 + nsz)
        return pq_err_set(err, PQ_EPARSE, "variant value: truncated num_elements");
    c->n = (uint32_t)vr_get_le(v + 1, (unsigned)nsz);
    uint64_t pos = 1 + nsz + (uint64_t)c->n * c->id_size;
    uint64_t end = pos + ((uint64_t)c->n + 1) * c->offset_size;
    if (end > len)
        return pq_err_set(err, PQ_EPARSE, "variant value: header of %u elements overruns "
                          "%zu bytes", c->n, len);
    c->ids = obj ? v + 1 + nsz : NULL;
    c->offsets = v + pos;
    c->data = v + end;
    c->data_len = vr_get_le(c->offsets + (uint64_t)c->n * c->offset_size, c->offset_size);
    if (c->data_len > len - end)
        return pq_err_set(err, PQ_EPARSE, "variant value: %zu data bytes, %zu present",
                          c->data_len, (size_t)(len - end));
    c->size = (size_t)end + c->data_len;
    return 0;
}

int vr_container_get(const vr_container *c, uint32_t i, uint32_t *field_id,
                     const uint8_t **val, size_t *val_len, pq_err *err)
{
    if (i >= c->n)
        return pq_err_set(err, PQ_EINVAL, "variant: element %u of %u", i, c->n);
    size_t off = vr_get_le(c->offsets + (size_t)i * c->offset_size, c->offset_size);
    if (off >= c->data_len)
        return pq_err_set(err, PQ_EPARSE, "variant value: element %u at offset %zu outside "
                          "%zu data bytes", i, off, c->data_len);
    int rc = vr_value_size(c->data + off, c->data_len - off, val_len, err);
    if (rc != 0)
        return rc;
    if (field_id != NULL && c->basic == VR_BASIC_OBJECT)
        *field_id = (uint32_t)vr_get_le(c->ids + (size_t)i * c->id_size, c->id_size);
    *val = c->data + off;
    return 0;
}

static int vr_strcmp(vr_str a, vr_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.s, b.s, n) : 0;
    return c != 0 ? c : a.len < b.len ? -1 : a.len > b.len;
}

int vr_object_find(const vr_container *c, const vr_meta *m, const char *name, size_t len,
                   const uint8_t **val, size_t *val_len, pq_err *err)
{
    if (c->basic != VR_BASIC_OBJECT)
        return pq_err_set(err, PQ_EINVAL, "variant: field lookup in an array");
    vr_str want = {name, len}, k;
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t id = (uint32_t)vr_get_le(c->ids + (size_t)mid * c->id_size, c->id_size);
        int rc = vr_meta_key(m, id, &k, err);
        if (rc != 0)
            return rc;
        int cmp = vr_strcmp(k, want);
        if (cmp == 0) {
            rc = vr_container_get(c, mid, NULL, val, val_len, err);
            return rc != 0 ? rc : 1;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* ---- re-encoding parts of a value (shredder) ---------------------------- */

/* Walks obj's fields in key order, skipping names in drop; both lists are
 * sorted, so one merge pass decides every field. */
typedef struct vr_without {
    const vr_container *c;
    const vr_meta *m;
    const vr_str *drop;
    size_t ndrop, j;
    uint32_t i;
    vr_str prev;
} vr_without;

#define VR_WITHOUT_FIELDS 64

static int vr_without_next(vr_without *w, vr_field *f, pq_err *err)
{
    while (w->i < w->c->n) {
        vr_str k;
        int rc = vr_container_get(w->c, w->i, &f->id, &f->value, &f->len, err);
        if (rc == 0)
            rc = vr_meta_key(w->m, f->id, &k, err);
        if (rc != 0)
            return rc;
        if (w->i++ > 0 && vr_strcmp(w->prev, k) >= 0)
            return pq_err_set(err, PQ_EPARSE, "variant value: object keys not sorted/unique");
        w->prev = k;
        while (w->j < w->ndrop && vr_strcmp(w->drop[w->j], k) < 0)
            w->j++;
        if (w->j < w->ndrop && vr_strcmp(w->drop[w->j], k) == 0)
            continue;
        return 1;
    }
    return 0;
}

static int vr_check_sorted(const vr_str *s, size_t n, pq_err *err)
{
    for (size_t i = 1; i < n; i++)
        if (vr_strcmp(s[i - 1], s[i]) >= 0)
            return pq_err_set(err, PQ_EINVAL, "variant: names to drop must be sorted and unique");
    return 0;
}

int vr_object_append_without(pq_buf *out, const vr_meta *m, const uint8_t *obj,
                             size_t len, const vr_str *drop, size_t ndrop, size_t *kept,
                             pq_err *err)
{
    vr_container c;
    int rc = vr_container_open(&c, obj, len, err);
    if (rc == 0 && c.basic != VR_BASIC_OBJECT)
        rc = pq_err_set(err, PQ_EINVAL, "variant: dropping fields from an array");
    if (rc == 0)
        rc = vr_check_sorted(drop, ndrop, err);
    if (rc != 0)
        return rc;
    /* One walk when the kept fields fit here (shredded objects keep a
     * few); a second walk to write them otherwise. */
    vr_field keep[VR_WITHOUT_FIELDS];
    vr_without w = {.c = &c, .m = m, .drop = drop, .ndrop = ndrop};
    vr_field f;
    size_t n = 0, data = 0;
    uint32_t maxid = 0;
    while ((rc = vr_without_next(&w, &f, err)) == 1) {
        if (n < VR_WITHOUT_FIELDS)
            keep[n] = f;
        n++;
        data += f.len;
        maxid = f.id > maxid ? f.id : maxid;
    }
    if (rc < 0)
        return rc;
    unsigned idw = vr_width(maxid), offw = vr_width(data);
    size_t h = vr_header_size(true, n, idw, offw);
    if (pq_buf_reserve(out, h + data) != 0)
        return pq_err_set(err, PQ_ENOMEM, "variant: out of memory re-encoding an object");
    uint8_t *base = out->data + out->len;
    uint8_t *ids = vr_put_header(base, true, n, idw, offw), *offs = ids + n * idw;
    size_t pos = 0;
    w = (vr_without){.c = &c, .m = m, .drop = drop, .ndrop = ndrop};
    for (size_t k = 0; k < n; k++) {
        if (n <= VR_WITHOUT_FIELDS)
            f = keep[k];
        else if (vr_without_next(&w, &f, err) != 1)
            return pq_err_set(err, PQ_ESTATE, "variant: object changed while re-encoding");
        vr_put_le(ids + k * idw, f.id, idw);
        vr_put_le(offs + k * offw, pos, offw);
        memcpy(base + h + pos, f.value, f.len);
        pos += f.len;
    }
    vr_put_le(offs + n * offw, pos, offw);
    out->len += h + data;
    *kept = n;
    return 0;
}

int vr_value_append_object(pq_buf *out, const vr_meta *m, const vr_field *fields, size_t n,
                           pq_err *err)
{
    size_t data = 0;
    uint32_t maxid = 0;
    vr_str prev = {NULL, 0}, k;
    for (size_t i = 0; i < n; i++) {
        int rc = vr_meta_key(m, fields[i].id, &k, err);
        if (rc != 0)
            return rc;
        if (i > 0 && vr_strcmp(prev, k) >= 0)
            return pq_err_set(err, PQ_EINVAL, "variant: object fields must be sorted by key "
                              "and unique (field %zu)", i);
        prev = k;
        data += fields[i].len;
        maxid = fields[i].id > maxid ? fields[i].id : maxid;
    }
    if (data > VR_MAX_BYTES)
        return pq_err_set(err, PQ_ELIMIT, "variant: object data exceeds 4 GiB");
    unsigned idw = vr_width(maxid), offw = vr_width(data);
    size_t h = vr_header_size(true, n, idw, offw);
    if (pq_buf_reserve(out, h + data) != 0)
        return pq_err_set(err, PQ_ENOMEM, "variant: out of memory encoding an object");
    uint8_t *base = out->data + out->len;
    uint8_t *ids = vr_put_header(base, true, n, idw, offw), *offs = ids + n * idw;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        vr_put_le(ids + i * idw, fields[i].id, idw);
        vr_put_le(offs + i * offw, pos, offw);
        if (fields[i].len > 0)
            memcpy(base + h + pos, fields[i].value, fields[i].len);
        pos += fields[i].len;
    }
    vr_put_le(offs + n * offw, pos, offw);
    out->len += h + data;
    return 0;
}

int vr_value_append_array(pq_buf *out, const vr_slice *elems, size_t n, pq_err *err)
{
    size_t data = 0;
    for (size_t i = 0; i < n; i++)
        data += elems[i].len;
    if (data > VR_MAX_BYTES)
        return pq_err_set(err, PQ_ELIMIT, "variant: array data exceeds 4 GiB");
    unsigned offw = vr_width(data);
    size_t h = vr_header_size(false, n, 1, offw);
    if (pq_buf_reserve(out, h + data) != 0)
        return pq_err_set(err, PQ_ENOMEM, "variant: out of memory encoding an array");
    uint8_t *base = out->data + out->len;
    uint8_t *offs = vr_put_header(base, false, n, 1, offw);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        vr_put_le(offs + i * offw, pos, offw);
        if (elems[i].len > 0)
            memcpy(base + h + pos, elems[i].p, elems[i].len);
        pos += elems[i].len;
    }
    vr_put_le(offs + n * offw, pos, offw);
    out->len += h + data;
    return 0;
}
