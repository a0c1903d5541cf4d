/*
 * lib/export/lines/lines_sink.c — trc-lines as a sink (lib/export/sink.h):
 * it takes the samples as events and the GPU activities with their
 * launch sites, both, and writes the report at the end.
 */
#include "lib/export/lines/lines.h"

#include "lib/export/common/gpu_sync.h"
#include "lib/util/alloc.h"

typedef struct lines_sink {
    lines_agg *agg;
    exp_gpu_sync *syncs;   /* the blocking syncs: a "Sync ms" column */
    lines_opts opts;
} lines_sink;

static trc_status on_sync(void *ctx, const trc_reader *r, const exp_sync_hit *h)
{
    lines_sink *s = ctx;
    return lines_agg_sync(s->agg, h->stack, h->blocked_ns);
}

static void lines_destroy(void *self)
{
    lines_sink *s = self;
    if (!s)
        return;
    exp_sync_free(s->syncs);
    lines_agg_free(s->agg);
    trc_free(s);
}

static void *lines_create(const void *opts)
{
    lines_sink *s = trc_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (opts)
        s->opts = *(const lines_opts *)opts;
    if (!(s->agg = lines_agg_new()) || !(s->syncs = exp_sync_new(on_sync, s))) {
        lines_destroy(s);
        return NULL;
    }
    return s;
}

static trc_status lines_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    lines_sink *s = self;
    if (ev->type == TRC_EV_SAMPLE)
        return lines_agg_sample(s->agg, &ev->u.sample);
    return exp_sync_event(s->syncs, r, ev);
}

static trc_status lines_hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    lines_sink *s = self;
    return lines_agg_gpu(s->agg, h);
}

static trc_status lines_finish(void *self, trc_reader *r, FILE *out)
{
    lines_sink *s = self;
    trc_status st = exp_sync_finish(s->syncs, r);
    if (st == TRC_OK)
        st = lines_agg_finish(s->agg, r);
    if (st != TRC_OK)
        return st;
    return s->opts.json ? lines_write_json(s->agg, &s->opts, out)
                        : lines_write_text(s->agg, &s->opts, out);
}

const exp_sink_type exp_sink_lines = {"lines", lines_create, lines_event, lines_hit,
                                      lines_finish, lines_destroy, NULL};
