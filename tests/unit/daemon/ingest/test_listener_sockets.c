/* test_listener_sockets.c - where the ingest server listens
 * (daemon/ingest/listener.c, lsock.c): TCP on ::1 and on a host name, a
 * port in use (nothing left bound), Unix socket files in a mkdtemp
 * directory (stale, live, a regular file, mode, removed at close), and
 * listening sockets inherited from systemd (adopted, unmatched, not
 * listening). */
#include "listener_fixture.h"

/* ---- addresses ---------------------------------------------------------- */

static bool ipv6_loopback_available(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static void test_listener_tcp_ipv6_loopback(void **state)
{
    (void)state;
    if (!ipv6_loopback_available()) {
        print_message("IPv6 loopback (::1) unavailable on this machine: skipped\n");
        skip();
    }
    cf_input in = tcp_in("::1", 0);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int port = ls_server_bound_port(s, 0);
    int fd = tcp_client("::1", port);
    send_str(fd, "{\"v6\":true}\n");
    wait_lines(&loop, &k, 1);
    char want[64];
    snprintf(want, sizeof want, "tcp:[::1]:%d", local_port(fd));
    assert_string_equal(k.lines[0].src, want);
    assert_string_equal(k.lines[0].data, "{\"v6\":true}");
    close(fd);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_tcp_host_name_is_resolved(void **state)
{
    (void)state;
    cf_input in = tcp_in("localhost", 0);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int fd = tcp_client("localhost", ls_server_bound_port(s, 0));
    send_str(fd, "hi\n");
    wait_lines(&loop, &k, 1);
    assert_string_equal(k.lines[0].data, "hi");
    close(fd);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_port_in_use_fails_and_leaves_nothing_bound(void **state)
{
    (void)state;
    int port;
    int busy = listening_tcp("127.0.0.1", &port);
    char path[128];
    tmp_path(path, sizeof path, "first.sock");
    cf_input ins[2] = {unix_in(path, -1), tcp_in("127.0.0.1", (uint16_t)port)};
    cf_config cf;
    cfg_init(&cf, ins, 2);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_server *s = (ls_server *)&k;
    pq_err err = {0};
    assert_int_equal(ls_server_new(&s, &loop, &cf, NULL, 0, &cb, &err), PQ_EIO);
    assert_null(s);
    char want[96];
    snprintf(want, sizeof want, "inputs[1] tcp 127.0.0.1:%d: Address already in use", port);
    assert_string_equal(err.msg, want);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);          /* inputs[0] was unbound again */
    assert_int_equal(uv_loop_close(&loop), 0);      /* and no handle is left */
    close(busy);
}

/* ---- Unix socket files ---------------------------------------------------- */

static void test_listener_stale_unix_socket_is_replaced(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "stale.sock");
    close(unix_socket_at(path, true));              /* the file stays, nobody listens */
    cf_input in = unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int fd = unix_client(path);
    send_str(fd, "{\"fresh\":1}\n");
    wait_lines(&loop, &k, 1);
    char want[160];
    snprintf(want, sizeof want, "unix:%s", path);
    assert_string_equal(k.lines[0].src, want);
    close(fd);
    shutdown_server(&loop, s);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);          /* ours: removed on close */
    sink_free(&k);
}

static void expect_unix_refused(const char *path, const char *why)
{
    cf_input in = unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_server *s = NULL;
    pq_err err = {0};
    assert_int_equal(ls_server_new(&s, &loop, &cf, NULL, 0, &cb, &err), PQ_EIO);
    char want[256];
    snprintf(want, sizeof want, "inputs[0] unix %s: %s", path, why);
    assert_string_equal(err.msg, want);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_listener_live_unix_socket_is_refused(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "live.sock");
    int live = unix_socket_at(path, true);
    expect_unix_refused(path, "already in use by a running process");
    int fd = unix_client(path);                     /* still the other process's */
    close(fd);
    close(live);
}

static void test_listener_regular_file_at_unix_path_is_refused(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "precious.txt");
    FILE *fp = fopen(path, "w");
    fputs("keep me\n", fp);
    fclose(fp);
    expect_unix_refused(path, "exists and is not a socket (refusing to remove it)");
    char buf[16] = {0};
    fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(buf, sizeof buf, fp));
    fclose(fp);
    assert_string_equal(buf, "keep me\n");
}

static void test_listener_unix_mode_is_applied(void **state)
{
    (void)state;
    char a[128], b[128], c[128];
    tmp_path(a, sizeof a, "m600.sock");
    tmp_path(b, sizeof b, "m666.sock");
    tmp_path(c, sizeof c, "umask.sock");
    cf_input ins[3] = {unix_in(a, 0600), unix_in(b, 0666), unix_in(c, -1)};
    cf_config cf;
    cfg_init(&cf, ins, 3);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    mode_t old = umask(022);
    ls_server *s = server_new(&loop, &cf, &k);
    umask(old);
    struct stat st;
    assert_int_equal(stat(a, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(b, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666);      /* wider than the umask allows */
    assert_int_equal(stat(c, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);      /* -1: left to the umask */
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_close_delivers_unfinished_lines_and_removes_socket(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "close.sock");
    cf_input in = unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int fd = unix_client(path);
    send_str(fd, "{\"done\":1}\n{\"half\":");
    wait_count(&loop, &dm_counters_global.bytes_received, 19);
    assert_int_equal(k.n, 1);
    ls_server_stop_accepting(s);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);          /* no new clients: the file is gone */
    assert_false(ls_server_closed(s));
    ls_server_close(s);
    assert_true(run_until(&loop, is_closed, s, 5000));
    assert_int_equal(k.n, 2);
    assert_string_equal(k.lines[1].data, "{\"half\":");
    assert_true(peer_closed(fd));
    ls_server_destroy(s);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&loop), 0);
    close(fd);
    sink_free(&k);
}

/* ---- socket activation -------------------------------------------------- */

static bool fd_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

static void test_listener_inherited_tcp_socket_is_adopted_for_its_input(void **state)
{
    (void)state;
    int port;
    int lfd = listening_tcp("127.0.0.1", &port);
    cf_input in = tcp_in("127.0.0.1", (uint16_t)port);   /* binding it would fail: in use */
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_inherited ih = {lfd, "parqd-tcp"};
    ls_server *s = NULL;
    pq_err err = {0};
    if (ls_server_new(&s, &loop, &cf, &ih, 1, &cb, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(ls_server_bound_port(s, 0), port);
    assert_int_equal(ls_server_bound_port(s, 1), -1);     /* no extra listener */
    assert_false(fd_open(lfd));                           /* the server's now */
    int fd = tcp_client("127.0.0.1", port);
    send_str(fd, "{\"activated\":1}\n");
    wait_lines(&loop, &k, 1);
    assert_string_equal(k.lines[0].data, "{\"activated\":1}");
    close(fd);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_inherited_unix_socket_is_adopted_and_not_removed(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "activated.sock");
    int lfd = unix_socket_at(path, true);
    cf_input in = unix_in(path, 0600);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_inherited ih = {lfd, NULL};
    ls_server *s = NULL;
    pq_err err = {0};
    if (ls_server_new(&s, &loop, &cf, &ih, 1, &cb, &err) != 0)
        fail_msg("%s", err.msg);
    int fd = unix_client(path);
    send_str(fd, "{\"unix\":1}\n");
    wait_lines(&loop, &k, 1);
    char want[160];
    snprintf(want, sizeof want, "unix:%s", path);
    assert_string_equal(k.lines[0].src, want);
    close(fd);
    shutdown_server(&loop, s);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);           /* systemd's file, not ours to remove */
    sink_free(&k);
}

static void test_listener_unmatched_inherited_socket_becomes_an_extra_input(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "configured.sock");
    int port;
    int lfd = listening_tcp("127.0.0.1", &port);
    cf_input in = unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_inherited ih = {lfd, "extra"};
    ls_server *s = NULL;
    pq_err err = {0};
    if (ls_server_new(&s, &loop, &cf, &ih, 1, &cb, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(ls_server_bound_port(s, 0), 0);      /* the configured unix input */
    assert_int_equal(ls_server_bound_port(s, 1), port);   /* plus the inherited one */
    int a = unix_client(path), b = tcp_client("127.0.0.1", port);
    send_str(a, "via unix\n");
    send_str(b, "via tcp\n");
    wait_lines(&loop, &k, 2);
    close(a);
    close(b);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_inherited_socket_that_does_not_listen_is_refused(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);   /* Accept=yes style */
    cf_config cf;
    cf_input in = tcp_in("127.0.0.1", 0);
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_inherited ih = {fd, "conn"};
    ls_server *s = NULL;
    pq_err err = {0};
    assert_int_equal(ls_server_new(&s, &loop, &cf, &ih, 1, &cb, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "not a listening socket"));
    assert_non_null(strstr(err.msg, "(conn)"));
    assert_true(fd_open(fd));                       /* failure: still the caller's */
    assert_int_equal(uv_loop_close(&loop), 0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_listener_tcp_ipv6_loopback),
        T(test_listener_tcp_host_name_is_resolved),
        T(test_listener_port_in_use_fails_and_leaves_nothing_bound),
        T(test_listener_stale_unix_socket_is_replaced),
        T(test_listener_live_unix_socket_is_refused),
        T(test_listener_regular_file_at_unix_path_is_refused),
        T(test_listener_unix_mode_is_applied),
        T(test_listener_close_delivers_unfinished_lines_and_removes_socket),
        T(test_listener_inherited_tcp_socket_is_adopted_for_its_input),
        T(test_listener_inherited_unix_socket_is_adopted_and_not_removed),
        T(test_listener_unmatched_inherited_socket_becomes_an_extra_input),
        T(test_listener_inherited_socket_that_does_not_listen_is_refused),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
