/*
 * tools/common/top_source.c — trc-top's input (contract in
 * top_source.h).
 */
#include "tools/common/top_source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/alloc.h"
#include "tools/common/top_escape.h"

#define WAIT_MS 100

int top_source_open(top_source *s, const char *path, int follow, double wait_s)
{
    memset(s, 0, sizeof *s);
    s->follow = follow;
    if (!path || strcmp(path, "-") == 0) {
        s->fd = STDIN_FILENO;
        return 0;
    }
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) {
        /* a recording about to start: its file is waited for */
        if (!follow || errno != ENOENT)
            return -1;
        s->path = path;
        s->wait_s = wait_s;
        s->waiting = 1;
        return 0;
    }
    s->own_fd = 1;
    return 0;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --follow of a file not created yet: open it once it is.  0; 1 when
 * stopped meanwhile; -1 with errno (ETIMEDOUT when the wait ran out). */
static int wait_created(top_source *s)
{
    double until = s->wait_s > 0 ? mono_s() + s->wait_s : 0;
    for (;;) {
        if (s->stop)
            return 1;
        s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
        if (s->fd >= 0) {
            s->own_fd = 1;
            s->waiting = 0;
            return 0;
        }
        if (errno != ENOENT) {
            s->waiting = 0;
            return -1;
        }
        if (until > 0 && mono_s() >= until) {
            s->waiting = 0;
            s->timed_out = 1;
            errno = ETIMEDOUT;
            return -1;
        }
        struct timespec ts = {0, WAIT_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* BINDIR/trec into out. */
static int trec_path(char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    int w = snprintf(out, n, "%s/trec", exe);
    return w > 0 && (size_t)w < n ? 0 : -1;
}

int top_source_spawn(top_source *s, char *const args[], int program, int quiet_stderr, char *why,
                     size_t n)
{
    char trec[PATH_MAX];
    int pfd[2];
    memset(s, 0, sizeof *s);
    s->fd = -1;
    if (trec_path(trec, sizeof trec) != 0 || access(trec, X_OK) != 0) {
        snprintf(why, n, "cannot find trec beside this program (looked for %s)", trec);
        return -1;
    }
    size_t nargs = 0;
    while (args[nargs])
        nargs++;
    char **argv = trc_calloc(nargs + 4, sizeof *argv);
    if (!argv) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    argv[0] = trec;
    argv[1] = "-o";
    argv[2] = "-";
    memcpy(argv + 3, args, nargs * sizeof *argv);
    if (quiet_stderr && !(s->child_err = tmpfile())) {
        snprintf(why, n, "cannot make a temporary file: %s", strerror(errno));
        trc_free(argv);
        return -1;
    }
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        snprintf(why, n, "pipe: %s", strerror(errno));
        trc_free(argv);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], STDOUT_FILENO);
        if (s->child_err)
            dup2(fileno(s->child_err), STDERR_FILENO);
        /* Ctrl-C on the screen is trc-top's: it stops trec itself. */
        setpgid(0, 0);
        execv(trec, argv);
        _exit(127);
    }
    int err = errno;
    trc_free(argv);
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        snprintf(why, n, "fork: %s", strerror(err));
        return -1;
    }
    s->child = pid;
    s->program = program;
    s->fd = pfd[0];
    s->own_fd = 1;
    return 0;
}

long top_source_read(void *ctx, void *buf, size_t len)
{
    top_source *s = ctx;
    if (s->fd < 0 && s->path) {
        int w = wait_created(s);
        if (w != 0)
            return w > 0 ? 0 : -1;
    }
    for (;;) {
        if (s->stop)
            return 0;
        struct pollfd p = {s->fd, POLLIN, 0};
        int r = poll(&p, 1, WAIT_MS);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        ssize_t got = read(s->fd, buf, len);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got != 0 || !s->follow)
            return (long)got;
        /* A regular file polls readable at its end: wait for the writer. */
        struct timespec ts = {0, WAIT_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

void top_source_recorder_message(top_source *s, char *buf, size_t n)
{
    char tail[512];
    struct stat st;
    if (!n)
        return;
    buf[0] = 0;
    if (!s->child_err || fstat(fileno(s->child_err), &st) != 0 || st.st_size <= 0)
        return;
    /* the last lines: read at the end, apart from the stream's position */
    off_t at = st.st_size > (off_t)sizeof tail ? st.st_size - (off_t)sizeof tail : 0;
    ssize_t got = pread(fileno(s->child_err), tail, sizeof tail, at);
    if (got <= 0)
        return;
    size_t end = (size_t)got;
    while (end > 0 && (tail[end - 1] == '\n' || tail[end - 1] == '\r' || tail[end - 1] == ' '))
        end--;
    size_t start = end;
    while (start > 0 && tail[start - 1] != '\n')
        start--;
    while (start < end && ((unsigned char)tail[start] & 0xc0) == 0x80)
        start++; /* a line longer than the tail: not from inside a character */
    top_escape_strip(tail + start, end - start, buf, n);
}

/* Reap the recorder, waiting at most wait_s seconds (< 0: for ever).
 * Meanwhile what it still writes is read and dropped: a full pipe would
 * block it, and a closed one would make it report a failed write.  1 once
 * reaped, 0 when it still runs. */
static int reap(top_source *s, double wait_s)
{
    double until = mono_s() + wait_s;
    for (;;) {
        pid_t got = waitpid(s->child, &s->child_status, WNOHANG);
        if (got == s->child)
            return 1;
        if (got < 0 && errno != EINTR)
            return 1; /* not ours to wait for any more: nothing left to stop */
        if (wait_s >= 0 && mono_s() >= until)
            return 0;
        struct pollfd p = {s->fd, POLLIN, 0};
        if (s->fd >= 0 && poll(&p, 1, 20) > 0) {
            char drop[4096];
            if (read(s->fd, drop, sizeof drop) > 0)
                continue;
            close(s->fd); /* its end: nothing more to drop */
            s->fd = -1;
        } else if (s->fd < 0) {
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
}

int top_source_close(top_source *s, FILE *echo)
{
    int code = 0;
    if (s->child > 0) {
        if (!reap(s, 0)) {
            s->stopped = 1;
            if (!s->program) {
                /* --pid: trec ends its recording; the process is not touched */
                kill(s->child, SIGINT);
                reap(s, -1);
            } else {
                kill(s->child, SIGTERM);
                if (!reap(s, TOP_STOP_WAIT_S)) {
                    /* the program's group is trec's (setpgid in the child) */
                    kill(-s->child, SIGKILL);
                    reap(s, -1);
                }
            }
        }
        if (WIFEXITED(s->child_status))
            code = WEXITSTATUS(s->child_status);
        else if (WIFSIGNALED(s->child_status))
            code = 128 + WTERMSIG(s->child_status);
        s->child = 0;
    }
    if (s->child_err) {
        char buf[4096];
        size_t got;
        rewind(s->child_err);
        while ((got = fread(buf, 1, sizeof buf, s->child_err)) > 0)
            fwrite(buf, 1, got, echo);
        fflush(echo);
        fclose(s->child_err);
        s->child_err = NULL;
    }
    if (s->own_fd && s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->own_fd = 0;
    return code;
}
