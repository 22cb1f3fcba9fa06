/* walk_report.c - pq_walk's verdicts: hard problems (stop the file),
 * soft ones (--all goes on), notes (quirks that pass unless --strict),
 * the "where" of every message, and the byte regions each structure
 * claims (check_regions in pq_walk.c finds overlaps). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "walk.h"

static void vprint(const walk *w, FILE *out, const char *tag, const char *fmt,
                   va_list ap)
{
    fprintf(out, "%s: %s", w->path, tag);
    if (w->rg >= 0)
        fprintf(out, "row group %ld, ", w->rg);
    if (w->col >= 0)
        fprintf(out, "column %ld '%s', ", w->col, w->col_path ? w->col_path : "?");
    if (w->page >= 0)
        fprintf(out, "page %ld (%s), ", w->page, w->page_kind ? w->page_kind : "?");
    if (w->off >= 0)
        fprintf(out, "offset %lld: ", w->off);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
}

static void vreport(walk *w, const char *fmt, va_list ap)
{
    vprint(w, stderr, "", fmt, ap);
    w->nerr++;
}

/* Problems after which the walk cannot continue (bad bounds, bad Thrift). */
int hard(walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(w, fmt, ap);
    va_end(ap);
    return -1;
}

/* Problems that leave the structure walkable; --all continues past them. */
int soft(walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(w, fmt, ap);
    va_end(ap);
    return w->o->all ? 0 : -1;
}

/* Deviations that the spec forbids but shipped writers produced and
 * readers accept (each call site says which). Reported, not failed, unless
 * --strict, which the tests of our own writer use. */
int note(walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (w->o->strict)
        vreport(w, fmt, ap);
    else if (!w->o->quiet)
        vprint(w, stdout, "note: ", fmt, ap);
    va_end(ap);
    w->nnotes++;
    return (w->o->strict && !w->o->all) ? -1 : 0;
}

void at(walk *w, long rg, long col, long page, long long off)
{
    w->rg = rg;
    w->col = col;
    w->page = page;
    w->off = off;
    if (col < 0)
        w->col_path = NULL;
}

int add_region(walk *w, size_t start, size_t end, const char *fmt, ...)
{
    if (w->nregions == w->cap_regions) {
        size_t ncap = w->cap_regions ? w->cap_regions * 2 : 64;
        region *r = realloc(w->regions, ncap * sizeof *r);
        if (r == NULL)
            return hard(w, "out of memory");
        w->regions = r;
        w->cap_regions = ncap;
    }
    region *r = &w->regions[w->nregions++];
    r->start = start;
    r->end = end;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->what, sizeof r->what, fmt, ap);
    va_end(ap);
    return 0;
}
