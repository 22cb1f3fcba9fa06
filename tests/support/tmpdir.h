/* tmpdir.h - scratch directories for tests that write real files, and
 * whole files read into memory. */
#ifndef PQ_TEST_TMPDIR_H
#define PQ_TEST_TMPDIR_H

#include <stddef.h>
#include <stdint.h>

/* Removes path and everything below it, like `rm -rf` (no error if it is
 * gone already; symlinks are removed, not followed). */
void pqt_rm_rf(const char *path);

/* Writes text to dir/name with the given permission bits (key files must
 * be 0600: readable keys are refused). 0, or -1 with errno. */
int pqt_write_file(const char *dir, const char *name, const char *text, unsigned mode);

/* The whole file at path in a malloc'd buffer (the caller frees it), its
 * size in *len; NULL with errno when it cannot be read. */
uint8_t *pqt_read_file(const char *path, size_t *len);

/* For a tool run as `TOOL OUTDIR`: OUTDIR, created if need be (an
 * existing one is fine), or NULL after saying on stderr what is wrong
 * (the usage, or why the directory cannot be created). */
const char *pqt_tool_outdir(int argc, char **argv, const char *tool);

#endif
