/*
 * dump.h — `trec --dump`: every Python thread of a running process (and
 * with subprocesses of its descendants), its name, state and stack, read
 * once and printed instead of written to a trace.  Threads with no
 * Python thread state (started from C) are listed too, by their OS name.
 *
 * The reads are a recording's (lib/rec/target.c attaches, lib/py reads
 * one tick from outside: nothing is stopped, nothing needs the GIL), so
 * a wedged or stopped target answers as fast as a running one.  The
 * printing is dump_text.c (a traceback per thread) or dump_json.c (one
 * document, its shape in docs/trec.md).  Internal API, not installed.
 */
#ifndef TRC_LIB_REC_DUMP_H
#define TRC_LIB_REC_DUMP_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/py/pyproc.h"
#include "lib/rec/rec.h"

/* The thread's scheduler state when its stack was read. */
typedef enum rec_dump_state {
    REC_DUMP_RUNNING,        /* runnable ('R'): what a sample flags as on CPU */
    REC_DUMP_IDLE,           /* blocked or sleeping */
    REC_DUMP_STOPPED,        /* stopped by a signal or a tracer ('T', 't') */
    REC_DUMP_ZOMBIE,         /* exited, not reaped yet ('Z', 'X') */
    REC_DUMP_UNKNOWN         /* its /proc state could not be read */
} rec_dump_state;

/* One local variable of one frame (--locals). */
typedef struct rec_dump_local {
    int frame;               /* index into the thread's frames (leaf first) */
    char *name, *value;      /* UTF-8, owned */
} rec_dump_local;

typedef struct rec_dump_thread {
    int64_t tid;             /* OS thread id as trec sees it (-1 unknown) */
    char name[256];          /* threading's name, else the OS name, else "" */
    rec_dump_state state;
    int python;              /* 1: has a Python thread state; 0: a thread
                              * started outside Python (no frames) */
    int holds_gil;           /* 1 / 0, -1 unknown */
    int depth;               /* frames read; -1: the stack read was inconsistent */
    int truncated;           /* deeper than the frames kept: the innermost are */
    const py_frame_info **frames; /* LEAF FIRST, borrowed from the process's reader */
    /* --locals: the locals of every frame, in frame order (leaf first) */
    rec_dump_local *locals;
    size_t n_locals, locals_cap;
    uint8_t *frame_unread;   /* per frame: 1 when its locals could not be read */
    const char *locals_missing; /* why no locals are shown (static text), or NULL */
} rec_dump_thread;

typedef struct rec_dump_proc {
    pid_t pid, ppid;
    const char *command;     /* its command line (or executable) */
    const char *version;     /* "3.12.1" */
    rec_dump_thread *threads;
    int n_threads;
    int torn;                /* the thread list changed under every re-read:
                              * no thread is shown */
    int natives_unknown;     /* a Python thread's OS id is unknown, so threads
                              * without a thread state cannot be told apart */
    int no_gil;              /* a free-threaded build running without its GIL
                              * (py_proc_no_gil): no thread holds one, so every
                              * thread's holds_gil is -1 for that reason */
} rec_dump_proc;

/* Threads of several processes with the same stack. */
typedef struct rec_dump_group {
    const rec_dump_thread *stack; /* one of them: its frames are the group's */
    pid_t *pids;             /* the processes that have it, ascending, each once */
    size_t n_pids, pids_cap;
    int n_threads;           /* threads with it, in all those processes */
} rec_dump_group;

typedef struct rec_dump_groups {
    rec_dump_group *v;       /* most pids first, then lowest pid first */
    size_t n;
} rec_dump_groups;

/* Groups the Python threads with frames of procs[0..n) by identical
 * stack (dump_groups.c).  0, or -1 without memory (out empty).  The
 * groups borrow the threads' frames. */
int rec_dump_group_stacks(const rec_dump_proc *procs, int n, rec_dump_groups *out);
void rec_dump_groups_free(rec_dump_groups *g);

struct rec_target;

/* One attached process's threads and stacks (and with locals its
 * frames' locals) into p, as rec_dump_run reads each: its step, for
 * the tests over a synthetic process image.  0, or -1 without memory;
 * p is freed by rec_dump_procs_free. */
int rec_dump_read_process(struct rec_target *t, rec_dump_proc *p, int locals);
void rec_dump_procs_free(rec_dump_proc *procs, size_t n);

/* A test hook: fn(ctx, k) runs before the k-th re-read (from 1) of a
 * thread list found torn, so that a test can change the image between
 * two reads.  NULL: none (the default). */
void rec_dump_set_reread_hook(void (*fn)(void *ctx, int k), void *ctx);

/* Read and print the stacks of pid (and its descendants when
 * subprocesses) to out, as text or (json) one JSON document; with
 * locals each frame's local variables (lib/py/py_values.h).  Returns
 * 0 when stacks were printed, 2 when pid cannot be read (no such
 * process, not Python, refused: the same cases and messages as
 * recording with --pid, given through msg), 1 when out could not be
 * written.  Prints nothing on failure. */
int rec_dump_run(pid_t pid, int subprocesses, int json, int locals, FILE *out,
                 rec_message_fn msg, void *msg_ctx);

/* The printers: every process of procs[0..n) to out, then the groups
 * of identical stacks (the text only when n > 1).  The text shows
 * locals when a thread has them; the JSON gives each frame a "locals"
 * member when locals were asked for. */
void rec_dump_text(FILE *out, const rec_dump_proc *procs, int n, const rec_dump_groups *groups);
/* 0, or -1 on allocation failure (nothing written). */
int rec_dump_json(FILE *out, const rec_dump_proc *procs, int n, const rec_dump_groups *groups,
                  int locals);

/* "running", "idle", "stopped", "zombie" or "unknown". */
const char *rec_dump_state_name(rec_dump_state s);

#endif /* TRC_LIB_REC_DUMP_H */
