/* log.h - the daemon's log: one line per event on stderr, filtered by
 * log.level. Under systemd (JOURNAL_STREAM set and matching stderr) each
 * line starts with the syslog priority "<3>" .. "<7>", which journald turns
 * into the entry's priority; otherwise lines read
 * "2024-05-01T12:00:00.123Z parqd[123]: warning: ...". Thread-safe: each
 * line is one write(2). */
#ifndef PQ_LOG_H
#define PQ_LOG_H

#include "config.h"

void lg_init(cf_log_level level);
void lg_set_level(cf_log_level level);
void lg_log(cf_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define lg_error(...) lg_log(CF_LOG_ERROR, __VA_ARGS__)
#define lg_warning(...) lg_log(CF_LOG_WARNING, __VA_ARGS__)
#define lg_info(...) lg_log(CF_LOG_INFO, __VA_ARGS__)
#define lg_debug(...) lg_log(CF_LOG_DEBUG, __VA_ARGS__)

#endif
