/* memsink.c - see memsink.h. */
#include "memsink.h"

static int mem_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    (void)err;
    return pq_buf_append(ctx, data, n);
}

pq_sink pqt_mem_sink(pq_buf *out)
{
    return (pq_sink){.ctx = out, .write = mem_write};
}
