/*
 * convmain.c — the part of a converter's main() that every converter
 * shares (contract in convert.h): parse with the selection rows, accept
 * one input, run the pipeline (convert.c) and
 * release what parsing took.  A main keeps only its table, its own checks
 * and its sink.
 */
#include "tools/common/convert.h"

#include "lib/util/alloc.h"

void conv_parse(conv_cli *cli, const cli_tool *tool, int argc, char **argv)
{
    int npos;
    cli_parse(tool, argc, argv, 0, &cli->pos, &npos);
    if (npos > 1)
        cli_die(CLI_EXIT_USAGE, "too many inputs: give one FILE (or none for stdin)");
    cli->input = npos ? cli->pos[0] : NULL;
}

int conv_exec(conv_cli *cli, conv_sink *sink, int binary, int sink_selects)
{
    conv_job job = {cli->input, cli->output, binary, &cli->sel, cli->strict, sink_selects};
    int code = conv_run(&job, sink);
    conv_selection_cleanup(&cli->sel);
    trc_free(cli->pos); /* the array is cli_parse's; its strings are argv's */
    cli->pos = NULL;
    cli->input = NULL;
    return code;
}

static int keep(void *sel, trc_reader *r, const trc_event *ev)
{
    return conv_selection_keep(sel, r, ev);
}

exp_gpu_callsite *conv_callsite_new(conv_selection *sel, exp_gpu_emit_fn emit, void *ctx)
{
    exp_gpu_callsite *c = exp_gpu_callsite_new(0, emit, ctx);
    if (c)
        exp_gpu_callsite_select(c, keep, sel, sel->threads.n > 0);
    return c;
}
