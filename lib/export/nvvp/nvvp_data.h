/*
 * lib/export/nvvp/nvvp_data.h — what the GPU trace tables and the timeline
 * keep of a trace (docs/design/outputs.md §5).
 *
 * nvprof's traces are sorted by start time and a timeline needs the whole
 * time range before it can place anything, while a .trc file holds GPU
 * records in the order CUPTI delivered its buffers.  So these views
 * buffer: each event of interest is reduced to a compact fixed-size
 * record (names become name_pool ids) and kept until the end of input.
 * CPU samples are reduced further, to runs of equal top Python frame per
 * thread, so a long sampled run costs little.
 *
 * Ownership: nvvp_data_new/nvvp_data_free.  Lookups of frames, stacks,
 * threads and devices go to the reader (borrowed) at output time, so the
 * reader must outlive the writing of the outputs.
 */
#ifndef TRC_LIB_EXPORT_NVVP_DATA_H
#define TRC_LIB_EXPORT_NVVP_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "lib/export/common/name_pool.h"
#include "trc/trc.h"

/* What to collect (bits for nvvp_data_new). */
#define NVVP_WANT_GPU      0x01u  /* kernels, copies, memsets, syncs */
#define NVVP_WANT_API      0x02u  /* runtime/driver API calls */
#define NVVP_WANT_SAMPLES  0x04u  /* CPU sample runs per thread */
#define NVVP_WANT_MARKERS  0x08u  /* NVTX markers and ranges */
#define NVVP_WANT_COUNTERS 0x10u  /* counter values (NVML etc.) */
#define NVVP_WANT_ALL      0x1fu

typedef enum nvvp_act_kind {
    NVVP_ACT_KERNEL = 0,
    NVVP_ACT_MEMCPY = 1,
    NVVP_ACT_MEMSET = 2,
    NVVP_ACT_SYNC = 3
} nvvp_act_kind;

/* One GPU activity. */
typedef struct nvvp_act {
    int64_t start, end;
    int64_t pid;
    uint32_t name;            /* pool id of the kernel name; 0 otherwise */
    uint32_t corr, device, context, stream;
    uint32_t seq;             /* order of arrival, for stable sorting */
    uint8_t kind;             /* nvvp_act_kind */
    uint8_t sub;              /* copy kind / sync kind / memset memory kind */
    uint8_t src, dst;         /* memory kinds of a copy */
    union {
        struct {
            uint32_t grid[3], block[3];
            uint32_t regs, ssmem, dsmem;
        } k;
        struct {
            uint64_t bytes;
            uint32_t dst_device;
            uint32_t value;
        } m;
    } u;
} nvvp_act;

/* One runtime/driver API call. */
typedef struct nvvp_api {
    int64_t start, end;
    int64_t pid;              /* of the calling thread, -1 = unknown */
    uint32_t name;            /* pool id */
    uint32_t corr, thread, stack, seq;
    int32_t result;
    uint8_t domain;           /* trc_api_domain */
    uint8_t flags;            /* TRC_API_* */
} nvvp_api;

/* A run of consecutive CPU samples of one thread with the same top
 * Python frame. */
typedef struct nvvp_run {
    int64_t start, end;       /* first sample time, last sample time + weight */
    uint64_t weight_ns;       /* total sample weight */
    uint32_t frame;           /* top (leaf-most) Python frame id, 0 = none */
    uint32_t count;           /* samples */
} nvvp_run;

typedef struct nvvp_runs {
    nvvp_run *v;
    size_t n, cap;
} nvvp_runs;

/* An NVTX marker (instant) or range. */
typedef struct nvvp_mark {
    int64_t start, end;
    int64_t pid;
    uint32_t name, domain;    /* pool ids */
    uint32_t thread;          /* 0 = process-wide */
    uint32_t color;           /* 0xRRGGBB, 0 = none */
    uint8_t kind;             /* TRC_MARK_INSTANT or TRC_MARK_RANGE (pushes are closed) */
    uint8_t open;             /* a PUSH never popped: end = last time of the trace */
} nvvp_mark;

typedef struct nvvp_point {
    int64_t t;
    double v;
} nvvp_point;

typedef struct nvvp_series {
    nvvp_point *v;
    size_t n, cap;
} nvvp_series;

typedef struct nvvp_lossrec {
    int64_t start, end;       /* 0 = unknown */
    uint64_t count;
    uint8_t kind;             /* trc_loss_kind */
} nvvp_lossrec;

typedef struct nvvp_data {
    unsigned want;
    name_pool pool;
    nvvp_act *acts;   size_t n_acts, cap_acts;
    nvvp_api *apis;   size_t n_apis, cap_apis;
    nvvp_mark *marks; size_t n_marks, cap_marks;
    nvvp_lossrec *losses; size_t n_losses, cap_losses;
    nvvp_runs *runs;  uint32_t n_runs;       /* indexed by reader thread id */
    nvvp_series *series; uint32_t n_series;  /* indexed by reader counter id */
    uint32_t *top_frame; uint32_t n_top;     /* stack id -> top Python frame + 1 (0 = not computed) */
    uint32_t *site; uint32_t n_site;         /* frame id -> pool id of its call site + 1 */
    struct nvvp_open { uint32_t thread; size_t *v; size_t n, cap; } *open; /* PUSH stacks per thread */
    size_t n_open, cap_open;
    struct nvvp_corr { int64_t pid; uint32_t corr, api; } *corr_ix;
    size_t n_corr;            /* (pid, correlation) -> API call, sorted */
    int64_t trace_start;      /* start_ns of the first segment, 0 = none seen */
    uint32_t command;         /* pool id: command line of the first segment */
    int64_t t_min, t_max;     /* extent of everything kept; t_min > t_max when empty */
    uint32_t seq;
    int sorted_acts, sorted_apis;
} nvvp_data;

/* New empty collector for the parts in `want` (NVVP_WANT_*). NULL when
 * out of memory. */
nvvp_data *nvvp_data_new(unsigned want);
void nvvp_data_free(nvvp_data *d);

/* Keep what `ev` contributes. TRC_OK, or TRC_ERR_NOMEM / TRC_ERR_LIMIT
 * (the collector stays consistent; the event is not kept). */
trc_status nvvp_data_add(nvvp_data *d, trc_reader *r, const trc_event *ev);

/* Called once after the last event: closes unmatched NVTX pushes at the
 * trace end, sorts activities, API calls, markers, sample runs and counter
 * values by time (stable), and indexes API calls by correlation.
 * TRC_OK or TRC_ERR_NOMEM. */
trc_status nvvp_data_finish(nvvp_data *d);

/* Leaf-most Python frame of a stack (0 if none), cached. Cannot fail
 * (an uncachable lookup is just recomputed). */
uint32_t nvvp_data_top_frame(nvvp_data *d, trc_reader *r, uint32_t stack);

/* The call site of a stack's top Python frame, "file:line(function)"
 * with the file shortened as the other exporters do (exp_short_path);
 * "" when the stack has no Python frame or on allocation failure.
 * Borrowed from the pool. */
const char *nvvp_data_site(nvvp_data *d, trc_reader *r, uint32_t stack);

/* Same for a frame id. */
const char *nvvp_data_frame_site(nvvp_data *d, trc_reader *r, uint32_t frame);

/* Name of an activity: the kernel name or nvprof's bracketed name. */
const char *nvvp_act_name(const nvvp_data *d, const nvvp_act *a);

/* The API call with this (pid, correlation id) — the launch behind an
 * activity — through the index nvvp_data_finish builds; NULL if none. */
const nvvp_api *nvvp_data_api_by_corr(const nvvp_data *d, int64_t pid, uint32_t corr);

#endif
