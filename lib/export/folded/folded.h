/*
 * lib/export/folded/folded.h — the aggregating exporters: folded stacks
 * (lib/export/common/collapsed.h, docs/design/outputs.md §4), per-function statistics (stats.c, the
 * model behind trc-stats and trc2pstats) and the pstats file writer
 * (pstats.c, docs/design/outputs.md §3).  Internal API (not installed), prefix exp_.
 *
 * Each exporter is a streaming sink: feed it the samples a converter
 * keeps (exp_*_add), then write.  They keep one row per distinct (group,
 * stack id) or per function, never per sample.  Strings are borrowed
 * from the reader, so an exporter must not outlive its reader, and the
 * reader passed to every call must be the same one.
 *
 * Meaning of the statistics for sampled data (docs/converters.md):
 *   tottime  sampled time (weight_ns x count) of samples whose leaf frame
 *            is in the function;
 *   cumtime  sampled time of samples in which the function appears at
 *            least once (recursion counted once per sample);
 *   ncalls   entries observed: the function is at a stack position in a
 *            sample where the same thread's previous kept sample did not
 *            have that call in progress (a call continues while all its
 *            callers' frames are unchanged; its own line may move).
 *            Calls that start and end between two samples are missed and
 *            back-to-back calls from one line merge: a lower bound.
 *            Gaps start no call: samples not in the trace (unreadable,
 *            counted by LOSS records) are skipped over, and so is one
 *            sample without Python frames (stack 0, count 1) between two
 *            with frames: it counts its own entry of the no-Python
 *            function, and the next sample is compared with the one
 *            before it.  Two or more empty samples in a row end the calls.
 *            primitive calls = entries not made while the same function
 *            was already on the stack (cProfile's "cc").
 */
#ifndef TRC_LIB_EXPORT_FOLDED_FOLDED_H
#define TRC_LIB_EXPORT_FOLDED_FOLDED_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"
#include "lib/util/grow.h"
#include "lib/export/common/collapsed.h"
#include "lib/export/common/gpu_callsite.h"
#include "lib/export/sink.h"

/* ------------------------------------------------------------------ */
/* Per-function statistics (stats.c)                                    */
/* ------------------------------------------------------------------ */

typedef struct exp_func {
    const char *file;      /* pstats key: "~" for non-Python frames */
    uint32_t first_line;   /* pstats key: 0 for non-Python frames */
    const char *function;
    uint64_t nc, cc;       /* entries observed, primitive entries */
    uint64_t tt_ns, ct_ns; /* own and cumulative sampled time */
    uint64_t own_samples, cum_samples;
} exp_func;

typedef struct exp_edge {
    uint32_t caller, callee; /* indices into the function table */
    uint64_t nc, cc;         /* entries of callee made from caller */
    uint64_t tt_ns, ct_ns;   /* callee's own / cumulative time under caller */
} exp_edge;

typedef struct exp_stats_totals {
    uint64_t samples;      /* kept samples (sum of counts) */
    uint64_t weight_ns;    /* sum of weight_ns x count */
    uint64_t threads;      /* distinct threads among kept samples */
    uint64_t processes;    /* distinct pids among them (after finish) */
    int64_t first_ns, last_ns; /* first kept sample time, last one (+ span) */
    uint64_t calls, primitive_calls; /* sums of nc, cc (after finish) */
    uint64_t gpu_activities;  /* GPU activities added (exp_stats_add_gpu) */
    uint64_t gpu_ns;          /* their summed durations */
    uint64_t gpu_threads;     /* distinct launching threads known (after finish) */
} exp_stats_totals;

typedef struct exp_stats exp_stats;

/* New empty statistics.  NULL when out of memory.  Free with
 * exp_stats_free. */
exp_stats *exp_stats_new(void);
void exp_stats_free(exp_stats *s);

/* Count one (possibly folded) sample.  Samples must come in file order
 * (entries are detected against the thread's previous sample).  TRC_OK or
 * TRC_ERR_NOMEM. */
trc_status exp_stats_add(exp_stats *s, const trc_reader *r, const trc_sample *smp);

/* Count one GPU activity (--gpu): a "sample" of weight h->dur_ns whose
 * stack is the launching Python stack (or a root function
 * EXP_GPU_NO_PYTHON_ROOT / EXP_GPU_UNKNOWN_ROOT) with a leaf function
 * ('~', 0, h->name).  tottime/cumtime follow the sample rules above;
 * ncalls counts activities: every function on the path gets one call per
 * activity launched beneath it (primitive: once per activity), and so does
 * every edge of the path.  Order does not matter.  h->name is borrowed
 * for the life of s.  TRC_OK or TRC_ERR_NOMEM. */
trc_status exp_stats_add_gpu(exp_stats *s, const trc_reader *r, const exp_gpu_hit *h);

/* Count the idle charges of a finished stage (--gpu-idle,
 * lib/export/common/gpu_idle.h): each charge of idle time (not of
 * copies-only time) as one sample of its thread and stack weighing the
 * charged ns, so tottime/cumtime are the device idle seconds charged
 * beneath a function (devices summed).  TRC_OK or TRC_ERR_NOMEM. */
trc_status exp_stats_add_gpu_idle(exp_stats *s, const trc_reader *r, const exp_gpu_idle *g);

/* Build the function and edge tables from what was added (call once,
 * after the last add).  TRC_OK or TRC_ERR_NOMEM. */
trc_status exp_stats_finish(exp_stats *s, const trc_reader *r);

/* Tables, valid after exp_stats_finish.  Functions are in key order
 * (file, first_line, function); edges in (callee, caller) order.  Borrowed. */
size_t exp_stats_func_count(const exp_stats *s);
const exp_func *exp_stats_func(const exp_stats *s, size_t i);
size_t exp_stats_edge_count(const exp_stats *s);
const exp_edge *exp_stats_edge(const exp_stats *s, size_t i);
const exp_stats_totals *exp_stats_get_totals(const exp_stats *s);
/* The pid of counted process i (0 <= i < totals.processes, in the order
 * first met; -1 for samples of a thread never described). */
int64_t exp_stats_pid(const exp_stats *s, uint64_t i);

/* pstats' func_std_string: "file:line(function)", or for file "~" and
 * line 0 the bare name, with "<...>" shown as "{...}".  Writes at most n
 * bytes (NUL-terminated, truncated if needed) and returns buf. */
char *exp_func_label(const exp_func *f, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* pstats file (pstats.c)                                               */
/* ------------------------------------------------------------------ */

/* Write the statistics as one marshal-ed dict (the format
 * pstats.Stats.load_stats reads, marshal version 2+ codes only): key
 * (file, first_line, function) → (cc, nc, tt, ct, {caller key: (nc, cc,
 * tt, ct)}), times in seconds.  Every caller is also a key.  TRC_OK,
 * TRC_ERR_ARG (no functions: pstats cannot load an empty dict) or
 * TRC_ERR_IO (write failed). */
trc_status exp_pstats_write(const exp_stats *s, FILE *out);

/* ------------------------------------------------------------------ */
/* As sinks (folded_sink.c, lib/export/sink.h)                          */
/* ------------------------------------------------------------------ */

/* Folded stacks of the samples; options exp_collapsed_options. */
extern const exp_sink_type exp_sink_collapsed;
/* Folded stacks of GPU activities under their launch sites; options
 * exp_folded_gpu_options: after the output is written, share (when set)
 * is called once with the share of GPU time with a Python line
 * (exp_gpu_share_str; trc2collapsed --gpu prints it on stderr). */
typedef struct exp_folded_gpu_options {
    exp_collapsed_options fold;
    void (*share)(const char *line);
} exp_folded_gpu_options;
extern const exp_sink_type exp_sink_collapsed_gpu;
/* --syncs (sync_sink.c, lib/export/common/gpu_sync.h): the calls that can
 * make the host wait, as folded stacks (calling stack plus the API name,
 * weighted by host time blocked; options as exp_sink_collapsed), and
 * trc-stats' table of them by Python line (no options). */
extern const exp_sink_type exp_sink_collapsed_syncs;
extern const exp_sink_type exp_sink_sync_report;
/* trc2pstats --syncs: each sync one call of a leaf function named after
 * its API, under its calling stack; times are seconds blocked. */
extern const exp_sink_type exp_sink_pstats_syncs;
/* The pstats file of the samples, or (_gpu) of GPU activities; options
 * NULL.  Selecting nothing fails with TRC_ERR_ARG and a message. */
extern const exp_sink_type exp_sink_pstats;
extern const exp_sink_type exp_sink_pstats_gpu;

/* GPU idle time by the feeding threads' stacks (--gpu-idle): folded
 * stacks under "[GPU N idle]" / "[GPU N copies only]" roots, or the
 * pstats file of the idle time; options exp_folded_idle_options.  Feed
 * them the off-CPU samples too (the selection's idle flag). */
typedef struct exp_folded_idle_options {
    exp_collapsed_options fold;
    exp_gpu_idle_options idle;
} exp_folded_idle_options;
extern const exp_sink_type exp_sink_collapsed_gpu_idle;
extern const exp_sink_type exp_sink_pstats_gpu_idle;

#endif /* TRC_LIB_EXPORT_FOLDED_FOLDED_H */
