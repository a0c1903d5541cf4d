/*
 * test_speedscope.c — the speedscope exporter (lib/export/speedscope/speedscope.c)
 * on the synthetic traces of tests/support/timeline_traces.c, read back
 * with the real reader and selected with the converters' own selection
 * code (tests/support/export_run.c).  Outputs are parsed with cJSON and
 * checked structurally and against what the generator wrote: per-thread
 * totals, time order, the options; spilling gives identical output;
 * failing the Nth allocation never crashes.
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
    strcpy(path, "/tmp/test_speedscope_XXXXXX");
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

/* ---- speedscope ----------------------------------------------------------- */

/* Structural checks every speedscope document must pass; returns the
 * number of frames. */
static int check_speedscope_doc(const cJSON *doc)
{
    const cJSON *frames, *profiles, *p;
    int nframes;

    assert_string_equal(json_str(doc, "$schema"),
                        "https://www.speedscope.app/file-format-schema.json");
    assert_true(strncmp(json_str(doc, "exporter"), "trc@", 4) == 0);
    frames = json_get(json_get(doc, "shared"), "frames");
    assert_true(cJSON_IsArray(frames));
    nframes = cJSON_GetArraySize(frames);
    for (const cJSON *f = frames->child; f; f = f->next) {
        assert_true(cJSON_IsString(json_get(f, "name")));
        if (cJSON_GetObjectItem(f, "line"))
            assert_true(json_num(f, "line") >= 1);
    }
    profiles = json_get(doc, "profiles");
    assert_true(cJSON_GetArraySize(profiles) >= 1);
    cJSON_ArrayForEach(p, profiles) {
        const cJSON *samples = json_get(p, "samples"), *weights = json_get(p, "weights");
        const cJSON *s, *w;
        double sum = 0;
        assert_string_equal(json_str(p, "type"), "sampled");
        assert_string_equal(json_str(p, "unit"), "nanoseconds");
        assert_int_equal(cJSON_GetArraySize(samples), cJSON_GetArraySize(weights));
        for (s = samples->child, w = weights->child; s && w; s = s->next, w = w->next) {
            const cJSON *idx;
            assert_true(cJSON_IsArray(s));
            cJSON_ArrayForEach(idx, s) {
                assert_true(cJSON_IsNumber(idx));
                assert_true(idx->valuedouble >= 0 && idx->valuedouble < nframes);
                assert_true(idx->valuedouble == floor(idx->valuedouble));
            }
            assert_true(cJSON_IsNumber(w) && w->valuedouble > 0);
            sum += w->valuedouble;
            /* Consecutive entries are merged when identical. */
            if (s->next) {
                char *a = cJSON_PrintUnformatted(s), *b = cJSON_PrintUnformatted(s->next);
                assert_string_not_equal(a, b);
                free(a);
                free(b);
            }
        }
        assert_true(json_num(p, "endValue") - json_num(p, "startValue") == sum);
    }
    return nframes;
}

static const cJSON *profile_named(const cJSON *doc, const char *name)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, json_get(doc, "profiles"))
        if (strcmp(json_str(p, "name"), name) == 0)
            return p;
    print_error("no profile named \"%s\"\n", name);
    fail();
    return NULL;
}

static double total_weight(const cJSON *p)
{
    double sum = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, json_get(p, "weights"))
        sum += w->valuedouble;
    return sum;
}

/* "leaf:weight_ms leaf:weight_ms ..." of a profile, for time-order checks. */
static void leaf_sequence(const cJSON *doc, const cJSON *p, char *buf, size_t n)
{
    const cJSON *frames = json_get(json_get(doc, "shared"), "frames");
    const cJSON *s, *w;
    size_t used = 0;
    buf[0] = 0;
    for (s = json_get(p, "samples")->child, w = json_get(p, "weights")->child; s && w;
         s = s->next, w = w->next) {
        int leaf = (int)cJSON_GetArrayItem(s, cJSON_GetArraySize(s) - 1)->valuedouble;
        const char *name = json_str(cJSON_GetArrayItem(frames, leaf), "name");
        used += (size_t)snprintf(buf + used, n - used, "%s%s:%g", used ? " " : "", name,
                                 w->valuedouble / 1e6);
        assert_true(used < n);
    }
}

static void test_speedscope_small(void **state)
{
    export_run_opts o = {0};
    cJSON *doc = export_run_json(small_path, &o, NULL);
    char seq[1024];
    const cJSON *main_p, *worker, *io;

    check_speedscope_doc(doc);
    assert_int_equal(cJSON_GetArraySize(json_get(doc, "profiles")), 3);
    assert_string_equal(json_str(doc, "name"), "python3 app.py --size 3");
    /* One profile per thread, in order of first sample, named by the
     * process and the thread's latest name (its tid too where not the pid). */
    assert_string_equal(json_str(cJSON_GetArrayItem(json_get(doc, "profiles"), 0), "name"),
                        "app.py (pid 4242): MainThread");
    main_p = profile_named(doc, "app.py (pid 4242): MainThread");
    worker = profile_named(doc, "app.py (pid 4242): worker-1 (tid 4250)");
    io = profile_named(doc, "app.py (pid 4242): io-\xce\xb4 (tid 4251)");
    /* Default view = on-CPU samples only. */
    assert_true(total_weight(main_p) == 16 * MS);
    assert_true(total_weight(worker) == 7 * MS);
    assert_true(total_weight(io) == 2 * MS);
    assert_true(json_num(main_p, "startValue") == 0);
    assert_true(json_num(worker, "startValue") == 2.5 * MS);
    assert_true(json_num(io, "startValue") == 11.2 * MS);
    /* Time order kept; compute@22/24 is one function; runs merged. */
    leaf_sequence(doc, main_p, seq, sizeof seq);
    assert_string_equal(seq, "<module>:1 main:1 compute:3 helper:1 PyObject_Call:1 helper:1 "
                             "main:1 weird\"name\\\tend:1 gr\xc3\xb6\xc3\x9f" "e_\xce\xbb:2 "
                             "<no Python frames>:1 main:1 compute:1 <module>:1");
    cJSON_Delete(doc);
}

static void test_speedscope_options(void **state)
{
    export_run_opts o = {0};
    cJSON *doc;
    char seq[1024];
    const cJSON *p0;

    /* --idle: every sample; --merge-threads: a process profile first. */
    o.idle = 1;
    o.ss.merge_threads = 1;
    doc = export_run_json(small_path, &o, NULL);
    check_speedscope_doc(doc);
    assert_int_equal(cJSON_GetArraySize(json_get(doc, "profiles")), 4);
    p0 = cJSON_GetArrayItem(json_get(doc, "profiles"), 0);
    assert_string_equal(json_str(p0, "name"), "app.py (pid 4242)");
    assert_true(total_weight(p0) == (double)small_info.all_ns);
    assert_true(total_weight(profile_named(doc, "app.py (pid 4242): MainThread")) == 18 * MS);
    leaf_sequence(doc, profile_named(doc, "app.py (pid 4242): io-\xce\xb4 (tid 4251)"), seq, sizeof seq);
    assert_string_equal(seq, "time.sleep:10 read_loop:2");
    cJSON_Delete(doc);

    /* --lines: compute@22 and compute@24 are separate frames. */
    memset(&o, 0, sizeof o);
    o.ss.lines = 1;
    doc = export_run_json(small_path, &o, NULL);
    check_speedscope_doc(doc);
    leaf_sequence(doc, profile_named(doc, "app.py (pid 4242): MainThread"), seq, sizeof seq);
    assert_string_equal(seq, "<module>:1 main:1 compute:2 compute:1 helper:1 PyObject_Call:1 "
                             "helper:1 main:1 weird\"name\\\tend:1 gr\xc3\xb6\xc3\x9f" "e_\xce\xbb:2 "
                             "<no Python frames>:1 main:1 compute:1 <module>:1");
    cJSON_Delete(doc);

    /* --gil drops the worker's GIL-less sample; --thread keeps one thread. */
    memset(&o, 0, sizeof o);
    o.gil = 1;
    o.thread = "4250";
    doc = export_run_json(small_path, &o, NULL);
    check_speedscope_doc(doc);
    assert_int_equal(cJSON_GetArraySize(json_get(doc, "profiles")), 1);
    assert_true(total_weight(profile_named(doc, "app.py (pid 4242): worker-1 (tid 4250)")) == 6 * MS);
    cJSON_Delete(doc);

    /* Nothing selected: still a document speedscope can open. */
    memset(&o, 0, sizeof o);
    o.thread = "no-such-thread";
    doc = export_run_json(small_path, &o, NULL);
    check_speedscope_doc(doc);
    assert_string_equal(json_str(cJSON_GetArrayItem(json_get(doc, "profiles"), 0), "name"),
                        "no samples");
    cJSON_Delete(doc);
}

/* Spilling runs to the temporary file changes nothing in the output. */
static void test_speedscope_spill(void **state)
{
    export_run_opts o = {0};
    trc_status st;
    char *want, *got;
    uint32_t sizes[] = {1, 2, 3, 64};

    o.ss.merge_threads = 1;
    o.idle = 1;
    want = export_run(big_path, &o, &st);
    assert_non_null(want);
    cJSON *doc = cJSON_Parse(want);
    assert_non_null(doc);
    check_speedscope_doc(doc);
    assert_true(total_weight(cJSON_GetArrayItem(json_get(doc, "profiles"), 0)) ==
                (double)big_info.all_ns);
    cJSON_Delete(doc);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        o.ss.spool_runs = sizes[i];
        got = export_run(big_path, &o, &st);
        assert_non_null(got);
        assert_string_equal(got, want);
        free(got);
    }
    free(want);
}

/* ---- failure injection ------------------------------------------------------ */

static void test_speedscope_nomem(void **state)
{
    export_run_opts o = {0};
    o.ss.merge_threads = 1;
    o.ss.spool_runs = 2;
    export_run_nomem(small_path, &o);
}

/* Every failure of the temporary file the runs spill to: an I/O error,
 * or the bytes of a run without failures. */
static void test_speedscope_spill_ioerr(void **state)
{
    export_run_opts o = {0};
    o.ss.merge_threads = 1;
    o.ss.spool_runs = 2;
    export_run_ioerr(small_path, &o, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speedscope_small),
        cmocka_unit_test(test_speedscope_options),
        cmocka_unit_test(test_speedscope_spill),
        cmocka_unit_test(test_speedscope_nomem),
        cmocka_unit_test(test_speedscope_spill_ioerr),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
