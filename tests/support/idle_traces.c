/*
 * tests/support/idle_traces.c — the GPU idle scenario (idle_traces.h).
 */
#include "tests/support/idle_traces.h"

#include <stdio.h>
#include <string.h>

#include "tests/support/trace_builder.h"

#define MS IDLE_MS
#define DELAY (3 * MS) /* activities are written this long after they end */

typedef struct act {
    int64_t s, e;
    int kind; /* 0 kernel, 1 copy */
    uint32_t corr;
    int written;
} act;

static act acts[] = {
    {1 * MS, 4 * MS, 0, 1, 0},
    {3 * MS, 6 * MS, 0, 2, 0},
    {6 * MS, 8 * MS, 1, 3, 0},
    {10 * MS, 12 * MS + 123, 0, 4, 0},
};
#define N_ACTS (sizeof acts / sizeof acts[0])

static void write_act_on(tb_gen *g, act *a, uint32_t device)
{
    trc_gpu_where w = {IDLE_PID, device, 1, 7, a->corr};
    if (a->kind == 0) {
        trc_gpu_kernel k;
        memset(&k, 0, sizeof k);
        k.where = w;
        k.start_ns = IDLE_T0 + a->s;
        k.end_ns = IDLE_T0 + a->e;
        k.name = "gemm";
        k.grid[0] = k.grid[1] = k.grid[2] = 1;
        k.block[0] = k.block[1] = k.block[2] = 1;
        TB_DO(g, trc_writer_gpu_kernel, &k);
    } else {
        trc_gpu_memcpy m;
        memset(&m, 0, sizeof m);
        m.where = w;
        m.start_ns = IDLE_T0 + a->s;
        m.end_ns = IDLE_T0 + a->e;
        m.bytes = 1 << 20;
        m.copy_kind = TRC_COPY_HTOD;
        m.src_kind = TRC_MEM_PINNED;
        m.dst_kind = TRC_MEM_DEVICE;
        TB_DO(g, trc_writer_gpu_memcpy, &m);
    }
    a->written = 1;
}

static void write_act(tb_gen *g, act *a) { write_act_on(g, a, 0); }

trc_status idle_trace_write(int fd)
{
    trc_writer_options o;
    memset(&o, 0, sizeof o);
    o.recorder = "idle-traces (tests/support)";
    o.host = "fixture-host";
    o.command_line = "python3 train.py";
    o.start_ns = IDLE_T0;
    o.wall_ns = 1700000000000000000ll;
    o.period_ns = (uint64_t)MS;
    o.compression_level = 1;
    tb_gen g;
    for (size_t i = 0; i < N_ACTS; i++)
        acts[i].written = 0;
    if (tb_gen_open(&g, fd, NULL, &o) != TRC_OK)
        return g.st;

    trc_process p;
    memset(&p, 0, sizeof p);
    p.pid = IDLE_PID;
    p.ppid = 1;
    p.rank = -1;
    p.executable = "/usr/bin/python3.11";
    p.interpreter = "CPython 3.11.2";
    p.command_line = "python3 train.py";
    p.start_ns = IDLE_T0;
    TB_DO(&g, trc_writer_process, &p);
    trc_gpu_device d;
    memset(&d, 0, sizeof d);
    d.name = "NVIDIA H100 80GB HBM3";
    d.sm_count = 132;
    TB_DO(&g, trc_writer_gpu_device, &d);

    uint32_t util = tb_gen_counter_def(&g, "gpu.util", "percent", -1, 0);
    uint32_t main_t = tb_gen_thread(&g, IDLE_PID, IDLE_PID, "MainThread");
    uint32_t work_t = tb_gen_thread(&g, IDLE_PID, IDLE_PID + 1, "worker");
    uint32_t mod = tb_gen_stack(&g, 0, tb_gen_frame(&g, TRC_FRAME_PYTHON, "<module>",
                                                    "/home/u/train.py", 30, 1));
    uint32_t step = tb_gen_stack(&g, mod, tb_gen_frame(&g, TRC_FRAME_PYTHON, "step",
                                                       "/home/u/train.py", 10, 8));
    uint32_t next = tb_gen_stack(&g, mod, tb_gen_frame(&g, TRC_FRAME_PYTHON, "next",
                                                       "/home/u/loader.py", 5, 4));
    uint32_t slp = tb_gen_stack(&g, mod, tb_gen_frame(&g, TRC_FRAME_PYTHON, "sleep",
                                                      "/home/u/train.py", 20, 18));
    uint32_t work = tb_gen_stack(&g, 0, tb_gen_frame(&g, TRC_FRAME_PYTHON, "work",
                                                     "/home/u/worker.py", 3, 1));
    for (int ms = 0; ms < 20; ms++) {
        int64_t t = IDLE_T0 + ms * MS;
        uint32_t st = ms < 8 ? step : ms < 10 ? next : ms < 12 ? step : slp;
        TB_DO(&g, trc_writer_sample, t, main_t, st, TRC_SAMPLE_ON_CPU, (uint64_t)MS);
        TB_DO(&g, trc_writer_sample, t + MS / 2, work_t, work, TRC_SAMPLE_ON_CPU, (uint64_t)MS / 2);
        if (ms == 5 || ms == 15) /* NVML's view: busy at some time of 5 ms, not of 15 ms */
            TB_DO(&g, trc_writer_counter, util, t, ms == 5 ? 100.0 : 0.0);
        for (size_t i = 0; i < N_ACTS; i++) {
            if (acts[i].s != ms * MS)
                continue;
            trc_api_call a;
            memset(&a, 0, sizeof a);
            a.thread = main_t;
            a.start_ns = t - 20000;
            a.end_ns = t - 10000;
            a.domain = TRC_API_RUNTIME;
            a.name = acts[i].kind ? "cudaMemcpyAsync" : "cudaLaunchKernel";
            a.correlation = acts[i].corr;
            a.stack = st;
            a.flags = TRC_API_LAUNCH;
            TB_DO(&g, trc_writer_api_call, &a);
        }
        for (size_t i = 0; i < N_ACTS; i++)
            if (!acts[i].written && acts[i].e + DELAY <= ms * MS)
                write_act(&g, &acts[i]);
    }
    for (size_t i = 0; i < N_ACTS; i++)
        if (!acts[i].written)
            write_act(&g, &acts[i]);
    return tb_gen_close(&g, IDLE_T0 + 20 * MS);
}

trc_status idle_trace_write_big(int fd, uint64_t n)
{
    trc_writer_options o;
    memset(&o, 0, sizeof o);
    o.recorder = "idle-traces (tests/support)";
    o.host = "bench-host";
    o.command_line = "python3 train.py";
    o.start_ns = IDLE_T0;
    o.period_ns = (uint64_t)MS;
    o.compression_level = 1;
    tb_gen g;
    if (tb_gen_open(&g, fd, NULL, &o) != TRC_OK)
        return g.st;
    uint32_t main_t = tb_gen_thread(&g, IDLE_PID, IDLE_PID, "MainThread");
    uint32_t mod = tb_gen_stack(&g, 0, tb_gen_frame(&g, TRC_FRAME_PYTHON, "<module>",
                                                    "/home/u/train.py", 30, 1));
    uint32_t st[8];
    for (int i = 0; i < 8; i++)
        st[i] = tb_gen_stack(&g, mod, tb_gen_frame(&g, TRC_FRAME_PYTHON, "step",
                                                   "/home/u/train.py", 10 + (uint32_t)i, 8));
    /* two devices, alternating; 4 us of work every 40 us on each (a copy
     * every 8th): 1 M activities span 20 s, well past the horizon;
     * sampled every 1 ms in one of 8 lines */
    int64_t t = IDLE_T0, next_sample = IDLE_T0;
    for (uint64_t i = 0; i < n && g.st == TRC_OK; i++) {
        while (next_sample <= t) {
            TB_DO(&g, trc_writer_sample, next_sample, main_t, st[(next_sample / MS) % 8],
                  TRC_SAMPLE_ON_CPU, (uint64_t)MS);
            next_sample += MS;
        }
        trc_api_call a;
        memset(&a, 0, sizeof a);
        a.thread = main_t;
        a.start_ns = t;
        a.end_ns = t + 1000;
        a.name = i % 8 == 7 ? "cudaMemcpyAsync" : "cudaLaunchKernel";
        a.correlation = (uint32_t)(i + 1);
        a.stack = st[i % 8];
        a.flags = TRC_API_LAUNCH;
        TB_DO(&g, trc_writer_api_call, &a);
        act x = {t - IDLE_T0 + 2000, t - IDLE_T0 + 6000, i % 8 == 7, (uint32_t)(i + 1), 0};
        write_act_on(&g, &x, (uint32_t)(i & 1));
        if (i & 1)
            t += 40000;
    }
    return tb_gen_close(&g, t + 10 * MS);
}

#ifdef IDLE_GEN_MAIN
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int big = argc == 4 && strcmp(argv[1], "--big") == 0;
    if (argc != 2 && !big) {
        fprintf(stderr, "usage: idle-gen FILE | idle-gen --big N FILE\n");
        return 2;
    }
    const char *path = argv[argc - 1];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    trc_status st = big ? idle_trace_write_big(fd, strtoull(argv[2], NULL, 10))
                        : idle_trace_write(fd);
    if (close(fd) != 0 || st != TRC_OK) {
        fprintf(stderr, "idle-gen: %s\n", trc_status_str(st));
        return 1;
    }
    return 0;
}
#endif
