/*
 * trc-dump — show what is inside a .trc file, chunk by chunk and record by
 * record (spec/trc-format.md §4–§7), check it (§8), or summarise it.
 * A thin main over lib/dump/ (the listing, --check, --summary) and the
 * shared CLI helpers; exit codes as in docs/exit-codes.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/alloc.h"
#include "lib/dump/dump.h"
#include "tools/common/cli.h"

static int opt_check, opt_summary, opt_events, opt_hex, opt_strict;

static const cli_option options[] = {
    { "check", 'c', CLI_FLAG, &opt_check, NULL,
      "validate the whole file; print each problem and a summary line", 0, 0 },
    { "strict", 0, CLI_FLAG, &opt_strict, NULL,
      "with --check: any loss the recorder wrote (a tick late, missed or torn) is a finding", 0, 0 },
    { "summary", 's', CLI_FLAG, &opt_summary, NULL,
      "print counts per event type, each thread, samples, start date, losses", 0, 0 },
    { "events", 'e', CLI_FLAG, &opt_events, NULL,
      "print one line per event as converters see them (ids resolved)", 0, 0 },
    { "hex", 'x', CLI_FLAG, &opt_hex, NULL,
      "listing: also show each chunk header and record body in hex", 0, 0 },
    { NULL, 0, 0, NULL, NULL, NULL, 0, 0 },
};

static const cli_tool tool = {
    "trc-dump", "[options] [FILE]",
    "List the chunks and records of a .trc trace (FILE or - for stdin).",
    "Without options, prints one line per chunk (offset, kind, sequence, flags,\n"
    "stored and decoded length, base time, CRC) and one indented line per record\n"
    "(offset in the payload, type, length, decoded fields).  Problems go to stderr\n"
    "as \"trc-dump: error: FILE: offset 0x..: what\".\n\n"
    "--check's summary line ends in ok, lossy, incomplete, damaged or unusable:\n"
    "losses the recorder wrote are counted there, and with --strict any of them\n"
    "is a finding (lossy).\n\n"
    "Exit status: 0 intact; 1 damaged but partly readable, or with --check\n"
    "incomplete (the recorder was killed: no end record) or, with --strict,\n"
    "lossy; 2 usage error or input unusable (not a trace, unsupported version,\n"
    "unreadable).",
    options, NULL,
};

static void print_problem(void *ctx, const char *line)
{
    cli_error("%s", line);
}

static void print_warning(void *ctx, const char *line)
{
    cli_warn("%s", line);
}

static long read_fd(void *ctx, void *buf, size_t len)
{
    int fd = *(int *)ctx;
    ssize_t n;
    do
        n = read(fd, buf, len);
    while (n < 0 && errno == EINTR);
    return (long)n;
}

/* The listing works on raw bytes, not through the reader. */
static int run_listing(const char *path, FILE *out, const dump_opts *o)
{
    int fd = STDIN_FILENO, rc;

    if (path && strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            cli_die(CLI_EXIT_USAGE, "%s: %s", path, strerror(errno));
    } else if (isatty(STDIN_FILENO)) {
        cli_die(CLI_EXIT_USAGE, "no input: give a .trc file or pipe one in (see --help)");
    }
    rc = dump_listing(read_fd, &fd, out, o);
    if (fd != STDIN_FILENO)
        close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    char **pos;
    int npos, rc;
    const char *path;
    dump_opts o = { 0 };
    cli_output out;

    cli_parse(&tool, argc, argv, 0, &pos, &npos);
    if (npos > 1)
        cli_die(CLI_EXIT_USAGE, "one input file at most (got %d; see --help)", npos);
    if (opt_check + opt_summary + opt_events > 1)
        cli_die(CLI_EXIT_USAGE, "--check, --summary and --events cannot be combined");
    if (opt_strict && !opt_check)
        cli_die(CLI_EXIT_USAGE, "--strict goes with --check");
    path = npos ? pos[0] : NULL;
    o.name = path && strcmp(path, "-") != 0 ? path : "<stdin>";
    o.problem = print_problem;
    o.warning = print_warning;
    o.strict = opt_strict;
    o.hex = opt_hex;
    cli_output_open(&out, NULL, 0);
    if (opt_check || opt_summary || opt_events) {
        trc_reader *r = cli_open_input(path);
        rc = opt_check     ? dump_check(r, out.f, &o)
             : opt_summary ? dump_summary(r, out.f, &o)
                           : dump_events(r, out.f, &o);
        trc_reader_free(r);
    } else {
        rc = run_listing(path, out.f, &o);
    }
    trc_free(pos);
    if (cli_output_commit(&out) != 0)
        rc = CLI_EXIT_USAGE;
    return rc;
}
