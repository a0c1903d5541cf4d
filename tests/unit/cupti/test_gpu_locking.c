/*
 * tests/unit/cupti/test_gpu_locking.c — the injection (lib/cupti/inject.c)
 * under the concurrency a real CUPTI brings, through the fake CUPTI
 * (tests/gpu/fake_cupti.c): no CUPTI call made while the injection's
 * lock is held (its header's rule; CUPTI may hold its own locks while it
 * calls us), and 64 threads each filling a buffer of its own that CUPTI
 * hands back only at a flush.  Built with the CUPTI headers by
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cupti/inject.h"
#include "tests/gpu/fake_cupti.h"
#include "tests/gpu/inject_testutil.h"
#include "tests/gpu/scenario_check.h"
#include "tests/gpu/trace_check.h"

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define LAUNCH CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000

static void quiet(const char *line)
{
    (void)line;
}

/* Without the timestamp callback (a CUPTI that lacks it, or a version
 * whose callback is broken) every buffer is mapped by the offset between
 * CUPTI's clock and ours, which asks CUPTI for its time: that call must
 * come before the lock is taken, like every CUPTI call the running
 * injection makes but GetNextRecord.  Set-up (before any callback is
 * enabled) is not watched. */
static void check_no_call_under_lock(const fake_cupti_opts *o, const char *tag)
{
    char path[128];
    cupti_api api;
    fake_scenario sc;
    tc_trace t;

    gput_tmp_path(path, sizeof path, "locking", tag);
    fake_cupti_table(&api, o);
    trec_cupti_config cfg = gput_config(path, 0, quiet);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    fake_cupti_forget_calls_under_lock();
    fake_cupti_scenario(&sc, 0);
    assert_int_equal(trec_cupti_flush(), 0);
    fake_cupti_call(RT, LAUNCH, fake_cupti_now(), 10, 0);
    sc.api_recorded++;
    sc.launches++;
    fake_cupti_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    trec_cupti_shutdown();
    assert_string_equal(fake_cupti_calls_under_lock(), "");
    /* the probe is live: the records were walked under the lock */
    assert_true(fake_cupti_next_records_under_lock() > 0);
    assert_int_equal(tc_load(path, &t), TRC_OK);
    fake_scenario_check(&t, &sc, getpid());
    tc_free(&t);
    unlink(path);
}

static void test_fallback_clock_no_call_under_lock(void **state)
{
    fake_cupti_opts o = { .no_timestamp_callback = 1, .lock_held = trec_cupti_test_lock_held };
    (void)state;
    check_no_call_under_lock(&o, "nocb");
}

static void test_broken_callback_version_no_call_under_lock(void **state)
{
    /* 13.0: the callback is skipped, the offset mapping used */
    fake_cupti_opts o = { .version = 130000, .lock_held = trec_cupti_test_lock_held };
    (void)state;
    check_no_call_under_lock(&o, "v130");
}

static void test_callback_clock_no_call_under_lock(void **state)
{
    fake_cupti_opts o = { .lock_held = trec_cupti_test_lock_held };
    (void)state;
    check_no_call_under_lock(&o, "cb");
}

/* ---- 64 threads, a buffer each ------------------------------------------ */

#define THREADS 64
#define PER_THREAD 40

static pthread_barrier_t all_hold;

/* PER_THREAD launches, each with its kernel; then wait until every
 * thread holds its buffer, so 64 are outstanding at once. */
static void *launcher(void *arg)
{
    uint32_t stream = (uint32_t)(uintptr_t)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        uint64_t now = fake_cupti_now();
        uint32_t c = fake_cupti_call(RT, LAUNCH, now, 2000, 0);
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = now + 3000;
        k.end = now + 9000;
        k.deviceId = 0;
        k.contextId = 1;
        k.streamId = stream;
        k.correlationId = c;
        k.name = "_Z6kernelv";
        fake_cupti_add(&k, sizeof k);
    }
    pthread_barrier_wait(&all_hold);
    return NULL;
}

static void test_64_threads_hold_buffers_until_flush(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    pthread_t th[THREADS];
    fake_cupti_opts o = { .per_thread_buffers = 1 };
    static uint8_t seen[THREADS * PER_THREAD + 64];

    (void)state;
    gput_tmp_path(path, sizeof path, "locking", "threads64");
    fake_cupti_table(&api, &o);
    trec_cupti_config cfg = gput_config(path, 0, quiet);
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    assert_int_equal(pthread_barrier_init(&all_hold, NULL, THREADS + 1), 0);
    for (uintptr_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, launcher, (void *)(i + 1)), 0);
    pthread_barrier_wait(&all_hold);
    /* every thread holds its own buffer; nothing delivered yet */
    assert_int_equal(fake_cupti_thread_buffers(), THREADS);
    assert_int_equal(fake_cupti_buffers(), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(trec_cupti_flush(), 0);
    assert_int_equal(fake_cupti_buffers(), THREADS);
    assert_int_equal(fake_cupti_thread_buffers(), 0);
    /* a second flush delivers nothing twice */
    assert_int_equal(trec_cupti_flush(), 0);
    trec_cupti_shutdown();
    assert_int_equal(fake_cupti_buffers(), THREADS);

    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 0);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), THREADS * PER_THREAD);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), THREADS * PER_THREAD);
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < t.n; i++) {
        const tc_event *e = &t.ev[i];
        if (e->type != TRC_EV_GPU_KERNEL)
            continue;
        uint32_t c = e->u.kernel.where.correlation;
        assert_true(c > 0 && c < sizeof seen);
        assert_int_equal(seen[c], 0);   /* each kernel once */
        seen[c] = 1;
        const tc_event *a = tc_api_by_corr(&t, c);
        assert_non_null(a);
        assert_true(e->u.kernel.start_ns >= a->u.api.start_ns);
    }
    tc_free(&t);
    pthread_barrier_destroy(&all_hold);
    unlink(path);
}

static int shutdown_after(void **state)
{
    (void)state;
    trec_cupti_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fallback_clock_no_call_under_lock, shutdown_after),
        cmocka_unit_test_teardown(test_broken_callback_version_no_call_under_lock, shutdown_after),
        cmocka_unit_test_teardown(test_callback_clock_no_call_under_lock, shutdown_after),
        cmocka_unit_test_teardown(test_64_threads_hold_buffers_until_flush, shutdown_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
