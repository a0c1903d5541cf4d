/*
 * lib/export/nvvp/nvvp_trace.h — nvprof's per-record tables (docs/design/outputs.md §5):
 * `--print-gpu-trace` (one line per kernel, copy and memset, by start
 * time) and `--print-api-trace` (one line per runtime/driver API call),
 * as aligned text or as nvprof's CSV shape (a quoted header row, then a
 * units row, then data with every number in the unit its column names).
 *
 * Columns.  GPU trace text: Start Duration "Grid Size" "Block Size" Regs*
 * SSMem* DSMem* Size Throughput SrcMemType DstMemType Device Context
 * Stream Name Correlation_ID; grids and blocks as "(20 10 1)", "-" where
 * a column does not apply.  CSV uses the header words nvprof's CSV uses
 * ("Grid X", "Registers Per Thread", "Static SMem", ...) so existing
 * nvprof CSV readers find their columns.  API trace: Start Duration Name
 * Correlation_ID Thread, then trc's addition, Source: the Python call
 * site of the stack's leaf-most Python frame, "file:line(function)".
 *
 * Times are relative to `origin` (the trace start).  Sizes and
 * throughputs use 1 KB = 1024 B, as nvprof prints them.
 */
#ifndef TRC_LIB_EXPORT_NVVP_TRACE_H
#define TRC_LIB_EXPORT_NVVP_TRACE_H

#include <stdio.h>

#include "lib/export/nvvp/nvvp_data.h"

typedef struct nvvp_table_opts {
    int csv;          /* CSV instead of aligned text */
    int64_t origin;   /* subtracted from start times */
} nvvp_table_opts;

/* Write the GPU trace of d (after nvvp_data_finish). TRC_OK, TRC_ERR_NOMEM
 * or TRC_ERR_IO (a write failed; errno kept). */
trc_status nvvp_gpu_trace_write(nvvp_data *d, trc_reader *r, const nvvp_table_opts *o, FILE *out);

/* Write the API trace of d (after nvvp_data_finish). Same results. */
trc_status nvvp_api_trace_write(nvvp_data *d, trc_reader *r, const nvvp_table_opts *o, FILE *out);

/* "NVIDIA H100 80GB HBM3 (0)", or "GPU 0" when the device was never
 * described. Writes at most n bytes; returns buf. */
char *nvvp_device_label(trc_reader *r, uint32_t device, char *buf, size_t n);

#endif
