/*
 * tools/common/top_escape.c — escape sequences left out of a program's
 * output line (contract in top_escape.h).  Byte classes as ECMA-48 names
 * them; only 7-bit introducers are recognised, since the 8-bit C1 bytes
 * (0x80-0x9f) are also UTF-8 continuation bytes of ordinary text.
 */
#include "tools/common/top_escape.h"

#define ESC 0x1b
#define BEL 0x07

static int is_intermediate(unsigned char c)
{
    return c >= 0x20 && c <= 0x2f;
}

/* The end (one past) of the escape starting at in[i] == ESC, or len when
 * it is cut off. */
static size_t escape_end(const unsigned char *in, size_t len, size_t i)
{
    if (i + 1 >= len)
        return len;
    unsigned char kind = in[i + 1];
    size_t j = i + 2;
    if (kind == '[') {
        /* CSI: parameter (0x30-0x3f) and intermediate bytes, then a final
         * byte 0x40-0x7e; anything else ends a malformed one early, kept
         * for the caller to judge */
        while (j < len && in[j] >= 0x20 && in[j] <= 0x3f)
            j++;
        if (j >= len)
            return len;
        return in[j] >= 0x40 && in[j] <= 0x7e ? j + 1 : j;
    }
    if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
        /* a control string (OSC, DCS, SOS, PM, APC): up to BEL (xterm's
         * end of an OSC) or ST, ESC backslash, both left out */
        for (; j < len; j++) {
            if (in[j] == BEL)
                return j + 1;
            if (in[j] == ESC)
                return j + 1 < len && in[j + 1] == '\\' ? j + 2 : j;
        }
        return len;
    }
    /* ESC, intermediate bytes, a final byte 0x30-0x7e (ESC ( B, ESC 7) */
    j = i + 1;
    while (j < len && is_intermediate(in[j]))
        j++;
    if (j >= len)
        return len;
    return in[j] >= 0x30 && in[j] <= 0x7e ? j + 1 : i + 1;
}

size_t top_escape_strip(const char *in, size_t len, char *out, size_t n)
{
    const unsigned char *b = (const unsigned char *)in;
    size_t k = 0;
    if (!n)
        return 0;
    for (size_t i = 0; i < len && k + 1 < n;) {
        if (b[i] == ESC) {
            i = escape_end(b, len, i);
            continue;
        }
        /* what is left that could move the cursor becomes a space */
        out[k++] = b[i] < 0x20 || b[i] == 0x7f ? ' ' : (char)b[i];
        i++;
    }
    out[k] = 0;
    return k;
}
