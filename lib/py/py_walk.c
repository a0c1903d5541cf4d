/*
 * py_walk.c — thread state → frames, checked: the walk stage of a tick
 * (py_tick.c runs the stages; docs/design/cpython.md §4, §9).
 *
 * A walk starts from what the batched read fetched as py_plan.c planned
 * (thread state, the window of the frame chunk or the frame objects,
 * the code objects) and reads whatever was not foreseen on demand; what
 * it touched goes back to the thread's memo for the next plan.  Each
 * frame's code object and instruction become a name and a line in
 * py_code.c.
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
 *    freed and fails the checks below.  The newest frames of the last
 *    reads are copied a second time between the pages and the thread
 *    state (py_plan.c): that is where a short call's frame most often
 *    is, and the later its copy the likelier it is current.  (The other order, the thread
 *    state first and the frames newest first, tore less often on many
 *    short calls but made a recursion read beside it lean shallow by 2
 *    to 6 frames: a frame freed and taken back by a shallower call
 *    reads running, and the chain through it comes out short.)
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
#include "lib/py/py_walk.h"

#include "lib/py/py_rejects.h"

#include "lib/util/alloc.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* Empties a memo without touching its address arrays (1.5 KiB: clearing
 * and copying them whole was a good part of a sample): only the first
 * nframes / ncodes entries are ever read. */
static void memo_clear(pymemo *m)
{
    memset(m, 0, offsetof(pymemo, frames));
    m->nframes = m->ncodes = 0;
    m->rs = NULL;
}

/* A walk with nothing found yet. */
static void walk_start(pywalk *w)
{
    memset(w, 0, offsetof(pywalk, next));
    memo_clear(&w->next);
}

static void note_code(pywalk *w, uint64_t code)
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
static const py_frame_info *reuse(py_proc *p, pywalk *w, uint64_t frame, uint64_t code,
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
static int emit(py_proc *p, pywalk *w, uint64_t frame, uint64_t code, int64_t lasti_or_instr)
{
    const py_layout *L = &p->L;

    if (w->depth >= w->max) {
        if (w->trunc_ok) {
            w->truncated = 1;
            return 1;
        }
        w->full = 1;   /* deterministic: not worth a retry */
        return py_fail(p, PY_ERR_IO);
    }
    if (code == 0 || (code & 7))
        return py_fail(p, PY_ERR_IO);
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
        return py_fail(p, py_snap_status(p));
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
            return py_fail(p, PY_ERR_IO);        /* instruction of another code object: torn */
        if (!hdr)
            return py_fail(p, PY_ERR_IO);
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
static const uint8_t *frame_need(py_proc *p, const pywalk *w, uint64_t f)
{
    if (w->chunk_data && f >= w->chunk_data && f < w->top)
        return pysnap_need(&p->snap, f, p->fr_len, f - w->chunk_data > 4096 ? f - 4096 : w->chunk_data);
    uint64_t lo = pysnap_page(f), hi = pysnap_page(f + p->fr_len - 1) + 4096;
    if (!pysnap_need(&p->snap, lo, hi - lo, lo))
        return NULL;
    return pysnap_get(&p->snap, f, p->fr_len);
}

/* Sets up chunk bounds from the thread state (3.11+). */
static void chunk_bounds(py_proc *p, pywalk *w, const pymemo *m, const uint8_t *ts)
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

static int walk_frames(py_proc *p, pywalk *w, uint64_t frame)
{
    const py_layout *L = &p->L;
    uint64_t saved = 0;
    unsigned power = 1, lam = 0, steps = 0, limit = (unsigned)w->max * 4 + 256;

    w->flo = UINT64_MAX;
    w->fhi = 0;
    while (frame) {
        if (frame == saved || ++steps > limit || (frame & 7)) {
            w->rej = PYREJ_CHAIN;
            return py_fail(p, PY_ERR_IO);   /* cycle, runaway or garbage */
        }
        if (++lam == power) {
            saved = frame;
            power *= 2;
            lam = 0;
        }
        const uint8_t *fr = pysnap_get(&p->snap, frame, p->fr_len);
        int batched = fr != NULL;
        w->rej = PYREJ_UNREADABLE;
        if (!fr && !(fr = frame_need(p, w, frame)))
            return py_fail(p, py_snap_status(p));
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
            int32_t lasti = (int32_t)pysnap_u32(fr, L->fo_lasti);
            /* ob_refcnt, the word before ob_type: 0 once freed */
            uint64_t refs = L->ob_type >= 8 ? pysnap_u64(fr, L->ob_type - 8) : 0;
            code = pysnap_u64(fr, L->fo_code);
            prev = pysnap_u64(fr, L->fo_back);
            /* The interpreter names a new frame current a few steps
             * before marking it running: a leaf with a caller and no
             * instruction yet is such a call, a true stack (a frozen or
             * preempted thread caught there would fail every retry).
             * Every other frame must be running: a frame object read a
             * moment before the thread state named it may still hold a
             * freed frame's code and instruction. */
            if (!running && !w->leaf && lasti == -1 && prev)
                running = 1;
            /* A newest frame that is referenced (ob_refcnt) but not
             * running, with a caller, is a frame returning or a
             * generator resuming or yielding (true stacks), or a stale
             * copy of a frame a new call was setting up.  Read twice
             * alike, from one try to the next, it is the former: a
             * thread held there (preempted, or every try landing
             * there); a new call sets a frame up before it is current,
             * so a stale copy does not persist.  Once: kept for the
             * next try. */
            if (!running && !w->leaf && prev && refs && p->fr_len <= PY_FR_HELD) {
                if (w->memo->held == frame && !memcmp(w->memo->held_bytes, fr, p->fr_len))
                    running = 1;
                else if (pysnap_u64(fr, L->ob_type) == p->frame_type) {
                    w->next.held = frame;
                    memcpy(w->next.held_bytes, fr, p->fr_len);
                }
            }
            if (pysnap_u64(fr, L->ob_type) != p->frame_type || !running) {
                w->rej = pysnap_u64(fr, L->ob_type) != p->frame_type ? PYREJ_TYPE
                         : w->leaf ? PYREJ_INNER : refs ? PYREJ_LEAF_ALIVE
                         : batched ? PYREJ_LEAF_BATCH : PYREJ_LEAF_DEMAND;
                return py_fail(p, PY_ERR_IO);   /* freed, reused or not running */
            }
            w->rej = PYREJ_CODE;
            int r = emit(p, w, frame, code, lasti);
            if (r < 0)
                return -1;
            if (r > 0)
                break;     /* truncated: frame and those beyond are not part of it */
        } else {
            w->rej = PYREJ_LAYOUT;
            unsigned owner = fr[L->if_owner];
            if (owner > L->owner_max)
                return py_fail(p, PY_ERR_IO);
            prev = pysnap_u64(fr, L->if_previous);
            code = pysnap_u64(fr, L->if_code) & L->code_ptr_mask;
            if (w->chunk_data && frame >= w->chunk_data && frame < w->top &&
                (frame + p->fr_len > w->top ||
                 (prev >= w->chunk_data && prev < w->top && prev >= frame)))
                return py_fail(p, PY_ERR_IO);   /* callers lie below callees */
            if (owner < L->owner_skip_min) {
                w->tlbc_index = L->tlbc ? (int32_t)pysnap_u32(fr, L->if_tlbc_index) : 0;
                int r = emit(p, w, frame, code, (int64_t)pysnap_u64(fr, L->if_instr));
                if (r < 0)
                    return -1;
                if (r > 0)
                    break; /* truncated */
            }
            if (!prev && !(L->owner_bottom & (1u << owner)))
                return py_fail(p, PY_ERR_IO);   /* e.g. a generator that just yielded */
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
static int current_frame(py_proc *p, pywalk *w, const uint8_t *ts, uint64_t *frame)
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
static int unchanged(py_proc *p, uint64_t tstate, const pywalk *w)
{
    const py_layout *L = &p->L;
    pywalk again;
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

int pywalk_stack(py_proc *p, const pymemo *m, uint64_t tstate, const py_frame_info **frames,
                 int max, int trunc_ok, pywalk *w)
{
    const py_layout *L = &p->L;

    walk_start(w);
    w->out = frames;
    w->max = max;
    w->trunc_ok = trunc_ok;
    w->next.tstate = tstate;
    w->rs = w->next.rs = m->rs;
    w->memo = m;
    /* A copy: later reads may move the snapshot's buffer. */
    uint8_t ts[PY_TS_MAX];
    const uint8_t *tsp = pysnap_need_exact(&p->snap, tstate, p->ts_len);
    if (!tsp)
        return py_fail(p, py_snap_status(p));
    memcpy(ts, tsp, p->ts_len);
    if (p->lm.ninterp > 0 && !p->lm.interp_more) {
        /* A thread state names one of the interpreters seen last time:
         * anything else is a freed or wrong address. */
        uint64_t interp = pysnap_u64(ts, L->ts_interp);
        int known = 0;
        for (int i = 0; i < p->lm.ninterp; i++)
            known |= p->lm.interp[i] == interp;
        if (!known) {
            pyrej_note(PYREJ_INTERP, -1);
            return py_fail(p, PY_ERR_IO);
        }
    }
    uint64_t frame;
    if (!L->frame_objects)
        chunk_bounds(p, w, m, ts);
    if (current_frame(p, w, ts, &frame) != 0)
        return py_fail(p, py_snap_status(p));
    /* Frames on the data stack but no current frame: the interpreter is
     * between making a new C-level frame record current and pointing it
     * at its first frame (3.11-3.12; the record lives on the C stack and
     * starts out as whatever was there).  Not an empty stack. */
    if (!frame && w->chunk_data && w->top - w->chunk_data >= p->fr_len)
        return py_fail(p, PY_ERR_IO);
    if (walk_frames(p, w, frame) != 0) {
        w->frames_failed = 1;
        if (w->rej == PYREJ_LEAF_BATCH)
            for (int i = 0; i < m->nleaves; i++)
                if (m->leaves[i] == w->next.frames[0])
                    w->rej = PYREJ_LEAF_LATE;
        pyrej_note(w->rej, w->depth);
        return -1;
    }
    /* 3.15+: every thread's frames end at its base frame; a walk that
     * ends elsewhere (and was not cut short) read frames being rewritten.
     * The base frame alone is a thread with no Python frames. */
    uint64_t base = L->ts_base_frame ? pysnap_u64(ts, L->ts_base_frame) : 0;
    if (base && w->bottom && !w->truncated && w->bottom != base)
        return py_fail(p, PY_ERR_IO);
    int base_only = base && w->bottom == base && w->leaf == base;
    /* Entry frames and no Python frame: read while a call from C was
     * being set up or torn down (3.12+), not a thread without Python. */
    if (w->bottom && w->depth == 0 && !base_only)
        return py_fail(p, PY_ERR_IO);
    if (w->bottom && w->bottom != m->bottom) {
        int same = unchanged(p, tstate, w);
        if (same <= 0) {
            pyrej_note(same < 0 ? PYREJ_UNREADABLE : PYREJ_UNCHANGED, -1);
            return py_fail(p, same < 0 ? py_snap_status(p) : PY_ERR_IO);
        }
    }
    return w->depth;
}
