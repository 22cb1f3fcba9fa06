/* test_variant_random.c - seeded random round-trips: random JSON-like
 * trees built with the Variant builder (schema/variant/) and read back by
 * the test decoder (tests/support/variant_read.c), sorted and unsorted. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "variant.h"
#include "variant_read.h"

#include "variant_fixture.h"

/* ---- seeded random round-trips ------------------------------------------ */

static uint64_t rnd(uint64_t *s)            /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static const char *const key_pool[] = {"", "a", "b", "ab", "id", "user", "user.id", "\xc3\xa9",
                                       "\xf0\x9f\x90\xa2", "tags", "a\"b", "ZZ", "0"};

static vread_node *gen_string(uint64_t *s)
{
    static const char *const atoms[] = {"a", "Z", " ", "\"", "\\", "\n", "\x01",
                                        "\xc3\xa9", "\xe2\x99\xa5", "\xf0\x9f\xa4\xa6"};
    char buf[400];
    size_t n = 0, len = rnd(s) % 4 == 0 ? rnd(s) % 100 : rnd(s) % 70;
    while (n < len) {
        const char *a = atoms[rnd(s) % 10];
        memcpy(buf + n, a, strlen(a));
        n += strlen(a);
    }
    return vread_new_string(buf, n);
}

static vread_node *gen_number(uint64_t *s)
{
    unsigned bits = (unsigned)(rnd(s) % 64);
    /* a value of about `bits` bits, either sign, without signed overflow */
    int64_t i = (int64_t)((rnd(s) >> (63 - bits)) - (bits ? (1ULL << bits) / 2 : 0));
    switch (rnd(s) % 5) {
    case 0: return vread_new_int(i);
    case 1: {
        uint64_t raw = rnd(s);
        double d;
        memcpy(&d, &raw, 8);
        return vread_new_double(isfinite(d) ? d : (double)i / 7);
    }
    case 2: return vread_new_float((float)i / 3);
    default: {
        vr_i128 u = (vr_i128)i * (rnd(s) % 2 ? (vr_i128)rnd(s) % 1000000000000000000LL : 1);
        vr_i128 lim = (vr_i128)1000000000000000000LL * 1000000000000000000LL * 100;
        u %= lim;
        unsigned digits = 1;                /* the scale stays below them */
        for (vr_i128 m = u < 0 ? -u : u; m >= 10; m /= 10)
            digits++;
        return vread_new_decimal(u, (uint32_t)(rnd(s) % digits));
    }
    }
}

static vread_node *gen_scalar(uint64_t *s)
{
    static const uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    int64_t t = (int64_t)rnd(s) >> (rnd(s) % 40);
    switch (rnd(s) % 12) {
    case 0: return vread_new(VR_NULL);
    case 1: return vread_new(rnd(s) % 2 ? VR_TRUE : VR_FALSE);
    case 2: case 3: case 4: return gen_string(s);
    case 5: return vread_new_binary(&t, rnd(s) % 9);
    case 6: return vread_new_uuid(uuid);
    case 7: return vread_new_temporal(VR_DATE, (int32_t)(t % 3000000));
    case 8: return vread_new_temporal(VR_TIME_NTZ_MICROS, (t < 0 ? -t : t) % 86400000000LL);
    case 9: return vread_new_temporal((vr_type)(VR_TIMESTAMP_NANOS + rnd(s) % 2), t);
    case 10: return vread_new_temporal((vr_type)(VR_TIMESTAMP_MICROS + rnd(s) % 2), t);
    default: return gen_number(s);
    }
}

/* Containers get rarer with depth; a few get wide (is_large, > 256 keys). */
static vread_node *gen_tree(uint64_t *s, int depth)
{
    uint64_t r = rnd(s) % 100;
    if (depth > 6 || r >= 40)
        return gen_scalar(s);
    bool obj = r < 22;
    vread_node *n = vread_new(obj ? VR_OBJECT : VR_ARRAY);
    size_t kids = rnd(s) % 50 == 0 ? 200 + rnd(s) % 200 : rnd(s) % 7;
    for (size_t i = 0; i < kids; i++) {
        char k[32];
        const char *key = key_pool[rnd(s) % 13];
        if (kids > 100) {
            snprintf(k, sizeof k, "w%llu", (unsigned long long)(rnd(s) % 500));
            key = k;
        }
        OK(vread_add(n, key, strlen(key), gen_tree(s, depth + (kids > 100 ? 4 : 1))));
    }
    return n;
}

static void round_trip_one(vr_builder *b, vr_builder *ub, const vread_node *t,
                           unsigned long long seed, int iter)
{
    vr_variant v, u;
    pq_buf want;
    pq_err err = {0};
    pq_buf_init(&want);
    vr_builder_reset(b);
    vr_builder_reset(ub);
    if (vread_node_feed(b, t) != 0 || vread_node_feed(ub, t) != 0)
        fail_msg("seed %llu iter %d: feed: %s", seed, iter, b->err.msg);
    OK(vr_finish(b, &v));
    OK(vr_finish(ub, &u));
    if (vread_validate(v.metadata, v.metadata_len, v.value, v.value_len, VREAD_CANONICAL,
                       &err) != 0)
        fail_msg("seed %llu iter %d: %s", seed, iter, err.msg);
    OK(vread_node_json(&want, t));
    pq_buf_push(&want, 0);
    char *got = json_of(v.metadata, v.metadata_len, v.value, v.value_len);
    if (strcmp(got, (char *)want.data) != 0)
        fail_msg("seed %llu iter %d:\n got  %s\n want %s", seed, iter, got, want.data);
    assert_int_equal(vread_equal(v.metadata, v.metadata_len, v.value, v.value_len,
                                 u.metadata, u.metadata_len, u.value, u.value_len, &err), 1);
    free(got);
    pq_buf_free(&want);
}

/* Random JSON-like trees: encoder -> decoder must give back the tree's
 * canonical JSON (sorted keys, last duplicate wins), in sorted and
 * unsorted dictionary modes. VARIANT_SEED=<n> replays a failure. */
static void test_variant_random_trees_round_trip(void **state)
{
    (void)state;
    const char *env = getenv("VARIANT_SEED");
    unsigned long long seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
    printf("test_variant_random_trees_round_trip: seed %llu (VARIANT_SEED=%llu replays)\n",
           seed, seed);
    uint64_t s = seed;
    vr_builder b, ub;
    vr_opts uo = {.unsorted_dict = true};
    OK(vr_builder_init(&b, NULL));
    OK(vr_builder_init(&ub, &uo));
    for (int iter = 0; iter < 2000; iter++) {
        vread_node *t = gen_tree(&s, 0);
        round_trip_one(&b, &ub, t, seed, iter);
        vread_free(t);
    }
    vr_builder_free(&b);
    vr_builder_free(&ub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variant_random_trees_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
