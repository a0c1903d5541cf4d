/*
 * convert.c — a converter's run (contract in convert.h): input
 * (cli_open_input) → the pipeline (lib/export/pipeline/pipeline.h:
 * losses, selection, call sites, sink) → output through a temp file
 * renamed on success (cli_output_*), and how it ended mapped to the
 * messages and exit codes of docs/exit-codes.md:
 *   0 clean, or recorded sampling losses under lib/lossrule.h's limit;
 *   1 damage, a recording without its end, or recorded loss that
 *   matters (output written from what was readable, ONE warning line),
 *   or a --pid/--thread selection that matches nothing (its warning
 *   line, no output);
 *   2 input unusable or sink failure (no output file left behind).
 */
#include "tools/common/convert.h"

#include "lib/export/pipeline/pipeline.h"

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

int conv_run(const conv_job *job, exp_sink *sink)
{
    int code = CLI_EXIT_OK;
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

    trc_reader *r = cli_open_input(job->input);
    const char *name = trc_reader_name(r);
    if (!name || !*name)
        name = job->input && strcmp(job->input, "-") != 0 ? job->input : "<stdin>";

    conv_pipe_result res;
    conv_pipe_run(r, name, job->sel ? &job->sel->filter : NULL, sink, 0, out.f, &last_losses,
                  &res);
    switch (res.end) {
    case CONV_PIPE_DONE:
        break;
    case CONV_PIPE_UNUSABLE: {
        const char *msg = trc_reader_error(r);
        if (msg && *msg)
            cli_error("%s", msg);
        else
            cli_error("%s: %s", name, trc_status_str(res.status));
        code = CLI_EXIT_USAGE;
        goto fail;
    }
    case CONV_PIPE_UNMATCHED:
        /* nothing to write; losses are beside the point until it matches */
        cli_warn("%s: %s", name, res.why);
        code = CLI_EXIT_DAMAGED;
        goto fail;
    case CONV_PIPE_SINK_FAILED:
        sink_failed(sink, res.status);
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
    return code;
}
