/*
 * lib/cupti/inject.c — the CUDA injection: CUPTI set-up, activity
 * buffers, launch callbacks, the flusher thread, exit and fork
 * (docs/design/cupti.md; contracts in inject.h; docs/gpu.md).
 *
 * Concurrency.  CUPTI calls us from the application's threads (API
 * callbacks), from its own worker thread and from whoever flushes
 * (buffer callbacks).  One mutex (g.mu) serialises everything that
 * touches the writer and the decoder.  Launch callbacks never take it:
 * the stack walker, its cache and the parked stacks have their own small
 * lock (lib/cupti/launch.c), and new stacks are interned by whoever
 * decodes; the order is g.mu, then that lock.  Rule: never call into
 * CUPTI while holding g.mu, except cuptiActivityGetNextRecord (a pure
 * walk over our own buffer) — CUPTI may hold its own locks while it
 * calls us, so the other order could deadlock.
 *
 * Fork.  A child forked after CUDA initialised inherits CUPTI's state
 * but none of its threads; flushing there can hang and writing would
 * corrupt the parent's file.  The atfork child handler only flips
 * g.state to CHILD, every entry point checks it first, and the child
 * never touches g.mu (another thread may have held it at fork time).
 */
#include <cupti.h>

#include "lib/cupti/inject.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/alloc.h"
#include "lib/cupti/apinames.h"
#include "lib/cupti/decode.h"
#include "lib/cupti/launch.h"
#include "lib/cupti/version.h"
#include "trc/trc.h"

#define BUF_BYTES (4u << 20)           /* one activity buffer */
#define FLUSH_PERIOD_NS 200000000LL     /* flusher round */
#define SYNC_PERIOD_NS 1000000000LL     /* clock-sync pairs */
/* a launch this old with not one record delivered since: another CUPTI
 * client gets the records (longer than any single synchronous copy is
 * expected to take, since its API record only comes at its exit) */
#define TAKEOVER_NS 10000000000LL

enum { ST_OFF = 0, ST_RUNNING = 1, ST_CLOSED = 2, ST_CHILD = 3 };

static struct {
    pthread_mutex_t mu;
    atomic_int state;
    pid_t owner;                   /* the process that initialised */
    cupti_api api;
    trec_cupti_config cfg;
    int64_t pid;
    int fd;
    trc_writer *w;
    int write_failed;
    cupti_names *names;
    cupti_demangler *dm;
    cupti_launch *launch;
    cupti_decoder *dec;
    CUpti_SubscriberHandle sub;
    int subscribed;
    uint8_t kind_on[16];           /* activity_kinds[i] enabled by us */
    atomic_int ts_callback;        /* CUPTI reports on our clock (read unlocked in buffer_complete) */
    atomic_int ts_realtime;        /* the callback gave up: it hands out CLOCK_REALTIME */
    /* another CUPTI client took the records (docs/design/cupti.md §2) */
    atomic_llong unanswered_ns;    /* first launch since the last records arrived; 0 = none */
    atomic_int taken;              /* found taken over: CUPTI is not called again */
    uint32_t version;              /* cuptiGetVersion, 0 = unknown */
    int standalone;                /* not under trec: describe process and threads */
    int64_t last_sync_ns;
    /* flusher */
    pthread_t flusher;
    int flusher_on;
    pthread_mutex_t fmu;
    pthread_cond_t fcv;
    int fstop;
    char path[4096];
} g = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .fmu = PTHREAD_MUTEX_INITIALIZER,
    .fcv = PTHREAD_COND_INITIALIZER,
    .fd = -1,
};

/* Per thread: a launch call nests another (cudaLaunchKernel calls
 * cuLaunchKernel): reuse the outer capture instead of walking again. */
/* stack: the outer capture's ref (or, under a capture hook, its stack id) */
static __thread struct { int depth; uint32_t stack, flags, tid; } tls_launch;

static int64_t (*volatile g_clock)(void) = trc_now_ns;

static void close_injection(int full);

/* ---- small helpers --------------------------------------------------- */

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const char *quiet = getenv("TREC_GPU_QUIET");   /* trec -q */

    if (g.cfg.warn)
        g.cfg.warn(line);
    else if (!quiet || !*quiet)
        fprintf(stderr, "trec: %s\n", line);
}

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t CUPTIAPI timestamp_cb(void)
{
    return (uint64_t)(atomic_load(&g.ts_realtime) ? realtime_ns() : g_clock());
}

/* Reads /proc/self/cmdline with NULs turned into spaces. */
static void read_cmdline(char *buf, size_t len)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0) {
        buf[0] = 0;
        return;
    }
    while (n > 0 && buf[n - 1] == 0)
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == 0)
            buf[i] = ' ';
    buf[n] = 0;
}

static int fd_write(void *ctx, const void *buf, size_t len)
{
    int fd = *(int *)ctx;
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Called with g.mu held: note a writer failure once, stop writing. */
static void check(trc_status st, const char *what)
{
    if (st == TRC_OK || g.write_failed)
        return;
    g.write_failed = 1;
    warn("GPU trace %s: %s failed: %s; GPU recording stops here", g.path, what,
         trc_status_str(st));
}

/* Called with g.mu held. */
static void clock_sync(void)
{
    trc_clock_sync c;
    int64_t a = g_clock(), r = g.cfg.realtime ? g.cfg.realtime() : realtime_ns(), b = g_clock();
    memset(&c, 0, sizeof c);
    c.domain = TRC_CLOCK_REALTIME;
    c.device = -1;
    c.trace_ns = a + (b - a) / 2;
    c.other_ns = r;
    g.last_sync_ns = b;
    if (!g.write_failed)
        check(trc_writer_clock_sync(g.w, &c), "clock sync");
}

/* Offset that maps CUPTI's own timestamps (CLOCK_REALTIME on Linux) onto
 * the trace clock, when the timestamp callback is unavailable. */
static int64_t measure_offset(void)
{
    uint64_t c = 0;
    int64_t a = g_clock();
    if (g.api.GetTimestamp(&c) != CUPTI_SUCCESS || c == 0)
        return g_clock() - realtime_ns();
    int64_t b = g_clock();
    return a + (b - a) / 2 - (int64_t)c;
}

/* Called with g.mu held after each buffer.  Kernels with zero
 * timestamps while not one kernel has come with good ones: this CUPTI's
 * timestamp callback is broken (docs/design/cupti.md §7) although its
 * version was not known to be.  CUPTI cannot unregister the callback
 * (it refuses NULL), so from now on the callback hands out CUPTI's own
 * clock and buffers are mapped by offset, as if it had never been
 * registered.  The kernels already zeroed stay lost (counted). */
static void check_ts_callback(void)
{
    cupti_decode_stats ds;
    char v[32];

    if (!g.ts_callback)
        return;
    cupti_decode_get_stats(g.dec, &ds);
    if (ds.zero_kernels == 0 || ds.kernels > 0)
        return;
    g.ts_callback = 0;
    atomic_store(&g.ts_realtime, 1);
    cupti_version_text(g.version, v, sizeof v);
    warn("CUPTI %s gave kernels zero timestamps through the timestamp callback; using its "
         "own clock from now on (%llu kernels lost)", v, (unsigned long long)ds.zero_kernels);
}

/* ---- activity buffers ------------------------------------------------ */

static void CUPTIAPI buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *max_records = 0;
    if (atomic_load(&g.state) != ST_RUNNING || atomic_load(&g.taken)) {
        *buffer = NULL;   /* CUPTI drops what it cannot store: right when closed */
        *size = 0;
        return;
    }
    /* Plain posix_memalign, not trc_malloc: CUPTI asks from its own
     * threads, outside g.mu, and the wrapper's failure-injection counter
     * is not thread-safe.  Freed in buffer_complete. */
    void *p = NULL;
    if (posix_memalign(&p, 8, BUF_BYTES) != 0)
        p = NULL;
    *buffer = p;
    *size = p ? BUF_BYTES : 0;
}

static void CUPTIAPI buffer_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                    size_t valid)
{
    size_t dropped = 0;
    int64_t offset = 0;
    int st = atomic_load(&g.state), by_offset = 0;

    if (st == ST_CHILD)
        return;   /* the parent's buffer: leave it alone */
    if (st == ST_RUNNING &&
        g.api.ActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    /* The offset mapping asks CUPTI for its clock: before g.mu, as every
     * CUPTI call but GetNextRecord (the rule at the top).  g.ts_callback
     * only goes from 1 to 0 (check_ts_callback), so reading it unlocked
     * at worst maps one buffer by the callback's clock a round late. */
    if (st == ST_RUNNING && !atomic_load(&g.taken) && !g.ts_callback) {
        offset = measure_offset();
        by_offset = 1;
    }
    pthread_mutex_lock(&g.mu);
    if (atomic_load(&g.state) == ST_RUNNING && !g.write_failed && buffer &&
        !atomic_load(&g.taken)) {
        CUpti_Activity *rec = NULL;
        if (!g.ts_callback)
            cupti_decoder_set_clock_offset(g.dec, by_offset ? offset : g_clock() - realtime_ns());
        /* stacks captured at the launches whose API records follow */
        check(cupti_launch_resolve(g.launch, g.w), "writing a launch stack");
        if (valid)
            atomic_store(&g.unanswered_ns, 0);   /* records still come to us */
        while (valid && g.api.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
            trc_status ws = cupti_decode_record(g.dec, rec);
            if (ws != TRC_OK) {
                check(ws, "writing a GPU record");
                break;
            }
        }
        check(cupti_decode_buffer_end(g.dec, dropped), "writing a loss record");
        check_ts_callback();
    }
    pthread_mutex_unlock(&g.mu);
    free(buffer);
}

static void record_off(const char *why);

/* Called with g.mu held after a flush.  Another CUPTI client in the
 * program (torch.profiler's Kineto: its subscribe fails, but it
 * registers its own buffer callbacks, disables the activity kinds and
 * may call cuptiFinalize) takes every record from then on, while our
 * launch callbacks may still fire.  The sign: launches, flushes, and
 * not one record for TAKEOVER_NS.  Then GPU recording stops for good,
 * said once in a loss record, and CUPTI is not called again (it may be
 * finalized); the program and trec's CPU recording go on. */
static void check_takeover(void)
{
    static const char why[] = "GPU recording taken over by another CUPTI client (such as "
                              "torch.profiler); CPU recording continues";
    int64_t t = atomic_load(&g.unanswered_ns);

    if (!t || g_clock() - t < TAKEOVER_NS || atomic_exchange(&g.taken, 1))
        return;
    warn("%s", why);
    record_off(why);
}

/* Flush CUPTI's buffers (never with g.mu held), then the writer. */
static void flush_round(int forced)
{
    if (atomic_load(&g.state) != ST_RUNNING || atomic_load(&g.taken))
        return;
    g.api.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    pthread_mutex_lock(&g.mu);
    if (atomic_load(&g.state) == ST_RUNNING && !g.write_failed && !atomic_load(&g.taken))
        check_takeover();
    if (atomic_load(&g.state) == ST_RUNNING && !g.write_failed) {
        if (g_clock() - g.last_sync_ns >= SYNC_PERIOD_NS)
            clock_sync();
        if (!g.write_failed)
            check(trc_writer_flush(g.w), "flush");
    }
    pthread_mutex_unlock(&g.mu);
}

static void *flusher_main(void *arg)
{
    pthread_mutex_lock(&g.fmu);
    while (!g.fstop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += FLUSH_PERIOD_NS;
        ts.tv_sec += ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&g.fcv, &g.fmu, &ts);
        if (g.fstop)
            break;
        pthread_mutex_unlock(&g.fmu);
        flush_round(0);
        pthread_mutex_lock(&g.fmu);
    }
    pthread_mutex_unlock(&g.fmu);
    return arg;
}

/* ---- API callbacks --------------------------------------------------- */

/* The launch path: capture and park under the launch module's own small
 * lock, never g.mu, so a launch does not wait while the flusher decodes
 * a buffer or compresses a chunk; the stack is interned later, by
 * whoever decodes (buffer_complete).  Only the fixture generator's
 * capture hook writes to the writer directly and takes g.mu. */
/* The recorder's own time inside the call (the API_CALL's capture
 * field): CUPTI times the call from its entry to its exit, and the walk
 * runs in between, so the duration a converter shows includes it. */
static uint32_t capture_ns_since(int64_t t0)
{
    int64_t d = g_clock() - t0;
    return d <= 0 ? 0 : d >= UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

/* The calling thread's kernel id, asked once per thread (a system call
 * otherwise); parked with the launch so that its API record lands on the
 * thread the samples name even where cuptiActivitySetThreadIdType was
 * refused and CUPTI's thread ids are pthread handles.  A forked child's
 * one thread forgets it (atfork_child). */
static uint32_t launch_tid(void)
{
    if (!tls_launch.tid)
        tls_launch.tid = (uint32_t)gettid();
    return tls_launch.tid;
}

static void on_launch_enter(CUpti_CallbackDomain dom, const CUpti_CallbackData *cb)
{
    uint32_t ref = 0, flags = 0, capture_ns = 0;
    long long none = 0;

    (void)dom;
    if (!atomic_load(&g.unanswered_ns))
        atomic_compare_exchange_strong(&g.unanswered_ns, &none, (long long)g_clock());
    if (g.cfg.capture) {
        uint32_t stack = 0;
        pthread_mutex_lock(&g.mu);
        if (atomic_load(&g.state) == ST_RUNNING && !g.write_failed) {
            if (tls_launch.depth > 0) {
                stack = tls_launch.stack;
                flags = tls_launch.flags;
            } else {
                int64_t t0 = g_clock();
                check(g.cfg.capture(g.w, &stack, &flags), "writing a launch stack");
                capture_ns = capture_ns_since(t0);
                tls_launch.stack = stack;
                tls_launch.flags = flags;
            }
            cupti_launch_put(g.launch, cb->correlationId, stack, flags, capture_ns, launch_tid());
        }
        pthread_mutex_unlock(&g.mu);
    } else if (atomic_load(&g.state) == ST_RUNNING) {
        if (tls_launch.depth > 0) {
            ref = tls_launch.stack;
            flags = tls_launch.flags;
        } else {
            int64_t t0 = g_clock();
            cupti_launch_capture(g.launch, &ref, &flags);
            capture_ns = capture_ns_since(t0);
            tls_launch.stack = ref;
            tls_launch.flags = flags;
        }
        cupti_launch_park(g.launch, cb->correlationId, ref, flags, capture_ns, launch_tid());
    }
    tls_launch.depth++;
}

/* The start of the params of the calls that end a capture or
 * instantiate a graph, runtime and driver alike (CUPTI's
 * generated_cuda_meta.h and generated_cuda_runtime_api_meta.h): a
 * capture's are the stream, then where the call wrote the graph it
 * made; an instantiation's are where it wrote the executable graph it
 * made, then the graph. */
typedef struct end_capture_params {
    void *stream;
    void **graph;
} end_capture_params;
typedef struct instantiate_params {
    void **exec;
    void *graph;
} instantiate_params;

/* At the exit of such a call, its graph ids go with its API record
 * (spec [R-API-3]): the call's stack, read at its entry, is then the
 * line that captured the graph whose replays run those ids.  Nothing
 * for a failed call, or without CUPTI's id functions. */
static void on_graph_exit(const CUpti_CallbackData *cb, unsigned cls)
{
    uint32_t graph = 0, exec = 0;

    if (!cb->functionParams || !g.launch ||
        (cb->functionReturnValue && *(const int *)cb->functionReturnValue != 0))
        return;
    if (cls & CUPTI_NAME_INSTANTIATE) {
        instantiate_params p;
        memcpy(&p, cb->functionParams, sizeof p);
        if (p.exec && *p.exec && g.api.GetGraphExecId &&
            g.api.GetGraphExecId((CUgraphExec)*p.exec, &exec) != CUPTI_SUCCESS)
            exec = 0;
        if (p.graph && g.api.GetGraphId &&
            g.api.GetGraphId((CUgraph)p.graph, &graph) != CUPTI_SUCCESS)
            graph = 0;
    } else {
        end_capture_params p;
        memcpy(&p, cb->functionParams, sizeof p);
        if (p.graph && *p.graph && g.api.GetGraphId &&
            g.api.GetGraphId((CUgraph)*p.graph, &graph) != CUPTI_SUCCESS)
            graph = 0;
    }
    if (graph || exec)
        cupti_launch_graph(g.launch, cb->correlationId, graph, exec);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                 const void *data)
{
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API || dom == CUPTI_CB_DOMAIN_DRIVER_API) {
        const CUpti_CallbackData *cb = data;
        unsigned cls = cupti_names_class(g.names, dom, cbid);
        if ((cls & CUPTI_NAME_STACK) && cb->callbackSite == CUPTI_API_EXIT) {
            if ((cls & CUPTI_NAME_GRAPH) && atomic_load(&g.state) == ST_RUNNING &&
                !atomic_load(&g.taken))
                on_graph_exit(cb, cls);
            if (tls_launch.depth > 0)
                tls_launch.depth--;
            return;
        }
        if (atomic_load(&g.state) != ST_RUNNING || atomic_load(&g.taken) ||
            cb->callbackSite != CUPTI_API_ENTER)
            return;
        /* A normal flush, never a forced one: a forced flush hands back
         * records still in flight, unfinished, and those are lost; the
         * forced flush is for exit only (close_injection). */
        if (cls & CUPTI_NAME_STACK)
            on_launch_enter(dom, cb);
        else if (cls & CUPTI_NAME_FLUSH)
            flush_round(0);
    } else if (dom == CUPTI_CB_DOMAIN_RESOURCE &&
               cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        if (atomic_load(&g.state) == ST_RUNNING && !atomic_load(&g.taken))
            flush_round(0);
    }
}

/* ---- set-up ---------------------------------------------------------- */

static const CUpti_ActivityKind activity_kinds[] = {
    CUPTI_ACTIVITY_KIND_DEVICE,       CUPTI_ACTIVITY_KIND_CONTEXT,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,      CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,      CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
    CUPTI_ACTIVITY_KIND_MARKER,       CUPTI_ACTIVITY_KIND_MARKER_DATA,
};
#define N_KINDS (sizeof activity_kinds / sizeof activity_kinds[0])
_Static_assert(N_KINDS <= sizeof g.kind_on, "kind_on holds a flag per kind");

static void atfork_child(void)
{
    tls_launch.tid = 0;
    if (atomic_load(&g.state) == ST_RUNNING)
        atomic_store(&g.state, ST_CHILD);
}

static void at_exit(void)
{
    if (atomic_load(&g.state) == ST_RUNNING && getpid() == g.owner) {
        /* the exit path only: the host may still run CUDA code from later
         * atexit handlers, so CUPTI stays subscribed and nothing is freed */
        close_injection(0);
    }
}

static int open_side_trace(void)
{
    const char *dir = getenv("TREC_GPU_DIR");
    /* Under trec, the main trace names processes and threads; a PROCESS
     * or THREAD record here would replace its richer description when
     * the side trace is merged after it. */
    g.standalone = g.cfg.path || !dir || !*dir;
    if (g.cfg.path)
        snprintf(g.path, sizeof g.path, "%s", g.cfg.path);
    else if (dir && *dir)
        snprintf(g.path, sizeof g.path, "%s/gpu-%lld.trc", dir, (long long)g.pid);
    else {
        snprintf(g.path, sizeof g.path, "trec-gpu-%lld.trc", (long long)g.pid);
        warn("TREC_GPU_DIR is not set (CUDA_INJECTION64_PATH set by hand?): writing the GPU "
             "trace to ./%s", g.path);
    }
    g.fd = open(g.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (g.fd < 0) {
        warn("GPU recording off: cannot create %s: %s", g.path, strerror(errno));
        return -1;
    }
    return 0;
}

static int open_writer(void)
{
    static char cmdline[4096];
    trc_kv meta[2] = { { "source", "cupti" }, { "cupti", g.api.path[0] ? g.api.path : "fake" } };
    trc_writer_options o;
    trc_process p;
    trc_status st;
    char exe[1024] = "";
    ssize_t n;

    if (g.cfg.command_line)
        snprintf(cmdline, sizeof cmdline, "%s", g.cfg.command_line);
    else
        read_cmdline(cmdline, sizeof cmdline);
    memset(&o, 0, sizeof o);
    o.recorder = "trec-cupti " TRC_VERSION_STRING;
    o.host = g.cfg.host;
    o.command_line = cmdline;
    o.n_metadata = 2;
    o.metadata = meta;
    o.start_ns = g_clock();
    o.wall_ns = g.cfg.wall_ns;
    /* fast deflate: the flusher compresses with g.mu held, and speed
     * there matters more than the last bytes of the side trace's size */
    o.compression_level = 1;
    g.w = trc_writer_open_callback(fd_write, &g.fd, &o, &st);
    if (!g.w) {
        warn("GPU recording off: cannot start the GPU trace %s: %s", g.path, trc_status_str(st));
        return -1;
    }
    clock_sync();
    if (!g.standalone)
        return 0;   /* trec describes the process from outside, better than we can */
    memset(&p, 0, sizeof p);
    if (g.cfg.executable) {
        snprintf(exe, sizeof exe, "%s", g.cfg.executable);
    } else {
        n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
    }
    p.pid = g.pid;
    p.ppid = g.cfg.pid ? -1 : (int64_t)getppid();
    p.rank = -1;
    p.executable = exe;
    p.interpreter = "";
    p.command_line = cmdline;
    check(trc_writer_process(g.w, &p), "writing the process");
    return 0;
}

/* The launch stacks that could not be read (their calls are flagged
 * TRC_API_UNREADABLE), counted in one LOSS record at the end (spec
 * [R-API-4]), so that every tool's loss summary says so. */
static trc_status write_unreadable(trc_writer *w, cupti_launch *l, int64_t pid,
                                   int64_t (*now)(void))
{
    cupti_launch_stats ls;
    trc_loss loss;

    if (!l)
        return TRC_OK;
    cupti_launch_get_stats(l, &ls);
    if (!ls.invalid)
        return TRC_OK;
    memset(&loss, 0, sizeof loss);
    loss.kind = TRC_LOSS_OTHER;
    loss.count = ls.invalid;
    loss.pid = pid;
    /* read only now: the clock is not read when there is nothing to say
     * (the fixture's clock steps at every reading) */
    loss.start_ns = loss.end_ns = now();
    loss.detail = "launch stacks unreadable";
    return trc_writer_loss(w, &loss);
}

/* Writes why GPU recording is off into the side trace, so every tool
 * reading the merged trace says so too. */
static void record_off(const char *why)
{
    trc_loss l;
    memset(&l, 0, sizeof l);
    l.kind = TRC_LOSS_OTHER;
    l.pid = g.pid;
    l.start_ns = l.end_ns = g_clock();   /* when recording was found off */
    l.detail = why;
    if (g.w && !g.write_failed)
        check(trc_writer_loss(g.w, &l), "writing a loss record");
}

static int subscribe(void)
{
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = "";
    char why[512];
    CUptiResult r;

    if (g.api.Subscribe_v2) {
        CUpti_SubscriberParams p;
        memset(&p, 0, sizeof p);
        p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        p.subscriberName = "trec";
        p.oldSubscriberName = holder;
        p.oldSubscriberSize = sizeof holder;
        r = g.api.Subscribe_v2(&g.sub, on_callback, NULL, &p);
    } else {
        r = g.api.Subscribe(&g.sub, on_callback, NULL);
    }
    if (r == CUPTI_SUCCESS) {
        g.subscribed = 1;
        return 0;
    }
    holder[sizeof holder - 1] = 0;
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(why, sizeof why,
                 "GPU recording off: CUPTI is already in use by %s (another profiler such as "
                 "Nsight Systems or torch.profiler); CPU recording continues",
                 holder[0] ? holder : "another CUPTI client");
    else
        snprintf(why, sizeof why, "GPU recording off: cuptiSubscribe failed: %s",
                 cupti_api_result(&g.api, r));
    warn("%s", why);
    record_off(why);
    return -1;
}

/* Every kind we enabled, off again: after a failure part-way through
 * set-up (CUPTI would otherwise fill buffers nobody takes), and at exit
 * (later exit handlers may still run CUDA work). */
static void disable_kinds(void)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (g.kind_on[i]) {
            g.api.ActivityDisable(activity_kinds[i]);
            g.kind_on[i] = 0;
        }
}

/* TREC_GPU_OFF, a diagnostic for measuring what each part of the
 * recording costs a program (tests/gpu/overhead_split.sh): a comma list
 * of parts left off, each a kind below or "stacks" (no launch-site
 * capture).  Not for recording: a trace made with parts off lacks what
 * the converters correlate.  Unknown words are one warning. */
static const struct { const char *word; CUpti_ActivityKind kind; } off_words[] = {
    {"runtime", CUPTI_ACTIVITY_KIND_RUNTIME},   {"driver", CUPTI_ACTIVITY_KIND_DRIVER},
    {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}, {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
    {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY2},    {"memset", CUPTI_ACTIVITY_KIND_MEMSET},
    {"overhead", CUPTI_ACTIVITY_KIND_OVERHEAD}, {"marker", CUPTI_ACTIVITY_KIND_MARKER},
    {"marker", CUPTI_ACTIVITY_KIND_MARKER_DATA},
};

/* Whether `word` is in TREC_GPU_OFF's list. */
static int part_off(const char *word)
{
    const char *e = getenv("TREC_GPU_OFF");
    size_t n = strlen(word);
    for (const char *p = e; p && *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, word, n) == 0)
            return 1;
        p += k + (p[k] == ',');
    }
    return 0;
}

static int kind_off(CUpti_ActivityKind kind)
{
    for (size_t i = 0; i < sizeof off_words / sizeof *off_words; i++)
        if (off_words[i].kind == kind && part_off(off_words[i].word))
            return 1;
    return 0;
}

static void warn_unknown_off(void)
{
    const char *e = getenv("TREC_GPU_OFF");
    for (const char *p = e; p && *p;) {
        size_t k = strcspn(p, ",");
        int known = k == 6 && strncmp(p, "stacks", 6) == 0;
        for (size_t i = 0; !known && i < sizeof off_words / sizeof *off_words; i++)
            known = strlen(off_words[i].word) == k && strncmp(p, off_words[i].word, k) == 0;
        if (!known && k) {
            warn("TREC_GPU_OFF: unknown part '%.*s' (runtime, driver, sync, memcpy, memset, "
                 "overhead, marker, stacks)", (int)k, p);
            return;
        }
        p += k + (p[k] == ',');
    }
}

static void enable_callbacks(void)
{
    unsigned failed = 0;
    CUptiResult r, first = CUPTI_SUCCESS;
    int no_stacks = part_off("stacks");

    static const CUpti_CallbackDomain doms[2] = { CUPTI_CB_DOMAIN_RUNTIME_API,
                                                  CUPTI_CB_DOMAIN_DRIVER_API };
    for (int d = 0; d < 2; d++) {
        uint32_t n = cupti_names_known(g.names, doms[d]);   /* past the headers too */
        for (uint32_t id = 1; id < n; id++) {
            unsigned cls = cupti_names_class(g.names, doms[d], id);
            if (no_stacks)
                cls &= ~(unsigned)CUPTI_NAME_STACK;
            if ((cls & (CUPTI_NAME_STACK | CUPTI_NAME_FLUSH)) &&
                (r = g.api.EnableCallback(1, g.sub, doms[d], id)) != CUPTI_SUCCESS && !failed++)
                first = r;
            if (cls & CUPTI_NAME_NOISY) {
                /* stop the records at the source; decode filters them too */
                if (doms[d] == CUPTI_CB_DOMAIN_RUNTIME_API && g.api.ActivityEnableRuntimeApi)
                    g.api.ActivityEnableRuntimeApi(id, 0);
                if (doms[d] == CUPTI_CB_DOMAIN_DRIVER_API && g.api.ActivityEnableDriverApi)
                    g.api.ActivityEnableDriverApi(id, 0);
            }
        }
    }
    r = g.api.EnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
                             CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (r != CUPTI_SUCCESS && !failed++)
        first = r;
    /* GPU records still come; what is lost is said */
    if (failed)
        warn("cuptiEnableCallback failed for %u callbacks (%s): their launches get no Python "
             "stack, or their flush is missed", failed, cupti_api_result(&g.api, first));
}

static int enable_activity(void)
{
    CUptiResult r;
    char why[512];

    /* before any kind is enabled, or early records keep CUPTI's clock;
     * never on the releases whose callback zeroes kernel timestamps */
    g.ts_callback = g.api.ActivityRegisterTimestampCallback &&
                    !cupti_version_ts_callback_broken(g.version) &&
                    g.api.ActivityRegisterTimestampCallback(timestamp_cb) == CUPTI_SUCCESS;
    if (!g.ts_callback)
        cupti_decoder_set_clock_offset(g.dec, measure_offset());
    r = g.api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    cupti_decoder_set_parked_tids(g.dec, r != CUPTI_SUCCESS);
    if (r != CUPTI_SUCCESS)
        warn("cuptiSetThreadIdType failed (%s): launch calls keep their threads, other API "
             "calls may not land on the threads the samples name", cupti_api_result(&g.api, r));
    r = g.api.ActivityRegisterCallbacks(buffer_request, buffer_complete);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, sizeof why, "GPU recording off: cuptiActivityRegisterCallbacks failed: %s",
                 cupti_api_result(&g.api, r));
        warn("%s", why);
        record_off(why);
        return -1;
    }
    warn_unknown_off();
    for (size_t i = 0; i < N_KINDS; i++) {
        if (activity_kinds[i] != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
            kind_off(activity_kinds[i])) {
            g.kind_on[i] = 0;
            continue;
        }
        r = g.api.ActivityEnable(activity_kinds[i]);
        g.kind_on[i] = r == CUPTI_SUCCESS;
        if (r != CUPTI_SUCCESS && activity_kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            snprintf(why, sizeof why, "GPU recording off: cannot enable kernel records: %s",
                     cupti_api_result(&g.api, r));
            warn("%s", why);
            record_off(why);
            return -1;
        }
    }
    return 0;
}

/* Once per process (init runs once): a libcupti of a later CUDA minor
 * release than the headers delivers longer records (read by the prefix
 * these headers know, decode.c) and callback ids past the headers'
 * (probed by name, apinames.c); say so, since what it added is not
 * recorded. */
static void warn_if_newer(void)
{
    char v[32], h[32];

    if (!cupti_version_newer_than(g.version, CUPTI_API_VERSION))
        return;
    cupti_version_text(g.version, v, sizeof v);
    cupti_version_text(CUPTI_API_VERSION, h, sizeof h);
    warn("libcupti %s is newer than the CUPTI %s headers the GPU recorder was built with: "
         "records are read by the fields %s knows, new launch APIs found by name",
         v, h, h);
}

static void free_state(void)
{
    cupti_decoder_free(g.dec);
    cupti_launch_free(g.launch);
    cupti_demangler_free(g.dm);
    cupti_names_free(g.names);
    g.dec = NULL;
    g.launch = NULL;
    g.dm = NULL;
    g.names = NULL;
}

int trec_cupti_init_with_api(const cupti_api *api, const trec_cupti_config *cfg)
{
    static int handlers_installed;
    int rc = -1;

    if (atomic_load(&g.state) == ST_RUNNING || atomic_load(&g.state) == ST_CHILD)
        return -1;
    pthread_mutex_lock(&g.mu);
    g.api = *api;
    memset(&g.cfg, 0, sizeof g.cfg);
    if (cfg)
        g.cfg = *cfg;
    g_clock = g.cfg.clock ? g.cfg.clock : trc_now_ns;
    g.owner = getpid();
    g.pid = g.cfg.pid ? g.cfg.pid : (int64_t)g.owner;
    g.write_failed = 0;
    g.subscribed = 0;
    g.version = 0;
    if (g.api.GetVersion && g.api.GetVersion(&g.version) != CUPTI_SUCCESS)
        g.version = 0;
    atomic_store(&g.ts_realtime, 0);
    atomic_store(&g.unanswered_ns, 0);
    atomic_store(&g.taken, 0);
    g.fd = -1;
    g.w = NULL;
    if (open_side_trace() != 0)
        goto out;
    if (open_writer() != 0)
        goto out_close;
    g.names = cupti_names_new(&g.api);
    g.dm = cupti_demangler_new();
    g.launch = cupti_launch_new();
    g.dec = g.names && g.dm && g.launch
                ? cupti_decoder_new(g.w, g.pid, g.names, g.dm, g.launch,
                                    g.standalone && !g.cfg.no_thread_names)
                : NULL;
    if (!g.dec) {
        warn("GPU recording off: out of memory");
        record_off("GPU recording off: out of memory");
        rc = 1;
        goto out_writer;
    }
    if (subscribe() != 0 || enable_activity() != 0) {
        rc = 1;
        goto out_writer;
    }
    enable_callbacks();
    warn_if_newer();
    check(trc_writer_flush(g.w), "flush");
    atomic_store(&g.state, ST_RUNNING);
    if (!handlers_installed) {
        handlers_installed = 1;
        atexit(at_exit);
        pthread_atfork(NULL, NULL, atfork_child);
    }
    if (!g.cfg.no_flush_thread) {
        g.fstop = 0;
        g.flusher_on = pthread_create(&g.flusher, NULL, flusher_main, NULL) == 0;
        if (!g.flusher_on)
            warn("GPU trace: no flusher thread; records are written at exit only");
    }
    rc = 0;
    goto out;

out_writer:
    disable_kinds();
    if (g.subscribed)
        g.api.Unsubscribe(g.sub);
    g.subscribed = 0;
    trc_writer_close(g.w, 0);
    g.w = NULL;
    free_state();
out_close:
    close(g.fd);
    g.fd = -1;
out:
    pthread_mutex_unlock(&g.mu);
    return rc;
}

/* Stop the flusher, forced flush, close the side trace; full: also
 * unsubscribe and free everything (tests start again after it). */
static void close_injection(int full)
{
    size_t dropped = 0;
    cupti_decode_stats ds;
    cupti_launch_stats ls;

    if (atomic_load(&g.state) != ST_RUNNING || getpid() != g.owner)
        return;
    if (g.flusher_on) {
        pthread_mutex_lock(&g.fmu);
        g.fstop = 1;
        pthread_cond_signal(&g.fcv);
        pthread_mutex_unlock(&g.fmu);
        pthread_join(g.flusher, NULL);
        g.flusher_on = 0;
    }
    if (!atomic_load(&g.taken)) {   /* else CUPTI may be finalized */
        g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        if (g.api.ActivityGetNumDroppedRecords(NULL, 0, &dropped) != CUPTI_SUCCESS)
            dropped = 0;
    }
    if (!atomic_load(&g.taken))
        disable_kinds();   /* what CUDA does after this is not recorded */
    /* before g.mu, as every CUPTI call (the rule at the top) */
    if (full && g.subscribed && !atomic_load(&g.taken))
        g.api.Unsubscribe(g.sub);
    pthread_mutex_lock(&g.mu);
    atomic_store(&g.state, ST_CLOSED);
    if (!g.write_failed) {
        check(cupti_decode_buffer_end(g.dec, dropped), "writing a loss record");
        check(cupti_decode_finish(g.dec), "writing open ranges");
        check(write_unreadable(g.w, g.launch, g.pid, g_clock), "writing a loss record");
        clock_sync();
    }
    cupti_decode_get_stats(g.dec, &ds);
    cupti_launch_get_stats(g.launch, &ls);
    if (getenv("TREC_GPU_DEBUG"))
        fprintf(stderr,
                "trec-cupti: pid %lld: %llu records, %llu kernels, %llu copies, %llu API calls "
                "(%llu filtered), %llu launch stacks (%llu cached, %llu without Python), "
                "%llu dropped, %llu bad timestamps -> %s\n",
                (long long)g.pid, (unsigned long long)ds.records, (unsigned long long)ds.kernels,
                (unsigned long long)ds.memcpys, (unsigned long long)ds.api_calls,
                (unsigned long long)ds.filtered, (unsigned long long)ds.launch_stacks,
                (unsigned long long)ls.cache_hits, (unsigned long long)ls.no_python,
                (unsigned long long)ds.dropped, (unsigned long long)ds.bad_time, g.path);
    if (trc_writer_close(g.w, g_clock()) != TRC_OK && !g.write_failed)
        warn("GPU trace %s: closing failed", g.path);
    g.w = NULL;
    close(g.fd);
    g.fd = -1;
    if (full) {
        g.subscribed = 0;
        free_state();
        /* the test's hooks (warn, capture, clock) go with it */
        memset(&g.cfg, 0, sizeof g.cfg);
        g_clock = trc_now_ns;
        atomic_store(&g.state, ST_OFF);
    }
    pthread_mutex_unlock(&g.mu);
}

void trec_cupti_shutdown(void)
{
    close_injection(1);
}

int trec_cupti_flush(void)
{
    if (atomic_load(&g.state) != ST_RUNNING || getpid() != g.owner)
        return -1;
    flush_round(0);
    return 0;
}

int trec_cupti_active(void)
{
    return atomic_load(&g.state) == ST_RUNNING && getpid() == g.owner;
}

/* ---- entry points ---------------------------------------------------- */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cupti_api loaded;
static int load_rc = -1;
static char load_err[512];

static void load_cupti(void)
{
    load_rc = cupti_api_load(&loaded, load_err, sizeof load_err);
}

int InitializeInjection(void)
{
    static atomic_int called;
    if (atomic_exchange(&called, 1))
        return 1;
    pthread_once(&load_once, load_cupti);
    if (load_rc != 0) {
        warn("GPU recording off: %s", load_err);
        return 1;
    }
    trec_cupti_init_with_api(&loaded, NULL);
    return 1;
}

/* NVTX can initialise before CUDA (a program names a thread or opens a
 * range before its first CUDA call), and NVTX_INJECTION64_PATH reaches
 * every descendant, CUDA user or not.  Forwarding NVTX into a libcupti
 * no CUPTI function has been called in yet can crash CUPTI 13.0 GA
 * (docs/design/cupti.md §1), so one harmless CUPTI call comes first. */
static int nvtx_forward(const cupti_api *api, int version, void *get_export_table)
{
    int (*fwd)(void *) = version == 1 ? api->InitializeInjectionNvtx
                                      : api->InitializeInjectionNvtx2;
    uint64_t ts;

    if (!fwd)
        return 0;
    api->GetTimestamp(&ts);
    return fwd(get_export_table);
}

int InitializeInjectionNvtx(void *get_export_table)
{
    pthread_once(&load_once, load_cupti);
    if (load_rc != 0)
        return 0;
    return nvtx_forward(&loaded, 1, get_export_table);
}

int InitializeInjectionNvtx2(void *get_export_table)
{
    pthread_once(&load_once, load_cupti);
    if (load_rc != 0)
        return 0;
    return nvtx_forward(&loaded, 2, get_export_table);
}

int trec_cupti_test_lock_held(void)
{
    if (pthread_mutex_trylock(&g.mu) != 0)
        return 1;
    pthread_mutex_unlock(&g.mu);
    return 0;
}

int trec_cupti_test_nvtx_forward(const cupti_api *api, int version, void *get_export_table)
{
    return nvtx_forward(api, version, get_export_table);
}

int trec_cupti_test_capture_stack(const char *path)
{
    trc_writer *w = NULL;
    cupti_launch *l = NULL;
    trc_status st;
    trc_api_call a;
    uint32_t stack = 0, ref = 0, flags = 0, capture_ns = 0, tid = 0;
    int fd, rc = -1;
    int64_t t;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    w = trc_writer_open_callback(fd_write, &fd, NULL, &st);
    l = cupti_launch_new();
    if (!w || !l)
        goto out;
    memset(&a, 0, sizeof a);
    t = trc_now_ns();
    cupti_launch_capture(l, &ref, &flags);
    cupti_launch_park(l, 1, ref, flags, 0, 0);
    if (cupti_launch_resolve(l, w) != TRC_OK)
        goto out;
    cupti_launch_take(l, 1, &stack, &flags, &capture_ns, &tid);
    if (trc_writer_thread(w, getpid(), gettid(), "", &a.thread) != TRC_OK)
        goto out;
    a.start_ns = t;
    a.end_ns = trc_now_ns();
    a.domain = TRC_API_RUNTIME;
    a.name = "cudaLaunchKernel";
    a.correlation = 1;
    a.stack = stack;
    a.flags = flags | TRC_API_LAUNCH;
    if (trc_writer_api_call(w, &a) != TRC_OK ||
        write_unreadable(w, l, getpid(), trc_now_ns) != TRC_OK)
        goto out;
    rc = stack ? 1 : 0;
out:
    if (w && trc_writer_close(w, 0) != TRC_OK)
        rc = -1;
    cupti_launch_free(l);
    close(fd);
    return rc;
}

int trec_cupti_test_launches(const char *path)
{
    const int n = 10000;
    cupti_launch *l = cupti_launch_new();
    cupti_launch_stats a, b;
    uint32_t ref, flags, no_python = 0;
    long allocs;
    FILE *f;

    if (!l)
        return -1;
    cupti_launch_capture(l, &ref, &flags);
    cupti_launch_get_stats(l, &a);
    allocs = trc_alloc_count();
    for (int i = 0; i < n; i++) {
        cupti_launch_capture(l, &ref, &flags);
        no_python += (flags & TRC_API_NO_PYTHON) != 0;
    }
    allocs = trc_alloc_count() - allocs;
    cupti_launch_get_stats(l, &b);
    cupti_launch_free(l);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "captures %d no_python %u thread_lists %llu allocs %ld\n", n, no_python,
            (unsigned long long)(b.thread_lists - a.thread_lists), allocs);
    return fclose(f) == 0 ? 0 : -1;
}
