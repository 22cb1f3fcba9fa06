/* test_evtime.c - event time (daemon/output/evtime.c, pathkey.c):
 * output.time_from resolved against a typed schema and the default one
 * (a field of the record), a record's value to seconds (RFC 3339 strings,
 * epoch numbers in the column's unit or in seconds, floors before 1970),
 * the fallbacks (missing, null, other types, unparsable, out of range, a
 * line that is not JSON, the first of repeated keys), the key it renders,
 * and the past-period close rule. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "colspec.h"
#include "evtime.h"
#include "pathkey.h"

static const char typed[] =
    "columns:\n"
    "  - {name: ts, type: \"timestamp(ms, utc)\", from: event.when}\n"
    "  - {name: svc, type: string}\n"
    "  - {name: rx, type: \"timestamp(us, utc)\", ingest_time: true}\n";

typedef struct fx {
    sc_schema *s;
    et_source src;
    pt_template t;
    pk_extractor *x;
    pt_value v[PT_FIELDS_MAX];
    char key[PK_KEY_MAX];
} fx;

/* schema NULL: the default one (a Variant from "*"); tpl the output path. */
static void setup_path(fx *f, const char *schema, const char *time_from, const char *tpl)
{
    pq_err e = {0};
    size_t off = 0;
    memset(f, 0, sizeof *f);
    int rc = schema ? sc_schema_load_buffer("s.yaml", schema, strlen(schema), &f->s, &e)
                    : sc_schema_default(&f->s, &e);
    if (rc != 0)
        fail_msg("schema: %s", e.msg);
    if (et_resolve(f->s, time_from, &f->src, &e) != 0)
        fail_msg("time_from %s: %s", time_from, e.msg);
    assert_int_equal(pt_parse(tpl, &f->t, &off, &e), 0);
    assert_int_equal(pk_new(&f->x, &f->t, &f->src, &e), 0);
}

static void setup(fx *f, const char *schema, const char *time_from)
{
    setup_path(f, schema, time_from, "svc={{svc}}/dt=%Y-%m-%d/hour=%H/{seq}.parquet");
}

static void teardown(fx *f)
{
    pk_free(f->x);
    pt_free(&f->t);
    et_source_free(&f->src);
    sc_schema_free(f->s);
}

/* The line's event time; found false: *sec untouched (INT64_MIN). */
static int64_t time_of(fx *f, const char *line)
{
    pq_err e = {0};
    pk_time t = {.found = true, .sec = 12345};
    assert_int_equal(pk_values(f->x, line, strlen(line), NULL, 0, f->v, &t, &e), 0);
    return t.found ? t.sec : INT64_MIN;
}

static void test_resolve(void **state)
{
    (void)state;
    sc_schema *s;
    et_source src;
    pq_err e = {0};
    assert_int_equal(sc_schema_load_buffer("s.yaml", typed, strlen(typed), &s, &e), 0);
    assert_int_equal(et_resolve(s, NULL, &src, &e), 0);
    assert_false(src.set);
    et_source_free(&src);
    assert_int_equal(et_resolve(s, "ts", &src, &e), 0);
    assert_true(src.set);
    assert_false(src.int_seconds);
    assert_int_equal(src.unit, PQ_UNIT_MILLIS);
    assert_int_equal(src.field.n_keys, 2);
    assert_string_equal(src.field.keys[0], "event");
    assert_string_equal(src.field.keys[1], "when");
    et_source_free(&src);
    assert_int_equal(et_resolve(s, "svc", &src, &e), PQ_EINVAL);
    assert_string_equal(e.msg, "column 'svc' is string, not a timestamp read from the record");
    et_source_free(&src);
    assert_int_equal(et_resolve(s, "rx", &src, &e), PQ_EINVAL);
    assert_non_null(strstr(e.msg, "column 'rx' is the ingestion time"));
    et_source_free(&src);
    assert_int_equal(et_resolve(s, "when", &src, &e), PQ_EINVAL);   /* no `*` column */
    assert_non_null(strstr(e.msg, "no column 'when' in the schema"));
    et_source_free(&src);
    sc_schema_free(s);

    assert_int_equal(sc_schema_default(&s, &e), 0);
    assert_int_equal(et_resolve(s, "/a~1b/c", &src, &e), 0);     /* a field of the record */
    assert_true(src.int_seconds);
    assert_int_equal(src.field.n_keys, 2);
    assert_string_equal(src.field.keys[0], "a/b");
    et_source_free(&src);
    assert_int_equal(et_resolve(s, "event", &src, &e), PQ_EINVAL);  /* the Variant itself */
    assert_non_null(strstr(e.msg, "not a timestamp"));
    et_source_free(&src);
    assert_int_equal(et_resolve(s, "a..b", &src, &e), PQ_EINVAL);
    assert_non_null(strstr(e.msg, "empty key in a dotted path"));
    et_source_free(&src);
    assert_int_equal(et_resolve(s, "_index", &src, &e), PQ_EINVAL);
    et_source_free(&src);
    sc_schema_free(s);
}

static void test_typed_column_values(void **state)
{
    (void)state;
    fx f;
    setup(&f, typed, "ts");
    /* 2026-03-01T10:05:00Z = 1772359500 */
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":\"2026-03-01T10:05:00Z\"}}"), 1772359500);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":\"2026-03-01T12:05:00.999+02:00\"}}"),
                     1772359500);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":1772359500999}}"), 1772359500); /* ms */
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":1772359500.5}}"), 1772359500);  /* s */
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":-1}}"), -1);   /* -1 ms: floor */
    /* the fallbacks */
    assert_int_equal(time_of(&f, "{\"event\":{}}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"when\":1}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":null}}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":true}}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":{\"s\":1}}}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":[1]}}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":\"yesterday\"}}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":1e30}}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":1}"), INT64_MIN);   /* not JSON */
    /* the first of repeated keys counts, as for {{FIELD}}s */
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":\"x\",\"when\":0}}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"event\":{\"when\":0,\"when\":\"x\"}}"), 0);
    teardown(&f);
}

static void test_record_field_values(void **state)
{
    (void)state;
    fx f;
    setup(&f, NULL, "ts");
    assert_int_equal(time_of(&f, "{\"ts\":1772359500}"), 1772359500);  /* integers: seconds */
    assert_int_equal(time_of(&f, "{\"ts\":1772359500.25}"), 1772359500);
    assert_int_equal(time_of(&f, "{\"ts\":-0.5}"), -1);
    assert_int_equal(time_of(&f, "{\"ts\":\"1969-12-31T23:59:59.5Z\"}"), -1);
    assert_int_equal(time_of(&f, "{\"ts\":\"0001-01-01T00:00:00Z\"}"), -62135596800LL);
    assert_int_equal(time_of(&f, "{\"ts\":253402300800}"), INT64_MIN);  /* year 10000 */
    assert_int_equal(time_of(&f, "{\"ts\":\"\"}"), INT64_MIN);
    assert_int_equal(time_of(&f, "{\"svc\":\"a\"}"), INT64_MIN);
    assert_int_equal(time_of(&f, "[1]"), INT64_MIN);
    pq_err e = {0};
    pk_time t;
    assert_int_equal(pk_values(f.x, "[1]", 3, NULL, 0, f.v, &t, &e), 0);
    assert_false(t.object);          /* rejected anyway: not a fallback to count */
    assert_int_equal(pk_values(f.x, "{}", 2, NULL, 0, f.v, &t, &e), 0);
    assert_true(t.object);
    assert_false(t.found);
    /* the same pass gives the {{FIELD}}s, and the key the event hour */
    const char *line = "{\"a\":{\"ts\":1},\"ts\":\"2026-03-01T10:05:00Z\",\"svc\":\"x/y\"}";
    assert_int_equal(pk_values(f.x, line, strlen(line), NULL, 0, f.v, &t, &e), 0);
    assert_true(t.found);
    assert_int_equal(pk_key(&f.t, f.v, (time_t)t.sec, f.key, sizeof f.key, &e), 0);
    assert_string_equal(f.key, "x%2Fy/2026/03/01/10/");
    teardown(&f);
}

/* A time field that is also a {{FIELD}}: both take the value. */
static void test_time_field_also_partitions(void **state)
{
    (void)state;
    fx f;
    pk_time tm;
    pq_err e = {0};
    setup_path(&f, NULL, "ts", "t={{ts}}/%H/{seq}");
    const char *line = "{\"ts\":7200}";
    assert_int_equal(pk_values(f.x, line, strlen(line), NULL, 0, f.v, &tm, &e), 0);
    assert_true(tm.found);
    assert_int_equal(tm.sec, 7200);
    assert_int_equal(f.v[0].len, 4);
    assert_memory_equal(f.v[0].p, "7200", 4);
    teardown(&f);
}

/* Leading string members, the time's too, are read without the SAX pass
 * (pathkey.c leading_members): the same values and time; an epoch number
 * leaves the line to the SAX pass. */
static void test_leading_time_field(void **state)
{
    (void)state;
    fx f;
    pk_time tm;
    pq_err e = {0};
    setup_path(&f, NULL, "ts", "t={{tenant}}/%H/{seq}");
    pt_value *v = f.v;
    const char *line = "{\"tenant\":\"a\",\"ts\":\"1970-01-01T02:00:01Z\",\"n\":{";
    assert_int_equal(pk_values(f.x, line, strlen(line), NULL, 0, v, &tm, &e), 0);
    assert_true(tm.found && tm.object);
    assert_int_equal(tm.sec, 7201);
    assert_true(v[0].len == 1 && v[0].p == line + 11);   /* in place */
    line = "{\"tenant\":\"a\",\"ts\":\"not a time\",\"n\":{";
    assert_int_equal(pk_values(f.x, line, strlen(line), NULL, 0, v, &tm, &e), 0);
    assert_true(!tm.found && tm.object);
    assert_true(v[0].len == 1 && v[0].p == line + 11);
    line = "{\"tenant\":\"b\",\"ts\":7200}";
    assert_int_equal(pk_values(f.x, line, strlen(line), NULL, 0, v, &tm, &e), 0);
    assert_true(tm.found);
    assert_int_equal(tm.sec, 7200);
    assert_true(v[0].len == 1 && v[0].p[0] == 'b' && v[0].p != line + 11);   /* SAX: a copy */
    teardown(&f);
}

static void test_period_close_rule(void **state)
{
    (void)state;
    const int64_t end = 1772362800;          /* 2026-03-01T11:00:00Z */
    /* the period has not passed: never, however idle */
    assert_false(et_period_close_due(end, end - 1, 3600000, 1000));
    /* passed, but written to less than max_age ago: a late record keeps it open */
    assert_false(et_period_close_due(end, end + 7200, 999, 1000));
    /* passed and idle for max_age */
    assert_true(et_period_close_due(end, end, 1000, 1000));
    assert_true(et_period_close_due(end, end + 7200, 5000, 1000));
    /* max_age 0: as soon as the period has passed */
    assert_true(et_period_close_due(end, end, 0, 0));
    /* no time directories: never for a period */
    assert_false(et_period_close_due(INT64_MAX, end, 3600000, 0));
    /* a clock that went back (idle < 0) */
    assert_false(et_period_close_due(end, end + 10, -5, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_typed_column_values),
        cmocka_unit_test(test_record_field_values),
        cmocka_unit_test(test_time_field_also_partitions),
        cmocka_unit_test(test_leading_time_field),
        cmocka_unit_test(test_period_close_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
