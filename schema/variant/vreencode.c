/* vreencode.c - building objects and arrays from parts of existing
 * Variant values without decoding them (VariantShredding.md, "unshredded
 * fields stay in value"): an object without the fields a shredded column
 * took, and objects and arrays from already-encoded fields. No state, any
 * thread. */
#include "variant_int.h"

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
