/*
 * test_convb_gpu.c — GPU data in the speedscope and Chrome exporters
 * (lib/export/speedscope/speedscope_gpu.c, chrome_gpu.c): a hand-made stream whose
 * intervals nest, overlap, hide each other and repeat, checked event by
 * event (speedscope's evented rules) and slice by slice (Chrome lanes and
 * flows); the synthetic training trace of tests/support/convb_traces.c
 * checked against what the generator says it wrote (flows, kernel time);
 * failing the Nth allocation never crashes and never changes what a
 * successful run writes.
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

#include "lib/util/alloc.h"
#include "lib/export/chrome/chrome.h"
#include "lib/export/speedscope/speedscope.h"
#include "tests/support/convb_traces.h"

#define T0 1000000000LL  /* segment start of the hand-made trace */
#define GPU_PID 0x7fff0000

static char hand_path[64], train_path[64];
static convb_info train_info;

/* ---- the hand-made trace ------------------------------------------------- */

static void kernel(trc_writer *w, const char *name, uint32_t stream, uint32_t corr, int64_t s,
                   int64_t e)
{
    trc_gpu_kernel k;
    memset(&k, 0, sizeof k);
    k.where.pid = 77;
    k.where.device = 0;
    k.where.context = 1;
    k.where.stream = stream;
    k.where.correlation = corr;
    k.start_ns = T0 + s;
    k.end_ns = T0 + e;
    k.name = name;
    k.grid[0] = k.block[0] = 1;
    assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
}

static void call(trc_writer *w, uint32_t th, const char *name, trc_api_domain d, uint32_t corr,
                 int64_t s, int64_t e)
{
    trc_api_call a;
    memset(&a, 0, sizeof a);
    a.thread = th;
    a.start_ns = T0 + s;
    a.end_ns = T0 + e;
    a.domain = d;
    a.name = name;
    a.correlation = corr;
    a.flags = TRC_API_LAUNCH;
    assert_int_equal(trc_writer_api_call(w, &a), TRC_OK);
}

/* Stream 5 of device 0 (times in ns from the start):
 *   A [100,200]  B [120,150] inside A  C [180,260] starts in A, ends after
 *   D [190,200] inside A, hidden by C's clipping in speedscope
 *   E [300,300] zero-length  F, G [400,450] identical   H [420,430] in F
 * Calls on thread 78: cudaLaunchKernel [50,60] (corr 1 -> A) around
 * cuLaunchKernel [52,58] (corr 1001, written first, no activity);
 * cudaLaunchKernel [500,510] (corr 8 -> H, which starts before it). */
static int write_hand(const char *path)
{
    trc_writer_options o;
    trc_status st;
    uint32_t th;
    FILE *f = fopen(path, "wb");
    trc_writer *w;

    if (!f)
        return -1;
    memset(&o, 0, sizeof o);
    o.recorder = "test";
    o.host = "h";
    o.start_ns = T0;
    o.wall_ns = 1;
    w = trc_writer_open_fd(fileno(f), &o, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_thread(w, 77, 78, "launcher", &th), TRC_OK);
    call(w, th, "cuLaunchKernel", TRC_API_DRIVER, 1001, 52, 58);
    call(w, th, "cudaLaunchKernel", TRC_API_RUNTIME, 1, 50, 60);
    kernel(w, "kB", 5, 2, 120, 150);
    kernel(w, "kA", 5, 1, 100, 200);
    kernel(w, "kC", 5, 3, 180, 260);
    kernel(w, "kD", 5, 4, 190, 200);
    kernel(w, "kE", 5, 5, 300, 300);
    kernel(w, "kF", 5, 6, 400, 450);
    kernel(w, "kF", 5, 7, 400, 450);
    kernel(w, "kH", 5, 8, 420, 430);
    call(w, th, "cudaLaunchKernel", TRC_API_RUNTIME, 8, 500, 510);
    assert_int_equal(trc_writer_close(w, T0 + 1000), TRC_OK);
    return fclose(f) == 0 ? 0 : -1;
}

static int setup(void **state)
{
    int fd;

    strcpy(hand_path, "/tmp/test_convb_gpu_XXXXXX");
    strcpy(train_path, "/tmp/test_convb_gpu_XXXXXX");
    if ((fd = mkstemp(hand_path)) < 0)
        return -1;
    close(fd);
    if (write_hand(hand_path) || (fd = mkstemp(train_path)) < 0)
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

/* ---- running an exporter --------------------------------------------------- */

/* The output of the Chrome (chrome != 0) or speedscope exporter for path,
 * or NULL with *st_out set when an exporter call failed.  Caller frees. */
static char *convert(const char *path, int chrome_kind, trc_status *st_out)
{
    trc_status st = TRC_OK, rst;
    const trc_event *ev;
    char *buf = NULL;
    size_t len = 0;
    FILE *out;
    sscope *ss = NULL;
    chrome *ch = NULL;
    trc_reader *r = trc_reader_open_path(path, &st);

    if (!r) { /* out of memory already */
        *st_out = st;
        return NULL;
    }
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    if (chrome_kind)
        ch = chrome_new(NULL);
    else
        ss = sscope_new(NULL);
    if (!ch && !ss) {
        st = TRC_ERR_NOMEM;
        goto out;
    }
    while ((rst = trc_reader_next(r, &ev)) == TRC_OK) {
        st = ch ? chrome_event(ch, r, ev, out) : sscope_event(ss, r, ev);
        if (st != TRC_OK)
            goto out;
    }
    if (rst != TRC_ERR_EOF) {
        st = rst;
        goto out;
    }
    st = ch ? chrome_finish(ch, r, out) : sscope_finish(ss, r, out);
out:
    chrome_free(ch);
    sscope_free(ss);
    trc_reader_free(r);
    fclose(out);
    *st_out = st;
    if (st != TRC_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static cJSON *convert_json(const char *path, int chrome_kind)
{
    trc_status st;
    char *s = convert(path, chrome_kind, &st);
    cJSON *j;
    assert_non_null(s);
    j = cJSON_Parse(s);
    assert_non_null(j);
    free(s);
    return j;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        print_error("missing key %s\n", k);
    assert_non_null(v);
    return v;
}

static int64_t ns_of(const cJSON *e, const char *k)
{
    return (int64_t)llround(get(e, k)->valuedouble * 1000.0);
}

/* ---- speedscope ------------------------------------------------------------ */

static void test_speedscope_overlaps(void **state)
{
    cJSON *doc = convert_json(hand_path, 0);
    const cJSON *frames = get(get(doc, "shared"), "frames");
    const cJSON *profiles = get(doc, "profiles"), *p, *ev;
    char seq[512];
    size_t n = 0;

    /* no samples: the only profile is the stream's */
    assert_int_equal(cJSON_GetArraySize(profiles), 1);
    p = cJSON_GetArrayItem(profiles, 0);
    assert_string_equal(get(p, "type")->valuestring, "evented");
    assert_string_equal(get(p, "name")->valuestring, "GPU 0 stream 5");
    assert_string_equal(get(p, "unit")->valuestring, "nanoseconds");
    assert_true(get(p, "startValue")->valuedouble == 100);
    assert_true(get(p, "endValue")->valuedouble == 450);
    cJSON_ArrayForEach(ev, get(p, "events")) {
        int f = (int)get(ev, "frame")->valuedouble;
        assert_true(f >= 0 && f < cJSON_GetArraySize(frames));
        n += (size_t)snprintf(seq + n, sizeof seq - n, "%s%s@%d ", get(ev, "type")->valuestring,
                              get(cJSON_GetArrayItem(frames, f), "name")->valuestring,
                              (int)get(ev, "at")->valuedouble);
    }
    /* B nests in A; C is clipped to start where A ends; D, hidden by C,
     * is left out, like the zero-length E; G nests in the identical F,
     * H in G. */
    assert_string_equal(seq, "OkA@100 OkB@120 CkB@150 CkA@200 OkC@200 CkC@260 OkF@400 OkF@400 "
                             "OkH@420 CkH@430 CkF@450 CkF@450 ");
    cJSON_Delete(doc);
}

/* ---- Chrome ---------------------------------------------------------------- */

typedef struct xs {
    const char *name;
    int64_t tid, start, end, bind;
    int out, in;
} xs;

static void test_chrome_lanes_flows(void **state)
{
    cJSON *doc = convert_json(hand_path, 1);
    const cJSON *e;
    xs s[32];
    int n = 0;
    int64_t lane0 = -1, lane1 = -1;
    const char *lane1_name = NULL;

    cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
        const char *ph = get(e, "ph")->valuestring;
        if (strcmp(ph, "X") == 0) {
            const cJSON *b = cJSON_GetObjectItem(e, "bind_id");
            assert_true(n < 32);
            s[n].name = get(e, "name")->valuestring;
            s[n].tid = (int64_t)get(e, "tid")->valuedouble;
            s[n].start = ns_of(e, "ts");
            s[n].end = s[n].start + ns_of(e, "dur");
            s[n].bind = b ? (int64_t)b->valuedouble : 0;
            s[n].out = cJSON_IsTrue(cJSON_GetObjectItem(e, "flow_out"));
            s[n].in = cJSON_IsTrue(cJSON_GetObjectItem(e, "flow_in"));
            if (strcmp(s[n].name, "kA") == 0) {
                assert_true(get(e, "pid")->valuedouble == GPU_PID);
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
    cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
        if (strcmp(get(e, "ph")->valuestring, "M") == 0 &&
            strcmp(get(e, "name")->valuestring, "thread_name") == 0 &&
            (int64_t)get(e, "tid")->valuedouble == lane1)
            lane1_name = get(get(e, "args"), "name")->valuestring;
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
    cJSON *doc = convert_json(train_path, 1);
    const cJSON *e;
    uint64_t flows_out = 0, flows_in = 0, kernel_ns = 0, counters = 0;

    cJSON_ArrayForEach(e, get(doc, "traceEvents")) {
        const char *ph = get(e, "ph")->valuestring;
        if (strcmp(ph, "C") == 0 && get(e, "pid")->valuedouble >= GPU_PID)
            counters++;
        if (strcmp(ph, "X") != 0)
            continue;
        flows_out += cJSON_IsTrue(cJSON_GetObjectItem(e, "flow_out"));
        flows_in += cJSON_IsTrue(cJSON_GetObjectItem(e, "flow_in"));
        if (strcmp(get(e, "cat")->valuestring, "kernel") == 0)
            kernel_ns += (uint64_t)ns_of(e, "dur");
    }
    assert_true(train_info.flows > 500);
    assert_true(flows_out == train_info.flows && flows_in == train_info.flows);
    assert_true(kernel_ns == train_info.kernel_ns);
    assert_true(counters == train_info.counter_values);
    cJSON_Delete(doc);
}

/* ---- failure injection ------------------------------------------------------- */

static void fail_nth(const char *path, int chrome_kind)
{
    trc_status st;
    char *want, *got;
    int done = 0, failures = 0;

    want = convert(path, chrome_kind, &st);
    assert_non_null(want);
    for (long n = 1; n < 100000 && !done; n++) {
        trc_alloc_fail_after(n);
        got = convert(path, chrome_kind, &st);
        done = trc_alloc_count() < n;
        trc_alloc_fail_after(-1);
        if (got) {
            assert_string_equal(got, want);
            free(got);
        } else {
            assert_true(st == TRC_ERR_NOMEM);
            failures++;
        }
    }
    assert_true(done);
    assert_true(failures > 20);
    free(want);
}

static void test_speedscope_nomem(void **state) { fail_nth(train_path, 0); }
static void test_chrome_nomem(void **state) { fail_nth(train_path, 1); }
static void test_chrome_hand_nomem(void **state) { fail_nth(hand_path, 1); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speedscope_overlaps),
        cmocka_unit_test(test_chrome_lanes_flows),
        cmocka_unit_test(test_chrome_train),
        cmocka_unit_test(test_speedscope_nomem),
        cmocka_unit_test(test_chrome_nomem),
        cmocka_unit_test(test_chrome_hand_nomem),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
