/*
 * trc2chrome — convert a .trc trace to Chrome Trace Event JSON (Perfetto,
 * chrome://tracing, speedscope): per-thread flame charts of nested "X"
 * slices, GPU streams, CUDA API calls, markers and launch flows,
 * counters, losses and names.  The work is lib/export/chrome.c;
 * this is the option table and the pipeline.
 */
#include <stdlib.h>

#include "lib/export/chrome.h"
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
    static conv_selection sel;
    const char *output = NULL;
    chrome_options opt = {0};
    const cli_option options[] = {
        {"output", 'o', CLI_STRING, &output, "FILE", "write to FILE instead of stdout", 0, 0},
        {"lines", 0, CLI_FLAG, &opt.lines, NULL,
         "one slice per executing line instead of per function", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc2chrome", "[options] [FILE]",
        "convert a trc trace to Chrome Trace Event JSON (Perfetto, chrome://tracing)",
        "Reads FILE, or stdin when FILE is absent or '-'. Per thread, consecutive samples\n"
        "sharing a stack prefix become nested \"X\" slices; counters are \"C\" events,\n"
        "losses \"i\" instants. ts/dur are microseconds from the trace start (ns exact).\n"
        "GPU data: a process per device (\"GPU 0: NAME\") with a track per stream for\n"
        "kernels, copies and memsets, and one for its syncs; CUDA API calls and NVTX\n"
        "markers on extra tracks of the calling thread's process; a flow arrow from\n"
        "each launch to its activity; NVML counters under the device.\n"
        "Exit status: 0 clean, 1 the input had damage or loss (one warning), 2 error.",
        options, conv_selection_options(&sel),
    };
    char **pos;
    int npos, code;

    cli_parse(&tool, argc, argv, 0, &pos, &npos);
    if (npos > 1)
        cli_die(CLI_EXIT_USAGE, "expected at most one input file, got %d", npos);
    conv_selection_prepare(&sel);

    chrome *c = chrome_new(&opt);
    if (!c)
        cli_die(CLI_EXIT_USAGE, "out of memory");
    conv_sink sink = {c, sink_event, sink_finish};
    conv_job job = {npos ? pos[0] : NULL, output, 0, &sel};
    code = conv_run(&job, &sink);
    chrome_free(c);
    conv_selection_cleanup(&sel);
    free(pos); /* the array is cli_parse's; its strings are argv's */
    return code;
}
