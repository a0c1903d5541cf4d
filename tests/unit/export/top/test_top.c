/*
 * test_top — trc-top's aggregation (lib/export/top/top.c) over a
 * synthetic trace read through the converter pipeline: the exact rows
 * of each view (since the start or the window, on-CPU or wall, GIL
 * only), each sort key, recursion counted once in the totals, GPU time
 * charged to the launching stack's lines and each device's busy share
 * as the union of its kernels, and NVML memory.
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
#include "lib/export/top/top.h"
#include "lib/export/top/top_format.h"
#include "tests/support/folded_traces.h"

#define ON_GIL (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN | TRC_SAMPLE_HOLDS_GIL)
#define ON_NOGIL (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN)

static void launch(trc_writer *w, uint32_t thread, uint32_t stack, uint32_t corr, double at_ms)
{
    trc_api_call a;
    memset(&a, 0, sizeof a);
    a.thread = thread;
    a.stack = stack;
    a.start_ns = CONV_START_NS + (int64_t)(at_ms * CONV_MS);
    a.end_ns = a.start_ns + 10;
    a.domain = TRC_API_RUNTIME;
    a.name = "cudaLaunchKernel";
    a.correlation = corr;
    a.flags = TRC_API_LAUNCH;
    assert_int_equal(trc_writer_api_call(w, &a), TRC_OK);
}

static void kernel(trc_writer *w, uint32_t device, uint32_t corr, double from_ms, double to_ms)
{
    trc_gpu_kernel k;
    memset(&k, 0, sizeof k);
    k.where.pid = 100;
    k.where.device = device;
    k.where.context = 1;
    k.where.stream = 7;
    k.where.correlation = corr;
    k.start_ns = CONV_START_NS + (int64_t)(from_ms * CONV_MS);
    k.end_ns = CONV_START_NS + (int64_t)(to_ms * CONV_MS);
    k.name = "k";
    assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
}

/* Thread A (100/100) runs main>work (on CPU, GIL) at 0-2 ms and at
 * 1000 ms, main>fib>fib (on CPU, GIL known not held) at 3-4 ms; thread
 * B (100/101) idles in main>spin at 0-9 ms.  With gpu: two kernels on
 * device 0 that overlap (1000.0-1000.5 launched from work, 1000.2-1000.8
 * from fib), one on device 1 (0-1 ms, unknown launch), and device 1's
 * NVML memory at 2 GiB. */
static conv_tb *write_trace(int gpu)
{
    conv_tb *b = conv_tb_new();
    assert_non_null(b);
    uint32_t fmain = conv_tb_frame(b, "main", "app.py", 10, 1);
    uint32_t fwork = conv_tb_frame(b, "work", "app.py", 20, 19);
    uint32_t fspin = conv_tb_frame(b, "spin", "app.py", 30, 29);
    uint32_t ffib = conv_tb_frame(b, "fib", "app.py", 40, 39);
    uint32_t work = conv_tb_stack(b, 2, (uint32_t[]){fmain, fwork});
    uint32_t fib = conv_tb_stack(b, 3, (uint32_t[]){fmain, ffib, ffib});
    uint32_t spin = conv_tb_stack(b, 2, (uint32_t[]){fmain, fspin});
    uint32_t ta = conv_tb_thread(b, 100, 100, "MainThread");
    uint32_t tb = conv_tb_thread(b, 100, 101, "worker");
    for (int i = 0; i < 3; i++)
        conv_tb_sample(b, i, ta, work, ON_GIL, 0);
    for (int i = 3; i < 5; i++)
        conv_tb_sample(b, i, ta, fib, ON_NOGIL, 0);
    for (int i = 0; i < 10; i++)
        conv_tb_sample(b, i, tb, spin, 0, 0);
    trc_writer *w = conv_tb_writer(b);
    if (gpu) {
        uint32_t mem;
        assert_int_equal(trc_writer_counter_def(w, "gpu.mem.used", "bytes", -1, 1, &mem), TRC_OK);
        assert_int_equal(trc_writer_counter(w, mem, CONV_START_NS + CONV_MS, 2147483648.0),
                         TRC_OK);
        kernel(w, 1, 0, 0, 1);
        launch(w, ta, work, 7, 999);
        launch(w, ta, fib, 8, 999);
    }
    conv_tb_sample(b, 1000, ta, work, ON_GIL, 0);
    if (gpu) {
        kernel(w, 0, 7, 1000.0, 1000.5);
        kernel(w, 0, 8, 1000.2, 1000.8);
    }
    assert_int_equal(conv_tb_status(b), TRC_OK);
    return b;
}

typedef struct run {
    conv_tb *b;
    trc_reader *r;
    top_model *m;
    top_table t;
} run;

/* Read the trace through the pipeline into a model keeping 100 ms. */
static void run_open(run *x, int gpu)
{
    memset(x, 0, sizeof *x);
    x->b = write_trace(gpu);
    x->r = conv_tb_reader(x->b);
    assert_non_null(x->r);
    x->m = top_new(100 * CONV_MS);
    assert_non_null(x->m);
    exp_sink *s = exp_sink_new(&exp_sink_top, x->m);
    assert_non_null(s);
    conv_filter f = {.to_ns = -1, .idle = 1};
    conv_losses losses;
    conv_pipe_result res;
    conv_pipe_run(x->r, "mem.trc", &f, s, 0, stdout, &losses, &res);
    assert_int_equal(res.end, CONV_PIPE_DONE);
    exp_sink_free(s);
    conv_filter_cleanup(&f);
}

static void run_close(run *x)
{
    top_table_cleanup(&x->t);
    top_free(x->m);
    trc_reader_free(x->r);
    conv_tb_free(x->b);
}

static void fill(run *x, int since_start, int wall, int gil_only, top_sort sort)
{
    top_view v = {since_start, wall, gil_only, sort};
    assert_int_equal(top_table_fill(x->m, &v, &x->t), TRC_OK);
}

/* Row i is function fn with these own/total sample counts. */
static void row_is(const top_table *t, size_t i, const char *fn, uint32_t line, uint64_t own,
                   uint64_t total)
{
    assert_true(i < t->n);
    assert_string_equal(t->rows[i].function, fn);
    assert_string_equal(t->rows[i].file, "app.py");
    assert_int_equal(t->rows[i].line, line);
    assert_int_equal(t->rows[i].own_n, own);
    assert_int_equal(t->rows[i].total_n, total);
    assert_int_equal(t->rows[i].own_ns, own * CONV_PERIOD_NS);
    assert_int_equal(t->rows[i].total_ns, total * CONV_PERIOD_NS);
}

static void test_since_start_on_cpu(void **state)
{
    run x;
    run_open(&x, 0);
    fill(&x, 1, 0, 0, TOP_SORT_OWN);
    assert_int_equal(x.t.samples, 6);
    assert_int_equal(x.t.sample_ns, 6 * CONV_PERIOD_NS);
    assert_int_equal(x.t.n, 3);
    row_is(&x.t, 0, "work", 20, 4, 4);
    row_is(&x.t, 1, "fib", 40, 2, 2); /* twice on each stack, once in the total */
    row_is(&x.t, 2, "main", 10, 0, 6);
    assert_int_equal(x.t.span_ns, 1000 * CONV_MS);
    assert_false(x.t.has_gpu);
    assert_int_equal(x.t.n_devs, 0);
    assert_true(x.t.ended);
    fill(&x, 1, 0, 0, TOP_SORT_TOTAL_TIME);
    row_is(&x.t, 0, "main", 10, 0, 6);
    row_is(&x.t, 1, "work", 20, 4, 4);
    row_is(&x.t, 2, "fib", 40, 2, 2);
    fill(&x, 1, 0, 0, TOP_SORT_NAME);
    row_is(&x.t, 0, "fib", 40, 2, 2);
    row_is(&x.t, 1, "main", 10, 0, 6);
    row_is(&x.t, 2, "work", 20, 4, 4);
    run_close(&x);
}

static void test_wall_and_gil(void **state)
{
    run x;
    run_open(&x, 0);
    fill(&x, 1, 1, 0, TOP_SORT_OWN_TIME);
    assert_int_equal(x.t.samples, 16);
    assert_int_equal(x.t.n, 4);
    row_is(&x.t, 0, "spin", 30, 10, 10);
    row_is(&x.t, 1, "work", 20, 4, 4);
    row_is(&x.t, 2, "fib", 40, 2, 2);
    row_is(&x.t, 3, "main", 10, 0, 16);
    fill(&x, 1, 0, 1, TOP_SORT_TOTAL);
    assert_int_equal(x.t.samples, 4);
    assert_int_equal(x.t.n, 2);
    row_is(&x.t, 0, "main", 10, 0, 4);
    row_is(&x.t, 1, "work", 20, 4, 4);
    run_close(&x);
}

static void test_window_slides(void **state)
{
    run x;
    run_open(&x, 0);
    fill(&x, 0, 1, 0, TOP_SORT_OWN);
    assert_int_equal(x.t.samples, 1); /* only the sample at 1000 ms is in the last 100 ms */
    assert_int_equal(x.t.span_ns, 100 * CONV_MS);
    assert_int_equal(x.t.n, 2);
    row_is(&x.t, 0, "work", 20, 1, 1);
    row_is(&x.t, 1, "main", 10, 0, 1);
    run_close(&x);
}

static void test_gpu(void **state)
{
    run x;
    run_open(&x, 1);
    fill(&x, 0, 0, 0, TOP_SORT_GPU);
    assert_true(x.t.has_gpu);
    /* main launched both kernels, work the first, fib (twice on its
     * stack) the second; spin nothing */
    assert_int_equal(x.t.n, 3);
    assert_string_equal(x.t.rows[0].function, "main");
    assert_int_equal(x.t.rows[0].gpu_ns, 1100000);
    assert_string_equal(x.t.rows[1].function, "fib");
    assert_int_equal(x.t.rows[1].gpu_ns, 600000);
    assert_string_equal(x.t.rows[2].function, "work");
    assert_int_equal(x.t.rows[2].gpu_ns, 500000);
    assert_int_equal(x.t.n_devs, 2);
    /* device 0: the union of 1000.0-1000.5 and 1000.2-1000.8 in the
     * window that ends at 1000.8 */
    assert_int_equal(x.t.devs[0].device, 0);
    assert_int_equal(x.t.devs[0].busy_ns, 800000);
    assert_int_equal(x.t.devs[0].span_ns, 100 * CONV_MS);
    assert_false(x.t.devs[0].has_mem);
    /* device 1: its kernel ended before the window; its memory stands */
    assert_int_equal(x.t.devs[1].device, 1);
    assert_int_equal(x.t.devs[1].busy_ns, 0);
    assert_true(x.t.devs[1].has_mem);
    assert_true(x.t.devs[1].mem_used == 2147483648.0);
    fill(&x, 1, 0, 0, TOP_SORT_GPU);
    assert_int_equal(x.t.devs[0].busy_ns, 800000);
    assert_int_equal(x.t.devs[1].busy_ns, 1000000);
    assert_int_equal(x.t.devs[1].span_ns, 1000800000);
    assert_int_equal(x.t.rows[0].gpu_ns, 1100000);
    /* the share of GPU time with a Python line, since the start whatever
     * the view: 1.1 ms launched from Python lines, device 1's 1 ms from
     * no launch call; the header says it in trc-stats --gpu's words */
    assert_int_equal(x.t.gpu_lines.direct_ns, 1100000);
    assert_int_equal(x.t.gpu_lines.via_ns, 0);
    assert_int_equal(x.t.gpu_lines.none_ns, 1000000);
    fill(&x, 0, 0, 0, TOP_SORT_GPU);
    assert_int_equal(x.t.gpu_lines.none_ns, 1000000);
    top_view v = {0, 0, 0, TOP_SORT_GPU};
    top_context c = {0.1, "", "", "", 0, 0};
    char lines[8][TOP_LINE];
    size_t nh = top_format_header(&x.t, &v, &c, lines, 8);
    assert_int_equal(nh, 6);
    /* two devices: each one's share follows on a line of its own, device
     * 0's 1.1 ms all direct, device 1's 1 ms none */
    assert_int_equal(x.t.gpu_lines.n_dev, 2);
    assert_int_equal(x.t.gpu_lines.dev[0].direct_ns, 1100000);
    assert_int_equal(x.t.gpu_lines.dev[1].none_ns, 1000000);
    assert_string_equal(lines[3], "GPU lines: 52.38% of GPU time has a Python line (direct "
                                  "52.38%, via a waiting thread 0.00%, none 47.62%)");
    assert_string_equal(lines[4], "GPU lines: device 0: 100.00% (direct 100.00%, via a waiting "
                                  "thread 0.00%, none 0.00%)");
    assert_string_equal(lines[5], "GPU lines: device 1: 0.00% (direct 0.00%, via a waiting "
                                  "thread 0.00%, none 100.00%)");
    run_close(&x);
}

/* Many devices: every device's share whole on its own header line (one
 * line holding them all would be cut at TOP_LINE bytes past the fourth
 * or fifth), devices past EXP_GPU_SHARE_DEVICES together; the snapshot
 * prints them all. */
static void test_gpu_many_devices(void **state)
{
    top_table t = {0};
    t.has_gpu = 1;
    for (uint32_t d = 0; d < EXP_GPU_SHARE_DEVICES + 4; d++) {
        /* device d: 100 us direct, d * 10 us via a waiting thread, 50 us none */
        exp_gpu_hit h = {.origin = EXP_GPU_PYTHON, .dur_ns = 100000, .device = d};
        exp_gpu_stats_add(&t.gpu_lines, &h);
        h = (exp_gpu_hit){.origin = EXP_GPU_PYTHON, .waiter = 7, .dur_ns = d * 10000, .device = d};
        exp_gpu_stats_add(&t.gpu_lines, &h);
        h = (exp_gpu_hit){.origin = EXP_GPU_NO_PYTHON, .dur_ns = 50000, .device = d};
        exp_gpu_stats_add(&t.gpu_lines, &h);
    }
    top_view v = {0, 0, 0, TOP_SORT_GPU};
    top_context c = {0.1, "", "", "", 0, 0};
    char lines[TOP_HEADER_MAX][TOP_LINE];
    size_t nh = top_format_header(&t, &v, &c, lines, TOP_HEADER_MAX);
    assert_int_equal(nh, 2 + EXP_GPU_SHARE_DEVICES + 1);
    char want[TOP_LINE];
    for (uint32_t d = 0; d < EXP_GPU_SHARE_DEVICES; d++) {
        /* d * 10 us of 150 + d * 10 us via; 100 direct, 50 none */
        double all = 150.0 + d * 10.0;
        snprintf(want, sizeof want, "GPU lines: device %u: %.2f%% (direct %.2f%%, via a waiting "
                 "thread %.2f%%, none %.2f%%)", d, 100.0 * (100 + d * 10) / all,
                 100.0 * 100 / all, 100.0 * d * 10 / all, 100.0 * 50 / all);
        assert_string_equal(lines[2 + d], want);
    }
    /* devices 16..19: 400 us direct, 700 us via, 200 us none */
    assert_string_equal(lines[2 + EXP_GPU_SHARE_DEVICES],
                        "GPU lines: other devices: 84.62% (direct 30.77%, via a waiting thread "
                        "53.85%, none 15.38%)");
    /* fewer lines allowed: cut whole lines, never one in half */
    assert_int_equal(top_format_header(&t, &v, &c, lines, 5), 5);
    assert_string_equal(lines[4], "GPU lines: device 2: 70.59% (direct 58.82%, via a waiting "
                                  "thread 11.76%, none 29.41%)");

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(top_write_snapshot(out, &t, &v, &c, 0), 0);
    fclose(out);
    assert_non_null(strstr(text, "\nGPU lines: device 15: "));
    assert_non_null(strstr(text, "\nGPU lines: other devices: 84.62% "));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_since_start_on_cpu),
        cmocka_unit_test(test_wall_and_gil),
        cmocka_unit_test(test_window_slides),
        cmocka_unit_test(test_gpu),
        cmocka_unit_test(test_gpu_many_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
