/*
 * test_py_image.c — the real lib/py code (attach checks, thread list,
 * frame walk, code objects, line tables, strings) over a synthetic
 * process image of CPython 3.13, 3.14, 3.14t, 3.15 and 3.15t, laid out
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
#include "tests/unit/py/py_debugoff_blocks.h"

#define IMAGE_BYTES (4u << 20)
#define IDLE_INTERPS 10
#define FIRST_LINE 40
#define UNITS 8
#define FRAME_STRIDE 128

typedef struct image {
    uint8_t *mem;
    size_t used;
    py_layout L;
    uint64_t code_type, unicode_type, bytes_type;
    uint64_t runtime, main_interp, gil, ts[2], frames[2][3], codes[2], copy, copies;
    uint32_t next_version;
    uint8_t blk[PY_DEBUG_READ];   /* the debug block, also at the runtime's start */
    size_t blen;
} image;

static uint64_t take(image *im, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    assert_true(im->used + n <= IMAGE_BYTES);
    uint64_t at = (uint64_t)(uintptr_t)(im->mem + im->used);
    im->used += n;
    return at;
}

static void put64(uint64_t at, uint64_t v)
{
    memcpy((void *)(uintptr_t)at, &v, 8);
}

static void put32(uint64_t at, uint32_t v)
{
    memcpy((void *)(uintptr_t)at, &v, 4);
}

static void put8(uint64_t at, uint8_t v)
{
    *(uint8_t *)(uintptr_t)at = v;
}

/* A compact ASCII str. */
static uint64_t make_str(image *im, const char *s)
{
    const py_layout *L = &im->L;
    size_t n = strlen(s);
    uint64_t o = take(im, L->u_ascii_data + n + 1);

    put64(o + L->ob_type, im->unicode_type);
    put64(o + L->u_length, n);
    put32(o + L->u_state, (1u << L->u_kind_shift) | (1u << L->u_compact_bit) |
                              (1u << L->u_ascii_bit));
    memcpy((void *)(uintptr_t)(o + L->u_ascii_data), s, n + 1);
    return o;
}

static uint64_t make_bytes(image *im, const uint8_t *d, size_t n)
{
    const py_layout *L = &im->L;
    uint64_t o = take(im, L->by_sval + n + 1);

    put64(o + L->ob_type, im->bytes_type);
    put64(o + L->ob_size, n);
    memcpy((void *)(uintptr_t)(o + L->by_sval), d, n);
    return o;
}

/* A code object of UNITS code units whose location table puts units
 * 0-3 on FIRST_LINE + 1 and units 4-7 on FIRST_LINE + 3 (entries "no
 * columns": header 0x80 | 13 << 3 | units - 1, then the line delta as a
 * signed varint, delta << 1). */
static uint64_t make_code(image *im, const char *name, const char *qualname)
{
    const py_layout *L = &im->L;
    static const uint8_t table[] = { 0x80 | 13 << 3 | 3, 1 << 1, 0x80 | 13 << 3 | 3, 2 << 1 };
    uint64_t c = take(im, L->co_code_adaptive + UNITS * 2 + 16);

    put64(c + L->ob_type, im->code_type);
    put64(c + L->ob_size, UNITS);
    put64(c + L->co_filename, make_str(im, "/image/app.py"));
    put64(c + L->co_name, make_str(im, name));
    put64(c + L->co_qualname, make_str(im, qualname));
    put64(c + L->co_lines, make_bytes(im, table, sizeof table));
    put32(c + L->co_firstlineno, FIRST_LINE);
    if (L->co_version != PY_OFF_NONE)
        put32(c + L->co_version, im->next_version++);
    return c;
}

/* Free-threaded 3.14+: the code's _PyCodeArray {size, entries[size]}
 * with entry 0 the code's own bytecode and entry 1 a copy. */
static void make_copies(image *im, uint64_t code)
{
    const py_layout *L = &im->L;
    uint64_t arr = take(im, 8 + 2 * 8);

    im->copy = take(im, UNITS * 2);
    im->copies = arr;
    put64(arr, 2);
    put64(arr + 8, code + L->co_code_adaptive);
    put64(arr + 16, im->copy);
    put64(code + L->co_tlbc, arr);
}

static uint64_t make_interp(image *im, uint64_t next)
{
    uint64_t is = take(im, 8192);

    assert_true(im->L.is_next < 8184 && im->L.is_tstate_head < 8184);
    put64(is + im->L.is_next, next);
    return is;
}

/* Thread k: an entry frame, then outer(), then inner() running at unit
 * `unit` of its code (in the bytecode copy `copy` when given). */
static void make_thread(image *im, int k, uint64_t prev_ts, int unit, uint64_t copy)
{
    const py_layout *L = &im->L;
    uint64_t ts = take(im, PY_TS_MAX), chunk = take(im, 4096);
    uint64_t tag = L->code_ptr_mask == ~(uint64_t)0 ? 0 : 1;   /* 3.14+ tagged references */

    im->ts[k] = ts;
    put64(ts + L->ts_prev, prev_ts);
    if (prev_ts)
        put64(prev_ts + L->ts_next, ts);
    put64(ts + L->ts_interp, im->main_interp);
    put64(ts + L->ts_thread_id, 0x7f0000001000ull + (uint64_t)k);
    put64(ts + L->ts_native_thread_id, 1001 + (uint64_t)k);
    put64(chunk + L->sc_size, 4096);
    put64(ts + L->ts_datastack_chunk, chunk);
    uint64_t f0 = chunk + L->sc_data, f1 = f0 + FRAME_STRIDE, f2 = f1 + FRAME_STRIDE;
    put64(ts + L->ts_datastack_top, f2 + FRAME_STRIDE);
    put8(f0 + L->if_owner, 3);   /* entry: CSTACK (3.13), INTERPRETER (3.14+) */
    put64(f1 + L->if_previous, f0);
    put64(f1 + L->if_code, im->codes[0] | tag);
    put64(f1 + L->if_instr, im->codes[0] + L->co_code_adaptive + 2 * 5);
    put64(f2 + L->if_previous, f1);
    put64(f2 + L->if_code, im->codes[1] | tag);
    put64(f2 + L->if_instr, (copy ? copy : im->codes[1] + L->co_code_adaptive) + 2 * (uint64_t)unit);
    if (copy)
        put32(f2 + L->if_tlbc_index, 1);
    put64(ts + L->ts_current_frame, f2);
    if (L->ts_base_frame)
        put64(ts + L->ts_base_frame, f0);   /* 3.15: the walk must end there */
    im->frames[k][0] = f0;
    im->frames[k][1] = f1;
    im->frames[k][2] = f2;
}

static void build(image *im, const char *raw, int gil_enabled)
{
    uint8_t blk[PY_DEBUG_READ];
    size_t n = strlen(raw) / 2;
    char err[256];

    memset(im, 0, sizeof *im);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(raw + 2 * i, "%2x", &v), 1);
        blk[i] = (uint8_t)v;
    }
    if (py_layout_from_debug(blk, n, &im->L, err, sizeof err) != 0)
        fail_msg("%s", err);
    im->mem = calloc(1, IMAGE_BYTES);
    assert_non_null(im->mem);
    im->next_version = 100;
    im->code_type = take(im, 512);
    im->unicode_type = take(im, 512);
    im->bytes_type = take(im, 512);
    const py_layout *L = &im->L;

    /* _PyRuntime starts with the debug block (the thread-name reader
     * takes its object layout from it) */
    assert_true(L->rt_interp_head >= n);
    im->runtime = take(im, L->rt_interp_head + 8);
    memcpy(im->blk, blk, n);
    im->blen = n;
    memcpy((void *)(uintptr_t)im->runtime, blk, n);
    im->main_interp = make_interp(im, 0);
    uint64_t head = im->main_interp;
    for (int i = 0; i < IDLE_INTERPS; i++)
        head = make_interp(im, head);   /* newer ones go first */
    put64(im->runtime + L->rt_interp_head, head);

    im->codes[0] = make_code(im, "outer", "App.outer");
    im->codes[1] = make_code(im, "inner", "App.inner");
    uint64_t copy = 0;
    if (L->tlbc) {
        make_copies(im, im->codes[1]);
        copy = im->copy;
    }
    make_thread(im, 0, 0, 1, 0);
    make_thread(im, 1, im->ts[0], 6, copy);
    put64(im->main_interp + L->is_tstate_head, im->ts[0]);

    /* the GIL: the first thread holds it */
    im->gil = take(im, 256);
    put64(im->main_interp + L->is_ceval_gil, im->gil);
    put32(im->gil + L->gil_locked, 1);
    put64(im->gil + L->gil_last_holder, im->ts[0]);
    if (L->free_threaded)
        put32(im->gil + L->gil_enabled, (uint32_t)gil_enabled);
}

static py_proc *attach(image *im)
{
    py_image img = { &im->L, im->runtime, im->code_type, im->unicode_type, im->bytes_type, 0, 0, 0 };
    py_proc *p = NULL;
    char err[256] = "";

    if (py_proc_attach_image(&img, &p, err, sizeof err) != PY_OK)
        fail_msg("attach 3.%u: %s", (unsigned)im->L.minor, err);
    return p;
}

static void expect_frame(const py_frame_info *f, const char *fn, unsigned line)
{
    assert_string_equal(f->file, "/image/app.py");
    assert_string_equal(f->function, fn);
    assert_int_equal(f->first_line, FIRST_LINE);
    assert_int_equal(f->line, line);
}

static void walk_image(const char *raw, int free_threaded)
{
    image im;
    const py_frame_info *fr[16];
    py_thread_info th[8];

    build(&im, raw, 0);
    assert_int_equal(im.L.free_threaded, free_threaded);
    py_proc *p = attach(&im);
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
            expect_frame(fr[1], "App.outer", FIRST_LINE + 3);
            /* thread 1 of a free-threaded 3.14+ build: in its own copy */
            expect_frame(fr[0], "App.inner", k == 0 ? FIRST_LINE + 1 : FIRST_LINE + 3);
        }
    }

    unsigned changes = py_proc_layout_changes(p);   /* not moved by reads that saw no change */
    assert_int_equal(changes, 1);

    /* torn: the instruction pointer inside neither copy of the code */
    uint64_t f2 = im.frames[1][2];
    uint64_t instr;
    memcpy(&instr, (void *)(uintptr_t)(f2 + im.L.if_instr), 8);
    put64(f2 + im.L.if_instr, im.codes[0] + im.L.co_code_adaptive + UNITS * 2 + 64);
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), -1);
    assert_int_equal(py_proc_last_error(p), PY_ERR_IO);
    put64(f2 + im.L.if_instr, instr);
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);

    /* a thread state naming an interpreter not in the list: torn */
    put64(im.ts[1] + im.L.ts_interp, im.main_interp + 8);
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), -1);
    put64(im.ts[1] + im.L.ts_interp, im.main_interp);

    if (im.L.tlbc) {
        /* where the copy lies is remembered: the table is not read again
         * while the frame runs inside it... */
        put64(im.copies + 16, 0);
        put64(f2 + im.L.if_instr, im.copy + 2 * 7);   /* another instruction: no reuse */
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);
        expect_frame(fr[0], "App.inner", FIRST_LINE + 3);
        /* ...and is read again when the frame runs elsewhere: a new
         * copy (the old one freed) */
        uint64_t moved = take(&im, UNITS * 2);
        put64(im.copies + 16, moved);
        put64(f2 + im.L.if_instr, moved + 2 * 2);
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);
        expect_frame(fr[0], "App.inner", FIRST_LINE + 1);
        put64(f2 + im.L.if_instr, instr);
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), -1);   /* the old copy is gone */
        put64(im.copies + 16, im.copy);
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);
    }

    /* only the bottom frame: 3.15's base frame is a thread with no
     * Python frames; before, an entry frame alone is a call from C
     * caught half made (torn) */
    put64(im.ts[1] + im.L.ts_current_frame, im.frames[1][0]);
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), im.L.ts_base_frame ? 0 : -1);
    put64(im.ts[1] + im.L.ts_current_frame, im.frames[1][2]);
    if (im.L.ts_base_frame) {
        /* a walk that does not end at the base frame: torn */
        put64(im.ts[1] + im.L.ts_base_frame, im.frames[1][1]);
        assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), -1);
        put64(im.ts[1] + im.L.ts_base_frame, im.frames[1][0]);
    }
    assert_int_equal(py_proc_stack(p, im.ts[1], fr, 16), 2);

    if (free_threaded) {
        /* the GIL on for a moment (an extension's import) and off
         * again: the samples follow, the words do not */
        put32(im.gil + im.L.gil_enabled, 1);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(th[0].holds_gil, 1);
        put32(im.gil + im.L.gil_enabled, 0);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(th[0].holds_gil, -1);
        usleep(150000);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(py_proc_layout_changes(p), changes);
        assert_int_equal(py_proc_no_gil(p), 1);
        /* on for good (PYTHON_GIL=1, or an extension that needs it): the
         * holder is known at once, and the words follow, once, when it
         * has lasted */
        put32(im.gil + im.L.gil_enabled, 1);
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

static objfacts facts_of(const image *im)
{
    if (im->L.free_threaded)
        return (objfacts){ 32, 24, -8 };
    return (objfacts){ 16, 8, -24 };
}

static uint64_t blk_field(const image *im, const char *name)
{
    uint64_t v;
    if (py_debugoff_field(im->blk, im->blen, name, &v) != 0)
        fail_msg("no %s in the 3.%u block", name, (unsigned)im->L.minor);
    return v;
}

/* A dict of n pairs in a combined table of kind (0 general, 1 unicode). */
static uint64_t make_dict(image *im, uint64_t dict_type, int kind, int n, const uint64_t *keys,
                          const uint64_t *vals)
{
    uint32_t esize = kind == 0 ? 24 : 16, koff = kind == 0 ? 8 : 0;
    uint64_t d = take(im, 96), k = take(im, 40 + 8 * esize);
    objfacts F = facts_of(im);

    assert_true(n <= 5);
    put64(d + F.ob_type, dict_type);
    put64(d + F.head, (uint64_t)n);
    put64(d + blk_field(im, "di.ma_keys"), k);
    put64(d + blk_field(im, "di.ma_values"), 0);
    put64(k, 1);
    put8(k + 8, 3);   /* 8 slots, 1-byte indices */
    put8(k + 9, 3);
    put8(k + 10, (uint8_t)kind);
    put64(k + 24, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        put8(k + 32 + (uint64_t)i, (uint8_t)i);
        put64(k + 40 + (uint64_t)i * esize + koff, keys[i]);
        put64(k + 40 + (uint64_t)i * esize + koff + 8, vals[i]);
    }
    return d;
}

static uint64_t make_int(image *im, uint64_t long_type, uint32_t v)
{
    uint64_t o = take(im, 64);
    put64(o + facts_of(im).ob_type, long_type);
    put64(o + blk_field(im, "lo.lv_tag"), 1u << 3);   /* one digit, positive */
    put32(o + blk_field(im, "lo.ob_digit"), v);
    return o;
}

/* A Thread instance of cls (its attributes inline) named name, tid. */
static uint64_t make_thread_obj(image *im, uint64_t cls, uint64_t long_type, const char *name,
                                uint32_t tid)
{
    uint64_t pre = take(im, 96), obj = pre + 32;   /* room for the managed dict word */
    objfacts F = facts_of(im);
    uint64_t values = obj + F.head;

    put64(obj + F.ob_type, cls);
    put64(obj + (uint64_t)(int64_t)F.managed_dict, 0);   /* no dict: the values are inline */
    put8(values, 4);      /* capacity */
    put8(values + 1, 2);  /* size */
    put8(values + 2, 1);  /* embedded */
    put8(values + 3, 1);  /* valid */
    put64(values + 8, make_str(im, name));
    put64(values + 16, make_int(im, long_type, tid));
    return obj;
}

/* What the image's two threads are called, after the threading module's
 * objects are added; ht_cached_keys: PyHeapTypeObject's field, from the
 * version's headers. */
static void names_of(const char *raw, uint32_t ht_cached_keys, const char **name0,
                     const char **name1, int corrupt_flags)
{
    image im;
    build(&im, raw, 0);
    uint64_t dict_type = take(&im, 512), module_type = take(&im, 512);
    uint64_t long_type = take(&im, 512), cls = take(&im, 1024);
    objfacts F = facts_of(&im);
    uint32_t tp_flags = F.head + 152;

    put64(module_type + F.head + 272, F.head);   /* tp_dictoffset: md_dict after the header */
    put64(cls + F.head + 16, F.head);            /* tp_basicsize: a plain class */
    put64(cls + tp_flags, (1u << 9) | (1u << 4) | (1u << 2));
    put64(cls + F.head + 272, (uint64_t)-1);     /* managed */
    uint64_t shared = take(&im, 40 + 8 * 16);
    put64(cls + ht_cached_keys, shared);
    put64(shared, 1);
    put8(shared + 8, 3);
    put8(shared + 9, 3);
    put8(shared + 10, 2);           /* split */
    put64(shared + 24, 2);
    put64(shared + 40, make_str(&im, "_name"));
    put64(shared + 56, make_str(&im, "_native_id"));

    uint64_t t0 = make_thread_obj(&im, cls, long_type, "MainThread", 1001);
    uint64_t t1 = make_thread_obj(&im, cls, long_type, "worker-1", 1002);
    uint64_t idents[2] = { make_int(&im, long_type, 77), make_int(&im, long_type, 78) };
    uint64_t threads[2] = { t0, t1 };
    uint64_t active = make_dict(&im, dict_type, 0, 2, idents, threads);
    uint64_t limbo = make_dict(&im, dict_type, 0, 0, NULL, NULL);
    uint64_t mkeys[2] = { make_str(&im, "_active"), make_str(&im, "_limbo") };
    uint64_t mvals[2] = { active, limbo };
    uint64_t module = take(&im, 64);
    put64(module + F.ob_type, module_type);
    put64(module + F.head, make_dict(&im, dict_type, 1, 2, mkeys, mvals));
    uint64_t skey = make_str(&im, "threading");
    put64(im.main_interp + blk_field(&im, "is.imports_modules"),
          make_dict(&im, dict_type, 1, 1, &skey, &module));
    if (corrupt_flags) {
        /* tp_flags published 8 bytes further on: PyTypeObject's start is
         * not 3.13's (3.13t's) any more, and nothing is guessed */
        uint8_t *b = (uint8_t *)(uintptr_t)im.runtime;
        uint64_t v, w;
        int moved = 0;
        for (size_t at = 16; at + 8 <= im.blen && !moved; at += 8) {
            memcpy(&v, b + at, 8);
            w = v + 8;
            memcpy(b + at, &w, 8);
            moved = py_debugoff_field(b, im.blen, "ty.tp_flags", &w) == 0 && w == tp_flags + 8;
            if (!moved)
                memcpy(b + at, &v, 8);
        }
        assert_true(moved);
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
    image im;

    build(&im, RAW_314T, 0);
    assert_int_equal(O->ob_type, blk_field(&im, "ob.ob_type"));
    assert_int_equal(O->ob_size, blk_field(&im, "ob.size"));   /* sizeof(PyObject) */
    assert_int_equal(O->tp_flags, blk_field(&im, "ty.tp_flags"));
    assert_int_equal(O->di_keys, blk_field(&im, "di.ma_keys"));
    assert_int_equal(O->di_values, blk_field(&im, "di.ma_values"));
    assert_int_equal(O->lo_tag, blk_field(&im, "lo.lv_tag"));
    assert_int_equal(O->lo_digits, blk_field(&im, "lo.ob_digit"));
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
    image im;
    py_thread_info th[8];

    build(&im, raw, 1);
    py_proc *p = attach(&im);
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
    image im;
    py_image img;
    py_proc *p = NULL;
    char err[256] = "";

    build(&im, RAW_314, 0);
    put64(im.main_interp + im.L.is_tstate_head, 0);
    img = (py_image){ &im.L, im.runtime, im.code_type, im.unicode_type, im.bytes_type, 0, 0, 0 };
    assert_int_equal(py_proc_attach_image(&img, &p, err, sizeof err), PY_ERR_NOT_READY);
    assert_null(p);
    assert_non_null(strstr(err, "retry"));
    free(im.mem);
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
static int64_t search_blocks(image *im, py_proc *p, int64_t off, const int32_t *vals, int n)
{
    py_thread_info ti[8];

    memset(ti, 0, sizeof ti);
    for (int i = 0; i < n; i++) {
        uint64_t b = take(im, BLOCK);
        memset((void *)(uintptr_t)b, 0, BLOCK);
        put32(b + (uint64_t)off, (uint32_t)vals[i]);
        ti[i].pthread_id = b;
        ti[i].tid = -1;
    }
    pytid_search(p, ti, n);
    return p->tid_off;
}

static void tid_offsets_at(int64_t off)
{
    image im;
    live_thread lt;

    build(&im, RAW_313, 0);
    py_proc *p = attach(&im);
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
        cmocka_unit_test(test_tid_offset_under_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
