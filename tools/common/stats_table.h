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
} stats_table_opts;

/* Looks up --sort NAME (tottime, cumtime, ncalls, name, file and pstats'
 * aliases): sets o->sort_key and o->sort_title and returns 0, or -1 for
 * an unknown name.  stats_table_default sets the cumtime order. */
int stats_table_sort_key(stats_table_opts *o, const char *name);
void stats_table_default(stats_table_opts *o);

/* Prints the report of s (finished) read from r to out.  gpu, when not
 * NULL, is the call-site matcher s was filled from: times then are GPU
 * seconds with microsecond digits.  Returns 0, or -1 after one cli_error
 * line (bad regex, out of memory, write error). */
int stats_table_print(const exp_stats *s, const exp_gpu_callsite *gpu, trc_reader *r,
                      const stats_table_opts *o, FILE *out);

#endif
