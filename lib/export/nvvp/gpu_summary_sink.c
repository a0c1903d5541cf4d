/*
 * lib/export/nvvp/gpu_summary_sink.c — trc-stats --gpu as a sink
 * (declared in nvvp_sink.h).  A file of its own so that trc-stats links
 * the summary without the SVG timeline, and so without libxml2.
 */
#include "lib/export/nvvp/nvvp_sink.h"

#include "lib/export/nvvp/gpu_summary.h"
#include "lib/util/alloc.h"
#include "lib/export/common/gpu_idle_report.h"

typedef struct summary_sink {
    gpu_summary *summary;
    exp_gpu_idle *idle;      /* the idle headline after the summary */
} summary_sink;

static void summary_destroy(void *self)
{
    summary_sink *s = self;
    if (!s)
        return;
    gpu_summary_free(s->summary);
    exp_gpu_idle_free(s->idle);
    trc_free(s);
}

static void *summary_create(const void *opts)
{
    summary_sink *s = trc_calloc(1, sizeof *s);
    if (s && (!(s->summary = gpu_summary_new()) || !(s->idle = exp_gpu_idle_new(opts)))) {
        summary_destroy(s);
        return NULL;
    }
    return s;
}

static trc_status summary_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    summary_sink *s = self;
    if (gpu_summary_event(s->summary, r, ev) != 0)
        return TRC_ERR_NOMEM;
    return exp_gpu_idle_event(s->idle, r, ev);
}

static trc_status summary_finish(void *self, trc_reader *r, FILE *out)
{
    summary_sink *s = self;
    trc_status st = gpu_summary_print(s->summary, out);
    if (st == TRC_OK)
        st = exp_gpu_idle_finish(s->idle, r);
    return st == TRC_OK ? exp_gpu_idle_report(s->idle, r, out) : st;
}

const exp_sink_type exp_sink_gpu_summary = {"gpu-summary", summary_create, summary_event, NULL,
                                            summary_finish, summary_destroy, NULL};
