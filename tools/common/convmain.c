/*
 * convmain.c — the part of a converter's main() that every converter
 * shares (contract in convert.h): parse with the selection rows, accept
 * one input, make the sink, run the pipeline (convert.c) and release
 * what parsing took.  A main keeps only its table, its own checks and
 * the choice of its sink type.
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
    conv_selection_prepare(&cli->sel);
}

int conv_convert(conv_cli *cli, const exp_sink_type *type, const void *opts, int binary)
{
    exp_sink *sink = exp_sink_new(type, opts);
    if (!sink)
        cli_die(CLI_EXIT_USAGE, "out of memory");
    conv_job job = {cli->input, cli->output, binary, &cli->sel, cli->strict};
    int code = conv_run(&job, sink);
    exp_sink_free(sink);
    conv_selection_cleanup(&cli->sel);
    trc_free(cli->pos); /* the array is cli_parse's; its strings are argv's */
    cli->pos = NULL;
    cli->input = NULL;
    return code;
}
