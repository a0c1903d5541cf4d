/*
 * tests/gpu/fake_native_launch.c — a library a Python program loads with
 * ctypes to play PyTorch's backward pass over the fake CUPTI
 * (fake_cupti.h) under the real trec: fake_start() starts the injection
 * that trec named in CUDA_INJECTION64_PATH on the fake CUPTI, with the
 * real launch-site capture (the calling thread's Python stack);
 * fake_native_launches(n, gap_ms) starts a thread in C, which never runs
 * Python (as autograd's), launches n kernels of 1 ms from it, gap_ms
 * apart (the first one gap_ms after the call), and joins it, so the calling Python thread waits in that call all along;
 * fake_flush() makes one flusher round; fake_stop() closes the side
 * trace for trec to merge.  Returns 0 on
 * success.  Used by tests/e2e/gpu_via_thread.sh.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/cupti/inject.h"
#include "tests/gpu/fake_cupti.h"

#define US 1000u

static void (*shutdown_fn)(void);
static int (*flush_fn)(void);

int fake_start(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    void *lib = path && *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!lib) {
        fprintf(stderr, "fake_native_launch: cannot load the injection (%s)\n",
                path ? dlerror() : "CUDA_INJECTION64_PATH is not set");
        return 1;
    }
    int (*init)(const cupti_api *, const trec_cupti_config *);
    *(void **)&init = dlsym(lib, "trec_cupti_init_with_api");
    *(void **)&shutdown_fn = dlsym(lib, "trec_cupti_shutdown");
    *(void **)&flush_fn = dlsym(lib, "trec_cupti_flush");
    if (!init || !shutdown_fn || !flush_fn)
        return 1;
    static cupti_api api;
    trec_cupti_config cfg;
    fake_cupti_table(&api, NULL);
    memset(&cfg, 0, sizeof cfg);
    cfg.no_flush_thread = 1;
    if (init(&api, &cfg) != 0)
        return 1;
    CUpti_ActivityContext3 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = 1;
    c.deviceId = 0;
    c.nullStreamId = 7;
    fake_cupti_add(&c, sizeof c);
    return 0;
}

typedef struct job {
    int n, gap_ms;
} job;

/* The launching thread: n cudaLaunchKernel calls, each running a 1 ms
 * kernel, gap_ms apart. */
static void *launcher(void *arg)
{
    const job *j = arg;
    /* the first launch one gap after the call, as the others: the
     * caller's samples then show it in the call, not before it */
    struct timespec gap = {0, (long)j->gap_ms * 1000000L};
    nanosleep(&gap, NULL);
    for (int i = 0; i < j->n; i++) {
        uint64_t t = fake_cupti_now();
        uint32_t corr = fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t,
                                        5 * US, 0);
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = t + 10 * US;
        k.end = t + 1010 * US;
        k.contextId = 1;
        k.streamId = 7;
        k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
        k.correlationId = corr;
        k.name = "backward_kernel";
        fake_cupti_add(&k, sizeof k);
        nanosleep(&gap, NULL);
    }
    return NULL;
}

int fake_native_launches(int n, int gap_ms)
{
    job j = {n, gap_ms};
    pthread_t th;
    if (pthread_create(&th, NULL, launcher, &j) != 0)
        return 1;
    return pthread_join(th, NULL) != 0;
}

/* One flusher round, as the injection's flusher thread makes every
 * 200 ms (fake_start runs none, for repeatable tests). */
int fake_flush(void)
{
    return flush_fn ? flush_fn() != 0 : 1;
}

int fake_stop(void)
{
    if (!shutdown_fn)
        return 1;
    shutdown_fn();
    return 0;
}
