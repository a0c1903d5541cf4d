/*
 * trc2speedscope — convert a .trc trace to speedscope JSON: one sampled
 * profile per thread (and per process with --merge-threads), one evented
 * profile per GPU stream.  The work is
 * lib/export/speedscope/speedscope.c; this is the option table and the pipeline.
 */
#include "lib/export/speedscope/speedscope.h"
#include "tools/common/convert.h"

int main(int argc, char **argv)
{
    static conv_cli cli;
    sscope_options opt = {0};
    static int gpu_idle, syncs;
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"merge-threads", 0, CLI_FLAG, &opt.merge_threads, NULL,
         "also one profile per process, all its threads merged (listed first)", 0, 0},
        {"lines", 0, CLI_FLAG, &opt.lines, NULL,
         "one frame per executing line instead of per function", 0, 0},
        {"gpu-idle", 0, CLI_FLAG, &gpu_idle, NULL,
         "GPU idle time by the stacks of the threads feeding the GPU", 0, 0},
        {"syncs", 0, CLI_FLAG, &syncs, NULL,
         "host time blocked in syncs by calling Python stack, API as leaf", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc2speedscope", "[options] [FILE]",
        "Convert a .trc trace to speedscope JSON (https://www.speedscope.app).",
        "Reads FILE, or stdin when FILE is absent or '-'. One sampled profile per thread,\n"
        "named \"NAME (tid N)\"; weights are nanoseconds of sampled time, consecutive\n"
        "identical samples of a thread merged into one entry (time order is kept).\n"
        "GPU data: after them, one evented profile per GPU stream (\"GPU 0 stream 7\"),\n"
        "kernels, copies and memsets as frames, overlaps made to nest (see the manual).\n"
        "--gpu-idle: instead, one sampled profile per device (\"GPU 0 idle\", \"GPU 0\n"
        "copies only\"), the stacks of trc2collapsed --gpu-idle weighted in ns.\n"
        "--syncs: instead, one sampled profile (\"syncs: host time blocked\"), the\n"
        "stacks of trc2collapsed --syncs, each call weighted by the ns it blocked.\n"
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel),
    };

    conv_parse(&cli, &tool, argc, argv);
    if (syncs) {
        if (gpu_idle || opt.merge_threads || opt.lines)
            cli_die(CLI_EXIT_USAGE, "--syncs takes no --gpu-idle, --merge-threads or --lines");
        return conv_convert(&cli, &exp_sink_speedscope_syncs, NULL, 0);
    }
    if (gpu_idle) {
        if (opt.merge_threads || opt.lines)
            cli_die(CLI_EXIT_USAGE, "--gpu-idle takes no --merge-threads or --lines");
        exp_gpu_idle_options window = conv_gpu_idle_window(&cli.sel);
        return conv_convert(&cli, &exp_sink_speedscope_gpu_idle, &window, 0);
    }
    return conv_convert(&cli, &exp_sink_speedscope, &opt, 0);
}
