/* vfinish.c - finishing a Variant record (VariantEncoding.md, "Metadata
 * encoding"): the dictionary sorted, the value's field ids renumbered to
 * match, and the metadata written. Runs on the thread that owns the
 * builder.
 *
 * vr_finish sorts the k keys (O(k log k)) and renumbers: with <= 256 keys
 * every field id is 1 byte before and after, so ids are rewritten in place
 * by one walk over the containers. Above 256 keys an object's minimal id
 * width may change, so the record is re-encoded once from the first pass
 * (rare: such a record has > 256 distinct keys). */
#include "variant_int.h"

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
    b->dict_epoch++;                    /* ids are renumbered: orders learnt are void */
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

int vr_finish_empty_object(vr_builder *b, vr_variant *out)
{
    /* header (object, 1-byte ids and offsets), 0 fields, end offset 0:
     * what vr_end_object writes for {} */
    static const uint8_t empty[] = {VR_BASIC_OBJECT, 0, 0};
    if (b->nframes > 0 || b->have_root || b->nkeys > 0) {
        int rc = vr_begin_object(b);
        rc = rc ? rc : vr_end_object(b);
        return rc ? rc : vr_finish(b, out);
    }
    if (!b->opts.shared_dict || b->meta.len == 0) {
        int rc = vr_write_meta(b);
        if (rc != 0)
            return rc;
        b->meta_keys = 0;
    }
    out->metadata = b->meta.data;
    out->metadata_len = b->meta.len;
    out->value = empty;
    out->value_len = sizeof empty;
    return 0;
}
