/*
 * py_walk.h — the walk stage of a tick (py_walk.c): one thread's frames
 * from a fetched snapshot, checked, resolved to names and lines.  What a
 * walk touched (pywalk.next) is the next plan's input (py_plan.h).
 */
#ifndef TRC_LIB_PY_WALK_H
#define TRC_LIB_PY_WALK_H

#include "lib/py/py_internal.h"

typedef struct pywalk {
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
    int frames_failed;    /* the walk of the frames failed (not a check after it) */
    int rej;              /* which check failed it (py_rejects.h), when it did */
    const pymemo *memo;   /* the thread's memo the walk was planned from */
    /* last: walk_start clears only its head (see memo_clear) */
    pymemo next;          /* what this sample touched, for the next plan */
} pywalk;

/* Walks tstate's stack into frames[0..max) (leaf first) from what the
 * snapshot holds (the caller fetched what m planned; the rest is read
 * on demand), with every check of py_walk.c.  trunc_ok: a stack deeper
 * than max is cut to its innermost max frames instead of failing
 * (w->truncated says so).  Returns the depth, or -1 with p->last set;
 * w->frames_failed and w->full then say whether the walk of the frames
 * itself failed, and whether for want of room.  Either way w holds what
 * the walk touched, for pyplan_learn / pyplan_commit.  The caller holds
 * p->lock and has made m->rs (NULL: no reuse). */
int pywalk_stack(py_proc *p, const pymemo *m, uint64_t tstate, const py_frame_info **frames,
                 int max, int trunc_ok, pywalk *w);

#endif
