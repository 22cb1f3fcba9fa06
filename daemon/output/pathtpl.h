/* pathtpl.h - output path templates (DESIGN.md "Configuration", output.path):
 *
 *     "dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet"
 *
 * strftime fields are expanded in UTC from the time the file is opened;
 * {host} is the host name ('/' and control characters become '_'), {pid}
 * the process id, {seq} a counter zero-padded to PT_SEQ_DIGITS digits
 * (wider when it outgrows them), which the file sink bumps when a name is
 * already taken, so files never overwrite each other, and {uuid} a random
 * version 4 UUID per file (unique across hosts and restarts). `%%` is a literal
 * '%'. The result is relative to output.dir and must stay inside it.
 *
 * The accepted fields and the checks agree with daemon/config/config_output.c's
 * cf_path_check, which validates output.path when the configuration is
 * loaded; pt_check repeats them here so a template that reaches the
 * daemon another way (convert's -o DIR, tests) gets the same answer, and
 * pt_render checks the rendered result again (a host name could in
 * principle render to "..").
 *
 *     char rel[PT_PATH_MAX];
 *     if (pt_render(tmpl, time(NULL), host, getpid(), seq, rel, sizeof rel, &err) != 0) ... */
#ifndef PQ_PATHTPL_H
#define PQ_PATHTPL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "err.h"

#define PT_SEQ_DIGITS 6
#define PT_PATH_MAX 4096         /* rendered relative path, NUL included */
#define PT_NAME_MAX 255          /* one path component */

/* The strftime conversions a template may use (no %n/%t, nothing locale-
 * or width-modified: %Ey, %-d and friends are refused). */
#define PT_STRFTIME_FIELDS "YmdHMSjyCGgVuUWwaAbBhepIlkszZFTR%"

/* Validates a template: relative, no '..' component, no empty component,
 * known placeholders only, contains {seq} or {uuid}. Returns 0 or PQ_EINVAL with a
 * message naming the offset and the problem. */
int pt_check(const char *tmpl, pq_err *err);

/* Renders a template (checked or not: it is checked again) into out.
 * Returns 0, PQ_EINVAL (bad template or rendered path), or PQ_ELIMIT
 * (longer than n - 1 bytes or a component longer than PT_NAME_MAX). */
int pt_render(const char *tmpl, time_t t, const char *host, long pid, uint64_t seq, char *out,
              size_t n, pq_err *err);

/* Checks a relative path as pt_render's result is checked (also used for
 * names that do not come from a template). */
int pt_check_relative(const char *path, pq_err *err);

#endif
