/*
 * lib/export/nvvp/gpu_summary_sink.c — trc-stats --gpu as a sink
 * (declared in nvvp_sink.h).  A file of its own so that trc-stats links
 * the summary without the SVG timeline, and so without libxml2.
 */
#include "lib/export/nvvp/nvvp_sink.h"

#include "lib/export/nvvp/gpu_summary.h"

static void *summary_create(const void *opts) { return gpu_summary_new(); }
static void summary_destroy(void *self) { gpu_summary_free(self); }

static trc_status summary_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    return gpu_summary_event(self, r, ev) == 0 ? TRC_OK : TRC_ERR_NOMEM;
}

static trc_status summary_finish(void *self, trc_reader *r, FILE *out)
{
    return gpu_summary_print(self, out);
}

const exp_sink_type exp_sink_gpu_summary = {"gpu-summary", summary_create, summary_event, NULL,
                                            summary_finish, summary_destroy, NULL};
