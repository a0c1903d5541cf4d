/*
 * oncpu.c — whether a sample is "on CPU": the thread ran for the period
 * the sample stands for (since that thread's previous sample), judged
 * by the CPU time the kernel charged it meanwhile.
 *
 * Why not the state at the tick instant: on a loaded machine a runnable
 * thread ('R' in /proc, or switched out by preemption) waits for a CPU,
 * so counting runnable samples as on CPU gave 3 to 6 times the process's
 * CPU time at load average 6 to 9.  "Switched in at the instant" would
 * be right on average only if trec's ticks fell at random with respect
 * to the program's scheduling, which trec's own wake-ups (on the same
 * CPUs) do not promise, and /proc alone cannot tell it at all.
 *
 * How: the first field of /proc/PID/task/TID/schedstat is the nanoseconds
 * the thread has run (one pread of a file opened once, about 1 us).  Its
 * advance since the previous sample (its share of one tick, when trec
 * skipped ticks in between: those are counted as lost) is owed to the
 * thread; a sample is on CPU when at least half a period is owed, and an
 * on-CPU sample pays back the whole period.  So the on-CPU samples times
 * the period add up to the thread's CPU time within a period or two, and
 * a thread that got half a CPU is on CPU in about every other sample.
 * The kernel brings a running thread's figure up to date at its
 * scheduler ticks and switches only (every 1 to 10 ms), so a thread busy
 * all the time may show an off-CPU sample now and then, made up by an
 * on-CPU one later: the totals hold, single samples jitter.  Letting a
 * thread switched in at the instant be on CPU ahead of its figure was
 * tried: it smooths that, but puts a bias of up to that lag per thread
 * in the totals (110 to 125 % of the CPU time of a program that got 0.2
 * to 0.9 s of it on a loaded machine, against 103 % without).
 *
 * Cost: a thread whose switch records show it has not run since its last
 * sample owes nothing new and is not read (rec_oncpu_idle); the others
 * cost that one pread per tick (1 to 2 us), and each thread one more
 * open descriptor.  Where schedstat cannot be read (a kernel without
 * CONFIG_SCHED_INFO, descriptors running short) the state at the
 * instant is used: switched in, else /proc's 'R' (then meaning runnable).
 *
 * Before the first sample: a thread is seen some time after it began,
 * up to the 10 ms between two listings of the process's tasks
 * (natives.c), and the main thread of a program trec started only once
 * the interpreter can be read; the CPU time of its first reading is what
 * it used meanwhile.  When the thread began during the recording
 * (c->born: a program trec started, or a thread that appeared after the
 * first task listing; not one of a process attached to, whose CPU time
 * so far is mostly from before), that time is given out later, a period
 * at a time, in samples whose thread ran in their period but for less
 * than half of it: never in a sample of a thread that did not run at
 * all, so no sleeping thread is shown on CPU; what a thread busy all the
 * time cannot spend so stays unseen.  Its first sample, when the instant
 * says running, is paid from it too.
 */
#include "lib/rec/rec_int.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* The lowest descriptor number a schedstat file may not have: the last
 * quarter of the limit is left to the state files (which prove a thread
 * alive) and the output, so a process with very many threads loses
 * its CPU-time readings first (the instant's state is used instead). */
static long fd_ceiling(void)
{
    static long ceiling;
    if (!ceiling) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
            rl.rlim_cur > (rlim_t)1 << 20)
            ceiling = 1L << 20;
        else
            ceiling = (long)(rl.rlim_cur - rl.rlim_cur / 4);
    }
    return ceiling;
}

void rec_oncpu_open(rec_oncpu *c, pid_t pid, pid_t tid)
{
    rec_oncpu_close(c);
    c->fd = tid > 0 ? rec_proc_open(pid, tid, "schedstat") : -1;
    if (c->fd >= 0 && c->fd >= fd_ceiling()) {
        close(c->fd);
        c->fd = -1;
    }
}

void rec_oncpu_close(rec_oncpu *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->set = 0;
    c->ran_ns = 0;
    c->at_ns = 0;
    c->owed_ns = 0;
    c->born = 0;
    c->before_ns = 0;
}

int rec_oncpu_decide(rec_oncpu *c, uint64_t ran_ns, int64_t now_ns, int64_t period_ns,
                     int instant)
{
    if (!c->set || ran_ns < c->ran_ns || now_ns <= c->at_ns || period_ns <= 0) {
        /* the first reading (or a new thread behind the id): no period
         * to judge yet, so the instant's state */
        c->set = 1;
        c->ran_ns = ran_ns;
        c->at_ns = now_ns;
        c->owed_ns = 0;
        if (c->born) {
            /* what it used before trec saw it: once (a reading lost
             * later must not give it again) */
            c->born = 0;
            c->before_ns = (int64_t)ran_ns;
        }
        if (instant && period_ns > 0)
            c->before_ns = c->before_ns > period_ns ? c->before_ns - period_ns : 0;
        return instant;
    }
    int64_t gap = now_ns - c->at_ns;
    int64_t ran = (int64_t)(ran_ns - c->ran_ns);
    /* the sample weighs one period (spec: R-SAMPLE-2), the ticks trec
     * skipped in a longer gap are counted as lost: the thread's share of
     * the ticks is what it owes for this sample.  Ticks, not time: on
     * the pacer's grid (rec_oncpu_at) a gap is a whole number of periods
     * give or take the jitter, and one taken late is no tick skipped
     * (its lateness comes back as a shorter gap after it, so the time
     * alone lost the CPU time of every late tick's overhang) */
    int64_t ticks = (gap + period_ns / 2) / period_ns;
    if (ticks > 1)
        ran /= ticks;
    c->owed_ns += ran;
    c->ran_ns = ran_ns;
    c->at_ns = now_ns;
    int on = 2 * c->owed_ns >= period_ns;
    if (!on && ran > 0 && c->before_ns > 0 && 2 * (c->owed_ns + c->before_ns) >= period_ns) {
        /* it ran in this period, not enough for half of it: the CPU time
         * it used before its first sample makes up the rest */
        int64_t take = period_ns - c->owed_ns;
        if (take > c->before_ns)
            take = c->before_ns;
        c->owed_ns += take;
        c->before_ns -= take;
        on = 1;
    }
    if (on)
        c->owed_ns -= period_ns;
    /* a bounded credit: a figure the kernel brought up to date late is
     * paid out over the next few samples, no more */
    int64_t cap = period_ns > REC_ONCPU_LAG_NS ? period_ns : REC_ONCPU_LAG_NS;
    if (c->owed_ns > 2 * cap)
        c->owed_ns = 2 * cap;
    return on;
}

/* The thread's CPU time so far, or -1. */
static int64_t ran_so_far(const rec_oncpu *c)
{
    char buf[128];
    if (rec_fd_read(c->fd, buf, sizeof buf) <= 0)
        return -1;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    return end == buf ? -1 : (int64_t)v;
}

int rec_oncpu_sample(rec_oncpu *c, int64_t now_ns, int64_t period_ns, int instant)
{
    int64_t ran = c->fd >= 0 ? ran_so_far(c) : -1;
    if (ran < 0) {
        c->set = 0;
        return instant;
    }
    return rec_oncpu_decide(c, (uint64_t)ran, now_ns, period_ns, instant);
}

int rec_oncpu_idle(rec_oncpu *c, int64_t now_ns, int64_t period_ns)
{
    if (!c->set)
        return 0; /* not running (its records say), nothing known of before */
    return rec_oncpu_decide(c, c->ran_ns, now_ns, period_ns, 0);
}

int64_t rec_oncpu_at(const rec_tick_ctx *ctx)
{
    return ctx->grid_ns ? ctx->grid_ns : ctx->now_ns;
}

int64_t rec_oncpu_period(const rec_config *cfg)
{
    return cfg && cfg->rate_hz > 0 ? (int64_t)(1e9 / cfg->rate_hz) : 0;
}
