/* pathkey.c - a record's {{FIELD}} values and partition key (pathkey.h):
 * one SAX pass over the line (json.h) that follows only the members the
 * template's paths name.
 *
 * Thread: an extractor is used by one thread at a time. */
#include "pathkey.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "evtime.h"
#include "json.h"
#include "json_scan.h"

#define PK_DEPTH (JSON_DEFAULT_MAX_DEPTH + 2)

/* Where a field's value is: in the line, in own (string values, which the
 * parser may unescape into a buffer it reuses), or a literal. */
typedef struct pk_slot {
    const char *p;               /* line or literal; NULL with own_len: in own */
    size_t len;
    size_t own_off;
    bool in_own;
} pk_slot;

struct pk_extractor {
    const pt_template *t;
    /* The paths followed: the template's fields, then time_from's (bit
     * tbit; 0: none). */
    const pt_field *fld[PT_FIELDS_MAX + 1];
    size_t n_fld;
    const et_source *ts;
    uint32_t tbit;
    pk_time time;
    json_parser jp;
    pq_buf own;
    const char *line;
    size_t depth;
    /* Bit f: field f's path matches the members open so far at this depth
     * (live), and the current member's key at this depth too (cur). */
    uint32_t live[PK_DEPTH], cur[PK_DEPTH];
    uint32_t found;              /* fields whose first value was seen */
    uint32_t wanted;             /* the fields the line gives (not _index) */
    uint32_t capture;            /* fields taking the container being read */
    bool top_only;               /* every wanted field, time_from's too, is one
                                    top-level key (leading_members) */
    bool sax_only;               /* pk_set_fast(false) */
    /* pk_key_memo: the directories' time of the last bucket of `period`
     * seconds (pt_dir_period; every field of the directories renders the
     * same within one) */
    int64_t period;
    bool tkey_set;
    int64_t tkey_bucket;
    size_t tkey_len;
    char tkey[PK_KEY_MAX];
    size_t key_len[PT_FIELDS_MAX + 1];   /* fld[f]->keys[0]'s, when top_only */
    size_t capture_depth, capture_start;
    pk_slot slot[PT_FIELDS_MAX];
};

int pk_new(pk_extractor **out, const pt_template *t, const et_source *ts, pq_err *err)
{
    pk_extractor *x = calloc(1, sizeof *x);
    if (x == NULL || json_parser_init(&x->jp, 0) != 0) {
        free(x);
        return pq_err_set(err, PQ_ENOMEM, "partition key: out of memory");
    }
    x->t = t;
    for (size_t f = 0; f < t->n_fields; f++)
        x->fld[x->n_fld++] = &t->fields[f];
    if (ts != NULL && ts->set) {
        x->ts = ts;
        x->tbit = 1u << x->n_fld;
        x->fld[x->n_fld++] = &ts->field;
    }
    x->top_only = true;
    x->period = t->dir_time ? pt_dir_period(t) : 0;
    for (size_t f = 0; f < x->n_fld; f++) {
        if (x->fld[f]->index)
            continue;
        x->wanted |= 1u << f;
        x->top_only &= x->fld[f]->n_keys == 1;
        if (x->fld[f]->n_keys == 1)
            x->key_len[f] = strlen(x->fld[f]->keys[0]);
    }
    pq_buf_init(&x->own);
    *out = x;
    return 0;
}

void pk_set_fast(pk_extractor *x, bool on)
{
    x->sax_only = !on;
}

void pk_free(pk_extractor *x)
{
    if (x == NULL)
        return;
    json_parser_free(&x->jp);
    pq_buf_free(&x->own);
    free(x);
}

/* Fields whose path ends at this depth's current member. */
/* A handler's return once every wanted field has its value: the parse
 * stops there. A record's first value of a key counts (later duplicates
 * are ignored anyway), and a line broken after its fields is rejected by
 * the shredder whatever its key, so the rest of the line cannot change
 * the key. With 1,000 partitions this pass was a tenth of the work. */
#define PK_DONE 1

static int done(const pk_extractor *x)
{
    return x->wanted != 0 && (x->found & x->wanted) == x->wanted ? PK_DONE : 0;
}

static uint32_t ending_here(const pk_extractor *x)
{
    uint32_t m = 0, c = x->cur[x->depth];
    for (size_t f = 0; c != 0 && f < x->n_fld; f++)
        if ((c >> f & 1u) && x->fld[f]->n_keys == x->depth)
            m |= 1u << f;
    return m & ~x->found;
}

/* time_from's value, when m holds it: its seconds, or a fallback (rc). */
static uint32_t take_time(pk_extractor *x, uint32_t m, int rc, int64_t sec)
{
    if (!(m & x->tbit))
        return m;
    x->found |= x->tbit;
    x->time.found = rc == 0;
    x->time.sec = rc == 0 ? sec : 0;
    return m & ~x->tbit;
}

static void take(pk_extractor *x, uint32_t m, const char *p, size_t len, bool own, size_t off)
{
    m = take_time(x, m, PQ_ETYPE, 0);   /* not a string or number: no time */
    for (size_t f = 0; m != 0 && f < x->n_fld; f++) {
        if (!(m >> f & 1u))
            continue;
        x->slot[f] = (pk_slot){.p = p, .len = len, .in_own = own, .own_off = off};
        x->found |= 1u << f;
    }
}

static int on_key(void *u, const char *s, size_t len)
{
    pk_extractor *x = u;
    const size_t d = x->depth;
    uint32_t m = 0, live = x->live[d];
    for (size_t f = 0; live != 0 && f < x->n_fld; f++) {
        const pt_field *fl = x->fld[f];
        if ((live >> f & 1u) && fl->n_keys >= d && strlen(fl->keys[d - 1]) == len &&
            memcmp(fl->keys[d - 1], s, len) == 0)
            m |= 1u << f;
    }
    x->cur[d] = m;
    return 0;
}

static int scalar(pk_extractor *x, const char *p, size_t len)
{
    if (x->depth > 0)
        take(x, ending_here(x), p, len, false, 0);
    return done(x);
}

static int on_string(void *u, const char *s, size_t len)
{
    pk_extractor *x = u;
    uint32_t m = x->depth > 0 ? ending_here(x) : 0;
    if (m & x->tbit) {
        int64_t sec = 0;
        int rc = et_from_string(x->ts, s, len, &sec);
        m = take_time(x, m, rc, sec);
    }
    if (m == 0)
        return done(x);
    size_t off = x->own.len;
    if (pq_buf_append(&x->own, s, len) != 0)
        return PQ_ENOMEM;
    take(x, m, NULL, len, true, off);
    return done(x);
}

static int on_number(void *u, const json_number *n)
{
    pk_extractor *x = u;
    if (x->tbit != 0 && x->depth > 0 && (ending_here(x) & x->tbit)) {
        int64_t sec = 0;
        int rc = et_from_number(x->ts, n, &sec);
        take_time(x, x->tbit, rc, sec);
    }
    return scalar(u, n->raw, n->len);
}

static int on_bool(void *u, bool v)
{
    return scalar(u, v ? "true" : "false", v ? 4 : 5);
}

static int on_null(void *u)
{
    pk_extractor *x = u;
    if (x->depth > 0)
        take(x, ending_here(x), NULL, 0, false, 0);   /* found: missing */
    return done(x);
}

static int begin(pk_extractor *x, bool object)
{
    const size_t d = x->depth;
    if (d + 1 >= PK_DEPTH)
        return PQ_ELIMIT;
    uint32_t inside = 0;
    if (d == 0) {
        x->time.object = object;
        for (size_t f = 0; object && f < x->n_fld; f++)
            if (!x->fld[f]->index)
                inside |= 1u << f;
    } else {
        uint32_t m = take_time(x, ending_here(x), PQ_ETYPE, 0);
        if (m != 0 && x->capture == 0) {
            x->capture = m;
            x->capture_depth = d + 1;
            x->capture_start = json_parser_offset(&x->jp);
        }
        for (size_t f = 0; object && f < x->n_fld; f++)
            if ((x->cur[d] >> f & 1u) && x->fld[f]->n_keys > d)
                inside |= 1u << f;
    }
    x->depth = d + 1;
    x->live[d + 1] = inside;
    x->cur[d + 1] = 0;
    return done(x);
}

static int end(pk_extractor *x)
{
    if (x->capture != 0 && x->depth == x->capture_depth) {
        size_t at = json_parser_offset(&x->jp);
        take(x, x->capture & ~x->found, x->line + x->capture_start, at + 1 - x->capture_start,
             false, 0);
        x->capture = 0;
    }
    x->depth--;
    return done(x);
}

static int on_begin_object(void *u) { return begin(u, true); }
static int on_begin_array(void *u) { return begin(u, false); }
static int on_end(void *u) { return end(u); }

static const json_handler handler = {
    .begin_object = on_begin_object, .key = on_key, .end_object = on_end,
    .begin_array = on_begin_array, .end_array = on_end, .string = on_string,
    .number = on_number, .boolean = on_bool, .null = on_null,
};

static void values_reset(pk_extractor *x, const char *line)
{
    pq_buf_reset(&x->own);
    memset(x->slot, 0, x->t->n_fields * sizeof x->slot[0]);   /* the template's: all read */
    x->line = line;
    x->depth = 0;
    x->found = x->capture = 0;
    x->live[0] = x->cur[0] = 0;
    x->time = (pk_time){0};
}

/* The top-level fields whose key is k (top_only). */
static uint32_t top_fields(const pk_extractor *x, const uint8_t *k, size_t len)
{
    uint32_t m = 0;
    for (size_t f = 0; f < x->n_fld; f++)
        if (!x->fld[f]->index && x->key_len[f] == len && memcmp(x->fld[f]->keys[0], k, len) == 0)
            m |= 1u << f;
    return m;
}

/* Members read before the SAX pass gives up on a line (leading_members). */
#define PK_LEAD_MAX 16

/* The SAX pass's result without it, for a line whose wanted fields
 * (time_from's too) come first: `{"k":"v","k2":"v2",...` written
 * compactly, every key and value up to the last wanted one a string of
 * plain bytes (json_plain_byte: no
 * escape, no control or non-ASCII byte), which the parser would hand over
 * as the same bytes. Every field found then: true (the SAX pass would
 * have stopped at the same member, PK_DONE). Anything else, valid JSON
 * or not (whitespace, an escape, a number, a container first): false,
 * and the SAX pass reads the line from its start. Routing by a leading
 * tenant or service field, this was three quarters of the key's cost. */
static bool leading_members(pk_extractor *x, const char *line, size_t len)
{
    const uint8_t *c = (const uint8_t *)line, *const end = c + len;
    if (!x->top_only || x->sax_only || x->wanted == 0 || len == 0 || *c++ != '{')
        return false;
    for (int n = 0; n < PK_LEAD_MAX; n++) {
        if (c == end || *c != '"')
            return false;
        const uint8_t *k = c + 1, *ke = json_skip_plain(k, end);
        if (end - ke < 3 || ke[0] != '"' || ke[1] != ':' || ke[2] != '"')
            return false;
        const uint8_t *v = ke + 3, *ve = json_skip_plain(v, end);
        if (ve == end || *ve != '"')
            return false;
        uint32_t m = top_fields(x, k, (size_t)(ke - k)) & ~x->found;
        if (m & x->tbit) {       /* as on_string */
            int64_t sec = 0;
            int rc = et_from_string(x->ts, (const char *)v, (size_t)(ve - v), &sec);
            m = take_time(x, m, rc, sec);
        }
        take(x, m, (const char *)v, (size_t)(ve - v), false, 0);
        if (done(x)) {
            x->time.object = true;
            return true;
        }
        c = ve + 1;
        if (c == end || *c++ != ',')
            return false;
    }
    return false;
}

int pk_values(pk_extractor *x, const char *line, size_t len, const char *index,
              size_t index_len, pt_value *values, pk_time *time, pq_err *err)
{
    const pt_template *t = x->t;
    values_reset(x, line);
    int rc = 0;
    if (!leading_members(x, line, len)) {
        values_reset(x, line);
        /* No error text: the key's own handler stops every parse (PK_DONE),
         * and formatting that stop was a thousand instructions a line. */
        rc = json_parse_line(&x->jp, line, len, &handler, x, NULL);
    }
    if (rc == PK_DONE)
        rc = 0;
    if (rc == PQ_ENOMEM)
        return pq_err_set(err, PQ_ENOMEM, "partition key: out of memory");
    if (rc != 0) {
        memset(x->slot, 0, sizeof x->slot);   /* not a record: every field missing */
        x->time = (pk_time){0};
    }
    if (time != NULL)
        *time = x->time;
    for (size_t f = 0; f < t->n_fields; f++) {
        const pk_slot *s = &x->slot[f];
        if (t->fields[f].index)
            values[f] = (pt_value){.p = index, .len = index ? index_len : 0};
        else if (s->in_own)
            values[f] = (pt_value){.p = (const char *)x->own.data + s->own_off, .len = s->len};
        else
            values[f] = (pt_value){.p = s->p, .len = s->p ? s->len : 0};
    }
    return 0;
}

/* The key's escaped values, each followed by '/', into out; *n their length. */
static int key_values(const pt_template *t, const pt_value *values, char *out, size_t cap,
                      size_t *n, pq_err *err)
{
    *n = 0;
    if (cap == 0)
        return pq_err_set(err, PQ_ELIMIT, "partition key: no room");
    for (size_t f = 0; f < t->n_fields; f++) {
        size_t w = pt_hive_escape(values[f].p, values[f].len, out + *n, cap - *n);
        if (w + 1 >= cap - *n)
            return pq_err_set(err, PQ_ELIMIT, "partition key: longer than %zu bytes", cap - 1);
        *n += w;
        out[(*n)++] = '/';
        out[*n] = '\0';
    }
    return 0;
}

int pk_key(const pt_template *t, const pt_value *values, time_t when, char *out, size_t cap,
           pq_err *err)
{
    size_t n;
    int rc = key_values(t, values, out, cap, &n, err);
    return rc ? rc : pt_dir_time_key(t, when, out + n, cap - n, err);
}

int pk_key_memo(pk_extractor *x, const pt_value *values, time_t when, char *out, size_t cap,
                pq_err *err)
{
    const pt_template *t = x->t;
    const int64_t p = x->period, w = (int64_t)when;
    if (p <= 0)                  /* no time field, or constant ones only */
        return pk_key(t, values, when, out, cap, err);
    const int64_t bucket = w / p - (w % p < 0);   /* floor */
    if (!x->tkey_set || bucket != x->tkey_bucket) {
        x->tkey_set = false;
        if (pt_dir_time_key(t, when, x->tkey, sizeof x->tkey, NULL) != 0)
            return pk_key(t, values, when, out, cap, err);   /* its error, as it words it */
        x->tkey_set = true;
        x->tkey_bucket = bucket;
        x->tkey_len = strlen(x->tkey);
    }
    size_t n;
    int rc = key_values(t, values, out, cap, &n, err);
    if (rc != 0)
        return rc;
    if (x->tkey_len + 1 > cap - n)   /* where pt_dir_time_key would refuse it */
        return pk_key(t, values, when, out, cap, err);
    memcpy(out + n, x->tkey, x->tkey_len + 1);
    return 0;
}
