/*
 * trc2pstats — a pstats file (marshal-ed dict, docs/design/outputs.md §3) that
 * `python -m pstats`, pstats.Stats, snakeviz and gprof2dot load
 * (docs/man/trc2pstats.1).  A thin main over lib/export/folded/stats.c and
 * lib/export/folded/pstats.c and the converter pipeline; --gpu weights stacks by
 * GPU time through lib/export/common/gpu_callsite.c.
 */
#include "lib/export/folded/folded.h"
#include "tools/common/convert.h"

typedef struct ctx {
    exp_stats *stats;
    exp_gpu_callsite *gpu;   /* --gpu only */
} ctx;

static trc_status add_gpu(void *s, trc_reader *r, const exp_gpu_hit *h)
{
    return exp_stats_add_gpu(s, r, h);
}

static int on_event(void *p, trc_reader *r, const trc_event *ev, FILE *out)
{
    ctx *x = p;
    trc_status st = TRC_OK;
    if (x->gpu)
        st = exp_gpu_callsite_event(x->gpu, r, ev);
    else if (ev->type == TRC_EV_SAMPLE)
        st = exp_stats_add(x->stats, r, &ev->u.sample);
    return st == TRC_OK ? 0 : conv_sink_error(st);
}

static int on_finish(void *p, trc_reader *r, FILE *out)
{
    ctx *x = p;
    trc_status st = x->gpu ? exp_gpu_callsite_finish(x->gpu) : TRC_OK;
    if (st == TRC_OK)
        st = exp_stats_finish(x->stats, r);
    if (st != TRC_OK)
        return conv_sink_error(st);
    if (exp_stats_func_count(x->stats) == 0) {
        if (x->gpu)
            cli_error("no GPU activities selected: a pstats file cannot be empty (check "
                      "--pid/--thread/--from/--to)");
        else
            cli_error("no samples selected: a pstats file cannot be empty (try --idle, or "
                      "check --pid/--thread/--from/--to)");
        return -1;
    }
    st = exp_pstats_write(x->stats, out);
    return st == TRC_OK ? 0 : conv_sink_error(st);
}

int main(int argc, char **argv)
{
    static conv_cli cli;
    static int gpu;
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"gpu", 0, CLI_FLAG, &gpu, NULL,
         "GPU time by launching Python stack, kernel as leaf function", 0, 0},
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
        "The output is binary: it is not written to a terminal.\n"
        CONV_HELP_EXIT "\nSelecting no sample is an error (2): a pstats file cannot be empty.",
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    conv_selection_prepare(&cli.sel);
    ctx x = {exp_stats_new(), NULL};
    if (gpu && x.stats)
        x.gpu = conv_callsite_new(&cli.sel, add_gpu, x.stats);
    if (!x.stats || (gpu && !x.gpu))
        cli_die(CLI_EXIT_USAGE, "out of memory");
    conv_sink sink = {&x, on_event, on_finish};
    int code = conv_exec(&cli, &sink, 1, gpu);
    exp_gpu_callsite_free(x.gpu);
    exp_stats_free(x.stats);
    return code;
}
