/*
 * test_pipeline — the converter pipeline's call-site stage
 * (lib/export/pipeline/pipeline.c): launch calls count whatever the
 * selection says, activities only when selected, --thread judges an
 * activity by its launching thread (an unknown launch then goes), and
 * how a run ends (done, --pid matching nothing, a failing sink).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/export/pipeline/pipeline.h"
#include "tests/support/trace_builder.h"

#define T0 1000000000LL
#define MS 1000000LL

/* ---- a sink that keeps what it is handed ---- */

typedef struct seen {
    char names[8][32];
    int64_t tids[8];          /* launching thread's tid, 0 when unknown */
    int stacked[8];           /* launched with a Python stack */
    size_t n;
    int finished;
    int fail;                 /* gpu_hit fails with TRC_ERR_NOMEM */
} seen;

static seen got;

static void *seen_create(const void *opts)
{
    memset(&got, 0, sizeof got);
    return &got;
}

static void seen_destroy(void *self) {}

static trc_status seen_hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    seen *s = self;
    if (s->fail)
        return TRC_ERR_NOMEM;
    assert_true(s->n < 8);
    const trc_thread *t = h->thread ? trc_reader_thread(r, h->thread) : NULL;
    snprintf(s->names[s->n], sizeof s->names[0], "%s", h->name);
    s->tids[s->n] = t ? t->tid : 0;
    s->stacked[s->n] = h->origin == EXP_GPU_PYTHON && h->stack != 0;
    s->n++;
    return TRC_OK;
}

static trc_status seen_finish(void *self, trc_reader *r, FILE *out)
{
    ((seen *)self)->finished = 1;
    return TRC_OK;
}

static const exp_sink_type seen_sink = {"seen", seen_create, NULL, seen_hit, seen_finish,
                                        seen_destroy, NULL};

/* The same, also taking events (as trc-lines does): the selected
 * kernels and launch calls it is handed. */
static int kernel_events, api_events;

static trc_status seen_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    kernel_events += ev->type == TRC_EV_GPU_KERNEL;
    api_events += ev->type == TRC_EV_API_CALL;
    return TRC_OK;
}

static const exp_sink_type both_sink = {"both", seen_create, seen_event, seen_hit, seen_finish,
                                        seen_destroy, NULL};
static const exp_sink_type *run_type = &seen_sink;

/* ---- the trace ---- */

static void launch(trc_writer *w, uint32_t thread, uint32_t stack, uint32_t corr, int64_t at)
{
    trc_api_call a;
    memset(&a, 0, sizeof a);
    a.thread = thread;
    a.stack = stack;
    a.start_ns = T0 + at;
    a.end_ns = T0 + at + 10;
    a.domain = TRC_API_RUNTIME;
    a.name = "cudaLaunchKernel";
    a.correlation = corr;
    a.flags = TRC_API_LAUNCH;
    assert_int_equal(trc_writer_api_call(w, &a), TRC_OK);
}

static void kernel(trc_writer *w, const char *name, uint32_t corr, int64_t at)
{
    trc_gpu_kernel k;
    memset(&k, 0, sizeof k);
    k.where.pid = 10;
    k.where.context = 1;
    k.where.stream = 7;
    k.where.correlation = corr;
    k.start_ns = T0 + at;
    k.end_ns = T0 + at + 1000;
    k.name = name;
    assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
}

/* Process 10: "main" (tid 11) launches k_main, "worker" (tid 12)
 * launches k_worker, both at 0.1 ms, their kernels run at 2 ms; k_lost
 * (2 ms) has no launch call in the trace; k_early runs at 0.5 ms. */
static void write_trace(tb_buf *out)
{
    trc_writer_options o;
    trc_status st;
    uint32_t main_t, worker_t, frame, stack;
    memset(&o, 0, sizeof o);
    o.recorder = "test";
    o.host = "h";
    o.start_ns = T0;
    o.wall_ns = 1;
    trc_writer *w = trc_writer_open_callback(tb_write, out, &o, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_thread(w, 10, 11, "main", &main_t), TRC_OK);
    assert_int_equal(trc_writer_thread(w, 10, 12, "worker", &worker_t), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "step", "t.py", 3, 1, &frame), TRC_OK);
    assert_int_equal(trc_writer_stack(w, 0, frame, &stack), TRC_OK);
    launch(w, main_t, stack, 1, 100000);
    launch(w, worker_t, stack, 2, 100000);
    launch(w, main_t, stack, 4, 100000);
    kernel(w, "k_early", 4, MS / 2);
    kernel(w, "k_main", 1, 2 * MS);
    kernel(w, "k_worker", 2, 2 * MS);
    kernel(w, "k_lost", 3, 2 * MS);
    assert_int_equal(trc_writer_close(w, T0 + 10 * MS), TRC_OK);
}

static conv_pipe_result run(conv_filter *f, int fail)
{
    tb_buf b = {0};
    write_trace(&b);
    tb_src src = {b.p, b.len, 0, 0};
    trc_status st;
    trc_reader *r = trc_reader_open_callback(tb_read, &src, "mem.trc", &st);
    assert_non_null(r);
    exp_sink *s = exp_sink_new(run_type, NULL);
    assert_non_null(s);
    got.fail = fail;
    conv_losses losses;
    conv_pipe_result res;
    conv_pipe_run(r, "mem.trc", f, s, 0, stdout, &losses, &res);
    exp_sink_free(s);
    conv_filter_cleanup(f);
    trc_reader_free(r);
    tb_buf_free(&b);
    return res;
}

static int has(const char *name)
{
    for (size_t i = 0; i < got.n; i++)
        if (strcmp(got.names[i], name) == 0)
            return (int)i + 1;
    return 0;
}

static void test_everything_with_launch_sites(void **state)
{
    conv_filter f = {.to_ns = -1};
    conv_pipe_result res = run(&f, 0);
    assert_int_equal(res.end, CONV_PIPE_DONE);
    assert_true(got.finished);
    assert_int_equal(got.n, 4);
    int m = has("k_main"), w = has("k_worker"), l = has("k_lost");
    assert_true(m && w && l && has("k_early"));
    assert_int_equal(got.tids[m - 1], 11);
    assert_true(got.stacked[m - 1]);
    assert_int_equal(got.tids[w - 1], 12);
    assert_int_equal(got.tids[l - 1], 0);
    assert_false(got.stacked[l - 1]);
}

/* --from 1ms: the launch calls (0.1 ms) are outside the window, yet
 * they still give the kernels inside it their sites. */
static void test_window_keeps_early_launches(void **state)
{
    conv_filter f = {.has_from = 1, .from_ns = MS, .to_ns = -1};
    conv_pipe_result res = run(&f, 0);
    assert_int_equal(res.end, CONV_PIPE_DONE);
    assert_int_equal(got.n, 3);
    assert_false(has("k_early"));
    int m = has("k_main");
    assert_true(m);
    assert_int_equal(got.tids[m - 1], 11);
    assert_true(got.stacked[m - 1]);
}

/* A sink taking both gets every selected event and, beside them, the
 * same hits as a sink taking hits alone: with --from 1ms, the three
 * kernels inside the window as events and as hits, no launch call as an
 * event (all are before the window), and yet each hit has its site. */
static void test_events_beside_hits(void **state)
{
    conv_filter f = {.has_from = 1, .from_ns = MS, .to_ns = -1};
    kernel_events = api_events = 0;
    run_type = &both_sink;
    conv_pipe_result res = run(&f, 0);
    run_type = &seen_sink;
    assert_int_equal(res.end, CONV_PIPE_DONE);
    assert_true(got.finished);
    assert_int_equal(got.n, 3);
    assert_int_equal(kernel_events, 3);
    assert_int_equal(api_events, 0);
    int m = has("k_main");
    assert_true(m && got.stacked[m - 1]);
    assert_int_equal(got.tids[m - 1], 11);
    /* a sink taking hits alone is handed no event */
    kernel_events = 0;
    conv_filter all = {.to_ns = -1};
    run(&all, 0);
    assert_int_equal(got.n, 4);
    assert_int_equal(kernel_events, 0);
}

/* --thread main: the kernels main launched; not the worker's, not the
 * one whose launch is unknown. */
static void test_thread_judges_launching_thread(void **state)
{
    const char *threads[] = {"main"};
    conv_filter f = {.threads = threads, .n_threads = 1, .to_ns = -1};
    conv_pipe_result res = run(&f, 0);
    assert_int_equal(res.end, CONV_PIPE_DONE);
    assert_int_equal(got.n, 2);
    assert_true(has("k_main") && has("k_early"));
}

static void test_unmatched_pid_finishes_nothing(void **state)
{
    const char *pids[] = {"99"};
    const int64_t values[] = {99};
    conv_filter f = {.pids = pids, .pid_values = values, .n_pids = 1, .to_ns = -1};
    conv_pipe_result res = run(&f, 0);
    assert_int_equal(res.end, CONV_PIPE_UNMATCHED);
    assert_non_null(strstr(res.why, "--pid '99'"));
    assert_false(got.finished);
}

static void test_sink_failure_stops(void **state)
{
    conv_filter f = {.to_ns = -1};
    conv_pipe_result res = run(&f, 1);
    assert_int_equal(res.end, CONV_PIPE_SINK_FAILED);
    assert_int_equal(res.status, TRC_ERR_NOMEM);
    assert_false(got.finished);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_everything_with_launch_sites),
        cmocka_unit_test(test_window_keeps_early_launches),
        cmocka_unit_test(test_events_beside_hits),
        cmocka_unit_test(test_thread_judges_launching_thread),
        cmocka_unit_test(test_unmatched_pid_finishes_nothing),
        cmocka_unit_test(test_sink_failure_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
