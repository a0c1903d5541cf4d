/*
 * lib/export/top/top.c — trc-top's aggregation (contract in top.h).
 *
 * Samples are kept twice: summed since the start per (stack, thread,
 * class), where the class is on-CPU x holds-the-GIL, so that the
 * since-start view costs the number of distinct stacks and not of
 * samples; and one by one for the last keep_ns, so that the window
 * slides.  A table sums the samples of its view per (stack, thread,
 * class) the same way, then charges each sum to the rows of the frames
 * on its stack: the leaf's own columns, each distinct frame's total
 * ones (a recursive function counts once per sample, as in py-spy top).
 */
#include "lib/export/top/top.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"

#define CLS_ON_CPU 1u
#define CLS_GIL 2u
#define N_CLS 4

/* Sums per (stack, thread), one pair per class. */
typedef struct agg_entry {
    uint32_t stack, thread;
    uint64_t n[N_CLS], ns[N_CLS];
} agg_entry;

typedef struct agg {
    trch_u64map map;       /* stack << 32 | thread -> entry index */
    agg_entry *e;
    size_t n, cap;
} agg;

typedef struct win_sample {
    int64_t t;             /* time of the last sample it stands for */
    uint32_t stack, thread, cls, count;
    uint64_t ns;
} win_sample;

typedef struct win_hit {
    int64_t t;             /* model time when it was charged */
    uint32_t stack;
    uint64_t ns;
} win_hit;

typedef struct interval {
    int64_t start, end;
} interval;

typedef struct device {
    uint32_t device;
    interval *iv;          /* kernels ending inside the window, by arrival */
    size_t head, n, cap;
    uint64_t cum_busy;     /* since the start: time covered past cum_end */
    int64_t cum_end, first_start;
    int has_mem;
    double mem_used;
} device;

typedef struct frame_copy {
    const char *function, *file;
    uint32_t line;
    trc_frame_kind kind;
} frame_copy;

typedef struct stack_copy {
    uint32_t parent, frame; /* frame 0: not copied yet */
} stack_copy;

struct top_model {
    pthread_mutex_t lock;
    int64_t keep_ns;
    int64_t now, first;    /* latest and earliest time seen; first 0 = none */
    int ended, has_gpu;
    agg cum;               /* since the start */
    win_sample *ws;        /* the window, oldest first from ws_head */
    size_t ws_head, ws_n, ws_cap;
    win_hit *wh;
    size_t wh_head, wh_n, wh_cap;
    size_t wh_unstamped;   /* hits at the back still waiting for a time */
    uint64_t *gpu_by_stack; /* since the start, by stack id */
    size_t gpu_cap;
    exp_gpu_callsite_stats gpu_lines; /* every hit since the start, by attribution */
    frame_copy *frames;
    size_t frames_cap;
    stack_copy *stacks;
    size_t stacks_cap;
    device *devs;
    size_t n_devs, devs_cap;
    int32_t *mem_counter;  /* counter id -> device + 1 for "gpu.mem.used", else 0 */
    size_t mem_counter_cap;
    /* scratch of top_table_fill */
    agg view;
    uint32_t *row_of_frame; /* frame id -> row index + 1 */
    uint32_t *row_stamp;    /* frame id -> last entry charged + 1 */
    size_t rof_cap, stamp_cap;
    interval *merge;
    size_t merge_cap;
};

/* ---- sums ---- */

static trc_status agg_add(agg *a, uint32_t stack, uint32_t thread, uint32_t cls, uint64_t n,
                          uint64_t ns)
{
    uint32_t idx;
    int added;
    trc_status st;
    if (a->n >= UINT32_MAX - 1)
        return TRC_ERR_LIMIT;
    if ((st = trcu_grow((void **)&a->e, &a->cap, a->n, sizeof *a->e)) != TRC_OK)
        return st;
    st = trch_u64map_put(&a->map, (uint64_t)stack << 32 | thread, (uint32_t)a->n, &idx, &added);
    if (st != TRC_OK)
        return st;
    if (added) {
        memset(&a->e[idx], 0, sizeof a->e[idx]);
        a->e[idx].stack = stack;
        a->e[idx].thread = thread;
        a->n++;
    }
    a->e[idx].n[cls] += n;
    a->e[idx].ns[cls] += ns;
    return TRC_OK;
}

static void agg_clear(agg *a)
{
    trch_u64map_clear(&a->map);
    a->n = 0;
}

static void agg_cleanup(agg *a)
{
    trch_u64map_cleanup(&a->map);
    trc_free(a->e);
    memset(a, 0, sizeof *a);
}

/* ---- definitions copied from the reader ---- */

static trc_status copy_frame(top_model *m, const trc_reader *r, uint32_t id)
{
    const trc_frame *f = trc_reader_frame(r, id);
    trc_status st = trcu_grow((void **)&m->frames, &m->frames_cap, id, sizeof *m->frames);
    if (st != TRC_OK)
        return st;
    if (!m->frames[id].function) {
        m->frames[id].function = f ? f->function : "?";
        m->frames[id].file = f ? f->file : "";
        m->frames[id].line = f ? f->line : 0;
        m->frames[id].kind = f ? f->kind : TRC_FRAME_OTHER;
    }
    return TRC_OK;
}

/* Copy stack id and its ancestors that are not copied yet. */
static trc_status copy_stack(top_model *m, const trc_reader *r, uint32_t id)
{
    while (id) {
        trc_status st = trcu_grow((void **)&m->stacks, &m->stacks_cap, id, sizeof *m->stacks);
        if (st != TRC_OK)
            return st;
        if (m->stacks[id].frame)
            return TRC_OK;
        const trc_stack *s = trc_reader_stack(r, id);
        if (!s || !s->frame || s->parent >= id)
            return TRC_OK; /* the reader's ids are checked; nothing to copy */
        if ((st = copy_frame(m, r, s->frame)) != TRC_OK)
            return st;
        m->stacks[id].parent = s->parent;
        m->stacks[id].frame = s->frame;
        id = s->parent;
    }
    return TRC_OK;
}

/* ---- feeding ---- */

static uint32_t sample_cls(uint32_t flags)
{
    uint32_t cls = (flags & TRC_SAMPLE_ON_CPU) ? CLS_ON_CPU : 0;
    if ((flags & TRC_SAMPLE_GIL_KNOWN) && (flags & TRC_SAMPLE_HOLDS_GIL))
        cls |= CLS_GIL;
    return cls;
}

static void see_time(top_model *m, int64_t t)
{
    if (t > m->now)
        m->now = t;
    if (t > 0 && (!m->first || t < m->first))
        m->first = t;
}

/* Drop from the front of each window what is older than now - keep. */
static void trim(top_model *m)
{
    int64_t edge = m->now - m->keep_ns;
    while (m->ws_n && m->ws[m->ws_head].t < edge) {
        m->ws_head++;
        m->ws_n--;
    }
    while (m->wh_n && m->wh[m->wh_head].t < edge) {
        m->wh_head++;
        m->wh_n--;
    }
    for (size_t d = 0; d < m->n_devs; d++) {
        device *v = &m->devs[d];
        while (v->n && v->iv[v->head].end < edge) {
            v->head++;
            v->n--;
        }
    }
}

/* Room for one more element at the back of a window whose live part is
 * [*head, *head + n): slide the live part to the front first when the
 * dead part is at least as large, so memory follows the window. */
static trc_status window_room(void **arr, size_t *head, size_t n, size_t *cap, size_t size)
{
    if (*head && *head >= n) {
        memmove(*arr, (char *)*arr + *head * size, n * size);
        *head = 0;
    }
    return trcu_grow(arr, cap, *head + n, size);
}

static trc_status on_sample(top_model *m, trc_reader *r, const trc_sample *s)
{
    uint64_t count = s->count ? s->count : 1;
    uint64_t ns = s->weight_ns * count;
    uint32_t cls = sample_cls(s->flags);
    int64_t t = s->time_ns + (int64_t)s->span_ns;
    trc_status st = copy_stack(m, r, s->stack);
    if (st == TRC_OK)
        st = agg_add(&m->cum, s->stack, s->thread, cls, count, ns);
    if (st != TRC_OK)
        return st;
    see_time(m, s->time_ns);
    see_time(m, t);
    if (t < m->now - m->keep_ns)
        return TRC_OK; /* a repeat of long ago, written late: not in the window */
    if ((st = window_room((void **)&m->ws, &m->ws_head, m->ws_n, &m->ws_cap, sizeof *m->ws)) !=
        TRC_OK)
        return st;
    win_sample *w = &m->ws[m->ws_head + m->ws_n++];
    w->t = t;
    w->stack = s->stack;
    w->thread = s->thread;
    w->cls = cls;
    w->count = (uint32_t)count;
    w->ns = ns;
    trim(m);
    return TRC_OK;
}

static device *find_device(top_model *m, uint32_t ordinal)
{
    for (size_t i = 0; i < m->n_devs; i++)
        if (m->devs[i].device == ordinal)
            return &m->devs[i];
    if (trcu_grow((void **)&m->devs, &m->devs_cap, m->n_devs, sizeof *m->devs) != TRC_OK)
        return NULL;
    device *d = &m->devs[m->n_devs++];
    memset(d, 0, sizeof *d);
    d->device = ordinal;
    return d;
}

static trc_status on_kernel(top_model *m, const trc_gpu_kernel *k)
{
    device *d = find_device(m, k->where.device);
    if (!d)
        return TRC_ERR_NOMEM;
    m->has_gpu = 1;
    int64_t start = k->start_ns, end = k->end_ns > k->start_ns ? k->end_ns : k->start_ns;
    /* Since the start: the part past everything covered so far, exact
     * when kernels come in order of start, as one device's do. */
    if (!d->first_start || start < d->first_start)
        d->first_start = start;
    if (end > d->cum_end) {
        d->cum_busy += (uint64_t)(end - (start > d->cum_end ? start : d->cum_end));
        d->cum_end = end;
    }
    trc_status st = window_room((void **)&d->iv, &d->head, d->n, &d->cap, sizeof *d->iv);
    if (st != TRC_OK)
        return st;
    d->iv[d->head + d->n++] = (interval){start, end};
    see_time(m, start);
    see_time(m, end);
    trim(m);
    return TRC_OK;
}

static trc_status on_counter_def(top_model *m, const trc_counter_def *c)
{
    if (c->device < 0 || strcmp(c->name, "gpu.mem.used") != 0)
        return TRC_OK;
    trc_status st = trcu_grow((void **)&m->mem_counter, &m->mem_counter_cap, c->id,
                              sizeof *m->mem_counter);
    if (st == TRC_OK)
        m->mem_counter[c->id] = c->device + 1;
    return st;
}

static trc_status on_counter(top_model *m, const trc_counter_value *v)
{
    if (v->counter >= m->mem_counter_cap || !m->mem_counter[v->counter])
        return TRC_OK;
    device *d = find_device(m, (uint32_t)(m->mem_counter[v->counter] - 1));
    if (!d)
        return TRC_ERR_NOMEM;
    d->has_mem = 1;
    d->mem_used = v->value;
    return TRC_OK;
}

/* The hits handed over since the last event get a time: the end of the
 * activity when the event is the activity they were charged for (the
 * pipeline hands a hit just before its activity), else the latest time
 * read (a hit emitted when its launch call came late). */
static void stamp_hits(top_model *m, int64_t t)
{
    for (; m->wh_unstamped; m->wh_unstamped--)
        m->wh[m->wh_head + m->wh_n - m->wh_unstamped].t = t;
}

trc_status top_event(top_model *m, trc_reader *r, const trc_event *ev)
{
    trc_status st = TRC_OK;
    int64_t t = 0;
    pthread_mutex_lock(&m->lock);
    switch (ev->type) {
    case TRC_EV_SAMPLE: st = on_sample(m, r, &ev->u.sample); break;
    case TRC_EV_GPU_KERNEL:
        st = on_kernel(m, &ev->u.kernel);
        t = ev->u.kernel.end_ns;
        break;
    case TRC_EV_COUNTER_DEF: st = on_counter_def(m, ev->u.counter_def); break;
    case TRC_EV_COUNTER: st = on_counter(m, &ev->u.counter); break;
    case TRC_EV_GPU_MEMCPY:
        m->has_gpu = 1;
        see_time(m, t = ev->u.memcpy.end_ns);
        break;
    case TRC_EV_GPU_MEMSET:
        m->has_gpu = 1;
        see_time(m, t = ev->u.memset.end_ns);
        break;
    default: break;
    }
    stamp_hits(m, t ? t : m->now);
    pthread_mutex_unlock(&m->lock);
    return st;
}

trc_status top_gpu_hit(top_model *m, trc_reader *r, const exp_gpu_hit *hit)
{
    trc_status st = TRC_OK;
    pthread_mutex_lock(&m->lock);
    m->has_gpu = 1;
    exp_gpu_stats_add(&m->gpu_lines, hit);
    if (hit->origin == EXP_GPU_PYTHON && hit->stack) {
        st = copy_stack(m, r, hit->stack);
        if (st == TRC_OK)
            st = trcu_grow((void **)&m->gpu_by_stack, &m->gpu_cap, hit->stack,
                           sizeof *m->gpu_by_stack);
        if (st == TRC_OK)
            st = window_room((void **)&m->wh, &m->wh_head, m->wh_n, &m->wh_cap, sizeof *m->wh);
        if (st == TRC_OK) {
            /* A hit carries no time: the next event gives it one
             * (stamp_hits); until then it is the newest. */
            m->gpu_by_stack[hit->stack] += hit->dur_ns;
            m->wh[m->wh_head + m->wh_n++] = (win_hit){INT64_MAX, hit->stack, hit->dur_ns};
            m->wh_unstamped++;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

void top_end(top_model *m)
{
    pthread_mutex_lock(&m->lock);
    m->ended = 1;
    pthread_mutex_unlock(&m->lock);
}

top_model *top_new(int64_t keep_ns)
{
    top_model *m = trc_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        trc_free(m);
        return NULL;
    }
    m->keep_ns = keep_ns > 0 ? keep_ns : 1;
    return m;
}

void top_free(top_model *m)
{
    if (!m)
        return;
    agg_cleanup(&m->cum);
    agg_cleanup(&m->view);
    trc_free(m->ws);
    trc_free(m->wh);
    trc_free(m->gpu_by_stack);
    trc_free(m->frames);
    trc_free(m->stacks);
    for (size_t i = 0; i < m->n_devs; i++)
        trc_free(m->devs[i].iv);
    trc_free(m->devs);
    trc_free(m->mem_counter);
    trc_free(m->row_of_frame);
    trc_free(m->row_stamp);
    trc_free(m->merge);
    pthread_mutex_destroy(&m->lock);
    trc_free(m);
}

/* ---- tables ---- */

/* The row of frame id f, made when missing. */
static top_row *row_for(top_model *m, top_table *t, uint32_t f, trc_status *st)
{
    if ((*st = trcu_grow((void **)&m->row_of_frame, &m->rof_cap, f, sizeof *m->row_of_frame)) !=
        TRC_OK)
        return NULL;
    if (!m->row_of_frame[f]) {
        if ((*st = trcu_grow((void **)&t->rows, &t->cap, t->n, sizeof *t->rows)) != TRC_OK)
            return NULL;
        top_row *row = &t->rows[t->n++];
        const frame_copy *fc = &m->frames[f];
        memset(row, 0, sizeof *row);
        row->function = fc->function;
        row->file = fc->file;
        row->line = fc->line;
        row->kind = fc->kind;
        m->row_of_frame[f] = (uint32_t)t->n;
    }
    return &t->rows[m->row_of_frame[f] - 1];
}

/* Charge n samples of weight ns (and gpu_ns of GPU time) to the frames
 * of stack; stamp tells one charge from the next, for recursion. */
static trc_status charge(top_model *m, top_table *t, uint32_t stack, uint64_t n, uint64_t ns,
                         uint64_t gpu_ns, uint32_t stamp)
{
    trc_status st = TRC_OK;
    int leaf = 1;
    for (uint32_t s = stack; s && s < m->stacks_cap && m->stacks[s].frame;
         s = m->stacks[s].parent, leaf = 0) {
        uint32_t f = m->stacks[s].frame;
        top_row *row = row_for(m, t, f, &st);
        if (!row)
            return st;
        if (leaf) {
            row->own_n += n;
            row->own_ns += ns;
        }
        if ((st = trcu_grow((void **)&m->row_stamp, &m->stamp_cap, f, sizeof *m->row_stamp)) !=
            TRC_OK)
            return st;
        if (m->row_stamp[f] == stamp)
            continue;
        m->row_stamp[f] = stamp;
        row->total_n += n;
        row->total_ns += ns;
        row->gpu_ns += gpu_ns;
    }
    return TRC_OK;
}

static int cmp_name(const top_row *a, const top_row *b)
{
    int c = strcmp(a->function, b->function);
    if (!c)
        c = strcmp(a->file, b->file);
    if (!c)
        c = (a->line > b->line) - (a->line < b->line);
    return c;
}

static uint64_t sort_value(const top_row *r, top_sort key)
{
    switch (key) {
    case TOP_SORT_OWN: return r->own_n;
    case TOP_SORT_TOTAL: return r->total_n;
    case TOP_SORT_OWN_TIME: return r->own_ns;
    case TOP_SORT_TOTAL_TIME: return r->total_ns;
    case TOP_SORT_GPU: return r->gpu_ns;
    default: return 0;
    }
}

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
    const top_row *a = pa, *b = pb;
    top_sort key = *(const top_sort *)ctx;
    if (key != TOP_SORT_NAME) {
        uint64_t va = sort_value(a, key), vb = sort_value(b, key);
        if (va != vb)
            return va > vb ? -1 : 1;
    }
    return cmp_name(a, b);
}

static int cmp_interval(const void *pa, const void *pb)
{
    const interval *a = pa, *b = pb;
    return (a->start > b->start) - (a->start < b->start);
}

/* The union of d's kernels clipped to [from, to]. */
static trc_status window_busy(top_model *m, const device *d, int64_t from, int64_t to,
                              uint64_t *busy)
{
    *busy = 0;
    if (!d->n)
        return TRC_OK;
    trc_status st = trcu_grow((void **)&m->merge, &m->merge_cap, d->n, sizeof *m->merge);
    if (st != TRC_OK)
        return st;
    memcpy(m->merge, d->iv + d->head, d->n * sizeof *m->merge);
    qsort(m->merge, d->n, sizeof *m->merge, cmp_interval);
    int64_t covered = from;
    for (size_t i = 0; i < d->n; i++) {
        int64_t s = m->merge[i].start > covered ? m->merge[i].start : covered;
        int64_t e = m->merge[i].end < to ? m->merge[i].end : to;
        if (e > s) {
            *busy += (uint64_t)(e - s);
            covered = e;
        }
    }
    return TRC_OK;
}

static trc_status fill_devices(top_model *m, const top_view *v, top_table *t)
{
    int64_t from = v->since_start ? m->first : m->now - m->keep_ns;
    if (from < m->first)
        from = m->first;
    for (size_t i = 0; i < m->n_devs; i++) {
        const device *d = &m->devs[i];
        trc_status st = trcu_grow((void **)&t->devs, &t->cap_devs, t->n_devs, sizeof *t->devs);
        if (st != TRC_OK)
            return st;
        top_device *o = &t->devs[t->n_devs++];
        memset(o, 0, sizeof *o);
        o->device = d->device;
        o->has_mem = d->has_mem;
        o->mem_used = d->mem_used;
        o->span_ns = m->now > from ? (uint64_t)(m->now - from) : 0;
        if (v->since_start)
            o->busy_ns = d->cum_busy;
        else if ((st = window_busy(m, d, from, m->now, &o->busy_ns)) != TRC_OK)
            return st;
        if (o->busy_ns > o->span_ns)
            o->busy_ns = o->span_ns;
    }
    return TRC_OK;
}

static int cmp_device(const void *pa, const void *pb)
{
    const top_device *a = pa, *b = pb;
    return (a->device > b->device) - (a->device < b->device);
}

static trc_status fill(top_model *m, const top_view *v, top_table *t)
{
    trc_status st;
    const agg *src = &m->cum;
    if (!v->since_start) {
        agg_clear(&m->view);
        for (size_t i = 0; i < m->ws_n; i++) {
            const win_sample *w = &m->ws[m->ws_head + i];
            if ((st = agg_add(&m->view, w->stack, w->thread, w->cls, w->count, w->ns)) != TRC_OK)
                return st;
        }
        src = &m->view;
    }
    uint32_t stamp = 0;
    for (size_t i = 0; i < src->n; i++) {
        const agg_entry *e = &src->e[i];
        uint64_t n = 0, ns = 0;
        for (uint32_t c = 0; c < N_CLS; c++) {
            if (!v->wall && !(c & CLS_ON_CPU))
                continue;
            if (v->gil_only && !(c & CLS_GIL))
                continue;
            n += e->n[c];
            ns += e->ns[c];
        }
        if (!n)
            continue;
        t->samples += n;
        t->sample_ns += ns;
        if ((st = charge(m, t, e->stack, n, ns, 0, ++stamp)) != TRC_OK)
            return st;
    }
    if (v->since_start) {
        for (size_t s = 0; s < m->gpu_cap; s++)
            if (m->gpu_by_stack[s] &&
                (st = charge(m, t, (uint32_t)s, 0, 0, m->gpu_by_stack[s], ++stamp)) != TRC_OK)
                return st;
    } else {
        for (size_t i = 0; i < m->wh_n; i++) {
            const win_hit *h = &m->wh[m->wh_head + i];
            if ((st = charge(m, t, h->stack, 0, 0, h->ns, ++stamp)) != TRC_OK)
                return st;
        }
    }
    if ((st = fill_devices(m, v, t)) != TRC_OK)
        return st;
    int64_t from = v->since_start ? m->first : m->now - m->keep_ns;
    if (from < m->first)
        from = m->first;
    t->span_ns = m->now > from ? (uint64_t)(m->now - from) : 0;
    t->has_gpu = m->has_gpu;
    t->gpu_lines = m->gpu_lines;
    t->ended = m->ended;
    top_sort key = v->sort;
    if (t->n) /* no array yet when nothing was charged */
        qsort_r(t->rows, t->n, sizeof *t->rows, cmp_rows, &key);
    if (t->n_devs)
        qsort(t->devs, t->n_devs, sizeof *t->devs, cmp_device);
    return TRC_OK;
}

trc_status top_table_fill(top_model *m, const top_view *v, top_table *t)
{
    pthread_mutex_lock(&m->lock);
    t->n = t->n_devs = 0;
    t->samples = t->sample_ns = t->span_ns = 0;
    trim(m);
    trc_status st = fill(m, v, t);
    /* Forget the frame -> row map and the stamps for the next table. */
    if (m->row_of_frame)
        memset(m->row_of_frame, 0, m->rof_cap * sizeof *m->row_of_frame);
    if (m->row_stamp)
        memset(m->row_stamp, 0, m->stamp_cap * sizeof *m->row_stamp);
    if (st != TRC_OK)
        t->n = t->n_devs = 0;
    pthread_mutex_unlock(&m->lock);
    return st;
}

void top_table_cleanup(top_table *t)
{
    trc_free(t->rows);
    trc_free(t->devs);
    memset(t, 0, sizeof *t);
}

/* ---- the sink ---- */

static void *sink_create(const void *opts) { return (void *)opts; }
static void sink_destroy(void *self) { (void)self; }

static trc_status sink_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    return top_event(self, r, ev);
}

static trc_status sink_hit(void *self, trc_reader *r, const exp_gpu_hit *hit)
{
    return top_gpu_hit(self, r, hit);
}

static trc_status sink_finish(void *self, trc_reader *r, FILE *out)
{
    top_end(self);
    return TRC_OK;
}

const exp_sink_type exp_sink_top = {"top", sink_create, sink_event, sink_hit,
                                    sink_finish, sink_destroy, NULL};
