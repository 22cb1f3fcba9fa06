/* crc32c.c - CRC-32C (see crc32c.h). Two implementations with identical
 * results: slice-by-8 tables (8 KiB, ~1.5-2 GB/s, any CPU) and the x86-64
 * SSE4.2 crc32 instruction in three streams (8 KiB of tables to join
 * them), picked once at run time, so the
 * binary needs no -msse4.2 and still runs on any x86-64 or other CPU.
 *
 * Thread: any. */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82F63B78u   /* 0x1EDC6F41 bit-reversed */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* table[0] is the classic byte-at-a-time table; table[k][b] is the CRC of
 * byte b followed by k zero bytes, which lets one step fold 8 bytes. */
static void table_build(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++)
            c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xFF];
}

static inline uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t crc32c_sw(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&table_once, table_build);
    const uint8_t *p = data;
    uint32_t c = ~crc;
    /* Byte steps up to 8-byte alignment keep the main loop's loads aligned
     * (it reads bytes, so this is speed, not correctness). */
    while (n > 0 && ((uintptr_t)p & 7) != 0) {
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xFF];
        n--;
    }
    while (n >= 8) {
        const uint32_t lo = load_le32(p) ^ c, hi = load_le32(p + 4);
        c = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^
            table[4][lo >> 24] ^ table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^
            table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n > 0) {
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xFF];
        n--;
    }
    return ~c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_HW 1

/* The crc32 instruction has a latency of 3 cycles and a throughput of
 * one per cycle, so one stream runs at a third of its speed. Blocks of
 * 3 * SHORT (or 3 * LONG) bytes run three streams at once and join them:
 * the raw register after A then B is shift_|B|(after A) ^ (B from 0),
 * where shift_n (appending n zero bytes) is linear, so four 256-entry
 * tables per length apply it. A spool record (hundreds of bytes) takes
 * the SHORT blocks; the CRC was 16% of the loop thread's CPU with one
 * stream (16 TCP clients). */
#define HW_SHORT 64
#define HW_LONG 512

static uint32_t shift_short[4][256], shift_long[4][256];

__attribute__((target("sse4.2"))) static uint32_t hw_raw(uint64_t c, const uint8_t *p, size_t n)
{
    while (n > 0 && ((uintptr_t)p & 7) != 0) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        n--;
    }
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);      /* x86 is little-endian, as the CRC wants */
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    while (n > 0) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        n--;
    }
    return (uint32_t)c;
}

/* t[k][b]: the raw register b << 8k after n zero bytes (linear in the
 * register: the XOR of its set bits' images). */
__attribute__((target("sse4.2"))) static void shift_table(uint32_t t[4][256], size_t n)
{
    static const uint8_t zeros[HW_LONG];
    uint32_t bit[32];
    for (int i = 0; i < 32; i++)
        bit[i] = hw_raw((uint32_t)1 << i, zeros, n);
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int i = 0; i < 8; i++)
                if (b >> i & 1)
                    v ^= bit[8 * k + i];
            t[k][b] = v;
        }
}

static inline uint32_t shift(const uint32_t t[4][256], uint32_t c)
{
    return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24];
}

/* Three streams over p[0, 3 * len), the first continuing c. p is 8-byte
 * aligned and len a multiple of 8. */
__attribute__((target("sse4.2"))) static inline uint32_t hw_three(uint32_t c, const uint8_t *p,
                                                                   size_t len,
                                                                   const uint32_t t[4][256])
{
    uint64_t c0 = c, c1 = 0, c2 = 0;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v0, v1, v2;
        memcpy(&v0, p + i, 8);
        memcpy(&v1, p + len + i, 8);
        memcpy(&v2, p + 2 * len + i, 8);
        c0 = __builtin_ia32_crc32di(c0, v0);
        c1 = __builtin_ia32_crc32di(c1, v1);
        c2 = __builtin_ia32_crc32di(c2, v2);
    }
    return shift(t, shift(t, (uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *data,
                                                            size_t n)
{
    const uint8_t *p = data;
    uint32_t c = ~crc;
    if (n >= 3 * HW_SHORT) {
        const size_t head = (8 - ((uintptr_t)p & 7)) & 7;
        c = hw_raw(c, p, head);
        p += head;
        n -= head;
        for (; n >= 3 * HW_LONG; p += 3 * HW_LONG, n -= 3 * HW_LONG)
            c = hw_three(c, p, HW_LONG, shift_long);
        for (; n >= 3 * HW_SHORT; p += 3 * HW_SHORT, n -= 3 * HW_SHORT)
            c = hw_three(c, p, HW_SHORT, shift_short);
    }
    return ~hw_raw(c, p, n);
}
#endif

static uint32_t (*impl)(uint32_t, const void *, size_t);
static pthread_once_t impl_once = PTHREAD_ONCE_INIT;

static void impl_pick(void)
{
    impl = crc32c_sw;
#ifdef HAVE_HW
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        shift_table(shift_short, HW_SHORT);
        shift_table(shift_long, HW_LONG);
        impl = crc32c_hw;
    }
#endif
}

uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&impl_once, impl_pick);
    return impl(crc, p, n);
}
