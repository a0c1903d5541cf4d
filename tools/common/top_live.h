/*
 * tools/common/top_live.h — a trc-top run (docs/top.md): a thread
 * reads the input through the converter pipeline into a model
 * (top.h) while the main thread shows it, on the screen (top_screen.h)
 * or as plain snapshots (top_format.h) every --interval seconds, once
 * with --once, or when the input ends.  Internal API, prefix top_live_.
 */
#ifndef TRC_TOOLS_COMMON_TOP_LIVE_H
#define TRC_TOOLS_COMMON_TOP_LIVE_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "lib/export/pipeline/select.h"
#include "lib/export/top/top.h"
#include "tools/common/top_source.h"

typedef struct top_live_opts {
    top_source *src;        /* opened; closed by top_live_run */
    const char *name;       /* the input as messages name it */
    conv_filter *filter;    /* --pids/--threads, or NULL */
    int64_t window_ns;      /* --window */
    top_view view;          /* the view to start with */
    const char *filters;    /* the filters as the header shows them, "" for none */
    int screen;             /* 1: the ncurses screen; 0: snapshots to out */
    int once;               /* snapshots: only one */
    double interval_s;      /* snapshots: every this many seconds; 0 = only at the end */
    size_t rows;            /* snapshots: at most this many rows, 0 = all */
    FILE *out;              /* snapshots go here */
    volatile sig_atomic_t *interrupted; /* set by the caller's signal handler */
    int show_frames;        /* the screen numbers its redraws (top_context) */
} top_live_opts;

/* Run until the user quits, an interrupt, or (snapshots) the input ends
 * or the one snapshot is written.  Returns 0, or an exit status with a
 * one-line reason in why (no newline): 2 when the input is unusable (not
 * a trace, unreadable) or the terminal cannot be used or memory ran
 * out, the recorder's status when the recorder trc-top started failed
 * on its own (what it said is copied to stderr), 1 when --pids/--threads
 * matched nothing in an input that ended. */
int top_live_run(const top_live_opts *o, char *why, size_t n);

#endif /* TRC_TOOLS_COMMON_TOP_LIVE_H */
