/* test_deadletter.c - the dead-letter file (daemon/durability/deadletter.c): JSON
 * escaping, lossless raw / raw_b64, timestamps, appending, write errors,
 * and reading the last seq back after a crash (deadletter_tail.c).
 *
 * The daemon sources are linked only into the parqd binary, not into a
 * library the unit tests link, so this test compiles the module under test
 * directly by including its .c file. Every line written is checked with a
 * small strict JSON reader below, which also decodes the strings, so the
 * tests compare the bytes a consumer gets back with the bytes put in. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../../daemon/durability/deadletter.c"
#include "../../../../daemon/durability/deadletter_tail.c"

/* ---- a strict reader for one flat JSON object -------------------------- */

typedef struct field {
    char key[32];
    enum { F_STR, F_TRUE, F_FALSE, F_NUM } kind;
    uint8_t val[1 << 14];        /* decoded string bytes (UTF-8), or number text */
    size_t len;
} field;

typedef struct obj {
    field f[8];
    size_t n;
} obj;

static void put_utf8(uint8_t *o, size_t *n, uint32_t cp)
{
    if (cp < 0x80) {
        o[(*n)++] = (uint8_t)cp;
    } else if (cp < 0x800) {
        o[(*n)++] = (uint8_t)(0xC0 | cp >> 6);
        o[(*n)++] = (uint8_t)(0x80 | (cp & 63));
    } else if (cp < 0x10000) {
        o[(*n)++] = (uint8_t)(0xE0 | cp >> 12);
        o[(*n)++] = (uint8_t)(0x80 | ((cp >> 6) & 63));
        o[(*n)++] = (uint8_t)(0x80 | (cp & 63));
    } else {
        o[(*n)++] = (uint8_t)(0xF0 | cp >> 18);
        o[(*n)++] = (uint8_t)(0x80 | ((cp >> 12) & 63));
        o[(*n)++] = (uint8_t)(0x80 | ((cp >> 6) & 63));
        o[(*n)++] = (uint8_t)(0x80 | (cp & 63));
    }
}

static int hex4(const char *p, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
}

/* Parses a JSON string at *p (RFC 8259: raw bytes must be valid UTF-8 and
 * >= 0x20). Returns 0 or -1. */
static int read_string(const char **p, const char *end, uint8_t *out, size_t cap, size_t *len)
{
    const char *s = *p;
    *len = 0;
    if (s >= end || *s++ != '"')
        return -1;
    while (s < end && *s != '"') {
        if (*len + 4 > cap)
            return -1;
        const uint8_t c = (uint8_t)*s;
        if (c < 0x20)
            return -1;
        if (c >= 0x80) {
            int n = utf8_char((const uint8_t *)s, (size_t)(end - s));
            if (n <= 0)
                return -1;
            memcpy(out + *len, s, (size_t)n);
            *len += (size_t)n;
            s += n;
            continue;
        }
        if (c != '\\') {
            out[(*len)++] = c;
            s++;
            continue;
        }
        s++;
        if (s >= end)
            return -1;
        const char e = *s++;
        const char *m = strchr("\"\\/bfnrt", e);
        if (m != NULL && e != '\0') {
            out[(*len)++] = (uint8_t)"\"\\/\b\f\n\r\t"[m - "\"\\/bfnrt"];
            continue;
        }
        uint32_t cp, lo;
        if (e != 'u' || end - s < 4 || hex4(s, &cp) != 0)
            return -1;
        s += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {
            if (end - s < 6 || s[0] != '\\' || s[1] != 'u' || hex4(s + 2, &lo) != 0 ||
                lo < 0xDC00 || lo > 0xDFFF)
                return -1;
            s += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
            return -1;
        }
        put_utf8(out, len, cp);
    }
    if (s >= end)
        return -1;
    *p = s + 1;
    return 0;
}

/* One object of string / true / false / non-negative integer members. */
static int read_object(const char *s, size_t n, obj *o)
{
    const char *p = s, *end = s + n;
    o->n = 0;
    if (p >= end || *p++ != '{')
        return -1;
    for (;;) {
        if (o->n == 8)
            return -1;
        field *f = &o->f[o->n++];
        size_t klen;
        if (read_string(&p, end, (uint8_t *)f->key, sizeof f->key - 1, &klen) != 0)
            return -1;
        f->key[klen] = '\0';
        if (p >= end || *p++ != ':')
            return -1;
        if (p < end && *p == '"') {
            f->kind = F_STR;
            if (read_string(&p, end, f->val, sizeof f->val, &f->len) != 0)
                return -1;
        } else if (end - p >= 4 && memcmp(p, "true", 4) == 0) {
            f->kind = F_TRUE;
            p += 4;
        } else if (end - p >= 5 && memcmp(p, "false", 5) == 0) {
            f->kind = F_FALSE;
            p += 5;
        } else {
            f->kind = F_NUM;
            f->len = 0;
            if (p >= end || *p < '0' || *p > '9' || (*p == '0' && p + 1 < end && p[1] >= '0' &&
                                                     p[1] <= '9'))
                return -1;
            while (p < end && *p >= '0' && *p <= '9' && f->len < 30)
                f->val[f->len++] = (uint8_t)*p++;
            f->val[f->len] = '\0';
        }
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == '}' && p + 1 == end)
            return 0;
        return -1;
    }
}

static const field *get(const obj *o, const char *key)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->f[i].key, key) == 0)
            return &o->f[i];
    return NULL;
}

static size_t b64_decode(const uint8_t *s, size_t n, uint8_t *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    assert_int_equal(n % 4, 0);
    for (size_t i = 0; i < n && s[i] != '='; i++) {
        const char *c = strchr(tab, s[i]);
        assert_non_null(c);
        acc = acc << 6 | (uint32_t)(c - tab);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    return o;
}

/* dl_format plus a NUL after the line (not counted), for strstr. */
static void fmt(pq_buf *b, const dl_record *r)
{
    pq_buf_reset(b);
    assert_int_equal(dl_format(b, r), 0);
    assert_int_equal(pq_buf_push(b, '\0'), 0);
    b->len--;
}

/* Formats r, checks the line is one valid JSON object with the documented
 * members, and that the raw bytes come back exactly. Returns the object. */
static obj *format_and_check(const dl_record *r, pq_buf *line)
{
    static obj o;
    static uint8_t back[1 << 14];
    fmt(line, r);
    assert_null(memchr(line->data, '\n', line->len));
    if (read_object((const char *)line->data, line->len, &o) != 0)
        fail_msg("not valid JSON: %.*s", (int)line->len, (const char *)line->data);
    assert_int_equal(o.n, 6);
    assert_non_null(get(&o, "ts"));
    assert_non_null(get(&o, "source"));
    assert_non_null(get(&o, "reason"));
    const field *raw = get(&o, "raw"), *b64 = get(&o, "raw_b64");
    assert_true((raw != NULL) != (b64 != NULL));
    const field *tr = get(&o, "truncated"), *by = get(&o, "bytes");
    assert_non_null(tr);
    assert_int_equal(tr->kind, r->truncated ? F_TRUE : F_FALSE);
    assert_non_null(by);
    char num[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)r->bytes);
    assert_string_equal((const char *)by->val, num);
    if (!r->truncated) {
        size_t n = raw ? raw->len : b64_decode(b64->val, b64->len, back);
        const uint8_t *got = raw ? raw->val : back;
        assert_int_equal(n, r->raw_len);
        assert_memory_equal(got, r->raw, n);
    }
    return &o;
}

static dl_record rec_of(const void *raw, size_t n)
{
    dl_record r = {.ts_us = 1714564800123456LL, .source = "file:/in.ndjson:7",
                   .reason = "expected ',' or '}'", .raw = raw, .raw_len = n, .bytes = n};
    return r;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_deadletter_format_fields_and_timestamp(void **state)
{
    (void)state;
    pq_buf b;
    pq_buf_init(&b);
    dl_record r = rec_of("{\"a\":1 x}", 9);
    format_and_check(&r, &b);
    const char want[] = "{\"ts\":\"2024-05-01T12:00:00.123456Z\",\"source\":\"file:/in.ndjson:7\","
                        "\"reason\":\"expected ',' or '}'\",\"raw\":\"{\\\"a\\\":1 x}\","
                        "\"truncated\":false,\"bytes\":9}";
    assert_int_equal(b.len, sizeof want - 1);
    assert_memory_equal(b.data, want, b.len);
    /* Before the epoch the fraction still counts forward. */
    r.ts_us = -1;
    fmt(&b, &r);
    assert_memory_equal(b.data, "{\"ts\":\"1969-12-31T23:59:59.999999Z\"", 35);
    pq_buf_free(&b);
}

static void test_deadletter_escapes_quotes_controls_and_nul_losslessly(void **state)
{
    (void)state;
    static const char raw[] = "q\"b\\s/\n\r\t\b\f\x01\x1f\x7f\0end \xc3\xa9 \xe2\x80\xa8 "
                              "\xf0\x9f\x98\x80";
    pq_buf b;
    pq_buf_init(&b);
    dl_record r = rec_of(raw, sizeof raw - 1);
    obj *o = format_and_check(&r, &b);
    assert_non_null(get(o, "raw"));
    assert_non_null(strstr((const char *)b.data, "\\u0000end"));
    assert_non_null(strstr((const char *)b.data, "\\n\\r\\t\\b\\f\\u0001\\u001f"));
    pq_buf_free(&b);
}

static void test_deadletter_invalid_utf8_goes_to_raw_b64_and_round_trips(void **state)
{
    (void)state;
    static const struct { const char *s; size_t n; } cases[] = {
        {"\xff", 1},                    /* never valid */
        {"a\xc0\x80z", 4},              /* overlong NUL */
        {"\xed\xa0\x80", 3},            /* UTF-16 surrogate */
        {"\xf4\x90\x80\x80", 4},        /* above U+10FFFF */
        {"ok \xe2\x82", 5},             /* cut short, not marked truncated */
        {"\x80", 1},                    /* lone continuation */
        {"{\"a\":\"\xfe\"}\0x", 11},
    };
    pq_buf b;
    pq_buf_init(&b);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dl_record r = rec_of(cases[i].s, cases[i].n);
        obj *o = format_and_check(&r, &b);
        if (get(o, "raw_b64") == NULL)
            fail_msg("case %zu: expected raw_b64", i);
        assert_false(dl_utf8_valid(cases[i].s, cases[i].n));
    }
    /* Exact base64 for a known input (RFC 4648 test vectors, shifted). */
    dl_record r = rec_of("\xff" "fo", 3);
    fmt(&b, &r);
    assert_non_null(strstr((const char *)b.data, "\"raw_b64\":\"/2Zv\""));
    r = rec_of("\xff", 1);
    fmt(&b, &r);
    assert_non_null(strstr((const char *)b.data, "\"raw_b64\":\"/w==\""));
    r = rec_of("\xff" "f", 2);
    fmt(&b, &r);
    assert_non_null(strstr((const char *)b.data, "\"raw_b64\":\"/2Y=\""));
    pq_buf_free(&b);
}

static void test_deadletter_truncated_line_cut_inside_a_character_stays_text(void **state)
{
    (void)state;
    /* "ab€" cut after the euro sign's second byte. */
    dl_record r = rec_of("ab\xe2\x82", 4);
    r.truncated = true;
    r.bytes = 1u << 20;
    pq_buf b;
    pq_buf_init(&b);
    obj *o = format_and_check(&r, &b);
    const field *raw = get(o, "raw");
    assert_non_null(raw);
    assert_int_equal(raw->len, 2);
    assert_memory_equal(raw->val, "ab", 2);
    /* A truncated prefix with a real error inside still goes to raw_b64. */
    r = rec_of("a\xff" "b\xe2\x82", 5);
    r.truncated = true;
    r.bytes = 99;
    o = format_and_check(&r, &b);
    assert_non_null(get(o, "raw_b64"));
    pq_buf_free(&b);
}

static void test_deadletter_invalid_bytes_in_reason_become_replacement_char(void **state)
{
    (void)state;
    dl_record r = rec_of("{}", 2);
    r.reason = "bad \xff byte";
    r.source = "file:/odd\x01name:1";
    pq_buf b;
    pq_buf_init(&b);
    obj *o = format_and_check(&r, &b);
    const field *re = get(o, "reason"), *so = get(o, "source");
    assert_int_equal(re->len, 12);
    assert_memory_equal(re->val, "bad \xef\xbf\xbd byte", 12);
    assert_memory_equal(so->val, "file:/odd\x01name:1", so->len);
    pq_buf_free(&b);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_deadletter_random_bytes_round_trip(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ (uint64_t)time(NULL), s = seed;
    pq_buf b;
    pq_buf_init(&b);
    uint8_t raw[300];
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = rnd(&s) % sizeof raw;
        const int mode = (int)(rnd(&s) % 3);
        for (size_t i = 0; i < n; i++) {
            uint64_t v = rnd(&s);
            /* mostly ASCII / mostly valid multibyte / anything */
            raw[i] = mode == 0 ? (uint8_t)(v % 128) : mode == 1 ? (uint8_t)"a\"\\\n\0\xc3\xa9"[v % 7]
                                                                : (uint8_t)v;
        }
        dl_record r = rec_of(raw, n);
        fmt(&b, &r);
        obj o;
        if (read_object((const char *)b.data, b.len, &o) != 0)
            fail_msg("seed %llu iter %d: invalid JSON", (unsigned long long)seed, iter);
        const field *rf = get(&o, "raw"), *bf = get(&o, "raw_b64");
        static uint8_t back[1024];
        size_t m = rf ? rf->len : b64_decode(bf->val, bf->len, back);
        if (m != n || memcmp(rf ? rf->val : back, raw, n) != 0)
            fail_msg("seed %llu iter %d: raw bytes did not round-trip", (unsigned long long)seed,
                     iter);
        if ((rf != NULL) != dl_utf8_valid(raw, n))
            fail_msg("seed %llu iter %d: raw/raw_b64 choice", (unsigned long long)seed, iter);
    }
    pq_buf_free(&b);
}

static void temp_path(char *buf, size_t n, const char *name)
{
    const char *t = getenv("TMPDIR");
    snprintf(buf, n, "%s/test_deadletter_%ld_%s", t && *t ? t : "/tmp", (long)getpid(), name);
}

static void test_deadletter_file_is_created_lazily_and_appended(void **state)
{
    (void)state;
    char path[512];
    temp_path(path, sizeof path, "rejects.ndjson");
    unlink(path);
    dl_file d;
    pq_err err = {0};
    assert_int_equal(dl_init(&d, path, DL_SYNC_CLOSE, &err), 0);
    assert_int_equal(access(path, F_OK), -1);          /* nothing rejected, no file */
    dl_record r1 = rec_of("one", 3), r2 = rec_of("\xfftwo", 4);
    assert_int_equal(dl_write(&d, &r1, &err), 0);
    assert_int_equal(dl_write(&d, &r2, &err), 0);
    assert_int_equal(dl_close(&d, &err), 0);
    assert_int_equal(dl_close(&d, &err), 0);
    assert_int_equal(d.records, 2);
    dl_free(&d);
    /* Reopening appends. */
    assert_int_equal(dl_init(&d, path, DL_SYNC_ALWAYS, &err), 0);
    assert_int_equal(dl_write(&d, &r1, &err), 0);
    assert_int_equal(dl_close(&d, &err), 0);
    dl_free(&d);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char line[4096];
    int lines = 0;
    while (fgets(line, sizeof line, fp)) {
        size_t n = strlen(line);
        assert_true(n > 0 && line[n - 1] == '\n');
        obj o;
        assert_int_equal(read_object(line, n - 1, &o), 0);
        lines++;
    }
    fclose(fp);
    assert_int_equal(lines, 3);
    unlink(path);
}

static void test_deadletter_seq_is_the_last_field_and_only_when_given(void **state)
{
    (void)state;
    pq_buf b;
    pq_buf_init(&b);
    dl_record r = rec_of("x", 1);
    assert_int_equal(dl_format(&b, &r), 0);
    obj o;
    assert_int_equal(read_object((const char *)b.data, b.len, &o), 0);
    assert_null(get(&o, "seq"));
    r.has_seq = true;
    r.seq = 18446744073709551615ULL;
    pq_buf_reset(&b);
    assert_int_equal(dl_format(&b, &r), 0);
    assert_int_equal(read_object((const char *)b.data, b.len, &o), 0);
    const field *f = get(&o, "seq");
    assert_non_null(f);
    assert_int_equal(f->kind, F_NUM);
    assert_memory_equal(f->val, "18446744073709551615", 20);
    const char *tail = ",\"seq\":18446744073709551615}";
    assert_memory_equal(b.data + b.len - strlen(tail), tail, strlen(tail));
    pq_buf_free(&b);
}

/* Appends records with the given seqs (0: none) to path. */
static void write_seqs(const char *path, const uint64_t *seqs, size_t n, const char *raw)
{
    dl_file d;
    pq_err err = {0};
    assert_int_equal(dl_init(&d, path, DL_SYNC_CLOSE, &err), 0);
    for (size_t i = 0; i < n; i++) {
        dl_record r = rec_of(raw, strlen(raw));
        r.has_seq = seqs[i] != 0;
        r.seq = seqs[i];
        assert_int_equal(dl_write(&d, &r, &err), 0);
    }
    assert_int_equal(dl_close(&d, &err), 0);
    dl_free(&d);
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_deadletter_recover_finds_the_last_seq(void **state)
{
    (void)state;
    char path[512];
    temp_path(path, sizeof path, "recover.ndjson");
    unlink(path);
    pq_err err = {0};
    uint64_t next = 99;
    assert_int_equal(dl_recover(path, &next, &err), 0);       /* no file */
    assert_int_equal(next, 0);
    const uint64_t none[] = {0, 0};
    write_seqs(path, none, 2, "a");
    assert_int_equal(dl_recover(path, &next, &err), 0);       /* records without seq */
    assert_int_equal(next, 0);
    const uint64_t seqs[] = {5, 6, 7};
    /* raw text that looks like a record's end cannot fool it: it is escaped */
    write_seqs(path, seqs, 3, "{\"x\":1,\"seq\":99}");
    write_seqs(path, none, 1, "direct");                       /* a reject with no seq last */
    off_t whole = file_size(path);
    assert_int_equal(dl_recover(path, &next, &err), 0);
    assert_int_equal(next, 8);
    assert_int_equal(file_size(path), whole);                   /* nothing cut */
    unlink(path);
}

static void test_deadletter_recover_cuts_a_partial_record(void **state)
{
    (void)state;
    char path[512];
    temp_path(path, sizeof path, "partial.ndjson");
    unlink(path);
    const uint64_t seqs[] = {3, 4};
    write_seqs(path, seqs, 2, "ok");
    off_t whole = file_size(path);
    /* a kill -9 during the write of seq 5: half its line */
    FILE *fp = fopen(path, "ab");
    assert_non_null(fp);
    fputs("{\"ts\":\"2024-05-01T12:00:00.123456Z\",\"source\":\"tcp\",\"seq\":5}", fp);
    fclose(fp);
    pq_err err = {0};
    uint64_t next = 0;
    assert_int_equal(dl_recover(path, &next, &err), 0);
    assert_int_equal(next, 5);                 /* the partial line's seq does not count */
    assert_int_equal(file_size(path), whole);  /* and it is gone: the replay writes it */
    /* a file holding only a partial record is emptied */
    fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs("{\"ts\":", fp);
    fclose(fp);
    assert_int_equal(dl_recover(path, &next, &err), 0);
    assert_int_equal(next, 0);
    assert_int_equal(file_size(path), 0);
    unlink(path);
}

static void test_deadletter_disk_full_is_reported_with_path(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    dl_file d;
    pq_err err = {0};
    assert_int_equal(dl_init(&d, "/dev/full", DL_SYNC_ALWAYS, &err), 0);
    dl_record r = rec_of("x", 1);
    assert_int_equal(dl_write(&d, &r, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "/dev/full"));
    assert_non_null(strstr(err.msg, "disk full"));
    assert_non_null(strstr(err.msg, "file:/in.ndjson:7"));
    assert_int_equal(d.records, 0);
    assert_int_equal(dl_close(&d, &err), 0);
    dl_free(&d);
}

static void test_deadletter_unopenable_path_is_reported(void **state)
{
    (void)state;
    dl_file d;
    pq_err err = {0};
    assert_int_equal(dl_init(&d, "/nonexistent-dir-parqd/rejects.ndjson", DL_SYNC_CLOSE, &err),
                     0);
    dl_record r = rec_of("x", 1);
    assert_int_equal(dl_write(&d, &r, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir-parqd/rejects.ndjson"));
    assert_non_null(strstr(err.msg, "cannot open"));
    dl_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadletter_format_fields_and_timestamp),
        cmocka_unit_test(test_deadletter_escapes_quotes_controls_and_nul_losslessly),
        cmocka_unit_test(test_deadletter_invalid_utf8_goes_to_raw_b64_and_round_trips),
        cmocka_unit_test(test_deadletter_truncated_line_cut_inside_a_character_stays_text),
        cmocka_unit_test(test_deadletter_invalid_bytes_in_reason_become_replacement_char),
        cmocka_unit_test(test_deadletter_random_bytes_round_trip),
        cmocka_unit_test(test_deadletter_file_is_created_lazily_and_appended),
        cmocka_unit_test(test_deadletter_seq_is_the_last_field_and_only_when_given),
        cmocka_unit_test(test_deadletter_recover_finds_the_last_seq),
        cmocka_unit_test(test_deadletter_recover_cuts_a_partial_record),
        cmocka_unit_test(test_deadletter_disk_full_is_reported_with_path),
        cmocka_unit_test(test_deadletter_unopenable_path_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
