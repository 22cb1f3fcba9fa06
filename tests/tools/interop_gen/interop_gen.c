/* interop_gen.c - writes the interop matrix: one Parquet file per feature
 * (type, nesting, encoding, page version, codec, dictionary fallback, row
 * groups, pages) plus NAME.expect.json with every value written, in the form
 * tests/interop/README.md describes. tests/interop/read.mjs then reads each
 * file with DuckDB, parquet-wasm and hyparquet and compares.
 *
 *   interop_gen OUTDIR [SEED]        (SEED: decimal; default from the clock)
 *
 * Uses only the public API of writer/pq_writer.h. Values are seeded random
 * plus edge values (INT64_MIN/MAX, UINT64 max, NaN, -0.0, subnormals, empty
 * and non-ASCII strings), and the seed is printed first so any run can be
 * repeated. Nested values are shredded here into (rep, def) per leaf with the
 * Dremel rules; our own max levels are checked against pq_schema_max_def/rep.
 * Exit status 1 if any file could not be written (the others are still
 * written, and a failed file leaves neither .parquet nor .expect.json).
 *
 * This file holds main; gen_matrix.c lists the files, gen_file.c writes
 * one, and gen.h names the parts. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: interop_gen OUTDIR [SEED]\n");
        return 2;
    }
    outdir = argv[1];
    if (argc == 3) {
        char *end;
        errno = 0;
        seed = strtoull(argv[2], &end, 10);
        if (errno || *end) {
            fprintf(stderr, "interop_gen: bad seed %s\n", argv[2]);
            return 2;
        }
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        seed %= 1000000000000ull;
    }
    if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "interop_gen: cannot create %s: %s\n", outdir, strerror(errno));
        return 2;
    }
    printf("interop_gen: seed %" PRIu64 " (repeat with: interop_gen OUTDIR %" PRIu64 ")\n", seed, seed);
    rng_seed(seed);
    matrix();
    free_owned();
    printf("interop_gen: %d files written, %d failed, seed %" PRIu64 "\n", files_ok, files_failed, seed);
    return files_failed ? 1 : 0;
}
