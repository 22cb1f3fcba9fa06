/* fuzz_variant.c - libFuzzer target for the Variant builder
 * (schema/variant/, VariantEncoding.md).
 *
 * The input is a program of builder operations (random trees, keys from a
 * small pool so duplicates are common, raw keys and strings that may be
 * invalid UTF-8, deliberate misuse). Each operation is applied to the
 * builder and to a reference tree; the harness predicts every return code
 * (0, PQ_ESTATE, PQ_EINVAL, PQ_ELIMIT) from its own model of the state.
 * At the end (and at each "next record" op) the record must finish, pass
 * canonical validation in the test decoder, and decode to exactly the
 * reference tree's canonical JSON (sorted keys, last duplicate wins).
 * Inputs starting with 'N' instead feed the rest to vr_json_number and
 * check the number rule (fuzz_numrule.h): the Variant type schema/variant/vnumber.c
 * promises, the exact value (a double: strtod's), and never a decimal
 * whose scale is not below its implied precision.
 *
 * The fuzz build links only pq_schema and pq_writer, so the test decoder
 * is compiled in here from its source. */
#include "../support/variant_read.c"
#include "fuzz_numrule.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#define FZ_MAX_DEPTH 12

typedef struct fz {
    const uint8_t *p;
    size_t n, i;
    vr_builder b;
    vread_node *root;
    vread_node *stack[FZ_MAX_DEPTH + 1];
    size_t depth;
    const char *key;            /* pending key (objects) */
    size_t key_len;
    char key_buf[32];
} fz;

static const char *const fz_keys[] = {"a", "b", "", "id", "a.b", "\xc3\xa9", "zz", "A"};

static uint8_t fz_byte(fz *f) { return f->i < f->n ? f->p[f->i++] : 0; }

static uint64_t fz_u64(fz *f)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v = v << 8 | fz_byte(f);
    return v;
}

static size_t fz_bytes(fz *f, char *out, size_t max)
{
    size_t len = fz_byte(f) % (max + 1), k = 0;
    for (; k < len && f->i < f->n; k++)
        out[k] = (char)f->p[f->i++];
    return k;
}

static void fz_check(int got, int want, const char *op)
{
    if (got != want) {
        fprintf(stderr, "%s: returned %d, model expects %d\n", op, got, want);
        abort();
    }
}

/* Where a new value would go, per the model: 0 or PQ_ESTATE. */
static int fz_value_state(const fz *f)
{
    if (f->depth == 0)
        return f->root ? PQ_ESTATE : 0;
    const vread_node *top = f->stack[f->depth - 1];
    return top->kind == VR_OBJECT && f->key == NULL ? PQ_ESTATE : 0;
}

static void fz_attach(fz *f, vread_node *n)
{
    if (f->depth == 0) {
        f->root = n;
        return;
    }
    vread_node *top = f->stack[f->depth - 1];
    if (vread_add(top, f->key ? f->key : "", f->key ? f->key_len : 0, n) != 0)
        abort();
    f->key = NULL;
}

/* A scalar: its builder call already made, got = its return code. */
static void fz_scalar(fz *f, int got, int pre, vread_node *n, const char *op)
{
    int want = pre != 0 ? pre : fz_value_state(f);
    fz_check(got, want, op);
    if (got == 0)
        fz_attach(f, n);
    else
        vread_free(n);
}

static void fz_begin(fz *f, bool obj)
{
    int want = f->depth >= FZ_MAX_DEPTH ? PQ_ELIMIT : fz_value_state(f);
    fz_check(obj ? vr_begin_object(&f->b) : vr_begin_array(&f->b), want, "begin");
    if (want != 0)
        return;
    vread_node *n = vread_new(obj ? VR_OBJECT : VR_ARRAY);
    fz_attach(f, n);
    f->stack[f->depth++] = n;
}

static void fz_end(fz *f, bool obj)
{
    const vread_node *top = f->depth ? f->stack[f->depth - 1] : NULL;
    bool ok = top && (top->kind == VR_OBJECT) == obj && !(obj && f->key);
    fz_check(obj ? vr_end_object(&f->b) : vr_end_array(&f->b), ok ? 0 : PQ_ESTATE, "end");
    if (ok)
        f->depth--;
}

static void fz_key(fz *f)
{
    uint8_t sel = fz_byte(f);
    char raw[16];
    const char *k = fz_keys[sel % 8];
    size_t len = strlen(k);
    if (sel >= 224) {                   /* raw bytes, maybe not UTF-8 */
        len = fz_bytes(f, raw, 12);
        k = raw;
    }
    const vread_node *top = f->depth ? f->stack[f->depth - 1] : NULL;
    int want = top == NULL || top->kind != VR_OBJECT || f->key ? PQ_ESTATE
               : !vd_utf8((const uint8_t *)k, len)         ? PQ_EINVAL : 0;
    fz_check(vr_key(&f->b, k, len), want, "key");
    if (want == 0) {
        memcpy(f->key_buf, k, len);     /* raw is gone after return */
        f->key = f->key_buf;
        f->key_len = len;
    }
}

static void fz_string(fz *f, bool binary)
{
    char buf[80];
    size_t len = fz_bytes(f, buf, sizeof buf);
    if (binary) {
        fz_scalar(f, vr_binary(&f->b, buf, len), 0, vread_new_binary(buf, len), "binary");
        return;
    }
    int pre = vd_utf8((const uint8_t *)buf, len) ? 0 : PQ_EINVAL;
    fz_scalar(f, vr_string(&f->b, buf, len), pre, vread_new_string(buf, len), "string");
}

static void fz_decimal(fz *f)
{
    vd_u128 u = (vd_u128)fz_u64(f) << 64 | fz_u64(f);
    u >>= fz_byte(f) % 128;
    uint32_t scale = fz_byte(f) % 42;
    vr_i128 v = (vr_i128)u;
    vd_u128 mag = v < 0 ? -(vd_u128)v : (vd_u128)v;
    unsigned digits = vd_digits(mag);
    if ((fz_byte(f) & 1) && scale >= digits)    /* half the time, a valid scale */
        scale = digits - 1;
    /* a scale not below the implied precision is refused: readers crash on
     * (DuckDB 1.5.6: SIGFPE) or misprint (".5") such decimals */
    int pre = scale > 38 || digits > 38 || (scale > 0 && scale >= digits) ? PQ_EINVAL : 0;
    fz_scalar(f, vr_decimal(&f->b, v, scale), pre, vread_new_decimal(v, scale), "decimal");
}

static void fz_temporal(fz *f)
{
    static const vr_type types[] = {VR_DATE, VR_TIME_NTZ_MICROS, VR_TIMESTAMP_MICROS,
                                    VR_TIMESTAMP_NTZ_MICROS, VR_TIMESTAMP_NANOS,
                                    VR_TIMESTAMP_NTZ_NANOS};
    vr_type t = types[fz_byte(f) % 6];
    int64_t v = (int64_t)fz_u64(f);
    int rc;
    if (t == VR_DATE)
        v = (int32_t)v, rc = vr_date(&f->b, (int32_t)v);
    else if (t == VR_TIME_NTZ_MICROS)
        rc = vr_time(&f->b, v);
    else
        rc = vr_timestamp(&f->b, v, t >= VR_TIMESTAMP_NANOS ? VR_NANOS : VR_MICROS,
                          t == VR_TIMESTAMP_MICROS || t == VR_TIMESTAMP_NANOS);
    fz_scalar(f, rc, 0, vread_new_temporal(t, v), "temporal");
}

static void fz_number(fz *f, uint8_t op)
{
    uint64_t raw = fz_u64(f);
    if (op == 0) {
        fz_scalar(f, vr_int(&f->b, (int64_t)raw), 0, vread_new_int((int64_t)raw), "int");
    } else if (op == 1) {
        bool big = raw > INT64_MAX;
        vread_node *n = big ? vread_new_decimal((vr_i128)raw, 0) : vread_new_int((int64_t)raw);
        fz_scalar(f, vr_uint64(&f->b, raw), 0, n, "uint64");
    } else if (op == 2) {
        double d;
        memcpy(&d, &raw, 8);
        fz_scalar(f, vr_double(&f->b, d), 0, vread_new_double(d), "double");
    } else {
        float x;
        uint32_t r32 = (uint32_t)raw;
        memcpy(&x, &r32, 4);
        fz_scalar(f, vr_float(&f->b, x), 0, vread_new_float(x), "float");
    }
}

/* Drops keys "a" and "b" from the root object with the shredder helper
 * and checks the remainder is canonical with the same metadata. */
static void fz_check_without(const vr_variant *v, const vread_node *root)
{
    static const vr_str drop[] = {{"a", 1}, {"b", 1}};
    if (root->kind != VR_OBJECT)
        return;
    size_t distinct = 0, dropped = 0;
    for (size_t i = 0; i < root->n; i++) {
        bool later = false;
        for (size_t j = i + 1; j < root->n && !later; j++)
            later = root->key_lens[j] == root->key_lens[i] &&
                    memcmp(root->keys[j], root->keys[i], root->key_lens[i]) == 0;
        if (later)
            continue;
        distinct++;
        dropped += root->key_lens[i] == 1 && (root->keys[i][0] == 'a' || root->keys[i][0] == 'b');
    }
    vr_meta m;
    pq_buf out;
    size_t kept = 0;
    pq_buf_init(&out);
    if (vr_meta_open(&m, v->metadata, v->metadata_len, NULL) != 0 ||
        vr_object_append_without(&out, &m, v->value, v->value_len, drop, 2, &kept, NULL) != 0 ||
        kept != distinct - dropped ||
        vread_validate(v->metadata, v->metadata_len, out.data, out.len, VREAD_CANONICAL,
                       NULL) != 0)
        abort();
    pq_buf_free(&out);
}

/* Closes what is open, finishes, and compares with the reference tree. */
static void fz_record_end(fz *f)
{
    if (f->key != NULL)
        fz_scalar(f, vr_null(&f->b), 0, vread_new(VR_NULL), "null");
    while (f->depth > 0)
        fz_end(f, f->stack[f->depth - 1]->kind == VR_OBJECT);
    vr_variant v;
    int rc = vr_finish(&f->b, &v);
    fz_check(rc, f->root ? 0 : PQ_ESTATE, "finish");
    if (f->root != NULL) {
        pq_err err = {0};
        pq_buf got, want;
        pq_buf_init(&got);
        pq_buf_init(&want);
        if (vread_validate(v.metadata, v.metadata_len, v.value, v.value_len, VREAD_CANONICAL,
                           &err) != 0) {
            fprintf(stderr, "not canonical: %s\n", err.msg);
            abort();
        }
        if (vread_to_json(&got, v.metadata, v.metadata_len, v.value, v.value_len, &err) != 0 ||
            vread_node_json(&want, f->root) != 0 || got.len != want.len ||
            memcmp(got.data, want.data, got.len) != 0) {
            fprintf(stderr, "got  %.*s\nwant %.*s\n", (int)got.len, (const char *)got.data,
                    (int)want.len, (const char *)want.data);
            abort();
        }
        fz_check_without(&v, f->root);
        pq_buf_free(&got);
        pq_buf_free(&want);
    }
    vread_free(f->root);
    f->root = NULL;
    f->key = NULL;
    vr_builder_reset(&f->b);
}

/* ---- 'N' mode: one JSON number text ------------------------------------ */

/* RFC 8259 number grammar, written apart from vr_json_number's. */
static bool fz_grammar(const char *t, size_t n)
{
    size_t i = 0;
    i += i < n && t[i] == '-';
    if (i >= n || t[i] < '0' || t[i] > '9')
        return false;
    if (t[i++] != '0')
        while (i < n && t[i] >= '0' && t[i] <= '9')
            i++;
    if (i < n && t[i] == '.') {
        size_t s = ++i;
        while (i < n && t[i] >= '0' && t[i] <= '9')
            i++;
        if (i == s)
            return false;
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        i += i < n && (t[i] == '+' || t[i] == '-');
        size_t s = i;
        while (i < n && t[i] >= '0' && t[i] <= '9')
            i++;
        if (i == s)
            return false;
    }
    return i == n;
}

static void fz_number_text(const uint8_t *p, size_t n)
{
    char text[101];
    n = n > 100 ? 100 : n;
    memcpy(text, p, n);
    text[n] = 0;
    vr_builder b;
    vr_variant v;
    vr_builder_init(&b, NULL);
    int rc = vr_json_number(&b, text, n);
    if (rc != 0) {
        bool inf = fz_grammar(text, n) && isinf(strtod(text, NULL));
        fz_check(rc, !fz_grammar(text, n) ? PQ_EINVAL : inf ? PQ_ETYPE : 0, "json number");
        fz_check(vr_finish(&b, &v), PQ_ESTATE, "finish after refusal");
        vr_builder_free(&b);
        return;
    }
    if (!fz_grammar(text, n) || vr_finish(&b, &v) != 0 ||
        vread_validate(v.metadata, v.metadata_len, v.value, v.value_len, VREAD_CANONICAL,
                       NULL) != 0)
        abort();
    fz_check_number_rule(text, n, &v);         /* fuzz_numrule.h */
    vr_builder_free(&b);
}

/* ---- entry point ----------------------------------------------------- */

static void fz_op(fz *f, uint8_t op)
{
    switch (op % 16) {
    case 0: case 1: fz_begin(f, true); break;
    case 2: fz_begin(f, false); break;
    case 3: fz_end(f, true); break;
    case 4: fz_end(f, false); break;
    case 5: case 6: fz_key(f); break;
    case 7: fz_scalar(f, vr_null(&f->b), 0, vread_new(VR_NULL), "null"); break;
    case 8: {
        bool t = op & 16;
        fz_scalar(f, vr_bool(&f->b, t), 0, vread_new(t ? VR_TRUE : VR_FALSE), "bool");
        break;
    }
    case 9: fz_number(f, (op >> 4) & 3); break;
    case 10: fz_decimal(f); break;
    case 11: fz_string(f, false); break;
    case 12: fz_string(f, op & 16); break;
    case 13: fz_temporal(f); break;
    case 14: {
        uint8_t u[16];
        for (int k = 0; k < 16; k++)
            u[k] = fz_byte(f);
        fz_scalar(f, vr_uuid(&f->b, u), 0, vread_new_uuid(u), "uuid");
        break;
    }
    default: fz_record_end(f); break;  /* next record, same builder */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0 && data[0] == 'N') {
        fz_number_text(data + 1, size - 1);
        return 0;
    }
    static fz f;
    vr_opts o = {.max_depth = FZ_MAX_DEPTH};
    memset(&f, 0, sizeof f);
    f.p = data;
    f.n = size;
    vr_builder_init(&f.b, &o);
    while (f.i < f.n)
        fz_op(&f, fz_byte(&f));
    fz_record_end(&f);
    vr_builder_free(&f.b);
    return 0;
}
