/*
 * tests/support/timeline_traces.h — synthetic CPU-sample traces for the
 * tests and benchmark of trc2speedscope and trc2chrome, written with the
 * public writer API through the one trace builder (trace_builder.h).
 * Deterministic: the same arguments give the same bytes (fixed
 * start/wall times, host and recorder), so outputs derived from them can
 * be pinned as golden files.
 */
#ifndef TRC_TESTS_SUPPORT_TIMELINE_TRACES_H
#define TRC_TESTS_SUPPORT_TIMELINE_TRACES_H

#include <stdint.h>

#include "trc/trc.h"

#define CONVB_PID 4242
#define CONVB_TID_MAIN 4242
#define CONVB_TID_WORKER 4250
#define CONVB_TID_IO 4251
#define CONVB_START_NS 1000000000LL  /* segment start, trace clock */
#define CONVB_PERIOD_NS 1000000ULL   /* 1 kHz */

/* What a generator wrote, for tests to compare outputs against. */
typedef struct convb_info {
    uint64_t samples;        /* counting repeats */
    uint64_t on_cpu;         /* samples with TRC_SAMPLE_ON_CPU */
    uint64_t on_cpu_ns;      /* their weight */
    uint64_t all_ns;         /* weight of all samples */
    uint64_t counter_values;
    uint64_t losses;         /* loss records */
    uint32_t threads;
    int64_t end_ns;          /* last timestamp written */
    /* convb_write_gpu only */
    uint64_t kernels;        /* kernel records, zero-length ones included */
    uint64_t kernel_ns;      /* their summed durations */
    uint64_t activities;     /* kernels, copies and memsets */
    uint64_t api_calls;
    uint64_t flows;          /* launches whose activity was written, same
                              * process, starting after the call, both of
                              * non-zero length: the arrows to expect */
} convb_info;

/* The small fixture: process 4242 ("python3 app.py --size 3") with
 * MainThread (tid 4242), a worker (tid 4250, defined as "Thread-1" and
 * renamed "worker-1" half-way) and "io-δ" (tid 4251, mostly sleeping).
 * Frames include a native frame, a name with '"', '\' and a tab, UTF-8
 * names and files, and frames of one function at two lines.  Samples at
 * 1 kHz over 20 ms: consecutive repeats, a sample without Python frames,
 * off-CPU samples, a GIL-less on-CPU sample, a 2 ms hole with a recorded
 * SAMPLES_MISSED loss of 2; counters "rss" (bytes, pid 4242) and "load"
 * (percent, no process); the process exits with status 0 at 20.5 ms.
 * Writes a complete trace to fd (not closed).  info may be NULL. */
trc_status convb_write_small(int fd, convb_info *info);
/* The same with another exit status (-1 = unknown, spec §7.19). */
trc_status convb_write_small_exit(int fd, int32_t exit_code, convb_info *info);

/* A large trace of n samples over `threads` threads (1..64) of one
 * process: 1 kHz per thread, stacks from a pool of about 2000 (depth up
 * to 40) following a random walk that often stays put (runs) and moves
 * to a parent or child, ~10% off-CPU; an rss counter every 1000 samples.
 * Writes a complete trace to fd (not closed).  info may be NULL. */
trc_status convb_write_big(int fd, uint64_t n, uint32_t threads, convb_info *info);

/* A GPU training-step trace: processes 4242 (MainThread 4242 sampled at
 * 1 kHz and launching; an autograd thread 4260 without Python frames
 * launching through the driver API) and 4343 (kernels only, on device 0
 * stream 7 of its own context: the stream number is shared); devices 0
 * and 1.  n launches of kernels, copies (HtoD) and memsets on streams 7,
 * 13 and 14 of device 0 and stream 3 of device 1, 10 us apart; each
 * runtime call encloses a driver call that is written first (as CUPTI
 * does); activity records come in batches of 16, in order of completion.
 * Deliberate trouble: a partial overlap on stream 13 every 50th launch,
 * a kernel inside another on stream 14 every 97th, one zero-length
 * kernel, launches whose activity is missing (every 333rd, counted in a
 * GPU_DROPPED loss), stream and context synchronisations; NVTX ranges
 * (a "step" per 100 launches enclosing "forward" ranges, written after
 * what they enclose), instants, a PUSH never popped (autograd thread), a
 * POP never pushed (main thread),
 * a process-wide range; NVML counters gpu.util (both devices) and
 * gpu.mem.used (device 0) every ms.  Deterministic.  Writes a complete
 * trace to fd (not closed).  info may be NULL. */
trc_status convb_write_gpu(int fd, uint64_t n, convb_info *info);

/* A hand-made GPU stream whose intervals nest, overlap, hide each other
 * and repeat, for the exporters' GPU tests to check event by event.
 * Stream 5 of device 0 in process 77 (times in ns from the segment start
 * CONVB_HAND_T0), kernels named kA..kH:
 *   A [100,200]  B [120,150] inside A  C [180,260] starts in A, ends after
 *   D [190,200] inside A, hidden by C's clipping in speedscope
 *   E [300,300] zero-length  F, G [400,450] identical (G is named kF too)
 *   H [420,430] in F
 * Calls on thread 78 ("launcher"): cudaLaunchKernel [50,60] (corr 1 -> A)
 * around cuLaunchKernel [52,58] (corr 1001, written first, no activity);
 * cudaLaunchKernel [500,510] (corr 8 -> H, which starts before it).
 * Writes a complete trace to fd (not closed). */
#define CONVB_HAND_T0 1000000000LL
trc_status convb_write_gpu_hand(int fd);

#endif
