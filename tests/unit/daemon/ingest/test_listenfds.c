/* test_listenfds.c - socket activation without libsystemd
 * (daemon/ingest/listenfds.c): real sockets are put at fds 3.. as systemd would,
 * LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES set, and lf_listen_fds must return
 * them with their names, set FD_CLOEXEC and clear the environment, on
 * success and on every error; another process's LISTEN_PID means "not
 * for us"; malformed values are PQ_EINVAL naming the variable.
 *
 * Whatever the test runner left at fds 3.. (a make jobserver pipe, say)
 * is only this process's copy, so overwriting it is harmless. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "listenfds.h"

static char sock_path[64];

static void set_pid(long pid)
{
    char v[32];
    snprintf(v, sizeof v, "%ld", pid);
    setenv("LISTEN_PID", v, 1);
}

static void assert_env_cleared(void)
{
    assert_null(getenv("LISTEN_PID"));
    assert_null(getenv("LISTEN_FDS"));
    assert_null(getenv("LISTEN_FDNAMES"));
}

/* Puts a listening TCP socket at fd 3 and a Unix one at fd 4, without
 * FD_CLOEXEC (systemd passes them inheritable). */
static int setup(void **state)
{
    (void)state;
    const int tcp = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (tcp < 0 || bind(tcp, (struct sockaddr *)&in, sizeof in) != 0 || listen(tcp, 8) != 0)
        return -1;
    const int unx = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    snprintf(sock_path, sizeof sock_path, "/tmp/parqd-lf-%ld.sock", (long)getpid());
    unlink(sock_path);
    strcpy(un.sun_path, sock_path);
    if (unx < 0 || bind(unx, (struct sockaddr *)&un, sizeof un) != 0 || listen(unx, 8) != 0)
        return -1;
    /* out of the way first: socket() may itself have returned 3 or 4 */
    const int t = fcntl(tcp, F_DUPFD_CLOEXEC, 20), u = fcntl(unx, F_DUPFD_CLOEXEC, 20);
    close(tcp);
    close(unx);
    if (t < 0 || u < 0 || dup2(t, 3) != 3 || dup2(u, 4) != 4)
        return -1;
    close(t);
    close(u);
    fcntl(3, F_SETFD, 0);
    fcntl(4, F_SETFD, 0);
    close(5);                    /* "fd 5 is not open" below */
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    close(3);
    close(4);
    unlink(sock_path);
    return 0;
}

static int sock_domain(int fd)
{
    int d = -1;
    socklen_t len = sizeof d;
    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &len);
    return d;
}

static void test_listenfds_two_named_sockets(void **state)
{
    (void)state;
    ls_inherited *fds;
    size_t n;
    pq_err err = {0};
    set_pid(getpid());
    setenv("LISTEN_FDS", "2", 1);
    setenv("LISTEN_FDNAMES", "tcp:unix", 1);
    assert_int_equal(lf_listen_fds(&fds, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(fds[0].fd, 3);
    assert_int_equal(fds[1].fd, 4);
    assert_string_equal(fds[0].name, "tcp");
    assert_string_equal(fds[1].name, "unix");
    assert_int_equal(sock_domain(fds[0].fd), AF_INET);
    assert_int_equal(sock_domain(fds[1].fd), AF_UNIX);
    assert_true(fcntl(3, F_GETFD) & FD_CLOEXEC);
    assert_true(fcntl(4, F_GETFD) & FD_CLOEXEC);
    assert_env_cleared();
    lf_free(fds, n);
}

static void test_listenfds_without_names(void **state)
{
    (void)state;
    ls_inherited *fds;
    size_t n;
    pq_err err = {0};
    set_pid(getpid());
    setenv("LISTEN_FDS", "1", 1);
    assert_int_equal(lf_listen_fds(&fds, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(fds[0].fd, 3);
    assert_null(fds[0].name);
    assert_true(fcntl(3, F_GETFD) & FD_CLOEXEC);
    assert_false(fcntl(4, F_GETFD) & FD_CLOEXEC);   /* not ours: untouched */
    assert_env_cleared();
    lf_free(fds, n);
}

/* Empty entries (systemd writes "a::c" for an unnamed socket) are NULL. */
static void test_listenfds_empty_name_is_null(void **state)
{
    (void)state;
    ls_inherited *fds;
    size_t n;
    pq_err err = {0};
    set_pid(getpid());
    setenv("LISTEN_FDS", "2", 1);
    setenv("LISTEN_FDNAMES", ":unix", 1);
    assert_int_equal(lf_listen_fds(&fds, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_null(fds[0].name);
    assert_string_equal(fds[1].name, "unix");
    lf_free(fds, n);
}

static void test_listenfds_not_activated(void **state)
{
    (void)state;
    ls_inherited *fds = (ls_inherited *)&fds;
    size_t n = 99;
    pq_err err = {0};
    assert_int_equal(lf_listen_fds(&fds, &n, &err), 0);
    assert_null(fds);
    assert_int_equal(n, 0);

    setenv("LISTEN_FDS", "2", 1);                     /* no LISTEN_PID */
    assert_int_equal(lf_listen_fds(&fds, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_env_cleared();

    set_pid(getpid());
    setenv("LISTEN_FDS", "0", 1);
    assert_int_equal(lf_listen_fds(&fds, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_env_cleared();
    assert_false(fcntl(3, F_GETFD) & FD_CLOEXEC);
    lf_free(NULL, 0);
}

/* The variables were inherited from a socket-activated parent. */
static void test_listenfds_other_pid_is_not_for_us(void **state)
{
    (void)state;
    ls_inherited *fds;
    size_t n;
    pq_err err = {0};
    set_pid(getpid() + 1);
    setenv("LISTEN_FDS", "2", 1);
    setenv("LISTEN_FDNAMES", "a:b", 1);
    assert_int_equal(lf_listen_fds(&fds, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_null(fds);
    assert_env_cleared();
    assert_false(fcntl(3, F_GETFD) & FD_CLOEXEC);
}

typedef struct bad_case {
    const char *pid, *fds, *names;   /* pid NULL: ours */
    const char *msg;                 /* expected in err.msg */
} bad_case;

static void test_listenfds_malformed_values(void **state)
{
    (void)state;
    const bad_case cases[] = {
        {"abc", "1", NULL, "LISTEN_PID 'abc'"},
        {"", "1", NULL, "LISTEN_PID ''"},
        {"-1", "1", NULL, "LISTEN_PID '-1'"},
        {"0", "1", NULL, "LISTEN_PID '0'"},
        {"99999999999999999999", "1", NULL, "LISTEN_PID '99999999999999999999'"},
        {NULL, "x", NULL, "LISTEN_FDS 'x'"},
        {NULL, "-2", NULL, "LISTEN_FDS '-2'"},
        {NULL, "2x", NULL, "LISTEN_FDS '2x'"},
        {NULL, "", NULL, "LISTEN_FDS ''"},
        {NULL, "4294967299", NULL, "LISTEN_FDS '4294967299'"},
        {NULL, "3", NULL, "fd 5 is not open"},
        {NULL, "2", "only-one", "LISTEN_FDNAMES 'only-one': 1 names for LISTEN_FDS=2"},
        {NULL, "2", "a:b:c", "3 names"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ls_inherited *fds = (ls_inherited *)&fds;
        size_t n = 99;
        pq_err err = {0};
        if (cases[i].pid != NULL)
            setenv("LISTEN_PID", cases[i].pid, 1);
        else
            set_pid(getpid());
        setenv("LISTEN_FDS", cases[i].fds, 1);
        if (cases[i].names != NULL)
            setenv("LISTEN_FDNAMES", cases[i].names, 1);
        const int rc = lf_listen_fds(&fds, &n, &err);
        if (rc != PQ_EINVAL || strstr(err.msg, cases[i].msg) == NULL)
            fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc, err.msg,
                     cases[i].msg);
        assert_null(fds);
        assert_int_equal(n, 0);
        assert_env_cleared();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_listenfds_two_named_sockets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listenfds_without_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listenfds_empty_name_is_null, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listenfds_not_activated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listenfds_other_pid_is_not_for_us, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listenfds_malformed_values, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
