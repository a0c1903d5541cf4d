/*
 * lib/py/py_text.c — the characters of a CPython str as UTF-8 (contract
 * in py_text.h).
 */
#include "lib/py/py_text.h"

#include <string.h>

uint32_t py_ucs_at(const uint8_t *data, int kind, int64_t i)
{
    if (kind == 1)
        return data[i];
    if (kind == 2) {
        uint16_t v;
        memcpy(&v, data + i * 2, 2);
        return v;
    }
    uint32_t v;
    memcpy(&v, data + i * 4, 4);
    return v;
}

size_t py_utf8_put(char *out, size_t room, uint32_t cp)
{
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        cp = 0xfffd;
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (room < n)
        return 0;
    switch (n) {
    case 1:
        out[0] = (char)cp;
        break;
    case 2:
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        break;
    case 3:
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        break;
    default:
        out[0] = (char)(0xf0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (char)(0x80 | (cp & 0x3f));
        break;
    }
    return n;
}
