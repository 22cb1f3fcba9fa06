/* test_listener_limits.c - the ingest server's limits (daemon/ingest/
 * listener.c, connection.c) over real sockets: the idle timeout and the
 * paused clock, pause and resume (backpressure), max_connections, running
 * out of file descriptors, and the memory of 2,000 idle connections. */
#include "listener_fixture.h"

/* ---- idle timeout, backpressure, limits ------------------------------- */

static void idle_200ms(cf_config *cf)
{
    cf->limits.idle_timeout_ms = 200;
}

static void test_listener_idle_connection_is_closed_after_idle_timeout(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, idle_200ms);
    int quiet = tcp_client("127.0.0.1", f.port), chatty = tcp_client("127.0.0.1", f.port);
    uint64_t t0 = now_ms();
    send_str(quiet, "{\"unfinished\":");
    uint64_t closed_at = 0;
    while (now_ms() - t0 < 3000 && closed_at == 0) {
        send_str(chatty, "{}\n");
        run_for(&f.loop, 50);
        if (peer_closed(quiet))
            closed_at = now_ms();
    }
    assert_true(closed_at != 0);
    print_message("idle connection closed after %llu ms (idle_timeout 200 ms)\n",
                  (unsigned long long)(closed_at - t0));
    assert_true(closed_at - t0 >= 190 && closed_at - t0 < 1500);
    assert_false(peer_closed(chatty));
    assert_int_equal(dm_get(&dm_counters_global.connections_idle_closed), 1);
    assert_int_equal(ls_server_connections(f.s), 1);
    /* Its unfinished line was not dropped. */
    bool found = false;
    for (size_t i = 0; i < f.k.n; i++)
        found = found || strcmp(f.k.lines[i].data, "{\"unfinished\":") == 0;
    assert_true(found);
    close(quiet);
    close(chatty);
    tcp_stop(&f);
}

static void test_listener_paused_connections_are_not_idle_closed(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, idle_200ms);
    int fd = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 1, 5000));
    ls_server_pause(f.s);
    run_for(&f.loop, 600);                         /* three idle timeouts, paused */
    assert_false(peer_closed(fd));
    assert_int_equal(ls_server_connections(f.s), 1);
    ls_server_resume(f.s);
    uint64_t t0 = now_ms();
    assert_true(run_until(&f.loop, peer_closed_pred, &fd, 5000));
    uint64_t took = now_ms() - t0;
    print_message("closed %llu ms after resume\n", (unsigned long long)took);
    assert_true(took >= 50);                       /* the paused time did not count */
    assert_int_equal(dm_get(&dm_counters_global.connections_idle_closed), 1);
    close(fd);
    tcp_stop(&f);
}

static void test_listener_pause_stops_delivery_and_resume_restarts_it(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    int a = tcp_client("127.0.0.1", f.port);
    send_str(a, "before\n");
    wait_lines(&f.loop, &f.k, 1);
    ls_server_pause(f.s);
    assert_true(ls_server_paused(f.s));
    assert_int_equal(dm_get(&dm_counters_global.backpressure_active), 1);
    send_str(a, "while paused\n");
    int b = tcp_client("127.0.0.1", f.port);       /* accepted while paused: starts paused */
    send_str(b, "new client\n");
    assert_true(wait_conns(&f.loop, f.s, 2, 5000));
    run_for(&f.loop, 200);
    assert_int_equal(f.k.n, 1);
    assert_int_equal(dm_get(&dm_counters_global.bytes_received), 7);
    ls_server_resume(f.s);
    assert_false(ls_server_paused(f.s));
    wait_lines(&f.loop, &f.k, 3);
    assert_int_equal(dm_get(&dm_counters_global.backpressure_active), 0);
    assert_true(dm_get(&dm_counters_global.backpressure_us) >= 150000);
    close(a);
    close(b);
    tcp_stop(&f);
}

static void max_two(cf_config *cf)
{
    cf->limits.max_connections = 2;
}

static void test_listener_max_connections_refuses_extras(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, max_two);
    int a = tcp_client("127.0.0.1", f.port), b = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 2, 5000));
    int c = tcp_client("127.0.0.1", f.port);       /* the kernel completes it; we close it */
    assert_true(run_until(&f.loop, peer_closed_pred, &c, 5000));
    assert_int_equal(dm_get(&dm_counters_global.connections_refused), 1);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, "limits.max_connections (2)"));
    int d = tcp_client("127.0.0.1", f.port), e = tcp_client("127.0.0.1", f.port);
    wait_count(&f.loop, &dm_counters_global.connections_refused, 3);
    assert_int_equal(warnings, 1);                 /* at most once a minute */
    send_str(a, "a\n");
    send_str(b, "b\n");
    wait_lines(&f.loop, &f.k, 2);
    assert_int_equal(ls_server_connections(f.s), 2);
    /* A reload raising the limit applies at once. */
    f.cf.limits.max_connections = 3;
    ls_server_set_limits(f.s, &f.cf);
    int g = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 3, 5000));
    /* and a freed slot is usable again */
    close(a);
    assert_true(wait_conns(&f.loop, f.s, 2, 5000));
    int h = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 3, 5000));
    assert_int_equal(dm_get(&dm_counters_global.connections_refused), 3);
    close(b), close(c), close(d), close(e), close(g), close(h);
    tcp_stop(&f);
}

/* Out of file descriptors, accept fails: libuv sheds the pending
 * connection with its spare fd (silently: its trick does not report
 * EMFILE), the open connections stay, and accepting works again once fds
 * free up. */
static void test_listener_out_of_fds_sheds_connections_and_recovers(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    int a = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 1, 5000));
    int b = tcp_client("127.0.0.1", f.port);      /* queued in the kernel */
    struct rlimit old, low;
    getrlimit(RLIMIT_NOFILE, &old);
    int next = dup(0);                             /* the lowest free fd */
    close(next);
    low = old;
    low.rlim_cur = (rlim_t)next;                   /* no new fd at all */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    bool shed = run_until(&f.loop, peer_closed_pred, &b, 5000);
    setrlimit(RLIMIT_NOFILE, &old);
    assert_true(shed);
    assert_int_equal(ls_server_connections(f.s), 1);
    assert_false(peer_closed(a));
    int c = tcp_client("127.0.0.1", f.port);
    send_str(c, "{\"back\":1}\n");
    wait_lines(&f.loop, &f.k, 1);
    assert_int_equal(ls_server_connections(f.s), 2);
    close(a), close(b), close(c);
    tcp_stop(&f);
}

/* ---- memory of idle connections ----------------------------------------- */

static void many_conns(cf_config *cf)
{
    cf->limits.max_connections = 4096;
}

static void test_listener_2000_idle_connections_stay_small(void **state)
{
    (void)state;
    size_t n = 2000;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2 * n + 64 && rl.rlim_max >= 2 * n + 64) {
        rl.rlim_cur = 2 * n + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < 2 * n + 64) {
        print_message("RLIMIT_NOFILE %llu too low for 2000 connections: skipped\n",
                      (unsigned long long)rl.rlim_cur);
        skip();
    }
    tcp_fixture f;
    tcp_start(&f, many_conns);
    int *fds = calloc(n + 1, sizeof *fds);
    fds[n] = tcp_client("127.0.0.1", f.port);       /* warm up the loop's structures */
    send_str(fds[n], "{\"warm\":1}\n{\"partial\":");
    wait_lines(&f.loop, &f.k, 1);
    size_t before = rss_bytes(), heap_before = mallinfo2().uordblks;
    for (size_t i = 0; i < n; i++) {
        fds[i] = tcp_client("127.0.0.1", f.port);
        if (i % 100 == 99)                         /* keep the backlog short */
            assert_true(wait_conns(&f.loop, f.s, i + 2, 5000));
    }
    assert_true(wait_conns(&f.loop, f.s, n + 1, 5000));
    size_t growth = rss_bytes() - before, heap = mallinfo2().uordblks - heap_before;
    /* RSS may reuse pages earlier tests freed; the heap count is exact. */
    print_message("%zu idle connections: RSS +%zu KiB, heap +%zu KiB (%zu bytes each)\n", n,
                  growth >> 10, heap >> 10, heap / n);
    assert_true(growth < ((size_t)16 << 20));
    for (size_t i = 0; i <= n; i++)
        close(fds[i]);
    assert_true(wait_conns(&f.loop, f.s, 0, 10000));
    free(fds);
    tcp_stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_listener_idle_connection_is_closed_after_idle_timeout),
        T(test_listener_paused_connections_are_not_idle_closed),
        T(test_listener_pause_stops_delivery_and_resume_restarts_it),
        T(test_listener_max_connections_refuses_extras),
        T(test_listener_out_of_fds_sheds_connections_and_recovers),
        T(test_listener_2000_idle_connections_stay_small),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
