/*
 * trc2nvvp — the GPU side of a trace the way nvprof and NVVP users know
 * it (docs/design/outputs.md §5; docs/man/trc2nvvp.1): nvprof's summary by default,
 * --print-gpu-trace / --print-api-trace tables (text or --csv), or an
 * NVVP-like SVG timeline with --svg FILE.  A thin main over
 * lib/export/nvvp/ (exp_sink_nvvp) and the converter pipeline.
 */
#include <string.h>

#include "lib/export/nvvp/nvvp_sink.h"
#include "lib/export/nvvp/nvvp_summary.h"
#include "tools/common/convert.h"

typedef struct opts {
    const char *svg, *sort;
    int gpu_trace, api_trace, csv;
    long width, limit;
    double busy_ms;
} opts;

int main(int argc, char **argv)
{
    static conv_cli cli;
    static opts o = {.busy_ms = -1};
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"print-gpu-trace", 0, CLI_FLAG, &o.gpu_trace, NULL,
         "one line per kernel, copy and memset, by start time", 0, 0},
        {"print-api-trace", 0, CLI_FLAG, &o.api_trace, NULL,
         "one line per CUDA runtime/driver API call, with its Python call site", 0, 0},
        {"csv", 0, CLI_FLAG, &o.csv, NULL,
         "comma-separated: quoted header, a units row, then data (nvprof's CSV)", 0, 0},
        {"svg", 0, CLI_STRING, &o.svg, "FILE", "draw an NVVP-like timeline into FILE (SVG)", 0, 0},
        {"width", 0, CLI_INT, &o.width, "PX", "width of the SVG (default 1600)", 400, 100000},
        {"gpu-busy-resolution", 0, CLI_DOUBLE, &o.busy_ms, "MS",
         "--svg: bucket of the exact GPU busy % row per device (default 10; 0 = none)", 0,
         1e6},
        {"sort", 0, CLI_STRING, &o.sort, "KEY",
         "summary order: time (default), calls, avg, min, max, name", 0, 0},
        {"limit", 0, CLI_INT, &o.limit, "N", "summary: at most N rows per section", 1, 1e9},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc2nvvp", "[options] [FILE]",
        "Show the GPU activity of a .trc trace as nvprof and NVVP do.",
        "Default: nvprof's summary, \"GPU activities\" and \"API calls\", sorted by time.\n"
        "Times carry units (ns, us, ms, s); sizes use 1 KB = 1024 B like nvprof.\n"
        "--print-gpu-trace and --print-api-trace list records by start time; times\n"
        "are relative to the trace start. With --csv every number is in the unit\n"
        "of the units row under the header. --svg FILE draws the timeline (rows per\n"
        "process, thread, API, copy kind, kernel, stream, NVTX, samples, counters);\n"
        "--from/--to pick the window. Per GPU, the row \"GPU busy (kernels)\" gives\n"
        "the exact share of each --gpu-busy-resolution bucket in which a kernel ran,\n"
        "above NVML's gpu.util (which says only that one ran at some time).\n"
        "Reads stdin when FILE is absent or '-'.\n"
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    if (o.svg && (cli.output || o.gpu_trace || o.api_trace || o.csv))
        cli_die(CLI_EXIT_USAGE, "--svg FILE writes only the timeline: leave out -o, --csv and --print-*");
    if ((o.sort || o.limit) && (o.gpu_trace || o.api_trace || o.svg))
        cli_die(CLI_EXIT_USAGE, "--sort and --limit apply to the summary only");
    if (o.sort && nvvp_summary_sort_key(o.sort) < 0)
        cli_die(CLI_EXIT_USAGE, "--sort must be time, calls, avg, min, max or name, not '%s'", o.sort);
    if (o.width && !o.svg)
        cli_die(CLI_EXIT_USAGE, "--width applies to --svg only");
    if (o.busy_ms >= 0 && !o.svg)
        cli_die(CLI_EXIT_USAGE, "--gpu-busy-resolution applies to --svg only");
    nvvp_sink_options so = {o.gpu_trace, o.api_trace, o.svg != NULL, o.csv,
                            o.sort ? nvvp_summary_sort_key(o.sort) : 0,
                            o.limit > 0 ? (size_t)o.limit : 0, (double)o.width,
                            cli.sel.from ? cli.sel.filter.from_ns : -1,
                            cli.sel.to ? cli.sel.filter.to_ns : -1, {0, 0, 0, 0, 0, 0}};
    if (!o.svg && !o.gpu_trace && !o.api_trace && !o.csv)
        so.idle = conv_gpu_idle_window(&cli.sel); /* the summary's idle headline */
    if (o.svg && o.busy_ms != 0) {
        /* the same stage and buckets as trc2chrome's busy counter */
        const conv_filter *f = &cli.sel.filter;
        double ms = o.busy_ms < 0 ? 10 : o.busy_ms;
        exp_gpu_idle_options busy = {f->has_from, f->has_to, f->from_ns, f->to_ns, 0,
                                     (int64_t)(ms * 1e6 + 0.5)};
        if (busy.bucket_ns < 1000)
            cli_die(CLI_EXIT_USAGE, "--gpu-busy-resolution %g: at least 0.001 ms", ms);
        so.idle = busy;
    }
    if (o.svg)
        cli.output = o.svg; /* the timeline is the only output */
    return conv_convert(&cli, &exp_sink_nvvp, &so, 0);
}
