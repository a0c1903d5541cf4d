/*
 * gen_debugblock.c — prints, as hex, the _Py_DebugOffsets block a
 * CPython 3.13 runtime starts with, as the headers it is compiled
 * against initialise it (_PyRuntimeState_INIT): for the tests' synthetic
 * images of a build no interpreter here is of.  Compiled against the
 * 3.13.0 headers it prints the block a running 3.13.0 carries, byte for
 * byte (RAW_313 in tests/unit/py/py_debugoff_blocks.h, read from one);
 * with -DPy_GIL_DISABLED, a free-threaded 3.13.0t's (RAW_313T).
 *
 *   cc -std=gnu11 -DPy_GIL_DISABLED -I.../include/python3.13 \
 *      -I.../include/python3.13/internal scripts/pylayout/gen_debugblock.c \
 *      -o gen -no-pie -Wl,--unresolved-symbols=ignore-all && ./gen
 *
 * The runtime's initialiser names interpreter objects (static strings'
 * types) that no library provides here; the block holds none of them,
 * so they are left unresolved.  Tools-side program; not part of libtrc.
 */
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include "Python.h"
#include "internal/pycore_ceval.h"
#include "internal/pycore_runtime.h"
#include "internal/pycore_runtime_init.h"
#include <stdio.h>

#if PY_VERSION_HEX < 0x030d0000 || PY_VERSION_HEX >= 0x030e0000
#error "gen_debugblock covers 3.13"
#endif

static _PyRuntimeState runtime = _PyRuntimeState_INIT(runtime, "xdebugpy");

int main(void)
{
    const unsigned char *b = (const unsigned char *)&runtime.debug_offsets;
    for (size_t i = 0; i < sizeof runtime.debug_offsets; i++)
        printf("%02x%s", b[i], (i + 1) % 48 == 0 ? "\n" : "");
    printf("\n");
    return 0;
}
