/*
 * lib/export/common/cpuview.h — the view of CPU samples shared by the flame-style
 * exporters (speedscope, Chrome trace): frames as the user sees them and
 * a prefix tree of stacks over those frames.
 *
 * A reader frame carries the line executing in it, so one function gives
 * one reader frame per line.  A flame graph wants one box per function, so
 * by default a view frame is keyed by (kind, function, file, def line) and
 * its shown line is the def line; with `lines` the executing line is part
 * of the key too (one box per line, like py-spy --lines).  View stacks are
 * the reader's stacks re-interned over view frames, so two reader stacks
 * that differ only in lines become one view stack.
 *
 * Memory is proportional to distinct frames and stacks, never to samples.
 * Strings are borrowed from the reader: a cpuview must not outlive it.
 */
#ifndef TRC_LIB_EXPORT_CPUVIEW_H
#define TRC_LIB_EXPORT_CPUVIEW_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"

typedef struct cpuview_frame {
    const char *function; /* never NULL; "" replaced by "<unknown>" */
    const char *file;     /* "" when unknown */
    uint32_t line;        /* def line, or executing line in lines mode; 0 = unknown */
    trc_frame_kind kind;
    uint32_t look;        /* index of the first frame with the same function,
                           * file and line: frames a viewer cannot tell apart */
} cpuview_frame;

/* One view stack: parent < its id, frame index, depth (see below). */
typedef struct cpuview_stack {
    uint32_t parent, frame, depth;
} cpuview_stack;

struct jsonw;

typedef struct cpuview cpuview;

/* New empty view; lines != 0 keys frames by executing line as well.
 * Returns NULL when out of memory.  Free with cpuview_free. */
cpuview *cpuview_new(int lines);
void cpuview_free(cpuview *v);

/* The view stack for reader stack `stack` (0 = empty stack -> 0).  Stacks
 * or frames the reader does not know become a "<unknown>" frame rather
 * than an error.  Returns TRC_OK or TRC_ERR_NOMEM. */
trc_status cpuview_map_stack(cpuview *v, const trc_reader *r, uint32_t stack, uint32_t *out);

/* The frame shown for samples without Python frames (reader stack 0),
 * the same text trc2collapsed uses. */
#define CPUVIEW_NO_PYTHON_FRAMES "<no Python frames>"

/* Like cpuview_map_stack, but the empty stack becomes a one-frame stack
 * CPUVIEW_NO_PYTHON_FRAMES (kind OTHER), so that time stays visible. */
trc_status cpuview_sample_stack(cpuview *v, const trc_reader *r, uint32_t stack, uint32_t *out);

/* A frame of no reader stack (GPU kernels, copies): interned like the
 * others; *index gets its index.  Strings are borrowed.  Returns TRC_OK or
 * TRC_ERR_NOMEM. */
trc_status cpuview_intern_frame(cpuview *v, trc_frame_kind kind, const char *function,
                                const char *file, uint32_t line, uint32_t *index);

/* The stack table, indexed by view stack id (0 = the empty stack), for
 * loops that walk stacks per sample.  Borrowed: valid until the next call
 * that maps or interns.  Cannot fail. */
const cpuview_stack *cpuview_stacks(const cpuview *v);

/* View stack tree: ids 1..n (0 = empty); parent < id; frame is an index
 * into the frame table (0-based); depth = number of frames.  Unknown ids
 * give 0.  Cannot fail. */
uint32_t cpuview_stack_parent(const cpuview *v, uint32_t id);
uint32_t cpuview_stack_frame(const cpuview *v, uint32_t id);
uint32_t cpuview_stack_depth(const cpuview *v, uint32_t id);
uint32_t cpuview_stack_count(const cpuview *v); /* n: ids run 1..n */

/* Frame table in order of first use.  Borrowed; NULL past the end. */
const cpuview_frame *cpuview_frame_at(const cpuview *v, uint32_t index);
uint32_t cpuview_frame_count(const cpuview *v);

/* "<category>" word for a frame kind: "python", "native", "gpu", "other". */
const char *cpuview_kind_name(trc_frame_kind kind);

/* Write, JSON-escaped and without quotes, the name users know a process
 * by (lib/procname.h: "train.py rank 3"); with_id appends " (pid N)".
 * p may be NULL. */
void cpuview_write_process_label(struct jsonw *w, const trc_process *p, int64_t pid, int with_id);

/* Same for a thread: its name, "<unnamed>" when empty or t is NULL;
 * with_id appends " (tid N)". */
void cpuview_write_thread_label(struct jsonw *w, const trc_thread *t, int64_t tid, int with_id);

#endif /* TRC_LIB_EXPORT_CPUVIEW_H */
