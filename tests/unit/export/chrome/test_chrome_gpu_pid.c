/*
 * test_chrome_gpu_pid — the Chrome exporter's pseudo-process per GPU
 * device (lib/export/chrome/chrome_int.h, CHR_GPU_PID): device d is pid
 * 0x7fff0000 + d up to device 0xffff (pid 0x7fffffff); a trace naming a
 * larger device is refused with TRC_ERR_LIMIT and a message naming it,
 * never folded onto the process of another device (70000 and 4464 agree
 * in their low 16 bits).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/export/chrome/chrome.h"
#include "tests/support/trace_builder.h"

#define T0 1000000000LL

/* A trace with one kernel on each of devices[0..n) (stream 1, 100 ns
 * apart) and, when counter_device >= 0, an NVML-style counter of that
 * device. */
static void write_trace(tb_buf *out, const uint32_t *devices, size_t n, int32_t counter_device)
{
    trc_writer_options o;
    trc_status st;
    memset(&o, 0, sizeof o);
    o.recorder = "test";
    o.host = "h";
    o.start_ns = T0;
    o.wall_ns = 1;
    trc_writer *w = trc_writer_open_callback(tb_write, out, &o, &st);
    assert_non_null(w);
    for (size_t i = 0; i < n; i++) {
        trc_gpu_kernel k;
        memset(&k, 0, sizeof k);
        k.where.pid = 77;
        k.where.device = devices[i];
        k.where.context = 1;
        k.where.stream = 1;
        k.where.correlation = (uint32_t)i + 1;
        k.start_ns = T0 + 100 * (int64_t)i;
        k.end_ns = k.start_ns + 50;
        k.name = "k";
        assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
    }
    if (counter_device >= 0) {
        uint32_t id;
        assert_int_equal(trc_writer_counter_def(w, "gpu_util", "%", -1, counter_device, &id),
                         TRC_OK);
        assert_int_equal(trc_writer_counter(w, id, T0 + 10, 50.0), TRC_OK);
    }
    assert_int_equal(trc_writer_close(w, T0 + 100000), TRC_OK);
}

/* Convert with the Chrome exporter; the first failing status (TRC_OK when
 * all went through), the output in *text (caller frees), the exporter's
 * message in err. */
static trc_status convert(const tb_buf *trace, char **text, char *err, size_t n)
{
    tb_src src = {trace->p, trace->len, 0, 0};
    trc_status st = TRC_OK;
    trc_reader *r = trc_reader_open_callback(tb_read, &src, "mem.trc", &st);
    assert_non_null(r);
    size_t len = 0;
    FILE *out = open_memstream(text, &len);
    assert_non_null(out);
    chrome *c = chrome_new(NULL);
    assert_non_null(c);
    const trc_event *ev;
    trc_status got = TRC_OK;
    while (got == TRC_OK && trc_reader_next(r, &ev) == TRC_OK)
        got = chrome_event(c, r, ev, out);
    if (got == TRC_OK)
        got = chrome_finish(c, r, out);
    snprintf(err, n, "%s", chrome_error(c));
    chrome_free(c);
    fclose(out);
    trc_reader_free(r);
    return got;
}

static void test_last_device_gets_last_pid(void **state)
{
    (void)state;
    tb_buf b = {0};
    const uint32_t devices[] = {0, 0xffff};
    write_trace(&b, devices, 2, 0xffff);
    char *text = NULL, err[256];
    assert_int_equal(convert(&b, &text, err, sizeof err), TRC_OK);
    assert_non_null(strstr(text, "\"pid\":2147418112,")); /* device 0 */
    assert_non_null(strstr(text, "\"pid\":2147483647,")); /* device 0xffff */
    assert_non_null(strstr(text, "\"name\":\"GPU 65535\""));
    free(text);
    tb_buf_free(&b);
}

static void test_device_past_limit_refused(void **state)
{
    (void)state;
    tb_buf b = {0};
    const uint32_t devices[] = {4464, 70000}; /* 70000 & 0xffff == 4464 */
    write_trace(&b, devices, 2, -1);
    char *text = NULL, err[256];
    assert_int_equal(convert(&b, &text, err, sizeof err), TRC_ERR_LIMIT);
    assert_non_null(strstr(err, "GPU device 70000"));
    free(text);
    tb_buf_free(&b);
}

static void test_counter_device_past_limit_refused(void **state)
{
    (void)state;
    tb_buf b = {0};
    write_trace(&b, NULL, 0, 0x10000);
    char *text = NULL, err[256];
    assert_int_equal(convert(&b, &text, err, sizeof err), TRC_ERR_LIMIT);
    assert_non_null(strstr(err, "GPU device 65536"));
    free(text);
    tb_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_device_gets_last_pid),
        cmocka_unit_test(test_device_past_limit_refused),
        cmocka_unit_test(test_counter_device_past_limit_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
