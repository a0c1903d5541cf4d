/*
 * trc2pstats — a pstats file (marshal-ed dict, docs/design/outputs.md §3) that
 * `python -m pstats`, pstats.Stats, snakeviz and gprof2dot load
 * (docs/man/trc2pstats.1).  A thin main over lib/export/folded/stats.c and
 * lib/export/folded/pstats.c and the converter pipeline; --gpu weights stacks by
 * GPU time through lib/export/common/gpu_callsite.c.
 */
#include "lib/export/folded/folded.h"
#include "tools/common/convert.h"

int main(int argc, char **argv)
{
    static conv_cli cli;
    static int gpu, syncs, gpu_idle;
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"gpu", 0, CLI_FLAG, &gpu, NULL,
         "GPU time by launching Python stack, kernel as leaf function", 0, 0},
        {"syncs", 0, CLI_FLAG, &syncs, NULL,
         "host time blocked in syncs by calling Python stack, API as leaf function", 0, 0},
        {"gpu-idle", 0, CLI_FLAG, &gpu_idle, NULL,
         "GPU idle time by the stacks of the threads feeding the GPU", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc2pstats", "[options] [FILE]",
        "Write the samples of a .trc trace as a pstats file (cProfile's format).",
        "Load it with `python -m pstats OUT` or pstats.Stats('OUT'); snakeviz and\n"
        "gprof2dot read it too. For sampled data (docs/converters.md):\n"
        "  tottime  sampled time with the function as the leaf frame;\n"
        "  cumtime  sampled time with the function anywhere on the stack\n"
        "           (recursion counted once per sample);\n"
        "  ncalls   entries observed: samples where the function's call was\n"
        "           not yet in progress in the thread's previous sample. A lower\n"
        "           bound: short calls between samples are missed, back-to-back\n"
        "           calls from one line merge. \"a/b\": b are not recursive.\n"
        "Samples without Python frames appear as {no Python frames}.\n"
        "--gpu: each kernel, copy and memset counts as one call of its own leaf\n"
        "function ('~', 0, NAME) under the Python stack of the call that launched\n"
        "it; times are GPU seconds and ncalls the activities launched beneath a\n"
        "function. {no Python stack}: launched by a thread without Python frames;\n"
        "{unknown launch}: the launch call was not recorded.\n"
        "--syncs: each call that can make the host wait (API_CALL flag SYNC)\n"
        "counts as one call of a leaf function ('~', 0, API name) under its\n"
        "calling Python stack; times are host seconds blocked (docs/gpu.md).\n"
        "--gpu-idle: the time each GPU was idle (nothing ran on it), charged to\n"
        "the stacks the threads feeding it were sampled in meanwhile; times are\n"
        "idle seconds, devices summed (docs/gpu.md).\n"
        "The output is binary: it is not written to a terminal.\n"
        CONV_HELP_EXIT "\nSelecting no sample is an error (2): a pstats file cannot be empty.",
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    if (gpu && syncs)
        cli_die(CLI_EXIT_USAGE, "--gpu and --syncs are two different views: pick one");
    if ((gpu || syncs) && gpu_idle)
        cli_die(CLI_EXIT_USAGE, "--gpu-idle is a view of its own: it takes no --gpu or --syncs");
    if (gpu_idle) {
        exp_folded_idle_options io = {{0, 0, 0, 0, 1}, conv_gpu_idle_window(&cli.sel)};
        return conv_convert(&cli, &exp_sink_pstats_gpu_idle, &io, 1);
    }
    return conv_convert(&cli, gpu ? &exp_sink_pstats_gpu : syncs ? &exp_sink_pstats_syncs
                                                                 : &exp_sink_pstats,
                        NULL, 1);
}
