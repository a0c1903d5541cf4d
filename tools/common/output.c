/*
 * output.c — where a tool's output goes (contract in cli.h "Output";
 * user-facing rules in docs/converters.md "Output files").
 *
 * A file named with -o is never written in place: the output goes to a
 * hidden temp file beside it (".NAME.XXXXXX", created O_EXCL by mkstemp,
 * so a planted file or symlink at that name is never opened), which is
 * renamed over NAME only when everything was written and synced.  An
 * error, a full disk or `ulimit -f` leaves NAME as it was, and the temp
 * file is removed: on every error path, on exit() from anywhere (cli_die
 * while reading) and on SIGINT/SIGTERM/SIGHUP.
 *
 * What NAME may be:
 *  - a new name, or a regular file (kept permissions; a read-only file is
 *    refused rather than replaced): temp file and rename; a new file gets
 *    0666 & ~umask like a shell redirection.
 *  - a symbolic link to a regular file, or a dangling one: the LINK is
 *    replaced by the new file, the file it pointed to is left untouched.
 *    Writing through a link would let whoever can plant one in a shared
 *    directory (/tmp) choose which file gets clobbered.
 *  - one of our own descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N,
 *    also through links): written to that descriptor, so "-o /dev/stdout"
 *    follows the shell's redirection (renaming over /dev/stdout would
 *    replace the system's link).
 *  - a device or FIFO (/dev/null, a named pipe), directly or through a
 *    link: written in place; there is nothing to rename over.
 *  - a directory: refused, "NAME: is a directory", before reading input.
 */
#include "tools/common/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/alloc.h"

/* The temp file not yet committed: removed at exit or on a fatal signal.
 * A copy of its name in static storage, because a signal handler may only
 * call unlink() on memory it can trust. */
static char pending_tmp[PATH_MAX + 32];
static volatile sig_atomic_t have_pending;
static const int fatal_sigs[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved_sigs[3];

static void remove_pending(void)
{
    if (have_pending) {
        have_pending = 0;
        unlink(pending_tmp);
    }
}

static void on_fatal_signal(int sig)
{
    if (have_pending)
        unlink(pending_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void set_pending(const char *tmp)
{
    static int registered;
    if (!registered) {
        atexit(remove_pending);
        registered = 1;
    }
    snprintf(pending_tmp, sizeof pending_tmp, "%s", tmp);
    have_pending = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++) {
        /* a signal the caller ignores (nohup) stays ignored */
        if (sigaction(fatal_sigs[i], NULL, &saved_sigs[i]) == 0 &&
            saved_sigs[i].sa_handler != SIG_IGN)
            sigaction(fatal_sigs[i], &sa, NULL);
    }
}

static void clear_pending(void)
{
    if (!have_pending)
        return;
    have_pending = 0;
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
        sigaction(fatal_sigs[i], &saved_sigs[i], NULL);
}

/* The descriptor number if p names one of this process's descriptors
 * literally, else -1. */
static int fd_name(const char *p)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(p, std[i]) == 0)
            return i;
    }
    const char *rest = NULL;
    char own[48];
    snprintf(own, sizeof own, "/proc/%ld/fd/", (long)getpid());
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    for (int i = 0; i < 3 && !rest; i++) {
        if (strncmp(p, dirs[i], strlen(dirs[i])) == 0)
            rest = p + strlen(dirs[i]);
    }
    if (!rest && strncmp(p, own, strlen(own)) == 0)
        rest = p + strlen(own);
    if (!rest || *rest < '0' || *rest > '9')
        return -1;
    char *end;
    errno = 0;
    long n = strtol(rest, &end, 10);
    return errno || *end || n > INT_MAX ? -1 : (int)n;
}

/* Follows path through symbolic links (at most 16) and returns the
 * descriptor it names (see fd_name), or -1 when it names something
 * else.  The /proc links are recognised by name before they are
 * followed: following /proc/self/fd/1 would give the file's own path. */
static int fd_alias(const char *path)
{
    char cur[PATH_MAX], next[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return -1;
    for (int hop = 0; hop < 16; hop++) {
        int fd = fd_name(cur);
        if (fd >= 0)
            return fd;
        ssize_t n = readlink(cur, next, sizeof next - 1);
        if (n < 0)
            return -1; /* not a link (or unreadable): not an alias */
        next[n] = '\0';
        if (next[0] == '/') {
            memcpy(cur, next, (size_t)n + 1);
        } else {
            char *slash = strrchr(cur, '/');
            size_t keep = slash ? (size_t)(slash - cur) + 1 : 0;
            if (keep + (size_t)n + 1 > sizeof cur)
                return -1;
            memcpy(cur + keep, next, (size_t)n + 1);
        }
    }
    return -1;
}

/* The stream under every output: plain write(2) calls that remember the
 * first failure, so "write failed: REASON" names the real reason (ENOSPC,
 * EFBIG) even when an exporter notices ferror() much later. */
static ssize_t stream_write(void *cookie, const char *buf, size_t n)
{
    cli_output *out = cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(out->fd, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!out->err)
                out->err = w < 0 ? errno : EIO;
            errno = out->err;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static int stream_close(void *cookie)
{
    cli_output *out = cookie;
    if (!out->own_fd || close(out->fd) == 0)
        return 0;
    if (!out->err)
        out->err = errno; /* NFS and friends report a full disk here */
    return -1;
}

/* Wraps fd (owned by out from now on when own_fd) in out->f.  Dies on
 * failure after closing fd. */
static void open_stream(cli_output *out, const char *path, int fd, int own_fd)
{
    static const cookie_io_functions_t io = {NULL, stream_write, NULL, stream_close};
    out->fd = fd;
    out->own_fd = own_fd;
    out->f = fopencookie(out, "w", io);
    if (!out->f) {
        int e = errno;
        if (own_fd)
            close(fd);
        cli_output_abort(out);
        cli_die(CLI_EXIT_USAGE, "%s: %s", path ? path : "<stdout>", strerror(e));
    }
}

/* Writes straight to fd (owned by out from now on). */
static void open_direct(cli_output *out, const char *path, int fd)
{
    out->direct = 1;
    out->path = trc_strdup(path);
    if (!out->path) {
        close(fd);
        cli_die(CLI_EXIT_USAGE, "out of memory");
    }
    open_stream(out, path, fd, 1);
}

static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* binary changes nothing on POSIX: the streams never translate. */
void cli_output_open(cli_output *out, const char *path, int binary)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    if (!path || strcmp(path, "-") == 0) {
        fflush(stdout); /* whatever the tool printed before comes first */
        open_stream(out, NULL, STDOUT_FILENO, 0);
        return;
    }
    if (!*path)
        cli_die(CLI_EXIT_USAGE, "the output file name is empty");
    int alias = fd_alias(path);
    if (alias >= 0) {
        int fd = fcntl(alias, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
            cli_die(CLI_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
        open_direct(out, path, fd);
        return;
    }
    struct stat st, lst;
    int exists = stat(path, &st) == 0;
    int is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (exists && S_ISDIR(st.st_mode))
        cli_die(CLI_EXIT_USAGE, "%s: is a directory", path);
    if (exists && !S_ISREG(st.st_mode)) {
        /* No O_CREAT: it exists; no O_TRUNC: meaningless for a device. */
        int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
            cli_die(CLI_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
        open_direct(out, path, fd);
        return;
    }
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base)
        cli_die(CLI_EXIT_USAGE, "%s: is a directory", path);
    if (exists && !is_link && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
        cli_die(CLI_EXIT_USAGE, "%s: cannot write: %s", path, strerror(errno));
    mode_t mode = exists && !is_link ? st.st_mode & 0777 : new_file_mode();

    /* ".NAME.XXXXXX" in NAME's directory, so rename() never crosses a
     * file system; NAME is shortened to keep within NAME_MAX. */
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t blen = strlen(base) > 200 ? 200 : strlen(base);
    size_t n = dirlen + blen + 16;
    out->path = trc_strdup(path);
    out->tmp_path = trc_malloc(n);
    if (!out->path || !out->tmp_path) {
        trc_free(out->path);
        trc_free(out->tmp_path);
        out->path = out->tmp_path = NULL;
        cli_die(CLI_EXIT_USAGE, "out of memory");
    }
    snprintf(out->tmp_path, n, "%.*s.%.*s.XXXXXX", (int)dirlen, path, (int)blen, base);
    int fd = mkostemp(out->tmp_path, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        trc_free(out->path);
        trc_free(out->tmp_path);
        out->path = out->tmp_path = NULL;
        cli_die(CLI_EXIT_USAGE, "%s: cannot create: %s", path, strerror(e));
    }
    set_pending(out->tmp_path);
    if (fchmod(fd, mode) != 0) {
        int e = errno;
        close(fd);
        cli_output_abort(out);
        cli_die(CLI_EXIT_USAGE, "%s: %s", path, strerror(e));
    }
    open_stream(out, path, fd, 1);
}

int cli_output_commit(cli_output *out)
{
    const char *name = out->path ? out->path : "<stdout>";
    int bad = 0;
    errno = 0;
    if (fflush(out->f) != 0 || ferror(out->f))
        bad = out->err ? out->err : errno ? errno : EIO;
    /* EINVAL/ENOTSUP: a pipe or a device that cannot sync */
    if (!bad && out->path && !out->direct && fsync(out->fd) != 0 && errno != EINVAL &&
        errno != ENOTSUP)
        bad = errno;
    if (fclose(out->f) != 0 && !bad)
        bad = out->err ? out->err : errno ? errno : EIO;
    out->f = NULL;
    if (!bad && out->path && !out->direct && rename(out->tmp_path, out->path) != 0)
        bad = errno;
    /* a reader that went away (EPIPE) is not worth a message */
    if (bad && !(bad == EPIPE && !out->path))
        cli_error("%s: write failed: %s", name, strerror(bad));
    if (out->path && !out->direct) {
        if (bad)
            unlink(out->tmp_path);
        clear_pending();
    }
    trc_free(out->path);
    trc_free(out->tmp_path);
    out->path = out->tmp_path = NULL;
    return bad ? -1 : 0;
}

void cli_output_abort(cli_output *out)
{
    if (out->f)
        fclose(out->f); /* stdout: what was written goes out */
    if (out->path && !out->direct && out->tmp_path) {
        unlink(out->tmp_path);
        clear_pending();
    }
    trc_free(out->path);
    trc_free(out->tmp_path);
    out->f = NULL;
    out->path = out->tmp_path = NULL;
}
