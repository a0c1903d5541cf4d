/*
 * trc-stats — a cProfile-style table of a trace in the terminal
 * (docs/man/trc-stats.1, meanings in docs/converters.md).  The numbers
 * come from lib/export/folded/stats.c, the same model trc2pstats writes, and the
 * report from tools/common/stats_table.c (a sink); this is the option
 * table and the choice of sink.
 *
 * --gpu prints nvprof's summary instead (lib/export/nvvp/gpu_summary.c, the
 * table trc2nvvp prints); --gpu-callsites the same table as for samples
 * but weighted by GPU time per launching stack (the pipeline pairs each
 * activity with its launch call, lib/export/common/gpu_callsite.c).
 */
#include "lib/export/folded/folded.h"
#include "lib/export/nvvp/nvvp_sink.h"
#include "tools/common/convert.h"
#include "tools/common/stats_table.h"

int main(int argc, char **argv)
{
    static conv_cli cli;
    static const char *sort;
    static int gpu, gpu_callsites, syncs, gpu_idle;
    static stats_table_opts table;
    stats_table_default(&table);
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"sort", 's', CLI_STRING, &sort, "KEY",
         "tottime|cumtime|ncalls|name|file (or time|cumulative|calls); default cumtime", 0, 0},
        {"limit", 'n', CLI_INT, &table.limit, "N", "show the first N rows only (0 = all)", 0, 1e9},
        {"callers", 0, CLI_STRING, &table.callers, "PATTERN",
         "show who called the functions matching PATTERN (extended regex)", 0, 0},
        {"callees", 0, CLI_STRING, &table.callees, "PATTERN",
         "show what the functions matching PATTERN called", 0, 0},
        {"gpu", 0, CLI_FLAG, &gpu, NULL,
         "print nvprof's summary of GPU activities and API calls instead", 0, 0},
        {"gpu-callsites", 0, CLI_FLAG, &gpu_callsites, NULL,
         "the table weighted by GPU time per launching Python stack", 0, 0},
        {"syncs", 0, CLI_FLAG, &syncs, NULL,
         "blocking syncs by Python line: calls, host time blocked, GPU work waited for", 0, 0},
        {"gpu-idle", 0, CLI_FLAG, &gpu_idle, NULL,
         "the table of GPU idle time by the stacks of the threads feeding the GPU", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc-stats", "[options] [FILE]",
        "Print a cProfile-style table of where a trace's samples spent their time.",
        "Columns, for sampled data (docs/converters.md):\n"
        "  ncalls   entries observed: samples where the function's call was not\n"
        "           yet in progress in the thread's previous sample (a lower bound;\n"
        "           \"a/b\": b of them not recursive);\n"
        "  tottime  sampled seconds with the function as the leaf frame;\n"
        "  cumtime  sampled seconds with the function anywhere on the stack\n"
        "           (recursion counted once per sample);\n"
        "  percall  tottime/ncalls and cumtime/primitive calls.\n"
        "PATTERN is matched against \"filename:lineno(function)\".\n"
        "The totals equal those of the pstats file trc2pstats writes.\n"
        "--gpu prints nvprof's two summary sections (\"GPU activities\", \"API calls\":\n"
        "Time(%), Time, Calls, Avg, Min, Max, Name), the same as trc2nvvp.\n"
        "--gpu-callsites charges each kernel, copy and memset to the Python stack\n"
        "of the call that launched it, with a leaf function for its name:\n"
        "tottime/cumtime are GPU seconds, ncalls the activities launched\n"
        "beneath a function; launches without Python frames appear under\n"
        "{no Python stack}, unrecorded ones under {unknown launch}.\n"
        "--syncs prints, per Python line that called a sync (API_CALL flag SYNC),\n"
        "the calls, the host seconds blocked (duration minus the recorder's\n"
        "capture) and the seconds of GPU work of that process that ended\n"
        "during the calls (docs/gpu.md, \"Where does my code wait for the GPU?\").\n"
        "--gpu-idle charges the time each GPU was idle (nothing ran on it) to the\n"
        "stacks the threads feeding it were sampled in meanwhile (off-CPU samples\n"
        "included): tottime/cumtime are idle seconds, devices summed; --gpu adds\n"
        "each device's busy, copies-only and idle shares and its top idle stacks.\n"
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    if (sort && stats_table_sort_key(&table, sort) != 0)
        cli_die(CLI_EXIT_USAGE, "--sort '%s': use tottime, cumtime, ncalls, name or file", sort);
    if (gpu && (gpu_callsites || sort || table.limit || table.callers || table.callees))
        cli_die(CLI_EXIT_USAGE, "--gpu prints nvprof's summary: it takes no --gpu-callsites, "
                                "--sort, --limit, --callers or --callees");
    if (syncs && (gpu || gpu_callsites || gpu_idle || sort || table.limit || table.callers ||
                  table.callees))
        cli_die(CLI_EXIT_USAGE, "--syncs prints its own table: it takes no --gpu, "
                                "--gpu-callsites, --gpu-idle, --sort, --limit, --callers or --callees");
    if (syncs)
        return conv_convert(&cli, &exp_sink_sync_report, NULL, 0);
    if (gpu_callsites && gpu_idle)
        cli_die(CLI_EXIT_USAGE, "--gpu-callsites and --gpu-idle are different views: give one");
    if (gpu_idle && gpu)
        cli_die(CLI_EXIT_USAGE, "--gpu prints its own idle headline: it takes no --gpu-idle");
    if (gpu || gpu_idle)
        table.gpu_idle = conv_gpu_idle_window(&cli.sel);
    table.idle = cli.sel.idle || gpu_idle;
    table.gil = cli.sel.gil;
    if (gpu)
        return conv_convert(&cli, &exp_sink_gpu_summary, &table.gpu_idle, 0);
    if (gpu_idle)
        return conv_convert(&cli, &stats_table_sink_gpu_idle, &table, 0);
    return conv_convert(&cli, gpu_callsites ? &stats_table_sink_gpu : &stats_table_sink, &table, 0);
}
