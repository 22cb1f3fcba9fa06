/* bench_json.c - throughput of the NDJSON line parser (schema/json/json.c).
 *
 *     bench_json [-s MB] [-r ROUNDS] [FILE...]
 *
 * Loads FILEs (default: every file under testdata/logs, found next to the
 * source tree or via $PQ_TESTDATA), repeats them in memory to about MB
 * megabytes (default 200), then parses every line ROUNDS times (default 3)
 * with a handler that counts events and touches every value, as the
 * shredder would, and once with no handler (validation only). Prints the
 * best round in MB/s (10^6 bytes) and lines/s. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "json.h"

typedef struct counts {
    size_t objects, arrays, keys, strings, numbers, literals;
    uint64_t checksum; /* keeps the compiler from dropping the work */
} counts;

static int c_bo(void *u) { ((counts *)u)->objects++; return 0; }
static int c_ba(void *u) { ((counts *)u)->arrays++; return 0; }
static int c_end(void *u) { (void)u; return 0; }
static int c_key(void *u, const char *s, size_t n)
{
    counts *c = u;
    c->keys++;
    c->checksum += n + (n ? (uint8_t)s[0] : 0);
    return 0;
}
static int c_str(void *u, const char *s, size_t n)
{
    counts *c = u;
    c->strings++;
    c->checksum += n + (n ? (uint8_t)s[n - 1] : 0);
    return 0;
}
static int c_num(void *u, const json_number *num)
{
    counts *c = u;
    c->numbers++;
    c->checksum += num->kind == JSON_NUM_DOUBLE ? (uint64_t)(int64_t)num->d : num->u + (uint64_t)num->i;
    return 0;
}
static int c_bool(void *u, bool v) { ((counts *)u)->literals += 1 + v; return 0; }
static int c_null(void *u) { ((counts *)u)->literals++; return 0; }

static const json_handler counting = {
    .begin_object = c_bo, .key = c_key, .end_object = c_end,
    .begin_array = c_ba, .end_array = c_end, .string = c_str,
    .number = c_num, .boolean = c_bool, .null = c_null,
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int append_file(pq_buf *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        pq_buf_append(b, chunk, n);
    fclose(f);
    if (b->len > 0 && b->data[b->len - 1] != '\n')
        pq_buf_push(b, '\n');
    return 0;
}

/* Every regular file below dir, recursively, in name order; skips the
 * VALIDATION.txt summary next to the logs. */
static int append_tree(pq_buf *b, const char *dir, int *nfiles)
{
    struct dirent **names;
    const int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (names[i]->d_name[0] != '.' && stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                append_tree(b, path, nfiles);
            else if (strstr(names[i]->d_name, ".txt") == NULL && append_file(b, path) == 0)
                (*nfiles)++;
        }
        free(names[i]);
    }
    free(names);
    return 0;
}

static const char *default_logs(char *buf, size_t cap)
{
    const char *env = getenv("PQ_TESTDATA");
    if (env != NULL) {
        snprintf(buf, cap, "%s/logs", env);
        return buf;
    }
    /* __FILE__ is .../main/bench/bench_json.c; the data is .../shared. */
    snprintf(buf, cap, "%s", __FILE__);
    char *slash = strrchr(buf, '/');
    if (slash == NULL)
        return "../shared/testdata/logs";
    *slash = '\0';
    snprintf(slash, cap - (size_t)(slash - buf), "/../../shared/testdata/logs");
    return buf;
}

/* One pass over all lines. Returns the number of lines, or 0 on error. */
static size_t run(json_parser *p, const pq_buf *in, const json_handler *h, counts *c)
{
    const char *s = (const char *)in->data, *end = s + in->len;
    size_t lines = 0;
    pq_err err;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const size_t len = (size_t)((nl ? nl : end) - s);
        const int rc = json_parse_line(p, s, len, h, c, &err);
        if (rc != 0 && rc != JSON_EMPTY) {
            fprintf(stderr, "bench_json: line %zu: %s\n", lines + 1, err.msg);
            return 0;
        }
        lines++;
        s += len + 1;
    }
    return lines;
}

int main(int argc, char **argv)
{
    double target_mb = 200;
    int rounds = 3;
    int argi = 1;
    for (; argi < argc && argv[argi][0] == '-'; argi++) {
        if (strcmp(argv[argi], "-s") == 0 && argi + 1 < argc)
            target_mb = atof(argv[++argi]);
        else if (strcmp(argv[argi], "-r") == 0 && argi + 1 < argc)
            rounds = atoi(argv[++argi]);
        else {
            fprintf(stderr, "usage: bench_json [-s MB] [-r ROUNDS] [FILE...]\n");
            return 1;
        }
    }

    pq_buf one, in;
    pq_buf_init(&one);
    pq_buf_init(&in);
    int nfiles = 0;
    char dbuf[4096];
    const char *src = argi < argc ? argv[argi] : default_logs(dbuf, sizeof dbuf);
    if (argi < argc) {
        for (; argi < argc; argi++) {
            if (append_file(&one, argv[argi]) != 0) {
                fprintf(stderr, "bench_json: cannot read %s\n", argv[argi]);
                return 1;
            }
            nfiles++;
        }
    } else if (append_tree(&one, src, &nfiles) != 0 || one.len == 0) {
        fprintf(stderr, "bench_json: no input under %s (set PQ_TESTDATA or pass files)\n", src);
        return 1;
    }
    const size_t target = (size_t)(target_mb * 1e6);
    pq_buf_reserve(&in, target + one.len);
    do
        pq_buf_append(&in, one.data, one.len);
    while (in.len < target);

    json_parser p;
    if (json_parser_init(&p, 0) != 0)
        return 3;
    printf("bench_json: %d file(s) from %s, %.1f MB in memory\n", nfiles, src, (double)in.len / 1e6);

    const struct { const char *name; const json_handler *h; } modes[] = {
        {"events (counting handler)", &counting},
        {"validate only (no handler)", &(json_handler){0}},
    };
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        double best = 1e30;
        size_t lines = 0;
        counts c = {0};
        for (int r = 0; r < rounds; r++) {
            memset(&c, 0, sizeof c);
            const double t0 = now();
            lines = run(&p, &in, modes[m].h, &c);
            const double t = now() - t0;
            if (lines == 0)
                return 2;
            if (t < best)
                best = t;
        }
        printf("  %-28s %8.1f MB/s %10.0f lines/s  (%zu lines, best of %d: %.3f s)\n",
               modes[m].name, (double)in.len / 1e6 / best, (double)lines / best, lines,
               rounds, best);
        if (m == 0)
            printf("  events per pass: %zu objects, %zu arrays, %zu keys, %zu strings, "
                   "%zu numbers, %zu literals (checksum %llu)\n", c.objects, c.arrays,
                   c.keys, c.strings, c.numbers, c.literals, (unsigned long long)c.checksum);
    }
    json_parser_free(&p);
    pq_buf_free(&one);
    pq_buf_free(&in);
    return 0;
}
