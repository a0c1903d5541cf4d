/*
 * trec_ticks — baselines for bench/trec.sh: what wake-ups alone cost and
 * how punctual they are on this machine, with nothing done in them.
 * Sleeps N times on absolute deadlines PERIOD_US apart (default 1000)
 * with clock_nanosleep TIMER_ABSTIME, timer slack 1 ns and nice -10 where
 * allowed, as the recorder does, and prints two numbers: the process's
 * CPU time per wake-up in microseconds, and the percentage of wake-ups
 * later than half a period, trec's rule for a late tick (pace.c; periods
 * overrun whole are skipped, as there).  The recorder's "all CPU per
 * sample" includes the first; its late share cannot beat the second.
 *
 *   trec_ticks [N [PERIOD_US]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

static long long ns_of(const struct timespec *t)
{
    return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    long long period = argc > 2 ? atoll(argv[2]) * 1000 : 1000000;
    if (n <= 0)
        n = 2000;
    if (period <= 0)
        period = 1000000;
    prctl(PR_SET_TIMERSLACK, 1UL);
    (void)setpriority(PRIO_PROCESS, 0, -10);
    struct timespec t, now;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long long deadline = ns_of(&t);
    int late = 0;
    for (int i = 0; i < n; i++) {
        deadline += period;
        t.tv_sec = deadline / 1000000000LL;
        t.tv_nsec = deadline % 1000000000LL;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long lateness = ns_of(&now) - deadline;
        late += lateness > period / 2;
        if (lateness >= period)
            deadline += lateness / period * period;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    printf("%.2f %.2f\n", us / n, 100.0 * late / n);
    return 0;
}
