/*
 * tests/support/convb_traces.h — synthetic CPU-sample traces for the tests
 * and benchmark of trc2speedscope and trc2chrome, written with the public
 * writer API.  Deterministic: the same arguments give the same bytes
 * (fixed start/wall times, host and recorder), so outputs derived from
 * them can be pinned as golden files.
 */
#ifndef TRC_TESTS_SUPPORT_CONVB_TRACES_H
#define TRC_TESTS_SUPPORT_CONVB_TRACES_H

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

/* A large trace of n samples over `threads` threads (1..64) of one
 * process: 1 kHz per thread, stacks from a pool of about 2000 (depth up
 * to 40) following a random walk that often stays put (runs) and moves
 * to a parent or child, ~10% off-CPU; an rss counter every 1000 samples.
 * Writes a complete trace to fd (not closed).  info may be NULL. */
trc_status convb_write_big(int fd, uint64_t n, uint32_t threads, convb_info *info);

#endif
