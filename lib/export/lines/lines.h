/*
 * lib/export/lines/lines.h — trc-lines: time per source line of the
 * hottest (or chosen) Python functions, with a caller/callee summary,
 * for the terminal or as JSON (docs/converters.md "trc-lines").
 *
 * Meanings (the same as line_profiler's, from samples):
 *   a line's time     sampled time of the samples in which the function
 *                     was executing that line, its callees included
 *                     (a recursive function's line counts once per
 *                     sample, however often it is on the stack);
 *   a function's time sampled time of the samples in which it appears
 *                     (once per sample), so a line's share of its
 *                     function is at most 100 % (with recursion two lines
 *                     of one sample may both count it);
 *   own time          the samples whose leaf frame is the function: the
 *                     measure of "hottest";
 *   on-CPU / wall     on-CPU counts the samples taken while the thread
 *                     ran, wall every sample (idle ones too);
 *   GPU time          the durations of the kernels, copies and memsets
 *                     launched while the line was on the launching
 *                     stack (the pipeline's call-site stage pairs each
 *                     activity with its launch call).
 *
 * Streaming: one accumulator per reader stack id, nothing per sample;
 * functions, lines and caller→callee edges are built at the end by
 * walking each stack once (lines_agg.c).  Sources are read only for the
 * functions shown (lines_source.c).  Internal API, prefix lines_.
 */
#ifndef TRC_LIB_EXPORT_LINES_LINES_H
#define TRC_LIB_EXPORT_LINES_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/common/gpu_callsite.h"
#include "lib/export/sink.h"

/* ---- aggregation (lines_agg.c) ------------------------------------ */

typedef struct lines_time {
    uint64_t cpu_ns, wall_ns, gpu_ns;
    uint64_t sync_ns;      /* host time blocked in syncs (lib/export/common/gpu_sync.h) */
} lines_time;

typedef struct lines_func {
    const char *function;  /* borrowed from the reader */
    const char *file;      /* "" when unknown (native frames) */
    uint32_t first_line;   /* 0 = unknown */
    int python;            /* a Python frame with a file */
    lines_time cum;        /* samples with the function on the stack */
    lines_time own;        /* samples with it as the leaf */
    uint32_t first_row, n_rows; /* its rows in lines_agg_row order (by line) */
} lines_func;

typedef struct lines_row {
    uint32_t func;         /* index of its function */
    uint32_t line;         /* executing line, 0 = unknown */
    lines_time t;
} lines_row;

typedef struct lines_edge {
    uint32_t caller, callee; /* function indices */
    lines_time t;            /* samples (GPU time) with caller calling callee */
} lines_edge;

typedef struct lines_totals {
    uint64_t samples;        /* sum of counts */
    lines_time t;            /* every sample, every activity */
    uint64_t gpu_activities; /* activities added */
    uint64_t gpu_unattributed_ns; /* their time without a Python launch site */
    uint64_t gpu_via_ns;     /* their time charged via a waiting thread (exp_gpu_hit.waiter) */
    uint64_t syncs;          /* sync calls added (a "Sync ms" column when > 0) */
} lines_totals;

typedef struct lines_agg lines_agg;

/* New, empty.  NULL when out of memory. */
lines_agg *lines_agg_new(void);
void lines_agg_free(lines_agg *a);

/* One (possibly folded) sample; on-CPU when TRC_SAMPLE_ON_CPU is set.
 * TRC_OK or TRC_ERR_NOMEM. */
trc_status lines_agg_sample(lines_agg *a, const trc_sample *s);
/* One GPU activity with its launch site.  TRC_OK or TRC_ERR_NOMEM. */
trc_status lines_agg_gpu(lines_agg *a, const exp_gpu_hit *h);
/* One blocking sync call (API_CALL flag SYNC): its host time blocked
 * goes to its calling stack.  TRC_OK or TRC_ERR_NOMEM. */
trc_status lines_agg_sync(lines_agg *a, uint32_t stack, uint64_t blocked_ns);
/* Build functions, rows and edges (once, after the last add).  TRC_OK,
 * TRC_ERR_NOMEM or TRC_ERR_LIMIT. */
trc_status lines_agg_finish(lines_agg *a, const trc_reader *r);

/* After lines_agg_finish; borrowed.  Rows are grouped by function and
 * sorted by line within it. */
size_t lines_agg_func_count(const lines_agg *a);
const lines_func *lines_agg_func(const lines_agg *a, size_t i);
const lines_row *lines_agg_row(const lines_agg *a, size_t i);
size_t lines_agg_edge_count(const lines_agg *a);
const lines_edge *lines_agg_edge(const lines_agg *a, size_t i);
const lines_totals *lines_agg_totals(const lines_agg *a);

/* ---- the report (lines_report.c) ----------------------------------- */

typedef enum lines_metric { LINES_CPU = 0, LINES_WALL = 1 } lines_metric;

typedef struct lines_opts {
    long top;                 /* the N hottest functions (0 = the default, 5) */
    const char *function;     /* NAME or FILE:NAME: those functions instead */
    const char *file;         /* PATH: the functions of that file instead */
    const char *const *roots; /* OLD=NEW source path mappings, n_roots of them */
    size_t n_roots;
    lines_metric metric;      /* what ranks functions and makes shares */
    int json;                 /* JSON instead of text */
    int color;                /* ANSI colour in the text */
} lines_opts;

/* The value of t the metric names. */
uint64_t lines_time_of(const lines_time *t, lines_metric m);

/* The functions to show under o, best first, into *out (trc_malloc'd,
 * the caller frees), their count in *n.  TRC_OK or TRC_ERR_NOMEM. */
trc_status lines_pick(const lines_agg *a, const lines_opts *o, uint32_t **out, size_t *n);

/* Up to max callers (callees) of function f, by the metric, best first,
 * into out (edge indices); returns how many. */
size_t lines_callers(const lines_agg *a, uint32_t f, lines_metric m, int callees,
                     uint32_t *out, size_t max);

/* ---- sources (lines_source.c) --------------------------------------- */

typedef struct lines_source {
    char path[4096];         /* the path read (after --source-root) */
    char error[4096 + 256];  /* why there is no text, "" when there is */
    char *text;              /* the file, NUL-terminated; NULL on error */
    const char **line;       /* line[i] = start of line i + 1 */
    uint32_t *len;           /* its length, without the newline */
    uint32_t n_lines;
} lines_source;

/* Read the file recorded as `recorded`, mapped by the first OLD=NEW of
 * roots whose OLD is a prefix of it ending at a '/' or at its end.  On
 * failure s->error says why (the path and the system's reason) and
 * s->text is NULL.  Returns 0, or -1 when out of memory. */
int lines_source_load(lines_source *s, const char *recorded, const char *const *roots,
                      size_t n_roots);
void lines_source_free(lines_source *s);

/* ---- output (lines_text.c, lines_json.c) ---------------------------- */

trc_status lines_write_text(const lines_agg *a, const lines_opts *o, FILE *out);
trc_status lines_write_json(const lines_agg *a, const lines_opts *o, FILE *out);

/* One shown function: which source lines are listed.  A line is listed
 * when it has samples, is the def line, or lies within LINES_CONTEXT of
 * a line with samples; every line when the span is short.  Without the
 * source (all == 0) only the lines with samples are.  lines_next gives
 * the first listed line after `after` (0: the first of all), 0 when there
 * is none, in steps that skip what is not listed: a hostile line number
 * costs nothing. */
#define LINES_CONTEXT 2u
#define LINES_SHOW_ALL_SPAN 40u
uint32_t lines_next(const lines_agg *a, const lines_func *f, uint32_t after, int all);
/* The first and last line numbers a function's listing may reach. */
uint32_t lines_first(const lines_agg *a, const lines_func *f);
uint32_t lines_last(const lines_agg *a, const lines_func *f);

/* ---- as a sink (lines_sink.c) --------------------------------------- */

/* Options lines_opts.  Selecting no samples writes a report that says so. */
extern const exp_sink_type exp_sink_lines;

#endif /* TRC_LIB_EXPORT_LINES_LINES_H */
