/*
 * lib/export/chrome/chrome_gpu_syncs.c — Chrome exporter, GPU half: an
 * arrow from the last GPU work each blocking sync waited for (the sync
 * stage, lib/export/common/gpu_sync.h) to the sync's slice on its
 * thread's "CUDA API" track (docs/gpu.md, "Where does my code wait for
 * the GPU?").
 *
 * v1 flows ("s" then "f" with "bp":"e"), not the v2 bind_id of launches:
 * the activity's slice may already carry the bind_id of its launch, and a
 * slice has one.  A v1 flow binds by time to the slice enclosing its
 * timestamp on that track, so the arrow leaves the activity's slice at its
 * middle and reaches the sync's slice 1 ns before its end (where the wait
 * ended, never before the activity: Perfetto draws flows forward in
 * time), each on its track's first lane (a slice moved to an extra lane loses its
 * arrow, never gets a wrong one: nothing else is open there then).  They
 * are written at the end, when every track has its lanes; memory follows
 * the number of syncs with a last work.
 */
#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/chrome/chrome_gpu_int.h"

/* Flow ids of their own, far from the launches' bind_ids (counted from 1). */
#define SYNC_FLOW_ID0 (UINT64_C(1) << 40)

static trc_status keep(void *ctx, const trc_reader *r, const exp_sync_hit *h)
{
    chr_gpu *g = ctx;
    if (!h->has_last)
        return TRC_OK;
    trc_status st = trcu_grow((void **)&g->sync_flows, &g->cap_sync_flows, g->n_sync_flows,
                              sizeof *g->sync_flows);
    if (st != TRC_OK)
        return st;
    g->sync_flows[g->n_sync_flows++] = (chg_sync_flow){
        h->pid, h->thread, h->end_ns > h->start_ns ? h->end_ns - 1 : h->start_ns,
        h->last_start_ns + (h->last_end_ns - h->last_start_ns) / 2, h->last_where};
    return TRC_OK;
}

trc_status chg_sync_event(chrome *c, const trc_reader *r, const trc_event *ev)
{
    chr_gpu *g = c->gpu;
    if (g->sync_st != TRC_OK)
        return g->sync_st;
    if (!g->syncs && !(g->syncs = exp_sync_new(keep, g)))
        return g->sync_st = TRC_ERR_NOMEM;
    return g->sync_st = exp_sync_event(g->syncs, r, ev);
}

/* One end of a flow on track ti's first lane; 0 when it has none. */
static int flow_end(chrome *c, int64_t ti, const char *ph, uint64_t id, int64_t at)
{
    chr_gpu *g = c->gpu;
    jsonw *w = &c->w;
    if (ti < 0 || !g->tracks[ti].n_lanes)
        return 0;
    chr_next_event(c);
    jsonw_raw(w, "{\"ph\":\"");
    jsonw_raw(w, ph);
    jsonw_raw(w, "\",\"name\":\"waited for\",\"cat\":\"sync\",\"id\":");
    jsonw_u64(w, id);
    if (ph[0] == 'f')
        jsonw_raw(w, ",\"bp\":\"e\"");
    chg_write_i64_arg(w, ",\"pid\":", g->tracks[ti].pid);
    chg_write_i64_arg(w, ",\"tid\":", g->tracks[ti].lanes[0].tid);
    jsonw_putc(w, ',');
    chr_write_ts(c, at);
    jsonw_putc(w, '}');
    return 1;
}

trc_status chg_sync_flows(chrome *c, const trc_reader *r)
{
    chr_gpu *g = c->gpu;
    if (!g->syncs)
        return TRC_OK;
    if (g->sync_st == TRC_OK)
        g->sync_st = exp_sync_finish(g->syncs, r);
    if (g->sync_st != TRC_OK)
        return g->sync_st;
    for (size_t i = 0; i < g->n_sync_flows; i++) {
        const chg_sync_flow *f = &g->sync_flows[i];
        int64_t from = chg_get_track(c, TK_STREAM, f->where.pid, f->where.device,
                                     f->where.context, f->where.stream, 0);
        int64_t to = chg_get_track(c, TK_API, f->pid, 0, 0, 0, f->thread);
        if (from < 0 || to < 0)
            return TRC_ERR_NOMEM;
        /* both ends or none: a lone end draws nothing useful */
        if (!g->tracks[from].n_lanes || !g->tracks[to].n_lanes)
            continue;
        flow_end(c, from, "s", SYNC_FLOW_ID0 + i, f->from);
        flow_end(c, to, "f", SYNC_FLOW_ID0 + i, f->at);
    }
    g->n_sync_flows = 0;
    return TRC_OK;
}

void chg_sync_free(chr_gpu *g)
{
    exp_sync_free(g->syncs);
    trc_free(g->sync_flows);
}
