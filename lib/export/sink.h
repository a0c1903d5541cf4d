/*
 * lib/export/sink.h — the one interface of a converter's output side
 * (docs/design/architecture.md §1).  A sink is a type (a
 * table of functions, one per exporter and mode, e.g. exp_sink_chrome)
 * and an instance made from it with that type's own options:
 *
 *   exp_sink_new(type, opts)        make one (NULL when out of memory);
 *   exp_sink_event(s, r, ev, out)   every selected event, in file order;
 *   exp_sink_gpu_hit(s, r, hit)     for the types that charge GPU time
 *                                   to call sites: every selected
 *                                   activity with its launch site
 *                                   (lib/export/common/gpu_callsite.h);
 *                                   a type may take events as well
 *                                   (trc-lines, trc-top: samples and GPU time);
 *   exp_sink_finish(s, r, out)      write whatever remains;
 *   exp_sink_free(s).
 *
 * Failure: event, gpu_hit and finish return a status other than TRC_OK;
 * exp_sink_error then gives the sink's one-line message, or "" when the
 * status says it all (TRC_ERR_NOMEM, or TRC_ERR_IO: the caller names
 * the output that could not be written).  After a failure only
 * exp_sink_free may be called.  Strings are borrowed from the reader: an
 * instance must be finished before trc_reader_free, and fed from one
 * reader only.  Internal API, prefix exp_sink_.
 */
#ifndef TRC_LIB_EXPORT_SINK_H
#define TRC_LIB_EXPORT_SINK_H

#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/common/gpu_callsite.h"

typedef struct exp_sink_type {
    const char *name;
    /* A new instance; opts points at the type's options (NULL = defaults). */
    void *(*create)(const void *opts);
    /* NULL for the types that take only GPU hits. */
    trc_status (*event)(void *self, trc_reader *r, const trc_event *ev, FILE *out);
    /* NULL for the types that take events. */
    trc_status (*gpu_hit)(void *self, trc_reader *r, const exp_gpu_hit *hit);
    trc_status (*finish)(void *self, trc_reader *r, FILE *out);
    void (*destroy)(void *self);
    /* The message of the last failure, "" for none; NULL when the type
     * never has more to say than its status. */
    const char *(*error)(const void *self);
} exp_sink_type;

typedef struct exp_sink exp_sink;

/* An instance of t with opts.  NULL when out of memory. */
exp_sink *exp_sink_new(const exp_sink_type *t, const void *opts);
void exp_sink_free(exp_sink *s);

/* 1 when s takes GPU activities with their launch sites
 * (exp_sink_gpu_hit), with or without events.  Cannot fail. */
int exp_sink_takes_gpu_hits(const exp_sink *s);

trc_status exp_sink_event(exp_sink *s, trc_reader *r, const trc_event *ev, FILE *out);
trc_status exp_sink_gpu_hit(exp_sink *s, trc_reader *r, const exp_gpu_hit *hit);
trc_status exp_sink_finish(exp_sink *s, trc_reader *r, FILE *out);

/* The sink's message about its last failure, "" when it has none.
 * Borrowed until the next call on s. */
const char *exp_sink_error(const exp_sink *s);

#endif /* TRC_LIB_EXPORT_SINK_H */
