/*
 * test_py_plan.c — what a good walk leaves in a thread's memo for the
 * next sample's plan (lib/py/py_plan.c): before 3.11 the frame objects
 * seen before stay in the memo after the walk's chain while the
 * outermost frame is the same (a later, deeper sample then finds its
 * newest frames in the batched read), never more of them than the memo
 * or the chain held; a new outermost call, a stack cut short, or 3.11+
 * (frames in the data stack, planned through the chunk window) keep
 * only the chain.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/py_internal.h"
#include "lib/py/py_plan.h"
#include "lib/py/py_walk.h"

#include <string.h>

/* A memo that last saw a chain of n frames, innermost first, each
 * frame's address 0x1000 * (depth + 1) + base, the outermost last. */
static void chain(uint64_t *frames, int n, uint64_t base)
{
    for (int i = 0; i < n; i++)
        frames[i] = 0x1000u * (uint64_t)(n - i) + base;
}

/* Commits a walk of n frames (same addresses per depth as chain())
 * over a memo that knew `known`; returns the memo's frame count and
 * leaves its frames in *out. */
static int commit(int frame_objects, int known, int walked, uint64_t walked_base, int truncated,
                  pymemo *out)
{
    static py_proc p;
    static pywalk w;

    memset(&p, 0, sizeof p);
    memset(&w, 0, sizeof w);
    memset(out, 0, sizeof *out);
    p.L.frame_objects = (uint32_t)frame_objects;
    chain(out->frames, known, 0);
    out->nframes = known;
    out->bottom = known ? out->frames[known - 1] : 0;
    chain(w.next.frames, walked, walked_base);
    w.next.nframes = walked;
    w.bottom = walked ? w.next.frames[walked - 1] : 0;
    w.truncated = truncated;
    pyplan_commit(&p, out, &w);
    assert_int_equal(out->bottom, w.bottom);
    return out->nframes;
}

/* Is addr among the memo's frames? */
static int has(const pymemo *m, uint64_t addr)
{
    for (int i = 0; i < m->nframes; i++)
        if (m->frames[i] == addr)
            return 1;
    return 0;
}

static void test_known_frames_kept(void **state)
{
    (void)state;
    pymemo m;

    /* known 40 deep, now 10 deep in the same outermost call: the chain
     * first (innermost first), then the 30 others, all planned */
    assert_int_equal(commit(1, 40, 10, 0, 0, &m), 40);
    for (int i = 0; i < 10; i++)
        assert_int_equal(m.frames[i], 0x1000u * (uint64_t)(10 - i));
    for (int d = 1; d <= 40; d++)
        assert_true(has(&m, 0x1000u * (uint64_t)d));
    /* deeper than known: the walk's chain as it is */
    assert_int_equal(commit(1, 10, 40, 0, 0, &m), 40);
    for (int i = 0; i < 40; i++)
        assert_int_equal(m.frames[i], 0x1000u * (uint64_t)(40 - i));
}

static void test_no_growth_past_the_stack(void **state)
{
    (void)state;
    static py_proc p;
    static pywalk w;
    pymemo m;

    /* the same outermost frame (0x100), 20 frames known, a chain of 10
     * other frames: the memo stays at 20, the chain and the 10 known
     * frames seen last (the front of the known list) */
    memset(&p, 0, sizeof p);
    memset(&w, 0, sizeof w);
    memset(&m, 0, sizeof m);
    p.L.frame_objects = 1;
    for (int i = 0; i < 20; i++)
        m.frames[i] = 0x10000u + 0x100u * (uint64_t)i;
    m.frames[19] = 0x100;
    m.nframes = 20;
    m.bottom = 0x100;
    for (int i = 0; i < 10; i++)
        w.next.frames[i] = 0x90000u + 0x100u * (uint64_t)i;
    w.next.frames[9] = 0x100;
    w.next.nframes = 10;
    w.bottom = 0x100;
    pyplan_commit(&p, &m, &w);
    assert_int_equal(m.nframes, 20);
    for (int i = 0; i < 10; i++)
        assert_int_equal(m.frames[i], w.next.frames[i]);
    for (int i = 0; i < 10; i++)
        assert_int_equal(m.frames[10 + i], 0x10000u + 0x100u * (uint64_t)i);
}

static void test_only_the_chain(void **state)
{
    (void)state;
    pymemo m;

    /* another outermost frame: a new call, its frames start over */
    assert_int_equal(commit(1, 40, 10, 8, 0, &m), 10);
    assert_int_equal(m.frames[0], 0x1000u * 10 + 8);
    /* a stack cut short says nothing of the frames beyond it */
    assert_int_equal(commit(1, 40, 10, 0, 1, &m), 10);
    /* 3.11+: the chunk window plans the data stack */
    assert_int_equal(commit(0, 40, 10, 0, 0, &m), 10);
    assert_int_equal(m.frames[0], 0x1000u * 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_frames_kept),
        cmocka_unit_test(test_no_growth_past_the_stack),
        cmocka_unit_test(test_only_the_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
