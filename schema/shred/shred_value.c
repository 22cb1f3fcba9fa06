/* shred_value.c - the values of typed columns: scalar conversions, the
 * definition/repetition levels of LIST, MAP and struct values as their
 * events stream by, nulls and defaults, Variant columns (shredded by
 * vshred.c), and json columns, also inside lists, maps and structs. */
#include "shred_value.h"
#include "scalar.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A value that does not convert to the column's type (shred_value.h). */
#define MISMATCH SHV_MISMATCH

static int put_i(pq_column *c, const sc_type *t, uint16_t rep, int64_t v)
{
    return t->physical == PQ_INT64 ? pq_column_put_i64(c, rep, v)
                                   : pq_column_put_i32(c, rep, (int32_t)v);
}

static bool number_as_double(const json_number *n, double *d)
{
    if (n->kind == JSON_NUM_DOUBLE) {
        *d = n->d;
        return true;
    }
    /* integers must survive the round trip, or the column would lie */
    if (n->kind == JSON_NUM_INT64) {
        *d = (double)n->i;
        return *d < 9223372036854775808.0 && (int64_t)*d == n->i;
    }
    *d = (double)n->u;
    return *d < 18446744073709551616.0 && (uint64_t)*d == n->u;
}

static int put_int(pq_column *c, const sc_type *t, uint16_t rep, const json_number *num)
{
    if (t->is_signed) {
        int64_t v;
        return sk_int_signed(num, t->bit_width, &v) ? MISMATCH : put_i(c, t, rep, v);
    }
    uint64_t u;
    if (sk_int_unsigned(num, t->bit_width, &u) != 0)
        return MISMATCH;
    /* unsigned values keep their bit pattern in the signed physical type */
    return t->physical == PQ_INT64 ? pq_column_put_i64(c, rep, (int64_t)u)
                                   : pq_column_put_i32(c, rep, (int32_t)(uint32_t)u);
}

static int put_decimal(sh_shredder *s, pq_column *c, const sc_type *t, uint16_t rep, int ev,
                       const void *payload)
{
    json_int128 v;
    const sh_str *str = payload;
    int rc = ev == EV_NUMBER ? sk_decimal_from_number(payload, t->precision, t->scale, &v)
           : ev == EV_STRING ? sk_decimal_from_string(str->s, str->len, t->precision, t->scale, &v)
                             : MISMATCH;
    if (rc != 0)
        return MISMATCH;
    if (t->physical == PQ_INT32 || t->physical == PQ_INT64)
        return put_i(c, t, rep, (int64_t)v);
    uint8_t be[16];
    size_t n = sk_decimal_bytes(v, be, t->physical == PQ_FIXED_LEN_BYTE_ARRAY ? (size_t)t->type_length : 0);
    (void)s;
    return pq_column_put_bytes(c, rep, be, n);
}

static int put_temporal(pq_column *c, const sc_type *t, uint16_t rep, int ev, const void *payload)
{
    const sh_str *str = payload;
    int64_t v = 0;
    int32_t days;
    int rc = MISMATCH;
    if (t->kind == SC_DATE && ev == EV_STRING && sk_parse_date(str->s, str->len, &days) == 0)
        return pq_column_put_i32(c, rep, days);
    if (t->kind == SC_DATE && ev == EV_NUMBER)
        return sk_int_signed(payload, 32, &v) ? MISMATCH : pq_column_put_i32(c, rep, (int32_t)v);
    if (t->kind == SC_TIME && ev == EV_STRING)
        rc = sk_parse_time(str->s, str->len, t->unit, &v);
    else if (t->kind == SC_TIME && ev == EV_NUMBER)
        rc = sk_int_signed(payload, t->physical == PQ_INT32 ? 32 : 64, &v);
    else if (t->kind == SC_TIMESTAMP && ev == EV_STRING)
        rc = sk_parse_timestamp(str->s, str->len, t->unit, &v);
    else if (t->kind == SC_TIMESTAMP && ev == EV_NUMBER)
        rc = sk_epoch_number(payload, t->unit, &v);
    return rc ? MISMATCH : put_i(c, t, rep, v);
}

static int put_text(sh_shredder *s, pq_column *c, const sc_type *t, uint16_t rep, const sh_str *str)
{
    uint8_t buf[16];
    switch (t->kind) {
    case SC_STRING: case SC_ENUM:
        return pq_column_put_bytes(c, rep, str->s, str->len);
    case SC_BINARY: case SC_BSON:
        pq_buf_reset(&s->scratch);
        if (sk_base64_decode(str->s, str->len, &s->scratch) != 0)
            return MISMATCH;
        return pq_column_put_bytes(c, rep, s->scratch.data, s->scratch.len);
    case SC_UUID:
        return sk_parse_uuid(str->s, str->len, buf) ? MISMATCH : pq_column_put_bytes(c, rep, buf, 16);
    case SC_INTERVAL:
        return sk_parse_interval(str->s, str->len, buf) ? MISMATCH
                                                        : pq_column_put_bytes(c, rep, buf, 12);
    default:
        return MISMATCH;
    }
}

/* 0 when put, MISMATCH when the value is not of the column's type, < 0 on
 * a writer error. */
static int put_scalar(sh_shredder *s, const sc_type *t, uint16_t rep, int ev, const void *payload)
{
    pq_column *c = sh_leaf(s, t->leaf);
    double d;
    switch (t->kind) {
    case SC_BOOL:
        return ev == EV_BOOL ? pq_column_put_bool(c, rep, *(const bool *)payload) : MISMATCH;
    case SC_INT:
        return ev == EV_NUMBER ? put_int(c, t, rep, payload) : MISMATCH;
    case SC_DOUBLE:
        if (ev != EV_NUMBER || !number_as_double(payload, &d))
            return MISMATCH;
        return pq_column_put_double(c, rep, d);
    case SC_FLOAT:
        if (ev != EV_NUMBER || !number_as_double(payload, &d) || fabs(d) > FLT_MAX)
            return MISMATCH;
        return pq_column_put_float(c, rep, (float)d);
    case SC_FLOAT16: {
        if (ev != EV_NUMBER || !number_as_double(payload, &d) || fabs(d) > 65504.0)
            return MISMATCH;
        uint16_t h = sk_float16_from_double(d);
        uint8_t le[2] = {(uint8_t)h, (uint8_t)(h >> 8)};
        return pq_column_put_bytes(c, rep, le, 2);
    }
    case SC_DECIMAL:
        return put_decimal(s, c, t, rep, ev, payload);
    case SC_DATE: case SC_TIME: case SC_TIMESTAMP:
        return put_temporal(c, t, rep, ev, payload);
    default:
        return ev == EV_STRING ? put_text(s, c, t, rep, payload) : MISMATCH;
    }
}

/* ---- nulls, failures ---------------------------------------------------------- */

int shv_nulls(sh_shredder *s, const sc_type *t, uint16_t rep, uint16_t def)
{
    for (int l = t->leaf; l < t->leaf + t->n_leaves; l++) {
        int rc = pq_column_put_null(sh_leaf(s, l), rep, def);
        if (rc != 0)
            return rc;
    }
    return PQ_OK;
}

/* The column drops what this row put into it; its value goes to the rest
 * column once it has been read to its end (shred.c). */
void shv_fail_column(sh_shredder *s, int column, const char *why)
{
    snprintf(s->fail_why, sizeof s->fail_why, "%s", why);
    const sc_type *t = s->spec->columns[column].type;
    for (int l = t->leaf; l < t->leaf + t->n_leaves; l++)
        pq_rowgroup_abort_leaf(s->rg, (size_t)l);
    s->cols[column].failed = true;
}

static int push_typed(sh_shredder *s, int column, const sc_type *t, uint16_t rep, bool object)
{
    sh_frame f = {.mode = FM_TYPED, .is_object = object, .first = true, .type = t,
                  .rep = rep, .column = column, .seen_off = s->seen.len};
    if (t->kind == SC_STRUCT) {
        if (pq_buf_reserve(&s->seen, t->n_fields) != 0)
            return PQ_ENOMEM;
        memset(s->seen.data + s->seen.len, 0, t->n_fields);
        s->seen.len += t->n_fields;
    }
    return sh_push(s, &f);
}

/* A variant or json value inside a list, map or struct: only one can be
 * open at a time (its events are contiguous), so one shared builder and
 * one text buffer serve them all. */
static int nested_put_json(sh_shredder *s, const sc_type *t, uint16_t rep)
{
    return pq_column_put_bytes(pq_rowgroup_column(s->rg, (size_t)t->leaf), rep, s->nested_json.data,
                               s->nested_json.len);
}

static int nested_put_variant(sh_shredder *s, const sc_type *t, uint16_t rep)
{
    vr_variant v;
    int rc = vr_finish(&s->nested, &v);
    return rc ? rc : shv_write_variant(s, t, &v, rep);
}

int shv_nested_end(sh_shredder *s, const sh_frame *f)
{
    return f->mode == FM_VARIANT ? nested_put_variant(s, f->type, f->rep)
                                 : nested_put_json(s, f->type, f->rep);
}

static int nested_value(sh_shredder *s, int column, const sc_type *t, uint16_t rep, int ev,
                        const void *payload)
{
    bool variant = t->kind == SC_VARIANT;
    int rc;
    if (variant) {
        vr_builder_reset(&s->nested);
        rc = ev == EV_BEGIN_OBJECT ? vr_begin_object(&s->nested)
           : ev == EV_BEGIN_ARRAY ? vr_begin_array(&s->nested)
           : shv_scalar_to_variant(&s->nested, ev, payload);
    } else {
        pq_buf_reset(&s->nested_json);
        rc = shv_json_text(&s->nested_json, ev, payload);
    }
    if (rc != 0)
        return rc;
    if (ev != EV_BEGIN_OBJECT && ev != EV_BEGIN_ARRAY)
        return variant ? nested_put_variant(s, t, rep) : nested_put_json(s, t, rep);
    sh_frame f = {.mode = variant ? FM_VARIANT : FM_JSON, .is_object = ev == EV_BEGIN_OBJECT,
                  .nested_root = true, .type = t, .rep = rep, .column = column,
                  .vb = &s->nested, .jb = &s->nested_json};
    return sh_push(s, &f);
}

/* GEOMETRY / GEOGRAPHY from GeoJSON: key order inside the object is free,
 * so the object is skipped while it streams by and converted from its
 * bytes in the line once it closes. */
static bool is_geo(const sc_type *t)
{
    return t->kind == SC_GEOMETRY || t->kind == SC_GEOGRAPHY;
}

int shv_geo_end(sh_shredder *s, const sh_frame *f)
{
    size_t end = json_parser_offset(&s->parser) + 1;
    pq_err gerr;
    pq_buf_reset(&s->wkb);
    int rc = gj_to_wkb(&s->geo, s->line + f->raw_start, end - f->raw_start, &s->wkb, &gerr);
    if (rc == PQ_ETYPE) {
        shv_fail_column(s, f->column, gerr.msg);
        return PQ_OK;
    }
    return rc ? rc : pq_column_put_bytes(pq_rowgroup_column(s->rg, (size_t)f->type->leaf), f->rep,
                                         s->wkb.data, s->wkb.len);
}

bool shv_is_plain_scalar(const sc_type *t)
{
    switch (t->kind) {
    case SC_LIST: case SC_MAP: case SC_STRUCT: case SC_VARIANT: case SC_JSON:
    case SC_GEOMETRY: case SC_GEOGRAPHY:
        return false;
    default:
        return true;
    }
}

int shv_put_scalar(sh_shredder *s, const sc_type *t, uint16_t rep, int ev, const void *payload)
{
    return put_scalar(s, t, rep, ev, payload);
}

int shv_typed_value(sh_shredder *s, int column, const sc_type *t, bool nullable, uint16_t rep,
                    int ev, const void *payload)
{
    int rc;
    if (ev == EV_NULL && nullable)
        return shv_nulls(s, t, rep, (uint16_t)(t->def - 1));
    if (ev == EV_BEGIN_ARRAY && t->kind == SC_LIST)
        return push_typed(s, column, t, rep, false);
    if (ev == EV_BEGIN_OBJECT && (t->kind == SC_STRUCT || t->kind == SC_MAP))
        return push_typed(s, column, t, rep, true);
    if (t->kind == SC_VARIANT || t->kind == SC_JSON)
        return nested_value(s, column, t, rep, ev, payload);
    if (is_geo(t) && ev == EV_BEGIN_OBJECT) {
        sh_frame f = {.mode = FM_SKIP, .is_object = true, .geo_root = true, .type = t,
                      .rep = rep, .column = column, .raw_start = json_parser_offset(&s->parser)};
        return sh_push(s, &f);
    }
    if (ev == EV_BEGIN_ARRAY || ev == EV_BEGIN_OBJECT || ev == EV_NULL ||
        t->kind == SC_LIST || t->kind == SC_MAP || t->kind == SC_STRUCT)
        rc = MISMATCH;
    else
        rc = put_scalar(s, t, rep, ev, payload);
    if (rc == MISMATCH) {
        shv_fail_column(s, column, "wrong type");
        rc = 0;
        if (ev == EV_BEGIN_ARRAY || ev == EV_BEGIN_OBJECT) {
            sh_frame f = {.mode = FM_SKIP, .is_object = ev == EV_BEGIN_OBJECT, .column = column};
            rc = sh_push(s, &f);
        }
    }
    return rc;
}

/* Byte by byte, stopping at the name's end (no strlen, no memcmp: two
 * calls for a key of a few bytes, once per struct field of every record).
 * The key may hold NULs (\u0000), so a NUL in the name ends the match
 * whatever the key's byte; no byte past the name's terminator is read. */
static bool field_is(const sc_column *f, const char *k, size_t len)
{
    const char *name = f->path_len == 1 ? f->path[0] : f->name;
    for (size_t i = 0; i < len; i++)
        if (name[i] == '\0' || name[i] != k[i])
            return false;
    return name[len] == '\0';
}

/* The field named k. Writers emit a struct's keys in one order, usually
 * the schema's, so the field after the last one matched (guess) is tried
 * first: one compare instead of a scan of every field name before it. */
static const sc_column *struct_field(const sc_type *t, size_t guess, const char *k, size_t len,
                                     size_t *index)
{
    if (guess < t->n_fields && field_is(&t->fields[guess], k, len)) {
        *index = guess;
        return &t->fields[guess];
    }
    for (size_t i = 0; i < t->n_fields; i++) {
        if (field_is(&t->fields[i], k, len)) {
            *index = i;
            return &t->fields[i];
        }
    }
    return NULL;
}

int shv_typed_key(sh_shredder *s, sh_frame *f, const char *k, size_t len)
{
    const sc_type *t = f->type;
    if (t->kind == SC_MAP) {
        uint16_t rep = f->first ? f->rep : t->elem->rep;
        f->first = false;
        int rc = pq_column_put_bytes(pq_rowgroup_column(s->rg, (size_t)t->leaf), rep, k, len);
        s->target = (sh_target){.kind = T_TYPED, .column = f->column, .type = t->elem,
                                .nullable = true, .rep = rep};
        s->fast = shv_is_plain_scalar(t->elem) ? FAST_FIELD : FAST_NONE;
        return rc;
    }
    size_t i;
    const sc_column *field = struct_field(t, f->last_child, k, len, &i);
    uint8_t *seen = s->seen.data + f->seen_off;
    if (field == NULL || seen[i]) { /* unknown or repeated key: keep it whole in rest */
        shv_fail_column(s, f->column, "unknown or repeated struct field");
        return PQ_OK;
    }
    seen[i] = 1;
    f->last_child = (uint32_t)i + 1;
    s->target = (sh_target){.kind = T_TYPED, .column = f->column, .type = field->type,
                            .nullable = !field->required, .rep = f->rep};
    s->fast = shv_is_plain_scalar(field->type) ? FAST_FIELD : FAST_NONE;
    return PQ_OK;
}

/* An empty list or map is present with no entries (def = its own level);
 * a struct's missing fields are null, or fail the value when required. */
int shv_typed_end(sh_shredder *s, sh_frame *f)
{
    const sc_type *t = f->type;
    if (t->kind != SC_STRUCT)
        return f->first ? shv_nulls(s, t, f->rep, t->def) : PQ_OK;
    const uint8_t *seen = s->seen.data + f->seen_off;
    for (size_t i = 0; i < t->n_fields; i++) {
        const sc_column *field = &t->fields[i];
        if (seen[i])
            continue;
        if (field->required) {
            shv_fail_column(s, f->column, "required struct field missing");
            return PQ_OK;
        }
        int rc = shv_nulls(s, field->type, f->rep, (uint16_t)(field->type->def - 1));
        if (rc != 0)
            return rc;
    }
    return PQ_OK;
}

/* ---- missing columns and defaults ---------------------------------------------- */

static int put_default(sh_shredder *s, const sc_column *c)
{
    const sc_type *t = c->type;
    const sc_default *d = &c->def;
    pq_column *col = pq_rowgroup_column(s->rg, (size_t)t->leaf);
    switch (t->kind) {
    case SC_BOOL: return pq_column_put_bool(col, 0, d->b);
    case SC_INT:
        return t->is_signed ? put_i(col, t, 0, d->i)
                            : put_i(col, t, 0, t->physical == PQ_INT64 ? (int64_t)d->u
                                                                      : (int64_t)(uint32_t)d->u);
    case SC_DATE: case SC_TIME: case SC_TIMESTAMP: return put_i(col, t, 0, d->i);
    case SC_DOUBLE: return pq_column_put_double(col, 0, d->d);
    case SC_FLOAT: return pq_column_put_float(col, 0, (float)d->d);
    case SC_UUID: return pq_column_put_bytes(col, 0, d->uuid, 16);
    case SC_STRING: case SC_ENUM: case SC_JSON:
        return pq_column_put_bytes(col, 0, d->text, strlen(d->text));
    default: {
        sh_str str = {d->text, strlen(d->text)};
        int rc = put_scalar(s, t, 0, EV_STRING, &str);
        return rc == MISMATCH ? PQ_EINVAL : rc;
    }
    }
}

int shv_missing_column(sh_shredder *s, int column)
{
    const sc_column *c = &s->spec->columns[column];
    if (c->def.set && !s->cols[column].failed)
        return put_default(s, c);
    if (c->required) {
        pq_err_set(s->err, SH_REJECTED, "%s required field '%s' (column '%s')",
                   s->cols[column].failed ? "wrong type for" : "missing",
                   c->from ? c->from : c->name, c->name);
        s->reject = SH_REJECT_MISSING_REQUIRED;
        return PQ_OK;
    }
    return shv_nulls(s, c->type, 0, (uint16_t)(c->type->def - 1));
}

/* Opens, in the rest builder, every route object from the root down to the
 * current one that is not open yet, so unmatched fields keep their
 * nesting ({"http": {"x": 1}} when only http.status is a column). */
int shv_rest_open_path(sh_shredder *s)
{
    for (size_t i = 0; i < s->n_frames; i++) {
        sh_frame *f = &s->frames[i];
        if (f->mode != FM_ROUTE || f->rest_open)
            continue;
        int rc = i == 0 ? 0 : vr_key(&s->rest, f->key, f->key_len);
        rc = rc ? rc : vr_begin_object(&s->rest);
        if (rc != 0)
            return rc;
        f->rest_open = true;
        s->has_rest_value = true;
    }
    return PQ_OK;
}

/* ---- Variant columns ------------------------------------------------------------ */

/* Shredded per t->shred by vshred.c (VariantShredding.md): what matches the
 * typed_value layout goes there, the rest stays in `value`. v is always a
 * builder's, so an unshredded column (the rest column) takes it unchecked
 * (vs_write_built); the general-only shredder keeps vs_write, so that
 * fuzz_shred compares the two. */
int shv_write_variant(sh_shredder *s, const sc_type *t, const vr_variant *v, uint16_t rep)
{
    if (!s->general_only)
        return vs_write_built(&s->vshred, s->rg, t, v, rep, s->err);
    return vs_write(&s->vshred, s->rg, t, v, rep, s->err);
}

int shv_scalar_to_variant(vr_builder *b, int ev, const void *payload)
{
    switch (ev) {
    case EV_STRING: {
        const sh_str *str = payload;
        return vr_string(b, str->s, str->len);
    }
    case EV_NUMBER: {
        const json_number *n = payload;
        /* the text beyond sign, digits and fraction is an exponent ("1e0") */
        bool has_exp = n->len > (size_t)n->negative + n->int_len +
                                    (n->frac_len ? n->frac_len + 1 : 0);
        vr_json_num vn = {.negative = n->negative, .int_digits = n->int_digits,
                          .int_len = n->int_len, .frac_digits = n->frac_digits,
                          .frac_len = n->frac_len, .exp10 = n->exp10, .has_exp = has_exp,
                          .d = n->d};
        if (n->kind == JSON_NUM_INT64)
            return vr_int(b, n->i);
        if (n->kind == JSON_NUM_UINT64)
            return vr_uint64(b, n->u);
        return vr_number_from_json(b, &vn);
    }
    case EV_BOOL: return vr_bool(b, *(const bool *)payload);
    default: return vr_null(b);
    }
}

/* ---- json columns: the value re-serialized (RFC 8259, numbers as written) ---- */

static int json_sep(pq_buf *out)
{
    if (out->len == 0)
        return PQ_OK;
    uint8_t last = out->data[out->len - 1];
    return last == '{' || last == '[' || last == ':' ? PQ_OK : pq_buf_push(out, ',');
}

static int json_string(pq_buf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    int rc = pq_buf_push(out, '"');
    for (size_t i = 0; rc == 0 && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            rc = pq_buf_append(out, esc, 2);
        } else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            rc = pq_buf_append(out, esc, 6);
        } else {
            rc = pq_buf_push(out, c);
        }
    }
    return rc ? rc : pq_buf_push(out, '"');
}

int shv_json_key(pq_buf *out, const char *k, size_t len)
{
    int rc = json_sep(out);
    rc = rc ? rc : json_string(out, k, len);
    return rc ? rc : pq_buf_push(out, ':');
}

int shv_json_end(pq_buf *out, bool object)
{
    return pq_buf_push(out, object ? '}' : ']');
}

int shv_json_text(pq_buf *out, int ev, const void *payload)
{
    int rc = json_sep(out);
    if (rc != 0)
        return rc;
    switch (ev) {
    case EV_BEGIN_OBJECT: return pq_buf_push(out, '{');
    case EV_BEGIN_ARRAY: return pq_buf_push(out, '[');
    case EV_STRING: {
        const sh_str *str = payload;
        return json_string(out, str->s, str->len);
    }
    case EV_NUMBER: {
        const json_number *n = payload;
        return pq_buf_append(out, n->raw, n->len);
    }
    case EV_BOOL: return *(const bool *)payload ? pq_buf_append(out, "true", 4)
                                                : pq_buf_append(out, "false", 5);
    default: return pq_buf_append(out, "null", 4);
    }
}
