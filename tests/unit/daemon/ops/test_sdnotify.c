/* test_sdnotify.c - sd_notify without libsystemd (daemon/ops/sdnotify.c):
 * datagrams reach a socket the test binds, named by a path or by an
 * '@' abstract name; RELOADING=1 carries CLOCK_MONOTONIC; no
 * NOTIFY_SOCKET is a silent no-op; bad sockets are errors that say so;
 * WATCHDOG_USEC / WATCHDOG_PID parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sdnotify.h"

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/parqd-sdn-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/notify", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    return 0;
}

/* A datagram socket bound to name: a path, or "@x" in the abstract
 * namespace (bound with the exact length, as systemd does). Non-blocking
 * receive with a timeout. */
static int bind_notify(const char *name)
{
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len;
    if (name[0] == '@') {
        memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
    } else {
        strcpy(sa.sun_path, name);
        len = (socklen_t)sizeof sa;
    }
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void recv_text(int fd, char *buf, size_t n)
{
    const ssize_t r = recv(fd, buf, n - 1, 0);
    assert_true(r >= 0);
    buf[r] = '\0';
}

static void test_sdnotify_ready_reaches_path_socket(void **state)
{
    (void)state;
    char path[128], got[256];
    pq_err err = {0};
    snprintf(path, sizeof path, "%s/notify", tmpdir);
    const int fd = bind_notify(path);
    setenv("NOTIFY_SOCKET", path, 1);
    assert_int_equal(sdn_notify("READY=1\nSTATUS=listening on 2 inputs", &err), 0);
    recv_text(fd, got, sizeof got);
    assert_string_equal(got, "READY=1\nSTATUS=listening on 2 inputs");
    assert_int_equal(sdn_notify("STOPPING=1", &err), 0);
    recv_text(fd, got, sizeof got);
    assert_string_equal(got, "STOPPING=1");
    close(fd);
}

/* "@name": sun_path[0] = NUL and the exact length; a trailing NUL in the
 * address would name a different socket and the datagram would be lost. */
static void test_sdnotify_ready_reaches_abstract_socket(void **state)
{
    (void)state;
    char name[64], got[64];
    pq_err err = {0};
    snprintf(name, sizeof name, "@parqd-test-sdn-%ld-%ld", (long)getpid(), (long)time(NULL));
    const int fd = bind_notify(name);
    setenv("NOTIFY_SOCKET", name, 1);
    assert_int_equal(sdn_notify("READY=1", &err), 0);
    recv_text(fd, got, sizeof got);
    assert_string_equal(got, "READY=1");
    close(fd);
}

static uint64_t mono_usec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void test_sdnotify_reloading_carries_monotonic_usec(void **state)
{
    (void)state;
    char path[128], got[256];
    pq_err err = {0};
    snprintf(path, sizeof path, "%s/notify", tmpdir);
    const int fd = bind_notify(path);
    setenv("NOTIFY_SOCKET", path, 1);
    const uint64_t before = mono_usec();
    assert_int_equal(sdn_reloading(&err), 0);
    const uint64_t after = mono_usec();
    recv_text(fd, got, sizeof got);
    uint64_t usec = 0;
    int used = 0;
    assert_int_equal(sscanf(got, "RELOADING=1\nMONOTONIC_USEC=%" SCNu64 "%n", &usec, &used), 1);
    assert_int_equal((size_t)used, strlen(got));
    assert_true(usec >= before && usec <= after);
    close(fd);
}

static void test_sdnotify_without_socket_is_noop(void **state)
{
    (void)state;
    pq_err err = {0};
    assert_int_equal(sdn_notify("READY=1", &err), 0);
    assert_int_equal(sdn_reloading(&err), 0);
    setenv("NOTIFY_SOCKET", "", 1);
    assert_int_equal(sdn_notify("READY=1", &err), 0);
    assert_int_equal(err.code, 0);
}

static void test_sdnotify_bad_socket_is_an_error(void **state)
{
    (void)state;
    pq_err err = {0};
    char path[128];
    snprintf(path, sizeof path, "%s/nobody-listens", tmpdir);
    setenv("NOTIFY_SOCKET", path, 1);
    assert_int_equal(sdn_notify("READY=1", &err), PQ_EIO);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "No such file"));

    setenv("NOTIFY_SOCKET", "relative/path", 1);
    assert_int_equal(sdn_notify("READY=1", &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "'relative/path'"));

    char longp[200];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    setenv("NOTIFY_SOCKET", longp, 1);
    assert_int_equal(sdn_notify("READY=1", &err), PQ_EIO);
    setenv("NOTIFY_SOCKET", "@", 1);
    assert_int_equal(sdn_notify("READY=1", &err), PQ_EIO);
}

static void test_sdnotify_watchdog_usec(void **state)
{
    (void)state;
    char pid[32];
    assert_int_equal(sdn_watchdog_usec(), 0);
    setenv("WATCHDOG_USEC", "30000000", 1);
    assert_int_equal(sdn_watchdog_usec(), 30000000);
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv("WATCHDOG_PID", pid, 1);
    assert_int_equal(sdn_watchdog_usec(), 30000000);
    snprintf(pid, sizeof pid, "%ld", (long)getpid() + 1);
    setenv("WATCHDOG_PID", pid, 1);                  /* for another process */
    assert_int_equal(sdn_watchdog_usec(), 0);
    setenv("WATCHDOG_PID", "12ab", 1);
    assert_int_equal(sdn_watchdog_usec(), 0);
    unsetenv("WATCHDOG_PID");

    const char *bad[] = {"", "0", "-5", "30s", " 30", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("WATCHDOG_USEC", bad[i], 1);
        assert_int_equal(sdn_watchdog_usec(), 0);
    }
    setenv("WATCHDOG_USEC", "18446744073709551615", 1);
    assert_true(sdn_watchdog_usec() == UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sdnotify_ready_reaches_path_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sdnotify_ready_reaches_abstract_socket, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sdnotify_reloading_carries_monotonic_usec, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sdnotify_without_socket_is_noop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sdnotify_bad_socket_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sdnotify_watchdog_usec, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
