/*
 * lib/export/nvvp/nvvp_sink.h — the NVIDIA-style GPU views as sinks
 * (lib/export/sink.h; docs/design/outputs.md §5): exp_sink_nvvp is
 * trc2nvvp (nvprof's summary, the --print-gpu-trace / --print-api-trace
 * tables, or the SVG timeline), exp_sink_gpu_summary is trc-stats --gpu
 * (the same summary through gpu_summary.h, options NULL).
 */
#ifndef TRC_LIB_EXPORT_NVVP_NVVP_SINK_H
#define TRC_LIB_EXPORT_NVVP_NVVP_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "lib/export/common/gpu_idle.h"
#include "lib/export/sink.h"

typedef struct nvvp_sink_options {
    int gpu_trace, api_trace; /* the trace tables (both: GPU first, a blank line between) */
    int svg;                  /* the timeline instead of any table */
    int csv;                  /* nvprof's CSV for the summary and the tables */
    int sort;                 /* summary order (nvvp_sort, nvvp_summary.h) */
    size_t limit;             /* summary rows per section, 0 = all */
    double width;             /* SVG width in px, 0 = the default */
    int64_t from_ns, to_ns;   /* SVG window from the trace start, < 0 = open */
    exp_gpu_idle_options idle; /* the summary's GPU idle headline: its window; with
                                * svg and bucket_ns > 0, the timeline's exact busy
                                * rows (nvvp_svg.h) */
} nvvp_sink_options;

/* The summary (not in CSV) and exp_sink_gpu_summary end with the GPU
 * idle headline (lib/export/common/gpu_idle_report.h); the latter's
 * options are an exp_gpu_idle_options (NULL: the whole recording). */
extern const exp_sink_type exp_sink_nvvp;
extern const exp_sink_type exp_sink_gpu_summary;

/* After the text summary of both: a blank line and the share of GPU
 * time with a Python line (exp_gpu_share_str), nothing when there was
 * no GPU time.  TRC_OK or TRC_ERR_IO.  In gpu_summary_sink.c, which
 * trc-stats links without the timeline. */
trc_status nvvp_print_share(const exp_gpu_callsite_stats *lines, FILE *out);

#endif /* TRC_LIB_EXPORT_NVVP_NVVP_SINK_H */
