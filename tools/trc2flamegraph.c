/*
 * trc2flamegraph — an interactive SVG flame graph of a .trc trace, no
 * Perl needed (docs/converters.md "trc2flamegraph";
 * docs/man/trc2flamegraph.1).  A thin main over
 * lib/export/flamegraph/ and the converter pipeline: the stacks and
 * weights are trc2collapsed's (lib/export/common/collapsed.h).  --diff
 * first runs BASE through the same pipeline and selections into a tree
 * the graph is compared with.
 */
#include <string.h>

#include "lib/export/flamegraph/flamegraph.h"
#include "lib/export/pipeline/pipeline.h"
#include "lib/util/alloc.h"
#include "tools/common/convert.h"

typedef struct opts {
    const char *weight, *title, *diff;
    int threads, pids, no_lines, full_filenames, gpu, icicle, gpu_idle, syncs;
    double width, min_width;
} opts;

/* BASE through the pipeline with the same selections (a fresh copy of
 * the filter: its reading state belongs to one input) into `into`.
 * Dies with BASE's one-line error when it cannot be read. */
static void fold_base(const char *path, conv_selection *sel, exp_flame_options fo,
                      exp_flame_tree *into, int gpu)
{
    fo.collect = into;
    exp_sink *sink = exp_sink_new(gpu ? &exp_sink_flamegraph_gpu : &exp_sink_flamegraph, &fo);
    if (!sink)
        cli_die(CLI_EXIT_USAGE, "out of memory");
    trc_reader *r = cli_open_input(path);
    const char *name = trc_reader_name(r);
    if (!name || !*name)
        name = strcmp(path, "-") ? path : "<stdin>";
    conv_filter f = sel->filter;
    f.have_start = 0;
    f.trace_start_ns = 0;
    f.thread_verdict = NULL;
    f.n_thread_verdict = 0;
    f.cached_pid = 0;
    f.cached_pid_keep = 0;
    f.seen_pid = f.seen_thread = 0;
    conv_losses losses;
    conv_pipe_result res;
    conv_pipe_run(r, name, &f, sink, 0, stdout, &losses, &res);
    trc_free(f.thread_verdict);
    if (res.end == CONV_PIPE_UNUSABLE) {
        const char *msg = trc_reader_error(r);
        if (msg && *msg)
            cli_die(CLI_EXIT_USAGE, "%s", msg);
        cli_die(CLI_EXIT_USAGE, "%s: %s", name, trc_status_str(res.status));
    }
    if (res.end == CONV_PIPE_SINK_FAILED)
        cli_die(CLI_EXIT_USAGE, "%s: %s", name, trc_status_str(res.status));
    if (res.end == CONV_PIPE_UNMATCHED)
        cli_warn("%s: %s; every frame counts as new", name, res.why);
    else if (conv_losses_warns(&losses, 0)) {
        char what[768];
        conv_losses_describe(&losses, what, sizeof what);
        cli_warn("%s: %s; the comparison covers what was readable", name, what);
    }
    exp_sink_free(sink);
    trc_reader_free(r);
}

int main(int argc, char **argv)
{
    static conv_cli cli;
    static opts o = {.width = 1200, .min_width = 0.1};
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
         "widths by samples (default) or microseconds of sampled time", 0, 0},
        {"gpu", 0, CLI_FLAG, &o.gpu, NULL,
         "GPU time by launching Python stack, kernel as leaf (weight us)", 0, 0},
        {"gpu-idle", 0, CLI_FLAG, &o.gpu_idle, NULL,
         "GPU idle time by the stacks of the threads feeding the GPU (weight us)", 0, 0},
        {"syncs", 0, CLI_FLAG, &o.syncs, NULL,
         "host time blocked in syncs by calling Python stack, API as leaf (weight us)", 0, 0},
        {"icicle", 0, CLI_FLAG, &o.icicle, NULL, "root at the top, callees below", 0, 0},
        {"title", 0, CLI_STRING, &o.title, "TEXT", "the title (default: \"Flame Graph\")", 0, 0},
        {"width", 0, CLI_DOUBLE, &o.width, "PX", "image width in pixels (default 1200)", 100,
         100000},
        {"min-width", 0, CLI_DOUBLE, &o.min_width, "PX",
         "leave out frames narrower than PX pixels (default 0.1)", 0, 1000},
        {"diff", 0, CLI_STRING, &o.diff, "BASE.trc",
         "colour each frame by the change of its share since BASE", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc2flamegraph", "[options] [FILE]",
        "Write the samples of a .trc trace as an interactive SVG flame graph.",
        "The stacks and weights are trc2collapsed's (same options, same names);\n"
        "frames are ordered by name at each level, a frame's width is its share\n"
        "of the total. Open the SVG in a browser: click a frame to zoom, Reset\n"
        "Zoom to undo, Search (or Ctrl-F) highlights the frames whose name matches\n"
        "a regular expression and shows their share; a frame's tooltip gives its\n"
        "function, file:line, samples, share and sampled time. Colours: Python\n"
        "frames red-yellow, native blue, GPU green, off-CPU (--idle) grey.\n"
        "With --diff BASE.trc the widths are this trace's and the colour is the\n"
        "change of each frame's share of the total since BASE (red grew, blue\n"
        "shrank), BASE read with the same options and selections.\n"
        "With --gpu-idle the stacks and widths are trc2collapsed --gpu-idle's: each\n"
        "device's idle and copies-only time by the feeding threads' stacks.\n"
        "With --syncs they are trc2collapsed --syncs': the host time blocked in each\n"
        "call that can make the host wait, by its calling stack, the API as leaf.\n"
        "Reads stdin when FILE is absent or '-'.\n" CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    if (o.gpu_idle && (o.gpu || o.diff))
        cli_die(CLI_EXIT_USAGE, "--gpu-idle takes no --gpu or --diff");
    if (o.syncs && (o.gpu || o.gpu_idle || o.diff))
        cli_die(CLI_EXIT_USAGE, "--syncs takes no --gpu, --gpu-idle or --diff");
    exp_flame_options fo = {{o.threads, o.pids, o.no_lines, o.full_filenames, 0},
                            o.icicle, o.title, NULL, o.width, o.min_width, NULL, NULL, NULL, NULL, 0};
    if ((o.weight && strcmp(o.weight, "us") == 0) || ((o.gpu || o.syncs) && !o.weight))
        fo.fold.weight_us = 1;
    else if (o.weight && strcmp(o.weight, "samples") != 0)
        cli_die(CLI_EXIT_USAGE, "--weight must be 'samples' or 'us', not '%s'", o.weight);
    exp_gpu_idle_options idle_window;
    if (o.gpu_idle) {
        if (o.weight && strcmp(o.weight, "us") != 0)
            cli_die(CLI_EXIT_USAGE, "--gpu-idle counts microseconds: it takes no --weight %s",
                    o.weight);
        idle_window = conv_gpu_idle_window(&cli.sel);
        fo.gpu_idle = &idle_window;
        fo.fold.weight_us = 1;
        fo.subtitle = "GPU idle time (us) by the feeding threads' stacks";
        return conv_convert(&cli, &exp_sink_flamegraph_gpu_idle, &fo, 0);
    }
    if (o.syncs) {
        fo.subtitle = fo.fold.weight_us ? "host time blocked in syncs (us) by calling stack"
                                        : "blocking syncs (calls) by calling stack";
        return conv_convert(&cli, &exp_sink_flamegraph_syncs, &fo, 0);
    }
    fo.subtitle = o.gpu ? (fo.fold.weight_us ? "GPU time (us) by launch site"
                                             : "GPU activities by launch site")
                  : fo.fold.weight_us ? "sampled time (us)" : "samples";
    exp_flame_tree *base = NULL;
    if (o.diff) {
        int in_stdin = !cli.input || strcmp(cli.input, "-") == 0;
        if (strcmp(o.diff, "-") == 0 && in_stdin)
            cli_die(CLI_EXIT_USAGE, "--diff -: the input already reads stdin");
        if (!(base = exp_flame_tree_new()))
            cli_die(CLI_EXIT_USAGE, "out of memory");
        fold_base(o.diff, &cli.sel, fo, base, o.gpu);
        fo.base = base;
        fo.base_name = o.diff;
    }
    int code = conv_convert(&cli, o.gpu ? &exp_sink_flamegraph_gpu : &exp_sink_flamegraph, &fo, 0);
    exp_flame_tree_free(base);
    return code;
}
