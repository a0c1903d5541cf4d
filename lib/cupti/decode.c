/*
 * lib/cupti/decode.c — CUPTI 13 activity records → writer calls
 * (contracts in decode.h; docs/design/cupti.md §4, §7; spec/DESIGN-NOTES.md types 10–18,
 * 21–22: a CONTEXT record becomes GPU_CONTEXT plus its NULL stream as
 * the default GPU_STREAM; every other stream is described the first time
 * an activity names it).
 *
 * The record structs are CUPTI 13's own (CUpti_ActivityKernel10,
 * Memcpy6, MemcpyPtoP4, Memset4, API, Synchronization2, Overhead3,
 * Marker2, MarkerData2, Device5, Context3): a newer CUPTI that changes
 * a layout also changes these names, so a mismatch fails to compile
 * instead of decoding garbage.
 */
#include <cupti.h>

#include "lib/cupti/decode.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"

/* The stable prefix.  A libcupti newer than these headers hands longer
 * records of the same kinds (13.1: Kernel11, Device6, Context4); its
 * cuptiActivityGetNextRecord steps by their real size, and NVIDIA adds
 * fields at the end, so every field read here stays where CUPTI 13.0
 * put it.  These pins make headers that move any of them fail to build
 * rather than decode the wrong bytes (docs/design/cupti.md §4). */
#define PIN(type, field, off) \
    _Static_assert(offsetof(type, field) == (off), #type "." #field " moved")
PIN(CUpti_ActivityAPI, cbid, 4);
PIN(CUpti_ActivityAPI, correlationId, 32);
PIN(CUpti_ActivityAPI, end, 16);
PIN(CUpti_ActivityAPI, kind, 0);
PIN(CUpti_ActivityAPI, processId, 24);
PIN(CUpti_ActivityAPI, returnValue, 36);
PIN(CUpti_ActivityAPI, start, 8);
PIN(CUpti_ActivityAPI, threadId, 28);
PIN(CUpti_ActivityContext3, contextId, 4);
PIN(CUpti_ActivityContext3, deviceId, 8);
PIN(CUpti_ActivityContext3, nullStreamId, 14);
PIN(CUpti_ActivityDevice5, computeCapabilityMajor, 104);
PIN(CUpti_ActivityDevice5, computeCapabilityMinor, 108);
PIN(CUpti_ActivityDevice5, globalMemorySize, 16);
PIN(CUpti_ActivityDevice5, id, 112);
PIN(CUpti_ActivityDevice5, name, 136);
PIN(CUpti_ActivityDevice5, numMultiprocessors, 44);
PIN(CUpti_ActivityDevice5, uuid.bytes, 120);
PIN(CUpti_ActivityKernel10, blockX, 64);
PIN(CUpti_ActivityKernel10, blockY, 68);
PIN(CUpti_ActivityKernel10, blockZ, 72);
PIN(CUpti_ActivityKernel10, contextId, 44);
PIN(CUpti_ActivityKernel10, correlationId, 92);
PIN(CUpti_ActivityKernel10, deviceId, 40);
PIN(CUpti_ActivityKernel10, dynamicSharedMemory, 80);
PIN(CUpti_ActivityKernel10, end, 24);
PIN(CUpti_ActivityKernel10, gridX, 52);
PIN(CUpti_ActivityKernel10, gridY, 56);
PIN(CUpti_ActivityKernel10, gridZ, 60);
PIN(CUpti_ActivityKernel10, graphId, 156);
PIN(CUpti_ActivityKernel10, graphNodeId, 144);
PIN(CUpti_ActivityKernel10, name, 104);
PIN(CUpti_ActivityKernel10, registersPerThread, 6);
PIN(CUpti_ActivityKernel10, start, 16);
PIN(CUpti_ActivityKernel10, staticSharedMemory, 76);
PIN(CUpti_ActivityKernel10, streamId, 48);
PIN(CUpti_ActivityMarker2, domain, 48);
PIN(CUpti_ActivityMarker2, flags, 4);
PIN(CUpti_ActivityMarker2, id, 16);
PIN(CUpti_ActivityMarker2, name, 40);
PIN(CUpti_ActivityMarker2, objectId.pt.processId, 24);
PIN(CUpti_ActivityMarker2, objectId.pt.threadId, 28);
PIN(CUpti_ActivityMarker2, objectKind, 20);
PIN(CUpti_ActivityMarker2, timestamp, 8);
PIN(CUpti_ActivityMarkerData2, color, 24);
PIN(CUpti_ActivityMarkerData2, flags, 4);
PIN(CUpti_ActivityMarkerData2, id, 8);
PIN(CUpti_ActivityMemcpy6, bytes, 8);
PIN(CUpti_ActivityMemcpy6, contextId, 36);
PIN(CUpti_ActivityMemcpy6, copyKind, 4);
PIN(CUpti_ActivityMemcpy6, correlationId, 44);
PIN(CUpti_ActivityMemcpy6, deviceId, 32);
PIN(CUpti_ActivityMemcpy6, dstKind, 6);
PIN(CUpti_ActivityMemcpy6, end, 24);
PIN(CUpti_ActivityMemcpy6, srcKind, 5);
PIN(CUpti_ActivityMemcpy6, start, 16);
PIN(CUpti_ActivityMemcpy6, streamId, 40);
PIN(CUpti_ActivityMemcpyPtoP4, bytes, 8);
PIN(CUpti_ActivityMemcpyPtoP4, contextId, 36);
PIN(CUpti_ActivityMemcpyPtoP4, copyKind, 4);
PIN(CUpti_ActivityMemcpyPtoP4, correlationId, 60);
PIN(CUpti_ActivityMemcpyPtoP4, deviceId, 32);
PIN(CUpti_ActivityMemcpyPtoP4, dstDeviceId, 52);
PIN(CUpti_ActivityMemcpyPtoP4, dstKind, 6);
PIN(CUpti_ActivityMemcpyPtoP4, end, 24);
PIN(CUpti_ActivityMemcpyPtoP4, srcKind, 5);
PIN(CUpti_ActivityMemcpyPtoP4, start, 16);
PIN(CUpti_ActivityMemcpyPtoP4, streamId, 40);
PIN(CUpti_ActivityMemset4, bytes, 8);
PIN(CUpti_ActivityMemset4, contextId, 36);
PIN(CUpti_ActivityMemset4, correlationId, 44);
PIN(CUpti_ActivityMemset4, deviceId, 32);
PIN(CUpti_ActivityMemset4, end, 24);
PIN(CUpti_ActivityMemset4, memoryKind, 50);
PIN(CUpti_ActivityMemset4, start, 16);
PIN(CUpti_ActivityMemset4, streamId, 40);
PIN(CUpti_ActivityMemset4, value, 4);
PIN(CUpti_ActivityOverhead3, end, 32);
PIN(CUpti_ActivityOverhead3, objectId.pt.processId, 12);
PIN(CUpti_ActivityOverhead3, objectId.pt.threadId, 16);
PIN(CUpti_ActivityOverhead3, objectKind, 8);
PIN(CUpti_ActivityOverhead3, overheadKind, 4);
PIN(CUpti_ActivityOverhead3, start, 24);
PIN(CUpti_ActivitySynchronization2, contextId, 28);
PIN(CUpti_ActivitySynchronization2, correlationId, 24);
PIN(CUpti_ActivitySynchronization2, end, 16);
PIN(CUpti_ActivitySynchronization2, start, 8);
PIN(CUpti_ActivitySynchronization2, streamId, 32);
PIN(CUpti_ActivitySynchronization2, type, 4);
#undef PIN

#define MAX_OPEN_RANGES 4096

typedef struct tid_ent { int64_t pid, tid; uint32_t id; } tid_ent;
typedef struct ctx_slot { uint32_t context, device; int32_t null_stream; } ctx_slot;
/* A stream already described (GPU_STREAM written) with these flags. */
typedef struct stream_slot { uint32_t context, stream, flags; } stream_slot;

/* CUPTI's "no stream" (a context synchronisation). */
#define NO_STREAM 0xFFFFFFFFu

typedef struct open_range {
    uint32_t id;
    int64_t start_ns;
    uint32_t thread;
    uint32_t color;
    char *name, *domain;
} open_range;

struct cupti_decoder {
    trc_writer *w;
    int64_t pid;
    int64_t offset;
    const cupti_names *names;
    cupti_demangler *dm;
    cupti_launch *launch;
    int thread_names;
    int parked_tids;         /* record thread ids are pthread handles: prefer the parked tid */
    tid_ent *tids;           /* threads already defined, found through tid_index */
    size_t tid_cap;
    uint32_t tid_used;
    trch_index tid_index;
    ctx_slot *ctxs;
    size_t n_ctx, ctx_cap;
    stream_slot *streams;
    size_t n_streams, stream_cap, stream_last;
    open_range *ranges;
    size_t n_ranges;
    uint64_t bad_pending;    /* bad-time drops since the last buffer end */
    cupti_decode_stats st;
};

cupti_decoder *cupti_decoder_new(trc_writer *w, int64_t pid, const cupti_names *names,
                                 cupti_demangler *dm, cupti_launch *launch, int thread_names)
{
    cupti_decoder *d = trc_calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->w = w;
    d->pid = pid;
    d->names = names;
    d->dm = dm;
    d->launch = launch;
    d->thread_names = thread_names;
    d->ranges = trc_calloc(MAX_OPEN_RANGES, sizeof *d->ranges);
    if (!d->ranges) {
        cupti_decoder_free(d);
        return NULL;
    }
    return d;
}

void cupti_decoder_free(cupti_decoder *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_ranges; i++) {
        trc_free(d->ranges[i].name);
        trc_free(d->ranges[i].domain);
    }
    trc_free(d->ranges);
    trc_free(d->tids);
    trch_index_cleanup(&d->tid_index);
    trc_free(d->ctxs);
    trc_free(d->streams);
    trc_free(d);
}

void cupti_decoder_set_clock_offset(cupti_decoder *d, int64_t offset_ns)
{
    d->offset = offset_ns;
}

void cupti_decoder_set_parked_tids(cupti_decoder *d, int on)
{
    d->parked_tids = on;
}

void cupti_decode_get_stats(const cupti_decoder *d, cupti_decode_stats *out)
{
    *out = d->st;
}

/* ---- threads, contexts ---------------------------------------------- */

static void read_comm(int64_t tid, char *buf, size_t len)
{
    char path[64];
    FILE *f;
    buf[0] = 0;
    snprintf(path, sizeof path, "/proc/self/task/%lld/comm", (long long)tid);
    if (!(f = fopen(path, "re")))
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\n")] = 0;
    fclose(f);
}

static uint64_t tid_hash(int64_t pid, int64_t tid)
{
    return trch_hash_more_u64(trch_hash_u64((uint64_t)tid), (uint64_t)pid);
}

/* Room for one more thread; -1 when out of memory. */
static int tid_grow(cupti_decoder *d)
{
    if (trcu_grow((void **)&d->tids, &d->tid_cap, d->tid_used, sizeof *d->tids) != TRC_OK)
        return -1;
    /* the index refuses past 2^30 entries (TRC_ERR_LIMIT) */
    return trch_reserve(&d->tid_index, d->tid_used + 1) == TRC_OK ? 0 : -1;
}

trc_status cupti_decode_thread(cupti_decoder *d, int64_t pid, int64_t tid, uint32_t *id)
{
    uint64_t h = tid_hash(pid, tid);
    trch_probe p;
    char name[64] = "";
    trc_status st;

    for (uint32_t i = trch_first(&d->tid_index, h, &p); i != TRCH_NONE;
         i = trch_next(&d->tid_index, &p))
        if (d->tids[i].tid == tid && d->tids[i].pid == pid) {
            *id = d->tids[i].id;
            return TRC_OK;
        }
    if (d->thread_names && pid == d->pid)
        read_comm(tid, name, sizeof name);
    st = trc_writer_thread(d->w, pid, tid, name, id);
    if (st != TRC_OK)
        return st;
    if (tid_grow(d) != 0)
        return TRC_OK;   /* not remembered: the next record asks the writer again */
    (void)trch_add(&d->tid_index, h, d->tid_used); /* cannot fail after tid_grow */
    d->tids[d->tid_used++] = (tid_ent){ pid, tid, *id };
    return TRC_OK;
}

static uint32_t ctx_device(const cupti_decoder *d, uint32_t context)
{
    for (size_t i = 0; i < d->n_ctx; i++)
        if (d->ctxs[i].context == context)
            return d->ctxs[i].device;
    return 0;
}

static void ctx_note(cupti_decoder *d, uint32_t context, uint32_t device, int32_t null_stream)
{
    for (size_t i = 0; i < d->n_ctx; i++)
        if (d->ctxs[i].context == context) {
            d->ctxs[i].device = device;
            d->ctxs[i].null_stream = null_stream;
            return;
        }
    if (trcu_grow((void **)&d->ctxs, &d->ctx_cap, d->n_ctx, sizeof *d->ctxs) != TRC_OK)
        return;   /* sync records of this context will say device 0 */
    d->ctxs[d->n_ctx++] = (ctx_slot){ context, device, null_stream };
}

static int ctx_null_stream(const cupti_decoder *d, uint32_t context)
{
    for (size_t i = 0; i < d->n_ctx; i++)
        if (d->ctxs[i].context == context)
            return d->ctxs[i].null_stream;
    return -1;
}

/* Describe a stream the first time it is seen (spec §7.22), and again if
 * it turns out to be the context's default stream.  Streams are few and
 * activities on one stream come in runs, so a list with a last-hit
 * cache does. */
static trc_status stream_note(cupti_decoder *d, uint32_t device, uint32_t context, uint32_t stream,
                              uint32_t flags)
{
    stream_slot *e = NULL;
    trc_gpu_stream s;
    trc_status st;

    if (stream == NO_STREAM)
        return TRC_OK;
    if (ctx_null_stream(d, context) == (int32_t)stream)
        flags |= TRC_STREAM_DEFAULT;
    if (d->stream_last < d->n_streams && d->streams[d->stream_last].context == context &&
        d->streams[d->stream_last].stream == stream)
        e = &d->streams[d->stream_last];
    for (size_t i = 0; !e && i < d->n_streams; i++)
        if (d->streams[i].context == context && d->streams[i].stream == stream) {
            e = &d->streams[i];
            d->stream_last = i;
        }
    if (e && (e->flags & flags) == flags)
        return TRC_OK;
    if (e)
        flags |= e->flags;
    memset(&s, 0, sizeof s);
    s.pid = d->pid;
    s.device = device;
    s.context = context;
    s.stream = stream;
    s.flags = flags;
    s.name = "";
    st = trc_writer_gpu_stream(d->w, &s);
    if (st != TRC_OK)
        return st;
    if (e) {
        e->flags = flags;
        return TRC_OK;
    }
    if (trcu_grow((void **)&d->streams, &d->stream_cap, d->n_streams, sizeof *d->streams) != TRC_OK)
        return TRC_OK;   /* not remembered: described again next time (the writer skips it) */
    d->stream_last = d->n_streams;
    d->streams[d->n_streams++] = (stream_slot){ context, stream, flags };
    return TRC_OK;
}

/* ---- time ------------------------------------------------------------ */

/* 1 and the mapped interval when [start, end] is usable.  CUPTI leaves 0
 * where it could not take a timestamp; such a record would sit at the
 * clock's origin and break every view's ordering, so it is dropped and
 * counted instead. */
static int map_time(cupti_decoder *d, uint64_t start, uint64_t end, int64_t *s, int64_t *e)
{
    if (start == 0 || end == 0 || end < start || start > (uint64_t)INT64_MAX ||
        end > (uint64_t)INT64_MAX) {
        d->st.bad_time++;
        d->bad_pending++;
        return 0;
    }
    *s = (int64_t)start + d->offset;
    *e = (int64_t)end + d->offset;
    return 1;
}

static trc_mem_kind mem_kind(unsigned k)
{
    return k <= TRC_MEM_MANAGED_STATIC ? (trc_mem_kind)k : TRC_MEM_UNKNOWN;
}

static trc_copy_kind copy_kind(unsigned k)
{
    return k <= TRC_COPY_PTOP ? (trc_copy_kind)k : TRC_COPY_UNKNOWN;
}

/* ---- one decoder per kind ------------------------------------------- */

static trc_status do_kernel(cupti_decoder *d, const CUpti_ActivityKernel10 *r)
{
    trc_gpu_kernel k;
    memset(&k, 0, sizeof k);
    if (!map_time(d, r->start, r->end, &k.start_ns, &k.end_ns)) {
        /* the injection watches these: a broken timestamp callback */
        if (r->start == 0 || r->end == 0)
            d->st.zero_kernels++;
        return TRC_OK;
    }
    k.where = (trc_gpu_where){ d->pid, r->deviceId, r->contextId, r->streamId, r->correlationId };
    k.name = r->name ? cupti_demangle(d->dm, r->name) : "<unknown kernel>";
    k.grid[0] = (uint32_t)r->gridX;
    k.grid[1] = (uint32_t)r->gridY;
    k.grid[2] = (uint32_t)r->gridZ;
    k.block[0] = (uint32_t)r->blockX;
    k.block[1] = (uint32_t)r->blockY;
    k.block[2] = (uint32_t)r->blockZ;
    k.registers = r->registersPerThread;
    k.static_smem = r->staticSharedMemory > 0 ? (uint32_t)r->staticSharedMemory : 0;
    k.dynamic_smem = r->dynamicSharedMemory > 0 ? (uint32_t)r->dynamicSharedMemory : 0;
    /* a kernel node of a CUDA graph: its correlation id is the graph
     * launch's, so it is charged to the line that replayed the graph */
    k.graph = r->graphId;
    k.graph_node = r->graphNodeId;
    d->st.kernels++;
    trc_status st = stream_note(d, k.where.device, k.where.context, k.where.stream, 0);
    if (st != TRC_OK)
        return st;
    return trc_writer_gpu_kernel(d->w, &k);
}

/* Both copy records (same-device and peer) end the same way: count,
 * describe the stream on first sight, write. */
static trc_status emit_memcpy(cupti_decoder *d, const trc_gpu_memcpy *m)
{
    d->st.memcpys++;
    trc_status st = stream_note(d, m->where.device, m->where.context, m->where.stream, 0);
    if (st != TRC_OK)
        return st;
    return trc_writer_gpu_memcpy(d->w, m);
}

static trc_status do_memcpy(cupti_decoder *d, const CUpti_ActivityMemcpy6 *r)
{
    trc_gpu_memcpy m;
    memset(&m, 0, sizeof m);
    if (!map_time(d, r->start, r->end, &m.start_ns, &m.end_ns))
        return TRC_OK;
    m.where = (trc_gpu_where){ d->pid, r->deviceId, r->contextId, r->streamId, r->correlationId };
    m.bytes = r->bytes;
    m.copy_kind = copy_kind(r->copyKind);
    m.src_kind = mem_kind(r->srcKind);
    m.dst_kind = mem_kind(r->dstKind);
    m.dst_device = r->deviceId;
    return emit_memcpy(d, &m);
}

static trc_status do_memcpy_p2p(cupti_decoder *d, const CUpti_ActivityMemcpyPtoP4 *r)
{
    trc_gpu_memcpy m;
    memset(&m, 0, sizeof m);
    if (!map_time(d, r->start, r->end, &m.start_ns, &m.end_ns))
        return TRC_OK;
    m.where = (trc_gpu_where){ d->pid, r->deviceId, r->contextId, r->streamId, r->correlationId };
    m.bytes = r->bytes;
    m.copy_kind = copy_kind(r->copyKind);
    if (m.copy_kind == TRC_COPY_UNKNOWN)
        m.copy_kind = TRC_COPY_PTOP;
    m.src_kind = mem_kind(r->srcKind);
    m.dst_kind = mem_kind(r->dstKind);
    m.dst_device = r->dstDeviceId;
    return emit_memcpy(d, &m);
}

static trc_status do_memset(cupti_decoder *d, const CUpti_ActivityMemset4 *r)
{
    trc_gpu_memset m;
    memset(&m, 0, sizeof m);
    if (!map_time(d, r->start, r->end, &m.start_ns, &m.end_ns))
        return TRC_OK;
    m.where = (trc_gpu_where){ d->pid, r->deviceId, r->contextId, r->streamId, r->correlationId };
    m.bytes = r->bytes;
    m.value = r->value;
    m.mem_kind = mem_kind(r->memoryKind);
    d->st.memsets++;
    trc_status st = stream_note(d, m.where.device, m.where.context, m.where.stream, 0);
    if (st != TRC_OK)
        return st;
    return trc_writer_gpu_memset(d->w, &m);
}

static trc_status do_sync(cupti_decoder *d, const CUpti_ActivitySynchronization2 *r)
{
    trc_gpu_sync s;
    memset(&s, 0, sizeof s);
    if (!map_time(d, r->start, r->end, &s.start_ns, &s.end_ns))
        return TRC_OK;
    s.where = (trc_gpu_where){ d->pid, ctx_device(d, r->contextId), r->contextId, r->streamId,
                               r->correlationId };
    s.sync_kind = r->type <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
                      ? (trc_sync_kind)r->type : TRC_SYNC_UNKNOWN;
    d->st.syncs++;
    trc_status st = stream_note(d, s.where.device, s.where.context, s.where.stream, 0);
    if (st != TRC_OK)
        return st;
    return trc_writer_gpu_sync(d->w, &s);
}

static trc_status do_api(cupti_decoder *d, const CUpti_ActivityAPI *r)
{
    CUpti_CallbackDomain dom = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME
                                   ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    unsigned cls = cupti_names_class(d->names, dom, r->cbid);
    trc_api_call a;
    trc_status st;
    uint32_t stack = 0, flags = 0, capture_ns = 0, tid = 0;

    if (cls & CUPTI_NAME_NOISY) {
        d->st.filtered++;
        return TRC_OK;
    }
    memset(&a, 0, sizeof a);
    if (!map_time(d, r->start, r->end, &a.start_ns, &a.end_ns))
        return TRC_OK;
    if (d->launch &&
        cupti_launch_take(d->launch, r->correlationId, &stack, &flags, &capture_ns, &tid))
        d->st.launch_stacks++;
    /* where the record's thread id is a pthread handle, the launching
     * thread's kernel id parked at its callback */
    st = cupti_decode_thread(d, r->processId ? (int64_t)r->processId : d->pid,
                             d->parked_tids && tid ? (int64_t)tid : (int64_t)r->threadId,
                             &a.thread);
    if (st != TRC_OK)
        return st;
    a.domain = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? TRC_API_RUNTIME : TRC_API_DRIVER;
    a.name = cupti_names_get(d->names, dom, r->cbid);
    a.correlation = r->correlationId;
    a.stack = stack;
    a.result = (int32_t)r->returnValue;
    a.flags = flags | ((cls & CUPTI_NAME_LAUNCH) ? TRC_API_LAUNCH : 0) |
              ((cls & CUPTI_NAME_SYNC) ? TRC_API_SYNC : 0);
    a.capture_ns = capture_ns;
    if ((cls & CUPTI_NAME_GRAPH) && d->launch)
        cupti_launch_take_graph(d->launch, r->correlationId, &a.graph, &a.graph_exec);
    d->st.api_calls++;
    return trc_writer_api_call(d->w, &a);
}

static trc_status do_device(cupti_decoder *d, const CUpti_ActivityDevice5 *r)
{
    trc_gpu_device g;
    memset(&g, 0, sizeof g);
    g.device = r->id;
    g.name = r->name ? r->name : "";
    memcpy(g.uuid, r->uuid.bytes, sizeof g.uuid);
    g.sm_count = r->numMultiprocessors;
    g.memory_bytes = r->globalMemorySize;
    g.cc_major = r->computeCapabilityMajor;
    g.cc_minor = r->computeCapabilityMinor;
    d->st.devices++;
    return trc_writer_gpu_device(d->w, &g);
}

/* A context (spec §7.21) and its NULL stream, the default one. */
static trc_status do_context(cupti_decoder *d, const CUpti_ActivityContext3 *r)
{
    trc_gpu_context c;
    trc_status st;

    ctx_note(d, r->contextId, r->deviceId, (int32_t)r->nullStreamId);
    d->st.contexts++;
    memset(&c, 0, sizeof c);
    c.pid = d->pid;
    c.device = r->deviceId;
    c.context = r->contextId;
    st = trc_writer_gpu_context(d->w, &c);
    if (st != TRC_OK)
        return st;
    return stream_note(d, r->deviceId, r->contextId, r->nullStreamId, TRC_STREAM_DEFAULT);
}

static const char *overhead_name(CUpti_ActivityOverheadKind k)
{
    switch ((unsigned)k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "CUPTI overhead: driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI overhead: buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI overhead: instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI overhead: resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
        return "CUPTI overhead: module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "CUPTI overhead: lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "CUPTI overhead: command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "CUPTI overhead: buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "CUPTI overhead: UVM init";
    default: return "CUPTI overhead";
    }
}

static trc_status do_overhead(cupti_decoder *d, const CUpti_ActivityOverhead3 *r)
{
    trc_marker m;
    trc_status st;
    memset(&m, 0, sizeof m);
    if (!map_time(d, r->start, r->end, &m.start_ns, &m.end_ns))
        return TRC_OK;
    m.kind = TRC_MARK_RANGE;
    m.pid = d->pid;
    if (r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
        st = cupti_decode_thread(d, r->objectId.pt.processId ? (int64_t)r->objectId.pt.processId
                                                              : d->pid,
                                 (int64_t)r->objectId.pt.threadId, &m.thread);
        if (st != TRC_OK)
            return st;
    }
    m.name = overhead_name(r->overheadKind);
    m.domain = "cupti";
    d->st.overheads++;
    return trc_writer_marker(d->w, &m);
}

/* ---- NVTX markers ------------------------------------------------------ */

static const char *marker_domain(const char *cupti_domain, char *buf, size_t len)
{
    if (!cupti_domain || !*cupti_domain)
        return "nvtx";
    snprintf(buf, len, "nvtx/%s", cupti_domain);
    return buf;
}

static open_range *range_find(cupti_decoder *d, uint32_t id)
{
    for (size_t i = d->n_ranges; i-- > 0;)
        if (d->ranges[i].id == id)
            return &d->ranges[i];
    return NULL;
}

static void range_drop(cupti_decoder *d, open_range *r)
{
    trc_free(r->name);
    trc_free(r->domain);
    *r = d->ranges[--d->n_ranges];
}

static trc_status do_marker(cupti_decoder *d, const CUpti_ActivityMarker2 *r)
{
    trc_marker m;
    char dom[160];
    trc_status st;
    int64_t t, t2;

    memset(&m, 0, sizeof m);
    if (!map_time(d, r->timestamp, r->timestamp, &t, &t2))
        return TRC_OK;
    m.pid = d->pid;
    if (r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
        st = cupti_decode_thread(d, r->objectId.pt.processId ? (int64_t)r->objectId.pt.processId
                                                              : d->pid,
                                 (int64_t)r->objectId.pt.threadId, &m.thread);
        if (st != TRC_OK)
            return st;
    }
    m.name = r->name ? r->name : "";
    m.domain = marker_domain(r->domain, dom, sizeof dom);
    m.id = r->id;
    m.start_ns = m.end_ns = t;
    d->st.markers++;
    if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        open_range *o;
        if (d->n_ranges == MAX_OPEN_RANGES) {
            m.kind = TRC_MARK_PUSH;   /* no room to pair it: say where it began */
            return trc_writer_marker(d->w, &m);
        }
        o = &d->ranges[d->n_ranges];
        o->name = trc_strdup(m.name);
        o->domain = trc_strdup(m.domain);
        if (!o->name || !o->domain) {
            trc_free(o->name);
            trc_free(o->domain);
            return TRC_ERR_NOMEM;
        }
        o->id = r->id;
        o->start_ns = t;
        o->thread = m.thread;
        o->color = 0;
        d->n_ranges++;
        return TRC_OK;
    }
    if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        open_range *o = range_find(d, r->id);
        if (!o) {
            m.kind = TRC_MARK_POP;   /* its start was lost or never seen */
            return trc_writer_marker(d->w, &m);
        }
        m.kind = TRC_MARK_RANGE;
        m.start_ns = o->start_ns;
        m.name = o->name;            /* END records of push/pop ranges carry no name */
        m.domain = o->domain;
        m.thread = o->thread ? o->thread : m.thread;
        m.color = o->color;
        st = trc_writer_marker(d->w, &m);
        range_drop(d, o);
        return st;
    }
    m.kind = TRC_MARK_INSTANT;
    return trc_writer_marker(d->w, &m);
}

static trc_status do_marker_data(cupti_decoder *d, const CUpti_ActivityMarkerData2 *r)
{
    open_range *o = range_find(d, r->id);
    if (o && (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB))
        o->color = r->color & 0xFFFFFFu;
    return TRC_OK;
}

trc_status cupti_decode_record(cupti_decoder *d, const CUpti_Activity *rec)
{
    d->st.records++;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return do_kernel(d, (const CUpti_ActivityKernel10 *)rec);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return do_memcpy(d, (const CUpti_ActivityMemcpy6 *)rec);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return do_memcpy_p2p(d, (const CUpti_ActivityMemcpyPtoP4 *)rec);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return do_memset(d, (const CUpti_ActivityMemset4 *)rec);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return do_sync(d, (const CUpti_ActivitySynchronization2 *)rec);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return do_api(d, (const CUpti_ActivityAPI *)rec);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
        return do_overhead(d, (const CUpti_ActivityOverhead3 *)rec);
    case CUPTI_ACTIVITY_KIND_MARKER:
        return do_marker(d, (const CUpti_ActivityMarker2 *)rec);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
        return do_marker_data(d, (const CUpti_ActivityMarkerData2 *)rec);
    case CUPTI_ACTIVITY_KIND_DEVICE:
        return do_device(d, (const CUpti_ActivityDevice5 *)rec);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
        return do_context(d, (const CUpti_ActivityContext3 *)rec);
    default:
        d->st.unknown++;
        return TRC_OK;
    }
}

static trc_status loss(cupti_decoder *d, uint64_t count, const char *detail)
{
    trc_loss l;
    memset(&l, 0, sizeof l);
    l.kind = TRC_LOSS_GPU_DROPPED;
    l.count = count;
    l.pid = d->pid;
    l.detail = detail;
    return trc_writer_loss(d->w, &l);
}

trc_status cupti_decode_buffer_end(cupti_decoder *d, uint64_t dropped)
{
    trc_status st = TRC_OK;
    if (d->bad_pending) {
        st = loss(d, d->bad_pending, "CUPTI records without valid timestamps");
        d->bad_pending = 0;
    }
    if (dropped) {
        d->st.dropped += dropped;
        trc_status st2 = loss(d, dropped, "CUPTI activity records dropped (buffer full)");
        if (st == TRC_OK)
            st = st2;
    }
    return st;
}

trc_status cupti_decode_finish(cupti_decoder *d)
{
    trc_status st = cupti_decode_buffer_end(d, 0);
    while (d->n_ranges) {
        open_range *o = &d->ranges[d->n_ranges - 1];
        trc_marker m;
        memset(&m, 0, sizeof m);
        m.kind = TRC_MARK_PUSH;
        m.thread = o->thread;
        m.pid = d->pid;
        m.start_ns = m.end_ns = o->start_ns;
        m.name = o->name;
        m.domain = o->domain;
        m.color = o->color;
        m.id = o->id;
        trc_status st2 = trc_writer_marker(d->w, &m);
        if (st == TRC_OK)
            st = st2;
        range_drop(d, o);
    }
    return st;
}
