/*
 * trc-stats — a cProfile-style table of a trace in the terminal
 * (docs/man/trc-stats.1, meanings in docs/converters.md).  The numbers
 * come from lib/export/folded/stats.c, the same model trc2pstats writes, and the
 * report from tools/common/stats_table.c; this is the option table and
 * the sink.
 *
 * --gpu prints nvprof's summary instead (lib/export/nvvp/gpu_summary.c, the
 * table trc2nvvp prints); --gpu-callsites the same table as for samples
 * but weighted by GPU time per launching stack (lib/export/common/gpu_callsite.c).
 */
#include <stdlib.h>

#include "lib/export/folded/folded.h"
#include "lib/export/nvvp/gpu_summary.h"
#include "tools/common/convert.h"
#include "tools/common/stats_table.h"

typedef struct ctx {
    exp_stats *stats;
    stats_table_opts table;
    gpu_summary *summary;  /* --gpu */
    exp_gpu_callsite *gpu; /* --gpu-callsites */
} ctx;

static trc_status add_gpu(void *s, trc_reader *r, const exp_gpu_hit *h)
{
    return exp_stats_add_gpu(s, r, h);
}

static int on_event(void *p, trc_reader *r, const trc_event *ev, FILE *out)
{
    const ctx *c = p;
    trc_status st = TRC_OK;
    if (c->summary)
        return gpu_summary_event(c->summary, r, ev) == 0 ? 0 : conv_sink_error(TRC_ERR_NOMEM);
    if (c->gpu)
        st = exp_gpu_callsite_event(c->gpu, r, ev);
    else if (ev->type == TRC_EV_SAMPLE)
        st = exp_stats_add(c->stats, r, &ev->u.sample);
    return st == TRC_OK ? 0 : conv_sink_error(st);
}

static int on_finish(void *p, trc_reader *r, FILE *out)
{
    const ctx *c = p;
    if (c->summary) {
        trc_status gs = gpu_summary_print(c->summary, out);
        return gs == TRC_OK ? 0 : conv_sink_error(gs);
    }
    trc_status st = c->gpu ? exp_gpu_callsite_finish(c->gpu) : TRC_OK;
    if (st == TRC_OK)
        st = exp_stats_finish(c->stats, r);
    if (st != TRC_OK)
        return conv_sink_error(st);
    return stats_table_print(c->stats, c->gpu, r, &c->table, out);
}

int main(int argc, char **argv)
{
    static conv_cli cli;
    static const char *sort;
    static int gpu, gpu_callsites;
    ctx c = {0};
    stats_table_default(&c.table);
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"sort", 's', CLI_STRING, &sort, "KEY",
         "tottime|cumtime|ncalls|name|file (or time|cumulative|calls); default cumtime", 0, 0},
        {"limit", 'n', CLI_INT, &c.table.limit, "N", "show the first N rows only (0 = all)", 0, 1e9},
        {"callers", 0, CLI_STRING, &c.table.callers, "PATTERN",
         "show who called the functions matching PATTERN (extended regex)", 0, 0},
        {"callees", 0, CLI_STRING, &c.table.callees, "PATTERN",
         "show what the functions matching PATTERN called", 0, 0},
        {"gpu", 0, CLI_FLAG, &gpu, NULL,
         "print nvprof's summary of GPU activities and API calls instead", 0, 0},
        {"gpu-callsites", 0, CLI_FLAG, &gpu_callsites, NULL,
         "the table weighted by GPU time per launching Python stack", 0, 0},
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
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    if (sort && stats_table_sort_key(&c.table, sort) != 0)
        cli_die(CLI_EXIT_USAGE, "--sort '%s': use tottime, cumtime, ncalls, name or file", sort);
    if (gpu && (gpu_callsites || sort || c.table.limit || c.table.callers || c.table.callees))
        cli_die(CLI_EXIT_USAGE, "--gpu prints nvprof's summary: it takes no --gpu-callsites, "
                                "--sort, --limit, --callers or --callees");
    conv_selection_prepare(&cli.sel);
    c.table.idle = cli.sel.idle;
    c.table.gil = cli.sel.gil;
    c.stats = exp_stats_new();
    if (gpu)
        c.summary = gpu_summary_new();
    if (gpu_callsites && c.stats)
        c.gpu = conv_callsite_new(&cli.sel, add_gpu, c.stats);
    if (!c.stats || (gpu && !c.summary) || (gpu_callsites && !c.gpu))
        cli_die(CLI_EXIT_USAGE, "out of memory");
    conv_sink sink = {&c, on_event, on_finish};
    int code = conv_exec(&cli, &sink, 0, gpu_callsites);
    exp_gpu_callsite_free(c.gpu);
    gpu_summary_free(c.summary);
    exp_stats_free(c.stats);
    return code;
}
