/*
 * trc2pstats — a pstats file (marshal-ed dict, FORMATS.md §3) that
 * `python -m pstats`, pstats.Stats, snakeviz and gprof2dot load
 * (docs/man/trc2pstats.1).  A thin main over lib/export/stats.c and
 * lib/export/pstats.c and the converter pipeline.
 */
#include <stdlib.h>

#include "lib/export/export.h"
#include "tools/common/convert.h"

static int on_event(void *ctx, trc_reader *r, const trc_event *ev, FILE *out)
{
    if (ev->type != TRC_EV_SAMPLE)
        return 0;
    trc_status st = exp_stats_add(ctx, r, &ev->u.sample);
    return st == TRC_OK ? 0 : conv_sink_error(st);
}

static int on_finish(void *ctx, trc_reader *r, FILE *out)
{
    trc_status st = exp_stats_finish(ctx, r);
    if (st != TRC_OK)
        return conv_sink_error(st);
    if (exp_stats_func_count(ctx) == 0) {
        cli_error("no samples selected: a pstats file cannot be empty (try --idle, or "
                  "check --pid/--thread/--from/--to)");
        return -1;
    }
    st = exp_pstats_write(ctx, out);
    return st == TRC_OK ? 0 : conv_sink_error(st);
}

int main(int argc, char **argv)
{
    static conv_selection sel;
    static const char *output;
    const cli_option options[] = {
        {"output", 'o', CLI_STRING, &output, "FILE", "write to FILE (default: stdout, not a terminal)", 0, 0},
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
        "Exit status: 0 ok, 1 input damaged or data lost (output covers what was\n"
        "readable), 2 usage error, unusable input or nothing selected.",
        options, conv_selection_options(&sel)};
    char **pos;
    int npos;
    cli_parse(&tool, argc, argv, 0, &pos, &npos);
    if (npos > 1)
        cli_die(CLI_EXIT_USAGE, "too many inputs: give one FILE (or none for stdin)");
    conv_selection_prepare(&sel);
    exp_stats *s = exp_stats_new();
    if (!s)
        cli_die(CLI_EXIT_USAGE, "out of memory");
    conv_sink sink = {s, on_event, on_finish};
    conv_job job = {npos ? pos[0] : NULL, output, 1, &sel};
    int code = conv_run(&job, &sink);
    exp_stats_free(s);
    conv_selection_cleanup(&sel);
    free(pos);
    return code;
}
