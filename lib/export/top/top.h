/*
 * lib/export/top/top.h — the aggregation behind trc-top (docs/top.md):
 * samples and GPU activities as they are read, turned on demand into
 * py-spy-top-like rows (own %, total %, own time, total time, GPU time,
 * function and file:line) over the last N seconds or since the start.
 *
 * Events arrive on the reading thread (through the sink type
 * exp_sink_top, which the converter pipeline feeds with both events and
 * GPU activities charged to their launch sites) while the screen asks for
 * tables on another; a model serialises the two with a lock of its own,
 * and everything a table shows is copied out of the reader when the
 * event is fed (frames and the stack tree), so that a table never
 * touches the reader while it reads.
 *
 * Memory: a row per distinct (stack, thread) since the start, the
 * samples and kernel intervals of the last `keep_ns` (the window), and
 * a copy of the frame and stack definitions.  Internal API, prefix top_.
 */
#ifndef TRC_LIB_EXPORT_TOP_TOP_H
#define TRC_LIB_EXPORT_TOP_TOP_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "lib/export/sink.h"

/* What a table sorts by, one key each on the screen (top_screen.h). */
typedef enum top_sort {
    TOP_SORT_OWN = 0,      /* own samples */
    TOP_SORT_TOTAL,        /* samples with the frame anywhere on the stack */
    TOP_SORT_OWN_TIME,     /* own time (sample weights) */
    TOP_SORT_TOTAL_TIME,   /* total time */
    TOP_SORT_GPU,          /* GPU time launched under the frame */
    TOP_SORT_NAME,         /* function, file, line ascending */
    TOP_SORT_COUNT
} top_sort;

/* How a table is cut from the model; every field can change between two
 * tables (the screen's toggles). */
typedef struct top_view {
    int since_start;       /* 1: everything since the start; 0: the window */
    int wall;              /* 1: off-CPU (idle) samples count too (wall
                            * clock); 0: only samples on CPU */
    int gil_only;          /* 1: only samples known to hold the GIL */
    top_sort sort;
} top_view;

typedef struct top_row {
    const char *function;  /* borrowed from the reader */
    const char *file;      /* "" for native frames */
    uint32_t line;
    trc_frame_kind kind;
    uint64_t own_n, total_n;    /* samples (a folded sample counts its count) */
    uint64_t own_ns, total_ns;  /* their weights */
    uint64_t gpu_ns;            /* GPU time of activities launched with this
                                 * frame on the launching stack */
} top_row;

typedef struct top_device {
    uint32_t device;
    uint64_t busy_ns;      /* union of its kernels' intervals over the span */
    uint64_t span_ns;      /* the time busy_ns is a share of */
    int has_mem;           /* an NVML "gpu.mem.used" counter was read */
    double mem_used;       /* its latest value, bytes */
} top_device;

typedef struct top_table {
    top_row *rows;
    size_t n, cap;
    top_device *devs;
    size_t n_devs, cap_devs;
    uint64_t samples;      /* samples the view kept (the 100 % of the % columns) */
    uint64_t sample_ns;    /* their weights */
    uint64_t span_ns;      /* the trace time the view covers */
    int has_gpu;           /* the trace has GPU activities */
    exp_gpu_callsite_stats gpu_lines; /* since the start, whatever the view: GPU
                            * time by attribution to a Python line (direct,
                            * via a waiting thread, none), as trc-stats --gpu */
    int ended;             /* the input has ended */
} top_table;

typedef struct top_model top_model;

/* A model keeping the samples of the last keep_ns nanoseconds of trace
 * time (the window; > 0).  NULL when out of memory. */
top_model *top_new(int64_t keep_ns);
void top_free(top_model *m);

/* Feed one event (samples, frames via their stacks, GPU kernels, NVML
 * counters; others are ignored), with the reader it came from.  TRC_OK
 * or TRC_ERR_NOMEM (the model is unchanged but for what it read before). */
trc_status top_event(top_model *m, trc_reader *r, const trc_event *ev);
/* Feed one GPU activity charged to its launch site. */
trc_status top_gpu_hit(top_model *m, trc_reader *r, const exp_gpu_hit *hit);
/* The input has ended (a table says so). */
void top_end(top_model *m);

/* Fill t (zero-initialised, or a table filled before) with the rows of
 * view v, sorted by v->sort (descending but for TOP_SORT_NAME; ties by
 * function, file and line), and the GPU devices by ordinal.  Strings are
 * borrowed from the reader, valid until it is freed.  TRC_OK or
 * TRC_ERR_NOMEM (t then holds no rows). */
trc_status top_table_fill(top_model *m, const top_view *v, top_table *t);
void top_table_cleanup(top_table *t);

/* The sink over a model: opts is the top_model (borrowed, not freed with
 * the sink).  It takes events and GPU activities both. */
extern const exp_sink_type exp_sink_top;

#endif /* TRC_LIB_EXPORT_TOP_TOP_H */
