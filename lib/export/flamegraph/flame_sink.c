/*
 * lib/export/flamegraph/flame_sink.c — trc2flamegraph's sinks
 * (lib/export/sink.h; contract in flamegraph.h).  The samples are folded
 * by trc2collapsed's own aggregation (lib/export/common/collapsed.h),
 * on-CPU and off-CPU (--idle) samples in two aggregators so that a frame
 * knows how much of it was idle; at the end both aggregators' lines
 * become one tree, drawn as SVG or, for --diff's BASE, kept in the
 * caller's tree.
 */
#include "lib/export/flamegraph/flamegraph.h"

#include "lib/util/alloc.h"

typedef struct flame_sink {
    exp_flame_options opt;
    int gpu;
    exp_collapsed *cpu, *idle;
    exp_gpu_idle *gpu_idle;   /* the _gpu_idle type: its stage */
    exp_gpu_sync *syncs;      /* the _syncs type: its stage */
    exp_gpu_callsite_stats lines; /* the _gpu type: GPU time by attribution */
} flame_sink;

typedef struct add_ctx {
    exp_flame_tree *tree;
    int roots, gpu, idle;
} add_ctx;

static void flame_destroy(void *self)
{
    flame_sink *f = self;
    if (!f)
        return;
    exp_collapsed_free(f->cpu);
    exp_collapsed_free(f->idle);
    exp_gpu_idle_free(f->gpu_idle);
    exp_sync_free(f->syncs);
    trc_free(f);
}

static void *make(const void *opts, int gpu)
{
    flame_sink *f = trc_calloc(1, sizeof *f);
    if (!f)
        return NULL;
    if (opts)
        f->opt = *(const exp_flame_options *)opts;
    f->gpu = gpu;
    f->cpu = exp_collapsed_new(&f->opt.fold);
    f->idle = exp_collapsed_new(&f->opt.fold);
    if (!f->cpu || !f->idle) {
        flame_destroy(f);
        return NULL;
    }
    return f;
}

static void *flame_create(const void *opts) { return make(opts, 0); }

static void *flame_gpu_idle_create(const void *opts)
{
    flame_sink *f = make(opts, 0);
    if (f) {
        f->opt.fold.weight_us = 1; /* charges are times */
        f->gpu_idle = exp_gpu_idle_new(f->opt.gpu_idle);
        if (!f->gpu_idle) {
            flame_destroy(f);
            return NULL;
        }
    }
    return f;
}
static void *flame_gpu_create(const void *opts) { return make(opts, 1); }

static trc_status add_sync(void *ctx, const trc_reader *r, const exp_sync_hit *h)
{
    flame_sink *f = ctx;
    return exp_collapsed_add_sync(f->cpu, r, h);
}

static void *flame_syncs_create(const void *opts)
{
    flame_sink *f = make(opts, 0);
    if (f && !(f->syncs = exp_sync_new(add_sync, f))) {
        flame_destroy(f);
        return NULL;
    }
    if (f)
        f->opt.calls = 1;
    return f;
}

static trc_status flame_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    flame_sink *f = self;
    if (f->gpu_idle)
        return exp_gpu_idle_event(f->gpu_idle, r, ev);
    if (f->syncs)
        return exp_sync_event(f->syncs, r, ev);
    if (ev->type != TRC_EV_SAMPLE)
        return TRC_OK;
    const trc_sample *s = &ev->u.sample;
    return exp_collapsed_add(s->flags & TRC_SAMPLE_ON_CPU ? f->cpu : f->idle, r, s);
}

static trc_status flame_hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    flame_sink *f = self;
    exp_gpu_stats_add(&f->lines, h);
    return exp_collapsed_add_gpu(f->cpu, r, h);
}

static trc_status add_line(void *ctx, const char *stack, uint64_t value, uint64_t count,
                           uint64_t ns)
{
    const add_ctx *a = ctx;
    return exp_flame_tree_add(a->tree, stack, value, count, ns, a->roots, a->gpu, a->idle);
}

static trc_status flame_finish(void *self, trc_reader *r, FILE *out)
{
    flame_sink *f = self;
    if (f->gpu_idle) {
        trc_status st = exp_gpu_idle_finish(f->gpu_idle, r);
        if (st == TRC_OK)
            st = exp_collapsed_add_gpu_idle(f->cpu, f->gpu_idle);
        if (st != TRC_OK)
            return st;
    }
    if (f->syncs) {
        trc_status st = exp_sync_finish(f->syncs, r);
        if (st != TRC_OK)
            return st;
    }
    exp_flame_tree *t = f->opt.collect ? f->opt.collect : exp_flame_tree_new();
    if (!t)
        return TRC_ERR_NOMEM;
    add_ctx a = {t, (f->opt.fold.pids != 0) + (f->opt.fold.threads != 0), f->gpu, 0};
    trc_status st = exp_collapsed_each(f->cpu, r, add_line, &a);
    a.idle = 1;
    if (st == TRC_OK)
        st = exp_collapsed_each(f->idle, r, add_line, &a);
    if (st == TRC_OK)
        st = exp_flame_tree_finish(t);
    if (st == TRC_OK && !f->opt.collect) {
        /* --gpu: the share of GPU time with a Python line ends the
         * subtitle, in the words of every GPU view (exp_gpu_share_str) */
        exp_flame_options o = f->opt;
        char sub[240 + EXP_GPU_SHARE_MAX], share[EXP_GPU_SHARE_MAX];
        if (f->gpu && f->lines.python + f->lines.no_python + f->lines.unknown) {
            snprintf(sub, sizeof sub, "%s%s%s", o.subtitle ? o.subtitle : "",
                     o.subtitle ? "; " : "", exp_gpu_share_str(&f->lines, share, sizeof share));
            o.subtitle = sub;
        }
        st = exp_flame_svg_write(t, &o, f->gpu, out);
    }
    if (!f->opt.collect)
        exp_flame_tree_free(t);
    return st;
}

const exp_sink_type exp_sink_flamegraph = {"flamegraph", flame_create, flame_event, NULL,
                                           flame_finish, flame_destroy, NULL};
const exp_sink_type exp_sink_flamegraph_gpu = {"flamegraph-gpu", flame_gpu_create, NULL,
                                               flame_hit, flame_finish, flame_destroy, NULL};
const exp_sink_type exp_sink_flamegraph_gpu_idle = {"flamegraph-gpu-idle", flame_gpu_idle_create,
                                                    flame_event, NULL, flame_finish,
                                                    flame_destroy, NULL};
const exp_sink_type exp_sink_flamegraph_syncs = {"flamegraph-syncs", flame_syncs_create,
                                                 flame_event, NULL, flame_finish, flame_destroy,
                                                 NULL};
