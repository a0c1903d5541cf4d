/*
 * lib/export/nvvp/nvvp_sink.c — the GPU views as sinks (contract in
 * nvvp_sink.h): the summary keeps a row per name, the tables and the
 * timeline keep every record (nvvp_data.h) until the end of input.
 */
#include "lib/export/nvvp/nvvp_sink.h"

#include "lib/util/alloc.h"
#include "lib/export/common/gpu_idle_report.h"
#include "lib/export/nvvp/nvvp_data.h"
#include "lib/export/nvvp/nvvp_summary.h"
#include "lib/export/nvvp/nvvp_svg.h"
#include "lib/export/nvvp/nvvp_trace.h"

typedef struct nvvp_sink {
    nvvp_sink_options o;
    nvvp_data *data;        /* the tables and the timeline */
    nvvp_summary *summary;  /* the default view */
    exp_gpu_callsite_stats lines; /* its share of GPU time with a Python line */
    exp_gpu_idle *idle;     /* its idle headline (not in CSV), or the
                             * timeline's busy rows (svg with idle.bucket_ns) */
} nvvp_sink;

static void destroy(void *self)
{
    nvvp_sink *x = self;
    if (!x)
        return;
    nvvp_data_free(x->data);
    nvvp_summary_free(x->summary);
    exp_gpu_idle_free(x->idle);
    trc_free(x);
}

static void *create(const void *opts)
{
    nvvp_sink *x = trc_calloc(1, sizeof *x);
    if (!x)
        return NULL;
    if (opts)
        x->o = *(const nvvp_sink_options *)opts;
    if (x->o.gpu_trace || x->o.api_trace || x->o.svg) {
        unsigned want = x->o.svg ? NVVP_WANT_ALL
                                 : (x->o.gpu_trace ? NVVP_WANT_GPU : 0) |
                                       (x->o.api_trace ? NVVP_WANT_API : 0);
        x->data = nvvp_data_new(want);
        if (x->data && x->o.svg && x->o.idle.bucket_ns > 0 &&
            !(x->idle = exp_gpu_idle_new(&x->o.idle))) {
            destroy(x);
            return NULL;
        }
    } else {
        x->summary = nvvp_summary_new();
        if (x->summary && !x->o.csv && !(x->idle = exp_gpu_idle_new(&x->o.idle))) {
            destroy(x);
            return NULL;
        }
    }
    if (!x->data && !x->summary) {
        destroy(x);
        return NULL;
    }
    return x;
}

static trc_status event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    nvvp_sink *x = self;
    if (x->data) {
        trc_status st = nvvp_data_add(x->data, r, ev);
        /* the busy rows need the device's work and NVML's gpu.util, no
         * samples: nothing is charged */
        if (st == TRC_OK && x->idle && ev->type != TRC_EV_SAMPLE)
            st = exp_gpu_idle_event(x->idle, r, ev);
        return st;
    }
    trc_status st = nvvp_summary_add(x->summary, r, ev);
    return st == TRC_OK && x->idle ? exp_gpu_idle_event(x->idle, r, ev) : st;
}

static trc_status hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    exp_gpu_stats_add(&((nvvp_sink *)self)->lines, h);
    return TRC_OK;
}

static trc_status finish(void *self, trc_reader *r, FILE *out)
{
    nvvp_sink *x = self;
    const nvvp_sink_options *o = &x->o;
    if (x->summary) {
        nvvp_summary_opts so = {o->csv, o->sort, o->limit};
        trc_status st = nvvp_summary_write(x->summary, r, &so, out);
        /* not in CSV: the file stays one table */
        if (st == TRC_OK && !o->csv)
            st = nvvp_print_share(&x->lines, out);
        if (st == TRC_OK && x->idle)
            st = exp_gpu_idle_finish(x->idle, r);
        return st == TRC_OK && x->idle ? exp_gpu_idle_report(x->idle, r, out) : st;
    }
    trc_status st = nvvp_data_finish(x->data);
    if (st == TRC_OK && x->idle)
        st = exp_gpu_idle_finish(x->idle, r);
    if (st == TRC_OK && o->svg) {
        nvvp_svg_opts vo = {o->width, o->from_ns, o->to_ns, NULL, x->idle, o->idle.bucket_ns};
        st = nvvp_svg_write(x->data, r, &vo, out);
    } else if (st == TRC_OK) {
        nvvp_table_opts to = {o->csv, x->data->trace_start};
        if (o->gpu_trace)
            st = nvvp_gpu_trace_write(x->data, r, &to, out);
        if (st == TRC_OK && o->gpu_trace && o->api_trace)
            fputc('\n', out);
        if (st == TRC_OK && o->api_trace)
            st = nvvp_api_trace_write(x->data, r, &to, out);
    }
    return st;
}

const exp_sink_type exp_sink_nvvp = {"nvvp", create, event, hit, finish, destroy, NULL};
