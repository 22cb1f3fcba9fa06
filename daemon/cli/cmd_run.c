/* cmd_run.c - `parqd [--config FILE]`: the daemon (DESIGN.md "Command
 * line"). Start-up, the loop's timers and signals, reload and shutdown;
 * the line flow itself is ingest.c, the write path output/ (pipeline.h).
 *
 * Threads: main() runs the libuv loop (this file, ingest.c, listener.c,
 * metrics.c); the pipeline has its worker threads. Workers reach the loop
 * only through `wake` (uv_async); the publishing worker writes the spool's
 * checkpoint itself (spool.h: the appender never waits for it).
 *
 * Start: configuration, log level, temporary files left by a crash
 * removed, spool opened (a torn tail cut and reported), pipeline started
 * at the spool's watermark, spool records past it replayed, listeners
 * bound (or taken from systemd socket activation), metrics, READY=1.
 *
 * SIGTERM/SIGINT: stop accepting, read connections until their clients
 * hang up (at most DM_SHUTDOWN_GRACE_MS), deliver every last line, replay
 * what is left, publish every file, exit 0 (3 when files could not
 * be written: the lines stay in the spool for the next start).
 * SIGHUP: publish the current files and reload the configuration; an
 * invalid one is reported (file:line:col) and the old one kept. Inputs,
 * the spool and the metrics address stay as they were (a restart changes
 * them); schema, output, limits and log level change, and so do each
 * input's TLS files (certificate, key, client CA, allow_subjects) and
 * allow_uids / allow_gids: those are loaded first, and a failure there
 * (a key file readable by others, a certificate that does not parse)
 * keeps the whole running configuration. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "counters.h"
#include "daemon.h"
#include "health.h"
#include "listenfds.h"
#include "log.h"
#include "run_store.h"
#include "sdnotify.h"
#include "tls.h"

/* ---- pipeline callbacks (worker threads) --------------------------------- */

static int on_publish_intent(void *user, const char *path, uint64_t end, pq_err *err)
{
    dm_daemon *d = user;
    return sp_checkpoint_intent(d->spool, path, end, err);
}

static void on_published(void *user, const char *path, uint64_t end, uint64_t rows,
                         uint64_t bytes)
{
    dm_daemon *d = user;
    pq_err e = {0};
    int rc = sp_checkpoint_commit(d->spool, end, &e);
    lg_info("published %s (%llu rows, %llu bytes)", path, (unsigned long long)rows,
            (unsigned long long)bytes);
    if (rc != 0)
        lg_warning("spool: %s (the file is published; its lines are trimmed at the next "
                   "commit)", e.msg);
}

/* Partitioned output: a file holding its key's records in [first, end). */
static int on_publish_intent_range(void *user, const char *path, const char *key,
                                   uint64_t first, uint64_t end, pq_err *err)
{
    dm_daemon *d = user;
    return sp_checkpoint_intent_range(d->spool, path, key, first, end, err);
}

static void on_published_range(void *user, const char *path, const char *key, uint64_t first,
                               uint64_t end, uint64_t watermark, uint64_t dl_done,
                               uint64_t rows, uint64_t bytes)
{
    dm_daemon *d = user;
    pq_err e = {0};
    int rc = sp_checkpoint_commit_range(d->spool, key, first, end, watermark, dl_done, &e);
    lg_info("published %s (%llu rows, %llu bytes)", path, (unsigned long long)rows,
            (unsigned long long)bytes);
    if (rc != 0)
        lg_warning("spool: %s (the file is published; a restart before the next commit "
                   "writes its records again)", e.msg);
}

/* The assembler: a file's automatically shredded column got its layout. */
static void on_shred(void *user, const char *file, uint64_t first_seq, const char *column,
                     const char *layout)
{
    (void)user;
    (void)first_seq;
    lg_info("%s: column %s shredded as %s", file, column, layout);
}

static void on_failure(void *user, uint64_t resume, const pq_err *err)
{
    dm_daemon *d = user;
    pthread_mutex_lock(&d->fail_mu);
    d->fail_seen = true;
    d->fail_resume = resume;
    d->fail_err = *err;
    pthread_mutex_unlock(&d->fail_mu);
    uv_async_send(&d->wake);
}

static void on_progress(void *user)
{
    dm_daemon *d = user;
    uv_async_send(&d->wake);
}

/* ---- failure and retry (loop thread) --------------------------------------- */

static void on_retry(uv_timer_t *t)
{
    dm_daemon *d = t->data;
    d->retry_pending = false;
    if (d->stopping)
        return;
    lg_info("output: retrying from seq %llu", (unsigned long long)d->fail_resume);
    pl_resume(d->pl);
    dm_start_replay(d, d->fail_resume);
}

/* The output error last logged (loop thread); "" once writing works. */
static char fail_logged[sizeof ((pq_err *)0)->msg];

static void handle_failure(dm_daemon *d)
{
    pthread_mutex_lock(&d->fail_mu);
    bool seen = d->fail_seen;
    pq_err e = d->fail_err;
    d->fail_seen = false;
    pthread_mutex_unlock(&d->fail_mu);
    if (!seen)
        return;
    d->retry_ms = d->retry_ms ? d->retry_ms * 2 : DM_RETRY_MIN_MS;
    if (d->retry_ms > DM_RETRY_MAX_MS)
        d->retry_ms = DM_RETRY_MAX_MS;
    /* The same error again (a bucket that stays missing) is logged once;
     * /health keeps saying it. */
    if (strcmp(fail_logged, e.msg) != 0)
        lg_error("output: %s; nothing is lost (the lines are in the spool); retrying in %llu ms",
                 e.msg, (unsigned long long)d->retry_ms);
    snprintf(fail_logged, sizeof fail_logged, "%s", e.msg);
    dm_health_set(DM_HEALTH_OUTPUT, "%s; retrying in %llu ms", e.msg,
                  (unsigned long long)d->retry_ms);
    d->live = false;             /* new lines only go to the spool until the retry */
    if (!d->retry_pending) {
        d->retry_pending = true;
        uv_timer_start(&d->retry_timer, on_retry, d->retry_ms, 0);
    }
}

static void on_wake(uv_async_t *a)
{
    dm_daemon *d = a->data;
    handle_failure(d);
    dm_sync_progress(d);
    dm_check_backpressure(d);
}

/* ---- timers ---------------------------------------------------------------------- */

static void on_batch_timer(uv_timer_t *t)
{
    dm_submit_batch(t->data);
}

static void on_tick(uv_timer_t *t)
{
    dm_daemon *d = t->data;
    pl_tick(d->pl);
    if (d->spool_broken)
        dm_flush_spool(d, false);
    dm_sync_progress(d);         /* after a failed sync: the waiting batches' next */
    dm_check_backpressure(d);
    /* Writing works again (the retry replayed everything and a file was
     * published since: a replay alone proves nothing to a store that
     * refuses every upload): clear the problem and the backoff. */
    if (d->retry_ms && !d->retry_pending && !pl_failed(d->pl) && d->live &&
        sp_committed(d->spool) > d->fail_resume) {
        dm_health_clear(DM_HEALTH_OUTPUT);
        d->retry_ms = 0;
        fail_logged[0] = '\0';
    }
}

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    sdn_notify("WATCHDOG=1", NULL);
}

/* ---- write path set-up --------------------------------------------------------- */

/* load_keys false: d->keys is already the keyring of d->cf (a reload
 * going back to the running configuration keeps its keys in memory, since
 * their files may have changed since they were read). */
static int start_pipeline(dm_daemon *d, uint64_t first_seq, uint64_t file_seq, bool load_keys,
                          pq_err *err)
{
    const cf_output *o = &d->cf.output;
    cf_writer_opts(&d->cf, &d->wopts);
    int rc = load_keys ? kr_keyring_load(&d->keys, &d->cf, err) : 0;
    if (rc != 0)
        return rc;
    d->wopts.encryption = kr_keyring_opts(&d->keys);
    if ((rc = rs_start(d, err)) != 0)
        return rc;
    /* Partitioned output: replay skips what the published files hold. */
    sp_range *published = NULL;
    size_t n_published = 0;
    uint64_t dl_done = 0;
    if ((rc = sp_published_ranges(d->spool, &published, &n_published, &dl_done, err)) != 0)
        return rc;
    /* Rejects written after the last checkpoint are in the file, not in
     * the checkpoint's mark: its last seq tells the replay where they end. */
    uint64_t dl_tail = 0;
    if (d->cf.errors.dead_letter != NULL &&
        (rc = dl_recover(d->cf.errors.dead_letter, &dl_tail, err)) != 0) {
        sp_ranges_free(published, n_published);
        return rc;
    }
    if (dl_tail > dl_done)
        dl_done = dl_tail;
    pl_config pc = {
        .schema = d->cf.schema,
        .writer = &d->wopts,
        .out_dir = o->dir,
        .store = d->store,
        .path_template = o->path,
        .time_from = o->time_from,
        .row_group = o->row_group,
        .rotate = o->rotate,
        .publish = PL_PUBLISH_EACH,
        .dead_letters = &d->dl,
        .first_seq = first_seq,
        .file_seq = file_seq,
        .host = d->host,
        .max_line_bytes = d->cf.limits.max_line_bytes,
        .max_open_files = o->max_open_files,
        .max_buffered_bytes = d->cf.limits.max_buffered_bytes,
        .published = published,
        .n_published = n_published,
        .dl_done = dl_done,
        .dead_letter_seq = true,
    };
    pl_callbacks cb = {.user = d, .on_publish_intent = on_publish_intent,
                       .on_published = on_published, .on_failure = on_failure,
                       .on_progress = on_progress, .on_shred = on_shred,
                       .on_publish_intent_range = on_publish_intent_range,
                       .on_published_range = on_published_range};
    rc = pl_new(&d->pl, &pc, &cb, err);
    sp_ranges_free(published, n_published);
    if (rc == 0 && (d->batch = pl_batch_get(d->pl)) == NULL)
        rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
    if (rc == 0)
        pl_batch_reset(d->batch, first_seq);
    return rc;
}

static void stop_pipeline(dm_daemon *d)
{
    dm_sync_drop(d, 0);          /* in the spool: the next pipeline replays them */
    pl_batch_destroy(d->batch);
    d->batch = NULL;
    pl_destroy(d->pl);
    d->pl = NULL;
    rs_stop(d);
    kr_keyring_free(&d->keys);
    memset(&d->keys, 0, sizeof d->keys);
}

/* Publishes everything accepted so far. 0, or -1 when files could not be
 * written (the lines stay in the spool). */
static int publish_all(dm_daemon *d)
{
    pq_err e = {0};
    if (dm_replay_all(d) != 0)
        return -1;
    dm_submit_batch(d);
    if (dm_sync_wait(d) != 0 || (d->live && pl_batch_lines(d->batch) > 0))
        return -1;               /* the spool cannot take them: not durable */
    pl_close_files(d->pl);
    if (pl_drain(d->pl, &e) != 0) {
        lg_error("output: %s", e.msg);
        return -1;
    }
    return 0;
}

static int open_dead_letters(dm_daemon *d, pq_err *err)
{
    if (d->dl_ready)
        dl_free(&d->dl);
    d->dl_ready = dl_init(&d->dl, d->cf.errors.dead_letter, DL_SYNC_CLOSE, err) == 0;
    return d->dl_ready ? 0 : PQ_ENOMEM;
}

/* ---- temporary files left by a crash --------------------------------------------- */

/* Whether a writer holds the temporary file's flock (filesink.c takes it
 * while writing): then it is live, whatever its pid says. */
static bool temp_in_use(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return true;
    bool busy = flock(fd, LOCK_EX | LOCK_NB) != 0;
    close(fd);
    return busy;
}

/* filesink's temporary names: ".<name>.<pid>-<n>.tmp". One whose pid is
 * not a running process (or is ours) was left by a crash, unless someone
 * holds its lock: in another PID namespace (containers sharing a volume)
 * a live writer's pid can look dead, or be ours. */
static bool stale_temp(const char *name)
{
    size_t n = strlen(name);
    if (name[0] != '.' || n < 8 || strcmp(name + n - 4, ".tmp") != 0)
        return false;
    const char *dash = NULL;
    for (const char *p = name + n - 5; p > name && *p != '.'; p--)
        if (*p == '-')
            dash = p;
    const char *dot = dash;
    while (dot != NULL && dot > name && *dot != '.')
        dot--;
    if (dot == NULL || dot == name || dash == NULL)
        return false;
    long pid = strtol(dot + 1, NULL, 10);
    return pid > 0 && (pid == (long)getpid() || (kill((pid_t)pid, 0) != 0 && errno == ESRCH));
}

static void sweep_temp(const char *dir, int depth)
{
    DIR *dp = opendir(dir);
    if (dp == NULL || depth > 16) {
        if (dp != NULL)
            closedir(dp);
        return;
    }
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            sweep_temp(path, depth + 1);
        else if (S_ISREG(st.st_mode) && stale_temp(e->d_name) && !temp_in_use(path) &&
                 unlink(path) == 0)
            lg_info("removed %s, an unfinished file of an earlier run (its lines are "
                    "replayed from the spool)", path);
    }
    closedir(dp);
}

/* ---- reload and shutdown ----------------------------------------------------------- */

static void reload(dm_daemon *d)
{
    pq_err e = {0};
    cf_config next;
    int rc = d->config_path ? cf_config_load(d->config_path, &next, &e)
                            : cf_config_default(&next, &e);
    if (rc != 0) {
        lg_error("reload: %s; keeping the running configuration", e.msg);
        cf_config_free(&next);
        return;
    }
    ls_security *sec;            /* TLS files first: one that fails changes nothing */
    if (ls_server_prepare_security(d->ls, &next, &sec, &e) != 0) {
        lg_error("reload: %s; keeping the running configuration", e.msg);
        cf_config_free(&next);
        return;
    }
    sdn_reloading(NULL);
    lg_info("reload: publishing the current files");
    ls_server_pause(d->ls);
    if (publish_all(d) != 0)
        lg_warning("reload: not every line could be written; they are replayed from the "
                   "spool under the new configuration");
    uint64_t file_seq = pl_file_seq(d->pl);
    kr_keyring old_keys = d->keys;       /* for going back: not read again */
    memset(&d->keys, 0, sizeof d->keys);
    stop_pipeline(d);
    /* The spool, inputs and metrics address belong to the process. */
    cf_config old = d->cf;
    d->cf = next;
    char *unused_dir = d->cf.spool.dir;
    d->cf.spool = old.spool;
    bool kept_old = false;
    if (open_dead_letters(d, &e) != 0 ||
        start_pipeline(d, sp_committed(d->spool), file_seq, true, &e) != 0) {
        /* E.g. a key file that cannot be read: back to what ran before. */
        kept_old = true;
        lg_error("reload: %s; keeping the running configuration", e.msg);
        stop_pipeline(d);
        next = d->cf;
        next.spool.dir = unused_dir;
        cf_config_free(&next);
        d->cf = old;
        d->keys = old_keys;
        ls_security_free(sec);
        if (open_dead_letters(d, &e) != 0 ||
            start_pipeline(d, sp_committed(d->spool), file_seq, false, &e) != 0) {
            lg_error("reload: the running configuration cannot restart either: %s; stopping "
                     "(the lines are in the spool)", e.msg);
            exit(3);
        }
    } else {
        ls_server_commit_security(d->ls, sec);
        kr_keyring_free(&old_keys);
        old.spool.dir = unused_dir;      /* freed with the old configuration */
        cf_config_free(&old);
    }
    lg_set_level(d->cf.log.level);
    ls_server_set_limits(d->ls, &d->cf);
    if (d->mt != NULL)
        ls_server_set_limits(d->mt, &d->cf);
    if (sp_next_seq(d->spool) > sp_committed(d->spool))
        dm_start_replay(d, sp_committed(d->spool));
    else
        d->live = true;
    if (!d->paused)
        ls_server_resume(d->ls);
    lg_info("reload: done%s", kept_old ? " (the running configuration kept)"
                              : d->config_path ? "" : " (built-in defaults)");
    sdn_notify("READY=1", NULL);
}

static void close_handle(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void finish_shutdown(dm_daemon *d)
{
    d->exit_status = publish_all(d) == 0 ? 0 : 3;
    /* Batches still waiting for a sync stay in the spool only: the
     * pipeline has drained, and the next start replays them. */
    dm_sync_drop(d, 0);
    dm_flush_spool(d, true);
    if (d->exit_status != 0)
        lg_error("shutdown: some lines could not be written; they stay in the spool and are "
                 "written at the next start");
    else
        lg_info("shutdown: every file published");
    uv_close((uv_handle_t *)&d->wake, NULL);
    uv_walk(d->loop, close_handle, NULL);
}

/* Shutdown, after accepting stopped: connections are read until their
 * clients hang up or DM_SHUTDOWN_GRACE_MS passes (a client that wrote
 * everything and closed just before the signal loses nothing, even what
 * is still in its kernel's send buffer); then the rest are closed, after
 * reading what already arrived. Time with reading paused for flow control
 * (the parsers are behind and catching up) does not count: the wait is
 * ours, not the clients'. Paused by pressure (the writer behind, the
 * spool unwritable) it counts, as that may not end. Checked on a timer,
 * not an idle handle, so waiting costs no CPU; every DM_SHUTDOWN_POLL_MS,
 * as the last batch (and the spool's last fsync) waits for it. */
static void on_shutdown_timer(uv_timer_t *t)
{
    dm_daemon *d = t->data;
    if (!d->listeners_closing) {
        const uint64_t now = uv_now(d->loop);
        if (d->paused && !d->pressure)
            d->shutdown_deadline_ms += now - d->shutdown_tick_ms;
        d->shutdown_tick_ms = now;
        if (ls_server_connections(d->ls) > 0 && now < d->shutdown_deadline_ms)
            return;
        d->listeners_closing = true;
        ls_server_close(d->ls);
        /* with the inputs: its connections' handles must be closed (by
         * it) before finish_shutdown closes whatever handle is left */
        mt_server_close(d->mt);
        /* Their close callbacks run in this loop iteration: look again in
         * 1 ms (the files' publication waits). Not 0: libuv 1.44 would run
         * this callback again before the close callbacks. */
        uv_timer_start(t, on_shutdown_timer, 1, DM_SHUTDOWN_POLL_MS);
        return;
    }
    if (!ls_server_closed(d->ls) || !mt_server_closed(d->mt))
        return;
    uv_timer_stop(t);
    finish_shutdown(d);
}

static void begin_shutdown(dm_daemon *d, int sig)
{
    if (d->stopping)
        return;
    d->stopping = true;
    lg_info("signal %d: stopping; reading what clients sent, then publishing every file", sig);
    sdn_notify("STOPPING=1", NULL);
    uv_timer_stop(&d->retry_timer);
    if (d->retry_pending) {
        d->retry_pending = false;
        pl_resume(d->pl);
        dm_start_replay(d, d->fail_resume);
    }
    ls_server_stop_accepting(d->ls);
    /* Exit does not wait for unlinks (tens of ms per synced 64 MiB
     * segment here): the committed segments stay, below the checkpoint's
     * watermark, and the next start removes them (spool_reap.c). */
    sp_reap_hold(d->spool);
    d->shutdown_tick_ms = uv_now(d->loop);
    d->shutdown_deadline_ms = d->shutdown_tick_ms + DM_SHUTDOWN_GRACE_MS;
    uv_timer_start(&d->shutdown_timer, on_shutdown_timer, 0, DM_SHUTDOWN_POLL_MS);
}

static void on_signal(uv_signal_t *s, int sig)
{
    dm_daemon *d = s->data;
    if (sig == SIGHUP && !d->stopping)
        reload(d);
    else if (sig != SIGHUP)
        begin_shutdown(d, sig);
}

/* ---- start ------------------------------------------------------------------------- */

static int parse_args(int argc, char **argv, const char **config)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (cli_take_opt(argc, argv, &i, "--config", &v) && v != NULL && v[0] != '\0' &&
            *config == NULL) {
            *config = v;
            continue;
        }
        fprintf(stderr, "parqd: %s '%s'\n", v == NULL && strncmp(argv[i], "--config", 8) == 0
                ? "missing value for" : "unexpected argument", argv[i]);
        fputs("usage: parqd [--config FILE]\n", stderr);
        return -1;
    }
    return 0;
}

static int load_config(dm_daemon *d)
{
    pq_err e = {0};
    int rc = d->config_path ? cf_config_load(d->config_path, &d->cf, &e)
                            : cf_config_default(&d->cf, &e);
    d->cf_loaded = true;
    if (rc != 0) {
        fprintf(stderr, "parqd: %s\n", e.msg);
        return 1;
    }
    lg_init(d->cf.log.level);
    if (gethostname(d->host, sizeof d->host) != 0)
        snprintf(d->host, sizeof d->host, "localhost");
    d->host[sizeof d->host - 1] = '\0';
    return 0;
}

/* PARQD_TEST_HOLD_CHECKPOINT=FIFO, a fault hook for one test
 * (tests/scripts/daemon/test_daemon_checkpoint_hold.sh): the first
 * checkpoint write's fsync waits until a byte is written into FIFO, as a
 * very slow disk would make it wait, so the test can show that lines keep
 * being received and spooled meanwhile. Runs on the publishing worker. */
static void hold_checkpoint(void *user)
{
    static atomic_bool held;
    const char *fifo = user;
    if (atomic_exchange(&held, true))
        return;
    lg_info("test hook: holding the checkpoint's fsync until %s is written", fifo);
    int fd = open(fifo, O_RDONLY | O_CLOEXEC);
    char c;
    while (fd >= 0 && read(fd, &c, 1) < 0 && errno == EINTR)
        continue;
    if (fd >= 0)
        close(fd);
    lg_info("test hook: checkpoint released");
}

static void install_test_hooks(dm_daemon *d)
{
    const char *fifo = getenv("PARQD_TEST_HOLD_CHECKPOINT");
    if (fifo == NULL || fifo[0] == '\0')
        return;
    sp_ckpt_hook hook = {.before_fsync = hold_checkpoint, .user = (void *)fifo};
    sp_set_ckpt_hook(d->spool, &hook);
}

static int open_spool(dm_daemon *d)
{
    pq_err e = {0};
    sp_open_report rep = {0};
    if (rs_open_spool(d, &rep, &e) != 0) {
        if (e.code == PQ_ESTATE) {
            lg_error("%s", e.msg);   /* another parqd has it: a usage error */
            return 1;
        }
        lg_error("spool: %s", e.msg);
        return 3;
    }
    install_test_hooks(d);
    /* Committed segments are unlinked off the publishing worker, and a
     * clean stop leaves them to the next start (begin_shutdown). */
    if (sp_reap_start(d->spool, &e) != 0)
        lg_warning("spool: %s; the publishing worker removes segments itself", e.msg);
    if (rep.warning[0] != '\0')
        lg_warning("spool: %s", rep.warning);
    if (rep.records > 0)
        lg_info("spool: %llu records to replay from seq %llu",
                (unsigned long long)rep.records, (unsigned long long)sp_committed(d->spool));
    return 0;
}

static int start_listeners(dm_daemon *d)
{
    pq_err e = {0};
    ls_inherited *fds = NULL;
    size_t n_fds = 0;
    if (lf_listen_fds(&fds, &n_fds, &e) != 0) {
        lg_error("socket activation: %s", e.msg);
        return 1;
    }
    ls_callbacks cb = {.user = d, .on_line = dm_on_line, .on_read_done = dm_on_read_done,
                       .next_seq = dm_next_seq, .want_durable = dm_want_durable,
                       .busy = dm_busy};
    int rc = ls_server_new(&d->ls, d->loop, &d->cf, fds, n_fds, &cb, &e);
    lf_free(fds, n_fds);
    if (rc != 0) {
        lg_error("%s", e.msg);
        return 1;
    }
    if (n_fds > 0)
        lg_info("socket activation: %zu inherited sockets", n_fds);
    if (d->cf.metrics.enabled && mt_server_new(&d->mt, d->loop, &d->cf, 0, &e) != 0) {
        lg_error("metrics: %s", e.msg);
        return 1;
    }
    return 0;
}

static void init_handles(dm_daemon *d)
{
    d->handles_ready = true;
    uv_async_init(d->loop, &d->wake, on_wake);
    uv_timer_init(d->loop, &d->batch_timer);
    uv_timer_init(d->loop, &d->tick_timer);
    uv_timer_init(d->loop, &d->retry_timer);
    uv_timer_init(d->loop, &d->watchdog_timer);
    uv_timer_init(d->loop, &d->replay_timer);
    uv_timer_init(d->loop, &d->shutdown_timer);
    uv_check_init(d->loop, &d->ack_check);
    d->ack_check.data = d;
    uv_check_init(d->loop, &d->read_check);
    d->read_check.data = d;
    uv_signal_init(d->loop, &d->sig_term);
    uv_signal_init(d->loop, &d->sig_int);
    uv_signal_init(d->loop, &d->sig_hup);
    d->wake.data = d->batch_timer.data = d->tick_timer.data = d->retry_timer.data = d;
    d->watchdog_timer.data = d->replay_timer.data = d->shutdown_timer.data = d;
    d->sig_term.data = d->sig_int.data = d->sig_hup.data = d;
    uv_signal_start(&d->sig_term, on_signal, SIGTERM);
    uv_signal_start(&d->sig_int, on_signal, SIGINT);
    uv_signal_start(&d->sig_hup, on_signal, SIGHUP);
    uv_timer_start(&d->batch_timer, on_batch_timer, DM_BATCH_INTERVAL_MS, DM_BATCH_INTERVAL_MS);
    uv_timer_start(&d->tick_timer, on_tick, 1000, 1000);
    uint64_t wd = sdn_watchdog_usec();
    if (wd > 0)
        uv_timer_start(&d->watchdog_timer, on_watchdog, wd / 2000, wd / 2000);
}

/* Private keys (TLS, and the encryption keys' memory through OpenSSL's
 * allocator) go to OpenSSL's secure heap: locked in memory where the
 * limits allow, and left out of core dumps. */
static void secure_heap(const dm_daemon *d)
{
    bool tls = false;
    for (size_t i = 0; i < d->cf.n_inputs; i++)
        tls |= d->cf.inputs[i].tls != NULL;
    if ((tls || d->cf.output.encryption.enabled) && !tl_secure_heap_init())
        lg_warning("could not set up OpenSSL's secure heap; private keys stay in ordinary "
                   "memory (they are still wiped when freed)");
}

static int start(dm_daemon *d)
{
    pq_err e = {0};
    secure_heap(d);
    /* The spool first: a second parqd on the same spool stops here, before
     * it touches anything of the first one's. */
    int status = open_spool(d);
    if (status != 0)
        return status;
    sweep_temp(d->cf.output.dir, 0);
    if (open_dead_letters(d, &e) != 0 ||
        start_pipeline(d, sp_committed(d->spool), 0, true, &e) != 0) {
        lg_error("%s", e.msg);
        return e.code == PQ_ENOMEM ? 3 : 1;
    }
    init_handles(d);
    if ((status = start_listeners(d)) != 0)
        return status;
    if (sp_next_seq(d->spool) > sp_committed(d->spool))
        dm_start_replay(d, sp_committed(d->spool));
    else
        d->live = true;
    lg_info("parqd %s: ready (%zu inputs, output %s, spool %s, sync %s)", PARQD_VERSION,
            d->cf.n_inputs, rs_output_name(d), d->cf.spool.dir,
            d->cf.spool.sync == CF_SYNC_ALWAYS ? "always"
            : d->cf.spool.sync == CF_SYNC_BATCH ? "batch" : "none");
    if (sdn_notify("READY=1\nSTATUS=accepting", &e) != 0)
        lg_warning("sd_notify: %s", e.msg);
    return 0;
}

static void teardown(dm_daemon *d)
{
    if (d->ls != NULL)
        ls_server_destroy(d->ls);
    if (d->mt != NULL)
        mt_server_destroy(d->mt);
    stop_pipeline(d);
    if (d->dl_ready) {
        pq_err e = {0};
        if (dl_close(&d->dl, &e) != 0)
            lg_error("dead letters: %s", e.msg);
        dl_free(&d->dl);
    }
    if (d->spool != NULL)
        sp_close(d->spool);
    if (d->cf_loaded)
        cf_config_free(&d->cf);
    pthread_mutex_destroy(&d->fail_mu);
}

int cmd_run(int argc, char **argv)
{
    static dm_daemon daemon;
    dm_daemon *d = &daemon;
    const char *config = NULL;
    if (parse_args(argc, argv, &config) != 0)
        return 1;
    d->config_path = (char *)config;
    pthread_mutex_init(&d->fail_mu, NULL);
    signal(SIGPIPE, SIG_IGN);    /* EPIPE is reported, not fatal */
    signal(SIGXFSZ, SIG_IGN);    /* EFBIG is reported, not fatal */
    d->loop = uv_default_loop();
    int status = load_config(d);
    if (status == 0)
        status = start(d);
    if (status == 0) {
        uv_run(d->loop, UV_RUN_DEFAULT);
        status = d->exit_status;
    } else if (d->handles_ready) {
        if (d->ls != NULL) {
            ls_server_stop_accepting(d->ls);
            ls_server_close(d->ls);
        }
        mt_server_close(d->mt);
        uv_walk(d->loop, close_handle, NULL);
        uv_run(d->loop, UV_RUN_DEFAULT);
    }
    teardown(d);
    uv_loop_close(d->loop);
    return status;
}
