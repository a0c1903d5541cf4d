/*
 * lib/export/pipeline/pipeline.c — reader → losses → selection →
 * (call sites) → sink (contract in pipeline.h).
 */
#include "lib/export/pipeline/pipeline.h"

#include <string.h>

typedef struct pipe {
    conv_filter *f;
    exp_sink *sink;
} pipe;

static int is_definition(trc_event_type t)
{
    return t == TRC_EV_SEGMENT || t == TRC_EV_PROCESS || t == TRC_EV_THREAD ||
           t == TRC_EV_GPU_DEVICE || t == TRC_EV_COUNTER_DEF || t == TRC_EV_CLOCK_SYNC ||
           t == TRC_EV_GPU_CONTEXT || t == TRC_EV_GPU_STREAM;
}

/* An activity with its launch site: with --thread, it is the launching
 * thread that must be selected. */
static trc_status on_hit(void *ctx, trc_reader *r, const exp_gpu_hit *hit)
{
    pipe *p = ctx;
    if (p->f && p->f->n_threads && (!hit->thread || !conv_filter_thread(p->f, r, hit->thread)))
        return TRC_OK;
    return exp_sink_gpu_hit(p->sink, r, hit);
}

/* One event into the call-site stage: launch calls, segment starts and
 * samples (for the waiting-thread rule) whatever the selection says,
 * activities only when selected. */
static trc_status to_sites(exp_gpu_callsite *sites, trc_reader *r, const trc_event *ev,
                           const trc_event *kept)
{
    if (ev->type == TRC_EV_API_CALL || ev->type == TRC_EV_SEGMENT || ev->type == TRC_EV_SAMPLE)
        return exp_gpu_callsite_event(sites, r, ev);
    return kept ? exp_gpu_callsite_event(sites, r, kept) : TRC_OK;
}

/* Why reading stopped early, for the loss summary: the reader's message
 * without the input's name (the warning names the input already). */
static void note_stop(conv_losses *losses, trc_reader *r, const char *name, trc_status st)
{
    const char *msg = trc_reader_error(r);
    size_t nl = strlen(name);
    losses->stopped = st;
    if (msg && strncmp(msg, name, nl) == 0 && strncmp(msg + nl, ": ", 2) == 0)
        msg += nl + 2;
    snprintf(losses->stop_message, sizeof losses->stop_message, "%s",
             msg && *msg ? msg : trc_status_str(st));
}

void conv_pipe_run(trc_reader *r, const char *name, conv_filter *f, exp_sink *sink,
                   uint64_t sites_window, FILE *out, conv_losses *losses, conv_pipe_result *res)
{
    pipe p = {f, sink};
    exp_gpu_callsite *sites = NULL;
    uint64_t data_events = 0;
    const trc_event *ev;
    trc_event scratch;
    trc_status st;

    memset(res, 0, sizeof *res);
    conv_losses_reset(losses);
    if (exp_sink_takes_gpu_hits(sink) && !(sites = exp_gpu_callsite_new(sites_window, on_hit, &p))) {
        res->end = CONV_PIPE_SINK_FAILED;
        res->status = TRC_ERR_NOMEM;
        return;
    }
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        conv_losses_event(losses, ev);
        if (ev->type != TRC_EV_LOSS && !is_definition(ev->type))
            data_events++;
        const trc_event *kept = f ? conv_filter_event(f, r, ev, &scratch) : ev;
        /* A sink may take both: the events it has a handler for, and
         * the activities with their launch sites (exp_sink_event is a
         * no-op for a type without one). */
        trc_status sst = sites ? to_sites(sites, r, ev, kept) : TRC_OK;
        if (sst == TRC_OK && kept)
            sst = exp_sink_event(sink, r, kept, out);
        if (sst != TRC_OK) {
            res->end = CONV_PIPE_SINK_FAILED;
            res->status = sst;
            goto out;
        }
    }
    res->status = st;
    if (st != TRC_ERR_EOF) {
        /* Nothing usable read, or out of memory: the input is unusable.
         * Otherwise what was read stands, and the stop is a loss. */
        if (st == TRC_ERR_NOMEM || (data_events == 0 && losses->events == 0)) {
            res->end = CONV_PIPE_UNUSABLE;
            goto out;
        }
        note_stop(losses, r, name, st);
    }
    conv_losses_end(losses);
    if (f && conv_filter_unmatched(f, r, res->why, sizeof res->why)) {
        res->end = CONV_PIPE_UNMATCHED; /* nothing to write */
        goto out;
    }
    st = sites ? exp_gpu_callsite_finish(sites) : TRC_OK;
    if (st == TRC_OK)
        st = exp_sink_finish(sink, r, out);
    if (st != TRC_OK) {
        res->end = CONV_PIPE_SINK_FAILED;
        res->status = st;
    }
out:
    exp_gpu_callsite_free(sites);
}
