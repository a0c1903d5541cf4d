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

static trc_status collapsed_finish(void *self, trc_reader *r, FILE *out)
{
    return exp_collapsed_write(self, r, out);
}

const exp_sink_type exp_sink_collapsed = {"collapsed", collapsed_create, collapsed_event, NULL,
                                          collapsed_finish, collapsed_destroy, NULL};

/* --gpu: the folded stacks, and the share of GPU time with a Python
 * line handed to the caller's share function (the output is for
 * flamegraph.pl, so the line cannot go there). */
typedef struct collapsed_gpu {
    exp_collapsed *c;
    void (*share)(const char *line);
    exp_gpu_callsite_stats lines;
} collapsed_gpu;

static void collapsed_gpu_destroy(void *self)
{
    collapsed_gpu *g = self;
    if (g)
        exp_collapsed_free(g->c);
    trc_free(g);
}

static void *collapsed_gpu_create(const void *opts)
{
    const exp_folded_gpu_options *o = opts;
    collapsed_gpu *g = trc_calloc(1, sizeof *g);
    if (g && !(g->c = exp_collapsed_new(o ? &o->fold : NULL))) {
        collapsed_gpu_destroy(g);
        return NULL;
    }
    if (g && o)
        g->share = o->share;
    return g;
}

static trc_status collapsed_hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    collapsed_gpu *g = self;
    exp_gpu_stats_add(&g->lines, h);
    return exp_collapsed_add_gpu(g->c, r, h);
}

static trc_status collapsed_gpu_finish(void *self, trc_reader *r, FILE *out)
{
    collapsed_gpu *g = self;
    trc_status st = exp_collapsed_write(g->c, r, out);
    if (st == TRC_OK && g->share) {
        char line[EXP_GPU_SHARE_MAX];
        g->share(exp_gpu_share_str(&g->lines, line, sizeof line));
    }
    return st;
}

const exp_sink_type exp_sink_collapsed_gpu = {"collapsed-gpu", collapsed_gpu_create, NULL,
                                              collapsed_hit, collapsed_gpu_finish,
                                              collapsed_gpu_destroy, NULL};

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

/* ---- GPU idle time by the feeding threads' stacks ---- */

typedef struct idle_sink {
    exp_folded_idle_options opt;
    exp_gpu_idle *idle;
    exp_collapsed *fold;
    pstats_sink *pstats;
} idle_sink;

static void idle_destroy(void *self)
{
    idle_sink *s = self;
    if (!s)
        return;
    exp_gpu_idle_free(s->idle);
    exp_collapsed_free(s->fold);
    pstats_destroy(s->pstats);
    trc_free(s);
}

static void *idle_make(const void *opts, int pstats)
{
    idle_sink *s = trc_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (opts)
        s->opt = *(const exp_folded_idle_options *)opts;
    s->opt.fold.weight_us = 1; /* charges are times */
    s->idle = exp_gpu_idle_new(&s->opt.idle);
    if (pstats)
        s->pstats = pstats_create(NULL);
    else
        s->fold = exp_collapsed_new(&s->opt.fold);
    if (!s->idle || (!s->pstats && !s->fold)) {
        idle_destroy(s);
        return NULL;
    }
    return s;
}

static void *collapsed_idle_create(const void *opts) { return idle_make(opts, 0); }
static void *pstats_idle_create(const void *opts) { return idle_make(opts, 1); }

static trc_status idle_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    idle_sink *s = self;
    return exp_gpu_idle_event(s->idle, r, ev);
}

static trc_status collapsed_idle_finish(void *self, trc_reader *r, FILE *out)
{
    idle_sink *s = self;
    trc_status st = exp_gpu_idle_finish(s->idle, r);
    if (st == TRC_OK)
        st = exp_collapsed_add_gpu_idle(s->fold, s->idle);
    return st == TRC_OK ? exp_collapsed_write(s->fold, r, out) : st;
}

static trc_status pstats_idle_finish(void *self, trc_reader *r, FILE *out)
{
    idle_sink *s = self;
    trc_status st = exp_gpu_idle_finish(s->idle, r);
    if (st == TRC_OK)
        st = exp_stats_add_gpu_idle(s->pstats->stats, r, s->idle);
    return st == TRC_OK ? pstats_write(s->pstats, r, out,
                                       "no GPU idle time charged to a feeding thread: a pstats "
                                       "file cannot be empty (check --pid/--thread/--from/--to)")
                        : st;
}

static const char *idle_error(const void *self)
{
    const idle_sink *s = self;
    return s->pstats ? s->pstats->err : "";
}

const exp_sink_type exp_sink_collapsed_gpu_idle = {"collapsed-gpu-idle", collapsed_idle_create,
                                                   idle_event, NULL, collapsed_idle_finish,
                                                   idle_destroy, idle_error};
const exp_sink_type exp_sink_pstats_gpu_idle = {"pstats-gpu-idle", pstats_idle_create,
                                                idle_event, NULL, pstats_idle_finish,
                                                idle_destroy, idle_error};
