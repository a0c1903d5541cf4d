/*
 * lib/export/nvvp/nvvp_svg.h — an NVVP-like timeline of a trace as one SVG
 * file (docs/design/outputs.md §5).
 *
 * Rows, top to bottom: per process, its process-wide NVTX ranges, then
 * per thread a lane of CPU samples (coloured by the top Python frame),
 * Runtime API, Driver API, and Markers and Ranges; the process's
 * counters as small charts.  Per GPU: Memcpy HtoD / DtoH / DtoD / PtoP
 * (and other copy kinds), Memset, Synchronization, Compute (all kernels,
 * in sub-rows when they run concurrently), one row per kernel function
 * labelled with its share of the device's kernel time (the largest
 * NVVP_SVG_KERNEL_ROWS), one row per stream, then "GPU busy (kernels)",
 * the exact share of each bucket in which a kernel ran (the union of the
 * device's kernel intervals, lib/export/common/gpu_idle.h; with
 * opts.busy), beside the GPU's counters (NVML gpu.util etc.).  Counters of neither a process nor a GPU come
 * last.  Recorded losses with a time range are red bands over the plot.
 *
 * Every interval carries a <title> tooltip; intervals narrower than a
 * pixel are merged (nvvp_lanes.h) with their counts in the tooltip, so
 * the file size depends on the width and the number of rows, not on the
 * length of the trace.
 */
#ifndef TRC_LIB_EXPORT_NVVP_SVG_H
#define TRC_LIB_EXPORT_NVVP_SVG_H

#include <stdio.h>

#include "lib/export/common/gpu_idle.h"
#include "lib/export/nvvp/nvvp_data.h"

#define NVVP_SVG_KERNEL_ROWS 24
#define NVVP_SVG_DEFAULT_WIDTH 1600

typedef struct nvvp_svg_opts {
    double width;        /* total width in px; 0 = NVVP_SVG_DEFAULT_WIDTH */
    int64_t from_ns;     /* window start relative to the trace start; < 0 = first event */
    int64_t to_ns;       /* window end relative to the trace start; < 0 = last event */
    const char *title;   /* heading; NULL = "trc2nvvp: " + the recorded command line */
    const exp_gpu_idle *busy; /* finished, made with bucket_ns = busy_bucket_ns:
                               * each GPU's exact busy row; NULL = none */
    int64_t busy_bucket_ns;
} nvvp_svg_opts;

/* Draw d (after nvvp_data_finish, collected with NVVP_WANT_ALL) as SVG
 * to out.  TRC_OK, TRC_ERR_NOMEM, or TRC_ERR_IO (write failed). */
trc_status nvvp_svg_write(nvvp_data *d, trc_reader *r, const nvvp_svg_opts *o, FILE *out);

#endif
