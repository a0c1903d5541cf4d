/*
 * trc2chrome — convert a .trc trace to Chrome Trace Event JSON (Perfetto,
 * chrome://tracing, speedscope): per-thread flame charts of nested "X"
 * slices, GPU streams, CUDA API calls, markers and launch flows,
 * counters, losses and names.  The work is lib/export/chrome/chrome.c;
 * this is the option table and the pipeline.
 */
#include "lib/export/chrome/chrome.h"
#include "tools/common/convert.h"

static int sink_event(void *ctx, trc_reader *r, const trc_event *ev, FILE *out)
{
    chrome *c = ctx;
    if (chrome_event(c, r, ev, out) != TRC_OK) {
        cli_error("%s", chrome_error(c));
        return -1;
    }
    return 0;
}

static int sink_finish(void *ctx, trc_reader *r, FILE *out)
{
    chrome *c = ctx;
    if (chrome_finish(c, r, out) != TRC_OK) {
        cli_error("%s", chrome_error(c));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static conv_cli cli;
    chrome_options opt = {0};
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"lines", 0, CLI_FLAG, &opt.lines, NULL,
         "one slice per executing line instead of per function", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc2chrome", "[options] [FILE]",
        "Convert a .trc trace to Chrome Trace Event JSON (Perfetto, chrome://tracing).",
        "Reads FILE, or stdin when FILE is absent or '-'. Per thread, consecutive samples\n"
        "sharing a stack prefix become nested \"X\" slices; counters are \"C\" events,\n"
        "losses \"i\" instants. ts/dur are microseconds from the trace start (ns exact).\n"
        "GPU data: a process per device (\"GPU 0: NAME\") with a track per stream for\n"
        "kernels, copies and memsets, and one for its syncs; CUDA API calls and NVTX\n"
        "markers on extra tracks of the calling thread's process; a flow arrow from\n"
        "each launch to its activity; NVML counters under the device.\n"
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel),
    };

    conv_parse(&cli, &tool, argc, argv);
    conv_selection_prepare(&cli.sel);

    chrome *c = chrome_new(&opt);
    if (!c)
        cli_die(CLI_EXIT_USAGE, "out of memory");
    conv_sink sink = {c, sink_event, sink_finish};
    int code = conv_exec(&cli, &sink, 0, 0);
    chrome_free(c);
    return code;
}
