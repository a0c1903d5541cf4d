/*
 * test_py_image.c — the real lib/py code (attach checks, thread list,
 * frame walk, code objects, line tables, strings) over a synthetic
 * process image of CPython 3.13, 3.14, 3.14t, 3.15 and 3.15t
 * (tests/support/py_image.c), laid out
 * in this process's memory by the offsets the real _Py_DebugOffsets
 * blocks of those versions give (tests/unit/py/py_debugoff_blocks.h) and
 * read through the same local memory reader py_proc_attach_self uses.
 * None of those interpreters can be installed here; this is how their
 * layouts are walked.
 *
 * The image: a runtime whose interpreter list holds 11 interpreters, the
 * 10 newest idle (no thread state: attach must look past them, and the
 * main interpreter's threads must not be taken for torn reads); the
 * main interpreter with two threads, each with a data-stack chunk of an
 * entry frame and two Python frames (tagged f_executable from 3.14);
 * code objects with location tables; compact ASCII strings in the
 * build's object header; a GIL held by the first thread, or, free-
 * threaded, disabled (no holder claimed, py_proc_no_gil) and enabled
 * again, and the layout words saying so; the second
 * thread of a free-threaded 3.14+ build running its own bytecode copy
 * (co_tlbc->entries[tlbc_index]) whose lines must come out, where the
 * copy lies remembered and looked up again once the frame runs
 * elsewhere; and an
 * instruction pointer inside neither copy, which must read as torn; on
 * 3.15 the base frame every walk must end at.  Thread names: with the
 * threading module's objects added to the image, 3.13 (generated
 * table), 3.14, 3.14t, 3.15 and 3.15t (layout from the debug block)
 * name both threads; a block contradicting what 3.14 takes from 3.13
 * (or 3.14t from 3.13t) names none; the generated 3.13t table agrees
 * with the real 3.14.6t block where 3.14 kept the object structs.
 * Kernel tids before 3.11: the tid offset in struct pthread, found over
 * control blocks laid out here, also while a thread has just ended.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/py/py_debugoff.h"
#include "lib/py/py_internal.h"
#include "lib/py/py_objlayout.h"
#include "lib/py/py_values.h"
#include "tests/support/py_image.h"
#include "tests/unit/py/py_debugoff_blocks.h"

static void expect_frame(const py_frame_info *f, const char *fn, unsigned line)
{
    assert_string_equal(f->file, "/image/app.py");
    assert_string_equal(f->function, fn);
    assert_int_equal(f->first_line, PYIMG_FIRST_LINE);
    assert_int_equal(f->line, line);
}

static void walk_image(const char *raw, int free_threaded)
{
    pyimg im;
    const py_frame_info *fr[16];
    py_thread_info th[8];

    pyimg_build(&im, raw, 0);
    assert_int_equal(im.L.free_threaded, free_threaded);
    py_proc *p = pyimg_attach(&im);
    /* the layout words say the build, and that its GIL is off */
    const char *words = py_proc_layout_source(p);
    assert_non_null(strstr(words, "_Py_DebugOffsets (3."));
    if (free_threaded)
        assert_non_null(strstr(words, ", free-threaded, no GIL)"));
    else
        assert_null(strstr(words, "free-threaded"));

    for (int round = 0; round < 3; round++) {   /* cached code objects: the same */
        int n = py_proc_threads(p, th, 8, 1);
        assert_int_equal(n, 2);
        assert_int_equal(th[0].tstate, im.ts[0]);
        assert_int_equal(th[0].tid, 1001);
        assert_int_equal(th[1].tid, 1002);
        /* a GIL build names its holder; a free-threaded one without its
         * GIL claims none */
        assert_int_equal(th[0].holds_gil, free_threaded ? -1 : 1);
        assert_int_equal(th[1].holds_gil, free_threaded ? -1 : 0);
        assert_int_equal(py_proc_no_gil(p), free_threaded);
        for (int k = 0; k < 2; k++) {
            int d = py_proc_stack(p, im.ts[k], fr, 16);
            if (d != 2)
                fail_msg("3.%u thread %d: depth %d (status %d)", (unsigned)im.L.minor, k, d,
                         (int)py_proc_last_error(p));
            expect_frame(fr[1], "App.outer", PYIMG_FIRST_LINE + 3);
            /* thread 1 of a free-threaded 3.14+ build: in its own copy */
            expect_frame(fr[0], "App.inner", k == 0 ? PYIMG_FIRST_LINE + 1 : PYIMG_FIRST_LINE + 3);
        }
    }

    unsigned changes = py_proc_layout_changes(p);   /* not moved by reads that saw no change */
    assert_int_equal(changes, 1);

    /* torn: the instruction pointer inside neither copy of the code */
    uint64_t f2 = im.frames[1][2];
    uint64_t instr;
    memcpy(&instr, (void *)(uintptr_t)(f2 + im.L.if_instr), 8);
    pyimg_put64(f2 + im.L.if_instr, im.codes[0] + im.L.co_code_adaptive + PYIMG_UNITS * 2 + 64);
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), -1);
    assert_int_equal(py_proc_last_error(p), PY_ERR_IO);
    pyimg_put64(f2 + im.L.if_instr, instr);
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);

    /* a thread state naming an interpreter not in the list: torn */
    pyimg_put64(im.ts[1] + im.L.ts_interp, im.main_interp + 8);
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), -1);
    pyimg_put64(im.ts[1] + im.L.ts_interp, im.main_interp);

    if (im.L.tlbc) {
        /* where the copy lies is remembered: the table is not read again
         * while the frame runs inside it... */
        pyimg_put64(im.copies + 16, 0);
        pyimg_put64(f2 + im.L.if_instr, im.copy + 2 * 7);   /* another instruction: no reuse */
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);
        expect_frame(fr[0], "App.inner", PYIMG_FIRST_LINE + 3);
        /* ...and is read again when the frame runs elsewhere: a new
         * copy (the old one freed) */
        uint64_t moved = pyimg_take(&im, PYIMG_UNITS * 2);
        pyimg_put64(im.copies + 16, moved);
        pyimg_put64(f2 + im.L.if_instr, moved + 2 * 2);
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);
        expect_frame(fr[0], "App.inner", PYIMG_FIRST_LINE + 1);
        pyimg_put64(f2 + im.L.if_instr, instr);
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), -1);   /* the old copy is gone */
        pyimg_put64(im.copies + 16, im.copy);
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);
    }

    /* only the bottom frame: 3.15's base frame is a thread with no
     * Python frames; before, an entry frame alone is a call from C
     * caught half made (torn) */
    pyimg_put64(im.ts[1] + im.L.ts_current_frame, im.frames[1][0]);
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), im.L.ts_base_frame ? 0 : -1);
    pyimg_put64(im.ts[1] + im.L.ts_current_frame, im.frames[1][2]);
    if (im.L.ts_base_frame) {
        /* a walk that does not end at the base frame: torn */
        pyimg_put64(im.ts[1] + im.L.ts_base_frame, im.frames[1][1]);
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), -1);
        pyimg_put64(im.ts[1] + im.L.ts_base_frame, im.frames[1][0]);
    }
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);

    if (free_threaded) {
        /* the GIL on for a moment (an extension's import) and off
         * again: the samples follow, the words do not */
        pyimg_put32(im.gil + im.L.gil_enabled, 1);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(th[0].holds_gil, 1);
        pyimg_put32(im.gil + im.L.gil_enabled, 0);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(th[0].holds_gil, -1);
        usleep(150000);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(py_proc_layout_changes(p), changes);
        assert_int_equal(py_proc_no_gil(p), 1);
        /* on for good (PYTHON_GIL=1, or an extension that needs it): the
         * holder is known at once, and the words follow, once, when it
         * has lasted */
        pyimg_put32(im.gil + im.L.gil_enabled, 1);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(th[0].holds_gil, 1);
        assert_int_equal(th[1].holds_gil, 0);
        assert_int_equal(py_proc_no_gil(p), 0);
        assert_int_equal(py_proc_layout_changes(p), changes);
        usleep(150000);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(py_proc_no_gil(p), 0);
        assert_int_equal(py_proc_layout_changes(p), changes + 1);
        assert_non_null(strstr(py_proc_layout_source(p), ", free-threaded, GIL enabled)"));
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(py_proc_layout_changes(p), changes + 1);
    }
    py_proc_free(p);
    free(im.mem);
}

static void test_image_313(void **state)
{
    walk_image(RAW_313, 0);
}

static void test_image_314(void **state)
{
    walk_image(RAW_314, 0);
}

static void test_image_314t(void **state)
{
    walk_image(RAW_314T, 1);
}

static void test_image_315(void **state)
{
    walk_image(RAW_315, 0);
}

static void test_image_315t(void **state)
{
    walk_image(RAW_315T, 1);
}

/* ---- thread names -------------------------------------------------------
 * The threading module's objects, laid out by the facts of CPython's
 * headers written here (64-bit), not by lib/py's tables: PyObject
 * {ob_refcnt, ob_type} (16 bytes) in a GIL build, {ob_tid, ob_flags,
 * ob_mutex, ob_gc_bits, ob_ref_local, ob_ref_shared, ob_type} (32
 * bytes) in a free-threaded one (Include/object.h); PyDictObject {head,
 * ma_used, tag, ma_keys, ma_values}; PyDictKeysObject {dk_refcnt,
 * dk_log2_size at 8, dk_log2_index_bytes 9, dk_kind 10, (free-threaded:
 * dk_mutex 11), dk_version, dk_usable, dk_nentries at 24, dk_indices
 * at 32}, entries {hash, key, value} (kind 0) or {key, value} (unicode
 * 1, split 2); PyTypeObject, after its header, tp_basicsize 16 bytes
 * in, tp_flags 152, tp_dictoffset 272; Py_TPFLAGS_HEAPTYPE 1 << 9,
 * MANAGED_DICT 1 << 4, INLINE_VALUES 1 << 2; the managed dict three
 * words before an object (one in a free-threaded build:
 * MANAGED_DICT_OFFSET, Include/internal/pycore_object.h) and a plain
 * class's PyDictValues {capacity, size, embedded, valid, values[]}
 * right after its header; PyModuleObject's md_dict right after its
 * header.  The rest (ma_keys, ma_values, imports.modules, lv_tag,
 * ob_digit) comes from the version's debug block as CPython fills it. */

typedef struct objfacts {
    uint32_t head;        /* sizeof(PyObject) */
    uint32_t ob_type;
    int32_t managed_dict;
} objfacts;

static objfacts facts_of(const pyimg *im)
{
    if (im->L.free_threaded)
        return (objfacts){ 32, 24, -8 };
    return (objfacts){ 16, 8, -24 };
}

/* A dict of n pairs in a combined table of kind (0 general, 1 unicode). */
static uint64_t make_dict(pyimg *im, uint64_t dict_type, int kind, int n, const uint64_t *keys,
                          const uint64_t *vals)
{
    uint32_t esize = kind == 0 ? 24 : 16, koff = kind == 0 ? 8 : 0;
    uint64_t d = pyimg_take(im, 96), k = pyimg_take(im, 40 + 8 * esize);
    objfacts F = facts_of(im);

    assert_true(n <= 5);
    pyimg_put64(d + F.ob_type, dict_type);
    pyimg_put64(d + F.head, (uint64_t)n);
    pyimg_put64(d + pyimg_field(im, "di.ma_keys"), k);
    pyimg_put64(d + pyimg_field(im, "di.ma_values"), 0);
    pyimg_put64(k, 1);
    pyimg_put8(k + 8, 3);   /* 8 slots, 1-byte indices */
    pyimg_put8(k + 9, 3);
    pyimg_put8(k + 10, (uint8_t)kind);
    pyimg_put64(k + 24, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        pyimg_put8(k + 32 + (uint64_t)i, (uint8_t)i);
        pyimg_put64(k + 40 + (uint64_t)i * esize + koff, keys[i]);
        pyimg_put64(k + 40 + (uint64_t)i * esize + koff + 8, vals[i]);
    }
    return d;
}

static uint64_t make_int(pyimg *im, uint64_t long_type, uint32_t v)
{
    uint64_t o = pyimg_take(im, 64);
    pyimg_put64(o + facts_of(im).ob_type, long_type);
    pyimg_put64(o + pyimg_field(im, "lo.lv_tag"), 1u << 3);   /* one digit, positive */
    pyimg_put32(o + pyimg_field(im, "lo.ob_digit"), v);
    return o;
}

/* A Thread instance of cls (its attributes inline) named name, tid. */
static uint64_t make_thread_obj(pyimg *im, uint64_t cls, uint64_t long_type, const char *name,
                                uint32_t tid)
{
    uint64_t pre = pyimg_take(im, 96), obj = pre + 32;   /* room for the managed dict word */
    objfacts F = facts_of(im);
    uint64_t values = obj + F.head;

    pyimg_put64(obj + F.ob_type, cls);
    pyimg_put64(obj + (uint64_t)(int64_t)F.managed_dict, 0);   /* no dict: the values are inline */
    pyimg_put8(values, 4);      /* capacity */
    pyimg_put8(values + 1, 2);  /* size */
    pyimg_put8(values + 2, 1);  /* embedded */
    pyimg_put8(values + 3, 1);  /* valid */
    pyimg_put64(values + 8, pyimg_str(im, name));
    pyimg_put64(values + 16, make_int(im, long_type, tid));
    return obj;
}

/* What the image's two threads are called, after the threading module's
 * objects are added; ht_cached_keys: PyHeapTypeObject's field, from the
 * version's headers. */
static void names_of(const char *raw, uint32_t ht_cached_keys, const char **name0,
                     const char **name1, int corrupt_flags)
{
    pyimg im;
    pyimg_build(&im, raw, 0);
    uint64_t dict_type = pyimg_take(&im, 512), module_type = pyimg_take(&im, 512);
    uint64_t long_type = pyimg_take(&im, 512), cls = pyimg_take(&im, 1024);
    objfacts F = facts_of(&im);
    uint32_t tp_flags = F.head + 152;

    pyimg_put64(module_type + F.head + 272, F.head);   /* tp_dictoffset: md_dict after the header */
    pyimg_put64(cls + F.head + 16, F.head);            /* tp_basicsize: a plain class */
    pyimg_put64(cls + tp_flags, (1u << 9) | (1u << 4) | (1u << 2));
    pyimg_put64(cls + F.head + 272, (uint64_t)-1);     /* managed */
    uint64_t shared = pyimg_take(&im, 40 + 8 * 16);
    pyimg_put64(cls + ht_cached_keys, shared);
    pyimg_put64(shared, 1);
    pyimg_put8(shared + 8, 3);
    pyimg_put8(shared + 9, 3);
    pyimg_put8(shared + 10, 2);           /* split */
    pyimg_put64(shared + 24, 2);
    pyimg_put64(shared + 40, pyimg_str(&im, "_name"));
    pyimg_put64(shared + 56, pyimg_str(&im, "_native_id"));

    uint64_t t0 = make_thread_obj(&im, cls, long_type, "MainThread", 1001);
    uint64_t t1 = make_thread_obj(&im, cls, long_type, "worker-1", 1002);
    uint64_t idents[2] = { make_int(&im, long_type, 77), make_int(&im, long_type, 78) };
    uint64_t threads[2] = { t0, t1 };
    uint64_t active = make_dict(&im, dict_type, 0, 2, idents, threads);
    uint64_t limbo = make_dict(&im, dict_type, 0, 0, NULL, NULL);
    uint64_t mkeys[2] = { pyimg_str(&im, "_active"), pyimg_str(&im, "_limbo") };
    uint64_t mvals[2] = { active, limbo };
    uint64_t module = pyimg_take(&im, 64);
    pyimg_put64(module + F.ob_type, module_type);
    pyimg_put64(module + F.head, make_dict(&im, dict_type, 1, 2, mkeys, mvals));
    uint64_t skey = pyimg_str(&im, "threading");
    pyimg_put64(im.main_interp + pyimg_field(&im, "is.imports_modules"),
          make_dict(&im, dict_type, 1, 1, &skey, &module));
    if (corrupt_flags) {
        /* tp_flags published 8 bytes further on: PyTypeObject's start is
         * not 3.13's (3.13t's) any more, and nothing is guessed */
        pyimg_move_field(&im, "ty.tp_flags");
    }

    py_image img = { &im.L, im.runtime, im.code_type, im.unicode_type, im.bytes_type,
                     dict_type, module_type, long_type };
    py_proc *p = NULL;
    char err[256] = "";
    if (py_proc_attach_image(&img, &p, err, sizeof err) != PY_OK)
        fail_msg("attach 3.%u: %s", (unsigned)im.L.minor, err);
    static char got[2][64];
    const char *n0 = py_proc_thread_name(p, 1001);
    snprintf(got[0], sizeof got[0], "%s", n0 ? n0 : "(none)");
    const char *n1 = py_proc_thread_name(p, 1002);
    snprintf(got[1], sizeof got[1], "%s", n1 ? n1 : "(none)");
    *name0 = n0 ? got[0] : NULL;
    *name1 = n1 ? got[1] : NULL;
    py_proc_free(p);
    free(im.mem);
}

static void expect_names(const char *raw, uint32_t ht_cached_keys)
{
    const char *a, *b;
    names_of(raw, ht_cached_keys, &a, &b, 0);
    if (!a || !b || strcmp(a, "MainThread") != 0 || strcmp(b, "worker-1") != 0)
        fail_msg("names: '%s', '%s'", a ? a : "(none)", b ? b : "(none)");
}

static void test_names_313(void **state)
{
    expect_names(RAW_313, 880);   /* the generated table, checked against the block */
}

static void test_names_314(void **state)
{
    expect_names(RAW_314, 880);   /* sizeof(PyTypeObject) 416 + 58 pointers */
}

static void test_names_315(void **state)
{
    expect_names(RAW_315, 888);   /* published in the block */
}

/* Free-threaded: PyTypeObject is 16 bytes longer (its header), so
 * ht_cached_keys is too: 432 + 58 pointers. */
static void test_names_314t(void **state)
{
    expect_names(RAW_314T, 896);
}

static void test_names_315t(void **state)
{
    expect_names(RAW_315T, 904);   /* published in the block */
}

/* The 3.13t table is generated from headers of a GIL build compiled
 * with Py_GIL_DISABLED; where 3.14 left the object structs as they
 * were, it must say what the real 3.14.6t block publishes. */
static void test_table_313t(void **state)
{
    const py_objlayout *O = py_objlayout_313t();
    pyimg im;

    pyimg_build(&im, RAW_314T, 0);
    assert_int_equal(O->ob_type, pyimg_field(&im, "ob.ob_type"));
    assert_int_equal(O->ob_size, pyimg_field(&im, "ob.size"));   /* sizeof(PyObject) */
    assert_int_equal(O->tp_flags, pyimg_field(&im, "ty.tp_flags"));
    assert_int_equal(O->di_keys, pyimg_field(&im, "di.ma_keys"));
    assert_int_equal(O->di_values, pyimg_field(&im, "di.ma_values"));
    assert_int_equal(O->lo_tag, pyimg_field(&im, "lo.lv_tag"));
    assert_int_equal(O->lo_digits, pyimg_field(&im, "lo.ob_digit"));
    assert_int_equal(O->managed_dict, -8);   /* MANAGED_DICT_OFFSET, one word */
    free(im.mem);
}

/* A block contradicting what 3.14 takes from 3.13, or 3.14t from
 * 3.13t: no names rather than guessed ones. */
static void test_names_refused(void **state)
{
    const char *a, *b;
    names_of(RAW_314, 880, &a, &b, 1);
    assert_null(a);
    assert_null(b);
    names_of(RAW_314T, 896, &a, &b, 1);
    assert_null(a);
    assert_null(b);
}

/* A free-threaded build attached while its GIL is on (PYTHON_GIL=1):
 * the words say so, and the holder is known. */
static void gil_enabled_words(const char *raw, const char *want)
{
    pyimg im;
    py_thread_info th[8];

    pyimg_build(&im, raw, 1);
    py_proc *p = pyimg_attach(&im);
    if (strcmp(py_proc_layout_source(p), want) != 0)
        fail_msg("layout words '%s', not '%s'", py_proc_layout_source(p), want);
    assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
    assert_int_equal(th[0].holds_gil, 1);
    py_proc_free(p);
    free(im.mem);
}

static void test_words_gil_enabled(void **state)
{
    gil_enabled_words(RAW_314T, "_Py_DebugOffsets (3.14 list, free-threaded, GIL enabled)");
    gil_enabled_words(RAW_315T,
                      "_Py_DebugOffsets (3.15 list, from 3.15.0b4, free-threaded, GIL enabled)");
}

/* No interpreter has a thread yet: attach says retry, naming none as
 * broken. */
static void test_image_no_thread(void **state)
{
    pyimg im;
    py_image img;
    py_proc *p = NULL;
    char err[256] = "";

    pyimg_build(&im, RAW_314, 0);
    pyimg_put64(im.main_interp + im.L.is_tstate_head, 0);
    img = (py_image){ &im.L, im.runtime, im.code_type, im.unicode_type, im.bytes_type, 0, 0, 0 };
    assert_int_equal(py_proc_attach_image(&img, &p, err, sizeof err), PY_ERR_NOT_READY);
    assert_null(p);
    assert_non_null(strstr(err, "retry"));
    free(im.mem);
}

/* ---- local variables (trec --dump --locals, lib/py/py_locals.c) --------
 * Thread 0's inner() frame given locals, laid out by the version's debug
 * block (where frames keep their slots, code objects their names and
 * kinds, floats their value, tuples their items, type objects their
 * name; 3.13t's block as its headers initialise it) and by facts of
 * CPython's headers written here: the object header of facts_of(),
 * PyVarObject's ob_size right after it, CO_FAST_LOCAL 0x20 and
 * CO_FAST_HIDDEN 0x10 (Include/internal/pycore_code.h, 3.13 to 3.15),
 * lv_tag = digits << 3 | sign (0 positive, 2 negative), 30-bit digits;
 * from 3.14 a slot is a _PyStackRef whose low bits are tags
 * (Include/internal/pycore_stackref.h): a None with its deferred-
 * reference tag must read as None.  outer() has no locals.  Every
 * version and build shows the same values; a 3.13 block that says
 * another place than the generated table shows none. */

#define CO_FAST_HIDDEN 0x10
#define CO_FAST_LOCAL 0x20

typedef struct locals_seen {
    char text[2048];
    size_t n;
    int unread;
} locals_seen;

static void seen_frame(void *ctx, int frame, const char *function, int locals)
{
    locals_seen *s = ctx;
    if (locals < 0)
        s->unread++;
    else
        s->n += (size_t)snprintf(s->text + s->n, sizeof s->text - s->n, "%s#%d:", function, frame);
}

static void seen_local(void *ctx, int frame, const char *name, const char *value)
{
    locals_seen *s = ctx;
    s->n += (size_t)snprintf(s->text + s->n, sizeof s->text - s->n, " %s=%s;", name, value);
}

static uint64_t typed(pyimg *im, uint64_t type, size_t n)
{
    uint64_t o = pyimg_take(im, n);
    pyimg_put64(o + facts_of(im).ob_type, type);
    return o;
}

/* A tuple of n items. */
static uint64_t make_tuple(pyimg *im, uint64_t tuple_type, int n, const uint64_t *items)
{
    uint64_t t = typed(im, tuple_type, 256);
    pyimg_put64(t + facts_of(im).head, (uint64_t)n);
    for (int i = 0; i < n; i++)
        pyimg_put64(t + pyimg_field(im, "tu.ob_item") + 8 * (uint64_t)i, items[i]);
    return t;
}

/* What py_proc_locals gives for thread 0 of the image of raw, whose
 * block is first changed by bump (a field name, or NULL) moved 8 bytes
 * on; -1 when it gives nothing, with the status. */
static int locals_of(const char *raw, const char *bump, locals_seen *s, py_status *st)
{
    pyimg im;
    pyimg_build(&im, raw, 0);
    int tagged = im.L.minor >= 14;
    uint64_t none_t = pyimg_take(&im, 512), float_t = pyimg_take(&im, 512);
    uint64_t tuple_t = pyimg_take(&im, 512), long_t = pyimg_take(&im, 512);
    uint64_t widget_t = pyimg_take(&im, 512);
    uint64_t wname = pyimg_take(&im, 16);
    memcpy((void *)(uintptr_t)wname, "Widget", 7);
    pyimg_put64(widget_t + pyimg_field(&im, "ty.tp_name"), wname);

    uint64_t none = typed(&im, none_t, 64);
    uint64_t answer = typed(&im, long_t, 64);
    pyimg_put64(answer + pyimg_field(&im, "lo.lv_tag"), 1u << 3);
    pyimg_put32(answer + pyimg_field(&im, "lo.ob_digit"), 42);
    uint64_t big = typed(&im, long_t, 64);   /* -(3 * 2^30 + 5) */
    pyimg_put64(big + pyimg_field(&im, "lo.lv_tag"), 2u << 3 | 2);
    pyimg_put32(big + pyimg_field(&im, "lo.ob_digit"), 5);
    pyimg_put32(big + pyimg_field(&im, "lo.ob_digit") + 4, 3);
    uint64_t timeout = typed(&im, float_t, 64);
    double v = 30.5;
    memcpy((void *)(uintptr_t)(timeout + pyimg_field(&im, "fl.ob_fval")), &v, 8);
    uint64_t items[3] = { answer, none, timeout };
    uint64_t triple = make_tuple(&im, tuple_t, 3, items);
    uint64_t widget = typed(&im, widget_t, 64);

    static const char *const names[] = { "n", "big", "timeout", "name", "nothing",
                                         "triple", "w", "later", "_hidden", "tagged" };
    enum { NLOC = 10 };
    uint64_t name_objs[NLOC];
    uint8_t kinds[NLOC];
    for (int i = 0; i < NLOC; i++) {
        name_objs[i] = pyimg_str(&im, names[i]);
        kinds[i] = i == 8 ? CO_FAST_HIDDEN | CO_FAST_LOCAL : CO_FAST_LOCAL;
    }
    uint64_t slots[NLOC] = { answer, big, timeout, pyimg_str(&im, "hello"), none, triple,
                             widget, 0, answer, none | (tagged ? 1 : 0) };
    uint64_t inner = im.codes[1], outer = im.codes[0];
    pyimg_put64(inner + pyimg_field(&im, "co.localsplusnames"), make_tuple(&im, tuple_t, NLOC, name_objs));
    pyimg_put64(inner + pyimg_field(&im, "co.localspluskinds"), pyimg_bytes(&im, kinds, NLOC));
    pyimg_put64(outer + pyimg_field(&im, "co.localsplusnames"), make_tuple(&im, tuple_t, 0, NULL));
    pyimg_put64(outer + pyimg_field(&im, "co.localspluskinds"), pyimg_bytes(&im, kinds, 0));
    uint64_t f = im.frames[0][2] + pyimg_field(&im, "if.localsplus");
    for (int i = 0; i < NLOC; i++)
        pyimg_put64(f + 8 * (uint64_t)i, slots[i]);

    if (bump)
        pyimg_move_field(&im, bump);

    py_proc *p = pyimg_attach(&im);
    p->none_type = none_t;
    p->float_type = float_t;
    p->tuple_type = tuple_t;
    p->long_type = long_t;
    memset(s, 0, sizeof *s);
    int n = py_proc_locals(p, im.ts[0], 16, seen_frame, seen_local, s);
    *st = py_proc_last_error(p);
    py_proc_free(p);
    free(im.mem);
    return n;
}

static void expect_locals(const char *raw)
{
    locals_seen s;
    py_status st;
    int n = locals_of(raw, NULL, &s, &st);
    if (n != 2)
        fail_msg("depth %d (status %d)", n, (int)st);
    assert_int_equal(s.unread, 0);
    /* "at 0x…": the address differs per image; what precedes it not */
    char *w = strstr(s.text, " w=<Widget at 0x");
    assert_non_null(w);
    char *end = strchr(w, '>');
    assert_non_null(end);
    memmove(w + 16, end, strlen(end) + 1);
    const char *want = "App.inner#0: n=42; big=-3221225477; timeout=30.5; name='hello';"
                       " nothing=None; triple=<tuple of length 3>; w=<Widget at 0x>;"
                       " later=<unbound>; tagged=None;App.outer#1:";
    if (strcmp(s.text, want) != 0)
        fail_msg("locals:\n  got  %s\n  want %s", s.text, want);
}

static void test_locals_313(void **state)
{
    expect_locals(RAW_313);
}

static void test_locals_313t(void **state)
{
    expect_locals(RAW_313T);
}

static void test_locals_314(void **state)
{
    expect_locals(RAW_314);
}

static void test_locals_314t(void **state)
{
    expect_locals(RAW_314T);
}

static void test_locals_315(void **state)
{
    expect_locals(RAW_315);
}

static void test_locals_315t(void **state)
{
    expect_locals(RAW_315T);
}

/* 3.13 (and 3.13t) blocks that put a float's value elsewhere than the
 * generated table: no locals, as not supported, rather than guessed. */
static void test_locals_refused(void **state)
{
    locals_seen s;
    py_status st;
    assert_int_equal(locals_of(RAW_313, "fl.ob_fval", &s, &st), -1);
    assert_int_equal(st, PY_ERR_VERSION);
    assert_int_equal(locals_of(RAW_313T, "fl.ob_fval", &s, &st), -1);
    assert_int_equal(st, PY_ERR_VERSION);
}

/* ---- kernel tids before 3.11 (lib/py/py_tid.c) -------------------------
 * pytid_search over control blocks laid out here: the tid at glibc's
 * offset (found in this thread's own block, as gettid() there) or at an
 * offset no C library of ours uses, the main thread's block holding this
 * process's pid, a live thread's block its tid.  Under thread churn a
 * block whose thread has ended holds 0 (the kernel clears it at exit):
 * with the main thread's block as anchor the offset must still be found;
 * without it, or beside a block naming a tid no task has, it must not. */


#define BLOCK 2048

typedef struct live_thread {
    pthread_t th;
    int pipe[2];
    volatile int32_t tid;
} live_thread;

static void *live_body(void *arg)
{
    live_thread *t = arg;
    char c;
    t->tid = (int32_t)syscall(SYS_gettid);
    if (read(t->pipe[0], &c, 1) < 0)
        return NULL;
    return NULL;
}

static void live_start(live_thread *t)
{
    assert_int_equal(pipe(t->pipe), 0);
    t->tid = 0;
    assert_int_equal(pthread_create(&t->th, NULL, live_body, t), 0);
    while (!t->tid)
        usleep(1000);
}

static void live_stop(live_thread *t)
{
    assert_int_equal(write(t->pipe[1], "x", 1), 1);
    pthread_join(t->th, NULL);
    close(t->pipe[0]);
    close(t->pipe[1]);
}

/* Where this C library keeps a thread's tid in its control block: the
 * first 4-byte word of pthread_self()'s block equal to gettid(), in a
 * thread that is not the main one (whose tid is also the pid). */
static void *libc_off_body(void *arg)
{
    const uint8_t *self = (const uint8_t *)(uintptr_t)pthread_self();
    int32_t tid = (int32_t)syscall(SYS_gettid);
    for (size_t off = 0; off + 4 <= BLOCK; off += 4) {
        int32_t v;
        memcpy(&v, self + off, 4);
        if (v == tid) {
            *(int64_t *)arg = (int64_t)off;
            break;
        }
    }
    return NULL;
}

static int64_t libc_tid_off(void)
{
    pthread_t th;
    int64_t off = -1;
    assert_int_equal(pthread_create(&th, NULL, libc_off_body, &off), 0);
    pthread_join(th, NULL);
    return off;
}

/* tid_off pytid_search finds for blocks holding vals[i] at off. */
static int64_t search_blocks(pyimg *im, py_proc *p, int64_t off, const int32_t *vals, int n)
{
    py_thread_info ti[8];

    memset(ti, 0, sizeof ti);
    for (int i = 0; i < n; i++) {
        uint64_t b = pyimg_take(im, BLOCK);
        memset((void *)(uintptr_t)b, 0, BLOCK);
        pyimg_put32(b + (uint64_t)off, (uint32_t)vals[i]);
        ti[i].pthread_id = b;
        ti[i].tid = -1;
    }
    pytid_search(p, ti, n);
    return p->tid_off;
}

static void tid_offsets_at(int64_t off)
{
    pyimg im;
    live_thread lt;

    pyimg_build(&im, RAW_313, 0);
    py_proc *p = pyimg_attach(&im);
    live_start(&lt);
    int32_t pid = (int32_t)getpid();

    int32_t all_live[] = { pid, lt.tid };
    assert_int_equal(search_blocks(&im, p, off, all_live, 2), off);
    /* one thread ended under the look: found, by the main thread */
    int32_t churn[] = { 0, pid, lt.tid, 0 };
    assert_int_equal(search_blocks(&im, p, off, churn, 4), off);
    /* no main thread among them: every block must name a live thread */
    int32_t no_anchor[] = { lt.tid, 0 };
    assert_int_equal(search_blocks(&im, p, off, no_anchor, 2), -1);
    int32_t alone[] = { lt.tid };
    assert_int_equal(search_blocks(&im, p, off, alone, 1), off);
    /* a tid no task has, or one tid twice: not the tid field */
    int32_t stale[] = { pid, lt.tid, 0x3ffffff0 };
    assert_int_equal(search_blocks(&im, p, off, stale, 3), -1);
    int32_t twice[] = { pid, lt.tid, lt.tid };
    assert_int_equal(search_blocks(&im, p, off, twice, 3), -1);

    live_stop(&lt);
    py_proc_free(p);
    free(im.mem);
}

static void test_tid_offset_under_churn(void **state)
{
    int64_t off = libc_tid_off();
    assert_true(off >= 0);
    tid_offsets_at(off);            /* this C library's offset */
    tid_offsets_at(off == 1000 ? 1004 : 1000); /* another's: searched in the blocks */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_image_313),
        cmocka_unit_test(test_image_314),
        cmocka_unit_test(test_image_314t),
        cmocka_unit_test(test_image_315),
        cmocka_unit_test(test_image_315t),
        cmocka_unit_test(test_image_no_thread),
        cmocka_unit_test(test_words_gil_enabled),
        cmocka_unit_test(test_names_313),
        cmocka_unit_test(test_names_314),
        cmocka_unit_test(test_names_315),
        cmocka_unit_test(test_names_314t),
        cmocka_unit_test(test_names_315t),
        cmocka_unit_test(test_names_refused),
        cmocka_unit_test(test_table_313t),
        cmocka_unit_test(test_locals_313),
        cmocka_unit_test(test_locals_313t),
        cmocka_unit_test(test_locals_314),
        cmocka_unit_test(test_locals_314t),
        cmocka_unit_test(test_locals_315),
        cmocka_unit_test(test_locals_315t),
        cmocka_unit_test(test_locals_refused),
        cmocka_unit_test(test_tid_offset_under_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
