/*
 * test_gpu_callsite.c — the GPU activity ↔ launch call correlator
 * (lib/export/common/gpu_callsite.c): activities after or before their call,
 * several activities per call, unmatched activities and calls, launches
 * without Python frames, keys that differ only by pid, the give-up window,
 * segment boundaries, memory that follows unmatched items only, a
 * converter's selection (activities refused, launching threads), leaf
 * names, and failure of every allocation.  Events are built by hand (so
 * every order can be tried) over a reader that knows two threads; one
 * test goes through the real writer and reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/alloc.h"
#include "lib/export/common/gpu_callsite.h"
#include "tests/support/folded_traces.h"

#define PID_A 10
#define PID_B 20

typedef struct got {
    exp_gpu_hit h[256];
    char names[256][96];
    size_t n;
    int fail_at;              /* emit returns TRC_ERR_NOMEM at this hit (1-based) */
} got;

static trc_status collect(void *ctx, trc_reader *r, const exp_gpu_hit *h)
{
    got *g = ctx;
    if (g->fail_at && (int)g->n + 1 == g->fail_at)
        return TRC_ERR_NOMEM;
    assert_true(g->n < 256);
    g->h[g->n] = *h;
    snprintf(g->names[g->n], sizeof g->names[0], "%s", h->name);
    g->h[g->n].name = g->names[g->n];
    g->n++;
    return TRC_OK;
}

/* A reader that has seen two threads, (PID_A, 11, "main") and (PID_B, 21),
 * and one Python stack, id 1 (the waiting-thread rule charges only
 * stacks with a Python frame); other stack ids are opaque numbers. */
typedef struct world {
    conv_tb *b;
    trc_reader *r;
    uint32_t ta, tb;          /* reader thread ids */
} world;

static void world_open(world *w)
{
    w->b = conv_tb_new();
    conv_tb_thread(w->b, PID_A, 11, "main");
    conv_tb_thread(w->b, PID_B, 21, "worker");
    uint32_t py = conv_tb_stack(w->b, 1, (uint32_t[]){conv_tb_frame(w->b, "main", "m.py", 3, 1)});
    assert_int_equal(py, 1);
    conv_tb_sample(w->b, 0, 1, py, 0, 0); /* so that the stack is written */
    assert_int_equal(conv_tb_status(w->b), TRC_OK);
    w->r = conv_tb_reader(w->b);
    assert_non_null(w->r);
    const trc_event *ev;
    while (trc_reader_next(w->r, &ev) == TRC_OK)
        ;
    w->ta = w->tb = 0;
    for (uint32_t i = 1; i <= trc_reader_thread_count(w->r); i++) {
        const trc_thread *t = trc_reader_thread(w->r, i);
        if (t && t->tid == 11)
            w->ta = i;
        if (t && t->tid == 21)
            w->tb = i;
    }
    assert_true(w->ta && w->tb);
}

static void world_close(world *w)
{
    trc_reader_free(w->r);
    conv_tb_free(w->b);
}

static trc_event api(uint32_t thread, uint32_t corr, uint32_t stack, uint32_t flags)
{
    trc_event e = {.type = TRC_EV_API_CALL};
    e.u.api.thread = thread;
    e.u.api.start_ns = 1000;
    e.u.api.end_ns = 2000;
    e.u.api.name = "cudaLaunchKernel";
    e.u.api.correlation = corr;
    e.u.api.stack = stack;
    e.u.api.flags = flags;
    return e;
}

static trc_event kernel(int64_t pid, uint32_t corr, const char *name, int64_t dur)
{
    trc_event e = {.type = TRC_EV_GPU_KERNEL};
    e.u.kernel.where.pid = pid;
    e.u.kernel.where.correlation = corr;
    e.u.kernel.name = name;
    e.u.kernel.start_ns = 5000;
    e.u.kernel.end_ns = 5000 + dur;
    return e;
}

static trc_event copy(int64_t pid, uint32_t corr, trc_copy_kind k, int64_t dur)
{
    trc_event e = {.type = TRC_EV_GPU_MEMCPY};
    e.u.memcpy.where.pid = pid;
    e.u.memcpy.where.correlation = corr;
    e.u.memcpy.copy_kind = k;
    e.u.memcpy.start_ns = 7000;
    e.u.memcpy.end_ns = 7000 + dur;
    return e;
}

static trc_event mset(int64_t pid, uint32_t corr, int64_t dur)
{
    trc_event e = {.type = TRC_EV_GPU_MEMSET};
    e.u.memset.where.pid = pid;
    e.u.memset.where.correlation = corr;
    e.u.memset.start_ns = 9000;
    e.u.memset.end_ns = 9000 + dur;
    return e;
}

static void feed(exp_gpu_callsite *c, world *w, trc_event e)
{
    assert_int_equal(exp_gpu_callsite_event(c, w->r, &e), TRC_OK);
}

#define LAUNCH TRC_API_LAUNCH

static void test_api_then_activity(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, api(w.ta, 5, 42, LAUNCH));
    assert_int_equal(g.n, 0);
    feed(c, &w, kernel(PID_A, 5, "gemm", 300));
    assert_int_equal(g.n, 1); /* emitted at once */
    assert_int_equal(g.h[0].origin, EXP_GPU_PYTHON);
    assert_int_equal(g.h[0].stack, 42);
    assert_int_equal(g.h[0].thread, w.ta);
    assert_int_equal(g.h[0].pid, PID_A);
    assert_int_equal(g.h[0].kind, EXP_GPU_KERNEL);
    assert_int_equal(g.h[0].dur_ns, 300);
    assert_string_equal(g.h[0].name, "gemm");
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.live, 0);
    assert_int_equal(st.peak_live, 1);
    assert_int_equal(st.python, 1);
    assert_int_equal(st.gpu_ns, 300);
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    assert_int_equal(g.n, 1);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

/* kernel() on a device */
static trc_event kernel_on(uint32_t device, int64_t pid, uint32_t corr, const char *name,
                           int64_t dur)
{
    trc_event e = kernel(pid, corr, name, dur);
    e.u.kernel.where.device = device;
    return e;
}

/* Each hit carries its activity's device, whichever way it was matched:
 * waiting for its call, after it (at once, then through the cache of
 * recent calls), and without one. */
static void test_hit_device(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, kernel_on(2, PID_A, 5, "pending", 10));
    feed(c, &w, api(w.ta, 5, 42, LAUNCH));
    feed(c, &w, kernel_on(5, PID_A, 5, "recent", 20));
    feed(c, &w, api(w.ta, 6, 42, LAUNCH));
    feed(c, &w, kernel_on(1, PID_A, 6, "at once", 30));
    feed(c, &w, kernel_on(4, PID_A, 0, "no call", 40));
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    assert_int_equal(g.n, 4);
    static const char *const names[4] = {"pending", "recent", "at once", "no call"};
    static const uint32_t devs[4] = {2, 5, 1, 4};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(g.h[i].name, names[i]);
        assert_int_equal(g.h[i].device, devs[i]);
    }
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.n_dev, 4);
    assert_int_equal(st.dev[0].device, 1);
    assert_int_equal(st.dev[0].direct_ns, 30);
    assert_int_equal(st.dev[3].device, 5);
    assert_int_equal(st.dev[3].direct_ns, 20);
    assert_int_equal(st.dev[2].device, 4);
    assert_int_equal(st.dev[2].none_ns, 40);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_activity_before_api(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, kernel(PID_A, 7, "k1", 10));
    feed(c, &w, copy(PID_A, 7, TRC_COPY_HTOD, 20)); /* two activities of one call */
    feed(c, &w, kernel(PID_A, 8, "k2", 30));
    assert_int_equal(g.n, 0);
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.live, 2);
    feed(c, &w, api(w.ta, 8, 99, LAUNCH));
    assert_int_equal(g.n, 1);
    assert_string_equal(g.h[0].name, "k2");
    assert_int_equal(g.h[0].stack, 99);
    feed(c, &w, api(w.ta, 7, 77, LAUNCH));
    assert_int_equal(g.n, 3);
    assert_string_equal(g.h[1].name, "k1"); /* in arrival order */
    assert_string_equal(g.h[2].name, "[CUDA memcpy HtoD]");
    assert_int_equal(g.h[2].kind, EXP_GPU_MEMCPY);
    assert_int_equal(g.h[1].stack, 77);
    assert_int_equal(g.h[2].stack, 77);
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.live, 0);
    /* a third activity of call 7, after the match: the recent-call cache */
    feed(c, &w, kernel(PID_A, 7, "k3", 5));
    assert_int_equal(g.n, 4);
    assert_int_equal(g.h[3].origin, EXP_GPU_PYTHON);
    assert_int_equal(g.h[3].stack, 77);
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.live, 0);
    assert_int_equal(st.activities, 4);
    assert_int_equal(st.api_calls, 2);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_graph_launch_many_kernels(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, api(w.tb, 3, 12, LAUNCH));
    for (int i = 0; i < 50; i++)
        feed(c, &w, kernel(PID_B, 3, i % 2 ? "odd" : "even", 2));
    assert_int_equal(g.n, 50);
    for (size_t i = 0; i < g.n; i++) {
        assert_int_equal(g.h[i].origin, EXP_GPU_PYTHON);
        assert_int_equal(g.h[i].stack, 12);
        assert_int_equal(g.h[i].thread, w.tb);
    }
    /* names are interned: one id per distinct name */
    assert_int_equal(g.h[0].name_id, g.h[2].name_id);
    assert_true(g.h[0].name_id != g.h[1].name_id);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_unmatched_and_correlation_zero(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, kernel(PID_A, 0, "nocorr", 4));
    assert_int_equal(g.n, 1); /* correlation 0: unknown at once */
    assert_int_equal(g.h[0].origin, EXP_GPU_UNKNOWN);
    assert_int_equal(g.h[0].thread, 0);
    feed(c, &w, kernel(PID_A, 50, "orphan", 6));
    feed(c, &w, api(w.ta, 51, 5, LAUNCH)); /* a call whose kernel never comes */
    assert_int_equal(g.n, 1);
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.h[1].name, "orphan");
    assert_int_equal(g.h[1].origin, EXP_GPU_UNKNOWN);
    assert_int_equal(g.h[1].stack, 0);
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.live, 0);
    assert_int_equal(st.retired, 2);
    assert_int_equal(st.unknown, 2);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_no_python(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    /* autograd's worker: flagged, no stack */
    feed(c, &w, api(w.tb, 1, 0, LAUNCH | TRC_API_NO_PYTHON));
    feed(c, &w, kernel(PID_B, 1, "bwd", 8));
    /* a stack id with the flag set: the flag wins */
    feed(c, &w, kernel(PID_B, 2, "bwd2", 9));
    feed(c, &w, api(w.tb, 2, 33, LAUNCH | TRC_API_NO_PYTHON));
    /* no flag, no stack */
    feed(c, &w, api(w.tb, 4, 0, LAUNCH));
    feed(c, &w, mset(PID_B, 4, 1));
    assert_int_equal(g.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(g.h[i].origin, EXP_GPU_NO_PYTHON);
        assert_int_equal(g.h[i].stack, 0);
        assert_int_equal(g.h[i].thread, w.tb); /* the thread is still known */
    }
    assert_string_equal(g.h[2].name, "[CUDA memset]");
    assert_int_equal(g.h[2].kind, EXP_GPU_MEMSET);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_keys_need_pid_and_correlation(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, api(w.ta, 9, 100, LAUNCH)); /* pid A, corr 9 */
    feed(c, &w, kernel(PID_B, 9, "other pid", 1));
    assert_int_equal(g.n, 0);
    feed(c, &w, api(w.tb, 9, 200, LAUNCH)); /* pid B, corr 9 */
    assert_int_equal(g.n, 1);
    assert_int_equal(g.h[0].stack, 200);
    assert_int_equal(g.h[0].pid, PID_B);
    feed(c, &w, kernel(PID_A, 9, "pid a", 1));
    assert_int_equal(g.n, 2);
    assert_int_equal(g.h[1].stack, 100);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_duplicate_call_prefers_python(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, api(w.ta, 6, 0, LAUNCH));  /* e.g. a nested driver call first */
    feed(c, &w, api(w.ta, 6, 61, LAUNCH)); /* same id, with the stack */
    feed(c, &w, api(w.ta, 6, 62, LAUNCH)); /* a later one does not replace it */
    feed(c, &w, kernel(PID_A, 6, "k", 3));
    assert_int_equal(g.n, 1);
    assert_int_equal(g.h[0].stack, 61);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_non_launch_calls_are_not_kept(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    for (uint32_t i = 1; i <= 100; i++)
        feed(c, &w, api(w.ta, i, 0, 0)); /* cudaStreamSynchronize & co. */
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.peak_live, 0);
    /* one still answers a late activity through the cache: no stack */
    feed(c, &w, kernel(PID_A, 100, "late", 2));
    assert_int_equal(g.n, 1);
    assert_int_equal(g.h[0].origin, EXP_GPU_NO_PYTHON);
    /* but a pending activity is resolved by one */
    feed(c, &w, kernel(PID_A, 200, "early", 2));
    feed(c, &w, api(w.ta, 200, 0, 0));
    assert_int_equal(g.n, 2);
    assert_int_equal(g.h[1].origin, EXP_GPU_NO_PYTHON);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

/* Memory follows what is unmatched: 10000 in-order pairs never hold more
 * than one entry; 200 activities ahead of their calls hold 200. */
static void test_memory_follows_unmatched(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, NULL, NULL);
    for (uint32_t i = 1; i <= 10000; i++) {
        feed(c, &w, api(w.ta, i, 1 + i % 7, LAUNCH));
        feed(c, &w, kernel(PID_A, i, "k", 1));
    }
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.peak_live, 1);
    assert_int_equal(st.python, 10000);
    exp_gpu_callsite_free(c);

    c = exp_gpu_callsite_new(0, collect, &g);
    for (uint32_t i = 1; i <= 200; i++)
        feed(c, &w, kernel(PID_A, i, "k", 1));
    for (uint32_t i = 200; i >= 1; i--)
        feed(c, &w, api(w.ta, i, i, LAUNCH));
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.peak_live, 200);
    assert_int_equal(st.live, 0);
    assert_int_equal(g.n, 200);
    for (size_t i = 0; i < g.n; i++)
        assert_int_equal(g.h[i].stack, 200 - i); /* each got its own call */
    /* the freed entries are reused: another round does not grow the peak */
    g.n = 0;
    for (uint32_t i = 1001; i <= 1200; i++)
        feed(c, &w, kernel(PID_A, i, "k", 1));
    for (uint32_t i = 1001; i <= 1200; i++)
        feed(c, &w, api(w.ta, i, 1, LAUNCH));
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.peak_live, 200);
    assert_int_equal(g.n, 200);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_window_gives_up(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(3, collect, &g);
    feed(c, &w, kernel(PID_A, 1, "lost", 1)); /* record 1 */
    feed(c, &w, api(w.ta, 2, 9, LAUNCH));     /* 2: never matched */
    feed(c, &w, kernel(PID_A, 3, "x", 1));    /* 3 */
    assert_int_equal(g.n, 0);
    feed(c, &w, kernel(PID_A, 4, "y", 1));    /* 4: record 1 is 3 records old */
    assert_int_equal(g.n, 1);
    assert_string_equal(g.h[0].name, "lost");
    assert_int_equal(g.h[0].origin, EXP_GPU_UNKNOWN);
    feed(c, &w, api(w.ta, 1, 5, LAUNCH));     /* too late: kept as a call of its own */
    assert_int_equal(g.n, 1);
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_true(st.retired >= 2);
    assert_true(st.live <= 3);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_segment_resets(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    trc_segment seg = {0};
    trc_event s = {.type = TRC_EV_SEGMENT};
    s.u.segment = &seg;
    feed(c, &w, api(w.ta, 4, 44, LAUNCH));
    feed(c, &w, kernel(PID_A, 4, "first", 1));
    feed(c, &w, kernel(PID_A, 5, "pending", 1));
    feed(c, &w, s); /* a new recording: ids start again */
    assert_int_equal(g.n, 2);
    assert_int_equal(g.h[1].origin, EXP_GPU_UNKNOWN);
    feed(c, &w, kernel(PID_A, 4, "second run", 1));
    assert_int_equal(g.n, 2); /* not matched to the old call 4 */
    feed(c, &w, api(w.ta, 4, 45, LAUNCH));
    assert_int_equal(g.n, 3);
    assert_int_equal(g.h[2].stack, 45);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

static void test_names(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, kernel(PID_A, 0, "", 1));
    feed(c, &w, kernel(PID_A, 0, NULL, 1));
    feed(c, &w, copy(PID_A, 0, TRC_COPY_DTOH, 1));
    feed(c, &w, copy(PID_A, 0, TRC_COPY_PTOP, 1));
    feed(c, &w, copy(PID_A, 0, (trc_copy_kind)77, 1));
    feed(c, &w, kernel(PID_A, 0, "rev", -5)); /* reversed times: 0 ns */
    assert_int_equal(g.n, 6);
    assert_string_equal(g.h[0].name, "<unnamed kernel>");
    assert_string_equal(g.h[1].name, "<unnamed kernel>");
    assert_string_equal(g.h[2].name, "[CUDA memcpy DtoH]");
    assert_string_equal(g.h[3].name, "[CUDA memcpy PtoP]");
    assert_string_equal(g.h[4].name, "[CUDA memcpy]");
    assert_int_equal(g.h[5].dur_ns, 0);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

/* The converter feeds every launch call but only the activities its
 * selection keeps (lib/export/pipeline/pipeline.c): an activity not fed
 * is not counted, a call fed whatever the selection says still gives
 * its stack, and each hit names its launching thread, which the
 * pipeline's --thread check judges (tests/unit/export/pipeline/test_pipeline.c). */
static void test_selection(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, api(w.ta, 1, 11, LAUNCH));
    feed(c, &w, api(w.tb, 2, 22, LAUNCH));
    feed(c, &w, kernel(PID_A, 1, "a", 1)); /* the kernel of call 2 is not selected */
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.h[0].name, "a");
    assert_int_equal(g.h[0].stack, 11);
    assert_int_equal(g.h[0].thread, w.ta);
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.activities, 1);
    assert_int_equal(st.api_calls, 2);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

/* A sink's error stops the correlator and comes back from the call. */
static void test_emit_error(void **state)
{
    world w;
    got g = {0};
    g.fail_at = 2;
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed(c, &w, kernel(PID_A, 1, "a", 1));
    feed(c, &w, kernel(PID_A, 1, "b", 1));
    trc_event e = api(w.ta, 1, 3, LAUNCH);
    assert_int_equal(exp_gpu_callsite_event(c, w.r, &e), TRC_ERR_NOMEM);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

/* Through the real writer and reader: the order in the file is kept. */
static void test_through_a_file(void **state)
{
    got g = {0};
    conv_tb *b = conv_tb_new();
    trc_writer *wr = conv_tb_writer(b);
    uint32_t th = conv_tb_thread(b, PID_A, 11, "main");
    uint32_t f1 = conv_tb_frame(b, "main", "t.py", 3, 1);
    uint32_t f2 = conv_tb_frame(b, "step", "t.py", 9, 8);
    uint32_t st = conv_tb_stack(b, 2, (uint32_t[]){f1, f2});
    trc_gpu_kernel k = {{PID_A, 0, 1, 7, 2}, CONV_START_NS + 10, CONV_START_NS + 510, "late",
                        {1, 1, 1}, {32, 1, 1}, 8, 0, 0, 0, 0};
    assert_int_equal(trc_writer_gpu_kernel(wr, &k), TRC_OK); /* before its call */
    trc_api_call a = {th, CONV_START_NS, CONV_START_NS + 5, TRC_API_RUNTIME, "cudaLaunchKernel",
                      2, st, 0, TRC_API_LAUNCH, 0, 0, 0};
    assert_int_equal(trc_writer_api_call(wr, &a), TRC_OK);
    assert_int_equal(conv_tb_status(b), TRC_OK);
    trc_reader *r = conv_tb_reader(b);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    const trc_event *ev;
    while (trc_reader_next(r, &ev) == TRC_OK)
        assert_int_equal(exp_gpu_callsite_event(c, r, ev), TRC_OK);
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.h[0].origin, EXP_GPU_PYTHON);
    assert_int_equal(g.h[0].dur_ns, 500);
    const trc_stack *s = trc_reader_stack(r, g.h[0].stack);
    assert_non_null(s);
    assert_string_equal(trc_reader_frame(r, s->frame)->function, "step");
    exp_gpu_callsite_free(c);
    trc_reader_free(r);
    conv_tb_free(b);
}

/* ---- the waiting-thread rule ---------------------------------------- */

/* A training step as trec records one: the main segment holds the
 * samples, the process's side trace (a later segment, as trec appends
 * it) the launches and activities.  Times in ms from CONV_START_NS.
 *   PID_A: "loader" (reader id below main's) on CPU in load() from 0 to
 *          10; "main" off CPU in loss.backward() from 0 to 10;
 *          "autograd" (no Python frames) launches kernels of 100, 200
 *          and 300 us at 2, 4, 6 (charged via main: off CPU wins over
 *          the lower id), and one of 700 us at 20 (no thread waits
 *          then: none); main launches a 400 us kernel at 1 with its
 *          own stack (direct), and at 5 a graph whose two replayed
 *          kernels of 50 us keep the graph launch's stack (direct).
 *   PID_B: "nccl" (no Python frames) launches a 500 us kernel at 3
 *          while PID_A's main waits: another process, so none. */
typedef struct two_segments {
    uint32_t s_backward, s_forward, s_graph;  /* reader stack ids */
    uint32_t main, autograd, nccl;            /* reader thread ids */
} two_segments;

static void side_kernel(trc_writer *wr, int64_t pid, uint32_t corr, double at_ms, int64_t dur_us,
                        uint32_t graph)
{
    int64_t t = CONV_START_NS + (int64_t)(at_ms * CONV_MS);
    trc_gpu_kernel k = {.where = {pid, 0, 1, 7, corr}, .start_ns = t + 10000,
                        .end_ns = t + 10000 + dur_us * 1000, .name = "k", .graph = graph};
    assert_int_equal(trc_writer_gpu_kernel(wr, &k), TRC_OK);
}

static void side_launch(trc_writer *wr, uint32_t thread, uint32_t corr, double at_ms,
                        uint32_t stack)
{
    int64_t t = CONV_START_NS + (int64_t)(at_ms * CONV_MS);
    trc_api_call a = {thread, t, t + 5000, TRC_API_RUNTIME, "cudaLaunchKernel", corr, stack, 0,
                      TRC_API_LAUNCH | (stack ? 0 : TRC_API_NO_PYTHON), 0, 0, 0};
    assert_int_equal(trc_writer_api_call(wr, &a), TRC_OK);
}

static FILE *write_training_step(void)
{
    conv_tb *m = conv_tb_new(), *side = conv_tb_new();
    uint32_t loader = conv_tb_thread(m, PID_A, 12, "loader");
    uint32_t mn = conv_tb_thread(m, PID_A, 11, "main");
    uint32_t f_mod = conv_tb_frame(m, "<module>", "train.py", 90, 1);
    uint32_t s_back = conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, "backward", "train.py", 88, 80)});
    uint32_t s_load = conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, "load", "data.py", 5, 1)});
    for (int ms = 0; ms < 10; ms++) {
        conv_tb_sample(m, ms, loader, s_load, TRC_SAMPLE_ON_CPU, 0);
        conv_tb_sample(m, ms, mn, s_back, 0, 0);
    }
    /* the side traces: threads and frames defined again, as libtrec-cupti does */
    trc_writer *wr = conv_tb_writer(side);
    uint32_t mn2 = conv_tb_thread(side, PID_A, 11, "main");
    uint32_t grad = conv_tb_thread(side, PID_A, 13, "autograd");
    uint32_t nccl = conv_tb_thread(side, PID_B, 21, "nccl");
    uint32_t f_mod2 = conv_tb_frame(side, "<module>", "train.py", 90, 1);
    uint32_t s_fwd = conv_tb_stack(side, 2, (uint32_t[]){f_mod2, conv_tb_frame(side, "forward", "train.py", 70, 60)});
    uint32_t s_gr = conv_tb_stack(side, 2, (uint32_t[]){f_mod2, conv_tb_frame(side, "replay", "train.py", 75, 60)});
    side_launch(wr, mn2, 1, 1, s_fwd);
    side_kernel(wr, PID_A, 1, 1, 400, 0);
    side_launch(wr, grad, 2, 2, 0);
    side_launch(wr, nccl, 2, 3, 0);          /* same correlation, other process */
    side_kernel(wr, PID_A, 2, 2, 100, 0);
    side_kernel(wr, PID_B, 2, 3, 500, 0);
    side_kernel(wr, PID_A, 3, 4, 200, 0);    /* before its call */
    side_launch(wr, grad, 3, 4, 0);
    side_launch(wr, mn2, 4, 5, s_gr);
    side_kernel(wr, PID_A, 4, 5, 50, 9);
    side_kernel(wr, PID_A, 4, 5.1, 50, 9);
    side_launch(wr, grad, 5, 6, 0);
    side_kernel(wr, PID_A, 5, 6, 300, 0);
    side_launch(wr, grad, 6, 20, 0);
    side_kernel(wr, PID_A, 6, 20, 700, 0);
    assert_int_equal(conv_tb_status(m), TRC_OK);
    assert_int_equal(conv_tb_status(side), TRC_OK);
    trc_reader_free(conv_tb_reader(m)); /* closes the writers */
    trc_reader_free(conv_tb_reader(side));
    FILE *f = tmpfile();
    assert_non_null(f);
    size_t n;
    const unsigned char *p = conv_tb_bytes(m, &n);
    assert_int_equal(fwrite(p, 1, n, f), n);
    p = conv_tb_bytes(side, &n);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fflush(f);
    rewind(f);
    conv_tb_free(m);
    conv_tb_free(side);
    return f;
}

/* The reader ids of the scenario's threads and stacks, by name. */
static void find_ids(trc_reader *r, two_segments *ids)
{
    memset(ids, 0, sizeof *ids);
    for (uint32_t i = 1; i <= trc_reader_thread_count(r); i++) {
        const trc_thread *t = trc_reader_thread(r, i);
        if (t && t->tid == 11)
            ids->main = i;
        if (t && t->tid == 13)
            ids->autograd = i;
        if (t && t->tid == 21)
            ids->nccl = i;
    }
    for (uint32_t i = 1; i <= trc_reader_stack_count(r); i++) {
        const trc_stack *s = trc_reader_stack(r, i);
        const char *fn = s ? trc_reader_frame(r, s->frame)->function : "";
        if (strcmp(fn, "backward") == 0)
            ids->s_backward = i;
        if (strcmp(fn, "forward") == 0)
            ids->s_forward = i;
        if (strcmp(fn, "replay") == 0)
            ids->s_graph = i;
    }
    assert_true(ids->main && ids->autograd && ids->nccl);
    assert_true(ids->s_backward && ids->s_forward && ids->s_graph);
}

static void test_via_a_waiting_thread(void **state)
{
    got g = {0};
    FILE *f = write_training_step();
    trc_status rst;
    trc_reader *r = trc_reader_open_fd(fileno(f), "<two segments>", &rst);
    assert_non_null(r);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    const trc_event *ev;
    while (trc_reader_next(r, &ev) == TRC_OK)
        assert_int_equal(exp_gpu_callsite_event(c, r, ev), TRC_OK);
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    two_segments id;
    find_ids(r, &id);
    assert_int_equal(g.n, 8);
    uint64_t via_ns = 0, direct_ns = 0, none_ns = 0;
    for (size_t i = 0; i < g.n; i++) {
        const exp_gpu_hit *h = &g.h[i];
        if (h->pid == PID_B) {            /* another process waits: not used */
            assert_int_equal(h->origin, EXP_GPU_NO_PYTHON);
            assert_int_equal(h->waiter, 0);
            assert_int_equal(h->thread, id.nccl);
            assert_int_equal(h->dur_ns, 500000);
            none_ns += h->dur_ns;
        } else if (h->dur_ns == 700000) { /* at 20 ms nobody waits */
            assert_int_equal(h->origin, EXP_GPU_NO_PYTHON);
            assert_int_equal(h->waiter, 0);
            assert_int_equal(h->stack, 0);
            none_ns += h->dur_ns;
        } else if (h->thread == id.autograd) {
            assert_int_equal(h->origin, EXP_GPU_PYTHON);
            assert_int_equal(h->waiter, id.main); /* off CPU beats the loader's lower id */
            assert_int_equal(h->stack, id.s_backward);
            via_ns += h->dur_ns;
        } else {
            assert_int_equal(h->thread, id.main);
            assert_int_equal(h->origin, EXP_GPU_PYTHON);
            assert_int_equal(h->waiter, 0);  /* its own stack, never a waiter's */
            assert_int_equal(h->stack, h->dur_ns == 400000 ? id.s_forward : id.s_graph);
            direct_ns += h->dur_ns;
        }
    }
    assert_int_equal(via_ns, 600000);
    assert_int_equal(direct_ns, 500000);
    assert_int_equal(none_ns, 1200000);
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.via, 3);
    assert_int_equal(st.python, 6);
    assert_int_equal(st.no_python, 2);
    assert_int_equal(st.via_ns, via_ns);
    assert_int_equal(st.direct_ns, direct_ns);
    assert_int_equal(st.none_ns, none_ns);
    char buf[160];
    /* 1100/2300, 500/2300, 600/2300, 1200/2300, rounded half up */
    assert_string_equal(exp_gpu_share_str(&st, buf, sizeof buf),
                        "47.83% of GPU time has a Python line (direct 21.74%, via a waiting "
                        "thread 26.09%, none 52.17%)");
    /* a sink counting the hits it keeps gets the same figures */
    exp_gpu_callsite_stats mine = {0};
    for (size_t i = 0; i < g.n; i++)
        exp_gpu_stats_add(&mine, &g.h[i]);
    assert_int_equal(mine.via_ns, st.via_ns);
    assert_int_equal(mine.none_ns, st.none_ns);
    assert_int_equal(mine.gpu_ns, st.gpu_ns);
    assert_int_equal(mine.n_dev, st.n_dev);
    assert_memory_equal(mine.dev, st.dev, st.n_dev * sizeof *st.dev);
    exp_gpu_callsite_free(c);
    trc_reader_free(r);
    fclose(f);
}

/* The share line at its edges: nothing, all none, rounding half up. */
static void test_share_line(void **state)
{
    char buf[160];
    exp_gpu_callsite_stats s = {0};
    assert_string_equal(exp_gpu_share_str(&s, buf, sizeof buf), "no GPU time to give a Python line");
    s.none_ns = 7;
    assert_string_equal(exp_gpu_share_str(&s, buf, sizeof buf),
                        "0.00% of GPU time has a Python line (direct 0.00%, via a waiting thread "
                        "0.00%, none 100.00%)");
    s = (exp_gpu_callsite_stats){.direct_ns = 1, .via_ns = 0, .none_ns = 19999};
    assert_string_equal(exp_gpu_share_str(&s, buf, sizeof buf),
                        "0.01% of GPU time has a Python line (direct 0.01%, via a waiting thread "
                        "0.00%, none 100.00%)");
    s = (exp_gpu_callsite_stats){.direct_ns = UINT64_MAX / 2, .via_ns = UINT64_MAX / 2};
    assert_string_equal(exp_gpu_share_str(&s, buf, sizeof buf),
                        "100.00% of GPU time has a Python line (direct 50.00%, via a waiting "
                        "thread 50.00%, none 0.00%)");
}

/* The share per device: kept by device number whatever the order the
 * hits come in, printed after the whole only when there are several
 * devices, devices past EXP_GPU_SHARE_DEVICES together, and a short
 * buffer cut, never overrun. */
static void test_share_per_device(void **state)
{
    char buf[EXP_GPU_SHARE_MAX];
    exp_gpu_callsite_stats s = {0};
    exp_gpu_hit h = {.origin = EXP_GPU_PYTHON, .dur_ns = 300, .device = 3};
    exp_gpu_stats_add(&s, &h);
    /* one device: the line of a single-device trace, nothing more */
    assert_string_equal(exp_gpu_share_str(&s, buf, sizeof buf),
                        "100.00% of GPU time has a Python line (direct 100.00%, via a waiting "
                        "thread 0.00%, none 0.00%)");
    h = (exp_gpu_hit){.origin = EXP_GPU_PYTHON, .waiter = 9, .dur_ns = 100, .device = 1};
    exp_gpu_stats_add(&s, &h);
    h = (exp_gpu_hit){.origin = EXP_GPU_UNKNOWN, .dur_ns = 100, .device = 3};
    exp_gpu_stats_add(&s, &h);
    assert_int_equal(s.n_dev, 2);
    assert_int_equal(s.dev[0].device, 1);
    assert_int_equal(s.dev[1].device, 3);
    /* 300/500, 100/500, 100/500; device 1: 100 via; device 3: 300/400, 100/400 */
    assert_string_equal(exp_gpu_share_str(&s, buf, sizeof buf),
                        "80.00% of GPU time has a Python line (direct 60.00%, via a waiting "
                        "thread 20.00%, none 20.00%); device 1: 100.00% (direct 0.00%, via a "
                        "waiting thread 100.00%, none 0.00%); device 3: 75.00% (direct 75.00%, "
                        "via a waiting thread 0.00%, none 25.00%)");
    /* the same words part by part, for the views that show each device
     * apart (trc-top, trc2chrome's labels) */
    char part[EXP_GPU_SHARE_PART_MAX];
    assert_string_equal(exp_gpu_share_part_str(&s, -1, part, sizeof part),
                        "80.00% of GPU time has a Python line (direct 60.00%, via a waiting "
                        "thread 20.00%, none 20.00%)");
    assert_string_equal(exp_gpu_share_part_str(&s, 0, part, sizeof part),
                        "device 1: 100.00% (direct 0.00%, via a waiting thread 100.00%, none "
                        "0.00%)");
    assert_string_equal(exp_gpu_share_part_str(&s, 1, part, sizeof part),
                        "device 3: 75.00% (direct 75.00%, via a waiting thread 0.00%, none "
                        "25.00%)");
    assert_string_equal(exp_gpu_share_part_str(&s, 2, part, sizeof part), "");
    assert_string_equal(exp_gpu_share_part_str(&s, -1, part, 12), "80.00% of G");
    assert_string_equal(exp_gpu_share_part_str(&s, 1, part, 8), "device ");
    assert_int_equal(exp_gpu_share_device_part(&s, 1), 0);
    assert_int_equal(exp_gpu_share_device_part(&s, 3), 1);
    assert_int_equal(exp_gpu_share_device_part(&s, 2), -1);
    char small[40];
    exp_gpu_share_str(&s, small, sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, buf, sizeof small - 1);
    /* devices 100..119: the first 16 one by one (with 1 and 3 kept,
     * 100..113), the rest together, last */
    for (uint32_t d = 100; d < 120; d++) {
        h = (exp_gpu_hit){.origin = EXP_GPU_NO_PYTHON, .dur_ns = 10, .device = d};
        exp_gpu_stats_add(&s, &h);
    }
    assert_int_equal(s.n_dev, EXP_GPU_SHARE_DEVICES + 1);
    assert_int_equal(s.dev[EXP_GPU_SHARE_DEVICES - 1].device, 113);
    assert_int_equal(s.dev[EXP_GPU_SHARE_DEVICES].device, EXP_GPU_OTHER_DEVICES);
    assert_int_equal(s.dev[EXP_GPU_SHARE_DEVICES].none_ns, 60);
    assert_int_equal(s.none_ns, 100 + 200);
    const char *line = exp_gpu_share_str(&s, buf, sizeof buf);
    assert_non_null(strstr(line, "; device 113: 0.00% (direct 0.00%, via a waiting thread 0.00%, "
                                 "none 100.00%); other devices: 0.00% (direct 0.00%, via a "
                                 "waiting thread 0.00%, none 100.00%)"));
    assert_int_equal(line[strlen(line) - 1], ')'); /* whole: EXP_GPU_SHARE_MAX is enough */
    /* a device past the first 16 is told by the part it is kept in */
    assert_int_equal(exp_gpu_share_device_part(&s, 113), EXP_GPU_SHARE_DEVICES - 1);
    assert_int_equal(exp_gpu_share_device_part(&s, 119), EXP_GPU_SHARE_DEVICES);
    assert_string_equal(exp_gpu_share_part_str(&s, EXP_GPU_SHARE_DEVICES, part, sizeof part),
                        "other devices: 0.00% (direct 0.00%, via a waiting thread 0.00%, none "
                        "100.00%)");
    assert_non_null(strstr(line, part));
}

/* The file trec writes: the main segment (m, the samples), then a side
 * trace (side, the launches).  Frees both builders. */
static FILE *two_segment_file(conv_tb *m, conv_tb *side)
{
    assert_int_equal(conv_tb_status(m), TRC_OK);
    assert_int_equal(conv_tb_status(side), TRC_OK);
    trc_reader_free(conv_tb_reader(m)); /* closes the writers */
    trc_reader_free(conv_tb_reader(side));
    FILE *f = tmpfile();
    assert_non_null(f);
    size_t n;
    const unsigned char *p = conv_tb_bytes(m, &n);
    assert_int_equal(fwrite(p, 1, n, f), n);
    p = conv_tb_bytes(side, &n);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fflush(f);
    rewind(f);
    conv_tb_free(m);
    conv_tb_free(side);
    return f;
}

/* Every event of f through a new correlator that collects into g. */
static exp_gpu_callsite *correlate_file(FILE *f, got *g, trc_reader **r)
{
    trc_status rst;
    *r = trc_reader_open_fd(fileno(f), "<two segments>", &rst);
    assert_non_null(*r);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, g);
    assert_non_null(c);
    const trc_event *ev;
    while (trc_reader_next(*r, &ev) == TRC_OK)
        assert_int_equal(exp_gpu_callsite_event(c, *r, ev), TRC_OK);
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    return c;
}

/* The function of stack id's leaf frame. */
static const char *leaf_fn(trc_reader *r, uint32_t id)
{
    const trc_stack *s = trc_reader_stack(r, id);
    assert_non_null(s);
    return trc_reader_frame(r, s->frame)->function;
}

/* The reader id of the thread with system id tid. */
static uint32_t thread_of(trc_reader *r, int64_t tid)
{
    for (uint32_t i = 1; i <= trc_reader_thread_count(r); i++)
        if (trc_reader_thread(r, i)->tid == tid)
            return i;
    fail();
    return 0;
}

/* Memory follows a thread's changes of stack, not its samples: repeats
 * of one stack and state extend one run (no allocation after the
 * first), and runs that change at every sample grow by doubling. */
static void test_wait_runs_follow_stack_changes(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    trc_alloc_fail_after(-1); /* counts from here */
    int64_t t = 1000;
    for (uint32_t i = 0; i < 200000; i++, t += 10) {
        trc_event e = {.type = TRC_EV_SAMPLE};
        e.u.sample = (trc_sample){.time_ns = t, .thread = w.ta, .stack = 1, .weight_ns = 10,
                                  .count = 1};
        feed(c, &w, e);
    }
    assert_true(trc_alloc_count() <= 3); /* the thread's line and its one run */
    for (uint32_t i = 0; i < 200000; i++, t += 10) {
        trc_event e = {.type = TRC_EV_SAMPLE};
        e.u.sample = (trc_sample){.time_ns = t, .thread = w.ta, .stack = 1 + i % 2,
                                  .weight_ns = 10, .count = 1};
        feed(c, &w, e);
    }
    long made = trc_alloc_count();
    assert_true(made > 3 && made < 40); /* doubling */
    exp_gpu_callsite_free(c);
    world_close(&w);
}

/* A segment whose header says it holds no GPU records (gpu.activity
 * off, spec [R-HDR-5]) keeps no sample runs: the waiting thread is not
 * found and nothing is allocated for its samples; the next segment
 * without the key keeps them again. */
static void feed_segment(exp_gpu_callsite *c, world *w, const char *gpu)
{
    trc_kv kv[2] = {{"trec.mode", "launch"}, {"gpu.activity", gpu}};
    trc_segment sg = {.major = 1, .minor = 4, .n_metadata = gpu ? 2 : 1, .metadata = kv};
    trc_event e = {.type = TRC_EV_SEGMENT};
    e.u.segment = &sg;
    feed(c, w, e);
}

static void test_no_gpu_segment_keeps_no_runs(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    feed_segment(c, &w, "off");
    trc_alloc_fail_after(-1); /* counts from here */
    for (uint32_t i = 0; i < 1000; i++) {
        trc_event e = {.type = TRC_EV_SAMPLE};
        e.u.sample = (trc_sample){.time_ns = 1000 + 10 * (int64_t)i, .thread = w.ta,
                                  .stack = 1 + i % 2, .weight_ns = 10, .count = 1};
        feed(c, &w, e);
    }
    assert_int_equal(trc_alloc_count(), 0);
    assert_int_equal(exp_gpu_callsite_waiter(c, PID_A, w.tb, 1500, NULL), 0);
    /* "cupti", or no key at all, promises nothing: runs are kept */
    const char *kinds[] = {"cupti", NULL};
    for (int k = 0; k < 2; k++) {
        int64_t t0 = 100000 * (k + 1);
        feed_segment(c, &w, kinds[k]);
        for (uint32_t i = 0; i < 10; i++) {
            trc_event e = {.type = TRC_EV_SAMPLE};
            e.u.sample = (trc_sample){.time_ns = t0 + 10 * (int64_t)i, .thread = w.ta,
                                      .stack = 1, .weight_ns = 10, .count = 1};
            feed(c, &w, e);
        }
        uint32_t stack = 0;
        assert_int_equal(exp_gpu_callsite_waiter(c, PID_A, w.tb, t0 + 50, &stack), w.ta);
        assert_int_equal(stack, 1);
    }
    exp_gpu_callsite_free(c);
    world_close(&w);
}

/* A long recording: the main thread waits for 10 s while its stack
 * changes at every sample (100,000 runs, more than any fixed ring of
 * 65536 would keep), and a thread without Python frames launches every
 * 100 ms from the start, its side trace written after the samples as
 * trec does.  Every launch, the first ones included, is charged via the
 * main thread, to the stack it had at that moment. */
#define LONG_SAMPLES 100000
#define LONG_STEP_MS 0.1
static void test_long_launch_stream(void **state)
{
    conv_tb *m = conv_tb_new(), *side = conv_tb_new();
    uint32_t mn = conv_tb_thread(m, PID_A, 11, "main");
    uint32_t f_mod = conv_tb_frame(m, "<module>", "train.py", 90, 1);
    uint32_t s_even = conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, "even", "train.py", 10, 9)});
    uint32_t s_odd = conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, "odd", "train.py", 20, 19)});
    for (int i = 0; i < LONG_SAMPLES; i++)
        conv_tb_sample(m, i * LONG_STEP_MS, mn, i % 2 ? s_odd : s_even, 0,
                       (uint64_t)(LONG_STEP_MS * CONV_MS));
    trc_writer *wr = conv_tb_writer(side);
    uint32_t grad = conv_tb_thread(side, PID_A, 13, "autograd");
    uint32_t n_launch = 0;
    for (double ms = 0.05; ms < LONG_SAMPLES * LONG_STEP_MS; ms += 100) { /* even samples */
        n_launch++;
        side_launch(wr, grad, n_launch, ms, 0);
        side_kernel(wr, PID_A, n_launch, ms, 10, 0);
    }
    assert_int_equal(n_launch, 100);
    FILE *f = two_segment_file(m, side);
    got g = {0};
    trc_reader *r;
    exp_gpu_callsite *c = correlate_file(f, &g, &r);
    uint32_t main_id = thread_of(r, 11);
    assert_int_equal(g.n, n_launch);
    for (size_t i = 0; i < g.n; i++) {
        assert_int_equal(g.h[i].origin, EXP_GPU_PYTHON);
        assert_int_equal(g.h[i].waiter, main_id);
        assert_string_equal(leaf_fn(r, g.h[i].stack), "even");
    }
    exp_gpu_callsite_stats st;
    exp_gpu_callsite_get_stats(c, &st);
    assert_int_equal(st.via, n_launch);
    assert_int_equal(st.via_ns, n_launch * 10000);
    assert_int_equal(st.none_ns, 0);
    exp_gpu_callsite_free(c);
    trc_reader_free(r);
    fclose(f);
}

/* Several threads of the process are off CPU at a launch: the one known
 * to wait (in a sync call with its stack, or sampled in a known waiting
 * function) is chosen over a thread idle elsewhere, whatever their
 * order; between equals the first thread met.  Threads of PID_A:
 * "idle" (met first), "main", and "autograd", which launches without
 * Python frames at 1, 3, 5 and 7 ms. */
static void test_prefers_a_known_waiting_thread(void **state)
{
    conv_tb *m = conv_tb_new(), *side = conv_tb_new();
    uint32_t idle = conv_tb_thread(m, PID_A, 11, "idle");
    uint32_t mn = conv_tb_thread(m, PID_A, 12, "main");
    uint32_t f_mod = conv_tb_frame(m, "<module>", "train.py", 90, 1);
#define STK(b, fn, line) \
    conv_tb_stack(b, 2, (uint32_t[]){f_mod, conv_tb_frame(b, fn, "train.py", line, line)})
    uint32_t s_sleep = STK(m, "sleep", 30), s_join = STK(m, "join", 40);
    uint32_t s_back = STK(m, "backward", 50), s_step = STK(m, "step", 60);
    /* ms:        0..1        2..3        4..5        6..7
     * idle:      sleep       sleep       join        sleep
     * main:      backward    step (sync) backward    step, on CPU */
    for (int ms = 0; ms < 8; ms++) {
        int q = ms / 2;
        conv_tb_sample(m, ms, idle, q == 2 ? s_join : s_sleep, 0, 0);
        conv_tb_sample(m, ms, mn, q == 0 || q == 2 ? s_back : s_step,
                       q == 3 ? TRC_SAMPLE_ON_CPU : 0, 0);
    }
    trc_writer *wr = conv_tb_writer(side);
    uint32_t mn2 = conv_tb_thread(side, PID_A, 12, "main");
    uint32_t grad = conv_tb_thread(side, PID_A, 13, "autograd");
    f_mod = conv_tb_frame(side, "<module>", "train.py", 90, 1);
    uint32_t s_sync = STK(side, "sync_line", 70);
#undef STK
    int64_t t2 = CONV_START_NS + 2 * CONV_MS;
    for (uint32_t k = 0; k < 4; k++) {
        side_launch(wr, grad, k + 1, 1 + 2 * k, 0);
        if (k == 1) { /* recorded when it ends: after the launch it covers,
                       * before the launched kernel's record */
            trc_api_call sync = {mn2, t2 + CONV_MS / 2, t2 + 3 * CONV_MS / 2, TRC_API_RUNTIME,
                                 "cudaStreamSynchronize", 99, s_sync, 0, TRC_API_SYNC, 0, 0, 0};
            assert_int_equal(trc_writer_api_call(wr, &sync), TRC_OK);
        }
        side_kernel(wr, PID_A, k + 1, 1 + 2 * k, 100 * (k + 1), 0);
    }
    FILE *f = two_segment_file(m, side);
    got g = {0};
    trc_reader *r;
    exp_gpu_callsite *c = correlate_file(f, &g, &r);
    uint32_t want_waiter[4] = {thread_of(r, 12), thread_of(r, 12), thread_of(r, 11),
                               thread_of(r, 11)};
    const char *want_leaf[4] = {"backward", "sync_line", "join", "sleep"};
    assert_int_equal(g.n, 4);
    for (size_t i = 0; i < g.n; i++) {
        size_t k = g.h[i].dur_ns / 100000 - 1; /* the launch at 1 + 2k ms */
        assert_true(k < 4);
        assert_int_equal(g.h[i].origin, EXP_GPU_PYTHON);
        assert_int_equal(g.h[i].thread, thread_of(r, 13));
        assert_int_equal(g.h[i].waiter, want_waiter[k]);
        assert_string_equal(leaf_fn(r, g.h[i].stack), want_leaf[k]);
    }
    exp_gpu_callsite_free(c);
    trc_reader_free(r);
    fclose(f);
}

/* As PyTorch's training step showed on a real GPU: OpenMP's idle pool
 * threads (no Python thread state, sampled as "[native thread python3]"
 * and met before the main thread) sleep through the backward pass while
 * the main thread waits in _engine_run_backward (PyTorch >= 2.2's leaf)
 * or runs on CPU.  A native thread's stack says nothing of who waits:
 * the main thread is charged, never the pool.  Threads of PID_A: "pool"
 * (tid 11, off CPU throughout), "main" (12: _engine_run_backward off
 * CPU at 0..3 ms, "step" on CPU at 4..7 ms), "autograd" (13) launching
 * without Python frames at 1, 3, 5 and 7 ms. */
static void test_native_threads_never_wait(void **state)
{
    conv_tb *m = conv_tb_new(), *side = conv_tb_new();
    uint32_t pool = conv_tb_thread(m, PID_A, 11, "python3");
    uint32_t mn = conv_tb_thread(m, PID_A, 12, "MainThread");
    uint32_t f_mod = conv_tb_frame(m, "<module>", "train.py", 90, 1);
    uint32_t s_pool = conv_tb_stack(m, 1, (uint32_t[]){conv_tb_other(m, "[native thread python3]")});
    uint32_t s_back = conv_tb_stack(
        m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, "_engine_run_backward", "graph.py", 869, 860)});
    uint32_t s_step = conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, "step", "train.py", 60, 60)});
    for (int ms = 0; ms < 8; ms++) {
        conv_tb_sample(m, ms, pool, s_pool, 0, 0);
        conv_tb_sample(m, ms, mn, ms < 4 ? s_back : s_step, ms < 4 ? 0 : TRC_SAMPLE_ON_CPU, 0);
    }
    trc_writer *wr = conv_tb_writer(side);
    uint32_t grad = conv_tb_thread(side, PID_A, 13, "pt_autograd_0");
    for (uint32_t k = 0; k < 4; k++) {
        side_launch(wr, grad, k + 1, 1 + 2 * k, 0);
        side_kernel(wr, PID_A, k + 1, 1 + 2 * k, 100 * (k + 1), 0);
    }
    FILE *f = two_segment_file(m, side);
    got g = {0};
    trc_reader *r;
    exp_gpu_callsite *c = correlate_file(f, &g, &r);
    assert_int_equal(g.n, 4);
    for (size_t i = 0; i < g.n; i++) {
        size_t k = g.h[i].dur_ns / 100000 - 1;
        assert_true(k < 4);
        assert_int_equal(g.h[i].origin, EXP_GPU_PYTHON);
        assert_int_equal(g.h[i].waiter, thread_of(r, 12));
        assert_string_equal(leaf_fn(r, g.h[i].stack), k < 2 ? "_engine_run_backward" : "step");
    }
    exp_gpu_callsite_free(c);
    trc_reader_free(r);
    fclose(f);
}

/* The waiting thread's stack is its sample nearest to the launch, the
 * next one within a period included.  The main thread (the only
 * candidate) is sampled every 1 ms: "forward" at 0, "backward" at 1,
 * "step" at 2, then ticks are missed until "tail" at 5; autograd
 * launches at 0.3 (forward is nearer), 0.8 (backward, 0.2 ms ahead, is
 * nearer than forward, 0.8 ms behind), 4.6 (nothing covers it: tail,
 * 0.4 ms ahead, bridges the gap) and 3.5 ms (tail is 1.5 ms ahead, more
 * than a period: nobody waits). */
static void test_nearest_sample(void **state)
{
    conv_tb *m = conv_tb_new(), *side = conv_tb_new();
    uint32_t mn = conv_tb_thread(m, PID_A, 12, "MainThread");
    uint32_t f_mod = conv_tb_frame(m, "<module>", "train.py", 90, 1);
#define STK(fn, line) \
    conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, fn, "train.py", line, line)})
    uint32_t s_fwd = STK("forward", 10), s_back = STK("backward", 11);
    uint32_t s_step = STK("step", 12), s_tail = STK("tail", 13);
#undef STK
    conv_tb_sample(m, 0, mn, s_fwd, TRC_SAMPLE_ON_CPU, 0);
    conv_tb_sample(m, 1, mn, s_back, TRC_SAMPLE_ON_CPU, 0);
    conv_tb_sample(m, 2, mn, s_step, TRC_SAMPLE_ON_CPU, 0);
    conv_tb_sample(m, 5, mn, s_tail, TRC_SAMPLE_ON_CPU, 0);
    trc_writer *wr = conv_tb_writer(side);
    uint32_t grad = conv_tb_thread(side, PID_A, 13, "pt_autograd_0");
    static const double at[4] = {0.3, 0.8, 4.6, 3.5};
    for (uint32_t k = 0; k < 4; k++) {
        side_launch(wr, grad, k + 1, at[k], 0);
        side_kernel(wr, PID_A, k + 1, at[k], 100 * (k + 1), 0);
    }
    FILE *f = two_segment_file(m, side);
    got g = {0};
    trc_reader *r;
    exp_gpu_callsite *c = correlate_file(f, &g, &r);
    static const char *const want[4] = {"forward", "backward", "tail", NULL};
    assert_int_equal(g.n, 4);
    for (size_t i = 0; i < g.n; i++) {
        size_t k = g.h[i].dur_ns / 100000 - 1;
        assert_true(k < 4);
        if (!want[k]) {
            assert_int_equal(g.h[i].waiter, 0);
            assert_int_equal(g.h[i].origin, EXP_GPU_NO_PYTHON);
            continue;
        }
        assert_int_equal(g.h[i].origin, EXP_GPU_PYTHON);
        assert_int_equal(g.h[i].waiter, thread_of(r, 12));
        assert_string_equal(leaf_fn(r, g.h[i].stack), want[k]);
    }
    exp_gpu_callsite_free(c);
    trc_reader_free(r);
    fclose(f);
}

/* A known waiting function counts on CPU too (PyTorch's calling thread
 * runs the graph's CPU part inside _engine_run_backward): the main
 * thread on CPU there beats a Python thread off CPU in a sleep, met
 * first; on CPU elsewhere it does not. */
static void test_known_waiting_on_cpu(void **state)
{
    conv_tb *m = conv_tb_new(), *side = conv_tb_new();
    uint32_t idle = conv_tb_thread(m, PID_A, 11, "poller");
    uint32_t mn = conv_tb_thread(m, PID_A, 12, "MainThread");
    uint32_t f_mod = conv_tb_frame(m, "<module>", "train.py", 90, 1);
#define STK(fn, line) \
    conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, fn, "train.py", line, line)})
    uint32_t s_sleep = STK("sleep", 30), s_back = STK("_engine_run_backward", 31);
    uint32_t s_fwd = STK("forward", 32);
#undef STK
    for (int ms = 0; ms < 4; ms++) {
        conv_tb_sample(m, ms, idle, s_sleep, 0, 0);
        conv_tb_sample(m, ms, mn, ms < 2 ? s_back : s_fwd, TRC_SAMPLE_ON_CPU, 0);
    }
    trc_writer *wr = conv_tb_writer(side);
    uint32_t grad = conv_tb_thread(side, PID_A, 13, "pt_autograd_0");
    side_launch(wr, grad, 1, 0.5, 0);
    side_kernel(wr, PID_A, 1, 0.5, 100, 0);
    side_launch(wr, grad, 2, 3.5, 0);
    side_kernel(wr, PID_A, 2, 3.5, 200, 0);
    FILE *f = two_segment_file(m, side);
    got g = {0};
    trc_reader *r;
    exp_gpu_callsite *c = correlate_file(f, &g, &r);
    assert_int_equal(g.n, 2);
    for (size_t i = 0; i < g.n; i++) {
        int first = g.h[i].dur_ns == 100000;
        assert_int_equal(g.h[i].waiter, thread_of(r, first ? 12 : 11));
        assert_string_equal(leaf_fn(r, g.h[i].stack), first ? "_engine_run_backward" : "sleep");
    }
    exp_gpu_callsite_free(c);
    trc_reader_free(r);
    fclose(f);
}

/* Hostile sample times and lengths saturate (checked under UBSan), and
 * a launcher is never its own waiting thread. */
static void test_hostile_sample_times(void **state)
{
    world w;
    got g = {0};
    world_open(&w);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, collect, &g);
    const trc_sample hostile[] = {
        {.time_ns = INT64_MIN, .thread = w.ta, .stack = 1, .weight_ns = UINT64_MAX, .span_ns = UINT64_MAX},
        {.time_ns = -5, .thread = w.ta, .stack = 2, .weight_ns = UINT64_MAX, .span_ns = 7},
        {.time_ns = INT64_MAX - 1, .thread = w.ta, .stack = 1, .weight_ns = 10, .span_ns = UINT64_MAX},
        {.time_ns = 0, .thread = w.ta, .stack = 1},  /* before the last: not kept */
        {.time_ns = 0, .thread = 9999, .stack = 1},  /* no such thread */
    };
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        trc_event e = {.type = TRC_EV_SAMPLE};
        e.u.sample = hostile[i];
        feed(c, &w, e);
    }
    feed(c, &w, api(w.ta, 5, 0, LAUNCH | TRC_API_NO_PYTHON));
    feed(c, &w, kernel(PID_A, 5, "k", 10));
    assert_int_equal(g.n, 1);
    assert_int_equal(g.h[0].origin, EXP_GPU_NO_PYTHON); /* ta covers, but launched it */
    assert_int_equal(g.h[0].waiter, 0);
    exp_gpu_callsite_free(c);
    world_close(&w);
}

/* Every allocation may fail: the call reports TRC_ERR_NOMEM, nothing
 * leaks (checked under ASan), and freeing works from any state. */
static void test_every_allocation_fails(void **state)
{
    world w;
    int finished = 0;
    world_open(&w);
    for (long n = 1; n < 200 && !finished; n++) {
        trc_alloc_fail_after(n);
        exp_gpu_callsite *c = exp_gpu_callsite_new(0, NULL, NULL);
        trc_status st = c ? TRC_OK : TRC_ERR_NOMEM;
        for (uint32_t i = 1; i <= 150 && st == TRC_OK; i++) {
            trc_event e = kernel(PID_A, i, i % 3 ? "a" : "b", 1);
            st = exp_gpu_callsite_event(c, w.r, &e);
        }
        for (uint32_t i = 1; i <= 150 && st == TRC_OK; i++) {
            trc_event e = api(w.ta, i, 1, LAUNCH);
            st = exp_gpu_callsite_event(c, w.r, &e);
        }
        if (st == TRC_OK && c)
            st = exp_gpu_callsite_finish(c);
        long made = trc_alloc_count();
        trc_alloc_fail_after(-1);
        exp_gpu_callsite_free(c);
        if (st == TRC_OK) {
            assert_true(made < n); /* finished before the failure point */
            finished = 1;
            continue;
        }
        assert_int_equal(st, TRC_ERR_NOMEM);
    }
    assert_true(finished);
    world_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_then_activity),
        cmocka_unit_test(test_activity_before_api),
        cmocka_unit_test(test_graph_launch_many_kernels),
        cmocka_unit_test(test_unmatched_and_correlation_zero),
        cmocka_unit_test(test_no_python),
        cmocka_unit_test(test_keys_need_pid_and_correlation),
        cmocka_unit_test(test_duplicate_call_prefers_python),
        cmocka_unit_test(test_non_launch_calls_are_not_kept),
        cmocka_unit_test(test_memory_follows_unmatched),
        cmocka_unit_test(test_window_gives_up),
        cmocka_unit_test(test_segment_resets),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_emit_error),
        cmocka_unit_test(test_through_a_file),
        cmocka_unit_test(test_via_a_waiting_thread),
        cmocka_unit_test(test_share_line),
        cmocka_unit_test(test_share_per_device),
        cmocka_unit_test(test_hit_device),
        cmocka_unit_test(test_wait_runs_follow_stack_changes),
        cmocka_unit_test(test_no_gpu_segment_keeps_no_runs),
        cmocka_unit_test(test_long_launch_stream),
        cmocka_unit_test(test_prefers_a_known_waiting_thread),
        cmocka_unit_test(test_native_threads_never_wait),
        cmocka_unit_test(test_nearest_sample),
        cmocka_unit_test(test_known_waiting_on_cpu),
        cmocka_unit_test(test_hostile_sample_times),
        cmocka_unit_test(test_every_allocation_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
