/*
 * tests/support/nvvp_traces.h — synthetic GPU traces for the tests and
 * benchmark of trc2nvvp (and anyone else who needs GPU data before a real
 * GPU recording exists), written with the public writer API.
 *
 * Both generators are deterministic: the same arguments give the same
 * events (the writer's fixed start/wall times are set), so text outputs
 * derived from them can be pinned as golden files.  GPU records are
 * written in the order CUPTI buffers deliver them (not sorted by start),
 * as a recorder would.
 */
#ifndef TRC_TESTS_SUPPORT_NVVP_TRACES_H
#define TRC_TESTS_SUPPORT_NVVP_TRACES_H

#include <stdint.h>

#include "trc/trc.h"

/* What a generator wrote, for tests to compare outputs against. */
typedef struct nvvp_trace_info {
    int64_t start_ns;            /* segment start (trace clock) */
    int64_t end_ns;              /* last timestamp written */
    uint64_t kernels, memcpys, memsets, syncs, api_calls;
    uint64_t memcpy_by_kind[11]; /* indexed by trc_copy_kind */
    uint64_t kernel_ns;          /* sum of kernel durations */
    uint64_t memcpy_ns, memset_ns;
    uint64_t api_ns;             /* sum of API call durations */
    uint64_t samples;            /* CPU samples (counting repeats) */
    uint64_t markers;            /* NVTX records written */
    uint64_t counter_values;
    uint64_t gpu_dropped;        /* count in the GPU_DROPPED loss */
    uint32_t kernel_names;       /* distinct kernel functions */
} nvvp_trace_info;

/* The small fixture: one process (pid 4242, "python3 train.py") with a
 * main thread running Python and an autograd thread without Python
 * frames; two devices; streams 7, 13 and 14 with overlapping kernels;
 * copies HtoD, DtoH, DtoD, PtoP and HtoH; memsets; stream syncs; runtime
 * and driver API calls sharing correlation ids with Python stacks at the
 * launches; NVTX push/pop, complete ranges and instants; counters
 * gpu.util, gpu.mem.used (device 0) and rss (process); CPU samples every
 * millisecond; one GPU_DROPPED loss of 12 records.
 * Writes a complete trace to fd (not closed).  info may be NULL. */
trc_status nvvp_trace_write_fixture(int fd, nvvp_trace_info *info);

/* GPU time of known attribution on two devices, for the share of GPU
 * time with a Python line per device and the waiting-thread rule:
 * threads "loader" (defined first, off CPU in next_batch all along),
 * MainThread (on CPU in Model.forward for 0-4 ms, then off CPU in
 * backward, a function known to wait) and pt_autograd_0 (launches
 * without Python frames).  Device 0: 1000 us launched by MainThread,
 * 300 us by pt_autograd_0 at 1.5 ms (charged via the loader: off CPU
 * beats on CPU); device 1: 200 us by MainThread, 600 us by
 * pt_autograd_0 at 5 ms (via MainThread: known to wait beats merely off
 * CPU, although the loader comes first), 200 us with correlation 0.
 * One GPU_DROPPED loss of 3 records.  Writes a complete trace to fd (not
 * closed).  info may be NULL. */
trc_status nvvp_trace_write_two_devices(int fd, nvvp_trace_info *info);

/* A large trace: n GPU activities (90% kernels of 8 functions over 4
 * streams, some concurrent; 8% copies; 2% memsets), one runtime API call
 * per activity, CPU samples every millisecond and a gpu.util counter
 * every 10 ms, spread over about n * 10 us.  Writes a complete trace to
 * fd (not closed).  info may be NULL. */
trc_status nvvp_trace_write_big(int fd, uint64_t n, nvvp_trace_info *info);

#endif
