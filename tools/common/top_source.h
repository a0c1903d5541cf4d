/*
 * tools/common/top_source.h — where trc-top's bytes come from
 * (docs/top.md): a recorder it runs itself (`trec -o - ARGS`, trec
 * found beside the running executable, as trec finds its CUPTI library),
 * a pipe or file, or a file still being written (--follow: at its end,
 * wait for more; a file not created yet is waited for too).  The read function never blocks for more than 100 ms
 * at a time, so that a stop request ends reading promptly: it then
 * reports the end of input.  Internal API, prefix top_source_.
 */
#ifndef TRC_TOOLS_COMMON_TOP_SOURCE_H
#define TRC_TOOLS_COMMON_TOP_SOURCE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct top_source {
    int fd;                 /* what is read; -1 = none */
    int own_fd;             /* closed by top_source_close */
    int follow;             /* at the end, wait for more */
    const char *path;       /* --follow of a file not there yet: opened on a read */
    double wait_s;          /* ...waiting at most this long for it (<= 0: until stopped) */
    volatile int waiting;   /* 1 while waiting for path to be created */
    int timed_out;          /* the wait ran out: reading failed (ETIMEDOUT) */
    volatile int stop;      /* set from any thread: the next read ends input */
    pid_t child;            /* the trec started, 0 = none */
    int program;            /* that trec runs a program (not --pid): stopping
                             * trec stops the program */
    FILE *child_err;        /* its standard error, kept for after the screen */
    int child_status;       /* its wait status, once reaped */
    int stopped;            /* top_source_close stopped the trec (it still ran) */
} top_source;

/* How long a program trc-top started may take to end after SIGTERM
 * before it is killed (top_source_close). */
#define TOP_STOP_WAIT_S 5

/* Open path (NULL or "-": standard input).  With follow, a path that
 * does not exist yet is not an error: the first read waits for it to be
 * created, at most wait_s seconds (<= 0: until the stop request), and
 * fails with ETIMEDOUT (timed_out set) when it was not.  0, or -1 with
 * errno. */
int top_source_open(top_source *s, const char *path, int follow, double wait_s);

/* Start BINDIR/trec -o - args... (args ends with NULL), BINDIR being the
 * folder of the running executable, its standard output piped to s and
 * its standard error kept in a temporary file (quiet: for the screen).
 * program: args run a program (-- PROGRAM), rather than --pid.  0, or -1
 * with a one-line reason in why. */
int top_source_spawn(top_source *s, char *const args[], int program, int quiet_stderr, char *why,
                     size_t n);

/* The last line the recorder wrote on its standard error so far (what a
 * running recorder says goes there, not over the screen), control
 * characters replaced by spaces, into buf; "" when none or not kept.
 * Cannot fail. */
void top_source_recorder_message(top_source *s, char *buf, size_t n);

/* trc_read_fn over a top_source (ctx). */
long top_source_read(void *ctx, void *buf, size_t len);

/* Close what s opened.  A recorder it started that still runs is
 * stopped (s->stopped set): with --pid by SIGINT, which ends trec's
 * recording and never touches the process; running a program by
 * SIGTERM, which trec passes on to the program (the way `kill` ends a
 * program, without the traceback of a KeyboardInterrupt), and when the
 * program has not ended TOP_STOP_WAIT_S seconds later, SIGKILL to trec's
 * process group, the program's too.  Then everything the recorder and
 * the program wrote while kept off the screen (quiet_stderr) is copied to
 * echo, the terminal being the user's again.  Returns the recorder's exit
 * status as a shell gives it (trec's is the program's: 128 + N when the
 * program died of signal N), 0 when none was started. */
int top_source_close(top_source *s, FILE *echo);

#endif /* TRC_TOOLS_COMMON_TOP_SOURCE_H */
