/*
 * natives.c — the threads of a recorded process that have no Python
 * thread state: pools started from C (BLAS, OpenMP, PyTorch's intra-op
 * workers, an extension's threads).  Without them the trace would miss
 * their CPU time entirely.
 *
 * Found by listing the process's tasks every TASKS_NS: a task that no
 * entry of the thread table has (threads.c: one entry per OS thread) is
 * a native thread.  Not sooner, though the process's thread count (its
 * stat file) would tell at once that a thread began: listed within a
 * tick, short-lived Python threads were recorded as native, under the
 * process's OS name, for their first samples, some never under their
 * own name (tests/e2e/trec_thread_names.sh failed on two interpreters
 * in one CI run; see NATIVE_HOLD below).  The CPU time a thread used
 * before its first sample is given out later (oncpu.c), so waiting for
 * the listing loses none.  Sampled at every tick like a Python
 * thread, idle or not (wall-clock views): its state from its switch
 * records or /proc file, on CPU by the CPU time it got (oncpu.c) as a
 * Python thread is, and a one-frame stack "[native thread NAME]"
 * (stacks.c).  One that has not run since its last sample is repeated
 * from its switch records alone, as an idle Python thread is: a look at
 * shared memory and a sample.  Nothing is read from the target's memory.
 *
 * Told apart from Python threads by the kernel ids lib/py reads, so the
 * caller samples them only in ticks where it has those (target.c).  A
 * Python thread being started has its OS thread a moment before the
 * interpreter lists its thread state under its id: a new task seen while
 * the list holds thread states without one waits up to NATIVE_HOLD
 * ticks for its first sample, so as not to be recorded as a native
 * thread first.
 *
 * Pid reuse (target.c): the task list is read by pid number, so the
 * process is proven (its stat file, which follows it) after the list; a
 * state file just opened by number is proven the same way before its
 * first sample; later states come from files that follow that very
 * thread.
 */
#include "lib/rec/rec_int.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#define TASKS_NS 10000000LL          /* task list: every 10 ms */
#define NATIVE_HOLD 3                /* ticks a new native thread may wait */
#define MAX_TASKS 65536

/* Lists the process's tasks (every TASKS_NS): a task no entry has is a
 * native thread, and a native entry whose task is not listed any more
 * has ended.  0, or -1 when the process is gone (the liveness check runs
 * next).  The list is read by pid number: the process, whose stat file
 * follows it, must still be there after it. */
static int list_tasks(rec_target *t, rec_tick_ctx *ctx, trc_status *st)
{
    rec_threads *ts = &t->threads;
    *st = TRC_OK;
    int n;
    for (;;) {
        n = rec_proc_tasks(t->pid, ts->tasks, ts->tasks_cap);
        if (n <= ts->tasks_cap || ts->tasks_cap >= MAX_TASKS)
            break;
        /* n tasks, at most the kernel's pid limit (2^22), so the doubled
         * capacity fits tasks_cap. */
        size_t cap = (size_t)ts->tasks_cap;
        if (trcu_grow((void **)&ts->tasks, &cap, (size_t)n - 1, sizeof *ts->tasks) != TRC_OK) {
            *st = TRC_ERR_NOMEM;
            return 0;
        }
        ts->tasks_cap = (int)cap;
    }
    if (n < 0 || !rec_target_alive(t)) {
        t->next_check_ns = ctx->now_ns;
        return -1;
    }
    if (n > ts->tasks_cap)
        n = ts->tasks_cap;
    ts->tasks_gen++;
    for (int i = 0; i < n; i++) {
        int fresh;
        rec_thread *th = rec_threads_task(ts, t->pid, ts->tasks[i], ctx->now_ns, &fresh, st);
        if (!th && *st != TRC_OK)
            return 0;
        if (th)
            th->listed = ts->tasks_gen;
    }
    return 0;
}

/* One sample of a native thread: its state and its one-frame stack.
 * Nothing is read from the target's memory, and the state comes from
 * files that follow that very thread, so only a state file just opened
 * by number needs the process proven (see "Pid reuse").  0, or -1 when
 * the process is gone. */
static int sample_native(rec_target *t, rec_tick_ctx *ctx, rec_thread *th, trc_status *st)
{
    static const py_thread_info no_gil = {.holds_gil = 0}; /* no thread state, no GIL */
    *st = TRC_OK;
    int fresh = th->seen == 0;
    th->seen = t->gen;
    int quiet = th->quiet && th->last_ok;
    char state = 0;
    int by_proc = th->sw.fd < 0 || ctx->now_ns >= th->next_proc_ns;
    if (by_proc) {
        th->next_proc_ns = ctx->now_ns + REC_STATE_PROC_NS;
        state = rec_thread_state(th);
        if (state == 0 || state == 'Z' || state == 'X') {
            /* ended, or its id names a new thread now */
            if (!rec_thread_reopen(&t->threads, th, t->pid, ctx->now_ns) ||
                (state = rec_thread_state(th)) == 0 || state == 'Z' || state == 'X') {
                th->listed = 0; /* gone: pruned with the entries not seen */
                th->seen = t->gen - 3;
                return 0;
            }
            fresh = 1;
            quiet = 0;
            th->native_stack = 0;
            th->name_eager = 0;
        }
    }
    if (fresh && !rec_target_alive(t)) {
        t->next_check_ns = ctx->now_ns;
        return -1;
    }
    /* a Python thread being started has its OS thread before the
     * interpreter lists it under its id: a new task while thread states
     * without one are listed is most likely it, and waits a few ticks to
     * be that Python thread from its first sample */
    if (!th->wid && t->unborn && th->held < NATIVE_HOLD) {
        th->held++;
        return 0;
    }
    if (quiet) {
        *st = rec_sample_quiet(t, ctx, th, &no_gil);
        return 0;
    }
    int running;
    int by_records = rec_thread_look(th, by_proc, &state, &running);
    *st = rec_thread_define(th, ctx->w, t->pid);
    if (*st == TRC_OK && !th->native_stack)
        *st = rec_native_stack(ctx->w, th->name, &th->native_stack);
    if (*st != TRC_OK)
        return 0;
    if (th->wid > ctx->max_wid)
        ctx->max_wid = th->wid;
    th->last_stack = th->native_stack;
    th->last_trunc = 0;
    th->last_ok = th->sw.fd >= 0 && th->pre_set;
    th->sw_head = th->pre_head;
    th->pre_set = 0;
    /* on CPU as a Python thread's sample is (oncpu.c) */
    int on_cpu = rec_oncpu_sample(&th->cpu, rec_oncpu_at(ctx), rec_oncpu_period(ctx->cfg),
                                  by_records ? running : state == 'R');
    *st = trc_writer_sample(ctx->w, ctx->now_ns, th->wid, th->native_stack,
                            rec_sample_flags(ctx, &no_gil, on_cpu), 0);
    if (*st == TRC_OK) {
        t->samples++;
        ctx->samples++;
    }
    return 0;
}

trc_status rec_natives_sample(rec_target *t, rec_tick_ctx *ctx)
{
    rec_threads *ts = &t->threads;
    trc_status st = TRC_OK;
    if (ctx->now_ns >= ts->next_tasks_ns) {
        ts->next_tasks_ns = ctx->now_ns + TASKS_NS;
        if (list_tasks(t, ctx, &st) != 0 || st != TRC_OK)
            return st;
    }
    for (size_t i = 0; i < ts->n; i++) {
        rec_thread *th = &ts->v[i];
        if (!th->native || th->listed != ts->tasks_gen)
            continue; /* a Python thread, or no task of the last list */
        if (sample_native(t, ctx, th, &st) != 0 || st != TRC_OK)
            break;
    }
    return st;
}
