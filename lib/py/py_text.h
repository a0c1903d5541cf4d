/*
 * lib/py/py_text.h — the characters of a CPython str as UTF-8.
 *
 * A compact str keeps its characters in 1, 2 or 4 bytes each (PEP 393's
 * "kind", docs/design/cpython.md §7).  Names and paths (py_code.c) and
 * the values `trec --dump --locals` shows (py_values.c) both turn such
 * characters into UTF-8; they share these two steps.
 */
#ifndef TRC_PY_TEXT_H
#define TRC_PY_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Character i of data, stored kind (1, 2 or 4) bytes each in this
 * host's byte order, as the target wrote it. */
uint32_t py_ucs_at(const uint8_t *data, int kind, int64_t i);

/* Writes cp as UTF-8 into out (room bytes) and returns the bytes
 * written, 0 when they do not fit.  A surrogate or a value past
 * U+10FFFF, which UTF-8 cannot hold, is written as U+FFFD. */
size_t py_utf8_put(char *out, size_t room, uint32_t cp);

#endif
