/*
 * tests/support/convb_traces.c — synthetic CPU traces for the speedscope
 * and Chrome exporters' tests and benchmark (see convb_traces.h).
 */
#include "tests/support/convb_traces.h"

#include <string.h>

#define MS 1000000LL
#define ON (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_HOLDS_GIL | TRC_SAMPLE_GIL_KNOWN)
#define ON_NOGIL (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN)
#define IDLE TRC_SAMPLE_GIL_KNOWN

typedef struct gen {
    trc_writer *w;
    trc_status st;  /* first error; later calls do nothing */
    convb_info info;
} gen;

static void check(gen *g, trc_status st)
{
    if (g->st == TRC_OK)
        g->st = st;
}

static uint32_t frame(gen *g, trc_frame_kind kind, const char *fn, const char *file,
                      uint32_t line, uint32_t first)
{
    uint32_t id = 0;
    if (g->st == TRC_OK)
        check(g, trc_writer_frame(g->w, kind, fn, file, line, first, &id));
    return id;
}

static uint32_t stack(gen *g, uint32_t parent, uint32_t fr)
{
    uint32_t id = 0;
    if (g->st == TRC_OK)
        check(g, trc_writer_stack(g->w, parent, fr, &id));
    return id;
}

static uint32_t thread(gen *g, int64_t tid, const char *name)
{
    uint32_t id = 0;
    if (g->st == TRC_OK)
        check(g, trc_writer_thread(g->w, CONVB_PID, tid, name, &id));
    return id;
}

static void sample(gen *g, int64_t t, uint32_t th, uint32_t st, uint32_t flags)
{
    if (g->st != TRC_OK)
        return;
    check(g, trc_writer_sample(g->w, t, th, st, flags, CONVB_PERIOD_NS));
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
    if (g->st != TRC_OK)
        return;
    check(g, trc_writer_counter(g->w, c, t, v));
    g->info.counter_values++;
}

static trc_writer *open_writer(int fd, trc_status *st)
{
    static const trc_kv meta[] = {{"generator", "tests/support/convb_traces.c"}};
    trc_writer_options o;
    memset(&o, 0, sizeof o);
    o.recorder = "convb-gen 1";
    o.host = "testhost";
    o.command_line = "python3 app.py --size 3";
    o.n_metadata = 1;
    o.metadata = meta;
    o.start_ns = CONVB_START_NS;
    o.wall_ns = 1700000000000000000LL;
    o.period_ns = CONVB_PERIOD_NS;
    o.compression_level = 1;
    return trc_writer_open_fd(fd, &o, st);
}

static void process(gen *g)
{
    trc_process p;
    memset(&p, 0, sizeof p);
    p.pid = CONVB_PID;
    p.ppid = 1;
    p.executable = "/usr/bin/python3.12";
    p.interpreter = "CPython 3.12.1";
    p.command_line = "python3 app.py --size 3";
    p.start_ns = CONVB_START_NS;
    check(g, trc_writer_process(g->w, &p));
}

static trc_status finish(gen *g, int64_t end_ns, convb_info *info)
{
    trc_status st = trc_writer_close(g->w, end_ns);
    if (g->st == TRC_OK)
        g->st = st;
    if (info)
        *info = g->info;
    return g->st;
}

trc_status convb_write_small(int fd, convb_info *info)
{
    gen g;
    const int64_t t0 = CONVB_START_NS;
    trc_loss loss;
    trc_process_exit ex;
    uint32_t rss = 0, load = 0;

    memset(&g, 0, sizeof g);
    g.w = open_writer(fd, &g.st);
    if (!g.w)
        return g.st;
    process(&g);
    check(&g, trc_writer_counter_def(g.w, "rss", "bytes", CONVB_PID, -1, &rss));
    check(&g, trc_writer_counter_def(g.w, "load", "percent", -1, -1, &load));

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
    if (g.st == TRC_OK) {
        check(&g, trc_writer_loss(g.w, &loss));
        g.info.losses++;
    }
    memset(&ex, 0, sizeof ex);
    ex.pid = CONVB_PID;
    ex.time_ns = t0 + 20 * MS + MS / 2;
    if (g.st == TRC_OK)
        check(&g, trc_writer_process_exit(g.w, &ex));
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
    g.w = open_writer(fd, &g.st);
    if (!g.w)
        return g.st;
    process(&g);
    check(&g, trc_writer_counter_def(g.w, "rss", "bytes", CONVB_PID, -1, &rss));
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
    for (uint64_t i = 0; i < n && g.st == TRC_OK; i++) {
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
