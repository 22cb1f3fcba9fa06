/* crc32c.c - CRC-32C (see crc32c.h). Two implementations with identical
 * results: slice-by-8 tables (8 KiB, ~1.5-2 GB/s, any CPU) and the x86-64
 * SSE4.2 crc32 instruction (~10+ GB/s), picked once at run time, so the
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

/* One crc32 instruction per 8 bytes: latency-bound at ~8 bytes per 3
 * cycles, which is already several times what the spool needs; the
 * three-way interleaved variant is not worth its size here. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *data,
                                                            size_t n)
{
    const uint8_t *p = data;
    uint64_t c = ~crc;
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
    return ~(uint32_t)c;
}
#endif

static uint32_t (*impl)(uint32_t, const void *, size_t);
static pthread_once_t impl_once = PTHREAD_ONCE_INIT;

static void impl_pick(void)
{
    impl = crc32c_sw;
#ifdef HAVE_HW
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2"))
        impl = crc32c_hw;
#endif
}

uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&impl_once, impl_pick);
    return impl(crc, p, n);
}
