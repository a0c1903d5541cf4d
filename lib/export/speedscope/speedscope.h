/*
 * lib/export/speedscope/speedscope.h — the speedscope JSON exporter (a conv sink's
 * engine): CPU samples in, one "sampled" profile per thread out.
 *
 * Output (speedscope's file-format-schema.json, notes in docs/design/outputs.md §1):
 * "$schema", "exporter": "trc@VERSION", "name", shared.frames (name, file,
 * line) and one sampled profile per thread named "NAME (tid N)", in order
 * of each thread's first sample; with merge_threads one profile per
 * process ("LABEL (pid N)") comes first, holding all of its threads'
 * samples in file order.  Weights are integer NANOSECONDS (unit
 * "nanoseconds"): each entry is a run of consecutive identical samples of
 * that thread with the summed time, so time order is kept and the file
 * stays small.  startValue is the profile's first sample time relative to
 * the trace start; endValue = startValue + the sum of its weights.
 * Frames are functions (cpuview.h); samples without Python frames get a
 * "<no Python frames>" frame; an output with no samples still holds one
 * empty profile ("no samples") so that speedscope opens it.  GPU
 * kernels, copies and memsets become one evented profile per stream after
 * the CPU profiles (speedscope_gpu.h says how overlaps are made valid).
 *
 * Memory: the frame/stack tables (distinct stacks) plus, per profile, a
 * buffer of at most spool_runs runs; full buffers spill to an anonymous
 * temporary file, so memory does not grow with the number of samples.
 *
 * The exporter borrows strings from the reader: call sscope_finish before
 * trc_reader_free.
 */
#ifndef TRC_LIB_EXPORT_SPEEDSCOPE_H
#define TRC_LIB_EXPORT_SPEEDSCOPE_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/sink.h"

/* The schema every speedscope file names. */
#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

typedef struct sscope_options {
    int merge_threads;   /* also one profile per process */
    int lines;           /* one frame per executing line, not per function */
    uint32_t spool_runs; /* runs kept in memory per profile; 0 = 4096 */
} sscope_options;

typedef struct sscope sscope;

/* New exporter; opts may be NULL.  NULL when out of memory. */
sscope *sscope_new(const sscope_options *opts);
void sscope_free(sscope *s);

/* Consume one (already selected) event.  Samples feed the profiles, GPU
 * activities the stream profiles; a SEGMENT sets the trace start and
 * name; other events are ignored.
 * Returns TRC_OK, TRC_ERR_NOMEM, or TRC_ERR_IO (spill file); then
 * sscope_error says what failed. */
trc_status sscope_event(sscope *s, const trc_reader *r, const trc_event *ev);

/* Count one GPU activity with its launch site (the pipeline's call-site
 * stage, lib/export/common/gpu_callsite.h) for the share of GPU time
 * with a Python line, which the document's name ends with when any was
 * counted ("NAME: 75.00% of GPU time has a Python line (...)",
 * exp_gpu_share_str).  Cannot fail. */
void sscope_gpu_hit(sscope *s, const exp_gpu_hit *h);

/* Write the whole JSON document to out.  Returns TRC_OK or an error as
 * above (write errors on out are left for the caller's ferror check). */
trc_status sscope_finish(sscope *s, const trc_reader *r, FILE *out);

/* One line about the last error; "" if none.  Borrowed. */
const char *sscope_error(const sscope *s);

/* The exporter as a sink (lib/export/sink.h), options sscope_options. */
extern const exp_sink_type exp_sink_speedscope;
/* GPU idle time by the feeding threads' stacks (--gpu-idle,
 * speedscope_charges.c): one sampled profile per device and kind, options
 * an exp_gpu_idle_options (NULL: the whole recording). */
extern const exp_sink_type exp_sink_speedscope_gpu_idle;
/* Blocking syncs (--syncs, speedscope_charges.c): one sampled profile,
 * each call that can make the host wait a sample of its calling stack
 * plus its API name, weighing the host time it blocked (ns); options
 * NULL. */
extern const exp_sink_type exp_sink_speedscope_syncs;

#endif /* TRC_LIB_EXPORT_SPEEDSCOPE_H */
