/* listenfds.h - systemd socket activation without libsystemd
 * (sd_listen_fds(3) protocol): LISTEN_PID must be our pid, LISTEN_FDS the
 * number of sockets starting at fd 3, LISTEN_FDNAMES their ':'-separated
 * names. The variables are removed from the environment once read, and
 * the fds get FD_CLOEXEC, as sd_listen_fds(1) does. */
#ifndef PQ_LISTENFDS_H
#define PQ_LISTENFDS_H

#include <stddef.h>

#include "err.h"
#include "listener.h"

#define LF_FDS_START 3

/* Fills *out (malloc'd array, caller frees it and the names) with the
 * inherited sockets; *n = 0 when not socket-activated. Returns 0, or
 * PQ_EINVAL when the variables are malformed (err says which). */
int lf_listen_fds(ls_inherited **out, size_t *n, pq_err *err);
void lf_free(ls_inherited *fds, size_t n);

#endif
