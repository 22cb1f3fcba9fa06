/* http_reply.c - the pieces every HTTP reply is made of (http_reply.h):
 * status texts, JSON strings, printf into a body, Elasticsearch-shaped
 * error bodies.
 *
 * Thread: the loop thread. */
#include "http_reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *hp_status_text(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 300 ? "OK" : "Internal Server Error";
    }
}

int hp_printf(pq_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    return pq_buf_append(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

int hp_json_str(pq_buf *b, const char *s, size_t len)
{
    int rc = pq_buf_push(b, '"');
    for (size_t i = 0; rc == 0 && i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            rc = pq_buf_push(b, '\\');
            rc = rc ? rc : pq_buf_push(b, ch);
        } else if (ch < 0x20) {
            rc = hp_printf(b, "\\u%04x", ch);
        } else {
            rc = pq_buf_push(b, ch);
        }
    }
    return rc ? rc : pq_buf_push(b, '"');
}

void hp_reply_error(hp_reply *r, int status, const char *type, const char *reason)
{
    r->status = status;
    pq_buf_reset(&r->body);
    hp_printf(&r->body, "{\"error\":{\"type\":\"%s\",\"reason\":", type);
    hp_json_str(&r->body, reason, strlen(reason));
    hp_printf(&r->body, "},\"status\":%d}", status);
}
