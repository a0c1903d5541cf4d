/*
 * py_values.h — the local variables of a thread's frames, read from
 * outside like the frames themselves (`trec --dump --locals`).
 *
 * py_values.c formats one object by its exact type (the address of a
 * builtin type object, never a name a class could also have): None,
 * bool, int (exact decimal, any size up to PYVAL_INT_DIGITS digits),
 * float (as repr prints it), str and bytes (cut at PYVAL_MAX_CHARS
 * characters, escapes for what is not printable), tuple, list and dict
 * as type and length, anything else as "<TypeName at 0x…>".  Every
 * read is checked; what cannot be read or does not hold together is
 * shown as "<unreadable …>", never guessed.  py_locals.c walks a
 * thread's frames and gives each Python frame's locals by name.
 *
 * The layouts: the walker's (py_layout.h: object header, str, bytes),
 * the object model's (py_objlayout.h: ints, dicts) and, generated from
 * each version's headers for 3.8–3.13 and 3.13t, py_vallayout below.  Internal
 * API, not installed.
 */
#ifndef TRC_LIB_PY_VALUES_H
#define TRC_LIB_PY_VALUES_H

#include "lib/py/py_layout.h"
#include "lib/py/py_mem.h"
#include "lib/py/py_objlayout.h"
#include "lib/py/pyproc.h"

#include <stddef.h>
#include <stdint.h>

/* str and bytes are cut after this many characters (bytes). */
#define PYVAL_MAX_CHARS 100
/* ints with more 30-bit digits than this are shown by size only. */
#define PYVAL_INT_DIGITS 1024
/* Room a formatted value may need: PYVAL_MAX_CHARS characters, each
 * escaped to at most 10 bytes, quotes, a count. */
#define PYVAL_TEXT_MAX (PYVAL_MAX_CHARS * 10 + 64)

typedef struct py_vallayout {
    uint32_t minor;
    const char *headers;
    uint32_t fo_localsplus;      /* ≤3.10: PyFrameObject.f_localsplus */
    uint32_t co_varnames;        /* ≤3.10: the locals' names (a tuple) */
    uint32_t co_cellvars;        /* ≤3.10: the cell variables' names, slots after the locals */
    uint32_t co_freevars;        /* ≤3.10: the free variables' names, slots after the cells */
    uint32_t if_localsplus;      /* 3.11+: _PyInterpreterFrame.localsplus */
    uint32_t co_localsplusnames; /* 3.11+: names of locals, cells and free variables */
    uint32_t co_localspluskinds; /* 3.11+: a bytes object, one kind byte per name */
    uint32_t fast_local;         /* 3.11+: CO_FAST_LOCAL, the kind bit of a local */
    uint32_t fast_hidden;        /* 3.13+: CO_FAST_HIDDEN (comprehension temporaries), else 0 */
    uint32_t fast_cell;          /* 3.11+: CO_FAST_CELL, a variable a closure shares */
    uint32_t fast_free;          /* 3.11+: CO_FAST_FREE, one taken from an enclosing function */
    uint32_t ce_ref;             /* PyCellObject.ob_ref: what a cell holds */
    uint32_t tp_name;            /* PyTypeObject.tp_name (const char *) */
    uint32_t tu_items;           /* PyTupleObject.ob_item */
    uint32_t li_items;           /* PyListObject.ob_item (PyObject **) */
    uint32_t fl_fval;            /* PyFloatObject.ob_fval (double) */
} py_vallayout;

/* The generated table for 3.<minor> (8..13), or NULL; the free-threaded
 * 3.13t one.  Cannot fail. */
const py_vallayout *py_vallayout_for_minor(unsigned minor);
const py_vallayout *py_vallayout_313t(void);

/* Everything the value reader needs: memory, layouts and the addresses
 * of the builtin type objects in the target (0: not known; such values
 * show as "<TypeName at 0x…>"). */
typedef struct pyval_ctx {
    pymem *mem;
    const py_layout *L;
    const py_objlayout *O;
    const py_vallayout *V;
    uint64_t none_type, bool_type, long_type, float_type, unicode_type, bytes_type;
    uint64_t tuple_type, list_type, dict_type;
} pyval_ctx;

/* The object at addr as text (UTF-8) in buf[0..cap), cap >=
 * PYVAL_TEXT_MAX for nothing to be cut.  Returns 0, or -1 when it could
 * not be read (buf then says so: "<unreadable at 0x…>").  Cannot
 * crash on any addr. */
int pyval_format(const pyval_ctx *c, uint64_t addr, char *buf, size_t cap);

/* One local variable of one frame, as py_proc_locals gives it. */
typedef void (*py_local_fn)(void *ctx, int frame, const char *name, const char *value);
/* One frame (leaf first, frame counting from 0): called with its
 * function's name as the walker names it (borrowed for the call) and
 * locals 0 before its locals; called again with NULL and -1 when they
 * could not be read (those given before that call are not to be
 * trusted). */
typedef void (*py_frame_fn)(void *ctx, int frame, const char *function, int locals);

/* Walks the Python frames of thread state tstate, innermost first, at
 * most max of them, calling on_frame for each and on_local for each of
 * its local variables (unbound ones as "<unbound>").  Returns the
 * number of frames, or -1 when the frames could not be read (the
 * version has no value layout, a chain that does not hold together,
 * the process gone): the caller shows no locals then.  Reads on demand,
 * apart from the stack read of the same thread: the stack may have
 * moved in between, which the caller sees by comparing the functions. */
int py_proc_locals(py_proc *p, uint64_t tstate, int max, py_frame_fn on_frame,
                   py_local_fn on_local, void *ctx);

#endif /* TRC_LIB_PY_VALUES_H */
