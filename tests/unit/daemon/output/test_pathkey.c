/* test_pathkey.c - a record's {{FIELD}} values and partition key
 * (daemon/output/pathkey.c): dotted paths and JSON Pointers, every kind of
 * value, missing and null, the first of repeated keys, _index, escaped
 * values in the key, and the directories' time. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pathkey.h"

/* 2024-02-29T23:59:58Z */
static const time_t T = 1709251198;

typedef struct fx {
    pt_template t;
    pk_extractor *x;
    pt_value v[PT_FIELDS_MAX];
    char key[PK_KEY_MAX];
} fx;

static void setup(fx *f, const char *tmpl)
{
    size_t off = 0;
    pq_err e = {0};
    if (pt_parse(tmpl, &f->t, &off, &e) != 0)
        fail_msg("%s: %s", tmpl, e.msg);
    assert_int_equal(pk_new(&f->x, &f->t, NULL, &e), 0);
}

static void teardown(fx *f)
{
    pk_free(f->x);
    pt_free(&f->t);
}

static const char *key_of(fx *f, const char *line, const char *index, time_t when)
{
    pq_err e = {0};
    assert_int_equal(pk_values(f->x, line, strlen(line), index, index ? strlen(index) : 0, f->v, NULL,
                               &e), 0);
    if (pk_key(&f->t, f->v, when, f->key, sizeof f->key, &e) != 0)
        fail_msg("%s: %s", line, e.msg);
    return f->key;
}

static void want_value(const pt_value *v, const char *want)
{
    if (want == NULL) {
        assert_null(v->p);
        return;
    }
    assert_non_null(v->p);
    assert_int_equal(v->len, strlen(want));
    assert_memory_equal(v->p, want, v->len);
}

static void test_values_of_every_kind(void **state)
{
    (void)state;
    fx f;
    setup(&f, "svc={{svc}}/pod={{k8s.pod}}/x={{/a.b}}/{seq}.parquet");
    key_of(&f, "{\"svc\":\"api\",\"k8s\":{\"pod\":\"p-1\",\"n\":2},\"a.b\":12.5}", NULL, T);
    want_value(&f.v[0], "api");
    want_value(&f.v[1], "p-1");
    want_value(&f.v[2], "12.5");
    key_of(&f, "{\"svc\":true,\"k8s\":{\"pod\":{\"x\":[1, {\"y\":2}]}},\"a.b\":null}", NULL, T);
    want_value(&f.v[0], "true");
    want_value(&f.v[1], "{\"x\":[1, {\"y\":2}]}");
    want_value(&f.v[2], NULL);
    /* escapes in a string value; a key repeated: its first value */
    key_of(&f, "{\"svc\":\"a\\/b \\u00e9\",\"svc\":\"z\",\"k8s\":[{\"pod\":1}]}", NULL, T);
    want_value(&f.v[0], "a/b \xc3\xa9");
    want_value(&f.v[1], NULL);             /* arrays are not walked */
    /* nested objects at another path do not match */
    key_of(&f, "{\"x\":{\"svc\":\"no\"},\"k8s\":{\"k8s\":{\"pod\":\"no\"}},\"svc\":[1,2]}", NULL,
           T);
    want_value(&f.v[0], "[1,2]");
    want_value(&f.v[1], NULL);
    /* not JSON (the shredder rejects it): every field missing */
    key_of(&f, "{\"svc\":\"api\",", NULL, T);
    want_value(&f.v[0], NULL);
    teardown(&f);
}

static void test_key_escapes_and_time(void **state)
{
    (void)state;
    fx f;
    setup(&f, "idx={{_index}}/svc={{svc}}/dt=%Y-%m-%d/h=%H/{host}-{seq}-%M.parquet");
    assert_string_equal(key_of(&f, "{\"svc\":\"a/b= c\"}", "logs-1", T),
                        "logs-1/a%2Fb%3D c/2024/02/29/23/");
    assert_string_equal(key_of(&f, "{\"other\":1}", NULL, T),
                        "__HIVE_DEFAULT_PARTITION__/__HIVE_DEFAULT_PARTITION__/2024/02/29/23/");
    /* the file name's %M only stamps the file: the same key a minute on */
    assert_string_equal(key_of(&f, "{\"svc\":\"\"}", "i", T + 60 * 59 + 1),
                        "i/__HIVE_DEFAULT_PARTITION__/2024/03/01/00/");
    teardown(&f);
}

static void test_key_without_fields(void **state)
{
    (void)state;
    fx f;
    setup(&f, "{host}-{seq}.parquet");
    assert_string_equal(key_of(&f, "{\"svc\":1}", NULL, T), "");
    teardown(&f);
}

static void test_parse_stops_once_every_field_is_found(void **state)
{
    (void)state;
    fx f;
    setup(&f, "svc={{svc}}/{seq}.parquet");
    key_of(&f, "{\"a\":[1,{\"svc\":\"no\"}],\"svc\":\"b\",\"svc\":\"z\"}", NULL, T);
    want_value(&f.v[0], "b");
    /* the rest of the line is not read: a line broken after its field (the
     * shredder rejects it) keeps the field's value, where a three-field
     * template above reads on and finds the break */
    key_of(&f, "{\"svc\":\"api\",", NULL, T);
    want_value(&f.v[0], "api");
    key_of(&f, "{\"x\":1,", NULL, T);
    want_value(&f.v[0], NULL);
    teardown(&f);
}

/* Whether v was read in place from line (the leading members' scan)
 * rather than by the SAX pass, which copies string values. */
static bool in_line(const pt_value *v, const char *line)
{
    return v->p >= line && v->p < line + strlen(line);
}

static void test_leading_members_are_read_in_place(void **state)
{
    (void)state;
    fx f;
    setup(&f, "idx={{_index}}/t={{tenant}}/s={{svc}}/{seq}.parquet");
    const char *l = "{\"tenant\":\"t1\",\"x\":\"\",\"svc\":\"api\",\"svc\":\"z\",\"n\":{";
    key_of(&f, l, "ix", T);                /* stops at the last field: the rest unread */
    want_value(&f.v[0], "ix");
    want_value(&f.v[1], "t1");
    want_value(&f.v[2], "api");
    assert_true(in_line(&f.v[1], l) && in_line(&f.v[2], l));
    l = "{\"svc\":\"\",\"tenant\":\"\x7f~ \"}";   /* an empty value; 0x7F is plain JSON */
    assert_string_equal(key_of(&f, l, NULL, T),
                        "__HIVE_DEFAULT_PARTITION__/%7F~ /__HIVE_DEFAULT_PARTITION__/");
    assert_true(in_line(&f.v[1], l));
    /* Anything else goes to the SAX pass, with its result */
    static const struct {
        const char *line, *tenant, *svc;
    } other[] = {
        {"{\"tenant\":\"a\\\"b\",\"svc\":\"s\"}", "a\"b", "s"},   /* an escape */
        {"{\"tenant\":\"\xc3\xa9\",\"svc\":\"s\"}", "\xc3\xa9", "s"},  /* not ASCII */
        {"{ \"tenant\":\"a\",\"svc\":\"s\"}", "a", "s"},          /* whitespace */
        {"{\"tenant\" :\"a\",\"svc\":\"s\"}", "a", "s"},
        {"{\"n\":1,\"tenant\":\"a\",\"svc\":\"s\"}", "a", "s"},    /* a number first */
        {"{\"tenant\":\"a\",\"svc\":7}", "a", "7"},
        {"{\"tenant\":\"a\"}", "a", NULL},                      /* the object ends */
        {"{\"tenant\":\"a\",\"svc\":\"s", NULL, NULL},             /* broken: not JSON */
        {"[\"tenant\",\"a\"]", NULL, NULL},
        {"{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\",\"d\":\"4\",\"e\":\"5\",\"f\":\"6\",\"g\":\"7\",\"h\":\"8\","
         "\"i\":\"9\",\"j\":\"10\",\"k\":\"11\",\"l\":\"12\",\"m\":\"13\",\"n\":\"14\",\"o\":\"15\","
         "\"tenant\":\"a\",\"svc\":\"s\"}", "a", "s"},            /* past PK_LEAD_MAX */
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        key_of(&f, other[i].line, NULL, T);
        want_value(&f.v[1], other[i].tenant);
        want_value(&f.v[2], other[i].svc);
        assert_false(in_line(&f.v[1], other[i].line) && in_line(&f.v[2], other[i].line));
    }
    teardown(&f);
    /* a nested path: the SAX pass, even when a leading member matches */
    setup(&f, "t={{tenant}}/p={{k.pod}}/{seq}.parquet");
    l = "{\"tenant\":\"t1\",\"k\":{\"pod\":\"p\"}}";
    key_of(&f, l, NULL, T);
    want_value(&f.v[0], "t1");
    want_value(&f.v[1], "p");
    assert_false(in_line(&f.v[0], l));
    teardown(&f);
    /* "%%" in the directories renders as a time field did ("%" then '/') */
    setup(&f, "a%%b/{{tenant}}/{seq}.parquet");
    assert_string_equal(key_of(&f, "{\"tenant\":\"x\"}", NULL, T), "x/%/");
    teardown(&f);
}

/* pk_key_memo keeps the directories' time of the last period: the same
 * keys as pk_key across hours, days, years, negative times and back. */
static void test_key_memo_is_pk_key(void **state)
{
    (void)state;
    static const char *const tmpl[] = {
        "{{svc}}/dt=%Y-%m-%d/h=%H/{seq}", "%j/%a/%M/{{svc}}/{seq}", "%s/{seq}",
        "z%Z/{{svc}}/{seq}", "{{svc}}/{seq}-%H",
    };
    static const int64_t when[] = {
        1709251198, 1709251199, 1709251200, 1709251200 + 3599, 1709251200 + 3600, 1709251198,
        0, -1, -3600, -3601, -86400, -86401, 1709251140, 1709251260, 4102444799, 4102444800,
        253402300799, 1709251198,
    };
    char a[PK_KEY_MAX], b[PK_KEY_MAX];
    for (size_t i = 0; i < sizeof tmpl / sizeof tmpl[0]; i++) {
        fx f;
        setup(&f, tmpl[i]);
        key_of(&f, "{\"svc\":\"api\"}", NULL, 0);
        for (size_t k = 0; k < sizeof when / sizeof when[0]; k++) {
            pq_err e = {0};
            assert_int_equal(pk_key_memo(f.x, f.v, (time_t)when[k], a, sizeof a, &e), 0);
            assert_int_equal(pk_key(&f.t, f.v, (time_t)when[k], b, sizeof b, &e), 0);
            assert_string_equal(a, b);
        }
        /* no room for the time: pk_key's error */
        pq_err e1 = {0}, e2 = {0};
        assert_int_equal(pk_key_memo(f.x, f.v, 1709251198, a, 5, &e1),
                         pk_key(&f.t, f.v, 1709251198, b, 5, &e2));
        assert_string_equal(e1.msg, e2.msg);
        teardown(&f);
    }
}

static void test_key_too_long(void **state)
{
    (void)state;
    fx f;
    setup(&f, "{{v}}/{seq}.parquet");
    static char line[3 * PK_KEY_MAX];
    size_t n = (size_t)snprintf(line, sizeof line, "{\"v\":\"");
    memset(line + n, '/', PK_KEY_MAX / 2);       /* escapes to 3 bytes each */
    n += PK_KEY_MAX / 2;
    memcpy(line + n, "\"}", 3);
    pq_err e = {0};
    assert_int_equal(pk_values(f.x, line, strlen(line), NULL, 0, f.v, NULL, &e), 0);
    assert_int_equal(pk_key(&f.t, f.v, T, f.key, sizeof f.key, &e), PQ_ELIMIT);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_of_every_kind),
        cmocka_unit_test(test_key_escapes_and_time),
        cmocka_unit_test(test_key_without_fields),
        cmocka_unit_test(test_parse_stops_once_every_field_is_found),
        cmocka_unit_test(test_key_too_long),
        cmocka_unit_test(test_leading_members_are_read_in_place),
        cmocka_unit_test(test_key_memo_is_pk_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
