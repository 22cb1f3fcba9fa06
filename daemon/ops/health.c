/* health.c - the table of current problems behind /health (see health.h).
 *
 * Thread: any; one mutex guards the table. A problem is formatted outside
 * the lock and copied in, so a slow vsnprintf never holds up a scrape.
 *
 * dm_health_get names the component before each problem, so callers write
 * only what went wrong: dm_health_set(DM_HEALTH_OUTPUT, "%s writing %s",
 * strerror(e), path) reads "output: No space left on device writing ..." */
#include "health.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DM_HEALTH_MSG 256            /* 255 bytes + NUL */

static pthread_mutex_t dm_health_lock = PTHREAD_MUTEX_INITIALIZER;
static char dm_health_msg[DM_HEALTH_COMPONENTS][DM_HEALTH_MSG];   /* "" = healthy */

static const char *const dm_health_names[DM_HEALTH_COMPONENTS] = {
    [DM_HEALTH_SPOOL] = "spool",
    [DM_HEALTH_OUTPUT] = "output",
    [DM_HEALTH_DEADLETTER] = "dead_letter",
    [DM_HEALTH_BACKPRESSURE] = "backpressure",
};

/* A problem is one line of the /health body: control characters would
 * break it (or a terminal), and a cut must not split a UTF-8 character. */
static void tidy(char *m)
{
    size_t len = strlen(m);
    if (len == DM_HEALTH_MSG - 1) {      /* maybe cut by vsnprintf */
        size_t lead = len - 1;
        while (lead > 0 && ((unsigned char)m[lead] & 0xC0) == 0x80)
            lead--;
        const unsigned char c = (unsigned char)m[lead];
        const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (lead + need > len)
            m[len = lead] = '\0';
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)m[i] < 0x20 || m[i] == 0x7f)
            m[i] = ' ';
}

void dm_health_set(dm_component c, const char *fmt, ...)
{
    if ((unsigned)c >= DM_HEALTH_COMPONENTS)
        return;
    char m[DM_HEALTH_MSG];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (n < 0)
        snprintf(m, sizeof m, "unhealthy");
    tidy(m);
    if (m[0] == '\0')            /* an empty text must still count as a problem */
        snprintf(m, sizeof m, "unhealthy");
    pthread_mutex_lock(&dm_health_lock);
    memcpy(dm_health_msg[c], m, sizeof m);
    pthread_mutex_unlock(&dm_health_lock);
}

void dm_health_clear(dm_component c)
{
    if ((unsigned)c >= DM_HEALTH_COMPONENTS)
        return;
    pthread_mutex_lock(&dm_health_lock);
    dm_health_msg[c][0] = '\0';
    pthread_mutex_unlock(&dm_health_lock);
}

bool dm_health_get(char *buf, size_t n)
{
    size_t len = 0;
    bool ok = true;
    if (n > 0)
        buf[0] = '\0';
    pthread_mutex_lock(&dm_health_lock);
    for (int c = 0; c < DM_HEALTH_COMPONENTS; c++) {
        if (dm_health_msg[c][0] == '\0')
            continue;
        if (len < n) {
            const int w = snprintf(buf + len, n - len, "%s%s: %s", ok ? "" : "; ",
                                   dm_health_names[c], dm_health_msg[c]);
            len += w < 0 ? 0 : (size_t)w;
        }
        ok = false;
    }
    pthread_mutex_unlock(&dm_health_lock);
    return ok;
}
