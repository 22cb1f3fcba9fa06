/* json.h - strict RFC 8259 JSON parser for one NDJSON line, push (SAX) style.
 *
 * One pass over the line, no DOM, no allocation per value: the parser calls
 * the handler for every token as it goes (begin_object, key, string, number,
 * ... end_object), and the shredder or the Variant encoder builds what it
 * needs from those events. Recursion is never used, so a hostile line can
 * only hit max_depth, never the C stack.
 *
 *     json_parser p;
 *     json_parser_init(&p, 0);                 // 0: JSON_DEFAULT_MAX_DEPTH
 *     for each line:
 *         rc = json_parse_line(&p, line, len, &handler, user, &err);
 *         if (rc == JSON_EMPTY) continue;      // blank line: skip it
 *         if (rc != 0) dead_letter(line, err.msg);
 *     json_parser_free(&p);
 *
 * The line: pass the bytes of one line, with or without its terminating
 * "\n" or "\r\n". Both characters are insignificant whitespace in JSON, so
 * a trailing "\r\n" or "\n" is simply skipped; a raw CR or LF inside a
 * string is a control character and rejected, as RFC 8259 requires. The
 * line need not be NUL-terminated, and a NUL byte anywhere in it is an
 * error. Exactly one value must be present, surrounded by optional
 * whitespace; whether a non-object top-level value is an acceptable record
 * is the caller's decision.
 *
 * Strings (values and keys) reach the handler unescaped and validated as
 * UTF-8 (no overlongs, no encoded surrogates, nothing above U+10FFFF, no
 * lone \u surrogates). A string without escapes points straight into the
 * line (zero copy); one with escapes points into the parser's scratch
 * buffer. Either pointer stays valid until the next json_parse_line or
 * json_parser_free on this parser (and, for the zero-copy case, as long as
 * the caller keeps the line), so a handler may keep a key pointer while it
 * receives the value. Strings are not NUL-terminated, and "\u0000" yields a
 * real NUL byte inside the string (its length says where it ends).
 */
#ifndef PQ_JSON_H
#define PQ_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define JSON_DEFAULT_MAX_DEPTH 128

/* json_parse_line's return for a line that holds only whitespace (or
 * nothing): not an error, the framer simply skips it. Positive so it can
 * never be mistaken for a PQ_E* code. */
#define JSON_EMPTY 1

__extension__ typedef __int128 json_int128;

typedef enum json_num_kind {
    JSON_NUM_INT64,   /* integer syntax, fits int64_t: value in .i */
    JSON_NUM_UINT64,  /* integer syntax, > INT64_MAX but fits uint64_t: .u */
    JSON_NUM_DOUBLE   /* fraction or exponent, or an integer too large: .d */
} json_num_kind;

/* One number token. Every field is set for every number:
 *   raw/len     the exact text in the line ("-12.50e3"), not NUL-terminated
 *   kind        see json_num_kind. "1.0" and "1e2" are DOUBLE: the writer
 *               chose float syntax, and the exact value is still available
 *               through json_number_decimal
 *   i, u        the integer value when kind is INT64 / UINT64
 *   d           the value as a double, correctly rounded, for every kind
 *               (so a double column can take any number); "-0" is INT64 0
 *               with d = -0.0 and negative = true
 *   negative    the text starts with '-'
 *   int_digits  digits before the '.', as written ("0" in "0.5")
 *   frac_digits digits after the '.', as written (frac_len 0 if none)
 *   exp10       the exponent after 'e', as written (0 if none); saturated
 *               at +-1e9, beyond which no number is representable anyway
 * so that value = (-1)^negative * int_digits.frac_digits * 10^exp10.
 * Numbers whose double would overflow (1e400) are rejected at parse time
 * ("number out of range"); ones that underflow round to a denormal or 0. */
typedef struct json_number {
    const char *raw;
    size_t len;
    json_num_kind kind;
    bool negative;
    int64_t i;
    uint64_t u;
    double d;
    const char *int_digits;
    size_t int_len;
    const char *frac_digits;
    size_t frac_len;
    int64_t exp10;
} json_number;

/* The exact decimal value of num: value = unscaled * 10^-scale, with the
 * scale as written (frac_len - exp10, so "123.4500" -> 1234500, scale 4;
 * "-1e-3" -> -1, scale 3), raised to 0 when the exponent makes it negative
 * ("1.5e3" -> 1500, scale 0). No float rounding is involved. Returns 0, or
 * PQ_ELIMIT when the value needs more than 38 significant digits or a scale
 * outside 0..38 (the limits of Parquet DECIMAL and Variant decimal16). */
int json_number_decimal(const json_number *num, json_int128 *unscaled,
                        int32_t *scale);

/* Event callbacks. Any may be NULL (the event is then only validated).
 * Returning non-zero stops the parse; json_parse_line returns that value
 * unchanged, so handlers should return negative PQ_E* codes. If the
 * handler filled the pq_err that was passed to json_parse_line (its code is
 * no longer PQ_OK), the message is kept; otherwise the parser writes one
 * naming the byte offset. */
typedef struct json_handler {
    int (*begin_object)(void *user);
    int (*key)(void *user, const char *s, size_t len);
    int (*end_object)(void *user);
    int (*begin_array)(void *user);
    int (*end_array)(void *user);
    int (*string)(void *user, const char *s, size_t len);
    int (*number)(void *user, const json_number *num);
    int (*boolean)(void *user, bool v);
    int (*null)(void *user);
    /* Optional, for schema-directed parsers (the shredder's shred_direct.c):
     * called at each object member before the parser reads its key, with
     * at pointing at the key's opening quote. The handler may read the
     * member itself -- key, ':' and a scalar value, as json_scan_string and
     * json_scan_number read them, and any further members it predicts --
     * and set *next to the byte after the last value it read; the parser
     * goes on from there as after any value (',' or '}' next). Or it may
     * read only a key and its ':' (it did what its key callback would
     * have): then it sets *next to the value's first byte and *value_next,
     * and the parser reads the value. Leaving *next NULL declines: the
     * parser reads the member as usual, so a handler must decline before
     * any effect it could not repeat. */
    int (*member)(void *user, const char *at, const char *end, const char **next,
                  bool *value_next);
} json_handler;

/* Caller-owned parser state, reused across lines. Read-only for callers
 * except through the functions below; err_offset is public. */
typedef struct json_parser {
    size_t max_depth;
    uint8_t *stack;          /* one byte per open container: 1 = object */
    pq_buf scratch;          /* unescaped strings of the current line */
    pq_buf numbuf;           /* NUL-terminated copy of a long number */
    void *c_locale;          /* locale_t "C", for strtod_l */
    const uint8_t *line;     /* current line while parsing */
    const uint8_t *tok;      /* start of the token being reported */
    size_t err_offset;       /* after an error: 0-based byte offset */
    int err_code;            /* after an error: the code returned */
} json_parser;

/* max_depth: deepest nesting of objects/arrays accepted (a line "[[1]]"
 * has depth 2); 0 selects JSON_DEFAULT_MAX_DEPTH. Returns 0, PQ_EINVAL or
 * PQ_ENOMEM. */
int json_parser_init(json_parser *p, size_t max_depth);
void json_parser_free(json_parser *p);

/* Parses one line, calling h's callbacks with user. Returns 0 when the
 * line held exactly one valid JSON value; JSON_EMPTY for a whitespace-only
 * line; PQ_EPARSE for malformed JSON or invalid UTF-8; PQ_ELIMIT for
 * nesting deeper than max_depth or a number out of double range;
 * PQ_ENOMEM; or a handler's non-zero return. On error, err says what was
 * expected and where ("byte 17: expected ',' or '}' after object member,
 * got 'x'"; bytes are 0-based offsets into line) and p->err_offset holds
 * the same offset. Events already delivered before an error are not
 * retracted: a handler that builds a row must discard it on error. */
int json_parse_line(json_parser *p, const char *line, size_t len,
                    const json_handler *h, void *user, pq_err *err);

/* Scanners for a json_handler.member that reads values itself; they
 * accept exactly what json_parse_line accepts, and refuse (NULL) anything
 * they do not take, which the parser then reads and reports as usual.
 *
 * json_scan_string: at is just past a string's opening quote; returns the
 * closing quote when the string has no escape and is valid UTF-8 (so its
 * bytes are its text), else NULL. */
const char *json_scan_string(json_parser *p, const char *at, const char *end);

/* json_scan_number: at is at '-' or a digit; fills num as the number event
 * would and returns the byte after the number, or NULL when it is not a
 * valid number (p's error fields may then be overwritten: the parser's own
 * read reports it again). */
const char *json_scan_number(json_parser *p, const char *at, const char *end,
                             json_number *num);

/* During a callback: 0-based offset in the line of the token being
 * reported (the '{' for begin_object, the '}' for end_object, the opening
 * quote of a string or key, the first byte of a number or literal), so a
 * handler can name positions in its own errors or slice the raw text of a
 * whole object from its begin_object to its end_object offset. */
static inline size_t json_parser_offset(const json_parser *p)
{
    return (size_t)(p->tok - p->line);
}

#endif
