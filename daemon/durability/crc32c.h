/* crc32c.h - CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected
 * 0x82F63B78, init and final xor 0xFFFFFFFF), as used by iSCSI, ext4 and
 * LevelDB. The spool checks every record and its checkpoint with it.
 *
 * Thread: any; the tables are built once (pthread_once) and read only. */
#ifndef PQ_CRC32C_H
#define PQ_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc (0 for a fresh CRC) over n bytes: crc32c(crc32c(0, a), b)
 * equals the CRC of a followed by b. Uses the SSE4.2 instruction when the
 * CPU has it, else crc32c_sw. */
uint32_t crc32c(uint32_t crc, const void *p, size_t n);

/* The portable slice-by-8 table version (for tests and other CPUs). */
uint32_t crc32c_sw(uint32_t crc, const void *p, size_t n);

#endif
