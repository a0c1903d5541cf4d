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
 * threaded, disabled (no holder claimed) and enabled again; the second
 * thread of a free-threaded 3.14+ build running its own bytecode copy
 * (co_tlbc->entries[tlbc_index]) whose lines must come out, where the
 * copy lies remembered and looked up again once the frame runs
 * elsewhere; and an
 * instruction pointer inside neither copy, which must read as torn; on
 * 3.15 the base frame every walk must end at.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/py/py_debugoff.h"
#include "lib/py/py_internal.h"
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

    im->runtime = take(im, L->rt_interp_head + 8);
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
    py_image img = { &im->L, im->runtime, im->code_type, im->unicode_type, im->bytes_type };
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
        /* PYTHON_GIL=1: the GIL is back, and its holder is known */
        put32(im.gil + im.L.gil_enabled, 1);
        assert_int_equal(py_proc_threads(p, th, 8, 1), 2);
        assert_int_equal(th[0].holds_gil, 1);
        assert_int_equal(th[1].holds_gil, 0);
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
    img = (py_image){ &im.L, im.runtime, im.code_type, im.unicode_type, im.bytes_type };
    assert_int_equal(py_proc_attach_image(&img, &p, err, sizeof err), PY_ERR_NOT_READY);
    assert_null(p);
    assert_non_null(strstr(err, "retry"));
    free(im.mem);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
