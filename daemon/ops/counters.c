/* counters.c - the one instance of the daemon's counters (counters.h). */
#include "counters.h"

dm_counters dm_counters_global;
