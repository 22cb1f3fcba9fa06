/* keyfile.h - the rule for files that hold secrets (DESIGN.md: "A private
 * key or encryption key file readable by group or others is refused (as
 * ssh refuses one)"): one check, used for the encryption key files
 * (keyring.c) and the TLS private keys (daemon/ingest/tls.c), at start and at
 * every reload.
 *
 * Thread: any. */
#ifndef PQ_KEYFILE_H
#define PQ_KEYFILE_H

#include "err.h"

/* 0 when path is a regular file (symlinks followed) that neither group nor
 * others may read, write or execute; else PQ_EIO (cannot stat) or
 * PQ_EINVAL with err naming the file and its mode: "key file
 * /etc/parqd/k.hex is readable by group or others (mode 0644); chmod 600
 * it". what: "key file", "TLS private key". */
int kf_check_mode(const char *path, const char *what, pq_err *err);

#endif
