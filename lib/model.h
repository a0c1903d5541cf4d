/*
 * lib/model.h — the reader's merged trace model (spec/DESIGN-NOTES.md
 * "Interned ids"; public view in include/trc/trc.h "The trace model").
 *
 * Holds every distinct definition the reader has met, under dense
 * reader-global ids, deduplicated by content across segments: strings by
 * bytes, frames by (kind, function, file, line, first_line), stacks by
 * (parent, frame), threads by (pid, tid), processes by pid, counters by
 * (name, unit, pid, device), GPU devices by device number, GPU contexts
 * and streams by their (pid, device, context[, stream]) key.  Segment-local
 * ids are mapped onto these by the reader (lib/reader_rec.c).
 *
 * Memory grows with distinct definitions only, never with events.  All
 * structs and strings live in an arena, so the pointers handed out stay
 * valid until trcm_cleanup (the reader's lifetime); a changed thread
 * name, process or device is updated in place.
 *
 * Every function returns TRC_OK or TRC_ERR_NOMEM (and TRC_ERR_LIMIT for
 * trcm_stack over TRC_MAX_DEPTH); on failure the model is unchanged.
 * Arguments that are global ids must be valid (the caller checks).
 */
#ifndef TRC_LIB_MODEL_H
#define TRC_LIB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "lib/util/arena.h"
#include "lib/util/intern.h"

typedef struct trcm_model {
    trca_arena arena;
    trci_map str_map, frame_map, stack_map, thread_map, proc_map, counter_map, dev_map;
    trci_map ctx_map, stream_map;
    const char **strs;        /* [n_strs]; strs[0] = "" */
    trc_frame **frames;       /* [n_frames + 1]; slot 0 unused */
    trc_stack **stacks;       /* [n_stacks + 1]; stacks[0] = the empty stack */
    trc_thread **threads;     /* [n_threads + 1] */
    trc_process **procs;      /* [n_procs] */
    trc_counter_def **counters; /* [n_counters + 1] */
    trc_gpu_device **devs;    /* [n_devs] */
    trc_gpu_context **ctxs;   /* [n_ctxs] */
    trc_gpu_stream **streams; /* [n_streams] */
    uint32_t n_ctxs, n_streams;
    size_t ctxs_cap, streams_cap;
    uint32_t n_strs, n_frames, n_stacks, n_threads, n_procs, n_counters, n_devs;
    size_t strs_cap, frames_cap, stacks_cap, threads_cap, procs_cap, counters_cap, devs_cap;
    trc_stack empty_stack;
} trcm_model;

/* Zero the struct, then trcm_init.  Cannot fail. */
void trcm_init(trcm_model *m);
void trcm_cleanup(trcm_model *m);

trc_status trcm_string(trcm_model *m, const char *s, size_t len, uint32_t *gid);
trc_status trcm_frame(trcm_model *m, trc_frame_kind kind, uint32_t function, uint32_t file,
                      uint32_t line, uint32_t first_line, uint32_t *gid);
trc_status trcm_stack(trcm_model *m, uint32_t parent, uint32_t frame, uint32_t *gid);

/* *changed = 1 when the thread is new or its name changed (a later
 * definition replaces the name, [R-ID-7]). */
trc_status trcm_thread(trcm_model *m, int64_t pid, int64_t tid, uint32_t name, uint32_t *gid,
                       int *changed);

/* p's strings must be model strings (from trcm_string); p->id ignored.
 * *out = the stored process; *changed = 1 when new or different. */
trc_status trcm_process(trcm_model *m, const trc_process *p, const trc_process **out, int *changed);

/* *is_new = 1 the first time this (name, unit, pid, device) is seen. */
trc_status trcm_counter(trcm_model *m, uint32_t name, uint32_t unit, int64_t pid, int32_t device,
                        uint32_t *gid, int *is_new);

/* d->name must be a model string.  *changed = 1 when new or different. */
trc_status trcm_device(trcm_model *m, const trc_gpu_device *d, const trc_gpu_device **out,
                       int *changed);

/* Contexts by (pid, device, context), streams by (pid, device,
 * context, stream) (spec §7.21, §7.22).  s->name must be a model string.
 * *changed = 1 when new or (streams) different. */
trc_status trcm_context(trcm_model *m, const trc_gpu_context *c, const trc_gpu_context **out,
                        int *changed);
trc_status trcm_stream(trcm_model *m, const trc_gpu_stream *s, const trc_gpu_stream **out,
                       int *changed);

const trc_process *trcm_process_by_pid(const trcm_model *m, int64_t pid);
const trc_gpu_device *trcm_device_by_number(const trcm_model *m, uint32_t device);

#endif /* TRC_LIB_MODEL_H */
