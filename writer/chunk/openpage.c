/* openpage.c - the open page of a dictionary column as rows arrive:
 * levels kept, values inserted into the dictionary at once (Arrow's
 * dictionary encoder does the same), so an open page holds 4 bytes per
 * value instead of the value. Runs on the thread feeding the colwriter
 * (chunk.c). */
#include "openpage.h"
#include "chooser.h"
#include "colfinish.h"

#include <string.h>

static int append_levels(pq_buf *to, const pq_buf *from, size_t l0, size_t n)
{
    return pq_buf_append(to, from->data + l0 * sizeof(uint16_t), n * sizeof(uint16_t));
}

void pq_openpage_new_page(pq_colwriter *cw)
{
    if (++cw->page_stamp == 0) { /* wrapped: no stamp may look current */
        if (cw->page_seen.len > 0)
            memset(cw->page_seen.data, 0, cw->page_seen.len);
        cw->page_stamp = 1;
    }
}

/* cw->picks: the positions among the last nv values of the open page whose
 * dictionary entry this page has not offered to its statistics yet (the
 * first occurrence of each distinct value). A string column repeats its
 * values (methods, hosts, paths), and comparing each against the page's
 * min and max cost 4% of a typed convert; the first occurrences decide
 * both as all values would (scan order kept, so ties keep the first).
 * Returns 0, or PQ_ENOMEM (the caller then offers every value). */
static int pick_first_seen(pq_colwriter *cw, size_t nv)
{
    const size_t need = pq_dict_count(&cw->dict) * sizeof(uint32_t);
    if (cw->seen_generation != cw->dict.generation) { /* indices renumbered */
        if (cw->page_seen.len > 0)
            memset(cw->page_seen.data, 0, cw->page_seen.len);
        cw->seen_generation = cw->dict.generation;
    }
    if (cw->page_seen.len < need) {
        if (pq_buf_reserve(&cw->page_seen, need - cw->page_seen.len) != 0)
            return PQ_ENOMEM;
        memset(cw->page_seen.data + cw->page_seen.len, 0, need - cw->page_seen.len);
        cw->page_seen.len = need;
    }
    pq_buf_reset(&cw->picks);
    if (pq_buf_reserve(&cw->picks, nv * sizeof(uint32_t)) != 0)
        return PQ_ENOMEM;
    const uint32_t *idx = (const uint32_t *)(const void *)cw->open_idx.data +
                          cw->open_idx.len / sizeof(uint32_t) - nv;
    uint32_t *seen = (uint32_t *)(void *)cw->page_seen.data;
    uint32_t *pick = (uint32_t *)(void *)cw->picks.data;
    size_t k = 0;
    for (size_t i = 0; i < nv; i++) {
        if (seen[idx[i]] != cw->page_stamp) {
            seen[idx[i]] = cw->page_stamp;
            pick[k++] = (uint32_t)i;
        }
    }
    cw->picks.len = k * sizeof(uint32_t);
    return PQ_OK;
}

static void add_stats(pq_colwriter *cw, const pq_column *c, size_t nl, size_t v0, size_t nv)
{
    const bool ordered = cw->order == PQ_ORDER_BYTES || cw->order == PQ_ORDER_DECIMAL_BE;
    if (c->node->type == PQ_BYTE_ARRAY && ordered && pick_first_seen(cw, nv) == 0)
        pq_stats_add_bytes_picked(&cw->page_stats, c->heap.data, pq_column_offsets(c) + v0, nv,
                                  (const uint32_t *)(const void *)cw->picks.data,
                                  cw->picks.len / sizeof(uint32_t));
    else if (c->node->type == PQ_BYTE_ARRAY)
        pq_stats_add_bytes(&cw->page_stats, c->heap.data, pq_column_offsets(c) + v0, nv);
    else if (nv > 0)
        pq_stats_add_fixed(&cw->page_stats, c->values.data + v0 * c->width, nv);
    pq_stats_add_nulls(&cw->page_stats, nl - nv);
}

int pq_openpage_append_dict(pq_colwriter *cw, const pq_column *c, size_t l0, size_t l1,
                            size_t v0, size_t v1, size_t rows, pq_err *err)
{
    pq_column *o = &cw->open;
    size_t nl = l1 - l0, nv = v1 - v0;
    if ((o->max_def > 0 && append_levels(&o->def, &c->def, l0, nl) != 0) ||
        (o->max_rep > 0 && append_levels(&o->rep, &c->rep, l0, nl) != 0))
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", c->node->path);
    int rc = pq_choose_dict_append(cw, c, v0, nv, &cw->open_idx, err);
    rc = rc ? rc : pq_colfinish_page_values(cw, c, v0, nv, true, err);
    if (rc != 0)
        return rc;
    o->n_levels += nl;
    o->n_values += nv;
    o->n_rows += rows;
    if (cw->o.statistics)
        add_stats(cw, c, nl, v0, nv);
    if (c->node->type == PQ_BYTE_ARRAY) {
        const uint32_t *off = pq_column_offsets(c);
        cw->open_ba_bytes += (int64_t)(off[v1] - off[v0]);
    }
    return PQ_OK;
}
