/*
 * tests/support/py_image.c — a synthetic CPython process image laid out
 * in this process's memory (tests/support/py_image.h), for the tests of
 * lib/py and of what reads through it (trec --dump).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/py_image.h"

#define IDLE_INTERPS 10
#define FRAME_STRIDE 128


uint64_t pyimg_take(pyimg *im, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    assert_true(im->used + n <= PYIMG_BYTES);
    uint64_t at = (uint64_t)(uintptr_t)(im->mem + im->used);
    im->used += n;
    return at;
}

void pyimg_put64(uint64_t at, uint64_t v)
{
    memcpy((void *)(uintptr_t)at, &v, 8);
}

void pyimg_put32(uint64_t at, uint32_t v)
{
    memcpy((void *)(uintptr_t)at, &v, 4);
}

void pyimg_put8(uint64_t at, uint8_t v)
{
    *(uint8_t *)(uintptr_t)at = v;
}

/* A compact ASCII str. */
uint64_t pyimg_str(pyimg *im, const char *s)
{
    const py_layout *L = &im->L;
    size_t n = strlen(s);
    uint64_t o = pyimg_take(im, L->u_ascii_data + n + 1);

    pyimg_put64(o + L->ob_type, im->unicode_type);
    pyimg_put64(o + L->u_length, n);
    pyimg_put32(o + L->u_state, (1u << L->u_kind_shift) | (1u << L->u_compact_bit) |
                              (1u << L->u_ascii_bit));
    memcpy((void *)(uintptr_t)(o + L->u_ascii_data), s, n + 1);
    return o;
}

uint64_t pyimg_bytes(pyimg *im, const uint8_t *d, size_t n)
{
    const py_layout *L = &im->L;
    uint64_t o = pyimg_take(im, L->by_sval + n + 1);

    pyimg_put64(o + L->ob_type, im->bytes_type);
    pyimg_put64(o + L->ob_size, n);
    memcpy((void *)(uintptr_t)(o + L->by_sval), d, n);
    return o;
}

/* A code object of PYIMG_UNITS code units whose location table puts units
 * 0-3 on PYIMG_FIRST_LINE + 1 and units 4-7 on PYIMG_FIRST_LINE + 3 (entries "no
 * columns": header 0x80 | 13 << 3 | units - 1, then the line delta as a
 * signed varint, delta << 1). */
uint64_t pyimg_code(pyimg *im, const char *name, const char *qualname)
{
    const py_layout *L = &im->L;
    static const uint8_t table[] = { 0x80 | 13 << 3 | 3, 1 << 1, 0x80 | 13 << 3 | 3, 2 << 1 };
    uint64_t c = pyimg_take(im, L->co_code_adaptive + PYIMG_UNITS * 2 + 16);

    pyimg_put64(c + L->ob_type, im->code_type);
    pyimg_put64(c + L->ob_size, PYIMG_UNITS);
    pyimg_put64(c + L->co_filename, pyimg_str(im, "/image/app.py"));
    pyimg_put64(c + L->co_name, pyimg_str(im, name));
    pyimg_put64(c + L->co_qualname, pyimg_str(im, qualname));
    pyimg_put64(c + L->co_lines, pyimg_bytes(im, table, sizeof table));
    pyimg_put32(c + L->co_firstlineno, PYIMG_FIRST_LINE);
    if (L->co_version != PY_OFF_NONE)
        pyimg_put32(c + L->co_version, im->next_version++);
    return c;
}

/* Free-threaded 3.14+: the code's _PyCodeArray {size, entries[size]}
 * with entry 0 the code's own bytecode and entry 1 a copy. */
static void make_copies(pyimg *im, uint64_t code)
{
    const py_layout *L = &im->L;
    uint64_t arr = pyimg_take(im, 8 + 2 * 8);

    im->copy = pyimg_take(im, PYIMG_UNITS * 2);
    im->copies = arr;
    pyimg_put64(arr, 2);
    pyimg_put64(arr + 8, code + L->co_code_adaptive);
    pyimg_put64(arr + 16, im->copy);
    pyimg_put64(code + L->co_tlbc, arr);
}

static uint64_t make_interp(pyimg *im, uint64_t next)
{
    uint64_t is = pyimg_take(im, 8192);

    assert_true(im->L.is_next < 8184 && im->L.is_tstate_head < 8184);
    pyimg_put64(is + im->L.is_next, next);
    return is;
}

/* Thread k: an entry frame, then outer(), then inner() running at unit
 * `unit` of its code (in the bytecode copy `copy` when given). */
static void make_thread(pyimg *im, int k, uint64_t prev_ts, int unit, uint64_t copy)
{
    const py_layout *L = &im->L;
    uint64_t ts = pyimg_take(im, PY_TS_MAX), chunk = pyimg_take(im, 4096);
    uint64_t tag = L->code_ptr_mask == ~(uint64_t)0 ? 0 : 1;   /* 3.14+ tagged references */

    im->ts[k] = ts;
    pyimg_put64(ts + L->ts_prev, prev_ts);
    if (prev_ts)
        pyimg_put64(prev_ts + L->ts_next, ts);
    pyimg_put64(ts + L->ts_interp, im->main_interp);
    pyimg_put64(ts + L->ts_thread_id, 0x7f0000001000ull + (uint64_t)k);
    pyimg_put64(ts + L->ts_native_thread_id, 1001 + (uint64_t)k);
    pyimg_put64(chunk + L->sc_size, 4096);
    pyimg_put64(ts + L->ts_datastack_chunk, chunk);
    uint64_t f0 = chunk + L->sc_data, f1 = f0 + FRAME_STRIDE, f2 = f1 + FRAME_STRIDE;
    pyimg_put64(ts + L->ts_datastack_top, f2 + FRAME_STRIDE);
    pyimg_put8(f0 + L->if_owner, 3);   /* entry: CSTACK (3.13), INTERPRETER (3.14+) */
    pyimg_put64(f1 + L->if_previous, f0);
    pyimg_put64(f1 + L->if_code, im->codes[0] | tag);
    pyimg_put64(f1 + L->if_instr, im->codes[0] + L->co_code_adaptive + 2 * 5);
    pyimg_put64(f2 + L->if_previous, f1);
    pyimg_put64(f2 + L->if_code, im->codes[1] | tag);
    pyimg_put64(f2 + L->if_instr, (copy ? copy : im->codes[1] + L->co_code_adaptive) + 2 * (uint64_t)unit);
    if (copy)
        pyimg_put32(f2 + L->if_tlbc_index, 1);
    pyimg_put64(ts + L->ts_current_frame, f2);
    if (L->ts_base_frame)
        pyimg_put64(ts + L->ts_base_frame, f0);   /* 3.15: the walk must end there */
    im->frames[k][0] = f0;
    im->frames[k][1] = f1;
    im->frames[k][2] = f2;
}

void pyimg_build(pyimg *im, const char *raw, int gil_enabled)
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
    im->mem = calloc(1, PYIMG_BYTES);
    assert_non_null(im->mem);
    im->next_version = 100;
    im->code_type = pyimg_take(im, 512);
    im->unicode_type = pyimg_take(im, 512);
    im->bytes_type = pyimg_take(im, 512);
    const py_layout *L = &im->L;

    /* _PyRuntime starts with the debug block (the thread-name reader
     * takes its object layout from it) */
    assert_true(L->rt_interp_head >= n);
    im->runtime = pyimg_take(im, L->rt_interp_head + 8);
    memcpy(im->blk, blk, n);
    im->blen = n;
    memcpy((void *)(uintptr_t)im->runtime, blk, n);
    im->main_interp = make_interp(im, 0);
    uint64_t head = im->main_interp;
    for (int i = 0; i < IDLE_INTERPS; i++)
        head = make_interp(im, head);   /* newer ones go first */
    pyimg_put64(im->runtime + L->rt_interp_head, head);

    im->codes[0] = pyimg_code(im, "outer", "App.outer");
    im->codes[1] = pyimg_code(im, "inner", "App.inner");
    uint64_t copy = 0;
    if (L->tlbc) {
        make_copies(im, im->codes[1]);
        copy = im->copy;
    }
    make_thread(im, 0, 0, 1, 0);
    make_thread(im, 1, im->ts[0], 6, copy);
    pyimg_put64(im->main_interp + L->is_tstate_head, im->ts[0]);

    /* the GIL: the first thread holds it */
    im->gil = pyimg_take(im, 256);
    pyimg_put64(im->main_interp + L->is_ceval_gil, im->gil);
    pyimg_put32(im->gil + L->gil_locked, 1);
    pyimg_put64(im->gil + L->gil_last_holder, im->ts[0]);
    if (L->free_threaded)
        pyimg_put32(im->gil + L->gil_enabled, (uint32_t)gil_enabled);
}

py_proc *pyimg_attach(pyimg *im)
{
    py_image img = { &im->L, im->runtime, im->code_type, im->unicode_type, im->bytes_type, 0, 0, 0 };
    py_proc *p = NULL;
    char err[256] = "";

    if (py_proc_attach_image(&img, &p, err, sizeof err) != PY_OK)
        fail_msg("attach 3.%u: %s", (unsigned)im->L.minor, err);
    return p;
}


uint64_t pyimg_field(const pyimg *im, const char *name)
{
    uint64_t v;
    if (py_debugoff_field(im->blk, im->blen, name, &v) != 0)
        fail_msg("no %s in the 3.%u block", name, (unsigned)im->L.minor);
    return v;
}

void pyimg_move_field(pyimg *im, const char *name)
{
    uint8_t *b = (uint8_t *)(uintptr_t)im->runtime;
    uint64_t was = pyimg_field(im, name), w;
    int moved = 0;

    for (size_t at = 16; at + 8 <= im->blen && !moved; at += 8) {
        uint64_t x;
        memcpy(&x, b + at, 8);
        if (x != was)
            continue;
        x += 8;
        memcpy(b + at, &x, 8);
        moved = py_debugoff_field(b, im->blen, name, &w) == 0 && w == was + 8;
        if (!moved) {
            x -= 8;
            memcpy(b + at, &x, 8);
        }
    }
    assert_true(moved);
}
