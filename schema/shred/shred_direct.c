/* shred_direct.c - the schema-directed parse (see shred_direct.h).
 *
 * Records of one source repeat their key order, so at each member of a
 * routed object (a FM_ROUTE frame: the record, or an object on a column's
 * path) or of a typed struct (FM_TYPED), the key is nearly always the one
 * that followed the previous key in the last record (sh_trie.after; a
 * struct's next field). One compare of the line's `"key":` bytes confirms
 * it (sh_keypat: masked 8-byte words); then the value is read by the JSON
 * scanners (json_scan.h's string scan, a read of short numbers, else
 * json_scan_number: the parser's own code) and converted by the column's
 * own conversion (shv_put_scalar), and the next member is tried the same
 * way, all without a callback per token; so is an array of a top-level
 * list of plain scalars (direct_list). The general path's key, value
 * and fast_scalar steps (shred.c, shred_value.c) are replaced, with the
 * same effects on the shredder's state, so rows, files and errors are
 * identical whichever path a member takes. Members of objects mirrored
 * into a Variant builder (a Variant column's value, the rest column) need
 * no prediction: any key without escapes and a scalar go straight to the
 * builder; so do the members of a record whose schema has no column path
 * (the default schema: all to the rest column). The object of a shredded
 * Variant column whose members are all strings under keys its builder's
 * kept dictionary knows goes straight into the column's leaves
 * (direct_variant: vshred.c's vs_write_strings), without being built;
 * its keys are predicted too, from a per-column cache of keys met with
 * their dictionary ids and shred fields (sh_vcache), emptied whenever the
 * builder's dictionary renumbers or resets.
 * The object of a struct column, nested structs included, is read field
 * by field the same way (direct_struct), with the levels, nulls and
 * absent fields the events would write; anything unusual in it drops
 * what the column got in the row, and the parser reads the object.
 *
 * When the predicted key's value is not a scalar taken here (a container,
 * a null, an escape, a wrong type, a repeated key, a failed column), the
 * key alone is read, with on_key's effects, and the parser reads the
 * value as an event. Any other key declines before any effect and the
 * parser reads the member itself; invalid JSON always declines, so every
 * error message is the parser's own. tests/fuzz/fuzz_shred.c checks that
 * the two paths give the same bytes, rejects and messages.
 *
 * Runs on the thread that shreds the record. */
#include "shred_direct.h"
#include "shred_value.h"
#include "json_scan.h"
#include "memeq.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static inline const char *skip_ws(const char *c, const char *end)
{
    while (c < end && (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r'))
        c++;
    return c;
}

/* c is just past a key's closing quote: the value's first byte after ':'
 * (whitespace skipped), or NULL. Compact JSON first: no whitespace. */
static inline const char *after_colon(const char *c, const char *end)
{
    if (c < end && *c == ':' && c + 1 < end && (unsigned char)c[1] > ' ')
        return c + 1;
    c = skip_ws(c, end);
    if (c == end || *c != ':')
        return NULL;
    return skip_ws(c + 1, end);
}

/* Whether JSON writes the len bytes of key as they are: printable ASCII
 * without '"' or '\\' (bytes above 0x7e would need the parser's UTF-8
 * check, so they take its path). */
static bool is_lit(const char *key, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        const unsigned char b = (unsigned char)key[i];
        if (b < 0x20 || b > 0x7e || b == '"' || b == '\\')
            return false;
    }
    return true;
}

static void keypat_init(sh_keypat *p, const char *key, size_t len)
{
    uint8_t w[32] = {0}, m[32] = {0};
    *p = (sh_keypat){.lit = is_lit(key, len)};
    if (!p->lit || len + 3 > sizeof w)
        return;
    w[0] = '"';
    memcpy(w + 1, key, len);
    w[len + 1] = '"';
    w[len + 2] = ':';
    memset(m, 0xff, len + 3);
    p->len = (uint8_t)(len + 3);
    p->n_words = (uint8_t)((len + 3 + 7) / 8);
    memcpy(p->w, w, sizeof w);   /* bytes in line order, whatever the */
    memcpy(p->m, m, sizeof m);   /* byte order of the words */
}

/* at is a key's opening quote: whether the key is the len bytes of key,
 * with pattern p. Returns the value's first byte, or NULL. Compact JSON
 * (`"key":` then the value) is settled by the pattern's words when the
 * line holds that many bytes from at; anything else, by bytes. */
static inline __attribute__((always_inline))
const char *match_key(const sh_keypat *p, const char *at, const char *end,
                      const char *key, size_t len)
{
    if (!p->lit)
        return NULL;
    if (p->n_words != 0 && end - at >= 8 * (ptrdiff_t)p->n_words) {
        uint64_t diff = 0;
        for (unsigned i = 0; i < p->n_words; i++)
            diff |= (pq_memeq_load8((const uint8_t *)at + 8 * i) ^ p->w[i]) & p->m[i];
        const char *c = at + p->len;
        if (diff == 0 && c < end && (unsigned char)*c > ' ')
            return c;
    }
    if ((size_t)(end - at) < len + 3 || !pq_memeq(at + 1, key, len) || at[len + 1] != '"')
        return NULL;
    return after_colon(at + len + 2, end);
}

/* A number of at most 18 digits without exponent ("-12", "0", "0.746";
 * not "1e3", "012", "1."), read by short_number into its digits: m the
 * significand (integer and fraction digits as one integer), n integer
 * digits, f fraction digits, end the byte after it. */
typedef struct shd_num {
    uint64_t m;
    size_t n, f;
    bool neg;
    const char *start, *ip, *fp, *end;
} shd_num;

/* Reads a short number at c into o; false sends anything else (a
 * significand past 2^53 with a fraction among them) to
 * json_scan_number. */
static inline __attribute__((always_inline))
bool short_number(const char *c, const char *end, shd_num *o)
{
    o->start = c;
    o->neg = *c == '-';
    c += o->neg;
    const char *const ip = c;
    uint64_t m = 0;
    while (c < end && (unsigned)(*c - '0') < 10 && c - ip < 19)
        m = m * 10 + (uint64_t)(*c++ - '0');
    const size_t n = (size_t)(c - ip);
    if (n == 0 || n > 18 || (*ip == '0' && n > 1))
        return false;
    o->ip = ip;
    o->n = n;
    o->f = 0;
    if (c < end && *c == '.') {
        const char *const fp = ++c;
        while (c < end && (unsigned)(*c - '0') < 10 && (size_t)(c - fp) + n < 19)
            m = m * 10 + (uint64_t)(*c++ - '0');
        const size_t f = (size_t)(c - fp);
        if (f == 0 || f + n > 18 || m > (1ULL << 53) ||
            (c < end && ((unsigned)(*c - '0') < 10 || (*c | 0x20) == 'e')))
            return false;
        o->fp = fp;
        o->f = f;
    } else if (c < end && (*c | 0x20) == 'e') {
        return false;
    } else {
        o->fp = c;
    }
    o->m = m;
    o->end = c;
    return true;
}

/* A fraction's value: both operands exact, so one IEEE division rounds
 * correctly (json.c's number_double, Clinger's fast path). */
static inline double short_double(const shd_num *o)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                   1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
    const double v = (double)o->m / pow10[o->f];
    return o->neg ? -v : v;
}

/* num filled from o as the parser fills it (json.c: parse_number with
 * number_integer, or number_double). A fraction here instead of there:
 * about 230 instructions less per double (latency_ms of the access
 * logs). */
static inline __attribute__((always_inline))
void short_json_number(const shd_num *o, json_number *num)
{
    const size_t len = (size_t)(o->end - o->start);
    if (o->f != 0) {
        *num = (json_number){.raw = o->start, .len = len, .kind = JSON_NUM_DOUBLE,
                             .negative = o->neg, .d = short_double(o), .int_digits = o->ip,
                             .int_len = o->n, .frac_digits = o->fp, .frac_len = o->f};
        return;
    }
    const uint64_t m = o->m;
    *num = (json_number){.raw = o->start, .len = len, .kind = JSON_NUM_INT64,
                         .negative = o->neg, .i = o->neg ? -(int64_t)m : (int64_t)m,
                         .u = o->neg ? 0 : m, .d = o->neg ? -(double)m : (double)m,
                         .int_digits = o->ip, .int_len = o->n, .frac_digits = o->fp};
}

/* The number of scan_scalar and direct_value's general case: a short one
 * read here, else the parser's json_scan_number. NULL: not a number. */
static inline __attribute__((always_inline))
const char *read_number(sh_shredder *s, const char *c, const char *end, json_number *num)
{
    shd_num o;
    if (short_number(c, end, &o)) {
        short_json_number(&o, num);
        return o.end;
    }
    return json_scan_number(&s->parser, c, end, num);
}

/* The answer of put_short when it leaves the value to shv_put_scalar. */
#define SHD_UNTAKEN 4

/* A short number into a signed integer or double column: what
 * shv_put_scalar puts for the json_number short_json_number fills
 * (put_int: sk_int_signed's INT64 case then put_i; put_scalar's double:
 * number_as_double), without filling it or dispatching: about 70
 * instructions less per number. SHD_UNTAKEN, before any effect, for
 * anything else (an unsigned or other column, a fraction for an integer
 * column, an integer past 2^53 for a double column). */
static inline __attribute__((always_inline))
int put_short(sh_shredder *s, const sc_type *t, uint16_t rep, const shd_num *o)
{
    if (t->kind == SC_INT && t->is_signed && o->f == 0 && t->bit_width >= 1 &&
        t->bit_width <= 64) {
        const int64_t v = o->neg ? -(int64_t)o->m : (int64_t)o->m;
        const int64_t lim = t->bit_width == 64 ? 0 : (int64_t)1 << (t->bit_width - 1);
        if (t->bit_width != 64 && (v >= lim || v < -lim))
            return SHD_UNTAKEN; /* shv_put_scalar's mismatch, from the general path */
        pq_column *c = sh_leaf(s, t->leaf);
        return t->physical == PQ_INT64 ? pq_column_put_i64(c, rep, v)
                                       : pq_column_put_i32(c, rep, (int32_t)v);
    }
    if (t->kind == SC_DOUBLE && (o->f != 0 || o->m <= (1ULL << 53))) {
        /* an integer converts from its int64 as number_as_double does: "-0" is +0.0 */
        const int64_t i = o->neg ? -(int64_t)o->m : (int64_t)o->m;
        const double d = o->f != 0 ? short_double(o) : (double)i;
        return pq_column_put_double(sh_leaf(s, t->leaf), rep, d);
    }
    return SHD_UNTAKEN;
}

/* The string value at c (its opening quote): the closing quote when it has
 * no escape and is valid UTF-8, else NULL. Plain ASCII is scanned inline;
 * other bytes go to the parser's own check. */
static inline __attribute__((always_inline))
const char *plain_string(sh_shredder *s, const char *c, const char *end)
{
    const char *q = (const char *)json_skip_plain((const uint8_t *)c + 1, (const uint8_t *)end);
    if (q < end && *q == '"')
        return q;
    return q < end && (unsigned char)*q >= 0x80 ? json_scan_string(&s->parser, c + 1, end) : NULL;
}

/* The scalar at c into a plain scalar column of type t at rep: 0 (put,
 * *next just past it), SHV_MISMATCH (nothing written: the parser reads
 * it), or < 0 (a writer error). Strings of string columns skip
 * shv_put_scalar's dispatch for the put it would make (put_text). */
static inline __attribute__((always_inline))
int direct_value(sh_shredder *s, const sc_type *t, uint16_t rep, const char *c,
                 const char *end, const char **next)
{
    if (c == end)
        return SHV_MISMATCH;
    if (*c == '"') {
        const char *q = plain_string(s, c, end);
        if (q == NULL)
            return SHV_MISMATCH;
        *next = q + 1;
        if (t->kind == SC_STRING || t->kind == SC_ENUM)
            return pq_column_put_bytes(sh_leaf(s, t->leaf), rep, c + 1, (size_t)(q - c - 1));
        const sh_str str = {c + 1, (size_t)(q - c - 1)};
        return shv_put_scalar(s, t, rep, EV_STRING, &str);
    }
    if (*c == '-' || (unsigned)(*c - '0') < 10) {
        json_number num;
        const char *e;
        shd_num o;
        if (short_number(c, end, &o)) {
            const int rc = put_short(s, t, rep, &o);
            if (rc != SHD_UNTAKEN) {
                *next = o.end;
                return rc;
            }
            short_json_number(&o, &num);
            e = o.end;
        } else if ((e = json_scan_number(&s->parser, c, end, &num)) == NULL) {
            return SHV_MISMATCH;
        }
        *next = e;
        return shv_put_scalar(s, t, rep, EV_NUMBER, &num);
    }
    if (*c == 't' || *c == 'f') {
        const bool v = *c == 't';
        const size_t n = v ? 4 : 5;
        if ((size_t)(end - c) < n || memcmp(c, v ? "true" : "false", n) != 0)
            return SHV_MISMATCH;
        *next = c + n;
        return shv_put_scalar(s, t, rep, EV_BOOL, &v);
    }
    return SHV_MISMATCH; /* null, a container, or not JSON */
}

/* The member readers' answer when they read the key only:
 * the value, at *next, is the parser's. */
#define SHD_KEY 3

/* A scalar value as an event payload (shv_scalar_to_variant's). */
typedef struct shd_scalar {
    int ev;
    sh_str str;
    json_number num;
    bool b;
} shd_scalar;

/* Scans the scalar at c into sc (*next just past it) and returns its
 * payload, or NULL when it is no scalar the scanners take (a container,
 * an escape, invalid JSON). */
static inline __attribute__((always_inline))
const void *scan_scalar(sh_shredder *s, const char *c, const char *end,
                        shd_scalar *sc, const char **next)
{
    if (c == end)
        return NULL;
    if (*c == '"') {
        const char *q = plain_string(s, c, end);
        if (q == NULL)
            return NULL;
        sc->ev = EV_STRING;
        sc->str = (sh_str){c + 1, (size_t)(q - c - 1)};
        *next = q + 1;
        return &sc->str;
    }
    if (*c == '-' || (unsigned)(*c - '0') < 10) {
        const char *e = read_number(s, c, end, &sc->num);
        if (e == NULL)
            return NULL;
        sc->ev = EV_NUMBER;
        *next = e;
        return &sc->num;
    }
    static const char *const lit[] = {"true", "false", "null"};
    const int k = *c == 't' ? 0 : *c == 'f' ? 1 : *c == 'n' ? 2 : -1;
    const size_t n = k == 1 ? 5 : 4;
    if (k < 0 || (size_t)(end - c) < n || memcmp(c, lit[k], n) != 0)
        return NULL;
    sc->ev = k == 2 ? EV_NULL : EV_BOOL;
    sc->b = k == 0;
    *next = c + n;
    return &sc->b;
}

/* at is a key's opening quote: the key's closing quote when it has no
 * escape (its bytes are its text), and the value's first byte in *v; NULL
 * otherwise. */
static inline const char *any_key(sh_shredder *s, const char *at, const char *end,
                                  const char **v)
{
    const char *k = plain_string(s, at, end);
    *v = k ? after_colon(k + 1, end) : NULL;
    return *v ? k : NULL;
}

/* A member of a routed object without a column below it (the default
 * schema's record: everything goes to the `*` column): on_key finds no
 * child, so the value goes to the rest column (rest_value: the path
 * opened, the key, the scalar) or, without one, nowhere (only checked).
 * A container's key only. */
static int rest_member(sh_shredder *s, const char *at, const char *end, const char **next)
{
    const char *v, *k = any_key(s, at, end, &v);
    if (k == NULL)
        return SHV_MISMATCH;
    const size_t len = (size_t)(k - at - 1);
    shd_scalar sc;
    const void *payload = scan_scalar(s, v, end, &sc, next);
    if (payload != NULL) {
        if (!sh_has_rest(s))
            return PQ_OK;
        int rc = shv_rest_open_path(s);
        rc = rc ? rc : vr_key(&s->rest, at + 1, len);
        return rc ? rc : shv_scalar_to_variant(&s->rest, sc.ev, payload);
    }
    s->target = (sh_target){.kind = sh_has_rest(s) ? T_REST : T_IGNORE, .key = at + 1,
                            .key_len = len};
    s->fast = FAST_NONE;
    *next = v;
    return SHD_KEY;
}

/* A member of an object mirrored into a Variant (a Variant column's value,
 * or a value kept in the rest column): any key, no prediction. on_key's
 * vr_key, then on_value's scalar; a container's key only (its value is
 * the parser's). A key with escapes declines. */
static int variant_member(sh_shredder *s, vr_builder *b, const char *at, const char *end,
                          const char **next)
{
    const char *v, *k = any_key(s, at, end, &v);
    if (k == NULL)
        return SHV_MISMATCH;
    const size_t len = (size_t)(k - at - 1);
    shd_scalar sc;
    const void *payload = scan_scalar(s, v, end, &sc, next);
    int rc = vr_key(b, at + 1, len);
    if (payload != NULL)
        return rc ? rc : shv_scalar_to_variant(b, sc.ev, payload);
    *next = v;
    return rc ? rc : SHD_KEY;
}

/* The array at c (its '[') into a top-level list column of plain scalars
 * t, as the events would put it (shred.c's on_value for a list frame:
 * rep 0, then the element's level; an empty list present at t->def).
 * Compact JSON only. An element the direct put does not take (a null, a
 * container, a wrong type, whitespace) drops what the row put into the
 * column and returns SHV_MISMATCH: the parser reads the list as events.
 * Not inlined: in shd_member's loop it cost every member more than the
 * call costs a list (callgrind, default schema). */
static __attribute__((noinline))
int direct_list(sh_shredder *s, const sc_type *t, const char *c, const char *end,
                const char **next)
{
    const sc_type *e = t->elem;
    if (c + 1 < end && c[1] == ']') {
        *next = c + 2;
        return shv_nulls(s, t, 0, t->def);
    }
    uint16_t rep = 0;
    for (const char *p = c + 1;; rep = e->rep) {
        const char *after = p;
        int rc = direct_value(s, e, rep, p, end, &after);
        if (rc == 0 && after < end && (*after == ',' || *after == ']')) {
            p = after + 1;
            if (*after == ']') {
                *next = p;
                return PQ_OK;
            }
            continue;
        }
        if (rc != 0 && rc != SHV_MISMATCH)
            return rc;
        for (int l = t->leaf; l < t->leaf + t->n_leaves; l++)
            pq_rowgroup_abort_leaf(s->rg, (size_t)l);
        return SHV_MISMATCH;
    }
}

/* scan_strings's previous key: none yet (the next is predicted as the
 * object's first), or one not in the cache (no prediction). */
#define SHD_VSTART SHD_VMAX
#define SHD_VNONE (SHD_VMAX + 1)

/* The cache entry of the key at p (its opening quote), *v at its value:
 * first the entry that followed entry prev last time (one compare: the
 * keys of one source repeat their order), then any entry. SHD_VMAX when
 * no entry has that key. */
static inline size_t known_key(const sh_vcache *vc, size_t prev, const char *p, const char *end,
                               const char **v)
{
    const size_t g = prev == SHD_VSTART ? vc->first : prev < vc->n ? vc->keys[prev].next
                                                                   : SHD_VMAX;
    if (g < vc->n && (*v = match_key(&vc->keys[g].pat, p, end, vc->keys[g].key,
                                     vc->keys[g].key_len)) != NULL)
        return g;
    for (size_t i = 0; i < vc->n; i++)
        if (i != g && (*v = match_key(&vc->keys[i].pat, p, end, vc->keys[i].key,
                                      vc->keys[i].key_len)) != NULL)
            return i;
    return SHD_VMAX;
}

/* Key name (its id and shred field found the slow way) as a cache entry:
 * its index, or SHD_VMAX when it takes none (too long for a pattern, not
 * literal, or the cache full). */
static size_t learn_key(sh_vcache *vc, const char *name, size_t len, uint32_t id, int f)
{
    for (size_t i = 0; i < vc->n; i++)
        if (vc->keys[i].id == id)
            return i; /* met before with another spelling (whitespace) */
    if (vc->n == SHD_VMAX || len + 3 > sizeof vc->keys[0].key)
        return SHD_VMAX;
    sh_vkey *e = &vc->keys[vc->n];
    keypat_init(&e->pat, name, len);
    if (e->pat.n_words == 0)
        return SHD_VMAX;
    memcpy(e->key, name, len);
    e->key_len = (uint8_t)len;
    e->id = id;
    e->field = (int16_t)f;
    e->next = SHD_VMAX;
    e->object = 0;
    return vc->n++;
}

/* The member key at p: its dictionary id in *id, shred field in *f (-1
 * none), *v at its value, and its cache entry in *e (SHD_VNONE: none);
 * false for a key the dictionary lacks, a repeated key or an escape.
 * prev_id: the key before it (UINT32_MAX: none), ids[0..n) the object's
 * keys so far. */
static inline bool member_key(sh_shredder *s, const sc_shred *sh, const vr_builder *b,
                              sh_vcache *vc, size_t *e, const char *p, const char *end,
                              const char **v, const uint32_t *ids, size_t n, size_t guess,
                              uint32_t *id, int *f)
{
    size_t i = known_key(vc, *e, p, end, v);
    if (i == SHD_VMAX) {
        const char *k = any_key(s, p, end, v);
        const size_t len = k ? (size_t)(k - p - 1) : 0;
        if (k == NULL || !vr_dict_find(b, n ? ids[n - 1] : UINT32_MAX, p + 1, len, id))
            return false;
        *f = sc_shred_field_index(sh, p + 1, len, guess);
        i = learn_key(vc, p + 1, len, *id, *f);
        if (i == SHD_VMAX) { /* never cached: its repeats come here too */
            for (size_t j = 0; j < n; j++)
                if (ids[j] == *id)
                    return false;
            *e = SHD_VNONE;
            return true;
        }
    }
    sh_vkey *k = &vc->keys[i];
    if (k->object == vc->object)
        return false; /* repeated */
    k->object = vc->object;
    *id = k->id;
    *f = k->field;
    if (*e == SHD_VSTART)
        vc->first = (uint8_t)i;
    else if (*e < vc->n)
        vc->keys[*e].next = (uint8_t)i;
    *e = i;
    return true;
}

/* The members of the JSON object at c (its '{') read as strings into
 * strs (by shred field) and kept (the others, ascending ids), their
 * dictionary ids in ids: the number of members, *next past the '}', or
 * -1 for anything else (a key the dictionary lacks, a value not a plain
 * string, a string for a field that is not a string node, a repeated
 * key, whitespace, escapes, more than SHD_VMAX members). Keys are found
 * through vc (member_key), which must be for b's dictionary. */
static int scan_strings(sh_shredder *s, const sc_shred *sh, const vr_builder *b, sh_vcache *vc,
                        const char *c, const char *end, vr_str *strs, vs_kept *kept,
                        size_t *n_kept, uint32_t *ids, const char **next)
{
    size_t n = 0, guess = 0, e = SHD_VSTART;
    const char *p = c + 1;
    if (p < end && *p == '}') {
        *next = p + 1;
        return 0;
    }
    vc->object++;
    for (;;) {
        const char *v = NULL;
        uint32_t id;
        int f;
        if (n == SHD_VMAX || p == end || *p != '"' ||
            !member_key(s, sh, b, vc, &e, p, end, &v, ids, n, guess, &id, &f) || v == end ||
            *v != '"')
            return -1;
        const char *q = plain_string(s, v, end);
        if (q == NULL)
            return -1;
        ids[n++] = id;
        const vr_str str = {v + 1, (size_t)(q - v - 1)};
        if (f < 0) {
            size_t i = (*n_kept)++;
            for (; i > 0 && kept[i - 1].id > id; i--)
                kept[i] = kept[i - 1];
            kept[i] = (vs_kept){.id = id, .s = str.s, .len = str.len};
        } else if (sh->fields[f].shred->kind != SC_SHRED_PRIMITIVE ||
                   sh->fields[f].shred->type->kind != SC_STRING) {
            return -1;
        } else {
            strs[f] = str;
            guess = (size_t)f + 1;
        }
        p = q + 1;
        if (end - p >= 2 && p[0] == ',' && p[1] == '"') {
            p++;
            continue;
        }
        if (p < end && *p == '}') {
            *next = p + 1;
            return (int)n;
        }
        return -1;
    }
}

/* Column's key cache (made on first use) for builder b, emptied when b's
 * dictionary is another than the one its ids are from; NULL: no memory. */
static sh_vcache *vcache_of(sh_shredder *s, int column, const vr_builder *b)
{
    if (s->vcache == NULL && (s->vcache = calloc(s->spec->n_columns, sizeof *s->vcache)) == NULL)
        return NULL;
    sh_vcache *vc = s->vcache[column];
    if (vc == NULL && (vc = s->vcache[column] = calloc(1, sizeof *vc)) == NULL)
        return NULL;
    if (vc->epoch != vr_builder_dict_epoch(b)) {
        vc->epoch = vr_builder_dict_epoch(b);
        vc->n = 0;
        vc->first = SHD_VMAX;
    }
    return vc;
}

/* The object value at c of a shredded Variant column (t->shred an
 * object node) whose members are all strings, straight into its leaves:
 * what the parser's events, the column's builder and vs_write would
 * write (vs_write_strings), without building the value, when the
 * builder's dictionary already holds every key and stays (so the
 * metadata is the last record's). SHV_MISMATCH for anything else, before
 * any effect. */
static int direct_variant(sh_shredder *s, int column, const char *c, const char *end,
                          const char **next)
{
    const sc_type *t = s->spec->columns[column].type;
    const sc_shred *sh = t->shred;
    vr_builder *b = s->variants[column];
    if (sh == NULL || sh->kind != SC_SHRED_OBJECT || sh->n_fields > SHD_VMAX || b == NULL ||
        !vr_builder_meta_kept(b) || s->n_frames >= s->parser.max_depth)
        return SHV_MISMATCH;
    sh_vcache *vc = vcache_of(s, column, b);
    if (vc == NULL)
        return SHV_MISMATCH;
    vr_str strs[SHD_VMAX];
    vs_kept kept[SHD_VMAX];
    uint32_t ids[SHD_VMAX];
    size_t n_kept = 0;
    for (size_t f = 0; f < sh->n_fields; f++)
        strs[f] = (vr_str){NULL, 0};
    const int n = scan_strings(s, sh, b, vc, c, end, strs, kept, &n_kept, ids, next);
    if (n < 0)
        return SHV_MISMATCH;
    vr_variant v;
    vr_known_object(b, ids, (size_t)n, &v);
    s->direct_objects++;
    return vs_write_strings(&s->vshred, s->rg, t, &v, strs, kept, n_kept, 0, s->err);
}

/* Field j of struct t when its key is the one at `at` (compact or not):
 * the value's first byte, else NULL. Only plain scalar and struct fields
 * have keys here (any other field declines). */
static inline const char *field_key_at(const sh_shredder *s, const sc_column *field,
                                       const char *at, const char *end)
{
    const size_t leaf = (size_t)field->type->leaf;
    if (leaf >= s->n_field_keys)
        return NULL;
    const sh_field_key *fk = field->type->kind == SC_STRUCT ? &s->struct_keys[leaf]
                                                            : &s->field_keys[leaf];
    if (fk->type != field->type)
        return NULL;
    return match_key(&fk->pat, at, end, fk->key, fk->key_len);
}

/* The field of t whose key opens at `at`, tried first at guess (writers
 * keep the schema's order): its index, *v at its value; -1 for a key no
 * field has here. */
static int find_field(const sh_shredder *s, const sc_type *t, size_t guess, const char *at,
                      const char *end, const char **v)
{
    if (guess < t->n_fields && (*v = field_key_at(s, &t->fields[guess], at, end)) != NULL)
        return (int)guess;
    for (size_t j = 0; j < t->n_fields; j++)
        if (j != guess && (*v = field_key_at(s, &t->fields[j], at, end)) != NULL)
            return (int)j;
    return -1;
}

static int direct_struct(sh_shredder *s, int column, const sc_type *t, uint16_t rep,
                         size_t depth, const char *c, const char *end, const char **next);

/* The value at v of field f of a struct read by direct_struct: a null
 * (shv_typed_value's nulls, for a nullable field), a plain scalar
 * (direct_value, as fast_scalar's FAST_FIELD put) or a nested struct.
 * SHV_MISMATCH for anything else, which would fail the column. */
static int struct_value(sh_shredder *s, int column, const sc_column *f, uint16_t rep,
                        size_t depth, const char *v, const char *end, const char **after)
{
    const sc_type *ft = f->type;
    if (v < end && *v == 'n') {
        if (f->required || end - v < 4 || memcmp(v, "null", 4) != 0)
            return SHV_MISMATCH;
        *after = v + 4;
        return shv_nulls(s, ft, rep, (uint16_t)(ft->def - 1));
    }
    if (ft->kind == SC_STRUCT)
        return v < end && *v == '{' ? direct_struct(s, column, ft, rep, depth + 1, v, end, after)
                                    : SHV_MISMATCH;
    return direct_value(s, ft, rep, v, end, after);
}

/* The object at c (its '{') as the value of struct t at rep, depth
 * containers below the column's value: what the events would write
 * (push_typed's seen flags, shv_typed_key's field per key, the values,
 * shv_typed_end's nulls of absent fields), *next past the '}'. Compact
 * JSON only. SHV_MISMATCH for anything that would take the general path
 * elsewhere or fail the column (an unknown or repeated key, a wrong type,
 * a null for a required field, a required field absent, whitespace, an
 * escape, a container the parser's max_depth refuses): the caller then
 * drops what the column got in this row. */
static int direct_struct(sh_shredder *s, int column, const sc_type *t, uint16_t rep,
                         size_t depth, const char *c, const char *end, const char **next)
{
    if (s->n_frames + depth >= s->parser.max_depth || pq_buf_reserve(&s->seen, t->n_fields) != 0)
        return SHV_MISMATCH; /* too deep (the parser's error), or no memory (the parser's path) */
    sh_frame f = {.mode = FM_TYPED, .is_object = true, .type = t, .rep = rep,
                  .column = column, .seen_off = s->seen.len};
    memset(s->seen.data + f.seen_off, 0, t->n_fields);
    s->seen.len += t->n_fields;
    const char *p = c + 1;
    if (p < end && *p == '}')
        p++;
    else
        for (size_t guess = 0;;) {
            const char *v = NULL, *after = NULL;
            const int j = p < end && *p == '"' ? find_field(s, t, guess, p, end, &v) : -1;
            if (j < 0 || s->seen.data[f.seen_off + (size_t)j])
                return SHV_MISMATCH;
            s->seen.data[f.seen_off + (size_t)j] = 1;
            guess = (size_t)j + 1;
            int rc = struct_value(s, column, &t->fields[j], rep, depth, v, end, &after);
            if (rc != 0)
                return rc;
            if (end - after >= 2 && after[0] == ',' && after[1] == '"') {
                p = after + 1;
                continue;
            }
            if (after == end || *after != '}')
                return SHV_MISMATCH;
            p = after + 1;
            break;
        }
    for (size_t j = 0; j < t->n_fields; j++)
        if (t->fields[j].required && !s->seen.data[f.seen_off + j])
            return SHV_MISMATCH; /* shv_typed_end would fail the column */
    *next = p;
    return shv_typed_end(s, &f);
}

/* The object at c of a struct column (nothing of it yet in this row),
 * read by direct_struct; on SHV_MISMATCH the column's leaves drop what
 * it put, as direct_list's do, and the parser reads the object as
 * events. */
static __attribute__((noinline))
int direct_struct_column(sh_shredder *s, int column, const char *c, const char *end,
                         const char **next)
{
    const sc_type *t = s->spec->columns[column].type;
    const size_t seen_len = s->seen.len;
    int rc = direct_struct(s, column, t, 0, 0, c, end, next);
    s->seen.len = seen_len;
    if (rc == SHV_MISMATCH)
        for (int l = t->leaf; l < t->leaf + t->n_leaves; l++)
            pq_rowgroup_abort_leaf(s->rg, (size_t)l);
    s->direct_objects += rc == 0;
    return rc;
}

/* A member read by a direct path (rc its result, not SHV_MISMATCH): the
 * column's state as on_key and the value event would leave it. */
static inline int took_member(sh_shredder *s, sh_colstate *cs, const sh_trie *child,
                              const char *at, const char *v, int rc)
{
    cs->seen = rc == 0;
    cs->raw_start = (size_t)(v - s->line);
    cs->key = at + 1;
    cs->key_len = child->key_len;
    return rc;
}

/* A member of a routed object: shred.c's on_key for the predicted child,
 * then fast_scalar's put for a top-level plain scalar column. */
static int route_member(sh_shredder *s, sh_frame *top, const char *at, const char *end,
                        const char **next)
{
    const sh_trie *n = top->node;
    if (n->after == NULL) /* no child: the record of a schema without paths */
        return rest_member(s, at, end, next);
    const uint32_t guess = n->after[top->last_child];
    if (guess == 0)
        return SHV_MISMATCH;
    const sh_trie *child = &n->children[guess - 1];
    const char *v = match_key(&child->pat, at, end, child->key, child->key_len);
    if (v == NULL)
        return SHV_MISMATCH;
    top->last_child = guess;
    if (child->plain || child->plain_list) {
        sh_colstate *cs = &s->cols[child->column];
        if (!cs->seen && !cs->failed) {
            const sc_type *t = s->spec->columns[child->column].type;
            int rc = !child->plain ? (*v == '[' ? direct_list(s, t, v, end, next) : SHV_MISMATCH)
                                   : direct_value(s, t, 0, v, end, next);
            if (rc != SHV_MISMATCH)
                return took_member(s, cs, child, at, v, rc);
        }
    } else if (child->column >= 0 && v < end && *v == '{' &&
               s->variants[child->column] != NULL) {
        sh_colstate *cs = &s->cols[child->column];
        int rc = cs->seen || cs->failed ? SHV_MISMATCH
                                        : direct_variant(s, child->column, v, end, next);
        if (rc != SHV_MISMATCH)
            return took_member(s, cs, child, at, v, rc);
    } else if (child->column >= 0 && v < end && *v == '{' &&
               s->spec->columns[child->column].type->kind == SC_STRUCT) {
        sh_colstate *cs = &s->cols[child->column];
        int rc = cs->seen || cs->failed ? SHV_MISMATCH
                                        : direct_struct_column(s, child->column, v, end, next);
        if (rc != SHV_MISMATCH)
            return took_member(s, cs, child, at, v, rc);
    }
    /* on_key's effects; the parser's value event follows */
    s->target = (sh_target){.key = at + 1, .key_len = child->key_len};
    s->fast = child->plain ? FAST_COLUMN : FAST_NONE;
    if (child->column >= 0) {
        s->target.kind = T_COLUMN;
        s->target.column = child->column;
    } else {
        s->target.kind = T_ROUTE;
        s->target.node = child;
    }
    *next = v;
    return SHD_KEY;
}

/* A field of a typed struct: shv_typed_key for the guessed field, then
 * fast_scalar's FAST_FIELD put. */
static int field_member(sh_shredder *s, sh_frame *top, const char *at, const char *end,
                        const char **next)
{
    const sc_type *t = top->type;
    const size_t i = top->last_child;
    if (i >= t->n_fields || s->cols[top->column].failed)
        return SHV_MISMATCH;
    const sc_column *field = &t->fields[i];
    const size_t leaf = (size_t)field->type->leaf;
    uint8_t *seen = s->seen.data + top->seen_off;
    if (leaf >= s->n_field_keys || s->field_keys[leaf].type != field->type || seen[i])
        return SHV_MISMATCH; /* not a plain scalar, an odd name, or repeated */
    const sh_field_key *fk = &s->field_keys[leaf];
    const char *v = match_key(&fk->pat, at, end, fk->key, fk->key_len);
    if (v == NULL)
        return SHV_MISMATCH;
    seen[i] = 1;
    top->last_child = (uint32_t)i + 1;
    int rc = direct_value(s, field->type, top->rep, v, end, next);
    if (rc != SHV_MISMATCH)
        return rc;
    s->target = (sh_target){.kind = T_TYPED, .column = top->column, .type = field->type,
                            .nullable = !field->required, .rep = top->rep};
    s->fast = FAST_FIELD;
    *next = v;
    return SHD_KEY;
}

/* The plain scalar fields (field_keys) and struct-valued fields
 * (struct_keys) of the structs under t, by (first) leaf. */
static void add_field_keys(sh_shredder *s, const sc_type *t)
{
    if (t->kind == SC_LIST || t->kind == SC_MAP) {
        add_field_keys(s, t->elem);
        return;
    }
    if (t->kind != SC_STRUCT)
        return;
    for (size_t i = 0; i < t->n_fields; i++) {
        const sc_column *f = &t->fields[i];
        const char *name = f->path_len == 1 ? f->path[0] : f->name;
        const size_t len = strlen(name);
        const bool plain = shv_is_plain_scalar(f->type);
        if ((plain || f->type->kind == SC_STRUCT) && is_lit(name, len) &&
            f->type->leaf >= 0 && (size_t)f->type->leaf < s->n_field_keys) {
            sh_field_key *fk = &(plain ? s->field_keys : s->struct_keys)[f->type->leaf];
            *fk = (sh_field_key){.type = f->type, .key = name, .key_len = len};
            keypat_init(&fk->pat, name, len);
        }
        add_field_keys(s, f->type);
    }
}

static void trie_keypats(sh_trie *n)
{
    for (size_t i = 0; i < n->n_children; i++) {
        keypat_init(&n->children[i].pat, n->children[i].key, n->children[i].key_len);
        trie_keypats(&n->children[i]);
    }
}

int shd_setup(sh_shredder *s)
{
    trie_keypats(&s->root);
    s->n_field_keys = s->spec->n_leaves;
    s->field_keys = calloc(s->n_field_keys ? s->n_field_keys : 1, sizeof *s->field_keys);
    s->struct_keys = calloc(s->n_field_keys ? s->n_field_keys : 1, sizeof *s->struct_keys);
    if (s->field_keys == NULL || s->struct_keys == NULL)
        return PQ_ENOMEM;
    for (size_t i = 0; i < s->spec->n_columns; i++)
        add_field_keys(s, s->spec->columns[i].type);
    return PQ_OK;
}

int shd_member(sh_shredder *s, const char *at, const char *end, const char **next,
               bool *value_next)
{
    sh_frame *top = &s->frames[s->n_frames - 1];
    vr_builder *vb = top->mode == FM_VARIANT ? top->vb : top->mode == FM_REST ? &s->rest : NULL;
    if (top->mode != FM_ROUTE && vb == NULL &&
        (top->mode != FM_TYPED || top->type->kind != SC_STRUCT))
        return PQ_OK;
    if (at == s->direct_declined)
        return PQ_OK; /* declined here already, at the end of a run */
    for (;;) {
        const char *after = NULL;
        int rc = vb != NULL ? variant_member(s, vb, at, end, &after)
               : top->mode == FM_ROUTE ? route_member(s, top, at, end, &after)
                                       : field_member(s, top, at, end, &after);
        if (rc == SHV_MISMATCH) {
            s->direct_declined = at;
            return PQ_OK;
        }
        *next = after;
        if (rc == SHD_KEY) {
            *value_next = true;
            return PQ_OK;
        }
        if (rc != 0)
            return rc;
        s->fast = FAST_NONE;
        if (end - after < 2 || after[0] != ',' || after[1] != '"')
            return PQ_OK;
        at = after + 1;
    }
}
