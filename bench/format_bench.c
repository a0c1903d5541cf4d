/*
 * bench/format_bench.c — size and speed of the .trc codec, measured side
 * by side in one run (run by bench/format.sh).
 *
 * Workload (the project's target): N samples from 4 threads at 1 kHz, a
 * few microseconds of jitter per tick and per thread, over 50 distinct
 * stacks of depth 20.  Two stack patterns bracket real programs:
 *   runs   — a thread stays on one stack for a geometric number of ticks
 *            (mean 8), as code spends milliseconds in a function;
 *   random — every sample picks one of the 50 stacks uniformly (no two
 *            consecutive samples alike beyond chance: the worst case for
 *            repeat folding).
 * Figures: bytes/sample on disk, writer and reader M samples/s (one
 * core), reader events/s, zlib raw-inflate MB/s over the same chunk
 * payloads as the ceiling, and the reader's peak RSS at N/10 vs N
 * samples, each read in a fresh process (re-exec of this program).
 *
 * Usage: format_bench [N]          full run
 *        format_bench --read FILE  (internal) read FILE, print peak RSS
 *        format_bench --write N runs|random FILE   write the workload
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "trc/trc.h"
#include "format/chunk.h"
#include "format/scan.h"

#define THREADS 4
#define STACKS 50
#define DEPTH 20

typedef struct membuf {
    uint8_t *p;
    size_t len, cap, pos;
} membuf;

static int mem_write(void *ctx, const void *buf, size_t len)
{
    membuf *m = ctx;
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap : 1 << 20;
        while (cap < m->len + len)
            cap *= 2;
        m->p = realloc(m->p, cap);
        if (!m->p)
            return -1;
        m->cap = cap;
    }
    memcpy(m->p + m->len, buf, len);
    m->len += len;
    return 0;
}

static long mem_read(void *ctx, void *buf, size_t len)
{
    membuf *m = ctx;
    size_t n = m->len - m->pos;
    if (n > len)
        n = len;
    memcpy(buf, m->p + m->pos, n);
    m->pos += n;
    return (long)n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t xs(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Pre-generated workload, so the writer timing measures the writer. */
typedef struct sample_in {
    int64_t t;
    uint8_t thread, stack;
} sample_in;

static sample_in *gen(size_t n, int random_stacks)
{
    sample_in *s = malloc(n * sizeof *s);
    int cur[THREADS] = { 0 };
    int64_t base = 1000000000;
    size_t i;

    for (i = 0; i < n; i++) {
        size_t tick = i / THREADS;
        int th = (int)(i % THREADS);
        if (th == 0)
            base = 1000000000 + (int64_t)tick * 1000000 + (int64_t)(xs() % 5000);
        if (random_stacks)
            cur[th] = (int)(xs() % STACKS);
        else if (xs() % 8 == 0)
            cur[th] = (int)(xs() % STACKS);
        s[i].t = base + th * 2000 + (int64_t)(xs() % 500);
        s[i].thread = (uint8_t)th;
        s[i].stack = (uint8_t)cur[th];
    }
    return s;
}

static int write_trace(const sample_in *in, size_t n, membuf *out, double *secs)
{
    trc_writer_options o;
    trc_writer *w;
    trc_status st;
    uint32_t thr[THREADS], stk[STACKS], fr, parent, id;
    char fn[64];
    double t0;
    size_t i;
    int s, d;

    memset(&o, 0, sizeof o);
    o.compression_level = -1;
    o.start_ns = 1000000000;
    o.wall_ns = 1;
    o.host = "bench";
    t0 = now_s();
    w = trc_writer_open_callback(mem_write, out, &o, &st);
    if (!w)
        return -1;
    for (i = 0; i < THREADS; i++)
        trc_writer_thread(w, 100, 100 + (int64_t)i, i ? "worker" : "MainThread", &thr[i]);
    for (s = 0; s < STACKS; s++) {
        parent = 0;
        for (d = 0; d < DEPTH; d++) {
            /* stacks share their first 10 frames in 5 families */
            int f = d < 10 ? (s % 5) * 100 + d : s * 100 + d;
            snprintf(fn, sizeof fn, "module.function_%d", f);
            trc_writer_frame(w, TRC_FRAME_PYTHON, fn, "/srv/app/module.py", (uint32_t)(f * 3 + 1),
                             (uint32_t)(f * 3), &fr);
            trc_writer_stack(w, parent, fr, &id);
            parent = id;
        }
        stk[s] = parent;
    }
    for (i = 0; i < n; i++) {
        st = trc_writer_sample(w, in[i].t, thr[in[i].thread], stk[in[i].stack], TRC_SAMPLE_ON_CPU, 0);
        if (st != TRC_OK)
            return -1;
        if (in[i].thread == THREADS - 1)
            trc_writer_tick(w, in[i].t);
    }
    st = trc_writer_close(w, in[n - 1].t + 1);
    *secs = now_s() - t0;
    return st == TRC_OK ? 0 : -1;
}

static int read_trace(trc_reader *r, uint64_t *events, uint64_t *samples)
{
    const trc_event *ev;
    trc_status st;

    *events = *samples = 0;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type == TRC_EV_SAMPLE) {
            (*events)++;
            *samples += ev->u.sample.count;
        } else if (ev->type == TRC_EV_LOSS) {
            fprintf(stderr, "unexpected loss: %s\n", ev->u.loss.detail);
            return -1;
        }
    }
    return st == TRC_ERR_EOF ? 0 : -1;
}

/* Inflate every chunk payload with bare zlib; returns seconds. */
static double inflate_ceiling(const membuf *m, uint64_t *decoded)
{
    size_t pos = 0;
    uint8_t *out = malloc(TRCF_HEADER_SIZE + (16u << 20));
    z_stream zs;
    double t0;
    int round;

    memset(&zs, 0, sizeof zs);
    inflateInit2(&zs, -15);
    *decoded = 0;
    t0 = now_s();
    for (round = 0; round < 3; round++) {
        pos = 0;
        while (pos + TRCF_HEADER_SIZE <= m->len) {
            trcf_chunk_header h;
            const char *why;
            trcf_header_decode(m->p + pos, &h, &why);
            if (h.flags & TRCF_FLAG_DEFLATE) {
                inflateReset(&zs);
                zs.next_in = m->p + pos + TRCF_HEADER_SIZE;
                zs.avail_in = h.stored_len;
                zs.next_out = out;
                zs.avail_out = 16u << 20;
                inflate(&zs, Z_FINISH);
            }
            if (round == 0)
                *decoded += h.decoded_len;
            pos += TRCF_HEADER_SIZE + h.stored_len;
        }
    }
    inflateEnd(&zs);
    free(out);
    return (now_s() - t0) / 3;
}

static long child_rss_kb(const char *self, const char *file)
{
    char buf[64] = "";
    int fds[2];
    pid_t pid;
    ssize_t n;

    if (pipe(fds) != 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        execl(self, self, "--read", file, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    waitpid(pid, NULL, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return atol(buf);
}

static int read_mode(const char *file)
{
    trc_status st;
    trc_reader *r = trc_reader_open_path(file, &st);
    uint64_t ev, smp;
    struct rusage ru;

    if (!r || read_trace(r, &ev, &smp) != 0)
        return 1;
    trc_reader_free(r);
    getrusage(RUSAGE_SELF, &ru);
    printf("%ld\n", ru.ru_maxrss);
    return 0;
}

static int save(const membuf *m, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int ok = fd >= 0 && write(fd, m->p, m->len) == (ssize_t)m->len;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

static int run(const char *self, size_t n, int random_stacks, const char *tmpdir)
{
    sample_in *in = gen(n, random_stacks);
    membuf m = { 0 };
    double wsecs, rsecs, isecs, t0;
    uint64_t events = 0, samples = 0, decoded;
    trc_status st;
    trc_reader *r;
    char small[512], big[512];
    long rss_small, rss_big;
    size_t n_small = n / 10;

    if (write_trace(in, n, &m, &wsecs) != 0) {
        fprintf(stderr, "format_bench: writer failed\n");
        return 1;
    }
    /* best of 3 reads */
    rsecs = 1e9;
    for (int k = 0; k < 3; k++) {
        m.pos = 0;
        t0 = now_s();
        r = trc_reader_open_callback(mem_read, &m, "bench", &st);
        if (!r || read_trace(r, &events, &samples) != 0) {
            fprintf(stderr, "format_bench: reader failed: %s\n", r ? trc_reader_error(r) : "open");
            return 1;
        }
        trc_reader_free(r);
        if (now_s() - t0 < rsecs)
            rsecs = now_s() - t0;
    }
    if (samples != n) {
        fprintf(stderr, "format_bench: read %llu samples, wrote %zu\n", (unsigned long long)samples, n);
        return 1;
    }
    isecs = inflate_ceiling(&m, &decoded);

    snprintf(big, sizeof big, "%s/big.trc", tmpdir);
    snprintf(small, sizeof small, "%s/small.trc", tmpdir);
    save(&m, big);
    {
        membuf m2 = { 0 };
        double ws;
        write_trace(in, n_small, &m2, &ws);
        save(&m2, small);
        free(m2.p);
    }
    rss_small = child_rss_kb(self, small);
    rss_big = child_rss_kb(self, big);

    printf("%-7s %9zu samples  %7.3f bytes/sample  (%zu bytes, %.1f samples/event)\n",
           random_stacks ? "random" : "runs", n, (double)m.len / (double)n, m.len,
           (double)samples / (double)events);
    printf("        writer %7.1f M samples/s   reader %7.1f M samples/s (%5.1f M events/s)\n",
           n / wsecs / 1e6, n / rsecs / 1e6, events / rsecs / 1e6);
    printf("        zlib inflate alone: %7.1f MB/s decoded = %7.1f M samples/s ceiling; "
           "reader decodes %.1f MB/s\n",
           decoded / isecs / 1e6, n / isecs / 1e6, decoded / rsecs / 1e6);
    printf("        reader peak RSS: %ld KiB at %zu samples, %ld KiB at %zu samples\n", rss_small,
           n_small, rss_big, n);
    unlink(small);
    unlink(big);
    free(m.p);
    free(in);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = 1000000;
    char self[4096], tmpdir[] = "/tmp/trcbenchXXXXXX";
    ssize_t k;
    int rc;

    if (argc == 3 && strcmp(argv[1], "--read") == 0)
        return read_mode(argv[2]);
    if (argc == 5 && strcmp(argv[1], "--write") == 0) {
        membuf m = { 0 };
        double ws;
        n = (size_t)strtoull(argv[2], NULL, 10);
        sample_in *in = gen(n, strcmp(argv[3], "random") == 0);
        if (n == 0 || write_trace(in, n, &m, &ws) != 0 || save(&m, argv[4]) != 0)
            return 1;
        free(in);
        free(m.p);
        return 0;
    }
    if (argc > 1)
        n = (size_t)strtoull(argv[1], NULL, 10);
    if (n < 1000)
        n = 1000;
    k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0)
        return 1;
    self[k] = '\0';
    if (!mkdtemp(tmpdir))
        return 1;
    printf("workload: %d threads, %d stacks of depth %d, 1 kHz + jitter; default options "
           "(deflate 6, 256 KiB / 100 ms chunks)\n", THREADS, STACKS, DEPTH);
    rc = run(self, n, 0, tmpdir);
    if (rc == 0)
        rc = run(self, n, 1, tmpdir);
    rmdir(tmpdir);
    return rc;
}
