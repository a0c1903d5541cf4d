/*
 * lib/export/speedscope/speedscope_gpu.h — the GPU part of the speedscope exporter:
 * one "evented" profile per GPU stream (docs/design/outputs.md §1), beside the CPU
 * sampled profiles, with kernels, copies and memsets as frames (kernel
 * name, "[CUDA memcpy HtoD]", "[CUDA memset]").  Synchronisations are not
 * shown: they are host waits, not GPU work.  Internal to lib/export.
 *
 * speedscope rejects a whole file when one evented profile breaks its
 * rules: "at" never decreases, a "C" closes the frame on top, every "O"
 * is closed.  CUDA runs a stream's work one item at a time, but recorded
 * intervals can still overlap (clock jitter, work of several contexts
 * under one id), so each stream's intervals are sorted by start (longer
 * first at equal starts) and made to nest:
 *   - an interval lying inside the one open before it is nested under it;
 *   - one that starts inside an open interval and ends after it is
 *     clipped: it starts where that one ends;
 *   - one that clipping leaves empty (hidden by earlier ones), and
 *     zero-length ones, are left out.
 * So the profile's top-level time is exactly the union of the stream's
 * busy intervals.
 *
 * Memory: at most `spool` intervals (24 bytes each) per stream; the
 * rest wait in an anonymous temporary file in sorted runs (one run for
 * a stream whose work arrives in order), merged when written, so memory
 * does not grow with the number of activities.  Strings are borrowed
 * from the reader.
 */
#ifndef TRC_LIB_EXPORT_SPEEDSCOPE_GPU_H
#define TRC_LIB_EXPORT_SPEEDSCOPE_GPU_H

#include <stdint.h>

#include "lib/export/common/cpuview.h"
#include "lib/export/common/json_out.h"
#include "trc/trc.h"

typedef struct sgpu sgpu;

/* New GPU part keeping at most spool intervals in memory per stream
 * (0 = 4096).  NULL when out of memory. */
sgpu *sgpu_new(uint32_t spool);
void sgpu_free(sgpu *g);

/* Keep a kernel, copy or memset (other events are ignored); its frame is
 * interned in view.  TRC_OK, TRC_ERR_NOMEM, or TRC_ERR_IO (temporary
 * file). */
trc_status sgpu_event(sgpu *g, cpuview *view, const trc_event *ev);

/* Earliest activity start, for a trace without a segment; 0 with
 * *have = 0 when there is none. */
int64_t sgpu_first_ns(const sgpu *g, int *have);

/* Number of stream profiles sgpu_write will write. */
uint32_t sgpu_profile_count(const sgpu *g);

/* Write the stream profiles (each preceded by ",\n", or "\n" for the
 * first of the document when *first; *first is cleared), times relative
 * to start_ns.  TRC_OK, TRC_ERR_NOMEM (the stack of open intervals, the
 * read-back buffers), or TRC_ERR_IO (reading the temporary file). */
trc_status sgpu_write(sgpu *g, const trc_reader *r, jsonw *out, int64_t start_ns, int *first);

#endif /* TRC_LIB_EXPORT_SPEEDSCOPE_GPU_H */
