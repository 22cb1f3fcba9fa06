/* tmpdir.h - scratch directories for tests that write real files. */
#ifndef PQ_TEST_TMPDIR_H
#define PQ_TEST_TMPDIR_H

/* Removes path and everything below it, like `rm -rf` (no error if it is
 * gone already; symlinks are removed, not followed). */
void pqt_rm_rf(const char *path);

#endif
