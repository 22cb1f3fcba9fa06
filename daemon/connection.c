/* connection.c - one ingest connection: its byte stream (connection.h)
 * and its life on the loop (listener_int.h): accept, read through the
 * server's shared buffer, frame, close.
 *
 * Thread: the loop thread only.
 *
 * Memory: an idle connection is its uv handle, this struct and nothing
 * else (the framer allocates only while a line is unfinished and gives
 * the buffer back once it is not), about half a KiB. */
#include "listener_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "err.h"

/* ---- the byte stream (no sockets: the fuzzer drives this part) ------- */

int cn_stream_init(cn_stream *st, size_t max_line_bytes, const char *source,
                   const ls_callbacks *cb)
{
    memset(st, 0, sizeof *st);
    st->source = source;
    st->cb = cb;
    return fr_init(&st->fr, max_line_bytes);
}

void cn_stream_free(cn_stream *st)
{
    fr_free(&st->fr);
}

static int deliver(void *user, const fr_line *line)
{
    cn_stream *st = user;
    st->delivered++;
    dm_add(&dm_counters_global.records_received, 1);
    return st->cb->on_line(st->cb->user, st->source, line);
}

static void read_done(cn_stream *st)
{
    if (st->delivered > 0 && st->cb->on_read_done != NULL)
        st->cb->on_read_done(st->cb->user);
}

int cn_stream_feed(cn_stream *st, const void *data, size_t len)
{
    st->delivered = 0;
    dm_add(&dm_counters_global.bytes_received, len);
    int rc = fr_push(&st->fr, data, len, deliver, st);
    read_done(st);
    /* Most reads end at a line boundary: then nothing is buffered and the
     * buffer goes back, so thousands of quiet clients cost no line
     * buffers. One malloc per read that ends mid-line, never per line. */
    if (fr_pending(&st->fr) == 0)
        fr_free(&st->fr);
    return rc;
}

int cn_stream_finish(cn_stream *st)
{
    st->delivered = 0;
    int rc = fr_finish(&st->fr, deliver, st);
    read_done(st);
    fr_free(&st->fr);
    return rc;
}

/* ---- the connection on the loop -------------------------------------- */

static void list_unlink(ls_server *s, ls_conn *c)
{
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        s->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    else
        s->tail = c->prev;
    c->prev = c->next = NULL;
}

static void list_append(ls_server *s, ls_conn *c)
{
    c->prev = s->tail;
    c->next = NULL;
    if (s->tail != NULL)
        s->tail->next = c;
    else
        s->head = c;
    s->tail = c;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    ls_conn *c = h->data;
    buf->base = c->server->rbuf;
    buf->len = sizeof c->server->rbuf;
}

static void on_read(uv_stream_t *h, ssize_t nread, const uv_buf_t *buf)
{
    ls_conn *c = h->data;
    ls_server *s = c->server;
    if (nread == 0)              /* EAGAIN */
        return;
    if (nread < 0) {             /* EOF, reset, ...: the last line still counts */
        cn_close(c, true);
        return;
    }
    c->last_ms = ls_active_ms(s);
    if (c != s->tail) {
        list_unlink(s, c);
        list_append(s, c);
    }
    c->in_read = true;
    int rc = cn_stream_feed(&c->st, buf->base, (size_t)nread);
    c->in_read = false;
    if (rc != 0)                 /* the callback gave up on this client (or no memory) */
        cn_close(c, false);
    else if (c->close_requested)
        cn_close(c, true);
}

void cn_read_start(ls_conn *c)
{
    uv_read_start(&c->h.stream, on_alloc, on_read);
}

void cn_read_stop(ls_conn *c)
{
    uv_read_stop(&c->h.stream);
}

static void on_conn_closed(uv_handle_t *h)
{
    ls_conn *c = h->data;
    c->server->pending_closes--;
    cn_stream_free(&c->st);
    free(c);
}

void cn_close(ls_conn *c, bool finish)
{
    ls_server *s = c->server;
    if (c->closing)
        return;
    if (c->in_read) {            /* its framer is busy: on_read closes it after */
        c->close_requested = true;
        return;
    }
    c->closing = true;
    list_unlink(s, c);
    s->n_conns--;
    dm_add(&dm_counters_global.connections_open, (uint64_t)-1);
    uv_read_stop(&c->h.stream);
    if (finish)
        cn_stream_finish(&c->st);
    s->pending_closes++;
    uv_close(&c->h.handle, on_conn_closed);
}

static int init_handle(ls_server *s, ls_listener *l, ls_handle *h)
{
    if (l->type == CF_INPUT_TCP)
        return uv_tcp_init(s->loop, &h->tcp);
    return uv_pipe_init(s->loop, &h->pipe, 0);
}

static void free_on_close(uv_handle_t *h)
{
    ls_server *s = h->data;
    s->pending_closes--;
    free(h);
}

void cn_refuse(ls_server *s, ls_listener *l)
{
    ls_handle *h = malloc(sizeof *h);
    if (h == NULL || init_handle(s, l, h) != 0) {
        free(h);                 /* libuv stops watching l until a later accept */
        return;
    }
    h->handle.data = s;
    uv_accept(&l->h.stream, &h->stream);
    s->pending_closes++;
    uv_close(&h->handle, free_on_close);
}

static void name_peer(ls_conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    memcpy(c->peer, "tcp:", 4);
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0)
        lsk_format_inet((const struct sockaddr *)&ss, c->peer + 4, sizeof c->peer - 4);
    else                         /* already gone (ENOTCONN): EOF comes next */
        snprintf(c->peer + 4, sizeof c->peer - 4, "?");
}

int cn_accept(ls_server *s, ls_listener *l)
{
    ls_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        cn_refuse(s, l);
        return UV_ENOMEM;
    }
    int rc = init_handle(s, l, &c->h);
    if (rc != 0) {
        free(c);
        cn_refuse(s, l);
        return rc;
    }
    c->h.handle.data = c;
    c->server = s;
    if ((rc = uv_accept(&l->h.stream, &c->h.stream)) != 0) {
        c->closing = true;
        s->pending_closes++;
        uv_close(&c->h.handle, on_conn_closed);
        return rc;
    }
    const char *source = l->source;
    if (l->type == CF_INPUT_TCP) {
        name_peer(c);
        source = c->peer;
        /* A peer that vanished without FIN/RST is found even with
         * idle_timeout 0. */
        uv_tcp_keepalive(&c->h.tcp, 1, 60);
    }
    cn_stream_init(&c->st, s->max_line_bytes, source, &s->cb);
    c->last_ms = ls_active_ms(s);
    list_append(s, c);
    s->n_conns++;
    dm_add(&dm_counters_global.connections_accepted, 1);
    dm_add(&dm_counters_global.connections_open, 1);
    if (!s->paused)
        cn_read_start(c);
    return 0;
}
