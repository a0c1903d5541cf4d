/*
 * convert.h — what every converter shares beyond the option parser:
 * the selections (--pid, --thread, --from/--to, --idle, --gil), loss
 * accounting (at most one warning, exit 1; --strict), and the reader →
 * sink pipeline that opens input, writes output through a temp file and
 * maps the result to an exit code.  A converter main() = option table +
 * conv_convert() with a sink type (lib/export/sink.h).
 */
#ifndef TRC_TOOLS_CONVERT_H
#define TRC_TOOLS_CONVERT_H

#include "lib/export/sink.h"
#include "lib/lossrule.h"
#include "tools/common/cli.h"

/* Shared selections, identical in every converter. */
typedef struct conv_selection {
    cli_list pids;        /* --pid N (repeatable) */
    cli_list threads;     /* --thread NAME|TID (repeatable) */
    const char *from;     /* --from S: seconds from trace start */
    const char *to;       /* --to S */
    int idle;             /* --idle: keep idle (off-CPU) samples: wall-clock view */
    int gil;              /* --gil: only samples holding the GIL */
    /* filled by conv_selection_prepare / while reading */
    int64_t from_ns, to_ns;   /* relative; to_ns < 0 = open */
    int64_t trace_start_ns;   /* start of the first segment */
    /* added by convert.c (internal state; zero-initialise the struct) */
    int64_t *pid_values;      /* parsed --pid values, n = pids.n; -1 = a name pattern */
    int have_start;           /* trace_start_ns is known */
    unsigned char *thread_verdict; /* per thread id: 0 unknown, 1 keep, 2 drop */
    size_t n_thread_verdict;
    int64_t cached_pid;       /* one-entry cache of the --pid verdict */
    int cached_pid_keep;      /* 0 none, 1 keep, 2 drop */
    int seen_pid;             /* something of a process passing --pid was seen */
    int seen_thread;          /* a thread passing --pid and --thread was seen */
} conv_selection;

/* Option rows for cli_tool.shared_options, bound to *sel (static storage:
 * one selection per process). */
const cli_option *conv_selection_options(conv_selection *sel);

/* Validate/convert the parsed strings; dies with exit 2 on bad values. */
void conv_selection_prepare(conv_selection *sel);

/* 1 if the event passes the selection, 0 if not.  Samples are filtered on
 * every criterion; time-stamped events (GPU, API, markers, counters) on
 * pid/thread/time; definitions and losses always pass.  Tracks the trace
 * start from the first SEGMENT event. Cannot fail. */
int conv_selection_keep(conv_selection *sel, trc_reader *r, const trc_event *ev);

/* Like conv_selection_keep, but a folded sample (count > 1) that straddles
 * --from/--to is clipped to the samples inside the window: returns NULL if
 * the event is dropped, ev itself if kept whole, or scratch (filled with a
 * copy whose time_ns/count/span_ns cover only the kept samples).  The
 * window is [from, to).  conv_run uses this, so sinks always see exact
 * counts.  Cannot fail. */
const trc_event *conv_selection_filter(conv_selection *sel, trc_reader *r,
                                       const trc_event *ev, trc_event *scratch);

/* After reading all of r through conv_selection_filter/keep: 1 if --pid
 * or --thread was given and no process or thread of the input passes it,
 * with one line in why (no newline) naming the selection and what the
 * input has instead: "--thread 'Foo*' matches no thread (threads:
 * MainThread, worker)".  0 otherwise.  Always NUL-terminates why (n >= 1). */
int conv_selection_unmatched(const conv_selection *sel, trc_reader *r, char *why, size_t n);

/* Whether process `pid` passes the --pid values (ids or name patterns),
 * given that they are not empty; r gives the process's names. */
int conv_selection_pid_matches(const conv_selection *sel, const trc_reader *r, int64_t pid);

/* The names a --pid pattern is matched against (select_names.c): the
 * executable's basename, the script's basename or the -m module taken
 * from the command line, and the display name (lib/procname.h) when it
 * differs from the one before.  Returns how many were stored in names
 * (at most CONV_PROCESS_NAMES), each NUL-terminated and truncated to
 * fit. */
#define CONV_PROCESS_NAMES 3
int conv_process_names(const trc_process *p, char names[CONV_PROCESS_NAMES][128]);

/* Free what conv_selection_prepare allocated (and the option lists). */
void conv_selection_cleanup(conv_selection *sel);

typedef struct conv_job {
    const char *input;    /* path or NULL/"-" for stdin */
    const char *output;   /* path or NULL/"-" for stdout */
    int binary;           /* output is binary (pstats) */
    conv_selection *sel;  /* may be NULL */
    int strict;           /* --strict: any recorded loss warns (conv_losses_warns) */
} conv_job;

/* Run the pipeline into sink (lib/export/sink.h): every selected event,
 * or, for a sink that takes GPU hits, every selected GPU activity with
 * its launch site (lib/export/common/gpu_callsite.h: launch calls are
 * all used, selected or not, since an activity in a window may have been
 * launched before it; with --thread an activity counts when its
 * launching thread is selected).  A failing sink call is reported in
 * one line (the sink's message, or "out of memory", or "OUTPUT: write
 * failed: REASON").  Returns the process exit code: 0 clean, 1 when the
 * input had damage, is incomplete, or recorded losses that matter
 * (conv_losses_warns; after ONE warning line summarising what was
 * lost), or when --pid/--thread matched nothing (after one warning line
 * saying so; no output written), 2 when the input is unusable or the
 * sink failed (output file not created). */
int conv_run(const conv_job *job, exp_sink *sink);

/* ---- What every converter main() repeats (convmain.c) ----
 * A main is: static conv_cli cli; an option table whose first row is
 * CONV_OPTION_OUTPUT(&cli.output); a cli_tool whose shared_options are
 * conv_selection_options(&cli.sel); conv_parse; its own checks; and
 * conv_convert with its sink type and that type's options. */

/* The -o row, worded the same in every converter. */
#define CONV_OPTION_OUTPUT(dest) \
    {"output", 'o', CLI_STRING, (dest), "FILE", "write to FILE (default: stdout)", 0, 0}

/* The --strict row, worded the same in every converter. */
#define CONV_OPTION_STRICT(dest)                                                   \
    {"strict", 0, CLI_FLAG, (dest), NULL,                                          \
     "any loss the recorder wrote (a tick late, missed or torn) warns, exit 1", 0, 0}

/* The exit-status paragraph of a converter's --help (docs/exit-codes.md);
 * the limit is lib/lossrule.h's, spelt out by the preprocessor. */
#define CONV_STR_(x) #x
#define CONV_STR(x) CONV_STR_(x)
#define CONV_HELP_EXIT                                                               \
    "Exit status: 0 ok; 1 input damaged, incomplete (its recorder was killed) or\n" \
    "data lost: over " CONV_STR(LOSSRULE_LIMIT_PERCENT) " % of the ticks missed, torn or late, a GPU record\n" \
    "dropped, or with --strict any recorded loss (one warning; the output covers\n" \
    "what was readable), or --pid/--thread matched nothing (no output); 2 usage\n" \
    "error or unusable input."

typedef struct conv_cli {
    conv_selection sel;   /* the shared selections */
    const char *output;   /* -o FILE; NULL = stdout */
    int strict;           /* --strict (CONV_OPTION_STRICT) */
    const char *input;    /* set by conv_parse: FILE, or NULL for stdin */
    char **pos;           /* cli_parse's positional array, released by conv_convert */
} conv_cli;

/* cli_parse for a converter: at most one positional, the input; then
 * conv_selection_prepare.  Does not return after --help/--version (exit
 * 0) or a usage error (exit 2). */
void conv_parse(conv_cli *cli, const cli_tool *tool, int argc, char **argv);

/* After conv_parse: an instance of sink type `type` with opts (dies
 * with exit 2 when out of memory), conv_run from cli->input to
 * cli->output (binary as in conv_job), the instance freed.  Releases
 * what conv_parse and the selection hold.  Returns the exit code of
 * conv_run. */
int conv_convert(conv_cli *cli, const exp_sink_type *type, const void *opts, int binary);

/* Loss summary of the last conv_run (for tools that print a header). */
typedef struct conv_losses {
    uint64_t events;            /* loss events seen */
    lossrule_tally tally;       /* samples, recorded losses, segments without an end */
    uint64_t chunks_damaged, undefined_refs;
    int truncated;
    /* added by losses.c */
    uint64_t chunks_missing, other;   /* TRC_LOSS_CHUNK_MISSING / reader-made _OTHER counts */
    uint64_t first_damage_offset;     /* byte offset of the first reader-made loss */
    int have_damage_offset;
    trc_status stopped;               /* error that ended reading early, TRC_OK if none */
    char stop_message[256];           /* trc_reader_error() at that point */
    char other_detail[160];           /* detail of the first TRC_LOSS_OTHER (either maker) */
} conv_losses;
/* Valid during conv_run too (a sink's finish() sees the complete summary). */
const conv_losses *conv_last_losses(void);

/* Loss accounting, used by conv_run (exposed for tools and tests). */
void conv_losses_reset(conv_losses *l);
/* Count one event the reader yielded (any type). */
void conv_losses_event(conv_losses *l, const trc_event *ev);
/* The input ended: a segment still open has no end record. */
void conv_losses_end(conv_losses *l);
void conv_losses_add(conv_losses *l, const trc_loss *loss);
/* 1 if the reader met damage or stopped early. */
int conv_losses_damaged(const conv_losses *l);
/* 1 if the warning (and exit 1) is due: damage, a segment without its
 * end, or recorded losses as lib/lossrule.h rules (strict: any). */
int conv_losses_warns(const conv_losses *l, int strict);
/* One line, no newline, describing what was lost ("" when nothing):
 * "2 damaged chunks skipped, first damage at offset 0x1a3, 120 samples
 * missed by the recorder (9.8 % of 1230 ticks, over the 5 % limit)".
 * Sampling losses are listed whether or not they warn.  Always
 * NUL-terminates buf (n >= 1). */
void conv_losses_describe(const conv_losses *l, char *buf, size_t n);

#endif
