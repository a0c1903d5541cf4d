/*
 * lib/export/nvvp/gpu_summary.h — the sink behind `trc-stats --gpu`: nvprof's
 * default summary of a trace's GPU data (docs/design/outputs.md §5), "GPU
 * activities:" and "API calls:" sections with columns Type, Time(%),
 * Time, Calls, Avg, Min, Max, Name, rows by time (largest first), times
 * with unit suffixes to ~5 significant digits, copies as
 * "[CUDA memcpy HtoD]", kernels by their demangled names.
 *
 * A thin streaming adapter over lib/export/nvvp/nvvp_summary (the same table
 * trc2nvvp prints), so both tools always agree.  Internal API.
 * Ownership: gpu_summary_new / gpu_summary_free.
 */
#ifndef TRC_LIB_EXPORT_GPU_SUMMARY_H
#define TRC_LIB_EXPORT_GPU_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"

typedef struct gpu_summary gpu_summary;

/* NULL when out of memory. */
gpu_summary *gpu_summary_new(void);
void gpu_summary_free(gpu_summary *s);

/* Feed every event in file order (those that do not matter are
 * ignored).  r is borrowed and must stay the same reader until
 * gpu_summary_print.  Returns 0, or -1 when out of memory. */
int gpu_summary_event(gpu_summary *s, trc_reader *r, const trc_event *ev);

/* Write the two sections (and one warning line per kind of GPU record
 * loss), or "No GPU activities or API calls recorded." when the trace
 * has none.  Returns TRC_OK, TRC_ERR_NOMEM, or TRC_ERR_IO when the write
 * failed (errno kept). */
trc_status gpu_summary_print(gpu_summary *s, FILE *out);

/* Kernels, copies and memsets seen; API calls seen. */
uint64_t gpu_summary_activities(const gpu_summary *s);
uint64_t gpu_summary_api_calls(const gpu_summary *s);

#endif
