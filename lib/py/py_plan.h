/*
 * py_plan.h — the plan stage of a tick (py_plan.c): each thread's memo
 * of what its last walk touched, and the reads planned from it.
 */
#ifndef TRC_LIB_PY_PLAN_H
#define TRC_LIB_PY_PLAN_H

#include "lib/py/py_internal.h"
#include "lib/py/py_walk.h"

/* The memo of tstate, created empty if new.  NULL on ENOMEM. */
pymemo *pyplan_memo(py_proc *p, uint64_t tstate);

/* Where in a batched read (py_snap.h) a thread state goes: before its
 * frames from 3.11, after them before (py_walk.c says why). */
int pyplan_ts_place(const py_proc *p);

/* Plans the reads of tstate's stack that memo m holds, in the order the
 * walk's checks need.  Returns about how many bytes that is.  Cannot
 * fail (a plan past the snapshot's room is read on demand). */
uint64_t pyplan_stack(py_proc *p, const pymemo *m, uint64_t tstate);

/* Plans the reads tstate's last stack needed, if it has been walked
 * before and is not idle (py_proc_set_idle); about how many bytes that
 * is (0: nothing known). */
uint64_t pyplan_known(py_proc *p, uint64_t tstate);

/* After a good walk: w's stack bottom and the window of the frame chunk
 * it saw become m's plan for the next sample (w->next is updated and
 * copied); before 3.11 the frame objects m knew stay in it as long as
 * the outermost frame is the same (py_plan.c).  Cannot fail. */
void pyplan_commit(const py_proc *p, pymemo *m, pywalk *w);

/* After a torn walk: adds what it touched (frame objects, code
 * objects, the frames it saw inside the chunk) to the thread's plan, so
 * that the next try fetches them in its one batched read instead of
 * reading them one by one while the target moves on.  The rest of the
 * memo (the last good stack's bottom) stays.  Cannot fail. */
void pyplan_learn(pymemo *m, const pywalk *w);

#endif
