/*
 * dump_stacks.c — `trec --dump`: one tick of the recorder, printed
 * (lib/rec/dump.h).
 *
 * The target is found and attached as a recording attaches (target.c:
 * the same permission and version diagnostics), its descendants as a
 * recording finds them (children.c), and each process's threads and
 * stacks are read by lib/py in one tick, from outside: the process runs
 * on, and a wedged or stopped one answers at once, since nothing here
 * waits on it.  Threads with no Python thread state are left out.
 */
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
    return s == REC_DUMP_RUNNING ? "running" : s == REC_DUMP_IDLE ? "idle" : "unknown";
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
static int read_threads(rec_target *t)
{
    for (;;) {
        int n = py_proc_threads(t->py, t->tinfo, (int)t->tcap, 1);
        if (n < (int)t->tcap || t->tcap >= DUMP_MAX_THREADS)
            return n;
        if (trcu_grow32(&t->tinfo, &t->tcap, t->tcap, sizeof *t->tinfo) != TRC_OK)
            return n;
    }
}

/* Name and scheduler state of the thread lib/py calls ns_tid. */
static void describe(rec_target *t, rec_dump_thread *d, int64_t ns_tid)
{
    int64_t tid = ns_tid;
    if (t->threads.nested && ns_tid > 0)
        tid = rec_threads_outer_tid(&t->threads, t->pid, ns_tid);
    d->tid = tid;
    const char *pyname = ns_tid > 0 ? py_proc_thread_name(t->py, ns_tid) : NULL;
    if (pyname)
        snprintf(d->name, sizeof d->name, "%s", pyname);
    else if (tid <= 0 || rec_proc_comm(t->pid, (pid_t)tid, d->name, sizeof d->name) != 0)
        d->name[0] = '\0';
    rec_stat st;
    if (tid <= 0 || rec_proc_stat(t->pid, (pid_t)tid, &st) != 0)
        d->state = REC_DUMP_UNKNOWN;
    else
        d->state = st.state == 'R' ? REC_DUMP_RUNNING : REC_DUMP_IDLE;
}

/* One process's threads and stacks into p.  0, or -1 without memory. */
static int read_process(rec_target *t, rec_dump_proc *p)
{
    memset(p, 0, sizeof *p);
    p->pid = t->pid;
    p->ppid = t->ppid;
    p->command = t->cmdline[0] ? t->cmdline : t->exe;
    p->version = py_proc_version(t->py);
    int n = read_threads(t);
    if (n <= 0)
        return 0; /* torn or empty: shown as a process without threads */
    p->threads = trc_calloc((size_t)n, sizeof *p->threads);
    if (!p->threads)
        return -1;
    for (int i = 0; i < n; i++) {
        const py_thread_info *ti = &t->tinfo[i];
        if (!ti->tstate)
            continue;
        rec_dump_thread *d = &p->threads[p->n_threads++];
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
    }
    return 0;
}

static void free_procs(rec_dump_proc *procs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < procs[i].n_threads; j++)
            trc_free(procs[i].threads[j].frames);
        trc_free(procs[i].threads);
    }
    trc_free(procs);
}

int rec_dump_run(pid_t pid, int subprocesses, int json, FILE *out, rec_message_fn msg,
                 void *msg_ctx)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        say(msg, msg_ctx, REC_MSG_ERROR, "no process with pid %d", (int)pid);
        return 2;
    }
    rec_targets ts;
    memset(&ts, 0, sizeof ts);
    rec_dump_proc *procs = NULL;
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
            read_process(t, &procs[nprocs++]) != 0) {
            say(msg, msg_ctx, REC_MSG_ERROR, "out of memory");
            goto done;
        }
    }
    if (nprocs == 0) {
        say(msg, msg_ctx, REC_MSG_ERROR, "no process in the tree of pid %d is Python%s%s%s",
            (int)pid, root->err[0] ? " (" : "", root->err, root->err[0] ? ")" : "");
        goto done;
    }
    if (json) {
        if (rec_dump_json(out, procs, (int)nprocs) != 0) {
            say(msg, msg_ctx, REC_MSG_ERROR, "out of memory");
            goto done;
        }
    } else {
        rec_dump_text(out, procs, (int)nprocs);
    }
    status = fflush(out) == 0 && !ferror(out) ? 0 : 1;
    if (status)
        say(msg, msg_ctx, REC_MSG_ERROR, "standard output: %s", strerror(errno));
done:
    free_procs(procs, nprocs);
    rec_targets_cleanup(&ts);
    return status;
}
