/* http_auth.h - an http input's credentials (README.md "Inputs over
 * HTTP"): `auth: {bearer_token_file: F}` or `{basic_file: F}`, read at
 * start after the key-file rule (keyfile.h: no access for group or
 * others), and the check of a request's Authorization header against
 * them in constant time.
 *
 *     hp_auth *a;  hp_auth_load(&a, &cf->inputs[i].http, i, &err);  NULL: no auth
 *     if (!hp_auth_check(a, value, len)) -> 401
 *     hp_auth_free(a);
 *
 * Thread: loading runs where the listeners are made; checking on the
 * loop thread. */
#ifndef PQ_HTTP_AUTH_H
#define PQ_HTTP_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "err.h"

typedef struct hp_auth hp_auth;

/* *out is NULL when the input has no auth. 0, or PQ_EIO / PQ_EINVAL (the
 * file's mode, an empty secret) / PQ_ENOMEM with err naming the input and
 * file, never the secret. */
int hp_auth_load(hp_auth **out, const cf_http *h, size_t input, pq_err *err);
void hp_auth_free(hp_auth *a);

/* Whether the Authorization header value (NULL: none was sent) carries the
 * credentials: "Bearer <token>" or "Basic <base64 of user:password>". The
 * comparison takes the same time wherever the first difference is. A NULL
 * auth accepts everything. */
bool hp_auth_check(const hp_auth *a, const char *value, size_t len);

#endif
