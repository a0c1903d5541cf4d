/*
 * lib/gpu/nvml.c — NVML counters sampled on trec's own thread
 * (lib/gpu/trec_gpu.h; docs/design/nvml.md).
 *
 * No nvml.h is needed: the handful of entry points used are declared
 * below with the layouts NVML documents, and the library is dlopen'ed,
 * so machines without a GPU driver simply get no counters.  The sampler
 * thread only reads NVML and queues values; the writer belongs to trec's
 * loop, which drains the queue (trec_gpu_nvml_drain).
 */
#include "lib/gpu/trec_gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/util/alloc.h"

/* ---- NVML, declared by hand ----------------------------------------- */
typedef int nvml_ret;                      /* nvmlReturn_t; 0 = NVML_SUCCESS */
typedef void *nvml_device;                 /* nvmlDevice_t */
typedef struct { unsigned gpu, memory; } nvml_utilization;
typedef struct { unsigned long long total, free, used; } nvml_memory;
#define NVML_CLOCK_SM 1
#define NVML_UUID_LEN 96

typedef struct nvml_fns {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*count)(unsigned *);
    nvml_ret (*handle)(unsigned, nvml_device *);
    nvml_ret (*uuid)(nvml_device, char *, unsigned);
    nvml_ret (*util)(nvml_device, nvml_utilization *);
    nvml_ret (*mem)(nvml_device, nvml_memory *);
    nvml_ret (*clock)(nvml_device, int, unsigned *);
    nvml_ret (*power)(nvml_device, unsigned *);
} nvml_fns;

/* ---- the sampler -------------------------------------------------- */

enum { C_UTIL, C_MEM, C_CLOCK, C_POWER, N_COUNTERS };
static const char *const counter_name[N_COUNTERS] = { "gpu.util", "gpu.mem.used",
                                                      "gpu.sm_clock", "gpu.power" };
static const char *const counter_unit[N_COUNTERS] = { "percent", "bytes", "MHz", "mW" };

#define MAX_DEVICES 64
#define QUEUE 8192

typedef struct nv_value {
    int64_t time_ns;
    double value;
    uint16_t dev;      /* index into devs */
    uint8_t counter;
} nv_value;

typedef struct nv_dev {
    nvml_device h;
    int32_t ordinal;   /* CUDA device ordinal */
    uint32_t id[N_COUNTERS];   /* writer counter ids, 0 = not defined yet */
} nv_dev;

struct trec_gpu_nvml {
    void *lib;
    nvml_fns f;
    nv_dev devs[MAX_DEVICES];
    int n_devs;
    int64_t period_ns;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    nv_value q[QUEUE];
    size_t head, count;
    uint64_t overflow;
    const trc_writer *defined_for;   /* counter ids belong to this writer */
};

static int load(trec_gpu_nvml *n, const char *lib)
{
    static const char *const names[] = { "nvmlInit_v2", "nvmlShutdown",
                                         "nvmlDeviceGetCount_v2",
                                         "nvmlDeviceGetHandleByIndex_v2",
                                         "nvmlDeviceGetUUID", "nvmlDeviceGetUtilizationRates",
                                         "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetClockInfo",
                                         "nvmlDeviceGetPowerUsage" };
    void *slots[sizeof names / sizeof names[0]];

    const char *env = getenv("TREC_NVML_LIB");

    /* the override lets a test (or an odd install) name the library */
    if (!lib)
        lib = env && *env ? env : "libnvidia-ml.so.1";
    n->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(slots[i] = dlsym(n->lib, names[i])))
            return -1;
    /* the struct is nine function pointers in the order of names[] */
    memcpy(&n->f, slots, sizeof n->f);
    return 0;
}

/* CUDA ordinal of NVML device index i with uuid, or -1 when hidden by
 * CUDA_VISIBLE_DEVICES.  Entries are indices or UUID prefixes ("GPU-…");
 * as in CUDA, the list ends at the first entry that matches nothing. */
static int32_t cuda_ordinal(unsigned i, const char *uuid, unsigned n_devices)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    char buf[1024], *save = NULL, *tok;
    int32_t ord = 0;

    if (!v)
        return (int32_t)i;
    snprintf(buf, sizeof buf, "%s", v);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), ord++) {
        while (*tok == ' ')
            tok++;
        if (*tok >= '0' && *tok <= '9') {
            char *end;
            long idx = strtol(tok, &end, 10);
            if (*end || idx < 0 || (unsigned long)idx >= n_devices)
                return -1;
            if ((unsigned long)idx == i)
                return ord;
        } else if (strncmp(tok, "GPU-", 4) == 0 && uuid[0]) {
            if (strncmp(uuid, tok, strlen(tok)) == 0)
                return ord;
        } else {
            return -1;   /* MIG or garbage: not modelled */
        }
    }
    return -1;
}

static void push(trec_gpu_nvml *n, int dev, int counter, int64_t t, double v)
{
    size_t at;
    if (n->count == QUEUE) {
        n->head = (n->head + 1) % QUEUE;   /* keep the newest */
        n->count--;
        n->overflow++;
    }
    at = (n->head + n->count) % QUEUE;
    n->q[at] = (nv_value){ t, v, (uint16_t)dev, (uint8_t)counter };
    n->count++;
}

static void sample(trec_gpu_nvml *n)
{
    for (int d = 0; d < n->n_devs; d++) {
        nvml_device h = n->devs[d].h;
        nvml_utilization u;
        nvml_memory m;
        unsigned clk, mw;
        int64_t t = trc_now_ns();
        int ok_u = n->f.util(h, &u) == 0;
        int ok_m = n->f.mem(h, &m) == 0;
        int ok_c = n->f.clock(h, NVML_CLOCK_SM, &clk) == 0;
        int ok_p = n->f.power(h, &mw) == 0;
        pthread_mutex_lock(&n->mu);
        if (ok_u)
            push(n, d, C_UTIL, t, u.gpu);
        if (ok_m)
            push(n, d, C_MEM, t, (double)m.used);
        if (ok_c)
            push(n, d, C_CLOCK, t, clk);
        if (ok_p)
            push(n, d, C_POWER, t, mw);
        pthread_mutex_unlock(&n->mu);
    }
}

static void *sampler_main(void *arg)
{
    trec_gpu_nvml *n = arg;
    struct timespec next;

    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&n->mu);
    while (!n->stop) {
        pthread_mutex_unlock(&n->mu);
        sample(n);
        next.tv_nsec += n->period_ns;
        next.tv_sec += next.tv_nsec / 1000000000;
        next.tv_nsec %= 1000000000;
        pthread_mutex_lock(&n->mu);
        /* absolute deadlines: the rate does not drift with sampling cost */
        while (!n->stop && pthread_cond_timedwait(&n->cv, &n->mu, &next) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&n->mu);
    return NULL;
}

trec_gpu_nvml *trec_gpu_nvml_start(double hz, const char *lib)
{
    trec_gpu_nvml *n = trc_calloc(1, sizeof *n);
    unsigned count = 0;
    pthread_condattr_t ca;
    int inited = 0;

    if (!n)
        return NULL;
    if (load(n, lib) != 0 || n->f.init() != 0)
        goto fail;
    inited = 1;
    if (n->f.count(&count) != 0 || count == 0)
        goto fail;
    for (unsigned i = 0; i < count && n->n_devs < MAX_DEVICES; i++) {
        nvml_device h;
        char uuid[NVML_UUID_LEN] = "";
        if (n->f.handle(i, &h) != 0)
            continue;
        if (n->f.uuid(h, uuid, sizeof uuid) != 0)
            uuid[0] = 0;
        int32_t ord = cuda_ordinal(i, uuid, count);
        if (ord < 0)
            continue;
        n->devs[n->n_devs].h = h;
        n->devs[n->n_devs].ordinal = ord;
        n->n_devs++;
    }
    if (!n->n_devs)
        goto fail;
    n->period_ns = (int64_t)(1e9 / (hz > 0 ? hz : 10.0));
    if (n->period_ns < 1000000)
        n->period_ns = 1000000;   /* NVML itself refreshes far slower than 1 kHz */
    pthread_mutex_init(&n->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&n->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&n->thread, NULL, sampler_main, n) != 0) {
        pthread_cond_destroy(&n->cv);
        pthread_mutex_destroy(&n->mu);
        goto fail;
    }
    return n;
fail:
    if (inited)
        n->f.shutdown();
    if (n->lib)
        dlclose(n->lib);
    trc_free(n);
    return NULL;
}

trc_status trec_gpu_nvml_drain(trec_gpu_nvml *n, trc_writer *w)
{
    trc_status st = TRC_OK;
    nv_value batch[256];
    size_t got;

    if (!n)
        return TRC_OK;
    if (n->defined_for != w) {
        for (int d = 0; d < n->n_devs; d++)
            memset(n->devs[d].id, 0, sizeof n->devs[d].id);
        n->defined_for = w;
    }
    do {
        pthread_mutex_lock(&n->mu);
        got = n->count < 256 ? n->count : 256;
        for (size_t i = 0; i < got; i++)
            batch[i] = n->q[(n->head + i) % QUEUE];
        n->head = (n->head + got) % QUEUE;
        n->count -= got;
        pthread_mutex_unlock(&n->mu);
        for (size_t i = 0; i < got && st == TRC_OK; i++) {
            nv_dev *d = &n->devs[batch[i].dev];
            uint32_t *id = &d->id[batch[i].counter];
            if (!*id)
                st = trc_writer_counter_def(w, counter_name[batch[i].counter],
                                            counter_unit[batch[i].counter], -1, d->ordinal, id);
            if (st == TRC_OK)
                st = trc_writer_counter(w, *id, batch[i].time_ns, batch[i].value);
        }
    } while (got && st == TRC_OK);
    return st;
}

void trec_gpu_nvml_stop(trec_gpu_nvml *n)
{
    if (!n)
        return;
    pthread_mutex_lock(&n->mu);
    n->stop = 1;
    pthread_cond_signal(&n->cv);
    pthread_mutex_unlock(&n->mu);
    pthread_join(n->thread, NULL);
    pthread_cond_destroy(&n->cv);
    pthread_mutex_destroy(&n->mu);
    n->f.shutdown();
    dlclose(n->lib);
    trc_free(n);
}

int trec_gpu_nvml_devices(const trec_gpu_nvml *n)
{
    return n ? n->n_devs : 0;
}

uint64_t trec_gpu_nvml_overflow(const trec_gpu_nvml *n)
{
    return n ? n->overflow : 0;
}
