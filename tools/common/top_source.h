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
    FILE *child_err;        /* its standard error, kept for after the screen */
    int child_status;       /* its wait status, once reaped */
} top_source;

/* Open path (NULL or "-": standard input).  With follow, a path that
 * does not exist yet is not an error: the first read waits for it to be
 * created, at most wait_s seconds (<= 0: until the stop request), and
 * fails with ETIMEDOUT (timed_out set) when it was not.  0, or -1 with
 * errno. */
int top_source_open(top_source *s, const char *path, int follow, double wait_s);

/* Start BINDIR/trec -o - args... (args ends with NULL), BINDIR being the
 * folder of the running executable, its standard output piped to s and
 * its standard error kept in a temporary file (quiet: for the screen).
 * 0, or -1 with a one-line reason in why. */
int top_source_spawn(top_source *s, char *const args[], int quiet_stderr, char *why, size_t n);

/* The last line the recorder wrote on its standard error so far (what a
 * running recorder says goes there, not over the screen), control
 * characters replaced by spaces, into buf; "" when none or not kept.
 * Cannot fail. */
void top_source_recorder_message(top_source *s, char *buf, size_t n);

/* trc_read_fn over a top_source (ctx). */
long top_source_read(void *ctx, void *buf, size_t len);

/* Stop the recorder started (SIGINT, as a user's Ctrl-C: it ends its
 * trace and leaves an attached program running), reap it, close what s
 * opened.  Unless user_stopped (the user quit, so the recorder's status
 * says nothing), copy what the recorder said to echo when it failed
 * and return its exit status; 0 otherwise. */
int top_source_close(top_source *s, int user_stopped, FILE *echo);

#endif /* TRC_TOOLS_COMMON_TOP_SOURCE_H */
