/*
 * py_lines.h — CPython line-number tables decoded into an address→line
 * map, once per code object (docs/design/cpython.md §6).
 *
 * Addresses are byte offsets into the code object's bytecode.  A map is
 * a sorted array of {start, line}: the entry with the largest start not
 * above an address gives its line; line -1 means "no line".
 */
#ifndef TRC_LIB_PY_LINES_H
#define TRC_LIB_PY_LINES_H

#include <stddef.h>
#include <stdint.h>

#define PY_LINES_MAX_TABLE (1u << 20)   /* refuse larger tables */

typedef struct py_lineent {
    uint32_t start;
    int32_t line;
} py_lineent;

/* Decodes tab[0..len) of the given enum py_lines_kind with the code
 * object's co_firstlineno.  On success *out is an array (caller frees
 * with trc_free) of *n entries, n >= 1, and 0 is returned; -1 on a
 * malformed table or allocation failure (errno EINVAL or ENOMEM). */
int py_lines_decode(int kind, const uint8_t *tab, size_t len, int firstlineno,
                    py_lineent **out, uint32_t *n);

/* Line for byte offset addr (negative: the frame has not started, which
 * CPython reports as co_firstlineno).  Returns 0 when unknown.  Cannot
 * fail. */
uint32_t py_lines_lookup(const py_lineent *m, uint32_t n, int64_t addr, int firstlineno);

#endif
