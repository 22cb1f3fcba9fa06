/* testdata.h - where the external test vectors are (README "Test data"):
 * the directory $PQ_TESTDATA names when the test runs, else the build's
 * default, ../shared/testdata beside the source tree (PQ_TESTDATA_DEFAULT,
 * set by CMakeLists.txt). They are not in the repository, so a test that
 * needs them is skipped, with the reason on stdout, when they are absent:
 *   - a program whose every test needs them calls pqt_testdata_require()
 *     first in main(): it exits PQT_SKIP_EXIT, which ctest reports as
 *     skipped (SKIP_RETURN_CODE);
 *   - a test among others starts with PQT_NEED_TESTDATA(rel): cmocka
 *     reports that test as skipped, and the program still runs the rest.
 * Paths are relative to the test data directory
 * ("parquet-testing/variant", "logs"). Single-threaded use. */
#ifndef PQ_TEST_TESTDATA_H
#define PQ_TEST_TESTDATA_H

#include <stdbool.h>

#define PQT_SKIP_EXIT 77

/* The test data directory: $PQ_TESTDATA if set and not empty, else the
 * build's default. */
const char *pqt_testdata(void);

/* root + "/" + rel (+ "/" + name when name is not NULL), in one of 8
 * static buffers used in turn: valid until 8 more calls. */
const char *pqt_testdata_path(const char *rel, const char *name);

/* Whether root/rel exists. */
bool pqt_testdata_has(const char *rel);

/* Prints why a test is skipped: root/rel is missing, and how to get it. */
void pqt_testdata_say_missing(const char *what, const char *rel);

/* When root/rel is missing: says so and exits PQT_SKIP_EXIT. */
void pqt_testdata_require(const char *program, const char *rel);

/* In a cmocka test, before anything is allocated: skip() it, saying why,
 * when root/rel is missing. */
#define PQT_NEED_TESTDATA(rel)                           \
    do {                                                 \
        if (!pqt_testdata_has(rel)) {                    \
            pqt_testdata_say_missing(__func__, rel);     \
            skip();                                      \
        }                                                \
    } while (0)

#endif
