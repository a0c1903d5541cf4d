/*
 * lib/export/folded/folded_sink.c — the aggregating exporters as sinks
 * (lib/export/sink.h; contract in folded.h): folded stacks and the pstats
 * file, each over samples or, in its _gpu type, over GPU activities
 * charged to their launch sites.
 */
#include "lib/export/folded/folded.h"

#include <stdio.h>

#include "lib/util/alloc.h"

/* ---- folded stacks ---- */

static void *collapsed_create(const void *opts) { return exp_collapsed_new(opts); }
static void collapsed_destroy(void *self) { exp_collapsed_free(self); }

static trc_status collapsed_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    return ev->type == TRC_EV_SAMPLE ? exp_collapsed_add(self, r, &ev->u.sample) : TRC_OK;
}

static trc_status collapsed_hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    return exp_collapsed_add_gpu(self, r, h);
}

static trc_status collapsed_finish(void *self, trc_reader *r, FILE *out)
{
    return exp_collapsed_write(self, r, out);
}

const exp_sink_type exp_sink_collapsed = {"collapsed", collapsed_create, collapsed_event, NULL,
                                          collapsed_finish, collapsed_destroy, NULL};
const exp_sink_type exp_sink_collapsed_gpu = {"collapsed-gpu", collapsed_create, NULL,
                                              collapsed_hit, collapsed_finish,
                                              collapsed_destroy, NULL};

/* ---- pstats ---- */

typedef struct pstats_sink {
    exp_stats *stats;
    char err[160];
} pstats_sink;

static void pstats_destroy(void *self)
{
    pstats_sink *p = self;
    if (!p)
        return;
    exp_stats_free(p->stats);
    trc_free(p);
}

static void *pstats_create(const void *opts)
{
    pstats_sink *p = trc_calloc(1, sizeof *p);
    if (p && !(p->stats = exp_stats_new())) {
        trc_free(p);
        p = NULL;
    }
    return p;
}

static trc_status pstats_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    pstats_sink *p = self;
    return ev->type == TRC_EV_SAMPLE ? exp_stats_add(p->stats, r, &ev->u.sample) : TRC_OK;
}

static trc_status pstats_hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    pstats_sink *p = self;
    return exp_stats_add_gpu(p->stats, r, h);
}

/* pstats cannot load an empty dict (docs/design/outputs.md §3): selecting
 * nothing is the user's to fix, so the message says where to look. */
static trc_status pstats_write(pstats_sink *p, trc_reader *r, FILE *out, const char *empty)
{
    trc_status st = exp_stats_finish(p->stats, r);
    if (st != TRC_OK)
        return st;
    if (exp_stats_func_count(p->stats) == 0) {
        snprintf(p->err, sizeof p->err, "%s", empty);
        return TRC_ERR_ARG;
    }
    return exp_pstats_write(p->stats, out);
}

static trc_status pstats_finish(void *self, trc_reader *r, FILE *out)
{
    return pstats_write(self, r, out,
                        "no samples selected: a pstats file cannot be empty (try --idle, or "
                        "check --pid/--thread/--from/--to)");
}

static trc_status pstats_gpu_finish(void *self, trc_reader *r, FILE *out)
{
    return pstats_write(self, r, out,
                        "no GPU activities selected: a pstats file cannot be empty (check "
                        "--pid/--thread/--from/--to)");
}

static const char *pstats_error(const void *self)
{
    const pstats_sink *p = self;
    return p->err;
}

const exp_sink_type exp_sink_pstats = {"pstats", pstats_create, pstats_event, NULL,
                                       pstats_finish, pstats_destroy, pstats_error};
const exp_sink_type exp_sink_pstats_gpu = {"pstats-gpu", pstats_create, NULL, pstats_hit,
                                           pstats_gpu_finish, pstats_destroy, pstats_error};
