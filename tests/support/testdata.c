/* testdata.c - where the external test vectors are (testdata.h). */
#include "testdata.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#ifndef PQ_TESTDATA_DEFAULT
#define PQ_TESTDATA_DEFAULT "../shared/testdata"
#endif

const char *pqt_testdata(void)
{
    const char *env = getenv("PQ_TESTDATA");
    return env != NULL && env[0] != '\0' ? env : PQ_TESTDATA_DEFAULT;
}

const char *pqt_testdata_path(const char *rel, const char *name)
{
    static char bufs[8][PATH_MAX];
    static unsigned next;
    char *b = bufs[next++ % 8];
    if (name != NULL)
        snprintf(b, PATH_MAX, "%s/%s/%s", pqt_testdata(), rel, name);
    else
        snprintf(b, PATH_MAX, "%s/%s", pqt_testdata(), rel);
    return b;
}

bool pqt_testdata_has(const char *rel)
{
    struct stat st;
    return stat(pqt_testdata_path(rel, NULL), &st) == 0;
}

void pqt_testdata_say_missing(const char *what, const char *rel)
{
    printf("SKIP %s: test vectors not found: %s (the external test data is not in the "
           "repository: set PQ_TESTDATA to its directory; README \"Test data\")\n", what,
           pqt_testdata_path(rel, NULL));
    fflush(stdout);
}

void pqt_testdata_require(const char *program, const char *rel)
{
    if (pqt_testdata_has(rel))
        return;
    pqt_testdata_say_missing(program, rel);
    exit(PQT_SKIP_EXIT);
}
