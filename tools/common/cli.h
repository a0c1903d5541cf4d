/*
 * cli.h — what every trc command shares: the option table and its parser,
 * the message helper, exit codes, and output written to a temp file and
 * renamed.  Tools are thin main()s over these (see docs/design/architecture.md §5).
 *
 * Exit codes (docs/exit-codes.md):
 *   0  success
 *   1  input damaged or data lost, output written from what was readable
 *   2  usage error, or input unusable (not a trace, unsupported version, I/O)
 *   3+ tool-specific (trec passes through the program's status instead)
 */
#ifndef TRC_TOOLS_CLI_H
#define TRC_TOOLS_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_DAMAGED = 1, CLI_EXIT_USAGE = 2 };

typedef enum cli_arg_type {
    CLI_FLAG,     /* no argument; *(int *)dest = 1 */
    CLI_STRING,   /* *(const char **)dest = argument (borrowed from argv) */
    CLI_INT,      /* *(long *)dest, decimal, range-checked against min/max */
    CLI_DOUBLE,   /* *(double *)dest, range-checked */
    CLI_LIST,     /* repeatable string: cli_list *dest gets each value appended */
    CLI_COUNT     /* no argument; ++*(int *)dest */
} cli_arg_type;

typedef struct cli_list {
    const char **items;  /* borrowed from argv; array owned by the list */
    size_t n, cap;
} cli_list;
void cli_list_cleanup(cli_list *l);

typedef struct cli_option {
    const char *long_name;   /* without "--"; NULL ends the table */
    char short_name;         /* 0 = none */
    cli_arg_type type;
    void *dest;
    const char *metavar;     /* "FILE", "HZ"; NULL for flags */
    const char *help;        /* one line for --help */
    double min, max;         /* for CLI_INT / CLI_DOUBLE when min < max */
} cli_option;

typedef struct cli_tool {
    const char *name;        /* "trc2collapsed" */
    const char *usage;       /* "[options] [FILE]" */
    const char *summary;     /* one line: what it does */
    const char *details;     /* paragraphs after the option list, or NULL */
    const cli_option *options;        /* tool's own options */
    const cli_option *shared_options; /* e.g. cli_selection_options(), or NULL */
} cli_tool;

/* Start-up shared by every tool (startup.c), run by cli_parse before it
 * parses: ignores SIGXFSZ (a write past `ulimit -f` then fails with EFBIG
 * and is reported) and reads the test hooks TRC_TEST_FAIL_ALLOC=N (the Nth
 * allocation and all later ones fail) and TRC_TEST_COUNT_ALLOCS=1 (print
 * "TOOL: allocations: N" at exit).  Idempotent. */
void cli_startup(void);

/* Parse argv.  Handles --help (prints help to stdout, exit 0) and
 * --version (exit 0) itself, "--" ends options, "-" is a positional.
 * "--opt=value" and "--opt value" both work; short flags may not be
 * bundled.  If stop_at_first_positional, everything from the first
 * positional on is returned as positionals untouched (for trec's
 * "trec -o x python y.py -v").  On a usage error prints
 * "TOOL: error: ..." plus a hint and exits 2 (this never returns then).
 * Positionals are stored in *pos (borrowed from argv), count in *npos;
 * the array is the caller's, freed with trc_free (lib/util/alloc.h). */
void cli_parse(const cli_tool *tool, int argc, char **argv, int stop_at_first_positional,
               char ***pos, int *npos);

/* Print the full help (usage, summary, options, details) to f. */
void cli_print_help(const cli_tool *tool, FILE *f);

/* Messages, all to stderr, one line, prefixed "TOOL: ".  The tool name is
 * set once by cli_parse (or cli_set_program). */
void cli_set_program(const char *name);
const char *cli_program(void);
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_error then exit(code). */
void cli_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
extern int cli_quiet;  /* suppresses cli_note and cli_warn */

/* Input: open path, or stdin for NULL or "-".  On failure prints the
 * reader's one-line error and exits 2. */
trc_reader *cli_open_input(const char *path);

/* Output (output.c): standard output for NULL or "-"; otherwise a hidden temp file
 * ".NAME.XXXXXX" beside path (created exclusively, mode as a new file or
 * the replaced file's) renamed over path by cli_output_commit.  A symbolic
 * link at path is replaced, not written through; devices, FIFOs and our
 * own descriptors (/dev/stdout, /dev/fd/N) are written directly.  A
 * directory, an unwritable file or a failure to create dies (exit 2, one
 * line) before anything is read.  Until committed or aborted, the temp
 * file is removed at exit() and on SIGINT/SIGTERM/SIGHUP.
 * cli_output_commit flushes, fsyncs, renames and reports I/O errors as
 * "PATH: write failed: REASON" (returns 0 on success, -1 after printing;
 * the temp file is gone and path untouched); cli_output_abort removes the
 * temp file (output already sent to stdout stays sent).  Both release what
 * open allocated and close f.  f is a stream of our own over the
 * descriptor, which keeps the errno of the first failed write (stdio
 * forgets it): *out must stay at the same address until commit/abort. */
typedef struct cli_output {
    FILE *f;
    char *path;      /* final path, NULL for stdout */
    char *tmp_path;  /* the temp file, NULL when direct */
    int direct;      /* a device, FIFO or descriptor: written in place, no rename */
    int fd;          /* the descriptor under f */
    int own_fd;      /* closed with f (not for standard output) */
    int err;         /* errno of the first failed write, 0 if none */
} cli_output;
void cli_output_open(cli_output *out, const char *path, int binary);
int cli_output_commit(cli_output *out);
void cli_output_abort(cli_output *out);

/* Parse a non-negative decimal "1.5" seconds into ns; -1 on error. */
int64_t cli_parse_seconds(const char *s);

#endif /* TRC_TOOLS_CLI_H */
