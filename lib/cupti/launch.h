/*
 * lib/cupti/launch.h — the Python stack at each GPU launch
 * (docs/design/cupti.md §5).
 *
 * At API_ENTER of a launch call the injection asks this module for the
 * calling thread's Python stack (read in-process by lib/py's walker over
 * local memory: no GIL, no Python C API), interned into the side trace's
 * writer, and parks it under the call's correlation id; when the API
 * activity record with that id is decoded, it takes the stack back.
 *
 * Thread-safe with a small lock of its own, so that a launch never waits
 * for the flusher: capture and park touch only this module; interning
 * into the writer happens in cupti_launch_resolve, called by whoever
 * owns the writer (the injection, with its big lock held).  Needs no
 * CUDA headers, so the capture is testable from any Python (ctypes).
 */
#ifndef TRC_LIB_CUPTI_LAUNCH_H
#define TRC_LIB_CUPTI_LAUNCH_H

#include <stdint.h>

#include "trc/trc.h"

typedef struct cupti_launch cupti_launch;

typedef struct cupti_launch_stats {
    uint64_t captures;       /* stacks read */
    uint64_t cache_hits;     /* ... whose interned id came from the cache */
    uint64_t no_python;      /* launches from threads without Python frames */
    uint64_t invalid;        /* walker reported an unreadable or inconsistent stack
                              * (the call is flagged TRC_API_UNREADABLE) */
    uint64_t overwritten;    /* parked stacks lost before their API record came */
    uint64_t thread_lists;   /* thread lists the walker read (lib/py's stats) */
} cupti_launch_stats;

/* New, empty state; the Python runtime is looked for at the first
 * capture.  NULL on allocation failure.  Free with cupti_launch_free
 * (which also drops the walker). */
cupti_launch *cupti_launch_new(void);
void cupti_launch_free(cupti_launch *l);

/* Stack of the calling thread, not yet interned: sets *ref (0 = none;
 * a thread found without Python is believed for ~100 ms, without a walk;
 * a stack that cannot be copied for lack of memory goes without) and
 * *flags (TRC_API_NO_PYTHON when the thread has no Python frames or the
 * process has no usable Python).  Never touches a writer. */
void cupti_launch_capture(cupti_launch *l, uint32_t *ref, uint32_t *flags);

/* Intern into w every stack captured since the last call, so that
 * cupti_launch_take can give their ids.  Returns TRC_OK or the writer's
 * first error (those stacks then take as 0). */
trc_status cupti_launch_resolve(cupti_launch *l, trc_writer *w);

/* Park the result of a capture (park) or an interned stack id (put)
 * under a correlation id, with capture_ns, how long the capture took
 * inside the call (the API_CALL's capture field, spec §7.15; 0 when the
 * call reused an outer call's capture), and tid, the kernel thread id of
 * the launching thread (0 = unknown): the API record's own thread id is
 * the kernel's only when cuptiActivitySetThreadIdType took.  A slot is reused after 2^18
 * newer launches (counted as overwritten).  cupti_launch_take returns 1
 * and fills the outputs when found (and forgets it), else 0; a captured
 * stack not resolved yet takes as 0.  Cannot fail. */
void cupti_launch_park(cupti_launch *l, uint32_t corr, uint32_t ref, uint32_t flags,
                       uint32_t capture_ns, uint32_t tid);
void cupti_launch_put(cupti_launch *l, uint32_t corr, uint32_t stack, uint32_t flags,
                      uint32_t capture_ns, uint32_t tid);
int cupti_launch_take(cupti_launch *l, uint32_t corr, uint32_t *stack, uint32_t *flags,
                      uint32_t *capture_ns, uint32_t *tid);

/* The graph ids (spec [R-API-3]) of a call that ended a capture or
 * instantiated a graph, found at its exit, kept under its correlation id
 * until its API record is decoded.  Such calls are rare: a small table,
 * a slot reused after GRAPH_SLOTS newer ones.  cupti_launch_take_graph
 * returns 1 and fills the ids when found (and forgets them), else 0.
 * Cannot fail. */
void cupti_launch_graph(cupti_launch *l, uint32_t corr, uint32_t graph, uint32_t graph_exec);
int cupti_launch_take_graph(cupti_launch *l, uint32_t corr, uint32_t *graph,
                            uint32_t *graph_exec);

void cupti_launch_get_stats(cupti_launch *l, cupti_launch_stats *out);

/* Why Python stacks are unavailable ("" while they are, or before the
 * first capture).  Borrowed. */
const char *cupti_launch_python_status(const cupti_launch *l);

#endif
