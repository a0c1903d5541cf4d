/*
 * test_chrome.c — the Chrome exporter (lib/export/chrome/chrome.c) on the
 * synthetic traces of tests/support/timeline_traces.c, read back with the
 * real reader and selected with the converters' own selection code
 * (tests/support/export_run.c).  Outputs are parsed with cJSON and checked
 * structurally and against what the generator wrote: slice nesting (also
 * under speedscope's float arithmetic), metadata, counters, losses, the
 * exit status; failing the Nth allocation never crashes.
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

#define MS 1000000LL

static char small_path[64];
static char big_path[64];
static convb_info small_info, big_info;

static int write_trace(char *path, int big, uint64_t n, uint32_t threads, convb_info *info)
{
    trc_status st;
    int fd;
    strcpy(path, "/tmp/test_chrome_XXXXXX");
    fd = mkstemp(path);
    if (fd < 0)
        return -1;
    st = big ? convb_write_big(fd, n, threads, info) : convb_write_small(fd, info);
    close(fd);
    return st == TRC_OK ? 0 : -1;
}

static int setup(void **state)
{
    if (write_trace(small_path, 0, 0, 0, &small_info) ||
        write_trace(big_path, 1, 20000, 3, &big_info))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    unlink(small_path);
    unlink(big_path);
    return 0;
}

/* ---- chrome --------------------------------------------------------------- */

typedef struct slice {
    int64_t start, end;  /* ns, rounded like Perfetto */
    double ts, dur;      /* as parsed */
    int order;           /* emission order */
    const char *name;
} slice;

static int64_t to_ns(double us)
{
    return (int64_t)llround(us * 1000.0);
}

static int cmp_slice(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return x->order - y->order;
}

/* Every "X" of one (pid, tid) must nest: each slice lies inside the open
 * one or starts after it ends.  Also speedscope's view: with its zero at
 * the thread's first slice, (ts - zero) + dur in doubles must be the same
 * number for every slice ending at one instant (and equal to where slices
 * starting there begin), else its importer mis-nests them. */
static void check_nesting(slice *s, int n)
{
    slice *stack[256];
    int depth = 0;
    double zero = INFINITY;

    qsort(s, (size_t)n, sizeof *s, cmp_slice);
    for (int i = 0; i < n; i++) {
        assert_true(s[i].end > s[i].start);
        while (depth > 0 && stack[depth - 1]->end <= s[i].start)
            depth--;
        if (depth > 0 && s[i].end > stack[depth - 1]->end) {
            print_error("slice %s [%lld,%lld] overlaps %s [%lld,%lld]\n", s[i].name,
                        (long long)s[i].start, (long long)s[i].end, stack[depth - 1]->name,
                        (long long)stack[depth - 1]->start, (long long)stack[depth - 1]->end);
            fail();
        }
        assert_true(depth < 256);
        stack[depth++] = &s[i];
        if (s[i].ts < zero)
            zero = s[i].ts;
    }
    for (int i = 0; i < n; i++) {
        double end_d = (s[i].ts - zero) + s[i].dur;
        double want = (double)(s[i].end - 0) / 1000.0; /* exact end, relative to trace start */
        /* (end - zero) computed as speedscope would for a slice starting at end */
        assert_true(end_d == want - zero);
    }
}

typedef struct chrome_summary {
    int x, c_rss, c_load, loss, exit_i, m_pname, m_tname, m_psort, m_tsort;
    const char *thread_names[8];
    int n_thread_names;
    double loss_ts, loss_count;
    const char *loss_s;
} chrome_summary;

/* Parse a Chrome document: structural checks, nesting per thread, a
 * summary of what it holds.  Slices named `name` on tid `tid` are
 * collected into want_slices ("start-end,start-end" in ms). */
static void check_chrome_doc(const cJSON *doc, chrome_summary *sum, int64_t tid,
                             const char *name, char *slices_ms, size_t n_ms)
{
    const cJSON *evs = json_get(doc, "traceEvents"), *e;
    slice *s = calloc((size_t)cJSON_GetArraySize(evs) + 1, sizeof *s);
    int64_t keys[64][2];
    int nkeys = 0, order = 0;
    size_t used = 0;

    assert_non_null(s);
    memset(sum, 0, sizeof *sum);
    assert_string_equal(json_str(doc, "displayTimeUnit"), "ms");
    assert_true(strncmp(json_str(json_get(doc, "otherData"), "exporter"), "trc@", 4) == 0);
    if (slices_ms)
        slices_ms[0] = 0;
    /* Collect the (pid, tid) pairs with slices. */
    cJSON_ArrayForEach(e, evs) {
        const char *ph = json_str(e, "ph");
        json_num(e, "pid");
        json_num(e, "tid");
        json_str(e, "name");
        if (strcmp(ph, "X") == 0) {
            int64_t k[2] = {(int64_t)json_num(e, "pid"), (int64_t)json_num(e, "tid")};
            int found = 0;
            for (int i = 0; i < nkeys; i++)
                found |= keys[i][0] == k[0] && keys[i][1] == k[1];
            if (!found) {
                assert_true(nkeys < 64);
                keys[nkeys][0] = k[0];
                keys[nkeys++][1] = k[1];
            }
            sum->x++;
            json_str(e, "cat");
        } else if (strcmp(ph, "C") == 0) {
            const cJSON *args = json_get(e, "args");
            json_num(e, "ts");
            if (strcmp(json_str(e, "name"), "rss") == 0) {
                assert_true(cJSON_IsNumber(json_get(args, "bytes")));
                sum->c_rss++;
            } else if (strcmp(json_str(e, "name"), "load") == 0) {
                assert_true(cJSON_IsNumber(json_get(args, "percent")));
                sum->c_load++;
            }
        } else if (strcmp(ph, "i") == 0) {
            if (strncmp(json_str(e, "name"), "loss: ", 6) == 0) {
                sum->loss++;
                sum->loss_ts = json_num(e, "ts");
                sum->loss_s = json_str(e, "s");
                sum->loss_count = json_num(json_get(e, "args"), "count");
            } else if (strcmp(json_str(e, "name"), "process exit") == 0) {
                sum->exit_i++;
            }
        } else if (strcmp(ph, "M") == 0) {
            const char *n = json_str(e, "name");
            const cJSON *args = json_get(e, "args");
            if (strcmp(n, "process_name") == 0) {
                sum->m_pname++;
                json_str(args, "name");
            } else if (strcmp(n, "thread_name") == 0) {
                if (sum->n_thread_names < 8)
                    sum->thread_names[sum->n_thread_names++] = json_str(args, "name");
                sum->m_tname++;
            } else if (strcmp(n, "process_sort_index") == 0) {
                json_num(args, "sort_index");
                sum->m_psort++;
            } else if (strcmp(n, "thread_sort_index") == 0) {
                json_num(args, "sort_index");
                sum->m_tsort++;
            }
        } else {
            print_error("unexpected phase %s\n", ph);
            fail();
        }
    }
    for (int k = 0; k < nkeys; k++) {
        int n = 0;
        order = 0;
        cJSON_ArrayForEach(e, evs) {
            if (strcmp(json_str(e, "ph"), "X") != 0 || (int64_t)json_num(e, "pid") != keys[k][0] ||
                (int64_t)json_num(e, "tid") != keys[k][1])
                continue;
            s[n].ts = json_num(e, "ts");
            s[n].dur = json_num(e, "dur");
            s[n].start = to_ns(s[n].ts);
            s[n].end = to_ns(s[n].ts + s[n].dur);
            s[n].name = json_str(e, "name");
            s[n].order = order++;
            if (slices_ms && keys[k][1] == tid && strcmp(s[n].name, name) == 0)
                used += (size_t)snprintf(slices_ms + used, n_ms - used, "%s%g-%g",
                                         used ? "," : "", (double)s[n].start / 1e6,
                                         (double)s[n].end / 1e6);
            n++;
        }
        check_nesting(s, n);
    }
    free(s);
}

static void test_chrome_small(void **state)
{
    export_run_opts o = {0};
    chrome_summary sum;
    char slices[256];
    cJSON *doc;

    o.chrome = 1;
    doc = export_run_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "<module>", slices, sizeof slices);
    /* <module> closes at the stack-less sample (12 ms), reopens at 15,
     * closes at the idle gap (16), reopens at 18 until the end (20). */
    assert_string_equal(slices, "0-12,15-16,18-20");
    assert_int_equal(sum.c_rss, 5);
    assert_int_equal(sum.c_load, 3);
    assert_int_equal(sum.loss, 1);
    assert_true(sum.loss_ts == 13000.0);
    assert_true(sum.loss_count == 2);
    assert_string_equal(sum.loss_s, "t");
    assert_int_equal(sum.exit_i, 1);
    assert_int_equal(sum.m_pname, 2); /* the process, and pid 0 for "load" */
    assert_int_equal(sum.m_psort, 2);
    assert_int_equal(sum.m_tname, 3);
    assert_int_equal(sum.m_tsort, 3);
    assert_string_equal(sum.thread_names[0], "MainThread");
    assert_string_equal(sum.thread_names[1], "worker-1");
    assert_string_equal(sum.thread_names[2], "io-\xce\xb4");
    cJSON_Delete(doc);

    /* --idle: the idle samples at 16 and 17 ms keep the frames open. */
    o.idle = 1;
    doc = export_run_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "<module>", slices, sizeof slices);
    assert_string_equal(slices, "0-12,15-20");
    check_chrome_doc(doc, &sum, 4251, "time.sleep", slices, sizeof slices);
    assert_string_equal(slices, "1.2-11.2");
    cJSON_Delete(doc);

    /* compute is one slice over ms 2..5 (lines 22, 22, 24), three with --lines. */
    o.idle = 0;
    doc = export_run_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "compute", slices, sizeof slices);
    assert_string_equal(slices, "2-8,18-19");
    cJSON_Delete(doc);
    o.ch.lines = 1;
    doc = export_run_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "compute", slices, sizeof slices);
    assert_string_equal(slices, "2-4,4-5,5-8,18-19");
    cJSON_Delete(doc);

    /* A time window: nothing outside [5 ms, 10 ms). */
    memset(&o, 0, sizeof o);
    o.chrome = 1;
    o.from = "0.005";
    o.to = "0.010";
    doc = export_run_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "<module>", slices, sizeof slices);
    assert_string_equal(slices, "5-10");
    cJSON_Delete(doc);
}

/* A process whose status trec could not learn (its parent reaped it
 * first: exit_code -1) shows "unknown", not a status of -1. */
static void test_chrome_exit_unknown(void **state)
{
    char path[64];
    export_run_opts o = {0};
    o.chrome = 1;
    for (int unknown = 0; unknown < 2; unknown++) {
        strcpy(path, "/tmp/test_chrome_XXXXXX");
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(convb_write_small_exit(fd, unknown ? -1 : 3, NULL), TRC_OK);
        close(fd);
        trc_status st;
        char *text = export_run(path, &o, &st);
        unlink(path);
        assert_non_null(text);
        const char *want = unknown ? "\"args\":{\"exit_code\":\"unknown\"}" : "\"args\":{\"exit_code\":3}";
        assert_non_null(strstr(text, want));
        assert_null(strstr(text, "\"exit_code\":-1"));
        free(text);
    }
}

static void test_chrome_big(void **state)
{
    export_run_opts o = {0};
    chrome_summary sum;
    cJSON *doc;

    o.chrome = 1;
    doc = export_run_json(big_path, &o, NULL);
    check_chrome_doc(doc, &sum, 0, "", NULL, 0);
    assert_true(sum.x > 1000);
    assert_int_equal(sum.m_tname, 3);
    assert_int_equal(sum.c_rss, 20);
    assert_int_equal(sum.loss, 0);
    cJSON_Delete(doc);
}

/* ---- failure injection ------------------------------------------------------ */

static void test_chrome_nomem(void **state)
{
    export_run_opts o = {0};
    o.chrome = 1;
    o.ss.merge_threads = 1;
    o.ss.spool_runs = 2;
    export_run_nomem(small_path, &o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chrome_small),
        cmocka_unit_test(test_chrome_big),
        cmocka_unit_test(test_chrome_exit_unknown),
        cmocka_unit_test(test_chrome_nomem),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
