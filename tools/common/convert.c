/*
 * convert.c — the converter pipeline (contract in convert.h):
 * input (cli_open_input) → selection (select.c) → sink → output through a
 * temp file renamed on success (cli_output_*), with loss accounting
 * (losses.c) mapped to the exit codes of docs/exit-codes.md:
 *   0 clean, or recorded sampling losses under lib/lossrule.h's limit;
 *   1 damage, a recording without its end, or recorded loss that
 *   matters (output written from what was readable, ONE warning line),
 *   or a --pid/--thread selection that matches nothing (its warning
 *   line, no output);
 *   2 input unusable or sink failure (no output file left behind).
 */
#include "tools/common/convert.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static conv_losses last_losses;
static const char *output_name = "<stdout>";

const conv_losses *conv_last_losses(void) { return &last_losses; }

/* One line for a failed sink call: the sink's own message, else what
 * the status says ("OUTPUT: write failed: REASON" for TRC_ERR_IO). */
static void sink_failed(const exp_sink *sink, trc_status st)
{
    const char *msg = exp_sink_error(sink);
    if (*msg)
        cli_error("%s", msg);
    else if (st == TRC_ERR_IO)
        cli_error("%s: write failed: %s", output_name, strerror(errno ? errno : EIO));
    else
        cli_error("%s", trc_status_str(st));
}

/* The call-site matcher hands each activity, with its launch site, to
 * the sink. */
static trc_status emit_hit(void *sink, trc_reader *r, const exp_gpu_hit *hit)
{
    return exp_sink_gpu_hit(sink, r, hit);
}

static int keep_selected(void *sel, trc_reader *r, const trc_event *ev)
{
    return conv_selection_keep(sel, r, ev);
}

static int is_definition(trc_event_type t)
{
    return t == TRC_EV_SEGMENT || t == TRC_EV_PROCESS || t == TRC_EV_THREAD ||
           t == TRC_EV_GPU_DEVICE || t == TRC_EV_COUNTER_DEF || t == TRC_EV_CLOCK_SYNC ||
           t == TRC_EV_GPU_CONTEXT || t == TRC_EV_GPU_STREAM;
}

int conv_run(const conv_job *job, exp_sink *sink)
{
    int code = CLI_EXIT_OK;
    trc_status sst;
    int to_stdout = !job->output || strcmp(job->output, "-") == 0;
    conv_losses_reset(&last_losses);
    output_name = to_stdout ? "<stdout>" : job->output;

    if (job->binary && to_stdout && isatty(STDOUT_FILENO))
        cli_die(CLI_EXIT_USAGE,
                "refusing to write binary output to a terminal: use -o FILE or redirect");

    /* Output first: a destination that cannot be written (a directory, a
     * missing directory) is refused before any input is read; if opening
     * the input then dies, the temp file goes at exit (output.c). */
    cli_output out;
    cli_output_open(&out, job->output, job->binary);

    /* A sink of GPU hits is fed by the call-site matcher, which applies
     * the selection itself: it must see every launch call. */
    exp_gpu_callsite *sites = NULL;
    if (exp_sink_takes_gpu_hits(sink)) {
        sites = exp_gpu_callsite_new(0, emit_hit, sink);
        if (!sites)
            cli_die(CLI_EXIT_USAGE, "out of memory");
        if (job->sel)
            exp_gpu_callsite_select(sites, keep_selected, job->sel, job->sel->threads.n > 0);
    }

    trc_reader *r = cli_open_input(job->input);
    const char *name = trc_reader_name(r);
    if (!name || !*name)
        name = job->input && strcmp(job->input, "-") != 0 ? job->input : "<stdin>";

    uint64_t data_events = 0;
    const trc_event *ev;
    trc_event scratch;
    trc_status st;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        conv_losses_event(&last_losses, ev);
        if (ev->type != TRC_EV_LOSS && !is_definition(ev->type))
            data_events++;
        const trc_event *kept = ev;
        if (job->sel && (!sites || is_definition(ev->type)))
            kept = conv_selection_filter(job->sel, r, ev, &scratch);
        if (!kept)
            continue;
        sst = sites ? exp_gpu_callsite_event(sites, r, kept) : exp_sink_event(sink, r, kept, out.f);
        if (sst != TRC_OK) {
            sink_failed(sink, sst);
            code = CLI_EXIT_USAGE;
            goto fail;
        }
    }
    if (st != TRC_ERR_EOF) {
        /* Nothing usable read, or out of memory: the input is unusable.
         * Otherwise keep what was read and count it as a loss. */
        if (st == TRC_ERR_NOMEM || (data_events == 0 && last_losses.events == 0)) {
            const char *msg = trc_reader_error(r);
            if (msg && *msg)
                cli_error("%s", msg);
            else
                cli_error("%s: %s", name, trc_status_str(st));
            code = CLI_EXIT_USAGE;
            goto fail;
        }
        last_losses.stopped = st;
        const char *msg = trc_reader_error(r);
        size_t nl = strlen(name);
        if (msg && strncmp(msg, name, nl) == 0 && strncmp(msg + nl, ": ", 2) == 0)
            msg += nl + 2; /* the warning names the input already */
        snprintf(last_losses.stop_message, sizeof last_losses.stop_message, "%s",
                 msg && *msg ? msg : trc_status_str(st));
    }
    conv_losses_end(&last_losses);
    char unmatched[512];
    if (job->sel && conv_selection_unmatched(job->sel, r, unmatched, sizeof unmatched)) {
        /* nothing to write; losses are beside the point until it matches */
        cli_warn("%s: %s", name, unmatched);
        code = CLI_EXIT_DAMAGED;
        goto fail;
    }
    sst = sites ? exp_gpu_callsite_finish(sites) : TRC_OK;
    if (sst == TRC_OK)
        sst = exp_sink_finish(sink, r, out.f);
    if (sst != TRC_OK) {
        sink_failed(sink, sst);
        code = CLI_EXIT_USAGE;
        goto fail;
    }
    if (cli_output_commit(&out) != 0) {
        code = CLI_EXIT_USAGE;
        goto out;
    }
    if (conv_losses_warns(&last_losses, job->strict)) {
        char what[768];
        conv_losses_describe(&last_losses, what, sizeof what);
        cli_warn("%s: %s; output covers what %s", name, what,
                 conv_losses_damaged(&last_losses) ? "could be read" : "was recorded");
        code = CLI_EXIT_DAMAGED;
    }
    goto out;
fail:
    if (to_stdout)
        fflush(stdout);
    cli_output_abort(&out);
out:
    trc_reader_free(r);
    exp_gpu_callsite_free(sites);
    return code;
}
