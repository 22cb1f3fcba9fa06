/* sdnotify.h - the sd_notify(3) protocol without libsystemd: datagrams to
 * the AF_UNIX socket named by NOTIFY_SOCKET (a path, or '@' for the
 * abstract namespace). Type=notify services send READY=1 once listening,
 * RELOADING=1 + MONOTONIC_USEC (SIGHUP) then READY=1, STOPPING=1 on
 * shutdown, and WATCHDOG=1 every WATCHDOG_USEC/2 when the watchdog is on.
 * Without NOTIFY_SOCKET every call is a no-op returning 0. */
#ifndef PQ_SDNOTIFY_H
#define PQ_SDNOTIFY_H

#include <stdint.h>

#include "err.h"

/* Sends state ("READY=1\nSTATUS=listening on 2 inputs"). 0, or PQ_EIO. */
int sdn_notify(const char *state, pq_err *err);
/* RELOADING=1 with MONOTONIC_USEC=<now>, as Type=notify-reload expects. */
int sdn_reloading(pq_err *err);
/* The watchdog interval in microseconds from WATCHDOG_USEC (and
 * WATCHDOG_PID, if set, naming us); 0 when off. */
uint64_t sdn_watchdog_usec(void);

#endif
