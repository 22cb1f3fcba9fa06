/* spool_open.c - sp_open: finding the segments, checking every record,
 * cutting the last segment's torn or garbled tail, reading the checkpoint
 * (and settling a pending publication), trimming what is committed, and
 * picking up where the last run stopped (spool.h; format in spool.c).
 *
 * Policy. Only the last segment (the last one holding an intact record)
 * can have been mid-write at a crash, so only its tail is cut; segments
 * after it hold nothing intact and are removed. A bad record in an earlier
 * segment is bit rot or tampering, not a crash: it is reported and left
 * alone, and the reader reports it again and moves on to the next segment.
 *
 * Thread: the loop thread (before the spool is used). */
#include "spool_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the scan of one segment found. */
typedef struct seg_scan {
    uint64_t first;
    uint64_t size;           /* file size */
    uint64_t off;            /* end of the intact prefix (0: header unusable) */
    uint64_t end;            /* seq after the last intact record */
    uint64_t count;          /* intact records */
    int status;              /* SP_END, SP_TORN, SP_BAD or SP_GONE */
    char *why;               /* malloc'd: what failed, when status is not SP_END */
} seg_scan;

static void warn(sp_open_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends one finding to the report ("; " between findings; "..." if the
 * 512 bytes run out). */
static void warn(sp_open_report *r, const char *fmt, ...)
{
    const size_t cap = sizeof r->warning;
    size_t n = strlen(r->warning);
    if (n + 5 >= cap)
        return;
    if (n > 0)
        n += (size_t)snprintf(r->warning + n, cap - n, "; ");
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(r->warning + n, cap - n, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= cap - n)
        memcpy(r->warning + cap - 4, "...", 4);
}

/* mkdir -p with mode 0700 for what is missing. */
static int make_dir(const char *dir, pq_err *err)
{
    struct stat st;
    if (dir[0] == '\0')
        return pq_err_set(err, PQ_EINVAL, "spool: empty directory name");
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return pq_err_set(err, PQ_EINVAL, "spool %s: exists and is not a directory", dir);
        return PQ_OK;
    }
    char *d = strdup(dir);
    if (d == NULL)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", dir);
    int rc = PQ_OK;
    for (char *p = d + 1;; p++) {
        const bool end = *p == '\0';
        if (!end && *p != '/')
            continue;
        *p = '\0';
        if (mkdir(d, 0700) != 0 && errno != EEXIST) {
            rc = pq_err_set(err, PQ_EIO, "spool %s: cannot create directory %s: %s", dir, d,
                            strerror(errno));
            break;
        }
        if (end)
            break;
        *p = '/';
    }
    free(d);
    if (rc == 0 && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = pq_err_set(err, PQ_EINVAL, "spool %s: not a directory", dir);
    return rc;
}

static sp_spool *spool_new(const char *dir, uint64_t segment_bytes)
{
    sp_spool *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->fd = -1;
    s->lock_fd = -1;
    s->segment_bytes = segment_bytes ? segment_bytes : SP_SEGMENT_BYTES_DEFAULT;
    s->committed = s->next_seq = s->flushed_seq = s->synced_seq = 1;
    s->ckpt.committed = 1;
    dm_mutex_init(&s->seg_mu);
    dm_mutex_init(&s->ckpt_mu);
    dm_mutex_init(&s->sync_mu);
    dm_mutex_init(&s->reap_mu);
    pq_buf_init(&s->buf);
    s->dir = strdup(dir);
    s->path = malloc(strlen(dir) + SP_NAME_LEN + 2);
    s->trim_path = malloc(strlen(dir) + SP_NAME_LEN + 2);
    if (s->dir == NULL || s->path == NULL || s->trim_path == NULL ||
        pq_buf_reserve(&s->buf, SP_HDR_SIZE + 4096) != 0) {
        sp_close(s);
        return NULL;
    }
    s->buf.len = SP_HDR_SIZE;    /* room for a segment header in front */
    return s;
}

/* Reads the checkpoint and settles a pending publication: its file exists
 * -> the crash came after the rename, so it counts as committed; else it
 * never happened and its records replay. *rewrite: the file must be
 * rewritten (an intent settled, or a corrupt file that could be ignored). */
static int local_published(void *user, const char *path, uint64_t end, bool *yes, pq_err *err)
{
    (void)user;
    (void)end;
    *yes = access(path, F_OK) == 0;
    if (*yes || errno == ENOENT || errno == ENOTDIR)
        return PQ_OK;
    return pq_err_set(err, PQ_EIO, "%s", strerror(errno));
}

static int load_checkpoint(sp_spool *s, size_t nsegs, sp_published_fn published, void *user,
                           sp_open_report *report, bool *rewrite, pq_err *err)
{
    bool found;
    sp_ckpt c;
    pq_err why = {0};
    int rc = sp_ckpt_read(s->dir, &c, &found, &why);
    if (rc == PQ_EPARSE && nsegs > 0)
        return pq_err_set(err, PQ_EIO, "%.250s: refusing to start, as the committed watermark "
                          "is unknown and guessing would publish spooled records twice or "
                          "never (restore the checkpoint, or remove the segments)", why.msg);
    if (rc == PQ_EPARSE) {
        warn(report, "%.250s: ignored, as there are no segments to replay", why.msg);
        *rewrite = true;
        return PQ_OK;
    }
    if (rc != 0)
        return pq_err_set(err, rc, "%s", why.msg);
    if (!found)
        return PQ_OK;
    s->committed = c.committed;
    if (c.intent_path != NULL && c.intent_key != NULL) {
        /* A file of one key: published, its range joins the others. */
        *rewrite = true;
        bool yes = false;
        pq_err q = {0};
        if (published(user, c.intent_path, c.intent_end, &yes, &q) != 0) {
            rc = pq_err_set(err, PQ_EIO, "spool %s: cannot tell whether %s was published "
                            "(pending in the checkpoint): %s", s->dir, c.intent_path, q.msg);
        } else if (yes) {
            sp_range *r = realloc(c.ranges, (c.n_ranges + 1) * sizeof *r);
            if (r == NULL) {
                rc = pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
            } else {
                c.ranges = r;
                r[c.n_ranges++] = (sp_range){.first = c.intent_first, .end = c.intent_end,
                                             .key = c.intent_key};
                c.intent_key = NULL;
                warn(report, "publication of %.200s (its key's records in [%" PRIu64 ", %"
                     PRIu64 ")) had completed: committed", c.intent_path, c.intent_first,
                     c.intent_end);
            }
        } else {
            warn(report, "publication of %.200s (its key's records in [%" PRIu64 ", %" PRIu64
                 ")) had not completed: its records replay", c.intent_path, c.intent_first,
                 c.intent_end);
        }
    } else if (c.intent_path != NULL) {
        *rewrite = true;
        bool yes = false;
        pq_err q = {0};
        if (published(user, c.intent_path, c.intent_end, &yes, &q) != 0) {
            rc = pq_err_set(err, PQ_EIO, "spool %s: cannot tell whether %s was published "
                            "(pending in the checkpoint): %s", s->dir, c.intent_path, q.msg);
        } else if (yes) {
            s->committed = c.intent_end;
            warn(report, "publication of %.200s (records < %" PRIu64 ") had completed: "
                 "committed", c.intent_path, c.intent_end);
        } else {
            warn(report, "publication of %.200s (records < %" PRIu64 ") had not completed: "
                 "its records replay", c.intent_path, c.intent_end);
        }
    }
    free(c.intent_path);
    free(c.intent_key);
    c.intent_path = c.intent_key = NULL;
    c.intent_end = c.intent_first = 0;
    c.committed = s->committed;
    size_t kept = 0;             /* a settled format 1 intent moved the watermark */
    for (size_t i = 0; i < c.n_ranges; i++) {
        if (c.ranges[i].end > c.committed)
            c.ranges[kept++] = c.ranges[i];
        else
            free(c.ranges[i].key);
    }
    c.n_ranges = kept;
    sp_ckpt_free(&s->ckpt);
    s->ckpt = c;                 /* the ranges and the dead letters' mark */
    return rc;
}

/* Checks every record of one segment. 0, PQ_EINVAL (newer format), PQ_EIO. */
static int scan_one(sp_scan *sc, seg_scan *g, uint64_t committed, uint64_t *records,
                    pq_err *err)
{
    pq_err why = {0};
    int rc = sp_scan_open(sc, g->first, &why);
    if (rc < 0)
        return pq_err_set(err, rc, "%s", why.msg);
    if (rc == PQ_OK) {
        g->off = SP_HDR_SIZE;
        sp_record rec;
        while ((rc = sp_scan_next(sc, &rec, &why)) == SP_REC) {
            g->count++;
            *records += rec.seq >= committed;
        }
        if (rc < 0)
            return pq_err_set(err, rc, "%s", why.msg);
        g->off = sc->off;
        g->end = sc->expect;
    }
    g->status = rc;
    if (rc != SP_END && rc != SP_GONE && (g->why = strdup(why.msg)) == NULL)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", sc->dir);
    struct stat st;
    if (sc->fd >= 0 && fstat(sc->fd, &st) == 0)
        g->size = (uint64_t)st.st_size;
    sp_scan_close(sc);
    return PQ_OK;
}

/* Warns about seqs missing between intact segments (a segment removed by
 * hand?) or repeated (overlapping names: replay skips the repeats). */
static void check_continuity(const seg_scan *g, size_t last, sp_open_report *report)
{
    uint64_t prev_end = 0;
    bool prev_clean = true;
    for (size_t i = 0; i <= last; i++) {
        if (g[i].count == 0)
            continue;
        if (prev_end != 0 && g[i].first < prev_end)
            warn(report, "segment %020" PRIu64 " starts at seq %" PRIu64 ", inside the previous "
                 "one (which ends before %" PRIu64 "): replay skips the repeats", g[i].first,
                 g[i].first, prev_end);
        else if (prev_end != 0 && g[i].first > prev_end && prev_clean)
            warn(report, "seqs %" PRIu64 "..%" PRIu64 " are missing before segment %020" PRIu64,
                 prev_end, g[i].first - 1, g[i].first);
        prev_end = g[i].end > prev_end ? g[i].end : prev_end;
        prev_clean = g[i].status == SP_END;
    }
}

/* Applies the policy (top of file) to the scan results and fills s->segs. */
static int repair(sp_spool *s, seg_scan *g, size_t n, sp_open_report *report, pq_err *err)
{
    size_t last = SIZE_MAX;          /* the last segment with an intact record */
    uint64_t max_end = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i].count > 0) {
            last = i;
            max_end = g[i].end > max_end ? g[i].end : max_end;
        }
    if (last != SIZE_MAX)
        check_continuity(g, last, report);
    int rc;
    for (size_t i = 0; i < n; i++) {
        if (g[i].status == SP_GONE)
            continue;
        sp_seg_path(s->path, s->dir, g[i].first);
        uint64_t keep = g[i].size;
        if (last == SIZE_MAX || i > last) {
            if (unlink(s->path) != 0 && errno != ENOENT)
                return pq_err_set(err, PQ_EIO, "spool %s: cannot remove a segment without "
                                  "intact records: %s", s->path, strerror(errno));
            report->bytes_cut += g[i].size;
            if (g[i].why != NULL)
                warn(report, "%s: removed the segment (%" PRIu64 " bytes, no intact record)",
                     g[i].why, g[i].size);
            else
                warn(report, "spool %s: removed the segment (%" PRIu64 " bytes, no record)",
                     s->path, g[i].size);
            continue;
        }
        if (i < last && g[i].status != SP_END) {
            warn(report, "%s: the rest of this segment is skipped", g[i].why);
        } else if (i == last && g[i].status != SP_END) {
            if (truncate(s->path, (off_t)g[i].off) != 0)
                return pq_err_set(err, PQ_EIO, "spool %s: cannot cut the torn tail at offset "
                                  "%" PRIu64 ": %s", s->path, g[i].off, strerror(errno));
            report->bytes_cut += g[i].size - g[i].off;
            warn(report, "%s: cut %" PRIu64 " bytes", g[i].why, g[i].size - g[i].off);
            keep = g[i].off;
        }
        if ((rc = sp_segs_push(s, g[i].first, keep, err)) != 0)
            return rc;
        s->disk_bytes += keep;
    }
    if (max_end > s->next_seq)
        s->next_seq = s->flushed_seq = s->synced_seq = max_end;
    if (s->committed > s->next_seq)
        s->next_seq = s->flushed_seq = s->synced_seq = s->committed;
    /* Append to the last segment only where its records continue. */
    s->roll = last == SIZE_MAX || g[last].end != s->next_seq;
    return PQ_OK;
}

static int scan_and_repair(sp_spool *s, const uint64_t *firsts, size_t n,
                           sp_open_report *report, pq_err *err)
{
    seg_scan *g = calloc(n ? n : 1, sizeof *g);
    sp_scan sc;
    int rc = sp_scan_init(&sc, s->dir, err);
    if (g == NULL && rc == 0)
        rc = pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        g[i].first = firsts[i];
        rc = scan_one(&sc, &g[i], s->committed, &report->records, err);
    }
    if (rc == 0)
        rc = repair(s, g, n, report, err);
    for (size_t i = 0; g != NULL && i < n; i++)
        free(g[i].why);
    free(g);
    sp_scan_free(&sc);
    return rc;
}

/* Leaves out the segments wholly below the watermark: every record of one
 * is below the next segment's first seq (sp_trim's bound), so none is
 * ever replayed, and reading them back to check their CRCs would only
 * cost start-up time. A clean stop leaves them (sp_reap_hold): the whole
 * spool at the stop. They are queued for the remover, which sp_reap_start
 * starts (so a start does not wait for their unlinks either), or removed
 * by sp_close if it never ran. The last segment is always scanned. */
static int drop_committed(sp_spool *s, uint64_t *firsts, size_t *n, pq_err *err)
{
    size_t drop = 0;
    while (drop + 1 < *n && firsts[drop + 1] <= s->committed)
        drop++;
    if (drop == 0)
        return PQ_OK;            /* also an empty spool, where firsts is NULL */
    if (!sp_reap_prequeue(s, firsts, drop))
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", s->dir);
    memmove(firsts, firsts + drop, (*n - drop) * sizeof *firsts);
    *n -= drop;
    return PQ_OK;
}

/* Opens the last segment for appending, unless trimmed or not continuable. */
static int open_tail(sp_spool *s, pq_err *err)
{
    if (s->roll || s->nsegs == 0)
        return PQ_OK;
    sp_seg_path(s->path, s->dir, s->segs[s->nsegs - 1].first);
    /* O_APPEND: after a failed write is cut back, the next one lands at the
     * new end rather than past a hole. */
    s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (s->fd < 0)
        return pq_err_set(err, PQ_EIO, "spool %s: cannot open for appending: %s", s->path,
                          strerror(errno));
    s->cur_first = s->segs[s->nsegs - 1].first;
    s->cur_bytes = s->segs[s->nsegs - 1].bytes;
    return PQ_OK;
}

int sp_open(sp_spool **out, const char *dir, uint64_t segment_bytes, sp_open_report *report,
            pq_err *err)
{
    return sp_open_with(out, dir, segment_bytes, NULL, NULL, report, err);
}

int sp_open_with(sp_spool **out, const char *dir, uint64_t segment_bytes, sp_published_fn fn,
                 void *user, sp_open_report *report, pq_err *err)
{
    sp_open_report ignored;
    if (report == NULL)
        report = &ignored;
    memset(report, 0, sizeof *report);
    *out = NULL;
    int rc = make_dir(dir, err);
    if (rc != 0)
        return rc;
    sp_spool *s = spool_new(dir, segment_bytes);
    if (s == NULL)
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", dir);
    /* Nothing is read or repaired before the directory is ours. */
    if ((rc = sp_lock_dir(dir, &s->lock_fd, err)) != 0) {
        sp_close(s);
        return rc;
    }
    uint64_t *firsts = NULL;
    size_t n = 0;
    bool rewrite = false;
    if ((rc = sp_seg_list(dir, &firsts, &n, err)) != 0)
        goto fail;
    report->segments = n;
    /* A temp file left by a crash mid-checkpoint: the real one is intact. */
    snprintf(s->path, strlen(dir) + SP_NAME_LEN + 2, "%s/%s", dir, SP_CKPT_TMP);
    unlink(s->path);
    if ((rc = load_checkpoint(s, n, fn ? fn : local_published, user, report, &rewrite,
                              err)) != 0 ||
        (rc = drop_committed(s, firsts, &n, err)) != 0 ||
        (rc = scan_and_repair(s, firsts, n, report, err)) != 0 ||
        (rc = sp_trim(s, s->committed, false, err)) != 0 || (rc = open_tail(s, err)) != 0)
        goto fail;
    if (rewrite && (rc = sp_ckpt_write(dir, &s->ckpt, NULL, err)) != 0)
        goto fail;
    free(firsts);
    *out = s;
    return PQ_OK;
fail:
    free(firsts);
    sp_close(s);
    return rc;
}
