/*
 * tools/common/top_escape.h — what a program wrote, made safe to draw
 * inside trc-top's screen (its "output:" header line, top_source.h):
 * terminal escape sequences are left out whole (ECMA-48: a CSI up to its
 * final byte; an OSC, DCS, SOS, PM or APC string up to BEL or ST, ESC
 * backslash; any other ESC with its intermediate and final bytes), and
 * every other control character becomes a space, so that nothing can
 * move the cursor, change colours or leave a stray byte behind.
 * Internal API, prefix top_escape_.
 */
#ifndef TRC_TOOLS_COMMON_TOP_ESCAPE_H
#define TRC_TOOLS_COMMON_TOP_ESCAPE_H

#include <stddef.h>

/* The len bytes at in, filtered as above, into out (at most n - 1 bytes
 * and a NUL; nothing when n is 0).  A sequence cut off by the end of
 * in is dropped.  Returns the bytes written, the NUL not counted. */
size_t top_escape_strip(const char *in, size_t len, char *out, size_t n);

#endif /* TRC_TOOLS_COMMON_TOP_ESCAPE_H */
