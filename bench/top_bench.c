/*
 * bench/top_bench.c — what a trc-top refresh costs (bench/top.sh): a
 * synthetic recording of 8 threads sampled at 1 kHz (stacks of depth 20
 * from a pool of 400 over 200 frames, each thread moving by a
 * deterministic random walk that often stays put, as trec's folded
 * repeats do), read through the converter pipeline into trc-top's model
 * (lib/export/top/top.h) with a refresh every 100 ms of trace time, as
 * the screen does at 10 Hz: a table filled and its rows formatted as
 * text (the screen's drawing itself excluded).  Refreshes are timed in
 * thread CPU time once the 10 s window is full.
 *
 *   top_bench SECONDS   prints "refreshes=N window_p50_us=... window_max_us=...
 *                       all_p50_us=... feed_us_per_s=... rows=..."
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/export/pipeline/pipeline.h"
#include "lib/export/top/top.h"
#include "lib/export/top/top_format.h"

#define THREADS 8
#define FRAMES 200
#define STACKS 400
#define DEPTH 20
#define PERIOD_NS 1000000LL
#define T0 1000000000LL
#define REFRESH_NS 100000000LL
#define WINDOW_NS 10000000000LL

typedef struct membuf {
    unsigned char *p;
    size_t n, cap, pos;
} membuf;

static int mem_write(void *ctx, const void *buf, size_t len)
{
    membuf *b = ctx;
    if (b->n + len > b->cap) {
        b->cap = (b->n + len) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            return -1;
    }
    memcpy(b->p + b->n, buf, len);
    b->n += len;
    return 0;
}

static long mem_read(void *ctx, void *buf, size_t len)
{
    membuf *b = ctx;
    size_t k = b->n - b->pos < len ? b->n - b->pos : len;
    memcpy(buf, b->p + b->pos, k);
    b->pos += k;
    return (long)k;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int write_trace(membuf *b, int seconds)
{
    trc_writer_options o;
    trc_status st;
    memset(&o, 0, sizeof o);
    o.recorder = "top_bench";
    o.host = "bench";
    o.start_ns = T0;
    o.wall_ns = 1;
    o.period_ns = PERIOD_NS;
    trc_writer *w = trc_writer_open_callback(mem_write, b, &o, &st);
    if (!w)
        return -1;
    uint32_t frames[FRAMES], stacks[STACKS], threads[THREADS], cur[THREADS];
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    char fn[32], file[32];
    for (int i = 0; i < FRAMES; i++) {
        snprintf(fn, sizeof fn, "func_%d", i);
        snprintf(file, sizeof file, "pkg/mod_%d.py", i % 17);
        trc_writer_frame(w, TRC_FRAME_PYTHON, fn, file, (uint32_t)(10 + i % 40), 1, &frames[i]);
    }
    for (int i = 0; i < STACKS; i++) {
        uint32_t id = 0;
        for (int d = 0; d < DEPTH; d++)
            trc_writer_stack(w, id, frames[(d == DEPTH - 1 ? rnd(&seed) : (uint64_t)(i % 20 + d * 7)) % FRAMES], &id);
        stacks[i] = id;
    }
    for (int t = 0; t < THREADS; t++) {
        char name[16];
        snprintf(name, sizeof name, "worker-%d", t);
        trc_writer_thread(w, 100, 100 + t, name, &threads[t]);
        cur[t] = (uint32_t)(rnd(&seed) % STACKS);
    }
    int64_t ticks = (int64_t)seconds * 1000;
    for (int64_t k = 0; k < ticks; k++) {
        int64_t now = T0 + k * PERIOD_NS;
        for (int t = 0; t < THREADS; t++) {
            if (rnd(&seed) % 4 == 0)
                cur[t] = (uint32_t)(rnd(&seed) % STACKS);
            uint32_t flags = TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN |
                             (t == 0 ? TRC_SAMPLE_HOLDS_GIL : 0);
            if ((st = trc_writer_sample(w, now, threads[t], stacks[cur[t]], flags, 0)) != TRC_OK)
                return -1;
        }
        if (k % 100 == 99)
            trc_writer_tick(w, now);
    }
    return trc_writer_close(w, T0 + ticks * PERIOD_NS) == TRC_OK ? 0 : -1;
}

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* A sink over the model that refreshes every 100 ms of trace time. */
typedef struct bench {
    top_model *m;
    top_table t;
    int64_t next;
    double *win, *all;
    size_t n, cap;
    double feed_us, t0;
    size_t rows;
} bench;

static double refresh(bench *b, int since_start)
{
    top_view v = {since_start, 0, 0, TOP_SORT_OWN};
    top_context c = {10, "", "reading", "", 0, 0};
    char line[TOP_LINE], head[4][TOP_LINE];
    double t0 = cpu_us();
    if (top_table_fill(b->m, &v, &b->t) != TRC_OK)
        return -1;
    top_format_header(&b->t, &v, &c, head, 4);
    for (size_t i = 0; i < b->t.n && i < 40; i++)
        top_format_row(&b->t, &b->t.rows[i], line, sizeof line);
    b->rows = b->t.n;
    return cpu_us() - t0;
}

static trc_status on_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    bench *b = self;
    if (ev->type == TRC_EV_SAMPLE && ev->u.sample.time_ns >= b->next) {
        if (b->next && ev->u.sample.time_ns - T0 > WINDOW_NS) {
            if (b->n == b->cap) {
                b->cap = b->cap ? b->cap * 2 : 1024;
                b->win = realloc(b->win, b->cap * sizeof *b->win);
                b->all = realloc(b->all, b->cap * sizeof *b->all);
                if (!b->win || !b->all)
                    return TRC_ERR_NOMEM;
            }
            double a = cpu_us();
            b->win[b->n] = refresh(b, 0);
            b->all[b->n] = refresh(b, 1);
            b->n++;
            b->t0 += cpu_us() - a; /* refresh time, not feeding */
        }
        b->next = ev->u.sample.time_ns + REFRESH_NS;
    }
    return top_event(b->m, r, ev);
}

static void *b_create(const void *o) { return (void *)o; }
static void b_destroy(void *s) { (void)s; }
static trc_status b_finish(void *s, trc_reader *r, FILE *out) { return TRC_OK; }
static const exp_sink_type bench_sink = {"top-bench", b_create, on_event, NULL, b_finish,
                                         b_destroy, NULL};

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? atoi(argv[1]) : 30;
    if (seconds < 12) {
        fprintf(stderr, "top_bench: SECONDS must be 12 or more (the window is 10 s)\n");
        return 2;
    }
    membuf mb = {0};
    if (write_trace(&mb, seconds) != 0) {
        fprintf(stderr, "top_bench: writing the trace failed\n");
        return 1;
    }
    trc_status st;
    trc_reader *r = trc_reader_open_callback(mem_read, &mb, "bench.trc", &st);
    bench b;
    memset(&b, 0, sizeof b);
    b.m = top_new(WINDOW_NS);
    exp_sink *s = exp_sink_new(&bench_sink, &b);
    if (!r || !b.m || !s)
        return 1;
    conv_losses losses;
    conv_pipe_result res;
    double start = cpu_us();
    conv_pipe_run(r, "bench.trc", NULL, s, 0, NULL, &losses, &res);
    double total = cpu_us() - start;
    if (res.end != CONV_PIPE_DONE || !b.n) {
        fprintf(stderr, "top_bench: reading failed\n");
        return 1;
    }
    b.feed_us = (total - b.t0) / seconds;
    qsort(b.win, b.n, sizeof *b.win, cmp_d);
    qsort(b.all, b.n, sizeof *b.all, cmp_d);
    printf("refreshes=%zu window_p50_us=%.1f window_max_us=%.1f all_p50_us=%.1f "
           "feed_us_per_s=%.1f rows=%zu\n",
           b.n, b.win[b.n / 2], b.win[b.n - 1], b.all[b.n / 2], b.feed_us, b.rows);
    exp_sink_free(s);
    top_table_cleanup(&b.t);
    top_free(b.m);
    trc_reader_free(r);
    free(mb.p);
    free(b.win);
    free(b.all);
    return 0;
}
