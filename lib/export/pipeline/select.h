/*
 * lib/export/pipeline/select.h — the selection stage of the converter
 * pipeline (user documentation in docs/converters.md "Selections"): which
 * events --pid PID|PATTERN, --thread PATTERN|TID (shell patterns,
 * fnmatch(3)), --from/--to (seconds from the start of the first segment,
 * window [from, to)), --idle (keep off-CPU samples) and --gil (only
 * samples known to hold the GIL) keep, and the line that says when
 * --pid/--thread matched nothing.  Parsing the options and the exit
 * status are the tools' (tools/common/select.c, convert.c).
 *
 * Samples are filtered on every criterion; a folded sample (count > 1,
 * spec §7.9) whose span straddles the window is clipped to the samples
 * inside it, assuming they were evenly spaced over span_ns.  Time-stamped
 * events are filtered on pid, thread (when they have one) and time
 * (intervals are kept when they overlap the window).  Definitions, losses
 * and segment boundaries always pass.  Internal API, prefix conv_filter_.
 */
#ifndef TRC_LIB_EXPORT_PIPELINE_SELECT_H
#define TRC_LIB_EXPORT_PIPELINE_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

typedef struct conv_filter {
    /* What to keep, set before the first event; everything borrowed. */
    const char *const *pids;     /* --pid values as given, n_pids of them */
    const int64_t *pid_values;   /* each parsed (conv_filter_parse_id), -1 = a name pattern */
    size_t n_pids;
    const char *const *threads;  /* --thread values, n_threads of them */
    size_t n_threads;
    int has_from, has_to;        /* --from / --to given */
    int64_t from_ns, to_ns;      /* relative to the trace start; to_ns < 0 = open */
    int idle, gil;
    /* State while reading (zero-initialise). */
    int64_t trace_start_ns;      /* start of the first segment */
    int have_start;
    unsigned char *thread_verdict; /* per thread id: 0 unknown, 1 keep, 2 drop */
    size_t n_thread_verdict;
    int64_t cached_pid;          /* one-entry cache of the --pid verdict */
    int cached_pid_keep;         /* 0 none, 1 keep, 2 drop */
    int seen_pid;                /* something of a process passing --pid was seen */
    int seen_thread;             /* a thread passing --pid and --thread was seen */
} conv_filter;

/* A decimal id as --pid and --thread take it: 0 and *out set, or -1
 * when s is not one. */
int conv_filter_parse_id(const char *s, int64_t *out);

/* The event if f keeps it whole, NULL if it drops it, or scratch filled
 * with a copy of a folded sample clipped to the window (time_ns, count
 * and span_ns cover only the kept samples), so that sinks always see
 * exact counts.  Tracks the trace start from the first SEGMENT event.
 * Cannot fail. */
const trc_event *conv_filter_event(conv_filter *f, trc_reader *r, const trc_event *ev,
                                   trc_event *scratch);

/* 1 if the event passes (conv_filter_event not NULL). */
int conv_filter_keep(conv_filter *f, trc_reader *r, const trc_event *ev);

/* 1 if thread id `thread` passes --pid and --thread (1 when neither was
 * given).  For work charged to a thread that is not its event's own
 * (GPU activities charged to their launching thread). */
int conv_filter_thread(conv_filter *f, trc_reader *r, uint32_t thread);

/* Whether process `pid` passes the --pid values (ids or name patterns),
 * given that they are not empty; r gives the process's names. */
int conv_filter_pid_matches(const conv_filter *f, const trc_reader *r, int64_t pid);

/* After reading all of r through f: 1 if --pid or --thread was given and
 * no process or thread of the input passes it, with one line in why (no
 * newline) naming the selection and what the input has instead:
 * "--thread 'Foo*' matches no thread (threads: MainThread, worker)".
 * 0 otherwise.  Always NUL-terminates why (n >= 1). */
int conv_filter_unmatched(const conv_filter *f, trc_reader *r, char *why, size_t n);

/* The names a --pid pattern is matched against (select_names.c): the
 * executable's basename, the script's basename or the -m module taken
 * from the command line, and the display name (lib/procname.h) when it
 * differs from the one before.  Returns how many were stored in names
 * (at most CONV_PROCESS_NAMES), each NUL-terminated and truncated to
 * fit. */
#define CONV_PROCESS_NAMES 3
int conv_process_names(const trc_process *p, char names[CONV_PROCESS_NAMES][128]);

/* Free what reading allocated; f can be read through again afterwards
 * (from the start of a trace). */
void conv_filter_cleanup(conv_filter *f);

#endif /* TRC_LIB_EXPORT_PIPELINE_SELECT_H */
