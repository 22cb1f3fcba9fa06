/* vdict.c - the Variant builder's key dictionary (VariantEncoding.md,
 * "Metadata encoding"): each key event (vr_key) interned to a first-seen
 * id as it arrives, and an object's children sorted by key. Runs on the thread
 * that owns the builder.
 *
 * Dictionary cost. Keys are interned (seeded XXH3, open addressing) and
 * get first-seen ids while building, so objects can be closed immediately.
 * vr_finish (vfinish.c) sorts the k keys (O(k log k)) and renumbers.
 *
 * Object cost. Closing an object sorts its children by key name. Records
 * of one kind repeat the same objects, so while the dictionary stays the
 * same (a shared one lasts a batch) the order found for a sequence of key
 * ids is remembered (VR_SHAPES of them, hashed by the ids) and reused: n
 * id compares instead of a sort's name compares. Likewise each key is
 * first compared with the key that followed the previous one last time,
 * an object's first key with the one the object under the same key began
 * with last time, before it is hashed (vr_guess_or_intern). */
#include "variant_int.h"
#include "memeq.h"

#include <xxhash.h>

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

/* Whether id is a key of the dictionary named name. */
static inline bool vr_key_is(const vr_builder *b, uint32_t id, const char *name, size_t len)
{
    return id < b->nkeys && b->keys[id].len == len && pq_memeq(vr_key_text(b, id), name, len);
}

/* The slot of key name (true, *id its id), or the free slot it would
 * take (false). The table must have slots. */
static bool vr_probe(const vr_builder *b, const char *name, size_t len, size_t *slot,
                     uint32_t *id)
{
    size_t mask = b->nslots - 1, i = vr_slot_of(b, name, len);
    for (;; i = (i + 1) & mask) {
        const vr_slot *s = &b->slots[i];
        *slot = i;
        if (s->gen != b->gen)
            return false;
        if (vr_key_is(b, s->id, name, len)) {
            *id = s->id;
            return true;
        }
    }
}

/* The id of key name, adding it on first sight. */
static int vr_intern(vr_builder *b, const char *name, size_t len, uint32_t *id)
{
    if ((b->nkeys + 1) * 2 > b->nslots && vr_rehash(b) != 0)
        return pq_err_set(&b->err, PQ_ENOMEM, "variant: out of memory for the key table");
    size_t i;
    if (vr_probe(b, name, len, &i, id))
        return 0;
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
    b->keys[b->nkeys].next = UINT32_MAX;
    b->keys[b->nkeys].child = UINT32_MAX;
    b->slots[i].id = (uint32_t)b->nkeys;
    b->slots[i].gen = b->gen;
    *id = (uint32_t)b->nkeys++;
    return 0;
}

/* Guessed as vr_guess_or_intern guesses (a root object's keys). */
bool vr_dict_find(const vr_builder *b, uint32_t prev, const char *name, size_t len,
                  uint32_t *id)
{
    uint32_t g = prev == UINT32_MAX ? b->first_key_guess[0]
               : prev < b->nkeys    ? b->keys[prev].next
                                    : UINT32_MAX;
    if (vr_key_is(b, g, name, len)) {
        *id = g;
        return true;
    }
    size_t slot;
    return b->nslots > 0 && vr_probe(b, name, len, &slot, id);
}

/* Where the guess for the next key of the object at depth is kept: the
 * key before it in the object; for its first key, the key the object is
 * the value of (request's first key is not response's, which sit at the
 * same depth), else the depth's. NULL: no guess. */
static inline __attribute__((always_inline))
uint32_t *vr_guess_slot(vr_builder *b, size_t depth, bool first)
{
    if (!first)
        return &b->keys[b->frames[depth].key].next;
    if (depth > 0 && b->frames[depth - 1].is_object)
        return &b->keys[b->frames[depth - 1].key].child;
    return depth < VR_GUESS_DEPTH ? &b->first_key_guess[depth] : NULL;
}

/* vr_intern, but first the key that followed the previous one last time
 * (or began an object under the same key, vr_guess_slot): a compare of
 * the text instead of a hash and a probe, since records of one kind name
 * their keys in the same order. A guess is only a hint, taken when its
 * text is the name (keys are unique in the dictionary), so no reset can
 * fool it. */
static int vr_guess_or_intern(vr_builder *b, const char *name, size_t len, uint32_t *id)
{
    size_t depth = b->nframes - 1;
    bool first = b->nents == b->frames[depth].first;
    uint32_t *guess = vr_guess_slot(b, depth, first);
    if (guess != NULL && vr_key_is(b, *guess, name, len)) {
        *id = *guess;
        return 0;
    }
    int rc = vr_intern(b, name, len, id);
    if (rc != 0)
        return rc;
    guess = vr_guess_slot(b, depth, first); /* keys may have moved while interning */
    if (guess != NULL)
        *guess = *id;
    return 0;
}

/* vr_key's misuse and UTF-8 checks and their messages, out of its way. */
static __attribute__((noinline)) int vr_key_refused(vr_builder *b, const char *name, size_t len)
{
    const vr_frame *f = b->nframes ? &b->frames[b->nframes - 1] : NULL;
    if (f == NULL || !f->is_object)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: vr_key outside an object");
    if (f->has_key)
        return pq_err_set(&b->err, PQ_ESTATE, "variant: key \"%.*s\" follows a key "
                          "that got no value", (int)(len > 64 ? 64 : len), name);
    if (!b->opts.trust_utf8 && !vr_utf8_ok((const uint8_t *)name, len))
        return pq_err_set(&b->err, PQ_EINVAL, "variant: key is not valid UTF-8");
    return PQ_OK;
}

/* A key event: the open object's next value gets key name's id. */
int vr_key(vr_builder *b, const char *name, size_t len)
{
    vr_frame *f = b->nframes ? &b->frames[b->nframes - 1] : NULL;
    if (f == NULL || !f->is_object || f->has_key || !b->opts.trust_utf8) {
        int rc = vr_key_refused(b, name, len);
        if (rc != 0)
            return rc;
    }
    uint32_t id = 0;
    int rc = vr_guess_or_intern(b, name, len, &id);
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
void vr_sort(const vr_builder *b, vr_ent *a, size_t n, vr_ent *scratch)
{
    size_t i = 1;
    while (i < n && !vr_ent_less(b, &a[i], &a[i - 1]))
        i++;
    if (i < n)
        vr_msort(b, a, n, scratch);
}

/* ---- remembered key orders ---------------------------------------------- */

#define VR_SHAPES 64           /* remembered orders, a hash table */
#define VR_SHAPE_FIELDS 256    /* larger objects are always sorted; Windows
                                  events carry 165 keys (32 sorted them every
                                  time: 6% of a real-log-mix convert), and a
                                  table of 256-field shapes is 83 KB, made
                                  on a builder's first sorted object */

struct vr_shape {
    uint64_t epoch;            /* b->dict_epoch when learnt; 0 = empty */
    uint32_t n;
    uint32_t ids[VR_SHAPE_FIELDS];      /* key ids in insertion order */
    uint8_t order[VR_SHAPE_FIELDS];     /* sorted position -> insertion index */
};

static size_t vr_shape_slot(const vr_ent *e, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ e[i].id) * 16777619u;
    return h & (VR_SHAPES - 1);
}

static bool vr_shape_matches(const struct vr_shape *sh, uint64_t epoch, const vr_ent *e,
                             size_t n)
{
    if (sh->epoch != epoch || sh->n != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (sh->ids[i] != e[i].id)
            return false;
    return true;
}

void vr_sort_children(vr_builder *b, const vr_ent *e, vr_ent *s, size_t n)
{
    struct vr_shape *sh = NULL;
    if (n >= 2 && n <= VR_SHAPE_FIELDS) {
        if (b->shapes == NULL) /* no memory: sort every time, still right */
            b->shapes = calloc(VR_SHAPES, sizeof *b->shapes);
        sh = b->shapes ? &b->shapes[vr_shape_slot(e, n)] : NULL;
    }
    if (sh != NULL && vr_shape_matches(sh, b->dict_epoch, e, n)) {
        for (size_t i = 0; i < n; i++)
            s[i] = e[sh->order[i]];
        return;
    }
    if (n > 0)
        memcpy(s, e, n * sizeof *e);
    vr_sort(b, s, n, s + n);
    if (sh == NULL)
        return;
    sh->epoch = b->dict_epoch;
    sh->n = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        sh->ids[i] = e[i].id;
        sh->order[i] = (uint8_t)s[i].idx;
    }
}
