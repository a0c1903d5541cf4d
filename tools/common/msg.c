/*
 * msg.c — the one message helper: "TOOL: error: ...", "TOOL: warning: ...",
 * and opening the input every converter shares (contract in cli.h; the
 * output side is output.c).
 */
#include "tools/common/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *program = "trc";
int cli_quiet = 0;

void cli_set_program(const char *name) { program = name; }
const char *cli_program(void) { return program; }

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: %s", program, kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("error: ", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    if (cli_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning: ", fmt, ap);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    if (cli_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void cli_die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("error: ", fmt, ap);
    va_end(ap);
    exit(code);
}

trc_reader *cli_open_input(const char *path)
{
    trc_status st = TRC_OK;
    trc_reader *r;
    if (!path || strcmp(path, "-") == 0) {
        if (isatty(STDIN_FILENO))
            cli_die(CLI_EXIT_USAGE, "no input: give a .trc file or pipe one in (see --help)");
        r = trc_reader_open_fd(STDIN_FILENO, "<stdin>", &st);
        path = "<stdin>";
    } else {
        r = trc_reader_open_path(path, &st);
    }
    if (!r) {
        if (st == TRC_ERR_IO)
            cli_die(CLI_EXIT_USAGE, "%s: %s", path, strerror(errno));
        cli_die(CLI_EXIT_USAGE, "%s: %s", path, trc_status_str(st));
    }
    return r;
}
