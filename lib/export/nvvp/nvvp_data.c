/*
 * lib/export/nvvp/nvvp_data.c — the buffering collector behind the GPU trace
 * tables and the timeline (contract in nvvp_data.h; docs/design/outputs.md §5).
 */
#include "lib/export/nvvp/nvvp_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/export/common/short_path.h"
#include "lib/util/grow.h"
#include "lib/export/common/gpu_units.h"

#define TOP_CACHE_MAX (1u << 24)
#define STACK_WALK_MAX 4097

nvvp_data *nvvp_data_new(unsigned want)
{
    nvvp_data *d = trc_calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->want = want;
    name_pool_init(&d->pool);
    d->t_min = INT64_MAX;
    d->t_max = INT64_MIN;
    return d;
}

void nvvp_data_free(nvvp_data *d)
{
    if (!d)
        return;
    name_pool_cleanup(&d->pool);
    trc_free(d->acts);
    trc_free(d->apis);
    trc_free(d->marks);
    trc_free(d->losses);
    for (uint32_t i = 0; i < d->n_runs; i++)
        trc_free(d->runs[i].v);
    trc_free(d->runs);
    for (uint32_t i = 0; i < d->n_series; i++)
        trc_free(d->series[i].v);
    trc_free(d->series);
    trc_free(d->top_frame);
    trc_free(d->site);
    for (size_t i = 0; i < d->n_open; i++)
        trc_free(d->open[i].v);
    trc_free(d->open);
    trc_free(d->corr_ix);
    trc_free(d);
}

static void extent(nvvp_data *d, int64_t a, int64_t b)
{
    if (a < d->t_min)
        d->t_min = a;
    if (b > d->t_max)
        d->t_max = b;
}

uint32_t nvvp_data_top_frame(nvvp_data *d, trc_reader *r, uint32_t stack)
{
    if (stack == 0)
        return 0;
    if (stack < d->n_top && d->top_frame[stack])
        return d->top_frame[stack] - 1;
    uint32_t found = 0, s = stack;
    for (int guard = 0; s && guard < STACK_WALK_MAX; guard++) {
        const trc_stack *st = trc_reader_stack(r, s);
        if (!st)
            break;
        const trc_frame *f = trc_reader_frame(r, st->frame);
        if (f && f->kind == TRC_FRAME_PYTHON) {
            found = f->id;
            break;
        }
        if (st->parent >= s)
            break;
        s = st->parent;
    }
    if (stack >= d->n_top && stack < TOP_CACHE_MAX) {
        /* Failure leaves the cache as it was: only slower. */
        (void)trcu_grow32(&d->top_frame, &d->n_top, stack, sizeof *d->top_frame);
    }
    if (stack < d->n_top)
        d->top_frame[stack] = found + 1;
    return found;
}

static trc_status add_act(nvvp_data *d, nvvp_act_kind kind, const trc_gpu_where *w,
                          int64_t start, int64_t end, nvvp_act **out)
{
    if (trcu_grow((void **)&d->acts, &d->cap_acts, d->n_acts, sizeof *d->acts) != TRC_OK)
        return TRC_ERR_NOMEM;
    nvvp_act *a = &d->acts[d->n_acts];
    memset(a, 0, sizeof *a);
    a->kind = (uint8_t)kind;
    a->start = start;
    a->end = end < start ? start : end;
    a->pid = w->pid;
    a->corr = w->correlation;
    a->device = w->device;
    a->context = w->context;
    a->stream = w->stream;
    a->seq = d->seq++;
    *out = a;
    return TRC_OK;
}

static trc_status add_gpu(nvvp_data *d, const trc_event *ev)
{
    nvvp_act *a;
    trc_status st;
    switch (ev->type) {
    case TRC_EV_GPU_KERNEL: {
        const trc_gpu_kernel *k = &ev->u.kernel;
        uint32_t name;
        if ((st = name_pool_intern(&d->pool, k->name, &name)) != TRC_OK)
            return st;
        if ((st = add_act(d, NVVP_ACT_KERNEL, &k->where, k->start_ns, k->end_ns, &a)) != TRC_OK)
            return st;
        a->name = name;
        memcpy(a->u.k.grid, k->grid, sizeof a->u.k.grid);
        memcpy(a->u.k.block, k->block, sizeof a->u.k.block);
        a->u.k.regs = k->registers;
        a->u.k.ssmem = k->static_smem;
        a->u.k.dsmem = k->dynamic_smem;
        break;
    }
    case TRC_EV_GPU_MEMCPY: {
        const trc_gpu_memcpy *m = &ev->u.memcpy;
        if ((st = add_act(d, NVVP_ACT_MEMCPY, &m->where, m->start_ns, m->end_ns, &a)) != TRC_OK)
            return st;
        a->sub = (uint8_t)m->copy_kind;
        a->src = (uint8_t)m->src_kind;
        a->dst = (uint8_t)m->dst_kind;
        a->u.m.bytes = m->bytes;
        a->u.m.dst_device = m->dst_device;
        break;
    }
    case TRC_EV_GPU_MEMSET: {
        const trc_gpu_memset *m = &ev->u.memset;
        if ((st = add_act(d, NVVP_ACT_MEMSET, &m->where, m->start_ns, m->end_ns, &a)) != TRC_OK)
            return st;
        a->sub = (uint8_t)m->mem_kind;
        a->src = (uint8_t)m->mem_kind;
        a->u.m.bytes = m->bytes;
        a->u.m.value = m->value;
        a->u.m.dst_device = m->where.device;
        break;
    }
    default: {
        const trc_gpu_sync *s = &ev->u.sync;
        if ((st = add_act(d, NVVP_ACT_SYNC, &s->where, s->start_ns, s->end_ns, &a)) != TRC_OK)
            return st;
        a->sub = (uint8_t)s->sync_kind;
        break;
    }
    }
    d->n_acts++;
    extent(d, a->start, a->end);
    return TRC_OK;
}

static trc_status add_api(nvvp_data *d, trc_reader *r, const trc_api_call *c)
{
    uint32_t name;
    trc_status st = name_pool_intern(&d->pool, c->name, &name);
    if (st != TRC_OK)
        return st;
    if (trcu_grow((void **)&d->apis, &d->cap_apis, d->n_apis, sizeof *d->apis) != TRC_OK)
        return TRC_ERR_NOMEM;
    nvvp_api *a = &d->apis[d->n_apis++];
    const trc_thread *t = trc_reader_thread(r, c->thread);
    memset(a, 0, sizeof *a);
    a->start = c->start_ns;
    a->end = c->end_ns < c->start_ns ? c->start_ns : c->end_ns;
    a->pid = t ? t->pid : -1;
    a->name = name;
    a->corr = c->correlation;
    a->thread = c->thread;
    a->stack = c->stack;
    a->seq = d->seq++;
    a->result = c->result;
    a->domain = (uint8_t)c->domain;
    a->flags = (uint8_t)c->flags;
    extent(d, a->start, a->end);
    return TRC_OK;
}

static trc_status add_sample(nvvp_data *d, trc_reader *r, const trc_sample *s)
{
    if (s->thread >= TOP_CACHE_MAX)
        return TRC_ERR_LIMIT;
    if (s->thread >= d->n_runs) {
        if (trcu_grow32(&d->runs, &d->n_runs, s->thread, sizeof *d->runs) != TRC_OK)
            return TRC_ERR_NOMEM;
    }
    nvvp_runs *rs = &d->runs[s->thread];
    uint32_t frame = nvvp_data_top_frame(d, r, s->stack);
    uint64_t w = s->weight_ns ? s->weight_ns : 1000000;
    uint32_t count = s->count ? s->count : 1;
    /* modulo 2^64 (spec §2.6): hostile times must not overflow */
    int64_t t0 = s->time_ns, t1 = (int64_t)((uint64_t)s->time_ns + s->span_ns + w);
    if (rs->n) {
        nvvp_run *last = &rs->v[rs->n - 1];
        /* half a period of slack absorbs sampling jitter; a larger gap
         * (idle samples filtered out) starts a new run */
        if (last->frame == frame && t0 >= last->start && t0 <= (int64_t)((uint64_t)last->end + w / 2)) {
            if (t1 > last->end)
                last->end = t1;
            last->count += count;
            last->weight_ns += w * count;
            extent(d, t0, t1);
            return TRC_OK;
        }
    }
    if (trcu_grow((void **)&rs->v, &rs->cap, rs->n, sizeof *rs->v) != TRC_OK)
        return TRC_ERR_NOMEM;
    nvvp_run *run = &rs->v[rs->n++];
    run->start = t0;
    run->end = t1;
    run->frame = frame;
    run->count = count;
    run->weight_ns = w * count;
    extent(d, t0, t1);
    return TRC_OK;
}

/* The PUSH stack of a thread, created on demand; NULL when out of memory. */
static struct nvvp_open *open_stack(nvvp_data *d, uint32_t thread)
{
    size_t i;
    for (i = 0; i < d->n_open; i++)
        if (d->open[i].thread == thread)
            return &d->open[i];
    if (trcu_grow((void **)&d->open, &d->cap_open, d->n_open, sizeof *d->open) != TRC_OK)
        return NULL;
    memset(&d->open[i], 0, sizeof d->open[i]);
    d->open[i].thread = thread;
    d->n_open++;
    return &d->open[i];
}

static trc_status add_marker(nvvp_data *d, const trc_marker *m)
{
    trc_status st;
    if (m->kind == TRC_MARK_POP) {
        struct nvvp_open *o = open_stack(d, m->thread);
        if (!o)
            return TRC_ERR_NOMEM;
        if (o->n == 0)
            return TRC_OK; /* a pop without its push (started before the trace) */
        nvvp_mark *k = &d->marks[o->v[--o->n]];
        k->end = m->start_ns < k->start ? k->start : m->start_ns;
        k->open = 0;
        extent(d, k->start, k->end);
        return TRC_OK;
    }
    uint32_t name, domain;
    if ((st = name_pool_intern(&d->pool, m->name, &name)) != TRC_OK)
        return st;
    if ((st = name_pool_intern(&d->pool, m->domain, &domain)) != TRC_OK)
        return st;
    if (trcu_grow((void **)&d->marks, &d->cap_marks, d->n_marks, sizeof *d->marks) != TRC_OK)
        return TRC_ERR_NOMEM;
    if (m->kind == TRC_MARK_PUSH) {
        struct nvvp_open *o = open_stack(d, m->thread);
        if (!o || trcu_grow((void **)&o->v, &o->cap, o->n, sizeof *o->v) != TRC_OK)
            return TRC_ERR_NOMEM;
        o->v[o->n++] = d->n_marks;
    }
    nvvp_mark *k = &d->marks[d->n_marks++];
    memset(k, 0, sizeof *k);
    k->start = m->start_ns;
    k->end = m->kind == TRC_MARK_RANGE && m->end_ns > m->start_ns ? m->end_ns : m->start_ns;
    k->pid = m->pid;
    k->name = name;
    k->domain = domain;
    k->thread = m->thread;
    k->color = m->color;
    k->kind = m->kind == TRC_MARK_INSTANT ? TRC_MARK_INSTANT : TRC_MARK_RANGE;
    k->open = m->kind == TRC_MARK_PUSH;
    extent(d, k->start, k->end);
    return TRC_OK;
}

static trc_status add_counter(nvvp_data *d, const trc_counter_value *c)
{
    if (c->counter >= TOP_CACHE_MAX)
        return TRC_ERR_LIMIT;
    if (c->counter >= d->n_series) {
        if (trcu_grow32(&d->series, &d->n_series, c->counter, sizeof *d->series) != TRC_OK)
            return TRC_ERR_NOMEM;
    }
    nvvp_series *s = &d->series[c->counter];
    if (trcu_grow((void **)&s->v, &s->cap, s->n, sizeof *s->v) != TRC_OK)
        return TRC_ERR_NOMEM;
    s->v[s->n].t = c->time_ns;
    s->v[s->n].v = c->value;
    s->n++;
    extent(d, c->time_ns, c->time_ns);
    return TRC_OK;
}

static trc_status add_loss(nvvp_data *d, const trc_loss *l)
{
    if (trcu_grow((void **)&d->losses, &d->cap_losses, d->n_losses, sizeof *d->losses) != TRC_OK)
        return TRC_ERR_NOMEM;
    nvvp_lossrec *x = &d->losses[d->n_losses++];
    x->start = l->start_ns;
    x->end = l->end_ns < l->start_ns ? l->start_ns : l->end_ns;
    x->count = l->count;
    x->kind = (uint8_t)l->kind;
    return TRC_OK;
}

trc_status nvvp_data_add(nvvp_data *d, trc_reader *r, const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_SEGMENT:
        if (d->trace_start == 0) {
            d->trace_start = ev->u.segment->start_ns;
            return name_pool_intern(&d->pool, ev->u.segment->command_line, &d->command);
        }
        return TRC_OK;
    case TRC_EV_GPU_KERNEL:
    case TRC_EV_GPU_MEMCPY:
    case TRC_EV_GPU_MEMSET:
    case TRC_EV_GPU_SYNC:
        return (d->want & NVVP_WANT_GPU) ? add_gpu(d, ev) : TRC_OK;
    case TRC_EV_API_CALL:
        return (d->want & NVVP_WANT_API) ? add_api(d, r, &ev->u.api) : TRC_OK;
    case TRC_EV_SAMPLE:
        return (d->want & NVVP_WANT_SAMPLES) ? add_sample(d, r, &ev->u.sample) : TRC_OK;
    case TRC_EV_MARKER:
        return (d->want & NVVP_WANT_MARKERS) ? add_marker(d, &ev->u.marker) : TRC_OK;
    case TRC_EV_COUNTER:
        return (d->want & NVVP_WANT_COUNTERS) ? add_counter(d, &ev->u.counter) : TRC_OK;
    case TRC_EV_LOSS:
        return add_loss(d, &ev->u.loss);
    default:
        return TRC_OK;
    }
}

static int cmp_act(const void *a, const void *b)
{
    const nvvp_act *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_api(const void *a, const void *b)
{
    const nvvp_api *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_mark(const void *a, const void *b)
{
    const nvvp_mark *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* enclosing range first */
    return x->name < y->name ? -1 : x->name > y->name;
}

static int cmp_run(const void *a, const void *b)
{
    const nvvp_run *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_point(const void *a, const void *b)
{
    const nvvp_point *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_corr(const void *a, const void *b)
{
    const struct nvvp_corr *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return x->api < y->api ? -1 : x->api > y->api;
}

trc_status nvvp_data_finish(nvvp_data *d)
{
    for (size_t i = 0; i < d->n_open; i++) {
        for (size_t j = 0; j < d->open[i].n; j++) {
            nvvp_mark *k = &d->marks[d->open[i].v[j]];
            if (d->t_max > k->end)
                k->end = d->t_max;
        }
        d->open[i].n = 0;
    }
    int sorted = 1;
    for (size_t i = 1; i < d->n_acts && sorted; i++)
        sorted = d->acts[i - 1].start <= d->acts[i].start;
    if (!sorted)
        qsort(d->acts, d->n_acts, sizeof *d->acts, cmp_act);
    sorted = 1;
    for (size_t i = 1; i < d->n_apis && sorted; i++)
        sorted = d->apis[i - 1].start <= d->apis[i].start;
    if (!sorted)
        qsort(d->apis, d->n_apis, sizeof *d->apis, cmp_api);
    d->sorted_acts = d->sorted_apis = 1;
    if (d->n_marks > 1)
        qsort(d->marks, d->n_marks, sizeof *d->marks, cmp_mark);
    for (uint32_t t = 0; t < d->n_runs; t++) {
        nvvp_runs *rs = &d->runs[t];
        sorted = 1;
        for (size_t i = 1; i < rs->n && sorted; i++)
            sorted = rs->v[i - 1].start <= rs->v[i].start;
        if (!sorted)
            qsort(rs->v, rs->n, sizeof *rs->v, cmp_run);
    }
    for (uint32_t c = 0; c < d->n_series; c++) {
        nvvp_series *se = &d->series[c];
        sorted = 1;
        for (size_t i = 1; i < se->n && sorted; i++)
            sorted = se->v[i - 1].t <= se->v[i].t;
        if (!sorted)
            qsort(se->v, se->n, sizeof *se->v, cmp_point);
    }

    trc_free(d->corr_ix);
    d->corr_ix = NULL;
    d->n_corr = 0;
    if (d->n_apis) {
        d->corr_ix = trc_malloc(d->n_apis * sizeof *d->corr_ix);
        if (!d->corr_ix)
            return TRC_ERR_NOMEM;
        for (size_t i = 0; i < d->n_apis; i++) {
            if (d->apis[i].corr == 0)
                continue;
            d->corr_ix[d->n_corr].pid = d->apis[i].pid;
            d->corr_ix[d->n_corr].corr = d->apis[i].corr;
            d->corr_ix[d->n_corr].api = (uint32_t)i;
            d->n_corr++;
        }
        qsort(d->corr_ix, d->n_corr, sizeof *d->corr_ix, cmp_corr);
    }
    return TRC_OK;
}

const nvvp_api *nvvp_data_api_by_corr(const nvvp_data *d, int64_t pid, uint32_t corr)
{
    if (corr == 0 || d->n_corr == 0)
        return NULL;
    size_t lo = 0, hi = d->n_corr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct nvvp_corr *c = &d->corr_ix[mid];
        if (c->pid < pid || (c->pid == pid && c->corr < corr))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < d->n_corr && d->corr_ix[lo].pid == pid && d->corr_ix[lo].corr == corr) {
        /* a runtime call and the driver call under it share the id:
         * prefer the one that carries a Python stack, then the runtime one */
        const nvvp_api *best = &d->apis[d->corr_ix[lo].api];
        for (size_t i = lo + 1; i < d->n_corr && d->corr_ix[i].pid == pid &&
                                d->corr_ix[i].corr == corr; i++) {
            const nvvp_api *c = &d->apis[d->corr_ix[i].api];
            if ((!best->stack && c->stack) ||
                (!best->stack == !c->stack && c->domain < best->domain))
                best = c;
        }
        return best;
    }
    return NULL;
}

const char *nvvp_data_frame_site(nvvp_data *d, trc_reader *r, uint32_t frame)
{
    if (frame == 0)
        return "";
    if (frame < d->n_site && d->site[frame])
        return name_pool_str(&d->pool, d->site[frame] - 1);
    const trc_frame *f = trc_reader_frame(r, frame);
    if (!f)
        return "";
    const char *file = f->file && *f->file ? exp_short_path(f->file) : "?";
    size_t len = strlen(file) + strlen(f->function ? f->function : "") + 16;
    char small[512], *buf = len <= sizeof small ? small : trc_malloc(len);
    if (!buf)
        return "";
    snprintf(buf, len, "%s:%u(%s)", file, f->line, f->function ? f->function : "");
    uint32_t id;
    trc_status st = name_pool_intern(&d->pool, buf, &id);
    if (buf != small)
        trc_free(buf);
    if (st != TRC_OK)
        return "";
    if (frame >= d->n_site && frame < TOP_CACHE_MAX) {
        /* Failure leaves the cache as it was: only slower. */
        (void)trcu_grow32(&d->site, &d->n_site, frame, sizeof *d->site);
    }
    if (frame < d->n_site)
        d->site[frame] = id + 1;
    return name_pool_str(&d->pool, id);
}

const char *nvvp_data_site(nvvp_data *d, trc_reader *r, uint32_t stack)
{
    return nvvp_data_frame_site(d, r, nvvp_data_top_frame(d, r, stack));
}

const char *nvvp_act_name(const nvvp_data *d, const nvvp_act *a)
{
    switch (a->kind) {
    case NVVP_ACT_KERNEL: {
        const char *n = name_pool_str(&d->pool, a->name);
        return *n ? n : "<unnamed kernel>";
    }
    case NVVP_ACT_MEMCPY: return gpu_copy_name((trc_copy_kind)a->sub);
    case NVVP_ACT_MEMSET: return gpu_memset_name();
    default: return "[CUDA synchronization]";
    }
}
