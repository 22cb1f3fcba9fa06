/* spool_lock.c - one process per spool directory. Two daemons sharing a
 * spool (a second instance started by mistake, or a rolling update whose
 * new process starts before the old one exits on a shared volume) would
 * append to the same segment files and overwrite each other's records,
 * silently. So sp_open takes an exclusive flock(2) on `<dir>/lock` and
 * holds it until sp_close (or the process dies: the kernel releases it,
 * so a kill -9 leaves nothing to clean up), as PostgreSQL's postmaster.pid
 * and Kafka's .lock do. The file holds the owner's pid, for the message.
 *
 * flock, not fcntl locks: an fcntl lock belongs to the process and is lost
 * when any descriptor of the file is closed; flock belongs to the open
 * file description. Both work across PID namespaces on one kernel (two
 * containers sharing a volume) and, on Linux, over NFS.
 *
 * Thread: the thread running sp_open. */
#include "spool_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* The pid the owner wrote, or 0 when it has not written it yet. */
static long owner_pid(int fd)
{
    char text[32];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    return strtol(text, NULL, 10);
}

static int refuse(const char *dir, int fd, pq_err *err)
{
    long pid = owner_pid(fd);
    close(fd);
    if (pid > 0)
        return pq_err_set(err, PQ_ESTATE, "spool %s is in use by parqd pid %ld", dir, pid);
    return pq_err_set(err, PQ_ESTATE, "spool %s is in use by another parqd", dir);
}

int sp_lock_dir(const char *dir, int *lock_fd, pq_err *err)
{
    char path[4096];
    *lock_fd = -1;
    if (snprintf(path, sizeof path, "%s/%s", dir, SP_LOCK_NAME) >= (int)sizeof path)
        return pq_err_set(err, PQ_EINVAL, "spool %s: path too long", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return pq_err_set(err, PQ_EIO, "spool %s: cannot open %s: %s", dir, path,
                          strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return refuse(dir, fd, err);
        int e = errno;
        close(fd);
        return pq_err_set(err, PQ_EIO, "spool %s: cannot lock %s: %s", dir, path, strerror(e));
    }
    char text[32];
    int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n) {
        int e = errno;
        close(fd);
        return pq_err_set(err, PQ_EIO, "spool %s: cannot write %s: %s", dir, path, strerror(e));
    }
    *lock_fd = fd;
    return PQ_OK;
}
