/*
 * tests/unit/cupti/test_gpu_inject.c — the whole CUDA injection (lib/cupti/)
 * driven in-process through the fake CUPTI (tests/gpu/fake_cupti.c):
 * set-up, buffers, launch callbacks (nested launches too), flusher
 * thread, refusal by another subscriber, shutdown; the side trace is
 * checked record by record with the public reader.  Fork, exit without
 * shutdown and crash: test_gpu_lifecycle.c.  Built with the CUPTI headers by
 * mk/cupti.mk; without them it only reports a skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#ifndef TRC_HAVE_CUPTI
int main(void)
{
    printf("skip: built without the CUPTI headers\n");
    return 0;
}
#else

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/cupti/inject.h"
#include "tests/gpu/fake_cupti.h"
#include "tests/gpu/inject_testutil.h"
#include "tests/gpu/scenario_check.h"
#include "tests/gpu/trace_check.h"

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

static char warnings[4096];
static int n_warnings;

static void capture_warning(const char *line)
{
    size_t len = strlen(warnings);
    snprintf(warnings + len, sizeof warnings - len, "%s\n", line);
    n_warnings++;
}

static trec_cupti_config config(const char *path, int flusher)
{
    warnings[0] = 0;
    n_warnings = 0;
    return gput_config(path, flusher, capture_warning);
}

static void test_scenario(void **state)
{
    char path[128];
    cupti_api api;
    fake_scenario sc;
    tc_trace t;

    gput_tmp_path(path, sizeof path, "inject", "scenario");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_int_equal(n_warnings, 0);
    assert_true(trec_cupti_active());
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), -1);   /* already running */

    /* what was asked of CUPTI */
    static const CUpti_ActivityKind want[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_DEVICE,
        CUPTI_ACTIVITY_KIND_CONTEXT,
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_true(fake_cupti_kind_enabled(want[i]));
    assert_false(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_KERNEL));   /* serialises */
    assert_true(fake_cupti_timestamp_callback_registered());
    assert_true(fake_cupti_callback_enabled(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    assert_true(fake_cupti_callback_enabled(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
    assert_true(fake_cupti_callback_enabled(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    assert_true(fake_cupti_callback_enabled(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx));
    assert_false(fake_cupti_callback_enabled(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
    assert_true(fake_cupti_callback_enabled(CUPTI_CB_DOMAIN_RESOURCE,
                                            CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
    assert_true(fake_cupti_api_activity_disabled(RT, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    assert_true(fake_cupti_api_activity_disabled(DRV, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
    assert_false(fake_cupti_api_activity_disabled(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));

    fake_cupti_scenario(&sc, 0);
    assert_int_equal(trec_cupti_flush(), 0);
    assert_int_equal(fake_cupti_pending(), 0);
    assert_true(fake_cupti_buffers() >= 1);
    trec_cupti_shutdown();
    assert_false(trec_cupti_active());
    assert_true(fake_cupti_forced_flushes() >= 1);
    assert_false(fake_cupti_subscribed());
    assert_false(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    assert_int_equal(trec_cupti_flush(), -1);

    assert_int_equal(tc_load(path, &t), TRC_OK);
    fake_scenario_check(&t, &sc, getpid());
    tc_free(&t);
    unlink(path);
}

/* Small buffers: records of one scenario spread over many buffers. */
static void test_many_buffers(void **state)
{
    char path[128];
    cupti_api api;
    fake_scenario sc;
    tc_trace t;
    fake_cupti_opts o = { .buffer_records = 3 };

    gput_tmp_path(path, sizeof path, "inject", "buffers");
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    fake_cupti_scenario(&sc, 0);
    trec_cupti_shutdown();
    assert_true(fake_cupti_buffers() > 10);
    assert_int_equal(tc_load(path, &t), TRC_OK);
    fake_scenario_check(&t, &sc, getpid());
    tc_free(&t);
    unlink(path);
}

/* Without the timestamp callback, CUPTI's CLOCK_REALTIME stamps are
 * mapped onto the trace clock. */
static void test_realtime_mapping(void **state)
{
    char path[128];
    cupti_api api;
    fake_scenario sc;
    tc_trace t;
    fake_cupti_opts o = { .no_timestamp_callback = 1 };

    gput_tmp_path(path, sizeof path, "inject", "realtime");
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_false(fake_cupti_timestamp_callback_registered());
    int64_t before = trc_now_ns();
    fake_cupti_scenario(&sc, 0);
    trec_cupti_shutdown();
    int64_t after = trc_now_ns();
    assert_int_equal(tc_load(path, &t), TRC_OK);
    fake_scenario_check(&t, &sc, getpid());
    const tc_event *k = tc_nth(&t, TRC_EV_GPU_KERNEL, 0);
    /* the scenario's first kernel starts 180 µs after "now" at its start */
    assert_true(k->u.kernel.start_ns > before - 50000000);
    assert_true(k->u.kernel.start_ns < after + 50000000);
    tc_free(&t);
    unlink(path);
}

static void refused(const fake_cupti_opts *o, const char *expect)
{
    char path[128];
    cupti_api api;
    tc_trace t;

    gput_tmp_path(path, sizeof path, "inject", "refused");
    fake_cupti_table(&api, o);
    trec_cupti_config cfg = config(path, 0);
    int64_t before = trc_now_ns();
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 1);
    int64_t after = trc_now_ns();
    assert_int_equal(n_warnings, 1);
    assert_non_null(strstr(warnings, expect));
    assert_non_null(strstr(warnings, "GPU recording off"));
    assert_false(trec_cupti_active());
    assert_false(fake_cupti_subscribed());
    assert_false(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    /* the program goes on: its API calls reach nobody, nothing breaks */
    fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, fake_cupti_now(), 10, 0);
    assert_int_equal(trec_cupti_flush(), -1);
    trec_cupti_shutdown();

    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 1);
    const tc_event *l = tc_nth(&t, TRC_EV_LOSS, 0);
    assert_int_equal(l->u.loss.kind, TRC_LOSS_OTHER);
    assert_non_null(strstr(l->detail, expect));
    /* stamped when recording was found off, not "time unknown" */
    assert_true(l->u.loss.start_ns >= before && l->u.loss.start_ns <= after);
    assert_int_equal(l->u.loss.end_ns, l->u.loss.start_ns);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 0);
    tc_free(&t);
    unlink(path);
}

static void test_second_subscriber_refused(void **state)
{
    fake_cupti_opts o = { .refuse_holder = "Nsight Systems" };
    refused(&o, "CUPTI is already in use by Nsight Systems");
    fake_cupti_opts o2 = { .refuse_holder = "x", .no_subscribe_v2 = 1 };
    refused(&o2, "in use by another CUPTI client");
}

static void test_flusher_thread(void **state)
{
    char path[128];
    cupti_api api;
    fake_scenario sc;
    tc_trace t;
    int seen = 0;

    gput_tmp_path(path, sizeof path, "inject", "flusher");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config(path, 1);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    fake_cupti_scenario(&sc, 0);
    /* the records reach the file while the program still runs */
    for (int i = 0; i < 100 && !seen; i++) {
        gput_sleep_ms(100);
        if (tc_load(path, &t) == TRC_OK) {
            seen = tc_count(&t, TRC_EV_GPU_KERNEL) == sc.kernels;
            tc_free(&t);
        }
    }
    assert_true(seen);
    assert_true(fake_cupti_flushes() >= 1);
    trec_cupti_shutdown();
    assert_int_equal(tc_load(path, &t), TRC_OK);
    fake_scenario_check(&t, &sc, getpid());
    tc_free(&t);
    unlink(path);
}

#define LAUNCH_THREADS 4
#define LAUNCHES 300

static void *launcher(void *arg)
{
    for (int i = 0; i < LAUNCHES; i++) {
        uint64_t now = fake_cupti_now();
        uint32_t c = fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, now,
                                     2000, 0);
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = now + 3000;
        k.end = now + 9000;
        k.streamId = (uint32_t)(uintptr_t)arg;
        k.correlationId = c;
        k.name = "_Z6kernelv";
        fake_cupti_add(&k, sizeof k);
    }
    return NULL;
}

static void test_threads(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    pthread_t th[LAUNCH_THREADS];
    int64_t tids[LAUNCH_THREADS + 1];
    size_t n_tids = 0;

    gput_tmp_path(path, sizeof path, "inject", "threads");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config(path, 1);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    for (uintptr_t i = 0; i < LAUNCH_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, launcher, (void *)(i + 1)), 0);
    for (int i = 0; i < LAUNCH_THREADS; i++)
        pthread_join(th[i], NULL);
    trec_cupti_shutdown();
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), LAUNCH_THREADS * LAUNCHES);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), LAUNCH_THREADS * LAUNCHES);
    for (size_t i = 0; i < t.n; i++) {
        const tc_event *e = &t.ev[i];
        if (e->type == TRC_EV_GPU_KERNEL) {
            const tc_event *a = tc_api_by_corr(&t, e->u.kernel.where.correlation);
            assert_non_null(a);
            assert_true(e->u.kernel.start_ns >= a->u.api.start_ns);
            assert_string_equal(e->name, "kernel()");
        } else if (e->type == TRC_EV_API_CALL) {
            size_t k;
            assert_int_equal(e->u.api.flags, TRC_API_LAUNCH | TRC_API_NO_PYTHON);
            for (k = 0; k < n_tids && tids[k] != e->tid; k++)
                ;
            if (k == n_tids && n_tids <= LAUNCH_THREADS)
                tids[n_tids++] = e->tid;
        }
    }
    assert_int_equal(n_tids, LAUNCH_THREADS);
    tc_free(&t);
    unlink(path);
}

/* A launch must not wait while another thread decodes buffers: GetNextRecord
 * is made slow (the flusher holds the injection's big lock over whole
 * buffers) and 1,000 launch callbacks fire from a second thread during a
 * flush of 100k records.  Buffers of 2,000 records: a p99 over 1,000
 * launches needs more than ten of them to land inside a decode. */
#define SLOW_RECORDS 100000
#define SLOW_LAUNCHES 1000

static atomic_int slow_flush_done;

static void *slow_flusher(void *arg)
{
    trec_cupti_flush();
    atomic_store(&slow_flush_done, 1);
    return arg;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_launch_not_blocked_by_flush(void **state)
{
    static int64_t lat[SLOW_LAUNCHES];
    char path[128];
    cupti_api api;
    fake_cupti_opts o;
    pthread_t th;
    tc_trace t;
    int n, raced = 0;

    gput_tmp_path(path, sizeof path, "inject", "slowflush");
    memset(&o, 0, sizeof o);
    o.next_record_delay_ns = 2000;
    o.buffer_records = 2000;
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    for (uint32_t i = 0; i < SLOW_RECORDS; i++)
        fake_cupti_api_record(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                              fake_cupti_now(), 1000, 0, 1000000 + i);
    assert_int_equal(fake_cupti_pending(), SLOW_RECORDS * sizeof(CUpti_ActivityAPI));
    atomic_store(&slow_flush_done, 0);
    assert_int_equal(pthread_create(&th, NULL, slow_flusher, NULL), 0);
    gput_sleep_ms(5);
    for (n = 0; n < SLOW_LAUNCHES; n++) {
        int64_t a = mono_ns();
        raced += !atomic_load(&slow_flush_done);
        uint32_t c = fake_cupti_api_enter(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
        lat[n] = mono_ns() - a;
        fake_cupti_api_exit(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, c);
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    pthread_join(th, NULL);
    /* more than 1% of the launches raced the flush, so its p99 counts */
    assert_true(raced > SLOW_LAUNCHES / 100);
    qsort(lat, (size_t)n, sizeof lat[0], cmp_i64);
    printf("launch callback latency (%d launches during the flush): p50 %lld ns, p99 %lld ns, "
           "max %lld ns\n", raced, (long long)lat[n / 2], (long long)lat[n * 99 / 100], (long long)lat[n - 1]);
    assert_true(lat[n * 99 / 100] < 1000000);
    trec_cupti_shutdown();
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), SLOW_RECORDS);
    tc_free(&t);
    unlink(path);
}

/* Another CUPTI client (torch.profiler) in the program: its subscribe
 * fails, but it registers its own buffer callbacks, disables the kinds
 * and finalizes.  Launches go on, records go to it; after TAKEOVER_NS
 * (lib/cupti/inject.c, 10 s on the trace clock, which the test moves on)
 * the injection says so once, in a warning and a loss record, and calls
 * CUPTI no more. */
static atomic_llong clock_skew;

static int64_t skewed_clock(void)
{
    return trc_now_ns() + atomic_load(&clock_skew);
}

static void test_other_client_takes_over(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;

    gput_tmp_path(path, sizeof path, "inject", "takeover");
    fake_cupti_table(&api, NULL);
    atomic_store(&clock_skew, 0);
    trec_cupti_config cfg = config(path, 0);
    cfg.clock = skewed_clock;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    /* ours first: one launch recorded */
    fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, fake_cupti_now(), 10, 0);
    assert_int_equal(trec_cupti_flush(), 0);
    /* then the other client */
    fake_cupti_other_client();
    for (int i = 0; i < 5; i++)
        fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, fake_cupti_now(),
                        10, 0);
    assert_int_equal(trec_cupti_flush(), 0);
    assert_int_equal(fake_cupti_other_records(), 5);
    assert_int_equal(n_warnings, 0);   /* not yet: records may just be late */
    atomic_store(&clock_skew, 11000000000LL);
    assert_int_equal(trec_cupti_flush(), 0);
    assert_int_equal(n_warnings, 1);
    assert_non_null(strstr(warnings, "taken over by another CUPTI client"));
    fake_cupti_finalize();
    /* the program goes on: more launches, flushes, then exit; never a
     * CUPTI call after its finalize, never a second warning */
    fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, fake_cupti_now(), 10, 0);
    assert_int_equal(trec_cupti_flush(), 0);
    trec_cupti_shutdown();
    assert_int_equal(fake_cupti_calls_after_finalize(), 0);
    assert_int_equal(n_warnings, 1);
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 1);
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 1);
    const tc_event *l = tc_nth(&t, TRC_EV_LOSS, 0);
    assert_int_equal(l->u.loss.kind, TRC_LOSS_OTHER);
    assert_non_null(strstr(l->detail, "GPU recording taken over by another CUPTI client"));
    tc_free(&t);
    unlink(path);
}

/* Kernel records refused after DEVICE and CONTEXT were enabled: those
 * are disabled again and the subscriber removed, so CUPTI fills no
 * buffers for a recorder that is off. */
static void test_failed_setup_undone(void **state)
{
    char path[128];
    cupti_api api;
    fake_cupti_opts o;

    gput_tmp_path(path, sizeof path, "inject", "undone");
    memset(&o, 0, sizeof o);
    o.fail_kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 1);
    assert_non_null(strstr(warnings, "cannot enable kernel records"));
    assert_int_equal(fake_cupti_kinds_enabled(), 0);
    assert_false(fake_cupti_subscribed());
    unlink(path);
}

/* cuptiEnableCallback and cuptiSetThreadIdType refused: recording goes
 * on (GPU records still come), each refusal said in one warning. */
static void test_refused_callbacks_warn(void **state)
{
    char path[128];
    cupti_api api;
    fake_cupti_opts o;
    tc_trace t;

    gput_tmp_path(path, sizeof path, "inject", "cbrefused");
    memset(&o, 0, sizeof o);
    o.fail_enable_callback = 1;
    o.fail_thread_id_type = 1;
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_int_equal(n_warnings, 2);
    assert_non_null(strstr(warnings, "cuptiEnableCallback failed"));
    assert_non_null(strstr(warnings, "cuptiSetThreadIdType failed"));
    fake_cupti_api_record(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, fake_cupti_now(),
                          1000, 0, 77);
    trec_cupti_shutdown();
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 1);
    tc_free(&t);
    unlink(path);
}

/* cuptiActivitySetThreadIdType refused: CUPTI's API records then carry
 * pthread handles (the fake does as CUPTI does), yet each launch lands
 * on the kernel thread id of the thread that made it, parked at its
 * callback: the main thread's and a second thread's. */
static pid_t second_tid;
static uint32_t second_corr;

static void *second_launcher(void *arg)
{
    second_tid = gettid();
    second_corr = fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                  fake_cupti_now(), 1000, 0);
    return arg;
}

static void test_thread_id_type_refused(void **state)
{
    char path[128];
    cupti_api api;
    fake_cupti_opts o;
    pthread_t th;
    tc_trace t;

    gput_tmp_path(path, sizeof path, "inject", "tidtype");
    memset(&o, 0, sizeof o);
    o.fail_thread_id_type = 1;
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_int_equal(n_warnings, 1);
    assert_non_null(strstr(warnings, "cuptiSetThreadIdType failed"));
    uint32_t corr = fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                    fake_cupti_now(), 1000, 0);
    assert_int_equal(pthread_create(&th, NULL, second_launcher, NULL), 0);
    pthread_join(th, NULL);
    trec_cupti_shutdown();
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 2);
    const tc_event *a = tc_api_by_corr(&t, corr), *b = tc_api_by_corr(&t, second_corr);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->tid, gettid());
    assert_int_equal(b->tid, second_tid);
    tc_free(&t);
    unlink(path);
}

/* A capture that names each call's stack after how many captures came
 * before it, so the trace shows which capture a launch got. */
static int n_captures;

static trc_status counting_capture(trc_writer *w, uint32_t *stack, uint32_t *flags)
{
    char name[32];
    uint32_t frame;
    trc_status st;

    n_captures++;
    snprintf(name, sizeof name, "capture%d", n_captures);
    st = trc_writer_frame(w, TRC_FRAME_PYTHON, name, "fake.py", 1, 1, &frame);
    if (st == TRC_OK)
        st = trc_writer_stack(w, 0, frame, stack);
    *flags = 0;
    return st;
}

/* cudaLaunchKernel calls cuLaunchKernel: the inner launch reuses the
 * outer one's stack instead of walking again (inject.c, tls_launch); the
 * next, separate launch captures afresh. */
static void test_nested_launch(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    const CUpti_CallbackId outer_id = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    const CUpti_CallbackId inner_id = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;

    gput_tmp_path(path, sizeof path, "inject", "nested");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config(path, 0);
    cfg.capture = counting_capture;
    n_captures = 0;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    uint64_t now = fake_cupti_now();
    uint32_t outer = fake_cupti_api_enter(RT, outer_id);
    uint32_t inner = fake_cupti_api_enter(DRV, inner_id);
    fake_cupti_api_exit(DRV, inner_id, inner);
    fake_cupti_api_exit(RT, outer_id, outer);
    fake_cupti_api_record(RT, outer_id, now, 100, 0, outer);
    fake_cupti_api_record(DRV, inner_id, now + 10, 80, 0, inner);
    assert_int_equal(n_captures, 1);
    uint32_t next = fake_cupti_call(RT, outer_id, now + 200, 50, 0);
    assert_int_equal(n_captures, 2);
    trec_cupti_shutdown();

    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 3);
    const uint32_t corr[3] = { outer, inner, next };
    const char *want[3] = { "capture1", "capture1", "capture2" };
    for (int i = 0; i < 3; i++) {
        const tc_event *a = tc_api_by_corr(&t, corr[i]);
        assert_non_null(a);
        assert_int_equal(a->u.api.flags, TRC_API_LAUNCH);
        assert_int_equal(a->depth, 1);
        assert_string_equal(a->frames[0].function, want[i]);
    }
    assert_int_equal(tc_api_by_corr(&t, outer)->u.api.stack, tc_api_by_corr(&t, inner)->u.api.stack);
    tc_free(&t);
    unlink(path);
}

/* The calls that make the host wait get the calling thread's stack and
 * the SYNC flag: each sync of a known duration comes back at the line
 * the capture hook gave it (counting_capture: captureN, line 1), the
 * synchronous copy is both LAUNCH and SYNC, its driver call inside it
 * reuses its stack, an Async copy is no sync, and a graph capture's end
 * gets a stack without the flag. */
static void test_sync_calls(void **state)
{
    static const struct { CUpti_CallbackDomain dom; CUpti_CallbackId id; uint64_t dur;
                          uint32_t flags; const char *fn; } calls[] = {
        { RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 464000, TRC_API_SYNC, "capture1" },
        { RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 90000, TRC_API_SYNC | TRC_API_LAUNCH, "capture2" },
        { DRV, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, 8000, TRC_API_SYNC, "capture3" },
        { RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 5000, TRC_API_LAUNCH, "capture4" },
        { RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 2000, TRC_API_SYNC, "capture5" },
        { RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, 3000, 0, "capture6" },
    };
    const size_t n = sizeof calls / sizeof calls[0];
    char path[128];
    cupti_api api;
    tc_trace t;
    uint32_t corr[8];

    gput_tmp_path(path, sizeof path, "inject", "syncs");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config(path, 0);
    cfg.capture = counting_capture;
    n_captures = 0;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    uint64_t now = fake_cupti_now();
    for (size_t i = 0; i < n; i++)
        corr[i] = fake_cupti_call(calls[i].dom, calls[i].id, now + i * 1000000, calls[i].dur, 0);
    /* cudaMemcpy's own cuMemcpyDtoH: nested, no second walk */
    uint32_t outer = fake_cupti_api_enter(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
    uint32_t inner = fake_cupti_api_enter(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2);
    fake_cupti_api_exit(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, inner);
    fake_cupti_api_exit(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, outer);
    fake_cupti_api_record(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, now + 9000000, 7000, 0, outer);
    fake_cupti_api_record(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, now + 9001000, 5000, 0, inner);
    assert_int_equal(n_captures, (int)n + 1);
    trec_cupti_shutdown();

    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    for (size_t i = 0; i < n; i++) {
        const tc_event *a = tc_api_by_corr(&t, corr[i]);
        assert_non_null(a);
        assert_int_equal(a->u.api.flags, calls[i].flags);
        assert_int_equal(a->u.api.end_ns - a->u.api.start_ns, (int64_t)calls[i].dur);
        assert_int_equal(a->depth, 1);
        assert_string_equal(a->frames[0].function, calls[i].fn);
    }
    const tc_event *o = tc_api_by_corr(&t, outer), *in = tc_api_by_corr(&t, inner);
    assert_int_equal(o->u.api.flags, TRC_API_SYNC | TRC_API_LAUNCH);
    assert_int_equal(in->u.api.flags, TRC_API_SYNC | TRC_API_LAUNCH);
    assert_int_equal(o->u.api.stack, in->u.api.stack);
    assert_string_equal(in->frames[0].function, "capture7");
    tc_free(&t);
    unlink(path);
}

static void test_context_destroy_flushes(void **state)
{
    char path[128];
    cupti_api api;
    fake_scenario sc;

    gput_tmp_path(path, sizeof path, "inject", "ctxdestroy");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    fake_cupti_scenario(&sc, 0);
    assert_true(fake_cupti_pending() > 0);
    fake_cupti_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    assert_int_equal(fake_cupti_pending(), 0);
    assert_int_equal(fake_cupti_flushes(), 1);
    /* cudaDeviceReset also tears contexts down */
    fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, fake_cupti_now(), 10, 0);
    assert_int_equal(fake_cupti_flushes(), 2);
    assert_int_equal(fake_cupti_forced_flushes(), 0);   /* forced: at exit only */
    trec_cupti_shutdown();
    assert_int_equal(fake_cupti_forced_flushes(), 1);
    unlink(path);
}

/* Kernels still running when the program resets the device or destroys
 * a context: the flush there must leave them with CUPTI (a forced flush
 * would hand them over unfinished, to be dropped); they arrive once
 * finished, and nothing is counted lost. */
static void test_reset_keeps_work_in_flight(void **state)
{
    static const struct { CUpti_CallbackDomain dom; CUpti_CallbackId id; } resets[] = {
        { RT, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 },
        { DRV, CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2 },
        { CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING },
    };
    for (size_t r = 0; r < sizeof resets / sizeof resets[0]; r++) {
        char path[128];
        cupti_api api;
        tc_trace t;
        const int n = 6;

        gput_tmp_path(path, sizeof path, "inject", "inflight");
        fake_cupti_table(&api, NULL);
        trec_cupti_config cfg = config(path, 0);
        assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
        for (int i = 0; i < n; i++) {
            uint64_t now = fake_cupti_now();
            uint32_t c = fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, now,
                                         2000, 0);
            CUpti_ActivityKernel10 k;
            memset(&k, 0, sizeof k);
            k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k.start = now + 3000;
            k.end = now + 9000;
            k.streamId = 7;
            k.correlationId = c;
            k.name = "_Z6kernelv";
            fake_cupti_add_unfinished(&k);
        }
        if (resets[r].dom == CUPTI_CB_DOMAIN_RESOURCE)
            fake_cupti_resource(resets[r].id);
        else
            fake_cupti_call(resets[r].dom, resets[r].id, fake_cupti_now(), 10, 0);
        assert_true(fake_cupti_flushes() >= 1);
        assert_int_equal(fake_cupti_unfinished(), n);   /* still CUPTI's */
        fake_cupti_complete();
        assert_int_equal(trec_cupti_flush(), 0);
        trec_cupti_shutdown();

        assert_int_equal(tc_load(path, &t), TRC_OK);
        assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), n);
        assert_int_equal(tc_count(&t, TRC_EV_LOSS), 0);   /* zero dropped */
        tc_free(&t);
        unlink(path);
    }
}

/* n launches on this thread, each with its kernel record, stamped on
 * the clock CUPTI would use now. */
static void launch_kernels(int n)
{
    for (int i = 0; i < n; i++) {
        uint64_t now = fake_cupti_now();
        uint32_t c = fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, now,
                                     2000, 0);
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = now + 3000;
        k.end = now + 9000;
        k.streamId = 7;
        k.correlationId = c;
        k.name = "_Z6kernelv";
        fake_cupti_add(&k, sizeof k);
    }
}

/* Every kernel in t lies within [before, after] on the trace clock (with
 * slack): CUPTI's stamps were mapped, whatever clock they came on. */
static void assert_kernels_within(const tc_trace *t, int64_t before, int64_t after)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].type == TRC_EV_GPU_KERNEL) {
            assert_true(t->ev[i].u.kernel.start_ns > before - 50000000);
            assert_true(t->ev[i].u.kernel.start_ns < after + 50000000);
        }
}

/* CUPTI 13.0 (12.6 Update 2 up to 13.1): the timestamp callback zeroes
 * kernel timestamps, so it is never registered and CUPTI's own clock is
 * mapped by offset; every launch keeps its kernel. */
/* TREC_GPU_OFF (the overhead split's diagnostic): the parts named are
 * not enabled, the kernels always are, the rest as usual; an unknown
 * word is one warning. */
static void test_parts_off(void **state)
{
    char path[128];
    cupti_api api;

    gput_tmp_path(path, sizeof path, "inject", "off");
    fake_cupti_table(&api, NULL);
    setenv("TREC_GPU_OFF", "driver,sync,stacks,kernel,nonsense", 1);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    unsetenv("TREC_GPU_OFF");
    assert_false(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_DRIVER));
    assert_false(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    assert_true(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    assert_true(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
    assert_true(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY));
    /* no launch-site capture: the launch callback is off, the flush one on */
    assert_false(fake_cupti_callback_enabled(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    assert_true(fake_cupti_callback_enabled(RT, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020));
    assert_int_equal(n_warnings, 1);
    assert_non_null(strstr(warnings, "TREC_GPU_OFF: unknown part 'kernel'"));
    trec_cupti_shutdown();
    unlink(path);

    /* unset: every kind and the launch callback */
    fake_cupti_table(&api, NULL);
    cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_true(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_DRIVER));
    assert_true(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    assert_true(fake_cupti_callback_enabled(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    assert_int_equal(n_warnings, 0);
    trec_cupti_shutdown();
    unlink(path);
}

static void test_version_13_0_skips_callback(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    fake_cupti_opts o = { .version = 130001, .callback_zero_kernels = 1000 };

    gput_tmp_path(path, sizeof path, "inject", "v130");
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_false(fake_cupti_timestamp_callback_registered());
    int64_t before = trc_now_ns();
    launch_kernels(20);
    trec_cupti_shutdown();
    int64_t after = trc_now_ns();
    assert_int_equal(n_warnings, 0);
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), 20);
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 0);
    assert_kernels_within(&t, before, after);
    tc_free(&t);
    unlink(path);
}

/* CUPTI 13.1 has the fix: the callback is registered, CUPTI stamps on
 * the trace clock. */
static void test_version_13_1_uses_callback(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    fake_cupti_opts o = { .version = 130100 };

    gput_tmp_path(path, sizeof path, "inject", "v131");
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_true(fake_cupti_timestamp_callback_registered());
    int64_t before = trc_now_ns();
    assert_true(fake_cupti_now() >= (uint64_t)before);   /* our clock, not CLOCK_REALTIME */
    assert_true(fake_cupti_now() < (uint64_t)before + 1000000000);
    launch_kernels(5);
    trec_cupti_shutdown();
    int64_t after = trc_now_ns();
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), 5);
    assert_kernels_within(&t, before, after);
    tc_free(&t);
    unlink(path);
}

/* A CUPTI not known to be affected zeroes kernel timestamps anyway: one
 * warning, the callback gives way to CUPTI's own clock mapped by offset,
 * and from then on every launch has its kernel, on the trace clock. */
static void test_zero_timestamps_fall_back(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    fake_cupti_opts o = { .version = 130100, .callback_zero_kernels = 4, .buffer_records = 3 };
    uint64_t lost = 0;

    gput_tmp_path(path, sizeof path, "inject", "zerots");
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    int warned_at_start = n_warnings;   /* 13.1 is newer than the headers */
    assert_true(fake_cupti_timestamp_callback_registered());
    launch_kernels(4);
    assert_int_equal(trec_cupti_flush(), 0);
    assert_int_equal(n_warnings, warned_at_start + 1);
    assert_non_null(strstr(warnings, "zero timestamps"));
    int64_t before = trc_now_ns();
    /* CUPTI's clock again: the callback now hands out CLOCK_REALTIME */
    assert_true(fake_cupti_now() > (uint64_t)before + 1000000000);
    launch_kernels(10);
    assert_int_equal(trec_cupti_flush(), 0);
    launch_kernels(10);
    trec_cupti_shutdown();
    int64_t after = trc_now_ns();
    assert_int_equal(n_warnings, warned_at_start + 1);

    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), 20);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 24);
    assert_kernels_within(&t, before, after);
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].type == TRC_EV_LOSS)
            lost += t.ev[i].u.loss.count;
    assert_int_equal(lost, 4);   /* the zeroed ones, counted, not placed at 0 */
    tc_free(&t);
    unlink(path);
}

/* NVTX may reach the injection before CUDA does (and in descendants
 * that never use CUDA): libcupti gets one CUPTI call before NVTX is
 * forwarded to it, in either NVTX entry point. */
static void test_nvtx_after_a_cupti_call(void **state)
{
    cupti_api api;
    fake_cupti_table(&api, NULL);
    assert_string_equal(fake_cupti_calls(), "");
    assert_int_equal(trec_cupti_test_nvtx_forward(&api, 2, NULL), 1);
    assert_string_equal(fake_cupti_calls(), "cuptiGetTimestamp InitializeInjectionNvtx2");
    fake_cupti_table(&api, NULL);
    assert_int_equal(trec_cupti_test_nvtx_forward(&api, 1, NULL), 1);
    assert_string_equal(fake_cupti_calls(), "cuptiGetTimestamp InitializeInjectionNvtx");
    /* a libcupti without NVTX support: declined, nothing called */
    fake_cupti_table(&api, NULL);
    api.InitializeInjectionNvtx2 = NULL;
    assert_int_equal(trec_cupti_test_nvtx_forward(&api, 2, NULL), 0);
    assert_string_equal(fake_cupti_calls(), "");
}

/* A libcupti of a later CUDA release than the headers (13.1 against
 * 13.0 headers): one warning; its longer records (Kernel11, Device6,
 * Context4 ...) decode exactly as CUPTI 13.0's, the whole scenario
 * checked record by record. */
static void test_newer_cupti_longer_records(void **state)
{
    char path[128];
    cupti_api api;
    fake_scenario sc;
    tc_trace t;
    fake_cupti_opts o = { .version = 130100, .record_extra = 24, .buffer_records = 5 };

    gput_tmp_path(path, sizeof path, "inject", "longer");
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_int_equal(n_warnings, 1);
    assert_non_null(strstr(warnings, "libcupti 13.1.0 is newer than the CUPTI 13.0."));
    fake_cupti_scenario(&sc, 0);
    trec_cupti_shutdown();
    assert_int_equal(n_warnings, 1);
    assert_true(fake_cupti_buffers() > 5);
    assert_int_equal(tc_load(path, &t), TRC_OK);
    fake_scenario_check(&t, &sc, getpid());
    tc_free(&t);
    unlink(path);
}

/* A launch API added after the headers (its callback id past
 * CUPTI_DRIVER_TRACE_CBID_SIZE): found by name, its callback enabled, its
 * API record flagged as a launch and given the Python stack. */
static void test_launch_api_past_headers(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    const uint32_t id = CUPTI_DRIVER_TRACE_CBID_SIZE + 5;
    fake_cupti_opts o = { .version = 130100, .new_driver_cbid = id,
                          .new_driver_name = "cuLaunchKernelFuture_v2" };

    gput_tmp_path(path, sizeof path, "inject", "newcbid");
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = config(path, 0);
    cfg.capture = counting_capture;
    n_captures = 0;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_true(fake_cupti_callback_enabled(DRV, id));
    assert_false(fake_cupti_callback_enabled(DRV, id + 1));
    uint32_t corr = fake_cupti_call(DRV, id, fake_cupti_now(), 100, 0);
    assert_int_equal(n_captures, 1);
    trec_cupti_shutdown();

    assert_int_equal(tc_load(path, &t), TRC_OK);
    const tc_event *a = tc_api_by_corr(&t, corr);
    assert_non_null(a);
    assert_string_equal(a->name, "cuLaunchKernelFuture");
    assert_int_equal(a->u.api.flags, TRC_API_LAUNCH);
    assert_int_equal(a->depth, 1);
    assert_string_equal(a->frames[0].function, "capture1");
    tc_free(&t);
    unlink(path);
}

static void test_unwritable_side_trace(void **state)
{
    cupti_api api;
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config("/nonexistent-dir/x.trc", 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), -1);
    assert_int_equal(n_warnings, 1);
    assert_non_null(strstr(warnings, "/nonexistent-dir/x.trc"));
    assert_false(fake_cupti_subscribed());
    assert_false(trec_cupti_active());
}

/* CUDA_INJECTION64_PATH set by hand: no TREC_GPU_DIR → ./trec-gpu-PID.trc */
static void test_default_path(void **state)
{
    char dir[] = "/tmp/trc-gpu-cwd-XXXXXX", old[4096], file[128];
    cupti_api api;
    tc_trace t;

    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(old, sizeof old));
    assert_int_equal(chdir(dir), 0);
    unsetenv("TREC_GPU_DIR");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config(NULL, 0);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_int_equal(n_warnings, 1);
    snprintf(file, sizeof file, "trec-gpu-%d.trc", (int)getpid());
    assert_non_null(strstr(warnings, file));
    fake_cupti_call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, fake_cupti_now(), 10, 0);
    trec_cupti_shutdown();
    assert_int_equal(tc_load(file, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 1);
    tc_free(&t);
    unlink(file);
    assert_int_equal(chdir(old), 0);
    rmdir(dir);
}

/* The driver's entry point with the real libcupti of this machine (no
 * GPU: CUPTI refuses to subscribe): one warning, a side trace saying
 * why, return 1 both times. */
static void test_initialize_injection(void **state)
{
    char dir[] = "/tmp/trc-gpu-dir-XXXXXX", file[256];
    tc_trace t;
    struct stat sb;

    assert_non_null(mkdtemp(dir));
    setenv("TREC_GPU_DIR", dir, 1);
    assert_int_equal(InitializeInjection(), 1);
    assert_int_equal(InitializeInjection(), 1);
    snprintf(file, sizeof file, "%s/gpu-%d.trc", dir, (int)getpid());
    if (trec_cupti_active()) {
        /* a machine with a GPU: it records */
        trec_cupti_shutdown();
        assert_int_equal(stat(file, &sb), 0);
    } else if (stat(file, &sb) == 0) {
        assert_int_equal(tc_load(file, &t), TRC_OK);
        assert_int_equal(tc_count(&t, TRC_EV_LOSS), 1);
        assert_non_null(strstr(tc_nth(&t, TRC_EV_LOSS, 0)->detail, "GPU recording off"));
        tc_free(&t);
    } else {
        printf("note: libcupti not loadable here; nothing written\n");
    }
    unlink(file);
    unsetenv("TREC_GPU_DIR");
    rmdir(dir);
}

/* A failed test may leave the injection running: stop it, so the next
 * test starts clean and only the real failure is reported. */
static int shutdown_after(void **state)
{
    trec_cupti_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_scenario, shutdown_after),
        cmocka_unit_test_teardown(test_many_buffers, shutdown_after),
        cmocka_unit_test_teardown(test_realtime_mapping, shutdown_after),
        cmocka_unit_test_teardown(test_second_subscriber_refused, shutdown_after),
        cmocka_unit_test_teardown(test_flusher_thread, shutdown_after),
        cmocka_unit_test_teardown(test_threads, shutdown_after),
        cmocka_unit_test_teardown(test_launch_not_blocked_by_flush, shutdown_after),
        cmocka_unit_test_teardown(test_other_client_takes_over, shutdown_after),
        cmocka_unit_test_teardown(test_failed_setup_undone, shutdown_after),
        cmocka_unit_test_teardown(test_thread_id_type_refused, shutdown_after),
        cmocka_unit_test_teardown(test_refused_callbacks_warn, shutdown_after),
        cmocka_unit_test_teardown(test_nested_launch, shutdown_after),
        cmocka_unit_test_teardown(test_sync_calls, shutdown_after),
        cmocka_unit_test_teardown(test_context_destroy_flushes, shutdown_after),
        cmocka_unit_test_teardown(test_reset_keeps_work_in_flight, shutdown_after),
        cmocka_unit_test_teardown(test_parts_off, shutdown_after),
        cmocka_unit_test_teardown(test_version_13_0_skips_callback, shutdown_after),
        cmocka_unit_test_teardown(test_version_13_1_uses_callback, shutdown_after),
        cmocka_unit_test_teardown(test_zero_timestamps_fall_back, shutdown_after),
        cmocka_unit_test_teardown(test_nvtx_after_a_cupti_call, shutdown_after),
        cmocka_unit_test_teardown(test_newer_cupti_longer_records, shutdown_after),
        cmocka_unit_test_teardown(test_launch_api_past_headers, shutdown_after),
        cmocka_unit_test_teardown(test_unwritable_side_trace, shutdown_after),
        cmocka_unit_test_teardown(test_default_path, shutdown_after),
        cmocka_unit_test_teardown(test_initialize_injection, shutdown_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
