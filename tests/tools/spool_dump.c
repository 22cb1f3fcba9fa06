/* spool_dump.c - prints every intact record of a spool directory without
 * opening the spool (so nothing is repaired, cut or trimmed): what a
 * killed daemon had spooled, for the crash test.
 *
 *     spool_dump [--lines] [--from SEQ] DIR
 *
 * One record per output line: "seq<TAB>source<TAB>line", or with --lines
 * the line alone; the line's bytes are written as they are. Records come
 * in seq order from SEQ (default: all). A torn tail of the newest segment
 * (a crash mid-write) ends the dump silently, as it ends a replay; a bad
 * record elsewhere is reported on stderr and the dump goes on with the
 * next segment. Exit 0, 2 if some record failed its checks, 1 on usage or
 * I/O errors. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spool_int.h"

static int usage(void)
{
    fprintf(stderr, "usage: spool_dump [--lines] [--from SEQ] DIR\n");
    return 1;
}

int main(int argc, char **argv)
{
    bool lines = false;
    uint64_t from = 0;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--lines") == 0) {
            lines = true;
        } else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
            char *end;
            from = strtoull(argv[++i], &end, 10);
            if (*end != '\0')
                return usage();
        } else if (argv[i][0] == '-' || dir != NULL) {
            return usage();
        } else {
            dir = argv[i];
        }
    }
    if (dir == NULL)
        return usage();
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    pq_err err = {0};
    sp_reader *r;
    if (sp_reader_open_dir(&r, dir, from, &err) != 0) {
        fprintf(stderr, "spool_dump: %s\n", err.msg);
        return 1;
    }
    int status = 0, rc;
    sp_record rec;
    while ((rc = sp_reader_next(r, &rec, &err)) != 0) {
        if (rc == PQ_EPARSE) {
            fprintf(stderr, "spool_dump: %s\n", err.msg);
            status = 2;
            continue;
        }
        if (rc < 0) {
            fprintf(stderr, "spool_dump: %s\n", err.msg);
            status = 1;
            break;
        }
        if (!lines)
            printf("%" PRIu64 "\t%.*s\t", rec.seq, (int)rec.source_len, rec.source);
        fwrite(rec.line, 1, rec.len, stdout);
        putchar('\n');
    }
    sp_reader_close(r);
    if (fflush(stdout) != 0) {
        perror("spool_dump: stdout");
        status = 1;
    }
    return status;
}
