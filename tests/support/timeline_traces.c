/*
 * tests/support/timeline_traces.c — synthetic traces for the speedscope
 * and Chrome exporters' tests and benchmark (see timeline_traces.h),
 * written with the one trace builder (tb_gen, trace_builder.h).
 */
#include "tests/support/timeline_traces.h"

#include <string.h>

#include "tests/support/trace_builder.h"

#define MS 1000000LL
#define ON (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_HOLDS_GIL | TRC_SAMPLE_GIL_KNOWN)
#define ON_NOGIL (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN)
#define IDLE TRC_SAMPLE_GIL_KNOWN

typedef struct gen {
    tb_gen tb;      /* the writer; its first error stops the rest */
    convb_info info;
} gen;

static uint32_t frame(gen *g, trc_frame_kind kind, const char *fn, const char *file,
                      uint32_t line, uint32_t first)
{
    return tb_gen_frame(&g->tb, kind, fn, file, line, first);
}

static uint32_t stack(gen *g, uint32_t parent, uint32_t fr)
{
    return tb_gen_stack(&g->tb, parent, fr);
}

static uint32_t thread(gen *g, int64_t tid, const char *name)
{
    return tb_gen_thread(&g->tb, CONVB_PID, tid, name);
}

static void sample(gen *g, int64_t t, uint32_t th, uint32_t st, uint32_t flags)
{
    if (g->tb.st != TRC_OK)
        return;
    TB_DO(&g->tb, trc_writer_sample, t, th, st, flags, CONVB_PERIOD_NS);
    g->info.samples++;
    g->info.all_ns += CONVB_PERIOD_NS;
    if (flags & TRC_SAMPLE_ON_CPU) {
        g->info.on_cpu++;
        g->info.on_cpu_ns += CONVB_PERIOD_NS;
    }
    if (t > g->info.end_ns)
        g->info.end_ns = t;
}

static void counter(gen *g, uint32_t c, int64_t t, double v)
{
    if (g->tb.st != TRC_OK)
        return;
    TB_DO(&g->tb, trc_writer_counter, c, t, v);
    g->info.counter_values++;
}

static trc_status open_writer(gen *g, int fd, int cpu_only)
{
    /* The generator's name as the traces have always carried it (this
     * file's former name): the bytes, and the goldens made from them,
     * stay the same.  A CPU-only trace may say it holds no GPU records
     * (spec [R-HDR-5]), as trec's do. */
    static const trc_kv meta[] = {{"generator", "tests/support/convb_traces.c"},
                                  {"gpu.activity", "off"}};
    trc_writer_options o;
    memset(&o, 0, sizeof o);
    o.recorder = "convb-gen 1";
    o.host = "testhost";
    o.command_line = "python3 app.py --size 3";
    o.n_metadata = cpu_only ? 2 : 1;
    o.metadata = meta;
    o.start_ns = CONVB_START_NS;
    o.wall_ns = 1700000000000000000LL;
    o.period_ns = CONVB_PERIOD_NS;
    o.compression_level = 1;
    return tb_gen_open(&g->tb, fd, NULL, &o);
}

static void process(gen *g)
{
    trc_process p;
    memset(&p, 0, sizeof p);
    p.pid = CONVB_PID;
    p.ppid = 1;
    p.rank = -1;
    p.executable = "/usr/bin/python3.12";
    p.interpreter = "CPython 3.12.1";
    p.command_line = "python3 app.py --size 3";
    p.start_ns = CONVB_START_NS;
    TB_DO(&g->tb, trc_writer_process, &p);
}

static trc_status finish(gen *g, int64_t end_ns, convb_info *info)
{
    tb_gen_close(&g->tb, end_ns);
    if (info)
        *info = g->info;
    return g->tb.st;
}

trc_status convb_write_small(int fd, convb_info *info)
{
    return convb_write_small_exit(fd, 0, info);
}

trc_status convb_write_small_exit(int fd, int32_t exit_code, convb_info *info)
{
    gen g;
    const int64_t t0 = CONVB_START_NS;
    trc_loss loss;
    trc_process_exit ex;
    uint32_t rss = 0, load = 0;

    memset(&g, 0, sizeof g);
    if (open_writer(&g, fd, 0) != TRC_OK)
        return g.tb.st;
    process(&g);
    TB_DO(&g.tb, trc_writer_counter_def, "rss", "bytes", CONVB_PID, -1, &rss);
    TB_DO(&g.tb, trc_writer_counter_def, "load", "percent", -1, -1, &load);

    uint32_t f_mod = frame(&g, TRC_FRAME_PYTHON, "<module>", "app.py", 30, 1);
    uint32_t f_main12 = frame(&g, TRC_FRAME_PYTHON, "main", "app.py", 12, 10);
    uint32_t f_main14 = frame(&g, TRC_FRAME_PYTHON, "main", "app.py", 14, 10);
    uint32_t f_comp22 = frame(&g, TRC_FRAME_PYTHON, "compute", "app.py", 22, 20);
    uint32_t f_comp24 = frame(&g, TRC_FRAME_PYTHON, "compute", "app.py", 24, 20);
    uint32_t f_help = frame(&g, TRC_FRAME_PYTHON, "helper", "lib/utils.py", 7, 5);
    uint32_t f_nat = frame(&g, TRC_FRAME_NATIVE, "PyObject_Call", "", 0, 0);
    uint32_t f_weird = frame(&g, TRC_FRAME_PYTHON, "weird\"name\\\tend", "app.py", 41, 40);
    uint32_t f_uni = frame(&g, TRC_FRAME_PYTHON, "gr\xc3\xb6\xc3\x9f" "e_\xce\xbb",
                           "src/\xc3\xbcn\xc3\xaf.py", 3, 1);
    uint32_t f_run = frame(&g, TRC_FRAME_PYTHON, "run", "/usr/lib/python3.12/threading.py", 1010, 1000);
    uint32_t f_read = frame(&g, TRC_FRAME_PYTHON, "read_loop", "app.py", 52, 50);
    uint32_t f_sleep = frame(&g, TRC_FRAME_NATIVE, "time.sleep", "", 0, 0);

    uint32_t s1 = stack(&g, 0, f_mod);
    uint32_t s2 = stack(&g, s1, f_main12);
    uint32_t s3 = stack(&g, s1, f_main14);     /* same function as s2, other line */
    uint32_t s4 = stack(&g, s2, f_comp22);
    uint32_t s5 = stack(&g, s2, f_comp24);     /* same function as s4, other line */
    uint32_t s6 = stack(&g, s4, f_help);
    uint32_t s7 = stack(&g, s6, f_nat);
    uint32_t s8 = stack(&g, s2, f_weird);
    uint32_t s9 = stack(&g, s2, f_uni);
    uint32_t w1 = stack(&g, 0, f_run);
    uint32_t w2 = stack(&g, w1, f_comp22);
    uint32_t w3 = stack(&g, w2, f_help);
    uint32_t i1 = stack(&g, 0, f_run);
    uint32_t i2 = stack(&g, i1, f_read);
    uint32_t i3 = stack(&g, i2, f_sleep);

    uint32_t tm = thread(&g, CONVB_TID_MAIN, "MainThread");
    uint32_t tw = thread(&g, CONVB_TID_WORKER, "Thread-1");
    uint32_t ti = thread(&g, CONVB_TID_IO, "io-\xce\xb4");
    g.info.threads = 3;

    /* Main thread: ms 0..19 (13 and 14 missing, 16 and 17 idle). */
    const uint32_t main_stacks[20] = {s1, s2, s4, s4, s5, s6, s7, s6, s3, s8,
                                      s9, s9, 0,  0,  0,  s2, s2, s2, s4, s1};
    for (int ms = 0; ms < 20; ms++) {
        int64_t t = t0 + ms * MS;
        if (ms == 13 || ms == 14)
            continue;
        if (ms % 5 == 0)
            counter(&g, rss, t, ms == 10 ? 60.5e6 : 50e6 + ms * 1e6);
        if (ms % 10 == 0)
            counter(&g, load, t, 12.5 * (ms / 10 + 1));
        sample(&g, t, tm, main_stacks[ms], ms == 16 || ms == 17 ? IDLE : ON);
        /* Worker from 2.5 ms: runs, sleeps 8.5..10.5, last sample without the GIL. */
        if (ms >= 2 && ms <= 11) {
            static const uint32_t wk[10] = {1, 2, 3, 3, 2, 1, 1, 1, 1, 2};
            uint32_t st = wk[ms - 2] == 1 ? w1 : wk[ms - 2] == 2 ? w2 : w3;
            uint32_t fl = ms >= 8 && ms <= 10 ? IDLE : ms == 11 ? ON_NOGIL : ON;
            if (ms == 5)
                tw = thread(&g, CONVB_TID_WORKER, "worker-1");
            sample(&g, t + MS / 2, tw, st, fl);
        }
        /* io thread: sleeping, then reading at 11.2 and 12.2 ms. */
        if (ms >= 1 && ms <= 12)
            sample(&g, t + MS / 5, ti, ms >= 11 ? i2 : i3, ms >= 11 ? ON : IDLE);
    }
    counter(&g, rss, t0 + 20 * MS, 58e6);
    counter(&g, load, t0 + 20 * MS, 37.5);

    memset(&loss, 0, sizeof loss);
    loss.kind = TRC_LOSS_SAMPLES_MISSED;
    loss.count = 2;
    loss.pid = CONVB_PID;
    loss.thread = tm;
    loss.start_ns = t0 + 13 * MS;
    loss.end_ns = t0 + 15 * MS;
    loss.detail = "sampler overrun";
    if (g.tb.st == TRC_OK) {
        TB_DO(&g.tb, trc_writer_loss, &loss);
        g.info.losses++;
    }
    memset(&ex, 0, sizeof ex);
    ex.pid = CONVB_PID;
    ex.exit_code = exit_code;
    ex.time_ns = t0 + 20 * MS + MS / 2;
    if (g.tb.st == TRC_OK)
        TB_DO(&g.tb, trc_writer_process_exit, &ex);
    g.info.end_ns = ex.time_ns;
    return finish(&g, t0 + 21 * MS, info);
}

/* ---- the large trace ------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

#define BIG_FRAMES 300
#define BIG_STACKS 2000
#define BIG_DEPTH 40

trc_status convb_write_big(int fd, uint64_t n, uint32_t threads, convb_info *info)
{
    gen g;
    uint64_t rng = 42;
    uint32_t frames[BIG_FRAMES], stacks[BIG_STACKS], parent[BIG_STACKS], depth[BIG_STACKS];
    uint32_t th[64], cur[64];
    uint32_t rss = 0;
    char fn[32], file[40];

    if (threads < 1 || threads > 64)
        return TRC_ERR_ARG;
    memset(&g, 0, sizeof g);
    if (open_writer(&g, fd, 1) != TRC_OK)
        return g.tb.st;
    process(&g);
    TB_DO(&g.tb, trc_writer_counter_def, "rss", "bytes", CONVB_PID, -1, &rss);
    for (uint32_t i = 0; i < BIG_FRAMES; i++) {
        snprintf(fn, sizeof fn, "func_%u", i);
        snprintf(file, sizeof file, "pkg/module_%u.py", i % 40);
        frames[i] = frame(&g, TRC_FRAME_PYTHON, fn, file, 10 + i % 7, 10);
    }
    /* A random tree: each new stack extends a random earlier one (or the
     * root) while the depth limit allows. */
    for (uint32_t i = 0; i < BIG_STACKS; i++) {
        uint32_t p = i ? (uint32_t)(rng_next(&rng) % (i + 1)) : 0; /* i: a new root */
        if (p == i || depth[p] >= BIG_DEPTH) {
            parent[i] = UINT32_MAX;
            depth[i] = 1;
            stacks[i] = stack(&g, 0, frames[rng_next(&rng) % BIG_FRAMES]);
        } else {
            parent[i] = p;
            depth[i] = depth[p] + 1;
            stacks[i] = stack(&g, stacks[p], frames[rng_next(&rng) % BIG_FRAMES]);
        }
    }
    for (uint32_t t = 0; t < threads; t++) {
        char name[24];
        snprintf(name, sizeof name, t ? "worker-%u" : "MainThread", t);
        th[t] = thread(&g, t ? CONVB_TID_WORKER + t : CONVB_TID_MAIN, name);
        cur[t] = (uint32_t)(rng_next(&rng) % BIG_STACKS);
    }
    g.info.threads = threads;
    for (uint64_t i = 0; i < n && g.tb.st == TRC_OK; i++) {
        uint32_t t = (uint32_t)(i % threads);
        int64_t when = CONVB_START_NS + (int64_t)(i / threads) * MS + (int64_t)t * 1000;
        uint64_t r = rng_next(&rng) % 100;
        if (r >= 70 && r < 85 && parent[cur[t]] != UINT32_MAX)
            cur[t] = parent[cur[t]];
        else if (r >= 85 && r < 95)
            cur[t] = (uint32_t)((cur[t] + 1 + rng_next(&rng) % 7) % BIG_STACKS);
        else if (r >= 95)
            cur[t] = (uint32_t)(rng_next(&rng) % BIG_STACKS);
        if (i % 1000 == 0)
            counter(&g, rss, when, 1e8 + (double)(i / 1000) * 4096);
        sample(&g, when, th[t], stacks[cur[t]], rng_next(&rng) % 10 ? ON : IDLE);
    }
    return finish(&g, g.info.end_ns + MS, info);
}

/* ---- the GPU trace ----------------------------------------------------- */

#define US 1000LL
#define GPU_PID2 4343
#define GPU_TID_AUTOGRAD 4260
#define GPU_BATCH 16

enum { ACT_KERNEL, ACT_COPY, ACT_SET };

typedef struct pact {    /* an activity record waiting for its batch */
    int kind;
    trc_gpu_kernel k;    /* where, start, end, name used by every kind */
    uint64_t bytes;
} pact;

static void api_call(gen *g, uint32_t th, int64_t s, int64_t e, trc_api_domain d,
                     const char *name, uint32_t corr, uint32_t st, uint32_t flags)
{
    trc_api_call a;

    if (g->tb.st != TRC_OK)
        return;
    memset(&a, 0, sizeof a);
    a.thread = th;
    a.start_ns = s;
    a.end_ns = e;
    a.domain = d;
    a.name = name;
    a.correlation = corr;
    a.stack = st;
    a.flags = flags;
    TB_DO(&g->tb, trc_writer_api_call, &a);
    g->info.api_calls++;
}

static void write_act(gen *g, const pact *p)
{
    if (g->tb.st != TRC_OK)
        return;
    if (p->kind == ACT_KERNEL) {
        TB_DO(&g->tb, trc_writer_gpu_kernel, &p->k);
        g->info.kernels++;
        g->info.kernel_ns += (uint64_t)(p->k.end_ns - p->k.start_ns);
    } else if (p->kind == ACT_COPY) {
        trc_gpu_memcpy m;
        memset(&m, 0, sizeof m);
        m.where = p->k.where;
        m.start_ns = p->k.start_ns;
        m.end_ns = p->k.end_ns;
        m.bytes = p->bytes;
        m.copy_kind = TRC_COPY_HTOD;
        m.src_kind = TRC_MEM_PINNED;
        m.dst_kind = TRC_MEM_DEVICE;
        m.dst_device = p->k.where.device;
        TB_DO(&g->tb, trc_writer_gpu_memcpy, &m);
    } else {
        trc_gpu_memset m;
        memset(&m, 0, sizeof m);
        m.where = p->k.where;
        m.start_ns = p->k.start_ns;
        m.end_ns = p->k.end_ns;
        m.bytes = p->bytes;
        m.mem_kind = TRC_MEM_DEVICE;
        TB_DO(&g->tb, trc_writer_gpu_memset, &m);
    }
    g->info.activities++;
    if (p->k.end_ns > g->info.end_ns)
        g->info.end_ns = p->k.end_ns;
}

/* Write the batch in order of completion (CUPTI's order), then empty it. */
static void flush_acts(gen *g, pact *b, uint32_t *n)
{
    for (uint32_t i = 1; i < *n; i++)
        for (uint32_t j = i; j > 0 && b[j].k.end_ns < b[j - 1].k.end_ns; j--) {
            pact x = b[j];
            b[j] = b[j - 1];
            b[j - 1] = x;
        }
    for (uint32_t i = 0; i < *n; i++)
        write_act(g, &b[i]);
    *n = 0;
}

static void marker(gen *g, trc_marker_kind kind, uint32_t th, int64_t pid, int64_t s, int64_t e,
                   const char *name, uint32_t color, uint64_t id)
{
    trc_marker m;

    if (g->tb.st != TRC_OK)
        return;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.thread = th;
    m.pid = pid;
    m.start_ns = s;
    m.end_ns = e;
    m.name = name;
    m.domain = "nvtx";
    m.color = color;
    m.id = id;
    TB_DO(&g->tb, trc_writer_marker, &m);
}

static void gpu_device(gen *g, uint32_t dev)
{
    trc_gpu_device d;

    memset(&d, 0, sizeof d);
    d.device = dev;
    d.name = "NVIDIA H100 80GB HBM3 (synthetic)";
    for (int i = 0; i < 16; i++)
        d.uuid[i] = (uint8_t)(dev * 16 + i);
    d.sm_count = 132;
    d.memory_bytes = 85520809984ull;
    d.cc_major = 9;
    if (g->tb.st == TRC_OK)
        TB_DO(&g->tb, trc_writer_gpu_device, &d);
}

trc_status convb_write_gpu(int fd, uint64_t n, convb_info *info)
{
    static const char *const kernels[4] = {
        "ampere_sgemm_128x64_nn", "vectorAdd(float const*, float const*, float*, int)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1>)",
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(Params)"};
    /* streams: device 0 streams 7, 13, 14; device 1 stream 3 */
    static const uint32_t s_dev[4] = {0, 0, 0, 1}, s_num[4] = {7, 13, 14, 3};
    const int64_t t0 = CONVB_START_NS + MS;
    int64_t free_at[4] = {0, 0, 0, 0}, prev_s[4] = {0, 0, 0, 0}, prev_e[4] = {0, 0, 0, 0};
    int64_t next_sample = CONVB_START_NS, end;
    pact batch[GPU_BATCH];
    uint32_t nb = 0, u0 = 0, u1 = 0, mem0 = 0, st[4], lines[4] = {12, 13, 14, 15};
    uint64_t missing = 0;
    trc_process p;
    trc_loss loss;
    gen g;

    memset(&g, 0, sizeof g);
    if (open_writer(&g, fd, 0) != TRC_OK)
        return g.tb.st;
    process(&g);
    memset(&p, 0, sizeof p);
    p.pid = GPU_PID2;
    p.ppid = CONVB_PID;
    p.rank = -1;
    p.executable = "/usr/bin/python3.12";
    p.command_line = "python3 loader.py";
    p.start_ns = CONVB_START_NS;
    TB_DO(&g.tb, trc_writer_process, &p);
    gpu_device(&g, 0);
    gpu_device(&g, 1);
    TB_DO(&g.tb, trc_writer_counter_def, "gpu.util", "percent", -1, 0, &u0);
    TB_DO(&g.tb, trc_writer_counter_def, "gpu.util", "percent", -1, 1, &u1);
    TB_DO(&g.tb, trc_writer_counter_def, "gpu.mem.used", "bytes", -1, 0, &mem0);

    uint32_t f_mod = frame(&g, TRC_FRAME_PYTHON, "<module>", "train.py", 40, 1);
    uint32_t f_main = frame(&g, TRC_FRAME_PYTHON, "main", "train.py", 33, 20);
    uint32_t s_mod = stack(&g, 0, f_mod), s_main = stack(&g, s_mod, f_main);
    for (int i = 0; i < 4; i++)
        st[i] = stack(&g, s_main, frame(&g, TRC_FRAME_PYTHON, "Model.forward", "model.py", lines[i], 10));
    uint32_t tm = thread(&g, CONVB_TID_MAIN, "MainThread");
    uint32_t ta = thread(&g, GPU_TID_AUTOGRAD, "autograd");
    g.info.threads = 2;

    marker(&g, TRC_MARK_PUSH, ta, CONVB_PID, t0 - 500 * US, t0 - 500 * US, "never popped", 0, 0);
    for (uint64_t i = 0; i < n && g.tb.st == TRC_OK; i++) {
        int64_t L = t0 + (int64_t)i * 10 * US, ks, ke;
        int kind = i % 10 == 3 ? ACT_COPY : i % 10 == 7 ? ACT_SET : ACT_KERNEL;
        int autograd = kind == ACT_KERNEL && i % 7 == 6;
        int dev1 = kind == ACT_KERNEL && !autograd && i % 11 == 10;
        uint32_t si = kind == ACT_COPY ? 0 : kind == ACT_SET ? 1 : autograd ? 2 : dev1 ? 3 : 1 + (uint32_t)(i % 2);
        uint32_t corr = (uint32_t)i + 1;
        pact a;

        /* CPU samples and NVML counters up to this launch. */
        while (next_sample <= L) {
            uint32_t ms = (uint32_t)((next_sample - CONVB_START_NS) / MS);
            sample(&g, next_sample, tm, st[ms % 4], ON);
            counter(&g, u0, next_sample, (double)(ms * 37 % 101));
            counter(&g, u1, next_sample, (double)(ms * 13 % 101));
            counter(&g, mem0, next_sample, 1e9 + (double)ms * 1048576.0);
            next_sample += MS;
        }
        /* The calls: a runtime call around its driver call (written first,
         * as CUPTI writes a call when it returns), or a bare driver launch
         * from the autograd thread. */
        if (autograd) {
            api_call(&g, ta, L + 1 * US, L + 4 * US, TRC_API_DRIVER, "cuLaunchKernel", corr, 0,
                     TRC_API_LAUNCH | TRC_API_NO_PYTHON);
        } else {
            const char *rt = kind == ACT_COPY ? "cudaMemcpyAsync" : kind == ACT_SET ? "cudaMemsetAsync"
                                                                                  : "cudaLaunchKernel";
            const char *dr = kind == ACT_COPY ? "cuMemcpyHtoDAsync" : kind == ACT_SET ? "cuMemsetD8Async"
                                                                                   : "cuLaunchKernel";
            api_call(&g, tm, L + 1 * US, L + 4 * US, TRC_API_DRIVER, dr, corr + 0x40000000u,
                     st[i % 4], TRC_API_LAUNCH);
            api_call(&g, tm, L, L + 5 * US, TRC_API_RUNTIME, rt, corr, st[i % 4], TRC_API_LAUNCH);
        }
        /* The activity: queued behind its stream's previous work. */
        ks = L + 20 * US > free_at[si] ? L + 20 * US : free_at[si];
        ke = ks + (int64_t)(3 + i % 6) * US;
        if (si == 1 && i % 50 == 48 && prev_e[si] > prev_s[si] + 1 * US)
            ks = prev_e[si] - 1 * US, ke = ks + 4 * US; /* overlaps the previous one */
        if (si == 2 && i % 97 == 95 && prev_e[si] - prev_s[si] >= 3 * US)
            ks = prev_s[si] + 1 * US, ke = prev_e[si] - 1 * US; /* inside the previous one */
        if (i == 5)
            ke = ks; /* zero-length */
        if (ke > free_at[si])
            free_at[si] = ke;
        prev_s[si] = ks;
        prev_e[si] = ke;
        memset(&a, 0, sizeof a);
        a.kind = kind;
        a.k.where.pid = CONVB_PID;
        a.k.where.device = s_dev[si];
        a.k.where.context = 1 + s_dev[si];
        a.k.where.stream = s_num[si];
        a.k.where.correlation = corr;
        a.k.start_ns = ks;
        a.k.end_ns = ke;
        a.k.name = kernels[i % 4];
        a.k.grid[0] = 1024, a.k.grid[1] = 2, a.k.grid[2] = 1;
        a.k.block[0] = 256, a.k.block[1] = a.k.block[2] = 1;
        a.k.registers = 32;
        a.k.static_smem = 1024;
        a.k.dynamic_smem = (uint32_t)(i % 3) * 1024;
        a.bytes = 1048576u * (1 + i % 4);
        if (i % 333 == 332) {
            missing++; /* dropped by "CUPTI": the launch has no activity */
        } else {
            batch[nb++] = a;
            if (ke > ks && (autograd ? L + 1 * US : L) < ks) /* the call starts first */
                g.info.flows++;
        }
        /* The other process: its own kernel on device 0 stream 7, no calls. */
        if (i % 200 == 199) {
            pact o = a;
            o.kind = ACT_KERNEL;
            o.k.where.pid = GPU_PID2;
            o.k.where.device = 0;
            o.k.where.context = 9;
            o.k.where.stream = 7;
            o.k.where.correlation = corr;
            o.k.name = kernels[3];
            o.k.start_ns = L + 2 * US;
            o.k.end_ns = L + 7 * US;
            write_act(&g, &o);
        }
        if (nb == GPU_BATCH)
            flush_acts(&g, batch, &nb);
        /* NVTX: "forward" around each 10 launches, "step" around 100, both
         * written when they end (after what they enclose). */
        if (i % 10 == 9)
            marker(&g, TRC_MARK_RANGE, tm, CONVB_PID, L - 90 * US - 1 * US, L + 6 * US, "forward",
                   0, i + 1);
        if (i % 100 == 99)
            marker(&g, TRC_MARK_RANGE, tm, CONVB_PID, L - 990 * US - 2 * US, L + 7 * US, "step",
                   0x00c000, i + 1);
        if (i % 500 == 250)
            marker(&g, TRC_MARK_INSTANT, tm, CONVB_PID, L + 8 * US, L + 8 * US, "checkpoint", 0, 0);
        /* a stream synchronisation now and then */
        if (i % 100 == 50) {
            int64_t ss = L + 6 * US, se = (free_at[1] > ss ? free_at[1] : ss) + 1 * US;
            trc_gpu_sync y;
            api_call(&g, tm, ss, se, TRC_API_RUNTIME, "cudaStreamSynchronize", 0x20000000u + corr, 0, 0);
            memset(&y, 0, sizeof y);
            y.where.pid = CONVB_PID;
            y.where.device = 0;
            y.where.context = 1;
            y.where.stream = 13;
            y.where.correlation = 0x20000000u + corr;
            y.start_ns = ss;
            y.end_ns = se;
            y.sync_kind = TRC_SYNC_STREAM;
            if (g.tb.st == TRC_OK)
                TB_DO(&g.tb, trc_writer_gpu_sync, &y);
        }
    }
    flush_acts(&g, batch, &nb);
    end = g.info.end_ns > t0 ? g.info.end_ns : t0;
    {   /* the end: a device-wide sync, orphan POP, a process-wide range */
        trc_gpu_sync y;
        api_call(&g, tm, end + 1 * US, end + 3 * US, TRC_API_RUNTIME, "cudaDeviceSynchronize",
                 0x30000000u, 0, 0);
        memset(&y, 0, sizeof y);
        y.where.pid = CONVB_PID;
        y.where.context = 1;
        y.where.stream = UINT32_MAX;
        y.where.correlation = 0x30000000u;
        y.start_ns = end + 1 * US;
        y.end_ns = end + 3 * US;
        y.sync_kind = TRC_SYNC_CONTEXT;
        if (g.tb.st == TRC_OK)
            TB_DO(&g.tb, trc_writer_gpu_sync, &y);
    }
    marker(&g, TRC_MARK_POP, tm, CONVB_PID, end + 4 * US, end + 4 * US, "never pushed", 0, 0);
    marker(&g, TRC_MARK_RANGE, 0, CONVB_PID, t0 - 100 * US, end + 5 * US, "epoch 0", 0xff8800, 7);
    memset(&loss, 0, sizeof loss);
    loss.kind = TRC_LOSS_GPU_DROPPED;
    loss.count = missing ? missing : 1;
    loss.pid = CONVB_PID;
    loss.detail = "CUPTI activity records dropped (buffer full)";
    if (g.tb.st == TRC_OK) {
        TB_DO(&g.tb, trc_writer_loss, &loss);
        g.info.losses++;
    }
    g.info.end_ns = end + 5 * US;
    return finish(&g, end + MS, info);
}

/* ---- the hand-made GPU stream ------------------------------------------ */

static void hand_kernel(tb_gen *g, const char *name, uint32_t stream, uint32_t corr, int64_t s,
                        int64_t e)
{
    trc_gpu_kernel k;
    memset(&k, 0, sizeof k);
    k.where.pid = 77;
    k.where.device = 0;
    k.where.context = 1;
    k.where.stream = stream;
    k.where.correlation = corr;
    k.start_ns = CONVB_HAND_T0 + s;
    k.end_ns = CONVB_HAND_T0 + e;
    k.name = name;
    k.grid[0] = k.block[0] = 1;
    TB_DO(g, trc_writer_gpu_kernel, &k);
}

static void hand_call(tb_gen *g, uint32_t th, const char *name, trc_api_domain d, uint32_t corr,
                      int64_t s, int64_t e)
{
    trc_api_call a;
    memset(&a, 0, sizeof a);
    a.thread = th;
    a.start_ns = CONVB_HAND_T0 + s;
    a.end_ns = CONVB_HAND_T0 + e;
    a.domain = d;
    a.name = name;
    a.correlation = corr;
    a.flags = TRC_API_LAUNCH;
    TB_DO(g, trc_writer_api_call, &a);
}

trc_status convb_write_gpu_hand(int fd)
{
    trc_writer_options o;
    tb_gen g;

    memset(&o, 0, sizeof o);
    o.recorder = "test";
    o.host = "h";
    o.start_ns = CONVB_HAND_T0;
    o.wall_ns = 1;
    if (tb_gen_open(&g, fd, NULL, &o) != TRC_OK)
        return g.st;
    uint32_t th = tb_gen_thread(&g, 77, 78, "launcher");
    hand_call(&g, th, "cuLaunchKernel", TRC_API_DRIVER, 1001, 52, 58);
    hand_call(&g, th, "cudaLaunchKernel", TRC_API_RUNTIME, 1, 50, 60);
    hand_kernel(&g, "kB", 5, 2, 120, 150);
    hand_kernel(&g, "kA", 5, 1, 100, 200);
    hand_kernel(&g, "kC", 5, 3, 180, 260);
    hand_kernel(&g, "kD", 5, 4, 190, 200);
    hand_kernel(&g, "kE", 5, 5, 300, 300);
    hand_kernel(&g, "kF", 5, 6, 400, 450);
    hand_kernel(&g, "kF", 5, 7, 400, 450);
    hand_kernel(&g, "kH", 5, 8, 420, 430);
    hand_call(&g, th, "cudaLaunchKernel", TRC_API_RUNTIME, 8, 500, 510);
    return tb_gen_close(&g, CONVB_HAND_T0 + 1000);
}

#ifdef TIMELINE_GEN_MAIN
/* The timeline-gen program (mk/convb.mk): the traces above as files, for
 * the e2e tests, the converter goldens and the benchmark:
 *   timeline-gen --write-small FILE
 *   timeline-gen --write-big N THREADS FILE
 *   timeline-gen --write-gpu N FILE   (prints what it wrote: flows=N ...) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    trc_status st;
    int fd;
    const char *path = argc > 2 ? argv[argc - 1] : NULL;

    if (!path) {
        fprintf(stderr, "usage: timeline-gen --write-small FILE | --write-big N THREADS FILE | "
                        "--write-gpu N FILE\n");
        return 2;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    if (strcmp(argv[1], "--write-small") == 0 && argc == 3)
        st = convb_write_small(fd, NULL);
    else if (strcmp(argv[1], "--write-big") == 0 && argc == 5)
        st = convb_write_big(fd, strtoull(argv[2], NULL, 10), (uint32_t)atoi(argv[3]), NULL);
    else if (strcmp(argv[1], "--write-gpu") == 0 && argc == 4) {
        convb_info info;
        st = convb_write_gpu(fd, strtoull(argv[2], NULL, 10), &info);
        /* what the e2e checks compare the outputs against */
        printf("kernels=%llu kernel_ns=%llu activities=%llu api_calls=%llu flows=%llu\n",
               (unsigned long long)info.kernels, (unsigned long long)info.kernel_ns,
               (unsigned long long)info.activities, (unsigned long long)info.api_calls,
               (unsigned long long)info.flows);
    }
    else
        st = TRC_ERR_ARG;
    if (close(fd) != 0 && st == TRC_OK)
        st = TRC_ERR_IO;
    if (st != TRC_OK) {
        fprintf(stderr, "%s: %s\n", path, trc_status_str(st));
        return 2;
    }
    return 0;
}
#endif
