/* memsink.h - a pq_sink that appends to a pq_buf, for tests that read back
 * the file they wrote without touching the disk. */
#ifndef PQT_MEMSINK_H
#define PQT_MEMSINK_H

#include "buf.h"
#include "pq_writer.h"

/* out must be initialised and outlive the writer. */
pq_sink pqt_mem_sink(pq_buf *out);

#endif
