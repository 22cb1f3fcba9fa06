/* config_addr.c - TCP addresses in the configuration (DESIGN.md
 * "Configuration (YAML)" inputs, metrics): "host:port" and "[v6]:port"
 * (cf_parse_listen), and whether two addresses would take the same port.
 *
 * Thread: whichever loads the configuration. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int parse_port(const char *p, uint16_t *port, const char **why)
{
    unsigned long v = 0;
    if (*p == '\0') {
        *why = "missing port after ':'";
        return PQ_EINVAL;
    }
    for (const char *q = p; *q; q++) {
        if (!isdigit((unsigned char)*q) || (v = v * 10 + (unsigned long)(*q - '0')) > 65535) {
            *why = "port must be a number from 1 to 65535";
            return PQ_EINVAL;
        }
    }
    if (v == 0) {
        *why = "port must be a number from 1 to 65535";
        return PQ_EINVAL;
    }
    *port = (uint16_t)v;
    return PQ_OK;
}

int cf_parse_listen(const char *s, cf_addr *out, const char **why)
{
    const char *host = s, *colon;
    size_t hlen;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':') {
            *why = "expected [IPv6]:port, e.g. [::1]:5170";
            return PQ_EINVAL;
        }
        host = s + 1;
        hlen = (size_t)(close - host);
        colon = close + 1;
        char tmp[INET6_ADDRSTRLEN + 1];
        struct in6_addr a6;
        if (hlen == 0 || hlen >= sizeof tmp || (memcpy(tmp, host, hlen), tmp[hlen] = '\0',
                                                inet_pton(AF_INET6, tmp, &a6) != 1)) {
            *why = "not an IPv6 address inside [ ]";
            return PQ_EINVAL;
        }
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL) {
            *why = "expected host:port, e.g. 127.0.0.1:5170";
            return PQ_EINVAL;
        }
        hlen = (size_t)(colon - s);
        if (memchr(s, ':', hlen) != NULL) {
            *why = "IPv6 addresses need brackets, e.g. [::1]:5170";
            return PQ_EINVAL;
        }
        if (hlen == 0) {
            *why = "missing host (use 0.0.0.0 or [::] for every interface)";
            return PQ_EINVAL;
        }
        for (size_t i = 0; i < hlen; i++)
            if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '-' && s[i] != '_') {
                *why = "host may contain only letters, digits, '.', '-' and '_'";
                return PQ_EINVAL;
            }
    }
    if (parse_port(colon + 1, &out->port, why) != 0)
        return PQ_EINVAL;
    char *h = strndup(host, hlen);
    if (h == NULL) {
        *why = "out of memory";
        return PQ_ENOMEM;
    }
    free(out->host);
    out->host = h;
    return PQ_OK;
}

bool cf_addr_overlaps(const cf_addr *a, const cf_addr *b)
{
    if (a->port != b->port)
        return false;
    bool wild_a = strcmp(a->host, "0.0.0.0") == 0 || strcmp(a->host, "::") == 0;
    bool wild_b = strcmp(b->host, "0.0.0.0") == 0 || strcmp(b->host, "::") == 0;
    return wild_a || wild_b || strcmp(a->host, b->host) == 0;
}
