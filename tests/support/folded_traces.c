/*
 * tests/support/folded_traces.c — synthetic traces for the collapsed /
 * stats / pstats converters (see folded_traces.h), written with the one
 * trace builder (tb_gen, trace_builder.h).  With -DCONV_GEN_MAIN
 * it is the conv-gen program the e2e tests and bench use:
 *   conv-gen fixture|lossy FILE      conv-gen big N FILE
 *   conv-gen ticks SAMPLES MISSED INVALID LATE FILE
 * and prints "samples N on_cpu N on_cpu_ns N idle N gil N" on stdout.
 */
#include "tests/support/folded_traces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/trace_builder.h"

#define ON (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_HOLDS_GIL | TRC_SAMPLE_GIL_KNOWN)
#define ON_NOGIL (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN)
#define IDLE TRC_SAMPLE_GIL_KNOWN

struct conv_tb {
    tb_gen g;
    tb_buf out;       /* what the writer wrote */
    tb_src in;        /* what the reader reads: out's bytes */
    int closed;
    int64_t end_ns;   /* after the last sample: a fixed SEGMENT_END time */
    conv_info info;
};

static void fixed_options(trc_writer_options *o, uint32_t chunk_bytes)
{
    memset(o, 0, sizeof *o);
    o->recorder = "conv-gen 1";
    o->host = "fixture-host";
    o->command_line = "python3 app.py";
    o->start_ns = CONV_START_NS;
    o->wall_ns = 1700000000000000000LL;
    o->period_ns = CONV_PERIOD_NS;
    o->chunk_bytes = chunk_bytes;
    o->flush_interval_ns = 1000 * CONV_MS; /* chunk size decides, not the clock */
    o->compression_level = 1;
}

conv_tb *conv_tb_new(void)
{
    conv_tb *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    trc_writer_options o;
    fixed_options(&o, 4096);
    if (tb_gen_open(&b->g, -1, &b->out, &o) != TRC_OK) {
        tb_buf_free(&b->out);
        free(b);
        return NULL;
    }
    return b;
}

void conv_tb_free(conv_tb *b)
{
    if (!b)
        return;
    if (!b->closed)
        tb_gen_close(&b->g, CONV_START_NS + 1);
    tb_buf_free(&b->out);
    free(b);
}

trc_writer *conv_tb_writer(conv_tb *b) { return b->g.w; }
trc_status conv_tb_status(const conv_tb *b) { return b->g.st; }

uint32_t conv_tb_frame(conv_tb *b, const char *fn, const char *file, uint32_t line,
                       uint32_t first_line)
{
    return tb_gen_frame(&b->g, TRC_FRAME_PYTHON, fn, file, line, first_line);
}

uint32_t conv_tb_native(conv_tb *b, const char *fn)
{
    return tb_gen_frame(&b->g, TRC_FRAME_NATIVE, fn, "", 0, 0);
}

uint32_t conv_tb_other(conv_tb *b, const char *fn)
{
    return tb_gen_frame(&b->g, TRC_FRAME_OTHER, fn, "", 0, 0);
}

uint32_t conv_tb_stack(conv_tb *b, size_t n, const uint32_t *f)
{
    uint32_t id = 0;
    for (size_t i = 0; i < n; i++)
        id = tb_gen_stack(&b->g, id, f[i]);
    return id;
}

uint32_t conv_tb_thread(conv_tb *b, int64_t pid, int64_t tid, const char *name)
{
    return tb_gen_thread(&b->g, pid, tid, name);
}

void conv_tb_sample(conv_tb *b, double t_ms, uint32_t thread, uint32_t stack, uint32_t flags,
                    uint64_t weight_ns)
{
    if (b->g.st != TRC_OK)
        return;
    int64_t t = CONV_START_NS + (int64_t)(t_ms * (double)CONV_MS + 0.5);
    TB_DO(&b->g, trc_writer_sample, t, thread, stack, flags, weight_ns);
    uint64_t w = weight_ns ? weight_ns : CONV_PERIOD_NS;
    if (t + (int64_t)w > b->end_ns)
        b->end_ns = t + (int64_t)w;
    b->info.samples++;
    if (flags & TRC_SAMPLE_ON_CPU) {
        b->info.on_cpu++;
        b->info.on_cpu_ns += w;
        if ((flags & (TRC_SAMPLE_GIL_KNOWN | TRC_SAMPLE_HOLDS_GIL)) ==
            (TRC_SAMPLE_GIL_KNOWN | TRC_SAMPLE_HOLDS_GIL))
            b->info.gil++;
    } else {
        b->info.idle++;
    }
}

void conv_tb_loss(conv_tb *b, trc_loss_kind kind, uint64_t count)
{
    trc_loss l;
    memset(&l, 0, sizeof l);
    l.kind = kind;
    l.count = count;
    l.pid = -1;
    l.detail = "";
    TB_DO(&b->g, trc_writer_loss, &l);
}

static trc_status close_once(conv_tb *b)
{
    if (!b->closed) {
        b->closed = 1;
        /* end 0 would be "now": keep the bytes deterministic */
        tb_gen_close(&b->g, b->end_ns ? b->end_ns : CONV_START_NS + 1);
    }
    return b->g.st;
}

trc_reader *conv_tb_reader(conv_tb *b)
{
    if (close_once(b) != TRC_OK)
        return NULL;
    b->in.p = b->out.p;
    b->in.len = b->out.len;
    b->in.pos = 0;
    trc_status st;
    return trc_reader_open_callback(tb_read, &b->in, "<memory>", &st);
}

const unsigned char *conv_tb_bytes(const conv_tb *b, size_t *n)
{
    *n = b->out.len;
    return b->out.p;
}

/* ---- whole traces ------------------------------------------------ */

/* Builds a trace in a conv_tb and copies it to fd. */
static trc_status to_fd(conv_tb *b, int fd, conv_info *info)
{
    trc_status st = close_once(b);
    for (size_t off = 0; st == TRC_OK && off < b->out.len;) {
        ssize_t k = write(fd, b->out.p + off, b->out.len - off);
        if (k <= 0)
            st = TRC_ERR_IO;
        else
            off += (size_t)k;
    }
    if (info)
        *info = b->info;
    conv_tb_free(b);
    return st;
}

static void process(conv_tb *b, int64_t pid, const char *exe, const char *cmd)
{
    trc_process p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.ppid = 1;
    p.rank = -1;
    p.executable = exe;
    p.interpreter = "CPython 3.11.2";
    p.command_line = cmd;
    p.start_ns = CONV_START_NS;
    TB_DO(&b->g, trc_writer_process, &p);
}

static void fixture_body(conv_tb *b, int lossy)
{
    process(b, 100, "/usr/bin/python3.11", "python3 app.py");
    process(b, 200, "/usr/bin/python3.11", "python3 -m worker");
    uint32_t t_main = conv_tb_thread(b, 100, 100, "MainThread");
    uint32_t t_pool = conv_tb_thread(b, 100, 101, "pool;1\n");
    uint32_t t_w2 = conv_tb_thread(b, 200, 200, "w2");

    uint32_t mod = conv_tb_frame(b, "<module>", "/home/u/proj/app.py", 40, 1);
    uint32_t main10 = conv_tb_frame(b, "main", "/home/u/proj/app.py", 10, 8);
    uint32_t main12 = conv_tb_frame(b, "main", "/home/u/proj/app.py", 12, 8);
    uint32_t fib31 = conv_tb_frame(b, "fib", "/home/u/proj/app.py", 31, 29);
    uint32_t fib30 = conv_tb_frame(b, "fib", "/home/u/proj/app.py", 30, 29);
    uint32_t comp = conv_tb_frame(b, "compute",
                                  "/venv/lib/python3.11/site-packages/numlib/core.py", 77, 70);
    uint32_t dec = conv_tb_frame(b, "JSONDecoder.decode", "/usr/lib/python3.11/json/decoder.py",
                                 337, 332);
    uint32_t odd = conv_tb_frame(b, "odd;name%\tx", "/home/u/proj/odd file.py", 5, 3);
    uint32_t nat = conv_tb_native(b, "PyEval_EvalFrameDefault");
    uint32_t wmain = conv_tb_frame(b, "run", "worker.py", 3, 1);

    uint32_t s_main = conv_tb_stack(b, 2, (uint32_t[]){mod, main10});
    uint32_t s_fib1 = conv_tb_stack(b, 3, (uint32_t[]){mod, main10, fib31});
    uint32_t s_fib2 = conv_tb_stack(b, 4, (uint32_t[]){mod, main10, fib31, fib30});
    uint32_t s_fib4 = conv_tb_stack(b, 6, (uint32_t[]){mod, main10, fib31, fib31, fib31, fib30});
    uint32_t s_comp = conv_tb_stack(b, 3, (uint32_t[]){mod, main12, comp});
    uint32_t s_dec = conv_tb_stack(b, 4, (uint32_t[]){mod, main12, dec, nat});
    uint32_t s_odd = conv_tb_stack(b, 3, (uint32_t[]){mod, main12, odd});
    uint32_t s_pool = conv_tb_stack(b, 1, (uint32_t[]){comp});
    uint32_t s_w = conv_tb_stack(b, 2, (uint32_t[]){wmain, dec});

    double t = 0;
    /* MainThread: main, then recursion, then compute (folded), decode, odd */
    conv_tb_sample(b, t++, t_main, s_main, ON, 0);
    conv_tb_sample(b, t++, t_main, s_fib1, ON, 0);
    conv_tb_sample(b, t++, t_main, s_fib2, ON, 0);
    conv_tb_sample(b, t++, t_main, s_fib4, ON, 0);
    conv_tb_sample(b, t++, t_main, s_fib4, ON, 0);
    conv_tb_sample(b, t++, t_main, s_fib1, ON, 0);
    for (int i = 0; i < 6; i++)
        conv_tb_sample(b, t++, t_main, s_comp, ON, 0);
    conv_tb_sample(b, t++, t_main, s_dec, ON_NOGIL, 2 * CONV_PERIOD_NS);
    conv_tb_sample(b, t++, t_main, s_dec, ON_NOGIL, 2 * CONV_PERIOD_NS);
    conv_tb_sample(b, t++, t_main, s_odd, ON, 0);
    conv_tb_sample(b, t++, t_main, s_main, IDLE, 0);
    conv_tb_sample(b, t++, t_main, s_main, IDLE, 0);
    conv_tb_sample(b, t++, t_main, 0, ON, 0);
    conv_tb_sample(b, t++, t_main, s_comp, ON, 0);
    if (lossy) {
        conv_tb_loss(b, TRC_LOSS_SAMPLES_MISSED, 5);
        conv_tb_loss(b, TRC_LOSS_SAMPLES_INVALID, 1);
    }
    /* pool;1 and w2 interleaved with each other */
    for (int i = 0; i < 4; i++) {
        conv_tb_sample(b, 0.5 + i, t_pool, s_pool, ON, 0);
        conv_tb_sample(b, 0.5 + i, t_w2, s_w, i == 3 ? IDLE : ON, 0);
    }
    conv_tb_sample(b, 5.5, t_pool, s_pool, IDLE, 0);
    conv_tb_sample(b, 6.5, t_pool, s_pool, ON, 0);
}

trc_status conv_write_fixture(int fd, conv_info *info)
{
    conv_tb *b = conv_tb_new();
    if (!b)
        return TRC_ERR_NOMEM;
    fixture_body(b, 0);
    return to_fd(b, fd, info);
}

trc_status conv_write_lossy(int fd, conv_info *info)
{
    conv_tb *b = conv_tb_new();
    if (!b)
        return TRC_ERR_NOMEM;
    fixture_body(b, 1);
    return to_fd(b, fd, info);
}

trc_status conv_write_ticks(int fd, uint64_t samples, uint64_t missed, uint64_t invalid,
                            uint64_t late, conv_info *info)
{
    conv_tb *b = conv_tb_new();
    if (!b)
        return TRC_ERR_NOMEM;
    process(b, 100, "/usr/bin/python3.11", "python3 app.py");
    uint32_t t_main = conv_tb_thread(b, 100, 100, "MainThread");
    uint32_t mod = conv_tb_frame(b, "<module>", "/home/u/proj/app.py", 1, 1);
    uint32_t s_mod = conv_tb_stack(b, 1, (uint32_t[]){mod});
    for (uint64_t i = 0; i < samples; i++)
        conv_tb_sample(b, (double)i, t_main, s_mod, ON, 0);
    if (missed)
        conv_tb_loss(b, TRC_LOSS_SAMPLES_MISSED, missed);
    if (invalid)
        conv_tb_loss(b, TRC_LOSS_SAMPLES_INVALID, invalid);
    if (late)
        conv_tb_loss(b, TRC_LOSS_SAMPLES_LATE, late);
    return to_fd(b, fd, info);
}

/* A deterministic generator (xorshift). */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

trc_status conv_write_big(int fd, uint64_t n, conv_info *info)
{
    enum { NFRAMES = 120, NSTACKS = 600, NTHREADS = 4 };
    trc_writer_options o;
    fixed_options(&o, 0);
    tb_gen g;
    if (tb_gen_open(&g, fd, NULL, &o) != TRC_OK)
        return g.st;
    conv_info inf = {0};
    uint32_t frames[NFRAMES], stacks[NSTACKS], parent_of[NSTACKS], depth[NSTACKS];
    uint32_t threads[NTHREADS], cur[NTHREADS];
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    char fn[64], file[96];
    for (int i = 0; i < NFRAMES && g.st == TRC_OK; i++) {
        snprintf(fn, sizeof fn, "func_%d", i);
        snprintf(file, sizeof file, "/srv/app/pkg%d/mod%d.py", i % 7, i % 13);
        frames[i] = tb_gen_frame(&g, TRC_FRAME_PYTHON, fn, file, (uint32_t)(10 + i % 40),
                                 (uint32_t)(5 + i % 40));
    }
    /* stack 0 of the pool is a root; every other one extends an earlier
     * one (so parents exist), favouring recent ones for depth */
    for (int i = 0; i < NSTACKS && g.st == TRC_OK; i++) {
        uint32_t p = i == 0 ? 0 : (uint32_t)(rnd(&seed) % (uint64_t)i);
        if (i > 0 && depth[p] >= 48)
            p = 0;
        uint32_t parent = i == 0 ? 0 : stacks[p];
        depth[i] = i == 0 ? 1 : depth[p] + 1;
        parent_of[i] = i == 0 ? 0 : p;
        stacks[i] = tb_gen_stack(&g, parent, frames[rnd(&seed) % NFRAMES]);
    }
    for (int i = 0; i < NTHREADS && g.st == TRC_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, i ? "worker-%d" : "MainThread", i);
        threads[i] = tb_gen_thread(&g, 300, 300 + i, name);
        cur[i] = (uint32_t)i;
    }
    for (uint64_t k = 0; k < n && g.st == TRC_OK; k++) {
        int th = (int)(k % NTHREADS);
        uint64_t r = rnd(&seed);
        if (r % 100 >= 70) { /* move: up to the parent or to a random child-ish stack */
            if (r & 1)
                cur[th] = parent_of[cur[th]];
            else
                cur[th] = (uint32_t)((r >> 8) % NSTACKS);
        }
        uint32_t flags = (r >> 20) % 10 == 0 ? IDLE : ON;
        int64_t t = CONV_START_NS + (int64_t)(k / NTHREADS) * (int64_t)CONV_PERIOD_NS;
        TB_DO(&g, trc_writer_sample, t, threads[th], stacks[cur[th]], flags, 0);
        inf.samples++;
        if (flags & TRC_SAMPLE_ON_CPU) {
            inf.on_cpu++;
            inf.on_cpu_ns += CONV_PERIOD_NS;
            inf.gil++;
        } else {
            inf.idle++;
        }
    }
    tb_gen_close(&g, CONV_START_NS + (int64_t)(n / NTHREADS + 1) * (int64_t)CONV_PERIOD_NS);
    if (info)
        *info = inf;
    return g.st;
}

#ifdef CONV_GEN_MAIN
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    conv_info info;
    trc_status st;
    const char *path = argc == 3 ? argv[2] : argc == 4 ? argv[3] : argc == 7 ? argv[6] : NULL;
    if (!path || (argc == 4 && strcmp(argv[1], "big") != 0) ||
        (argc == 7 && strcmp(argv[1], "ticks") != 0)) {
        fprintf(stderr, "usage: conv-gen fixture|lossy FILE | conv-gen big N FILE | "
                        "conv-gen ticks SAMPLES MISSED INVALID LATE FILE\n");
        return 2;
    }
    int fd = strcmp(path, "-") == 0 ? 1 : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    if (strcmp(argv[1], "fixture") == 0)
        st = conv_write_fixture(fd, &info);
    else if (strcmp(argv[1], "lossy") == 0)
        st = conv_write_lossy(fd, &info);
    else if (strcmp(argv[1], "big") == 0)
        st = conv_write_big(fd, strtoull(argv[2], NULL, 10), &info);
    else if (strcmp(argv[1], "ticks") == 0)
        st = conv_write_ticks(fd, strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10),
                              strtoull(argv[4], NULL, 10), strtoull(argv[5], NULL, 10), &info);
    else {
        fprintf(stderr, "conv-gen: unknown trace '%s'\n", argv[1]);
        return 2;
    }
    if (st != TRC_OK) {
        fprintf(stderr, "conv-gen: %s\n", trc_status_str(st));
        return 1;
    }
    fprintf(fd == 1 ? stderr : stdout,
            "samples %" PRIu64 " on_cpu %" PRIu64 " on_cpu_ns %" PRIu64 " idle %" PRIu64
            " gil %" PRIu64 "\n",
            info.samples, info.on_cpu, info.on_cpu_ns, info.idle, info.gil);
    return 0;
}
#endif
