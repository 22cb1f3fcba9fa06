/* shred.c - one NDJSON record to one row (see shred.h): routes the JSON
 * parser's events by the columns' `from` paths, keeps what no column takes
 * (or what does not fit) in the `*` rest column, and finishes the row with
 * nulls, defaults and the ingest time.
 *
 * One pass, no DOM: a trie of paths decides where each value goes as its
 * key arrives; typed containers are level-encoded as their events stream
 * by (shred_value.c). A value that turns out not to fit halfway through a
 * container is re-read from its byte range in the line into the rest
 * column, which is cheaper than buffering every container just in case. */
#include "shred.h"
#include "shred_state.h"
#include "shred_value.h"
#include "shred_direct.h"
#include "memeq.h"

#include <stdlib.h>
#include <string.h>

/* ---- the path trie --------------------------------------------------------- */

static sh_trie *trie_child(sh_trie *n, const char *key, size_t len, bool create)
{
    for (size_t i = 0; i < n->n_children; i++)
        if (n->children[i].key_len == len && memcmp(n->children[i].key, key, len) == 0)
            return &n->children[i];
    if (!create)
        return NULL;
    if (n->n_children == n->cap_children) {
        size_t cap = n->cap_children ? n->cap_children * 2 : 4;
        sh_trie *p = realloc(n->children, cap * sizeof *p);
        if (p == NULL)
            return NULL;
        n->children = p;
        n->cap_children = cap;
    }
    sh_trie *c = &n->children[n->n_children];
    memset(c, 0, sizeof *c);
    c->column = -1;
    if ((c->key = malloc(len + 1)) == NULL)
        return NULL;
    memcpy(c->key, key, len);
    c->key[len] = '\0';
    c->key_len = len;
    n->n_children++;
    return c;
}

static void trie_free(sh_trie *n)
{
    for (size_t i = 0; i < n->n_children; i++)
        trie_free(&n->children[i]);
    free(n->children);
    free(n->slots);
    free(n->after);
    free(n->key);
}

static int trie_add(sh_shredder *s, int column, pq_err *err)
{
    const sc_column *c = &s->spec->columns[column];
    sh_trie *n = &s->root;
    for (size_t i = 0; i < c->path_len; i++) {
        if (n->column >= 0)
            break;
        n = trie_child(n, c->path[i], strlen(c->path[i]), true);
        if (n == NULL)
            return pq_err_set(err, PQ_ENOMEM, "shredder: out of memory");
    }
    if (n->column >= 0 || n->n_children > 0)
        return pq_err_set(err, PQ_EINVAL, "column '%s': its path overlaps another column's", c->name);
    n->column = column;
    n->plain = shv_is_plain_scalar(c->type);
    n->plain_list = c->type->kind == SC_LIST && shv_is_plain_scalar(c->type->elem);
    return PQ_OK;
}

/* Every key of every record is looked up here, so the lookup is one hash
 * and (nearly always) one comparison, whatever the width of the record
 * (Windows events carry 165 keys): FNV-1a over the key, open addressing
 * in a table at most half full, built once at setup. */
static uint64_t trie_hash(const char *key, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)key[i]) * 0x100000001b3u;
    return h ^ (h >> 29);
}

static int trie_index(sh_trie *n)
{
    for (size_t i = 0; i < n->n_children; i++)
        if (trie_index(&n->children[i]) != 0)
            return PQ_ENOMEM;
    if (n->n_children == 0)
        return PQ_OK;
    size_t size = 4;
    while (size < 2 * n->n_children)
        size *= 2;
    if ((n->slots = calloc(size, sizeof *n->slots)) == NULL ||
        (n->after = calloc(n->n_children + 1, sizeof *n->after)) == NULL)
        return PQ_ENOMEM;
    n->slot_mask = size - 1;
    for (size_t i = 0; i < n->n_children; i++) {
        size_t at = (size_t)trie_hash(n->children[i].key, n->children[i].key_len) & n->slot_mask;
        while (n->slots[at] != 0)
            at = (at + 1) & n->slot_mask;
        n->slots[at] = (uint32_t)i + 1;
    }
    return PQ_OK;
}

static const sh_trie *trie_find(const sh_trie *n, const char *key, size_t len)
{
    if (n->slots == NULL)
        return NULL;
    size_t at = (size_t)trie_hash(key, len) & n->slot_mask;
    for (uint32_t i; (i = n->slots[at]) != 0; at = (at + 1) & n->slot_mask) {
        const sh_trie *c = &n->children[i - 1];
        if (c->key_len == len && pq_memeq(c->key, key, len))
            return c;
    }
    return NULL;
}

/* Records of one source repeat their key order, so the key after child
 * i - 1 is nearly always the one that followed it in the previous record:
 * one length test and one short compare confirm it, where trie_find hashes
 * every byte of the key (FNV-1a, 4 instructions a byte) before its
 * compare. A wrong guess costs that compare and falls back to the hash, and
 * the guess is re-learnt. Keys no column takes leave the guess alone, so
 * unmapped keys between mapped ones keep the mapped order predicted. */
static const sh_trie *trie_find_next(const sh_trie *n, uint32_t *last, const char *key,
                                     size_t len)
{
    if (n->slots == NULL)
        return NULL;
    const uint32_t guess = n->after[*last];
    if (guess != 0) {
        const sh_trie *c = &n->children[guess - 1];
        if (c->key_len == len && pq_memeq(c->key, key, len)) {
            *last = guess;
            return c;
        }
    }
    const sh_trie *c = trie_find(n, key, len);
    if (c != NULL) {
        const uint32_t got = (uint32_t)(c - n->children) + 1;
        n->after[*last] = got;
        *last = got;
    }
    return c;
}

/* ---- setup ---------------------------------------------------------------- */

/* Every key and string the builders get comes from the JSON parser, which
 * has already refused invalid UTF-8 and lone surrogates (json.h): checking
 * again cost 5% of a default-schema run. Column builders keep their key
 * dictionary across records (vr_opts.shared_dict): records of one shape
 * then skip the per-record sort and renumbering, and share one metadata. */
static const vr_opts builder_opts = {.trust_utf8 = true};
static const vr_opts column_opts = {.trust_utf8 = true, .shared_dict = true};

static int setup_columns(sh_shredder *s, pq_err *err)
{
    size_t n = s->spec->n_columns;
    s->cols = calloc(n ? n : 1, sizeof *s->cols);
    s->variants = calloc(n ? n : 1, sizeof *s->variants);
    s->json_text = calloc(n ? n : 1, sizeof *s->json_text);
    s->from_line = calloc(n ? n : 1, 1);
    if (!s->cols || !s->variants || !s->json_text || !s->from_line)
        return pq_err_set(err, PQ_ENOMEM, "shredder: out of memory");
    for (size_t i = 0; i < n; i++) {
        const sc_column *c = &s->spec->columns[i];
        pq_buf_init(&s->json_text[i]);
        s->from_line[i] = c->source != SC_SRC_INGEST_TIME && c->source != SC_SRC_INDEX &&
                          (int)i != s->spec->rest;
        if (c->source == SC_SRC_PATH && (int)i != s->spec->rest) {
            int rc = trie_add(s, (int)i, err);
            if (rc != 0)
                return rc;
        }
        if (c->type->kind == SC_VARIANT && (int)i != s->spec->rest) {
            s->variants[i] = calloc(1, sizeof(vr_builder));
            if (s->variants[i] == NULL || vr_builder_init(s->variants[i], &column_opts) != 0)
                return pq_err_set(err, PQ_ENOMEM, "shredder: out of memory");
        }
    }
    if (trie_index(&s->root) != 0 || shd_setup(s) != 0)
        return pq_err_set(err, PQ_ENOMEM, "shredder: out of memory");
    return PQ_OK;
}

void sh_shredder_new_batch(sh_shredder *s)
{
    vr_builder_forget_dict(&s->rest);
    for (size_t i = 0; i < s->spec->n_columns; i++)
        if (s->variants[i] != NULL)
            vr_builder_forget_dict(s->variants[i]);
}

int sh_shredder_new(sh_shredder **out, const sc_schema *spec, pq_err *err)
{
    sh_shredder *s = calloc(1, sizeof *s);
    if (s == NULL)
        return pq_err_set(err, PQ_ENOMEM, "shredder: out of memory");
    s->spec = spec;
    s->root.column = -1;
    pq_buf_init(&s->seen);
    pq_buf_init(&s->scratch);
    pq_buf_init(&s->nested_json);
    pq_buf_init(&s->wkb);
    vs_state_init(&s->vshred);
    int rc = json_parser_init(&s->parser, 0) || json_parser_init(&s->replay, 0) ||
             vr_builder_init(&s->rest, &column_opts) ||
             vr_builder_init(&s->nested, &builder_opts) ||
             gj_converter_init(&s->geo) ? PQ_ENOMEM : 0;
    if (rc != 0)
        rc = pq_err_set(err, rc, "shredder: out of memory");
    rc = rc ? rc : setup_columns(s, err);
    if (rc != 0) {
        sh_shredder_destroy(s);
        return rc;
    }
    *out = s;
    return PQ_OK;
}

void sh_shredder_destroy(sh_shredder *s)
{
    if (s == NULL)
        return;
    trie_free(&s->root);
    json_parser_free(&s->parser);
    json_parser_free(&s->replay);
    vr_builder_free(&s->rest);
    vr_builder_free(&s->nested);
    pq_buf_free(&s->nested_json);
    vs_state_free(&s->vshred);
    gj_converter_free(&s->geo);
    pq_buf_free(&s->wkb);
    for (size_t i = 0; s->variants && i < s->spec->n_columns; i++) {
        if (s->variants[i])
            vr_builder_free(s->variants[i]);
        free(s->variants[i]);
    }
    for (size_t i = 0; s->json_text && i < s->spec->n_columns; i++)
        pq_buf_free(&s->json_text[i]);
    free(s->variants);
    free(s->json_text);
    free(s->cols);
    free(s->frames);
    free(s->field_keys);
    for (size_t i = 0; s->vcache && i < s->spec->n_columns; i++)
        free(s->vcache[i]);
    free(s->vcache);
    free(s->struct_keys);
    free(s->from_line);
    pq_buf_free(&s->seen);
    pq_buf_free(&s->scratch);
    free(s);
}

/* ---- failures and the rest column ------------------------------------------- */

/* A failure that is not the record's fault stops the writer: say which. */
static int fail(sh_shredder *s, int rc)
{
    if (rc == 0 || s->reject || s->fatal)
        return rc;
    if (rc == PQ_ENOMEM)
        s->fatal = pq_err_set(s->err, rc, "shredder: out of memory");
    else if (rc == PQ_ELIMIT)
        s->fatal = pq_err_set(s->err, rc, "shredder: a column's buffered values reached the "
                              "writer's 4 GiB per row group; lower row_group.max_bytes");
    else
        s->fatal = pq_err_set(s->err, rc, "shredder: internal error %s (variant builder: %s)",
                              pq_err_name(rc), s->rest.err.msg);
    return rc;
}

static int rest_mirror(sh_shredder *s, int ev, const void *payload)
{
    if (ev == EV_BEGIN_OBJECT)
        return vr_begin_object(&s->rest);
    if (ev == EV_BEGIN_ARRAY)
        return vr_begin_array(&s->rest);
    return shv_scalar_to_variant(&s->rest, ev, payload);
}

/* A value under key (key, key_len) of the current route object goes to
 * the rest column. */
static int rest_value(sh_shredder *s, const char *key, size_t key_len, bool keyed, int ev,
                      const void *payload)
{
    int rc = shv_rest_open_path(s);
    if (rc == 0 && keyed)
        rc = vr_key(&s->rest, key, key_len);
    if (rc == 0 && !keyed)
        s->has_rest_value = true;
    rc = rc ? rc : rest_mirror(s, ev, payload);
    if (rc == 0 && (ev == EV_BEGIN_OBJECT || ev == EV_BEGIN_ARRAY)) {
        sh_frame f = {.mode = FM_REST, .is_object = ev == EV_BEGIN_OBJECT, .column = -1};
        rc = sh_push(s, &f);
    }
    return rc;
}

/* ---- replaying a value that did not fit ------------------------------------ */

static int rp_begin_object(void *u) { return vr_begin_object(&((sh_shredder *)u)->rest); }
static int rp_end_object(void *u) { return vr_end_object(&((sh_shredder *)u)->rest); }
static int rp_begin_array(void *u) { return vr_begin_array(&((sh_shredder *)u)->rest); }
static int rp_end_array(void *u) { return vr_end_array(&((sh_shredder *)u)->rest); }
static int rp_key(void *u, const char *k, size_t n) { return vr_key(&((sh_shredder *)u)->rest, k, n); }
static int rp_string(void *u, const char *v, size_t n)
{
    sh_str str = {v, n};
    return shv_scalar_to_variant(&((sh_shredder *)u)->rest, EV_STRING, &str);
}
static int rp_number(void *u, const json_number *n)
{
    return shv_scalar_to_variant(&((sh_shredder *)u)->rest, EV_NUMBER, n);
}
static int rp_bool(void *u, bool v)
{
    return shv_scalar_to_variant(&((sh_shredder *)u)->rest, EV_BOOL, &v);
}
static int rp_null(void *u) { return shv_scalar_to_variant(&((sh_shredder *)u)->rest, EV_NULL, NULL); }

static const json_handler replay_handler = {
    rp_begin_object, rp_key, rp_end_object, rp_begin_array, rp_end_array,
    rp_string, rp_number, rp_bool, rp_null, NULL,
};

/* The failed column's value (its container just closed) is re-read from
 * the line into the rest column under its key; without a rest column the
 * record is rejected. */
static int replay_into_rest(sh_shredder *s, int column)
{
    const sc_column *c = &s->spec->columns[column];
    sh_colstate *cs = &s->cols[column];
    if (!sh_has_rest(s)) {
        pq_err_set(s->err, SH_REJECTED, "field '%s': value does not fit column '%s' (%s) "
                   "and there is no rest (\"*\") column", c->from ? c->from : c->name,
                   c->name, s->fail_why);
        s->reject = SH_REJECT_NO_FIT;
        return SH_REJECTED;
    }
    size_t end = json_parser_offset(&s->parser) + 1;
    int rc = shv_rest_open_path(s);
    rc = rc ? rc : vr_key(&s->rest, cs->key, cs->key_len);
    if (rc != 0)
        return rc;
    pq_err perr;
    return json_parse_line(&s->replay, s->line + cs->raw_start, end - cs->raw_start,
                           &replay_handler, s, &perr);
}

/* ---- column values ----------------------------------------------------------- */

static bool is_container(int ev)
{
    return ev == EV_BEGIN_OBJECT || ev == EV_BEGIN_ARRAY;
}

/* A duplicate key replaces the earlier value (last wins), so the column's
 * leaves drop what this row put into them. */
static void restart_column(sh_shredder *s, int column)
{
    const sc_type *t = s->spec->columns[column].type;
    for (int l = t->leaf; l < t->leaf + t->n_leaves; l++) /* includes a variant's metadata */
        pq_rowgroup_abort_leaf(s->rg, (size_t)l);
    s->cols[column].seen = false;
    s->cols[column].failed = false;
}

static int finish_variant_column(sh_shredder *s, int column)
{
    vr_variant v;
    int rc = vr_finish(s->variants[column], &v);
    if (rc != 0)
        return rc;
    rc = shv_write_variant(s, s->spec->columns[column].type, &v, 0);
    s->cols[column].seen = rc == 0;
    return rc;
}

static int finish_json_column(sh_shredder *s, int column)
{
    const sc_type *t = s->spec->columns[column].type;
    pq_buf *b = &s->json_text[column];
    int rc = pq_column_put_bytes(pq_rowgroup_column(s->rg, (size_t)t->leaf), 0, b->data, b->len);
    s->cols[column].seen = rc == 0;
    return rc;
}

static int begin_untyped_column(sh_shredder *s, int column, int ev, const void *payload)
{
    const sc_type *t = s->spec->columns[column].type;
    bool container = is_container(ev);
    int rc;
    if (t->kind == SC_VARIANT) {
        vr_builder *b = s->variants[column];
        vr_builder_reset(b);
        rc = ev == EV_BEGIN_OBJECT ? vr_begin_object(b) : ev == EV_BEGIN_ARRAY ? vr_begin_array(b)
                                                        : shv_scalar_to_variant(b, ev, payload);
    } else {
        pq_buf_reset(&s->json_text[column]);
        rc = shv_json_text(&s->json_text[column], ev, payload);
    }
    if (rc != 0)
        return rc;
    if (!container)
        return t->kind == SC_VARIANT ? finish_variant_column(s, column)
                                     : finish_json_column(s, column);
    sh_frame f = {.mode = t->kind == SC_VARIANT ? FM_VARIANT : FM_JSON,
                  .is_object = ev == EV_BEGIN_OBJECT, .column_root = true, .column = column,
                  .vb = s->variants[column], .jb = &s->json_text[column]};
    return sh_push(s, &f);
}

static int begin_column(sh_shredder *s, const sh_target *tg, int ev, const void *payload)
{
    int column = tg->column;
    const sc_column *c = &s->spec->columns[column];
    sh_colstate *cs = &s->cols[column];
    if (cs->seen || cs->failed)
        restart_column(s, column);
    cs->raw_start = json_parser_offset(&s->parser);
    cs->key = tg->key;
    cs->key_len = tg->key_len;
    if (c->type->kind == SC_VARIANT || c->type->kind == SC_JSON)
        return begin_untyped_column(s, column, ev, payload);
    size_t depth = s->n_frames;
    int rc = shv_typed_value(s, column, c->type, !c->required, 0, ev, payload);
    if (rc != 0)
        return rc;
    if (s->n_frames > depth) {
        s->frames[depth].column_root = true;
        return PQ_OK;
    }
    if (!cs->failed) {
        cs->seen = true;
        return PQ_OK;
    }
    if (!sh_has_rest(s))
        return replay_into_rest(s, column); /* rejects, naming the field */
    return rest_value(s, tg->key, tg->key_len, true, ev, payload);
}

/* ---- event dispatch -------------------------------------------------------------- */

static int dispatch(sh_shredder *s, const sh_target *tg, int ev, const void *payload)
{
    switch (tg->kind) {
    case T_REST:
        return rest_value(s, tg->key, tg->key_len, true, ev, payload);
    case T_ROUTE:
        if (ev == EV_BEGIN_OBJECT) {
            sh_frame f = {.mode = FM_ROUTE, .is_object = true, .node = tg->node,
                          .key = tg->key, .key_len = tg->key_len, .column = -1};
            return sh_push(s, &f);
        }
        if (sh_has_rest(s))
            return rest_value(s, tg->key, tg->key_len, true, ev, payload);
        break;
    case T_COLUMN:
        return begin_column(s, tg, ev, payload);
    case T_TYPED:
        return shv_typed_value(s, tg->column, tg->type, tg->nullable, tg->rep, ev, payload);
    case T_IGNORE:
        break;
    }
    if (is_container(ev)) {
        sh_frame f = {.mode = FM_SKIP, .is_object = ev == EV_BEGIN_OBJECT, .column = -1};
        return sh_push(s, &f);
    }
    return PQ_OK;
}

/* The record itself: an object routes; anything else goes whole to the
 * rest column, or is rejected when there is none. */
static int root_value(sh_shredder *s, int ev, const void *payload)
{
    if (ev == EV_BEGIN_OBJECT) {
        sh_frame f = {.mode = FM_ROUTE, .is_object = true, .node = &s->root, .column = -1};
        return sh_push(s, &f);
    }
    if (!sh_has_rest(s)) {
        pq_err_set(s->err, SH_REJECTED, "record is not a JSON object");
        s->reject = SH_REJECT_NOT_OBJECT;
        return SH_REJECTED;
    }
    return rest_value(s, NULL, 0, false, ev, payload);
}

static int on_value(sh_shredder *s, int ev, const void *payload)
{
    if (s->n_frames == 0)
        return root_value(s, ev, payload);
    sh_frame *top = &s->frames[s->n_frames - 1];
    bool container = is_container(ev);
    int rc = 0;
    switch (top->mode) {
    case FM_REST:
        rc = rest_mirror(s, ev, payload);
        break;
    case FM_VARIANT:
        rc = ev == EV_BEGIN_OBJECT ? vr_begin_object(top->vb)
           : ev == EV_BEGIN_ARRAY ? vr_begin_array(top->vb)
           : shv_scalar_to_variant(top->vb, ev, payload);
        break;
    case FM_JSON:
        rc = shv_json_text(top->jb, ev, payload);
        break;
    case FM_SKIP:
        break;
    case FM_TYPED:
        if (s->cols[top->column].failed)
            break;
        if (top->type->kind == SC_LIST) {
            const sc_type *e = top->type->elem;
            s->target = (sh_target){.kind = T_TYPED, .column = top->column, .type = e,
                                    .nullable = true, .rep = top->first ? top->rep : e->rep};
            top->first = false;
        }
        return dispatch(s, &s->target, ev, payload);
    case FM_ROUTE:
        return dispatch(s, &s->target, ev, payload);
    }
    if (rc == 0 && container) {
        sh_frame f = {.mode = top->mode, .is_object = ev == EV_BEGIN_OBJECT, .column = top->column,
                      .vb = top->vb, .jb = top->jb};
        if (top->mode == FM_TYPED)
            f.mode = FM_SKIP; /* inside a failed column */
        rc = sh_push(s, &f);
    }
    return rc;
}

static int on_key(sh_shredder *s, const char *k, size_t len)
{
    sh_frame *top = &s->frames[s->n_frames - 1];
    s->fast = FAST_NONE;
    switch (top->mode) {
    case FM_REST:
        return vr_key(&s->rest, k, len);
    case FM_VARIANT:
        return vr_key(top->vb, k, len);
    case FM_JSON:
        return shv_json_key(top->jb, k, len);
    case FM_SKIP:
        return PQ_OK;
    case FM_TYPED:
        return s->cols[top->column].failed ? PQ_OK : shv_typed_key(s, top, k, len);
    case FM_ROUTE:
        break;
    }
    sh_target *tg = &s->target;
    memset(tg, 0, sizeof *tg);
    /* The key stays valid for the whole record (json.h: it points into the
     * line, or into the parser's scratch, which is per line), so it is
     * kept by pointer for the rest column, never copied. */
    tg->key = k;
    tg->key_len = len;
    const sh_trie *child = trie_find_next(top->node, &top->last_child, k, len);
    if (child != NULL && child->column >= 0) {
        tg->kind = T_COLUMN;
        tg->column = child->column;
        s->fast = child->plain ? FAST_COLUMN : FAST_NONE;
    } else if (child != NULL) {
        tg->kind = T_ROUTE;
        tg->node = child;
    } else {
        tg->kind = sh_has_rest(s) ? T_REST : T_IGNORE;
    }
    return PQ_OK;
}

static int end_column_frame(sh_shredder *s, const sh_frame *f)
{
    sh_colstate *cs = &s->cols[f->column];
    if (f->mode == FM_VARIANT)
        return finish_variant_column(s, f->column);
    if (f->mode == FM_JSON)
        return finish_json_column(s, f->column);
    if (cs->failed)
        return replay_into_rest(s, f->column);
    cs->seen = true;
    return PQ_OK;
}

static int on_end(sh_shredder *s, bool object)
{
    sh_frame f = s->frames[s->n_frames - 1];
    int rc = 0;
    switch (f.mode) {
    case FM_ROUTE:
        rc = f.rest_open ? vr_end_object(&s->rest) : 0;
        break;
    case FM_REST:
        rc = object ? vr_end_object(&s->rest) : vr_end_array(&s->rest);
        break;
    case FM_VARIANT:
        rc = object ? vr_end_object(f.vb) : vr_end_array(f.vb);
        break;
    case FM_JSON:
        rc = shv_json_end(f.jb, object);
        break;
    case FM_TYPED:
        rc = s->cols[f.column].failed ? 0 : shv_typed_end(s, &s->frames[s->n_frames - 1]);
        break;
    case FM_SKIP:
        break;
    }
    s->n_frames--;
    if (rc == 0 && f.nested_root)
        rc = shv_nested_end(s, &f);
    if (rc == 0 && f.geo_root)
        rc = shv_geo_end(s, &f);
    if (rc == 0 && f.column_root)
        rc = end_column_frame(s, &f);
    return rc;
}

/* ---- JSON parser callbacks -------------------------------------------------------- */

static int cb_result(sh_shredder *s, int rc)
{
    if (rc != 0 && !s->reject && !s->fatal)
        fail(s, rc);
    return rc != 0 || s->reject || s->fatal;
}

/* A scalar right after a key that led to a plain scalar column (s->fast)
 * goes straight into its leaf: the chain on_value -> dispatch ->
 * begin_column -> shv_typed_value, with its checks for containers,
 * Variant, json and GeoJSON, cost about a tenth of a typed convert's
 * instructions. Anything unusual -- a null, a repeated key, a value not of
 * the column's type -- is left to that chain (*taken false), before
 * anything is written. */
static int fast_scalar(sh_shredder *s, int ev, const void *payload, bool *taken)
{
    const uint8_t fast = s->fast;
    const sh_target *tg = &s->target;
    s->fast = FAST_NONE;
    *taken = false;
    if (fast == FAST_FIELD) {
        int rc = shv_put_scalar(s, tg->type, tg->rep, ev, payload);
        *taken = rc != SHV_MISMATCH;
        return *taken ? rc : 0;
    }
    sh_colstate *cs = &s->cols[tg->column];
    if (cs->seen || cs->failed)
        return PQ_OK;
    int rc = shv_put_scalar(s, s->spec->columns[tg->column].type, 0, ev, payload);
    if (rc == SHV_MISMATCH)
        return PQ_OK;
    *taken = true;
    cs->seen = rc == 0;
    cs->raw_start = json_parser_offset(&s->parser);
    cs->key = tg->key;
    cs->key_len = tg->key_len;
    return rc;
}

static int scalar_value(sh_shredder *s, int ev, const void *payload)
{
    if (s->fast != FAST_NONE && !s->general_only) {
        bool taken;
        int rc = fast_scalar(s, ev, payload, &taken);
        if (taken)
            return cb_result(s, rc);
    }
    return cb_result(s, on_value(s, ev, payload));
}

static int container_value(sh_shredder *s, int ev)
{
    s->fast = FAST_NONE;
    return cb_result(s, on_value(s, ev, NULL));
}

static int cb_begin_object(void *u) { return container_value(u, EV_BEGIN_OBJECT); }
static int cb_begin_array(void *u) { return container_value(u, EV_BEGIN_ARRAY); }
static int cb_end_object(void *u) { return cb_result(u, on_end(u, true)); }
static int cb_end_array(void *u) { return cb_result(u, on_end(u, false)); }
static int cb_key(void *u, const char *k, size_t n) { return cb_result(u, on_key(u, k, n)); }
static int cb_string(void *u, const char *v, size_t n)
{
    sh_str str = {v, n};
    return scalar_value(u, EV_STRING, &str);
}
static int cb_number(void *u, const json_number *n) { return scalar_value(u, EV_NUMBER, n); }
static int cb_bool(void *u, bool v) { return scalar_value(u, EV_BOOL, &v); }
static int cb_null(void *u)
{
    ((sh_shredder *)u)->fast = FAST_NONE; /* a null: the chain decides */
    return cb_result(u, on_value(u, EV_NULL, NULL));
}

/* The schema-directed parse (shred_direct.c) of the members it predicts;
 * the events above take the rest. */
static int cb_member(void *u, const char *at, const char *end, const char **next,
                     bool *value_next)
{
    int rc = shd_member(u, at, end, next, value_next);
    return rc != 0 ? cb_result(u, rc) : 0;
}

static const json_handler record_handler = {
    cb_begin_object, cb_key, cb_end_object, cb_begin_array, cb_end_array,
    cb_string, cb_number, cb_bool, cb_null, cb_member,
};

/* sh_shredder_set_fast(false): every member through the events. */
static const json_handler general_handler = {
    cb_begin_object, cb_key, cb_end_object, cb_begin_array, cb_end_array,
    cb_string, cb_number, cb_bool, cb_null, NULL,
};

/* ---- the record ------------------------------------------------------------------ */

static void record_reset(sh_shredder *s, pq_rowgroup *rg, const char *line, size_t len,
                         int64_t ingest_us, pq_err *err)
{
    s->n_frames = 0;
    pq_buf_reset(&s->seen);
    memset(s->cols, 0, s->spec->n_columns * sizeof *s->cols);
    memset(&s->target, 0, sizeof s->target);
    s->fast = FAST_NONE;
    s->direct_declined = NULL;
    vr_builder_reset(&s->rest);
    s->rg = rg;
    s->leaves = pq_rowgroup_columns(rg, &s->n_leaves);
    s->line = line;
    s->line_len = len;
    s->ingest_us = ingest_us;
    s->err = err;
    s->reject = SH_REJECT_NONE;
    s->fatal = 0;
    s->has_rest_value = false;
}

static int finish_rest(sh_shredder *s)
{
    if (!sh_has_rest(s))
        return PQ_OK;
    vr_variant v;
    int rc;
    if (s->has_rest_value)
        rc = vr_finish(&s->rest, &v);
    else if (!s->general_only) /* nothing left over: the empty object, cached */
        rc = vr_finish_empty_object(&s->rest, &v);
    else { /* built, so that fuzz_shred compares the two */
        rc = vr_begin_object(&s->rest);
        rc = rc ? rc : vr_end_object(&s->rest);
        rc = rc ? rc : vr_finish(&s->rest, &v);
    }
    return rc ? rc : shv_write_variant(s, s->spec->columns[s->spec->rest].type, &v, 0);
}

static int put_ingest_time(sh_shredder *s, const sc_column *c)
{
    int64_t v = s->ingest_us;
    if (c->type->unit == PQ_UNIT_MILLIS)
        v = v >= 0 ? v / 1000 : -((-v + 999) / 1000);
    else if (c->type->unit == PQ_UNIT_NANOS)
        v *= 1000;
    return pq_column_put_i64(pq_rowgroup_column(s->rg, (size_t)c->type->leaf), 0, v);
}

void sh_set_index(sh_shredder *s, const char *index, size_t len)
{
    s->index = index;
    s->index_len = len;
}

static int put_index(sh_shredder *s, const sc_column *c, int i)
{
    if (s->index == NULL)
        return shv_missing_column(s, i);
    return pq_column_put_bytes(pq_rowgroup_column(s->rg, (size_t)c->type->leaf), 0, s->index,
                               s->index_len);
}

static int finish_columns(sh_shredder *s)
{
    for (size_t i = 0; i < s->spec->n_columns; i++) {
        if (s->cols[i].seen && s->from_line[i])
            continue; /* the common case, settled by two loads: the checks
                         below cost 20 instructions a column, 1.3% of the
                         access-log convert (callgrind) */
        const sc_column *c = &s->spec->columns[i];
        int rc = 0;
        if ((int)i == s->spec->rest)
            continue;
        if (c->source == SC_SRC_INGEST_TIME)
            rc = put_ingest_time(s, c);
        else if (c->source == SC_SRC_INDEX)
            rc = put_index(s, c, (int)i);
        else if (!s->cols[i].seen)
            rc = shv_missing_column(s, (int)i);
        if (rc != 0 || s->reject)
            return rc;
    }
    return PQ_OK;
}

static int parse_record(sh_shredder *s, const char *line, size_t len)
{
    pq_err perr;
    int rc = json_parse_line(&s->parser, line, len,
                             s->general_only ? &general_handler : &record_handler, s, &perr);
    if (s->fatal || s->reject)
        return PQ_OK;
    if (rc == JSON_EMPTY) {
        pq_err_set(s->err, SH_REJECTED, "empty line");
        s->reject = SH_REJECT_EMPTY;
    } else if (rc != 0) {
        pq_err_set(s->err, SH_REJECTED, "invalid JSON: %s", perr.msg);
        s->reject = SH_REJECT_INVALID_JSON;
    }
    return PQ_OK;
}

void sh_shredder_set_fast(sh_shredder *s, bool on)
{
    s->general_only = !on;
    vs_state_set_fast(&s->vshred, on);   /* shredded Variant columns */
}

sh_reject sh_last_reject(const sh_shredder *s)
{
    return s->fatal ? SH_REJECT_NONE : s->reject;
}

int sh_shred_line(sh_shredder *s, pq_rowgroup *rg, const char *line, size_t len,
                  int64_t ingest_us, pq_err *err)
{
    if (len > 0 && line[len - 1] == '\r')
        len--;
    record_reset(s, rg, line, len, ingest_us, err);
    parse_record(s, line, len);
    if (!s->fatal && !s->reject) {
        int rc = finish_rest(s);
        rc = rc ? rc : finish_columns(s);
        if (rc != 0 && !s->reject)
            fail(s, rc);
    }
    s->index = NULL;             /* sh_set_index is for one line */
    if (s->fatal || s->reject) {
        pq_rowgroup_abort_row(rg);
        return s->fatal ? s->fatal : SH_REJECTED;
    }
    pq_rowgroup_end_row(rg);
    return PQ_OK;
}
