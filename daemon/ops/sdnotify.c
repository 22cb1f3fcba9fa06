/* sdnotify.c - sd_notify(3) without libsystemd (see sdnotify.h).
 *
 * Thread: any (each call opens, uses and closes its own socket; notices
 * are rare: start, reload, stop, and a watchdog ping every few seconds).
 *
 * NOTIFY_SOCKET is "/path" or "@name" (abstract namespace: sun_path[0] is
 * NUL and the address length counts exactly the name's bytes, no trailing
 * NUL, or the kernel looks up a different name). The service manager
 * learns the sender's pid from the socket's credentials, which is what
 * NotifyAccess=main checks. */
#include "sdnotify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Fills sa from NOTIFY_SOCKET's value; returns the address length or 0
 * when the value is no AF_UNIX address. */
static socklen_t notify_addr(const char *path, struct sockaddr_un *sa)
{
    const size_t len = strlen(path);
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (path[0] == '@' && len >= 2 && len <= sizeof sa->sun_path) {
        memcpy(sa->sun_path + 1, path + 1, len - 1);    /* sun_path[0] stays NUL */
        return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    }
    if (path[0] == '/' && len < sizeof sa->sun_path) {
        memcpy(sa->sun_path, path, len + 1);
        return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
    }
    return 0;
}

int sdn_notify(const char *state, pq_err *err)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0')
        return 0;
    struct sockaddr_un sa;
    const socklen_t salen = notify_addr(path, &sa);
    if (salen == 0)
        return pq_err_set(err, PQ_EIO, "NOTIFY_SOCKET '%s': not an absolute socket path or "
                          "@abstract name of at most %zu bytes", path, sizeof sa.sun_path - 1);
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return pq_err_set(err, PQ_EIO, "sd_notify: socket: %s", strerror(errno));
    const size_t len = strlen(state);
    ssize_t n;
    do
        n = sendto(fd, state, len, MSG_NOSIGNAL, (const struct sockaddr *)&sa, salen);
    while (n < 0 && errno == EINTR);
    const int e = errno;
    close(fd);
    if (n < 0)
        return pq_err_set(err, PQ_EIO, "sd_notify to NOTIFY_SOCKET '%s': %s", path, strerror(e));
    if ((size_t)n != len)
        return pq_err_set(err, PQ_EIO, "sd_notify to NOTIFY_SOCKET '%s': sent %zd of %zu bytes",
                          path, n, len);
    return 0;
}

int sdn_reloading(pq_err *err)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const uint64_t usec = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    char state[64];
    snprintf(state, sizeof state, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, usec);
    return sdn_notify(state, err);
}

/* A decimal number, digits only, no overflow; false otherwise. */
static bool parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s == '\0')
        return false;
    uint64_t v = 0;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

uint64_t sdn_watchdog_usec(void)
{
    uint64_t usec, pid;
    if (!parse_u64(getenv("WATCHDOG_USEC"), &usec) || usec == 0)
        return 0;
    /* WATCHDOG_PID, when set, names the process the watchdog is for: a
     * child that inherited the environment must not ping for its parent. */
    const char *p = getenv("WATCHDOG_PID");
    if (p != NULL && (!parse_u64(p, &pid) || pid != (uint64_t)getpid()))
        return 0;
    return usec;
}
