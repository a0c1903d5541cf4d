/*
 * lib/export/chrome/chrome.h — the Chrome Trace Event exporter (a conv sink's
 * engine): CPU samples become a flame chart over time for Perfetto,
 * chrome://tracing and speedscope's Chrome importer.
 *
 * Output (docs/design/outputs.md §2): {"traceEvents":[...],"displayTimeUnit":"ms",
 * "otherData":{...}}.  Per thread, consecutive samples sharing a stack
 * prefix keep those frames open; a frame becomes one "X" slice (name =
 * function, cat = frame kind, args = file, line) when the stack leaves it,
 * so slices of one (pid,tid) nest.  A sample at time t with repeat count
 * c stands for [t, t + span + weight); a thread's slices are closed when
 * its next sample comes at least one sample weight after that end (a gap:
 * off-CPU time dropped by the selection, or lost samples).
 * Counters are "C" events, losses "i" instants (s "t"/"p"/"g" by what is
 * known), process exits "i" with s "p", names and sort order "M" events.
 * ts/dur are microseconds relative to the trace start with 3 decimals
 * (exact ns).  Two concessions to speedscope's importer, which works in
 * doubles and breaks end/begin ties by name: a dur whose 3-decimal form
 * would make (ts - thread start) + dur miss the end shared with its
 * parent is written with up to 17 digits (still within 1 ns); and when a
 * frame that ends at a sample looks the same (name, file, line) as the
 * outermost frame beginning there, the ending frames end 1 ns early.
 * Samples without Python frames show as "<no Python frames>".
 * GPU activities, CUDA API calls and markers (chrome_gpu.c): a
 * pseudo-process per GPU device (pid 0x7fff0000 + device, "GPU N: NAME",
 * sorted after the CPU processes) with a track per stream (tid = stream
 * number when free) for kernels, copies and memsets and one per stream
 * for synchronisations; API calls and markers on extra tracks of the
 * calling thread's process (tids from 0x40000000); a v2 flow (bind_id,
 * flow_out/flow_in) from each launch call to its activity; counters of a
 * GPU device under its pseudo-process.  Slices of every track nest: see
 * chrome_gpu.c for the reordering window and the extra lanes.
 * Note: speedscope treats files named *.chrome.json as Chrome Timeline
 * (DevTools) exports; name these files otherwise (e.g. *.trace.json).
 *
 * Events are written as they are produced (memory: distinct stacks, plus
 * the open stack of each thread; for GPU data a window of slices per
 * track and the launches waiting for their activity).  Output goes
 * through a 256 KiB buffer (json_out.h): the caller's stream sees it in
 * blocks, and all of it once chrome_finish returns.  Borrows strings from the reader: call
 * chrome_finish before trc_reader_free.
 */
#ifndef TRC_LIB_EXPORT_CHROME_H
#define TRC_LIB_EXPORT_CHROME_H

#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/common/gpu_idle.h"
#include "lib/export/sink.h"

typedef struct chrome_options {
    int lines; /* one slice per executing line, not per function */
    /* busy.bucket_ns > 0: per GPU device a counter track "GPU busy
     * (kernels)", the exact share of each bucket when a kernel ran
     * (lib/export/common/gpu_idle.h), over busy's window */
    exp_gpu_idle_options busy;
    /* slices waiting for their flow partner kept in memory, 0 = 4096;
     * older ones wait in an anonymous temporary file */
    uint32_t wait_mem;
} chrome_options;

typedef struct chrome chrome;

/* New exporter; opts may be NULL.  NULL when out of memory. */
chrome *chrome_new(const chrome_options *opts);
void chrome_free(chrome *c);

/* Consume one (already selected) event, writing what it completes to
 * out.  Returns TRC_OK or TRC_ERR_NOMEM (then chrome_error says what). */
trc_status chrome_event(chrome *c, const trc_reader *r, const trc_event *ev, FILE *out);

/* Count one GPU activity with its launch site (the pipeline's call-site
 * stage, lib/export/common/gpu_callsite.h) for the share of GPU time
 * with a Python line (exp_gpu_share_str), written when any was counted:
 * each device's share as its GPU process's label (process_labels) and
 * as an instant event at the start of that process, the whole line as
 * otherData.gpu_python_lines.
 * Cannot fail. */
void chrome_gpu_hit(chrome *c, const exp_gpu_hit *h);

/* Close every open slice, write the metadata events and the end of the
 * document.  Returns TRC_OK or TRC_ERR_NOMEM.  Write errors on out are
 * left for the caller's ferror check. */
trc_status chrome_finish(chrome *c, const trc_reader *r, FILE *out);

/* One line about the last error; "" if none.  Borrowed. */
const char *chrome_error(const chrome *c);

/* The exporter as a sink (lib/export/sink.h), options chrome_options. */
extern const exp_sink_type exp_sink_chrome;

#endif /* TRC_LIB_EXPORT_CHROME_H */
