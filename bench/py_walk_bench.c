/*
 * py_walk_bench.c — per-sample cost of lib/py's walker against a live
 * process: attaches to PID and takes N samples of every thread's stack
 * (py_proc_threads + py_proc_stack per thread, as trec does each tick),
 * then prints the distribution of the cost of one thread's stack and of
 * one whole tick, and the read calls per sample.  For scale it also times,
 * interleaved with the samples, the cheapest possible read: one 64-byte
 * process_vm_readv of the same target; and a stack asked for on its own
 * (not right after the thread list); costs are printed in microseconds
 * and as multiples of that floor (the ratio carries across machines).
 *
 * With NAP_US, each tick follows a sleep of that long, as trec's ticks
 * do: the same work then meets cold caches and TLB.  Threads are listed
 * without the GIL holder, trec's default (--gil adds reads).  "pages per
 * tick" counts the target pages the reads touched: after a sleep each
 * costs about as much again as the read call itself on a VM.
 *
 *   py_walk_bench PID [N [NAP_US]]
 */
#include "lib/py/pyproc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double floor_ns;

static void report(const char *what, uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    printf("%-24s p50 %6.2f us  p90 %6.2f us  p99 %6.2f us  max %7.2f us", what, v[n / 2] / 1e3,
           v[n * 9 / 10] / 1e3, v[n * 99 / 100] / 1e3, v[n - 1] / 1e3);
    if (floor_ns > 0)
        printf("  (p50 = %.1fx one read)", v[n / 2] / floor_ns);
    printf("\n");
}

int main(int argc, char **argv)
{
    char err[512];
    py_proc *p;
    int n = argc > 2 ? atoi(argv[2]) : 5000, bad = 0, depth = 0;
    int nap_us = argc > 3 ? atoi(argv[3]) : 0;

    if (argc < 2 || n < 10) {
        fprintf(stderr, "usage: py_walk_bench PID [N>=10]\n");
        return 2;
    }
    py_status st = py_proc_attach(atoi(argv[1]), &p, err, sizeof err);
    if (st != PY_OK) {
        fprintf(stderr, "py_walk_bench: %s\n", err);
        return 1;
    }
    uint64_t *stack = malloc(sizeof(uint64_t) * (size_t)n), *tick = malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *base = malloc(sizeof(uint64_t) * (size_t)n);
    char scratch[64];
    struct iovec lo = { scratch, sizeof scratch };
    struct iovec ro = { (void *)(uintptr_t)py_proc_runtime(p), sizeof scratch };
    py_thread_info ti[64];
    const py_frame_info *f[1024];
    py_proc_stats s0, s1;
    /* warm the caches */
    for (int i = 0; i < 50; i++) {
        int k = py_proc_threads(p, ti, 64, 0);
        for (int t = 0; t < k; t++)
            py_proc_stack(p, ti[t].tstate, f, 1024);
    }
    py_proc_get_stats(p, &s0);
    int ns = 0;
    for (int i = 0; i < n; i++) {
        if (nap_us > 0)
            usleep((useconds_t)nap_us);
        uint64_t t0 = now_ns();
        int k = py_proc_threads(p, ti, 64, 0);
        for (int t = 0; t < k; t++) {
            uint64_t a = now_ns();
            int d = py_proc_stack(p, ti[t].tstate, f, 1024);
            uint64_t b = now_ns();
            if (d < 0)
                bad++;
            else if (d > depth)
                depth = d;
            if (t == 0)
                stack[ns++] = b - a;
        }
        tick[i] = now_ns() - t0;
        uint64_t b0 = now_ns();
        if (process_vm_readv(py_proc_pid(p), &lo, 1, &ro, 1, 0) < 0)
            bad++;
        base[i] = now_ns() - b0;
    }
    py_proc_get_stats(p, &s1);
    /* A stack on its own (no thread-list call before it: its own read). */
    uint64_t *alone = malloc(sizeof(uint64_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        uint64_t a = now_ns();
        if (py_proc_stack(p, ti[0].tstate, f, 1024) < 0)
            bad++;
        alone[i] = now_ns() - a;
    }
    printf("CPython %s, %d ticks, deepest stack %d frames, invalid %d\n", py_proc_version(p), n,
           depth, bad);
    report("floor (one 64 B read):", base, n);
    floor_ns = (double)base[n / 2];
    report("tick (threads+stacks):", tick, n);
    report("  of which one stack:", stack, ns);
    report("a stack on its own:", alone, n);
    printf("read calls per tick %.2f, bytes per tick %.0f, pages per tick %.2f, code cache hits %llu misses %llu\n",
           (double)(s1.reads - s0.reads) / n, (double)(s1.read_bytes - s0.read_bytes) / n,
           (double)(s1.read_pages - s0.read_pages) / n,
           (unsigned long long)s1.code_cache_hits, (unsigned long long)s1.code_cache_misses);
    printf("thread lists: %llu read in full, %llu from the known thread states, %llu of those found changed\n",
           (unsigned long long)(s1.thread_lists_full - s0.thread_lists_full),
           (unsigned long long)(s1.thread_lists_steady - s0.thread_lists_steady),
           (unsigned long long)(s1.thread_lists_changed - s0.thread_lists_changed));
    free(stack);
    free(tick);
    free(base);
    free(alone);
    py_proc_free(p);
    return 0;
}
