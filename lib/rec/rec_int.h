/*
 * rec_int.h — the pieces the recorder (lib/rec/) is built from, one file
 * each: /proc readers (procfs.c), pacing (pace.c), spawning (spawn.c),
 * signals (signals.c), the output file (output.c), stack interning
 * (stacks.c), the thread table (threads.c), one recorded process
 * (target.c), its threads without a Python thread state (natives.c),
 * descendant discovery (children.c), loss accounting
 * (losses.c), self-timing (selftime.c) and the loop that ties them
 * together (session.c).  Stopping threads for their reads (--blocking)
 * is stopper.c, with its own header (stopper.h).
 *
 * Prefix rec_.  Nothing here prints; functions that can fail say how.
 */
#ifndef TRC_LIB_REC_REC_INT_H
#define TRC_LIB_REC_REC_INT_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/py/pyproc.h"
#include "lib/rec/rec.h"
#include "trc/trc.h"

/* Deepest stack written (spec limit, TRC_MAX_DEPTH).  A deeper one is
 * written as its innermost REC_MAX_DEPTH - 1 frames under a root frame
 * named rec_truncated_name (kind other), the frames beyond not read. */
#define REC_MAX_DEPTH 4096
extern const char rec_truncated_name[];

/* ------------------------------------------------------------------ */
/* procfs.c — small /proc readers                                      */
/* ------------------------------------------------------------------ */

typedef struct rec_stat {
    char state;              /* 'R', 'S', 'D', 'Z', ... */
    pid_t ppid;
    long num_threads;        /* field 20: the process's threads */
    uint64_t starttime;      /* clock ticks after boot (field 22) */
    uint64_t startstack;     /* field 28: changes on exec (ASLR) */
    int exit_code;           /* field 52, a wait status; -1 if absent */
} rec_stat;

/* Parse the text of a /proc/.../stat file.  Returns 0, or -1 when the
 * text does not look like one. */
int rec_stat_parse(const char *text, size_t len, rec_stat *out);

/* Open /proc/PID/stat (tid <= 0) or /proc/PID/task/TID/stat read-only,
 * close-on-exec.  Returns the fd or -1 (errno set). */
int rec_proc_open(pid_t pid, pid_t tid, const char *leaf);

/* pread the whole (small) file behind fd into buf (NUL-terminated).
 * Returns the length, or -1 (errno set; ESRCH once the task is gone). */
ssize_t rec_fd_read(int fd, char *buf, size_t cap);

/* The scheduler state letter from an open stat fd; 0 on failure. */
char rec_fd_state(int fd);

/* The same from an open /proc/PID/task/TID/syscall fd, which the kernel
 * makes about three times faster than stat: "running" (the thread is
 * runnable: 'R'), else the syscall it is blocked in ('S').  0 on failure. */
char rec_fd_syscall_state(int fd);

/* Read and parse /proc/PID/stat (or the task's).  0 or -1. */
int rec_proc_stat(pid_t pid, pid_t tid, rec_stat *out);

/* Command line, arguments joined by single spaces.  0 or -1. */
int rec_proc_cmdline(pid_t pid, char *buf, size_t cap);

/* Target of /proc/PID/exe.  0 or -1. */
int rec_proc_exe(pid_t pid, char *buf, size_t cap);

/* Who ptraces pid (TracerPid in /proc/PID/status): 0 nobody, -1 unknown. */
pid_t rec_proc_tracer(pid_t pid);

/* /proc/PID/task/TID/comm without the newline.  0 or -1. */
int rec_proc_comm(pid_t pid, pid_t tid, char *buf, size_t cap);

/* Resident set size in bytes from an open /proc/PID/statm fd; -1 on error. */
int64_t rec_fd_rss_bytes(int fd);

/* Children of pid (all its threads'), up to max.  Uses
 * /proc/PID/task/TID/children, or a scan of /proc when the kernel lacks
 * it.  Returns the count (may exceed max: only max are stored), -1 if pid
 * is gone. */
int rec_proc_children(pid_t pid, pid_t *out, int max);

/* Thread ids of pid (/proc/PID/task), up to max.  Returns the count (may
 * exceed max: only max are stored), -1 if pid is gone. */
int rec_proc_tasks(pid_t pid, pid_t *out, int max);

/* Process start on the trace clock from a stat starttime; 0 if unknown. */
int64_t rec_start_ns(uint64_t starttime);

/* ------------------------------------------------------------------ */
/* pace.c — absolute-deadline pacing                                    */
/* ------------------------------------------------------------------ */

typedef struct rec_pacer {
    int64_t period_ns;
    int64_t origin_ns;       /* deadline k is origin + k * period + jitter_k */
    uint64_t k;
    int64_t jitter_max_ns;
    uint64_t rng;            /* xorshift state for the jitter */
    int64_t deadline_ns;     /* the current tick's deadline */
    int spin;                /* watch the clock instead of sleeping (--spin) */
} rec_pacer;

typedef struct rec_tick {
    int64_t now_ns;          /* when the tick was taken (trace clock) */
    int64_t lateness_ns;     /* now - deadline, >= 0 */
    int late;                /* lateness > period / 2 */
    uint64_t missed;         /* whole periods skipped before this tick */
} rec_tick;

/* Start the grid at start_ns; jitter is up to a tenth of the period
 * (at most 100 us), drawn from seed.  Cannot fail. */
void rec_pacer_init(rec_pacer *p, int64_t period_ns, int64_t start_ns, uint64_t seed);

/* Sleep until the current deadline (with p->spin: watch the clock,
 * yielding the CPU to whatever else wants it).  Returns 1 and fills *t
 * when the deadline was reached (the pacer then moves to the next
 * deadline, skipping the ones already passed), 0 when a signal
 * interrupted the sleep first, or after a millisecond of spinning (call
 * again; the deadline is unchanged). */
int rec_pacer_wait(rec_pacer *p, rec_tick *t);

/* Classification used by rec_pacer_wait (exposed for tests): lateness
 * over half a period is late; each whole period of lateness is a
 * missed tick.  Cannot fail. */
void rec_pace_classify(int64_t period_ns, int64_t lateness_ns, int *late, uint64_t *missed);

/* ------------------------------------------------------------------ */
/* spawn.c — starting the program                                       */
/* ------------------------------------------------------------------ */

typedef struct rec_child {
    pid_t pid;               /* -1 when not started */
    int go_fd;               /* parent's end: one byte lets the child exec */
    int status_fd;           /* parent's end: errno of a failed exec, EOF on success */
} rec_child;

/* Fork a child that waits (before exec) until rec_spawn_release.  The
 * child gets default signal dispositions and an empty signal mask; with
 * stdout_to_stderr its stdout is trec's stderr.  Returns 0, or -1 with
 * a message in err. */
int rec_spawn_prepare(char *const *argv, int stdout_to_stderr, rec_child *c, char *err,
                      size_t errlen);

/* Let the child exec and wait for the outcome.  Returns 0 when the exec
 * succeeded, else the exec's errno (the child has then exited 127). */
int rec_spawn_release(rec_child *c);

/* Abandon a prepared child (it exits without running anything) and reap it. */
void rec_spawn_abort(rec_child *c);

/* ------------------------------------------------------------------ */
/* signals.c                                                            */
/* ------------------------------------------------------------------ */

/* launched: trec started child_pid.  SIGINT/SIGQUIT from the terminal
 * reach the child by themselves and trec ignores them; the same signals
 * sent to trec alone (kill), and SIGTERM/SIGHUP, are forwarded to the
 * child.  Attached (child_pid <= 0): SIGINT/SIGTERM/SIGHUP/SIGQUIT ask
 * the loop to stop.  SIGPIPE and SIGXFSZ are ignored (write errors are
 * reported); SIGCHLD sets a flag.  Returns 0 or -1. */
int rec_signals_install(pid_t child_pid);
void rec_signals_set_child(pid_t child_pid);
void rec_signals_restore(void);
int rec_signals_stop_requested(void);
/* Returns and clears the SIGCHLD flag. */
int rec_signals_take_sigchld(void);

/* ------------------------------------------------------------------ */
/* output.c                                                             */
/* ------------------------------------------------------------------ */

/* Expand "%p" (pid) and "%%" in tmpl into path.  0, or -1 when it does
 * not fit or holds another '%' sequence. */
int rec_output_expand(const char *tmpl, pid_t pid, char *path, size_t cap);

typedef enum rec_out_kind {
    REC_OUT_STDOUT,          /* "-": trec's standard output */
    REC_OUT_HIDDEN,          /* a hidden new file, renamed onto path at commit */
    REC_OUT_IN_PLACE,        /* the one-name regular file itself, truncated at commit */
    REC_OUT_DIRECT           /* FIFO, device, /dev/stdout...: written as it is */
} rec_out_kind;

/* The trace output and what has been written to it. */
typedef struct rec_output {
    int fd;                  /* -1 when closed */
    rec_out_kind kind;
    int committed;           /* rec_output_commit done: writes allowed */
    int64_t base;            /* offset of trec's first byte in a regular file; -1 otherwise */
    uint64_t good;           /* bytes of complete chunks written */
    int64_t last_ok_ns;      /* when the last complete chunk was written; 0 = none */
    int err;                 /* errno of the first failed write; 0 = none */
    int cut_failed;          /* errno of a failed cut back to `good` (torn tail left) */
    char path[4096];         /* the expanded destination, "<stdout>" for "-" */
    char tmp[4096];          /* the hidden name until commit, else "" */
} rec_output;

/* Open the trace output (design: output.c).  "-" = standard output
 * (refused when it is a terminal); a directory is refused ("PATH: is a
 * directory"); a regular or new destination gets a hidden file beside
 * it, renamed onto it by rec_output_commit; other destinations are
 * opened as they are, without truncation.  Returns 0, or -1 with a
 * one-line message naming the path in err (nothing was created). */
int rec_output_open(rec_output *o, const char *tmpl, pid_t pid, char *err, size_t errlen);

/* The recording has started: put the trace under its final name.  0, or
 * -1 with a message in err (the hidden file is still there for
 * rec_output_close to remove). */
int rec_output_commit(rec_output *o, char *err, size_t errlen);

/* trc_write_fn for the writer (ctx = the rec_output), called with whole
 * chunks.  Refuses (-1) before commit.  The first failure is sticky:
 * later calls write nothing, and a regular file is cut back to the end
 * of the last complete chunk (o->good). */
int rec_output_write(void *ctx, const void *buf, size_t len);

/* Close the file (never standard output) and remove the hidden file if
 * it was never committed: a failed start leaves the destination as it
 * was.  Safe to call twice. */
void rec_output_close(rec_output *o);

/* 1 for "-" and for a destination that is trec's standard output (a
 * regular file or a pipe, reached by name: /dev/stdout, or the file
 * stdout is redirected to); rec_output_open then writes to fd 1 and the
 * started program's stdout must go to stderr.  Cannot fail. */
int rec_output_is_stdout(const char *tmpl);

/* 1 when the output template names a regular file or a new name (side
 * files may go beside it), 0 for "-", a device, a FIFO or an fd link.
 * Cannot fail. */
int rec_output_is_file(const char *tmpl);

/* ------------------------------------------------------------------ */
/* losses.c — counting losses and writing them as LOSS records          */
/* ------------------------------------------------------------------ */

typedef struct rec_lossacc {
    trc_loss_kind kind;
    int64_t pid;
    uint64_t count;          /* pending, not yet written */
    uint64_t total;
    int64_t first_ns, last_ns;
} rec_lossacc;

void rec_loss_init(rec_lossacc *a, trc_loss_kind kind, int64_t pid);
void rec_loss_add(rec_lossacc *a, uint64_t n, int64_t now_ns);
/* Write the pending count (if any) as one LOSS record. */
trc_status rec_loss_flush(rec_lossacc *a, trc_writer *w, const char *detail);

/* ------------------------------------------------------------------ */
/* stacks.c — py frames -> writer frame and stack ids                   */
/* ------------------------------------------------------------------ */

/* The last stack interned for one thread, root first, so the next
 * sample only interns the frames past the common prefix. */
typedef struct rec_stackcache {
    const py_frame_info **frames;
    uint32_t *ids;
    int depth, cap;
} rec_stackcache;

void rec_stackcache_cleanup(rec_stackcache *c);

/* Intern frames[0..depth) (LEAF FIRST, as py_proc_stack gives them) as a
 * writer stack, root to leaf; *stack = 0 for depth 0.  Frame ids are
 * kept in each py_frame_info's user_id.  Returns TRC_OK or the writer's
 * error (TRC_ERR_NOMEM also for the cache). */
trc_status rec_stack_intern(trc_writer *w, rec_stackcache *c, const py_frame_info **frames,
                            int depth, uint32_t *stack);

/* The stack of a thread that has no Python thread state: one root frame
 * "[native thread NAME]" of kind other.  TRC_OK or the writer's error. */
trc_status rec_native_stack(trc_writer *w, const char *name, uint32_t *stack);

/* ------------------------------------------------------------------ */
/* switches.c — a thread's state from its context-switch records        */
/* ------------------------------------------------------------------ */

typedef struct rec_switches {
    int fd;                  /* the perf event, -1 when none */
    void *map;               /* its ring, read-only (written backward) */
    size_t map_len;
} rec_switches;

/* 0 unless TREC_THREAD_STATE=proc asks for the /proc files only. */
int rec_switches_allowed(void);

/* Opens tid's switch records.  0, or an errno (s->fd is then -1):
 * EMFILE past the recorder's descriptor budget, ESRCH for a thread gone,
 * or one for which rec_switches_refused says perf events are not
 * allowed here at all. */
int rec_switches_open(rec_switches *s, pid_t tid);
int rec_switches_refused(int err);
void rec_switches_close(rec_switches *s);

/* 1 when a record kind of rec_switches_look says the thread is on a CPU
 * at this instant: switched in.  One switched out by preemption is still
 * runnable, waiting for a CPU: not on one. */
int rec_switches_running(char kind);

/* The thread's state by its newest record: 'I' running, 'P' switched out
 * but runnable, 'S' switched out blocked; 0 unknown.  first_state is what
 * /proc said right after the open ('R' or 'S'), the answer while no
 * switch has happened (*head 0).  *head: where that record is. */
char rec_switches_look(const rec_switches *s, char first_state, uint64_t *head);

/* Threads given switch records so far (for TREC_SELF_TIMING). */
uint64_t rec_switches_opened(void);

/* ------------------------------------------------------------------ */
/* oncpu.c — whether a sample is on CPU: its thread ran for its period   */
/* ------------------------------------------------------------------ */

typedef struct rec_oncpu {
    int fd;                  /* /proc/PID/task/TID/schedstat, -1 if none */
    int set;                 /* ran_ns and at_ns hold a reading */
    uint64_t ran_ns;         /* the thread's CPU time at its last sample */
    int64_t at_ns;           /* that sample's tick */
    int64_t owed_ns;         /* CPU time not yet given out as on-CPU samples */
    int born;                /* began during the recording: the CPU time of its
                              * first reading is the recording's (set after open) */
    int64_t before_ns;       /* of that, what is not yet given out (oncpu.c) */
} rec_oncpu;

/* How late the kernel may bring a running thread's CPU time up to date:
 * a scheduler tick at 100 Hz.  Credit beyond twice that (or twice the
 * period) is not carried into later samples. */
#define REC_ONCPU_LAG_NS 10000000LL

/* Opens tid's schedstat (c->fd -1 when it cannot be), forgetting what c
 * knew; rec_oncpu_close closes it.  c must be closed or zeroed with fd -1. */
void rec_oncpu_open(rec_oncpu *c, pid_t pid, pid_t tid);
void rec_oncpu_close(rec_oncpu *c);
/* The decision alone: the thread's CPU time is ran_ns at now_ns, a
 * sample weighs period_ns (the tick period).  1 when the sample is on
 * CPU; instant (its state at this instant) for the first reading, which
 * has no period behind it.  With c->born, the CPU time of the first
 * reading (what the thread used before trec saw it) is given out later,
 * only in samples whose thread ran meanwhile. */
int rec_oncpu_decide(rec_oncpu *c, uint64_t ran_ns, int64_t now_ns, int64_t period_ns,
                     int instant);
/* Reads the thread's CPU time and decides; instant (the state at this
 * instant: switched in by its records, else /proc's 'R') is the answer
 * for the first reading and when it cannot be read. */
int rec_oncpu_sample(rec_oncpu *c, int64_t now_ns, int64_t period_ns, int instant);
/* For a thread its switch records show has not run since its last
 * sample: nothing is read. */
int rec_oncpu_idle(rec_oncpu *c, int64_t now_ns, int64_t period_ns);
/* The tick period of a recording: what each sample weighs. */
int64_t rec_oncpu_period(const rec_config *cfg);
/* The time to judge a tick's samples at: its deadline on the pacer's
 * grid, so that the periods between two samples are the ticks between
 * them (a tick taken late is not a tick skipped), else its time. */
struct rec_tick_ctx;
int64_t rec_oncpu_at(const struct rec_tick_ctx *ctx);

/* ------------------------------------------------------------------ */
/* threads.c — the threads of one process                               */
/* ------------------------------------------------------------------ */

typedef struct rec_thread {
    int64_t tid;             /* OS thread id (ours), or a key < 0 when unknown */
    int64_t ns_tid;          /* the id the target knows it by (lib/py's), -1 unknown */
    uint64_t tstate;
    uint32_t wid;            /* writer thread id */
    int state_fd;            /* /proc/PID/task/TID/syscall or stat, -1 if none */
    int state_is_stat;       /* state_fd is the stat file (syscall unreadable) */
    rec_switches sw;         /* its switch records (sw.fd -1: none, /proc each tick) */
    char sw_first;           /* /proc's state right after sw was opened */
    uint64_t sw_head;        /* ring head seen before the last stack read */
    char pre_kind;           /* looked at before this tick's read (pre_set) */
    uint64_t pre_head;
    int pre_set;
    int quiet;               /* has not run since last_stack was read */
    int64_t next_proc_ns;    /* with sw: when to read the /proc state file again */
    uint32_t last_stack;     /* the stack of its last good sample */
    int last_ok;             /* last_stack is one this thread's tstate gave */
    int last_trunc;          /* ... and it was cut at REC_MAX_DEPTH */
    uint32_t seen;           /* generation last seen in the thread list */
    int64_t next_name_ns;    /* when to look at the names again */
    int64_t name_interval_ns;
    int name_eager;          /* looks left at samples in Python, while it has no threading name */
    char name[256];          /* name last written (UTF-8) */
    int py_name;             /* name is the threading module's */
    int native;              /* no Python thread state: sampled by its state alone */
    uint32_t native_stack;   /* with native: its "[native thread NAME]" stack, 0 = to intern */
    uint32_t listed;         /* with native: the task list (rec_threads.tasks_gen) it was in */
    int held;                /* with native: ticks its first sample waited */
    rec_oncpu cpu;           /* what makes its samples on CPU (oncpu.c) */
    rec_stackcache cache;
} rec_thread;

typedef struct rec_tidpair {
    int64_t tid, ns_tid;     /* our id, the target's pid namespace's id */
} rec_tidpair;

/* A thread id and where it stands in a list. */
typedef struct rec_idpos {
    int64_t tid;
    int at;
} rec_idpos;

typedef struct rec_threads {
    rec_thread *v;
    size_t n, cap;
    uint64_t distinct;       /* threads ever defined */
    int nested;              /* the process is in a pid namespace below ours */
    rec_tidpair *map;        /* with nested: ids paired so far, sorted by tid */
    size_t map_n, map_cap;
    int switches;            /* open switch records for threads (target.c sets) */
    int switches_denied;     /* perf events refused here: stop asking */
    int64_t next_tasks_ns;   /* when to list the process's tasks again (native threads) */
    uint32_t tasks_gen;      /* task lists read */
    pid_t *tasks;            /* scratch for the task list */
    int tasks_cap;
    int born;                /* threads opened from now on began during the
                              * recording (their CPU time so far is its own) */
} rec_threads;

/* Find the thread (ti->tid as lib/py gives it, or tstate), adding it
 * (our id, state fd, names) if new; a native thread's entry that now
 * has a Python thread state becomes that Python thread's.  Returns NULL on allocation failure
 * (*st), or with *st TRC_OK when the process has no task with that id
 * (the thread has just ended, or the id is stale: a fork child's thread
 * state holds its parent's id for a moment): skip it.  A new thread is written to the trace (rec_thread_define) only
 * before its first sample: one that never gets a sample (it belonged to
 * a process that took over the pid, target.c) leaves no trace. */
rec_thread *rec_threads_get(rec_threads *t, py_proc *py, pid_t pid, const py_thread_info *ti,
                            int64_t now_ns, trc_status *st);
/* The entry of the process's OS thread tid (ours), whatever it runs; a
 * new one is added as a native thread (no Python thread state: its state
 * file, switch records and OS name) unless tid is already some entry's.
 * *fresh: added now (its state file was opened by number).  NULL on
 * allocation failure (*st) or, *st TRC_OK, when no task has the id. */
rec_thread *rec_threads_task(rec_threads *t, pid_t pid, pid_t tid, int64_t now_ns, int *fresh,
                             trc_status *st);
/* th's scheduler state from its /proc file (syscall or stat): 'R'
 * runnable, else another letter; 0 when it cannot be read (ended). */
char rec_thread_state(const rec_thread *th);
/* The thread's state for this tick's sample: by its switch records when
 * they know (returns 1; *running: switched in at this instant), else,
 * unless by_proc says *state was just read from /proc, from its /proc
 * file (returns 0, *running 0).  *state is left as it is when neither
 * tells. */
int rec_thread_look(const rec_thread *th, int by_proc, char *state, int *running);
/* Writes th's THREAD definition if not done yet (th->wid then != 0). */
trc_status rec_thread_define(rec_thread *th, trc_writer *w, pid_t pid);
/* With t->nested: our id of the thread the target calls ns_tid, -1 if
 * no task of pid has it (the task list is paired again first). */
int64_t rec_threads_outer_tid(rec_threads *t, pid_t pid, int64_t ns_tid);
/* th's state file failed while its id is still listed: a new thread may
 * have the id now.  Opens that thread's state file and schedules a name
 * look; 1 if done, 0 if no thread has the id.  The caller must check
 * that the process is still the one recorded (the file was opened by
 * number). */
int rec_thread_reopen(rec_threads *t, rec_thread *th, pid_t pid, int64_t now_ns);
/* A thread without a threading name whose stack was just read and holds
 * Python frames: look at its name again now, before its sample is
 * written, at each of its first such ticks (threading registers a new
 * thread in its first Python lines).  Renames in the writer if changed. */
trc_status rec_thread_name_eager(rec_thread *th, trc_writer *w, py_proc *py, pid_t pid);
/* Re-read the OS and threading names when due; rename in the writer if changed. */
trc_status rec_thread_refresh_name(rec_thread *th, trc_writer *w, py_proc *py, pid_t pid,
                                   int64_t now_ns);
/* Drop threads missing from the last 3 thread lists up to generation gen
 * (closing their fds); a Python thread's entry whose OS thread may still
 * be there becomes a native thread's instead (kept for a look). */
void rec_threads_prune(rec_threads *t, uint32_t gen);
void rec_threads_cleanup(rec_threads *t);

/* ------------------------------------------------------------------ */
/* role.c — a process's rank and role (PROCESS rank and label fields)  */
/* ------------------------------------------------------------------ */

#define REC_ROLE_DATALOADER "DataLoader worker"
#define REC_ROLE_MP_WORKER "multiprocessing worker"

/* The rank an environment block (NUL-separated NAME=VALUE entries) says:
 * RANK, else OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, else
 * LOCAL_RANK; a value that is not a decimal number below 2^31 counts as
 * absent.  -1 when none. */
int64_t rec_environ_rank(const char *env, size_t len);
/* The same from /proc/PID/environ; -1 when none or unreadable. */
int64_t rec_proc_rank(pid_t pid);
/* The role a main thread's stack (leaf first) shows: REC_ROLE_DATALOADER
 * or REC_ROLE_MP_WORKER when a frame of torch's DataLoader worker loop or
 * of multiprocessing.pool's worker is in it (the innermost one wins);
 * NULL otherwise. */
const char *rec_stack_role(const py_frame_info *const *frames, int depth);

/* ------------------------------------------------------------------ */
/* target.c — one process being recorded                                */
/* ------------------------------------------------------------------ */

typedef enum rec_tstate {
    REC_T_WAITING,           /* not attached yet: retrying */
    REC_T_NOT_PYTHON,        /* gave up for now; retried if it execs */
    REC_T_ATTACHED,
    REC_T_ENDED              /* exited (or left behind); nothing more to do */
} rec_tstate;

typedef struct rec_target {
    pid_t pid, ppid;
    int is_root;
    int launched;            /* trec is its parent (waitpid gives the status) */
    rec_tstate state;
    py_proc *py;
    uint64_t starttime, startstack;
    char exe[512];
    char cmdline[4096];      /* last read; a zombie's can no longer be read */
    int64_t found_ns;        /* when first seen */
    int64_t attach_since_ns; /* first attach attempt on this image */
    int64_t next_try_ns;     /* next attach attempt */
    int64_t give_up_ns;      /* NOT_PYTHON after this (grace for loading) */
    int64_t next_check_ns;   /* liveness / exec check */
    int64_t next_rss_ns;
    int warned;
    int process_written;     /* PROCESS written for the current image */
    int64_t rank;            /* from its environment at attach, -1 = none */
    char label[48];          /* its role once its stack showed one ("" = none yet) */
    int64_t role_until_ns;   /* main-thread stacks are looked at for a role until then */
    unsigned process_records;
    unsigned layout_changes; /* py_proc_layout_changes when PROCESS was last written */
    py_status last_err;
    char err[512];           /* pyproc's explanation of the last failure */
    int stat_fd, statm_fd;
    int pid_fd;              /* pidfd_open(2) of pid, -1 if none: liveness without /proc */
    int switches_ok;         /* its threads may have switch records (pidfd, not refused by env) */
    uint32_t rss_counter;    /* 0 = not defined yet */
    rec_threads threads;
    uint32_t gen;
    py_thread_info *tinfo;
    uint32_t tcap;           /* rows of tinfo (trcu_grow32) */
    rec_idpos *dup;          /* scratch: tinfo's ids with their places, sorted (target.c) */
    uint32_t dupcap;
    int ids_seen;            /* lib/py has told thread ids of this image */
    int unborn;              /* thread states of this tick's list dropped as not started */
    const py_frame_info **frames;
    rec_lossacc invalid;
    uint64_t samples;
    py_frame_info trunc_frame;  /* the root of truncated stacks (REC_MAX_DEPTH) */
    uint64_t truncated;      /* samples written truncated */
    uint64_t quiet_samples;  /* samples repeated from a thread that had not run */
    uint64_t torn_retries;   /* stack reads redone after a torn read, by handles freed since */
    int trunc_warned;        /* the session said so once */
    int pid_reused;          /* it ended and its pid was another process's at once */
} rec_target;

/* What a step of a target reports to the session. */
typedef struct rec_tick_ctx {
    trc_writer *w;
    int64_t now_ns;
    int64_t grid_ns;         /* the grid point the tick stands for, its deadline
                              * past the ticks it skipped (0: now_ns); oncpu.c's clock */
    int gil;
    int no_gil;              /* --gil, and the target being sampled has no GIL (py_proc_no_gil) */
    uint64_t samples;        /* thread samples written (added to) */
    uint64_t invalid;        /* added to */
    uint32_t max_wid;        /* highest writer thread id met (raised) */
    struct rec_stopper *stopper; /* --blocking: stop threads for their reads; NULL = never */
    const struct rec_targets *targets; /* all of them: a worker is numbered among its siblings */
    const rec_config *cfg;   /* for --verbose's notes */
} rec_tick_ctx;

/* --verbose: one note saying how an attached target is read (its CPython
 * version and where the memory layout came from: a version's generated
 * table or the target's own _Py_DebugOffsets), so that a wrong or
 * surprising layout can be seen.  Does nothing unless cfg->verbose. */
void rec_target_note_layout(const rec_target *t, const rec_config *cfg);

/* Initialise for pid (not attached); 0 or -1 (NOMEM). */
int rec_target_init(rec_target *t, pid_t pid, int is_root, int launched, int64_t now_ns);
void rec_target_cleanup(rec_target *t);

/* Stack reads redone after a torn read, over the target's whole life. */
uint64_t rec_target_torn_retries(const rec_target *t);

/* Try to attach now.  Returns PY_OK, or pyproc's status with t->err set. */
py_status rec_target_try_attach(rec_target *t, int64_t now_ns);

/* Write the PROCESS record (once; again after an exec). */
trc_status rec_target_write_process(rec_target *t, trc_writer *w, int64_t now_ns);

/* One tick: attach retries, samples of every thread, RSS, exec and
 * liveness checks.  Returns TRC_OK or a writer error (which ends the
 * recording).  Sets t->state = REC_T_ENDED when the process is gone
 * (writing PROCESS_EXIT if the process had been recorded and the exit
 * was seen; for a launched root the session writes it from waitpid). */
trc_status rec_target_step(rec_target *t, rec_tick_ctx *ctx);

/* Record the end of t with a wait status (or status < 0 = unknown) and
 * mark it ended.  Writes PROCESS (if not yet) and PROCESS_EXIT. */
trc_status rec_target_exited(rec_target *t, trc_writer *w, int64_t now_ns, int wait_status);

/* Is the process still there and not a zombie?  Reads its stat file,
 * open since the target was found, which follows that very process. */
int rec_target_alive(rec_target *t);

/* A sample's flags: on CPU, and with --gil what ti says of the GIL. */
uint32_t rec_sample_flags(const rec_tick_ctx *ctx, const py_thread_info *ti, int on_cpu);

/* One sample of a thread that has not run since its last: that stack
 * again, nothing read from the target.  TRC_OK or the writer's error. */
trc_status rec_sample_quiet(rec_target *t, rec_tick_ctx *ctx, rec_thread *th,
                            const py_thread_info *ti);

/* With switch records a thread's /proc state file is read only this
 * often (its id coming back is noticed then). */
#define REC_STATE_PROC_NS 10000000LL

/* ------------------------------------------------------------------ */
/* natives.c — threads with no Python thread state                      */
/* ------------------------------------------------------------------ */

/* After the tick's Python threads: lists the tasks when due and samples
 * every native thread of t (natives.c).  TRC_OK or the writer's error;
 * a process found gone leaves its liveness check due. */
trc_status rec_natives_sample(rec_target *t, rec_tick_ctx *ctx);

/* ------------------------------------------------------------------ */
/* selftime.c — the recorder's cost per sample (diagnostics)            */
/* ------------------------------------------------------------------ */

typedef struct rec_selftime {
    uint32_t *hist;          /* NULL: not measuring */
    uint64_t n;
    int64_t max_ns;
} rec_selftime;

/* 0, or -1 on allocation failure (then nothing is measured). */
int rec_selftime_init(rec_selftime *st);
void rec_selftime_cleanup(rec_selftime *st);
/* CPU time of the calling thread in ns; 0 if unavailable. */
int64_t rec_thread_cpu_ns(void);
void rec_selftime_add(rec_selftime *st, int64_t per_sample_ns);
/* Upper bound of the bucket holding quantile q (0..1); 0 when empty. */
int64_t rec_selftime_quantile(const rec_selftime *st, double q);

/* ------------------------------------------------------------------ */
/* children.c — following descendants                                  */
/* ------------------------------------------------------------------ */

typedef struct rec_targets {
    rec_target **v;
    size_t n, cap;
    struct pollfd *pfd;      /* scratch for rec_children_poll_exits */
    size_t pfd_cap;
} rec_targets;

rec_target *rec_targets_find(rec_targets *ts, pid_t pid);
/* Add a target for pid; NULL on allocation failure. */
rec_target *rec_targets_add(rec_targets *ts, pid_t pid, int is_root, int launched,
                            int64_t now_ns);
void rec_targets_cleanup(rec_targets *ts);

/* Add every descendant of the live targets (and of `self` when it is a
 * subreaper, > 0) not yet known.  Returns the number added, -1 on
 * allocation failure. */
int rec_children_scan(rec_targets *ts, pid_t self, int64_t now_ns);

/* Descendants (not trec's own child) whose pidfd says they have exited
 * get their exit check at once (target.c, check_process) instead of at
 * its next 20 Hz turn: a zombie shows its exit status only until its
 * parent reaps it.  One poll for all of them; nothing when there are
 * none (a single-process recording pays nothing).  Cannot fail: without
 * memory the checks keep their pace. */
void rec_children_poll_exits(rec_targets *ts, int64_t now_ns);

#endif /* TRC_LIB_REC_REC_INT_H */
