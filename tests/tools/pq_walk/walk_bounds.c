/* walk_bounds.c - min/max in page and chunk Statistics and in the
 * ColumnIndex against the true bounds of the decoded values: exact for
 * fixed-width values, a consistent truncation for byte arrays, NaN counts,
 * null pages and boundary_order. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "walk.h"

/* Whether this column's min/max can be checked at all: 1 yes, 0 no (the
 * reason was reported), -1 stop. Decided once per chunk. */
static int minmax_allowed(walk *w, chunk_state *cs, const char *what)
{
    const col_order *o = &cs->ord;
    int rc = 1;
    if (cs->allowed != -2)
        return cs->allowed;
    if (o->kind == ORD_NONE)
        rc = note(w, "%s has min/max, but the sort order of %s is undefined "
                  "(LogicalTypes.md): no min/max may be written for it", what,
                  o->name) != 0 ? -1 : 0;
    else if (o->declared < 0 || o->declared > 3)
        rc = note(w, "%s has min/max, but the column's ColumnOrder is %s: readers "
                  "ignore them", what, o->declared < 0 ? "missing" : "unknown")
             != 0 ? -1 : 0;
    else if (o->declared == 2 && o->kind != ORD_FLOAT)
        rc = soft(w, "ColumnOrder IEEE_754_TOTAL_ORDER on a %s column (floating "
                  "point only)", o->name) != 0 ? -1 : 0;
    else if (o->declared == 3 && o->kind != ORD_INT96)
        rc = soft(w, "ColumnOrder INT96_TIMESTAMP_ORDER on a %s column (INT96 "
                  "only)", o->name) != 0 ? -1 : 0;
    else if (o->kind == ORD_INT96 && o->declared != 3)
        rc = note(w, "%s has INT96 min/max under %s: readers must ignore them; "
                  "writers that emit them must declare INT96_TIMESTAMP_ORDER", what,
                  o->declared == 0 ? "no ColumnOrder" : "TYPE_ORDER") != 0 ? -1 : 0;
    else if (o->declared == 0 && !w->said_no_orders) {
        w->said_no_orders = true;
        if (note(w, "%s has min/max, but FileMetaData has no column_orders, "
                 "without which their order is undefined (checked here by the "
                 "type-defined order)", what) != 0)
            rc = -1;
    }
    cs->allowed = rc;
    return rc;
}

typedef struct bound_chk {
    const char *what;             /* "ColumnIndex.min_values[3]" */
    const char *scope;            /* "page", "column chunk" */
    bool is_max;
    int exact;                    /* is_*_value_exact: 1, 0, -1 absent */
} bound_chk;

/* Remembers truncated byte-array bounds for check_truncation. */
static void record_cut(walk *w, const bound_chk *b, size_t len, size_t value_len)
{
    w->ncut++;
    if (len > w->cut_longest)
        w->cut_longest = len;
    if (value_len < w->cut_shortest) {
        w->cut_shortest = value_len;
        snprintf(w->cut_where, sizeof w->cut_where, "%s (row group %ld, column '%s')",
                 b->what, w->rg, w->col_path ? w->col_path : "?");
    }
}

/* A BYTE_ARRAY bound that differs from the value: PageIndex.md allows a
 * shorter one ("B" for "Blart Versenwald III"); a min must be a prefix of
 * the value, a max shorter than it; text stays valid UTF-8. */
static int check_cut(walk *w, const chunk_state *cs, const bound_chk *b, const uint8_t *p,
                     size_t len, vref want, const char *got_s, const char *want_s)
{
    const char *ext = b->is_max ? "largest" : "smallest";
    bool ok = len < want.len && (b->is_max || len == 0 || memcmp(p, want.p, len) == 0);
    if (!ok && note(w, "%s = %s, the %s's %s value is %s: a truncated %s must be %s",
                    b->what, got_s, b->scope, ext, want_s, b->is_max ? "max" : "min",
                    b->is_max ? "shorter than the value" : "a prefix of the value") != 0)
        return -1;
    if (cs->ord.text && !utf8_valid(p, len) && utf8_valid(want.p, want.len) &&
        note(w, "%s = %s is not valid UTF-8, but must still be a %s value (the %s's "
             "%s value %s is)", b->what, got_s, cs->ord.name, b->scope, ext, want_s) != 0)
        return -1;
    record_cut(w, b, len, want.len);
    return 0;
}

/* Bound equal to the value: the exact flag must not deny it, and TYPE_ORDER
 * zeros are written as -0.0 (min) and +0.0 (max). */
static int check_equal(walk *w, const chunk_state *cs, const bound_chk *b, const uint8_t *p,
                       const char *got_s)
{
    const col_order *o = &cs->ord;
    if (b->exact == 0)
        return note(w, "%s = %s is the %s's actual %s value, but is_%s_value_exact is "
                    "false", b->what, got_s, b->scope, b->is_max ? "largest" : "smallest",
                    b->is_max ? "max" : "min");
    if (o->kind == ORD_FLOAT && !o->total && float_val(o, p) == 0.0 &&
        float_neg(o, p) == b->is_max)
        return note(w, "%s is %s: a zero %s should be written as %s (parquet.thrift "
                    "ColumnOrder)", b->what, got_s, b->is_max ? "max" : "min",
                    b->is_max ? "+0.0" : "-0.0");
    return 0;
}

/* One stored bound against the true extreme `want` of the values. */
static int check_bound(walk *w, const chunk_state *cs, const bound_chk *b, const uint8_t *p,
                       size_t len, vref want)
{
    const col_order *o = &cs->ord;
    const char *ext = b->is_max ? "largest" : "smallest";
    char got_s[160], want_s[160];
    size_t fixed = fixed_len(o);
    if (p == NULL)
        p = no_bytes;
    fmt_val(o, p, len, got_s, sizeof got_s);
    fmt_val(o, want.p, want.len, want_s, sizeof want_s);
    w->nbounds++;
    if (fixed != 0 && len != fixed) {
        if (o->kind != ORD_BYTES && o->kind != ORD_DECIMAL)
            return soft(w, "%s is %zu bytes, a %s value is %zu", b->what, len,
                        o->name, fixed);
        return note(w, "%s is %zu bytes (%s), but a FIXED_LEN_BYTE_ARRAY(%zu) value "
                    "must be whole", b->what, len, got_s, fixed);
    }
    if (o->kind == ORD_FLOAT && !o->total && is_nan(o, p))
        return soft(w, "%s is %s: under TYPE_ORDER bounds must not be NaN", b->what, got_s);
    int c = ord_cmp(o, p, len, want.p, want.len);
    if (b->is_max ? c < 0 : c > 0)
        return soft(w, "%s = %s is %s the %s's %s value %s", b->what, got_s,
                    b->is_max ? "below" : "above", b->scope, ext, want_s);
    if (c == 0)
        return check_equal(w, cs, b, p, got_s);
    if (b->exact == 1)
        return soft(w, "%s = %s, but is_%s_value_exact is true and the %s's %s value "
                    "is %s", b->what, got_s, b->is_max ? "max" : "min", b->scope, ext,
                    want_s);
    if (o->kind == ORD_BYTES && o->width == 0)
        return check_cut(w, cs, b, p, len, want, got_s, want_s);
    return note(w, "%s = %s, the %s's %s value is %s: %s bounds are exact "
                "(only byte arrays may be truncated)", b->what, got_s, b->scope, ext,
                want_s, o->name);
}

/* Statistics field `fid` (binary) with its exact flag `xfid` (0: none). */
static int check_stat_field(walk *w, const chunk_state *cs, const tr_node *st, int16_t fid,
                            int16_t xfid, const char *what, const char *field,
                            const char *scope, vref want)
{
    if (!tr_has(st, fid))
        return 0;
    char name[128];
    size_t len;
    const uint8_t *p = tr_field_bin(st, fid, &len);
    snprintf(name, sizeof name, "%s.%s", what, field);
    bound_chk b = { name, scope, fid == 1 || fid == 5,
                    xfid && tr_has(st, xfid) ? tr_field_bool(st, xfid, false) : -1 };
    return check_bound(w, cs, &b, p, len, want);
}

/* The deprecated min/max are "determined by signed comparison only" and
 * "may be set when the column order is signed"; when min == max (one
 * distinct value, parquet-mr sets them then) every order agrees. */
static bool legacy_ok(const col_order *o, const tr_node *st)
{
    size_t la, lb;
    const uint8_t *a = tr_field_bin(st, 2, &la), *b = tr_field_bin(st, 1, &lb);
    if (a != NULL && b != NULL && la == lb && (la == 0 || memcmp(a, b, la) == 0))
        return true;
    return o->kind == ORD_SIGNED || o->kind == ORD_BOOLEAN ||
           (o->kind == ORD_FLOAT && o->width != 2);
}

static int check_nan_count(walk *w, chunk_state *cs, const tr_node *st, const vacc *v,
                           const char *what, const char *scope)
{
    bool isfloat = cs->ord.kind == ORD_FLOAT;
    if (tr_has(st, 9) && !isfloat)
        return note(w, "%s.nan_count is set for a %s column (FLOAT, DOUBLE and FLOAT16 "
                    "only)", what, cs->ord.name);
    if (tr_has(st, 9) && tr_field_int(st, 9, -1) != v->nans)
        return soft(w, "%s.nan_count is %lld, the %s holds %lld NaNs", what,
                    (long long)tr_field_int(st, 9, -1), scope, (long long)v->nans);
    if (!tr_has(st, 9) && isfloat && !cs->said_nan_count) {
        cs->said_nan_count = true;
        return note(w, "%s has no nan_count, which must be set for floating-point "
                    "columns even if zero (parquet.thrift ColumnOrder)", what);
    }
    return 0;
}

/* Statistics (page header or ColumnMetaData) against the values. */
int check_stats_values(walk *w, chunk_state *cs, const tr_node *st, const vacc *v,
                       const char *what, const char *scope)
{
    const col_order *o = &cs->ord;
    if (st == NULL)
        return 0;
    if (check_nan_count(w, cs, st, v, what, scope) != 0)
        return -1;
    bool has_new = tr_has(st, 5) || tr_has(st, 6), has_old = tr_has(st, 1) || tr_has(st, 2);
    if (!has_new && !has_old)
        return 0;
    int ok = minmax_allowed(w, cs, what);
    if (ok <= 0)
        return ok;
    vref wmin = want_bound(o, v, false), wmax = want_bound(o, v, true);
    if (wmin.p == NULL && v->n == 0)
        return soft(w, "%s has min/max, but the %s has no non-null values", what, scope);
    if (wmin.p == NULL)
        return soft(w, "%s has min/max, but all %lld non-null values of the %s are NaN "
                    "(under TYPE_ORDER none may be written then)", what,
                    (long long)v->n, scope);
    if (check_stat_field(w, cs, st, 6, 8, what, "min_value", scope, wmin) != 0 ||
        check_stat_field(w, cs, st, 5, 7, what, "max_value", scope, wmax) != 0)
        return -1;
    if (!has_old)
        return 0;
    if (!legacy_ok(o, st))
        return note(w, "%s sets the deprecated min/max (signed order only) for a %s "
                    "column", what, o->name);
    if (check_stat_field(w, cs, st, 2, 0, what, "min", scope, wmin) != 0)
        return -1;
    return check_stat_field(w, cs, st, 1, 0, what, "max", scope, wmax);
}

static int check_ci_nans(walk *w, const chunk_state *cs, const tr_node *ci)
{
    const tr_node *nans = tr_field_list(ci, 8);
    if (nans == NULL)
        return 0;
    if (cs->ord.kind != ORD_FLOAT)
        return note(w, "ColumnIndex.nan_counts is set for a %s column (FLOAT, DOUBLE "
                    "and FLOAT16 only)", cs->ord.name);
    for (size_t k = 0; k < cs->npages; k++) {
        const page_info *pi = &cs->pages[k];
        int64_t got = tr_int(tr_list_at(nans, k));
        if (!pi->vals_ok || got == pi->v.nans)
            continue;
        at(w, w->rg, w->col, (long)pi->ordinal, (long long)pi->offset);
        w->page_kind = pqf_page_type_name(pi->type);
        return soft(w, "ColumnIndex.nan_counts[%zu] is %lld, the page holds %lld NaNs",
                    k, (long long)got, (long long)pi->v.nans);
    }
    return 0;
}

/* Pages whose bounds say something: not null pages, count not unknown. */
static bool ci_page_bounded(const tr_node *ci, size_t k)
{
    const tr_node *nc = tr_field_list(ci, 5);
    return !tr_bool(tr_list_at(tr_field_list(ci, 1), k)) &&
           (nc == NULL || tr_int(tr_list_at(nc, k)) >= 0);
}

static int ci_page_bounds(walk *w, const chunk_state *cs, const tr_node *ci, size_t k)
{
    const page_info *pi = &cs->pages[k];
    const col_order *o = &cs->ord;
    at(w, w->rg, w->col, (long)pi->ordinal, (long long)pi->offset);
    w->page_kind = pqf_page_type_name(pi->type);
    vref wmin = want_bound(o, &pi->v, false), wmax = want_bound(o, &pi->v, true);
    if (wmin.p == NULL && pi->v.nans > 0)
        return soft(w, "all %lld non-null values of data page %zu are NaN: under "
                    "TYPE_ORDER a ColumnIndex must not be written for this chunk",
                    (long long)pi->v.n, k);
    if (wmin.p == NULL)
        return 0;   /* no values: null_pages was checked */
    char name[64];
    size_t len;
    const uint8_t *p = tr_bin(tr_list_at(tr_field_list(ci, 2), k), &len);
    snprintf(name, sizeof name, "ColumnIndex.min_values[%zu]", k);
    bound_chk b = { name, "page", false, -1 };
    if (check_bound(w, cs, &b, p, len, wmin) != 0)
        return -1;
    p = tr_bin(tr_list_at(tr_field_list(ci, 3), k), &len);
    snprintf(name, sizeof name, "ColumnIndex.max_values[%zu]", k);
    b.is_max = true;
    return check_bound(w, cs, &b, p, len, wmax);
}

/* ASCENDING / DESCENDING: min_values and max_values of the non-null pages
 * never decrease / increase (PageIndex.md, parquet.thrift BoundaryOrder). */
static int check_boundary_order(walk *w, const chunk_state *cs, const tr_node *ci)
{
    const col_order *o = &cs->ord;
    int64_t bo = tr_field_int(ci, 4, -1);
    if (bo != 1 && bo != 2)
        return 0;
    int want = bo == 1 ? 1 : -1;   /* cmp(prev, next) * want > 0 breaks it */
    size_t fixed = fixed_len(o), prev = SIZE_MAX;
    for (size_t k = 0; k < cs->npages; k++) {
        if (!ci_page_bounded(ci, k))
            continue;
        for (int16_t fid = 2; fid <= 3 && prev != SIZE_MAX; fid++) {
            size_t la, lb;
            const uint8_t *a = tr_bin(tr_list_at(tr_field_list(ci, fid), prev), &la);
            const uint8_t *b = tr_bin(tr_list_at(tr_field_list(ci, fid), k), &lb);
            if (fixed != 0 && (la != fixed || lb != fixed))
                continue;   /* reported by ci_page_bounds */
            if (ord_cmp(o, a ? a : no_bytes, la, b ? b : no_bytes, lb) * want <= 0)
                continue;
            char as[160], bs[160];
            const char *list = fid == 2 ? "min_values" : "max_values";
            at(w, w->rg, w->col, (long)cs->pages[k].ordinal, (long long)cs->pages[k].offset);
            w->page_kind = pqf_page_type_name(cs->pages[k].type);
            return soft(w, "ColumnIndex.boundary_order is %s, but %s[%zu] = %s %s "
                        "%s[%zu] = %s", bo == 1 ? "ASCENDING" : "DESCENDING", list, prev,
                        fmt_val(o, a ? a : no_bytes, la, as, sizeof as),
                        bo == 1 ? ">" : "<", list, k,
                        fmt_val(o, b ? b : no_bytes, lb, bs, sizeof bs));
        }
        prev = k;
    }
    return 0;
}

/* --pages: each ColumnIndex entry with the file offset of its bounds
 * (tests patch them to prove the checks fail). */
static void dump_ci(const walk *w, const chunk_state *cs, const tr_node *ci)
{
    static const char *const orders[] = { "UNORDERED", "ASCENDING", "DESCENDING" };
    const tr_node *bo = tr_field(ci, 4);
    int64_t b = tr_int(bo);
    char s[160];
    /* A compact-protocol i32 of 0..2 is one zigzag byte ending the field. */
    printf("      ColumnIndex of column %ld '%s': boundary_order %s, byte at %lld\n",
           w->col, w->col_path ? w->col_path : "?", b >= 0 && b <= 2 ? orders[b] : "?",
           bo ? (long long)cs->ch.column_index_offset + (long long)bo->end - 1 : -1LL);
    for (size_t k = 0; k < tr_list_len(tr_field_list(ci, 2)) && k < cs->npages; k++) {
        printf("      ColumnIndex[%zu] of column %ld '%s', page at %zu: null_page %d", k,
               w->col, w->col_path ? w->col_path : "?", cs->pages[k].offset,
               tr_bool(tr_list_at(tr_field_list(ci, 1), k)));
        for (int16_t fid = 2; fid <= 3; fid++) {
            size_t len;
            const uint8_t *p = tr_bin(tr_list_at(tr_field_list(ci, fid), k), &len);
            if (p == NULL)
                p = no_bytes;
            printf(", %s at %zu +%zu = %s", fid == 2 ? "min" : "max",
                   len ? (size_t)(p - w->f.data) : 0, len,
                   fmt_val(&cs->ord, p, len, s, sizeof s));
        }
        printf("\n");
    }
}

/* ColumnIndex min_values/max_values against the values of each page. */
int check_ci_bounds(walk *w, chunk_state *cs, const tr_node *ci)
{
    const col_order *o = &cs->ord;
    at(w, w->rg, w->col, -1, -1);
    if (w->o->pages)
        dump_ci(w, cs, ci);
    size_t first = 0;   /* the first page with bounds, if any */
    while (first < cs->npages && !ci_page_bounded(ci, first))
        first++;
    if (first < cs->npages && o->kind == ORD_NONE) {
        at(w, w->rg, w->col, (long)cs->pages[first].ordinal,
           (long long)cs->pages[first].offset);
        w->page_kind = pqf_page_type_name(cs->pages[first].type);
    }
    if (first < cs->npages && o->kind == ORD_NONE)
        return note(w, "ColumnIndex.min_values[%zu]/max_values[%zu] hold bounds, but "
                    "the sort order of %s is undefined: no min/max may be written for "
                    "it", first, first, o->name);
    if (o->kind == ORD_INT96 && o->declared != 3)
        return note(w, "ColumnIndex on an INT96 column without INT96_TIMESTAMP_ORDER, "
                    "which parquet.thrift says must not be written");
    if (o->kind == ORD_NONE)
        return 0;   /* only null pages: nothing to compare */
    int ok = minmax_allowed(w, cs, "ColumnIndex");
    if (ok <= 0)
        return ok;
    if (check_ci_nans(w, cs, ci) != 0)
        return -1;
    for (size_t k = 0; k < cs->npages; k++)
        if (ci_page_bounded(ci, k) && cs->pages[k].vals_ok &&
            ci_page_bounds(w, cs, ci, k) != 0)
            return -1;
    at(w, w->rg, w->col, -1, -1);
    return check_boundary_order(w, cs, ci);
}

/* A value no longer than the truncation length is stored whole. The
 * length is not in the file, but a writer that keeps L bytes of some
 * truncated bound truncates at >= L, so a value of <= L bytes that was cut
 * elsewhere in the file shows inconsistent truncation. */
int check_truncation(walk *w)
{
    if (w->cut_shortest > w->cut_longest)
        return 0;
    at(w, -1, -1, -1, -1);
    return note(w, "byte-array bounds are truncated inconsistently: %s cuts a "
                "%zu-byte value, while another truncated bound keeps %zu bytes",
                w->cut_where, w->cut_shortest, w->cut_longest);
}
