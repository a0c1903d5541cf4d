/*
 * lib/export/nvvp/gpu_summary_sink.c — trc-stats --gpu as a sink
 * (declared in nvvp_sink.h).  A file of its own so that trc-stats links
 * the summary without the SVG timeline, and so without libxml2.
 */
#include "lib/export/nvvp/nvvp_sink.h"

#include <stdio.h>

#include "lib/util/alloc.h"
#include "lib/export/nvvp/gpu_summary.h"
#include "lib/export/common/gpu_idle_report.h"

/* The summary, the share of GPU time with a Python line, from the
 * activities with their launch sites, and the idle headline (docs/gpu.md). */
typedef struct summary_sink {
    gpu_summary *s;
    exp_gpu_callsite_stats lines;
    exp_gpu_idle *idle;
} summary_sink;

static void summary_destroy(void *self)
{
    summary_sink *x = self;
    if (!x)
        return;
    gpu_summary_free(x->s);
    exp_gpu_idle_free(x->idle);
    trc_free(x);
}

static void *summary_create(const void *opts)
{
    summary_sink *x = trc_calloc(1, sizeof *x);
    if (x && (!(x->s = gpu_summary_new()) || !(x->idle = exp_gpu_idle_new(opts)))) {
        summary_destroy(x);
        return NULL;
    }
    return x;
}

static trc_status summary_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    summary_sink *x = self;
    if (gpu_summary_event(x->s, r, ev) != 0)
        return TRC_ERR_NOMEM;
    return exp_gpu_idle_event(x->idle, r, ev);
}

static trc_status summary_hit(void *self, trc_reader *r, const exp_gpu_hit *hit)
{
    exp_gpu_stats_add(&((summary_sink *)self)->lines, hit);
    return TRC_OK;
}

trc_status nvvp_print_share(const exp_gpu_callsite_stats *lines, FILE *out)
{
    char share[EXP_GPU_SHARE_MAX];
    if (!lines->gpu_ns)
        return TRC_OK;
    exp_gpu_share_str(lines, share, sizeof share);
    return fprintf(out, "\n%s\n", share) < 0 ? TRC_ERR_IO : TRC_OK;
}

static trc_status summary_finish(void *self, trc_reader *r, FILE *out)
{
    summary_sink *x = self;
    trc_status st = gpu_summary_print(x->s, out);
    if (st == TRC_OK)
        st = nvvp_print_share(&x->lines, out);
    if (st == TRC_OK)
        st = exp_gpu_idle_finish(x->idle, r);
    return st == TRC_OK ? exp_gpu_idle_report(x->idle, r, out) : st;
}

const exp_sink_type exp_sink_gpu_summary = {"gpu-summary", summary_create, summary_event,
                                            summary_hit, summary_finish, summary_destroy,
                                            NULL};
