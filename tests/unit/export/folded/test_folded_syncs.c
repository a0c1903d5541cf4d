/*
 * test_folded_syncs.c — --syncs: the sync stage (lib/export/common/
 * gpu_sync.c) and its two sinks (lib/export/folded/sync_sink.c) over a
 * trace written by the writer with known syncs, asserted exactly: host
 * time blocked (duration minus capture, clamped at 0), GPU work waited
 * for (activities of the same process ending during the call, written
 * before or after the call), the last work waited for, and the lines
 * (trc-lines' Sync ms column, and the same numbers as sync_ns in its
 * JSON).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "lib/export/common/gpu_sync.h"
#include "lib/export/folded/folded.h"
#include "lib/export/lines/lines.h"
#include "tests/support/folded_traces.h"

#define US 1000LL
#define T(us) (CONV_START_NS + (us) * US)

static void kernel(trc_writer *w, int64_t pid, int64_t from_us, int64_t to_us)
{
    trc_gpu_kernel k;
    memset(&k, 0, sizeof k);
    k.where = (trc_gpu_where){pid, 0, 1, 7, 0};
    k.start_ns = T(from_us);
    k.end_ns = T(to_us);
    k.name = "k";
    assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
}

static void call(trc_writer *w, uint32_t th, const char *name, int64_t from_us, int64_t to_us,
                 uint32_t stack, uint32_t flags, uint64_t capture_us)
{
    trc_api_call a = {th, T(from_us), T(to_us), TRC_API_RUNTIME, name, 0, stack, 0, flags,
                      capture_us * US, 0, 0};
    assert_int_equal(trc_writer_api_call(w, &a), TRC_OK);
}

/* pid 10, thread main: item() at a.py:20 waits twice (a stream sync of
 * 4000 us with 500 us of capture; a cudaMemcpy of 100 us), sync() at
 * a.py:30 once (50 us, capture 100 us: blocked 0).  Kernel K1 [1000,
 * 5000] is written before the stream sync, K2 [5500, 5900] after it;
 * pid 20's kernel ends inside it too but is another process's. */
static conv_tb *syncs_trace(void)
{
    conv_tb *b = conv_tb_new();
    trc_writer *w = conv_tb_writer(b);
    uint32_t th = conv_tb_thread(b, 10, 11, "main");
    uint32_t fm = conv_tb_frame(b, "main", "a.py", 3, 1);
    uint32_t fi = conv_tb_frame(b, "item", "a.py", 20, 19);
    uint32_t fs = conv_tb_frame(b, "sync", "a.py", 30, 29);
    uint32_t s_item = conv_tb_stack(b, 2, (uint32_t[]){fm, fi});
    uint32_t s_sync = conv_tb_stack(b, 2, (uint32_t[]){fm, fs});
    /* samples, so that trc-lines picks both functions */
    conv_tb_sample(b, 1, th, s_item, TRC_SAMPLE_ON_CPU, 0);
    conv_tb_sample(b, 2, th, s_sync, TRC_SAMPLE_ON_CPU, 0);

    call(w, th, "cudaLaunchKernel", 100, 110, s_item, TRC_API_LAUNCH, 0);   /* no sync */
    kernel(w, 10, 1000, 5000);
    kernel(w, 20, 2500, 3000);
    call(w, th, "cudaStreamSynchronize", 2000, 6000, s_item, TRC_API_SYNC, 500);
    kernel(w, 10, 5500, 5900);
    call(w, th, "cudaMemcpy", 7000, 7100, s_item, TRC_API_SYNC | TRC_API_LAUNCH, 0);
    trc_gpu_memcpy m;
    memset(&m, 0, sizeof m);
    m.where = (trc_gpu_where){10, 0, 1, 7, 0};
    m.start_ns = T(7010);
    m.end_ns = T(7090);
    m.copy_kind = TRC_COPY_DTOH;
    assert_int_equal(trc_writer_gpu_memcpy(w, &m), TRC_OK);
    call(w, th, "cudaDeviceSynchronize", 8000, 8050, s_sync, TRC_API_SYNC, 100);
    assert_int_equal(conv_tb_status(b), TRC_OK);
    return b;
}

typedef struct got {
    exp_sync_hit h[8];
    char names[8][32];
    int n;
} got;

static trc_status collect(void *ctx, const trc_reader *r, const exp_sync_hit *h)
{
    got *g = ctx;
    assert_true(g->n < 8);
    g->h[g->n] = *h;
    snprintf(g->names[g->n], sizeof g->names[0], "%s", h->name);
    g->n++;
    return TRC_OK;
}

static void test_stage(void **state)
{
    conv_tb *b = syncs_trace();
    trc_reader *r = conv_tb_reader(b);
    got g = {0};
    exp_gpu_sync *s = exp_sync_new(collect, &g);
    const trc_event *ev;

    assert_non_null(s);
    while (trc_reader_next(r, &ev) == TRC_OK)
        assert_int_equal(exp_sync_event(s, r, ev), TRC_OK);
    assert_int_equal(exp_sync_finish(s, r), TRC_OK);
    assert_int_equal(g.n, 3);
    assert_string_equal(g.names[0], "cudaStreamSynchronize");
    assert_int_equal(g.h[0].pid, 10);
    assert_int_equal(g.h[0].origin, EXP_GPU_PYTHON);
    assert_int_equal(g.h[0].blocked_ns, 3500 * US);
    assert_int_equal(g.h[0].waited_ns, (3000 + 400) * US);   /* K1 from the call's start, K2 */
    assert_true(g.h[0].has_last);
    assert_int_equal(g.h[0].last_end_ns, T(5900));
    assert_string_equal(g.names[1], "cudaMemcpy");
    assert_int_equal(g.h[1].blocked_ns, 100 * US);
    assert_int_equal(g.h[1].waited_ns, 80 * US);
    assert_int_equal(g.h[1].last_start_ns, T(7010));
    assert_string_equal(g.names[2], "cudaDeviceSynchronize");
    assert_int_equal(g.h[2].blocked_ns, 0);                  /* capture > duration: clamped */
    assert_int_equal(g.h[2].waited_ns, 0);
    assert_true(g.h[2].has_last);                            /* the last before it */
    assert_int_equal(g.h[2].last_end_ns, T(7090));
    assert_int_equal(g.h[0].stack, g.h[1].stack);
    assert_int_not_equal(g.h[0].stack, g.h[2].stack);
    exp_sync_free(s);
    trc_reader_free(r);
    conv_tb_free(b);
}

static char *run_sink(const exp_sink_type *t, const void *opts)
{
    conv_tb *b = syncs_trace();
    trc_reader *r = conv_tb_reader(b);
    exp_sink *s = exp_sink_new(t, opts);
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    const trc_event *ev;

    assert_non_null(s);
    while (trc_reader_next(r, &ev) == TRC_OK)
        assert_int_equal(exp_sink_event(s, r, ev, f), TRC_OK);
    assert_int_equal(exp_sink_finish(s, r, f), TRC_OK);
    fclose(f);
    exp_sink_free(s);
    trc_reader_free(r);
    conv_tb_free(b);
    return data;
}

static void test_collapsed(void **state)
{
    exp_collapsed_options us = {0, 0, 0, 0, 1}, calls = {0, 0, 0, 0, 0};
    char *out = run_sink(&exp_sink_collapsed_syncs, &us);
    /* the sync of blocked 0 rounds to 0 us: left out, as every 0 line */
    assert_string_equal(out, "main (a.py:3);item (a.py:20);cudaMemcpy 100\n"
                             "main (a.py:3);item (a.py:20);cudaStreamSynchronize 3500\n");
    free(out);
    out = run_sink(&exp_sink_collapsed_syncs, &calls);
    assert_string_equal(out, "main (a.py:3);item (a.py:20);cudaMemcpy 1\n"
                             "main (a.py:3);item (a.py:20);cudaStreamSynchronize 1\n"
                             "main (a.py:3);sync (a.py:30);cudaDeviceSynchronize 1\n");
    free(out);
}

static void test_report(void **state)
{
    char *out = run_sink(&exp_sink_sync_report, NULL);
    assert_string_equal(
        out,
        "Blocking syncs: 3 calls, 0.003600 s host time blocked, 0.003480 s GPU work waited for\n"
        "\n"
        "   calls   blocked(s)    waited(s) blocked/call  line (calls)\n"
        "       2     0.003600     0.003480     0.001800  a.py:20(item) "
        "(cudaStreamSynchronize, cudaMemcpy)\n"
        "       1     0.000000     0.000000     0.000000  a.py:30(sync) (cudaDeviceSynchronize)\n");
    free(out);
}

/* trc-lines: a "Sync ms" column (host time blocked, by line) and the
 * totals line, once the trace has syncs. */
static void test_lines_column(void **state)
{
    lines_opts o = {0};
    /* run_sink feeds events only (no call-site stage): no GPU column */
    char *out = run_sink(&exp_sink_lines, &o);
    assert_non_null(strstr(out, "; 3 blocking syncs, 3.600 ms blocked\n"));
    assert_non_null(strstr(out, "Share   Sync ms  Source"));
    /* item: line 20 blocked 3500 + 100 us; sync: line 30 blocked 0; main: both */
    assert_non_null(strstr(out, "item  a.py:19\n  on-CPU 0.001 s (50.0 % of the trace), own "
                                "0.001 s; on-CPU 0.001 s, wall 0.001 s; blocked in syncs "
                                "3.600 ms\n"));
    assert_non_null(strstr(out, "\n     20      0.001     0.001  100.0 %     3.600  \n"));
    assert_non_null(strstr(out, "\n     30      0.001     0.001  100.0 %     0.000  \n"));
    assert_non_null(strstr(out, "\n      3      0.002     0.002  100.0 %     3.600  \n"));
    free(out);
}

/* The JSON line of item's listing for line: its "sync_ns". */
static double json_line_sync(const cJSON *doc, const char *function, double line)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(doc, "functions"))
    {
        if (strcmp(cJSON_GetObjectItem(f, "function")->valuestring, function) != 0)
            continue;
        const cJSON *l;
        cJSON_ArrayForEach(l, cJSON_GetObjectItem(f, "lines"))
        {
            if (cJSON_GetObjectItem(l, "line")->valuedouble == line) {
                const cJSON *v = cJSON_GetObjectItem(l, "sync_ns");
                assert_true(cJSON_IsNumber(v));
                return v->valuedouble;
            }
        }
    }
    fail_msg("no line %g of %s in the JSON", line, function);
    return -1;
}

/* trc-lines --json: the Sync ms column as sync_ns, per line, per
 * function and in total, with the count of sync calls. */
static void test_lines_json(void **state)
{
    lines_opts o = {0};
    o.json = 1;
    char *out = run_sink(&exp_sink_lines, &o);
    cJSON *doc = cJSON_Parse(out);
    assert_non_null(doc);
    assert_int_equal(cJSON_GetObjectItem(doc, "syncs")->valuedouble, 3);
    const cJSON *total = cJSON_GetObjectItem(doc, "total");
    assert_int_equal(cJSON_GetObjectItem(total, "sync_ns")->valuedouble, 3600000);
    /* item: line 20 blocked 3500 + 100 us; sync: line 30 blocked 0 */
    assert_int_equal(json_line_sync(doc, "item", 20), 3600000);
    assert_int_equal(json_line_sync(doc, "sync", 30), 0);
    assert_int_equal(json_line_sync(doc, "main", 3), 3600000);
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(doc, "functions"))
    {
        if (strcmp(cJSON_GetObjectItem(f, "function")->valuestring, "item") == 0)
            assert_int_equal(
                cJSON_GetObjectItem(cJSON_GetObjectItem(f, "time"), "sync_ns")->valuedouble,
                3600000);
    }
    cJSON_Delete(doc);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage),
        cmocka_unit_test(test_collapsed),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_lines_column),
        cmocka_unit_test(test_lines_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
