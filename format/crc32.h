/*
 * format/crc32.h — CRC-32 (ISO-HDLC, zlib's crc32) over byte ranges of
 * any size (spec/DESIGN-NOTES.md "Chunk": payload and header CRCs).
 */
#ifndef TRC_FORMAT_CRC32_H
#define TRC_FORMAT_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* CRC of p[0..n) continuing from crc (start with 0). Cannot fail. */
uint32_t trcf_crc32(uint32_t crc, const void *p, size_t n);

#endif /* TRC_FORMAT_CRC32_H */
