/*
 * test_gpu_idle.c — idle GPU time charged to the feeding threads' stacks
 * (lib/export/common/gpu_idle.c), over the scenario of
 * tests/support/idle_traces.h written through the writer and read back:
 * busy, kernel, copies-only and idle time to the ns, each charge to its
 * stack, the non-feeding thread never charged, a --from/--to window, a
 * short horizon that still finds the same answer with bounded memory,
 * the interval union under every arrival order, kernel-busy buckets and
 * NVML's mean beside them, retiring by streams (the same figures with a
 * few intervals held; a stream first seen behind the others is late),
 * and every allocation failing in turn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/util/alloc.h"
#include "lib/util/spill.h"
#include "lib/export/common/gpu_idle.h"
#include "tests/support/idle_traces.h"

typedef struct got {
    const trc_reader *r;
    uint64_t by_fn[2][8];   /* [kind][function index] */
    uint64_t other;         /* charges to stacks not named below */
    uint64_t worker;        /* charges to the thread that never launches */
} got;

static const char *fns[] = {"step", "next", "sleep", "work", NULL};

static trc_status collect(void *ctx, uint32_t device, exp_gpu_idle_kind kind, uint32_t thread,
                          uint32_t stack, uint64_t ns)
{
    got *g = ctx;
    assert_int_equal(device, 0);
    const trc_thread *t = trc_reader_thread(g->r, thread);
    assert_non_null(t);
    if (strcmp(t->name, "worker") == 0)
        g->worker += ns;
    const trc_stack *s = trc_reader_stack(g->r, stack);
    const trc_frame *f = s ? trc_reader_frame(g->r, s->frame) : NULL;
    for (int i = 0; fns[i]; i++)
        if (f && strcmp(f->function, fns[i]) == 0) {
            g->by_fn[kind][i] += ns;
            return TRC_OK;
        }
    g->other += ns;
    return TRC_OK;
}

/* The scenario, read back into a reader positioned at the start. */
static trc_reader *open_trace(void)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(idle_trace_write(fileno(f)), TRC_OK);
    assert_int_equal(lseek(fileno(f), 0, SEEK_SET), 0);
    int fd = dup(fileno(f));
    fclose(f);
    trc_status st;
    trc_reader *r = trc_reader_open_fd(fd, "idle.trc", &st);
    assert_non_null(r);
    return r;
}

/* Runs the stage over the scenario; *dev and *g filled.  Returns the
 * first status other than TRC_OK (then nothing is filled). */
static trc_status run(const exp_gpu_idle_options *o, exp_gpu_idle_device *dev, got *g,
                      exp_gpu_idle_stats *stats)
{
    trc_reader *r = open_trace();
    exp_gpu_idle *gi = exp_gpu_idle_new(o);
    trc_status st = gi ? TRC_OK : TRC_ERR_NOMEM;
    const trc_event *ev;
    trc_status rs;
    while (st == TRC_OK && (rs = trc_reader_next(r, &ev)) == TRC_OK)
        st = exp_gpu_idle_event(gi, r, ev);
    if (st == TRC_OK)
        st = exp_gpu_idle_finish(gi, r);
    if (st == TRC_OK) {
        assert_int_equal(exp_gpu_idle_devices(gi), 1);
        exp_gpu_idle_device_at(gi, 0, dev);
        memset(g, 0, sizeof *g);
        g->r = r;
        st = exp_gpu_idle_each(gi, collect, g);
        if (stats)
            exp_gpu_idle_get_stats(gi, stats);
    }
    exp_gpu_idle_free(gi);
    trc_reader_free(r);
    return st;
}

static void check_whole(const exp_gpu_idle_device *d, const got *g)
{
    assert_int_equal(d->device, 0);
    assert_int_equal(d->span_ns, IDLE_SPAN_NS);
    assert_int_equal(d->busy_ns, IDLE_BUSY_NS);
    assert_int_equal(d->kernel_ns, IDLE_KERNEL_NS);
    assert_int_equal(d->copy_only_ns, IDLE_COPY_ONLY_NS);
    assert_int_equal(d->idle_ns, IDLE_IDLE_NS);
    assert_int_equal(g->by_fn[EXP_GPU_IDLE_NONE][0], IDLE_STEP_NS);
    assert_int_equal(g->by_fn[EXP_GPU_IDLE_NONE][1], IDLE_NEXT_NS);
    assert_int_equal(g->by_fn[EXP_GPU_IDLE_NONE][2], IDLE_SLEEP_NS);
    assert_int_equal(g->by_fn[EXP_GPU_IDLE_COPY_ONLY][0], IDLE_STEP_COPY_NS);
    assert_int_equal(g->by_fn[EXP_GPU_IDLE_COPY_ONLY][1], 0);
    assert_int_equal(g->by_fn[EXP_GPU_IDLE_COPY_ONLY][2], 0);
    assert_int_equal(g->worker, 0);
    assert_int_equal(g->other, 0);
    /* the feeder was sampled all the time: every idle ns is charged */
    assert_int_equal(d->charged_idle_ns, IDLE_IDLE_NS);
    assert_int_equal(d->charged_copy_only_ns, IDLE_COPY_ONLY_NS);
}

static void test_whole_recording(void **state)
{
    exp_gpu_idle_device d;
    got g;
    assert_int_equal(run(NULL, &d, &g, NULL), TRC_OK);
    check_whole(&d, &g);
}

/* A horizon just over the writing delay plus a sample period (an
 * activity arrives 3 ms after its end): the same answer, with only a
 * few samples and intervals held at a time. */
static void test_short_horizon(void **state)
{
    exp_gpu_idle_options o = {0, 0, 0, 0, 5 * IDLE_MS, 0};
    exp_gpu_idle_device d;
    exp_gpu_idle_stats s;
    got g;
    assert_int_equal(run(&o, &d, &g, &s), TRC_OK);
    check_whole(&d, &g);
    assert_true(s.peak_pending <= 2 * 6);
    assert_true(s.peak_intervals <= 4);
    assert_int_equal(s.late, 0);
    /* samples wait for their process's activities, not for later
     * samples: the folded runs longer than the horizon (main's 8 samples
     * in step(), the worker's 20) never reach back past the retired point */
    assert_int_equal(s.late_samples, 0);
}

/* --from 5 ms --to 15 ms: busy [5, 8) and [10, 12 ms + 123), idle
 * [8, 10) (next) and [12 ms + 123, 15) (sleep), copies only [6, 8). */
static void test_window(void **state)
{
    exp_gpu_idle_options o = {1, 1, 5 * IDLE_MS, 15 * IDLE_MS, 0, 0};
    exp_gpu_idle_device d;
    got g;
    assert_int_equal(run(&o, &d, &g, NULL), TRC_OK);
    assert_int_equal(d.span_ns, 10 * IDLE_MS);
    assert_int_equal(d.busy_ns, 5 * IDLE_MS + 123);
    assert_int_equal(d.kernel_ns, 3 * IDLE_MS + 123);
    assert_int_equal(d.idle_ns, 5 * IDLE_MS - 123);
    assert_int_equal(g.by_fn[EXP_GPU_IDLE_NONE][0], 0);
    assert_int_equal(g.by_fn[EXP_GPU_IDLE_NONE][1], 2 * IDLE_MS);
    assert_int_equal(g.by_fn[EXP_GPU_IDLE_NONE][2], 3 * IDLE_MS - 123);
    assert_int_equal(g.by_fn[EXP_GPU_IDLE_COPY_ONLY][0], 2 * IDLE_MS);
    assert_int_equal(g.worker, 0);
}

/* Kernel-busy ns per 2 ms bucket, through a horizon that retires
 * intervals on the way: [1, 6) ms and [10 ms, 12 ms + 123). */
static void test_busy_buckets(void **state)
{
    static const uint64_t want[10] = {1 * IDLE_MS, 2 * IDLE_MS, 2 * IDLE_MS, 0, 0,
                                      2 * IDLE_MS, 123, 0, 0, 0};
    for (int h = 0; h < 2; h++) {
        exp_gpu_idle_options o = {0, 0, 0, 0, h ? 5 * IDLE_MS : 0, 2 * IDLE_MS};
        trc_reader *r = open_trace();
        exp_gpu_idle *gi = exp_gpu_idle_new(&o);
        assert_non_null(gi);
        const trc_event *ev;
        while (trc_reader_next(r, &ev) == TRC_OK)
            assert_int_equal(exp_gpu_idle_event(gi, r, ev), TRC_OK);
        assert_int_equal(exp_gpu_idle_finish(gi, r), TRC_OK);
        assert_int_equal(exp_gpu_idle_span_start(gi), IDLE_T0);
        size_t n;
        const uint64_t *b = exp_gpu_idle_busy_buckets(gi, 0, &n);
        assert_int_equal(n, 10);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(b[i], want[i]);
        exp_gpu_idle_device d;
        exp_gpu_idle_device_at(gi, 0, &d);
        /* NVML: 100 and 0 */
        assert_int_equal(d.nvml_util_n, 2);
        assert_true(d.nvml_util_mean == 50.0);
        exp_gpu_idle_free(gi);
        trc_reader_free(r);
    }
}

/* The union of busy intervals does not depend on their arrival order. */
static void test_union_any_order(void **state)
{
    static const int64_t iv[][2] = {{10, 20}, {30, 40}, {15, 35}, {50, 60}, {5, 8},
                                    {8, 9},   {70, 80}, {60, 61}, {0, 1},   {45, 46}};
    enum { N = sizeof iv / sizeof iv[0] };
    /* truth: [0,1) [5,9) [10,40) [45,46) [50,61) [70,80) = 1+4+30+1+11+10 */
    const uint64_t truth = 57;
    unsigned seed = 1;
    for (int round = 0; round < 200; round++) {
        int perm[N];
        for (int i = 0; i < N; i++)
            perm[i] = i;
        for (int i = N - 1; i > 0; i--) {
            seed = seed * 1103515245u + 12345u;
            int j = (int)((seed >> 16) % (unsigned)(i + 1));
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        exp_gpu_idle_options o = {1, 1, 0, 100, 0, 0};
        exp_gpu_idle *gi = exp_gpu_idle_new(&o);
        assert_non_null(gi);
        trc_segment seg;
        memset(&seg, 0, sizeof seg);
        trc_event ev;
        memset(&ev, 0, sizeof ev);
        ev.type = TRC_EV_SEGMENT;
        ev.u.segment = &seg;
        assert_int_equal(exp_gpu_idle_event(gi, NULL, &ev), TRC_OK);
        for (int i = 0; i < N; i++) {
            memset(&ev, 0, sizeof ev);
            ev.type = TRC_EV_GPU_MEMSET;
            ev.u.memset.start_ns = iv[perm[i]][0];
            ev.u.memset.end_ns = iv[perm[i]][1];
            assert_int_equal(exp_gpu_idle_event(gi, NULL, &ev), TRC_OK);
        }
        assert_int_equal(exp_gpu_idle_finish(gi, NULL), TRC_OK);
        exp_gpu_idle_device d;
        exp_gpu_idle_device_at(gi, 0, &d);
        assert_int_equal(d.busy_ns, truth);
        assert_int_equal(d.kernel_ns, 0);
        assert_int_equal(d.idle_ns, 100 - truth);
        exp_gpu_idle_free(gi);
    }
}

/* Feeds kernel [s, e) of `stream` on device 0 to gi. */
static void feed_kernel(exp_gpu_idle *gi, uint32_t stream, int64_t s, int64_t e)
{
    trc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = TRC_EV_GPU_KERNEL;
    ev.u.kernel.where.pid = 7;
    ev.u.kernel.where.stream = stream;
    ev.u.kernel.start_ns = s;
    ev.u.kernel.end_ns = e;
    assert_int_equal(exp_gpu_idle_event(gi, NULL, &ev), TRC_OK);
}

/* A stage that retires by streams gives the horizon's figures, each
 * stream's kernels arriving in start order but the streams in a random
 * order within each round, while holding a few intervals where the
 * horizon holds them all; a stream first seen behind the point the
 * others reached has the logged intervals back and is not late. */
static void test_stream_order(void **state)
{
    enum { STREAMS = 3, PER = 1000 };
    exp_gpu_idle *gi[2];
    exp_gpu_idle_stats st[2];
    unsigned seed = 7;
    trc_segment seg;
    trc_event ev;

    memset(&seg, 0, sizeof seg);
    memset(&ev, 0, sizeof ev);
    ev.type = TRC_EV_SEGMENT;
    ev.u.segment = &seg;
    for (int m = 0; m < 2; m++) {
        exp_gpu_idle_options o = {0, 0, 0, 0, 0, 1000};
        assert_non_null(gi[m] = exp_gpu_idle_new(&o));
        if (m)
            exp_gpu_idle_stream_order(gi[m]);
        assert_int_equal(exp_gpu_idle_event(gi[m], NULL, &ev), TRC_OK);
    }
    for (int i = 0; i < PER; i++) {
        int order[STREAMS] = {0, 1, 2};
        for (int j = STREAMS - 1; j > 0; j--) {
            seed = seed * 1103515245u + 12345u;
            int x = (int)((seed >> 16) % (unsigned)(j + 1)), t = order[j];
            order[j] = order[x];
            order[x] = t;
        }
        for (int j = 0; j < STREAMS; j++) {
            int k = order[j];
            /* per launch i, the streams overlap one another; gaps between i */
            int64_t s = (int64_t)i * 1000 + k * 30, e = s + 60 + (i % 3) * 20;
            for (int m = 0; m < 2; m++)
                feed_kernel(gi[m], (uint32_t)k, s, e);
        }
    }
    for (int m = 0; m < 2; m++) {
        assert_int_equal(exp_gpu_idle_finish(gi[m], NULL), TRC_OK);
        exp_gpu_idle_get_stats(gi[m], &st[m]);
    }
    exp_gpu_idle_device d[2];
    size_t n[2];
    const uint64_t *b[2];
    for (int m = 0; m < 2; m++) {
        exp_gpu_idle_device_at(gi[m], 0, &d[m]);
        b[m] = exp_gpu_idle_busy_buckets(gi[m], 0, &n[m]);
    }
    /* truth: per i, [1000 i, 1000 i + 60 + (i % 3) * 20 + 60) */
    uint64_t truth = 0;
    for (int i = 0; i < PER; i++)
        truth += 120 + (uint64_t)(i % 3) * 20;
    assert_int_equal(d[0].kernel_ns, truth);
    assert_int_equal(d[1].kernel_ns, truth);
    assert_int_equal(d[1].busy_ns, d[0].busy_ns);
    assert_int_equal(d[1].span_ns, d[0].span_ns);
    assert_int_equal(n[1], n[0]);
    assert_int_equal(n[0], PER);
    for (size_t i = 0; i < n[0]; i++)
        assert_int_equal(b[1][i], b[0][i]);
    assert_int_equal(st[0].late + st[1].late, 0);
    assert_true(st[0].peak_intervals >= 2 * PER); /* all of them, both sets */
    assert_true(st[1].peak_intervals <= 2 * (64 + STREAMS)); /* scanned once in 64 */
    for (int m = 0; m < 2; m++)
        exp_gpu_idle_free(gi[m]);

    /* a new stream's first kernels behind the other's 1000, within the
     * horizon: not late either way, the logged intervals (from the
     * temporary file too) come back, and the figures are the same */
    for (int m = 0; m < 2; m++) {
        exp_gpu_idle_options o = {0, 0, 0, 0, 0, 1000};
        assert_non_null(gi[m] = exp_gpu_idle_new(&o));
        if (m)
            exp_gpu_idle_stream_order(gi[m]);
        assert_int_equal(exp_gpu_idle_event(gi[m], NULL, &ev), TRC_OK);
        for (int i = 0; i < 1000; i++)
            feed_kernel(gi[m], 0, i * 100, i * 100 + 10);
        feed_kernel(gi[m], 1, 20, 30);
        feed_kernel(gi[m], 1, 5005, 5025); /* overlaps [5000, 5010) */
        feed_kernel(gi[m], 1, 50020, 50030);
        assert_int_equal(exp_gpu_idle_finish(gi[m], NULL), TRC_OK);
        exp_gpu_idle_get_stats(gi[m], &st[m]);
        exp_gpu_idle_device_at(gi[m], 0, &d[m]);
        b[m] = exp_gpu_idle_busy_buckets(gi[m], 0, &n[m]);
    }
    assert_int_equal(st[0].late + st[1].late, 0);
    assert_int_equal(d[0].kernel_ns, 1000 * 10 + 10 + 15 + 10);
    assert_int_equal(d[1].kernel_ns, d[0].kernel_ns);
    assert_int_equal(n[1], n[0]);
    for (size_t i = 0; i < n[0]; i++)
        assert_int_equal(b[1][i], b[0][i]);
    for (int m = 0; m < 2; m++)
        exp_gpu_idle_free(gi[m]);
}

/* One run of the stream-order scenario above (a stream first seen behind
 * the other, its logged intervals coming back from the temporary file):
 * TRC_OK with d's figures, or the first failure's status. */
static trc_status stream_order_run(exp_gpu_idle_device *d)
{
    static const int64_t late[3][2] = {{20, 30}, {5005, 5025}, {50020, 50030}};
    exp_gpu_idle_options o = {0, 0, 0, 0, 0, 1000};
    exp_gpu_idle *gi = exp_gpu_idle_new(&o);
    trc_segment seg;
    trc_event ev;
    trc_status st;

    assert_non_null(gi);
    exp_gpu_idle_stream_order(gi);
    memset(&seg, 0, sizeof seg);
    memset(&ev, 0, sizeof ev);
    ev.type = TRC_EV_SEGMENT;
    ev.u.segment = &seg;
    st = exp_gpu_idle_event(gi, NULL, &ev);
    ev.type = TRC_EV_GPU_KERNEL;
    ev.u.kernel.where.pid = 7;
    for (int i = 0; i < 1003 && st == TRC_OK; i++) {
        ev.u.kernel.where.stream = i < 1000 ? 0 : 1;
        ev.u.kernel.start_ns = i < 1000 ? i * 100 : late[i - 1000][0];
        ev.u.kernel.end_ns = i < 1000 ? i * 100 + 10 : late[i - 1000][1];
        st = exp_gpu_idle_event(gi, NULL, &ev);
    }
    if (st == TRC_OK)
        st = exp_gpu_idle_finish(gi, NULL);
    if (st == TRC_OK)
        exp_gpu_idle_device_at(gi, 0, d);
    exp_gpu_idle_free(gi);
    return st;
}

/* The log's temporary file failing at each of its operations in turn:
 * TRC_ERR_IO, or the figures of a run without failures once a run needs
 * no more operations than those that worked. */
static void test_stream_order_ioerr(void **state)
{
    exp_gpu_idle_device want, res;
    int failures = 0, done = 0;

    assert_int_equal(stream_order_run(&want), TRC_OK);
    assert_int_equal(want.kernel_ns, 1000 * 10 + 10 + 15 + 10);
    for (long n = 1; n < 10000 && !done; n++) {
        trcu_spill_fail_after(n);
        trc_status st = stream_order_run(&res);
        done = trcu_spill_count() < n;
        trcu_spill_fail_after(-1);
        if (st == TRC_OK) {
            assert_int_equal(res.kernel_ns, want.kernel_ns);
            assert_int_equal(res.busy_ns, want.busy_ns);
            assert_int_equal(res.span_ns, want.span_ns);
        } else {
            assert_int_equal(st, TRC_ERR_IO);
            failures++;
        }
    }
    assert_true(done);
    assert_true(failures >= 3); /* the log was written and read back */
}

static void test_root_names(void **state)
{
    char b[64];
    exp_gpu_idle_root(b, sizeof b, 0, EXP_GPU_IDLE_NONE);
    assert_string_equal(b, "[GPU 0 idle]");
    exp_gpu_idle_root(b, sizeof b, 3, EXP_GPU_IDLE_COPY_ONLY);
    assert_string_equal(b, "[GPU 3 copies only]");
}

/* The failure hook armed for the stage's calls only (the reader
 * allocates too): *left allocations to go before one fails. */
static void arm(long left) { trc_alloc_fail_after(left > 0 ? left : 1); }
static void disarm(long *left)
{
    *left -= trc_alloc_count();
    trc_alloc_fail_after(-1);
}

/* Every allocation of the stage failing in turn: TRC_ERR_NOMEM, no leak,
 * and the same answer once nothing fails. */
static void test_alloc_failures(void **state)
{
    exp_gpu_idle_options o = {0, 0, 0, 0, 5 * IDLE_MS, 0};
    int failed = 0;
    for (long n = 1; n < 2000; n++) {
        long left = n;
        trc_reader *r = open_trace();
        arm(left);
        exp_gpu_idle *gi = exp_gpu_idle_new(&o);
        disarm(&left);
        trc_status st = gi ? TRC_OK : TRC_ERR_NOMEM;
        const trc_event *ev;
        while (st == TRC_OK && trc_reader_next(r, &ev) == TRC_OK) {
            arm(left);
            st = exp_gpu_idle_event(gi, r, ev);
            disarm(&left);
        }
        if (st == TRC_OK) {
            arm(left);
            st = exp_gpu_idle_finish(gi, r);
            disarm(&left);
        }
        if (st == TRC_OK) {
            exp_gpu_idle_device d;
            got g;
            exp_gpu_idle_device_at(gi, 0, &d);
            memset(&g, 0, sizeof g);
            g.r = r;
            assert_int_equal(exp_gpu_idle_each(gi, collect, &g), TRC_OK);
            check_whole(&d, &g);
            exp_gpu_idle_free(gi);
            trc_reader_free(r);
            break;
        }
        assert_int_equal(st, TRC_ERR_NOMEM);
        failed++;
        exp_gpu_idle_free(gi);
        trc_reader_free(r);
    }
    assert_true(failed > 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_recording), cmocka_unit_test(test_short_horizon),
        cmocka_unit_test(test_window),          cmocka_unit_test(test_union_any_order),
        cmocka_unit_test(test_root_names),      cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_busy_buckets),    cmocka_unit_test(test_stream_order),
        cmocka_unit_test(test_stream_order_ioerr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
