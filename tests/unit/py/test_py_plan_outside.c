/*
 * test_py_plan_outside.c — 3.11+: the frames of a stack that lie outside
 * the thread's data stack (an entry frame or the cframe record on the C
 * stack, a generator's frame) stay in the thread's memo after a walk
 * that no longer met them, so that the next sample reads them in its
 * batched read, right after the top of the data-stack window, instead
 * of on demand after the call from C has returned (lib/py/py_plan.c,
 * keep_outside); at most 48 of them; frames inside the chunk are not
 * kept beyond the chain (the window plans them), and without a known
 * chunk nothing is kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/py_internal.h"
#include "lib/py/py_plan.h"
#include "lib/py/py_snap.h"
#include "lib/py/py_walk.h"

#include <string.h>

#define CHUNK 0x100000u            /* the thread's data-stack chunk */
#define CHUNK_END (CHUNK + 0x10000u)
#define CSTACK 0x7f0000u           /* a page of the C stack */
#define FR_LEN 80u

static py_proc p;
static pywalk w;

/* A walk (3.11+) of the chain frames[0..n), innermost first, in the
 * chunk above, its newest frame's end as the data stack's top. */
static void walked(const uint64_t *frames, int n, uint64_t cframe)
{
    memset(&w, 0, sizeof w);
    w.chunk_data = CHUNK + 16;
    w.chunk_end = CHUNK_END;
    w.next.chunk = CHUNK;
    w.next.chunk_end = CHUNK_END;
    w.flo = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        w.next.frames[i] = frames[i];
        if (frames[i] >= CHUNK && frames[i] < CHUNK_END) {
            if (frames[i] < w.flo)
                w.flo = frames[i];
            if (frames[i] + FR_LEN > w.fhi)
                w.fhi = frames[i] + FR_LEN;
        }
    }
    w.next.nframes = n;
    w.next.cframe = cframe;
    w.top = w.fhi;
    w.bottom = frames[n - 1];
}

static int has(const pymemo *m, uint64_t addr)
{
    for (int i = 0; i < m->nframes; i++)
        if (m->frames[i] == addr)
            return 1;
    return 0;
}

static void setup_proc(void)
{
    memset(&p, 0, sizeof p);
    p.L.frame_objects = 0;
    p.fr_len = FR_LEN;
    p.ts_len = 64;
    p.co_len = 64;
    pysnap_init(&p.snap, NULL);
}

static void test_call_from_c_kept_and_read_early(void **state)
{
    (void)state;
    static pymemo m;

    setup_proc();
    memset(&m, 0, sizeof m);
    /* a Python function called from C: leaf in the chunk, the entry
     * frame on the C stack, its caller in the chunk */
    uint64_t from_c[] = { CHUNK + 0x2000, CSTACK + 0x100, CHUNK + 0x1000 };
    walked(from_c, 3, CSTACK + 0x300);
    pyplan_commit(&p, &m, &w);
    /* the next sample: the call has returned */
    uint64_t back[] = { CHUNK + 0x1000 };
    walked(back, 1, 0);
    pyplan_commit(&p, &m, &w);
    assert_int_equal(m.frames[0], CHUNK + 0x1000);
    assert_true(has(&m, CSTACK + 0x100));
    assert_true(has(&m, CSTACK + 0x300));
    assert_false(has(&m, CHUNK + 0x2000));   /* inside the window: not kept */

    /* planned: the window's top, then the C stack's page, then the rest */
    pyplan_stack(&p, &m, 0x5000);
    int first_middle = -1, cstack = -1, top = -1;
    for (int i = 0; i < p.snap.n; i++) {
        const pysnap_range *r = &p.snap.r[i];
        if ((r->order >> 16) != PYSNAP_MIDDLE)
            continue;
        uint32_t at = r->order & 0xffff;
        if (first_middle < 0 || at < (uint32_t)first_middle)
            first_middle = (int)at;
        if (r->addr <= CSTACK + 0x100 && r->addr + r->len >= CSTACK + 0x100 + FR_LEN)
            cstack = (int)at;
        if (r->addr <= m.hi - 1 && r->addr + r->len >= m.hi)
            top = (int)at;
    }
    assert_true(cstack >= 0);
    assert_true(top >= 0);
    assert_int_equal(top, first_middle);
    for (int i = 0; i < p.snap.n; i++) {
        const pysnap_range *r = &p.snap.r[i];
        int at = (int)(r->order & 0xffff);
        /* every data-stack page below the window's top two comes later */
        if ((r->order >> 16) == PYSNAP_MIDDLE && r->addr >= CHUNK && r->addr < m.hi - 8192)
            assert_true(at > cstack);
    }
    pysnap_cleanup(&p.snap);
}

static void test_bounded_and_not_without_chunk(void **state)
{
    (void)state;
    static pymemo m;

    setup_proc();
    memset(&m, 0, sizeof m);
    /* 100 walks, each through another generator frame on the heap */
    for (int i = 0; i < 100; i++) {
        uint64_t f[] = { CHUNK + 0x1100, 0x900000u + 0x200u * (uint64_t)i, CHUNK + 0x1000 };
        walked(f, 3, 0);
        pyplan_commit(&p, &m, &w);
    }
    int outside = 0;
    for (int i = 0; i < m.nframes; i++)
        outside += m.frames[i] < CHUNK || m.frames[i] >= CHUNK_END;
    assert_int_equal(outside, 48);
    assert_true(has(&m, 0x900000u + 0x200u * 99));   /* the newest are kept */
    assert_true(has(&m, 0x900000u + 0x200u * 52));
    assert_false(has(&m, 0x900000u + 0x200u * 51));
    for (int i = 0; i < m.nframes; i++)               /* each once */
        for (int j = i + 1; j < m.nframes; j++)
            assert_true(m.frames[i] != m.frames[j]);

    /* no chunk known: the chain alone */
    uint64_t f[] = { CHUNK + 0x1000 };
    walked(f, 1, 0);
    w.chunk_data = 0;
    pyplan_commit(&p, &m, &w);
    assert_int_equal(m.nframes, 1);
    pysnap_cleanup(&p.snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_from_c_kept_and_read_early),
        cmocka_unit_test(test_bounded_and_not_without_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
