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

static void write_act(tb_gen *g, act *a)
{
    trc_gpu_where w = {IDLE_PID, 0, 1, 7, a->corr};
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

#ifdef IDLE_GEN_MAIN
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: idle-gen FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    trc_status st = idle_trace_write(fd);
    if (close(fd) != 0 || st != TRC_OK) {
        fprintf(stderr, "idle-gen: %s\n", trc_status_str(st));
        return 1;
    }
    return 0;
}
#endif
