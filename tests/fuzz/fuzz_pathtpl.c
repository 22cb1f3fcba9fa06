/* fuzz_pathtpl.c - libFuzzer target for output path templates
 * (daemon/output/pathtpl.c, pathtpl_render.c). The input's first line is
 * a template, each further line a {{FIELD}} value (an empty line: a
 * missing value). pt_check must agree with pt_parse, and whatever renders
 * must be a relative path that stays inside the output directory: no
 * absolute path, no '..' or empty component, no control character. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pathtpl.h"

static void must_stay_inside(const char *path)
{
    pq_err err = {0};
    if (pt_check_relative(path, &err) != 0 || strlen(path) >= PT_PATH_MAX)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (in == NULL)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    char *nl = strchr(in, '\n');
    const char *vals = nl ? nl + 1 : "";
    if (nl != NULL)
        *nl = '\0';
    pt_template t;
    size_t off = 0;
    pq_err err = {0};
    int rc = pt_parse(in, &t, &off, &err);
    if ((rc == 0) != (pt_check(in, &err) == 0) || (rc != 0 && off > strlen(in)))
        __builtin_trap();
    pt_value v[PT_FIELDS_MAX] = {{0}};
    for (size_t i = 0; rc == 0 && i < t.n_fields; i++) {
        const char *end = strchr(vals, '\n');
        size_t len = end ? (size_t)(end - vals) : strlen(vals);
        v[i] = (pt_value){len ? vals : NULL, len};
        vals = end ? end + 1 : vals + len;
    }
    char out[PT_PATH_MAX];
    const pt_vars vars = {.t = 1709251198, .host = "h/../x", .pid = 1, .seq = 2,
                          .fields = v, .n_fields = rc == 0 ? t.n_fields : 0};
    if (rc == 0 && pt_render_vars(&t, &vars, out, sizeof out, &err) == 0)
        must_stay_inside(out);
    pt_free(&t);
    free(in);
    return 0;
}
