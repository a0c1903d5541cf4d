/*
 * spawn.c — starting the program to record.
 *
 * The child is forked first and held before exec on a "go" pipe, so the
 * recorder knows the pid (for "%p" in the output name) and can open the
 * output before the program runs, and can still back out without the
 * program ever running.  A second close-on-exec pipe carries the errno
 * of a failed exec; end-of-file on it means exec succeeded, after which
 * /proc/PID/exe and maps describe the program, not a copy of trec.
 *
 * The child stays in trec's process group and session, so Ctrl-C in the
 * terminal reaches it exactly as without trec.  Signal dispositions and
 * the mask are reset to defaults: an ignored SIGINT would survive exec
 * and, for instance, keep Python from installing KeyboardInterrupt.
 */
#include "lib/rec/rec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void child_main(char *const *argv, int stdout_to_stderr, int go_rd, int status_wr)
{
    static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1,
                               SIGUSR2, SIGALRM, SIGXFSZ};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        _exit(127);

    char go;
    ssize_t n;
    do
        n = read(go_rd, &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1)
        _exit(127); /* the recorder backed out */

    execvp(argv[0], argv);
    int e = errno;
    ssize_t w = write(status_wr, &e, sizeof e);
    (void)w;
    _exit(e == ENOENT ? 127 : 126);
}

int rec_spawn_prepare(char *const *argv, int stdout_to_stderr, rec_child *c, char *err,
                      size_t errlen)
{
    int go[2] = {-1, -1}, status[2] = {-1, -1};
    c->pid = -1;
    c->go_fd = c->status_fd = -1;
    if (!argv || !argv[0]) {
        snprintf(err, errlen, "no program to run");
        return -1;
    }
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        goto fail;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot fork: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        close(go[1]);
        close(status[0]);
        child_main(argv, stdout_to_stderr, go[0], status[1]);
    }
    close(go[0]);
    close(status[1]);
    c->pid = pid;
    c->go_fd = go[1];
    c->status_fd = status[0];
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        close_fd(&go[i]);
        close_fd(&status[i]);
    }
    return -1;
}

int rec_spawn_release(rec_child *c)
{
    char go = 1;
    ssize_t n;
    do
        n = write(c->go_fd, &go, 1);
    while (n < 0 && errno == EINTR);
    close_fd(&c->go_fd);
    int e = 0;
    size_t got = 0;
    while (got < sizeof e) {
        n = read(c->status_fd, (char *)&e + got, sizeof e - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close_fd(&c->status_fd);
    if (got == 0)
        return 0;
    return e ? e : EIO;
}

void rec_spawn_abort(rec_child *c)
{
    close_fd(&c->go_fd);
    close_fd(&c->status_fd);
    if (c->pid > 0) {
        int status;
        while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    c->pid = -1;
}
