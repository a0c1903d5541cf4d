/*
 * tests/gpu/fake_nvml.c — a stand-in libnvidia-ml.so for the NVML sampler
 * test (tests/unit/gpu/test_gpu_nvml.c): the nine entry points lib/gpu/nvml.c
 * uses, with FAKE_NVML_DEVICES devices (default 2; 0 = none) whose
 * readings are fixed per device: util 40+i %, (i+1) GiB used, SM clock
 * 1980 MHz, power 300000+1000*i mW.  UUIDs "GPU-fa4e0000-0000-0000-0000-00000000000i".
 */
#include <stdio.h>
#include <stdlib.h>

typedef struct { unsigned gpu, memory; } util_t;
typedef struct { unsigned long long total, free, used; } mem_t;

static unsigned n_dev(void)
{
    const char *v = getenv("FAKE_NVML_DEVICES");
    return v ? (unsigned)atoi(v) : 2u;
}

static int idx(void *h) { return (int)(long)h - 1; }

int nvmlInit_v2(void) { return getenv("FAKE_NVML_FAIL") ? 9 : 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = n_dev(); return 0; }

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
    if (i >= n_dev())
        return 2;
    *h = (void *)(long)(i + 1);
    return 0;
}

int nvmlDeviceGetUUID(void *h, char *buf, unsigned len)
{
    snprintf(buf, len, "GPU-fa4e0000-0000-0000-0000-%012d", idx(h));
    return 0;
}

int nvmlDeviceGetUtilizationRates(void *h, util_t *u)
{
    u->gpu = 40u + (unsigned)idx(h);
    u->memory = 5;
    return 0;
}

int nvmlDeviceGetMemoryInfo(void *h, mem_t *m)
{
    m->total = 80ull << 30;
    m->used = (unsigned long long)(idx(h) + 1) << 30;
    m->free = m->total - m->used;
    return 0;
}

int nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz)
{
    *mhz = type == 1 ? 1980u : 0u;
    return 0;
}

int nvmlDeviceGetPowerUsage(void *h, unsigned *mw)
{
    *mw = 300000u + 1000u * (unsigned)idx(h);
    return 0;
}
