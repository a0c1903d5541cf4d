/*
 * test_chrome_gpu.c — GPU data in the Chrome exporter
 * (lib/export/chrome/chrome_gpu.c): the hand-made stream of
 * tests/support/timeline_traces.c, whose intervals nest, overlap, hide
 * each other and repeat, checked slice by slice (lanes and flows); the
 * synthetic training trace checked against what the generator says it
 * wrote (flows, kernel time); slices waiting for their flow partner in
 * memory or in the temporary file (wait_mem down to 1) write the same
 * bytes; failing the Nth allocation never crashes and never changes
 * what a successful run writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "tests/support/export_run.h"
#include "tests/support/timeline_traces.h"

/* every event, as trc2chrome passes GPU records */
static const export_run_opts chrome_all = {.chrome = 1, .all = 1};
#define GPU_PID 0x7fff0000

static char hand_path[64], train_path[64];
static convb_info train_info;

static int setup(void **state)
{
    int fd;

    strcpy(hand_path, "/tmp/test_chrome_gpu_XXXXXX");
    strcpy(train_path, "/tmp/test_chrome_gpu_XXXXXX");
    if ((fd = mkstemp(hand_path)) < 0 || convb_write_gpu_hand(fd) != TRC_OK || close(fd) != 0)
        return -1;
    if ((fd = mkstemp(train_path)) < 0)
        return -1;
    if (convb_write_gpu(fd, 600, &train_info) != TRC_OK)
        return -1;
    return close(fd);
}

static int teardown(void **state)
{
    unlink(hand_path);
    unlink(train_path);
    return 0;
}

static int64_t ns_of(const cJSON *e, const char *k)
{
    return (int64_t)llround(json_get(e, k)->valuedouble * 1000.0);
}

/* ---- Chrome ---------------------------------------------------------------- */

typedef struct xs {
    const char *name;
    int64_t tid, start, end, bind;
    int out, in;
} xs;

static void test_chrome_lanes_flows(void **state)
{
    cJSON *doc = export_run_json(hand_path, &chrome_all, NULL);
    const cJSON *e;
    xs s[32];
    int n = 0;
    int64_t lane0 = -1, lane1 = -1;
    const char *lane1_name = NULL;

    cJSON_ArrayForEach(e, json_get(doc, "traceEvents")) {
        const char *ph = json_get(e, "ph")->valuestring;
        if (strcmp(ph, "X") == 0) {
            const cJSON *b = cJSON_GetObjectItem(e, "bind_id");
            assert_true(n < 32);
            s[n].name = json_get(e, "name")->valuestring;
            s[n].tid = (int64_t)json_get(e, "tid")->valuedouble;
            s[n].start = ns_of(e, "ts");
            s[n].end = s[n].start + ns_of(e, "dur");
            s[n].bind = b ? (int64_t)b->valuedouble : 0;
            s[n].out = cJSON_IsTrue(cJSON_GetObjectItem(e, "flow_out"));
            s[n].in = cJSON_IsTrue(cJSON_GetObjectItem(e, "flow_in"));
            if (strcmp(s[n].name, "kA") == 0) {
                assert_true(json_get(e, "pid")->valuedouble == GPU_PID);
                lane0 = s[n].tid;
            }
            if (strcmp(s[n].name, "kC") == 0)
                lane1 = s[n].tid;
            n++;
        }
    }
    /* 9 kernels less the zero-length one, 3 calls */
    assert_int_equal(n, 7 + 3);
    assert_int_equal(lane0, 5); /* the stream's own number */
    assert_true(lane1 != lane0 && lane1 >= 0x40000000);
    cJSON_ArrayForEach(e, json_get(doc, "traceEvents")) {
        if (strcmp(json_get(e, "ph")->valuestring, "M") == 0 &&
            strcmp(json_get(e, "name")->valuestring, "thread_name") == 0 &&
            (int64_t)json_get(e, "tid")->valuedouble == lane1)
            lane1_name = json_get(json_get(e, "args"), "name")->valuestring;
    }
    assert_non_null(lane1_name);
    assert_string_equal(lane1_name, "stream 5 (2)");
    for (int i = 0; i < n; i++) {
        /* everything but C shares the stream's first lane */
        if (s[i].name[0] == 'k')
            assert_true(s[i].tid == (strcmp(s[i].name, "kC") == 0 ? lane1 : lane0));
        /* one flow: cudaLaunchKernel [50,60] -> kA; not the driver call
         * inside it, not the call that starts after its kernel */
        if (strcmp(s[i].name, "kA") == 0)
            assert_true(s[i].bind == 1 && s[i].in && !s[i].out);
        else if (strcmp(s[i].name, "cudaLaunchKernel") == 0 && s[i].start == 50)
            assert_true(s[i].bind == 1 && s[i].out && !s[i].in);
        else
            assert_true(s[i].bind == 0 && !s[i].in && !s[i].out);
    }
    cJSON_Delete(doc);
}

/* The training trace: the flows and kernel time the generator wrote. */
static void test_chrome_train(void **state)
{
    cJSON *doc = export_run_json(train_path, &chrome_all, NULL);
    const cJSON *e;
    uint64_t flows_out = 0, flows_in = 0, kernel_ns = 0, counters = 0;

    cJSON_ArrayForEach(e, json_get(doc, "traceEvents")) {
        const char *ph = json_get(e, "ph")->valuestring;
        if (strcmp(ph, "C") == 0 && json_get(e, "pid")->valuedouble >= GPU_PID)
            counters++;
        if (strcmp(ph, "X") != 0)
            continue;
        flows_out += cJSON_IsTrue(cJSON_GetObjectItem(e, "flow_out"));
        flows_in += cJSON_IsTrue(cJSON_GetObjectItem(e, "flow_in"));
        if (strcmp(json_get(e, "cat")->valuestring, "kernel") == 0)
            kernel_ns += (uint64_t)ns_of(e, "dur");
    }
    assert_true(train_info.flows > 500);
    assert_true(flows_out == train_info.flows && flows_in == train_info.flows);
    assert_true(kernel_ns == train_info.kernel_ns);
    assert_true(counters == train_info.counter_values);
    cJSON_Delete(doc);
}

/* ---- failure injection ------------------------------------------------------- */

/* Moving waiting slices to the temporary file changes no byte. */
static void test_chrome_wait_spill(void **state)
{
    const char *paths[] = {hand_path, train_path};
    uint32_t sizes[] = {1, 2, 3, 64};
    trc_status st;

    for (size_t p = 0; p < 2; p++) {
        export_run_opts o = chrome_all;
        char *want = export_run(paths[p], &o, &st);
        assert_non_null(want);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            o.ch.wait_mem = sizes[i];
            char *got = export_run(paths[p], &o, &st);
            assert_non_null(got);
            assert_string_equal(got, want);
            free(got);
        }
        free(want);
    }
}

static void test_chrome_nomem(void **state) { export_run_nomem(train_path, &chrome_all); }

static void test_chrome_wait_spill_nomem(void **state)
{
    export_run_opts o = chrome_all;
    o.ch.wait_mem = 1;
    export_run_nomem(train_path, &o);
}
static void test_chrome_hand_nomem(void **state) { export_run_nomem(hand_path, &chrome_all); }

/* Every failure of the waiters' temporary file: an I/O error, or the
 * bytes of a run without failures. */
static void test_chrome_wait_spill_ioerr(void **state)
{
    export_run_opts o = chrome_all;
    o.ch.wait_mem = 1;
    export_run_ioerr(train_path, &o, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chrome_lanes_flows),
        cmocka_unit_test(test_chrome_train),
        cmocka_unit_test(test_chrome_wait_spill),
        cmocka_unit_test(test_chrome_nomem),
        cmocka_unit_test(test_chrome_wait_spill_nomem),
        cmocka_unit_test(test_chrome_hand_nomem),
        cmocka_unit_test(test_chrome_wait_spill_ioerr),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
