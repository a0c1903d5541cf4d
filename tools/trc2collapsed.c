/*
 * trc2collapsed — folded stacks ("root;...;leaf COUNT") for flamegraph.pl,
 * inferno and speedscope (docs/design/outputs.md §4; docs/man/trc2collapsed.1).
 * A thin main over lib/export/common/collapsed.c and the converter pipeline;
 * --gpu charges GPU time to launch sites (the pipeline pairs each activity
 * with its launch call, lib/export/common/gpu_callsite.c).
 */
#include <string.h>

#include "lib/export/folded/folded.h"
#include "tools/common/convert.h"

/* --gpu: the share of GPU time with a Python line, on stderr (stdout is
 * the folded stacks) */
static void print_share(const char *line) { cli_note("%s", line); }

typedef struct opts {
    const char *weight;
    int threads, pids, no_lines, full_filenames, gpu, syncs, gpu_idle;
} opts;

int main(int argc, char **argv)
{
    static conv_cli cli;
    static opts o;
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"threads", 0, CLI_FLAG, &o.threads, NULL, "add a \"NAME (tid N)\" root frame per thread", 0, 0},
        {"pids", 0, CLI_FLAG, &o.pids, NULL, "add an \"EXE (pid N)\" root frame per process", 0, 0},
        {"no-lines", 0, CLI_FLAG, &o.no_lines, NULL,
         "one frame per function: \"function (file)\", no line", 0, 0},
        {"full-filenames", 0, CLI_FLAG, &o.full_filenames, NULL,
         "show full source paths (default: shortened)", 0, 0},
        {"weight", 0, CLI_STRING, &o.weight, "samples|us",
         "count samples (default) or microseconds of sampled time", 0, 0},
        {"gpu", 0, CLI_FLAG, &o.gpu, NULL,
         "GPU time by launching Python stack, kernel as leaf (counts in us)", 0, 0},
        {"syncs", 0, CLI_FLAG, &o.syncs, NULL,
         "host time blocked in syncs by calling Python stack, API as leaf (us)", 0, 0},
        {"gpu-idle", 0, CLI_FLAG, &o.gpu_idle, NULL,
         "GPU idle time by the stacks of the threads feeding the GPU (counts in us)", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc2collapsed", "[options] [FILE]",
        "Write the samples of a .trc trace as folded stacks, one line per distinct stack.",
        "Each line is \"root;...;leaf COUNT\" with one space before an integer COUNT.\n"
        "Frames read \"function (file:line)\"; ';', '%', control characters and\n"
        "stray spaces in names are written as %XX. Samples without Python frames\n"
        "are counted under \"" EXP_NO_PYTHON_FRAMES "\". Reads stdin when FILE is absent or '-'.\n"
        "With --gpu, each kernel, copy and memset adds its duration (--weight us,\n"
        "the default then) or 1 (--weight samples) to the Python stack of the call\n"
        "that launched it plus a leaf for its name (\"[CUDA memcpy HtoD]\" for\n"
        "copies); launches without Python frames go under \"" EXP_GPU_NO_PYTHON_ROOT "\",\n"
        "activities whose launch was not recorded under \"" EXP_GPU_UNKNOWN_ROOT "\".\n"
        "--thread then keeps the work launched by those threads; --from/--to keep\n"
        "activities that overlap the window; --idle and --gil do not apply. The\n"
        "share of GPU time with a Python line (direct, via a waiting thread, none)\n"
        "follows on stderr, one line.\n"
        "With --syncs, each call that can make the host wait (API_CALL flag SYNC:\n"
        "synchronize calls, synchronous copies) adds its duration minus the\n"
        "recorder's capture time (--weight us, the default then) or 1 to its\n"
        "calling Python stack plus a leaf for the API name (docs/gpu.md).\n"
        "With --gpu-idle, each device's idle time (nothing runs on it) and\n"
        "copies-only time (copies or memsets, no kernel) is charged, in us, to the\n"
        "stacks the threads feeding it were sampled in meanwhile, under a\n"
        "\"[GPU N idle]\" or \"[GPU N copies only]\" root (docs/gpu.md); off-CPU\n"
        "samples count (a waiting thread is what idles a GPU).\n"
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    if (o.gpu && o.gpu_idle)
        cli_die(CLI_EXIT_USAGE, "--gpu and --gpu-idle are different views: give one");
    exp_collapsed_options co = {o.threads, o.pids, o.no_lines, o.full_filenames, 0};
    if (o.gpu && o.syncs)
        cli_die(CLI_EXIT_USAGE, "--gpu and --syncs are two different views: pick one");
    if ((o.weight && strcmp(o.weight, "us") == 0) || ((o.gpu || o.syncs) && !o.weight))
        co.weight_us = 1;
    else if (o.weight && strcmp(o.weight, "samples") != 0)
        cli_die(CLI_EXIT_USAGE, "--weight must be 'samples' or 'us', not '%s'", o.weight);
    if (o.gpu_idle) {
        if (o.syncs)
            cli_die(CLI_EXIT_USAGE, "--syncs and --gpu-idle are different views: give one");
        if (o.weight && strcmp(o.weight, "us") != 0)
            cli_die(CLI_EXIT_USAGE, "--gpu-idle counts microseconds: it takes no --weight %s",
                    o.weight);
        exp_folded_idle_options io = {co, conv_gpu_idle_window(&cli.sel)};
        return conv_convert(&cli, &exp_sink_collapsed_gpu_idle, &io, 0);
    }
    if (o.gpu) {
        exp_folded_gpu_options go = {co, print_share};
        return conv_convert(&cli, &exp_sink_collapsed_gpu, &go, 0);
    }
    return conv_convert(&cli, o.syncs ? &exp_sink_collapsed_syncs : &exp_sink_collapsed, &co, 0);
}
