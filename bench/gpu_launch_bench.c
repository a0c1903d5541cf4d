/*
 * bench/gpu_launch_bench.c — what the CUDA injection (lib/cupti/) costs a
 * program per kernel launch, driven by the fake CUPTI
 * (tests/gpu/fake_cupti.c) on a thread without Python (the path of
 * autograd's and NCCL's launching threads; a Python thread adds the
 * in-process stack walk, bench/py_walk.sh "self"):
 *
 *   callback  the launch callback pair (API_ENTER + API_EXIT), timed one
 *             by one, less the same pair for a call whose callback is off
 *             (what the fake itself costs), p50 and p99;
 *   all-in    CPU time per launch of the whole recording path: callbacks,
 *             the API and kernel records decoded and written, the side
 *             trace compressed (flushed every 5,000 launches), over the
 *             fake's cost of queueing the same records with recording off.
 *
 * Usage: gpu_launch_bench N OUT_DIR.  Prints "name value unit" lines
 * (bench/gpu_launch.sh reads them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cupti/inject.h"
#include "tests/gpu/fake_cupti.h"

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define LAUNCH CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
#define OFF CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020   /* no callback enabled */
#define FLUSH_EVERY 5000

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void quiet(const char *line)
{
    (void)line;
}

/* Each enter+exit pair of cbid, timed; sorted into t[0..n). */
static void time_pairs(CUpti_CallbackId cbid, int64_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t a = mono_ns();
        uint32_t c = fake_cupti_api_enter(RT, cbid);
        fake_cupti_api_exit(RT, cbid, c);
        t[i] = mono_ns() - a;
    }
    qsort(t, n, sizeof *t, cmp_i64);
}

/* n launches with their API and kernel records; with recording on, a
 * flush every FLUSH_EVERY (the queue is the fake's, bounded).  CPU ns. */
static int64_t launches(size_t n, int recording)
{
    int64_t c0 = cpu_ns();
    for (size_t i = 0; i < n; i++) {
        uint64_t now = fake_cupti_now();
        uint32_t c = fake_cupti_call(RT, LAUNCH, now, 2000, 0);
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = now + 3000;
        k.end = now + 9000;
        k.contextId = 1;
        k.streamId = 7;
        k.correlationId = c;
        k.name = "_Z6kernelv";
        fake_cupti_add(&k, sizeof k);
        if ((i + 1) % FLUSH_EVERY == 0) {
            if (recording)
                trec_cupti_flush();
            else
                fake_cupti_table(&(cupti_api){ 0 }, NULL);   /* drop the queue */
        }
    }
    return cpu_ns() - c0;
}

int main(int argc, char **argv)
{
    cupti_api api;
    char path[4096];
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;

    if (argc != 3 || n < 100) {
        fprintf(stderr, "usage: gpu_launch_bench N(>=100) OUT_DIR\n");
        return 2;
    }
    snprintf(path, sizeof path, "%s/gpu-launch-bench-%d.trc", argv[2], (int)getpid());
    int64_t *on = malloc(n * sizeof *on), *off = malloc(n * sizeof *off);
    if (!on || !off)
        return 1;

    /* the fake alone: records queued and dropped, no injection */
    fake_cupti_table(&api, NULL);
    int64_t bare_cpu = launches(n, 0);

    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.path = path;
    cfg.warn = quiet;
    cfg.no_thread_names = 1;   /* the flusher thread runs, as under the driver */
    if (trec_cupti_init_with_api(&api, &cfg) != 0) {
        fprintf(stderr, "gpu_launch_bench: the injection did not start\n");
        return 1;
    }
    time_pairs(LAUNCH, on, n / 10 < 1000 ? 1000 : n / 10);   /* warm: walker, caches */
    time_pairs(OFF, off, n);
    time_pairs(LAUNCH, on, n);
    int64_t rec_cpu = launches(n, 1);
    trec_cupti_shutdown();
    unlink(path);

    int64_t p50 = on[n / 2] - off[n / 2], p99 = on[n * 99 / 100] - off[n * 99 / 100];
    printf("callback_p50 %lld ns\n", (long long)(p50 > 0 ? p50 : 0));
    printf("callback_p99 %lld ns\n", (long long)(p99 > 0 ? p99 : 0));
    printf("fake_pair_p50 %lld ns\n", (long long)off[n / 2]);
    printf("allin %.0f ns\n", (double)(rec_cpu - bare_cpu) / (double)n);
    printf("launches %zu\n", n);
    free(on);
    free(off);
    return 0;
}
