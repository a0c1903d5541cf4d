/*
 * test_rec_oncpu.c — what makes a sample "on CPU" (lib/rec/oncpu.c and
 * the switch-record kinds of lib/rec/switches.c): a thread switched out
 * by preemption is runnable but on no CPU; a sample is on CPU by the CPU
 * time its thread got over the sample's period, so a thread that got a
 * share of a CPU is on CPU in that share of its samples, whatever it was
 * doing at the tick instant; ticks skipped count as lost, not as CPU
 * time owed to later samples; and the CPU time is read from a real
 * thread's schedstat.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/rec/rec_int.h"

#define MS 1000000LL
#define PAGE 4096

/* A ring as the kernel maps it, its newest record a context switch with
 * misc; the look decodes it as a real ring's. */
static char look_at(uint16_t misc)
{
    unsigned char *map = aligned_alloc(PAGE, 2 * PAGE);
    assert_non_null(map);
    memset(map, 0, 2 * PAGE);
    struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)map;
    mp->data_offset = PAGE;
    mp->data_size = PAGE;
    uint64_t head = 3 * PAGE - 16; /* written backward: anywhere in the ring */
    mp->data_head = head;
    struct perf_event_header h = {.type = PERF_RECORD_SWITCH, .misc = misc, .size = 8};
    memcpy(map + PAGE + (head & (PAGE - 1)), &h, sizeof h);
    rec_switches s = {.fd = -1, .map = map, .map_len = 2 * PAGE};
    uint64_t at = 0;
    char k = rec_switches_look(&s, 'S', &at);
    assert_int_equal(at, head);
    free(map);
    return k;
}

static void preempted_is_not_on_cpu(void **state)
{
    (void)state;
    char in = look_at(0);
    char preempted = look_at(PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
    char blocked = look_at(PERF_RECORD_MISC_SWITCH_OUT);
    assert_int_equal(in, 'I');
    assert_int_equal(preempted, 'P');
    assert_int_equal(blocked, 'S');
    assert_true(rec_switches_running(in));
    assert_false(rec_switches_running(preempted)); /* runnable, waiting for a CPU */
    assert_false(rec_switches_running(blocked));
    assert_false(rec_switches_running(0));
}

/* n samples at 1 ms of a thread that gets `share` of each period; the
 * number found on CPU. */
static int on_samples(rec_oncpu *c, int n, double share, int64_t *t, uint64_t *ran)
{
    int on = 0;
    for (int i = 0; i < n; i++) {
        *t += MS;
        *ran += (uint64_t)(share * MS);
        on += rec_oncpu_decide(c, *ran, *t, MS, 1);
    }
    return on;
}

static void share_of_samples(void **state)
{
    (void)state;
    double shares[] = {0.0, 0.1, 0.33, 0.5, 0.9, 1.0};
    for (size_t k = 0; k < sizeof shares / sizeof *shares; k++) {
        rec_oncpu c = {.fd = -1};
        int64_t t = 5 * MS;
        uint64_t ran = 123 * MS;
        /* the first reading has no period behind it: the instant's state */
        assert_int_equal(rec_oncpu_decide(&c, ran, t, MS, 1), 1);
        assert_int_equal(rec_oncpu_decide(&(rec_oncpu){.fd = -1}, ran, t, MS, 0), 0);
        int on = on_samples(&c, 1000, shares[k], &t, &ran);
        /* within one sample of the share, never the runnable time: a
         * thread runnable all along (the instant said running) that got
         * none of a CPU is on CPU in no sample */
        int want = (int)(shares[k] * 1000);
        assert_in_range(on, want > 0 ? want - 1 : 0, want + 1);
    }
}

static void kernel_lag(void **state)
{
    (void)state;
    /* the kernel brings a busy thread's figure up to date every 4 ms:
     * the samples in between still add up to its CPU time, but for the
     * first 4 ms (a lag, not a drift) */
    rec_oncpu c = {.fd = -1};
    int64_t t = 0;
    uint64_t ran = 0;
    rec_oncpu_decide(&c, ran, t, MS, 0);
    int on = 0;
    for (int i = 1; i <= 1000; i++) {
        t += MS;
        if (i % 4 == 0)
            ran += 4 * MS;
        on += rec_oncpu_decide(&c, ran, t, MS, 0);
    }
    assert_in_range(on, 996, 1000);
    /* then blocked (its switch records show it has not run: nothing is
     * read): what the last figure still owed is paid out first, so the
     * total is its CPU time, and after that no sample is on CPU */
    for (int i = 0; i < 4; i++) {
        t += MS;
        on += rec_oncpu_idle(&c, t, MS);
    }
    assert_int_equal(on, 1000);
    for (int i = 0; i < 10; i++) {
        t += MS;
        assert_int_equal(rec_oncpu_idle(&c, t, MS), 0);
    }
    /* never read: nothing is claimed */
    assert_int_equal(rec_oncpu_idle(&(rec_oncpu){.fd = -1}, t, MS), 0);
}

static void skipped_ticks_are_lost(void **state)
{
    (void)state;
    /* trec took every tenth tick only, of a thread busy all along: each
     * sample is on CPU, and the nine periods in between are not paid out
     * later (they are the loss the trace records) */
    rec_oncpu c = {.fd = -1};
    int64_t t = 0;
    uint64_t ran = 0;
    rec_oncpu_decide(&c, ran, t, MS, 0);
    int on = 0;
    for (int i = 0; i < 50; i++) {
        t += 10 * MS;
        ran += 10 * MS;
        on += rec_oncpu_decide(&c, ran, t, MS, 0);
    }
    assert_int_equal(on, 50);
    /* then every tick, the thread idle: its credit is spent at once */
    for (int i = 0; i < 50; i++) {
        t += MS;
        on += rec_oncpu_decide(&c, ran, t, MS, 0);
    }
    assert_in_range(on, 50, 51);
    /* a thread at a quarter of a CPU with every other tick skipped */
    on = 0;
    for (int i = 0; i < 400; i++) {
        t += 2 * MS;
        ran += MS / 2;
        on += rec_oncpu_decide(&c, ran, t, MS, 0);
    }
    assert_in_range(on, 99, 101);
}

static void late_ticks_are_not_skipped(void **state)
{
    (void)state;
    /* every other tick taken 0.45 ms late, the next on time again (as
     * the pacer's grid has it): gaps of 1.45 and 0.55 periods, no tick
     * skipped.  A thread at half a CPU is on CPU in half the samples;
     * judged by the time alone, each late tick's overhang was taken for
     * skipped ticks and lost (39 % came out) */
    rec_oncpu c = {.fd = -1};
    int64_t t = 0;
    uint64_t ran = 0;
    rec_oncpu_decide(&c, ran, t, MS, 0);
    int on = 0;
    for (int i = 0; i < 1000; i++) {
        int64_t gap = i % 2 == 0 ? MS + 45 * MS / 100 : 55 * MS / 100;
        t += gap;
        ran += (uint64_t)(gap / 2);
        on += rec_oncpu_decide(&c, ran, t, MS, 0);
    }
    assert_in_range(on, 498, 502);
    /* on the grid (rec_oncpu_at): a tick's deadline, else its time */
    rec_tick_ctx ctx = {.now_ns = 5 * MS + 450000, .grid_ns = 5 * MS};
    assert_true(rec_oncpu_at(&ctx) == 5 * MS);
    ctx.grid_ns = 0;
    assert_true(rec_oncpu_at(&ctx) == 5 * MS + 450000);
}

static void before_first_sample(void **state)
{
    (void)state;
    /* a thread trec saw after it had run 5 ms (born in the recording):
     * its first sample has no period behind it, and it is asleep */
    rec_oncpu c = {.fd = -1, .born = 1};
    int64_t t = 0;
    uint64_t ran = 5 * MS;
    assert_int_equal(rec_oncpu_decide(&c, ran, t, MS, 0), 0);
    /* asleep: the 5 ms never make a sample of it on CPU */
    assert_int_equal(on_samples(&c, 50, 0.0, &t, &ran), 0);
    /* at a quarter of a CPU: 10 of 40 samples for what it gets now, and
     * the 5 ms before in samples where it ran, 5 more */
    assert_in_range(on_samples(&c, 40, 0.25, &t, &ran), 14, 16);
    /* given out once: a lost reading (a new first one) gives nothing again */
    c.set = 0;
    assert_int_equal(rec_oncpu_decide(&c, ran, t, MS, 0), 0);
    assert_in_range(on_samples(&c, 40, 0.25, &t, &ran), 9, 11);

    /* the same thread not born in the recording (a process attached to):
     * its CPU time so far is from before, never given out */
    rec_oncpu old = {.fd = -1};
    t = 0;
    ran = 5 * MS;
    assert_int_equal(rec_oncpu_decide(&old, ran, t, MS, 0), 0);
    assert_in_range(on_samples(&old, 40, 0.25, &t, &ran), 9, 11);

    /* a first sample on CPU by its instant is paid from that time: 4 ms
     * are left to give */
    rec_oncpu first = {.fd = -1, .born = 1};
    t = 0;
    ran = 5 * MS;
    assert_int_equal(rec_oncpu_decide(&first, ran, t, MS, 1), 1);
    assert_in_range(on_samples(&first, 40, 0.25, &t, &ran), 13, 15);

    /* busy all the time: every sample is on CPU already, and the time
     * before cannot add a sample its thread did not have */
    rec_oncpu busy = {.fd = -1, .born = 1};
    t = 0;
    ran = 5 * MS;
    rec_oncpu_decide(&busy, ran, t, MS, 0);
    assert_int_equal(on_samples(&busy, 40, 1.0, &t, &ran), 40);
    /* closing forgets it (the id may name another thread next) */
    rec_oncpu_close(&busy);
    assert_int_equal(busy.born, 0);
    assert_true(busy.before_ns == 0);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void from_schedstat(void **state)
{
    (void)state;
    rec_oncpu c;
    memset(&c, 0, sizeof c);
    c.fd = -1;
    rec_oncpu_open(&c, getpid(), (pid_t)syscall(SYS_gettid));
    if (c.fd < 0)
        skip(); /* a kernel without schedstat: the instant's state is used */
    int64_t t = mono_ns();
    assert_int_equal(rec_oncpu_sample(&c, t, MS, 1), 1); /* the first: instant */
    /* this thread busy for 40 ms of CPU, sampled every 1 ms of it: on
     * CPU in about 40 samples (the figure lags by a scheduler tick) */
    int on = 0, n = 0;
    int64_t end = cpu_ns() + 40 * MS;
    int64_t next = mono_ns() + MS;
    while (cpu_ns() < end) {
        if (mono_ns() < next)
            continue;
        next += MS;
        on += rec_oncpu_sample(&c, mono_ns(), MS, 0);
        n++;
    }
    /* at most its CPU time and the kernel's lag; at least a part of it
     * (a loaded machine preempts this thread: the periods it waited in
     * count as lost, so the samples it took stand for less) */
    assert_in_range(on, 10, 52);
    assert_true(n >= on);
    /* asleep: once what the figure still owed is paid out, no sample is
     * on CPU, though the instant's state is given as running.  What may
     * still be owed is bounded by the credit's cap, twice the kernel's
     * lag (oncpu.c), each on-CPU sample paying a period of it: so many
     * samples and two more pay it all */
    for (int i = 0; i < 2 * REC_ONCPU_LAG_NS / MS + 2; i++) {
        usleep(1000);
        rec_oncpu_sample(&c, mono_ns(), MS, 1);
    }
    /* What is left owed is under half a period, and each wake-up adds
     * the few microseconds the thread ran: together they may reach half
     * a period once (seen under load: 0.49 ms left, then 9 us more), so
     * the sleeping samples on CPU are at most one more than the CPU time
     * they stand for, in periods, which is the contract (on-CPU samples
     * times the period track the CPU time within a period) */
    int64_t before = (int64_t)c.ran_ns;
    int asleep_on = 0;
    for (int i = 0; i < 10; i++) {
        usleep(1000);
        asleep_on += rec_oncpu_sample(&c, mono_ns(), MS, 1);
    }
    int64_t used = (int64_t)c.ran_ns - before;
    assert_true(asleep_on <= 1 + used / MS);
    assert_true(used < 5 * MS); /* it slept: a few microseconds a wake-up */
    rec_oncpu_close(&c);
    assert_int_equal(c.fd, -1);
    /* no schedstat to read: the instant's state */
    assert_int_equal(rec_oncpu_sample(&c, mono_ns(), MS, 1), 1);
    assert_int_equal(rec_oncpu_sample(&c, mono_ns(), MS, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(preempted_is_not_on_cpu),
        cmocka_unit_test(share_of_samples),
        cmocka_unit_test(kernel_lag),
        cmocka_unit_test(skipped_ticks_are_lost),
        cmocka_unit_test(before_first_sample),
        cmocka_unit_test(late_ticks_are_not_skipped),
        cmocka_unit_test(from_schedstat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
