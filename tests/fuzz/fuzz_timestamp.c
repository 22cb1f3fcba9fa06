/* fuzz_timestamp.c - differential libFuzzer target for
 * schema/shred/scalar.c's timestamp parse: sk_parse_timestamp (its fixed
 * layout fast path, then the general parse) must give the same code and
 * value as sk_parse_timestamp_general alone, in every unit, for the input
 * as it is and for the input behind a valid "YYYY-MM-DDTHH:MM:SS" prefix
 * (so the fuzzer spends its time on fractions and zones, where the two
 * differ in code). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"

static void check(const char *s, size_t n)
{
    for (int unit = PQ_UNIT_MILLIS; unit <= PQ_UNIT_NANOS; unit++) {
        int64_t a = 0, b = 0;
        const int ra = sk_parse_timestamp(s, n, (pq_time_unit)unit, &a);
        const int rb = sk_parse_timestamp_general(s, n, (pq_time_unit)unit, &b);
        if (ra != rb || (ra == 0 && a != b))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64)
        return 0;
    /* copies of their own, so ASan sees any read past the end */
    char *s = malloc(size ? size : 1);
    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    check(s, size);
    free(s);
    static const char prefix[] = "2024-02-29T23:59:59";
    const size_t pn = sizeof prefix - 1;
    char *t = malloc(pn + size);
    if (t == NULL)
        return 0;
    memcpy(t, prefix, pn);
    memcpy(t + pn, data, size);
    check(t, pn + size);
    /* the date and time fields fuzzed too: the input's first bytes over
     * the prefix's digits, its layout kept */
    for (size_t i = 0, k = 0; i < pn && k < size; i++)
        if (prefix[i] >= '0' && prefix[i] <= '9')
            t[i] = (char)('0' + data[k++] % 10);
    check(t, pn + size);
    free(t);
    return 0;
}
