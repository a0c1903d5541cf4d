/*
 * trec — record a CPython program's stacks from outside into a .trc trace
 * (how: lib/rec/rec.h, docs/trec.md, docs/man/trec.1).
 *
 *   trec -o run.trc python x.py arg...      start and record a program
 *   trec -o run.trc -- cmd ...              the same, options end at "--"
 *   trec -o run.trc --pid 1234              attach; Ctrl-C stops, target untouched
 *   trec -o - python x.py | trc2collapsed   stream to a pipe
 *   trec --dump --pid 1234                  print every thread's stack now, once
 *
 * A thin main: the option table, then rec_run, then the summary line.
 * Exit status: the program's (128 + signal if it died of one); with
 * --pid 0; 2 for usage errors and targets that cannot be recorded; a
 * trace cut short by a write error turns 0 into 1 (lib/rec/rec.h).
 */
#include "lib/gpu/trec_gpu.h"
#include "lib/lossrule.h"
#include "lib/rec/dump.h"
#include "lib/rec/rec.h"
#include "tools/common/cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char details[] =
    "Every thread is sampled at every tick together with its state (running or\n"
    "not, and with --gil whether it holds the GIL), so converters can show CPU\n"
    "time or wall-clock time from the same recording.\n"
    "\n"
    "The processes the program starts (multiprocessing and DataLoader workers,\n"
    "commands run by a shell, mpirun ranks) are recorded too, unless\n"
    "--no-subprocesses; with --pid, only when --subprocesses is given.\n"
    "\n"
    "--rate: the default 1000 Hz gives 1 ms resolution, the scale of the\n"
    "questions cProfile answers, while costing the program well under 3%\n"
    "(trec reads the program's memory from outside and, unless --blocking,\n"
    "never stops it).\n"
    "Lower rates cost less; rates above a few kHz mostly measure noise.\n"
    "Each tick is taken after a sleep, and some machines (virtual ones\n"
    "above all) wake a sleeper tens of microseconds late, hundreds now and\n"
    "then: at 10 kHz many ticks come over half a period late (the summary\n"
    "counts them).  --spin watches the clock instead, which keeps them on\n"
    "time at the price of one CPU kept busy (yielded to any other task).\n"
    "\n"
    "--blocking stops each running thread (ptrace) while its stack is read,\n"
    "so every stack is exactly one the thread had; the program pays tens of\n"
    "microseconds per stop (more on a busy machine), and its signals reach it\n"
    "up to one tick late (see trec(1)).\n"
    "If ptrace is refused, --pid exits 2; a started program is recorded\n"
    "without stopping, with a warning.\n"
    "\n"
    "With -o - the trace is written to standard output and the program's own\n"
    "standard output is sent to standard error, so it cannot corrupt the\n"
    "stream.  Otherwise the program's input and output are left alone.\n"
    "\n"
    "-o FILE is created under a hidden name beside FILE and renamed to FILE\n"
    "once the program has started: a symlink or hard link at FILE is replaced,\n"
    "not written through; a failed start leaves FILE untouched; a directory is\n"
    "refused; FIFOs and devices are written as they are (see trec(1)).\n"
    "\n"
    "trec exits with the program's exit status (128 + N if it died of signal N).\n"
    "If the trace could not be written to the end (disk full, ulimit -f, closed\n"
    "pipe), recording stops, the file is cut back to its last complete chunk,\n"
    "the program runs on, and trec exits 1 where it would have exited 0.\n"
    "Ctrl-C reaches the program as usual; trec finishes the trace when the\n"
    "program ends.  With --pid, Ctrl-C stops recording and leaves the target\n"
    "running.  Reading another process needs ptrace permission: see trec(1).\n"
    "\n"
    "GPU: when trec starts the program, the CUDA driver in it (and in its\n"
    "children) loads trec's CUPTI library, which records kernels, copies and\n"
    "CUDA API calls with the Python line that launched them (docs/gpu.md);\n"
    "GPU counters come from NVML.  --no-gpu turns both off.  An attached\n"
    "process (--pid) gets GPU counters only.\n"
    "\n"
    "--dump --pid PID prints the stack of every Python thread of PID once (with\n"
    "--subprocesses also of its descendants), innermost frame last, and exits:\n"
    "the same reads as a recording's, so the program is never stopped and a\n"
    "stuck one answers too.  --json prints one JSON document instead (its shape:\n"
    "docs/trec.md).  Exit 0 when stacks were printed, 2 when PID cannot be read.";

static void on_message(void *ctx, rec_msg_level level, const char *text)
{
    if (level == REC_MSG_ERROR)
        cli_error("%s", text);
    else if (level == REC_MSG_WARN)
        cli_warn("%s", text);
    else
        cli_note("%s", text);
}

/* cli_parse answers --version itself; trec's version line also says
 * whether GPU support is built in, so look for it first (before the
 * program's own arguments, where "--version" belongs to the program). */
static void maybe_version(int argc, char **argv, const cli_option *opts)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0 || a[0] != '-' || a[1] == '\0')
            return;
        if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
            printf("trec %s (libtrc %s, format %d.%d)\n%s\n", TRC_VERSION_STRING, trc_version(),
                   TRC_FORMAT_MAJOR, TRC_FORMAT_MINOR, trec_gpu_support());
            exit(CLI_EXIT_OK);
        }
        for (const cli_option *o = opts; o->long_name; o++) {
            int takes = o->type != CLI_FLAG && o->type != CLI_COUNT;
            int is_short = a[1] == o->short_name && a[2] == '\0';
            int is_long = a[1] == '-' && strcmp(a + 2, o->long_name) == 0;
            if (takes && (is_short || is_long))
                i++; /* skip the option's value */
        }
    }
}

/* argv joined with spaces (the segment header's command line). */
static char *join_args(int argc, char **argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

static void human_bytes(uint64_t b, char *out, size_t cap)
{
    if (b < 10 * 1024)
        snprintf(out, cap, "%llu B", (unsigned long long)b);
    else if (b < 10 * 1024 * 1024)
        snprintf(out, cap, "%.1f KiB", b / 1024.0);
    else
        snprintf(out, cap, "%.1f MiB", b / 1048576.0);
}

/* The closing line.  Late and missed ticks are named, with torn ones as
 * a share of all ticks, only when the converters would warn about them
 * (lib/lossrule.h: over the limit, in a run long enough, with some stack
 * read): below that they are the usual noise of a busy machine, and the
 * startup ticks of a program that is not Python (yet) lost nothing.
 * TREC_SELF_TIMING's line has the exact tick counts always. */
static void summary(const rec_result *r)
{
    char bytes[32], lag[160] = "";
    human_bytes(r->bytes, bytes, sizeof bytes);
    if (lossrule_sampling_over(r->samples, r->missed_ticks, r->invalid, r->late_ticks))
        snprintf(lag, sizeof lag, "%.1f%% of %llu ticks late, missed or torn (%llu late, %llu missed), ",
                 lossrule_percent(r->samples, r->missed_ticks, r->invalid, r->late_ticks),
                 (unsigned long long)lossrule_ticks(r->samples, r->missed_ticks, r->invalid),
                 (unsigned long long)r->late_ticks, (unsigned long long)r->missed_ticks);
    fprintf(stderr,
            "trec: %llu samples, %llu thread%s, %llu process%s, %.2f s, %llu invalid, %s%s "
            "written to %s\n",
            (unsigned long long)r->samples, (unsigned long long)r->threads,
            r->threads == 1 ? "" : "s", (unsigned long long)r->processes,
            r->processes == 1 ? "" : "es", (double)r->duration_ns / 1e9,
            (unsigned long long)r->invalid, lag, bytes, r->output_path);
}

int main(int argc, char **argv)
{
    const char *output = "trec-%p.trc";
    long pid = 0;
    double rate = 1000.0, duration = 0.0;
    int subprocesses = 0, no_subprocesses = 0, gil = 0, quiet = 0, verbose = 0, no_gpu = 0, spin = 0,
        blocking = 0, dump = 0, json = 0, locals = 0;
    double gpu_rate = 10.0;
    const cli_option options[] = {
        {"output", 'o', CLI_STRING, &output, "FILE",
         "write the trace to FILE ('-' = stdout, %p = pid; default trec-%p.trc)", 0, 0},
        {"pid", 'p', CLI_INT, &pid, "PID", "record a running process instead of starting one", 1,
         INT_MAX},
        {"duration", 'd', CLI_DOUBLE, &duration, "S", "stop recording after S seconds", 0.001, 1e9},
        {"rate", 'r', CLI_DOUBLE, &rate, "HZ", "ticks per second, every thread each tick (1000)", 1,
         100000},
        {"spin", 0, CLI_FLAG, &spin, NULL,
         "watch the clock between ticks, not sleep: on time at high rates, one CPU busy",
         0, 0},
        {"blocking", 0, CLI_FLAG, &blocking, NULL,
         "stop each thread while its stack is read (exact stacks; costs the program)", 0, 0},
        {"subprocesses", 's', CLI_FLAG, &subprocesses, NULL,
         "record child processes too (the default for a started program; with --pid, "
         "asks for them)", 0, 0},
        {"no-subprocesses", 0, CLI_FLAG, &no_subprocesses, NULL,
         "record only the started program itself, not the processes it starts", 0, 0},
        {"gil", 'g', CLI_FLAG, &gil, NULL, "record which thread holds the GIL", 0, 0},
        {"no-gpu", 0, CLI_FLAG, &no_gpu, NULL, "do not record CUDA activity or GPU counters", 0, 0},
        {"gpu-rate", 0, CLI_DOUBLE, &gpu_rate, "HZ", "GPU counter (NVML) samples per second (10)",
         0.1, 1000},
        {"dump", 0, CLI_FLAG, &dump, NULL,
         "with --pid: print every thread's Python stack once, record nothing", 0, 0},
        {"json", 0, CLI_FLAG, &json, NULL, "with --dump: print one JSON document, not text", 0,
         0},
        {"locals", 0, CLI_FLAG, &locals, NULL, "with --dump: also each frame's local variables",
         0, 0},
        {"quiet", 'q', CLI_FLAG, &quiet, NULL, "no summary line and no warnings", 0, 0},
        {"verbose", 'v', CLI_FLAG, &verbose, NULL,
         "say how each process is read: its CPython and where its memory layout comes from", 0, 0},
        {NULL, 0, CLI_FLAG, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        .name = "trec",
        .usage = "[options] (PROGRAM [ARG...] | -- PROGRAM [ARG...] | --pid PID)\n"
                 "       trec --dump --pid PID [--subprocesses] [--json] [--locals]",
        .summary = "Record the Python stacks of every thread of a program into a .trc trace.",
        .details = details,
        .options = options,
    };
    maybe_version(argc, argv, options);
    char **pos;
    int npos;
    cli_parse(&tool, argc, argv, 1, &pos, &npos);
    cli_quiet = quiet;
    /* the CUDA injection in the program (and its children) warns too;
     * setenv fails only for want of memory, which costs only the quiet */
    if (quiet)
        (void)setenv("TREC_GPU_QUIET", "1", 1);
    if (json && !dump)
        cli_die(CLI_EXIT_USAGE, "--json goes with --dump");
    if (locals && !dump)
        cli_die(CLI_EXIT_USAGE, "--locals goes with --dump");
    if (dump) {
        if (pid <= 0 || npos > 0)
            cli_die(CLI_EXIT_USAGE, "--dump reads a running process: give --pid PID and no "
                                    "program");
        free(pos);
        return rec_dump_run((pid_t)pid, subprocesses, json, locals, stdout, on_message, NULL);
    }
    if (pid > 0 && npos > 0)
        cli_die(CLI_EXIT_USAGE, "give either --pid or a program to run, not both");
    if (pid <= 0 && npos == 0)
        cli_die(CLI_EXIT_USAGE, "nothing to record: give a program to run or --pid PID "
                                "(try 'trec --help')");
    if (subprocesses && no_subprocesses)
        cli_die(CLI_EXIT_USAGE, "give either --subprocesses or --no-subprocesses, not both");

    char *cmdline = join_args(argc, argv);
    rec_config cfg = {
        .output = output,
        .pid = (pid_t)pid,
        .argv = pos,
        .rate_hz = rate,
        .duration_ns = (int64_t)(duration * 1e9),
        /* a started program's children by default, an attached
         * process's only when asked (docs/trec.md "Subprocesses") */
        .subprocesses = pid > 0 ? subprocesses : !no_subprocesses,
        .gil = gil,
        .spin = spin,
        .blocking = blocking,
        .verbose = verbose && !quiet,
        .no_gpu = no_gpu,
        .gpu_rate_hz = gpu_rate,
        .command_line = cmdline ? cmdline : "",
        .message = on_message,
        /* diagnostics for bench/trec.sh: the recorder's own cost per sample */
        .self_timing = getenv("TREC_SELF_TIMING") != NULL,
    };
    rec_result res;
    int status = rec_run(&cfg, &res);
    if (res.trace_written && !quiet)
        summary(&res);
    if (res.trace_written && cfg.self_timing)
        fprintf(stderr,
                "trec: self-timing: %llu ticks, per sample p50 %.2f us, p90 %.2f us, "
                "p99 %.2f us, max %.2f us; all CPU %.1f ms = %.2f us per sample; "
                "%llu samples repeated from threads that had not run; "
                "switch records for %llu threads; %llu torn reads retried, %llu dropped; "
                "%llu threads stopped for reads (%llu stops slower than the wait); "
                "%llu ticks taken, %llu late, %llu missed\n",
                (unsigned long long)res.cost_n, res.cost_p50_ns / 1e3, res.cost_p90_ns / 1e3,
                res.cost_p99_ns / 1e3, res.cost_max_ns / 1e3, res.cpu_ns / 1e6,
                res.samples ? res.cpu_ns / 1e3 / (double)res.samples : 0.0,
                (unsigned long long)res.quiet_samples, (unsigned long long)res.switch_threads,
                (unsigned long long)res.torn_retries, (unsigned long long)res.invalid,
                (unsigned long long)res.stops, (unsigned long long)res.slow_stops,
                (unsigned long long)res.ticks, (unsigned long long)res.late_ticks,
                (unsigned long long)res.missed_ticks);
    free(cmdline);
    free(pos);
    return status;
}
