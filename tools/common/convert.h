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

#include "lib/export/common/gpu_idle.h"
#include "lib/export/pipeline/losses.h"
#include "lib/export/pipeline/select.h"
#include "lib/export/sink.h"
#include "lib/lossrule.h"
#include "tools/common/cli.h"

/* Shared selections, identical in every converter: the options as
 * parsed, and the selection stage of the pipeline they set up. */
typedef struct conv_selection {
    cli_list pids;        /* --pid N (repeatable) */
    cli_list threads;     /* --thread NAME|TID (repeatable) */
    const char *from;     /* --from S: seconds from trace start */
    const char *to;       /* --to S */
    int idle;             /* --idle: keep idle (off-CPU) samples: wall-clock view */
    int gil;              /* --gil: only samples holding the GIL */
    /* set by conv_selection_prepare (zero-initialise the struct) */
    conv_filter filter;   /* the stage: from_ns/to_ns hold the window */
    int64_t *pid_values;  /* parsed --pid values, n = pids.n; -1 = a name pattern */
} conv_selection;

/* Option rows for cli_tool.shared_options, bound to *sel (static storage:
 * one selection per process). */
const cli_option *conv_selection_options(conv_selection *sel);

/* Validate/convert the parsed strings and set up sel->filter; dies with
 * exit 2 on bad values. */
void conv_selection_prepare(conv_selection *sel);

/* The selection stage over sel->filter (lib/export/pipeline/select.h):
 * conv_filter_event, conv_filter_keep and conv_filter_unmatched. */
const trc_event *conv_selection_filter(conv_selection *sel, trc_reader *r,
                                       const trc_event *ev, trc_event *scratch);
int conv_selection_keep(conv_selection *sel, trc_reader *r, const trc_event *ev);
int conv_selection_unmatched(const conv_selection *sel, trc_reader *r, char *why, size_t n);

/* For a GPU idle view (lib/export/common/gpu_idle.h), after
 * conv_selection_prepare: the stage's window from --from/--to, and the
 * selection set to keep off-CPU samples too (a thread waiting off-CPU
 * is what idles a GPU, so the idle views are wall-clock views). */
exp_gpu_idle_options conv_gpu_idle_window(conv_selection *sel);

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

/* Loss summary of the last conv_run (for tools that print a header);
 * valid during conv_run too (a sink's finish() sees the complete
 * summary). */
const conv_losses *conv_last_losses(void);

#endif
