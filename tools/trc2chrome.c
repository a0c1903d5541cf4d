/*
 * trc2chrome — convert a .trc trace to Chrome Trace Event JSON (Perfetto,
 * chrome://tracing, speedscope): per-thread flame charts of nested "X"
 * slices, GPU streams, CUDA API calls, markers and launch flows,
 * counters, losses and names.  The work is lib/export/chrome/; this is
 * the option table and the pipeline.
 */
#include "lib/export/chrome/chrome.h"
#include "tools/common/convert.h"

int main(int argc, char **argv)
{
    static conv_cli cli;
    chrome_options opt = {0};
    static double busy_ms = 10;
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"lines", 0, CLI_FLAG, &opt.lines, NULL,
         "one slice per executing line instead of per function", 0, 0},
        {"gpu-busy-resolution", 0, CLI_DOUBLE, &busy_ms, "MS",
         "bucket of the exact GPU busy % counter per device (default 10; 0 = none)", 0, 1e6},
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
        "each launch to its activity; NVML counters under the device, beside\n"
        "\"GPU busy (kernels)\": the exact share of each --gpu-busy-resolution bucket\n"
        "in which a kernel ran (NVML's gpu.util only says one ran at some time).\n"
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel),
    };

    conv_parse(&cli, &tool, argc, argv);
    if (busy_ms > 0) {
        const conv_filter *f = &cli.sel.filter;
        exp_gpu_idle_options busy = {f->has_from, f->has_to, f->from_ns, f->to_ns, 0,
                                     (int64_t)(busy_ms * 1e6 + 0.5)};
        if (busy.bucket_ns < 1000)
            cli_die(CLI_EXIT_USAGE, "--gpu-busy-resolution %g: at least 0.001 ms", busy_ms);
        opt.busy = busy;
    }
    return conv_convert(&cli, &exp_sink_chrome, &opt, 0);
}
