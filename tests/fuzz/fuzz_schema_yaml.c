/* fuzz_schema_yaml.c - libFuzzer target for the schema language
 * (schema/colspec/, schema/yaml/yamlpos.c).
 *
 * The input is a schema YAML document, loaded from memory. A schema that
 * loads must also build into a pq_schema whose leaves agree with the
 * layout computed at load time (sc_build_parquet_schema checks that), and
 * print; validation that lets through something the writer rejects is a
 * bug. A document that fails must say where: "fuzz.yaml:LINE:COL: ...". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "colspec.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_schema_yaml: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

static void check_error(int rc, const pq_err *err)
{
    CHECK(rc < 0 && err->code == rc);
    if (rc == PQ_ENOMEM)
        return;
    CHECK(rc == PQ_EINVAL);
    unsigned long line = 0, col = 0;
    int used = 0;
    CHECK(sscanf(err->msg, "fuzz.yaml:%lu:%lu: %n", &line, &col, &used) == 2);
    CHECK(used > 0 && line >= 1 && col >= 1);
}

static void check_schema(const sc_schema *s)
{
    pq_schema *ps = NULL;
    pq_err err = {0};
    int rc = sc_build_parquet_schema(s, &ps, &err);
    if (rc != 0)
        fprintf(stderr, "fuzz_schema_yaml: loaded schema does not build: %s\n", err.msg);
    CHECK(rc == 0);
    CHECK(pq_schema_num_leaves(ps) == s->n_leaves);
    pq_buf b;
    pq_buf_init(&b);
    CHECK(pq_schema_print(ps, &b) == 0 && b.len > 0);
    pq_buf_free(&b);
    for (size_t i = 0; i < s->n_columns; i++) {
        char t[128];
        CHECK(sc_type_format(s->columns[i].type, t, sizeof t) > 0);
    }
    for (size_t i = 0; i < s->n_leaves; i++)
        CHECK(s->leaves[i].column != NULL && s->leaves[i].path != NULL);
    CHECK(s->rest < 0 || s->columns[s->rest].source == SC_SRC_REST);
    pq_schema_destroy(ps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A heap copy of exactly size bytes, so ASan catches any over-read. */
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    sc_schema *s = NULL;
    pq_err err = {0};
    int rc = sc_schema_load_buffer("fuzz.yaml", buf, size, &s, &err);
    if (rc == 0) {
        CHECK(s != NULL);
        check_schema(s);
        sc_schema_free(s);
    } else {
        CHECK(s == NULL);
        check_error(rc, &err);
    }
    free(buf);
    return 0;
}
