/* test_shred.c - NDJSON records to rows: typed scalars, LIST/MAP/struct
 * levels, nulls vs empties, the rest column (unmatched fields keep their
 * nesting, values that do not fit land there), rejects, last-wins
 * duplicates and the default schema. Rows are checked in the writer's
 * column buffers (levels and values) before any encoding. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "column.h"
#include "colspec.h"
#include "shred.h"
#include "shred_state.h"
#include "variant_read.h"
#include "memsink.h"

typedef struct rig {
    sc_schema *spec;
    pq_schema *ps;
    pq_writer *w;
    sh_shredder *sh;
    pq_buf out;
    pq_err err;
} rig;

static void rig_open(rig *r, const char *yaml)
{
    memset(r, 0, sizeof *r);
    pq_buf_init(&r->out);
    if (yaml == NULL ? sc_schema_default(&r->spec, &r->err)
                     : sc_schema_load_buffer("test.yaml", yaml, strlen(yaml), &r->spec, &r->err))
        fail_msg("schema: %s", r->err.msg);
    if (sc_build_parquet_schema(r->spec, &r->ps, &r->err) != 0)
        fail_msg("build: %s", r->err.msg);
    pq_sink sink = pqt_mem_sink(&r->out);
    if (pq_writer_open(&r->w, r->ps, NULL, sink, &r->err) != 0)
        fail_msg("open: %s", r->err.msg);
    if (sh_shredder_new(&r->sh, r->spec, &r->err) != 0)
        fail_msg("shredder: %s", r->err.msg);
}

static void rig_close(rig *r)
{
    sh_shredder_destroy(r->sh);
    pq_writer_destroy(r->w);
    pq_schema_destroy(r->ps);
    sc_schema_free(r->spec);
    pq_buf_free(&r->out);
}

static int shred(rig *r, const char *line)
{
    int rc = sh_shred_line(r->sh, pq_writer_rowgroup(r->w), line, strlen(line),
                           1700000000000000LL, &r->err);
    return rc == 0 ? pq_writer_check_limits(r->w, &r->err) : rc;
}

/* Two rigs of one schema for the differential tests: on with the
 * shredder's fast paths (shred_direct.c), off with the events only. */
static void rig_open_pair(rig *on, rig *off, const char *yaml)
{
    rig_open(on, yaml);
    rig_open(off, yaml);
    sh_shredder_set_fast(off->sh, false);
}

/* Each of the n lines into both rigs, `passes` times in a row (the later
 * passes with warm predictions): the same result and message. */
static void shred_both(rig *on, rig *off, const char *const *lines, size_t n, int passes)
{
    for (size_t k = 0; k < n; k++) {
        for (int pass = 0; pass < passes; pass++) {
            int a = shred(on, lines[k]), b = shred(off, lines[k]);
            assert_int_equal(a, b);
            assert_string_equal(on->err.msg, off->err.msg);
        }
    }
}

/* Both rigs' files closed: byte for byte the same. */
static void expect_same_file(rig *on, rig *off)
{
    assert_int_equal(pq_writer_close(on->w, &on->err), 0);
    assert_int_equal(pq_writer_close(off->w, &off->err), 0);
    assert_int_equal(on->out.len, off->out.len);
    assert_memory_equal(on->out.data, off->out.data, on->out.len);
}

static const pq_column *leaf(rig *r, const char *path)
{
    for (size_t i = 0; i < pq_schema_num_leaves(r->ps); i++)
        if (strcmp(pq_schema_leaf_path(r->ps, i), path) == 0)
            return pq_writer_column(r->w, i);
    fail_msg("no leaf %s", path);
    return NULL;
}

/* Levels as "def/rep def/rep ..." (rep omitted when the leaf has none). */
static void expect_levels(rig *r, const char *path, const char *want)
{
    const pq_column *c = leaf(r, path);
    char got[512] = "";
    size_t n = 0;
    for (size_t i = 0; i < c->n_levels && n < sizeof got - 16; i++) {
        int def = c->max_def ? pq_column_def(c)[i] : c->max_def;
        if (c->max_rep)
            n += (size_t)snprintf(got + n, sizeof got - n, "%s%d/%d", i ? " " : "", def,
                                  pq_column_rep(c)[i]);
        else
            n += (size_t)snprintf(got + n, sizeof got - n, "%s%d", i ? " " : "", def);
    }
    assert_string_equal(got, want);
}

static int64_t i64_at(rig *r, const char *path, size_t i)
{
    const pq_column *c = leaf(r, path);
    assert_true(i < c->n_values);
    if (c->width == 4) {
        int32_t v;
        memcpy(&v, c->values.data + 4 * i, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, c->values.data + 8 * i, 8);
    return v;
}

static void bytes_at(rig *r, const char *path, size_t i, const uint8_t **p, size_t *len)
{
    const pq_column *c = leaf(r, path);
    assert_true(i < c->n_values);
    const uint32_t *off = pq_column_offsets(c);
    *p = c->heap.data + off[i];
    *len = off[i + 1] - off[i];
}

/* The variant column's i-th value as canonical JSON. */
static void expect_variant(rig *r, const char *column, size_t i, const char *json)
{
    char mp[128], vp[128];
    snprintf(mp, sizeof mp, "%s.metadata", column);
    snprintf(vp, sizeof vp, "%s.value", column);
    const uint8_t *m, *v;
    size_t ml, vl;
    bytes_at(r, mp, i, &m, &ml);
    bytes_at(r, vp, i, &v, &vl);
    pq_buf out;
    pq_buf_init(&out);
    pq_err err = {0};
    if (vread_to_json(&out, m, ml, v, vl, &err) != 0)
        fail_msg("variant: %s", err.msg);
    pq_buf_push(&out, 0);
    assert_string_equal((char *)out.data, json);
    pq_buf_free(&out);
}

static void test_shred_typed_scalars_and_missing_fields(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n"
                 "  - {name: a, type: int32}\n"
                 "  - {name: s, type: string}\n"
                 "  - {name: t, type: timestamp, unit: ms, utc: true}\n");
    assert_int_equal(shred(&r, "{\"a\": 7, \"s\": \"x\", \"t\": \"1970-01-01T00:00:01Z\"}"), 0);
    assert_int_equal(shred(&r, "{\"s\": null, \"t\": 2.5}"), 0);
    expect_levels(&r, "a", "1 0");
    expect_levels(&r, "s", "1 0");
    expect_levels(&r, "t", "1 1");
    assert_int_equal(i64_at(&r, "a", 0), 7);
    assert_int_equal(i64_at(&r, "t", 0), 1000);
    assert_int_equal(i64_at(&r, "t", 1), 2500); /* float seconds */
    assert_int_equal(pq_writer_rows_buffered(r.w), 2);
    rig_close(&r);
}

/* Doubles and narrow integers read by the schema-directed parse (its
 * small-number read takes "0.746" itself) land the bits the parser's
 * events give (strtod's correctly rounded double; the range checks): the
 * same lines shredded with the fast paths on (each line twice, so the
 * second takes the predicted keys) and off. */
static void test_shred_direct_numbers_match_event_path(void **state)
{
    (void)state;
    static const char *const nums[] = {
        "0.746", "-0.0", "0.1", "19.175", "123456789012345.678", "9007199254740993.0",
        "0.30000000000000004", "4.35", "-1234.5", "1.5e3", "12", "0.000000000000000001",
        "900719925474099.3", "9007199254740.992"};
    static const char *const ints[] = {"32767", "32768", "-32768", "-32769", "0", "-0"};
    const char *yaml = "columns:\n"
                       "  - {name: d, type: double}\n"
                       "  - {name: i, type: int16}\n"
                       "  - {name: rest, type: variant, from: \"*\"}\n";
    rig on, off;
    rig_open_pair(&on, &off, yaml);
    char line[128];
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        snprintf(line, sizeof line, "{\"d\":%s,\"i\":%s}", nums[k], ints[k % 6]);
        for (int twice = 0; twice < 2; twice++) {
            assert_int_equal(shred(&on, line), 0);
            assert_int_equal(shred(&off, line), 0);
        }
    }
    const pq_column *a = leaf(&on, "d"), *b = leaf(&off, "d");
    assert_int_equal(a->n_values, b->n_values);
    assert_memory_equal(a->values.data, b->values.data, 8 * a->n_values);
    for (size_t k = 0; k < 2 * sizeof nums / sizeof nums[0]; k++) {
        double got, want = strtod(nums[k / 2], NULL);
        memcpy(&got, a->values.data + 8 * k, 8);
        assert_memory_equal(&got, &want, 8);
    }
    a = leaf(&on, "i");
    b = leaf(&off, "i");
    assert_int_equal(a->n_values, b->n_values);
    assert_memory_equal(a->values.data, b->values.data, 4 * a->n_values);
    expect_levels(&on, "i", "1 1 0 0 1 1 0 0 1 1 1 1 1 1 0 0 1 1 0 0 1 1 1 1 1 1 0 0");
    expect_levels(&off, "i", "1 1 0 0 1 1 0 0 1 1 1 1 1 1 0 0 1 1 0 0 1 1 1 1 1 1 0 0");
    rig_close(&on);
    rig_close(&off);
}

/* Integers put straight into signed integer and double columns by the
 * schema-directed parse (shred_direct.c's put_short) land what the
 * parser's events and the general conversion put: each width's range
 * edges (a value past them mismatches: null, and the value to rest), -0
 * (an integer, so +0.0 in a double column), and integers past 2^53 (a
 * double column then takes the general path). Fast paths on and off, each
 * line twice. */
static void test_shred_direct_integers_match_event_path(void **state)
{
    (void)state;
    static const char *const ints[] = {
        "0", "-0", "1", "-1", "127", "128", "-128", "-129", "32767", "-32769",
        "2147483647", "2147483648", "-2147483648", "-2147483649", "9007199254740992",
        "9007199254740993", "-9007199254740993", "999999999999999999", "-999999999999999999",
        "1000000000000000000", "9223372036854775807", "-9223372036854775808", "00", "-", "1.0"};
    const char *yaml = "columns:\n"
                       "  - {name: d, type: double}\n"
                       "  - {name: b, type: int8}\n"
                       "  - {name: w, type: int32}\n"
                       "  - {name: l, type: int64}\n"
                       "  - {name: u, type: uint16}\n"
                       "  - {name: rest, type: variant, from: \"*\"}\n";
    rig on, off;
    rig_open_pair(&on, &off, yaml);
    char line[256];
    const size_t n = sizeof ints / sizeof ints[0];
    for (size_t k = 0; k < n; k++) {
        const char *v = ints[k];
        snprintf(line, sizeof line, "{\"d\":%s,\"b\":%s,\"w\":%s,\"l\":%s,\"u\":%s}", v, v, v, v, v);
        for (int twice = 0; twice < 2; twice++) {
            int a = shred(&on, line), b = shred(&off, line);
            assert_int_equal(a, b);
        }
    }
    static const char *const names[] = {"d", "b", "w", "l", "u"};
    for (size_t c = 0; c < sizeof names / sizeof names[0]; c++) {
        const pq_column *a = leaf(&on, names[c]), *b = leaf(&off, names[c]);
        assert_int_equal(a->n_values, b->n_values);
        assert_int_equal(a->n_levels, b->n_levels);
        assert_int_equal(a->values.len, b->values.len);
        assert_memory_equal(a->values.data, b->values.data, a->values.len);
        assert_memory_equal(a->def.data, b->def.data, a->def.len);
    }
    /* -0 is +0.0 in the double column, as the general conversion makes it */
    const pq_column *d = leaf(&on, "d");
    double second;
    memcpy(&second, d->values.data + 8 * 2, 8);
    assert_true(second == 0.0 && !signbit(second));
    rig_close(&on);
    rig_close(&off);
}

/* A shredded Variant's object of known keys and string values goes from
 * the line straight into its leaves (shred_direct.c's direct_variant),
 * skipping its builder and vshred.c's walk: the file must be the one the
 * event path writes, for every shape around it (missing fields, kept
 * keys short and long, a new key, a key the dictionary drops, a field of
 * another type, repeats, escapes, whitespace, an empty object, a repeated
 * column). Each line twice, so the second finds its keys known. */
static void test_shred_direct_variant_object_matches_event_path(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "{\"r\":{\"h\":{\"host\":\"a\",\"accept\":\"*/*\",\"enc\":\"gzip\"}}}",
        "{\"r\":{\"h\":{\"host\":\"b\",\"accept\":\"x\",\"x-p\":\"https\"}}}",
        ("{\"r\":{\"h\":{\"x-p\":\"http\",\"host\":\"c\",\"a-long\":\"0123456789012345678901"
         "234567890123456789012345678901234567890123456789\"}}}"),
        "{\"r\":{\"h\":{}}}",
        "{\"r\":{\"h\":{\"enc\":\"br\"}},\"z\":1}",
        "{\"r\":{\"h\":{\"host\":\"d\",\"n\":\"five\"}}}",
        "{\"r\":{\"h\":{\"host\":\"e\",\"n\":5,\"ok\":true}}}",
        "{\"r\":{\"h\":{\"host\":\"f\",\"host\":\"g\"}}}",
        "{\"r\":{\"h\":{\"host\":\"h\", \"accept\":\"sp\"}}}",
        "{\"r\":{\"h\":{\"host\":\"\\u00e9\",\"accept\":\"\xc3\xa9\"}}}",
        "{\"r\":{\"h\":{\"host\":\"i\"},\"h\":{\"accept\":\"j\"}}}",
        "{\"r\":{\"h\":{\"k1\":\"1\",\"k2\":\"2\",\"k3\":\"3\",\"k4\":\"4\",\"k5\":\"5\"}}}",
        "{\"r\":{\"h\":{\"host\":\"k\"}}}",
        "{\"r\":{\"h\":{\"host\":\"l\",\"d\":{\"x\":1}}}}",
        "{\"r\":{\"h\":\"text\"}}",
        "{\"r\":{\"h\":{\"host\":\"m\",\"accept\":\"n\"}",
    };
    const char *yaml = "columns:\n"
                       "  - name: h\n"
                       "    type: variant\n"
                       "    from: r.h\n"
                       "    shred: {host: string, accept: string, enc: string, n: int64, ok: bool,"
                       " d: {x: int32}}\n"
                       "  - {name: rest, type: variant, from: \"*\"}\n";
    rig on, off;
    rig_open_pair(&on, &off, yaml);
    shred_both(&on, &off, lines, sizeof lines / sizeof lines[0], 2);
    assert_true(on.sh->direct_objects >= 8);
    assert_int_equal(off.sh->direct_objects, 0);
    expect_same_file(&on, &off);
    rig_close(&on);
    rig_close(&off);
}

/* direct_variant finds a known key by one compare with the key that
 * followed the previous one last time, its dictionary id and shred field
 * cached (shred_direct.c's sh_vcache): a key in another order than the
 * last record's, a key missing or added, a repeated key (cached, kept or
 * too long for the cache), and dictionaries that give the same keys other
 * ids (a key sorted in before them, in the same batch or after a new
 * batch's reset) must still write the event path's bytes. */
static void test_shred_direct_variant_key_cache_matches_event_path(void **state)
{
    (void)state;
#define LONGK "a-key-far-too-long-for-the-cache-pattern"
    static const char *const batch1[] = {
        "{\"h\":{\"host\":\"a\",\"accept\":\"b\",\"x-b\":\"c\"}}",
        "{\"h\":{\"host\":\"d\",\"accept\":\"e\",\"x-b\":\"f\"}}",
        "{\"h\":{\"accept\":\"g\",\"x-b\":\"h\",\"host\":\"i\"}}",
        "{\"h\":{\"host\":\"j\",\"x-b\":\"k\"}}",
        "{\"h\":{\"host\":\"l\",\"accept\":\"m\",\"x-b\":\"n\",\"x-c\":\"o\"}}",
        "{\"h\":{\"host\":\"p\",\"accept\":\"q\",\"x-b\":\"r\",\"x-c\":\"s\"}}",
        /* a-0 sorts first: x-b and x-c get other ids */
        "{\"h\":{\"host\":\"t\",\"accept\":\"u\",\"x-b\":\"v\",\"x-c\":\"w\",\"a-0\":\"x\"}}",
        "{\"h\":{\"host\":\"y\",\"accept\":\"z\",\"x-b\":\"A\",\"x-c\":\"B\"}}",
        "{\"h\":{\"host\":\"C\",\"x-b\":\"D\",\"x-c\":\"E\",\"" LONGK "\":\"F\"}}",
        "{\"h\":{\"host\":\"G\",\"x-b\":\"H\",\"x-c\":\"I\",\"" LONGK "\":\"J\"}}",
        "{\"h\":{\"host\":\"K\",\"x-b\":\"L\",\"host\":\"M\"}}",
        "{\"h\":{\"host\":\"N\",\"x-b\":\"O\",\"x-c\":\"P\",\"" LONGK "\":\"Q\"}}",
        "{\"h\":{\"x-b\":\"R\",\"host\":\"S\",\"x-b\":\"T\"}}",
        "{\"h\":{\"host\":\"U\",\"x-b\":\"V\",\"x-c\":\"W\",\"" LONGK "\":\"X\"}}",
        "{\"h\":{\"" LONGK "\":\"Y\",\"host\":\"Z\",\"" LONGK "\":\"0\"}}",
    };
    static const char *const batch2[] = {
        "{\"h\":{\"host\":\"K\",\"x-c\":\"L\"}}",
        "{\"h\":{\"host\":\"M\",\"x-c\":\"N\"}}",
        "{\"h\":{\"host\":\"O\",\"0\":\"P\",\"x-c\":\"Q\"}}", /* new dictionary */
        "{\"h\":{\"host\":\"R\",\"x-c\":\"S\"}}",
        "{\"h\":{\"accept\":\"T\",\"x-c\":\"U\"}}",
        "{\"h\":{\"accept\":\"V\",\"x-c\":\"W\"}}",
    };
    const char *yaml = "columns:\n"
                       "  - name: h\n"
                       "    type: variant\n"
                       "    shred: {host: string, accept: string}\n"
                       "  - {name: rest, type: variant, from: \"*\"}\n";
    rig on, off;
    rig_open_pair(&on, &off, yaml);
    shred_both(&on, &off, batch1, sizeof batch1 / sizeof batch1[0], 1);
    const uint64_t first = on.sh->direct_objects;
    sh_shredder_new_batch(on.sh);
    sh_shredder_new_batch(off.sh);
    shred_both(&on, &off, batch2, sizeof batch2 / sizeof batch2[0], 1);
    assert_true(first >= 6);
    assert_true(on.sh->direct_objects >= first + 3);
    assert_int_equal(off.sh->direct_objects, 0);
    expect_same_file(&on, &off);
    rig_close(&on);
    rig_close(&off);
#undef LONGK
}

/* A struct column's object, nested struct included, read by the
 * schema-directed parse (shred_direct.c's direct_struct) writes the
 * levels and values the events write, and anything it does not take
 * (an unknown, repeated or escaped key, whitespace, a null or absence of
 * a required field, a wrong type) leaves the column as the events leave
 * it: failed, the value in rest. Each line twice (the second with warm
 * predictions), fast paths on and off; the levels are spelled out so a
 * wrong level fails even if both paths agreed. */
static void test_shred_direct_struct_matches_event_path(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "{\"c\":{\"ip\":\"a\",\"port\":1,\"g\":{\"country\":\"GB\",\"city\":\"L\"},\"id\":1}}",
        "{\"c\":{\"id\":2,\"g\":{\"city\":\"P\"}}}",
        "{\"c\":{\"id\":3,\"g\":null,\"ip\":null}}",
        "{\"c\":{\"id\":4,\"zip\":1}}",
        "{\"c\":{\"ip\":\"x\"}}",
        "{\"c\":{}}",
        "{\"c\":{\"id\":7,\"ip\":\"a\",\"ip\":\"b\"}}",
        "{\"c\":{\"id\":8,\"g\":{\"country\":\"G\\u0042\"}}}",
        "{\"c\":{\"id\":9},\"c\":{\"id\":10,\"ip\":\"z\"}}",
        "{\"c\":{\"id\":11, \"port\":5}}",
        "{\"c\":null}",
        "{\"c\":{\"id\":12,\"g\":{}}}",
        "{\"c\":{\"id\":null}}",
        "{\"c\":{\"id\":14,\"g\":\"GB\",\"port\":\"5\"}}",
    };
    const char *yaml = "columns:\n"
                       "  - name: c\n"
                       "    type: struct\n"
                       "    fields:\n"
                       "      - {name: ip, type: string}\n"
                       "      - {name: port, type: int32}\n"
                       "      - name: g\n"
                       "        type: struct\n"
                       "        fields: [{name: country, type: string}, {name: city, type: string}]\n"
                       "      - {name: id, type: int64, required: true}\n"
                       "  - {name: rest, type: variant, from: \"*\"}\n";
    rig on, off;
    rig_open_pair(&on, &off, yaml);
    shred_both(&on, &off, lines, sizeof lines / sizeof lines[0], 2);
    assert_int_equal(on.sh->direct_objects, 9);
    assert_int_equal(off.sh->direct_objects, 0);
    static const char *const ip = "2 2 1 1 1 1 0 0 0 0 0 0 0 0 1 1 2 2 1 1 0 0 1 1 0 0 0 0";
    static const char *const country = "3 3 2 2 1 1 0 0 0 0 0 0 0 0 3 3 1 1 1 1 0 0 2 2 0 0 0 0";
    expect_levels(&on, "c.ip", ip);
    expect_levels(&off, "c.ip", ip);
    expect_levels(&on, "c.g.country", country);
    expect_levels(&off, "c.g.country", country);
    expect_levels(&on, "c.id", "1 1 1 1 1 1 0 0 0 0 0 0 0 0 1 1 1 1 1 1 0 0 1 1 0 0 0 0");
    assert_int_equal(i64_at(&on, "c.id", 0), 1);
    expect_variant(&on, "rest", 6, "{\"c\":{\"id\":4,\"zip\":1}}");
    expect_same_file(&on, &off);
    rig_close(&on);
    rig_close(&off);
}

/* from: _index takes the index sh_set_index gave for the next line (a
 * bulk action's, beside the record), null without one; a record's own
 * "_index" field is just a field (here: in the rest). The built-in
 * default_index schema has such a column. */
static void test_shred_index_column_from_set_index(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n"
                 "  - {name: ix, type: string, from: _index}\n"
                 "  - {name: rest, type: variant, from: \"*\"}\n");
    sh_set_index(r.sh, "logs-x", 6);
    assert_int_equal(shred(&r, "{\"a\": 1, \"_index\": \"inner\"}"), 0);
    assert_int_equal(shred(&r, "{\"a\": 2}"), 0);     /* no index set for this one */
    expect_levels(&r, "ix", "1 0");
    const uint8_t *p;
    size_t n;
    bytes_at(&r, "ix", 0, &p, &n);
    assert_int_equal(n, 6);
    assert_memory_equal(p, "logs-x", 6);
    expect_variant(&r, "rest", 0, "{\"_index\":\"inner\",\"a\":1}");
    rig_close(&r);
    sc_schema *spec = NULL;
    pq_err err = {0};
    const char *bad = "columns:\n  - {name: ix, type: int32, from: _index}\n";
    assert_int_not_equal(sc_schema_load_buffer("t.yaml", bad, strlen(bad), &spec, &err), 0);
    assert_non_null(strstr(err.msg, "from: _index"));
    assert_int_equal(sc_schema_default_index(&spec, &err), 0);
    assert_int_equal(spec->n_columns, 3);
    assert_string_equal(spec->columns[2].name, "_index");
    assert_int_equal(spec->columns[2].source, SC_SRC_INDEX);
    sc_schema_free(spec);
}

/* Dremel levels for `optional list<optional int64>`: max def 3, max rep 1. */
static void test_shred_list_levels_distinguish_null_empty_and_null_element(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: l, type: \"list<int64>\"}\n");
    assert_int_equal(shred(&r, "{\"l\": [1, null, 3]}"), 0);
    assert_int_equal(shred(&r, "{\"l\": []}"), 0);
    assert_int_equal(shred(&r, "{\"l\": null}"), 0);
    assert_int_equal(shred(&r, "{}"), 0);
    expect_levels(&r, "l.list.element", "3/0 2/1 3/1 1/0 0/0 0/0");
    assert_int_equal(i64_at(&r, "l.list.element", 1), 3);
    rig_close(&r);
}

static void test_shred_struct_with_list_and_map(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n"
                 "  - name: u\n"
                 "    type: struct\n"
                 "    fields:\n"
                 "      - {name: id, type: int64, required: true}\n"
                 "      - {name: tags, type: \"list<string>\"}\n"
                 "  - {name: m, type: \"map<string,int32>\"}\n");
    assert_int_equal(shred(&r, "{\"u\": {\"tags\": [\"a\", \"b\"], \"id\": 5}, \"m\": {\"k\": 1, \"j\": null}}"), 0);
    assert_int_equal(shred(&r, "{\"u\": {\"id\": 6}, \"m\": {}}"), 0);
    expect_levels(&r, "u.id", "1 1");
    expect_levels(&r, "u.tags.list.element", "4/0 4/1 1/0"); /* absent tags: null, not empty */
    expect_levels(&r, "m.key_value.key", "2/0 2/1 1/0");
    expect_levels(&r, "m.key_value.value", "3/0 2/1 1/0");
    assert_int_equal(i64_at(&r, "u.id", 1), 6);
    rig_close(&r);
}

static void test_shred_rest_keeps_unmatched_fields_with_their_nesting(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n"
                 "  - {name: status, type: int32, from: http.status}\n"
                 "  - {name: rest, type: variant, from: \"*\"}\n");
    assert_int_equal(shred(&r, "{\"a\": 1, \"http\": {\"status\": 200, \"x\": [true]}}"), 0);
    assert_int_equal(shred(&r, "{\"http\": {\"status\": 404}}"), 0);
    assert_int_equal(i64_at(&r, "status", 0), 200);
    expect_variant(&r, "rest", 0, "{\"a\":1,\"http\":{\"x\":[true]}}");
    expect_variant(&r, "rest", 1, "{}");
    rig_close(&r);
}

/* A value that does not fit its column goes whole to the rest column and
 * the typed column gets null (DESIGN.md "Bad input and lost data"). */
static void test_shred_mismatch_goes_to_rest(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n"
                 "  - {name: a, type: int32}\n"
                 "  - {name: l, type: \"list<int64>\"}\n"
                 "  - {name: rest, type: variant, from: \"*\"}\n");
    assert_int_equal(shred(&r, "{\"a\": \"seven\", \"l\": [1, {\"x\": \"y\"}, 3]}"), 0);
    expect_levels(&r, "a", "0");
    expect_levels(&r, "l.list.element", "0/0");
    expect_variant(&r, "rest", 0, "{\"a\":\"seven\",\"l\":[1,{\"x\":\"y\"},3]}");
    rig_close(&r);
}

static void test_shred_rejects_without_rest_and_leaves_no_trace(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n"
                 "  - {name: a, type: int32}\n"
                 "  - {name: l, type: \"list<int64>\"}\n"
                 "  - {name: id, type: string, required: true}\n");
    assert_int_equal(shred(&r, "{\"id\": \"1\", \"l\": [1, 2]}"), 0);
    assert_int_equal(shred(&r, "{\"id\": \"2\", \"l\": [1, \"x\"]}"), SH_REJECTED);
    assert_non_null(strstr(r.err.msg, "'l'"));
    assert_non_null(strstr(r.err.msg, "(wrong type)")); /* the reason, not just the field */
    assert_int_equal(shred(&r, "{\"a\": 1}"), SH_REJECTED);
    assert_non_null(strstr(r.err.msg, "missing required field 'id'"));
    assert_int_equal(shred(&r, "{\"id\": \"3\", \"a\": 1.5}"), SH_REJECTED);
    assert_int_equal(shred(&r, "{\"id\": \"4\","), SH_REJECTED);
    assert_non_null(strstr(r.err.msg, "invalid JSON"));
    assert_int_equal(shred(&r, "[1, 2]"), SH_REJECTED);
    assert_int_equal(pq_writer_rows_buffered(r.w), 1);
    /* Each reject has a code as well as a message (sh_last_reject). */
    static const struct { const char *line; sh_reject why; } codes[] = {
        {"", SH_REJECT_EMPTY},
        {"{\"id\": \"4\",", SH_REJECT_INVALID_JSON},
        {"[1, 2]", SH_REJECT_NOT_OBJECT},
        {"{\"id\": \"5\", \"l\": [1, \"x\"]}", SH_REJECT_NO_FIT},
        {"{\"a\": 1}", SH_REJECT_MISSING_REQUIRED},
        {"{\"id\": 6}", SH_REJECT_NO_FIT},                    /* wrong type */
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        assert_int_equal(shred(&r, codes[i].line), SH_REJECTED);
        assert_int_equal(sh_last_reject(r.sh), codes[i].why);
    }
    assert_int_equal(shred(&r, "{\"id\": \"7\"}"), 0);
    assert_int_equal(sh_last_reject(r.sh), SH_REJECT_NONE);
    assert_int_equal(pq_writer_rows_buffered(r.w), 2);
    expect_levels(&r, "l.list.element", "3/0 3/1 0/0");
    expect_levels(&r, "a", "0 0");
    rig_close(&r);
}

static void test_shred_duplicate_key_last_wins(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: l, type: \"list<int64>\"}\n  - {name: a, type: int64}\n");
    assert_int_equal(shred(&r, "{\"a\": 1, \"l\": [1, 2], \"a\": 2, \"l\": [9]}"), 0);
    expect_levels(&r, "l.list.element", "3/0");
    assert_int_equal(i64_at(&r, "l.list.element", 0), 9);
    assert_int_equal(i64_at(&r, "a", 0), 2);
    rig_close(&r);
}

static void test_shred_default_schema_keeps_whole_record(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, NULL);
    assert_int_equal(shred(&r, "{\"b\": [1, 2.5, \"x\"], \"a\": {\"k\": null}}"), 0);
    assert_int_equal(shred(&r, "{}"), 0);
    expect_variant(&r, "event", 0, "{\"a\":{\"k\":null},\"b\":[1,2.5,\"x\"]}");
    expect_variant(&r, "event", 1, "{}");
    assert_int_equal(i64_at(&r, "_ingest_ts", 1), 1700000000000000LL);
    rig_close(&r);
}

static void test_shred_json_column_keeps_value_text(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: j, type: json}\n");
    assert_int_equal(shred(&r, "{\"j\": {\"a\": [1, 2.50, \"q\\\"\"], \"b\": null}}"), 0);
    const uint8_t *p;
    size_t n;
    bytes_at(&r, "j", 0, &p, &n);
    assert_int_equal(n, strlen("{\"a\":[1,2.50,\"q\\\"\"],\"b\":null}"));
    assert_memory_equal(p, "{\"a\":[1,2.50,\"q\\\"\"],\"b\":null}", n);
    rig_close(&r);
}

/* CloudTrail's userIdentity: a struct whose fields include a variant and a
 * json value; a list of variants. Each lands with the enclosing levels. */
static void test_shred_variant_and_json_inside_struct_and_list(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n"
                 "  - name: u\n"
                 "    type: struct\n"
                 "    fields:\n"
                 "      - {name: arn, type: string}\n"
                 "      - {name: ctx, type: variant}\n"
                 "      - {name: raw, type: json}\n"
                 "  - {name: items, type: \"list<variant>\"}\n");
    assert_int_equal(shred(&r, "{\"u\": {\"ctx\": {\"a\": [1, {}]}, \"arn\": \"x\", \"raw\": [true]},"
                               " \"items\": [{\"k\": 1}, \"s\", null]}"), 0);
    assert_int_equal(shred(&r, "{\"u\": {\"ctx\": 5}}"), 0);
    expect_variant(&r, "u.ctx", 0, "{\"a\":[1,{}]}");
    expect_variant(&r, "u.ctx", 1, "5");
    expect_levels(&r, "u.ctx.metadata", "2 2");
    expect_levels(&r, "u.raw", "2 1");
    const uint8_t *p;
    size_t n;
    bytes_at(&r, "u.raw", 0, &p, &n);
    assert_int_equal(n, 6);
    assert_memory_equal(p, "[true]", 6);
    expect_levels(&r, "items.list.element.metadata", "3/0 3/1 2/1 0/0"); /* null element; no list */
    expect_variant(&r, "items.list.element", 0, "{\"k\":1}");
    expect_variant(&r, "items.list.element", 1, "\"s\"");
    rig_close(&r);
}

/* GeoJSON becomes WKB; a malformed geometry goes whole to the rest column. */
static void test_shred_geometry_from_geojson(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n"
                 "  - {name: loc, type: geometry}\n"
                 "  - {name: path, type: \"list<geography>\"}\n"
                 "  - {name: rest, type: variant, from: \"*\"}\n");
    assert_int_equal(shred(&r, "{\"loc\": {\"coordinates\": [1.5, -2], \"type\": \"Point\"},"
                               " \"path\": [{\"type\": \"Point\", \"coordinates\": [3, 4]}, null]}"), 0);
    assert_int_equal(shred(&r, "{\"loc\": {\"type\": \"Polygon\", \"coordinates\": [[[0,0],[1,0],[0,0]]]}}"), 0);
    const uint8_t *p;
    size_t n;
    bytes_at(&r, "loc", 0, &p, &n);
    const uint8_t point[21] = {0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F,
                               0, 0, 0, 0, 0, 0, 0, 0xC0};
    assert_int_equal(n, 21);
    assert_memory_equal(p, point, 21);
    expect_levels(&r, "loc", "1 0");                    /* unclosed ring: null here */
    expect_levels(&r, "path.list.element", "3/0 2/1 0/0");
    expect_variant(&r, "rest", 1, "{\"loc\":{\"coordinates\":[[[0,0],[1,0],[0,0]]],\"type\":\"Polygon\"}}");
    rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shred_typed_scalars_and_missing_fields),
        cmocka_unit_test(test_shred_list_levels_distinguish_null_empty_and_null_element),
        cmocka_unit_test(test_shred_struct_with_list_and_map),
        cmocka_unit_test(test_shred_direct_struct_matches_event_path),
        cmocka_unit_test(test_shred_rest_keeps_unmatched_fields_with_their_nesting),
        cmocka_unit_test(test_shred_mismatch_goes_to_rest),
        cmocka_unit_test(test_shred_rejects_without_rest_and_leaves_no_trace),
        cmocka_unit_test(test_shred_duplicate_key_last_wins),
        cmocka_unit_test(test_shred_default_schema_keeps_whole_record),
        cmocka_unit_test(test_shred_json_column_keeps_value_text),
        cmocka_unit_test(test_shred_variant_and_json_inside_struct_and_list),
        cmocka_unit_test(test_shred_geometry_from_geojson),
        cmocka_unit_test(test_shred_index_column_from_set_index),
        cmocka_unit_test(test_shred_direct_numbers_match_event_path),
        cmocka_unit_test(test_shred_direct_integers_match_event_path),
        cmocka_unit_test(test_shred_direct_variant_object_matches_event_path),
        cmocka_unit_test(test_shred_direct_variant_key_cache_matches_event_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
