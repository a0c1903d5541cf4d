/*
 * tests/unit/gpu/test_gpu_nvml.c — the NVML counter sampler (lib/gpu/nvml.c)
 * against a fake libnvidia-ml (tests/gpu/fake_nvml.c, built by
 * mk/cupti.mk as $BUILD/tests/libfake-nvml.so): counters, units, device
 * mapping under CUDA_VISIBLE_DEVICES, rate, and quiet absence.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/gpu/trec_gpu.h"
#include "tests/gpu/trace_check.h"

static char fake_lib[4096];

static int setup(void **state)
{
    const char *b = getenv("BUILD");
    snprintf(fake_lib, sizeof fake_lib, "%s/tests/libfake-nvml.so", b ? b : "build");
    if (access(fake_lib, R_OK) != 0) {
        fprintf(stderr, "missing %s (make builds it)\n", fake_lib);
        return -1;
    }
    /* dlopen needs a path with a slash to not search */
    if (fake_lib[0] != '/') {
        char cwd[1024], tmp[4096];
        if (!getcwd(cwd, sizeof cwd))
            return -1;
        snprintf(tmp, sizeof tmp, "%s/%.2000s", cwd, fake_lib);
        snprintf(fake_lib, sizeof fake_lib, "%.4000s", tmp);
    }
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("FAKE_NVML_DEVICES");
    unsetenv("FAKE_NVML_FAIL");
    return 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int fd_write(void *ctx, const void *buf, size_t len)
{
    return write(*(int *)ctx, buf, len) == (ssize_t)len ? 0 : -1;
}

/* Sample for ms milliseconds at hz, drain into a trace, load it. */
static void record(double hz, int ms, tc_trace *t, int *devices)
{
    char path[] = "/tmp/trc-gpu-nvml-XXXXXX";
    int fd = mkstemp(path);
    trc_status st;
    assert_true(fd >= 0);
    trc_writer *w = trc_writer_open_callback(fd_write, &fd, NULL, &st);
    assert_non_null(w);
    trec_gpu_nvml *n = trec_gpu_nvml_start(hz, fake_lib);
    assert_non_null(n);
    *devices = trec_gpu_nvml_devices(n);
    for (int i = 0; i < ms / 50; i++) {
        sleep_ms(50);
        assert_int_equal(trec_gpu_nvml_drain(n, w), TRC_OK);   /* as trec's loop does */
    }
    assert_int_equal(trec_gpu_nvml_drain(n, w), TRC_OK);
    trec_gpu_nvml_stop(n);
    assert_int_equal(trc_writer_close(w, 0), TRC_OK);
    close(fd);
    assert_int_equal(tc_load(path, t), TRC_OK);
    unlink(path);
}

static size_t count_values(const tc_trace *t, const char *name, int32_t device, double *value,
                           const char **unit)
{
    size_t n = 0;
    (void)device;
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        if (e->type != TRC_EV_COUNTER || strcmp(e->name, name) != 0)
            continue;
        n++;
        *value = e->u.counter.value;
        *unit = e->domain;
    }
    return n;
}

static void test_counters(void **state)
{
    tc_trace t;
    int devs;
    double v = 0;
    const char *unit = "";

    record(100, 600, &t, &devs);
    assert_int_equal(devs, 2);
    assert_int_equal(t.reader_losses, 0);
    /* 4 counters x 2 devices; at 100 Hz for 0.6 s: ~60 each, lenient on a loaded machine */
    size_t n = count_values(&t, "gpu.util", -1, &v, &unit);
    assert_true(n >= 2 * 10);
    assert_true(n <= 2 * 70);
    assert_string_equal(unit, "percent");
    assert_true(v == 40 || v == 41);
    assert_true(count_values(&t, "gpu.mem.used", -1, &v, &unit) == n);
    assert_string_equal(unit, "bytes");
    assert_true(v == (double)(1ull << 30) || v == (double)(2ull << 30));
    assert_true(count_values(&t, "gpu.sm_clock", -1, &v, &unit) == n);
    assert_string_equal(unit, "MHz");
    assert_true(v == 1980);
    assert_true(count_values(&t, "gpu.power", -1, &v, &unit) == n);
    assert_string_equal(unit, "mW");

    /* each device has its own counter, its values its own, in time order */
    int64_t last[2] = { 0, 0 };
    for (size_t i = 0; i < t.n; i++) {
        const tc_event *e = &t.ev[i];
        if (e->type != TRC_EV_COUNTER || strcmp(e->name, "gpu.util") != 0)
            continue;
        int dev = (int)e->u.counter.value - 40;
        assert_true(dev == 0 || dev == 1);
        assert_true(e->u.counter.time_ns >= last[dev]);
        last[dev] = e->u.counter.time_ns;
    }
    tc_free(&t);
}

/* The counter definitions carry the CUDA ordinal: with
 * CUDA_VISIBLE_DEVICES=1 the second NVML device is CUDA device 0 and the
 * first is not sampled at all. */
static void test_visible_devices(void **state)
{
    tc_trace t;
    int devs;
    char path[] = "/tmp/trc-gpu-nvml-XXXXXX";
    int fd;
    trc_status st;

    setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    record(50, 200, &t, &devs);
    assert_int_equal(devs, 1);
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].type == TRC_EV_COUNTER && strcmp(t.ev[i].name, "gpu.util") == 0)
            assert_true(t.ev[i].u.counter.value == 41);
    tc_free(&t);

    /* by UUID prefix, and the device field of the definition */
    setenv("CUDA_VISIBLE_DEVICES", "GPU-fa4e0000-0000-0000-0000-000000000001,0", 1);
    fd = mkstemp(path);
    trc_writer *w = trc_writer_open_callback(fd_write, &fd, NULL, &st);
    trec_gpu_nvml *n = trec_gpu_nvml_start(50, fake_lib);
    assert_non_null(n);
    assert_int_equal(trec_gpu_nvml_devices(n), 2);
    sleep_ms(100);
    assert_int_equal(trec_gpu_nvml_drain(n, w), TRC_OK);
    trec_gpu_nvml_stop(n);
    trc_writer_close(w, 0);
    close(fd);
    trc_reader *r = trc_reader_open_path(path, &st);
    const trc_event *ev;
    int seen = 0;
    assert_non_null(r);
    while (trc_reader_next(r, &ev) == TRC_OK) {
        if (ev->type != TRC_EV_COUNTER)
            continue;
        const trc_counter_def *d = trc_reader_counter(r, ev->u.counter.counter);
        if (strcmp(d->name, "gpu.util") != 0)
            continue;
        /* NVML device 1 (util 41) is CUDA device 0, NVML 0 (util 40) is CUDA 1 */
        assert_int_equal(d->device, ev->u.counter.value == 41 ? 0 : 1);
        assert_int_equal(d->pid, -1);
        seen++;
    }
    trc_reader_free(r);
    unlink(path);
    assert_true(seen >= 2);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

static void test_absent(void **state)
{
    /* no library, no devices, init failure: quietly nothing */
    assert_null(trec_gpu_nvml_start(10, "/nonexistent/libnvidia-ml.so.1"));
    setenv("FAKE_NVML_DEVICES", "0", 1);
    assert_null(trec_gpu_nvml_start(10, fake_lib));
    unsetenv("FAKE_NVML_DEVICES");
    setenv("FAKE_NVML_FAIL", "1", 1);
    assert_null(trec_gpu_nvml_start(10, fake_lib));
    unsetenv("FAKE_NVML_FAIL");
    setenv("CUDA_VISIBLE_DEVICES", "", 1);   /* CUDA sees no device */
    assert_null(trec_gpu_nvml_start(10, fake_lib));
    unsetenv("CUDA_VISIBLE_DEVICES");
    /* NULL handles are no-ops */
    assert_int_equal(trec_gpu_nvml_drain(NULL, NULL), TRC_OK);
    trec_gpu_nvml_stop(NULL);
    assert_int_equal(trec_gpu_nvml_devices(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_visible_devices),
        cmocka_unit_test(test_absent),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
