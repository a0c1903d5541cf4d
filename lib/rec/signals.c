/*
 * signals.c — what the recorder does with signals (contract in rec_int.h).
 *
 * When trec started the program, the program owns the terminal's
 * signals: Ctrl-C and Ctrl-\ go to the whole foreground process group,
 * so the child already has them and trec only keeps recording until the
 * child ends.  The same signals sent to trec alone (si_code SI_USER or
 * SI_QUEUE from kill(2)), and SIGTERM/SIGHUP, are passed on to the child
 * so that "kill TREC_PID" behaves like killing the program.  When
 * attached with --pid, those signals stop the recording instead; the
 * target is never signalled.
 *
 * The state is process-global because signal handlers need it; it is
 * limited to this file.
 */
#include "lib/rec/rec_int.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t child;      /* pid to forward to; 0 = attached mode */
static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t chld_flag;

static const int handled[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
#define N_HANDLED (sizeof handled / sizeof handled[0])
static struct sigaction saved[N_HANDLED];
static struct sigaction saved_chld, saved_pipe, saved_xfsz;
static int installed;

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
    int saved_errno = errno;
    pid_t c = (pid_t)child;
    if (c > 0) {
        int from_terminal = (sig == SIGINT || sig == SIGQUIT) && si && si->si_code == SI_KERNEL;
        if (!from_terminal)
            kill(c, sig);
    } else {
        stop_flag = 1;
    }
    errno = saved_errno;
}

static void on_chld(int sig, siginfo_t *si, void *uctx)
{
    chld_flag = 1;
}

int rec_signals_install(pid_t child_pid)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    /* no SA_RESTART: the pacing sleep must wake up to notice */
    sa.sa_flags = SA_SIGINFO;
    sa.sa_sigaction = on_signal;
    child = child_pid > 0 ? child_pid : 0;
    stop_flag = chld_flag = 0;
    for (size_t i = 0; i < N_HANDLED; i++)
        if (sigaction(handled[i], &sa, &saved[i]) != 0)
            return -1;
    sa.sa_sigaction = on_chld;
    sa.sa_flags = SA_SIGINFO | SA_NOCLDSTOP;
    if (sigaction(SIGCHLD, &sa, &saved_chld) != 0)
        return -1;
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &ign, &saved_pipe) != 0)
        return -1;
    /* past `ulimit -f` a write fails with EFBIG instead of killing trec
     * before it can cut the trace back to a whole chunk and reap the
     * program (output.c) */
    if (sigaction(SIGXFSZ, &ign, &saved_xfsz) != 0)
        return -1;
    installed = 1;
    return 0;
}

void rec_signals_set_child(pid_t child_pid)
{
    child = child_pid > 0 ? child_pid : 0;
}

void rec_signals_restore(void)
{
    if (!installed)
        return;
    for (size_t i = 0; i < N_HANDLED; i++)
        sigaction(handled[i], &saved[i], NULL);
    sigaction(SIGCHLD, &saved_chld, NULL);
    sigaction(SIGPIPE, &saved_pipe, NULL);
    sigaction(SIGXFSZ, &saved_xfsz, NULL);
    installed = 0;
}

int rec_signals_stop_requested(void)
{
    return stop_flag != 0;
}

int rec_signals_take_sigchld(void)
{
    int v = chld_flag != 0;
    chld_flag = 0;
    return v;
}
