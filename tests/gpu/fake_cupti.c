/*
 * tests/gpu/fake_cupti.c — the scripted CUPTI (contracts in fake_cupti.h).
 *
 * Records are CUPTI 13's own structs from the installed headers, packed
 * back to back at their sizes (what libcupti's GetNextRecord walks), so
 * the injection's decoder reads exactly the bytes a real CUPTI would
 * hand it.
 */
#include "tests/gpu/fake_cupti.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CBID 1024
#define BIG_QUEUE (1u << 22)
#define MAX_THREAD_BUFS 256

/* A buffer one thread fills (opts.per_thread_buffers), held until a flush. */
typedef struct thread_buf { uint8_t *buf; size_t size, valid; } thread_buf;

static struct {
    pthread_mutex_t mu;
    fake_cupti_opts opts;
    CUpti_CallbackFunc cb;
    void *cb_data;
    int subscribed;
    uint8_t enabled_kind[CUPTI_ACTIVITY_KIND_COUNT];
    uint8_t cb_enabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBID];
    uint8_t api_disabled[3][MAX_CBID];
    CUpti_BuffersCallbackRequestFunc req;
    CUpti_BuffersCallbackCompleteFunc done;
    CUpti_TimestampCallbackFunc ts;
    uint8_t *queue;
    size_t queued;
    CUpti_ActivityKernel10 running[64];   /* fake_cupti_add_unfinished */
    size_t n_running;
    size_t dropped;
    uint32_t next_corr;
    unsigned flushes, forced, buffers;
    unsigned zeroed;
    size_t other_records;        /* taken by another client's buffers */
    int finalized;
    unsigned after_finalize;     /* CUPTI calls made after cuptiFinalize */
    char calls[512];             /* fake_cupti_calls */
    char locked[512];            /* fake_cupti_calls_under_lock */
    unsigned next_locked;        /* GetNextRecord calls made under the lock */
    thread_buf tbufs[MAX_THREAD_BUFS];   /* opts.per_thread_buffers */
    size_t n_tbufs;
    unsigned tgen;               /* bumped by each flush: threads' buffers are gone */
} F = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- the call log (fake_cupti_calls) ----------------------------------- */

static void log_call(const char *name)
{
    size_t len;
    pthread_mutex_lock(&F.mu);
    F.after_finalize += F.finalized;
    len = strlen(F.calls);
    snprintf(F.calls + len, sizeof F.calls - len, "%s%s", len ? " " : "", name);
    pthread_mutex_unlock(&F.mu);
}

const char *fake_cupti_calls(void)
{
    return F.calls;
}

/* Every entry point but GetNextRecord (a walk over the caller's own
 * buffer, allowed under the injection's lock) asks the test's probe
 * whether the injection's lock is held right now. */
static void lock_note(const char *name)
{
    size_t len;
    if (!F.opts.lock_held || !F.opts.lock_held())
        return;
    pthread_mutex_lock(&F.mu);
    len = strlen(F.locked);
    snprintf(F.locked + len, sizeof F.locked - len, "%s%s", len ? " " : "", name);
    pthread_mutex_unlock(&F.mu);
}

const char *fake_cupti_calls_under_lock(void)
{
    return F.locked;
}

void fake_cupti_forget_calls_under_lock(void)
{
    pthread_mutex_lock(&F.mu);
    F.locked[0] = 0;
    pthread_mutex_unlock(&F.mu);
}

unsigned fake_cupti_next_records_under_lock(void)
{
    return F.next_locked;
}

static int f_Nvtx(void *get_export_table)
{
    log_call("InitializeInjectionNvtx");
    return 1;
}

static int f_Nvtx2(void *get_export_table)
{
    log_call("InitializeInjectionNvtx2");
    return 1;
}

/* ---- names ------------------------------------------------------------ */

typedef struct fake_name { CUpti_CallbackDomain dom; uint32_t cbid; const char *name; } fake_name;

#define RT(n) { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##n, #n }
#define DRV(n) { CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##n, #n }
static const fake_name names[] = {
    RT(cudaLaunchKernel_v7000), RT(cudaLaunchKernel_ptsz_v7000), RT(cudaMemcpyAsync_v3020),
    RT(cudaMemcpy_v3020), RT(cudaMemsetAsync_v3020), RT(cudaStreamSynchronize_v3020),
    RT(cudaDeviceSynchronize_v3020), RT(cudaEventSynchronize_v3020), RT(cudaGetDevice_v3020),
    RT(cudaStreamQuery_v3020), RT(cudaGetLastError_v3020), RT(cudaMemcpyPeerAsync_v4000),
    RT(cudaDeviceReset_v3020), RT(cudaMalloc_v3020), RT(cudaEventRecord_v3020),
    RT(cudaStreamWaitEvent_v3020), RT(cudaGraphLaunch_v10000), RT(cudaStreamEndCapture_v10000),
    DRV(cuLaunchKernel), DRV(cuLaunchKernel_ptsz), DRV(cuLaunchKernelEx), DRV(cuCtxGetCurrent),
    DRV(cuMemcpyHtoDAsync_v2), DRV(cuCtxDestroy_v2), DRV(cuStreamQuery), DRV(cuGraphLaunch),
    DRV(cuCtxSynchronize), DRV(cuMemcpyDtoH_v2), RT(cudaGraphInstantiate_v12000),
    DRV(cuStreamEndCapture), DRV(cuGraphInstantiateWithFlags),
};

static CUptiResult f_GetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **out)
{
    lock_note("cuptiGetCallbackName");
    if (d == CUPTI_CB_DOMAIN_DRIVER_API && F.opts.new_driver_cbid &&
        cbid == F.opts.new_driver_cbid) {
        *out = F.opts.new_driver_name;
        return CUPTI_SUCCESS;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].dom == d && names[i].cbid == cbid) {
            *out = names[i].name;
            return CUPTI_SUCCESS;
        }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

static CUptiResult f_GetResultString(CUptiResult r, const char **out)
{
    lock_note("cuptiGetResultString");
    *out = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
               ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

/* ---- subscription and enabling ---------------------------------------- */

static CUptiResult subscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud,
                             CUpti_SubscriberParams *p)
{
    lock_note("cuptiSubscribe");
    log_call("cuptiSubscribe");
    if (F.opts.refuse_holder || F.subscribed) {
        if (p && p->oldSubscriberName && p->oldSubscriberSize)
            snprintf(p->oldSubscriberName, p->oldSubscriberSize, "%s",
                     F.opts.refuse_holder ? F.opts.refuse_holder : "trec");
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    F.cb = cb;
    F.cb_data = ud;
    F.subscribed = 1;
    *h = (CUpti_SubscriberHandle)&F;
    return CUPTI_SUCCESS;
}

static CUptiResult f_Subscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud)
{
    return subscribe(h, cb, ud, NULL);
}

static CUptiResult f_Subscribe_v2(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud,
                                  CUpti_SubscriberParams *p)
{
    if (p && p->structSize < CUpti_SubscriberParams_STRUCT_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    return subscribe(h, cb, ud, p);
}

static CUptiResult f_Unsubscribe(CUpti_SubscriberHandle h)
{
    lock_note("cuptiUnsubscribe");
    F.after_finalize += F.finalized;
    if (!F.subscribed || h != (CUpti_SubscriberHandle)&F)
        return CUPTI_ERROR_INVALID_PARAMETER;
    F.subscribed = 0;
    F.cb = NULL;
    memset(F.cb_enabled, 0, sizeof F.cb_enabled);
    return CUPTI_SUCCESS;
}

static CUptiResult f_EnableCallback(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
                                    CUpti_CallbackId id)
{
    lock_note("cuptiEnableCallback");
    F.after_finalize += F.finalized;
    if (!F.subscribed || h != (CUpti_SubscriberHandle)&F || d >= CUPTI_CB_DOMAIN_SIZE ||
        id >= MAX_CBID)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (F.opts.fail_enable_callback)
        return CUPTI_ERROR_NOT_SUPPORTED;
    F.cb_enabled[d][id] = en != 0;
    return CUPTI_SUCCESS;
}

static CUptiResult f_ActivityEnable(CUpti_ActivityKind k)
{
    lock_note("cuptiActivityEnable");
    F.after_finalize += F.finalized;
    if ((unsigned)k >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    if (F.opts.fail_kind && k == F.opts.fail_kind)
        return CUPTI_ERROR_NOT_COMPATIBLE;
    F.enabled_kind[k] = 1;
    return CUPTI_SUCCESS;
}

static CUptiResult f_ActivityDisable(CUpti_ActivityKind k)
{
    lock_note("cuptiActivityDisable");
    F.after_finalize += F.finalized;
    if ((unsigned)k >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    F.enabled_kind[k] = 0;
    return CUPTI_SUCCESS;
}

static CUptiResult f_EnableRuntimeApi(CUpti_CallbackId id, uint8_t en)
{
    lock_note("cuptiActivityEnableRuntimeApi");
    if (id < MAX_CBID)
        F.api_disabled[CUPTI_CB_DOMAIN_RUNTIME_API][id] = !en;
    return CUPTI_SUCCESS;
}

static CUptiResult f_EnableDriverApi(CUpti_CallbackId id, uint8_t en)
{
    lock_note("cuptiActivityEnableDriverApi");
    if (id < MAX_CBID)
        F.api_disabled[CUPTI_CB_DOMAIN_DRIVER_API][id] = !en;
    return CUPTI_SUCCESS;
}

static CUptiResult f_RegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                       CUpti_BuffersCallbackCompleteFunc c)
{
    lock_note("cuptiActivityRegisterCallbacks");
    F.after_finalize += F.finalized;
    if (!r || !c)
        return CUPTI_ERROR_INVALID_PARAMETER;
    F.req = r;
    F.done = c;
    return CUPTI_SUCCESS;
}

static CUptiResult f_RegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    lock_note("cuptiActivityRegisterTimestampCallback");
    if (!f)
        return CUPTI_ERROR_INVALID_PARAMETER;
    F.ts = f;
    return CUPTI_SUCCESS;
}

static CUptiResult f_SetThreadIdType(CUpti_ActivityThreadIdType t)
{
    lock_note("cuptiActivitySetThreadIdType");
    F.after_finalize += F.finalized;
    if (F.opts.fail_thread_id_type)
        return CUPTI_ERROR_NOT_SUPPORTED;
    return CUPTI_SUCCESS;
}

static CUptiResult f_GetTimestamp(uint64_t *ts)
{
    lock_note("cuptiGetTimestamp");
    log_call("cuptiGetTimestamp");
    *ts = fake_cupti_now();
    return CUPTI_SUCCESS;
}

/* A graph's id is its handle's value (fake_cupti.h). */
static CUptiResult f_GetGraphId(CUgraph graph, uint32_t *id)
{
    if (!graph)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *id = (uint32_t)(uintptr_t)graph;
    return CUPTI_SUCCESS;
}

static CUptiResult f_GetGraphExecId(CUgraphExec exec, uint32_t *id)
{
    if (!exec)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *id = (uint32_t)(uintptr_t)exec;
    return CUPTI_SUCCESS;
}

static CUptiResult f_GetVersion(uint32_t *v)
{
    lock_note("cuptiGetVersion");
    log_call("cuptiGetVersion");
    *v = F.opts.version;
    return CUPTI_SUCCESS;
}

static CUptiResult f_GetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
    lock_note("cuptiActivityGetNumDroppedRecords");
    F.after_finalize += F.finalized;
    pthread_mutex_lock(&F.mu);
    *n = F.dropped;
    F.dropped = 0;
    pthread_mutex_unlock(&F.mu);
    return CUPTI_SUCCESS;
}

/* ---- records and buffers -------------------------------------------- */

size_t fake_cupti_record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    default: return 0;
    }
}

static void busy_wait_ns(uint64_t ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((uint64_t)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)) < ns);
}

CUptiResult fake_cupti_next_record(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
    size_t off = 0;
    if (F.opts.lock_held && F.opts.lock_held()) {
        pthread_mutex_lock(&F.mu);
        F.next_locked++;
        pthread_mutex_unlock(&F.mu);
    }
    if (F.opts.next_record_delay_ns)
        busy_wait_ns(F.opts.next_record_delay_ns);
    if (*rec) {
        size_t sz = fake_cupti_record_size((*rec)->kind);
        if (!sz)
            return CUPTI_ERROR_INVALID_KIND;
        off = (size_t)((uint8_t *)*rec - buffer) + sz + F.opts.record_extra;
    }
    if (off + sizeof(CUpti_Activity) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    CUpti_Activity *r = (CUpti_Activity *)(buffer + off);
    size_t sz = fake_cupti_record_size(r->kind);
    if (!sz)
        return CUPTI_ERROR_INVALID_KIND;
    if (off + sz + F.opts.record_extra > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = r;
    return CUPTI_SUCCESS;
}

/* The calling thread's buffer in F.tbufs, valid while gen == F.tgen. */
static __thread struct { unsigned gen; size_t slot; int has; } my_tbuf;

/* Called with F.mu held: append to the calling thread's buffer; 0 when
 * it has none (or it is full: the tests stay far below 4 MiB). */
static int tbuf_append(const void *record, size_t size)
{
    thread_buf *t;
    if (!my_tbuf.has || my_tbuf.gen != F.tgen)
        return 0;
    t = &F.tbufs[my_tbuf.slot];
    if (t->valid + size > t->size)
        return 0;
    memcpy(t->buf + t->valid, record, size);
    t->valid += size;
    return 1;
}

/* As CUPTI keeps a buffer per thread: the first record of a thread
 * asks the injection for a buffer (on that thread, outside our lock, as
 * CUPTI would), and the thread keeps filling it until a flush. */
static void add_per_thread(const void *record, size_t size)
{
    uint8_t *buf = NULL;
    size_t bsize = 0, maxrec = 0;

    pthread_mutex_lock(&F.mu);
    int done = tbuf_append(record, size);
    pthread_mutex_unlock(&F.mu);
    if (done)
        return;
    if (F.req)
        F.req(&buf, &bsize, &maxrec);
    pthread_mutex_lock(&F.mu);
    if (!buf || F.n_tbufs == MAX_THREAD_BUFS) {
        F.dropped++;   /* no buffer: CUPTI drops and counts */
        pthread_mutex_unlock(&F.mu);
        free(buf);
        return;
    }
    my_tbuf.slot = F.n_tbufs++;
    my_tbuf.gen = F.tgen;
    my_tbuf.has = 1;
    F.tbufs[my_tbuf.slot] = (thread_buf){ buf, bsize, 0 };
    if (!tbuf_append(record, size))
        F.dropped++;
    pthread_mutex_unlock(&F.mu);
}

size_t fake_cupti_thread_buffers(void)
{
    size_t n;
    pthread_mutex_lock(&F.mu);
    n = F.n_tbufs;
    pthread_mutex_unlock(&F.mu);
    return n;
}

/* FlushAll: every thread's buffer goes back, full or not. */
static void complete_thread_buffers(void)
{
    thread_buf *take;
    size_t n;

    pthread_mutex_lock(&F.mu);
    n = F.n_tbufs;
    take = n ? malloc(n * sizeof *take) : NULL;
    if (take)
        memcpy(take, F.tbufs, n * sizeof *take);
    F.n_tbufs = 0;
    F.tgen++;
    F.buffers += take ? (unsigned)n : 0;
    pthread_mutex_unlock(&F.mu);
    for (size_t i = 0; take && i < n; i++)
        F.done(NULL, 0, take[i].buf, take[i].size, take[i].valid);
    free(take);
}

void fake_cupti_add(const void *record, size_t size)
{
    if (F.opts.per_thread_buffers) {
        add_per_thread(record, size);
        return;
    }
    pthread_mutex_lock(&F.mu);
    if (F.queued + size <= BIG_QUEUE) {
        memcpy(F.queue + F.queued, record, size);
        F.queued += size;
    }
    pthread_mutex_unlock(&F.mu);
}

void fake_cupti_add_unfinished(const CUpti_ActivityKernel10 *kernel)
{
    pthread_mutex_lock(&F.mu);
    if (F.n_running < sizeof F.running / sizeof F.running[0])
        F.running[F.n_running++] = *kernel;
    pthread_mutex_unlock(&F.mu);
}

/* Moves the running kernels to the queue, unfinished (end 0) or not.
 * Called with F.mu held. */
static void take_running(int unfinished)
{
    for (size_t i = 0; i < F.n_running; i++) {
        CUpti_ActivityKernel10 k = F.running[i];
        if (unfinished)
            k.end = 0;
        if (F.queued + sizeof k <= BIG_QUEUE) {
            memcpy(F.queue + F.queued, &k, sizeof k);
            F.queued += sizeof k;
        }
    }
    F.n_running = 0;
}

void fake_cupti_complete(void)
{
    pthread_mutex_lock(&F.mu);
    take_running(0);
    pthread_mutex_unlock(&F.mu);
}

size_t fake_cupti_unfinished(void)
{
    size_t n;
    pthread_mutex_lock(&F.mu);
    n = F.n_running;
    pthread_mutex_unlock(&F.mu);
    return n;
}

void fake_cupti_drop(size_t n)
{
    pthread_mutex_lock(&F.mu);
    F.dropped += n;
    pthread_mutex_unlock(&F.mu);
}

/* Hand everything queued to the injection, buffer by buffer. */
static CUptiResult f_FlushAll(uint32_t flags)
{
    lock_note("cuptiActivityFlushAll");
    F.after_finalize += F.finalized;
    uint8_t *take;
    size_t n, off = 0;

    pthread_mutex_lock(&F.mu);
    F.flushes++;
    if (flags & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
        F.forced++;
        take_running(1);   /* handed over unfinished: lost to the decoder */
    }
    n = F.queued;
    take = n ? malloc(n) : NULL;
    if (take)
        memcpy(take, F.queue, n);
    F.queued = 0;
    pthread_mutex_unlock(&F.mu);
    if (!F.req || !F.done)
        n = 0;
    while (off < n) {
        uint8_t *buf = NULL;
        size_t size = 0, maxrec = 0, valid = 0, count = 0;
        F.req(&buf, &size, &maxrec);
        if (!buf) {
            /* no buffer: CUPTI drops the records and counts them */
            while (off < n) {
                off += fake_cupti_record_size(((CUpti_Activity *)(take + off))->kind);
                fake_cupti_drop(1);
            }
            break;
        }
        while (off < n) {
            size_t sz = fake_cupti_record_size(((CUpti_Activity *)(take + off))->kind);
            size_t extra = F.opts.record_extra;
            if (valid + sz + extra > size ||
                (F.opts.buffer_records && count == F.opts.buffer_records))
                break;
            memcpy(buf + valid, take + off, sz);
            memset(buf + valid + sz, 0xA5, extra);   /* a newer CUPTI's added fields */
            if (F.ts && F.zeroed < F.opts.callback_zero_kernels &&
                ((CUpti_Activity *)(buf + valid))->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
                CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)(buf + valid);
                k->start = k->end = 0;
                F.zeroed++;
            }
            valid += sz + extra;
            off += sz;
            count++;
        }
        pthread_mutex_lock(&F.mu);
        F.buffers++;
        pthread_mutex_unlock(&F.mu);
        F.done(NULL, 0, buf, size, valid);
    }
    free(take);
    if (F.done)
        complete_thread_buffers();
    return CUPTI_SUCCESS;
}

/* ---- table ------------------------------------------------------------- */

void fake_cupti_table(cupti_api *api, const fake_cupti_opts *opts)
{
    uint8_t *q = F.queue;
    memset(&F, 0, sizeof F);
    pthread_mutex_init(&F.mu, NULL);
    F.queue = q ? q : malloc(BIG_QUEUE);
    F.next_corr = 1;
    if (opts)
        F.opts = *opts;
    memset(api, 0, sizeof *api);
    api->GetResultString = f_GetResultString;
    api->GetCallbackName = f_GetCallbackName;
    api->Subscribe = f_Subscribe;
    api->Subscribe_v2 = F.opts.no_subscribe_v2 ? NULL : f_Subscribe_v2;
    api->Unsubscribe = f_Unsubscribe;
    api->EnableCallback = f_EnableCallback;
    api->ActivityEnable = f_ActivityEnable;
    api->ActivityDisable = f_ActivityDisable;
    api->ActivityEnableRuntimeApi = f_EnableRuntimeApi;
    api->ActivityEnableDriverApi = f_EnableDriverApi;
    api->ActivityRegisterCallbacks = f_RegisterCallbacks;
    api->ActivityRegisterTimestampCallback =
        F.opts.no_timestamp_callback ? NULL : f_RegisterTimestampCallback;
    api->ActivityFlushAll = f_FlushAll;
    api->ActivityGetNextRecord = fake_cupti_next_record;
    api->ActivityGetNumDroppedRecords = f_GetNumDroppedRecords;
    api->SetThreadIdType = f_SetThreadIdType;
    api->GetTimestamp = f_GetTimestamp;
    api->GetVersion = F.opts.version ? f_GetVersion : NULL;
    api->GetGraphId = f_GetGraphId;
    api->GetGraphExecId = f_GetGraphExecId;
    api->InitializeInjectionNvtx = f_Nvtx;
    api->InitializeInjectionNvtx2 = f_Nvtx2;
}

/* ---- another CUPTI client ---------------------------------------------- */

static void CUPTIAPI other_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = malloc(1u << 20);
    *size = *buffer ? 1u << 20 : 0;
    *max_records = 0;
}

static void CUPTIAPI other_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                    size_t valid)
{
    CUpti_Activity *rec = NULL;
    while (valid && fake_cupti_next_record(buffer, valid, &rec) == CUPTI_SUCCESS)
        F.other_records++;
    free(buffer);
}

void fake_cupti_other_client(void)
{
    F.req = other_request;
    F.done = other_complete;
    memset(F.enabled_kind, 0, sizeof F.enabled_kind);
}

void fake_cupti_finalize(void)
{
    F.subscribed = 0;
    F.cb = NULL;
    memset(F.cb_enabled, 0, sizeof F.cb_enabled);
    F.req = NULL;
    F.done = NULL;
    memset(F.enabled_kind, 0, sizeof F.enabled_kind);
    F.finalized = 1;
}

size_t fake_cupti_other_records(void)
{
    return F.other_records;
}

unsigned fake_cupti_calls_after_finalize(void)
{
    return F.after_finalize;
}

uint64_t fake_cupti_now(void)
{
    struct timespec ts;
    if (F.ts)
        return F.ts();
    clock_gettime(CLOCK_REALTIME, &ts);   /* what CUPTI uses by itself on Linux */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fire_with(CUpti_CallbackDomain d, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                      uint32_t corr, const void *params, void *result)
{
    CUpti_CallbackData cb;
    const char *name = "";
    if (!F.cb || d >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID || !F.cb_enabled[d][cbid])
        return;
    f_GetCallbackName(d, cbid, &name);
    memset(&cb, 0, sizeof cb);
    cb.callbackSite = site;
    cb.functionName = name;
    cb.correlationId = corr;
    cb.functionParams = params;
    cb.functionReturnValue = result;
    F.cb(F.cb_data, d, cbid, &cb);
}

static void fire(CUpti_CallbackDomain d, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                 uint32_t corr)
{
    fire_with(d, cbid, site, corr, NULL, NULL);
}

void fake_cupti_api_exit_params(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                uint32_t corr, const void *params, int result)
{
    fire_with(domain, cbid, CUPTI_API_EXIT, corr, params, &result);
}


uint32_t fake_cupti_api_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    uint32_t corr;
    pthread_mutex_lock(&F.mu);
    corr = F.next_corr++;
    pthread_mutex_unlock(&F.mu);
    fire(domain, cbid, CUPTI_API_ENTER, corr);
    return corr;
}

void fake_cupti_api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t corr)
{
    fire(domain, cbid, CUPTI_API_EXIT, corr);
}

void fake_cupti_resource(CUpti_CallbackId cbid)
{
    CUpti_ResourceData rd;
    if (!F.cb || cbid >= MAX_CBID || !F.cb_enabled[CUPTI_CB_DOMAIN_RESOURCE][cbid])
        return;
    memset(&rd, 0, sizeof rd);
    F.cb(F.cb_data, CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
}

void fake_cupti_api_record(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint64_t start,
                           uint64_t dur, uint32_t tid, uint32_t corr)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME
                                                   : CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = cbid;
    a.start = start;
    a.end = start + dur;
    a.processId = fake_cupti_pid();
    /* CUPTI's default thread id is the pthread handle; the kernel's only
     * once cuptiActivitySetThreadIdType(SYSTEM) took */
    a.threadId = tid                          ? tid
                 : F.opts.fail_thread_id_type ? (uint32_t)(uintptr_t)pthread_self()
                                              : (uint32_t)gettid();
    a.correlationId = corr;
    /* disabled at the source, as CUPTI would */
    if (domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID || !F.api_disabled[domain][cbid])
        fake_cupti_add(&a, sizeof a);
}

uint32_t fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint64_t start,
                         uint64_t dur, uint32_t tid)
{
    uint32_t corr = fake_cupti_api_enter(domain, cbid);
    fake_cupti_api_exit(domain, cbid, corr);
    fake_cupti_api_record(domain, cbid, start, dur, tid, corr);
    return corr;
}

int fake_cupti_kind_enabled(CUpti_ActivityKind kind)
{
    return (unsigned)kind < CUPTI_ACTIVITY_KIND_COUNT && F.enabled_kind[kind];
}

int fake_cupti_kinds_enabled(void)
{
    int n = 0;
    for (size_t i = 0; i < CUPTI_ACTIVITY_KIND_COUNT; i++)
        n += F.enabled_kind[i];
    return n;
}

int fake_cupti_callback_enabled(CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
    return d < CUPTI_CB_DOMAIN_SIZE && cbid < MAX_CBID && F.cb_enabled[d][cbid];
}

int fake_cupti_api_activity_disabled(CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
    return d < 3 && cbid < MAX_CBID && F.api_disabled[d][cbid];
}

uint32_t fake_cupti_pid(void)
{
    return F.opts.pid ? F.opts.pid : (uint32_t)getpid();
}

int fake_cupti_subscribed(void) { return F.subscribed; }
int fake_cupti_timestamp_callback_registered(void) { return F.ts != NULL; }
unsigned fake_cupti_flushes(void) { return F.flushes; }
unsigned fake_cupti_forced_flushes(void) { return F.forced; }
unsigned fake_cupti_buffers(void) { return F.buffers; }

size_t fake_cupti_pending(void)
{
    size_t n;
    pthread_mutex_lock(&F.mu);
    n = F.queued;
    pthread_mutex_unlock(&F.mu);
    return n;
}
