/* vbuild.c - the streaming Variant record builder (VariantEncoding.md):
 * lifecycle, scalar values and containers, as a JSON parser's events
 * arrive. Keys (vr_key) and their dictionary are vdict.c, finishing a
 * record (sorted dictionary, metadata) vfinish.c, the value bytes
 * vappend.c; JSON numbers become Variant values in vnumber.c (the type
 * rule and its reasons). The one rule enforced here, in vr_decimal, is
 * the one readers need from every decimal: a scale below its implied
 * precision. A builder belongs to one thread (each shredder owns its own).
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
 * a worst-case header wastes bytes or breaks minimal widths. */
#include "variant_int.h"

#include <sys/random.h>
#include <time.h>

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
    b->dict_epoch = 1;
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
    free(b->shapes);
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
    b->dict_epoch++; /* ids now name other keys: learnt orders are void */
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

bool vr_builder_meta_kept(const vr_builder *b)
{
    return vr_keep_dict(b) && b->meta.len > 0;
}

/* vr_key's accounting of a used key (shared_dict's keep rule), without
 * the value: the builder then stands as after the record was built. */
void vr_known_object(vr_builder *b, const uint32_t *ids, size_t n, vr_variant *out)
{
    vr_builder_reset(b);
    for (size_t i = 0; i < n; i++) {
        if (i == 0)   /* the hints vr_key would leave (vdict.c) */
            b->first_key_guess[0] = ids[0];
        else
            b->keys[ids[i - 1]].next = ids[i];
        if (b->keys[ids[i]].record != b->record) {
            b->keys[ids[i]].record = b->record;
            b->used_keys++;
        }
    }
    out->metadata = b->meta.data;
    out->metadata_len = b->meta.len;
    out->value = NULL;
    out->value_len = 0;
}

/* ---- builder: value slots ------------------------------------------------ */

/* Checks that a value may start here and reserves room for it, without
 * changing the builder, so a refused value leaves the record intact. */
static __attribute__((noinline)) int vr_prepare_slow(vr_builder *b, size_t nbytes)
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

/* vr_prepare_slow's checks, inline for the common case: a member of an
 * open container (keyed, in an object) with room left in the stack and
 * the entries (~850,000 values a 20 MB convert). */
static inline int vr_prepare(vr_builder *b, size_t nbytes)
{
    const vr_frame *f = b->nframes ? &b->frames[b->nframes - 1] : NULL;
    if (f != NULL && (!f->is_object || f->has_key) && nbytes <= VR_MAX_BYTES - b->stack.len &&
        b->stack.cap - b->stack.len > nbytes && b->nents < b->ents_cap)
        return 0;
    return vr_prepare_slow(b, nbytes);
}

/* Records that a value starts at the end of the stack. Cannot fail. */
static inline void vr_commit(vr_builder *b)
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
    if (rc != 0)
        return rc;
    vr_commit(b);
    if (is_string && len < 64) {
        /* vr_value_append_string's short string, in the room vr_prepare
         * reserved: most values of a record, without its two reserves */
        uint8_t *at = b->stack.data + b->stack.len;
        at[0] = (uint8_t)(len << 2 | VR_BASIC_SHORT_STRING);
        if (len > 0)
            memcpy(at + 1, p, len);
        b->stack.len += 1 + len;
        return 0;
    }
    return is_string ? vr_value_append_string(&b->stack, p, len)
                     : vr_value_append_binary(&b->stack, p, len);
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

/* An already-encoded primitive or short string, copied as is (vfinish.c
 * replays a record through it). */
int vr_raw_scalar(vr_builder *b, const uint8_t *v, size_t len)
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

/* Moves the m children (data bytes from f->start) right by the header
 * size and writes the header in front: the one copy per nesting level. */
static void vr_place(vr_builder *b, const vr_frame *f, const vr_ent *s, size_t m,
                     size_t data, unsigned idw, unsigned offw, bool obj)
{
    size_t h = vr_header_size(obj, m, idw, offw);
    uint8_t *base = b->stack.data + f->start;
    memmove(base + h, base, data);
    uint8_t *p = vr_put_header(base, obj, m, idw, offw);
    if (obj && idw == 1) {       /* a record's objects: under 256 keys */
        for (size_t j = 0; j < m; j++)
            p[j] = (uint8_t)s[j].id;
        p += m;
    } else {
        for (size_t j = 0; obj && j < m; j++, p += idw)
            vr_put_le(p, s[j].id, idw);
    }
    if (offw == 1) {             /* and under 256 bytes of children */
        for (size_t j = 0; j < m; j++)
            p[j] = (uint8_t)(s[j].off - f->start);
        p += m;
    } else {
        for (size_t j = 0; j < m; j++, p += offw)
            vr_put_le(p, s[j].off - f->start, offw);
    }
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
    vr_sort_children(b, e, s, n);
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
