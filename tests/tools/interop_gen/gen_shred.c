/* gen_shred.c - a row's values shredded into (rep, def) per leaf with
 * the Dremel rules and put into the writer's columns. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

int put_failed;

static void check_put(int rc, const gtype *t, const char *what)
{
    if (rc != 0 && !put_failed) {
        fprintf(stderr, "interop_gen: %s on leaf %s (%s) returned %s\n", what, t->name, t->jtype, pq_err_name(rc));
        put_failed = rc;
    }
}

static void put_nulls(const gtype *t, uint16_t rep, uint16_t def)
{
    if (t->kind == K_LEAF) {
        check_put(pq_column_put_null(t->col, rep, def), t, "put_null");
        return;
    }
    for (size_t i = 0; i < t->nchild; i++)
        put_nulls(t->child[i], rep, def);
}

static void put_leaf(const gtype *t, const gval *v, uint16_t rep)
{
    int rc = 0;
    switch (t->phys) {
    case PQ_BOOLEAN: rc = pq_column_put_bool(t->col, rep, v->i != 0); break;
    case PQ_INT32: rc = pq_column_put_i32(t->col, rep, (int32_t)(uint32_t)(uint64_t)v->i); break;
    case PQ_INT64: rc = pq_column_put_i64(t->col, rep, v->i); break;
    case PQ_FLOAT: rc = pq_column_put_float(t->col, rep, (float)v->d); break;
    case PQ_DOUBLE: rc = pq_column_put_double(t->col, rep, v->d); break;
    case PQ_INT96: case PQ_BYTE_ARRAY: case PQ_FIXED_LEN_BYTE_ARRAY:
        rc = pq_column_put_bytes(t->col, rep, v->p, v->n);
        break;
    }
    check_put(rc, t, "put value");
}

void shred(const gtype *t, const gval *v, uint16_t rep, uint16_t def)
{
    if (t->rep == PQ_OPTIONAL) {
        if (v->null) {
            put_nulls(t, rep, def);
            return;
        }
        def++;
    }
    switch (t->kind) {
    case K_LEAF:
        if (def != t->def_max) {
            fprintf(stderr, "interop_gen: internal: leaf %s def %u != max %u\n", t->name, def, t->def_max);
            exit(2);
        }
        put_leaf(t, v, rep);
        break;
    case K_STRUCT:
        for (size_t i = 0; i < t->nchild; i++)
            shred(t->child[i], &v->items[i], rep, def);
        break;
    case K_LIST:
        if (v->nitems == 0) {
            put_nulls(t->child[0], rep, def);
            break;
        }
        for (size_t i = 0; i < v->nitems; i++)
            shred(t->child[0], &v->items[i], i ? t->entry_rep : rep, (uint16_t)(def + 1));
        break;
    case K_MAP:
        if (v->nitems == 0) {
            put_nulls(t->child[0], rep, def);
            put_nulls(t->child[1], rep, def);
            break;
        }
        for (size_t i = 0; i < v->nitems; i++) {
            uint16_t r = i ? t->entry_rep : rep;
            shred(t->child[0], &v->items[2 * i], r, (uint16_t)(def + 1));
            shred(t->child[1], &v->items[2 * i + 1], r, (uint16_t)(def + 1));
        }
        break;
    }
}
