/* fuzz_pathkey.c - libFuzzer target for a record's partition key
 * (daemon/output/pathkey.c): the leading members' scan must give what the
 * SAX pass gives. The input's first byte picks a template (one with
 * output.time_from), the rest is the line; one extractor reads it with the scan allowed, one with the
 * SAX pass only (pk_set_fast(false)), and their values and keys must be
 * the same, the first's key by pk_key_memo. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evtime.h"
#include "pathkey.h"

static const char *const templates[] = {
    "t={{tenant}}/{seq}.parquet",
    "{{a}}/{{b}}/{{a}}/{seq}.parquet",
    "{{_index}}/{{svc}}/dt=%Y/{seq}.parquet",
    "{{a}}/{{k.pod}}/{seq}.parquet",
    "{{/a.b}}/{{\"}}/{seq}.parquet",
    "t={{tenant}}/dt=%Y-%m-%d/%H/{seq}.parquet",   /* with time_from "ts" (TIMED) */
};
#define TIMED 5
#define N_TEMPLATES (sizeof templates / sizeof templates[0])

/* The same bytes. An empty value may be NULL from the SAX pass (its copy
 * of an empty string, in a buffer that holds nothing yet) and the line's
 * bytes from the scan: either renders __HIVE_DEFAULT_PARTITION__, as a
 * missing value does, and the keys are compared too. */
static void same_value(const pt_value *x, const pt_value *y)
{
    if (x->len != y->len || (x->len > 0 && memcmp(x->p, y->p, x->len) != 0))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pt_template t[N_TEMPLATES];
    static pk_extractor *fast[N_TEMPLATES], *sax[N_TEMPLATES];
    static et_source ts;         /* a string timestamp or epoch milliseconds */
    static bool ready;
    pq_err err = {0};
    if (!ready) {
        size_t off = 0;
        if (pt_field_parse("ts", &ts.field, &off, &err) != 0)
            __builtin_trap();
        ts.unit = PQ_UNIT_MILLIS;
        ts.set = true;
        for (size_t i = 0; i < N_TEMPLATES; i++) {
            const et_source *src = i == TIMED ? &ts : NULL;
            if (pt_parse(templates[i], &t[i], &off, &err) != 0 ||
                pk_new(&fast[i], &t[i], src, &err) != 0 || pk_new(&sax[i], &t[i], src, &err) != 0)
                __builtin_trap();
            pk_set_fast(sax[i], false);
        }
        ready = true;
    }
    if (size == 0)
        return 0;
    const size_t k = data[0] % N_TEMPLATES;
    const char *line = (const char *)data + 1;
    const size_t len = size - 1;
    pt_value a[PT_FIELDS_MAX], b[PT_FIELDS_MAX];
    pk_time ta, tb;
    int ra = pk_values(fast[k], line, len, "ix", 2, a, &ta, &err);
    int rb = pk_values(sax[k], line, len, "ix", 2, b, &tb, &err);
    if (ra != rb || ta.found != tb.found || ta.sec != tb.sec || ta.object != tb.object)
        __builtin_trap();
    for (size_t f = 0; ra == 0 && f < t[k].n_fields; f++)
        same_value(&a[f], &b[f]);
    /* and pk_key_memo (its last period kept from input to input) as pk_key */
    char ka[PK_KEY_MAX], kb[PK_KEY_MAX];
    const time_t when = ta.found ? (time_t)ta.sec : 1709251198;
    if (ra == 0) {
        int ca = pk_key_memo(fast[k], a, when, ka, sizeof ka, &err);
        int cb = pk_key(&t[k], b, when, kb, sizeof kb, &err);
        if (ca != cb || (ca == 0 && strcmp(ka, kb) != 0))
            __builtin_trap();
    }
    return 0;
}
