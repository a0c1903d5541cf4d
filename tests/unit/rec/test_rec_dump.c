/*
 * test_rec_dump.c — trec --dump's read of one process
 * (rec_dump_read_process, lib/rec/dump_stacks.c) over a synthetic
 * CPython 3.13 image (tests/support/py_image.h): a thread list caught
 * torn (the head's `next` naming a thread state freed meanwhile, as a
 * thread ending between two reads leaves it) is read again, and the
 * threads then shown are the list's as it holds still; a list torn at
 * every read shows the process without threads, saying so.  Locals a
 * build's layout cannot be trusted for are not shown, saying so.  The hook
 * between reads is what changes the image, as the target would.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/rec/dump.h"
#include "lib/rec/rec_int.h"
#include "lib/util/alloc.h"
#include "tests/support/py_image.h"
#include "tests/unit/py/py_debugoff_blocks.h"

typedef struct tear {
    pyimg *im;
    uint64_t stale;      /* a freed thread state: names no interpreter */
    int heal_at;         /* the re-read before which the list holds still (0: never) */
    int rereads;
} tear;

static void on_reread(void *ctx, int k)
{
    tear *t = ctx;
    t->rereads = k;
    if (k == t->heal_at)
        pyimg_put64(t->im->ts[0] + t->im->L.ts_next, t->im->ts[1]);
}

/* Dumps the image (with locals when asked) with its head's next torn
 * as tr says (tr NULL: not torn): the process read, one, freed by the
 * caller. */
static rec_dump_proc *dump_image(pyimg *im, tear *tr, int locals)
{
    rec_target t;
    memset(&t, 0, sizeof t);
    t.pid = getpid();
    t.stat_fd = t.statm_fd = t.pid_fd = -1;
    t.py = pyimg_attach(im);
    t.tcap = 16;
    t.tinfo = trc_calloc(t.tcap, sizeof *t.tinfo);
    t.frames = trc_calloc(REC_MAX_DEPTH, sizeof *t.frames);
    assert_non_null(t.tinfo);
    assert_non_null(t.frames);

    if (tr) {
        tr->im = im;
        tr->stale = pyimg_take(im, PY_TS_MAX);   /* zeroed: interp NULL */
        pyimg_put64(im->ts[0] + im->L.ts_next, tr->stale);
        rec_dump_set_reread_hook(on_reread, tr);
    }
    rec_dump_proc *p = trc_calloc(1, sizeof *p);
    assert_non_null(p);
    assert_int_equal(rec_dump_read_process(&t, p, locals), 0);
    rec_dump_set_reread_hook(NULL, NULL);

    /* the frames are the reader's: what is asserted is taken now */
    for (int i = 0; i < p->n_threads; i++) {
        rec_dump_thread *d = &p->threads[i];
        if (d->python && d->depth == 2) {
            assert_string_equal(d->frames[0]->function, "App.inner");
            assert_string_equal(d->frames[1]->function, "App.outer");
            assert_int_equal(d->frames[1]->line, PYIMG_FIRST_LINE + 3);
        }
    }
    py_proc_free(t.py);
    trc_free(t.tinfo);
    trc_free(t.frames);
    return p;
}

static void test_torn_list_read_again(void **state)
{
    pyimg im;
    tear tr = { 0 };
    tr.heal_at = 1;
    pyimg_build(&im, RAW_313, 0);
    rec_dump_proc *p = dump_image(&im, &tr, 0);

    assert_int_equal(tr.rereads, 1);
    assert_false(p->torn);
    int py = 0;
    int64_t tids[2] = { 0, 0 };
    for (int i = 0; i < p->n_threads; i++) {
        if (!p->threads[i].python)
            continue;   /* this test's own threads: no thread state names them */
        assert_true(py < 2);
        assert_int_equal(p->threads[i].depth, 2);
        tids[py++] = p->threads[i].tid;
    }
    assert_int_equal(py, 2);
    assert_int_equal(tids[0], 1001);
    assert_int_equal(tids[1], 1002);
    assert_int_equal(p->threads[0].holds_gil, 1);
    rec_dump_procs_free(p, 1);
    free(im.mem);
}

static void test_torn_list_never_still(void **state)
{
    pyimg im;
    tear tr = { 0 };
    pyimg_build(&im, RAW_313, 0);
    rec_dump_proc *p = dump_image(&im, &tr, 0);

    assert_true(tr.rereads >= 1);   /* read again, a bounded number of times */
    assert_true(p->torn);
    assert_int_equal(p->n_threads, 0);
    rec_dump_procs_free(p, 1);
    free(im.mem);
}

/* A 3.13 block that puts a float's value elsewhere than the generated
 * table says: the stacks are shown, their locals not, saying why. */
static void test_locals_not_supported(void **state)
{
    pyimg im;
    pyimg_build(&im, RAW_313, 0);
    pyimg_move_field(&im, "fl.ob_fval");
    rec_dump_proc *p = dump_image(&im, NULL, 1);

    int py = 0;
    for (int i = 0; i < p->n_threads; i++) {
        const rec_dump_thread *d = &p->threads[i];
        if (!d->python)
            continue;
        py++;
        assert_int_equal(d->depth, 2);
        assert_int_equal(d->n_locals, 0);
        assert_non_null(d->locals_missing);
        assert_string_equal(d->locals_missing, "locals not supported on this build");
    }
    assert_int_equal(py, 2);
    rec_dump_procs_free(p, 1);
    free(im.mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torn_list_read_again),
        cmocka_unit_test(test_torn_list_never_still),
        cmocka_unit_test(test_locals_not_supported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
