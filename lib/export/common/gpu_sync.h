/*
 * lib/export/common/gpu_sync.h — blocking syncs by Python line: the
 * stage behind --syncs (docs/gpu.md, "Where does my code wait for the
 * GPU?").  It takes the events of a trace and hands back one exp_sync_hit
 * per API call flagged TRC_API_SYNC (spec §7.15 [R-API-2]): the call's
 * Python stack, the host time it blocked and the GPU work it waited for.
 *
 * Definitions.  blocked = the call's duration minus the recorder's own
 * capture time (API_CALL capture), clamped at 0.  An API_CALL does not
 * say which stream or device it waits for, so the GPU work waited for is
 * that of the call's process: waited = the summed part inside the call
 * of every kernel, copy and memset of the same process that ended
 * during the call (end in [start, end]); the *last* work is the one of
 * those that ended last, or, when none ended during the call, the last
 * one that ended before it (0 when there is none).
 *
 * Calls and activities may come in either order in a file (CUPTI writes
 * an activity when it completes, a call when it returns).  Each call is
 * matched against the last EXP_SYNC_RECENT activities of its process
 * already read, then kept until EXP_SYNC_WINDOW more events have passed
 * (matched against each activity read meanwhile), then emitted; every
 * (call, activity) pair is counted once.  Memory follows the number of
 * sync calls within the window and the distinct API names, never the
 * number of activities.  Internal API, prefix exp_sync_.
 */
#ifndef TRC_LIB_EXPORT_COMMON_GPU_SYNC_H
#define TRC_LIB_EXPORT_COMMON_GPU_SYNC_H

#include <stdint.h>

#include "trc/trc.h"
#include "lib/export/common/gpu_callsite.h"

#define EXP_SYNC_RECENT 1024u          /* activities remembered, all processes */
#define EXP_SYNC_WINDOW (UINT64_C(1) << 16)   /* events a call waits for its activities */

typedef struct exp_sync_hit {
    int64_t pid;
    uint32_t thread;           /* calling thread (reader id) */
    uint32_t stack;            /* Python stack at the call; 0 unless origin is PYTHON */
    exp_gpu_origin origin;     /* PYTHON or NO_PYTHON */
    uint32_t name_id;          /* dense id >= 1 of name */
    const char *name;          /* API name, owned by the stage until _free */
    int64_t start_ns, end_ns;  /* the call */
    uint64_t blocked_ns;       /* duration - capture, >= 0 */
    uint64_t waited_ns;        /* GPU work of the process that ended during the call */
    int has_last;              /* last_* set */
    int64_t last_start_ns, last_end_ns;   /* the last GPU work waited for */
    trc_gpu_where last_where;
} exp_sync_hit;

typedef trc_status (*exp_sync_emit_fn)(void *ctx, const trc_reader *r, const exp_sync_hit *hit);

typedef struct exp_gpu_sync exp_gpu_sync;

/* New stage emitting to emit(ctx, ...).  NULL when out of memory. */
exp_gpu_sync *exp_sync_new(exp_sync_emit_fn emit, void *ctx);
void exp_sync_free(exp_gpu_sync *s);

/* Feed one event (any type; only API calls, kernels, copies, memsets and
 * segments matter).  TRC_OK, TRC_ERR_NOMEM or emit's status. */
trc_status exp_sync_event(exp_gpu_sync *s, const trc_reader *r, const trc_event *ev);

/* Emit every call still kept.  TRC_OK or emit's status. */
trc_status exp_sync_finish(exp_gpu_sync *s, const trc_reader *r);

#endif /* TRC_LIB_EXPORT_COMMON_GPU_SYNC_H */
