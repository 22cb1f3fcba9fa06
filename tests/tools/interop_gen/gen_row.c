/* gen_row.c - one row's values: nulls where a node is optional, nested
 * lists, maps and structs, in an arena rewound after each row. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

/* pad keeps data[] 16-byte aligned (gval holds an __int128). */
typedef struct block { struct block *next; size_t used, cap, pad; unsigned char data[]; } block;
_Static_assert(offsetof(block, data) % 16 == 0, "arena data must be 16-byte aligned");
static block *arena;

void *arena_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!arena || arena->cap - arena->used < n) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        block *b = malloc(sizeof *b + cap);
        if (!b) {
            fprintf(stderr, "interop_gen: out of memory\n");
            exit(2);
        }
        b->next = arena;
        b->used = 0;
        b->cap = cap;
        arena = b;
    }
    void *p = arena->data + arena->used;
    arena->used += n;
    return p;
}

/* Called after every row: keeps the newest block and rewinds it, so a
 * row costs no malloc. Freeing and allocating a 1 MiB block per row made
 * interop_gen spend 74 s under ASan (an mmap and munmap each, 36 s of it
 * in the kernel) against 2 s in the main build. */
void arena_reset(void)
{
    if (!arena)
        return;
    block *keep = arena;
    block *b = keep->next;
    while (b) {
        block *n = b->next;
        free(b);
        b = n;
    }
    keep->next = NULL;
    keep->used = 0;
}

void arena_free(void)
{
    arena_reset();
    free(arena);
    arena = NULL;
}

/* Is this row's value of an optional node null? Row 1 is all-null at the
 * top, rows 0 and 2..9 have no nulls so edge values are seen. */
static bool pick_null(const gtype *t, size_t row, int depth)
{
    if (t->rep != PQ_OPTIONAL)
        return false;
    if (t->kind == K_LEAF && t->gen == G_NULL)
        return true;
    if (depth == 0 && row == 1)
        return true;
    if (row < 10)
        return false;
    return pct(t->null_pct);
}

void gen_value(gtype *t, gval *v, size_t row, int depth)
{
    memset(v, 0, sizeof *v);
    if (pick_null(t, row, depth)) {
        v->null = true;
        return;
    }
    switch (t->kind) {
    case K_LEAF:
        gen_leaf(t, v, row);
        break;
    case K_STRUCT:
        v->nitems = t->nchild;
        v->items = arena_alloc(sizeof(gval) * t->nchild);
        for (size_t i = 0; i < t->nchild; i++)
            gen_value(t->child[i], &v->items[i], row, depth + 1);
        break;
    case K_LIST: {
        size_t n = (row == 2 || row % 11 == 5) ? 0 : (size_t)rnd_below(5);
        v->nitems = n;
        v->items = arena_alloc(sizeof(gval) * (n ? n : 1));
        for (size_t i = 0; i < n; i++)
            gen_value(t->child[0], &v->items[i], row, depth + 1);
        break;
    }
    case K_MAP: {
        size_t n = (row == 2 || row % 13 == 6) ? 0 : (size_t)rnd_below(4);
        v->items = arena_alloc(sizeof(gval) * 2 * (n ? n : 1));
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            gval *kv = &v->items[2 * m];
            gen_value(t->child[0], kv, row, depth + 1);
            bool dup = false; /* keys are unique within a map */
            for (size_t j = 0; j < m && !dup; j++) {
                const gval *o = &v->items[2 * j];
                dup = o->i == kv->i && o->n == kv->n && (o->n == 0 || memcmp(o->p, kv->p, o->n) == 0);
            }
            if (dup)
                continue;
            gen_value(t->child[1], &v->items[2 * m + 1], row, depth + 1);
            m++;
        }
        v->nitems = m;
        break;
    }
    }
}
