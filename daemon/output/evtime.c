/* evtime.c - output.time_from resolved against the schema, a record's
 * value converted to seconds, and the past-period close rule (evtime.h).
 *
 * Thread: any (no shared state). */
#include "evtime.h"

#include <stdio.h>
#include <string.h>

#include "scalar.h"

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: what strftime's %Y
 * renders as four digits, and the partition directories sort by. */
#define ET_MIN_S (-62135596800LL)
#define ET_MAX_S 253402300799LL

static int64_t floor_div(int64_t v, int64_t d)
{
    int64_t q = v / d;
    return (v % d != 0 && v < 0) ? q - 1 : q;
}

static int64_t unit_per_second(pq_time_unit u)
{
    return u == PQ_UNIT_MILLIS ? 1000 : u == PQ_UNIT_MICROS ? 1000000 : 1000000000;
}

static int in_range(int64_t s, int64_t *sec)
{
    if (s < ET_MIN_S || s > ET_MAX_S)
        return PQ_ELIMIT;
    *sec = s;
    return PQ_OK;
}

static const sc_column *column_named(const sc_schema *s, const char *name)
{
    for (size_t i = 0; i < s->n_columns; i++)
        if (strcmp(s->columns[i].name, name) == 0)
            return &s->columns[i];
    return NULL;
}

/* A timestamp column read from the record: its path, its unit. */
static int from_column(const sc_column *c, et_source *out, pq_err *err)
{
    char type[64];
    if (c->source == SC_SRC_INGEST_TIME)
        return pq_err_set(err, PQ_EINVAL, "column '%s' is the ingestion time (ingest_time: "
                          "true), which paths use without time_from", c->name);
    if (c->type->kind != SC_TIMESTAMP || c->source != SC_SRC_PATH) {
        sc_type_format(c->type, type, sizeof type);
        return pq_err_set(err, PQ_EINVAL, "column '%s' is %s%s, not a timestamp read from the "
                          "record", c->name, c->source == SC_SRC_PATH ? "" : "from: ",
                          c->source == SC_SRC_PATH ? type : c->source == SC_SRC_REST ? "\"*\""
                                                                                     : "_index");
    }
    size_t off;
    int rc = pt_field_parse(c->from ? c->from : c->name, &out->field, &off, err);
    out->unit = c->type->unit;
    return rc;
}

int et_resolve(const sc_schema *s, const char *time_from, et_source *out, pq_err *err)
{
    memset(out, 0, sizeof *out);
    if (time_from == NULL || time_from[0] == '\0')
        return PQ_OK;
    out->set = true;
    const sc_column *c = column_named(s, time_from);
    if (c != NULL)
        return from_column(c, out, err);
    if (s->rest < 0)
        return pq_err_set(err, PQ_EINVAL, "no column '%s' in the schema (time_from names a "
                          "timestamp column, or a field of the record when a column takes "
                          "the rest, from: \"*\")", time_from);
    size_t off;
    int rc = pt_field_parse(time_from, &out->field, &off, err);
    if (rc == 0 && out->field.index)
        rc = pq_err_set(err, PQ_EINVAL, "_index is a name, not a time");
    else if (rc != 0 && rc != PQ_ENOMEM)
        pq_err_prefix(err, rc, "'%s', offset %zu", time_from, off);
    out->int_seconds = true;
    out->unit = PQ_UNIT_MICROS;
    return rc;
}

void et_source_free(et_source *src)
{
    pt_field_free(&src->field);
    memset(src, 0, sizeof *src);
}

int et_from_string(const et_source *src, const char *s, size_t n, int64_t *sec)
{
    int64_t v;
    int rc = sk_parse_timestamp(s, n, src->unit, &v);
    return rc ? rc : in_range(floor_div(v, unit_per_second(src->unit)), sec);
}

int et_from_number(const et_source *src, const json_number *num, int64_t *sec)
{
    if (src->int_seconds && num->kind == JSON_NUM_INT64)
        return in_range(num->i, sec);
    int64_t v;
    int rc = sk_epoch_number(num, src->unit, &v);
    return rc ? rc : in_range(floor_div(v, unit_per_second(src->unit)), sec);
}

bool et_period_close_due(int64_t period_end, int64_t now_s, int64_t idle_ms,
                         uint64_t max_age_ms)
{
    return period_end != INT64_MAX && now_s >= period_end && idle_ms >= 0 &&
           (uint64_t)idle_ms >= max_age_ms;
}
