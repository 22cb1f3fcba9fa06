/* spool_reader.c - replay: records with seq >= from, in seq order, across
 * segment files (spool.h "replay").
 *
 * The reader works from the directory alone: it lists the segments, opens
 * its own descriptors and reads each segment to its current end, so it
 * shares no memory with the spool and may run on another thread. The end
 * of the newest segment is the end of flushed data; a record cut short
 * there is a flush still in progress (or a crash's torn tail, for
 * spool_dump on a spool not yet reopened) and ends the replay for now.
 * Once a newer segment exists, an older one gets no more records: the
 * reader reads it to its end once more (a flush may have landed between
 * its last read and the roll) before moving on, and a record cut short in
 * it is then damage (PQ_EPARSE).
 *
 * Thread: any one thread at a time per reader. */
#include "spool_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct sp_reader {
    char *dir;
    sp_scan sc;
    bool open;           /* sc holds segment `cur` */
    bool final;          /* a newer segment exists: cur gets no more records */
    bool started;        /* cur is set */
    uint64_t cur;        /* first seq of the segment being read (or last read) */
    uint64_t want;       /* smallest seq still to return */
    uint64_t *list;      /* scratch: the directory's segments */
    size_t nlist;
};

int sp_reader_open_dir(sp_reader **out, const char *dir, uint64_t from, pq_err *err)
{
    *out = NULL;
    sp_reader *r = calloc(1, sizeof *r);
    if (r == NULL || (r->dir = strdup(dir)) == NULL) {
        free(r);
        return pq_err_set(err, PQ_ENOMEM, "spool %s: out of memory", dir);
    }
    int rc = sp_scan_init(&r->sc, r->dir, err);
    if (rc != 0) {
        sp_reader_close(r);
        return rc;
    }
    r->want = from;
    *out = r;
    return PQ_OK;
}

int sp_reader_open(sp_reader **out, const sp_spool *s, uint64_t from, pq_err *err)
{
    return sp_reader_open_dir(out, s->dir, from, err);
}

void sp_reader_close(sp_reader *r)
{
    if (r == NULL)
        return;
    sp_scan_free(&r->sc);
    free(r->list);
    free(r->dir);
    free(r);
}

/* The segment to read next: at the start, the last one whose first seq is
 * <= want (or the first one); then the one after cur. 1 with *first, 0 if
 * there is none (yet), or < 0. */
static int pick(sp_reader *r, uint64_t *first, pq_err *err)
{
    int rc = sp_seg_list(r->dir, &r->list, &r->nlist, err);
    if (rc != 0)
        return rc;
    size_t i = 0;
    if (!r->started) {
        while (i + 1 < r->nlist && r->list[i + 1] <= r->want)
            i++;
    } else {
        while (i < r->nlist && r->list[i] <= r->cur)
            i++;
    }
    if (i >= r->nlist)
        return 0;
    *first = r->list[i];
    return 1;
}

/* Whether a segment newer than cur exists. 1, 0 or < 0. */
static int newer_exists(sp_reader *r, pq_err *err)
{
    int rc = sp_seg_list(r->dir, &r->list, &r->nlist, err);
    if (rc != 0)
        return rc;
    return r->nlist > 0 && r->list[r->nlist - 1] > r->cur;
}

static int parse_error(sp_reader *r, const pq_err *why, pq_err *err)
{
    sp_scan_close(&r->sc);
    r->open = false;           /* the next call moves to the next segment */
    return pq_err_set(err, PQ_EPARSE, "%s", why->msg);
}

/* Opens the next segment: 1 opened, 0 nothing to read yet, < 0 error. */
static int next_segment(sp_reader *r, pq_err *err)
{
    pq_err why = {0};
    for (;;) {
        uint64_t first = 0;
        int rc = pick(r, &first, err);
        if (rc <= 0)
            return rc;
        rc = sp_scan_open(&r->sc, first, &why);
        if (rc == SP_GONE) {       /* trimmed meanwhile: its records are committed */
            r->cur = first;
            r->started = true;
            continue;
        }
        if (rc == SP_TORN) {
            /* A header cut short is a flush in progress in the newest
             * segment, damage in any other. */
            if (r->list[r->nlist - 1] == first) {
                sp_scan_close(&r->sc);
                return 0;
            }
            rc = SP_BAD;
        }
        r->cur = first;
        r->started = true;
        if (rc == SP_BAD || rc == PQ_EINVAL)
            return parse_error(r, &why, err);
        if (rc < 0)
            return pq_err_set(err, rc, "%s", why.msg);
        r->open = true;
        r->final = false;
        return 1;
    }
}

int sp_reader_next(sp_reader *r, sp_record *rec, pq_err *err)
{
    pq_err why = {0};
    for (;;) {
        int rc;
        if (!r->open && (rc = next_segment(r, err)) <= 0)
            return rc;
        rc = sp_scan_next(&r->sc, rec, &why);
        if (rc == SP_REC) {
            if (rec->seq < r->want)
                continue;
            r->want = rec->seq + 1;
            return 1;
        }
        if (rc == SP_BAD)
            return parse_error(r, &why, err);
        if (rc < 0)
            return pq_err_set(err, rc, "%s", why.msg);
        /* SP_END or SP_TORN: the end of what this segment holds now. */
        if (!r->final) {
            if ((rc = newer_exists(r, err)) < 0)
                return rc;
            if (rc == 0)
                return 0;      /* the newest segment: the end of flushed data */
            r->final = true;   /* read once more, then move on */
            continue;
        }
        if (rc == SP_TORN)
            return parse_error(r, &why, err);
        sp_scan_close(&r->sc);
        r->open = false;
    }
}
