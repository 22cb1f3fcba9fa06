/* fuzz_shred.c - libFuzzer target for schema/shred/: the input's lines
 * shredded under a schema with every kind of column (typed leaves, a
 * struct with a nested struct, a list, a map, a Variant, a json column and
 * the rest column), as a differential test of the shredder's learnt state:
 * one shredder takes every line (its key-order predictions warm from the
 * lines before, shred.c's trie_find_next and shred_value.c's struct field
 * guess), another is made afresh for each line, and the two files must be
 * byte-identical (the long-lived one starts a batch per line, so its
 * Variant key dictionaries are per line too). Row groups of 3 rows make each column's kept encoding
 * decision (chooser.c) run across many row groups too.
 * The fresh shredders also run with the fast paths off
 * (sh_shredder_set_fast): every member through the parser's events and
 * every value through the general dispatch, so the same files and the same
 * rejects (code and message) show that neither the scalar fast path
 * (shred.c's fast_scalar) nor the schema-directed parse (shred_direct.c:
 * predicted `"key":` bytes, values scanned and converted straight into
 * their leaves) changes anything. The schema has a leaf of each scalar
 * conversion the direct parse makes (string, enum, ints, double, bool,
 * decimal, uuid, timestamp), struct fields among them (a required one),
 * a default, and keys it must leave to the parser (a space, non-ASCII);
 * Variant and rest values (members read straight into their builders),
 * the Variant shredded into typed leaves (typed_value/value per field:
 * strings, an integer, a bool, a nested object), and a list of strings
 * (arrays read element by element, or left to the parser on a surprise);
 * the rest column's empty object is a constant on the fast side only,
 * and the shredded Variant's objects go by vshred.c's plans (the last
 * object's field-by-field outcome, reused for the same field ids) and
 * its quick reads of integers, doubles and booleans on the warm side
 * only (a double `r` among the shredded fields for them).
 * Two more shredders take every line with their Variant dictionaries kept
 * from line to line, one with the fast paths on, one off: a shredded
 * Variant's object of known keys and string values then goes straight
 * from the line into its leaves on the fast side only (shred_direct.c's
 * direct_variant), and must write what the builder and vshred.c write.
 * Two more schemas have no column path: every member to the rest column
 * (the default schema's shape), or, without one, nowhere. */
#include "colspec.h"
#include "shred.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_shred: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

static const char schema_yaml[] =
    "columns:\n"
    "  - {name: ts, type: timestamp, unit: us, utc: true}\n"
    "  - {name: host, type: string}\n"
    "  - {name: method, type: enum, from: request.method}\n"
    "  - {name: status, type: int16, from: response.status}\n"
    "  - {name: latency, type: double, from: response.latency}\n"
    "  - name: client\n"
    "    type: struct\n"
    "    fields:\n"
    "      - {name: ip, type: string}\n"
    "      - {name: port, type: int32}\n"
    "      - name: geo\n"
    "        type: struct\n"
    "        fields: [{name: country, type: string}, {name: city, type: string}]\n"
    "      - {name: ok, type: bool}\n"
    "      - {name: id, type: int64, required: true}\n"
    "  - {name: tags, type: \"list<string>\"}\n"
    "  - {name: ok, type: bool}\n"
    "  - {name: price, type: \"decimal(9,2)\"}\n"
    "  - {name: n, type: int64, default: 7}\n"
    "  - {name: uid, type: uuid}\n"
    "  - {name: spaced, type: int32, from: \"a b\"}\n"
    "  - {name: accent, type: string, from: \"cl\u00e9\"}\n"
    "  - {name: attrs, type: \"map<string,int64>\"}\n"
    "  - name: headers\n"
    "    type: variant\n"
    "    from: request.headers\n"
    "    shred: {host: string, accept: string, n: int64, ok: bool, r: double, d: {x: int32}}\n"
    "  - {name: body, type: json}\n"
    "  - {name: rest, type: variant, from: \"*\"}\n";

/* Records without a column path below them: everything to the rest
 * column (the default schema's shape), or, without one, nowhere. */
static const char rest_only_yaml[] =
    "columns:\n"
    "  - {name: event, type: variant, from: \"*\"}\n"
    "  - {name: _ingest_ts, type: timestamp, unit: us, utc: true, required: true,\n"
    "     ingest_time: true}\n";
static const char no_path_yaml[] =
    "columns:\n"
    "  - {name: _ingest_ts, type: timestamp, unit: us, utc: true, ingest_time: true}\n";

static const char *const schemas[] = {schema_yaml, rest_only_yaml, no_path_yaml};
#define N_SCHEMAS (sizeof schemas / sizeof schemas[0])

static sc_schema *g_specs[N_SCHEMAS];
static pq_schema *g_pss[N_SCHEMAS];
static sc_schema *g_spec;
static pq_schema *g_ps;

typedef struct file {
    pq_writer *w;
    char path[64];
    int fd;
} file;

static void file_open(file *f, const char *tag)
{
    pq_err err = {0};
    snprintf(f->path, sizeof f->path, "/tmp/fuzz_shred.%d.%s", (int)getpid(), tag);
    f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(f->fd >= 0);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.row_group_max_rows = 3;
    o.page_max_rows = 2;
    CHECK(pq_writer_open(&f->w, g_ps, &o, pq_sink_fd(&f->fd), &err) == 0);
}

static int shred_into(file *f, sh_shredder *sh, const char *line, size_t len, pq_err *err)
{
    int rc = sh_shred_line(sh, pq_writer_rowgroup(f->w), line, len, 1700000000000000LL, err);
    CHECK(rc == 0 || err->msg[0] != '\0');
    if (rc == 0)
        CHECK(pq_writer_check_limits(f->w, err) == 0);
    return rc;
}

static size_t file_close(file *f, uint8_t **bytes)
{
    pq_err err = {0};
    CHECK(pq_writer_close(f->w, &err) == 0);
    pq_writer_destroy(f->w);
    off_t n = lseek(f->fd, 0, SEEK_END);
    CHECK(n >= 0);
    *bytes = malloc((size_t)n + 1);
    CHECK(*bytes != NULL && pread(f->fd, *bytes, (size_t)n, 0) == n);
    close(f->fd);
    unlink(f->path);
    return (size_t)n;
}

/* The two files' bytes are the same (both closed). */
static void same_files(file *x, file *y)
{
    uint8_t *a, *b;
    size_t na = file_close(x, &a), nb = file_close(y, &b);
    CHECK(na == nb && memcmp(a, b, na) == 0);
    free(a);
    free(b);
}

static void differential(const uint8_t *data, size_t size)
{
    pq_err err = {0};
    file warm, cold, kept_fast, kept_general;
    file_open(&warm, "warm");
    file_open(&cold, "cold");
    file_open(&kept_fast, "keptf");
    file_open(&kept_general, "keptg");
    sh_shredder *sh, *kf, *kg;
    CHECK(sh_shredder_new(&sh, g_spec, &err) == 0);
    CHECK(sh_shredder_new(&kf, g_spec, &err) == 0);
    CHECK(sh_shredder_new(&kg, g_spec, &err) == 0);
    sh_shredder_set_fast(kg, false);
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        sh_shredder *fresh;
        CHECK(sh_shredder_new(&fresh, g_spec, &err) == 0);
        sh_shredder_set_fast(fresh, false);
        sh_shredder_new_batch(sh); /* Variant metadata per line, as fresh's */
        pq_err ew = {0}, ec = {0};
        int rw = shred_into(&warm, sh, p, len, &ew);
        int rcold = shred_into(&cold, fresh, p, len, &ec);
        CHECK(rw == rcold && strcmp(ew.msg, ec.msg) == 0);
        CHECK(sh_last_reject(sh) == sh_last_reject(fresh));
        sh_shredder_destroy(fresh);
        /* Variant dictionaries kept across lines (as a batch keeps them):
         * only then may a known object skip its builder
         * (shred_direct.c's direct_variant) */
        pq_err ef = {0}, eg = {0};
        rw = shred_into(&kept_fast, kf, p, len, &ef);
        rcold = shred_into(&kept_general, kg, p, len, &eg);
        CHECK(rw == rcold && strcmp(ef.msg, eg.msg) == 0);
        CHECK(sh_last_reject(kf) == sh_last_reject(kg));
        p += len + (nl != NULL);
    }
    sh_shredder_destroy(sh);
    sh_shredder_destroy(kf);
    sh_shredder_destroy(kg);
    same_files(&warm, &cold);
    same_files(&kept_fast, &kept_general);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < N_SCHEMAS; i++) {
        pq_err err = {0};
        if (g_specs[i] == NULL) {
            CHECK(sc_schema_load_buffer("fuzz.yaml", schemas[i], strlen(schemas[i]), &g_specs[i],
                                        &err) == 0);
            CHECK(sc_build_parquet_schema(g_specs[i], &g_pss[i], &err) == 0);
        }
        g_spec = g_specs[i];
        g_ps = g_pss[i];
        differential(data, size);
    }
    return 0;
}
