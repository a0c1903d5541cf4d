/*
 * tests/unit/cupti/test_gpu_decode.c — the CUPTI record decoder and API names
 * (lib/cupti/decode.c, apinames.c; version.c's release facts) against CUPTI 13's own structs, read
 * back with the public reader.  Built with the CUPTI headers by
 * mk/cupti.mk; without them it only reports a skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#ifndef TRC_HAVE_CUPTI
int main(void)
{
    printf("skip: built without the CUPTI headers\n");
    return 0;
}
#else

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cupti/apinames.h"
#include "lib/cupti/decode.h"
#include "lib/cupti/launch.h"
#include "lib/cupti/version.h"
#include "tests/gpu/fake_cupti.h"
#include "tests/gpu/trace_check.h"

#define T0 1000000000000ull   /* CUPTI timestamps used below */
#define OFFSET (-999000000000ll)

static void test_strip(void **state)
{
    char b[64];
    cupti_name_strip("cudaLaunchKernel_v7000", b, sizeof b);
    assert_string_equal(b, "cudaLaunchKernel");
    cupti_name_strip("cudaMemcpyAsync_ptsz_v7000", b, sizeof b);
    assert_string_equal(b, "cudaMemcpyAsync");
    cupti_name_strip("cuMemcpyHtoD_v2", b, sizeof b);
    assert_string_equal(b, "cuMemcpyHtoD");
    cupti_name_strip("cuLaunchKernel_ptsz", b, sizeof b);
    assert_string_equal(b, "cuLaunchKernel");
    cupti_name_strip("cuLaunchKernelEx", b, sizeof b);
    assert_string_equal(b, "cuLaunchKernelEx");
    cupti_name_strip("_v2", b, sizeof b);          /* nothing left to strip to */
    assert_string_equal(b, "_v2");
    cupti_name_strip("cudaFoo_v", b, sizeof b);    /* no digits: not a version */
    assert_string_equal(b, "cudaFoo_v");
}

static void test_classify(void **state)
{
    assert_int_equal(cupti_name_classify("cudaLaunchKernel"), CUPTI_NAME_LAUNCH);
    assert_int_equal(cupti_name_classify("cuLaunchKernelEx"), CUPTI_NAME_LAUNCH);
    assert_int_equal(cupti_name_classify("cudaMemcpyAsync"), CUPTI_NAME_LAUNCH);
    assert_int_equal(cupti_name_classify("cudaMemsetAsync"), CUPTI_NAME_LAUNCH);
    assert_int_equal(cupti_name_classify("cudaGraphLaunch"), CUPTI_NAME_LAUNCH);
    assert_int_equal(cupti_name_classify("cudaGetDevice"), CUPTI_NAME_NOISY);
    assert_int_equal(cupti_name_classify("cuCtxGetCurrent"), CUPTI_NAME_NOISY);
    assert_int_equal(cupti_name_classify("cudaStreamQuery"), CUPTI_NAME_NOISY);
    assert_int_equal(cupti_name_classify("cudaDeviceReset"), CUPTI_NAME_FLUSH);
    assert_int_equal(cupti_name_classify("cudaMalloc"), 0);
    /* the calls that can make the host wait, and the graph captures' ends */
    assert_int_equal(cupti_name_classify("cudaStreamSynchronize"), CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cudaDeviceSynchronize"), CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cudaEventSynchronize"), CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cudaStreamWaitEvent"), CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cuCtxSynchronize"), CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cuStreamSynchronize"), CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cuEventSynchronize"), CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cudaMemcpy"), CUPTI_NAME_LAUNCH | CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cudaMemcpy2D"), CUPTI_NAME_LAUNCH | CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cudaMemcpy3D"), CUPTI_NAME_LAUNCH | CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cudaMemset"), CUPTI_NAME_LAUNCH | CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cuMemcpyDtoH"), CUPTI_NAME_LAUNCH | CUPTI_NAME_SYNC);
    assert_int_equal(cupti_name_classify("cuMemcpy2DAsync"), CUPTI_NAME_LAUNCH);
    assert_int_equal(cupti_name_classify("cuMemcpyDtoHAsync"), CUPTI_NAME_LAUNCH);
    assert_int_equal(cupti_name_classify("cudaStreamEndCapture"), CUPTI_NAME_GRAPH);
    assert_int_equal(cupti_name_classify("cuGraphInstantiateWithFlags"),
                     CUPTI_NAME_GRAPH | CUPTI_NAME_INSTANTIATE);
    assert_int_equal(cupti_name_classify("cudaGraphInstantiate"),
                     CUPTI_NAME_GRAPH | CUPTI_NAME_INSTANTIATE);
    assert_int_equal(cupti_name_classify("cudaStreamBeginCapture"), 0);
}

static void test_names_table(void **state)
{
    cupti_api api;
    fake_cupti_table(&api, NULL);
    cupti_names *n = cupti_names_new(&api);
    assert_non_null(n);
    assert_string_equal(cupti_names_get(n, CUPTI_CB_DOMAIN_RUNTIME_API,
                                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000),
                        "cudaLaunchKernel");
    assert_int_equal(cupti_names_class(n, CUPTI_CB_DOMAIN_DRIVER_API,
                                       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
                     CUPTI_NAME_LAUNCH);
    assert_int_equal(cupti_names_class(n, CUPTI_CB_DOMAIN_RUNTIME_API,
                                       CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020),
                     CUPTI_NAME_NOISY);
    /* ids CUPTI cannot name, and ids out of range */
    assert_string_equal(cupti_names_get(n, CUPTI_CB_DOMAIN_RUNTIME_API, 7), "cbid 7");
    assert_int_equal(cupti_names_class(n, CUPTI_CB_DOMAIN_RUNTIME_API, 100000), 0);
    assert_string_equal(cupti_names_get(n, CUPTI_CB_DOMAIN_RESOURCE, 1), "cbid 1");
    cupti_names_free(n);
}

static void test_demangle(void **state)
{
    cupti_demangler *d = cupti_demangler_new();
    char name[] = "_Z9vectorAddPKfS0_Pfi";
    assert_non_null(d);
    const char *a = cupti_demangle(d, name);
    assert_string_equal(a, "vectorAdd(float const*, float const*, float*, int)");
    assert_ptr_equal(cupti_demangle(d, name), a);   /* cached */
    /* same pointer, new text (CUPTI freed and reused the memory) */
    strcpy(name, "_Z3foov");
    assert_string_equal(cupti_demangle(d, name), "foo()");
    assert_string_equal(cupti_demangle(d, "ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
    assert_string_equal(cupti_demangle(d, "_Znot a name"), "_Znot a name");
    /* more distinct kernels than the cache keeps: it starts over, and
     * every name still comes out right, the first ones again too */
    static char many[5000][24];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 5000; i++) {
            char want[24];
            snprintf(many[i], sizeof many[i], "_Z5k%04dv", i);
            snprintf(want, sizeof want, "k%04d()", i);
            assert_string_equal(cupti_demangle(d, many[i]), want);
        }
    }
    cupti_demangler_free(d);
}

/* The fake's record walker is libcupti's layout: compare offsets with
 * the real cuptiActivityGetNextRecord when libcupti loads here. */
static void test_layout_matches_libcupti(void **state)
{
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_MARKER,
        CUPTI_ACTIVITY_KIND_MARKER_DATA, CUPTI_ACTIVITY_KIND_DEVICE,
        CUPTI_ACTIVITY_KIND_CONTEXT,
    };
    size_t n = sizeof kinds / sizeof kinds[0], valid = 0, offs[16];
    uint8_t *buf = aligned_alloc(8, 8192);
    cupti_api real;
    char err[256];

    assert_non_null(buf);
    memset(buf, 0, 8192);
    for (size_t i = 0; i < n; i++) {
        offs[i] = valid;
        ((CUpti_Activity *)(buf + valid))->kind = kinds[i];
        assert_int_equal(fake_cupti_record_size(kinds[i]) % 8, 0);
        valid += fake_cupti_record_size(kinds[i]);
    }
    CUpti_Activity *rec = NULL;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(fake_cupti_next_record(buf, valid, &rec), CUPTI_SUCCESS);
        assert_ptr_equal(rec, buf + offs[i]);
    }
    assert_int_equal(fake_cupti_next_record(buf, valid, &rec), CUPTI_ERROR_MAX_LIMIT_REACHED);

    if (cupti_api_load(&real, err, sizeof err) != 0) {
        printf("note: real libcupti not loadable (%s): layout checked against the fake only\n",
               err);
        free(buf);
        return;
    }
    rec = NULL;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(real.ActivityGetNextRecord(buf, valid, &rec), CUPTI_SUCCESS);
        assert_ptr_equal(rec, buf + offs[i]);
    }
    assert_int_equal(real.ActivityGetNextRecord(buf, valid, &rec), CUPTI_ERROR_MAX_LIMIT_REACHED);
    free(buf);
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct dec_env {
    char path[64];
    int fd;
    trc_writer *w;
    cupti_api api;
    cupti_names *names;
    cupti_demangler *dm;
    cupti_launch *launch;
    cupti_decoder *d;
} dec_env;

static int fd_write(void *ctx, const void *buf, size_t len)
{
    return write(*(int *)ctx, buf, len) == (ssize_t)len ? 0 : -1;
}

static void env_open(dec_env *e)
{
    trc_writer_options o;
    trc_status st;
    memset(e, 0, sizeof *e);
    strcpy(e->path, "/tmp/trc-gpu-decode-XXXXXX");
    e->fd = mkstemp(e->path);
    assert_true(e->fd >= 0);
    memset(&o, 0, sizeof o);
    o.start_ns = 1000;
    o.host = "test";
    e->w = trc_writer_open_callback(fd_write, &e->fd, &o, &st);
    assert_non_null(e->w);
    fake_cupti_table(&e->api, NULL);
    e->names = cupti_names_new(&e->api);
    e->dm = cupti_demangler_new();
    e->launch = cupti_launch_new();
    e->d = cupti_decoder_new(e->w, 77, e->names, e->dm, e->launch, 0);
    assert_non_null(e->d);
    cupti_decoder_set_clock_offset(e->d, OFFSET);
}

static void env_close(dec_env *e, tc_trace *t)
{
    assert_int_equal(cupti_decode_finish(e->d), TRC_OK);
    assert_int_equal(trc_writer_close(e->w, 0), TRC_OK);
    close(e->fd);
    assert_int_equal(tc_load(e->path, t), TRC_OK);
    assert_int_equal(t->reader_losses, 0);
    unlink(e->path);
    cupti_decoder_free(e->d);
    cupti_launch_free(e->launch);
    cupti_demangler_free(e->dm);
    cupti_names_free(e->names);
}

static void dec(dec_env *e, const void *rec)
{
    assert_int_equal(cupti_decode_record(e->d, (const CUpti_Activity *)rec), TRC_OK);
}

static void test_decode_activities(void **state)
{
    dec_env e;
    tc_trace t;
    CUpti_ActivityKernel10 k;
    CUpti_ActivityMemcpy6 m;
    CUpti_ActivityMemcpyPtoP4 p;
    CUpti_ActivityMemset4 s;
    CUpti_ActivitySynchronization2 y;
    CUpti_ActivityContext3 c;
    CUpti_ActivityDevice5 dv;
    cupti_decode_stats ds;

    env_open(&e);
    memset(&dv, 0, sizeof dv);
    dv.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    dv.id = 1;
    dv.name = "GPU one";
    dv.numMultiprocessors = 80;
    dv.globalMemorySize = 1ull << 34;
    dv.computeCapabilityMajor = 8;
    dv.computeCapabilityMinor = 6;
    dv.uuid.bytes[0] = 0x5a;
    dv.uuid.bytes[15] = 0x7f;
    dec(&e, &dv);
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = 9;
    c.deviceId = 1;
    dec(&e, &c);

    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = T0 + 100;
    k.end = T0 + 350;
    k.deviceId = 1;
    k.contextId = 9;
    k.streamId = 22;
    k.gridX = 3; k.gridY = 4; k.gridZ = 5;
    k.blockX = 64; k.blockY = 2; k.blockZ = 1;
    k.registersPerThread = 40;
    k.staticSharedMemory = 128;
    k.dynamicSharedMemory = -1;       /* never negative in the trace */
    k.correlationId = 31;
    k.name = "_Z9vectorAddPKfS0_Pfi";
    dec(&e, &k);
    k.start = 0;                      /* missing timestamps: dropped, counted */
    dec(&e, &k);
    k.start = T0 + 400;
    k.end = T0 + 300;                 /* reversed */
    dec(&e, &k);

    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.bytes = 4096;
    m.start = T0 + 500;
    m.end = T0 + 600;
    m.deviceId = 1;
    m.contextId = 9;
    m.streamId = 22;
    m.correlationId = 32;
    dec(&e, &m);
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.bytes = 1 << 20;
    p.start = T0 + 700;
    p.end = T0 + 900;
    p.deviceId = 1;
    p.srcDeviceId = 1;
    p.dstDeviceId = 2;
    p.contextId = 9;
    p.streamId = 23;
    p.correlationId = 33;
    dec(&e, &p);
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.value = 0xab;
    s.bytes = 64;
    s.start = T0 + 1000;
    s.end = T0 + 1010;
    s.deviceId = 1;
    s.contextId = 9;
    s.streamId = 22;
    s.correlationId = 34;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    dec(&e, &s);
    memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    y.start = T0 + 1100;
    y.end = T0 + 1200;
    y.correlationId = 35;
    y.contextId = 9;
    y.streamId = 22;
    dec(&e, &y);
    assert_int_equal(cupti_decode_buffer_end(e.d, 5), TRC_OK);
    cupti_decode_get_stats(e.d, &ds);
    assert_int_equal(ds.kernels, 1);
    assert_int_equal(ds.bad_time, 2);
    assert_int_equal(ds.dropped, 5);
    env_close(&e, &t);

    assert_int_equal(tc_count(&t, TRC_EV_GPU_DEVICE), 1);
    const tc_event *ev = tc_nth(&t, TRC_EV_GPU_DEVICE, 0);
    assert_string_equal(ev->name, "GPU one");
    assert_int_equal(ev->u.device.device, 1);
    assert_int_equal(ev->u.device.sm_count, 80);
    assert_int_equal(ev->u.device.memory_bytes, 1ull << 34);
    assert_int_equal(ev->u.device.cc_major, 8);
    assert_int_equal(ev->u.device.uuid[0], 0x5a);
    assert_int_equal(ev->u.device.uuid[15], 0x7f);

    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), 1);
    ev = tc_nth(&t, TRC_EV_GPU_KERNEL, 0);
    assert_string_equal(ev->name, "vectorAdd(float const*, float const*, float*, int)");
    assert_int_equal(ev->u.kernel.start_ns, (int64_t)(T0 + 100) + OFFSET);
    assert_int_equal(ev->u.kernel.end_ns, (int64_t)(T0 + 350) + OFFSET);
    assert_int_equal(ev->u.kernel.where.pid, 77);
    assert_int_equal(ev->u.kernel.where.device, 1);
    assert_int_equal(ev->u.kernel.where.context, 9);
    assert_int_equal(ev->u.kernel.where.stream, 22);
    assert_int_equal(ev->u.kernel.where.correlation, 31);
    assert_int_equal(ev->u.kernel.grid[2], 5);
    assert_int_equal(ev->u.kernel.block[0], 64);
    assert_int_equal(ev->u.kernel.registers, 40);
    assert_int_equal(ev->u.kernel.static_smem, 128);
    assert_int_equal(ev->u.kernel.dynamic_smem, 0);

    assert_int_equal(tc_count(&t, TRC_EV_GPU_MEMCPY), 2);
    ev = tc_nth(&t, TRC_EV_GPU_MEMCPY, 0);
    assert_int_equal(ev->u.memcpy.copy_kind, TRC_COPY_DTOH);
    assert_int_equal(ev->u.memcpy.src_kind, TRC_MEM_DEVICE);
    assert_int_equal(ev->u.memcpy.dst_kind, TRC_MEM_PINNED);
    assert_int_equal(ev->u.memcpy.bytes, 4096);
    assert_int_equal(ev->u.memcpy.dst_device, 1);
    ev = tc_nth(&t, TRC_EV_GPU_MEMCPY, 1);
    assert_int_equal(ev->u.memcpy.copy_kind, TRC_COPY_PTOP);
    assert_int_equal(ev->u.memcpy.dst_device, 2);
    assert_int_equal(ev->u.memcpy.where.stream, 23);
    ev = tc_nth(&t, TRC_EV_GPU_MEMSET, 0);
    assert_non_null(ev);
    assert_int_equal(ev->u.memset.value, 0xab);
    assert_int_equal(ev->u.memset.mem_kind, TRC_MEM_MANAGED);
    ev = tc_nth(&t, TRC_EV_GPU_SYNC, 0);
    assert_non_null(ev);
    assert_int_equal(ev->u.sync.sync_kind, TRC_SYNC_STREAM_WAIT_EVENT);
    assert_int_equal(ev->u.sync.where.device, 1);    /* from the context record */
    assert_int_equal(ev->u.sync.where.correlation, 35);

    /* one loss for the two bad timestamps, one for the dropped records */
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 2);
    ev = tc_nth(&t, TRC_EV_LOSS, 0);
    assert_int_equal(ev->u.loss.kind, TRC_LOSS_GPU_DROPPED);
    assert_int_equal(ev->u.loss.count, 2);
    assert_non_null(strstr(ev->detail, "timestamps"));
    ev = tc_nth(&t, TRC_EV_LOSS, 1);
    assert_int_equal(ev->u.loss.count, 5);
    assert_int_equal(ev->u.loss.pid, 77);
    tc_free(&t);
}

/* Contexts and streams (spec §7.21–22): a stream is described the first
 * time an activity names it, once only; when its context's record later
 * says it is the NULL stream, it is described again as the default
 * stream.  A context synchronisation (no stream) describes none. */
static void kernel_on(dec_env *e, uint32_t context, uint32_t stream, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = T0 + corr * 100;
    k.end = k.start + 50;
    k.deviceId = 2;
    k.contextId = context;
    k.streamId = stream;
    k.correlationId = corr;
    k.name = "k";
    dec(e, &k);
}

static void test_decode_streams(void **state)
{
    dec_env e;
    tc_trace t;
    CUpti_ActivityContext3 c;
    CUpti_ActivitySynchronization2 y;

    env_open(&e);
    kernel_on(&e, 5, 3, 1);
    kernel_on(&e, 5, 3, 2);
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = 5;
    c.deviceId = 2;
    c.nullStreamId = 3;
    dec(&e, &c);
    kernel_on(&e, 5, 4, 3);
    kernel_on(&e, 5, 3, 4);
    memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    y.start = T0 + 900;
    y.end = T0 + 950;
    y.contextId = 5;
    y.streamId = 0xFFFFFFFFu;
    y.correlationId = 5;
    dec(&e, &y);
    env_close(&e, &t);

    assert_int_equal(tc_count(&t, TRC_EV_GPU_CONTEXT), 1);
    const tc_event *ev = tc_nth(&t, TRC_EV_GPU_CONTEXT, 0);
    assert_int_equal(ev->u.context.pid, 77);
    assert_int_equal(ev->u.context.device, 2);
    assert_int_equal(ev->u.context.context, 5);
    static const struct { uint32_t stream, flags; } want[] = {
        { 3, 0 }, { 3, TRC_STREAM_DEFAULT }, { 4, 0 },
    };
    assert_int_equal(tc_count(&t, TRC_EV_GPU_STREAM), 3);
    for (size_t i = 0; i < 3; i++) {
        ev = tc_nth(&t, TRC_EV_GPU_STREAM, i);
        assert_int_equal(ev->u.stream.pid, 77);
        assert_int_equal(ev->u.stream.device, 2);
        assert_int_equal(ev->u.stream.context, 5);
        assert_int_equal(ev->u.stream.stream, want[i].stream);
        assert_int_equal(ev->u.stream.flags, want[i].flags);
        assert_int_equal(ev->u.stream.priority, 0);
        assert_string_equal(ev->name, "");
    }
    /* the re-description comes after the context it depends on */
    size_t ctx_at = 0, default_at = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.ev[i].type == TRC_EV_GPU_CONTEXT)
            ctx_at = i;
        if (t.ev[i].type == TRC_EV_GPU_STREAM && t.ev[i].u.stream.flags == TRC_STREAM_DEFAULT)
            default_at = i;
    }
    assert_true(default_at > ctx_at);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_SYNC), 1);
    tc_free(&t);
}

static void api_rec(dec_env *e, CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr,
                    uint32_t tid, uint64_t start)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.cbid = cbid;
    a.start = start;
    a.end = start + 50;
    a.processId = 77;
    a.threadId = tid;
    a.correlationId = corr;
    a.returnValue = corr == 43 ? 2 : 0;
    dec(e, &a);
}

static void test_decode_api(void **state)
{
    dec_env e;
    tc_trace t;
    uint32_t fr, st1, st2;

    env_open(&e);
    /* a parked launch stack, as the API_ENTER callback leaves it */
    assert_int_equal(trc_writer_frame(e.w, TRC_FRAME_PYTHON, "<module>", "train.py", 3, 1, &fr),
                     TRC_OK);
    assert_int_equal(trc_writer_stack(e.w, 0, fr, &st1), TRC_OK);
    assert_int_equal(trc_writer_frame(e.w, TRC_FRAME_PYTHON, "forward", "model.py", 42, 40, &fr),
                     TRC_OK);
    assert_int_equal(trc_writer_stack(e.w, st1, fr, &st2), TRC_OK);
    cupti_launch_put(e.launch, 41, st2, 0, 0, 0);
    cupti_launch_put(e.launch, 44, 0, TRC_API_NO_PYTHON, 0, 0);

    api_rec(&e, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 41,
            1234, T0 + 10);
    api_rec(&e, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 42,
            1234, T0 + 20);
    api_rec(&e, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 43, 1234,
            T0 + 30);
    api_rec(&e, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 44, 1235,
            T0 + 40);
    api_rec(&e, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 45, 1235,
            T0 + 50);
    /* a launch whose stack was never parked (callback missed): LAUNCH, stack unknown */
    api_rec(&e, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 46,
            1234, T0 + 60);
    env_close(&e, &t);

    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 4);
    const tc_event *a = tc_api_by_corr(&t, 41);
    assert_non_null(a);
    assert_string_equal(a->name, "cudaLaunchKernel");
    assert_int_equal(a->u.api.domain, TRC_API_RUNTIME);
    assert_int_equal(a->u.api.flags, TRC_API_LAUNCH);
    assert_int_equal(a->tid, 1234);
    assert_int_equal(a->u.api.start_ns, (int64_t)(T0 + 10) + OFFSET);
    assert_int_equal(a->u.api.end_ns, (int64_t)(T0 + 60) + OFFSET);
    assert_int_equal(a->depth, 2);
    assert_string_equal(a->frames[0].function, "forward");
    assert_int_equal(a->frames[0].line, 42);
    assert_string_equal(a->frames[1].file, "train.py");
    assert_null(tc_api_by_corr(&t, 42));   /* noisy: filtered */
    a = tc_api_by_corr(&t, 43);
    assert_string_equal(a->name, "cudaMalloc");
    assert_int_equal(a->u.api.flags, 0);
    assert_int_equal(a->u.api.result, 2);
    a = tc_api_by_corr(&t, 44);
    assert_string_equal(a->name, "cuLaunchKernel");
    assert_int_equal(a->u.api.domain, TRC_API_DRIVER);
    assert_int_equal(a->u.api.flags, TRC_API_LAUNCH | TRC_API_NO_PYTHON);
    assert_int_equal(a->depth, 0);
    assert_int_equal(a->tid, 1235);
    assert_null(tc_api_by_corr(&t, 45));
    a = tc_api_by_corr(&t, 46);
    assert_string_equal(a->name, "cudaMemcpyAsync");
    assert_int_equal(a->u.api.flags, TRC_API_LAUNCH);
    assert_int_equal(a->u.api.stack, 0);
    tc_free(&t);
}

static void marker(dec_env *e, uint32_t flags, uint32_t id, const char *name, const char *domain,
                   uint32_t tid, uint64_t ts)
{
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = (CUpti_ActivityFlag)flags;
    m.timestamp = ts;
    m.id = id;
    m.objectKind = tid ? CUPTI_ACTIVITY_OBJECT_THREAD : CUPTI_ACTIVITY_OBJECT_PROCESS;
    m.objectId.pt.processId = 77;
    m.objectId.pt.threadId = tid;
    m.name = name;
    m.domain = domain;
    dec(e, &m);
}

static void test_decode_markers(void **state)
{
    dec_env e;
    tc_trace t;
    CUpti_ActivityMarkerData2 md;
    CUpti_ActivityOverhead3 o;

    env_open(&e);
    marker(&e, CUPTI_ACTIVITY_FLAG_MARKER_START, 5, "step", NULL, 1234, T0 + 100);
    memset(&md, 0, sizeof md);
    md.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
    md.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
    md.id = 5;
    md.color = 0xFF123456u;
    dec(&e, &md);
    marker(&e, CUPTI_ACTIVITY_FLAG_MARKER_START, 6, "inner", "mylib", 1234, T0 + 110);
    marker(&e, CUPTI_ACTIVITY_FLAG_MARKER_END, 6, NULL, NULL, 1234, T0 + 120);
    marker(&e, CUPTI_ACTIVITY_FLAG_MARKER_END, 5, NULL, NULL, 1234, T0 + 200);
    marker(&e, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 7, "here", NULL, 0, T0 + 150);
    marker(&e, CUPTI_ACTIVITY_FLAG_MARKER_END, 99, NULL, NULL, 1234, T0 + 210); /* start lost */
    marker(&e, CUPTI_ACTIVITY_FLAG_MARKER_START, 8, "open", NULL, 1234, T0 + 220);
    marker(&e, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 9, "zero", NULL, 0, 0); /* bad time */
    memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.processId = 77;
    o.objectId.pt.threadId = 1236;
    o.start = T0 + 300;
    o.end = T0 + 340;
    dec(&e, &o);
    env_close(&e, &t);   /* finish: "open" stays a PUSH */

    assert_int_equal(tc_count(&t, TRC_EV_MARKER), 6);
    const tc_event *m = tc_nth(&t, TRC_EV_MARKER, 0);
    assert_int_equal(m->u.marker.kind, TRC_MARK_RANGE);
    assert_string_equal(m->name, "inner");
    assert_string_equal(m->domain, "nvtx/mylib");
    m = tc_nth(&t, TRC_EV_MARKER, 1);
    assert_int_equal(m->u.marker.kind, TRC_MARK_RANGE);
    assert_string_equal(m->name, "step");
    assert_string_equal(m->domain, "nvtx");
    assert_int_equal(m->u.marker.color, 0x123456);
    assert_int_equal(m->u.marker.start_ns, (int64_t)(T0 + 100) + OFFSET);
    assert_int_equal(m->u.marker.end_ns, (int64_t)(T0 + 200) + OFFSET);
    assert_int_equal(m->tid, 1234);
    m = tc_nth(&t, TRC_EV_MARKER, 2);
    assert_int_equal(m->u.marker.kind, TRC_MARK_INSTANT);
    assert_string_equal(m->name, "here");
    assert_int_equal(m->u.marker.thread, 0);
    m = tc_nth(&t, TRC_EV_MARKER, 3);
    assert_int_equal(m->u.marker.kind, TRC_MARK_POP);
    m = tc_nth(&t, TRC_EV_MARKER, 4);
    assert_int_equal(m->u.marker.kind, TRC_MARK_RANGE);
    assert_string_equal(m->domain, "cupti");
    assert_string_equal(m->name, "CUPTI overhead: buffer flush");
    assert_int_equal(m->tid, 1236);
    assert_int_equal(m->u.marker.end_ns - m->u.marker.start_ns, 40);
    m = tc_nth(&t, TRC_EV_MARKER, 5);
    assert_int_equal(m->u.marker.kind, TRC_MARK_PUSH);
    assert_string_equal(m->name, "open");
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 1);   /* the zero-time instant */
    tc_free(&t);
}

/* The release facts by cuptiGetVersion number (cupti_version.h's
 * numbering: a counter up to 12.9, then xxyyzz). */
static void test_versions(void **state)
{
    char buf[32];
    static const struct { uint32_t v; int broken; const char *text; } cases[] = {
        { 0, 0, "unknown" },         { 23, 0, "API 23" },          /* 12.5 */
        { 24, 1, "API 24" },         { 28, 1, "API 28" },          /* 12.6, 12.9u1 */
        { 130000, 1, "13.0.0" },     { 130001, 1, "13.0.1" },
        { 130100, 0, "13.1.0" },     { 130200, 0, "13.2.0" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(cupti_version_ts_callback_broken(cases[i].v), cases[i].broken);
        cupti_version_text(cases[i].v, buf, sizeof buf);
        assert_string_equal(buf, cases[i].text);
    }
    /* newer: a later CUDA minor release, not a CUPTI patch */
    assert_false(cupti_version_newer_than(130001, 130001));
    assert_false(cupti_version_newer_than(130002, 130001));
    assert_true(cupti_version_newer_than(130100, 130001));
    assert_true(cupti_version_newer_than(140000, 130001));
    assert_false(cupti_version_newer_than(28, 130001));
    assert_false(cupti_version_newer_than(0, 130001));
    assert_true(cupti_version_newer_than(130000, 28));
    assert_true(cupti_version_newer_than(28, 27));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_strip),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_names_table),
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_layout_matches_libcupti),
        cmocka_unit_test(test_decode_activities),
        cmocka_unit_test(test_decode_streams),
        cmocka_unit_test(test_decode_api),
        cmocka_unit_test(test_decode_markers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
