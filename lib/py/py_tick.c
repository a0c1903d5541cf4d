/*
 * py_tick.c — one tick of lib/py, stage by stage (docs/design/cpython.md
 * §9): py_proc_threads finds the threads (py_threads.c), which plans
 * the known threads' stacks into the same batched read (py_plan.c);
 * py_proc_stack plans what the thread's last walk touched unless that
 * read already holds it, fetches (py_snap.c), walks and checks the
 * frames (py_walk.c, which resolves names and lines through py_code.c)
 * and keeps what the walk touched for the next plan.  A walk that met a
 * torn read is redone at once.  Each stage calls only the stages after
 * it; only this file calls them all.
 */
#include "lib/py/py_plan.h"
#include "lib/py/py_rejects.h"
#include "lib/py/py_walk.h"

#include "lib/util/alloc.h"

#include <string.h>

#define TICK_FRESH_NS 500000  /* a thread-list fetch serves stacks this long */

int py_proc_threads(py_proc *p, py_thread_info *out, int max, int want_gil)
{
    int n = -1;

    pytid_recalibrate(p);
    pthread_mutex_lock(&p->lock);
    for (int t = 0; t < PY_TORN_TRIES && n < 0; t++) {
        n = pythreads_list_locked(p, out, max, want_gil);
        if (n < 0 && p->last != PY_ERR_IO)
            break;
    }
    pthread_mutex_unlock(&p->lock);
    return n;
}

/* An offset not found at attach (the program caught while its threads
 * could not be read) is looked for again, every 10 ms at first, backing
 * off to once a second.  Out of process only: trec's handle, used by one
 * thread; the calibration takes the handle's lock itself. */
void pytid_recalibrate(py_proc *p)
{
    if (p->self || p->tid_off >= 0 || p->L.ts_native_thread_id != PY_OFF_NONE)
        return;
    uint64_t now = pymem_now_ns();
    if (now < p->tid_retry_ns)
        return;
    p->tid_retry_gap_ns = p->tid_retry_gap_ns ? p->tid_retry_gap_ns * 2 : 10000000;
    if (p->tid_retry_gap_ns > 1000000000)
        p->tid_retry_gap_ns = 1000000000;
    p->tid_retry_ns = now + p->tid_retry_gap_ns;
    pytid_calibrate(p);
    if (p->tid_off >= 0)
        p->lm.full_ns = 0; /* read the list in full: tids with it */
}

/* The offset is searched for in the threads a list read gives
 * (py_tid.c): reading the list is a stage this file runs. */
void pytid_calibrate(py_proc *p)
{
    py_thread_info ti[PYTID_MAX_THREADS];

    p->tid_off = -1;
    int n = -1;
    for (int tries = 0; tries < 3 && n < 0; tries++)
        n = py_proc_threads(p, ti, PYTID_MAX_THREADS, 0);
    pytid_search(p, ti, n);
}

/* May this stack be walked from the last thread-list fetch?  Yes once
 * per thread, while it is fresh.  Cannot fail. */
static int tick_take(py_proc *p, uint64_t tstate)
{
    if (!p->tick_valid || pymem_now_ns() - p->tick_ns > TICK_FRESH_NS ||
        !pysnap_get(&p->snap, tstate, p->ts_len))
        return 0;
    for (int i = 0; i < p->ntick_used; i++)
        if (p->tick_used[i] == tstate)
            return 0;
    if (p->ntick_used == (int)(sizeof p->tick_used / sizeof p->tick_used[0]))
        return 0;
    p->tick_used[p->ntick_used++] = tstate;
    return 1;
}

/* One walk of tstate's stack; *full set when it failed for want of
 * room.  trunc: NULL, or where to say whether a stack deeper than max
 * was cut to its innermost max frames (instead of failing).  Caller
 * holds the lock. */
static int stack_once(py_proc *p, uint64_t tstate, const py_frame_info **frames, int max, int *full,
                      int *trunc)
{
    pywalk w;

    if (!tstate || (tstate & 7) || max < 0)
        return py_fail(p, PY_ERR_IO);
    pymemo *m = pyplan_memo(p, tstate);
    if (!m)
        return py_fail(p, PY_ERR_NOMEM);
    if (!m->rs)
        m->rs = trc_calloc(PYMEMO_FRAMES, sizeof *m->rs);   /* none: no reuse */
    /* Right after py_proc_threads, its fetch already holds this stack
     * (once: a second call for the same thread wants a new sample). */
    if (!tick_take(p, tstate)) {
        p->tick_valid = 0;
        pysnap_reset(&p->snap);
        pyplan_stack(p, m, tstate);
        if (pysnap_fetch(&p->snap) != 0 && p->snap.hard_errno)
            return py_fail(p, py_snap_status(p));
    }
    if (pywalk_stack(p, m, tstate, frames, max, trunc != NULL, &w) < 0) {
        if (w.frames_failed) {
            *full = w.full;
            pyplan_learn(m, &w);
        }
        return -1;
    }
    pyplan_commit(p, m, &w);
    if (trunc)
        *trunc = w.truncated;
    return w.depth;
}

/* A walk that met an inconsistent (torn) read is tried again at once:
 * the target moved while we read, and a fresh read usually succeeds. */
static int stack_locked(py_proc *p, uint64_t tstate, const py_frame_info **frames, int max,
                        int *trunc)
{
    int n = -1, full = 0;

    for (int t = 0; t < PY_STACK_TRIES; t++) {
        n = stack_once(p, tstate, frames, max, &full, trunc);
        if (n >= 0)
            pyrej_result(t);
        if (n >= 0 || full || p->last != PY_ERR_IO)
            break;
        if (t == PY_STACK_TRIES - 1)
            pyrej_result(-1);
        p->stats.torn_retries++;
        p->tick_valid = 0;   /* read afresh */
    }
    return n;
}

int py_proc_stack(py_proc *p, uint64_t tstate, const py_frame_info **frames, int max)
{
    pthread_mutex_lock(&p->lock);
    int n = stack_locked(p, tstate, frames, max, NULL);
    if (n < 0)
        p->stats.invalid_stacks++;
    pthread_mutex_unlock(&p->lock);
    return n;
}

int py_proc_stack_trunc(py_proc *p, uint64_t tstate, const py_frame_info **frames, int max,
                        int *truncated)
{
    int t = 0;

    pthread_mutex_lock(&p->lock);
    int n = stack_locked(p, tstate, frames, max, &t);
    if (n < 0)
        p->stats.invalid_stacks++;
    pthread_mutex_unlock(&p->lock);
    *truncated = n >= 0 && t;
    return n;
}

/* ---- the calling thread (py_proc_attach_self) -------------------------- */

#define SELF_SCAN 512

/* The calling thread's thread state, remembered per thread: thread-local
 * storage dies with its thread, so an entry is never another thread's.
 * Keyed by the handle's id (a freed handle's address may come back). */
static __thread struct {
    uint64_t proc_id, tstate;
} self_cache;

int py_proc_stack_self_thread(py_proc *p, const py_frame_info **frames, int max)
{
    int64_t tid = pytid_self();   /* not cached: a fork changes it */
    uint64_t me = (uint64_t)pthread_self();
    const py_layout *L = &p->L;
    int n = -1;

    pthread_mutex_lock(&p->lock);
    uint64_t ts = 0;
    if (self_cache.proc_id == p->id && self_cache.tstate) {
        /* Still ours?  The state this thread found before is read like
         * the rest of its own stack (memcpy): it lives while the thread
         * runs Python, and is checked to still name this thread. */
        uint8_t b[1024];
        p->mem.careful = 0;
        if (p->ts_len <= sizeof b && pymem_read(&p->mem, self_cache.tstate, b, p->ts_len) == 0 &&
            pysnap_u64(b, L->ts_thread_id) == me &&
            (L->ts_native_thread_id == PY_OFF_NONE ||
             (int64_t)pysnap_u64(b, L->ts_native_thread_id) == tid))
            ts = self_cache.tstate;
        p->mem.careful = p->self;
        p->tick_valid = 0;   /* another thread's thread-list fetch is not now */
    }
    if (!ts) {
        /* Other threads' states may be freed while we look: careful reads. */
        py_thread_info *all = trc_malloc(SELF_SCAN * sizeof *all);
        if (!all) {
            p->last = PY_ERR_NOMEM;
            goto out;
        }
        int k = pythreads_list_locked(p, all, SELF_SCAN, 0);
        for (int i = 0; i < k && !ts; i++)
            if (all[i].pthread_id == me && (L->ts_native_thread_id == PY_OFF_NONE || all[i].tid == tid))
                ts = all[i].tstate;
        trc_free(all);
        if (!ts) {
            if (k >= 0)
                n = 0;    /* not a Python thread: no Python frames */
            goto out;
        }
        self_cache.proc_id = p->id;
        self_cache.tstate = ts;
    }
    /* Our own thread state and everything our live frames hold stay
     * mapped while we are in this call. */
    p->mem.careful = 0;
    n = stack_locked(p, ts, frames, max, NULL);
out:
    p->mem.careful = p->self;
    if (n < 0)
        p->stats.invalid_stacks++;
    pthread_mutex_unlock(&p->lock);
    return n;
}
