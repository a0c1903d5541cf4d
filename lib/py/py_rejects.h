/*
 * py_rejects.h — which check rejected each torn try of a stack read, for
 * measuring where torn reads come from (docs/trec.md "Consistent stacks
 * without stopping the program").  Off unless the environment names
 * TRC_PY_REJECTS when the first stack is read; then the counts are
 * printed to standard error when the process exits.
 */
#ifndef TRC_LIB_PY_REJECTS_H
#define TRC_LIB_PY_REJECTS_H

enum {
    PYREJ_UNREADABLE,     /* a frame or the thread state could not be read */
    PYREJ_INTERP,         /* the thread state names an unknown interpreter */
    PYREJ_CHAIN,          /* cycle, runaway chain or misaligned frame */
    PYREJ_TYPE,           /* not a frame object (freed and reused) */
    PYREJ_LEAF_BATCH,     /* newest frame not running, copied in the batched read */
    PYREJ_LEAF_LATE,      /* the same, from its copy next to the thread state (py_plan.c) */
    PYREJ_LEAF_DEMAND,    /* newest frame not running, read on demand */
    PYREJ_LEAF_ALIVE,     /* newest frame not running but referenced: returning, or
                           * a copy made while a new call set it up */
    PYREJ_INNER,          /* an older frame not running */
    PYREJ_CODE,           /* code object or instruction does not fit */
    PYREJ_LAYOUT,         /* 3.11+: owner, order in the chunk, chain end */
    PYREJ_UNCHANGED,      /* a new outermost frame, and the thread moved on */
    PYREJ_KINDS
};

/* Counts one rejected try of kind why, the frame at depth (0 the
 * newest; -1 not a frame).  Cheap when off.  Cannot fail. */
void pyrej_note(int why, int depth);

/* Counts a stack read that passed on try number t (0 the first), or
 * that no try passed (t < 0).  Cannot fail. */
void pyrej_result(int t);

#endif
