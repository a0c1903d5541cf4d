/*
 * trc.h — the public API of libtrc: read and write .trc traces.
 *
 * The byte format is specified in spec/trc-format.md; section numbers in
 * comments below ("spec §5.3") point there.  This header is the whole
 * public surface: converters written by third parties include only this
 * file and link with -ltrc (pkg-config --cflags --libs trc).
 *
 * Model.  A reader presents one merged, deduplicated view of everything
 * it has read: strings, frames, stacks, threads and processes get small
 * dense ids that stay valid (and stable) for the life of the reader, even
 * across concatenated segments ("cat a.trc b.trc").  Events are yielded
 * in file order; definitions a converter needs to look up (frames,
 * stacks) are reached by id through accessor functions; definitions a
 * converter may want to react to (threads, processes, GPU devices,
 * counters) are also yielded as events.
 *
 * Ownership.  Every pointer returned by a reader is borrowed: it stays
 * valid until trc_reader_free(), unless stated otherwise.  Event structs
 * are borrowed until the next trc_reader_next() call.
 *
 * Errors.  Functions return a trc_status (TRC_OK == 0).  Library code
 * never aborts and never prints; trc_reader_error() gives a one-line
 * message naming the byte offset of a problem.
 */
#ifndef TRC_TRC_H
#define TRC_TRC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRC_VERSION_STRING "0.1.0"
#define TRC_FORMAT_MAJOR 1
#define TRC_FORMAT_MINOR 4

/* Status codes.  Stable numbers; tools map them to exit codes
 * (see docs/exit-codes.md).  Never renumber, only append. */
typedef enum trc_status {
    TRC_OK = 0,
    TRC_ERR_NOMEM = 1,       /* allocation failed */
    TRC_ERR_IO = 2,          /* read/write error from the OS (errno kept) */
    TRC_ERR_CORRUPT = 3,     /* bytes do not follow the spec */
    TRC_ERR_TRUNCATED = 4,   /* input ended inside a chunk */
    TRC_ERR_VERSION = 5,     /* unsupported major version or required record */
    TRC_ERR_LIMIT = 6,       /* a length/count/depth over the spec's limits */
    TRC_ERR_ARG = 7,         /* bad argument from the caller */
    TRC_ERR_NOT_TRC = 8,     /* input does not start like a .trc file */
    TRC_ERR_UNDEFINED = 9,   /* reference to an id never defined */
    TRC_ERR_EOF = 10         /* clean end of input (used internally) */
} trc_status;

/* A short English phrase for a status ("bad chunk CRC" etc.). Cannot fail. */
const char *trc_status_str(trc_status st);

/* Library version string, e.g. "0.1.0". Cannot fail. */
const char *trc_version(void);

/* ------------------------------------------------------------------ */
/* The trace model (spec §6)                                           */
/* ------------------------------------------------------------------ */

typedef enum trc_frame_kind {
    TRC_FRAME_PYTHON = 0,
    TRC_FRAME_NATIVE = 1,
    TRC_FRAME_GPU_KERNEL = 2,
    TRC_FRAME_OTHER = 3      /* synthetic: thread roots, "<idle>", ... */
} trc_frame_kind;

typedef struct trc_frame {
    uint32_t id;             /* reader-global id, >= 1 */
    trc_frame_kind kind;
    const char *function;    /* UTF-8, NUL-terminated; qualified name on 3.11+ */
    const char *file;        /* UTF-8, may be "" for native/gpu frames */
    uint32_t line;           /* line executing in this frame, 0 = unknown */
    uint32_t first_line;     /* line of the def (pstats key), 0 = unknown */
} trc_frame;

/* Stacks form a prefix tree.  Stack id 0 is the empty stack (no frames).
 * A stack's frame is its LEAF-most frame; parent is the stack without
 * that frame.  depth = number of frames (parent's depth + 1). */
typedef struct trc_stack {
    uint32_t id;
    uint32_t parent;         /* < id */
    uint32_t frame;          /* frame id */
    uint32_t depth;
} trc_stack;

typedef struct trc_process {
    uint32_t id;             /* reader-global process id (not the pid) */
    int64_t pid;
    int64_t ppid;            /* -1 = unknown */
    const char *executable;
    const char *interpreter; /* e.g. "CPython 3.12.1", "" if unknown */
    const char *command_line;/* arguments joined with single spaces */
    int64_t start_ns;        /* trace clock; 0 = unknown */
    int64_t rank;            /* from RANK & co. in its environment; -1 = unknown (format 1.1) */
    const char *label;       /* what the recorder saw it is, e.g. "DataLoader worker 1"; "" = none */
    const char *layout;      /* where the recorder's CPython layout came from, e.g.
                              * "the 3.12 headers"; "" = none or unknown (format 1.2) */
} trc_process;

typedef struct trc_thread {
    uint32_t id;             /* reader-global thread id, >= 1 */
    int64_t pid;
    int64_t tid;             /* OS thread id as seen in /proc */
    const char *name;        /* latest name seen; may be "" */
} trc_thread;

/* Sample flags (spec §7.8) */
#define TRC_SAMPLE_ON_CPU   0x01u  /* thread was running (not sleeping/blocked) */
#define TRC_SAMPLE_HOLDS_GIL 0x02u /* thread held the GIL */
#define TRC_SAMPLE_GIL_KNOWN 0x04u /* the GIL bit is meaningful */

typedef struct trc_sample {
    int64_t time_ns;         /* trace clock (CLOCK_MONOTONIC ns) of the first sample */
    uint32_t thread;         /* thread id */
    uint32_t stack;          /* stack id, 0 = no Python frames */
    uint32_t flags;          /* TRC_SAMPLE_* */
    uint64_t weight_ns;      /* time each sample stands for */
    uint32_t count;          /* identical samples this event stands for, >= 1 */
    uint64_t span_ns;        /* time from first to last of them (0 if count==1) */
} trc_sample;

typedef struct trc_gpu_device {
    uint32_t device;         /* CUDA device ordinal */
    const char *name;
    uint8_t uuid[16];
    uint32_t sm_count;
    uint64_t memory_bytes;
    uint32_t cc_major, cc_minor;
} trc_gpu_device;

/* A CUDA context of a process on a device (spec §7.21).  Identified by
 * (pid, device, context); the activities' where.context refers to it. */
typedef struct trc_gpu_context {
    int64_t pid;
    uint32_t device;         /* CUDA device ordinal */
    uint32_t context;        /* CUDA context id */
} trc_gpu_context;

/* Stream flags (spec §7.22) */
#define TRC_STREAM_DEFAULT      0x01u /* the context's default (NULL) stream */
#define TRC_STREAM_NON_BLOCKING 0x02u /* created with cudaStreamNonBlocking */

/* A CUDA stream (spec §7.22).  Identified by (pid, device, context,
 * stream); the activities' where.stream refers to it. */
typedef struct trc_gpu_stream {
    int64_t pid;
    uint32_t device;
    uint32_t context;
    uint32_t stream;         /* CUDA stream id */
    int32_t priority;        /* 0 = default; lower numbers = higher priority */
    uint32_t flags;          /* TRC_STREAM_* */
    const char *name;        /* user-given name, "" if none */
} trc_gpu_stream;

/* Common part of every GPU activity (spec §7.12) */
typedef struct trc_gpu_where {
    int64_t pid;
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation;    /* id of the API call that caused it, 0 = none */
} trc_gpu_where;

typedef struct trc_gpu_kernel {
    trc_gpu_where where;
    int64_t start_ns, end_ns;
    const char *name;        /* demangled when the recorder could */
    uint32_t grid[3], block[3];
    uint32_t registers;      /* per thread */
    uint32_t static_smem, dynamic_smem;
    uint32_t graph;          /* CUDA graph that launched it, 0 = none (format 1.3) */
    uint64_t graph_node;     /* its node in that graph, 0 = none (format 1.3) */
} trc_gpu_kernel;

typedef enum trc_copy_kind {
    TRC_COPY_UNKNOWN = 0, TRC_COPY_HTOD = 1, TRC_COPY_DTOH = 2,
    TRC_COPY_HTOA = 3, TRC_COPY_ATOH = 4, TRC_COPY_ATOA = 5,
    TRC_COPY_ATOD = 6, TRC_COPY_DTOA = 7, TRC_COPY_DTOD = 8,
    TRC_COPY_HTOH = 9, TRC_COPY_PTOP = 10
} trc_copy_kind;             /* numbers follow CUPTI's CUpti_ActivityMemcpyKind */

typedef enum trc_mem_kind {
    TRC_MEM_UNKNOWN = 0, TRC_MEM_PAGEABLE = 1, TRC_MEM_PINNED = 2,
    TRC_MEM_DEVICE = 3, TRC_MEM_ARRAY = 4, TRC_MEM_MANAGED = 5,
    TRC_MEM_DEVICE_STATIC = 6, TRC_MEM_MANAGED_STATIC = 7
} trc_mem_kind;              /* numbers follow CUpti_ActivityMemoryKind */

typedef struct trc_gpu_memcpy {
    trc_gpu_where where;
    int64_t start_ns, end_ns;
    uint64_t bytes;
    trc_copy_kind copy_kind;
    trc_mem_kind src_kind, dst_kind;
    uint32_t dst_device;     /* peer device for PTOP, else == where.device */
} trc_gpu_memcpy;

typedef struct trc_gpu_memset {
    trc_gpu_where where;
    int64_t start_ns, end_ns;
    uint64_t bytes;
    uint32_t value;
    trc_mem_kind mem_kind;
} trc_gpu_memset;

typedef enum trc_sync_kind {
    TRC_SYNC_UNKNOWN = 0, TRC_SYNC_EVENT = 1, TRC_SYNC_STREAM_WAIT_EVENT = 2,
    TRC_SYNC_STREAM = 3, TRC_SYNC_CONTEXT = 4
} trc_sync_kind;             /* numbers follow CUpti_ActivitySynchronizationType */

typedef struct trc_gpu_sync {
    trc_gpu_where where;
    int64_t start_ns, end_ns;
    trc_sync_kind sync_kind;
} trc_gpu_sync;

typedef enum trc_api_domain {
    TRC_API_RUNTIME = 0, TRC_API_DRIVER = 1, TRC_API_OTHER = 2
} trc_api_domain;

#define TRC_API_NO_PYTHON 0x01u  /* launching thread had no Python frames */
#define TRC_API_LAUNCH    0x02u  /* the call launches GPU work */
#define TRC_API_SYNC      0x04u  /* the call can make the host wait for the device */
#define TRC_API_UNREADABLE 0x08u /* the thread's Python stack could not be read (stack 0) */

typedef struct trc_api_call {
    uint32_t thread;         /* thread id */
    int64_t start_ns, end_ns;
    trc_api_domain domain;
    const char *name;        /* "cudaLaunchKernel" (no _vNNNN suffix) */
    uint32_t correlation;
    uint32_t stack;          /* Python stack at the call, 0 = none/unknown */
    int32_t result;          /* CUDA status code, 0 = success */
    uint32_t flags;          /* TRC_API_* */
    uint64_t capture_ns;     /* of the duration, time the recorder spent inside the
                              * call reading the launch stack; 0 = none (format 1.3) */
    uint32_t graph;          /* CUDA graph whose capture this call ended or that it
                              * instantiated, 0 = none (format 1.4) */
    uint32_t graph_exec;     /* executable graph it instantiated, 0 = none (format 1.4) */
} trc_api_call;

typedef enum trc_marker_kind {
    TRC_MARK_INSTANT = 0,    /* a point in time */
    TRC_MARK_RANGE = 1,      /* a complete range [start, end] */
    TRC_MARK_PUSH = 2,       /* range start, matched by POP on the same thread */
    TRC_MARK_POP = 3
} trc_marker_kind;

typedef struct trc_marker {
    trc_marker_kind kind;
    uint32_t thread;         /* thread id, 0 = process-wide */
    int64_t pid;
    int64_t start_ns, end_ns;/* end == start for instants */
    const char *name;
    const char *domain;      /* "nvtx", "user", ... */
    uint32_t color;          /* 0xRRGGBB, 0 = none */
    uint64_t id;             /* range id, 0 = none */
} trc_marker;

typedef struct trc_counter_def {
    uint32_t id;             /* reader-global counter id, >= 1 */
    const char *name;        /* "rss", "gpu.util", ... */
    const char *unit;        /* "bytes", "percent", "Hz", "mW", ... */
    int64_t pid;             /* -1 = not per process */
    int32_t device;          /* GPU device, -1 = none */
} trc_counter_def;

typedef struct trc_counter_value {
    uint32_t counter;        /* counter id */
    int64_t time_ns;
    double value;
} trc_counter_value;

typedef enum trc_clock_domain {
    TRC_CLOCK_MONOTONIC = 1, /* the trace clock */
    TRC_CLOCK_REALTIME = 2,
    TRC_CLOCK_GPU = 3        /* a GPU's own clock; device in clock_sync */
} trc_clock_domain;

typedef struct trc_clock_sync {
    trc_clock_domain domain;
    int32_t device;          /* for TRC_CLOCK_GPU, else -1 */
    int64_t trace_ns;        /* trace clock reading */
    int64_t other_ns;        /* the other clock's reading at that instant */
} trc_clock_sync;

typedef enum trc_loss_kind {
    TRC_LOSS_SAMPLES_MISSED = 1, /* ticks the recorder could not take */
    TRC_LOSS_SAMPLES_INVALID = 2,/* samples dropped as torn/impossible */
    TRC_LOSS_SAMPLES_LATE = 3,   /* samples taken late (kept; informative) */
    TRC_LOSS_GPU_DROPPED = 4,    /* CUPTI records dropped */
    TRC_LOSS_CHUNK_DAMAGED = 5,  /* reader: a chunk failed its checks */
    TRC_LOSS_CHUNK_MISSING = 6,  /* reader: gap in chunk sequence numbers */
    TRC_LOSS_TRUNCATED = 7,      /* reader: input ended inside a chunk */
    TRC_LOSS_UNDEFINED_REF = 8,  /* reader: records referring to lost definitions */
    TRC_LOSS_OTHER = 9
} trc_loss_kind;

typedef struct trc_loss {
    trc_loss_kind kind;
    uint64_t count;          /* samples / records / chunks / bytes lost */
    int64_t pid;             /* -1 = unknown */
    uint32_t thread;         /* 0 = unknown */
    int64_t start_ns, end_ns;/* time range, 0 = unknown */
    uint64_t offset;         /* byte offset in the input (reader-made losses) */
    const char *detail;      /* one line, "" if none */
    int from_reader;         /* 1 = the reader detected it, 0 = recorded */
} trc_loss;

typedef struct trc_process_exit {
    int64_t pid;
    int64_t time_ns;
    int32_t exit_code;       /* valid when signal == 0 */
    int32_t signal;          /* terminating signal, 0 = exited */
} trc_process_exit;

typedef struct trc_kv { const char *key, *value; } trc_kv;

typedef struct trc_segment {
    uint32_t index;          /* 0 for the first segment of the input */
    uint32_t major, minor;   /* format version of the segment */
    int64_t start_ns;        /* trace clock at recording start */
    int64_t wall_ns;         /* CLOCK_REALTIME ns at the same instant */
    uint64_t period_ns;      /* default sample weight */
    const char *recorder;    /* "trec 0.1.0" */
    const char *host;
    const char *command_line;
    size_t n_metadata;
    const trc_kv *metadata;
} trc_segment;

typedef struct trc_segment_end {
    int64_t end_ns;
    uint64_t samples, threads, processes;
    uint64_t gpu_activities, api_calls;
    uint64_t lost_samples, lost_gpu_records;
} trc_segment_end;

/* ------------------------------------------------------------------ */
/* Events yielded by the reader                                         */
/* ------------------------------------------------------------------ */

typedef enum trc_event_type {
    TRC_EV_SEGMENT = 1,
    TRC_EV_PROCESS,
    TRC_EV_THREAD,           /* new thread or a rename */
    TRC_EV_SAMPLE,
    TRC_EV_GPU_DEVICE,
    TRC_EV_GPU_KERNEL,
    TRC_EV_GPU_MEMCPY,
    TRC_EV_GPU_MEMSET,
    TRC_EV_GPU_SYNC,
    TRC_EV_API_CALL,
    TRC_EV_MARKER,
    TRC_EV_COUNTER_DEF,
    TRC_EV_COUNTER,
    TRC_EV_CLOCK_SYNC,
    TRC_EV_LOSS,
    TRC_EV_PROCESS_EXIT,
    TRC_EV_SEGMENT_END,
    TRC_EV_GPU_CONTEXT,      /* new or changed context description */
    TRC_EV_GPU_STREAM        /* new or changed stream description */
} trc_event_type;

typedef struct trc_event {
    trc_event_type type;
    uint64_t offset;         /* byte offset of the chunk holding it */
    union {
        const trc_segment *segment;
        const trc_process *process;
        const trc_thread *thread;
        trc_sample sample;
        const trc_gpu_device *gpu_device;
        trc_gpu_kernel kernel;
        trc_gpu_memcpy memcpy;
        trc_gpu_memset memset;
        trc_gpu_sync sync;
        trc_api_call api;
        trc_marker marker;
        const trc_counter_def *counter_def;
        trc_counter_value counter;
        trc_clock_sync clock_sync;
        trc_loss loss;
        trc_process_exit process_exit;
        trc_segment_end segment_end;
        const trc_gpu_context *gpu_context;
        const trc_gpu_stream *gpu_stream;
    } u;
} trc_event;

/* ------------------------------------------------------------------ */
/* Reader                                                               */
/* ------------------------------------------------------------------ */

typedef struct trc_reader trc_reader;

/* Read callback: fill buf with up to len bytes; return bytes read,
 * 0 at end of input, -1 on error (errno set). */
typedef long (*trc_read_fn)(void *ctx, void *buf, size_t len);

/* Open a reader.  name is used in messages only ("run.trc", "<stdin>").
 * The reader never seeks: pipes work.  On failure returns NULL and, if
 * st is not NULL, stores the reason. Caller frees with trc_reader_free. */
trc_reader *trc_reader_open_path(const char *path, trc_status *st);
trc_reader *trc_reader_open_fd(int fd, const char *name, trc_status *st);   /* borrows fd */
trc_reader *trc_reader_open_callback(trc_read_fn fn, void *ctx, const char *name, trc_status *st);
void trc_reader_free(trc_reader *r);

/* Next event.  Returns TRC_OK and sets *ev (borrowed until the next
 * call), TRC_ERR_EOF at the end of input, or an error that stops
 * reading (TRC_ERR_NOT_TRC, TRC_ERR_VERSION, TRC_ERR_IO, TRC_ERR_NOMEM).
 * Damage that can be skipped (bad CRC, truncation, bad record) is not an
 * error: it is yielded as a TRC_EV_LOSS event with from_reader = 1, and
 * reading resynchronises at the next chunk. */
trc_status trc_reader_next(trc_reader *r, const trc_event **ev);

/* One-line description of the last error or damage, naming the input
 * and byte offset: "run.trc: offset 0x1a3: bad chunk CRC". Borrowed. */
const char *trc_reader_error(const trc_reader *r);
const char *trc_reader_name(const trc_reader *r);

/* Lookups by reader-global id.  Return NULL for an unknown id.
 * trc_reader_stack(r, 0) returns the empty stack. Borrowed pointers. */
const trc_frame *trc_reader_frame(const trc_reader *r, uint32_t id);
const trc_stack *trc_reader_stack(const trc_reader *r, uint32_t id);
const trc_thread *trc_reader_thread(const trc_reader *r, uint32_t id);
const trc_process *trc_reader_process_by_pid(const trc_reader *r, int64_t pid);
const trc_counter_def *trc_reader_counter(const trc_reader *r, uint32_t id);
const trc_gpu_device *trc_reader_gpu_device(const trc_reader *r, uint32_t device);

/* Counts of distinct items seen so far (ids run 1..n; stacks 0..n). */
uint32_t trc_reader_frame_count(const trc_reader *r);
uint32_t trc_reader_stack_count(const trc_reader *r);
uint32_t trc_reader_thread_count(const trc_reader *r);

/* Totals so far. */
typedef struct trc_reader_stats {
    uint64_t bytes;          /* input bytes consumed */
    uint64_t chunks, damaged_chunks, segments, records, skipped_records;
    uint64_t losses;         /* loss events yielded (recorded + reader-made) */
    int64_t first_ns, last_ns; /* min/max timestamp seen, 0 if none */
} trc_reader_stats;
void trc_reader_get_stats(const trc_reader *r, trc_reader_stats *out);

/* ------------------------------------------------------------------ */
/* Writer                                                               */
/* ------------------------------------------------------------------ */

typedef struct trc_writer trc_writer;

/* Write callback: write all len bytes or return -1 (errno set). */
typedef int (*trc_write_fn)(void *ctx, const void *buf, size_t len);

typedef struct trc_writer_options {
    const char *recorder;      /* "trec 0.1.0"; NULL = "libtrc <version>" */
    const char *host;          /* NULL = gethostname() */
    const char *command_line;  /* NULL = "" */
    size_t n_metadata;
    const trc_kv *metadata;
    int64_t start_ns;          /* 0 = now (CLOCK_MONOTONIC) */
    int64_t wall_ns;           /* 0 = now (CLOCK_REALTIME) */
    uint64_t period_ns;        /* default sample weight; 0 = 1000000 (1 kHz) */
    uint32_t chunk_bytes;      /* uncompressed size bound; 0 = 256 KiB */
    uint64_t flush_interval_ns;/* time bound; 0 = 100 ms */
    int compression_level;     /* zlib level 0..9; -1 = default (6) */
} trc_writer_options;

/* Open a writer; the segment header is written with the first chunk.
 * opts may be NULL.  The writer borrows fd (caller closes it after
 * trc_writer_close).  Returns NULL on failure with *st set. */
trc_writer *trc_writer_open_fd(int fd, const trc_writer_options *opts, trc_status *st);
trc_writer *trc_writer_open_callback(trc_write_fn fn, void *ctx,
                                     const trc_writer_options *opts, trc_status *st);

/* Interning.  Each returns an id for the segment, emitting the
 * definition into the current chunk the first time a value is seen.
 * Strings/frames/stacks are deduplicated by content. */
trc_status trc_writer_string(trc_writer *w, const char *s, size_t len, uint32_t *id);
trc_status trc_writer_frame(trc_writer *w, trc_frame_kind kind, const char *function,
                            const char *file, uint32_t line, uint32_t first_line,
                            uint32_t *id);
/* parent 0 = root. */
trc_status trc_writer_stack(trc_writer *w, uint32_t parent, uint32_t frame, uint32_t *id);
/* Defines (or renames) the thread (pid, tid); returns its writer id. */
trc_status trc_writer_thread(trc_writer *w, int64_t pid, int64_t tid, const char *name,
                             uint32_t *id);
trc_status trc_writer_process(trc_writer *w, const trc_process *p); /* id ignored */
trc_status trc_writer_counter_def(trc_writer *w, const char *name, const char *unit,
                                  int64_t pid, int32_t device, uint32_t *id);
trc_status trc_writer_gpu_device(trc_writer *w, const trc_gpu_device *d);
/* Describe a context / stream (spec §7.21, §7.22).  A repeat of the same
 * description writes nothing; a changed one (same key) replaces it.
 * Stream name: plain string (NULL = ""). */
trc_status trc_writer_gpu_context(trc_writer *w, const trc_gpu_context *c);
trc_status trc_writer_gpu_stream(trc_writer *w, const trc_gpu_stream *s);

/* Events.  thread/stack/counter arguments are writer ids from above.
 * Identical consecutive samples of one thread (same stack, flags,
 * weight) are folded into one repeat record (spec §7.9). weight_ns 0 =
 * the default period. */
trc_status trc_writer_sample(trc_writer *w, int64_t time_ns, uint32_t thread,
                             uint32_t stack, uint32_t flags, uint64_t weight_ns);
trc_status trc_writer_counter(trc_writer *w, uint32_t counter, int64_t time_ns, double value);
/* In these, string fields are plain strings (interned by the writer) and
 * thread/stack fields are writer ids. */
trc_status trc_writer_gpu_kernel(trc_writer *w, const trc_gpu_kernel *k);
trc_status trc_writer_gpu_memcpy(trc_writer *w, const trc_gpu_memcpy *m);
trc_status trc_writer_gpu_memset(trc_writer *w, const trc_gpu_memset *m);
trc_status trc_writer_gpu_sync(trc_writer *w, const trc_gpu_sync *s);
trc_status trc_writer_api_call(trc_writer *w, const trc_api_call *a);
trc_status trc_writer_marker(trc_writer *w, const trc_marker *m);
trc_status trc_writer_clock_sync(trc_writer *w, const trc_clock_sync *c);
trc_status trc_writer_loss(trc_writer *w, const trc_loss *l); /* from_reader, offset ignored */
trc_status trc_writer_process_exit(trc_writer *w, const trc_process_exit *e);

/* Time bound: flush the open chunk if it is older than the flush
 * interval at now_ns (trace clock).  Call from the recorder's tick. */
trc_status trc_writer_tick(trc_writer *w, int64_t now_ns);
/* Close the open chunk now (if it holds anything). */
trc_status trc_writer_flush(trc_writer *w);
/* Flush, append the end-of-segment summary (end_ns 0 = now), and free.
 * Always frees w; returns the first error met. Does not close the fd. */
trc_status trc_writer_close(trc_writer *w, int64_t end_ns);
/* Bytes handed to the output so far. */
uint64_t trc_writer_bytes(const trc_writer *w);

/* Trace clock: CLOCK_MONOTONIC in ns. Cannot fail. */
int64_t trc_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* TRC_TRC_H */
