/* fuzz_s3_sigv4.c - libFuzzer target for SigV4 canonicalisation
 * (daemon/s3/s3_sigv4.c): the input is cut into a path, query pairs and
 * headers at NUL bytes; the canonical request and the signature must be
 * computed (or the request refused) without crashing, and the query
 * encoding must be a pure function of its input (sorted, encoded). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3_sigv4.h"

#define MAX_PARTS 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    const char *parts[MAX_PARTS];
    size_t n = 0;
    for (size_t i = 0; i <= size && n < MAX_PARTS; i++) {
        if (i == 0 || copy[i - 1] == '\0')
            parts[n++] = copy + i;
    }
    s3_param q[MAX_PARTS / 2];
    s3_header h[MAX_PARTS / 2];
    size_t nq = 0, nh = 0;
    for (size_t i = 1; i + 1 < n; i += 2) {
        if (((unsigned char)parts[i][0]) & 1)
            q[nq++] = (s3_param){parts[i], parts[i + 1]};
        else
            h[nh++] = (s3_header){parts[i], parts[i + 1]};
    }
    s3_sig_request r = {"PUT", parts[0], q, nq, h, nh, "UNSIGNED-PAYLOAD"};
    pq_buf a, b, auth;
    pq_buf_init(&a);
    pq_buf_init(&b);
    pq_buf_init(&auth);
    pq_err err = {0};
    s3_creds c = {.access_key = "AKID", .secret_key = "secret"};
    s3_sign(&c, "us-east-1", "s3", "20240501T000000Z", &r, &auth, &err);
    s3_canonical_query(&a, q, nq);
    s3_canonical_query(&b, q, nq);
    if (a.len != b.len || (a.len > 0 && memcmp(a.data, b.data, a.len) != 0))
        __builtin_trap();
    pq_buf_free(&a);
    pq_buf_free(&b);
    pq_buf_free(&auth);
    free(copy);
    return 0;
}
