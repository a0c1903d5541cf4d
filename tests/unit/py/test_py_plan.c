/*
 * test_py_plan.c — what a good walk leaves in a thread's memo for the
 * next sample's plan (lib/py/py_plan.c): before 3.11 the frame objects
 * seen before stay in the memo after the walk's chain while the
 * outermost frame is the same (a later, deeper sample then finds its
 * newest frames in the batched read), never more of them than the memo
 * or the chain held; a new outermost call, a stack cut short, or 3.11+
 * (frames in the data stack, planned through the chunk window) keep
 * only the chain.  Before 3.11 the newest frames of the last reads are
 * planned apart, last before the thread state.
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

/* The ranges planned at place, in reading order: their addresses. */
static int planned_at(const pysnap *s, int place, uint64_t *addr, uint32_t *len, int max)
{
    pysnap_range r[PYSNAP_MAX_PLAN];
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if ((int)(s->r[i].order >> 16) == place && n < PYSNAP_MAX_PLAN)
            r[n++] = s->r[i];
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && r[j - 1].order > r[j].order; j--) {
            pysnap_range t = r[j];
            r[j] = r[j - 1];
            r[j - 1] = t;
        }
    for (int i = 0; i < n && i < max; i++) {
        addr[i] = r[i].addr;
        len[i] = r[i].len;
    }
    return n;
}

/* Before 3.11 the newest frames of the last reads, good and torn, are
 * planned as pieces of their own after every page and right before
 * the thread state, the latest last: a short call's frame is most often
 * where such a frame was, and copied that late it is rarely stale. */
static void test_newest_frames_last(void **state)
{
    (void)state;
    static py_proc p;
    static pywalk w;
    pymemo m;
    uint64_t addr[PYSNAP_MAX_PLAN];
    uint32_t len[PYSNAP_MAX_PLAN];
    const uint64_t ts = 0x7000000;

    static pymem mem;
    memset(&p, 0, sizeof p);
    memset(&m, 0, sizeof m);
    assert_int_equal(pymem_init_local(&mem), 0);
    pysnap_init(&p.snap, &mem);   /* only planned here, never fetched */
    p.L.frame_objects = 1;
    p.fr_len = 120;
    p.ts_len = 200;
    /* a good walk of 3 frames, newest 0x5100 */
    memset(&w, 0, sizeof w);
    w.next.frames[0] = 0x5100, w.next.frames[1] = 0x6100, w.next.frames[2] = 0x8100;
    w.next.nframes = 3;
    w.leaf = 0x5100;
    w.bottom = 0x8100;
    pyplan_commit(&p, &m, &w);
    assert_int_equal(m.nleaves, 1);
    /* a torn walk whose newest frame was 0x9300 (read stale) */
    memset(&w, 0, sizeof w);
    w.next.frames[0] = 0x9300;
    w.next.nframes = 1;
    pyplan_learn(&m, &w);
    assert_int_equal(m.nleaves, 2);
    assert_int_equal(m.leaves[1], 0x9300);

    pysnap_reset(&p.snap);
    pyplan_stack(&p, &m, ts);
    /* the pages first (outermost in), then the two frames, the latest
     * seen last, then the thread state */
    int n = planned_at(&p.snap, PYSNAP_LATE, addr, len, PYSNAP_MAX_PLAN);
    assert_int_equal(n, 3);
    assert_int_equal(addr[0], 0x5100);
    assert_int_equal(len[0], 120);
    assert_int_equal(addr[1], 0x9300);
    assert_int_equal(addr[2], ts);
    assert_int_equal(len[2], 200);
    /* the pages of all four frames stay in the read, before them */
    n = planned_at(&p.snap, PYSNAP_MIDDLE, addr, len, PYSNAP_MAX_PLAN);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++)
        assert_int_equal(len[i], 4096);

    /* seen again: moved to the end; the oldest dropped past the limit */
    for (int i = 0; i < PYMEMO_LEAVES - 1; i++) {
        memset(&w, 0, sizeof w);
        w.next.frames[0] = i == 0 ? 0x5100 : 0xa000u + 0x200u * (uint64_t)i;
        w.next.nframes = 1;
        pyplan_learn(&m, &w);
    }
    assert_int_equal(m.nleaves, PYMEMO_LEAVES);
    assert_int_equal(m.leaves[0], 0x9300);
    assert_int_equal(m.leaves[1], 0x5100);
    memset(&w, 0, sizeof w);
    w.next.frames[0] = 0xf000;
    w.next.nframes = 1;
    pyplan_learn(&m, &w);
    assert_int_equal(m.leaves[0], 0x5100);
    assert_int_equal(m.leaves[PYMEMO_LEAVES - 1], 0xf000);

    /* 3.11+: frames live in the data stack, planned through the window */
    p.L.frame_objects = 0;
    pysnap_reset(&p.snap);
    pyplan_stack(&p, &m, ts);
    for (int i = 0; i < p.snap.n; i++)
        assert_false(p.snap.r[i].len == 120);
    pysnap_cleanup(&p.snap);
}

/* Before 3.11 a torn read's newest frame that was referenced but not
 * running is kept with its bytes for the next try (py_walk.c accepts it
 * when read alike again: a frame caught returning or resuming); a good
 * read forgets it. */
static void test_held_frame_kept_for_the_next_try(void **state)
{
    (void)state;
    static py_proc p;
    static pywalk w;
    pymemo m;

    memset(&p, 0, sizeof p);
    memset(&m, 0, sizeof m);
    memset(&w, 0, sizeof w);
    p.L.frame_objects = 1;
    w.next.frames[0] = 0x5100;
    w.next.nframes = 1;
    w.next.held = 0x5100;
    memset(w.next.held_bytes, 0xab, sizeof w.next.held_bytes);
    pyplan_learn(&m, &w);
    assert_int_equal(m.held, 0x5100);
    assert_int_equal(m.held_bytes[0], 0xab);
    assert_int_equal(m.held_bytes[PY_FR_HELD - 1], 0xab);
    /* a torn read that held nothing: nothing held */
    memset(&w, 0, sizeof w);
    w.next.frames[0] = 0x5100;
    w.next.nframes = 1;
    pyplan_learn(&m, &w);
    assert_int_equal(m.held, 0);
    /* held again, then a good read */
    w.next.held = 0x5100;
    pyplan_learn(&m, &w);
    assert_int_equal(m.held, 0x5100);
    memset(&w, 0, sizeof w);
    w.next.frames[0] = 0x5100;
    w.next.nframes = 1;
    w.leaf = w.bottom = 0x5100;
    pyplan_commit(&p, &m, &w);
    assert_int_equal(m.held, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_frames_kept),
        cmocka_unit_test(test_no_growth_past_the_stack),
        cmocka_unit_test(test_only_the_chain),
        cmocka_unit_test(test_newest_frames_last),
        cmocka_unit_test(test_held_frame_kept_for_the_next_try),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
