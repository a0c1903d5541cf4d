/*
 * target.c — one process being recorded: attaching (with retries while
 * it starts), its PROCESS record, one tick of samples of every thread,
 * its RSS counter, and noticing exec and exit.
 *
 * Attaching.  A program trec has just started is not Python yet for a
 * moment: right after exec only the executable and the dynamic loader
 * are mapped (a pyenv build maps libpython later), a shim script may
 * exec the real interpreter, and the runtime is not initialised until
 * Py_Initialize has run.  So NOT_PYTHON and NOT_READY (lib/py's answer
 * for an executable whose libpython is not mapped yet) are retried
 * (every 1 ms, backing off to 50 ms) for a grace period of 2 s, which
 * starts again whenever the process execs.  Other failures (permission,
 * an unsupported version) are final until an exec.
 *
 * Samples.  Each tick reads the thread list, then for each thread its
 * stack (lib/py fetched the stacks it expects with the list: one read
 * call per tick) and its scheduler state: from its switch records
 * (switches.c) where perf events are allowed, else one pread of its
 * /proc file (procfs.c), and whether it is on CPU: the CPU time it got
 * since its last sample (oncpu.c); then refreshes thread names where due.  A
 * thread whose switch records have not moved since the look before its
 * last stack was read, and that was switched out then, has not run
 * since: its last stack is written again and nothing of it is read
 * (lib/py is told before the list is read, so that its read plans no
 * stack of it).  A stack
 * lib/py finds inconsistent is dropped and counted (TRC_LOSS_SAMPLES_
 * INVALID), never replaced by a guess.  A thread that ended between the
 * list and its stat read is skipped silently: it no longer exists.
 * Then the threads with no Python thread state (natives.c): their state
 * and a one-frame stack, nothing read from the target's memory.
 *
 * Exec is noticed by the stack start address in /proc/PID/stat changing
 * (the new image gets a new, randomised stack; the executable path may
 * stay the same, as with subprocess running sys.executable).
 *
 * Pid reuse.  Memory is read by pid number, and once the process has
 * exited and been reaped its number may go to another process at once
 * (a small pid namespace, ns_last_pid).  A sample is written only when
 * the process provably still existed after its stack was read: the
 * thread's state file is read after the stack, and that file, opened
 * earlier, follows that very thread (hence its process, which holds
 * its pid while any thread lives) and fails once it is gone.  With
 * switch records the state file is read only every REC_STATE_PROC_NS (an
 * id that came back is noticed then); in between the process's pidfd,
 * which follows that very process, is polled after each stack read,
 * and once a tick before a repeated stack is written (not for trec's
 * own child: it cannot be reaped, so its pid not reused, before trec
 * waits for it between ticks).  A state
 * file just opened by number (a new thread, an id that came back) does
 * not prove that, so then the process's own stat file, open since the
 * target was found, is read too; when it fails the tick stops and the
 * liveness check runs next tick, which ends the target (pid_reused when
 * its pid already names another process).
 *
 * Depth.  A stack deeper than the format allows (REC_MAX_DEPTH) keeps
 * its innermost frames under a synthetic root frame <truncated>; it is
 * a sample like any other, counted in truncated for a warning.
 */
#include "lib/rec/rec_int.h"
#include "lib/rec/stopper.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GRACE_NS 2000000000LL        /* keep retrying attach this long */
#define RETRY_FIRST_NS 1000000LL     /* 1 ms */
#define RETRY_MAX_NS 50000000LL      /* 50 ms */
#define CHECK_NS 50000000LL          /* liveness/exec check: 20 Hz */
#define RSS_NS 100000000LL           /* RSS counter: 10 Hz */
#define MAX_THREADS 65536

int rec_target_init(rec_target *t, pid_t pid, int is_root, int launched, int64_t now_ns)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->ppid = -1;
    t->rank = -1;
    t->is_root = is_root;
    t->launched = launched;
    t->threads.born = launched; /* all its threads began under trec */
    t->state = REC_T_WAITING;
    t->found_ns = now_ns;
    t->attach_since_ns = now_ns;
    t->next_try_ns = now_ns;
    t->give_up_ns = now_ns + GRACE_NS;
    t->next_check_ns = now_ns + CHECK_NS;
    t->stat_fd = t->statm_fd = t->pid_fd = -1;
    t->last_err = PY_ERR_NOT_READY;
    rec_loss_init(&t->invalid, TRC_LOSS_SAMPLES_INVALID, pid);
    rec_stat st;
    if (rec_proc_stat(pid, 0, &st) == 0) {
        t->ppid = st.ppid;
        t->starttime = st.starttime;
        t->startstack = st.startstack;
    }
    if (rec_proc_exe(pid, t->exe, sizeof t->exe) != 0)
        t->exe[0] = '\0';
    if (rec_proc_cmdline(pid, t->cmdline, sizeof t->cmdline) != 0)
        t->cmdline[0] = '\0';
    t->stat_fd = rec_proc_open(pid, 0, "stat");
#ifdef SYS_pidfd_open
    t->pid_fd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    t->switches_ok = t->pid_fd >= 0 && rec_switches_allowed();
    t->trunc_frame.function = rec_truncated_name;
    t->trunc_frame.file = "";
    t->tcap = 16;
    t->tinfo = trc_calloc((size_t)t->tcap, sizeof *t->tinfo);
    t->frames = trc_calloc(REC_MAX_DEPTH, sizeof *t->frames);
    if (!t->tinfo || !t->frames) {
        rec_target_cleanup(t);
        return -1;
    }
    return 0;
}

uint64_t rec_target_torn_retries(const rec_target *t)
{
    py_proc_stats st = { 0 };
    if (t->py)
        py_proc_get_stats(t->py, &st);
    return t->torn_retries + st.torn_retries;
}

static void detach(rec_target *t)
{
    rec_threads_cleanup(&t->threads);
    if (t->py) {
        t->torn_retries = rec_target_torn_retries(t);
        py_proc_free(t->py);
    }
    t->py = NULL;
}

void rec_target_cleanup(rec_target *t)
{
    detach(t);
    if (t->stat_fd >= 0)
        close(t->stat_fd);
    if (t->statm_fd >= 0)
        close(t->statm_fd);
    if (t->pid_fd >= 0)
        close(t->pid_fd);
    t->stat_fd = t->statm_fd = t->pid_fd = -1;
    trc_free(t->tinfo);
    trc_free(t->frames);
    trc_free(t->dup);
    t->dup = NULL;
    t->dupcap = 0;
    t->tinfo = NULL;
    t->frames = NULL;
}

/* A worker's role shows in its main thread's stack once it runs its
 * loop: at once for a forked one, after its imports for a spawned one
 * (seconds for torch).  Its stacks are looked at for this long after
 * attach, then no more, so that the cost stays with a process's start. */
#define ROLE_LOOK_NS (15 * 1000000000LL)

py_status rec_target_try_attach(rec_target *t, int64_t now_ns)
{
    py_proc *py = NULL;
    t->err[0] = '\0';
    py_status st = py_proc_attach(t->pid, &py, t->err, sizeof t->err);
    t->last_err = st;
    if (st != PY_OK)
        return st;
    t->py = py;
    t->state = REC_T_ATTACHED;
    t->process_written = 0;
    t->ids_seen = 0;
    /* a new image: its rank and role are looked at again */
    t->rank = rec_proc_rank(t->pid);
    t->label[0] = '\0';
    t->role_until_ns = now_ns + ROLE_LOOK_NS;
    t->threads.nested = py_ns_nested(t->pid);
    /* the image is complete now (its libpython runs); what init read may
     * have been taken while exec was still setting it up */
    rec_stat s;
    if (rec_proc_stat(t->pid, 0, &s) == 0 && s.starttime == t->starttime)
        t->startstack = s.startstack;
    (void)rec_proc_exe(t->pid, t->exe, sizeof t->exe);
    return PY_OK;
}

trc_status rec_target_write_process(rec_target *t, trc_writer *w, int64_t now_ns)
{
    char interp[64];
    trc_process p;
    memset(&p, 0, sizeof p);
    p.pid = t->pid;
    p.ppid = t->ppid;
    (void)rec_proc_exe(t->pid, t->exe, sizeof t->exe); /* keeps the last one read if gone */
    p.executable = t->exe;
    interp[0] = '\0';
    if (t->py)
        snprintf(interp, sizeof interp, "CPython %s", py_proc_version(t->py));
    p.interpreter = interp;
    char cmdline[sizeof t->cmdline];
    if (rec_proc_cmdline(t->pid, cmdline, sizeof cmdline) == 0 && cmdline[0])
        memcpy(t->cmdline, cmdline, sizeof cmdline);
    p.command_line = t->cmdline;
    p.start_ns = rec_start_ns(t->starttime);
    if (p.start_ns == 0)
        p.start_ns = t->found_ns;
    p.rank = t->rank;
    p.label = t->label;
    /* the same words `trec -v` says, so a trace tells which layout read it */
    p.layout = t->py ? py_proc_layout_source(t->py) : "";
    trc_status st = trc_writer_process(w, &p);
    if (st == TRC_OK) {
        t->process_written = 1;
        t->process_records++;
        t->layout_changes = t->py ? py_proc_layout_changes(t->py) : 0;
        if (t->statm_fd < 0)
            t->statm_fd = rec_proc_open(t->pid, 0, "statm");
        t->next_rss_ns = now_ns;
    }
    return st;
}

trc_status rec_target_exited(rec_target *t, trc_writer *w, int64_t now_ns, int wait_status)
{
    trc_status st = TRC_OK;
    if (t->state == REC_T_ENDED)
        return TRC_OK;
    if (w && !t->process_written && (t->is_root || t->py))
        st = rec_target_write_process(t, w, now_ns);
    if (w && st == TRC_OK && t->process_written) {
        trc_process_exit e;
        memset(&e, 0, sizeof e);
        e.pid = t->pid;
        e.time_ns = now_ns;
        if (wait_status < 0) {
            e.exit_code = -1; /* unknown: the exit was not seen */
        } else if (WIFSIGNALED(wait_status)) {
            e.signal = WTERMSIG(wait_status);
        } else {
            e.exit_code = WEXITSTATUS(wait_status);
        }
        st = trc_writer_process_exit(w, &e);
    }
    if (w && st == TRC_OK)
        st = rec_loss_flush(&t->invalid, w, "torn or inconsistent stacks");
    detach(t);
    t->state = REC_T_ENDED;
    return st;
}

/* Liveness and exec check.  Returns TRC_OK or a writer error. */
static trc_status check_process(rec_target *t, rec_tick_ctx *ctx)
{
    char buf[1024];
    rec_stat s;
    ssize_t n = t->stat_fd >= 0 ? rec_fd_read(t->stat_fd, buf, sizeof buf) : -1;
    int gone = n <= 0 || rec_stat_parse(buf, (size_t)n, &s) != 0;
    if (!gone && t->starttime && s.starttime != t->starttime)
        gone = 1; /* the pid now belongs to another process */
    if (gone || s.state == 'Z' || s.state == 'X') {
        /* trec's own child: waitpid gives the exact status (session) */
        if (t->launched)
            return TRC_OK;
        rec_stat now;
        if (gone && rec_proc_stat(t->pid, 0, &now) == 0 && now.starttime != t->starttime)
            t->pid_reused = 1;
        return rec_target_exited(t, ctx->w, ctx->now_ns, gone ? -1 : s.exit_code);
    }
    char exe[sizeof t->exe];
    if (rec_proc_exe(t->pid, exe, sizeof exe) != 0)
        memcpy(exe, t->exe, sizeof exe);
    /* startstack reads 0 once the process has let go of its memory on
     * the way out (and without permission): that is no exec */
    if ((s.startstack && s.startstack != t->startstack) || strcmp(exe, t->exe) != 0) {
        /* exec: a new image, maybe another interpreter or none */
        t->startstack = s.startstack;
        memcpy(t->exe, exe, sizeof exe);
        char cmdline[sizeof t->cmdline];
        if (rec_proc_cmdline(t->pid, cmdline, sizeof cmdline) == 0 && cmdline[0])
            memcpy(t->cmdline, cmdline, sizeof cmdline);
        t->give_up_ns = ctx->now_ns + GRACE_NS;
        t->attach_since_ns = ctx->now_ns;
        t->err[0] = '\0'; /* what was said of the old image is void */
        t->last_err = PY_ERR_NOT_READY;
        if (t->state == REC_T_WAITING)
            return TRC_OK; /* still attaching: only the grace period starts again */
        detach(t);
        t->state = REC_T_WAITING;
        t->process_written = 0;
        t->next_try_ns = ctx->now_ns;
        t->warned = 0;
    }
    return TRC_OK;
}

static void schedule_retry(rec_target *t, int64_t now_ns)
{
    int64_t since = now_ns - t->attach_since_ns;
    int64_t wait = since < RETRY_FIRST_NS ? RETRY_FIRST_NS : since / 4;
    if (wait > RETRY_MAX_NS)
        wait = RETRY_MAX_NS;
    t->next_try_ns = now_ns + wait;
}

void rec_target_note_layout(const rec_target *t, const rec_config *cfg)
{
    if (!cfg || !cfg->verbose || !cfg->message || !t->py)
        return;
    char line[1024];
    snprintf(line, sizeof line, "pid %d (%.512s): CPython %s, layout from %s", (int)t->pid,
             t->exe[0] ? t->exe : "?", py_proc_version(t->py), py_proc_layout_source(t->py));
    cfg->message(cfg->message_ctx, REC_MSG_NOTE, line);
}

static trc_status step_attach(rec_target *t, rec_tick_ctx *ctx)
{
    py_status ps = rec_target_try_attach(t, ctx->now_ns);
    if (ps == PY_OK) {
        rec_target_note_layout(t, ctx->cfg);
        return rec_target_write_process(t, ctx->w, ctx->now_ns);
    }
    if (ps == PY_ERR_GONE)
        return TRC_OK; /* check_process records the end */
    if ((ps == PY_ERR_NOT_PYTHON || ps == PY_ERR_NOT_READY) && ctx->now_ns < t->give_up_ns) {
        schedule_retry(t, ctx->now_ns);
        return TRC_OK;
    }
    t->state = REC_T_NOT_PYTHON;
    /* the program trec runs is recorded even when it is not Python */
    if (t->is_root && !t->process_written)
        return rec_target_write_process(t, ctx->w, ctx->now_ns);
    return TRC_OK;
}

/* Read the thread list, growing the buffer when it was full. */
static int read_threads(rec_target *t, int gil)
{
    for (;;) {
        int n = py_proc_threads(t->py, t->tinfo, (int)t->tcap, gil);
        if (n < (int)t->tcap || t->tcap >= MAX_THREADS)
            return n;
        /* room for one row past the full list: the capacity doubles */
        if (trcu_grow32(&t->tinfo, &t->tcap, t->tcap, sizeof *t->tinfo) != TRC_OK)
            return n;
    }
}

int rec_target_alive(rec_target *t)
{
    char buf[1024];
    rec_stat s;
    ssize_t n = t->stat_fd >= 0 ? rec_fd_read(t->stat_fd, buf, sizeof buf) : -1;
    if (n <= 0 || rec_stat_parse(buf, (size_t)n, &s) != 0)
        return 0;
    return s.state != 'Z' && s.state != 'X';
}

static int cmp_idpos(const void *a, const void *b)
{
    const rec_idpos *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Thread states not yet of a running thread of their own: one being
 * created carries no id (3.12+) or, until its thread starts, the id of
 * the thread that created it (3.8-3.11).  Sampled, they would add a
 * thread under a stand-in id, or a second sample (of an empty stack) to
 * the creator.  3.12's subinterpreters likewise each keep a state with
 * the id of the thread that made them, idle.  So, once lib/py has told
 * ids of this process (a dying process's threads lose theirs: glibc
 * clears them on exit), this tick drops (tstate 0) an id-less state,
 * and of several states with one id all but the one that thread had
 * before.  A thread seen for the first time (trec attaching) keeps its
 * oldest state: lib/py lists interpreters and their states newest
 * first, and a thread's own state, in its first interpreter, is older
 * than the states it creates for new threads or subinterpreters. */
static void drop_unborn(rec_target *t, int n)
{
    int states = 0;
    for (int i = 0; i < n; i++)
        states += t->tinfo[i].tstate != 0;
    t->unborn = 0;
    for (int i = 0; i < n && !t->ids_seen; i++)
        t->ids_seen = t->tinfo[i].tid > 0;
    if (!t->ids_seen)
        return; /* ids unknown here: every state stands for itself */
    if (n > 1 && t->dupcap < (uint32_t)n)
        (void)trcu_grow32(&t->dup, &t->dupcap, (uint32_t)n - 1, sizeof *t->dup); /* on failure, no dedup this tick */
    if (n > 1 && t->dupcap >= (uint32_t)n) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (t->tinfo[i].tid > 0)
                t->dup[k++] = (rec_idpos){t->tinfo[i].tid, i};
        qsort(t->dup, (size_t)k, sizeof *t->dup, cmp_idpos);
        for (int a = 0, b; a < k; a = b) {
            for (b = a + 1; b < k && t->dup[b].tid == t->dup[a].tid; b++)
                ;
            if (b - a < 2)
                continue;
            uint64_t had = 0;
            for (size_t j = 0; j < t->threads.n; j++)
                if (t->threads.v[j].ns_tid == t->dup[a].tid)
                    had = t->threads.v[j].tstate;
            int known = 0;
            for (int c = a; c < b; c++)
                known |= had && t->tinfo[t->dup[c].at].tstate == had;
            if (!known) /* sorted by place in the list: the oldest is last */
                had = t->tinfo[t->dup[b - 1].at].tstate;
            for (int c = a; c < b; c++) {
                py_thread_info *ti = &t->tinfo[t->dup[c].at];
                if (ti->tstate != had)
                    ti->tstate = 0;
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (t->tinfo[i].tid <= 0)
            t->tinfo[i].tstate = 0;
    for (int i = 0; i < n; i++)
        states -= t->tinfo[i].tstate != 0;
    t->unborn = states;
}

/* Has the process ended?  Its pidfd tells without reading /proc. */
static int ended(rec_target *t)
{
    struct pollfd pf = {.fd = t->pid_fd, .events = POLLIN};
    int r = t->pid_fd >= 0 ? poll(&pf, 1, 0) : -1;
    if (r >= 0)
        return r > 0;
    return !rec_target_alive(t);
}

/* Before the thread list is read: which threads with switch records have
 * not run since their last stack was read (switches.c), so that lib/py
 * plans no read of their stacks.  What each look saw is kept: a stack
 * read after it may be repeated while nothing newer is recorded. */
static void look_switches(rec_target *t)
{
    t->threads.switches = t->switches_ok;
    for (size_t i = 0; i < t->threads.n; i++) {
        rec_thread *th = &t->threads.v[i];
        th->quiet = 0;
        th->pre_set = 0;
        if (th->sw.fd < 0)
            continue;
        th->pre_kind = rec_switches_look(&th->sw, th->sw_first, &th->pre_head);
        th->pre_set = th->pre_kind != 0;
        th->quiet = th->last_ok && th->pre_set && th->pre_head == th->sw_head &&
                    (th->pre_kind == 'S' || th->pre_kind == 'P');
        if (!th->native)
            py_proc_set_idle(t->py, th->tstate, th->quiet);
    }
}

uint32_t rec_sample_flags(const rec_tick_ctx *ctx, const py_thread_info *ti, int on_cpu)
{
    uint32_t flags = on_cpu ? TRC_SAMPLE_ON_CPU : 0;
    /* a process without a GIL has no holder to name, not even "none"
     * for a thread that has no thread state (spec §7.7) */
    if (ctx->gil && !ctx->no_gil && ti->holds_gil >= 0)
        flags |= TRC_SAMPLE_GIL_KNOWN | (ti->holds_gil ? TRC_SAMPLE_HOLDS_GIL : 0);
    return flags;
}

/* The thread's stack into t->frames: its depth, or -1 (invalid).  With
 * --blocking the thread is stopped for the read (stopper.c); one stopped
 * only now is read twice, as the list's fetch saw it running. */
static int read_stack(rec_target *t, rec_tick_ctx *ctx, rec_thread *th,
                      const py_thread_info *ti, int *truncated)
{
    int again = rec_stopper_enter(ctx->stopper, t, th);
    int depth = py_proc_stack_trunc(t->py, ti->tstate, t->frames, REC_MAX_DEPTH - 1, truncated);
    if (again)
        depth = py_proc_stack_trunc(t->py, ti->tstate, t->frames, REC_MAX_DEPTH - 1, truncated);
    rec_stopper_leave(ctx->stopper, (pid_t)th->tid);
    return depth;
}

trc_status rec_sample_quiet(rec_target *t, rec_tick_ctx *ctx, rec_thread *th,
                            const py_thread_info *ti)
{
    /* it has not run since its last sample: on CPU only for what its
     * CPU time still owed then (oncpu.c), nothing read */
    int on_cpu = rec_oncpu_idle(&th->cpu, rec_oncpu_at(ctx), rec_oncpu_period(ctx->cfg));
    uint32_t flags = rec_sample_flags(ctx, ti, on_cpu);
    trc_status st = trc_writer_sample(ctx->w, ctx->now_ns, th->wid, th->last_stack, flags, 0);
    if (st != TRC_OK)
        return st;
    t->truncated += th->last_trunc != 0;
    t->quiet_samples++;
    t->samples++;
    ctx->samples++;
    return TRC_OK;
}

/* The n-th DataLoader worker of a parent, counting from 0 in the order
 * trec found them (the order the DataLoader started them in, unless two
 * start within one scan). */
static unsigned dataloader_index(const rec_tick_ctx *ctx, const rec_target *t)
{
    unsigned n = 0;
    size_t len = strlen(REC_ROLE_DATALOADER);
    for (size_t i = 0; ctx->targets && i < ctx->targets->n; i++) {
        const rec_target *o = ctx->targets->v[i];
        if (o != t && o->ppid == t->ppid && strncmp(o->label, REC_ROLE_DATALOADER, len) == 0)
            n++;
    }
    return n;
}

/* Looks at the main thread's stack just sampled for a role; when it
 * shows one, the PROCESS record is written again with the label (a
 * later record for a pid replaces the description, [R-ID-9]). */
static trc_status look_for_role(rec_target *t, rec_tick_ctx *ctx, int depth)
{
    const char *role = rec_stack_role(t->frames, depth);
    if (!role)
        return TRC_OK;
    if (strcmp(role, REC_ROLE_DATALOADER) == 0)
        snprintf(t->label, sizeof t->label, "%s %u", role, dataloader_index(ctx, t));
    else
        snprintf(t->label, sizeof t->label, "%s", role);
    return rec_target_write_process(t, ctx->w, ctx->now_ns);
}

static trc_status read_samples(rec_target *t, rec_tick_ctx *ctx)
{
    trc_status st = TRC_OK;
    int n = read_threads(t, ctx->gil);
    ctx->no_gil = ctx->gil && py_proc_no_gil(t->py);
    if (n < 0) {
        if (py_proc_last_error(t->py) != PY_ERR_GONE && rec_target_alive(t)) {
            uint64_t k = t->threads.n ? t->threads.n : 1;
            rec_loss_add(&t->invalid, k, ctx->now_ns);
            ctx->invalid += k;
        }
        return TRC_OK;
    }
    t->gen++;
    drop_unborn(t, n);
    if (t->process_written && py_proc_layout_changes(t->py) != t->layout_changes) {
        /* a free-threaded build's GIL turned on or off: its PROCESS
         * record's layout words say so again ([R-ID-9]) */
        rec_target_note_layout(t, ctx->cfg);
        st = rec_target_write_process(t, ctx->w, ctx->now_ns);
        if (st != TRC_OK)
            return st;
    }
    /* the process was seen alive after this tick's reads; trec's own
     * child is: nobody else can reap it, and trec waits for it only
     * between ticks, so its pid cannot go to another process meanwhile */
    int proven = t->launched;
    int gone = 0;
    /* OS threads that are no Python thread can be told only where lib/py
     * gives the Python threads' ids (not a moment it lost them all) */
    int ids_ok = t->ids_seen && n == 0;
    for (int i = 0; i < n; i++)
        ids_ok |= t->ids_seen && t->tinfo[i].tstate && t->tinfo[i].tid > 0;
    for (int i = 0; i < n; i++) {
        const py_thread_info *ti = &t->tinfo[i];
        if (!ti->tstate)
            continue; /* drop_unborn */
        rec_thread *th = rec_threads_get(&t->threads, t->py, t->pid, ti, ctx->now_ns, &st);
        if (!th && st == TRC_OK)
            continue; /* no such task (now) */
        if (!th)
            return st;
        int fresh = th->seen == 0; /* its state file was just opened by number */
        th->seen = t->gen;
        /* last_ok again: rec_threads_get clears it when another thread
         * state now runs on this OS thread */
        int quiet = th->quiet && th->last_ok;
        int truncated = 0, depth = 0;
        if (!quiet) {
            depth = read_stack(t, ctx, th, ti, &truncated);
            if (depth < 0 && py_proc_last_error(t->py) == PY_ERR_GONE) {
                gone = 1;
                break; /* the process exited under us: not a torn read */
            }
        }
        /* the state after the stack: see "Pid reuse" above; with switch
         * records the /proc file is read only every REC_STATE_PROC_NS, for
         * an id that came back, and the pidfd proves the process */
        char state = 0;
        int by_proc = th->state_fd >= 0 && (th->sw.fd < 0 || ctx->now_ns >= th->next_proc_ns);
        if (by_proc) {
            th->next_proc_ns = ctx->now_ns + REC_STATE_PROC_NS;
            state = rec_thread_state(th);
            if (state == 0 || state == 'Z' || state == 'X') {
                /* the thread ended, or its id names a new thread now */
                if (!rec_thread_reopen(&t->threads, th, t->pid, ctx->now_ns))
                    continue;
                fresh = 1;
                state = rec_thread_state(th);
                if (state == 0 || state == 'Z' || state == 'X')
                    continue;
                if (quiet) {
                    /* another thread has the id now: its own stack, read
                     * before the process is checked below */
                    quiet = 0;
                    depth = read_stack(t, ctx, th, ti, &truncated);
                    if (depth < 0 && py_proc_last_error(t->py) == PY_ERR_GONE) {
                        gone = 1;
                        break;
                    }
                }
            }
        }
        if ((fresh || th->state_fd < 0) && !rec_target_alive(t)) {
            t->next_check_ns = ctx->now_ns; /* ended, or the pid is another's: look now */
            gone = 1;
            break;
        }
        if (!by_proc && th->sw.fd >= 0 && !t->launched && (!quiet || !proven)) {
            if (ended(t)) {
                t->next_check_ns = ctx->now_ns;
                gone = 1;
                break;
            }
            proven = 1;
        }
        if (quiet) {
            st = rec_sample_quiet(t, ctx, th, ti);
            if (st != TRC_OK)
                return st;
            continue;
        }
        int running;
        int by_records = rec_thread_look(th, by_proc, &state, &running);
        char before = rec_stopper_state(ctx->stopper, (pid_t)th->tid);
        if (before) {
            state = before; /* what /proc says now is the stop's doing */
            running = 0;
            by_records = 0;
        }
        if (depth < 0) {
            th->last_ok = 0;
            rec_loss_add(&t->invalid, 1, ctx->now_ns);
            ctx->invalid++;
            continue;
        }
        if (truncated) {
            t->frames[depth++] = &t->trunc_frame; /* the root */
            t->truncated++;
        }
        /* before the sample: threading names a thread in its first
         * Python lines, so one that runs Python may have a name now */
        if (depth > 0)
            st = rec_thread_name_eager(th, ctx->w, t->py, t->pid);
        if (st == TRC_OK)
            st = rec_thread_define(th, ctx->w, t->pid);
        if (st != TRC_OK)
            return st;
        if (th->wid > ctx->max_wid)
            ctx->max_wid = th->wid;
        uint32_t stack;
        st = rec_stack_intern(ctx->w, &th->cache, t->frames, depth, &stack);
        if (st != TRC_OK)
            return st;
        /* repeatable while the records stay where the look before this
         * tick's reads found them (never for a thread opened meanwhile) */
        th->last_stack = stack;
        th->last_trunc = truncated;
        th->last_ok = th->sw.fd >= 0 && th->pre_set;
        th->sw_head = th->pre_head;
        th->pre_set = 0;
        /* on CPU: by the CPU time it got since its last sample
         * (oncpu.c), else by its state at this instant */
        int on_cpu = rec_oncpu_sample(&th->cpu, rec_oncpu_at(ctx), rec_oncpu_period(ctx->cfg),
                                      by_records ? running : state == 'R');
        st = trc_writer_sample(ctx->w, ctx->now_ns, th->wid, stack, rec_sample_flags(ctx, ti, on_cpu), 0);
        if (st != TRC_OK)
            return st;
        t->samples++;
        ctx->samples++;
        if (th->tid == t->pid && depth > 0 && !t->label[0] && ctx->now_ns < t->role_until_ns) {
            st = look_for_role(t, ctx, depth);
            if (st != TRC_OK)
                return st;
        }
    }
    if (!gone && ids_ok) {
        st = rec_natives_sample(t, ctx);
        if (st != TRC_OK)
            return st;
    }
    /* names last: a name scan reads the target too, and the stacks
     * above are best read right after the thread list they came with */
    for (size_t i = 0; i < t->threads.n; i++) {
        rec_thread *th = &t->threads.v[i];
        if (th->seen != t->gen)
            continue;
        st = rec_thread_refresh_name(th, ctx->w, t->py, t->pid, ctx->now_ns);
        if (st != TRC_OK)
            return st;
    }
    rec_threads_prune(&t->threads, t->gen);
    /* threads opened after the first task listing began during the
     * recording (oncpu.c: their CPU time before their first sample) */
    if (t->threads.tasks_gen)
        t->threads.born = 1;
    return TRC_OK;
}

/* With --blocking the threads to be read are held stopped from before
 * the list's read (which fetches their stacks too) until each one's
 * stack is read; all run again when the reads are over, whatever the
 * outcome. */
static trc_status sample_threads(rec_target *t, rec_tick_ctx *ctx)
{
    look_switches(t);
    rec_stopper_hold(ctx->stopper, t);
    trc_status st = read_samples(t, ctx);
    rec_stopper_release(ctx->stopper);
    return st;
}

static trc_status sample_rss(rec_target *t, rec_tick_ctx *ctx)
{
    if (ctx->now_ns < t->next_rss_ns || t->statm_fd < 0)
        return TRC_OK;
    t->next_rss_ns = ctx->now_ns + RSS_NS;
    int64_t rss = rec_fd_rss_bytes(t->statm_fd);
    if (rss <= 0)
        return TRC_OK; /* gone, or a zombie whose memory is already released */
    trc_status st = TRC_OK;
    if (!t->rss_counter)
        st = trc_writer_counter_def(ctx->w, "rss", "bytes", t->pid, -1, &t->rss_counter);
    if (st == TRC_OK)
        st = trc_writer_counter(ctx->w, t->rss_counter, ctx->now_ns, (double)rss);
    return st;
}

trc_status rec_target_step(rec_target *t, rec_tick_ctx *ctx)
{
    trc_status st = TRC_OK;
    if (t->state == REC_T_ENDED)
        return TRC_OK;
    if (ctx->now_ns >= t->next_check_ns) {
        t->next_check_ns = ctx->now_ns + CHECK_NS;
        st = check_process(t, ctx);
        if (st != TRC_OK || t->state == REC_T_ENDED)
            return st;
    }
    if (t->state == REC_T_WAITING && ctx->now_ns >= t->next_try_ns) {
        st = step_attach(t, ctx);
        if (st != TRC_OK)
            return st;
    }
    if (t->state == REC_T_ATTACHED) {
        if (!t->process_written) {
            st = rec_target_write_process(t, ctx->w, ctx->now_ns);
            if (st != TRC_OK)
                return st;
        }
        st = sample_threads(t, ctx);
        if (st != TRC_OK)
            return st;
    }
    if (t->process_written)
        st = sample_rss(t, ctx);
    return st;
}
