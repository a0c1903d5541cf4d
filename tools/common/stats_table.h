/*
 * stats_table.h — trc-stats' terminal report of an exp_stats model
 * (docs/man/trc-stats.1, meanings in docs/converters.md): a header
 * (samples or GPU time, duration, threads, processes, loss), then the
 * columns of pstats' print_stats, or its print_callers/print_callees
 * sections.  Kept out of the main so that it stays an option table.
 */
#ifndef TRC_TOOLS_STATS_TABLE_H
#define TRC_TOOLS_STATS_TABLE_H

#include "lib/export/folded/folded.h"
#include "tools/common/convert.h"

typedef struct stats_table_opts {
    int sort_key;             /* from stats_table_sort_key; default: cumulative */
    const char *sort_title;   /* "cumulative time" ... */
    long limit;               /* rows shown per list; 0 = all */
    const char *callers, *callees; /* extended regexes: call-graph sections instead */
    int idle, gil;            /* the selection, named in the header */
    exp_gpu_idle_options gpu_idle; /* stats_table_sink_gpu_idle's window */
} stats_table_opts;

/* Looks up --sort NAME (tottime, cumtime, ncalls, name, file and pstats'
 * aliases): sets o->sort_key and o->sort_title and returns 0, or -1 for
 * an unknown name.  stats_table_default sets the cumtime order. */
int stats_table_sort_key(stats_table_opts *o, const char *name);
void stats_table_default(stats_table_opts *o);

/* The report as a sink (lib/export/sink.h), options stats_table_opts
 * (NULL = the defaults): of the samples, or (_gpu) of GPU activities
 * charged to their launch sites, with times in GPU seconds with
 * microsecond digits.  A bad --callers/--callees pattern fails with
 * TRC_ERR_ARG and a message; the header's loss line is that of the
 * running conv_run (conv_last_losses). */
extern const exp_sink_type stats_table_sink;
extern const exp_sink_type stats_table_sink_gpu;
/* The same of GPU idle time charged to the feeding threads' stacks
 * (--gpu-idle, exp_stats_add_gpu_idle), in seconds with microsecond
 * digits. */
extern const exp_sink_type stats_table_sink_gpu_idle;

#endif
