/*
 * msg.c — the one message helper: "TOOL: error: ...", "TOOL: warning: ...",
 * and the input/output plumbing every converter shares (contract in cli.h).
 */
#include "tools/common/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

void cli_output_open(cli_output *out, const char *path, int binary)
{
    memset(out, 0, sizeof *out);
    if (!path || strcmp(path, "-") == 0) {
        out->f = stdout;
        return;
    }
    /* Only a regular file (or a new name) gets temp-and-rename: renaming
     * over /dev/null or a FIFO would replace the device with a file. */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        out->f = fopen(path, binary ? "wb" : "w");
        if (!out->f)
            cli_die(CLI_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
        out->direct = 1;
        out->path = strdup(path);
        return;
    }
    size_t n = strlen(path) + 32;
    out->path = strdup(path);
    out->tmp_path = malloc(n);
    if (!out->path || !out->tmp_path)
        cli_die(CLI_EXIT_USAGE, "out of memory");
    snprintf(out->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(out->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        cli_die(CLI_EXIT_USAGE, "%s: cannot create: %s", path, strerror(errno));
    out->f = fdopen(fd, binary ? "wb" : "w");
    if (!out->f)
        cli_die(CLI_EXIT_USAGE, "%s: %s", path, strerror(errno));
}

int cli_output_commit(cli_output *out)
{
    const char *name = out->path ? out->path : "<stdout>";
    int bad = 0;
    if (fflush(out->f) != 0 || ferror(out->f))
        bad = errno ? errno : EIO;
    if (!out->path) {
        if (bad) {
            if (bad != EPIPE)
                cli_error("%s: write failed: %s", name, strerror(bad));
            return -1;
        }
        return 0;
    }
    if (out->direct) {
        if (fclose(out->f) != 0 && !bad)
            bad = errno ? errno : EIO;
        out->f = NULL;
        if (bad)
            cli_error("%s: write failed: %s", name, strerror(bad));
        free(out->path);
        out->path = NULL;
        return bad ? -1 : 0;
    }
    if (!bad && fsync(fileno(out->f)) != 0 && errno != EINVAL)
        bad = errno;
    if (fclose(out->f) != 0 && !bad)
        bad = errno ? errno : EIO;
    out->f = NULL;
    if (!bad && rename(out->tmp_path, out->path) != 0)
        bad = errno;
    if (bad) {
        cli_error("%s: write failed: %s", name, strerror(bad));
        unlink(out->tmp_path);
    }
    free(out->path);
    free(out->tmp_path);
    out->path = out->tmp_path = NULL;
    return bad ? -1 : 0;
}

void cli_output_abort(cli_output *out)
{
    if (!out->path)
        return;
    if (out->f)
        fclose(out->f);
    if (!out->direct)
        unlink(out->tmp_path);
    free(out->path);
    free(out->tmp_path);
    out->f = NULL;
    out->path = out->tmp_path = NULL;
}
