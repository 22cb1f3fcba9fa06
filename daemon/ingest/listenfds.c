/* listenfds.c - sockets passed by systemd socket activation (see
 * listenfds.h; the protocol is sd_listen_fds(3)).
 *
 * Thread: the main thread, once, at startup, before any other thread
 * exists (it edits the environment, which is not thread-safe).
 *
 * The three variables are unset on every path, success or not, as
 * sd_listen_fds(1) does: a child process must never believe the sockets
 * were meant for it. A LISTEN_PID naming another process is not an error:
 * the variables were inherited from a parent and there is nothing for us.
 * Names are informational: the listener matches inherited sockets to
 * inputs by their address (getsockname), not by name. */
#include "listenfds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A decimal number in [0, max], digits only. */
static bool parse_count(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

/* Splits LISTEN_FDNAMES ("a:b:c") into fds[i].name; names must number n.
 * An empty name stays NULL. */
static int split_names(const char *names, ls_inherited *fds, size_t n, pq_err *err)
{
    size_t count = 1;
    for (const char *p = names; *p != '\0'; p++)
        count += *p == ':';
    if (count != n)
        return pq_err_set(err, PQ_EINVAL, "LISTEN_FDNAMES '%s': %zu names for LISTEN_FDS=%zu "
                          "sockets", names, count, n);
    const char *p = names;
    for (size_t i = 0; i < n; i++) {
        const size_t len = strcspn(p, ":");
        if (len > 0 && (fds[i].name = strndup(p, len)) == NULL)
            return pq_err_set(err, PQ_ENOMEM, "LISTEN_FDNAMES: out of memory");
        p += len + (p[len] == ':');
    }
    return 0;
}

/* Checks fds 3..3+n-1 are open and marks them close-on-exec. */
static int adopt(ls_inherited *fds, size_t n, pq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const int fd = LF_FDS_START + (int)i;
        const int flags = fcntl(fd, F_GETFD);
        if (flags < 0)
            return pq_err_set(err, PQ_EINVAL, "LISTEN_FDS=%zu: fd %d is not open (%s)", n, fd,
                              strerror(errno));
        if (!(flags & FD_CLOEXEC) && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
            return pq_err_set(err, PQ_EINVAL, "LISTEN_FDS: fd %d: cannot set close-on-exec: %s",
                              fd, strerror(errno));
        fds[i].fd = fd;
    }
    return 0;
}

static int read_env(ls_inherited **out, size_t *n, pq_err *err)
{
    const char *pid_s = getenv("LISTEN_PID");
    const char *fds_s = getenv("LISTEN_FDS");
    const char *names = getenv("LISTEN_FDNAMES");
    uint64_t pid, count;
    if (pid_s == NULL || fds_s == NULL)
        return 0;
    if (!parse_count(pid_s, INT_MAX, &pid) || pid == 0)
        return pq_err_set(err, PQ_EINVAL, "LISTEN_PID '%s': not a process id", pid_s);
    if (pid != (uint64_t)getpid())
        return 0;
    if (!parse_count(fds_s, (uint64_t)INT_MAX - LF_FDS_START, &count))
        return pq_err_set(err, PQ_EINVAL, "LISTEN_FDS '%s': not a number of sockets", fds_s);
    if (count == 0)
        return 0;
    ls_inherited *fds = calloc((size_t)count, sizeof *fds);
    if (fds == NULL)
        return pq_err_set(err, PQ_ENOMEM, "LISTEN_FDS=%s: out of memory", fds_s);
    int rc = adopt(fds, (size_t)count, err);
    if (rc == 0 && names != NULL)
        rc = split_names(names, fds, (size_t)count, err);
    if (rc != 0) {
        lf_free(fds, (size_t)count);
        return rc;
    }
    *out = fds;
    *n = (size_t)count;
    return 0;
}

int lf_listen_fds(ls_inherited **out, size_t *n, pq_err *err)
{
    *out = NULL;
    *n = 0;
    const int rc = read_env(out, n, err);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    return rc;
}

void lf_free(ls_inherited *fds, size_t n)
{
    if (fds == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free((char *)fds[i].name);
    free(fds);
}
