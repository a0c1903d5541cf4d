/*
 * test_nomem.c — allocation failure, the SQLite way: make the Nth
 * allocation fail for N = 1, 2, ... until a run completes without any
 * failure, for the writer and for the reader.  Each run must end in
 * TRC_ERR_NOMEM or success, never crash, leak (ASan) or misreport; the
 * reader's successful runs must give exactly the reference events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trc/trc.h"
#include "lib/util/alloc.h"
#include "tests/support/trace_builder.h"

static int ok_or_nomem(trc_status st)
{
    return st == TRC_OK || st == TRC_ERR_NOMEM;
}

/* Every writer entry point; returns 1 if any call reported NOMEM. */
static int write_all(tb_buf *out)
{
    trc_writer_options o;
    trc_kv meta[1] = { { "k", "v" } };
    trc_writer *w;
    trc_status st;
    uint32_t th = 0, fr = 0, stk = 0, cnt = 0, sid = 0;
    int nomem = 0, i;
    char big[3000];

    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    memset(&o, 0, sizeof o);
    o.start_ns = 1;
    o.wall_ns = 1;
    o.host = "h";
    o.n_metadata = 1;
    o.metadata = meta;
    o.chunk_bytes = 512;
    o.compression_level = 6;
    w = trc_writer_open_callback(tb_write, out, &o, &st);
    if (!w) {
        assert_int_equal(st, TRC_ERR_NOMEM);
        return 1;
    }
#define CALL(x)                                       \
    do {                                              \
        trc_status s_ = (x);                          \
        if (!ok_or_nomem(s_) && s_ != TRC_ERR_ARG)    \
            fail_msg("%s -> %d", #x, (int)s_);        \
        nomem |= s_ == TRC_ERR_NOMEM;                 \
    } while (0)
    CALL(trc_writer_string(w, big, strlen(big), &sid));
    CALL(trc_writer_thread(w, 1, 1, "main", &th));
    CALL(trc_writer_frame(w, TRC_FRAME_PYTHON, "f", "f.py", 1, 1, &fr));
    CALL(trc_writer_stack(w, 0, fr, &stk));
    CALL(trc_writer_counter_def(w, "rss", "bytes", 1, -1, &cnt));
    {
        trc_process p = { 0, 1, 0, "/bin/x", "CPython", "x", 5, -1, "", "" };
        trc_gpu_device d = { 0, "gpu", { 1 }, 1, 2, 3, 4 };
        CALL(trc_writer_process(w, &p));
        CALL(trc_writer_gpu_device(w, &d));
    }
    for (i = 0; i < 300; i++) {
        CALL(trc_writer_sample(w, i * 1000, th, (i / 4) % 2 ? stk : 0, 1, 0));
        if (i % 30 == 0) {
            trc_gpu_kernel k;
            trc_api_call a = { th, i, i + 1, TRC_API_RUNTIME, "cudaLaunchKernel", 1, stk, 0, 0, 0, 0, 0 };
            trc_marker m = { TRC_MARK_INSTANT, th, 1, i, i, "mark", "user", 0, 0 };
            memset(&k, 0, sizeof k);
            k.start_ns = i;
            k.end_ns = i + 5;
            k.name = "kern";
            CALL(trc_writer_gpu_kernel(w, &k));
            CALL(trc_writer_api_call(w, &a));
            CALL(trc_writer_marker(w, &m));
            CALL(trc_writer_counter(w, cnt, i, 1.0));
            CALL(trc_writer_thread(w, 1, 1, i % 60 ? "main" : "renamed", &th));
        }
        if (i % 50 == 0)
            CALL(trc_writer_tick(w, i * 1000));
    }
    {
        trc_loss l = { .kind = TRC_LOSS_SAMPLES_MISSED, .count = 1, .pid = 1, .detail = "late" };
        trc_process_exit e = { 1, 400000, 0, 0 };
        trc_clock_sync c = { TRC_CLOCK_REALTIME, -1, 5, 6 };
        trc_gpu_memcpy mc;
        trc_gpu_memset ms;
        trc_gpu_sync sy;
        memset(&mc, 0, sizeof mc);
        memset(&ms, 0, sizeof ms);
        memset(&sy, 0, sizeof sy);
        CALL(trc_writer_loss(w, &l));
        CALL(trc_writer_process_exit(w, &e));
        CALL(trc_writer_clock_sync(w, &c));
        CALL(trc_writer_gpu_memcpy(w, &mc));
        CALL(trc_writer_gpu_memset(w, &ms));
        CALL(trc_writer_gpu_sync(w, &sy));
        CALL(trc_writer_flush(w));
    }
    CALL(trc_writer_close(w, 500000));
#undef CALL
    return nomem;
}

static void test_writer_oom(void **state)
{
    long n;
    (void)state;
    for (n = 1;; n++) {
        tb_buf out = { 0 };
        tb_result res;
        int nomem;
        trc_alloc_fail_after(n);
        nomem = write_all(&out);
        trc_alloc_fail_after(-1);
        /* whatever came out is a readable (possibly partial) trace */
        tb_read_mem(out.p, out.len, 0, &res);
        assert_true(res.status == TRC_ERR_EOF || (out.len == 0 && res.status == TRC_ERR_NOT_TRC));
        tb_result_free(&res);
        tb_buf_free(&out);
        if (!nomem) {
            assert_true(n > 10);
            break;
        }
        assert_true(n < 100000);
    }
}

static void reader_oom(const tb_buf *in)
{
    tb_result ref;
    long n;

    trc_alloc_fail_after(-1);
    tb_read_mem(in->p, in->len, 0, &ref);
    assert_int_equal(ref.status, TRC_ERR_EOF);
    for (n = 1;; n++) {
        tb_result res;
        long used;
        size_t i;
        trc_alloc_fail_after(n);
        tb_read_mem(in->p, in->len, 0, &res);
        used = trc_alloc_count();
        trc_alloc_fail_after(-1);
        if (res.status == TRC_ERR_NOMEM) {
            assert_true(used >= n);
            /* what came before the failure is the reference's beginning */
            for (i = 0; i < res.n; i++)
                assert_string_equal(res.lines[i], ref.lines[i]);
            tb_result_free(&res);
            assert_true(n < 100000);
            continue;
        }
        assert_int_equal(res.status, TRC_ERR_EOF);
        assert_int_equal(res.n, ref.n);
        for (i = 0; i < res.n; i++)
            assert_string_equal(res.lines[i], ref.lines[i]);
        tb_result_free(&res);
        if (used < n)
            break;
    }
    assert_true(n > 10);
    tb_result_free(&ref);
}

static void test_reader_oom(void **state)
{
    tb_buf a = { 0 }, two = { 0 };
    (void)state;
    assert_int_equal(tb_standard_trace(&a, 600, 400, 6), TRC_OK);
    reader_oom(&a);
    /* two segments, some damage in the second: other paths allocate */
    tb_append(&two, a.p, a.len);
    tb_append(&two, a.p, a.len);
    two.p[a.len + 100] ^= 0x20;
    reader_oom(&two);
    tb_buf_free(&a);
    tb_buf_free(&two);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_oom),
        cmocka_unit_test(test_reader_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
