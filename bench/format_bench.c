/*
 * bench/format_bench.c — size and speed of the .trc codec, measured side
 * by side in one run (run by bench/format.sh).
 *
 * Workload (the project's target): N samples from 4 threads at 1 kHz, a
 * few microseconds of jitter per tick and per thread, over 50 distinct
 * stacks of depth 20.  Two stack patterns bracket real programs:
 *   runs   — a thread stays on one stack for a geometric number of ticks
 *            (mean 8), as code spends milliseconds in a function;
 *   random — every sample picks one of the 50 stacks uniformly: the worst
 *            case for repeat folding.
 * Two writer modes:
 *   recording — trc_writer_tick() every simulated millisecond, so chunks
 *               close on the 100 ms flush interval (~400 samples each),
 *               as when trec records;
 *   bulk      — no ticks: chunks fill to 256 KiB, as when a tool
 *               re-writes a trace.
 * Writer options are the defaults (deflate level 6 with the shorter match
 * search of format/chunk.c, 256 KiB / 100 ms chunks).
 * Figures: bytes/sample on disk; writer and reader M samples/s on one
 * core (CPU time of this thread, so other load on the machine does not
 * count; best of 3 reads); zlib raw inflate of the same chunk payloads as
 * the ceiling for the reader; the reader's peak RSS at N/10, N and 3N
 * samples, each read in a fresh process (re-exec of this program).
 *
 * Usage: format_bench [N]          full run
 *        format_bench --read FILE  (internal) read FILE, print peak RSS
 *        format_bench --write N runs|random FILE   write the workload
 *        format_bench --decode FILE  the two floors under every converter
 *            on one trace file (bench/decode.sh): zlib inflate of its
 *            chunk payloads alone, and the libtrc reader alone, both from
 *            memory, CPU seconds of this thread, best of 5; prints
 *            key=value figures on one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

static int write_trace(const sample_in *in, size_t n, int ticks, membuf *out, double *secs)
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
        if (ticks && in[i].thread == THREADS - 1)
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

/* Inflate every chunk payload with bare zlib, in passes rounds; returns
 * seconds: the mean pass, or the fastest pass when best is set. */
static double inflate_passes(const membuf *m, uint64_t *decoded, int passes, int best)
{
    size_t pos = 0;
    uint8_t *out = malloc(TRCF_HEADER_SIZE + (16u << 20));
    z_stream zs;
    double t0;
    int round;

    double fastest = 1e30, t_round;

    memset(&zs, 0, sizeof zs);
    inflateInit2(&zs, -15);
    *decoded = 0;
    t0 = now_s();
    for (round = 0; round < passes; round++) {
        t_round = now_s();
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
        if (now_s() - t_round < fastest)
            fastest = now_s() - t_round;
    }
    inflateEnd(&zs);
    free(out);
    return best ? fastest : (now_s() - t0) / passes;
}

static double inflate_ceiling(const membuf *m, uint64_t *decoded)
{
    return inflate_passes(m, decoded, 3, 0);
}

static long rss_base;

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
    rss_base = atol(strchr(buf, ' ') ? strchr(buf, ' ') + 1 : "0");
    return atol(buf);
}

/* Peak resident set of this process image, from /proc (VmHWM belongs to
 * the address space, unlike getrusage's maxrss, which Linux carries over
 * from the forking parent across exec). */
static long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = atol(line + 6);
    fclose(f);
    return kb;
}

static int read_mode(const char *file)
{
    trc_status st;
    trc_reader *r = trc_reader_open_path(file, &st);
    uint64_t ev, smp;
    long before = vm_hwm_kb();

    if (!r || read_trace(r, &ev, &smp) != 0)
        return 1;
    trc_reader_free(r);
    printf("%ld %ld\n", vm_hwm_kb(), before);
    return 0;
}

/* The whole file in memory, so neither floor pays for the disk. */
static int load(const char *path, membuf *m)
{
    FILE *f = fopen(path, "rb");
    size_t got;

    memset(m, 0, sizeof *m);
    if (!f)
        return -1;
    for (;;) {
        if (m->len == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 1 << 20;
            uint8_t *p = realloc(m->p, cap);
            if (!p)
                break;
            m->p = p;
            m->cap = cap;
        }
        got = fread(m->p + m->len, 1, m->cap - m->len, f);
        m->len += got;
        if (got == 0)
            break;
    }
    got = (size_t)ferror(f);
    fclose(f);
    return got == 0 && m->len > 0 ? 0 : -1;
}

/* Every event of the trace, counting samples (with their repeat counts),
 * GPU activities and API calls.  Damage the reader finds fails: a floor
 * must read it all; a recorded loss is just an event. */
static int count_all(trc_reader *r, uint64_t c[4])
{
    const trc_event *ev;
    trc_status st;

    c[0] = c[1] = c[2] = c[3] = 0;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        c[0]++;
        switch (ev->type) {
        case TRC_EV_SAMPLE:
            c[1] += ev->u.sample.count;
            break;
        case TRC_EV_GPU_KERNEL:
        case TRC_EV_GPU_MEMCPY:
        case TRC_EV_GPU_MEMSET:
        case TRC_EV_GPU_SYNC:
            c[2]++;
            break;
        case TRC_EV_API_CALL:
            c[3]++;
            break;
        case TRC_EV_LOSS:
            if (!ev->u.loss.from_reader)
                break;
            fprintf(stderr, "format_bench: %s\n", ev->u.loss.detail);
            return -1;
        default:
            break;
        }
    }
    return st == TRC_ERR_EOF ? 0 : -1;
}

static int decode_mode(const char *path)
{
    membuf m;
    uint64_t c[4] = { 0 }, decoded;
    double rsecs = 1e30, isecs, t0;
    trc_status st;
    trc_reader *r;
    int k, rc = 1;

    if (load(path, &m) != 0) {
        fprintf(stderr, "format_bench: %s: cannot read\n", path);
        goto out;
    }
    for (k = 0; k < 5; k++) {
        m.pos = 0;
        t0 = now_s();
        r = trc_reader_open_callback(mem_read, &m, path, &st);
        if (!r || count_all(r, c) != 0) {
            fprintf(stderr, "format_bench: %s: %s\n", path, r ? trc_reader_error(r) : "not a trace");
            trc_reader_free(r);
            goto out;
        }
        trc_reader_free(r);
        if (now_s() - t0 < rsecs)
            rsecs = now_s() - t0;
    }
    isecs = inflate_passes(&m, &decoded, 5, 1);
    printf("bytes=%zu decoded=%llu events=%llu samples=%llu activities=%llu api_calls=%llu "
           "inflate_s=%.6f reader_s=%.6f\n",
           m.len, (unsigned long long)decoded, (unsigned long long)c[0], (unsigned long long)c[1],
           (unsigned long long)c[2], (unsigned long long)c[3], isecs, rsecs);
    rc = 0;
out:
    free(m.p);
    return rc;
}

static int save(const membuf *m, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int ok = fd >= 0 && write(fd, m->p, m->len) == (ssize_t)m->len;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

/* One workload in one writer mode: one line of figures. */
static int run(size_t n, int random_stacks, int ticks, const sample_in *in, membuf *keep)
{
    membuf m = { 0 };
    double wsecs, rsecs = 1e9, isecs, t0;
    uint64_t events = 0, samples = 0, decoded;
    trc_status st;
    trc_reader *r;
    int k;

    if (write_trace(in, n, ticks, &m, &wsecs) != 0) {
        fprintf(stderr, "format_bench: writer failed\n");
        return 1;
    }
    for (k = 0; k < 3; k++) {
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
    printf("%-7s %-9s %6.3f %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f %7.0f%%\n",
           random_stacks ? "random" : "runs", ticks ? "recording" : "bulk",
           (double)m.len / (double)n, (double)samples / (double)events, n / wsecs / 1e6,
           n / rsecs / 1e6, events / rsecs / 1e6, decoded / rsecs / 1e6, decoded / isecs / 1e6,
           100.0 * isecs / rsecs);
    if (keep)
        *keep = m;
    else
        free(m.p);
    return 0;
}

/* Reader peak RSS for n/10, n and 3n samples of a workload. */
static int rss_line(const char *self, size_t n, int random_stacks, const char *tmpdir)
{
    size_t sizes[3] = { n / 10, n, 3 * n };
    long kb[3], base = 0;
    int i;

    for (i = 0; i < 3; i++) {
        sample_in *in = gen(sizes[i], random_stacks);
        membuf m = { 0 };
        char path[512];
        double ws;
        snprintf(path, sizeof path, "%s/rss.trc", tmpdir);
        if (write_trace(in, sizes[i], 1, &m, &ws) != 0 || save(&m, path) != 0)
            return 1;
        free(in);
        free(m.p);
        kb[i] = child_rss_kb(self, path);
        base = rss_base;
        unlink(path);
    }
    printf("reader peak RSS (%s, recording): %ld KiB at %zu samples, %ld KiB at %zu, %ld KiB at %zu "
           "(process before reading: %ld KiB)\n",
           random_stacks ? "random" : "runs", kb[0], sizes[0], kb[1], sizes[1], kb[2], sizes[2], base);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = 1000000;
    char self[4096], tmpdir[] = "/tmp/trcbenchXXXXXX";
    ssize_t k;
    int rc = 0, r, t;

    if (argc == 3 && strcmp(argv[1], "--read") == 0)
        return read_mode(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--decode") == 0)
        return decode_mode(argv[2]);
    if (argc == 5 && strcmp(argv[1], "--write") == 0) {
        membuf m = { 0 };
        double ws;
        sample_in *in;
        n = (size_t)strtoull(argv[2], NULL, 10);
        in = gen(n, strcmp(argv[3], "random") == 0);
        if (n == 0 || write_trace(in, n, 1, &m, &ws) != 0 || save(&m, argv[4]) != 0)
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
    printf("%zu samples, %d threads, %d stacks of depth %d, 1 kHz + jitter; default compression\n"
           "M/s = millions per second of CPU time on one core; ceiling = zlib inflate alone\n"
           "                  bytes/  samples/  writer  reader  reader  reader   inflate  reader\n"
           "workload mode     sample  event     M smp/s M smp/s M ev/s  MB/s     MB/s     at ceil.\n",
           n, THREADS, STACKS, DEPTH);
    for (r = 0; r < 2 && rc == 0; r++) {
        sample_in *in = gen(n, r);
        for (t = 1; t >= 0 && rc == 0; t--)
            rc = run(n, r, t, in, NULL);
        free(in);
    }
    for (r = 0; r < 2 && rc == 0; r++)
        rc = rss_line(self, n, r, tmpdir);
    rmdir(tmpdir);
    return rc;
}
