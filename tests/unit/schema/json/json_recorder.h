/* json_recorder.h - the JSON parser tests' fixture: a handler that writes
 * every event of a parsed line into a text trace, one parser per test
 * process (setup/teardown), and the assert_parses_to/assert_rejects
 * checks. Header only (static inline): each test file is one program. */
#ifndef JSON_RECORDER_H
#define JSON_RECORDER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "json.h"

/* ---- a recording handler: every event appended to a text trace -------- */

typedef struct rec {
    pq_buf trace;
    json_parser *p;
    int depth, max_depth;
    int top_objects;        /* begin_object events at depth 0 */
    int top_object_ends;
    size_t events;
    json_number last_num;
    const char *last_str;   /* last string or key, as delivered */
    size_t last_len;
    const char *first_key;  /* kept to check pointers stay valid */
    size_t first_key_len;
    size_t obj_begin_off, obj_end_off;
} rec;

static inline void put(rec *r, const char *s) { pq_buf_append(&r->trace, s, strlen(s)); }

static inline void put_text(rec *r, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint8_t ch = (uint8_t)s[i];
        if (ch >= 0x20 && ch < 0x7F && ch != '\\') {
            pq_buf_push(&r->trace, ch);
        } else {
            char b[8];
            snprintf(b, sizeof b, "\\x%02X", ch);
            put(r, b);
        }
    }
}

static inline void sep(rec *r)
{
    if (r->trace.len > 0)
        pq_buf_push(&r->trace, ' ');
    r->events++;
}

static inline int on_begin_object(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "{");
    if (r->depth == 0) {
        r->top_objects++;
        r->obj_begin_off = json_parser_offset(r->p);
    }
    if (++r->depth > r->max_depth)
        r->max_depth = r->depth;
    return 0;
}

static inline int on_end_object(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "}");
    if (--r->depth == 0) {
        r->top_object_ends++;
        r->obj_end_off = json_parser_offset(r->p);
    }
    return 0;
}

static inline int on_begin_array(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "[");
    if (++r->depth > r->max_depth)
        r->max_depth = r->depth;
    return 0;
}

static inline int on_end_array(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "]");
    r->depth--;
    return 0;
}

static inline int on_key(void *u, const char *s, size_t n)
{
    rec *r = u;
    sep(r);
    put(r, "k:");
    put_text(r, s, n);
    r->last_str = s;
    r->last_len = n;
    if (r->first_key == NULL) {
        r->first_key = s;
        r->first_key_len = n;
    }
    return 0;
}

static inline int on_string(void *u, const char *s, size_t n)
{
    rec *r = u;
    sep(r);
    put(r, "s:");
    put_text(r, s, n);
    r->last_str = s;
    r->last_len = n;
    return 0;
}

static inline int on_number(void *u, const json_number *num)
{
    rec *r = u;
    sep(r);
    put(r, num->kind == JSON_NUM_INT64 ? "i:" : num->kind == JSON_NUM_UINT64 ? "u:" : "d:");
    put_text(r, num->raw, num->len);
    r->last_num = *num;
    return 0;
}

static inline int on_boolean(void *u, bool v)
{
    rec *r = u;
    sep(r);
    put(r, v ? "true" : "false");
    return 0;
}

static inline int on_null(void *u)
{
    rec *r = u;
    sep(r);
    put(r, "null");
    return 0;
}

static const json_handler rec_handler = {
    .begin_object = on_begin_object, .key = on_key, .end_object = on_end_object,
    .begin_array = on_begin_array, .end_array = on_end_array,
    .string = on_string, .number = on_number, .boolean = on_boolean,
    .null = on_null,
};

/* One parser per test process; each parse resets the recorder. */
static json_parser g_parser;
static rec g_rec;
static pq_err g_err;

static inline int parse_n(const char *s, size_t n)
{
    pq_buf_reset(&g_rec.trace);
    pq_buf tr = g_rec.trace;
    memset(&g_rec, 0, sizeof g_rec);
    g_rec.trace = tr;
    g_rec.p = &g_parser;
    int rc = json_parse_line(&g_parser, s, n, &rec_handler, &g_rec, &g_err);
    pq_buf_push(&g_rec.trace, 0);
    g_rec.trace.len--;
    return rc;
}

static inline int parse(const char *s) { return parse_n(s, strlen(s)); }

static inline const char *trace(void) { return (const char *)g_rec.trace.data; }

static inline int setup(void **state)
{
    (void)state;
    pq_buf_init(&g_rec.trace);
    return json_parser_init(&g_parser, 0);
}

static inline int teardown(void **state)
{
    (void)state;
    json_parser_free(&g_parser);
    pq_buf_free(&g_rec.trace);
    return 0;
}

#define assert_parses_to(json, want) do { \
        assert_int_equal(parse(json), 0); \
        assert_string_equal(trace(), want); \
    } while (0)

#define assert_rejects(json, code, msg_part) do { \
        assert_int_equal(parse_n(json, sizeof(json) - 1), code); \
        if (strstr(g_err.msg, msg_part) == NULL) \
            fail_msg("message \"%s\" lacks \"%s\"", g_err.msg, msg_part); \
    } while (0)

#endif
