/*
 * trc2collapsed — folded stacks ("root;...;leaf COUNT") for flamegraph.pl,
 * inferno and speedscope (docs/design/outputs.md §4; docs/man/trc2collapsed.1).
 * A thin main over lib/export/folded/collapsed.c and the converter pipeline;
 * --gpu charges GPU time to launch sites through lib/export/common/gpu_callsite.c.
 */
#include <string.h>

#include "lib/export/folded/folded.h"
#include "tools/common/convert.h"

typedef struct opts {
    const char *weight;
    int threads, pids, no_lines, full_filenames, gpu;
} opts;

typedef struct ctx {
    exp_collapsed *c;
    exp_gpu_callsite *gpu;   /* --gpu only */
} ctx;

static trc_status add_gpu(void *c, trc_reader *r, const exp_gpu_hit *h)
{
    return exp_collapsed_add_gpu(c, r, h);
}

static int on_event(void *p, trc_reader *r, const trc_event *ev, FILE *out)
{
    ctx *x = p;
    trc_status st = TRC_OK;
    if (x->gpu)
        st = exp_gpu_callsite_event(x->gpu, r, ev);
    else if (ev->type == TRC_EV_SAMPLE)
        st = exp_collapsed_add(x->c, r, &ev->u.sample);
    return st == TRC_OK ? 0 : conv_sink_error(st);
}

static int on_finish(void *p, trc_reader *r, FILE *out)
{
    ctx *x = p;
    trc_status st = x->gpu ? exp_gpu_callsite_finish(x->gpu) : TRC_OK;
    if (st == TRC_OK)
        st = exp_collapsed_write(x->c, r, out);
    return st == TRC_OK ? 0 : conv_sink_error(st);
}

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
        "activities that overlap the window; --idle and --gil do not apply.\n"
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    exp_collapsed_options co = {o.threads, o.pids, o.no_lines, o.full_filenames, 0};
    if ((o.weight && strcmp(o.weight, "us") == 0) || (o.gpu && !o.weight))
        co.weight_us = 1;
    else if (o.weight && strcmp(o.weight, "samples") != 0)
        cli_die(CLI_EXIT_USAGE, "--weight must be 'samples' or 'us', not '%s'", o.weight);
    conv_selection_prepare(&cli.sel);
    ctx x = {exp_collapsed_new(&co), NULL};
    if (o.gpu && x.c)
        x.gpu = conv_callsite_new(&cli.sel, add_gpu, x.c);
    if (!x.c || (o.gpu && !x.gpu))
        cli_die(CLI_EXIT_USAGE, "out of memory");
    conv_sink sink = {&x, on_event, on_finish};
    int code = conv_exec(&cli, &sink, 0, o.gpu);
    exp_gpu_callsite_free(x.gpu);
    exp_collapsed_free(x.c);
    return code;
}
