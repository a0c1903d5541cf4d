/*
 * pace.c — when to take the next sample.
 *
 * Deadlines sit on a fixed grid (origin + k * period) so errors never
 * accumulate; each gets a small random offset (up to a tenth of a
 * period, at most 100 us) so the recorder does not lock step with a
 * target that does something periodic at the same rate.  The sleep is
 * clock_nanosleep(TIMER_ABSTIME) on CLOCK_MONOTONIC, the trace clock.
 * The real wake-up time is what gets recorded; lateness is measured
 * against the deadline, and whole periods that passed are counted as
 * missed ticks rather than taken in a burst.
 *
 * --spin: a virtual machine can take tens of microseconds to deliver a
 * timer wake-up, and hundreds now and then (here: 12 % of empty
 * 10 kHz wake-ups over half a period late), so at high rates ticks come
 * late however little they cost.  Watching the clock instead keeps them
 * on time at the price of a CPU kept busy; sched_yield in the loop lets
 * anything else that wants that CPU (the program, on a machine with few
 * of them) have it first.  The wait returns every millisecond so that
 * signals are looked at as often as when sleeping.
 */
#include "lib/rec/rec_int.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

#define SPIN_SLICE_NS 1000000 /* a spinning wait returns this often */

static uint64_t next_random(uint64_t *s)
{
    /* xorshift64*: quality is beside the point, it only spreads deadlines */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void set_deadline(rec_pacer *p)
{
    int64_t jitter = 0;
    if (p->jitter_max_ns > 0)
        jitter = (int64_t)(next_random(&p->rng) % (uint64_t)p->jitter_max_ns);
    p->deadline_ns = p->origin_ns + (int64_t)p->k * p->period_ns + jitter;
}

void rec_pacer_init(rec_pacer *p, int64_t period_ns, int64_t start_ns, uint64_t seed)
{
    p->period_ns = period_ns > 0 ? period_ns : 1000000;
    p->origin_ns = start_ns;
    p->k = 0;
    p->jitter_max_ns = p->period_ns / 10;
    if (p->jitter_max_ns > 100000)
        p->jitter_max_ns = 100000;
    p->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
    p->spin = 0;
    set_deadline(p);
}

void rec_pace_classify(int64_t period_ns, int64_t lateness_ns, int *late, uint64_t *missed)
{
    if (lateness_ns < 0)
        lateness_ns = 0;
    *late = lateness_ns > period_ns / 2;
    *missed = period_ns > 0 ? (uint64_t)(lateness_ns / period_ns) : 0;
}

/* Until the deadline or the end of a slice; the time then. */
static int64_t spin_until(int64_t deadline_ns)
{
    int64_t now = trc_now_ns(), give_up = now + SPIN_SLICE_NS;
    while (now < deadline_ns && now < give_up) {
        sched_yield();
        now = trc_now_ns();
    }
    return now;
}

int rec_pacer_wait(rec_pacer *p, rec_tick *t)
{
    int64_t now;
    if (p->spin) {
        now = spin_until(p->deadline_ns);
        if (now < p->deadline_ns)
            return 0;
    } else {
        struct timespec ts = {
            .tv_sec = p->deadline_ns / 1000000000,
            .tv_nsec = p->deadline_ns % 1000000000,
        };
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        now = trc_now_ns();
        if (rc == EINTR && now < p->deadline_ns)
            return 0;
    }
    t->now_ns = now;
    t->lateness_ns = now > p->deadline_ns ? now - p->deadline_ns : 0;
    rec_pace_classify(p->period_ns, t->lateness_ns, &t->late, &t->missed);
    /* the next deadline is the first grid point after now */
    p->k += 1 + t->missed;
    set_deadline(p);
    while (p->deadline_ns <= now) {
        p->k++;
        t->missed++;
        set_deadline(p);
    }
    return 1;
}
