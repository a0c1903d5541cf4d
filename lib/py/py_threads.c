/*
 * py_threads.c — the thread list: interpreters → thread states, with
 * each thread's ids and (when asked) whether it holds the GIL.
 *
 * A full read starts at _PyRuntime: its interpreter list, each
 * interpreter's thread list, each thread state.  That is two or three
 * pages of the runtime and interpreter every tick, which the thread
 * states themselves make redundant while the list stays as it was:
 * CPython links thread states both ways, puts a new one at the head
 * (its prev NULL, the old head's prev pointing at it) and on removal
 * rewrites the neighbours' links.  So a known list of one interpreter
 * whose states still say prev = the one before, next = the one after,
 * the head's prev = NULL and interp = that interpreter is the list the
 * interpreter holds: a thread added or removed anywhere breaks one of
 * those links.  Such "steady" reads skip the runtime and interpreter.
 * What they cannot see is a new interpreter (subinterpreters are added
 * at the runtime's head): a full read at least every LIST_REFRESH_NS
 * finds those.  The GIL holder lives in the runtime or interpreter, so
 * asking for it always reads in full.
 *
 * Before 3.11 a thread's kernel tid is not in its thread state but in
 * its struct pthread (one more page per thread).  A steady read takes
 * it from the last full read when the thread state's unique id is
 * unchanged: a thread that ended and one that started in its place, at
 * the same addresses, would still have another id.
 *
 * Every read also plans the known threads' stacks, so the stacks asked
 * for right after (trec's tick) come from the same read call.
 */
#include "lib/py/py_plan.h"

#include <string.h>

#define MAX_THREADS 100000
#define TICK_MAX_BYTES 262144      /* stack data planned along with the thread list */
#define LIST_REFRESH_NS 10000000   /* full reads at least this often (new interpreters) */
#define GIL_SETTLE_NS 100000000ull /* a free-threaded build's GIL state, said after lasting this */

/* Plans the known threads' stacks, up to TICK_MAX_BYTES of them. */
static void plan_stacks(py_proc *p)
{
    const pylist_memo *lm = &p->lm;
    uint64_t bytes = 0;

    for (int i = 0; i < lm->ntstate && bytes < TICK_MAX_BYTES; i++)
        bytes += pyplan_known(p, lm->tstate[i]);
}

/* May a steady read take known thread i's tid from the last full read
 * (checked there against the thread state's id)? */
static int tid_known(const py_proc *p, int i)
{
    return p->L.ts_native_thread_id == PY_OFF_NONE && p->L.ts_id != PY_OFF_NONE && p->lm.tid[i] > 0;
}

/* Plans the known thread states, their struct pthread tid (before 3.11;
 * steady: not where the last full read's tid stands) and their stacks. */
static void plan_states(py_proc *p, int steady)
{
    const pylist_memo *lm = &p->lm;

    for (int i = 0; i < lm->ntstate; i++) {
        pysnap_plan_at(&p->snap, lm->tstate[i], p->ts_len, pyplan_ts_place(p));
        if (!(steady && tid_known(p, i)) && p->tid_off >= 0 && lm->pthread[i])
            pysnap_plan_at(&p->snap, lm->pthread[i] + (uint64_t)p->tid_off, 4, PYSNAP_FIRST);
    }
    plan_stacks(p);
}

static void plan_list(py_proc *p, int want_gil)
{
    const pylist_memo *lm = &p->lm;

    pysnap_plan(&p->snap, p->runtime + p->rt_lo, p->rt_len);
    for (int i = 0; i < lm->ninterp; i++) {
        pysnap_plan(&p->snap, lm->interp[i] + p->is_lo, p->is_len);
        if (want_gil && p->L.is_ceval_gil != PY_OFF_NONE)
            pysnap_plan(&p->snap, lm->interp[i] + p->L.is_ceval_gil, 8);
    }
    for (int i = 0; want_gil && i < lm->ngil; i++)
        pysnap_plan(&p->snap, lm->gil[i] + p->gil_lo, p->gil_len);
    plan_states(p, 0);
}

/* Kernel tid of a thread before 3.11: read from its struct pthread. */
static int64_t pthread_tid(py_proc *p, uint64_t pthread)
{
    if (p->tid_off < 0 || !pthread)
        return -1;
    uint64_t at = pthread + (uint64_t)p->tid_off;
    const uint8_t *t = pysnap_get(&p->snap, at, 4);
    if (!t && !(t = pysnap_need_exact(&p->snap, at, 4)))
        return -1;
    int32_t tid = (int32_t)pysnap_u32(t, 0);
    return tid > 0 ? tid : -1;
}

/* The ids of the thread whose state (a copy) is t. */
static void fill_thread(py_proc *p, py_thread_info *o, uint64_t ts, const uint8_t *t)
{
    const py_layout *L = &p->L;

    o->tstate = ts;
    o->pthread_id = pysnap_u64(t, L->ts_thread_id);
    if (L->ts_native_thread_id != PY_OFF_NONE) {
        int64_t tid = (int64_t)pysnap_u64(t, L->ts_native_thread_id);
        o->tid = tid > 0 && tid < (1ll << 32) ? tid : -1;
    } else {
        o->tid = pthread_tid(p, o->pthread_id);
    }
    o->holds_gil = -1;
}

static void lm_commit(pylist_memo *to, const pylist_memo *from)
{
    to->ninterp = from->ninterp;
    to->interp_more = from->interp_more;
    memcpy(to->interp, from->interp, (size_t)from->ninterp * sizeof to->interp[0]);
    to->ngil = from->ngil;
    memcpy(to->gil, from->gil, (size_t)from->ngil * sizeof to->gil[0]);
    to->ntstate = from->ntstate;
    memcpy(to->tstate, from->tstate, (size_t)from->ntstate * sizeof to->tstate[0]);
    memcpy(to->pthread, from->pthread, (size_t)from->ntstate * sizeof to->pthread[0]);
    memcpy(to->tsid, from->tsid, (size_t)from->ntstate * sizeof to->tsid[0]);
    memcpy(to->tid, from->tid, (size_t)from->ntstate * sizeof to->tid[0]);
    to->full_ns = from->full_ns;
}

/* Interpreters usually share one GIL (and 3.12+'s own-GIL ones have
 * one each): plan each once. */
static int gil_known_already(const pylist_memo *m, uint64_t gil)
{
    for (int i = 0; i < m->ngil; i++)
        if (m->gil[i] == gil)
            return 1;
    return 0;
}

/* A free-threaded build's GIL state as the layout words say it, from
 * the main interpreter's at this full read (1 on, 0 off): changed once
 * the new state has lasted GIL_SETTLE_NS.  CPython turns its GIL on
 * for a moment around the import of an extension of unknown safety and
 * off again; the words (and the PROCESS records a recorder writes when
 * they change) say the settled state, not every such moment.  An
 * unread state changes nothing. */
static void follow_gil(py_proc *p, int ft_gil, uint64_t now_ns)
{
    p->ft_gil_now = ft_gil;
    if (ft_gil == p->ft_gil) {
        p->ft_gil_next = 0;
    } else if (p->ft_gil_next != ft_gil + 1) {
        p->ft_gil_next = ft_gil + 1;
        p->ft_gil_since_ns = now_ns;
    } else if (now_ns - p->ft_gil_since_ns >= GIL_SETTLE_NS) {
        p->ft_gil_next = 0;
        py_layout_words(p, ft_gil);
    }
}

static int list_full(py_proc *p, py_thread_info *out, int max, int want_gil)
{
    const py_layout *L = &p->L;
    pylist_memo next;
    int n = 0, total = 0, ft_gil = -1;
    uint64_t holder_rt = 0;

    /* 8 KiB of arrays: only the counts need clearing, and only the used
     * entries are copied back (both were a good part of a tick) */
    next.ninterp = next.ngil = next.ntstate = next.interp_more = 0;
    pysnap_reset(&p->snap);
    plan_list(p, want_gil);
    p->tick_ns = next.full_ns = pymem_now_ns();
    p->tick_valid = 0;
    p->stats.thread_lists_full++;
    if (pysnap_fetch(&p->snap) != 0 && p->snap.hard_errno)
        return py_fail(p, py_snap_status(p));
    /* Fields are taken out of the snapshot at once: a later read may
     * move its buffer. */
    const uint8_t *rt = pysnap_need_exact(&p->snap, p->runtime + p->rt_lo, p->rt_len);
    if (!rt)
        return py_fail(p, py_snap_status(p));
    if (L->rt_tstate_current != PY_OFF_NONE)
        holder_rt = pysnap_u64(rt, L->rt_tstate_current - p->rt_lo);
    uint64_t interp = pysnap_u64(rt, L->rt_interp_head - p->rt_lo);
    for (int ni = 0; interp; ni++) {
        if (ni >= PY_INTERPS_MAX || (interp & 7))
            return py_fail(p, PY_ERR_IO);
        const uint8_t *is = pysnap_need_exact(&p->snap, interp + p->is_lo, p->is_len);
        if (!is)
            return py_fail(p, py_snap_status(p));
        uint64_t ts = pysnap_u64(is, L->is_tstate_head - p->is_lo);
        uint64_t interp_next = pysnap_u64(is, L->is_next - p->is_lo);
        if (next.ninterp < PYLIST_INTERPS)
            next.interp[next.ninterp++] = interp;
        else
            next.interp_more = 1;
        int gil_known = 0, locked = 0;
        uint64_t holder = 0;
        ft_gil = -1;
        if (want_gil && L->is_ceval_gil != PY_OFF_NONE) {
            const uint8_t *gp = pysnap_need_exact(&p->snap, interp + L->is_ceval_gil, 8);
            uint64_t gil = gp ? pysnap_u64(gp, 0) : 0;
            const uint8_t *g = gil && !(gil & 7) ? pysnap_need_exact(&p->snap, gil + p->gil_lo, p->gil_len) : NULL;
            if (g) {
                locked = pysnap_u32(g, L->gil_locked - p->gil_lo) != 0;
                holder = pysnap_u64(g, L->gil_last_holder - p->gil_lo);
                /* A free-threaded build running without its GIL (the
                 * default): there is none to hold, and the holder field
                 * is stale.  Recorded as not known (spec §7.7). */
                gil_known = !L->free_threaded || L->gil_enabled == PY_OFF_NONE ||
                            pysnap_u32(g, L->gil_enabled - p->gil_lo) != 0;
                /* the main interpreter's, last in the list, is kept */
                ft_gil = L->free_threaded && L->gil_enabled != PY_OFF_NONE ? gil_known : -1;
                if (!gil_known_already(&next, gil) && next.ngil < PYLIST_INTERPS)
                    next.gil[next.ngil++] = gil;
            }
        } else if (want_gil && L->rt_tstate_current != PY_OFF_NONE) {
            holder = holder_rt;
            locked = holder != 0;
            gil_known = 1;
        }
        while (ts) {
            if (++total > MAX_THREADS || (ts & 7))
                return py_fail(p, PY_ERR_IO);
            const uint8_t *tp = pysnap_need_exact(&p->snap, ts, p->ts_len);
            if (!tp)
                return py_fail(p, py_snap_status(p));
            uint8_t t[PY_TS_MAX];
            memcpy(t, tp, p->ts_len);
            if (pysnap_u64(t, L->ts_interp) != interp)
                return py_fail(p, PY_ERR_IO);   /* torn: freed or reused */
            int64_t tid = -1;
            if (n < max) {
                py_thread_info *o = &out[n++];
                fill_thread(p, o, ts, t);
                o->holds_gil = gil_known ? (locked && holder == ts) : -1;
                tid = o->tid;
            }
            if (next.ntstate < PYLIST_MAX) {
                next.tstate[next.ntstate] = ts;
                next.pthread[next.ntstate] = pysnap_u64(t, L->ts_thread_id);
                next.tsid[next.ntstate] = L->ts_id != PY_OFF_NONE ? pysnap_u64(t, L->ts_id) : 0;
                next.tid[next.ntstate++] = tid;
            }
            ts = pysnap_u64(t, L->ts_next);
        }
        interp = interp_next;
    }
    if (next.interp_more)
        p->stats.interp_unchecked++;
    if (want_gil && ft_gil >= 0)
        follow_gil(p, ft_gil, next.full_ns);
    lm_commit(&p->lm, &next);
    p->tick_valid = 1;
    p->ntick_used = 0;
    return n;
}

/* May the known list be read without the runtime and interpreter? */
static int steady_allowed(const py_proc *p, int want_gil)
{
    const pylist_memo *lm = &p->lm;
    uint64_t refresh = p->list_refresh_ns ? p->list_refresh_ns : LIST_REFRESH_NS;

    return !want_gil && p->L.ts_prev != PY_OFF_NONE && lm->ninterp == 1 && lm->ntstate > 0 &&
           lm->ntstate < PYLIST_MAX && pymem_now_ns() - lm->full_ns < refresh;
}

/* The known list, read from its thread states alone: 1 with *count
 * threads filled in, 0 when the links say the list changed (the caller
 * then reads it in full), -1 on a hard error. */
static int list_steady(py_proc *p, py_thread_info *out, int max, int *count)
{
    const py_layout *L = &p->L;
    const pylist_memo *lm = &p->lm;
    int n = 0;

    pysnap_reset(&p->snap);
    plan_states(p, 1);
    p->tick_ns = pymem_now_ns();
    p->tick_valid = 0;
    if (pysnap_fetch(&p->snap) != 0 && p->snap.hard_errno)
        return py_fail(p, py_snap_status(p));
    for (int i = 0; i < lm->ntstate; i++) {
        /* on demand past the plan's room (hundreds of threads) */
        const uint8_t *tp = pysnap_need_exact(&p->snap, lm->tstate[i], p->ts_len);
        if (!tp && p->snap.hard_errno)
            return py_fail(p, py_snap_status(p));
        if (!tp)
            return 0;   /* unmapped: freed and gone */
        uint8_t t[PY_TS_MAX];
        memcpy(t, tp, p->ts_len);
        uint64_t before = i > 0 ? lm->tstate[i - 1] : 0;
        uint64_t after = i + 1 < lm->ntstate ? lm->tstate[i + 1] : 0;
        if (pysnap_u64(t, L->ts_prev) != before || pysnap_u64(t, L->ts_next) != after ||
            pysnap_u64(t, L->ts_interp) != lm->interp[0] ||
            pysnap_u64(t, L->ts_thread_id) != lm->pthread[i] ||
            (L->ts_id != PY_OFF_NONE && pysnap_u64(t, L->ts_id) != lm->tsid[i]))
            return 0;
        if (n >= max)
            continue;
        if (tid_known(p, i)) {
            py_thread_info *o = &out[n++];
            o->tstate = lm->tstate[i];
            o->pthread_id = lm->pthread[i];
            o->tid = lm->tid[i];
            o->holds_gil = -1;
        } else {
            fill_thread(p, &out[n++], lm->tstate[i], t);
        }
    }
    p->tick_valid = 1;
    p->ntick_used = 0;
    *count = n;
    return 1;
}

int pythreads_list_locked(py_proc *p, py_thread_info *out, int max, int want_gil)
{
    if (steady_allowed(p, want_gil)) {
        int n = 0, r = list_steady(p, out, max, &n);
        if (r < 0)
            return -1;
        if (r > 0) {
            p->stats.thread_lists_steady++;
            return n;
        }
        p->stats.thread_lists_changed++;
    }
    return list_full(p, out, max, want_gil);
}

void py_proc_set_list_refresh(py_proc *p, uint64_t ns)
{
    pthread_mutex_lock(&p->lock);
    p->list_refresh_ns = ns;
    pthread_mutex_unlock(&p->lock);
}

void py_proc_forget_tid_offset(py_proc *p)
{
    pthread_mutex_lock(&p->lock);
    p->tid_off = -1;
    p->tid_retry_ns = p->tid_retry_gap_ns = 0;
    p->lm.full_ns = 0;
    pthread_mutex_unlock(&p->lock);
}
