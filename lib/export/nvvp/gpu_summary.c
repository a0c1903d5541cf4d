/*
 * lib/export/nvvp/gpu_summary.c — `trc-stats --gpu` (contract in
 * gpu_summary.h; docs/design/outputs.md §5), over lib/export/nvvp/nvvp_summary.
 */
#include "lib/export/nvvp/gpu_summary.h"

#include "lib/util/alloc.h"
#include "lib/export/nvvp/nvvp_summary.h"

struct gpu_summary {
    nvvp_summary *nv;
    trc_reader *r;           /* borrowed, for names at print time */
    uint64_t activities, api_calls;
};

gpu_summary *gpu_summary_new(void)
{
    gpu_summary *s = trc_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (!(s->nv = nvvp_summary_new())) {
        trc_free(s);
        return NULL;
    }
    return s;
}

void gpu_summary_free(gpu_summary *s)
{
    if (!s)
        return;
    nvvp_summary_free(s->nv);
    trc_free(s);
}

int gpu_summary_event(gpu_summary *s, trc_reader *r, const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_GPU_KERNEL:
    case TRC_EV_GPU_MEMCPY:
    case TRC_EV_GPU_MEMSET:
        s->activities++;
        break;
    case TRC_EV_API_CALL:
        s->api_calls++;
        break;
    case TRC_EV_LOSS:
        break;
    default:
        return 0;
    }
    s->r = r;
    return nvvp_summary_add(s->nv, r, ev) == TRC_OK ? 0 : -1;
}

trc_status gpu_summary_print(gpu_summary *s, FILE *out)
{
    nvvp_summary_opts o = { 0 };
    if (!s->activities && !s->api_calls) {
        if (fputs("No GPU activities or API calls recorded.\n", out) == EOF)
            return TRC_ERR_IO;
        return TRC_OK;
    }
    return nvvp_summary_write(s->nv, s->r, &o, out);
}

uint64_t gpu_summary_activities(const gpu_summary *s)
{
    return s->activities;
}

uint64_t gpu_summary_api_calls(const gpu_summary *s)
{
    return s->api_calls;
}
