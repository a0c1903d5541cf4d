/*
 * trc-top — a live view of where a Python program spends its time, like
 * py-spy top (docs/top.md; docs/man/trc-top.1).  A thin main over
 * lib/export/top/: the input (a trec it runs, a pipe, a file, a file
 * being written), then top_live_run, which reads through the converter
 * pipeline and shows the rows on an ncurses screen or as text.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/export/top/top_format.h"
#include "tools/common/top_live.h"
#include "lib/util/alloc.h"
#include "tools/common/convert.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

typedef struct opts {
    const char *pid, *follow, *sort, *rate;
    double window, interval, wait;
    long rows;
    int since_start, idle, gil, once, subprocesses;
    conv_selection sel;    /* --pids/--threads: the converters' --pid/--thread */
} opts;

static top_sort parse_sort(const char *s)
{
    static const char *const names[TOP_SORT_COUNT] = {"own", "total", "own-time",
                                                      "total-time", "gpu", "name"};
    for (int i = 0; i < TOP_SORT_COUNT; i++)
        if (strcmp(s, names[i]) == 0)
            return (top_sort)i;
    cli_die(CLI_EXIT_USAGE,
            "--sort must be own, total, own-time, total-time, gpu or name, not '%s'", s);
}

/* TRC_TOP_FRAMES=1: the screen numbers its redraws, for measuring the
 * refresh rate from outside (tests/e2e/top_tmux.sh). */
static int show_frames(void)
{
    const char *e = getenv("TRC_TOP_FRAMES");
    return e && *e && strcmp(e, "0") != 0;
}

int main(int argc, char **argv)
{
    static opts o = {.window = 10, .interval = -1, .rows = -1};
    const cli_option options[] = {
        {"pid", 'p', CLI_STRING, &o.pid, "PID", "run trec --pid PID and show that process", 0, 0},
        {"follow", 'f', CLI_STRING, &o.follow, "FILE",
         "read FILE as it is written (a recording in progress; waits for it to be created)",
         0, 0},
        {"wait", 0, CLI_DOUBLE, &o.wait, "S",
         "with --follow: wait at most S seconds for FILE to be created (default: until q)",
         0.001, 1e6},
        {"rate", 'r', CLI_STRING, &o.rate, "HZ", "with --pid or a program: trec's --rate", 0, 0},
        {"subprocesses", 's', CLI_FLAG, &o.subprocesses, NULL,
         "with --pid: the process's children too", 0, 0},
        {"window", 'w', CLI_DOUBLE, &o.window, "S",
         "the window: the last S seconds of the trace (10)", 0.001, 1e6},
        {"since-start", 0, CLI_FLAG, &o.since_start, NULL,
         "start with everything since the start, not the window (key w)", 0, 0},
        {"idle", 0, CLI_FLAG, &o.idle, NULL,
         "start with off-CPU samples counted too: wall-clock time (key i)", 0, 0},
        {"gil", 0, CLI_FLAG, &o.gil, NULL, "start with only samples holding the GIL (key g)", 0, 0},
        {"sort", 0, CLI_STRING, &o.sort, "KEY",
         "own|total|own-time|total-time|gpu|name: the column to sort by (keys 1-6)", 0, 0},
        {"pids", 0, CLI_LIST, &o.sel.pids, "PID|PATTERN",
         "only processes with this pid or name (repeatable)", 0, 0},
        {"threads", 0, CLI_LIST, &o.sel.threads, "NAME|TID",
         "only threads with this name pattern or tid (repeatable)", 0, 0},
        {"once", 0, CLI_FLAG, &o.once, NULL,
         "print one text snapshot and exit (at the end of a file, or after --interval)", 0, 0},
        {"interval", 0, CLI_DOUBLE, &o.interval, "S",
         "print a text snapshot every S seconds instead of the screen", 0.01, 1e6},
        {"rows", 'n', CLI_INT, &o.rows, "N", "text snapshots: at most N rows (0 = all; 30)", 0,
         1e9},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc-top",
        "[options] [FILE] | --pid PID | --follow FILE | -- PROGRAM [ARG...]",
        "Show live which Python functions a program spends its time in, like top.",
        "Reads FILE, or stdin when FILE is absent or '-' (trec -o - ... | trc-top),\n"
        "or records itself: --pid PID or a PROGRAM after '--' run trec from this\n"
        "program's folder (with --gil). Columns: own and total share of the samples,\n"
        "own and total time, GPU time launched under the line (when the trace has\n"
        "GPU data; a header line per device gives its busy share, the union of its\n"
        "kernels, and NVML memory; one more the share of GPU time with a Python\n"
        "line), function and file:line.\n"
        "On a terminal the screen refreshes ten times a second; keys:\n"
        "  1 own %  2 total %  3 own time  4 total time  5 GPU time  6 name  (sort)\n"
        "  w window / since start   i idle (wall clock)   g GIL only   q quit\n"
        "Otherwise, or with --once or --interval, it prints text snapshots.\n"
        "A PROGRAM's output is kept off the screen and printed when it closes;\n"
        "q or Ctrl-C stops that PROGRAM (SIGTERM), never a --pid process.\n"
        "Exit status: 0 ok; 1 --pids/--threads matched nothing; 2 usage error,\n"
        "unusable input or terminal; with a PROGRAM on the screen, its status as\n"
        "trec gives it (143 when q stopped it); the recorder's status when it failed.",
        options, NULL};

    /* "-- PROGRAM ARGS": what follows "--" is the program for trec. */
    int cmd_at = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            cmd_at = i;
            break;
        }
    char **pos = NULL;
    int npos = 0;
    cli_parse(&tool, cmd_at ? cmd_at : argc, argv, 0, &pos, &npos);
    int modes = (o.pid != NULL) + (o.follow != NULL) + (cmd_at != 0) + (npos > 0);
    if (modes > 1)
        cli_die(CLI_EXIT_USAGE, "give one input: FILE, --pid, --follow or -- PROGRAM");
    if (npos > 1)
        cli_die(CLI_EXIT_USAGE, "one input FILE at most");
    if (cmd_at && cmd_at == argc - 1)
        cli_die(CLI_EXIT_USAGE, "no PROGRAM after '--'");
    if (!modes && isatty(STDIN_FILENO))
        cli_die(CLI_EXIT_USAGE, "no input: give FILE, --pid PID, --follow FILE or -- PROGRAM "
                                "(standard input is a terminal)");
    if (o.wait > 0 && !o.follow)
        cli_die(CLI_EXIT_USAGE, "--wait goes with --follow");
    if ((o.rate || o.subprocesses) && !o.pid && !cmd_at)
        cli_die(CLI_EXIT_USAGE, "--rate and --subprocesses go with --pid or a PROGRAM");
    top_view view = {o.since_start, o.idle, o.gil, o.sort ? parse_sort(o.sort) : TOP_SORT_OWN};
    o.sel.idle = 1; /* every sample reaches the model: the view picks (keys i, g) */
    conv_selection_prepare(&o.sel);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int live = o.pid || cmd_at || o.follow;
    int screen = !o.once && o.interval < 0 && isatty(STDOUT_FILENO);
    top_source src;
    char why[512];
    const char *name = o.follow ? o.follow : npos ? pos[0] : "<stdin>";
    if (o.pid || cmd_at) {
        const char *args[16 + 1];
        int n = 0;
        args[n++] = "--gil";
        args[n++] = "-q";
        if (o.rate) {
            args[n++] = "--rate";
            args[n++] = o.rate;
        }
        if (o.pid) {
            if (o.subprocesses)
                args[n++] = "--subprocesses";
            args[n++] = "--pid";
            args[n++] = o.pid;
            args[n] = NULL;
            name = "trec";
            if (top_source_spawn(&src, (char *const *)args, 0, screen, why, sizeof why) != 0)
                cli_die(CLI_EXIT_USAGE, "%s", why);
        } else {
            /* trec -o - OPTIONS -- PROGRAM ARGS */
            char **all = trc_calloc((size_t)(n + 1 + argc - cmd_at), sizeof *all);
            if (!all)
                cli_die(CLI_EXIT_USAGE, "out of memory");
            memcpy(all, args, (size_t)n * sizeof *all);
            for (int i = cmd_at; i < argc; i++)
                all[n++] = argv[i];
            name = "trec";
            int rc = top_source_spawn(&src, all, 1, screen, why, sizeof why);
            trc_free(all);
            if (rc != 0)
                cli_die(CLI_EXIT_USAGE, "%s", why);
        }
    } else if (top_source_open(&src, o.follow ? o.follow : npos ? pos[0] : NULL, !!o.follow,
                               o.wait) != 0) {
        cli_die(CLI_EXIT_USAGE, "%s: %s", name, strerror(errno));
    }
    char filters[256] = "";
    for (size_t i = 0; i < o.sel.pids.n; i++)
        snprintf(filters + strlen(filters), sizeof filters - strlen(filters), "%spid %s",
                 *filters ? ", " : "", o.sel.pids.items[i]);
    for (size_t i = 0; i < o.sel.threads.n; i++)
        snprintf(filters + strlen(filters), sizeof filters - strlen(filters), "%sthread %s",
                 *filters ? ", " : "", o.sel.threads.items[i]);
    /* --once on a live input: one snapshot after the interval (1 s);
     * on a file: at its end unless an interval is given. */
    double interval = o.interval > 0 ? o.interval : live ? 1 : 0;
    top_live_opts lo = {&src, name, &o.sel.filter, (int64_t)(o.window * 1e9), view, filters,
                        screen, o.once, interval, o.rows < 0 ? 30 : (size_t)o.rows, stdout,
                        &interrupted, show_frames()};
    int code = top_live_run(&lo, why, sizeof why);
    if (why[0])
        cli_error("%s", why);
    conv_selection_cleanup(&o.sel);
    trc_free(pos);
    return code;
}
