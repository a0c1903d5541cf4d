/*
 * lib/export/common/gpu_graph.h — where a CUDA graph was captured, for
 * the kernels its replays run (spec §7.15 [R-API-3], docs/gpu.md).
 *
 * A kernel replayed from a graph carries the graph launch's correlation
 * id (charged to the launch line by gpu_callsite.c) and CUPTI's graph id
 * (GPU_KERNEL.graph).  The calls that ended a stream capture or
 * instantiated a graph carry, since format 1.4, the ids of the graphs
 * they made, and their Python stack: the line that captured the graph.
 * This stage keeps, per process, graph id → that stack, and answers for
 * a kernel's graph id.  CUPTI's headers do not say whether a kernel's
 * graphId is the graph's id or the executable graph's, so an id is
 * looked up first as an executable graph (giving its graph), then as a
 * graph; a graph ended by a capture gives that call's stack, else the
 * instantiating call's.  The latest call seen wins (ids may be reused
 * after a graph is destroyed).  Memory follows the number of graphs.
 *
 * It also sums a converter's graph kernels by (process, graph, launch
 * stack), for trc-stats --gpu-callsites' "CUDA graphs" lines
 * (exp_gpu_graph_hit, exp_gpu_graph_print).  Internal API, prefix
 * exp_gpu_graph_.  Ownership: exp_gpu_graph_new / exp_gpu_graph_free.
 */
#ifndef TRC_LIB_EXPORT_GPU_GRAPH_H
#define TRC_LIB_EXPORT_GPU_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/common/gpu_callsite.h"

typedef struct exp_gpu_graph exp_gpu_graph;

/* NULL when out of memory. */
exp_gpu_graph *exp_gpu_graph_new(void);
void exp_gpu_graph_free(exp_gpu_graph *g);

/* Feed events in file order; only API_CALLs with a graph id matter.  r:
 * the reader they came from (the calling thread's process).  TRC_OK or
 * TRC_ERR_NOMEM / TRC_ERR_LIMIT. */
trc_status exp_gpu_graph_event(exp_gpu_graph *g, const trc_reader *r, const trc_event *ev);

/* The stack (reader id) of the call that captured the graph whose
 * kernels carry GPU_KERNEL.graph == graph in process pid; 0 when not
 * known (no such call in the file, or it had no Python stack). */
uint32_t exp_gpu_graph_captured(const exp_gpu_graph *g, int64_t pid, uint32_t graph);

/* Count a charged activity: one of a graph (h->graph != 0) is summed
 * under (pid, graph, launch stack); others are ignored.  TRC_OK or
 * TRC_ERR_NOMEM / TRC_ERR_LIMIT. */
trc_status exp_gpu_graph_hit(exp_gpu_graph *g, const exp_gpu_hit *h);

/* The graphs counted, one line each, in order of first kernel:
 *   "  graph 7 (pid 42): 3 kernels, 0.015 ms, launched at train.py:42
 *    (step), captured at train.py:30 (build)"
 * ("captured at <unknown>" when no capture call is known, "launched at
 * <no Python stack>" for a launch without one), under a heading; nothing
 * when no graph kernel was counted. */
void exp_gpu_graph_print(const exp_gpu_graph *g, const trc_reader *r, FILE *out);

#endif /* TRC_LIB_EXPORT_GPU_GRAPH_H */
