/*
 * py_walk.c — thread state → frames (docs/design/cpython.md §4, §9); the thread list
 * itself is py_threads.c.
 *
 * Each call is one "sample": it plans the reads the previous call for
 * the same thread needed (thread state, the window of the frame chunk
 * or the frame objects, the code objects), fetches them in one batched
 * read, walks, and reads whatever was not foreseen on demand.  In the
 * steady state a stack costs one system call.  py_proc_threads plans the
 * known threads' stacks along with the thread list (pywalk_plan_known),
 * so that the stacks asked for right after it (trec's tick) need no read
 * call of their own.
 *
 * Frames:  ≤3.10  PyFrameObject via f_back (ob_type checked);
 *          3.11+  _PyInterpreterFrame via previous; frames whose owner
 *                 is the C stack or the interpreter (3.12+) are not
 *                 Python frames and are skipped; 3.14's f_executable
 *                 is a tagged reference (masked).
 * Nothing is invented: an unexpected type, owner, alignment, a cycle
 * (Brent's algorithm over frame addresses) or more frames than the
 * caller's room makes the whole stack invalid (-1).  Except that
 * py_proc_stack_trunc accepts a stack deeper than the room: its
 * innermost frames, each checked as usual, are returned and the walk
 * stops there (the frames beyond are never read).
 *
 * The target keeps running while we read, so one read call is not an
 * atomic snapshot: the kernel copies its ranges one after the other.
 * Their order (py_snap.h) decides which changes can fool a walk:
 *  - 3.11+: frames live in the thread's data stack, and a frame that
 *    returns is left there as it was until a new call overwrites it.
 *    So the thread state (the pointer to the newest frame) is copied
 *    first and the frames after it: a frame that returned meanwhile
 *    still reads as it was when the pointer was copied.
 *  - before 3.11: frames are heap objects, and one that returns is
 *    marked done and freed at once (to a free list any call may take
 *    from).  So the frames are copied first, from the outermost in,
 *    and the thread state last: what the walk reaches from that
 *    pointer was in place when its bytes were copied, or reads as
 *    freed and fails the checks below.
 * A walk that fails a check is tried again at once, up to PY_STACK_TRIES
 * times, each with what the last one found planned into its one read;
 * a stack that is never read whole is dropped, never cut short.  Before 3.11 a frame that returns goes to a free
 * list shared by all threads and is soon reused, possibly by another
 * thread: a chain followed through it would be invented.  Three checks:
 *  - every PyFrameObject on the chain must be executing (f_executing /
 *    f_state); freed frames are not;
 *  - 3.11+: inside the thread's frame chunk, each caller lies below its
 *    callee and every frame below datastack_top; the outermost frame
 *    must be one that can be (an entry frame in 3.12+; never a
 *    generator's, whose link is cleared when it yields); a chain of
 *    entry frames alone, or no current frame while the data stack holds
 *    frames, is a call from C caught half set up, not an empty stack;
 *  - the outermost frame must be the one this thread's last good stack
 *    ended with (it lives as long as the thread's outermost call); when
 *    it is not (first sample, or a new outermost call), the thread
 *    state and the leaf frame are read again and must not have changed
 *    meanwhile, like a sequence lock.
 */
#include "lib/py/py_internal.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define CHUNK_WINDOW 32768u   /* most of a frame chunk planned per sample */
#define WINDOW_SLACK 1024u    /* room planned above the last top */
#define MEMO_LIMIT 4096       /* thread memos kept before starting over */
#define TICK_FRESH_NS 500000  /* a thread-list fetch serves stacks this long */

int pywalk_fail(py_proc *p, py_status st)
{
    p->last = st;
    return -1;
}

py_status pywalk_snap_status(const py_proc *p)
{
    return p->snap.hard_errno ? py_status_from_errno(p->snap.hard_errno) : PY_ERR_IO;
}

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

/* The memo of tstate, created empty if new.  NULL on ENOMEM. */
static pymemo *memo_get(py_proc *p, uint64_t tstate)
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

int pywalk_ts_place(const py_proc *p)
{
    return p->L.frame_objects ? PYSNAP_LATE : PYSNAP_EARLY;
}

#define PLAN_PAGES 160      /* pages of one stack planned one by one */

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
    if (pysnap_page(f + p->fr_len - 1) != pysnap_page(f))
        plan_page(p, pages, n, f + p->fr_len - 1, lo, hi);
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

/* 3.11+: the pages a stack lies on, from the newest frames to the
 * oldest: the top of the data-stack window (where new calls go), the
 * last chain's frames innermost first (data stack, generators, entry
 * frames on the C stack), then the rest of the window from its top
 * down.  Each page is its own piece of the read, so the kernel copies
 * them in this order.  The pages planned. */
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
        plan_frame(p, m, pages, &n, m->frames[i]);
    for (uint64_t a = m->hi; a > m->lo; a = pysnap_page(a - 1))
        plan_page(p, pages, &n, a - 1, m->lo, m->hi);
    return n;
}

/* The read order (py_snap.h): code objects, then the current frame
 * pointer where pywalk_ts_place says and the frames in the order the
 * layout wants (see the top of this file): before 3.11 frames from the
 * outermost in, the pointer after them; from 3.11 the pointer first and
 * frames from the innermost out.  Returns about how many bytes that is. */
static uint64_t plan_stack(py_proc *p, const pymemo *m, uint64_t tstate)
{
    for (int i = 0; i < m->ncodes; i++) {
        pysnap_plan_at(&p->snap, m->codes[i], p->co_len, PYSNAP_FIRST);
        pycode_plan(p, m->codes[i]);   /* the strings a cache hit checks */
    }
    if (m->cframe)
        pysnap_plan_at(&p->snap, m->cframe + p->L.cf_current_frame, 8, pywalk_ts_place(p));
    pysnap_plan_at(&p->snap, tstate, p->ts_len, pywalk_ts_place(p));
    int pages = p->L.frame_objects ? plan_pages_outer_first(p, m) : plan_pages_inner_first(p, m);
    return (uint64_t)pages * 4096 + (uint64_t)m->ncodes * p->co_len;
}

uint64_t pywalk_plan_known(py_proc *p, uint64_t tstate)
{
    const pymemo *m = memo_find(p, tstate);

    if (!m || m->idle)
        return 0;
    return plan_stack(p, m, tstate);
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

typedef struct walk {
    const py_frame_info **out;
    int max, depth;
    int trunc_ok, truncated; /* py_proc_stack_trunc: stop at max, not fail */
    uint64_t leaf, leaf_code, leaf_prev, bottom;  /* first and last frame of the chain */
    int full;             /* failed for want of room in out[] */
    uint64_t chunk_data, top, chunk_end;
    uint64_t flo, fhi;    /* frames seen inside the current chunk */
    pyrs *rs;             /* the thread's last resolution per depth, or NULL */
    /* the code object last checked against its bytes in this walk: the
     * same address met again before any further read (snap.n, the count
     * of copied ranges, unchanged) would be checked against the same
     * bytes, with the same cache entry (cc.gen unchanged) */
    uint64_t vcode, vgen;
    const struct pycode *vc;
    int vn;
    int32_t tlbc_index;   /* free-threaded 3.14+: the frame's bytecode copy */
    /* last: walk_start clears only its head (see memo_clear) */
    pymemo next;          /* what this sample touched, for the next plan */
} walk;

/* Empties a memo without touching its address arrays (1.5 KiB: clearing
 * and copying them whole was a good part of a sample): only the first
 * nframes / ncodes entries are ever read. */
static void memo_clear(pymemo *m)
{
    memset(m, 0, offsetof(pymemo, frames));
    m->nframes = m->ncodes = 0;
    m->rs = NULL;
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

/* After a torn walk: adds what it touched (frame objects, code
 * objects, the frames it saw inside the chunk) to the thread's plan, so
 * that the next try fetches them in its one batched read instead of
 * reading them one by one while the target moves on.  The rest of the
 * memo (the last good stack's bottom) stays. */
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

static void memo_learn(pymemo *m, const walk *w)
{
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

/* A walk with nothing found yet. */
static void walk_start(walk *w)
{
    memset(w, 0, offsetof(walk, next));
    memo_clear(&w->next);
}

static void note_code(walk *w, uint64_t code)
{
    for (int i = 0; i < w->next.ncodes; i++)
        if (w->next.codes[i] == code)
            return;
    if (w->next.ncodes < PYMEMO_CODES)
        w->next.codes[w->next.ncodes++] = code;
}

/* Was depth d of this thread resolved last time from the same frame,
 * code object and instruction, and is that code object still the one
 * the cache entry was decoded from?  Then the answer is the same as
 * last time: pycode_resolve would find the same entry (cc.gen: none
 * freed since), pass the same check on these bytes, compute the same
 * offset (same instruction, same size) and line.  Only the check is
 * redone, on this sample's bytes.  *hdr is set when they were fetched
 * (NULL: not in the snapshot, or not needed). */
static const py_frame_info *reuse(py_proc *p, walk *w, uint64_t frame, uint64_t code,
                                  int64_t instr, const uint8_t **hdr)
{
    *hdr = NULL;
    if (!w->rs || w->depth >= PYMEMO_FRAMES)
        return NULL;
    const pyrs *e = &w->rs[w->depth];
    if (!e->fi || e->frame != frame || e->code != code || e->instr != (uint64_t)instr ||
        e->gen != p->cc.gen)
        return NULL;
    if (!(code == w->vcode && e->c == w->vc && w->vn == p->snap.n && w->vgen == p->cc.gen)) {
        *hdr = pysnap_get(&p->snap, code, p->co_len);
        if (!*hdr)
            return NULL;
        if (!pycode_still(p, e->c, *hdr)) {
            *hdr = NULL;   /* the check may have read: fetch it again */
            return NULL;
        }
        w->vcode = code;
        w->vc = e->c;
        w->vn = p->snap.n;
        w->vgen = p->cc.gen;
    }
    return e->fi;
}

/* Free-threaded 3.14+: a thread other than the first runs its own copy
 * of the bytecode, co_tlbc->entries[index] (a _PyCodeArray: Py_ssize_t
 * size, then size pointers), laid out as co_code_adaptive is.  Sets
 * *addrq to instr's byte offset in that copy (-2: pushed, not started)
 * and returns 0, or -1 when instr is not inside it (a torn read).
 *
 * Where a copy lies is remembered per (code, index): a frame whose
 * instruction lies inside the remembered copy is running in it, as the
 * thread cannot execute bytecode from memory that is not its copy of
 * this code; anything else reads the table again (a copy freed, a
 * thread's index reused).  That stands in for the interpreter's TLBC
 * generation counter, which the thread-list reads do not fetch.  A read
 * can move the snapshot's buffer. */
static int tlbc_offset(py_proc *p, uint64_t code, const uint8_t *hdr, int32_t index,
                       uint64_t instr, int64_t units, int64_t *addrq)
{
    uint64_t span = (uint64_t)units * 2;
    if (index <= 0 || units <= 0)
        return -1;
    if (!p->tlbc)
        p->tlbc = trc_calloc(PYTLBC_SLOTS, sizeof *p->tlbc);   /* none: no memory of copies */
    pytlbc *slot = p->tlbc ? &p->tlbc[((code >> 4) * 31 + (uint64_t)index) % PYTLBC_SLOTS] : NULL;
    if (slot && slot->code == code && slot->index == index && instr + 2 >= slot->start &&
        instr < slot->start + span && !((instr - slot->start) & 1)) {
        *addrq = instr + 2 == slot->start ? -2 : (int64_t)(instr - slot->start);
        return 0;
    }
    uint64_t arr = pysnap_u64(hdr, p->L.co_tlbc);
    if (!arr || (arr & 7))
        return -1;
    const uint8_t *a = pysnap_need_exact(&p->snap, arr, 8);
    if (!a)
        return -1;
    int64_t size = (int64_t)pysnap_u64(a, 0);
    if (index >= size || size > (1 << 20))
        return -1;
    const uint8_t *e = pysnap_need_exact(&p->snap, arr + 8 + 8 * (uint64_t)index, 8);
    if (!e)
        return -1;
    uint64_t start = pysnap_u64(e, 0);
    if (start && instr + 2 == start) {
        *addrq = -2;
    } else if (!start || (start & 1) || instr < start || instr - start >= span ||
               ((instr - start) & 1)) {
        return -1;
    } else {
        *addrq = (int64_t)(instr - start);
    }
    if (slot)
        *slot = (pytlbc){ code, start, index };
    return 0;
}

/* Resolves one Python frame and appends it.  0, 1 when there is no room
 * left and the caller accepts a truncated stack (the walk stops), or -1
 * (p->last set). */
static int emit(py_proc *p, walk *w, uint64_t frame, uint64_t code, int64_t lasti_or_instr)
{
    const py_layout *L = &p->L;

    if (w->depth >= w->max) {
        if (w->trunc_ok) {
            w->truncated = 1;
            return 1;
        }
        w->full = 1;   /* deterministic: not worth a retry */
        return pywalk_fail(p, PY_ERR_IO);
    }
    if (code == 0 || (code & 7))
        return pywalk_fail(p, PY_ERR_IO);
    const uint8_t *hdr;
    const py_frame_info *same = reuse(p, w, frame, code, lasti_or_instr, &hdr);
    if (same) {
        p->stats.code_cache_hits++;
        w->out[w->depth++] = same;
        note_code(w, code);
        return 0;
    }
    if (!hdr)
        hdr = pysnap_get(&p->snap, code, p->co_len);
    if (!hdr && !(hdr = pysnap_need_exact(&p->snap, code, p->co_len)))
        return pywalk_fail(p, pywalk_snap_status(p));
    int vn = p->snap.n;
    int64_t addrq;
    if (L->lasti_kind == PY_LASTI_POINTER) {
        uint64_t start = code + L->co_code_adaptive, instr = (uint64_t)lasti_or_instr;
        int64_t units = pycode_units(p, hdr);
        if (instr + 2 == start)
            addrq = -2;                       /* pushed, not started */
        else if (instr >= start && (instr - start) / 2 < (uint64_t)units && !((instr - start) & 1))
            addrq = (int64_t)(instr - start);
        else if (L->tlbc && tlbc_offset(p, code, hdr, w->tlbc_index, instr, units, &addrq) == 0)
            hdr = pysnap_get(&p->snap, code, p->co_len);   /* the read may have moved it */
        else
            return pywalk_fail(p, PY_ERR_IO);        /* instruction of another code object: torn */
        if (!hdr)
            return pywalk_fail(p, PY_ERR_IO);
    } else {
        int64_t lasti = lasti_or_instr;
        addrq = lasti < 0 ? -1 : L->lasti_kind == PY_LASTI_UNITS ? lasti * 2 : lasti;
    }
    const py_frame_info *fi = pycode_resolve(p, code, hdr, addrq);
    if (!fi)
        return -1;
    w->vcode = code;
    w->vc = pycode_last(p);
    w->vn = vn;
    w->vgen = p->cc.gen;
    if (w->rs && w->depth < PYMEMO_FRAMES)
        w->rs[w->depth] = (pyrs){ frame, code, (uint64_t)lasti_or_instr, p->cc.gen, w->vc, fi };
    w->out[w->depth++] = fi;
    note_code(w, code);
    return 0;
}

/* Reads the frame at f on demand, with its neighbours: inside the
 * current chunk up to 4 KiB below it (older frames live there);
 * elsewhere the whole pages it lies on (frame objects of other calls
 * share them).  NULL when unreadable. */
static const uint8_t *frame_need(py_proc *p, const walk *w, uint64_t f)
{
    if (w->chunk_data && f >= w->chunk_data && f < w->top)
        return pysnap_need(&p->snap, f, p->fr_len, f - w->chunk_data > 4096 ? f - 4096 : w->chunk_data);
    uint64_t lo = pysnap_page(f), hi = pysnap_page(f + p->fr_len - 1) + 4096;
    if (!pysnap_need(&p->snap, lo, hi - lo, lo))
        return NULL;
    return pysnap_get(&p->snap, f, p->fr_len);
}

/* Sets up chunk bounds from the thread state (3.11+). */
static void chunk_bounds(py_proc *p, walk *w, const pymemo *m, const uint8_t *ts)
{
    const py_layout *L = &p->L;
    uint64_t chunk = pysnap_u64(ts, L->ts_datastack_chunk), top = pysnap_u64(ts, L->ts_datastack_top);
    uint64_t end = 0;

    if (!chunk || (chunk & 7))
        return;
    if (chunk == m->chunk) {
        end = m->chunk_end;
    } else {
        const uint8_t *c = pysnap_need_exact(&p->snap, chunk + L->sc_size, 8);
        if (!c)
            return;
        uint64_t size = pysnap_u64(c, 0);
        if (size < 64 || size > (1u << 30))
            return;
        end = chunk + size;
    }
    if (top < chunk + L->sc_data || top > end)
        return;
    w->chunk_data = chunk + L->sc_data;
    w->top = top;
    w->chunk_end = end;
    w->next.chunk = chunk;
    w->next.chunk_end = end;
}

static int walk_frames(py_proc *p, walk *w, uint64_t frame)
{
    const py_layout *L = &p->L;
    uint64_t saved = 0;
    unsigned power = 1, lam = 0, steps = 0, limit = (unsigned)w->max * 4 + 256;

    w->flo = UINT64_MAX;
    w->fhi = 0;
    while (frame) {
        if (frame == saved || ++steps > limit || (frame & 7))
            return pywalk_fail(p, PY_ERR_IO);   /* cycle, runaway or garbage */
        if (++lam == power) {
            saved = frame;
            power *= 2;
            lam = 0;
        }
        const uint8_t *fr = pysnap_get(&p->snap, frame, p->fr_len);
        if (!fr && !(fr = frame_need(p, w, frame)))
            return pywalk_fail(p, pywalk_snap_status(p));
        if (w->chunk_data && frame >= w->chunk_data && frame < w->top) {
            if (frame < w->flo)
                w->flo = frame;
            if (frame + p->fr_len > w->fhi)
                w->fhi = frame + p->fr_len;
        }
        /* the chain, innermost first: frame objects; from 3.11 every
         * frame, in the data stack, generators and (3.12+) on the C stack */
        if (w->next.nframes < PYMEMO_FRAMES)
            w->next.frames[w->next.nframes++] = frame;
        uint64_t code, prev;
        if (L->frame_objects) {
            int state = (int8_t)fr[L->fo_state];
            int running = state == L->fo_state_run || state == L->fo_state_unwind;
            code = pysnap_u64(fr, L->fo_code);
            prev = pysnap_u64(fr, L->fo_back);
            /* Every frame, the innermost too, must be running: a frame
             * object read a moment before the thread state named it may
             * still hold a freed frame's code and instruction. */
            if (pysnap_u64(fr, L->ob_type) != p->frame_type || !running)
                return pywalk_fail(p, PY_ERR_IO);   /* freed, reused or not running */
            int r = emit(p, w, frame, code, (int32_t)pysnap_u32(fr, L->fo_lasti));
            if (r < 0)
                return -1;
            if (r > 0)
                break;     /* truncated: frame and those beyond are not part of it */
        } else {
            unsigned owner = fr[L->if_owner];
            if (owner > L->owner_max)
                return pywalk_fail(p, PY_ERR_IO);
            prev = pysnap_u64(fr, L->if_previous);
            code = pysnap_u64(fr, L->if_code) & L->code_ptr_mask;
            if (w->chunk_data && frame >= w->chunk_data && frame < w->top &&
                (frame + p->fr_len > w->top ||
                 (prev >= w->chunk_data && prev < w->top && prev >= frame)))
                return pywalk_fail(p, PY_ERR_IO);   /* callers lie below callees */
            if (owner < L->owner_skip_min) {
                w->tlbc_index = L->tlbc ? (int32_t)pysnap_u32(fr, L->if_tlbc_index) : 0;
                int r = emit(p, w, frame, code, (int64_t)pysnap_u64(fr, L->if_instr));
                if (r < 0)
                    return -1;
                if (r > 0)
                    break; /* truncated */
            }
            if (!prev && !(L->owner_bottom & (1u << owner)))
                return pywalk_fail(p, PY_ERR_IO);   /* e.g. a generator that just yielded */
        }
        if (!w->leaf) {
            w->leaf = frame;
            w->leaf_code = code;
            w->leaf_prev = prev;
        }
        w->bottom = frame;
        frame = prev;
    }
    return 0;
}

/* Current frame pointer from a thread state copy (and its cframe). */
static int current_frame(py_proc *p, walk *w, const uint8_t *ts, uint64_t *frame)
{
    const py_layout *L = &p->L;

    if (L->frame_objects) {
        *frame = pysnap_u64(ts, L->ts_frame);
    } else if (L->ts_current_frame != PY_OFF_NONE) {
        *frame = pysnap_u64(ts, L->ts_current_frame);
    } else {
        uint64_t cf = pysnap_u64(ts, L->ts_cframe);
        const uint8_t *c = cf ? pysnap_need_exact(&p->snap, cf + L->cf_current_frame, 8) : NULL;
        if (cf && !c)
            return -1;
        *frame = c ? pysnap_u64(c, 0) : 0;
        w->next.cframe = cf;
    }
    return 0;
}

/* Reads the thread state and the leaf frame again: 1 if the thread is
 * still in the same leaf frame with the same code and caller, 0 if not,
 * -1 if the read failed. */
static int unchanged(py_proc *p, uint64_t tstate, const walk *w)
{
    const py_layout *L = &p->L;
    walk again;
    uint64_t frame;

    walk_start(&again);
    p->tick_valid = 0;
    pysnap_reset(&p->snap);
    pysnap_plan(&p->snap, tstate, p->ts_len);
    if (w->next.cframe)
        pysnap_plan(&p->snap, w->next.cframe + L->cf_current_frame, 8);
    pysnap_plan(&p->snap, w->leaf, p->fr_len);
    if (pysnap_fetch(&p->snap) != 0 && p->snap.hard_errno)
        return -1;
    const uint8_t *ts = pysnap_need_exact(&p->snap, tstate, p->ts_len);
    if (!ts || current_frame(p, &again, ts, &frame) != 0)
        return -1;
    if (frame != w->leaf || again.next.cframe != w->next.cframe)
        return 0;
    const uint8_t *fr = pysnap_need_exact(&p->snap, w->leaf, p->fr_len);
    if (!fr)
        return -1;
    uint64_t code = pysnap_u64(fr, L->frame_objects ? L->fo_code : L->if_code);
    uint64_t prev = pysnap_u64(fr, L->frame_objects ? L->fo_back : L->if_previous);
    if (!L->frame_objects)
        code &= L->code_ptr_mask;
    return code == w->leaf_code && prev == w->leaf_prev;
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
    const py_layout *L = &p->L;
    walk w;

    if (!tstate || (tstate & 7) || max < 0)
        return pywalk_fail(p, PY_ERR_IO);
    pymemo *m = memo_get(p, tstate);
    if (!m)
        return pywalk_fail(p, PY_ERR_NOMEM);
    walk_start(&w);
    w.out = frames;
    w.max = max;
    w.trunc_ok = trunc != NULL;
    w.next.tstate = tstate;
    if (!m->rs)
        m->rs = trc_calloc(PYMEMO_FRAMES, sizeof *m->rs);   /* none: no reuse */
    w.rs = w.next.rs = m->rs;
    /* Right after py_proc_threads, its fetch already holds this stack
     * (once: a second call for the same thread wants a new sample). */
    if (!tick_take(p, tstate)) {
        p->tick_valid = 0;
        pysnap_reset(&p->snap);
        plan_stack(p, m, tstate);
        if (pysnap_fetch(&p->snap) != 0 && p->snap.hard_errno)
            return pywalk_fail(p, pywalk_snap_status(p));
    }
    /* A copy: later reads may move the snapshot's buffer. */
    uint8_t ts[PY_TS_MAX];
    const uint8_t *tsp = pysnap_need_exact(&p->snap, tstate, p->ts_len);
    if (!tsp)
        return pywalk_fail(p, pywalk_snap_status(p));
    memcpy(ts, tsp, p->ts_len);
    if (p->lm.ninterp > 0 && !p->lm.interp_more) {
        /* A thread state names one of the interpreters seen last time:
         * anything else is a freed or wrong address. */
        uint64_t interp = pysnap_u64(ts, L->ts_interp);
        int known = 0;
        for (int i = 0; i < p->lm.ninterp; i++)
            known |= p->lm.interp[i] == interp;
        if (!known)
            return pywalk_fail(p, PY_ERR_IO);
    }
    uint64_t frame;
    if (!L->frame_objects)
        chunk_bounds(p, &w, m, ts);
    if (current_frame(p, &w, ts, &frame) != 0)
        return pywalk_fail(p, pywalk_snap_status(p));
    /* Frames on the data stack but no current frame: the interpreter is
     * between making a new C-level frame record current and pointing it
     * at its first frame (3.11-3.12; the record lives on the C stack and
     * starts out as whatever was there).  Not an empty stack. */
    if (!frame && w.chunk_data && w.top - w.chunk_data >= p->fr_len)
        return pywalk_fail(p, PY_ERR_IO);
    if (walk_frames(p, &w, frame) != 0) {
        *full = w.full;
        memo_learn(m, &w);
        return -1;
    }
    /* 3.15+: every thread's frames end at its base frame; a walk that
     * ends elsewhere (and was not cut short) read frames being rewritten.
     * The base frame alone is a thread with no Python frames. */
    uint64_t base = L->ts_base_frame ? pysnap_u64(ts, L->ts_base_frame) : 0;
    if (base && w.bottom && !w.truncated && w.bottom != base)
        return pywalk_fail(p, PY_ERR_IO);
    int base_only = base && w.bottom == base && w.leaf == base;
    /* Entry frames and no Python frame: read while a call from C was
     * being set up or torn down (3.12+), not a thread without Python. */
    if (w.bottom && w.depth == 0 && !base_only)
        return pywalk_fail(p, PY_ERR_IO);
    if (w.bottom && w.bottom != m->bottom) {
        int same = unchanged(p, tstate, &w);
        if (same <= 0)
            return pywalk_fail(p, same < 0 ? pywalk_snap_status(p) : PY_ERR_IO);
    }
    w.next.bottom = w.bottom;
    if (w.fhi > w.flo) {
        uint64_t hi = w.top + WINDOW_SLACK < w.chunk_end ? w.top + WINDOW_SLACK : w.chunk_end;
        uint64_t lo = hi - w.flo > CHUNK_WINDOW ? hi - CHUNK_WINDOW : w.flo;
        w.next.lo = lo;
        w.next.hi = hi;
    }
    memo_commit(m, &w.next);
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
        if (n >= 0 || full || p->last != PY_ERR_IO)
            break;
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
