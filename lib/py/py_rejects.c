/*
 * py_rejects.c — counts of rejected stack reads by check (py_rejects.h).
 * Process-wide, lock-free counters: several recorder threads may read
 * stacks at once.  Printed once, at exit.
 */
#include "lib/py/py_rejects.h"

#include <stdio.h>
#include <stdlib.h>

#define REJ_DEPTHS 8   /* depth 0..6 each, 7 for deeper */
#define REJ_TRIES 8

static int rej_on = -1;   /* -1: the environment not looked at yet */
static unsigned long long rej_count[PYREJ_KINDS][REJ_DEPTHS + 1];
static unsigned long long rej_tries[REJ_TRIES + 1];

static const char *const rej_names[PYREJ_KINDS] = {
    "unreadable", "interpreter", "chain", "type", "leaf-batch", "leaf-late", "leaf-demand", "leaf-alive",
    "inner", "code", "layout", "unchanged",
};

static void rej_print(void)
{
    unsigned long long all = 0;
    for (int t = 0; t <= REJ_TRIES; t++)
        all += rej_tries[t];
    fprintf(stderr, "trc rejects: %llu stack reads; passed on try 1..%d:", all, REJ_TRIES);
    for (int t = 0; t < REJ_TRIES; t++)
        fprintf(stderr, " %llu", rej_tries[t]);
    fprintf(stderr, "; never: %llu\n", rej_tries[REJ_TRIES]);
    for (int k = 0; k < PYREJ_KINDS; k++) {
        unsigned long long sum = 0;
        for (int d = 0; d <= REJ_DEPTHS; d++)
            sum += rej_count[k][d];
        if (!sum)
            continue;
        fprintf(stderr, "trc rejects: %-12s %8llu  by depth (none,0..6,7+):", rej_names[k], sum);
        for (int d = 0; d <= REJ_DEPTHS; d++)
            fprintf(stderr, " %llu", rej_count[k][d]);
        fputc('\n', stderr);
    }
}

static int rej_enabled(void)
{
    int on = __atomic_load_n(&rej_on, __ATOMIC_RELAXED);
    if (on < 0) {
        on = getenv("TRC_PY_REJECTS") != NULL;
        int expect = -1;
        if (__atomic_compare_exchange_n(&rej_on, &expect, on, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED) && on)
            atexit(rej_print);
    }
    return on;
}

void pyrej_note(int why, int depth)
{
    if (why < 0 || why >= PYREJ_KINDS || !rej_enabled())
        return;
    int d = depth < 0 ? 0 : depth >= REJ_DEPTHS - 1 ? REJ_DEPTHS : depth + 1;
    __atomic_fetch_add(&rej_count[why][d], 1, __ATOMIC_RELAXED);
}

void pyrej_result(int t)
{
    if (!rej_enabled())
        return;
    __atomic_fetch_add(&rej_tries[t < 0 || t >= REJ_TRIES ? REJ_TRIES : t], 1, __ATOMIC_RELAXED);
}
