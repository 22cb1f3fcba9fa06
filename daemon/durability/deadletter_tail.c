/* deadletter_tail.c - reading the dead-letter file's end after a crash
 * (dl_recover, see deadletter.h): the partial record a kill -9 can leave,
 * and the seq of the last record the file holds. Runs on the main thread
 * at start-up, before the pipeline writes a reject. */
#include "deadletter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_tail(int fd, uint8_t *buf, size_t n, off_t at)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, at + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* The seq of a record ending at buf[end - 1] == '}', if the record carries
 * one: its text ends `,"seq":DIGITS}`. Inside a JSON string a '"' is
 * always escaped, so these bytes end a record and nothing else. */
static bool seq_at(const uint8_t *buf, size_t end, uint64_t *seq)
{
    static const char key[] = ",\"seq\":";
    const size_t klen = sizeof key - 1;
    if (end == 0 || buf[end - 1] != '}')
        return false;
    size_t d = end - 1;
    while (d > 0 && buf[d - 1] >= '0' && buf[d - 1] <= '9')
        d--;
    size_t digits = end - 1 - d;
    if (digits == 0 || digits > 19 || d < klen || memcmp(buf + d - klen, key, klen) != 0)
        return false;
    uint64_t v = 0;
    for (size_t i = d; i < end - 1; i++)
        v = v * 10 + (uint64_t)(buf[i] - '0');
    *seq = v;
    return true;
}

/* The last record with a seq among the complete lines of buf[0..len). */
static bool last_seq(const uint8_t *buf, size_t len, uint64_t *seq)
{
    size_t end = len;
    while (end > 0) {
        if (seq_at(buf, end - 1, seq))   /* buf[end - 1] is the line's '\n' */
            return true;
        end--;
        while (end > 0 && buf[end - 1] != '\n')
            end--;
    }
    return false;
}

static int recover_fd(int fd, const char *path, off_t size, uint64_t *next_seq, pq_err *err)
{
    size_t n = (size_t)size < DL_TAIL_MAX ? (size_t)size : DL_TAIL_MAX;
    off_t at = size - (off_t)n;
    uint8_t *buf = malloc(n);
    if (buf == NULL)
        return pq_err_set(err, PQ_ENOMEM, "dead-letter file %s: out of memory", path);
    int rc = PQ_OK;
    if (read_tail(fd, buf, n, at) != 0) {
        rc = pq_err_set(err, PQ_EIO, "dead-letter file %s: cannot read: %s", path,
                        strerror(errno ? errno : EIO));
        goto out;
    }
    size_t complete = n;
    while (complete > 0 && buf[complete - 1] != '\n')
        complete--;
    /* A record cut by the crash: its line is in the spool above the last
     * seq found here, so the replay writes it whole. Without a newline in
     * the window (a record longer than DL_TAIL_MAX) it is left alone. */
    if (complete < n && (complete > 0 || at == 0) &&
        ftruncate(fd, at + (off_t)complete) != 0) {
        rc = pq_err_set(err, PQ_EIO, "dead-letter file %s: cannot cut off the partial record "
                        "a crash left at offset %lld: %s", path, (long long)(at + (off_t)complete),
                        strerror(errno));
        goto out;
    }
    uint64_t seq;
    if (last_seq(buf, complete, &seq))
        *next_seq = seq + 1;
out:
    free(buf);
    return rc;
}

int dl_recover(const char *path, uint64_t *next_seq, pq_err *err)
{
    *next_seq = 0;
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENXIO)
            return PQ_OK;        /* no rejects yet, or a FIFO with no reader */
        return pq_err_set(err, PQ_EIO, "dead-letter file %s: cannot open: %s", path,
                          strerror(errno));
    }
    struct stat st;
    int rc = PQ_OK;
    if (fstat(fd, &st) != 0)
        rc = pq_err_set(err, PQ_EIO, "dead-letter file %s: cannot stat: %s", path,
                        strerror(errno));
    else if (S_ISREG(st.st_mode) && st.st_size > 0)
        rc = recover_fd(fd, path, st.st_size, next_seq, err);
    close(fd);
    return rc;
}
