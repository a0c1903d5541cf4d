/*
 * lib/export/pipeline/pipeline.h — the converter pipeline
 * (docs/design/architecture.md §1): every event of a
 * reader goes through the loss accounting (losses.h), the selection
 * (select.h) and, for a sink that charges GPU time to call sites, the
 * call-site stage (lib/export/common/gpu_callsite.h), into one sink
 * (lib/export/sink.h), which is finished at the end.
 *
 * The call-site stage sees every launch call, selected or not (an
 * activity inside a window may have been launched before it), every
 * sample, selected or not (for launches without Python frames, the
 * waiting thread: docs/design/cupti.md §5.1), and the selected
 * activities; it hands the sink each activity with its launch
 * site, and with --thread only those whose launching thread is
 * selected (an activity whose launch is unknown then goes).
 *
 * Nothing here prints or decides an exit status: the result says how
 * the run ended, and the caller (tools/common/convert.c) maps it.
 * Internal API, prefix conv_pipe_.
 */
#ifndef TRC_LIB_EXPORT_PIPELINE_PIPELINE_H
#define TRC_LIB_EXPORT_PIPELINE_PIPELINE_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/pipeline/losses.h"
#include "lib/export/pipeline/select.h"
#include "lib/export/sink.h"

typedef enum conv_pipe_end {
    CONV_PIPE_DONE = 0,     /* read to the end (or stopped early after something
                             * was read: losses->stopped), sink finished */
    CONV_PIPE_UNUSABLE,     /* the reader failed before anything was read, or
                             * ran out of memory: status */
    CONV_PIPE_UNMATCHED,    /* --pid/--thread matched nothing (why); the sink
                             * was not finished */
    CONV_PIPE_SINK_FAILED   /* the sink (or the call-site stage) failed:
                             * status, exp_sink_error */
} conv_pipe_end;

typedef struct conv_pipe_result {
    conv_pipe_end end;
    trc_status status;      /* what failed (UNUSABLE, SINK_FAILED); what stopped
                             * reading (DONE: TRC_ERR_EOF normally) */
    char why[512];          /* UNMATCHED: conv_filter_unmatched's line */
} conv_pipe_result;

/* Run r to its end through f (NULL: keep everything) into sink, writing
 * through out, with the losses counted into *losses (reset first; the
 * sink's finish sees them complete).  name is the input as messages name
 * it: a reader error that starts with it is kept without it in
 * losses->stop_message.  sites_window is the call-site stage's give-up
 * distance (exp_gpu_callsite_new; 0 = the default).  The caller owns r,
 * f, sink and out.  Fills *res; cannot fail otherwise. */
void conv_pipe_run(trc_reader *r, const char *name, conv_filter *f, exp_sink *sink,
                   uint64_t sites_window, FILE *out, conv_losses *losses, conv_pipe_result *res);

#endif /* TRC_LIB_EXPORT_PIPELINE_PIPELINE_H */
