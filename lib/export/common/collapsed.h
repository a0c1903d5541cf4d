/*
 * lib/export/common/collapsed.h — folded ("collapsed") stacks, the
 * aggregation behind trc2collapsed (lib/export/folded/) and
 * trc2flamegraph (lib/export/flamegraph/): one count per distinct
 * rendered stack "root;...;leaf".  Internal API (not installed), prefix
 * exp_.  Strings are borrowed from the reader, so an aggregator must not
 * outlive its reader, and the reader passed to every call must be the
 * same one.
 */
#ifndef TRC_LIB_EXPORT_COMMON_COLLAPSED_H
#define TRC_LIB_EXPORT_COMMON_COLLAPSED_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/common/gpu_callsite.h"
#include "lib/export/common/gpu_idle.h"
#include "lib/export/common/gpu_sync.h"

/* The name given to samples that have no Python frames (stack id 0). */
#define EXP_NO_PYTHON_FRAMES "<no Python frames>"

typedef struct exp_collapsed_options {
    int threads;         /* a "NAME (tid N)" root frame per thread */
    int pids;            /* a "EXE (pid N)" root frame per process */
    int no_lines;        /* "function (file)": no line numbers */
    int full_filenames;  /* else shortened (site-packages/..., stdlib relative) */
    int weight_us;       /* count = microseconds of sampled time, else samples */
} exp_collapsed_options;

typedef struct exp_collapsed exp_collapsed;

/* New empty aggregator (opts copied; NULL = defaults).  NULL when out of
 * memory.  Free with exp_collapsed_free. */
exp_collapsed *exp_collapsed_new(const exp_collapsed_options *opts);
void exp_collapsed_free(exp_collapsed *c);

/* Count one (possibly folded) sample.  TRC_OK or TRC_ERR_NOMEM. */
trc_status exp_collapsed_add(exp_collapsed *c, const trc_reader *r, const trc_sample *s);

/* Count one GPU activity (--gpu): the line is the launching stack (or
 * EXP_GPU_NO_PYTHON_ROOT / EXP_GPU_UNKNOWN_ROOT) plus a leaf frame for
 * h->name; for a hit charged via a waiting thread, the waiting thread's
 * stack, a frame "[via thread TID NAME]" naming the launcher, the leaf; it counts 1 (weight samples) or h->dur_ns.  --threads roots
 * use the launching thread ("<unknown thread>" when unknown), --pids the
 * activity's process.  h->name is borrowed until exp_collapsed_write.
 * TRC_OK, TRC_ERR_NOMEM or TRC_ERR_LIMIT. */
trc_status exp_collapsed_add_gpu(exp_collapsed *c, const trc_reader *r, const exp_gpu_hit *h);

/* Count one blocking call (--syncs, lib/export/common/gpu_sync.h): the
 * line is the calling stack (or EXP_GPU_NO_PYTHON_ROOT) plus a leaf for
 * the API name; it counts 1 (weight samples) or h->blocked_ns.  The one
 * place every folded view (trc2collapsed, trc2flamegraph) turns syncs
 * into lines.  h->name is borrowed until exp_collapsed_write.  TRC_OK,
 * TRC_ERR_NOMEM or TRC_ERR_LIMIT. */
trc_status exp_collapsed_add_sync(exp_collapsed *c, const trc_reader *r, const exp_sync_hit *h);

/* Count every charge of a finished idle stage (--gpu-idle,
 * lib/export/common/gpu_idle.h): the line is a root frame naming the
 * device and kind ("[GPU 0 idle]", "[GPU 0 copies only]"), the --pids
 * and --threads roots of the charged thread, then its sampled stack; it
 * counts the charged ns (write it with weight_us) and 1 per charge.  The
 * one place every folded view (trc2collapsed, trc2flamegraph) turns
 * idle charges into lines.  TRC_OK, TRC_ERR_NOMEM or TRC_ERR_LIMIT. */
trc_status exp_collapsed_add_gpu_idle(exp_collapsed *c, const exp_gpu_idle *g);

/* Write one line per distinct folded stack, sorted bytewise, equal
 * stacks merged, lines whose count rounds to 0 left out.  With weight_us
 * the counts are whole microseconds apportioned by largest remainder:
 * they sum exactly to the total time rounded to the nearest microsecond,
 * and each differs from its line's own time by less than 1 us.  TRC_OK,
 * TRC_ERR_NOMEM or TRC_ERR_IO (write failed; errno kept). */
trc_status exp_collapsed_write(exp_collapsed *c, const trc_reader *r, FILE *out);

/* One line of exp_collapsed_each: the stack as exp_collapsed_write
 * writes it ("root;...;leaf", names escaped as below), its value (what
 * write prints), and the samples (or activities) and sampled ns merged
 * into it.  Returns TRC_OK to go on; any other status stops the walk and
 * is returned. */
typedef trc_status (*exp_collapsed_line_fn)(void *ctx, const char *stack, uint64_t value,
                                            uint64_t count, uint64_t ns);

/* The lines exp_collapsed_write would write, in its order, handed to fn
 * instead.  TRC_OK, TRC_ERR_NOMEM or fn's status. */
trc_status exp_collapsed_each(exp_collapsed *c, const trc_reader *r, exp_collapsed_line_fn fn,
                              void *ctx);

/* Samples (and GPU activities) counted so far (sum of counts). */
uint64_t exp_collapsed_samples(const exp_collapsed *c);

/* Frame names are written with the characters the folded format cannot
 * carry escaped: ';' -> "%3B", control characters -> "%XX", '%' ->
 * "%25", and spaces that would break the one-space grammar (leading,
 * trailing, or doubled) -> "%20"; an empty name becomes "<unknown>".
 * Files are shortened by default (lib/export/common/short_path.h). */

#endif /* TRC_LIB_EXPORT_COMMON_COLLAPSED_H */
