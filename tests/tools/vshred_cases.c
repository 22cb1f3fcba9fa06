/* vshred_cases.c - writes one parqd Parquet file per valid parquet-testing
 * shredded_variant case (testdata README 2b), for other readers to check
 * our shredding (tests/scripts/test_vshred_duckdb.sh).
 *
 *     vshred_cases OUT_DIR [CASE_DIR]      (default: under $PQ_TESTDATA, testdata.h)
 *
 * For case NNN: OUT_DIR/case-NNN.parquet with `id int32 required` (the row
 * number) and `var`, a Variant column with the case file's shredding
 * layout, holding the case's expected Variants (.variant.bin) written by
 * vs_write; and OUT_DIR/case-NNN.expect.json:
 *     {"case": NNN, "test": "...", "rows": [
 *        {"id": 0, "json": <canonical JSON (variant_read.h) or null>,
 *         "types": <the same tree with each primitive's Variant type name>}]}
 * The layout comes from the case file's footer as schema-language YAML, as
 * test_vshred.c does (a `value` column is always present: colspec lays one
 * out even where a case omits it). INVALID and error cases are skipped.
 * Prints one line per file and `N written, M failed`; exit 1 on failure. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colspec.h"
#include "pqfile.h"
#include "variant_read.h"
#include "testdata.h"
#include "vshred.h"

/* ---- the case file's layout as schema-language YAML ----------------------- */

static size_t skip_element(const pqf_file *f, size_t i)
{
    int64_t kids = tr_field_int(pqf_schema_at(f, i), 5, 0);
    i++;
    for (int64_t k = 0; k < kids; k++)
        i = skip_element(f, i);
    return i;
}

static size_t child(const pqf_file *f, size_t g, const char *name)
{
    int64_t kids = tr_field_int(pqf_schema_at(f, g), 5, 0);
    size_t i = g + 1;
    for (int64_t k = 0; k < kids; k++) {
        size_t len;
        const uint8_t *p = tr_field_bin(pqf_schema_at(f, i), 4, &len);
        if (p && len == strlen(name) && memcmp(p, name, len) == 0)
            return i;
        i = skip_element(f, i);
    }
    return 0;
}

static const char *unit_of(const tr_node *u)
{
    return tr_has(u, 1) ? "ms" : tr_has(u, 2) ? "us" : "ns";
}

static int prim_type(const tr_node *el, char *out, size_t cap)
{
    int type = (int)tr_field_int(el, 1, -1);
    const tr_node *lt = tr_field_struct(el, 10);
    const tr_node *dec = tr_field_struct(lt, 5), *ts = tr_field_struct(lt, 8),
                  *tm = tr_field_struct(lt, 7), *in = tr_field_struct(lt, 10);
    if (dec)
        return snprintf(out, cap, "\"decimal(%" PRId64 ",%" PRId64 ")\"", tr_field_int(dec, 2, 0),
                        tr_field_int(dec, 1, 0)) > 0 ? 0 : -1;
    switch (type) {
    case PQ_BOOLEAN: snprintf(out, cap, "bool"); return 0;
    case PQ_INT32:
        if (tr_has(lt, 6))
            snprintf(out, cap, "date");
        else
            snprintf(out, cap, "%sint%" PRId64, in && !tr_field_bool(in, 2, true) ? "u" : "",
                     in ? tr_field_int(in, 1, 32) : 32);
        return 0;
    case PQ_INT64:
        if (ts || tm)
            snprintf(out, cap, "\"%s(%s,%s)\"", ts ? "timestamp" : "time",
                     unit_of(tr_field_struct(ts ? ts : tm, 2)),
                     tr_field_bool(ts ? ts : tm, 1, false) ? "utc" : "local");
        else
            snprintf(out, cap, "%sint64", in && !tr_field_bool(in, 2, true) ? "u" : "");
        return 0;
    case PQ_FLOAT: snprintf(out, cap, "float"); return 0;
    case PQ_DOUBLE: snprintf(out, cap, "double"); return 0;
    case PQ_BYTE_ARRAY:
        snprintf(out, cap, tr_has(lt, 1) || tr_field_int(el, 6, -1) == 0 ? "string" : "binary");
        return 0;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        if (!tr_has(lt, 14))
            return -1;
        snprintf(out, cap, "uuid");
        return 0;
    default:
        return -1;
    }
}

static int shred_text(const pqf_file *f, size_t g, pq_buf *out)
{
    size_t tv = child(f, g, "typed_value");
    char b[96];
    if (tv == 0)
        return pq_buf_append(out, "variant", 7);
    const tr_node *el = pqf_schema_at(f, tv);
    if (!tr_has(el, 5))
        return prim_type(el, b, sizeof b) ? -1 : pq_buf_append(out, b, strlen(b));
    if (tr_has(tr_field_struct(el, 10), 3) || tr_field_int(el, 6, -1) == 3) { /* LIST */
        size_t list = child(f, tv, "list"), elem = list ? child(f, list, "element") : 0;
        if (elem == 0 || pq_buf_push(out, '[') || shred_text(f, elem, out))
            return -1;
        return pq_buf_push(out, ']');
    }
    int rc = pq_buf_push(out, '{');
    int64_t kids = tr_field_int(el, 5, 0);
    size_t i = tv + 1;
    for (int64_t k = 0; rc == 0 && k < kids; k++) {
        size_t len;
        const uint8_t *name = tr_field_bin(pqf_schema_at(f, i), 4, &len);
        rc = k ? pq_buf_append(out, ", ", 2) : 0;
        rc = rc ? rc : pq_buf_push(out, '"');
        rc = rc ? rc : pq_buf_append(out, name, len);
        rc = rc ? rc : pq_buf_append(out, "\": ", 3);
        rc = rc ? rc : shred_text(f, i, out);
        i = skip_element(f, i);
    }
    return rc ? rc : pq_buf_push(out, '}');
}

/* id is our row number, not the case's id column (the footer is all this
 * needs to read). */
static int case_yaml(const pqf_file *f, pq_buf *out)
{
    size_t var = child(f, 0, "var");
    const char *head = "columns:\n  - {name: id, type: int32, required: true}\n"
                       "  - name: var\n    type: variant\n";
    if (var == 0)
        return -1;
    int rc = pq_buf_append(out, head, strlen(head));
    if (tr_field_int(pqf_schema_at(f, var), 3, -1) == PQ_REQUIRED)
        rc = rc ? rc : pq_buf_append(out, "    required: true\n", 19);
    if (child(f, var, "typed_value") != 0) {
        rc = rc ? rc : pq_buf_append(out, "    shred: ", 11);
        rc = rc ? rc : shred_text(f, var, out);
        rc = rc ? rc : pq_buf_push(out, '\n');
    }
    return rc ? rc : pq_buf_push(out, 0);
}

/* ---- expectations ---------------------------------------------------------------- */

static const char *type_name(int t)
{
    switch (t) {
    case VR_NULL: return "null";
    case VR_TRUE: case VR_FALSE: return "boolean";
    case VR_INT8: return "int8";
    case VR_INT16: return "int16";
    case VR_INT32: return "int32";
    case VR_INT64: return "int64";
    case VR_DOUBLE: return "double";
    case VR_DECIMAL4: return "decimal4";
    case VR_DECIMAL8: return "decimal8";
    case VR_DECIMAL16: return "decimal16";
    case VR_DATE: return "date";
    case VR_TIMESTAMP_MICROS: return "timestamptz_us";
    case VR_TIMESTAMP_NTZ_MICROS: return "timestampntz_us";
    case VR_FLOAT: return "float";
    case VR_BINARY: return "binary";
    case VR_STRING: return "string";
    case VR_TIME_NTZ_MICROS: return "time_us";
    case VR_TIMESTAMP_NANOS: return "timestamptz_ns";
    case VR_TIMESTAMP_NTZ_NANOS: return "timestampntz_ns";
    case VR_UUID: return "uuid";
    default: return "?";
    }
}

static int json_str(pq_buf *out, const char *s, size_t n)
{
    int rc = pq_buf_push(out, '"');
    for (size_t i = 0; rc == 0 && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\' || c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            rc = pq_buf_append(out, esc, 6);
        } else {
            rc = pq_buf_push(out, c);
        }
    }
    return rc ? rc : pq_buf_push(out, '"');
}

/* The value's shape with a type name at every primitive; object keys in
 * the encoding's (byte-wise) order, as in the canonical JSON. */
static int type_tree(pq_buf *out, const vr_meta *m, const uint8_t *v, size_t len, pq_err *err)
{
    int t = vr_value_type(v, len);
    if (t < 0)
        return pq_err_set(err, t, "bad value");
    if (t != VR_OBJECT && t != VR_ARRAY)
        return json_str(out, type_name(t), strlen(type_name(t)));
    vr_container c;
    int rc = vr_container_open(&c, v, len, err);
    rc = rc ? rc : pq_buf_push(out, t == VR_OBJECT ? '{' : '[');
    for (uint32_t i = 0; rc == 0 && i < c.n; i++) {
        uint32_t id;
        const uint8_t *fv;
        size_t fl;
        vr_str key;
        rc = i ? pq_buf_push(out, ',') : 0;
        rc = rc ? rc : vr_container_get(&c, i, &id, &fv, &fl, err);
        if (rc == 0 && t == VR_OBJECT) {
            rc = vr_meta_key(m, id, &key, err);
            rc = rc ? rc : json_str(out, key.s, key.len);
            rc = rc ? rc : pq_buf_push(out, ':');
        }
        rc = rc ? rc : type_tree(out, m, fv, fl, err);
    }
    return rc ? rc : pq_buf_push(out, t == VR_OBJECT ? '}' : ']');
}

/* ---- one case ------------------------------------------------------------------- */

static int read_bin(const char *path, pq_buf *out)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return 1; /* absent: a null Variant */
    uint8_t b[4096];
    size_t n;
    int rc = 0;
    pq_buf_reset(out);
    while (rc == 0 && (n = fread(b, 1, sizeof b, fp)) > 0)
        rc = pq_buf_append(out, b, n);
    fclose(fp);
    return rc;
}

static int write_case(const char *case_dir, const char *out_dir, int number, const char *test,
                      const char *file, pq_err *err)
{
    char path[1024], stem[256];
    pqf_file f;
    sc_schema *spec = NULL;
    pq_schema *ps = NULL;
    pq_writer *w = NULL;
    pq_buf yaml, bin, expect;
    vs_state st;
    int fd = -1, rc;
    pq_buf_init(&yaml);
    pq_buf_init(&bin);
    pq_buf_init(&expect);
    vs_state_init(&st);
    snprintf(path, sizeof path, "%s/%s", case_dir, file);
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(file) - strlen(".parquet")), file);
    if ((rc = pqf_open(&f, path, err)) != 0)
        goto done_nofile;
    size_t rows = 0;
    for (size_t rg = 0; rg < pqf_num_row_groups(&f); rg++)
        rows += (size_t)tr_field_int(pqf_row_group(&f, rg), 3, 0);
    if (case_yaml(&f, &yaml) != 0) {
        rc = pq_err_set(err, PQ_EINVAL, "%s: layout has no schema-language form", file);
        goto done;
    }
    rc = sc_schema_load_buffer(file, yaml.data, yaml.len - 1, &spec, err);
    rc = rc ? rc : sc_build_parquet_schema(spec, &ps, err);
    if (rc != 0)
        goto done;
    snprintf(path, sizeof path, "%s/case-%03d.parquet", out_dir, number);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        rc = pq_err_set(err, PQ_EIO, "%s: cannot create", path);
        goto done;
    }
    if ((rc = pq_writer_open(&w, ps, NULL, pq_sink_fd(&fd), err)) != 0)
        goto done;
    const sc_type *t = spec->columns[1].type;
    char head[512];
    snprintf(head, sizeof head, "{\"case\": %d, \"test\": \"%s\", \"rows\": [", number, test);
    rc = pq_buf_append(&expect, head, strlen(head));
    for (size_t r = 0; rc == 0 && r < rows; r++) {
        snprintf(path, sizeof path, "%s/%s_row-%zu.variant.bin", case_dir, stem, r);
        int absent = read_bin(path, &bin);
        rc = pq_column_put_i32(pq_writer_column(w, (size_t)spec->columns[0].type->leaf), 0,
                               (int32_t)r);
        snprintf(head, sizeof head, "%s\n  {\"id\": %zu, \"json\": ", r ? "," : "", r);
        rc = rc ? rc : pq_buf_append(&expect, head, strlen(head));
        if (rc == 0 && absent == 1) {
            for (int l = t->leaf; rc == 0 && l < t->leaf + t->n_leaves; l++)
                rc = pq_column_put_null(pq_writer_column(w, (size_t)l), 0, (uint16_t)(t->def - 1));
            rc = rc ? rc : pq_buf_append(&expect, "null, \"types\": null}", 21);
        } else if (rc == 0) {
            vr_meta m;
            rc = absent ? absent : vr_meta_open(&m, bin.data, bin.len, err);
            size_t ml = rc ? 0 : (size_t)(m.bytes - bin.data) + m.bytes_len;
            vr_variant v = {bin.data, ml, bin.data + ml, bin.len - ml};
            rc = rc ? rc : vs_write(&st, pq_writer_rowgroup(w), t, &v, 0, err);
            pq_buf json;
            pq_buf_init(&json);
            rc = rc ? rc : vread_to_json(&json, v.metadata, v.metadata_len, v.value, v.value_len,
                                         err);
            rc = rc ? rc : json_str(&expect, (const char *)json.data, json.len);
            pq_buf_free(&json);
            rc = rc ? rc : pq_buf_append(&expect, ", \"types\": ", 11);
            rc = rc ? rc : type_tree(&expect, &m, v.value, v.value_len, err);
            rc = rc ? rc : pq_buf_push(&expect, '}');
        }
        rc = rc ? rc : pq_writer_end_row(w, err);
    }
    rc = rc ? rc : pq_buf_append(&expect, "\n]}\n", 4);
    rc = rc ? rc : pq_writer_close(w, err);
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/case-%03d.expect.json", out_dir, number);
        FILE *fp = fopen(path, "w");
        if (fp == NULL || fwrite(expect.data, 1, expect.len, fp) != expect.len)
            rc = pq_err_set(err, PQ_EIO, "%s: cannot write", path);
        if (fp && fclose(fp) != 0 && rc == 0)
            rc = pq_err_set(err, PQ_EIO, "%s: cannot write", path);
    }
done:
    pq_writer_destroy(w);
    pqf_close(&f);
done_nofile:
    if (fd >= 0)
        close(fd);
    pq_schema_destroy(ps);
    sc_schema_free(spec);
    vs_state_free(&st);
    pq_buf_free(&yaml);
    pq_buf_free(&bin);
    pq_buf_free(&expect);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: vshred_cases OUT_DIR [CASE_DIR]\n");
        return 2;
    }
    const char *out_dir = argv[1];
    const char *case_dir = argc > 2 ? argv[2] : pqt_testdata_path("parquet-testing/shredded_variant", NULL);
    char path[1024], line[8192];
    snprintf(path, sizeof path, "%s/case_list.tsv", case_dir);
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        fprintf(stderr, "%s: cannot open\n", path);
        return 2;
    }
    int written = 0, failed = 0;
    if (fgets(line, sizeof line, fp) == NULL) /* header */
        line[0] = 0;
    while (fgets(line, sizeof line, fp)) {
        char *save = NULL, *num = strtok_r(line, "\t\n", &save);
        char *kind = strtok_r(NULL, "\t\n", &save), *test = strtok_r(NULL, "\t\n", &save);
        char *file = strtok_r(NULL, "\t\n", &save);
        if (!num || !kind || !test || !file || strstr(file, "INVALID") ||
            (strcmp(kind, "single-row") != 0 && strcmp(kind, "multi-row") != 0))
            continue;
        pq_err err = {0};
        if (write_case(case_dir, out_dir, atoi(num), test, file, &err) != 0) {
            printf("FAIL case-%03d: %s\n", atoi(num), err.msg);
            failed++;
        } else {
            printf("wrote case-%03d.parquet (%s)\n", atoi(num), test);
            written++;
        }
    }
    fclose(fp);
    printf("%d written, %d failed\n", written, failed);
    return failed ? 1 : 0;
}
