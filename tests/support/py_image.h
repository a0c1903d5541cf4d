/*
 * tests/support/py_image.h — a synthetic process image of CPython 3.13,
 * 3.14, 3.14t, 3.15 or 3.15t, laid out in this process's memory by the
 * offsets a real _Py_DebugOffsets block of that version gives
 * (tests/unit/py/py_debugoff_blocks.h) and read through the local
 * memory reader py_proc_attach_self uses (py_proc_attach_image).
 *
 * pyimg_build lays out: a runtime starting with the debug block, whose
 * interpreter list holds 11 interpreters, the 10 newest idle (no thread
 * state); the main interpreter with two threads (ts[0] the list's head,
 * native ids 1001 and 1002), each with a data-stack chunk of an entry
 * frame and two Python frames, outer() at unit 5 and inner() at unit 1
 * (thread 0) or 6 (thread 1; free-threaded 3.14+: in a bytecode copy);
 * code objects whose location tables put units 0-3 on
 * PYIMG_FIRST_LINE + 1 and 4-7 on PYIMG_FIRST_LINE + 3 in
 * "/image/app.py"; a GIL held by thread 0 (free-threaded: enabled or
 * not as asked).  Allocation failures fail the calling test.
 */
#ifndef TRC_TESTS_SUPPORT_PY_IMAGE_H
#define TRC_TESTS_SUPPORT_PY_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/py/py_debugoff.h"
#include "lib/py/py_internal.h"

#define PYIMG_BYTES (4u << 20)
#define PYIMG_FIRST_LINE 40
#define PYIMG_UNITS 8

typedef struct pyimg {
    uint8_t *mem;               /* PYIMG_BYTES, freed by the caller */
    size_t used;
    py_layout L;
    uint64_t code_type, unicode_type, bytes_type;
    uint64_t runtime, main_interp, gil, ts[2], frames[2][3], codes[2], copy, copies;
    uint32_t next_version;
    uint8_t blk[PY_DEBUG_READ];   /* the debug block, also at the runtime's start */
    size_t blen;
} pyimg;

/* Lays out the image of the version whose debug block is raw (hex). */
void pyimg_build(pyimg *im, const char *raw, int gil_enabled);
/* Attaches to it (fails the test if that fails). */
py_proc *pyimg_attach(pyimg *im);

/* n bytes of the image (16-aligned, zeroed), and stores into it. */
uint64_t pyimg_take(pyimg *im, size_t n);
void pyimg_put64(uint64_t at, uint64_t v);
void pyimg_put32(uint64_t at, uint32_t v);
void pyimg_put8(uint64_t at, uint8_t v);

/* A compact ASCII str; a bytes object; a code object of PYIMG_UNITS
 * units with the location table above. */
uint64_t pyimg_str(pyimg *im, const char *s);
uint64_t pyimg_bytes(pyimg *im, const uint8_t *d, size_t n);
uint64_t pyimg_code(pyimg *im, const char *name, const char *qualname);

/* A field of the image's debug block (fails the test if it has none). */
uint64_t pyimg_field(const pyimg *im, const char *name);
/* Moves field name 8 bytes on in the block at the runtime's start (what
 * the target would publish), not in im->blk. */
void pyimg_move_field(pyimg *im, const char *name);

#endif
