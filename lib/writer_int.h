/*
 * lib/writer_int.h — the writer's state, shared by lib/writer.c (output,
 * chunks, segment header/end), lib/writer_defs.c (interning) and
 * lib/writer_events.c (samples with repeat folding, other events).
 * Byte layout: spec/DESIGN-NOTES.md; writer policy: its last section.
 *
 * Error policy: argument errors (TRC_ERR_ARG/LIMIT) refuse one call and
 * leave the writer usable.  An allocation failure while interning rolls
 * the payload back and is returned (the writer stays usable).  A failure
 * to build or write a chunk (TRC_ERR_IO incl. EPIPE, TRC_ERR_NOMEM) is
 * sticky: w->err is returned by every later call.
 */
#ifndef TRC_LIB_WRITER_INT_H
#define TRC_LIB_WRITER_INT_H

#include <stdint.h>

#include "trc/trc.h"
#include "format/buf.h"
#include "format/chunk.h"
#include "lib/util/arena.h"
#include "lib/util/intern.h"

/* Per-thread state, indexed by writer thread id (slot 0 unused). */
typedef struct trcw_thread {
    int64_t pid, tid;
    uint32_t name;            /* string id of the current name */
    /* the pending run of identical samples (run_count 0 = none) */
    uint32_t run_stack, run_flags;
    uint64_t run_weight;      /* 0 = the default period */
    uint64_t run_count;
    int64_t run_t0, run_tlast;
} trcw_thread;

/* What was last written for a pid / GPU device, to skip repeats. */
typedef struct trcw_process {
    int64_t ppid, start_ns, rank;
    uint32_t executable, interpreter, command_line, label, layout;
} trcw_process;

typedef struct trcw_device {
    uint32_t name;
    uint8_t uuid[16];
    uint64_t sm_count, memory_bytes, cc_major, cc_minor;
} trcw_device;

typedef struct trcw_stream {
    int64_t priority;
    uint64_t flags;
    uint32_t name;
} trcw_stream;

struct trc_writer {
    trc_write_fn write;
    void *ctx;
    int fd;
    trc_status err;           /* sticky failure */
    uint64_t bytes_out;

    /* options, defaults applied */
    uint64_t period_ns;
    uint32_t chunk_bytes;
    int64_t flush_interval;
    int level;

    /* the open chunk */
    trcf_buf payload;
    trcf_deflater deflater;
    uint8_t chunk_kind;
    uint64_t seq;
    int has_time;             /* base/tcur set by a time field */
    int64_t base, tcur;
    int has_t0;               /* t0: the first tick that saw the chunk non-empty */
    int64_t t0;

    /* interning */
    trca_arena arena;
    trci_map strings, frames, stacks, threads, counters, processes, devices;
    uint32_t n_strings, n_frames, n_stacks, n_threads, n_counters;
    uint32_t *stack_depth;    /* [n_stacks + 1] */
    size_t stack_depth_cap;
    trcw_thread *thread;      /* [n_threads + 1] */
    size_t thread_cap;
    trcw_process *proc;       /* indexed by the processes map's value */
    uint32_t n_procs;
    size_t proc_cap;
    trcw_device *dev;
    uint32_t n_devs;
    size_t dev_cap;
    trci_map gpu_ctxs, gpu_streams; /* keys (pid, device, context[, stream]) */
    trcw_stream *stream;            /* indexed by gpu_streams' value */
    uint32_t n_streams;
    size_t stream_cap;

    /* threads with a pending run, in the order they first had one since
     * the chunk opened (a thread keeps its place across its runs) */
    uint32_t *pending;
    uint32_t n_pending;
    size_t pending_cap;

    /* SEGMENT_END totals */
    uint64_t n_samples, n_gpu, n_api, lost_samples, lost_gpu;
};

/* ---- lib/writer.c ---- */

/* Make sure a record of up to `need` bytes fits the chunk limit, closing
 * the chunk first if not. */
trc_status trcw_room(trc_writer *w, size_t need);
/* After a record: close the chunk if it reached the size bound. */
trc_status trcw_after(trc_writer *w);
/* Set the chunk's time base before encoding its first time field. */
static inline void trcw_time_base(trc_writer *w, int64_t t)
{
    if (!w->has_time) {
        w->has_time = 1;
        w->base = w->tcur = t;
    }
}
/* Encode a record of a known type into the chunk (room, time base,
 * encode, rollback on failure, then trcw_after).  timed: nonzero if the
 * record has a time field, t being its value (the chunk's time base is
 * set from the first one). */
trc_status trcw_put(trc_writer *w, unsigned type, int timed, int64_t t, const void *body);
/* Close the chunk: flush pending runs, build, write. */
trc_status trcw_close_chunk(trc_writer *w);

/* ---- lib/writer_events.c ---- */

/* Write thread `id`'s pending run (if any) as a SAMPLE record. */
trc_status trcw_emit_run(trc_writer *w, uint32_t id);

/* ---- lib/writer_defs.c ---- */

/* Intern a C string (NULL = "").  Same as trc_writer_string. */
trc_status trcw_cstr(trc_writer *w, const char *s, uint32_t *id);
void trcw_defs_free(trc_writer *w);

#endif /* TRC_LIB_WRITER_INT_H */
