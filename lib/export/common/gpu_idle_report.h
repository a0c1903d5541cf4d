/*
 * lib/export/common/gpu_idle_report.h — the per-device headline of GPU
 * idle time (docs/gpu.md, "Why is my GPU idle?"), printed by trc-stats
 * --gpu and trc2nvvp's summary from a finished idle stage
 * (lib/export/common/gpu_idle.h): busy, copies-only and idle shares of
 * the span (compute busy = kernels run), and the three stacks charged with the most idle time, each
 * with its share of the device's idle time.  Internal API.
 */
#ifndef TRC_LIB_EXPORT_COMMON_GPU_IDLE_REPORT_H
#define TRC_LIB_EXPORT_COMMON_GPU_IDLE_REPORT_H

#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/common/gpu_idle.h"

/* How many idle stacks the headline shows per device. */
#define EXP_GPU_IDLE_TOP 3

/* Writes the headline of every device of g (nothing when it saw none):
 *
 *   GPU idle time (compute busy: a kernel runs; ...):
 *     GPU 0: compute busy 35.00%, copies only 10.00%, idle 55.00% of 20.000ms
 *       72.73% idle in sleep (train.py:20)
 *
 * A stack is shown by its leaf frame, "function (file:line)" with the
 * file shortened; "<no Python frames>" for stack 0.  r is the reader
 * the stage was fed from.  TRC_OK, TRC_ERR_NOMEM or TRC_ERR_IO. */
trc_status exp_gpu_idle_report(const exp_gpu_idle *g, const trc_reader *r, FILE *out);

#endif /* TRC_LIB_EXPORT_COMMON_GPU_IDLE_REPORT_H */
