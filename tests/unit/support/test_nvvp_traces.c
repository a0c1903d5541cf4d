/*
 * test_nvvp_traces — the synthetic GPU traces of tests/support/nvvp_traces.c
 * read back through the reader (what was written is what a converter
 * sees).  The same traces as files come from nvvp-gen (mk/nvvp.mk).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/nvvp_traces.h"
#include "trc/trc.h"

typedef struct seen {
    uint64_t kernels, memcpys, memsets, syncs, apis, markers, counters, samples, dropped;
    uint64_t kernel_ns, by_kind[11];
    int64_t first_start, last_start;
    int out_of_order;
} seen;

static void read_back(const char *path, seen *s)
{
    trc_status st;
    trc_reader *r = trc_reader_open_path(path, &st);
    assert_non_null(r);
    memset(s, 0, sizeof *s);
    const trc_event *ev;
    int64_t prev = INT64_MIN;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        switch (ev->type) {
        case TRC_EV_GPU_KERNEL:
            s->kernels++;
            s->kernel_ns += (uint64_t)(ev->u.kernel.end_ns - ev->u.kernel.start_ns);
            if (ev->u.kernel.start_ns < prev)
                s->out_of_order = 1;
            prev = ev->u.kernel.start_ns;
            break;
        case TRC_EV_GPU_MEMCPY:
            s->memcpys++;
            if (ev->u.memcpy.copy_kind <= TRC_COPY_PTOP)
                s->by_kind[ev->u.memcpy.copy_kind]++;
            break;
        case TRC_EV_GPU_MEMSET: s->memsets++; break;
        case TRC_EV_GPU_SYNC: s->syncs++; break;
        case TRC_EV_API_CALL: s->apis++; break;
        case TRC_EV_MARKER: s->markers++; break;
        case TRC_EV_COUNTER: s->counters++; break;
        case TRC_EV_SAMPLE: s->samples += ev->u.sample.count; break;
        case TRC_EV_LOSS:
            if (ev->u.loss.kind == TRC_LOSS_GPU_DROPPED)
                s->dropped += ev->u.loss.count;
            break;
        default: break;
        }
    }
    assert_int_equal(st, TRC_ERR_EOF);
    trc_reader_free(r);
}

static char *temp_path(void)
{
    char *p = strdup("/tmp/test_nvvp_traces.XXXXXX");
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    return p;
}

static void test_fixture_reads_back(void **state)
{
    char *path = temp_path();
    int fd = open(path, O_WRONLY | O_TRUNC);
    nvvp_trace_info info;
    assert_int_equal(nvvp_trace_write_fixture(fd, &info), TRC_OK);
    close(fd);
    seen s;
    read_back(path, &s);
    assert_int_equal(s.kernels, info.kernels);
    assert_int_equal(s.kernels, 18);
    assert_int_equal(s.kernel_ns, info.kernel_ns);
    assert_int_equal(s.kernel_ns, 12000000);
    assert_int_equal(s.memcpys, info.memcpys);
    assert_int_equal(s.by_kind[TRC_COPY_HTOD], 3);
    assert_int_equal(s.by_kind[TRC_COPY_DTOH], 3);
    assert_int_equal(s.by_kind[TRC_COPY_DTOD], 3);
    assert_int_equal(s.by_kind[TRC_COPY_PTOP], 3);
    assert_int_equal(s.by_kind[TRC_COPY_HTOH], 1);
    assert_int_equal(s.memsets, 3);
    assert_int_equal(s.syncs, 3);
    assert_int_equal(s.apis, info.api_calls);
    assert_int_equal(s.markers, info.markers);
    assert_int_equal(s.counters, info.counter_values);
    assert_int_equal(s.samples, info.samples);
    assert_int_equal(s.dropped, 12);
    assert_true(s.out_of_order); /* written as CUPTI delivers, not sorted */
    unlink(path);
    free(path);
}

static void test_big_reads_back(void **state)
{
    char *path = temp_path();
    int fd = open(path, O_WRONLY | O_TRUNC);
    nvvp_trace_info info;
    assert_int_equal(nvvp_trace_write_big(fd, 5000, &info), TRC_OK);
    close(fd);
    seen s;
    read_back(path, &s);
    assert_int_equal(s.kernels + s.memcpys + s.memsets, 5000);
    assert_int_equal(s.kernels, info.kernels);
    assert_int_equal(s.kernel_ns, info.kernel_ns);
    assert_int_equal(s.apis, 5000);
    assert_true(s.by_kind[TRC_COPY_PTOP] > 0 && s.by_kind[TRC_COPY_DTOD] > 0);
    unlink(path);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_reads_back),
        cmocka_unit_test(test_big_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
