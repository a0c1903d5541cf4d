/*
 * tests/unit/cupti/test_gpu_graph.c — CUDA graph replays and the time
 * trc spends inside an API call, end to end through the fake CUPTI
 * (tests/gpu/fake_cupti.c), the injection (lib/cupti/), the side trace
 * (format 1.3: GPU_KERNEL graph/graph_node, API_CALL capture; 1.4:
 * API_CALL graph/graph_exec; spec §7.11, §7.15) and the converters'
 * call-site stage (lib/export/common/gpu_callsite.c) and capture-site
 * lookup (lib/export/common/gpu_graph.c).  Built with the CUPTI headers by
 * mk/cupti.mk; without them it only reports a skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#ifndef TRC_HAVE_CUPTI
int main(void)
{
    printf("skip: built without the CUPTI headers\n");
    return 0;
}
#else

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cupti/inject.h"
#include "lib/export/common/gpu_callsite.h"
#include "lib/export/common/gpu_graph.h"
#include "tests/gpu/fake_cupti.h"
#include "tests/gpu/inject_testutil.h"
#include "tests/gpu/trace_check.h"

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API
#define GRAPH_LAUNCH CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000
#define LAUNCH CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
#define GRAPH_ID 7u
#define GRAPH_KERNELS 3
/* plain launches between the replay's first kernel record and the rest:
 * enough distinct correlation ids to evict any one slot of the call-site
 * stage's 1024-slot cache of matched calls */
#define OTHER_LAUNCHES 6000
#define CAPTURE_SPIN_NS 2000000   /* what the fake capture costs, per launch */

static void quiet(const char *line)
{
    (void)line;
}

static void spin_ns(int64_t ns)
{
    int64_t t0 = trc_now_ns();
    while (trc_now_ns() - t0 < ns)
        ;
}

/* The launch-site capture: the graph launch gets "train.py:42 in step",
 * and costs CAPTURE_SPIN_NS, as a slow stack walk would; other launches
 * have no Python and cost nothing. */
static int slow_next;

static trc_status fake_capture(trc_writer *w, uint32_t *stack, uint32_t *flags)
{
    uint32_t f, s;
    trc_status st;

    *stack = 0;
    *flags = TRC_API_NO_PYTHON;
    if (!slow_next)
        return TRC_OK;
    slow_next = 0;
    spin_ns(CAPTURE_SPIN_NS);
    if ((st = trc_writer_frame(w, TRC_FRAME_PYTHON, "<module>", "train.py", 50, 1, &f)) ||
        (st = trc_writer_stack(w, 0, f, &s)) ||
        (st = trc_writer_frame(w, TRC_FRAME_PYTHON, "step", "train.py", 42, 40, &f)) ||
        (st = trc_writer_stack(w, s, f, &s)))
        return st;
    *stack = s;
    *flags = 0;
    return TRC_OK;
}

static void add_kernel(const char *name, uint32_t corr, uint32_t graph, uint64_t node,
                       uint64_t start)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = start + 5000;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 7;
    k.correlationId = corr;
    k.graphId = graph;
    k.graphNodeId = node;
    k.name = name;
    fake_cupti_add(&k, sizeof k);
}

/* What the call-site stage charged the replay's kernels to. */
typedef struct hits {
    unsigned graph_python, graph_other;
    uint32_t stack;          /* the graph kernels' stack (all the same) */
} hits;

static trc_status on_hit(void *ctx, trc_reader *r, const exp_gpu_hit *h)
{
    hits *g = ctx;
    (void)r;
    if (strcmp(h->name, "graph_kernel") != 0)
        return TRC_OK;
    if (h->origin == EXP_GPU_PYTHON && (!g->stack || g->stack == h->stack)) {
        g->graph_python++;
        g->stack = h->stack;
    } else {
        g->graph_other++;
    }
    return TRC_OK;
}

/* Feed the trace at path through the call-site stage; *launch_stack:
 * the graph launch call's stack, as the reader numbers it. */
static void charge(const char *path, uint32_t graph_corr, hits *g, uint32_t *launch_stack)
{
    trc_status st;
    const trc_event *ev;
    trc_reader *r = trc_reader_open_path(path, &st);
    assert_non_null(r);
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, on_hit, g);
    assert_non_null(c);
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type == TRC_EV_API_CALL && ev->u.api.correlation == graph_corr)
            *launch_stack = ev->u.api.stack;
        assert_int_equal(exp_gpu_callsite_event(c, r, ev), TRC_OK);
    }
    assert_int_equal(st, TRC_ERR_EOF);
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    exp_gpu_callsite_free(c);
    trc_reader_free(r);
}

/* A graph replayed by cudaGraphLaunch: its kernels carry the graph and
 * node ids, the launch call carries the Python stack, and every kernel
 * of the replay is charged to that line, even the ones whose record
 * comes after thousands of other launches. */
static void test_graph_replay_charged_to_launch(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    hits g = { 0, 0, 0 };
    uint32_t launch_stack = 0;

    (void)state;
    gput_tmp_path(path, sizeof path, "graph", "replay");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = gput_config(path, 0, quiet);
    cfg.capture = fake_capture;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_true(fake_cupti_callback_enabled(RT, GRAPH_LAUNCH));

    uint64_t t0 = fake_cupti_now();
    slow_next = 1;
    uint32_t gc = fake_cupti_call(RT, GRAPH_LAUNCH, t0, 4000, 0);
    add_kernel("graph_kernel", gc, GRAPH_ID, 101, t0 + 5000);
    for (int i = 0; i < OTHER_LAUNCHES; i++) {
        uint64_t now = fake_cupti_now();
        uint32_t c = fake_cupti_call(RT, LAUNCH, now, 1000, 0);
        add_kernel("other_kernel", c, 0, 0, now + 2000);
    }
    for (uint64_t n = 1; n < GRAPH_KERNELS; n++)
        add_kernel("graph_kernel", gc, GRAPH_ID, 101 + n, fake_cupti_now());
    trec_cupti_shutdown();

    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    unsigned graph_kernels = 0;
    for (size_t i = 0; i < t.n; i++) {
        const tc_event *e = &t.ev[i];
        if (e->type != TRC_EV_GPU_KERNEL)
            continue;
        if (strcmp(e->name, "graph_kernel") == 0) {
            assert_int_equal(e->u.kernel.graph, GRAPH_ID);
            assert_int_equal(e->u.kernel.graph_node, 101 + graph_kernels);
            assert_int_equal(e->u.kernel.where.correlation, gc);
            graph_kernels++;
        } else {
            assert_int_equal(e->u.kernel.graph, 0);
            assert_int_equal(e->u.kernel.graph_node, 0);
        }
    }
    assert_int_equal(graph_kernels, GRAPH_KERNELS);
    const tc_event *a = tc_api_by_corr(&t, gc);
    assert_non_null(a);
    assert_string_equal(a->name, "cudaGraphLaunch");
    assert_int_equal(a->u.api.flags, TRC_API_LAUNCH);
    assert_int_equal(a->depth, 2);
    assert_string_equal(a->frames[0].function, "step");
    assert_int_equal(a->frames[0].line, 42);
    tc_free(&t);

    charge(path, gc, &g, &launch_stack);
    assert_int_not_equal(launch_stack, 0);
    assert_int_equal(g.graph_other, 0);
    assert_int_equal(g.graph_python, GRAPH_KERNELS);
    assert_int_equal(g.stack, launch_stack);
    unlink(path);
}

/* The API_CALL's capture field: the time the launch-site capture spent
 * inside the call; 0 for a call that did no capture (not a launch, or a
 * launch nested in one that already captured). */
static void test_capture_time_recorded(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;

    (void)state;
    gput_tmp_path(path, sizeof path, "graph", "capture");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = gput_config(path, 0, quiet);
    cfg.capture = fake_capture;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);

    uint64_t t0 = fake_cupti_now();
    slow_next = 1;
    uint32_t outer = fake_cupti_api_enter(RT, LAUNCH);
    uint32_t inner = fake_cupti_api_enter(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    fake_cupti_api_exit(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, inner);
    fake_cupti_api_exit(RT, LAUNCH, outer);
    uint64_t t1 = fake_cupti_now();
    fake_cupti_api_record(RT, LAUNCH, t0, t1 - t0, 0, outer);
    fake_cupti_api_record(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, t0 + 1, t1 - t0 - 2, 0,
                          inner);
    uint32_t fast = fake_cupti_call(RT, LAUNCH, fake_cupti_now(), 1000, 0);
    uint32_t plain = fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
                                     fake_cupti_now(), 1000, 0);
    trec_cupti_shutdown();

    assert_int_equal(tc_load(path, &t), TRC_OK);
    const tc_event *o = tc_api_by_corr(&t, outer), *n = tc_api_by_corr(&t, inner);
    const tc_event *f = tc_api_by_corr(&t, fast), *p = tc_api_by_corr(&t, plain);
    assert_non_null(o);
    assert_non_null(n);
    assert_non_null(f);
    assert_non_null(p);
    assert_true(o->u.api.capture_ns >= CAPTURE_SPIN_NS);
    /* within the call's own duration (both on the trace clock here) */
    assert_true(o->u.api.capture_ns <= (uint64_t)(o->u.api.end_ns - o->u.api.start_ns));
    assert_int_equal(n->u.api.capture_ns, 0);
    assert_true(f->u.api.capture_ns < CAPTURE_SPIN_NS);
    assert_int_equal(p->u.api.capture_ns, 0);
    tc_free(&t);
    unlink(path);
}

/* ---- where a graph was captured ------------------------------------- */

/* The capture hook for this part: every call gets "FUNC at train.py:LINE"
 * under "<module>" as set below (line 0: no Python). */
static const char *line_function;
static uint32_t line_no;

static trc_status line_capture(trc_writer *w, uint32_t *stack, uint32_t *flags)
{
    uint32_t f, s;
    trc_status st;

    *stack = 0;
    *flags = TRC_API_NO_PYTHON;
    if (!line_no)
        return TRC_OK;
    if ((st = trc_writer_frame(w, TRC_FRAME_PYTHON, "<module>", "train.py", 90, 1, &f)) ||
        (st = trc_writer_stack(w, 0, f, &s)) ||
        (st = trc_writer_frame(w, TRC_FRAME_PYTHON, line_function, "train.py", line_no,
                               line_no - 1, &f)) ||
        (st = trc_writer_stack(w, s, f, &s)))
        return st;
    *stack = s;
    *flags = 0;
    return TRC_OK;
}

static void at_line(const char *function, uint32_t line)
{
    line_function = function;
    line_no = line;
}

/* The params the calls below take: CUPTI's own structs. */
#define END_CAPTURE CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000
#define INSTANTIATE CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000
#define DRV_END_CAPTURE CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture
#define DRV_INSTANTIATE CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags

/* cudaStreamEndCapture making graph `id` (the fake's id of a handle is
 * its value); returns the call's correlation id. */
static uint32_t end_capture(uint32_t id, int result)
{
    cudaGraph_t made = (cudaGraph_t)(uintptr_t)id;
    cudaStreamEndCapture_v10000_params p = { NULL, &made };
    uint64_t t0 = fake_cupti_now();
    uint32_t corr = fake_cupti_api_enter(RT, END_CAPTURE);
    fake_cupti_api_exit_params(RT, END_CAPTURE, corr, &p, result);
    fake_cupti_api_record(RT, END_CAPTURE, t0, 1000, 0, corr);
    return corr;
}

/* cudaGraphInstantiate of graph `graph` into executable graph `exec`. */
static uint32_t instantiate(uint32_t graph, uint32_t exec)
{
    cudaGraphExec_t made = (cudaGraphExec_t)(uintptr_t)exec;
    cudaGraphInstantiate_v12000_params p = { &made, (cudaGraph_t)(uintptr_t)graph, 0 };
    uint64_t t0 = fake_cupti_now();
    uint32_t corr = fake_cupti_api_enter(RT, INSTANTIATE);
    fake_cupti_api_exit_params(RT, INSTANTIATE, corr, &p, 0);
    fake_cupti_api_record(RT, INSTANTIATE, t0, 1000, 0, corr);
    return corr;
}

/* The same through the driver API (cuStreamEndCapture,
 * cuGraphInstantiateWithFlags). */
static void drv_capture_and_instantiate(uint32_t graph, uint32_t exec)
{
    CUgraph g = (CUgraph)(uintptr_t)graph;
    CUgraphExec e = (CUgraphExec)(uintptr_t)exec;
    cuStreamEndCapture_params pc = { NULL, &g };
    cuGraphInstantiateWithFlags_params pi = { &e, g, 0 };
    uint64_t t0 = fake_cupti_now();
    uint32_t c1 = fake_cupti_api_enter(DRV, DRV_END_CAPTURE);
    fake_cupti_api_exit_params(DRV, DRV_END_CAPTURE, c1, &pc, 0);
    fake_cupti_api_record(DRV, DRV_END_CAPTURE, t0, 1000, 0, c1);
    at_line("warm_up", 70);
    uint32_t c2 = fake_cupti_api_enter(DRV, DRV_INSTANTIATE);
    fake_cupti_api_exit_params(DRV, DRV_INSTANTIATE, c2, &pi, 0);
    fake_cupti_api_record(DRV, DRV_INSTANTIATE, t0 + 2000, 1000, 0, c2);
}

/* The leaf line of reader stack `stack`, 0 for none. */
static uint32_t leaf_line(trc_reader *r, uint32_t stack)
{
    const trc_stack *s = stack ? trc_reader_stack(r, stack) : NULL;
    const trc_frame *f = s ? trc_reader_frame(r, s->frame) : NULL;
    return f ? f->line : 0;
}

/* Per graph kernel, charged: the launch line and the captured-at line. */
typedef struct graph_lines {
    exp_gpu_graph *graphs;
    unsigned n, bad;
    uint32_t launch[8], captured[8], graph[8];
} graph_lines;

static trc_status on_graph_hit(void *ctx, trc_reader *r, const exp_gpu_hit *h)
{
    graph_lines *g = ctx;
    if (!h->graph)
        return TRC_OK;
    if (g->n == 8) {
        g->bad++;
        return TRC_OK;
    }
    g->graph[g->n] = h->graph;
    g->launch[g->n] = h->origin == EXP_GPU_PYTHON ? leaf_line(r, h->stack) : 0;
    g->captured[g->n] = leaf_line(r, exp_gpu_graph_captured(g->graphs, h->pid, h->graph));
    g->n++;
    return exp_gpu_graph_hit(g->graphs, h);
}

/* Feed path's trace to the call-site stage and the capture-site stage,
 * as a converter does; the print of the latter into printed. */
static void charge_graphs(const char *path, graph_lines *g, char *printed, size_t n)
{
    trc_status st;
    const trc_event *ev;
    trc_reader *r = trc_reader_open_path(path, &st);
    assert_non_null(r);
    assert_non_null(g->graphs = exp_gpu_graph_new());
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, on_graph_hit, g);
    assert_non_null(c);
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        assert_int_equal(exp_gpu_graph_event(g->graphs, r, ev), TRC_OK);
        assert_int_equal(exp_gpu_callsite_event(c, r, ev), TRC_OK);
    }
    assert_int_equal(st, TRC_ERR_EOF);
    assert_int_equal(exp_gpu_callsite_finish(c), TRC_OK);
    FILE *f = fmemopen(printed, n, "w");
    assert_non_null(f);
    exp_gpu_graph_print(g->graphs, r, f);
    fclose(f);
    exp_gpu_callsite_free(c);
    exp_gpu_graph_free(g->graphs);
    trc_reader_free(r);
}

/* A graph captured at train.py:30 and instantiated at :31, replayed from
 * train.py:42, its kernels carrying the executable graph's id (9); a
 * second one captured and instantiated through the driver API at :60
 * and :70, replayed from :50, its kernels carrying the graph's id (12);
 * a failed capture records no id.  The trace keeps the ids with the
 * calls, and the converters' stages give each replay kernel both lines. */
static void test_graph_captured_at(void **state)
{
    char path[128];
    char printed[2048];
    cupti_api api;
    tc_trace t;
    graph_lines g;

    (void)state;
    memset(&g, 0, sizeof g);
    memset(printed, 0, sizeof printed);
    gput_tmp_path(path, sizeof path, "graph", "captured");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = gput_config(path, 0, quiet);
    cfg.capture = line_capture;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_true(fake_cupti_callback_enabled(RT, END_CAPTURE));
    assert_true(fake_cupti_callback_enabled(RT, INSTANTIATE));

    at_line("capture_graph", 30);
    uint32_t cap = end_capture(7, 0);
    at_line("capture_graph", 31);
    uint32_t inst = instantiate(7, 9);
    at_line("bad_capture", 35);
    uint32_t failed = end_capture(8, 1);   /* cudaErrorInvalidValue */
    at_line("capture_other", 60);
    drv_capture_and_instantiate(12, 13);
    at_line("step", 42);
    uint32_t l1 = fake_cupti_call(RT, GRAPH_LAUNCH, fake_cupti_now(), 4000, 0);
    add_kernel("graph_kernel", l1, 9, 101, fake_cupti_now());
    add_kernel("graph_kernel", l1, 9, 102, fake_cupti_now());
    at_line("other_step", 50);
    uint32_t l2 = fake_cupti_call(RT, GRAPH_LAUNCH, fake_cupti_now(), 4000, 0);
    add_kernel("graph_kernel", l2, 12, 201, fake_cupti_now());
    trec_cupti_shutdown();

    assert_int_equal(tc_load(path, &t), TRC_OK);
    const tc_event *a = tc_api_by_corr(&t, cap), *b = tc_api_by_corr(&t, inst);
    const tc_event *x = tc_api_by_corr(&t, failed);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(x);
    assert_string_equal(a->name, "cudaStreamEndCapture");
    assert_int_equal(a->u.api.graph, 7);
    assert_int_equal(a->u.api.graph_exec, 0);
    assert_int_equal(a->frames[0].line, 30);
    assert_string_equal(b->name, "cudaGraphInstantiate");
    assert_int_equal(b->u.api.graph, 7);
    assert_int_equal(b->u.api.graph_exec, 9);
    assert_int_equal(x->u.api.graph, 0);
    assert_int_equal(x->u.api.graph_exec, 0);
    tc_free(&t);

    charge_graphs(path, &g, printed, sizeof printed);
    assert_int_equal(g.bad, 0);
    assert_int_equal(g.n, 3);
    for (unsigned i = 0; i < g.n; i++) {
        if (g.graph[i] == 9) {
            assert_int_equal(g.launch[i], 42);
            assert_int_equal(g.captured[i], 30);
        } else {
            assert_int_equal(g.graph[i], 12);
            assert_int_equal(g.launch[i], 50);
            assert_int_equal(g.captured[i], 60);
        }
    }
    assert_non_null(strstr(printed, "graph 9 (pid "));
    assert_non_null(strstr(printed, "): 2 kernels, 0.010 ms, launched at train.py:42 (step), "
                                    "captured at train.py:30 (capture_graph)\n"));
    assert_non_null(strstr(printed, "): 1 kernels, 0.005 ms, launched at train.py:50 (other_step), "
                                    "captured at train.py:60 (capture_other)\n"));
    /* kept for the converters' end-to-end check (tests/e2e/conv_gpu_graph.sh) */
    const char *keep = getenv("TRC_TEST_GRAPH_TRACE");
    if (keep && rename(path, keep) != 0)
        fail_msg("cannot move the trace to %s", keep);
    unlink(path);
}

static int shutdown_after(void **state)
{
    (void)state;
    trec_cupti_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_graph_replay_charged_to_launch, shutdown_after),
        cmocka_unit_test_teardown(test_capture_time_recorded, shutdown_after),
        cmocka_unit_test_teardown(test_graph_captured_at, shutdown_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
