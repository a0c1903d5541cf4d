/*
 * lib/export/common/gpu_idle.h — why is the GPU idle (docs/gpu.md, "Why
 * is my GPU idle?"): per device, the time when no kernel, copy or memset
 * runs ("idle") and when copies or memsets run but no kernel ("copies
 * only"), over the recording or the --from/--to window, each charged to
 * the Python stacks that the host threads feeding the device were
 * sampled in at that time.
 *
 * Definitions:
 *   NVML       the mean of the device's "gpu.util" counter values
 *              (NVML: the share of its sample period in which at least one
 *              kernel ran) within the span, shown beside the exact figure.
 *   span       [start of the first segment, or --from; the latest time
 *              seen (a segment's end, a sample's period, an activity's
 *              end), or --to).
 *   busy       the union of the device's kernel, copy and memset
 *              intervals, clipped to the span; "kernel busy" the union of
 *              its kernels alone; copies only = busy - kernel busy;
 *              idle = span - busy.
 *   feeder     a thread of a process that has activities on the device
 *              (a process that uses it; never another process's), which
 *              made a launch call there (TRC_API_LAUNCH: kernel
 *              launches and copies), or which a launch call of its
 *              process without Python frames (autograd, NCCL) is
 *              charged to by the waiting-thread rule (gpu_callsite.h:
 *              the thread waiting at that moment, such as the main
 *              thread in loss.backward()).  Found in the same pass:
 *              every thread's charges are kept by (device, thread,
 *              stack) and those of threads that turn out not to feed
 *              the device are dropped at the end, so a thread whose
 *              first launch comes late is still charged for its
 *              earlier samples.
 *   charge     a sample of a stack with a Python frame, or of stack 0
 *              (a native thread's "[native thread NAME]" is never
 *              charged), stands for [time_ns, time_ns + weight_ns) (a
 *              folded run of count samples for [time_ns, time_ns +
 *              span_ns + weight_ns), its count x weight_ns spread evenly);
 *              the part of that period inside the span and inside the
 *              device's idle (or copies-only) time is charged to the
 *              sample's thread and stack.
 *
 * Memory is bounded by the horizon, not by the number of activities:
 * a process's activities arrive roughly in time order per device (CUPTI
 * delivers them within its buffer flush delay), so busy intervals are
 * kept only while a waiting sample of a process using the device can
 * reach them, and a process's samples wait only until its own latest
 * activity is horizon_ns past them; then they are charged and the older
 * intervals summed and dropped.  The clock is each process's activities,
 * never the samples: trec writes the samples of the whole recording
 * first and each process's side trace after them, each from the
 * recording's start, so samples wait there (their count, not the
 * activities', bounds memory) and every figure stays exact whatever the
 * recording's length.  An activity that arrives more than the horizon
 * behind its process's latest is still counted busy from the retired
 * point on (exp_gpu_idle_stats.late counts them); a sample whose period
 * reaches back before that point on a device its process uses is
 * charged as idle for that part (late_samples counts them).  Two
 * processes sharing a device, recorded as separate side traces longer
 * than the horizon, are such a case: the second one's activities on the
 * device come after the first's retired them.  What remains is one row
 * per (device, thread, stack) charged, and one interval per busy stretch
 * within the horizon (exp_gpu_idle_stream_order: per busy stretch that
 * not every stream has passed).
 *
 * Internal API, prefix exp_gpu_idle_.  Ownership: _new / _free.
 */
#ifndef TRC_LIB_EXPORT_COMMON_GPU_IDLE_H
#define TRC_LIB_EXPORT_COMMON_GPU_IDLE_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

/* Default horizon: well over CUPTI's usual buffer flush delay. */
#define EXP_GPU_IDLE_DEFAULT_HORIZON_NS (INT64_C(4) * 1000000000)

typedef struct exp_gpu_idle_options {
    int has_from, has_to;    /* the --from/--to window, as the selection has it */
    int64_t from_ns, to_ns;  /* relative to the start of the first segment */
    int64_t horizon_ns;      /* 0 = EXP_GPU_IDLE_DEFAULT_HORIZON_NS */
    int64_t bucket_ns;       /* > 0: also kernel-busy ns per bucket of this
                              * length from the span's start (exact busy %) */
} exp_gpu_idle_options;

typedef enum exp_gpu_idle_kind {
    EXP_GPU_IDLE_NONE = 0,   /* nothing runs on the device */
    EXP_GPU_IDLE_COPY_ONLY = 1 /* copies or memsets run, no kernel */
} exp_gpu_idle_kind;

/* One device's headline (after exp_gpu_idle_finish). */
typedef struct exp_gpu_idle_device {
    uint32_t device;         /* CUDA ordinal */
    uint64_t span_ns;        /* the span (see above) */
    uint64_t busy_ns;        /* kernels, copies or memsets run */
    uint64_t kernel_ns;      /* kernels run */
    uint64_t copy_only_ns;   /* busy_ns - kernel_ns */
    uint64_t idle_ns;        /* span_ns - busy_ns */
    uint64_t charged_idle_ns, charged_copy_only_ns; /* charged to feeders' samples */
    uint64_t nvml_util_n;    /* "gpu.util" counter values of the device in the span */
    double nvml_util_mean;   /* their mean (percent), 0 when none */
} exp_gpu_idle_device;

typedef struct exp_gpu_idle_stats {
    uint64_t activities, samples;  /* fed in */
    uint64_t late;                 /* activities that ended before the retired point */
    uint64_t late_samples;         /* samples that reached back before it */
    uint64_t peak_intervals, peak_pending; /* most busy intervals / samples held */
} exp_gpu_idle_stats;

typedef struct exp_gpu_idle exp_gpu_idle;

/* New stage (opts copied; NULL = whole recording, default horizon).
 * NULL when out of memory. */
exp_gpu_idle *exp_gpu_idle_new(const exp_gpu_idle_options *opts);
void exp_gpu_idle_free(exp_gpu_idle *g);

/* Retire by streams too: a device's intervals leave memory once every
 * stream of the device (process, context, stream) has started an
 * activity after them (or, for a stream long quiet, once they are a
 * horizon behind its process's latest activity): CUDA runs a stream's
 * work one item at a time, so a stream's activities arrive in start
 * order.  Those not yet a horizon old go to a temporary file, and an
 * activity that reaches back among them (a stream or a process first
 * seen behind the others, as a second process's side trace is) takes
 * them back first, so every figure is the one the horizon alone gives;
 * memory follows the streams' lag behind one another, not the horizon's
 * 4 s of intervals.  A sample ends it (every device takes its intervals
 * back; from then on the horizon alone retires): it is meant for a
 * stage fed activities only, trc2chrome's busy counter (chrome_busy.c).
 * Call before the first event. */
void exp_gpu_idle_stream_order(exp_gpu_idle *g);

/* Feed the selected events in file order (samples with --idle ones
 * kept: a thread waiting off-CPU is what idles a GPU): SEGMENT, SEGMENT_END,
 * SAMPLE, API_CALL, COUNTER and GPU_KERNEL/MEMCPY/MEMSET matter, others are ignored.  r
 * gives a thread's pid.  TRC_OK, TRC_ERR_NOMEM, TRC_ERR_LIMIT, or
 * TRC_ERR_IO (exp_gpu_idle_stream_order's temporary file). */
trc_status exp_gpu_idle_event(exp_gpu_idle *g, const trc_reader *r, const trc_event *ev);

/* Charge what is still held.  Call once, at the end of input.  TRC_OK,
 * TRC_ERR_NOMEM, or TRC_ERR_LIMIT (with bucket_ns: over 2^24 buckets). */
trc_status exp_gpu_idle_finish(exp_gpu_idle *g, const trc_reader *r);

/* Devices seen, in ascending ordinal order after finish. */
uint32_t exp_gpu_idle_devices(const exp_gpu_idle *g);
void exp_gpu_idle_device_at(const exp_gpu_idle *g, uint32_t i, exp_gpu_idle_device *out);

/* One charge: ns of the device's idle (kind) time while `thread` (a
 * feeder) was sampled in `stack` (0 = no Python frames). */
typedef trc_status (*exp_gpu_idle_fn)(void *ctx, uint32_t device, exp_gpu_idle_kind kind,
                                      uint32_t thread, uint32_t stack, uint64_t ns);

/* Every nonzero charge of feeders, after finish, by device (ascending);
 * one (device, kind, thread, stack) may come more than once (time charged
 * before the device was first seen comes apart): add them up.  TRC_OK or fn's status. */
trc_status exp_gpu_idle_each(const exp_gpu_idle *g, exp_gpu_idle_fn fn, void *ctx);

/* With bucket_ns: the span's start, and the kernel-busy ns of device i
 * (as in _device_at) in each bucket [start + k * bucket_ns, + bucket_ns)
 * of the span (*n of them; the last one ends at the span's end).  The
 * busy share of bucket k is its ns over its length.  NULL (*n = 0)
 * without bucket_ns or when the span is empty. */
int64_t exp_gpu_idle_span_start(const exp_gpu_idle *g);
const uint64_t *exp_gpu_idle_busy_buckets(const exp_gpu_idle *g, uint32_t i, size_t *n);

void exp_gpu_idle_get_stats(const exp_gpu_idle *g, exp_gpu_idle_stats *out);

/* The root frame of a charge in the folded views: "[GPU N idle]" or
 * "[GPU N copies only]".  Writes at most n bytes, NUL included. */
void exp_gpu_idle_root(char *buf, size_t n, uint32_t device, exp_gpu_idle_kind kind);

#endif /* TRC_LIB_EXPORT_COMMON_GPU_IDLE_H */
