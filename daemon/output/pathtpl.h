/* pathtpl.h - output path templates (DESIGN.md "Where files go", output.path):
 *
 *     "service={{service}}/dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet"
 *
 * This is the one grammar of output.path: the configuration loader, `parqd
 * check`, start-up, `parqd convert` and the renderer all parse a template
 * with pt_parse, so what one accepts every other accepts.
 *
 * strftime fields are expanded in UTC from the file's time (its first
 * record's event or ingestion time); {host} is the host name ('/' and
 * control characters become '_'), {pid} the process id, {seq} a counter
 * zero-padded to PT_SEQ_DIGITS digits (wider when it outgrows them), which
 * the file sink bumps when a name is already taken, so files never
 * overwrite each other, and {uuid} a random version 4 UUID per file (unique
 * across hosts and restarts). `%%` is a literal '%'.
 *
 * {{FIELD}} is a value of the record: a dotted path ("kubernetes.pod") or a
 * JSON Pointer ("/id.orig_h"), as a schema column's `from:` takes, or
 * `_index` (an Elasticsearch bulk action's index). Its value is escaped for
 * one path segment as Hive's FileUtils.escapePathName does (pt_hive_escape),
 * and a missing or null value (or an empty string, as Hive) renders as
 * __HIVE_DEFAULT_PARTITION__.
 *
 * The result is relative to output.dir (or the S3 prefix) and must stay
 * inside it; pt_render checks the rendered path again (a host name or a
 * value could in principle render to "..").
 *
 * Thread: any; a parsed template is read-only after pt_parse. */
#ifndef PQ_PATHTPL_H
#define PQ_PATHTPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "err.h"

#define PT_SEQ_DIGITS 6
#define PT_PATH_MAX 4096         /* rendered relative path, NUL included */
#define PT_NAME_MAX 255          /* one path component */
#define PT_FIELDS_MAX 16         /* {{FIELD}}s in one template */
#define PT_HIVE_DEFAULT "__HIVE_DEFAULT_PARTITION__"

/* The strftime conversions a template may use (no %n/%t, nothing locale-
 * or width-modified: %Ey, %-d and friends are refused, and no %D, whose
 * slashes would nest directories by accident). */
#define PT_STRFTIME_FIELDS "YmdHMSjyCGgVuUWwaAbBhepIlkszZFTR%"

/* One {{FIELD}} of a template, in order of appearance. */
typedef struct pt_field {
    char *text;                  /* as written between the braces */
    size_t off;                  /* of its "{{" in the template */
    char **keys;                 /* the record keys it walks (unescaped) */
    size_t n_keys;
    bool index;                  /* _index: the bulk action's index */
} pt_field;

typedef struct pt_template {
    char *text;
    pt_field fields[PT_FIELDS_MAX];
    size_t n_fields;
    bool has_time;               /* strftime fields other than %% */
    bool has_pid, has_uuid;      /* differ between runs (S3 refuses them) */
    size_t pid_off, uuid_off;    /* their first offsets */
    size_t dir_len;              /* the directories: text up to its last '/' */
    bool dir_time;               /* a '%' field in the directories (pt_dir_time_key
                                    renders something): decided once by pt_parse,
                                    not looked for in the text per record */
} pt_template;

/* A {{FIELD}}'s value for one record: p == NULL when the record lacks it
 * or it is null. p is the string's bytes (unescaped), or the JSON text of
 * a number, boolean, object or array. */
typedef struct pt_value {
    const char *p;
    size_t len;
} pt_value;

/* What a rendering fills in. fields[i] is the value of template field i
 * (n_fields == the template's). */
typedef struct pt_vars {
    time_t t;
    const char *host;
    long pid;
    uint64_t seq;
    const pt_value *fields;
    size_t n_fields;
    bool escaped;                /* fields are already escaped (a partition key's
                                    segments, pathkey.h): put as they are */
} pt_vars;

/* Parses a template into out (pt_free it, also after a failure). Returns 0
 * or PQ_EINVAL with *off the byte offset of the problem and err's message
 * the problem alone ("unknown placeholder '{pod}' (expected ...)"), for the
 * caller to place: the configuration as FILE:LINE:COL, pt_check as an
 * offset. PQ_ENOMEM likewise. */
int pt_parse(const char *tmpl, pt_template *out, size_t *off, pq_err *err);
void pt_free(pt_template *t);

/* pt_parse for callers without a file position: the message reads
 * "output path, offset N: PROBLEM in 'TEMPLATE'". */
int pt_check(const char *tmpl, pq_err *err);

/* One record path as {{FIELD}} and output.time_from take it: a dotted
 * path, a JSON Pointer or `_index`, split into f's keys (pt_field_free it,
 * also after a failure). 0, or PQ_EINVAL with *off the offset in text of
 * the problem, or PQ_ENOMEM. */
int pt_field_parse(const char *text, pt_field *f, size_t *off, pq_err *err);
void pt_field_free(pt_field *f);

/* Renders a parsed template into out. Returns 0, PQ_EINVAL (the rendered
 * path is not a relative path inside the output, or v has the wrong number
 * of fields), or PQ_ELIMIT (longer than n - 1 bytes or a component longer
 * than PT_NAME_MAX: a long field value). */
int pt_render_vars(const pt_template *t, const pt_vars *v, char *out, size_t n, pq_err *err);

/* A template without {{FIELD}}s, parsed and rendered in one call (a
 * template with fields is refused: it needs a record). */
int pt_render(const char *tmpl, time_t t, const char *host, long pid, uint64_t seq, char *out,
              size_t n, pq_err *err);

/* The directories' time. strftime fields in the directories (the
 * template up to its last '/') partition the output: a file holds only
 * records whose time renders the same directories. Fields in the file
 * name only stamp it with its first record's time. pt_dir_period is the
 * period of the finest such field in seconds: 1 (%S %s %T), 60 (%M %R),
 * 3600 (%H %I %l %k %p) or 86400 (the rest: coarser fields are checked
 * at each day); 0 when the directories have no time field. */
int64_t pt_dir_period(const pt_template *t);

/* The directories' time fields rendered for `when`, back to back: two
 * times with the same key put their records in the same directories.
 * Returns 0 (an empty key when the directories have no time field, for
 * any `when`), or PQ_ELIMIT / PQ_EINVAL (no room, time out of range). */
int pt_dir_time_key(const pt_template *t, time_t when, char *out, size_t n, pq_err *err);

/* Escapes one value for a path segment as Hive does: bytes 0x00-0x1F,
 * 0x7F and " # % ' * / : = ? \ { [ ] ^ become %XX (uppercase hex); all
 * others, UTF-8 included, stay. NULL or empty is PT_HIVE_DEFAULT; "." and
 * ".." (which Hive keeps) become "%2E" and "%2E%2E" so a value can never
 * name the directory itself or its parent. Writes at most cap - 1 bytes and
 * a NUL; returns the escaped length (>= cap: truncated). */
size_t pt_hive_escape(const char *v, size_t len, char *out, size_t cap);

/* Checks a relative path as pt_render's result is checked (also used for
 * names that do not come from a template). */
int pt_check_relative(const char *path, pq_err *err);

#endif
