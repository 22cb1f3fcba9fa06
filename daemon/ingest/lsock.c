/* lsock.c - listening sockets as plain fds (see lsock.h).
 *
 * Thread: the loop thread, at startup (getaddrinfo may block: it runs
 * before the loop serves anyone). */
#include "lsock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int resolve(const char *host, uint16_t port, struct addrinfo **res, pq_err *err)
{
    char portstr[8];
    snprintf(portstr, sizeof portstr, "%u", (unsigned)port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    int rc = getaddrinfo(host, portstr, &hints, res);
    if (rc != 0)
        return pq_err_set(err, PQ_EINVAL, "cannot resolve '%s': %s", host,
                          rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    return PQ_OK;
}

static int tcp_bind_one(const struct addrinfo *ai, int backlog, int *fd, pq_err *err)
{
    int s = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return pq_err_set(err, PQ_EIO, "socket: %s", strerror(errno));
    int on = 1;
    /* Restarting must not wait for TIME_WAIT connections of the previous
     * run. An IPv6 socket serves IPv6 only, whatever net.ipv6.bindv6only
     * says, so "0.0.0.0" and "[::]" can both be inputs (nginx's choice). */
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (ai->ai_family == AF_INET6)
        setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (bind(s, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s, backlog) != 0) {
        int e = errno;
        close(s);
        return pq_err_set(err, PQ_EIO, "%s", strerror(e));
    }
    *fd = s;
    return PQ_OK;
}

int lsk_tcp_listen(const char *host, uint16_t port, int backlog, int *fd, pq_err *err)
{
    struct addrinfo *res;
    int rc = resolve(host, port, &res, err);
    if (rc != 0)
        return rc;
    pq_err first = {0};
    rc = PQ_EIO;
    for (const struct addrinfo *ai = res; ai != NULL && rc != 0; ai = ai->ai_next) {
        pq_err e2;
        rc = tcp_bind_one(ai, backlog, fd, &e2);
        if (rc != 0 && first.code == 0)
            first = e2;
    }
    freeaddrinfo(res);
    if (rc != 0)
        return pq_err_set(err, first.code, "%s", first.msg);
    return PQ_OK;
}

static bool fill_sun(struct sockaddr_un *sun, const char *path)
{
    memset(sun, 0, sizeof *sun);
    sun->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sun->sun_path)
        return false;
    memcpy(sun->sun_path, path, strlen(path));
    return true;
}

/* An existing path: a socket left by a dead process is removed; one a
 * live process accepts on (connect succeeds, or its backlog is full) is
 * refused; anything else is never touched. */
static int clear_stale(const char *path, const struct sockaddr_un *sun, pq_err *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? PQ_OK
                               : pq_err_set(err, PQ_EIO, "cannot inspect: %s", strerror(errno));
    if (!S_ISSOCK(st.st_mode))
        return pq_err_set(err, PQ_EIO, "exists and is not a socket (refusing to remove it)");
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return pq_err_set(err, PQ_EIO, "socket: %s", strerror(errno));
    int rc = connect(s, (const struct sockaddr *)sun, sizeof *sun) == 0 ? 0 : errno;
    close(s);
    if (rc == 0 || rc == EAGAIN)
        return pq_err_set(err, PQ_EIO, "already in use by a running process");
    if (rc == ENOENT)
        return PQ_OK;
    if (rc != ECONNREFUSED)
        return pq_err_set(err, PQ_EIO, "cannot tell whether the existing socket is in use: "
                          "connect: %s", strerror(rc));
    if (unlink(path) != 0 && errno != ENOENT)
        return pq_err_set(err, PQ_EIO, "cannot remove the stale socket: %s", strerror(errno));
    return PQ_OK;
}

int lsk_unix_listen(const char *path, int mode, int backlog, int *fd, lsk_unix_bound *bound,
                    pq_err *err)
{
    struct sockaddr_un sun;
    if (!fill_sun(&sun, path))
        return pq_err_set(err, PQ_EINVAL, "path longer than %zu bytes", sizeof sun.sun_path - 1);
    int rc = clear_stale(path, &sun, err);
    if (rc != 0)
        return rc;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return pq_err_set(err, PQ_EIO, "socket: %s", strerror(errno));
    if (bind(s, (const struct sockaddr *)&sun, sizeof sun) != 0) {
        rc = pq_err_set(err, PQ_EIO, "bind: %s", strerror(errno));
        close(s);
        return rc;
    }
    struct stat st;
    const char *step = "stat";
    if (stat(path, &st) == 0 && (step = "chmod", mode < 0 || chmod(path, (mode_t)mode) == 0) &&
        (step = "listen", listen(s, backlog) == 0)) {
        bound->dev = st.st_dev;
        bound->ino = st.st_ino;
        *fd = s;
        return PQ_OK;
    }
    rc = pq_err_set(err, PQ_EIO, "%s: %s", step, strerror(errno));
    close(s);
    unlink(path);
    return rc;
}

void lsk_unix_unlink(const char *path, const lsk_unix_bound *bound)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == bound->dev &&
        st.st_ino == bound->ino)
        unlink(path);
}

int lsk_sockname(int fd, lsk_addr *out, pq_err *err)
{
    int type = 0, listening = 0;
    socklen_t tl = sizeof type, ll = sizeof listening;
    memset(out, 0, sizeof *out);
    out->len = sizeof out->ss;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
        getsockname(fd, (struct sockaddr *)&out->ss, &out->len) != 0)
        return pq_err_set(err, PQ_EINVAL, "not a socket (%s)", strerror(errno));
    int family = out->ss.ss_family;
    if (type != SOCK_STREAM || (family != AF_INET && family != AF_INET6 && family != AF_UNIX))
        return pq_err_set(err, PQ_EINVAL, "not a TCP or Unix stream socket");
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) != 0 || !listening)
        return pq_err_set(err, PQ_EINVAL, "not a listening socket (Accept=yes sockets are not "
                          "supported: use Accept=no)");
    return PQ_OK;
}

static bool same_inet(const struct sockaddr *x, const struct sockaddr *y)
{
    if (x->sa_family != y->sa_family)
        return false;
    if (x->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)x, *b = (const void *)y;
        return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
    }
    if (x->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)x, *b = (const void *)y;
        return a->sin6_port == b->sin6_port &&
               memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
    }
    return false;
}

bool lsk_tcp_matches(const char *host, uint16_t port, const lsk_addr *a)
{
    struct addrinfo *res;
    pq_err err;
    if (a->ss.ss_family == AF_UNIX || resolve(host, port, &res, &err) != 0)
        return false;
    bool hit = false;
    for (const struct addrinfo *ai = res; ai != NULL && !hit; ai = ai->ai_next)
        hit = same_inet(ai->ai_addr, (const struct sockaddr *)&a->ss);
    freeaddrinfo(res);
    return hit;
}

void lsk_unix_path(const lsk_addr *a, char *buf, size_t cap)
{
    const struct sockaddr_un *sun = (const void *)&a->ss;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    size_t n = a->len > off ? a->len - off : 0;
    if (n > sizeof sun->sun_path)
        n = sizeof sun->sun_path;
    if (n > 0 && sun->sun_path[0] == '\0') {   /* abstract: "@name", not NUL-terminated */
        snprintf(buf, cap, "@%.*s", (int)(n - 1), sun->sun_path + 1);
        return;
    }
    snprintf(buf, cap, "%.*s", (int)strnlen(sun->sun_path, n), sun->sun_path);
}

bool lsk_unix_matches(const char *path, const lsk_addr *a)
{
    char got[sizeof ((struct sockaddr_un *)0)->sun_path + 2];
    if (a->ss.ss_family != AF_UNIX)
        return false;
    lsk_unix_path(a, got, sizeof got);
    if (strcmp(got, path) == 0)
        return true;
    /* "./parqd.sock" in the config, "/run/parqd/parqd.sock" from systemd. */
    struct stat x, y;
    return got[0] != '\0' && got[0] != '@' && stat(got, &x) == 0 && stat(path, &y) == 0 &&
           x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

void lsk_format_inet(const struct sockaddr *sa, char *buf, size_t cap)
{
    char host[INET6_ADDRSTRLEN];
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        snprintf(buf, cap, "%s:%u", host, (unsigned)ntohs(in->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, host, sizeof host);
            snprintf(buf, cap, "%s:%u", host, (unsigned)ntohs(in6->sin6_port));
        } else {
            inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
            snprintf(buf, cap, "[%s]:%u", host, (unsigned)ntohs(in6->sin6_port));
        }
    } else {
        snprintf(buf, cap, "?");
    }
}

uint16_t lsk_port(const lsk_addr *a)
{
    if (a->ss.ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)(const void *)&a->ss)->sin_port);
    if (a->ss.ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)(const void *)&a->ss)->sin6_port);
    return 0;
}

bool lsk_is_loopback(const lsk_addr *a)
{
    if (a->ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)&a->ss;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (a->ss.ss_family == AF_INET6) {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)(const void *)&a->ss)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(in6))
            return true;
        return IN6_IS_ADDR_V4MAPPED(in6) && in6->s6_addr[12] == 127;
    }
    return false;
}
