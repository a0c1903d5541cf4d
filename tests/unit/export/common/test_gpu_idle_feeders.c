/*
 * test_gpu_idle_feeders.c — which threads feed a device, so that its idle
 * time is charged to them (lib/export/common/gpu_idle.c; the rule in
 * docs/gpu.md, "Why is my GPU idle?"), in a multi-process job written as
 * trec writes one (the samples, then a side trace of launches):
 *
 *   pid 100 uses GPU 0; its launches come from "autograd", a thread
 *           without Python frames, while "main" waits in backward();
 *           "idle" sleeps and launches nothing.
 *   pid 200 uses GPU 1 alone: "main2" launches with its own stack.
 *   pid 300 shares GPU 0 with pid 100: "main3" launches with its own
 *           stack.
 *
 * Every Python thread is sampled each 1 ms (weight 1 ms) from 0 to 10 ms.
 * GPU 0 runs [2, 4) ms (pid 100) and [6, 7) ms (pid 300): idle 7 ms.
 * GPU 1 runs [1, 3) ms (pid 200): idle 8 ms.
 * "autograd" is sampled too, as trec samples a thread without a thread
 * state: off CPU with the one frame "[native thread autograd]".
 * So GPU 0's idle goes to main (backward) and main3 (step3), 7 ms each;
 * GPU 1's to main2 (step2), 8 ms; "idle" and the other process's threads
 * get nothing, nor does "autograd", a feeder whose stack says nothing of
 * why the device idles.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/export/common/gpu_idle.h"
#include "tests/support/folded_traces.h"

/* idle ns charged, by device (0, 1) and thread system id (the index) */
typedef struct got {
    const trc_reader *r;
    uint64_t ns[2][8];
    const char *fn[2][8];     /* the leaf of what was charged */
    uint64_t copy_only;
} got;

static trc_status collect(void *ctx, uint32_t device, exp_gpu_idle_kind kind, uint32_t thread,
                          uint32_t stack, uint64_t ns)
{
    got *g = ctx;
    assert_true(device < 2);
    if (kind != EXP_GPU_IDLE_NONE) {
        g->copy_only += ns;
        return TRC_OK;
    }
    const trc_thread *t = trc_reader_thread(g->r, thread);
    assert_non_null(t);
    assert_true(t->tid >= 1 && t->tid < 8);
    g->ns[device][t->tid] += ns;
    const trc_stack *s = trc_reader_stack(g->r, stack);
    g->fn[device][t->tid] = s ? trc_reader_frame(g->r, s->frame)->function : "";
    return TRC_OK;
}

enum { T_MAIN = 1, T_IDLE = 2, T_AUTOGRAD = 3, T_MAIN2 = 4, T_MAIN3 = 5 };

static void launch(trc_writer *w, uint32_t thread, uint32_t corr, int ms, uint32_t stack)
{
    int64_t t = CONV_START_NS + ms * CONV_MS;
    trc_api_call a = {thread, t, t + 5000, TRC_API_RUNTIME, "cudaLaunchKernel", corr, stack, 0,
                      TRC_API_LAUNCH | (stack ? 0 : TRC_API_NO_PYTHON), 0, 0, 0};
    assert_int_equal(trc_writer_api_call(w, &a), TRC_OK);
}

static void kernel(trc_writer *w, int64_t pid, uint32_t device, uint32_t corr, int from_ms,
                   int to_ms)
{
    trc_gpu_kernel k = {.where = {pid, device, 1, 7, corr},
                        .start_ns = CONV_START_NS + from_ms * CONV_MS,
                        .end_ns = CONV_START_NS + to_ms * CONV_MS, .name = "k"};
    assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
}

static void append(FILE *f, conv_tb *b)
{
    assert_int_equal(conv_tb_status(b), TRC_OK);
    trc_reader_free(conv_tb_reader(b)); /* closes the writer */
    size_t n;
    const unsigned char *p = conv_tb_bytes(b, &n);
    assert_int_equal(fwrite(p, 1, n, f), n);
    conv_tb_free(b);
}

static FILE *write_job(void)
{
    conv_tb *m = conv_tb_new();
    uint32_t mn = conv_tb_thread(m, 100, T_MAIN, "main");
    uint32_t idle = conv_tb_thread(m, 100, T_IDLE, "idle");
    uint32_t mn2 = conv_tb_thread(m, 200, T_MAIN2, "main2");
    uint32_t mn3 = conv_tb_thread(m, 300, T_MAIN3, "main3");
    uint32_t nat = conv_tb_thread(m, 100, T_AUTOGRAD, "autograd");
    uint32_t s_nat = conv_tb_stack(m, 1, (uint32_t[]){conv_tb_other(m, "[native thread autograd]")});
    uint32_t f_mod = conv_tb_frame(m, "<module>", "train.py", 90, 1);
#define STK(fn, line) conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, fn, "train.py", line, line)})
    uint32_t s_back = STK("backward", 10), s_sleep = STK("sleep", 20);
    uint32_t s_step2 = STK("step2", 30), s_step3 = STK("step3", 40);
#undef STK
    for (int ms = 0; ms < 10; ms++) {
        conv_tb_sample(m, ms, mn, s_back, 0, 0);
        conv_tb_sample(m, ms, idle, s_sleep, 0, 0);
        conv_tb_sample(m, ms, mn2, s_step2, TRC_SAMPLE_ON_CPU, 0);
        conv_tb_sample(m, ms, mn3, s_step3, TRC_SAMPLE_ON_CPU, 0);
        conv_tb_sample(m, ms, nat, s_nat, 0, 0);
    }
    /* the side traces, one per process, threads and frames defined again */
    FILE *f = tmpfile();
    assert_non_null(f);
    append(f, m);
    conv_tb *s1 = conv_tb_new();
    uint32_t grad = conv_tb_thread(s1, 100, T_AUTOGRAD, "autograd");
    launch(conv_tb_writer(s1), grad, 1, 1, 0);
    kernel(conv_tb_writer(s1), 100, 0, 1, 2, 4);
    append(f, s1);
    conv_tb *s2 = conv_tb_new();
    uint32_t m2 = conv_tb_thread(s2, 200, T_MAIN2, "main2");
    uint32_t f2 = conv_tb_frame(s2, "<module>", "train.py", 90, 1);
    uint32_t st2 = conv_tb_stack(s2, 2, (uint32_t[]){f2, conv_tb_frame(s2, "step2", "train.py", 30, 30)});
    launch(conv_tb_writer(s2), m2, 1, 0, st2);
    kernel(conv_tb_writer(s2), 200, 1, 1, 1, 3);
    append(f, s2);
    conv_tb *s3 = conv_tb_new();
    uint32_t m3 = conv_tb_thread(s3, 300, T_MAIN3, "main3");
    uint32_t f3 = conv_tb_frame(s3, "<module>", "train.py", 90, 1);
    uint32_t st3 = conv_tb_stack(s3, 2, (uint32_t[]){f3, conv_tb_frame(s3, "step3", "train.py", 40, 40)});
    launch(conv_tb_writer(s3), m3, 1, 5, st3);
    kernel(conv_tb_writer(s3), 300, 0, 1, 6, 7);
    append(f, s3);
    fflush(f);
    rewind(f);
    return f;
}

static void test_feeders_per_process(void **state)
{
    FILE *f = write_job();
    trc_status rst;
    trc_reader *r = trc_reader_open_fd(fileno(f), "<job>", &rst);
    assert_non_null(r);
    exp_gpu_idle *gi = exp_gpu_idle_new(NULL);
    assert_non_null(gi);
    const trc_event *ev;
    while (trc_reader_next(r, &ev) == TRC_OK)
        assert_int_equal(exp_gpu_idle_event(gi, r, ev), TRC_OK);
    assert_int_equal(exp_gpu_idle_finish(gi, r), TRC_OK);
    assert_int_equal(exp_gpu_idle_devices(gi), 2);
    exp_gpu_idle_device d0, d1;
    exp_gpu_idle_device_at(gi, 0, &d0);
    exp_gpu_idle_device_at(gi, 1, &d1);
    assert_int_equal(d0.device, 0);
    assert_int_equal(d1.device, 1);
    assert_int_equal(d0.span_ns, 10 * CONV_MS);
    assert_int_equal(d0.idle_ns, 7 * CONV_MS);
    assert_int_equal(d1.idle_ns, 8 * CONV_MS);
    got g = {.r = r};
    assert_int_equal(exp_gpu_idle_each(gi, collect, &g), TRC_OK);
    /* GPU 0: the waiting main thread of pid 100, and pid 300's launcher */
    assert_int_equal(g.ns[0][T_MAIN], 7 * CONV_MS);
    assert_string_equal(g.fn[0][T_MAIN], "backward");
    assert_int_equal(g.ns[0][T_MAIN3], 7 * CONV_MS);
    assert_string_equal(g.fn[0][T_MAIN3], "step3");
    assert_int_equal(g.ns[0][T_MAIN2], 0);  /* pid 200 does not use GPU 0 */
    assert_int_equal(g.ns[0][T_IDLE], 0);   /* neither launches nor waits for a launch */
    assert_int_equal(g.ns[0][T_AUTOGRAD], 0); /* feeds GPU 0, but has no Python stack */
    /* GPU 1: pid 200 alone */
    assert_int_equal(g.ns[1][T_MAIN2], 8 * CONV_MS);
    assert_string_equal(g.fn[1][T_MAIN2], "step2");
    assert_int_equal(g.ns[1][T_MAIN] + g.ns[1][T_IDLE] + g.ns[1][T_MAIN3], 0);
    assert_int_equal(g.copy_only, 0);
    assert_int_equal(d0.charged_idle_ns, 14 * CONV_MS);
    assert_int_equal(d1.charged_idle_ns, 8 * CONV_MS);
    exp_gpu_idle_free(gi);
    trc_reader_free(r);
    fclose(f);
}

/* A recording longer than the horizon, written as trec writes it: the
 * samples of 6 s first, then each process's side trace, each starting
 * again from the recording's start (pid 100 on GPU 0, launching from
 * autograd; pid 200 on GPU 1).  The busy time at the start must still be
 * taken off what each process's thread is charged. */
static void test_long_recording_samples_first(void **state)
{
    conv_tb *m = conv_tb_new();
    uint32_t mn = conv_tb_thread(m, 100, T_MAIN, "main");
    uint32_t f_mod = conv_tb_frame(m, "<module>", "train.py", 90, 1);
    uint32_t s_back = conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, "backward", "train.py", 10, 10)});
    uint32_t s_fwd = conv_tb_stack(m, 2, (uint32_t[]){f_mod, conv_tb_frame(m, "forward", "train.py", 20, 20)});
    uint32_t mn2 = conv_tb_thread(m, 200, T_MAIN2, "main2");
    for (int ms = 0; ms < 6000; ms++) {
        conv_tb_sample(m, ms, mn, ms % 2 ? s_fwd : s_back, 0, 0);
        conv_tb_sample(m, ms, mn2, s_fwd, TRC_SAMPLE_ON_CPU, 0);
    }
    FILE *f = tmpfile();
    assert_non_null(f);
    append(f, m);
    conv_tb *s1 = conv_tb_new();
    uint32_t grad = conv_tb_thread(s1, 100, T_AUTOGRAD, "autograd");
    launch(conv_tb_writer(s1), grad, 1, 1, 0);
    kernel(conv_tb_writer(s1), 100, 0, 1, 2, 4);
    launch(conv_tb_writer(s1), grad, 2, 5990, 0);
    kernel(conv_tb_writer(s1), 100, 0, 2, 5991, 5992);
    append(f, s1);
    conv_tb *s2 = conv_tb_new();
    uint32_t m2 = conv_tb_thread(s2, 200, T_MAIN2, "main2");
    uint32_t f2 = conv_tb_frame(s2, "<module>", "train.py", 90, 1);
    uint32_t st2 = conv_tb_stack(s2, 2, (uint32_t[]){f2, conv_tb_frame(s2, "step2", "train.py", 30, 30)});
    launch(conv_tb_writer(s2), m2, 1, 0, st2);
    kernel(conv_tb_writer(s2), 200, 1, 1, 1, 4);
    launch(conv_tb_writer(s2), m2, 2, 5000, st2);
    kernel(conv_tb_writer(s2), 200, 1, 2, 5000, 5005);
    append(f, s2);
    fflush(f);
    rewind(f);
    trc_status rst;
    trc_reader *r = trc_reader_open_fd(fileno(f), "<long>", &rst);
    assert_non_null(r);
    exp_gpu_idle *gi = exp_gpu_idle_new(NULL);
    assert_non_null(gi);
    const trc_event *ev;
    while (trc_reader_next(r, &ev) == TRC_OK)
        assert_int_equal(exp_gpu_idle_event(gi, r, ev), TRC_OK);
    assert_int_equal(exp_gpu_idle_finish(gi, r), TRC_OK);
    exp_gpu_idle_device d0, d1;
    exp_gpu_idle_device_at(gi, 0, &d0);
    exp_gpu_idle_device_at(gi, 1, &d1);
    assert_int_equal(d0.idle_ns, 6000 * CONV_MS - 3 * CONV_MS);
    assert_int_equal(d1.idle_ns, 6000 * CONV_MS - 8 * CONV_MS);
    got g = {.r = r};
    assert_int_equal(exp_gpu_idle_each(gi, collect, &g), TRC_OK);
    assert_int_equal(g.ns[0][T_MAIN], d0.idle_ns);
    assert_int_equal(d0.charged_idle_ns, d0.idle_ns);
    assert_int_equal(g.ns[1][T_MAIN2], d1.idle_ns);
    assert_int_equal(d1.charged_idle_ns, d1.idle_ns);
    assert_int_equal(g.ns[0][T_MAIN2] + g.ns[1][T_MAIN], 0);
    exp_gpu_idle_stats st;
    exp_gpu_idle_get_stats(gi, &st);
    assert_int_equal(st.late, 0);
    assert_int_equal(st.late_samples, 0);
    exp_gpu_idle_free(gi);
    trc_reader_free(r);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feeders_per_process),
        cmocka_unit_test(test_long_recording_samples_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
