/*
 * tests/support/idle_traces.h — synthetic traces for GPU idle time
 * (lib/export/common/gpu_idle.h), written through the public writer, whose
 * answers are known by construction (the numbers below).  Also the
 * idle-gen program (mk/idle.mk): idle-gen FILE writes the trace.
 *
 * One process (pid 4343), segment start IDLE_T0, 20 ms long, device 0.
 * Thread "MainThread" launches everything and is sampled every 1 ms
 * (weight 1 ms): in step() (train.py:10) at 0-7 ms and 10-11 ms, in
 * next() (loader.py:5) at 8-9 ms, in sleep() (train.py:20) at 12-19 ms.
 * Thread "worker" never launches and is sampled in work() (worker.py:3)
 * every 1 ms (weight 0.5 ms): it must never be charged.  On the device: kernels [1, 4)
 * and [3, 6) ms, a copy [6, 8) ms, a kernel [10 ms, 12 ms + 123 ns).
 * Each activity is written 3 ms after it ends (CUPTI's delay).  NVML's
 * "gpu.util" of device 0 reads 100 at 5 ms and 0 at 15 ms.
 */
#ifndef TRC_TESTS_SUPPORT_IDLE_TRACES_H
#define TRC_TESTS_SUPPORT_IDLE_TRACES_H

#include <stdint.h>

#include "trc/trc.h"

#define IDLE_T0 2000000000000ll
#define IDLE_MS 1000000ll
#define IDLE_PID 4343

/* The truth over the whole recording, in ns. */
#define IDLE_SPAN_NS (20 * IDLE_MS)
#define IDLE_BUSY_NS (9 * IDLE_MS + 123)
#define IDLE_KERNEL_NS (7 * IDLE_MS + 123)
#define IDLE_COPY_ONLY_NS (2 * IDLE_MS)
#define IDLE_IDLE_NS (11 * IDLE_MS - 123)
/* charged: idle to step 1 ms, next 2 ms, sleep 8 ms - 123 ns; copies
 * only to step 2 ms */
#define IDLE_STEP_NS (1 * IDLE_MS)
#define IDLE_NEXT_NS (2 * IDLE_MS)
#define IDLE_SLEEP_NS (8 * IDLE_MS - 123)
#define IDLE_STEP_COPY_NS (2 * IDLE_MS)

/* Writes the trace to fd.  TRC_OK or the writer's first error. */
trc_status idle_trace_write(int fd);

/* The benchmark's trace (idle-gen --big N FILE): n activities over two
 * devices (4 us each every 40 us, every 8th a copy; 20 s per million),
 * each after its launch call, one thread sampled every 1 ms in one of 8
 * lines. */
trc_status idle_trace_write_big(int fd, uint64_t n);

#endif /* TRC_TESTS_SUPPORT_IDLE_TRACES_H */
