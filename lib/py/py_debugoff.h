/*
 * py_debugoff.h — py_layout from a target's _Py_DebugOffsets (3.13+).
 */
#ifndef TRC_LIB_PY_DEBUGOFF_H
#define TRC_LIB_PY_DEBUGOFF_H

#include "lib/py/py_layout.h"

#include <stddef.h>
#include <stdint.h>

#define PY_DEBUG_COOKIE "xdebugpy"
#define PY_DEBUG_READ 1024   /* room for the longest known block (3.15: 888 bytes) */

/* PY_VERSION_HEX stored after the cookie, or 0 if buf does not start
 * with the cookie.  Cannot fail. */
uint64_t py_debugoff_version(const uint8_t *buf, size_t len);

/* Bytes of the _Py_DebugOffsets block of the version hex (the cookie
 * through the last field of that version's list), or 0 with a one-line
 * reason in err naming the version: a minor newer than the lists here,
 * or a pre-release older than its minor's list. */
size_t py_debugoff_size(uint64_t hex, char *err, size_t errlen);

/* "3.15.0b4" from a PY_VERSION_HEX.  Cannot fail. */
void py_version_format(uint64_t hex, char *out, size_t n);

/* The value of the named field ("is.imports_modules", "di.ma_keys",
 * "free_threaded"... as listed in py_debugoff.c) of the block in
 * buf[0..len).  0, or -1 when the version's list lacks the name or the
 * buffer is too short. */
int py_debugoff_field(const uint8_t *buf, size_t len, const char *name, uint64_t *out);

/* Fills out from the block in buf[0..len).  0, or -1 with a one-line
 * reason in err (unknown or implausible layout). */
int py_layout_from_debug(const uint8_t *buf, size_t len, py_layout *out, char *err, size_t errlen);

#endif
