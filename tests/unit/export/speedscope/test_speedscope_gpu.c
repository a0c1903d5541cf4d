/*
 * test_speedscope_gpu.c — GPU data in the speedscope exporter
 * (lib/export/speedscope/speedscope_gpu.c): the hand-made stream of
 * tests/support/timeline_traces.c, whose intervals nest, overlap, hide
 * each other and repeat, checked event by event (speedscope's evented
 * rules); streams kept in memory or spilled to the temporary file in
 * sorted runs (spool_runs down to 1) write the same bytes; failing the
 * Nth allocation on the synthetic training trace never crashes and
 * never changes what a successful run writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "tests/support/export_run.h"
#include "tests/support/timeline_traces.h"

/* every event, as trc2speedscope passes GPU records */
static const export_run_opts speedscope_all = {.all = 1};

static char hand_path[64], train_path[64];
static convb_info train_info;

static int setup(void **state)
{
    int fd;

    strcpy(hand_path, "/tmp/test_speedscope_gpu_XXXXXX");
    strcpy(train_path, "/tmp/test_speedscope_gpu_XXXXXX");
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

/* ---- speedscope ------------------------------------------------------------ */

static void test_speedscope_overlaps(void **state)
{
    cJSON *doc = export_run_json(hand_path, &speedscope_all, NULL);
    const cJSON *frames = json_get(json_get(doc, "shared"), "frames");
    const cJSON *profiles = json_get(doc, "profiles"), *p, *ev;
    char seq[512];
    size_t n = 0;

    /* no samples: the only profile is the stream's */
    assert_int_equal(cJSON_GetArraySize(profiles), 1);
    p = cJSON_GetArrayItem(profiles, 0);
    assert_string_equal(json_get(p, "type")->valuestring, "evented");
    assert_string_equal(json_get(p, "name")->valuestring, "GPU 0 stream 5");
    assert_string_equal(json_get(p, "unit")->valuestring, "nanoseconds");
    assert_true(json_get(p, "startValue")->valuedouble == 100);
    assert_true(json_get(p, "endValue")->valuedouble == 450);
    cJSON_ArrayForEach(ev, json_get(p, "events")) {
        int f = (int)json_get(ev, "frame")->valuedouble;
        assert_true(f >= 0 && f < cJSON_GetArraySize(frames));
        n += (size_t)snprintf(seq + n, sizeof seq - n, "%s%s@%d ", json_get(ev, "type")->valuestring,
                              json_get(cJSON_GetArrayItem(frames, f), "name")->valuestring,
                              (int)json_get(ev, "at")->valuedouble);
    }
    /* B nests in A; C is clipped to start where A ends; D, hidden by C,
     * is left out, like the zero-length E; G nests in the identical F,
     * H in G. */
    assert_string_equal(seq, "OkA@100 OkB@120 CkB@150 CkA@200 OkC@200 CkC@260 OkF@400 OkF@400 "
                             "OkH@420 CkH@430 CkF@450 CkF@450 ");
    cJSON_Delete(doc);
}

/* ---- failure injection ------------------------------------------------------- */

/* Spilling a stream's intervals changes no byte: the hand-made stream
 * arrives out of order (several sorted runs to merge), the training
 * trace's streams in order (one run each). */
static void test_speedscope_gpu_spill(void **state)
{
    const char *paths[] = {hand_path, train_path};
    uint32_t sizes[] = {1, 2, 3, 64};
    trc_status st;

    for (size_t p = 0; p < 2; p++) {
        export_run_opts o = speedscope_all;
        char *want = export_run(paths[p], &o, &st);
        assert_non_null(want);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            o.ss.spool_runs = sizes[i];
            char *got = export_run(paths[p], &o, &st);
            assert_non_null(got);
            assert_string_equal(got, want);
            free(got);
        }
        free(want);
    }
}

static void test_speedscope_nomem(void **state) { export_run_nomem(train_path, &speedscope_all); }

static void test_speedscope_spill_nomem(void **state)
{
    export_run_opts o = speedscope_all;
    o.ss.spool_runs = 2;
    export_run_nomem(hand_path, &o);
}

/* Every failure of the temporary file, sorted runs spilled and read
 * back: an I/O error, or the bytes of a run without failures. */
static void test_speedscope_spill_ioerr(void **state)
{
    export_run_opts o = speedscope_all;
    o.ss.spool_runs = 2;
    export_run_ioerr(hand_path, &o, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speedscope_overlaps),
        cmocka_unit_test(test_speedscope_gpu_spill),
        cmocka_unit_test(test_speedscope_nomem),
        cmocka_unit_test(test_speedscope_spill_nomem),
        cmocka_unit_test(test_speedscope_spill_ioerr),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
