/*
 * stopper.c — trec --blocking (interface in stopper.h): each thread
 * whose stack is read is stopped for the read, so that the stack is the
 * one the thread had at one instant, never one torn by the program
 * running on while trec reads it.
 *
 * ptrace, not SIGSTOP: PTRACE_SEIZE takes a thread under control without
 * stopping it and without the program seeing anything; PTRACE_INTERRUPT
 * then stops that one thread (and no other) and PTRACE_CONT lets it go.
 * Each thread is seized the first time it is to be stopped, so threads
 * born later are taken as they come.  Only a thread on a CPU is stopped:
 * one that is not going to be read (quiet: it has not run since its last
 * read), that is blocked, or, by its switch records, waits for a CPU
 * (preempted) is not changing its stack.  Stopping a preempted thread
 * would also cost the most: its stop comes only once the scheduler gives
 * it a CPU again, a time slice later on a busy machine, and trec would
 * wait for it with every other read of the tick.
 *
 * A tracer has duties, all kept here:
 *  - every signal sent to a seized thread stops it first (a signal-
 *    delivery stop) until the tracer passes the signal on.  The session
 *    calls rec_stopper_reap every tick, which answers those stops, so a
 *    signal reaches the program at most one tick late (Ctrl-C included);
 *  - a job-control stop (SIGSTOP, SIGTSTP...) is reported as a
 *    PTRACE_EVENT_STOP with that signal; such a thread is let go with
 *    PTRACE_LISTEN, so it stays stopped as it would without trec, until
 *    SIGCONT;
 *  - exits of seized threads come to the tracer's waitpid (with __WALL):
 *    a thread's exit is swallowed, a process's (its leader's) is given to
 *    the session, which may be its parent too (the program trec started);
 *  - at the end every thread is let go of (PTRACE_DETACH, which needs the
 *    thread stopped: it is interrupted first).
 * If trec dies (even by SIGKILL) the kernel lets go of every thread it
 * traced, and a thread that was stopped for a read runs on: the target is
 * never left stopped.  No PTRACE_O_EXITKILL, so it does not die with trec.
 *
 * When: lib/py fetches the stacks of the threads it knows in the same
 * read call as the thread list, so those threads are stopped before the
 * list is read (rec_stopper_hold) and each is let go right after its own
 * stack has been read (rec_stopper_leave); a thread new this tick is
 * stopped only then, and its stack read again (rec_stopper_enter).
 *
 * A stop is waited for with waitpid(WNOHANG), sleeping a little between
 * looks, for at most STOP_WAIT_NS: a thread in uninterruptible sleep
 * stops only when it wakes, and trec must not hang on it.  Such a thread
 * is read without the stop (lib/py's checks of what it reads still
 * apply); its stop is collected later by rec_stopper_reap, which lets it
 * go at once.
 */
#include "lib/rec/stopper.h"
#include "lib/rec/rec_int.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#define STOP_WAIT_NS 2000000LL      /* a stop for a read: 2 ms at most */
#define DETACH_WAIT_NS 100000000LL  /* a stop for letting go: 100 ms at most */
#define BUSY_LOOKS 32               /* looks without a pause, */
#define SHORT_LOOKS 40              /* then 5 us apart, then 50 us */

typedef enum mode {
    M_RUNNING,               /* seized, running */
    M_STOPPED,               /* in a ptrace stop we know of */
    M_PENDING,               /* interrupted, its stop not collected yet */
    M_LISTEN                 /* in a job-control stop, let go with PTRACE_LISTEN */
} mode;

typedef struct tracee {
    pid_t tid, pid;
    unsigned char mode;
    unsigned char held;      /* stopped for this tick's read: resume after it */
    unsigned char group;     /* the stop is a job-control stop: resume by LISTEN */
    unsigned char was;       /* stopped for a read this tick (until release) */
    char before;             /* scheduler state right before that stop */
    int sig;                 /* signal to pass on when letting it run */
} tracee;

typedef struct refusal {
    pid_t pid;
    int err;
    int reported;
} refusal;

typedef struct exit_rec {
    pid_t pid;
    int status;
} exit_rec;

struct rec_stopper {
    tracee *v;               /* sorted by tid */
    size_t n, cap;
    refusal *ref;
    size_t nref, capref;
    exit_rec *exits;         /* process exits met while waiting for a stop */
    size_t nexit, capexit;
    rec_stopper_stats stats;
    int64_t wait_ns;         /* STOP_WAIT_NS, or the test hook's */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

rec_stopper *rec_stopper_new(void)
{
    rec_stopper *s = trc_calloc(1, sizeof(rec_stopper));
    if (s)
        s->wait_ns = STOP_WAIT_NS;
    return s;
}

void rec_stopper_set_wait(rec_stopper *s, int64_t ns)
{
    s->wait_ns = ns;
}

/* Index of tid, or where it would go (*found 0). */
static size_t locate(const rec_stopper *s, pid_t tid, int *found)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < s->n && s->v[lo].tid == tid;
    return lo;
}

static tracee *find(const rec_stopper *s, pid_t tid)
{
    int found;
    size_t i = locate(s, tid, &found);
    return found ? &s->v[i] : NULL;
}

static void drop(rec_stopper *s, tracee *e)
{
    size_t i = (size_t)(e - s->v);
    memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
    s->n--;
}

static void queue_exit(rec_stopper *s, pid_t pid, int status)
{
    if (trcu_grow((void **)&s->exits, &s->capexit, s->nexit, sizeof *s->exits) != TRC_OK)
        return; /* out of memory: the session's liveness check sees the end */
    s->exits[s->nexit++] = (exit_rec){pid, status};
}

/* tid has exited (status): forget it; a process's end goes to the queue. */
static void ended(rec_stopper *s, pid_t tid, int status)
{
    tracee *e = find(s, tid);
    if (e) {
        int leader = e->tid == e->pid;
        drop(s, e);
        if (!leader)
            return;
    }
    queue_exit(s, tid, status);
}

static refusal *refused(const rec_stopper *s, pid_t pid)
{
    for (size_t i = 0; i < s->nref; i++)
        if (s->ref[i].pid == pid)
            return &s->ref[i];
    return NULL;
}

static int has_pid(const rec_stopper *s, pid_t pid)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].pid == pid)
            return 1;
    return 0;
}

int rec_stopper_seize(rec_stopper *s, pid_t pid, pid_t tid)
{
    if (!s)
        return 0;
    if (find(s, tid))
        return 0;
    const refusal *r = refused(s, pid);
    if (r)
        return r->err;
    int found;
    size_t at = locate(s, tid, &found);
    if (trcu_grow((void **)&s->v, &s->cap, s->n, sizeof *s->v) != TRC_OK)
        return ENOMEM;
    if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
        int e = errno;
        /* EPERM also answers for a thread on its way out: a refusal only
         * when no thread of the process could be taken and this one is
         * not ending */
        rec_stat st;
        int ending = rec_proc_stat(pid, tid, &st) != 0 || st.state == 'Z' || st.state == 'X';
        if (e != ESRCH && !ending && !has_pid(s, pid) &&
            trcu_grow((void **)&s->ref, &s->capref, s->nref, sizeof *s->ref) == TRC_OK)
            s->ref[s->nref++] = (refusal){pid, e, 0};
        return e;
    }
    memmove(&s->v[at + 1], &s->v[at], (s->n - at) * sizeof *s->v);
    s->v[at] = (tracee){.tid = tid, .pid = pid, .mode = M_RUNNING};
    s->n++;
    s->stats.seized++;
    return 0;
}

/* What a ptrace stop's status says: the signal to pass on, and whether
 * it is a job-control stop. */
static void note_stop(tracee *e, int status)
{
    int sig = WSTOPSIG(status);
    e->mode = M_STOPPED;
    e->group = 0;
    if ((status >> 16) == PTRACE_EVENT_STOP)
        e->group = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
    else if (status >> 16 == 0 && sig != SIGTRAP)
        e->sig = sig; /* a signal-delivery stop: the signal is the program's */
}

/* Wait up to limit_ns for e's stop.  1 when stopped, 0 when it did not
 * come in time (e is then M_PENDING), -1 when the thread is gone (e is
 * then dropped: do not use it). */
static int wait_stop(rec_stopper *s, tracee *e, int64_t limit_ns)
{
    pid_t tid = e->tid;
    int64_t t0 = 0;
    for (int looks = 0;; looks++) {
        int status;
        pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
        if (r == tid && WIFSTOPPED(status)) {
            note_stop(e, status);
            return 1;
        }
        if (r == tid) {
            ended(s, tid, status);
            return -1;
        }
        if (r < 0 && errno != EINTR) {
            drop(s, e); /* not ours to wait for any more (ECHILD) */
            return -1;
        }
        if (r < 0)
            continue;
        if (looks == 0)
            t0 = now_ns();
        else if (now_ns() - t0 > limit_ns) {
            e->mode = M_PENDING;
            s->stats.slow++;
            return 0;
        }
        /* a thread on a CPU stops within microseconds: look again at
         * once a few times, then sleep a little between looks (not
         * sched_yield: on a busy machine a yield can give the CPU away
         * for a whole time slice, and a sleeper is woken first) */
        if (looks < BUSY_LOOKS)
            continue;
        struct timespec d = {0, looks < BUSY_LOOKS + SHORT_LOOKS ? 5000 : 50000};
        nanosleep(&d, NULL);
    }
}

/* Stop e now.  1 when it is stopped, 0 when not (gone: e dropped). */
static int stop(rec_stopper *s, tracee *e, int64_t limit_ns)
{
    if (e->mode == M_STOPPED)
        return 1;
    if (e->mode == M_RUNNING || e->mode == M_LISTEN) {
        if (ptrace(PTRACE_INTERRUPT, e->tid, NULL, NULL) != 0) {
            /* gone, its exit not collected yet: rec_stopper_reap will */
            return 0;
        }
        e->mode = M_PENDING;
    }
    return wait_stop(s, e, limit_ns) == 1;
}

/* Let a stopped e run (or stay in its job-control stop). */
static void resume(tracee *e)
{
    e->held = 0;
    if (e->mode != M_STOPPED)
        return;
    if (e->group) {
        if (ptrace(PTRACE_LISTEN, e->tid, NULL, NULL) == 0) {
            e->mode = M_LISTEN;
            return;
        }
    }
    (void)ptrace(PTRACE_CONT, e->tid, NULL, (void *)(long)e->sig);
    /* a failure means it died meanwhile: its exit comes to reap */
    e->mode = M_RUNNING;
    e->sig = 0;
}

/* The state of th now, as the kernel says: 'R', 'S', ...; 0 unknown. */
static char state_now(const struct rec_thread *th)
{
    if (th->state_fd < 0)
        return 0;
    return th->state_is_stat ? rec_fd_state(th->state_fd) : rec_fd_syscall_state(th->state_fd);
}

/* Stop th for a read, given its state before.  1 when held. */
static int hold_one(rec_stopper *s, pid_t pid, const struct rec_thread *th, char before)
{
    if (th->tid <= 0 || before == 'S' || before == 'Z' || before == 'X')
        return 0; /* blocked (or ending): its stack is not moving */
    if (rec_stopper_seize(s, pid, (pid_t)th->tid) != 0)
        return 0;
    tracee *e = find(s, (pid_t)th->tid);
    if (!e || e->mode == M_LISTEN)
        return 0; /* stopped by job control: not moving either */
    if (!stop(s, e, s->wait_ns))
        return 0;
    e = find(s, (pid_t)th->tid); /* still there: stop() said so */
    e->held = e->was = 1;
    e->before = before ? before : 'R';
    s->stats.stops++;
    return 1;
}

void rec_stopper_hold(rec_stopper *s, struct rec_target *t)
{
    if (!s)
        return;
    for (size_t i = 0; i < t->threads.n; i++) {
        const rec_thread *th = &t->threads.v[i];
        if (th->quiet && th->last_ok)
            continue; /* its stack is repeated, not read */
        if (th->sw.fd >= 0 && th->pre_set) {
            /* 'I' on a CPU, 'P' preempted, 'S' blocked (switches.c) */
            if (th->pre_kind == 'I')
                hold_one(s, t->pid, th, 'R');
        } else {
            hold_one(s, t->pid, th, state_now(th));
        }
    }
}

int rec_stopper_enter(rec_stopper *s, struct rec_target *t, struct rec_thread *th)
{
    if (!s || th->tid <= 0)
        return 0;
    const tracee *e = find(s, (pid_t)th->tid);
    if (e && (e->held || e->mode == M_LISTEN))
        return 0;
    return hold_one(s, t->pid, th, state_now(th));
}

void rec_stopper_leave(rec_stopper *s, pid_t tid)
{
    tracee *e = s ? find(s, tid) : NULL;
    if (e && e->held)
        resume(e);
}

void rec_stopper_release(rec_stopper *s)
{
    for (size_t i = 0; s && i < s->n; i++) {
        if (s->v[i].held)
            resume(&s->v[i]);
        s->v[i].was = 0;
    }
}

char rec_stopper_state(const rec_stopper *s, pid_t tid)
{
    const tracee *e = s ? find(s, tid) : NULL;
    return e && e->was ? e->before : 0;
}

/* The first queued exit of which (-1: any), removed; 0 when none. */
static pid_t take_exit(rec_stopper *s, pid_t which, int *status)
{
    for (size_t i = 0; i < s->nexit; i++) {
        if (which != -1 && s->exits[i].pid != which)
            continue;
        pid_t pid = s->exits[i].pid;
        *status = s->exits[i].status;
        memmove(&s->exits[i], &s->exits[i + 1], (s->nexit - i - 1) * sizeof *s->exits);
        s->nexit--;
        return pid;
    }
    return 0;
}

pid_t rec_stopper_reap(rec_stopper *s, pid_t which, int *status)
{
    if (!s)
        return waitpid(which, status, WNOHANG);
    pid_t q = take_exit(s, which, status);
    if (q)
        return q;
    for (;;) {
        int st;
        pid_t r = waitpid(-1, &st, __WALL | WNOHANG);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return r;
        }
        tracee *e = find(s, r);
        if (WIFSTOPPED(st)) {
            if (e) {
                /* a signal for the program, a job-control stop, or the
                 * stop of a read that gave up waiting: answer it now */
                note_stop(e, st);
                resume(e);
            }
            continue;
        }
        int leader = !e || e->tid == e->pid;
        if (e)
            drop(s, e);
        if (!leader)
            continue; /* one thread ended: the process goes on */
        if (which == -1 || r == which) {
            *status = st;
            return r;
        }
        queue_exit(s, r, st);
    }
}

int rec_stopper_detach_all(rec_stopper *s)
{
    if (!s)
        return 0;
    int left = 0;
    for (size_t i = s->n; i-- > 0;) {
        if (i >= s->n)
            continue; /* entries dropped under us */
        tracee *e = &s->v[i];
        e->held = 0;
        pid_t tid = e->tid;
        if (!stop(s, e, DETACH_WAIT_NS)) {
            if ((e = find(s, tid)) && e->mode == M_PENDING)
                left++;
            continue;
        }
        e = find(s, tid);
        /* a job-control stop is kept by the kernel after the detach */
        (void)ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)e->sig);
        drop(s, e);
    }
    return left;
}

void rec_stopper_free(rec_stopper *s)
{
    if (!s)
        return;
    (void)rec_stopper_detach_all(s);
    trc_free(s->v);
    trc_free(s->ref);
    trc_free(s->exits);
    trc_free(s);
}

int rec_stopper_take_refusal(rec_stopper *s, pid_t *pid, int *err)
{
    for (size_t i = 0; s && i < s->nref; i++) {
        if (s->ref[i].reported)
            continue;
        s->ref[i].reported = 1;
        *pid = s->ref[i].pid;
        *err = s->ref[i].err;
        return 1;
    }
    return 0;
}

void rec_stopper_get_stats(const rec_stopper *s, rec_stopper_stats *out)
{
    if (s)
        *out = s->stats;
    else
        memset(out, 0, sizeof *out);
}
