/*
 * tests/gpu/fake_scenario.c — the standard fake-CUPTI run used by the
 * injection tests and by the fixture generator (fake_cupti.h).
 *
 * Timeline (µs after t0 = the fake's "now"), one launching thread:
 *   cudaMalloc; 3 cudaGetDevice, 2 cudaStreamQuery, 2 cuCtxGetCurrent (noisy);
 *   NVTX "epoch 0" start/end range (process-wide, green) around everything;
 *   cudaMemcpyAsync HtoD (stream 7); NVTX push "forward" ... pop;
 *   3 cudaLaunchKernel → vectorAdd (s13), ampere_sgemm (s14, overlapping
 *   it), vectorAdd (s13); cuLaunchKernel → a templated ATen kernel (s14);
 *   cudaMemsetAsync (s13); cudaMemcpyAsync DtoD (s13); cudaMemcpyPeerAsync
 *   device 0 → 1 (s13); a cudaLaunchKernel whose kernel record has zero
 *   timestamps; cudaStreamSynchronize(s13); cudaMemcpyAsync DtoH (s7);
 *   cudaEventSynchronize; cudaDeviceSynchronize; NVTX instant
 *   "checkpoint"; a CUPTI buffer-flush overhead; 3 dropped records.
 */
#include "tests/gpu/fake_cupti.h"

#include <string.h>
#include <unistd.h>

#define US 1000u
#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API
#define CB(n) CUPTI_RUNTIME_TRACE_CBID_##n
#define DCB(n) CUPTI_DRIVER_TRACE_CBID_##n

static uint64_t t0;
static uint32_t the_tid;
static fake_scenario *S;

static uint32_t call(CUpti_CallbackDomain d, CUpti_CallbackId id, unsigned from_us, unsigned to_us)
{
    return fake_cupti_call(d, id, t0 + from_us * US, (to_us - from_us) * US, the_tid);
}

static void device(uint32_t id, uint8_t uuid0)
{
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = id;
    d.name = "NVIDIA H100 80GB HBM3 (fake)";
    d.numMultiprocessors = 132;
    d.globalMemorySize = 85520809984ull;
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
    for (int i = 0; i < 16; i++)
        d.uuid.bytes[i] = (char)(uuid0 + i);
    fake_cupti_add(&d, sizeof d);
}

static void context(uint32_t ctx, uint32_t dev)
{
    CUpti_ActivityContext3 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = ctx;
    c.deviceId = dev;
    c.nullStreamId = 7;   /* the stream the scenario's default-stream work uses */
    fake_cupti_add(&c, sizeof c);
}

static void kernel(uint32_t corr, const char *name, uint32_t stream, unsigned from_us,
                   unsigned to_us, int zero_time)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = zero_time ? 0 : t0 + from_us * US;
    k.end = zero_time ? 0 : t0 + to_us * US;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = stream;
    k.gridX = 1024;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 2048;
    k.correlationId = corr;
    k.name = name;
    fake_cupti_add(&k, sizeof k);
    if (zero_time)
        S->bad_time++;
    else
        S->kernels++;
}

static void memcpy_rec(uint32_t corr, uint8_t kind, uint8_t src, uint8_t dst, uint64_t bytes,
                       uint32_t stream, unsigned from_us, unsigned to_us)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = kind;
    m.srcKind = src;
    m.dstKind = dst;
    m.bytes = bytes;
    m.start = t0 + from_us * US;
    m.end = t0 + to_us * US;
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = stream;
    m.correlationId = corr;
    fake_cupti_add(&m, sizeof m);
    S->memcpys++;
    S->copies_by_kind[kind]++;
}

static void marker(uint32_t flags, uint32_t id, const char *name, int on_thread, unsigned at_us)
{
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = (CUpti_ActivityFlag)flags;
    m.timestamp = t0 + at_us * US;
    m.id = id;
    if (on_thread) {
        m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        m.objectId.pt.processId = fake_cupti_pid();
        m.objectId.pt.threadId = the_tid;
    } else {
        m.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
        m.objectId.pt.processId = fake_cupti_pid();
    }
    m.name = name;
    m.domain = NULL;
    fake_cupti_add(&m, sizeof m);
}

static void marker_color(uint32_t id, uint32_t argb)
{
    CUpti_ActivityMarkerData2 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
    d.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
    d.id = id;
    d.color = argb;
    fake_cupti_add(&d, sizeof d);
}

static void sync_rec(uint32_t corr, CUpti_ActivitySynchronizationType type, uint32_t stream,
                     unsigned from_us, unsigned to_us)
{
    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = type;
    s.start = t0 + from_us * US;
    s.end = t0 + to_us * US;
    s.correlationId = corr;
    s.contextId = 1;
    s.streamId = stream;
    fake_cupti_add(&s, sizeof s);
    S->syncs++;
}

void fake_cupti_scenario(fake_scenario *out, uint32_t tid)
{
    static const char *const vadd = "_Z9vectorAddPKfS0_Pfi";
    static const char *const sgemm = "ampere_sgemm_128x64_nn";
    static const char *const aten =
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5"
        "ArrayIPcLi1EEEEEviT0_T1_";
    uint32_t c;

    memset(out, 0, sizeof *out);
    S = out;
    the_tid = tid ? tid : (uint32_t)gettid();
    t0 = fake_cupti_now();

    device(0, 0x10);
    device(1, 0x40);
    context(1, 0);
    context(2, 1);

    marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, "epoch 0", 0, 1);
    marker_color(2, 0xFF00C000u);
    call(RT, CB(cudaMalloc_v3020), 2, 50);
    for (int i = 0; i < 3; i++)
        call(RT, CB(cudaGetDevice_v3020), 51, 52);
    for (int i = 0; i < 2; i++) {
        call(RT, CB(cudaStreamQuery_v3020), 53, 54);
        call(DRV, DCB(cuCtxGetCurrent), 55, 56);
    }
    out->api_noisy = 7;
    out->api_recorded = 1;

    c = call(RT, CB(cudaMemcpyAsync_v3020), 60, 70);
    memcpy_rec(c, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
               CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1u << 20, 7, 75, 175);

    marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, "forward", 1, 80);
    c = call(RT, CB(cudaLaunchKernel_v7000), 90, 95);
    kernel(c, vadd, 13, 180, 380, 0);
    c = call(RT, CB(cudaLaunchKernel_v7000), 96, 100);
    kernel(c, sgemm, 14, 200, 500, 0);
    c = call(RT, CB(cudaLaunchKernel_v7000), 101, 105);
    kernel(c, vadd, 13, 381, 450, 0);
    c = call(DRV, DCB(cuLaunchKernel), 110, 115);
    kernel(c, aten, 14, 510, 520, 0);
    marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, NULL, 1, 120);

    c = call(RT, CB(cudaMemsetAsync_v3020), 121, 125);
    {
        CUpti_ActivityMemset4 m;
        memset(&m, 0, sizeof m);
        m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        m.value = 0;
        m.bytes = 4096;
        m.start = t0 + 451 * US;
        m.end = t0 + 460 * US;
        m.deviceId = 0;
        m.contextId = 1;
        m.streamId = 13;
        m.correlationId = c;
        m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        fake_cupti_add(&m, sizeof m);
        out->memsets++;
    }
    c = call(RT, CB(cudaMemcpyAsync_v3020), 126, 130);
    memcpy_rec(c, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
               CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 8u << 20, 13, 461, 470);
    c = call(RT, CB(cudaMemcpyPeerAsync_v4000), 131, 135);
    {
        CUpti_ActivityMemcpyPtoP4 p;
        memset(&p, 0, sizeof p);
        p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
        p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
        p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        p.bytes = 16u << 20;
        p.start = t0 + 471 * US;
        p.end = t0 + 600 * US;
        p.deviceId = 0;
        p.contextId = 1;
        p.streamId = 13;
        p.srcDeviceId = 0;
        p.srcContextId = 1;
        p.dstDeviceId = 1;
        p.dstContextId = 2;
        p.correlationId = c;
        fake_cupti_add(&p, sizeof p);
        out->memcpys++;
        out->copies_by_kind[CUPTI_ACTIVITY_MEMCPY_KIND_PTOP]++;
    }
    c = call(RT, CB(cudaLaunchKernel_v7000), 136, 140);
    kernel(c, vadd, 13, 0, 0, 1);
    c = call(RT, CB(cudaStreamSynchronize_v3020), 141, 605);
    sync_rec(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 13, 141, 605);
    c = call(RT, CB(cudaMemcpyAsync_v3020), 606, 610);
    memcpy_rec(c, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
               CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 1u << 20, 7, 612, 700);
    c = call(RT, CB(cudaEventSynchronize_v3020), 611, 701);
    sync_rec(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 7, 611, 701);
    c = call(RT, CB(cudaDeviceSynchronize_v3020), 702, 710);
    sync_rec(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 0xFFFFFFFFu, 702, 710);
    out->api_recorded += 13;
    out->launches = 10;
    out->sync_calls = 3;   /* stream, event and device synchronize: 464, 90 and 8 us */

    marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, "checkpoint", 1, 705);
    marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, NULL, 0, 709);
    out->markers_range = 2;
    out->markers_instant = 1;
    {
        CUpti_ActivityOverhead3 o;
        memset(&o, 0, sizeof o);
        o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
        o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
        o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        o.objectId.pt.processId = fake_cupti_pid();
        o.objectId.pt.threadId = the_tid;
        o.start = t0 + 300 * US;
        o.end = t0 + 320 * US;
        fake_cupti_add(&o, sizeof o);
        out->overheads = 1;
    }
    fake_cupti_drop(3);
    out->dropped = 3;
    out->streams = 3;
}
