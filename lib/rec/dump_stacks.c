/*
 * dump_stacks.c — `trec --dump`: one tick of the recorder, printed
 * (lib/rec/dump.h).
 *
 * The target is found and attached as a recording attaches (target.c:
 * the same permission and version diagnostics), its descendants as a
 * recording finds them (children.c), and each process's threads and
 * stacks are read by lib/py in one tick, from outside: the process runs
 * on, and a wedged or stopped one answers at once, since nothing here
 * waits on it.  Threads with no Python thread state are the tasks of
 * /proc/PID/task that no thread state names, listed by their OS name.
 */
#include "lib/py/py_values.h"
#include "lib/rec/dump.h"
#include "lib/rec/rec_int.h"
#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* An interpreter still starting is retried for at most this long, so
 * that a dump returns well within a second whatever the target does. */
#define DUMP_ATTACH_WAIT_NS (300 * 1000000LL)
/* Threads read per process at most. */
#define DUMP_MAX_THREADS 65536
/* A thread list found inconsistent (threads starting or ending while it
 * was read) is read again at most this many times, a moment apart, as
 * lib/py retries a torn stack: bounded, so a dump never waits on a
 * target that keeps changing. */
#define DUMP_LIST_TRIES 5
#define DUMP_LIST_RETRY_US 2000
/* Before 3.11 a thread's OS id is inferred (lib/py/py_tid.c), which
 * fails while threads start and end under the look; lib/py looks again
 * 10 ms later, then at growing intervals.  A list with a thread whose id
 * is unknown is read again for at most this long. */
#define DUMP_TID_WAIT_NS (300 * 1000000LL)
#define DUMP_TID_RETRY_US 10000

static void say(rec_message_fn msg, void *ctx, rec_msg_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (msg)
        msg(ctx, level, line);
}

const char *rec_dump_state_name(rec_dump_state s)
{
    switch (s) {
    case REC_DUMP_RUNNING: return "running";
    case REC_DUMP_IDLE: return "idle";
    case REC_DUMP_STOPPED: return "stopped";
    case REC_DUMP_ZOMBIE: return "zombie";
    default: return "unknown";
    }
}

/* A /proc state letter in the words of the dump. */
static rec_dump_state state_of(char c)
{
    switch (c) {
    case 'R': return REC_DUMP_RUNNING;
    case 'T': case 't': return REC_DUMP_STOPPED;
    case 'Z': case 'X': case 'x': return REC_DUMP_ZOMBIE;
    default: return REC_DUMP_IDLE;
    }
}

/* Attach, retrying a runtime not initialised yet for a moment. */
static py_status attach(rec_target *t)
{
    int64_t t0 = trc_now_ns();
    for (;;) {
        py_status ps = rec_target_try_attach(t, trc_now_ns());
        if (ps != PY_ERR_NOT_READY || trc_now_ns() - t0 > DUMP_ATTACH_WAIT_NS)
            return ps;
        usleep(10000);
    }
}

/* The thread list, the buffer grown while it comes back full. */
static int read_list(rec_target *t)
{
    for (;;) {
        int n = py_proc_threads(t->py, t->tinfo, (int)t->tcap, 1);
        if (n < (int)t->tcap || t->tcap >= DUMP_MAX_THREADS)
            return n;
        if (trcu_grow32(&t->tinfo, &t->tcap, t->tcap, sizeof *t->tinfo) != TRC_OK)
            return n;
    }
}

static void (*reread_hook)(void *ctx, int k);
static void *reread_ctx;

void rec_dump_set_reread_hook(void (*fn)(void *ctx, int k), void *ctx)
{
    reread_hook = fn;
    reread_ctx = ctx;
}

/* The thread list, read again while it comes back torn: -1 when it
 * still is after DUMP_LIST_TRIES reads, or the process is gone. */
static int read_whole_list(rec_target *t)
{
    for (int i = 0;; i++) {
        int n = read_list(t);
        if (n >= 0 || i + 1 >= DUMP_LIST_TRIES || py_proc_last_error(t->py) != PY_ERR_IO)
            return n;
        usleep(DUMP_LIST_RETRY_US);
        if (reread_hook)
            reread_hook(reread_ctx, i + 1);
    }
}

static int tid_unknown(const rec_target *t, int n)
{
    for (int i = 0; i < n; i++)
        if (t->tinfo[i].tstate && t->tinfo[i].tid <= 0)
            return 1;
    return 0;
}

/* The thread list, whole, and with every thread's OS id if lib/py finds
 * them within DUMP_TID_WAIT_NS. */
static int read_threads(rec_target *t)
{
    int64_t t0 = trc_now_ns();
    int n = read_whole_list(t);
    while (n >= 0 && tid_unknown(t, n) && trc_now_ns() - t0 < DUMP_TID_WAIT_NS) {
        usleep(DUMP_TID_RETRY_US);
        n = read_whole_list(t);
        if (n < 0) /* the rows of the last list are overwritten: one more */
            return read_whole_list(t);
    }
    return n;
}

/* Name and scheduler state of the thread lib/py calls ns_tid (for a
 * thread without a thread state, d->python 0: the id as we see it). */
static void describe(rec_target *t, rec_dump_thread *d, int64_t ns_tid)
{
    int64_t tid = ns_tid;
    if (t->threads.nested && ns_tid > 0 && d->python)
        tid = rec_threads_outer_tid(&t->threads, t->pid, ns_tid);
    d->tid = tid;
    const char *pyname = ns_tid > 0 && d->python ? py_proc_thread_name(t->py, ns_tid) : NULL;
    if (pyname)
        snprintf(d->name, sizeof d->name, "%s", pyname);
    else if (tid <= 0 || rec_proc_comm(t->pid, (pid_t)tid, d->name, sizeof d->name) != 0)
        d->name[0] = '\0';
    rec_stat st;
    if (tid <= 0 || rec_proc_stat(t->pid, (pid_t)tid, &st) != 0)
        d->state = REC_DUMP_UNKNOWN;
    else
        d->state = state_of(st.state);
}

/* The OS id of each Python thread of tinfo[0..n) into ids; 0, or -1 when
 * one is unknown (then no task can be called a thread without a thread
 * state). */
static int python_tids(rec_target *t, int n, int64_t *ids)
{
    for (int i = 0; i < n; i++) {
        int64_t tid = t->tinfo[i].tid;
        if (tid > 0 && t->threads.nested)
            tid = rec_threads_outer_tid(&t->threads, t->pid, tid);
        if (tid <= 0)
            return -1;
        ids[i] = tid;
    }
    return 0;
}

/* Appends to p the tasks of the process that no Python thread state
 * names.  0, or -1 without memory. */
static int add_natives(rec_target *t, rec_dump_proc *p, int n, size_t *cap)
{
    int64_t *ids = trc_malloc(((size_t)n + 1) * sizeof *ids);
    if (!ids)
        return -1;
    if (python_tids(t, n, ids) != 0) {
        p->natives_unknown = 1;
        trc_free(ids);
        return 0;
    }
    pid_t *tasks = NULL;
    size_t tcap = 0;
    int m = -1;
    for (;;) {
        /* room for m tasks, and one more, so that a full list shows */
        if (trcu_grow((void **)&tasks, &tcap, m < 64 ? 64 : (size_t)m, sizeof *tasks) != TRC_OK) {
            trc_free(tasks);
            trc_free(ids);
            return -1;
        }
        m = rec_proc_tasks(t->pid, tasks, (int)tcap);
        if (m < (int)tcap || tcap >= DUMP_MAX_THREADS)
            break;
    }
    if (m > (int)tcap)
        m = (int)tcap;
    int rc = 0;
    for (int i = 0; i < m && rc == 0; i++) {
        int known = 0;
        for (int j = 0; j < n && !known; j++)
            known = ids[j] == tasks[i];
        if (known)
            continue;
        if (trcu_grow((void **)&p->threads, cap, (size_t)p->n_threads, sizeof *p->threads) !=
            TRC_OK) {
            rc = -1;
            break;
        }
        rec_dump_thread *d = &p->threads[p->n_threads++];
        memset(d, 0, sizeof *d);
        d->holds_gil = -1;
        describe(t, d, tasks[i]);
    }
    trc_free(tasks);
    trc_free(ids);
    return rc;
}

/* What py_proc_locals gives for one thread, checked against its stack. */
typedef struct locals_read {
    rec_dump_thread *d;
    int moved;               /* a frame's function is not the stack's */
    int nomem;
} locals_read;

static void on_frame(void *ctx, int frame, const char *function, int locals)
{
    locals_read *r = ctx;
    if (frame >= r->d->depth) {
        r->moved = 1;
        return;
    }
    if (locals < 0) {
        r->d->frame_unread[frame] = 1;
        /* what was given of it is not to be trusted */
        while (r->d->n_locals && r->d->locals[r->d->n_locals - 1].frame == frame) {
            rec_dump_local *l = &r->d->locals[--r->d->n_locals];
            trc_free(l->name);
            trc_free(l->value);
        }
    } else if (strcmp(function, r->d->frames[frame]->function) != 0) {
        r->moved = 1;
    }
}

static char *copy(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = trc_malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

static void on_local(void *ctx, int frame, const char *name, const char *value)
{
    locals_read *r = ctx;
    rec_dump_thread *d = r->d;
    if (r->nomem || frame >= d->depth)
        return;
    if (trcu_grow((void **)&d->locals, &d->locals_cap, d->n_locals, sizeof *d->locals) != TRC_OK) {
        r->nomem = 1;
        return;
    }
    rec_dump_local *l = &d->locals[d->n_locals];
    l->frame = frame;
    l->name = copy(name);
    l->value = copy(value);
    if (!l->name || !l->value) {
        trc_free(l->name);
        trc_free(l->value);
        r->nomem = 1;
        return;
    }
    d->n_locals++;
}

static void free_locals(rec_dump_thread *d)
{
    for (size_t i = 0; i < d->n_locals; i++) {
        trc_free(d->locals[i].name);
        trc_free(d->locals[i].value);
    }
    trc_free(d->locals);
    trc_free(d->frame_unread);
    d->locals = NULL;
    d->frame_unread = NULL;
    d->n_locals = d->locals_cap = 0;
}

/* The locals of every frame of d, read after its stack: shown only when
 * the frames read for them are the stack's.  0, or -1 without memory. */
static int read_locals(rec_target *t, rec_dump_thread *d, uint64_t tstate)
{
    if (d->depth <= 0)
        return 0;
    d->frame_unread = trc_calloc((size_t)d->depth, 1);
    if (!d->frame_unread)
        return -1;
    locals_read r = {d, 0, 0};
    int n = py_proc_locals(t->py, tstate, d->depth, on_frame, on_local, &r);
    if (r.nomem)
        return -1;
    if (n < 0 || n != d->depth || r.moved) {
        free_locals(d);
        d->locals_missing =
            n < 0 && py_proc_last_error(t->py) == PY_ERR_VERSION
                ? "locals not supported on this build"
                : "locals not shown: the stack changed while they were read";
    }
    return 0;
}

int rec_dump_read_process(rec_target *t, rec_dump_proc *p, int locals)
{
    memset(p, 0, sizeof *p);
    p->pid = t->pid;
    p->ppid = t->ppid;
    p->command = t->cmdline[0] ? t->cmdline : t->exe;
    p->version = py_proc_version(t->py);
    int n = read_threads(t);
    p->no_gil = py_proc_no_gil(t->py); /* as the thread list just read says */
    if (n < 0) {
        p->torn = py_proc_last_error(t->py) == PY_ERR_IO;
        return 0; /* shown as a process without threads */
    }
    size_t cap = (size_t)n + 1;
    p->threads = trc_calloc(cap, sizeof *p->threads);
    if (!p->threads)
        return -1;
    for (int i = 0; i < n; i++) {
        const py_thread_info *ti = &t->tinfo[i];
        if (!ti->tstate)
            continue;
        rec_dump_thread *d = &p->threads[p->n_threads++];
        d->python = 1;
        describe(t, d, ti->tid);
        d->holds_gil = ti->holds_gil;
        d->depth = py_proc_stack_trunc(t->py, ti->tstate, t->frames, REC_MAX_DEPTH - 1,
                                       &d->truncated);
        if (d->depth <= 0)
            continue;
        d->frames = trc_malloc((size_t)d->depth * sizeof *d->frames);
        if (!d->frames)
            return -1;
        memcpy(d->frames, t->frames, (size_t)d->depth * sizeof *d->frames);
        if (locals && read_locals(t, d, ti->tstate) != 0)
            return -1;
    }
    /* the thread states are read (their kernel ids known) before the
     * task list: a thread started in between is listed as without a
     * thread state, never a Python thread twice */
    return add_natives(t, p, n, &cap);
}

void rec_dump_procs_free(rec_dump_proc *procs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < procs[i].n_threads; j++) {
            trc_free(procs[i].threads[j].frames);
            free_locals(&procs[i].threads[j]);
        }
        trc_free(procs[i].threads);
    }
    trc_free(procs);
}

int rec_dump_run(pid_t pid, int subprocesses, int json, int locals, FILE *out,
                 rec_message_fn msg, void *msg_ctx)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        say(msg, msg_ctx, REC_MSG_ERROR, "no process with pid %d", (int)pid);
        return 2;
    }
    rec_targets ts;
    memset(&ts, 0, sizeof ts);
    rec_dump_proc *procs = NULL;
    rec_dump_groups groups = {NULL, 0};
    size_t nprocs = 0, cap = 0;
    int status = 2;
    rec_target *root = rec_targets_add(&ts, pid, 1, 0, trc_now_ns());
    if (!root) {
        say(msg, msg_ctx, REC_MSG_ERROR, "out of memory");
        goto done;
    }
    py_status ps = attach(root);
    /* with --subprocesses a launcher that is not Python (a shell,
     * mpirun) leads to the Python processes below it */
    if (ps != PY_OK && !(subprocesses && ps == PY_ERR_NOT_PYTHON)) {
        say(msg, msg_ctx, REC_MSG_ERROR, "%s", root->err[0] ? root->err : "cannot read the process");
        goto done;
    }
    if (subprocesses && rec_children_scan(&ts, 0, trc_now_ns()) < 0) {
        say(msg, msg_ctx, REC_MSG_ERROR, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ts.n; i++) {
        rec_target *t = ts.v[i];
        if (t->state != REC_T_ATTACHED) {
            py_status cs = attach(t);
            if (cs == PY_ERR_PERM || cs == PY_ERR_VERSION)
                say(msg, msg_ctx, REC_MSG_WARN, "subprocess %d not shown: %s", (int)t->pid, t->err);
            if (cs != PY_OK)
                continue;
        }
        if (trcu_grow((void **)&procs, &cap, nprocs, sizeof *procs) != TRC_OK ||
            rec_dump_read_process(t, &procs[nprocs++], locals) != 0) {
            say(msg, msg_ctx, REC_MSG_ERROR, "out of memory");
            goto done;
        }
    }
    if (nprocs == 0) {
        say(msg, msg_ctx, REC_MSG_ERROR, "no process in the tree of pid %d is Python%s%s%s",
            (int)pid, root->err[0] ? " (" : "", root->err, root->err[0] ? ")" : "");
        goto done;
    }
    if (rec_dump_group_stacks(procs, (int)nprocs, &groups) != 0) {
        say(msg, msg_ctx, REC_MSG_ERROR, "out of memory");
        goto done;
    }
    if (json) {
        if (rec_dump_json(out, procs, (int)nprocs, &groups, locals) != 0) {
            say(msg, msg_ctx, REC_MSG_ERROR, "out of memory");
            goto done;
        }
    } else {
        rec_dump_text(out, procs, (int)nprocs, &groups);
    }
    status = fflush(out) == 0 && !ferror(out) ? 0 : 1;
    if (status)
        say(msg, msg_ctx, REC_MSG_ERROR, "standard output: %s", strerror(errno));
done:
    rec_dump_groups_free(&groups);
    rec_dump_procs_free(procs, nprocs);
    rec_targets_cleanup(&ts);
    return status;
}
