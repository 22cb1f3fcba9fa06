/* openpage.c - the open page of a dictionary column as rows arrive:
 * levels kept, values inserted into the dictionary at once (Arrow's
 * dictionary encoder does the same), so an open page holds 4 bytes per
 * value instead of the value. Runs on the thread feeding the colwriter
 * (chunk.c). */
#include "openpage.h"
#include "chooser.h"
#include "colfinish.h"

static int append_levels(pq_buf *to, const pq_buf *from, size_t l0, size_t n)
{
    return pq_buf_append(to, from->data + l0 * sizeof(uint16_t), n * sizeof(uint16_t));
}

static void add_stats(pq_colwriter *cw, const pq_column *c, size_t nl, size_t v0, size_t nv)
{
    if (c->node->type == PQ_BYTE_ARRAY)
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
