/*
 * trec_ticks — baseline for bench/trec.sh: the CPU time one wake-up
 * costs on this machine, with nothing done in it.  Sleeps N times on
 * absolute 1 ms deadlines (clock_nanosleep TIMER_ABSTIME, timer slack 1
 * ns, as the recorder does) and prints the process's CPU time per tick.
 * The recorder's "all CPU per sample" figure includes this cost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n <= 0)
        n = 2000;
    prctl(PR_SET_TIMERSLACK, 1UL);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (int i = 0; i < n; i++) {
        t.tv_nsec += 1000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_nsec -= 1000000000;
            t.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    printf("%.2f\n", us / n);
    return 0;
}
