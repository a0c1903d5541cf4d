/*
 * format/crc32.c — CRC-32 via zlib, split into pieces zlib's uInt length
 * can take (see format/crc32.h).
 */
#include "format/crc32.h"

#include <zlib.h>

uint32_t trcf_crc32(uint32_t crc, const void *p, size_t n)
{
    const Bytef *b = p;
    uLong c = crc;

    while (n > 0) {
        uInt part = n > 0x40000000u ? 0x40000000u : (uInt)n;
        c = crc32(c, b, part);
        b += part;
        n -= part;
    }
    return (uint32_t)c;
}
