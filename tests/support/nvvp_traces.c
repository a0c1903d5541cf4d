/*
 * tests/support/nvvp_traces.c — deterministic synthetic GPU traces
 * (contract in nvvp_traces.h), written through the public writer API the
 * way the CUPTI recorder would: API records of a batch first, then the
 * batch's GPU activities grouped by stream, so readers see them out of
 * start order.
 *
 * The generator writes through the one trace builder (tb_gen,
 * trace_builder.h), whose status is sticky: after the first failing
 * writer call every later helper call does nothing, and the caller
 * reports the first error.
 */
#include "tests/support/nvvp_traces.h"

#include <string.h>

#include "tests/support/trace_builder.h"

#define T0 1000000000000ll        /* segment start: 1000 s on the trace clock */
#define US 1000ll
#define PID 4242

typedef struct gen {
    tb_gen tb;
    nvvp_trace_info *info;
    int64_t last;
} gen;

static void note_time(gen *g, int64_t t)
{
    if (t > g->last)
        g->last = t;
}

static void g_open(gen *g, int fd, nvvp_trace_info *info, const char *cmd)
{
    static const trc_kv meta[] = {{"fixture", "nvvp synthetic"}};
    trc_writer_options o;
    memset(&o, 0, sizeof o);
    o.recorder = "nvvp-traces (tests/support)";
    o.host = "fixture-host";
    o.command_line = cmd;
    o.n_metadata = 1;
    o.metadata = meta;
    o.start_ns = T0;
    o.wall_ns = 1700000000000000000ll;
    o.period_ns = 1000000;
    o.compression_level = 1;
    memset(info, 0, sizeof *info);
    info->start_ns = T0;
    g->info = info;
    g->last = T0;
    tb_gen_open(&g->tb, fd, NULL, &o);
}

static uint32_t g_frame(gen *g, trc_frame_kind kind, const char *fn, const char *file,
                        uint32_t line, uint32_t first)
{
    return tb_gen_frame(&g->tb, kind, fn, file, line, first);
}

static uint32_t g_stack(gen *g, uint32_t parent, uint32_t frame)
{
    return tb_gen_stack(&g->tb, parent, frame);
}

static uint32_t g_thread(gen *g, int64_t tid, const char *name)
{
    return tb_gen_thread(&g->tb, PID, tid, name);
}

static uint32_t g_counter(gen *g, const char *name, const char *unit, int64_t pid, int32_t dev)
{
    return tb_gen_counter_def(&g->tb, name, unit, pid, dev);
}

static void g_device(gen *g, uint32_t dev)
{
    trc_gpu_device d;
    memset(&d, 0, sizeof d);
    d.device = dev;
    d.name = "NVIDIA H100 80GB HBM3";
    for (int i = 0; i < 16; i++)
        d.uuid[i] = (uint8_t)(0xa0 + i + dev);
    d.sm_count = 132;
    d.memory_bytes = 85520809984ull;
    d.cc_major = 9;
    d.cc_minor = 0;
    TB_DO(&g->tb, trc_writer_gpu_device, &d);
}

static void g_process(gen *g, const char *cmd)
{
    trc_process p;
    memset(&p, 0, sizeof p);
    p.pid = PID;
    p.ppid = 4000;
    p.rank = -1;
    p.executable = "/usr/bin/python3.11";
    p.interpreter = "CPython 3.11.2";
    p.command_line = cmd;
    p.start_ns = T0;
    TB_DO(&g->tb, trc_writer_process, &p);
}

static void g_sample(gen *g, int64_t t, uint32_t thread, uint32_t stack, uint64_t weight)
{
    TB_DO(&g->tb, trc_writer_sample, t, thread, stack,
                                  TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN | TRC_SAMPLE_HOLDS_GIL,
                                  weight);
    g->info->samples++;
    note_time(g, t + (int64_t)weight);
}

static void g_value(gen *g, uint32_t counter, int64_t t, double v)
{
    TB_DO(&g->tb, trc_writer_counter, counter, t, v);
    g->info->counter_values++;
    note_time(g, t);
}

static trc_gpu_where where(uint32_t device, uint32_t stream, uint32_t corr)
{
    trc_gpu_where w = {PID, device, 1, stream, corr};
    return w;
}

static void g_api(gen *g, uint32_t thread, trc_api_domain dom, const char *name, int64_t s,
                  int64_t e, uint32_t corr, uint32_t stack, uint32_t flags)
{
    trc_api_call a;
    memset(&a, 0, sizeof a);
    a.thread = thread;
    a.start_ns = s;
    a.end_ns = e;
    a.domain = dom;
    a.name = name;
    a.correlation = corr;
    a.stack = stack;
    a.flags = flags;
    TB_DO(&g->tb, trc_writer_api_call, &a);
    g->info->api_calls++;
    g->info->api_ns += (uint64_t)(e - s);
    note_time(g, e);
}

static void g_kernel_on(gen *g, uint32_t device, uint32_t stream, uint32_t corr,
                        const char *name, int64_t s, int64_t e, const uint32_t grid[3],
                        const uint32_t block[3], uint32_t regs, uint32_t ssmem, uint32_t dsmem)
{
    trc_gpu_kernel k;
    memset(&k, 0, sizeof k);
    k.where = where(device, stream, corr);
    k.start_ns = s;
    k.end_ns = e;
    k.name = name;
    memcpy(k.grid, grid, sizeof k.grid);
    memcpy(k.block, block, sizeof k.block);
    k.registers = regs;
    k.static_smem = ssmem;
    k.dynamic_smem = dsmem;
    TB_DO(&g->tb, trc_writer_gpu_kernel, &k);
    g->info->kernels++;
    g->info->kernel_ns += (uint64_t)(e - s);
    note_time(g, e);
}

static void g_kernel(gen *g, uint32_t stream, uint32_t corr, const char *name, int64_t s,
                     int64_t e, const uint32_t grid[3], const uint32_t block[3], uint32_t regs,
                     uint32_t ssmem, uint32_t dsmem)
{
    g_kernel_on(g, 0, stream, corr, name, s, e, grid, block, regs, ssmem, dsmem);
}

static void g_memcpy(gen *g, uint32_t stream, uint32_t corr, trc_copy_kind kind,
                     trc_mem_kind src, trc_mem_kind dst, uint64_t bytes, int64_t s, int64_t e)
{
    trc_gpu_memcpy m;
    memset(&m, 0, sizeof m);
    m.where = where(0, stream, corr);
    m.start_ns = s;
    m.end_ns = e;
    m.bytes = bytes;
    m.copy_kind = kind;
    m.src_kind = src;
    m.dst_kind = dst;
    m.dst_device = kind == TRC_COPY_PTOP ? 1 : 0;
    TB_DO(&g->tb, trc_writer_gpu_memcpy, &m);
    g->info->memcpys++;
    g->info->memcpy_by_kind[kind <= TRC_COPY_PTOP ? kind : 0]++;
    g->info->memcpy_ns += (uint64_t)(e - s);
    note_time(g, e);
}

static void g_memset(gen *g, uint32_t stream, uint32_t corr, uint64_t bytes, int64_t s, int64_t e)
{
    trc_gpu_memset m;
    memset(&m, 0, sizeof m);
    m.where = where(0, stream, corr);
    m.start_ns = s;
    m.end_ns = e;
    m.bytes = bytes;
    m.value = 0;
    m.mem_kind = TRC_MEM_DEVICE;
    TB_DO(&g->tb, trc_writer_gpu_memset, &m);
    g->info->memsets++;
    g->info->memset_ns += (uint64_t)(e - s);
    note_time(g, e);
}

static void g_sync(gen *g, uint32_t stream, uint32_t corr, int64_t s, int64_t e)
{
    trc_gpu_sync y;
    memset(&y, 0, sizeof y);
    y.where = where(0, stream, corr);
    y.start_ns = s;
    y.end_ns = e;
    y.sync_kind = TRC_SYNC_STREAM;
    TB_DO(&g->tb, trc_writer_gpu_sync, &y);
    g->info->syncs++;
    note_time(g, e);
}

static void g_marker(gen *g, trc_marker_kind kind, uint32_t thread, const char *name, int64_t s,
                     int64_t e, uint32_t color)
{
    trc_marker m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.thread = thread;
    m.pid = PID;
    m.start_ns = s;
    m.end_ns = e;
    m.name = name;
    m.domain = "nvtx";
    m.color = color;
    TB_DO(&g->tb, trc_writer_marker, &m);
    g->info->markers++;
    note_time(g, e > s ? e : s);
}

static void g_loss(gen *g, uint64_t count, int64_t s, int64_t e)
{
    trc_loss l;
    memset(&l, 0, sizeof l);
    l.kind = TRC_LOSS_GPU_DROPPED;
    l.count = count;
    l.pid = PID;
    l.start_ns = s;
    l.end_ns = e;
    l.detail = "CUPTI dropped activity records (buffer full)";
    TB_DO(&g->tb, trc_writer_loss, &l);
    g->info->gpu_dropped += count;
}

static trc_status g_close(gen *g)
{
    if (!g->tb.w)
        return g->tb.st;
    g->info->end_ns = g->last;
    return tb_gen_close(&g->tb, g->last + 1000);
}

/* ------------------------------------------------------------------ */

static const char *const K_GEMM = "void gemm_kernel<float, 128>(float const*, float const*, float*, int)";
static const char *const K_ADD = "elementwise_add(float*, float const*, int)";
static const char *const K_RELU = "void relu_kernel<float>(float*, int)";
static const char *const K_SOFTMAX = "softmax_loss_kernel(float const*, int const*, float*, int)";

trc_status nvvp_trace_write_fixture(int fd, nvvp_trace_info *info)
{
    static const char cmd[] = "python3 train.py --epochs 1";
    static const uint32_t g_gemm[3] = {20, 10, 1}, b_gemm[3] = {256, 1, 1};
    static const uint32_t g_add[3] = {4096, 1, 1}, b_add[3] = {256, 1, 1};
    static const uint32_t g_sm[3] = {128, 1, 1}, b_sm[3] = {512, 1, 1};
    nvvp_trace_info local;
    gen g;
    memset(&g, 0, sizeof g);
    g_open(&g, fd, info ? info : &local, cmd);
    if (!g.tb.w)
        return g.tb.st;
    g_process(&g, cmd);
    g_device(&g, 0);
    g_device(&g, 1);
    uint32_t main_t = g_thread(&g, PID, "MainThread");
    uint32_t grad_t = g_thread(&g, PID + 8, "pt_autograd_0");
    uint32_t f_mod = g_frame(&g, TRC_FRAME_PYTHON, "<module>", "/home/ada/proj/train.py", 88, 1);
    uint32_t f_main = g_frame(&g, TRC_FRAME_PYTHON, "main", "/home/ada/proj/train.py", 80, 70);
    uint32_t f_step = g_frame(&g, TRC_FRAME_PYTHON, "train_step", "/home/ada/proj/train.py", 42, 35);
    uint32_t f_fwd = g_frame(&g, TRC_FRAME_PYTHON, "Model.forward", "/home/ada/proj/model.py", 17, 12);
    uint32_t f_loss = g_frame(&g, TRC_FRAME_PYTHON, "compute_loss", "/home/ada/proj/train.py", 55, 50);
    uint32_t f_load = g_frame(&g, TRC_FRAME_PYTHON, "load_batch", "/home/ada/proj/data.py", 9, 5);
    uint32_t f_nat = g_frame(&g, TRC_FRAME_NATIVE, "cudaLaunchKernel", "libcudart.so.12", 0, 0);
    uint32_t s_main = g_stack(&g, g_stack(&g, 0, f_mod), f_main);
    uint32_t s_step = g_stack(&g, s_main, f_step);
    uint32_t s_fwd = g_stack(&g, s_step, f_fwd);
    uint32_t s_fwd_nat = g_stack(&g, s_fwd, f_nat);
    uint32_t s_loss = g_stack(&g, s_step, f_loss);
    uint32_t s_load = g_stack(&g, s_main, f_load);
    uint32_t c_util = g_counter(&g, "gpu.util", "percent", -1, 0);
    uint32_t c_mem = g_counter(&g, "gpu.mem.used", "bytes", -1, 0);
    uint32_t c_rss = g_counter(&g, "rss", "bytes", PID, -1);
    g.info->kernel_names = 4;

    g_marker(&g, TRC_MARK_RANGE, 0, "epoch 0", T0 + 500 * US, T0 + 19000 * US, 0x3366cc);
    uint32_t corr = 100;
    for (int it = 0; it < 3; it++) {
        int64_t B = T0 + (1000 + 6000 * it) * US;
        /* CPU side of this iteration: samples every 500 us, counters */
        for (int64_t t = B - 1000 * US; t < B + 5000 * US; t += 500 * US) {
            int64_t rel = t - B;
            uint32_t s = rel < 0 ? s_main : rel < 800 * US ? s_load : rel < 2900 * US ? s_fwd_nat
                       : rel < 4200 * US ? s_loss : s_main;
            g_sample(&g, t, main_t, s, 500 * US);
        }
        for (int64_t t = B - 1000 * US; t < B + 5000 * US; t += 1000 * US) {
            int64_t ms = (t - T0) / (1000 * US);
            g_value(&g, c_util, t, (double)((ms * 37) % 101));
            g_value(&g, c_mem, t, 1073741824.0 + (double)ms * 16777216.0);
            if (ms % 2 == 0)
                g_value(&g, c_rss, t, 512.0 * 1048576.0 + (double)ms * 1048576.0);
        }
        g_marker(&g, TRC_MARK_PUSH, main_t, "train_step", B, B, 0x76b900);
        g_marker(&g, TRC_MARK_RANGE, main_t, "load_batch", B, B + 300 * US, 0xcc8800);

        /* runtime/driver API records of the iteration */
        uint32_t c = corr;
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaMemcpyAsync", B + 300 * US, B + 340 * US, c + 1, s_load, 0);
        g_api(&g, main_t, TRC_API_DRIVER, "cuMemcpyHtoDAsync", B + 305 * US, B + 335 * US, c + 1, 0, 0);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaLaunchKernel", B + 800 * US, B + 812 * US, c + 2, s_fwd_nat, TRC_API_LAUNCH);
        g_api(&g, main_t, TRC_API_DRIVER, "cuLaunchKernel", B + 802 * US, B + 810 * US, c + 2, 0, TRC_API_LAUNCH);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaLaunchKernel", B + 830 * US, B + 840 * US, c + 3, s_fwd, TRC_API_LAUNCH);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaLaunchKernel", B + 850 * US, B + 858 * US, c + 4, s_fwd, TRC_API_LAUNCH);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaMemsetAsync", B + 900 * US, B + 910 * US, c + 5, s_fwd, 0);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaMemcpyAsync", B + 920 * US, B + 930 * US, c + 6, s_loss, 0);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaMemcpyPeerAsync", B + 940 * US, B + 950 * US, c + 7, s_loss, 0);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaLaunchKernel", B + 960 * US, B + 968 * US, c + 8, s_loss, TRC_API_LAUNCH);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaStreamSynchronize", B + 970 * US, B + 3020 * US, c + 9, s_loss, 0);
        g_api(&g, main_t, TRC_API_RUNTIME, "cudaMemcpy", B + 3030 * US, B + 3120 * US, c + 10, s_loss, 0);
        g_api(&g, grad_t, TRC_API_RUNTIME, "cudaLaunchKernel", B + 3200 * US, B + 3210 * US, c + 11, 0, TRC_API_LAUNCH | TRC_API_NO_PYTHON);
        g_api(&g, grad_t, TRC_API_RUNTIME, "cudaLaunchKernel", B + 3215 * US, B + 3222 * US, c + 12, 0, TRC_API_LAUNCH | TRC_API_NO_PYTHON);
        if (it == 2)
            g_api(&g, main_t, TRC_API_RUNTIME, "cudaMemcpy", B + 4290 * US, B + 4320 * US, c + 13, s_main, 0);

        /* GPU records as a CUPTI buffer delivers them: by stream */
        g_kernel(&g, 14, c + 3, K_ADD, B + 900 * US, B + 1400 * US, g_add, b_add, 16, 0, 0);
        g_kernel(&g, 14, c + 4, K_RELU, B + 1450 * US, B + 1650 * US, g_add, b_add, 12, 0, 0);
        g_memcpy(&g, 14, c + 7, TRC_COPY_PTOP, TRC_MEM_DEVICE, TRC_MEM_DEVICE, 8u << 20, B + 1700 * US, B + 2500 * US);
        g_kernel(&g, 14, c + 12, K_ADD, B + 3300 * US, B + 3500 * US, g_add, b_add, 16, 0, 0);
        g_kernel(&g, 7, c + 2, K_GEMM, B + 820 * US, B + 2820 * US, g_gemm, b_gemm, 64, 16384, 0);
        g_memset(&g, 7, c + 5, 1u << 20, B + 2830 * US, B + 2850 * US);
        g_memcpy(&g, 7, c + 6, TRC_COPY_DTOD, TRC_MEM_DEVICE, TRC_MEM_DEVICE, 2u << 20, B + 2860 * US, B + 2900 * US);
        g_kernel(&g, 7, c + 8, K_SOFTMAX, B + 2910 * US, B + 3010 * US, g_sm, b_sm, 32, 0, 4096);
        g_sync(&g, 7, c + 9, B + 975 * US, B + 3015 * US);
        g_memcpy(&g, 7, c + 10, TRC_COPY_DTOH, TRC_MEM_DEVICE, TRC_MEM_PAGEABLE, 64u << 10, B + 3040 * US, B + 3100 * US);
        g_memcpy(&g, 13, c + 1, TRC_COPY_HTOD, TRC_MEM_PINNED, TRC_MEM_DEVICE, 4u << 20, B + 350 * US, B + 700 * US);
        g_kernel(&g, 13, c + 11, K_GEMM, B + 3220 * US, B + 4220 * US, g_gemm, b_gemm, 64, 16384, 0);
        if (it == 2) {
            g_memcpy(&g, 7, c + 13, TRC_COPY_HTOH, TRC_MEM_PAGEABLE, TRC_MEM_PINNED, 1024, B + 4300 * US, B + 4310 * US);
            g_loss(&g, 12, B + 4400 * US, B + 4600 * US);
            g_marker(&g, TRC_MARK_INSTANT, main_t, "checkpoint", B + 5000 * US, B + 5000 * US, 0);
        }
        g_marker(&g, TRC_MARK_POP, main_t, "", B + 5200 * US, B + 5200 * US, 0);
        corr += 20;
        if (g.tb.st == TRC_OK)
            g.tb.st = trc_writer_flush(g.tb.w);
    }
    return g_close(&g);
}

/* ------------------------------------------------------------------ */

trc_status nvvp_trace_write_two_devices(int fd, nvvp_trace_info *info)
{
    static const char cmd[] = "python3 train.py --devices 2";
    static const uint32_t grid[3] = {64, 1, 1}, block[3] = {256, 1, 1};
    nvvp_trace_info local;
    gen g;
    memset(&g, 0, sizeof g);
    g_open(&g, fd, info ? info : &local, cmd);
    if (!g.tb.w)
        return g.tb.st;
    g_process(&g, cmd);
    g_device(&g, 0);
    g_device(&g, 1);
    /* the loader first: the lowest reader id, which the rule without
     * "known to wait" would prefer among threads off CPU alike */
    uint32_t load_t = g_thread(&g, PID + 1, "loader");
    uint32_t main_t = g_thread(&g, PID, "MainThread");
    uint32_t grad_t = g_thread(&g, PID + 8, "pt_autograd_0");
    uint32_t f_mod = g_frame(&g, TRC_FRAME_PYTHON, "<module>", "/home/ada/proj/train.py", 88, 1);
    uint32_t f_main = g_frame(&g, TRC_FRAME_PYTHON, "main", "/home/ada/proj/train.py", 80, 70);
    uint32_t f_fwd = g_frame(&g, TRC_FRAME_PYTHON, "Model.forward", "/home/ada/proj/model.py", 17, 12);
    uint32_t f_bwd = g_frame(&g, TRC_FRAME_PYTHON, "backward", "/home/ada/proj/train.py", 60, 58);
    uint32_t f_run = g_frame(&g, TRC_FRAME_PYTHON, "run", "/home/ada/proj/data.py", 30, 28);
    uint32_t f_next = g_frame(&g, TRC_FRAME_PYTHON, "next_batch", "/home/ada/proj/data.py", 12, 10);
    uint32_t s_main = g_stack(&g, g_stack(&g, 0, f_mod), f_main);
    uint32_t s_fwd = g_stack(&g, s_main, f_fwd);
    uint32_t s_bwd = g_stack(&g, s_main, f_bwd);
    uint32_t s_load = g_stack(&g, g_stack(&g, 0, f_run), f_next);
    g.info->kernel_names = 4;

    /* 0-4 ms: the main thread on CPU in forward; 4-10 ms off CPU in
     * backward (known to wait); the loader off CPU in next_batch all
     * along (off CPU, but not known to wait) */
    for (int64_t t = T0; t < T0 + 10000 * US; t += 500 * US) {
        int fwd = t < T0 + 4000 * US;
        TB_DO(&g.tb, trc_writer_sample, t, main_t, fwd ? s_fwd : s_bwd,
              fwd ? TRC_SAMPLE_ON_CPU : 0u, 500 * US);
        TB_DO(&g.tb, trc_writer_sample, t, load_t, s_load, 0u, 500 * US);
        g.info->samples += 2;
        note_time(&g, t + 500 * US);
    }
    /* the samples ahead of the launches, as in trec's files (the
     * waiting-thread rule reads the samples fed before) */
    if (g.tb.st == TRC_OK)
        g.tb.st = trc_writer_flush(g.tb.w);
    g_api(&g, main_t, TRC_API_RUNTIME, "cudaLaunchKernel", T0 + 1000 * US, T0 + 1010 * US, 1, s_fwd, TRC_API_LAUNCH);
    g_api(&g, grad_t, TRC_API_RUNTIME, "cudaLaunchKernel", T0 + 1500 * US, T0 + 1510 * US, 2, 0, TRC_API_LAUNCH | TRC_API_NO_PYTHON);
    g_api(&g, main_t, TRC_API_RUNTIME, "cudaLaunchKernel", T0 + 3000 * US, T0 + 3010 * US, 3, s_fwd, TRC_API_LAUNCH);
    g_api(&g, grad_t, TRC_API_RUNTIME, "cudaLaunchKernel", T0 + 5000 * US, T0 + 5010 * US, 4, 0, TRC_API_LAUNCH | TRC_API_NO_PYTHON);
    /* device 0: 1000 us direct, 300 us via the loader (the main thread
     * is on CPU then); device 1: 200 us direct, 600 us via the main
     * thread in backward, 200 us with no launch call */
    g_kernel_on(&g, 0, 7, 1, K_GEMM, T0 + 1100 * US, T0 + 2100 * US, grid, block, 64, 0, 0);
    g_kernel_on(&g, 0, 7, 2, K_ADD, T0 + 2100 * US, T0 + 2400 * US, grid, block, 16, 0, 0);
    g_kernel_on(&g, 1, 21, 3, K_SOFTMAX, T0 + 3000 * US, T0 + 3200 * US, grid, block, 32, 0, 0);
    g_kernel_on(&g, 1, 21, 4, K_RELU, T0 + 5000 * US, T0 + 5600 * US, grid, block, 12, 0, 0);
    g_kernel_on(&g, 1, 21, 0, K_RELU, T0 + 6000 * US, T0 + 6200 * US, grid, block, 12, 0, 0);
    g_loss(&g, 3, T0 + 9000 * US, T0 + 9100 * US);
    return g_close(&g);
}

/* ------------------------------------------------------------------ */

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

trc_status nvvp_trace_write_big(int fd, uint64_t n, nvvp_trace_info *info)
{
    static const char cmd[] = "python3 bench_gpu.py";
    static const char *const names[8] = {
        "void gemm_kernel<float, 128>(float const*, float const*, float*, int)",
        "elementwise_add(float*, float const*, int)",
        "void relu_kernel<float>(float*, int)",
        "softmax_loss_kernel(float const*, int const*, float*, int)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "layer_norm_fwd(float const*, float*, float const*, float const*, int, int)",
        "attention_fwd_kernel(half const*, half const*, half const*, half*, int)",
        "reduce_sum_kernel(float const*, float*, int)"};
    static const uint32_t grid[3] = {108, 2, 1}, block[3] = {128, 1, 1};
    static const trc_copy_kind kinds[4] = {TRC_COPY_HTOD, TRC_COPY_DTOH, TRC_COPY_DTOD, TRC_COPY_PTOP};
    enum { BATCH = 1024 };
    struct pending { int64_t s, e; uint32_t corr, stream, what; } batch[BATCH];
    nvvp_trace_info local;
    gen g;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    memset(&g, 0, sizeof g);
    g_open(&g, fd, info ? info : &local, cmd);
    if (!g.tb.w)
        return g.tb.st;
    g_process(&g, cmd);
    g_device(&g, 0);
    g_device(&g, 1);
    uint32_t main_t = g_thread(&g, PID, "MainThread");
    uint32_t f_mod = g_frame(&g, TRC_FRAME_PYTHON, "<module>", "/home/ada/proj/bench_gpu.py", 30, 1);
    uint32_t s_mod = g_stack(&g, 0, f_mod);
    uint32_t stacks[4];
    for (int i = 0; i < 4; i++) {
        static const char *const fns[4] = {"forward", "backward", "optimizer_step", "load"};
        stacks[i] = g_stack(&g, s_mod, g_frame(&g, TRC_FRAME_PYTHON, fns[i],
                                               "/home/ada/proj/bench_gpu.py", 10 + 5 * (uint32_t)i,
                                               8 + 5 * (uint32_t)i));
    }
    uint32_t c_util = g_counter(&g, "gpu.util", "percent", -1, 0);
    g.info->kernel_names = 8;

    int64_t t = T0 + 1000 * US, next_sample = T0, next_counter = T0;
    for (uint64_t base = 0; base < n && g.tb.st == TRC_OK; base += BATCH) {
        uint64_t m = n - base < BATCH ? n - base : BATCH;
        int64_t batch_end = t + (int64_t)m * 10 * US;
        for (; next_sample < batch_end; next_sample += 1000 * US)
            g_sample(&g, next_sample, main_t, stacks[(next_sample / (1000 * US) / 7) % 4], 1000 * US);
        for (; next_counter < batch_end; next_counter += 10000 * US)
            g_value(&g, c_util, next_counter, (double)(xorshift(&rng) % 101));
        for (uint64_t i = 0; i < m; i++) {
            uint64_t k = base + i;
            struct pending *p = &batch[i];
            p->corr = (uint32_t)(k + 1);
            p->stream = 7 + (uint32_t)(k % 4);
            p->what = (uint32_t)(k % 50);
            p->s = t + 5 * US + (int64_t)(xorshift(&rng) % 3000);
            p->e = p->s + 2 * US + (int64_t)(xorshift(&rng) % (38 * US));
            g_api(&g, main_t, TRC_API_RUNTIME, p->what < 5 ? "cudaMemcpyAsync" : "cudaLaunchKernel",
                  t, t + 3 * US, p->corr, stacks[(k / 64) % 4], TRC_API_LAUNCH);
            t += 10 * US;
        }
        for (uint32_t stream = 7; stream < 11; stream++) {
            for (uint64_t i = 0; i < m; i++) {
                const struct pending *p = &batch[i];
                if (p->stream != stream)
                    continue;
                if (p->what < 4)
                    g_memcpy(&g, stream, p->corr, kinds[p->what],
                             p->what == 0 ? TRC_MEM_PINNED : TRC_MEM_DEVICE,
                             p->what == 1 ? TRC_MEM_PINNED : TRC_MEM_DEVICE,
                             (uint64_t)(p->e - p->s) * 12, p->s, p->e);
                else if (p->what == 4)
                    g_memset(&g, stream, p->corr, 65536, p->s, p->e);
                else
                    g_kernel(&g, stream, p->corr, names[p->corr % 8], p->s, p->e, grid, block, 40,
                             0, 1024);
            }
        }
    }
    return g_close(&g);
}

#ifdef NVVP_GEN_MAIN
/* The nvvp-gen program (mk/nvvp.mk): the traces above as files, for the
 * e2e tests, the converter goldens and bench/nvvp.sh:
 *   nvvp-gen --write fixture FILE     the small fixture trace
 *   nvvp-gen --write big N FILE       N GPU activities
 *   nvvp-gen --write two-devices FILE nvvp_trace_write_two_devices
 * prints the generator's totals as "key=value" lines on stdout. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    nvvp_trace_info info;
    trc_status st;
    if (argc < 4 || strcmp(argv[1], "--write") != 0) {
        fprintf(stderr, "usage: %s --write fixture FILE | --write big N FILE | --write two-devices FILE\n", argv[0]);
        return 2;
    }
    const char *path = argv[argc - 1];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    if (argc == 4 && strcmp(argv[2], "fixture") == 0)
        st = nvvp_trace_write_fixture(fd, &info);
    else if (argc == 4 && strcmp(argv[2], "two-devices") == 0)
        st = nvvp_trace_write_two_devices(fd, &info);
    else if (argc == 5 && strcmp(argv[2], "big") == 0)
        st = nvvp_trace_write_big(fd, strtoull(argv[3], NULL, 10), &info);
    else {
        fprintf(stderr, "usage: %s --write fixture FILE | --write big N FILE | --write two-devices FILE\n", argv[0]);
        close(fd);
        return 2;
    }
    if (close(fd) != 0 || st != TRC_OK) {
        fprintf(stderr, "%s: %s\n", path, trc_status_str(st));
        return 1;
    }
    printf("kernels=%llu\nkernel_ns=%llu\nmemcpys=%llu\nmemsets=%llu\nsyncs=%llu\n"
           "api_calls=%llu\napi_ns=%llu\nmarkers=%llu\nsamples=%llu\ncounter_values=%llu\n"
           "gpu_dropped=%llu\nkernel_names=%u\nstart_ns=%lld\nend_ns=%lld\n",
           (unsigned long long)info.kernels, (unsigned long long)info.kernel_ns,
           (unsigned long long)info.memcpys, (unsigned long long)info.memsets,
           (unsigned long long)info.syncs, (unsigned long long)info.api_calls,
           (unsigned long long)info.api_ns, (unsigned long long)info.markers,
           (unsigned long long)info.samples, (unsigned long long)info.counter_values,
           (unsigned long long)info.gpu_dropped, info.kernel_names, (long long)info.start_ns,
           (long long)info.end_ns);
    return 0;
}
#endif
