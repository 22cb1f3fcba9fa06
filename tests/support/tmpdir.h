/* tmpdir.h - scratch directories for tests that write real files. */
#ifndef PQ_TEST_TMPDIR_H
#define PQ_TEST_TMPDIR_H

/* Removes path and everything below it, like `rm -rf` (no error if it is
 * gone already; symlinks are removed, not followed). */
void pqt_rm_rf(const char *path);

/* Writes text to dir/name with the given permission bits (key files must
 * be 0600: readable keys are refused). 0, or -1 with errno. */
int pqt_write_file(const char *dir, const char *name, const char *text, unsigned mode);

#endif
