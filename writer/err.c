/* err.c - the pq_err record: formatting and code names. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int pq_err_set(pq_err *err, int code, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

int pq_err_prefix(pq_err *err, int rc, const char *fmt, ...)
{
    if (err == NULL)
        return rc;
    char prefix[192], inner[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(inner, err->msg, sizeof inner);
    inner[sizeof inner - 1] = '\0';
    return pq_err_set(err, rc, "%.190s: %.300s", prefix, inner);
}

void pq_err_clear(pq_err *err)
{
    if (err == NULL)
        return;
    err->code = PQ_OK;
    err->msg[0] = '\0';
}

const char *pq_err_name(int code)
{
    switch (code) {
    case PQ_OK: return "OK";
    case PQ_EINVAL: return "EINVAL";
    case PQ_ENOMEM: return "ENOMEM";
    case PQ_EIO: return "EIO";
    case PQ_ECODEC: return "ECODEC";
    case PQ_ECRYPTO: return "ECRYPTO";
    case PQ_ELIMIT: return "ELIMIT";
    case PQ_ESTATE: return "ESTATE";
    case PQ_EPARSE: return "EPARSE";
    case PQ_ETYPE: return "ETYPE";
    default: return "EUNKNOWN";
    }
}
