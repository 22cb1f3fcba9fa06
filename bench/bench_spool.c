/* bench_spool.c - throughput of the spool's hot path (daemon/durability/spool.c):
 * sp_append of NDJSON-sized lines with an sp_flush per 64 KiB (what the
 * daemon does after each socket read), then a full replay.
 *
 *     bench_spool [-n LINES] [-l BYTES] [-d DIR]
 *
 * Defaults: 2,000,000 lines of 250 bytes in a fresh directory under
 * $TMPDIR (removed afterwards). No fdatasync (sync: none): this measures
 * the spool, not the disk. Prints lines/s and MB/s (10^6 bytes of lines)
 * for append+flush and for replay, and the CRC32C speed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "spool.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char p[4200];
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            int n = snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (n > 0 && (size_t)n < sizeof p)
                unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    size_t lines = 2000000, len = 250;
    char dir[4096] = "";
    int opt;
    while ((opt = getopt(argc, argv, "n:l:d:")) != -1) {
        if (opt == 'n')
            lines = strtoull(optarg, NULL, 10);
        else if (opt == 'l')
            len = strtoull(optarg, NULL, 10);
        else if (opt == 'd')
            snprintf(dir, sizeof dir, "%s", optarg);
        else
            return fprintf(stderr, "usage: bench_spool [-n LINES] [-l BYTES] [-d DIR]\n"), 2;
    }
    const bool own = dir[0] == '\0';
    if (own) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/bench_spool_XXXXXX", t && *t ? t : "/tmp");
        if (mkdtemp(dir) == NULL)
            return perror("mkdtemp"), 1;
    }
    char *line = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        line[i] = (char)('a' + i % 26);
    pq_err err = {0};
    sp_spool *s;
    if (sp_open(&s, dir, 0, NULL, &err) != 0)
        return fprintf(stderr, "bench_spool: %s\n", err.msg), 1;
    double t0 = now();
    for (size_t i = 0; i < lines; i++) {
        uint64_t seq;
        line[0] = (char)('0' + i % 10);
        if (sp_append(s, (int64_t)i, "tcp:10.0.0.5:51234", 18, line, len, &seq, &err) != 0 ||
            (sp_pending_bytes(s) >= 65536 && sp_flush(s, &err) != 0))
            return fprintf(stderr, "bench_spool: %s\n", err.msg), 1;
    }
    if (sp_flush(s, &err) != 0)
        return fprintf(stderr, "bench_spool: %s\n", err.msg), 1;
    double t1 = now();
    sp_reader *r;
    sp_record rec;
    size_t n = 0, bytes = 0;
    if (sp_reader_open(&r, s, 1, &err) != 0)
        return fprintf(stderr, "bench_spool: %s\n", err.msg), 1;
    int rc;
    while ((rc = sp_reader_next(r, &rec, &err)) == 1) {
        n++;
        bytes += rec.len;
    }
    double t2 = now();
    if (rc != 0 || n != lines)
        return fprintf(stderr, "bench_spool: replay: %zu of %zu lines: %s\n", n, lines,
                       err.msg), 1;
    sp_reader_close(r);
    const double mb = (double)(lines * len) / 1e6;
    printf("spool append+flush: %zu lines of %zu bytes: %.0f lines/s, %.0f MB/s\n", lines, len,
           (double)lines / (t1 - t0), mb / (t1 - t0));
    printf("spool replay:       %.0f lines/s, %.0f MB/s (%zu bytes)\n",
           (double)lines / (t2 - t1), mb / (t2 - t1), bytes);
    const size_t cn = (size_t)64 << 20;
    char *buf = calloc(1, cn);
    double t3 = now();
    uint32_t c = crc32c_sw(0, buf, cn);
    double t4 = now();
    c ^= crc32c(0, buf, cn);
    double t5 = now();
    printf("crc32c: slice-by-8 %.2f GB/s, dispatched %.2f GB/s (%08x)\n", cn / (t4 - t3) / 1e9,
           cn / (t5 - t4) / 1e9, c);
    free(buf);
    sp_close(s);
    free(line);
    if (own)
        rm_dir(dir);
    return 0;
}
