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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/alloc.h"

#define WAIT_MS 100

int top_source_open(top_source *s, const char *path, int follow)
{
    memset(s, 0, sizeof *s);
    s->follow = follow;
    if (!path || strcmp(path, "-") == 0) {
        s->fd = STDIN_FILENO;
        return 0;
    }
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0)
        return -1;
    s->own_fd = 1;
    return 0;
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

int top_source_spawn(top_source *s, char *const args[], int quiet_stderr, char *why, size_t n)
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
    s->fd = pfd[0];
    s->own_fd = 1;
    return 0;
}

long top_source_read(void *ctx, void *buf, size_t len)
{
    top_source *s = ctx;
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

int top_source_close(top_source *s, int user_stopped, FILE *echo)
{
    int code = 0;
    if (s->child > 0) {
        kill(s->child, SIGINT);
        while (waitpid(s->child, &s->child_status, 0) < 0 && errno == EINTR)
            ;
        if (WIFEXITED(s->child_status))
            code = WEXITSTATUS(s->child_status);
        else if (WIFSIGNALED(s->child_status) && WTERMSIG(s->child_status) != SIGINT)
            code = 128 + WTERMSIG(s->child_status);
        s->child = 0;
        if (user_stopped)
            code = 0;
    }
    if (s->child_err) {
        if (code) {
            char line[512];
            rewind(s->child_err);
            while (fgets(line, sizeof line, s->child_err))
                fputs(line, echo);
        }
        fclose(s->child_err);
        s->child_err = NULL;
    }
    if (s->own_fd && s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->own_fd = 0;
    return code;
}
