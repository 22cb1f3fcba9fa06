/* lsock.h - listening sockets as plain file descriptors: binding a TCP
 * input (resolved host, SO_REUSEADDR, IPv6 sockets IPv6-only), binding a
 * Unix input (a stale socket file is replaced, a live one refused, a
 * file that is not a socket never removed; mode applied after bind), and
 * describing an inherited socket so it can be matched to an input.
 *
 * No libuv here on purpose: the listener first gets a listening fd for
 * every input and only then wraps them in uv handles, so a failure half
 * way closes plain fds synchronously and leaves nothing bound, with no
 * handle waiting for an asynchronous close.
 *
 * Thread: whichever calls it (the loop thread, at startup). */
#ifndef PQ_LSOCK_H
#define PQ_LSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "err.h"

/* "tcp:[2001:db8::1]:51234" fits, and so does "unix:" + a 107-byte path. */
#define LSK_NAME_MAX 120

typedef struct lsk_addr {
    struct sockaddr_storage ss;
    socklen_t len;
} lsk_addr;

/* A socket file this process bound, to remove on close only if it is
 * still ours (a newer daemon may have bound the path again since). */
typedef struct lsk_unix_bound {
    dev_t dev;
    ino_t ino;
} lsk_unix_bound;

/* socket + bind + listen on host:port. host is numeric ("127.0.0.1",
 * "::1") or a name ("localhost"): the resolved addresses are tried in
 * order and the first that binds is used. Returns 0 with *fd (non-blocking,
 * close-on-exec) or PQ_EIO / PQ_EINVAL with err saying why (no prefix:
 * the caller names the input). */
int lsk_tcp_listen(const char *host, uint16_t port, int backlog, int *fd, pq_err *err);

/* socket + bind + chmod (mode >= 0) + listen on a Unix stream path. An
 * existing path is replaced only when it is a socket nobody accepts on
 * (connect fails with ECONNREFUSED). Fills *bound for lsk_unix_unlink. */
int lsk_unix_listen(const char *path, int mode, int backlog, int *fd, lsk_unix_bound *bound,
                    pq_err *err);

/* Removes path if it is still the socket file described by bound. */
void lsk_unix_unlink(const char *path, const lsk_unix_bound *bound);

/* The local address of an inherited socket, which must be a listening
 * stream socket (systemd Accept=no). Returns 0, or PQ_EINVAL saying why. */
int lsk_sockname(int fd, lsk_addr *out, pq_err *err);

/* Whether a TCP input's host:port resolves to the address a (a listening
 * socket's local address). */
bool lsk_tcp_matches(const char *host, uint16_t port, const lsk_addr *a);
/* Whether a Unix input's path names the socket at a (same string, or the
 * same file). */
bool lsk_unix_matches(const char *path, const lsk_addr *a);

/* The path of a Unix address into buf ("@name" for the abstract
 * namespace, "" for an unnamed socket). */
void lsk_unix_path(const lsk_addr *a, char *buf, size_t cap);

/* "192.0.2.7:51234", "[2001:db8::1]:51234" (IPv4-mapped IPv6 addresses
 * print as IPv4), or "?" for another family. */
void lsk_format_inet(const struct sockaddr *sa, char *buf, size_t cap);

/* Whether an AF_INET/AF_INET6 address is loopback (127.0.0.0/8, ::1, or
 * an IPv4-mapped 127.x); false for wildcards and every other address. */
bool lsk_is_loopback(const lsk_addr *a);

/* The port of an AF_INET/AF_INET6 address, 0 otherwise. */
uint16_t lsk_port(const lsk_addr *a);

#endif
