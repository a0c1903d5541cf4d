/*
 * trc-lines — time per source line of the hottest Python functions, from
 * an ordinary recording (docs/man/trc-lines.1, meanings in
 * docs/converters.md).  The engine is lib/export/lines (a sink that takes
 * the samples and the GPU activities with their launch sites); this is
 * the option table and the choice of colour.
 *
 * Every sample is read, idle ones too, whatever --idle says: the table
 * shows on-CPU and wall time side by side.  --idle only makes wall time
 * the measure that ranks functions and makes shares.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/export/lines/lines.h"
#include "tools/common/convert.h"

int main(int argc, char **argv)
{
    static conv_cli cli;
    static long top;
    static const char *function, *file, *color;
    static cli_list roots;
    static int json;
    const cli_option options[] = {
        CONV_OPTION_OUTPUT(&cli.output),
        CONV_OPTION_STRICT(&cli.strict),
        {"top", 'n', CLI_INT, &top, "N", "the N hottest functions by own time (default 5)", 1, 1e6},
        {"function", 'f', CLI_STRING, &function, "NAME",
         "the functions named NAME (or FILE:NAME) instead of the hottest", 0, 0},
        {"file", 0, CLI_STRING, &file, "PATH",
         "the functions of source file PATH (recorded path or its tail)", 0, 0},
        {"source-root", 0, CLI_LIST, &roots, "OLD=NEW",
         "read a source recorded under OLD from NEW instead (repeatable)", 0, 0},
        {"json", 0, CLI_FLAG, &json, NULL, "write JSON instead of the table", 0, 0},
        {"color", 0, CLI_STRING, &color, "WHEN",
         "auto|always|never: colour the table (auto: on a terminal, NO_COLOR unset)", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc-lines", "[options] [FILE]",
        "Show the time spent on each source line of the hottest Python functions.",
        "For each function: its time, its top callers and callees, then its source\n"
        "lines with, per line (docs/converters.md):\n"
        "  CPU s   on-CPU seconds of the samples executing the line, callees included;\n"
        "  Wall s  the same over every sample, idle ones too;\n"
        "  Share   the line's part of the function's on-CPU time (wall with --idle);\n"
        "  GPU ms  when the trace has GPU activities: GPU time of the kernels, copies\n"
        "          and memsets launched while the line was executing.\n"
        "Sources are read from the paths recorded (--source-root maps them); a file\n"
        "that is missing or shorter than a recorded line still gets its numbers,\n"
        "with the reason the text is absent.\n"
        CONV_HELP_EXIT,
        options, conv_selection_options(&cli.sel)};
    conv_parse(&cli, &tool, argc, argv);
    int use_color = 0;
    if (!color || strcmp(color, "auto") == 0)
        use_color = !json && (!cli.output || strcmp(cli.output, "-") == 0) && isatty(1) &&
                    !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
    else if (strcmp(color, "always") == 0)
        use_color = !json;
    else if (strcmp(color, "never") != 0)
        cli_die(CLI_EXIT_USAGE, "--color '%s': use auto, always or never", color);
    for (size_t i = 0; i < roots.n; i++) {
        const char *eq = strchr(roots.items[i], '=');
        if (!eq || eq == roots.items[i])
            cli_die(CLI_EXIT_USAGE, "--source-root '%s': use OLD=NEW (OLD not empty)",
                    roots.items[i]);
    }
    if (top && (function || file))
        cli_die(CLI_EXIT_USAGE, "--top ranks the hottest functions: it takes no --function or --file");
    if ((function && !*function) || (file && !*file))
        cli_die(CLI_EXIT_USAGE, "--function and --file take a name that is not empty");
    lines_opts opts = {top, function, file, roots.items, roots.n,
                       cli.sel.idle ? LINES_WALL : LINES_CPU, json, use_color};
    cli.sel.filter.idle = 1; /* wall time needs the idle samples (see above) */
    int rc = conv_convert(&cli, &exp_sink_lines, &opts, 0);
    cli_list_cleanup(&roots);
    return rc;
}
