/*
 * py_plan.c — planning a stack's reads, a stage of the tick (py_tick.c;
 * docs/design/cpython.md §9): what each thread's last walk touched is
 * kept in its memo, and the next sample of that thread plans those
 * ranges into the batched read (py_snap.h) in the order py_walk.c's
 * checks need, so that in the steady state a stack costs no read call
 * of its own (py_threads.c plans the known threads' stacks along with
 * the thread list).  Memos are found by thread state through the shared
 * hash index.  Nothing here reads the target: it only plans.
 */
#include "lib/py/py_plan.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"

#include <stddef.h>
#include <string.h>

#define CHUNK_WINDOW 32768u   /* most of a frame chunk planned per sample */
#define WINDOW_SLACK 1024u    /* room planned above the last top */
#define MEMO_LIMIT 4096       /* thread memos kept before starting over */

/* Index in p->memo of tstate's memo, or TRCH_NONE.  Cannot fail. */
static uint32_t memo_pos(const py_proc *p, uint64_t tstate)
{
    trch_probe pr;

    for (uint32_t i = trch_first(&p->memo_index, trch_hash_u64(tstate), &pr); i != TRCH_NONE;
         i = trch_next(&p->memo_index, &pr))
        if (p->memo[i].tstate == tstate)
            return i;
    return TRCH_NONE;
}

pymemo *pyplan_memo(py_proc *p, uint64_t tstate)
{
    uint32_t i = memo_pos(p, tstate);

    if (i != TRCH_NONE)
        return &p->memo[i];
    if (p->memocount >= MEMO_LIMIT) {
        for (size_t j = 0; j < p->memocount; j++)
            trc_free(p->memo[j].rs);
        trch_clear(&p->memo_index);
        p->memocount = 0;
    }
    if (trcu_grow((void **)&p->memo, &p->memocap, p->memocount, sizeof *p->memo) != TRC_OK ||
        trch_add(&p->memo_index, trch_hash_u64(tstate), (uint32_t)p->memocount) != TRC_OK)
        return NULL;
    pymemo *m = &p->memo[p->memocount++];
    memset(m, 0, sizeof *m);
    m->tstate = tstate;
    return m;
}

/* The memo of tstate if there is one (no creation).  Cannot fail. */
static const pymemo *memo_find(const py_proc *p, uint64_t tstate)
{
    uint32_t i = memo_pos(p, tstate);

    return i != TRCH_NONE ? &p->memo[i] : NULL;
}

int pyplan_ts_place(const py_proc *p)
{
    return p->L.frame_objects ? PYSNAP_LATE : PYSNAP_EARLY;
}

#define PLAN_PAGES 160      /* pages of one stack planned one by one */
#define KNOWN_FRAMES 80     /* frame objects planned, ≤ PYMEMO_FRAMES (keep_known) */

/* Plans the page of [lo, hi) that holds addr (clipped to it), unless it
 * is planned already.  pages[] holds those planned so far. */
static void plan_page(py_proc *p, uint64_t *pages, int *n, uint64_t addr, uint64_t lo, uint64_t hi)
{
    uint64_t pg = pysnap_page(addr);
    for (int i = 0; i < *n; i++)
        if (pages[i] == pg)
            return;
    if (*n == PLAN_PAGES)
        return;
    pages[(*n)++] = pg;
    uint64_t a = pg > lo ? pg : lo, b = pg + 4096 < hi ? pg + 4096 : hi;
    if (b > a)
        pysnap_plan_piece(&p->snap, a, b - a, PYSNAP_MIDDLE);
}

/* The page or two the frame at f lies on: within the window [lo, hi)
 * when it lies there, whole otherwise. */
static void plan_frame(py_proc *p, const pymemo *m, uint64_t *pages, int *n, uint64_t f)
{
    uint64_t lo = 0, hi = UINT64_MAX;
    if (m->hi > m->lo && f >= m->lo && f < m->hi)
        lo = m->lo, hi = m->hi;
    plan_page(p, pages, n, f, lo, hi);
    if (pysnap_page(f + p->fr_len - 1) != pysnap_page(f)) {
        plan_page(p, pages, n, f + p->fr_len - 1, lo, hi);
        /* pages are pieces of their own, never merged (py_snap.c): a
         * frame across two would be read again on demand, after the
         * thread state, unless it also has a range of its own */
        pysnap_plan_piece(&p->snap, f, p->fr_len, PYSNAP_MIDDLE);
    }
}

/* Before 3.11: the pages the last chain's frame objects lie on, from
 * the outermost in, each its own piece of the read.  Whole pages: a
 * frame of a new call is most often allocated next to the frames seen
 * last time (the same free list, the same pool), so it comes with this
 * read instead of a later one of its own.  The pages planned. */
static int plan_pages_outer_first(py_proc *p, const pymemo *m)
{
    uint64_t pages[PLAN_PAGES];
    int n = 0;

    for (int i = m->nframes; i-- > 0;)
        plan_frame(p, m, pages, &n, m->frames[i]);
    return n;
}

/* 3.11+: the pages a stack lies on, read as soon after the thread state
 * as what they hold may change: the top of the data-stack window (where
 * new calls go, so the newest frame); the frames outside the data stack
 * (generators, records on the C stack: keep_outside), rewritten as soon
 * as their call from C returns; the last chain's frames in the data
 * stack, innermost first; then the rest of the window from its top
 * down (a frame there that returned reads as it was until a new call
 * overwrites it).  Each page is its own piece of the read, so the
 * kernel copies them in this order.  (The frames outside the data stack
 * first, before the window's top, failed 22 % of the tries instead of
 * 13 % on 3.12 in one pair of runs of the many-calls workload of
 * tests/e2e/trec_fidelity.sh, and as many on 3.13.)  The pages
 * planned. */
static int plan_pages_inner_first(py_proc *p, const pymemo *m)
{
    uint64_t pages[PLAN_PAGES];
    int n = 0;

    if (m->hi > m->lo) {
        plan_page(p, pages, &n, m->hi - 1, m->lo, m->hi);
        if (m->hi - m->lo > 4096)
            plan_page(p, pages, &n, m->hi - 4097, m->lo, m->hi);
    }
    for (int i = 0; i < m->nframes; i++)
        if (m->frames[i] < m->chunk || m->frames[i] >= m->chunk_end)
            plan_frame(p, m, pages, &n, m->frames[i]);
    for (int i = 0; i < m->nframes; i++)
        plan_frame(p, m, pages, &n, m->frames[i]);
    for (uint64_t a = m->hi; a > m->lo; a = pysnap_page(a - 1))
        plan_page(p, pages, &n, a - 1, m->lo, m->hi);
    return n;
}

/* 3.11+: what of a stack lies outside the thread's data stack, kept in
 * the memo beyond the chain that last walked it.  A Python function
 * called from C (a class's __init__ under type.__call__, a generator
 * resumed by tuple() or a for loop in C) sits in a generator object or
 * below an entry frame that the interpreter keeps on the C stack
 * (3.12+), and 3.11-3.12 point the thread state at the frames through a
 * record on the C stack too (the cframe, m->cframe).  None of that is
 * in the chunk window, and a call from C is often over within a
 * microsecond: read on demand after the batched read, its frames have
 * returned and are being rewritten, the walk fails its checks, and the
 * retry that passes is more often one taken outside such a call (a
 * shallow lean, the function called from C missing).  The addresses
 * recur: the C stack holds the same record at the same address for the
 * same C call depth, and a new generator is most often allocated where
 * one of the same size was just freed.  So the addresses the last walks
 * met there are kept, newest first, after the chain (m->frames,
 * planned by plan_pages_inner_first: their pages come in the same read
 * as the thread state), up to KEPT_OUTSIDE of them; the pages they
 * share are planned once. */
#define KEPT_OUTSIDE 48

static void add_missing(uint64_t *set, int *n, int cap, const uint64_t *add, int nadd);

static int outside_chunk(const pywalk *w, uint64_t f)
{
    return f < w->chunk_data || f >= w->chunk_end;
}

static void keep_outside(const py_proc *p, const pymemo *m, pywalk *w)
{
    uint64_t add[KEPT_OUTSIDE + 1];
    int n = 0;

    if (p->L.frame_objects || !w->chunk_data)
        return;   /* no chunk known: nothing to tell outside from in */
    if (w->next.cframe)
        add[n++] = w->next.cframe;
    for (int i = 0; i < m->nframes && n < KEPT_OUTSIDE; i++)
        if (outside_chunk(w, m->frames[i]))
            add[n++] = m->frames[i];
    int kept = 0;
    for (int i = 0; i < w->next.nframes; i++)
        kept += outside_chunk(w, w->next.frames[i]);
    int cap = w->next.nframes + (KEPT_OUTSIDE > kept ? KEPT_OUTSIDE - kept : 0);
    add_missing(w->next.frames, &w->next.nframes, cap < PYMEMO_FRAMES ? cap : PYMEMO_FRAMES, add, n);
}

/* Before 3.11: the frames the thread's last reads found newest, each a
 * piece of its own, copied last before the thread state, the latest
 * nearest to it.  The newest frame is the one a read most often finds
 * stale: a short call (a property's getter, an __init__ called from C)
 * makes its frame current and marks it running after the batched read
 * copied its page but before it copied the thread state, and the walk
 * sees a frame not running (a torn read, tried again).  Such a call
 * gets the same frame object nearly every time (its code object's
 * spare frame, or the top of the free list), so the frames found newest
 * before are where the next newest frame most likely is; copied again
 * right before the thread state, that window shrinks from the whole
 * read to a few pieces.  The copy from the page stays in the read; the
 * walk finds the later one (pysnap_get: the newest copy). */
static void plan_leaves(py_proc *p, const pymemo *m)
{
    for (int i = 0; i < m->nleaves; i++)
        pysnap_plan_piece(&p->snap, m->leaves[i], p->fr_len, PYSNAP_LATE);
}

/* The read order (py_snap.h): code objects, then the current frame
 * pointer where pyplan_ts_place says and the frames in the order the
 * layout wants (see the top of py_walk.c): before 3.11 frames from the
 * outermost in, the pointer after them; from 3.11 the pointer first and
 * frames from the innermost out.  Returns about how many bytes that is. */
uint64_t pyplan_stack(py_proc *p, const pymemo *m, uint64_t tstate)
{
    for (int i = 0; i < m->ncodes; i++) {
        pysnap_plan_at(&p->snap, m->codes[i], p->co_len, PYSNAP_FIRST);
        pycode_plan(p, m->codes[i]);   /* the strings a cache hit checks */
    }
    if (p->L.frame_objects)
        plan_leaves(p, m);
    if (m->cframe)
        pysnap_plan_at(&p->snap, m->cframe + p->L.cf_current_frame, 8, pyplan_ts_place(p));
    pysnap_plan_at(&p->snap, tstate, p->ts_len, pyplan_ts_place(p));
    int pages = p->L.frame_objects ? plan_pages_outer_first(p, m) : plan_pages_inner_first(p, m);
    return (uint64_t)pages * 4096 + (uint64_t)m->ncodes * p->co_len;
}

uint64_t pyplan_known(py_proc *p, uint64_t tstate)
{
    const pymemo *m = memo_find(p, tstate);

    if (!m || m->idle)
        return 0;
    return pyplan_stack(p, m, tstate);
}

void py_proc_set_idle(py_proc *p, uint64_t tstate, int idle)
{
    /* only a thread walked before has a memo, and only its stack is planned */
    pthread_mutex_lock(&p->lock);
    pymemo *m = (pymemo *)memo_find(p, tstate);
    if (m)
        m->idle = idle;
    pthread_mutex_unlock(&p->lock);
}

/* *to = *from, copying only the used entries of the arrays. */
static void memo_commit(pymemo *to, const pymemo *from)
{
    memcpy(to, from, offsetof(pymemo, frames));
    memcpy(to->frames, from->frames, (size_t)from->nframes * sizeof to->frames[0]);
    memcpy(to->codes, from->codes, (size_t)from->ncodes * sizeof to->codes[0]);
    to->nframes = from->nframes;
    to->ncodes = from->ncodes;
    to->rs = from->rs;
}

/* Appends what of add[0..nadd) set[0..*n) lacks, up to cap. */
static void add_missing(uint64_t *set, int *n, int cap, const uint64_t *add, int nadd)
{
    for (int i = 0; i < nadd && *n < cap; i++) {
        int j = 0;
        while (j < *n && set[j] != add[i])
            j++;
        if (j == *n)
            set[(*n)++] = add[i];
    }
}

/* Before 3.11: the frame objects m knew that w's chain lacks, kept
 * after it (planned first, plan_pages_outer_first reading the list
 * from its end).  A returning frame goes to its code object's spare
 * (zombie) frame or to a LIFO free list, and a call takes it back from
 * there, so a thread recursing within one outermost call keeps cycling
 * through the same few dozen frame objects, though not each depth
 * through the same one.  Planning them all puts the newest frames of a
 * sample deeper than the last one in the batched read, before the
 * thread state, instead of on demand after it, when the thread has
 * moved on (the leaf then reads as freed and the sample is torn; the
 * deeper the stack, the likelier: a shallow lean).  Each frame may
 * cost a page of the read, so the memo grows only with the stack: no
 * more frames than it held or the chain has (so about the deepest
 * stack seen lately), at most KNOWN_FRAMES; m->frames is in the order
 * last seen, so the frames unseen longest go first.  A new outermost
 * call starts over. */
static void keep_known(const py_proc *p, const pymemo *m, pywalk *w)
{
    if (!p->L.frame_objects || w->truncated || m->bottom != w->bottom)
        return;
    int cap = m->nframes > w->next.nframes ? m->nframes : w->next.nframes;
    add_missing(w->next.frames, &w->next.nframes, cap < KNOWN_FRAMES ? cap : KNOWN_FRAMES,
                m->frames, m->nframes);
}

/* f becomes the latest of leaves[0..*n), moved there if it was one,
 * else added, the oldest dropped when they are PYMEMO_LEAVES. */
static void note_leaf(uint64_t *leaves, int *n, uint64_t f)
{
    int i = 0;
    while (i < *n && leaves[i] != f)
        i++;
    if (i == *n && *n == PYMEMO_LEAVES)
        i = 0;
    else if (i == *n)
        (*n)++;
    memmove(leaves + i, leaves + i + 1, (size_t)(*n - 1 - i) * sizeof *leaves);
    leaves[*n - 1] = f;
}

void pyplan_commit(const py_proc *p, pymemo *m, pywalk *w)
{
    keep_known(p, m, w);
    memcpy(w->next.leaves, m->leaves, sizeof m->leaves);
    w->next.nleaves = m->nleaves;
    if (p->L.frame_objects && w->leaf)
        note_leaf(w->next.leaves, &w->next.nleaves, w->leaf);
    w->next.bottom = w->bottom;
    if (w->fhi > w->flo) {
        uint64_t hi = w->top + WINDOW_SLACK < w->chunk_end ? w->top + WINDOW_SLACK : w->chunk_end;
        uint64_t lo = hi - w->flo > CHUNK_WINDOW ? hi - CHUNK_WINDOW : w->flo;
        w->next.lo = lo;
        w->next.hi = hi;
    }
    keep_outside(p, m, w);
    memo_commit(m, &w->next);
}

void pyplan_learn(pymemo *m, const pywalk *w)
{
    m->held = w->next.held;
    memcpy(m->held_bytes, w->next.held_bytes, sizeof m->held_bytes);
    /* the newest frame a torn read met (planned before 3.11 only) */
    if (w->next.nframes > 0)
        note_leaf(m->leaves, &m->nleaves, w->next.frames[0]);
    add_missing(m->frames, &m->nframes, PYMEMO_FRAMES, w->next.frames, w->next.nframes);
    add_missing(m->codes, &m->ncodes, PYMEMO_CODES, w->next.codes, w->next.ncodes);
    if (w->fhi > w->flo && w->next.chunk == m->chunk) {
        uint64_t lo = m->hi > m->lo && m->lo < w->flo ? m->lo : w->flo;
        uint64_t hi = w->top + WINDOW_SLACK < w->chunk_end ? w->top + WINDOW_SLACK : w->chunk_end;
        if (m->hi > hi)
            hi = m->hi;
        if (hi - lo > CHUNK_WINDOW)
            lo = hi - CHUNK_WINDOW;
        m->lo = lo;
        m->hi = hi;
    }
    if (w->next.cframe)
        m->cframe = w->next.cframe;
}
