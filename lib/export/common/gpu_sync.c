/*
 * lib/export/common/gpu_sync.c — blocking syncs by Python line
 * (contract and definitions in gpu_sync.h).
 */
#include "lib/export/common/gpu_sync.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

typedef struct recent {
    int64_t pid, start_ns, end_ns;
    trc_gpu_where where;
} recent;

typedef struct pending {
    exp_sync_hit hit;
    uint64_t born;             /* s->events when it arrived */
} pending;

struct exp_gpu_sync {
    exp_sync_emit_fn emit;
    void *ctx;
    recent ring[EXP_SYNC_RECENT];
    size_t ring_n, ring_next;
    pending *pend;             /* FIFO: pend[head .. n) */
    size_t head, n, cap;
    char **names;              /* name_id - 1 → name */
    size_t n_names, cap_names;
    uint64_t events;
};

exp_gpu_sync *exp_sync_new(exp_sync_emit_fn emit, void *ctx)
{
    exp_gpu_sync *s = trc_calloc(1, sizeof *s);
    if (s) {
        s->emit = emit;
        s->ctx = ctx;
    }
    return s;
}

void exp_sync_free(exp_gpu_sync *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_names; i++)
        trc_free(s->names[i]);
    trc_free(s->names);
    trc_free(s->pend);
    trc_free(s);
}

/* Few distinct API names wait (a dozen synchronise calls and copies):
 * a linear search is enough. */
static trc_status name_id(exp_gpu_sync *s, const char *name, uint32_t *id)
{
    for (size_t i = 0; i < s->n_names; i++)
        if (strcmp(s->names[i], name) == 0) {
            *id = (uint32_t)i + 1;
            return TRC_OK;
        }
    trc_status st = trcu_grow((void **)&s->names, &s->cap_names, s->n_names, sizeof *s->names);
    if (st != TRC_OK)
        return st;
    if (!(s->names[s->n_names] = trc_strdup(name)))
        return TRC_ERR_NOMEM;
    *id = (uint32_t)++s->n_names;
    return TRC_OK;
}

/* Count activity a against call h (each pair once, by whichever came
 * second in the file). */
static void match(exp_sync_hit *h, const recent *a)
{
    if (a->pid != h->pid)
        return;
    if (a->end_ns >= h->start_ns && a->end_ns <= h->end_ns) {
        int64_t from = a->start_ns > h->start_ns ? a->start_ns : h->start_ns;
        h->waited_ns += (uint64_t)(a->end_ns - from);
        /* work that ended during the call beats any that ended before */
        if (!h->has_last || h->last_end_ns < h->start_ns || a->end_ns > h->last_end_ns)
            goto take;
        return;
    }
    if (a->end_ns < h->start_ns && (!h->has_last || a->end_ns > h->last_end_ns))
        goto take;
    return;
take:
    h->has_last = 1;
    h->last_start_ns = a->start_ns;
    h->last_end_ns = a->end_ns;
    h->last_where = a->where;
}

static trc_status emit_head(exp_gpu_sync *s, const trc_reader *r)
{
    pending p = s->pend[s->head++];
    if (s->head == s->n)
        s->head = s->n = 0;
    p.hit.name = s->names[p.hit.name_id - 1];
    return s->emit(s->ctx, r, &p.hit);
}

static trc_status retire(exp_gpu_sync *s, const trc_reader *r, int all)
{
    while (s->head < s->n && (all || s->events - s->pend[s->head].born > EXP_SYNC_WINDOW)) {
        trc_status st = emit_head(s, r);
        if (st != TRC_OK)
            return st;
    }
    return TRC_OK;
}

static trc_status on_call(exp_gpu_sync *s, const trc_reader *r, const trc_api_call *a)
{
    const trc_thread *t = trc_reader_thread(r, a->thread);
    pending p;
    trc_status st;

    memset(&p, 0, sizeof p);
    p.born = s->events;
    p.hit.pid = t ? t->pid : -1;
    p.hit.thread = a->thread;
    p.hit.stack = a->stack;
    p.hit.origin = a->stack ? EXP_GPU_PYTHON : EXP_GPU_NO_PYTHON;
    p.hit.start_ns = a->start_ns;
    p.hit.end_ns = a->end_ns > a->start_ns ? a->end_ns : a->start_ns;
    uint64_t dur = (uint64_t)(p.hit.end_ns - p.hit.start_ns);
    p.hit.blocked_ns = dur > a->capture_ns ? dur - a->capture_ns : 0;
    if ((st = name_id(s, a->name ? a->name : "", &p.hit.name_id)) != TRC_OK)
        return st;
    for (size_t i = 0; i < s->ring_n; i++)
        match(&p.hit, &s->ring[i]);
    if ((st = trcu_grow((void **)&s->pend, &s->cap, s->n, sizeof *s->pend)) != TRC_OK)
        return st;
    s->pend[s->n++] = p;
    return TRC_OK;
}

static void on_activity(exp_gpu_sync *s, const trc_gpu_where *w, int64_t start, int64_t end)
{
    recent a = { w->pid, start, end > start ? end : start, *w };
    for (size_t i = s->head; i < s->n; i++)
        match(&s->pend[i].hit, &a);
    s->ring[s->ring_next] = a;
    s->ring_next = (s->ring_next + 1) % EXP_SYNC_RECENT;
    if (s->ring_n < EXP_SYNC_RECENT)
        s->ring_n++;
}

trc_status exp_sync_event(exp_gpu_sync *s, const trc_reader *r, const trc_event *ev)
{
    s->events++;
    switch (ev->type) {
    case TRC_EV_SEGMENT: {
        /* a new recording: its calls and activities never meet the old ones */
        trc_status st = retire(s, r, 1);
        s->ring_n = s->ring_next = 0;
        return st;
    }
    case TRC_EV_API_CALL:
        if (ev->u.api.flags & TRC_API_SYNC) {
            trc_status st = on_call(s, r, &ev->u.api);
            if (st != TRC_OK)
                return st;
        }
        break;
    case TRC_EV_GPU_KERNEL:
        on_activity(s, &ev->u.kernel.where, ev->u.kernel.start_ns, ev->u.kernel.end_ns);
        break;
    case TRC_EV_GPU_MEMCPY:
        on_activity(s, &ev->u.memcpy.where, ev->u.memcpy.start_ns, ev->u.memcpy.end_ns);
        break;
    case TRC_EV_GPU_MEMSET:
        on_activity(s, &ev->u.memset.where, ev->u.memset.start_ns, ev->u.memset.end_ns);
        break;
    default:
        break;
    }
    return retire(s, r, 0);
}

trc_status exp_sync_finish(exp_gpu_sync *s, const trc_reader *r)
{
    return retire(s, r, 1);
}
