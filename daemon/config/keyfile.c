/* keyfile.c - secrets on disk must be private to their owner (see
 * keyfile.h). As ssh does for private keys: any permission bit for group
 * or others refuses the file, since a key that others could read must be
 * assumed read. */
#include "keyfile.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int kf_check_mode(const char *path, const char *what, pq_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return pq_err_set(err, PQ_EIO, "%s %s: cannot open: %s", what, path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return pq_err_set(err, PQ_EINVAL, "%s %s: not a regular file", what, path);
    unsigned mode = (unsigned)st.st_mode & 07777;
    if ((mode & 077) != 0)
        return pq_err_set(err, PQ_EINVAL, "%s %s is %s by group or others (mode %04o); "
                          "chmod 600 it", what, path,
                          (mode & 044) != 0 ? "readable" : "accessible", mode);
    return PQ_OK;
}
