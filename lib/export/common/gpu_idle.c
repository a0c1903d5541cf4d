/*
 * lib/export/common/gpu_idle.c — idle GPU time charged to the feeding
 * threads' Python stacks (contract in gpu_idle.h).
 *
 * Each device keeps two sorted, disjoint interval sets (everything, and
 * kernels alone) for the horizon; each process's samples wait in arrival
 * order until that process's latest activity is a horizon past their
 * end, are then clipped against those sets and charged, and intervals
 * that no waiting sample of a process using the device can reach any
 * more are summed and dropped.  A sample charged before a
 * device was first seen counted it as idle (nothing had run on it within
 * the horizon): such charges are kept apart by how many devices were
 * known then and given to every device seen later.
 */
#include "lib/export/common/gpu_idle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/export/common/gpu_callsite.h"
#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"
#include "lib/util/spill.h"

/* Time arithmetic on hostile timestamps must not overflow: differences
 * of a later and an earlier time are taken unsigned, sums saturate. */
static uint64_t span_of(int64_t s, int64_t e) { return e > s ? (uint64_t)e - (uint64_t)s : 0; }

static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* Buckets per device at most (--gpu-busy-resolution over a hostile span
 * would otherwise ask for terabytes): 2^24, 46 h at 10 ms. */
#define MAX_BUCKETS (UINT64_C(1) << 24)

typedef struct ival {
    int64_t s, e;
} ival;

/* Sorted, disjoint, non-touching intervals; v[head..n) are live. */
typedef struct ivset {
    ival *v;
    size_t head, n, cap;
} ivset;

/* exp_gpu_idle_stream_order: the intervals a device's streams have
 * passed, summed and dropped from memory but not yet a horizon old, go
 * to a temporary file in blocks, sorted (they are retired in order), so
 * that an activity reaching back among them (a stream or process first
 * seen behind the others, as a second process's side trace is) can have
 * them back: their sums are taken off and they rejoin the set, and all
 * goes on as if they had never left. */
#define LOG_BLOCK 256

typedef struct logblk {
    int64_t off;              /* in the temporary file */
    uint32_t n;
    int64_t last_e;           /* end of its last interval */
} logblk;

typedef struct ivlog {
    logblk *b;
    size_t head, n, cap;      /* b[head..n) may still be needed */
    ival *tail;               /* not written yet, up to LOG_BLOCK */
    size_t n_tail, cap_tail;
} ivlog;

/* A stream of a device (stream_order): its latest activity start. */
typedef struct dstream {
    int64_t pid;
    uint32_t context, stream;
    int64_t latest;
} dstream;

typedef struct dev {
    uint32_t device;
    ivset all, kern;
    dstream *streams;         /* with stream_order */
    size_t n_streams, cap_streams;
    uint32_t since_scan;      /* stream_order: activities since the streams were scanned */
    int64_t held;             /* stream_order: memory holds intervals ending
                               * after it; those between retired and held
                               * are in the logs */
    ivlog log_all, log_kern;
    int64_t retired;          /* everything before is summed and dropped */
    uint64_t busy_ns, kern_ns; /* summed, clipped to the span */
    int64_t *pids;            /* processes with activities on it */
    size_t n_pids, cap_pids;
    uint64_t *buckets;        /* kernel-busy ns per bucket (bucket_ns) */
    size_t n_buckets, cap_buckets;
    double util_sum;          /* NVML "gpu.util" values in the span */
    uint64_t util_n;
} dev;

typedef struct pending {
    int64_t s, e;             /* the period the sample stands for */
    uint64_t w;               /* its weight: count x weight_ns */
    uint32_t thread, stack;
} pending;

/* A process: its samples wait, in arrival order, until its own
 * activities are a horizon past them.  The clock is the process's and
 * the activities', not the samples': trec writes a process's side trace
 * (its activities) after the samples of the whole recording, and each
 * process's side trace starts again from the recording's start. */
typedef struct proc {
    int64_t pid;
    int has_clock;
    int64_t clock;            /* the latest end of its activities */
    int64_t next_advance;     /* the cutoff at which advance runs next */
    pending *pend;
    size_t head, n, cap;
} proc;

/* A charge: slot < n_dev is a device index; PRE + k: idle while k
 * devices were known, given to devices k and later. */
#define PRE UINT32_C(0x80000000)

typedef struct charge {
    uint32_t slot, thread, stack;
    uint8_t kind;
    uint64_t ns;
} charge;

struct exp_gpu_idle {
    exp_gpu_idle_options opt;
    int have_start;
    int64_t start;            /* the first segment's start */
    int64_t lo, hi;           /* the span (hi grows while reading without --to) */
    int have_max;
    int64_t max_seen;
    dev *devs;
    size_t n_dev, cap_dev;
    proc *procs;
    size_t n_procs, cap_procs;
    trch_u64map proc_of;      /* pid -> index in procs */
    size_t n_pending;         /* samples waiting, all processes */
    charge *ch;
    size_t n_ch, cap_ch;
    trch_index ch_index;
    trch_u64map launchers;    /* thread id → index in lpid: made a launch call */
    int64_t *lpid;            /* each launcher's process */
    size_t n_lpid, cap_lpid;
    exp_gpu_callsite *waits;  /* the waiting-thread rule: who a launch
                               * without Python frames is charged to */
    uint32_t *order;          /* device indices by ordinal, after finish */
    int stream_order;         /* exp_gpu_idle_stream_order */
    uint8_t *stack_kind;      /* by stack id: 0 not looked at, 1 has a Python
                               * frame, 2 has none (a native thread's) */
    uint32_t cap_stack_kind;
    trcu_spill logf;          /* its logs' temporary file, in slots of LOG_BLOCK */
    int64_t *free_slots;      /* slots of dropped blocks, used again first */
    size_t n_free, cap_free;
    exp_gpu_idle_stats st;
};

exp_gpu_idle *exp_gpu_idle_new(const exp_gpu_idle_options *opts)
{
    exp_gpu_idle *g = trc_calloc(1, sizeof *g);
    if (!g)
        return NULL;
    if (!(g->waits = exp_gpu_callsite_new(0, NULL, NULL))) {
        trc_free(g);
        return NULL;
    }
    if (opts)
        g->opt = *opts;
    if (g->opt.horizon_ns <= 0)
        g->opt.horizon_ns = EXP_GPU_IDLE_DEFAULT_HORIZON_NS;
    return g;
}

void exp_gpu_idle_stream_order(exp_gpu_idle *g) { g->stream_order = 1; }

void exp_gpu_idle_free(exp_gpu_idle *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_dev; i++) {
        trc_free(g->devs[i].all.v);
        trc_free(g->devs[i].kern.v);
        trc_free(g->devs[i].pids);
        trc_free(g->devs[i].buckets);
        trc_free(g->devs[i].streams);
        trc_free(g->devs[i].log_all.b);
        trc_free(g->devs[i].log_all.tail);
        trc_free(g->devs[i].log_kern.b);
        trc_free(g->devs[i].log_kern.tail);
    }
    trcu_spill_close(&g->logf);
    trc_free(g->stack_kind);
    trc_free(g->free_slots);
    trc_free(g->devs);
    for (size_t i = 0; i < g->n_procs; i++)
        trc_free(g->procs[i].pend);
    trc_free(g->procs);
    trch_u64map_cleanup(&g->proc_of);
    trc_free(g->ch);
    trch_index_cleanup(&g->ch_index);
    trch_u64map_cleanup(&g->launchers);
    trc_free(g->lpid);
    trc_free(g->order);
    exp_gpu_callsite_free(g->waits);
    trc_free(g);
}

/* ---- interval sets ---- */

/* First live index whose interval ends after t. */
static size_t iv_find(const ivset *v, int64_t t)
{
    size_t a = v->head, b = v->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (v->v[m].e <= t)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

static trc_status iv_add(ivset *v, int64_t s, int64_t e)
{
    if (e <= s)
        return TRC_OK;
    /* the usual case: after everything held */
    if (v->n == v->head || v->v[v->n - 1].e < s) {
        if (v->head && v->head * 2 >= v->n) {
            memmove(v->v, v->v + v->head, (v->n - v->head) * sizeof *v->v);
            v->n -= v->head;
            v->head = 0;
        }
        trc_status st = trcu_grow((void **)&v->v, &v->cap, v->n + 1, sizeof *v->v);
        if (st != TRC_OK)
            return st;
        v->v[v->n++] = (ival){s, e};
        return TRC_OK;
    }
    /* merge with every interval that overlaps or touches [s, e) */
    size_t i = v->head, b = v->n;
    while (i < b) { /* first with end >= s */
        size_t m = i + (b - i) / 2;
        if (v->v[m].e < s)
            i = m + 1;
        else
            b = m;
    }
    size_t j = i;
    while (j < v->n && v->v[j].s <= e)
        j++;
    if (j == i) { /* no overlap: insert at i */
        trc_status st = trcu_grow((void **)&v->v, &v->cap, v->n + 1, sizeof *v->v);
        if (st != TRC_OK)
            return st;
        memmove(v->v + i + 1, v->v + i, (v->n - i) * sizeof *v->v);
        v->v[i] = (ival){s, e};
        v->n++;
        return TRC_OK;
    }
    if (v->v[i].s < s)
        s = v->v[i].s;
    if (v->v[j - 1].e > e)
        e = v->v[j - 1].e;
    v->v[i] = (ival){s, e};
    memmove(v->v + i + 1, v->v + j, (v->n - j) * sizeof *v->v);
    v->n -= j - i - 1;
    return TRC_OK;
}

/* Time of [s, e) covered by v. */
static uint64_t iv_overlap(const ivset *v, int64_t s, int64_t e)
{
    uint64_t sum = 0;
    for (size_t i = iv_find(v, s); i < v->n && v->v[i].s < e; i++) {
        int64_t a = v->v[i].s > s ? v->v[i].s : s;
        int64_t b = v->v[i].e < e ? v->v[i].e : e;
        if (b > a)
            sum += span_of(a, b);
    }
    return sum;
}

static uint64_t clipped(const exp_gpu_idle *g, int64_t s, int64_t e)
{
    if (s < g->lo)
        s = g->lo;
    if (g->opt.has_to && e > g->hi)
        e = g->hi;
    return span_of(s, e);
}

/* Makes buckets 0..k of d exist (zeroed). */
static trc_status buckets_to(dev *d, size_t k)
{
    trc_status st = trcu_grow((void **)&d->buckets, &d->cap_buckets, k, sizeof *d->buckets);
    if (st == TRC_OK && d->n_buckets <= k)
        d->n_buckets = k + 1;
    return st;
}

/* Adds the kernel-busy interval [s, e) (clipped to the span) to d's
 * buckets, or takes it off (sub: it was added before). */
static trc_status add_buckets(const exp_gpu_idle *g, dev *d, int64_t s, int64_t e, int sub)
{
    if (s < g->lo)
        s = g->lo;
    if (g->opt.has_to && e > g->hi)
        e = g->hi;
    if (e <= s)
        return TRC_OK;
    uint64_t b = (uint64_t)g->opt.bucket_ns;
    uint64_t off = span_of(g->lo, s), end_off = span_of(g->lo, e);
    while (off < end_off) {
        uint64_t k = off / b, to = (k + 1) * b;
        if (k >= MAX_BUCKETS)
            return TRC_ERR_LIMIT;
        if (to > end_off || to < off)
            to = end_off;
        trc_status st = buckets_to(d, (size_t)k);
        if (st != TRC_OK)
            return st;
        if (sub)
            d->buckets[k] -= to - off;
        else
            d->buckets[k] += to - off;
        off = to;
    }
    return TRC_OK;
}

/* Block b of a log is dropped: its slot in the file is free.  A slot
 * is only dropped with room for it (log_add grows free_slots first). */
static void slot_free(exp_gpu_idle *g, const logblk *b) { g->free_slots[g->n_free++] = b->off; }

/* Appends x to log l of device d (stream_order), dropping the blocks
 * that are a horizon old (wholly before d's retired point), so that the
 * file holds at most the horizon's intervals. */
static trc_status log_add(exp_gpu_idle *g, const dev *d, ivlog *l, ival x)
{
    trc_status st;
    if (l->n_tail == LOG_BLOCK) {
        /* every block a slot: room for all of them on the free list */
        size_t slots = (size_t)(trcu_spill_end(&g->logf) / (int64_t)(LOG_BLOCK * sizeof(ival)));
        if ((st = trcu_grow((void **)&g->free_slots, &g->cap_free, slots, sizeof *g->free_slots)) !=
            TRC_OK)
            return st;
        while (l->head < l->n && l->b[l->head].last_e <= d->retired)
            slot_free(g, &l->b[l->head++]);
        if (l->head && l->head * 2 >= l->n) {
            memmove(l->b, l->b + l->head, (l->n - l->head) * sizeof *l->b);
            l->n -= l->head;
            l->head = 0;
        }
        if ((st = trcu_grow((void **)&l->b, &l->cap, l->n, sizeof *l->b)) != TRC_OK)
            return st;
        /* a full block fills a slot: a free one again, or a new one at the end */
        int64_t off = g->n_free ? g->free_slots[g->n_free - 1] : 0;
        if (g->n_free)
            st = trcu_spill_write_at(&g->logf, off, l->tail, l->n_tail, sizeof *l->tail);
        else
            st = trcu_spill_append(&g->logf, l->tail, l->n_tail, sizeof *l->tail, &off);
        if (st != TRC_OK)
            return st;
        l->b[l->n++] = (logblk){off, (uint32_t)l->n_tail, l->tail[l->n_tail - 1].e};
        if (g->n_free)
            g->n_free--;
        l->n_tail = 0;
    }
    if ((st = trcu_grow((void **)&l->tail, &l->cap_tail, l->n_tail, sizeof *l->tail)) != TRC_OK)
        return st;
    l->tail[l->n_tail++] = x;
    return TRC_OK;
}

/* Sums and drops the intervals of v that end before t (into *sum), the
 * kernel set's also into d's buckets; into log l too when not NULL. */
static trc_status iv_retire(exp_gpu_idle *g, dev *d, ivset *v, int64_t t, uint64_t *sum,
                            ivlog *l)
{
    while (v->head < v->n && v->v[v->head].e <= t) {
        trc_status st = TRC_OK;
        *sum += clipped(g, v->v[v->head].s, v->v[v->head].e);
        if (g->opt.bucket_ns > 0 && v == &d->kern)
            st = add_buckets(g, d, v->v[v->head].s, v->v[v->head].e, 0);
        if (st == TRC_OK && l)
            st = log_add(g, d, l, v->v[v->head]);
        if (st != TRC_OK)
            return st;
        v->head++;
    }
    return TRC_OK;
}

/* Takes back from log l the intervals that end after d's retired point
 * (in order) into set v, their sums taken off *sum (and the buckets). */
static trc_status iv_unretire(exp_gpu_idle *g, dev *d, ivset *v, ivlog *l, uint64_t *sum)
{
    ival *back = NULL, *blk = NULL;
    size_t n_back = 0, cap_back = 0;
    trc_status st = TRC_OK;
    int done = 0;

    /* from the end backwards, until one ends at or before retired */
    while (!done && st == TRC_OK && (l->n_tail || l->n > l->head)) {
        ival *from;
        size_t k;
        if (l->n_tail) {
            from = l->tail;
            k = l->n_tail;
        } else {
            logblk *b = &l->b[l->n - 1];
            if (!blk && !(blk = trc_malloc(LOG_BLOCK * sizeof *blk))) {
                st = TRC_ERR_NOMEM;
                break;
            }
            if ((st = trcu_spill_read(&g->logf, b->off, blk, b->n, sizeof *blk)) != TRC_OK)
                break;
            from = blk;
            k = b->n;
        }
        size_t keep = k;
        while (keep && from[keep - 1].e > d->retired)
            keep--;
        for (size_t i = k; i > keep && st == TRC_OK; i--) {
            st = trcu_grow((void **)&back, &cap_back, n_back, sizeof *back);
            if (st == TRC_OK)
                back[n_back++] = from[i - 1];
        }
        if (st != TRC_OK)
            break;
        done = keep > 0;
        if (l->n_tail) {
            l->n_tail = keep;
        } else if (keep) {
            l->b[l->n - 1].n = (uint32_t)keep;
            l->b[l->n - 1].last_e = from[keep - 1].e;
        } else {
            slot_free(g, &l->b[--l->n]);
        }
    }
    /* back holds them newest first: into the set before what it holds */
    size_t live = v->n - v->head;
    if (st == TRC_OK && n_back)
        st = trcu_grow((void **)&v->v, &v->cap, live + n_back, sizeof *v->v);
    if (st == TRC_OK && n_back) {
        memmove(v->v + n_back, v->v + v->head, live * sizeof *v->v);
        for (size_t i = 0; i < n_back; i++) {
            ival x = back[n_back - 1 - i];
            v->v[i] = x;
            *sum -= clipped(g, x.s, x.e);
            if (g->opt.bucket_ns > 0 && v == &d->kern && st == TRC_OK)
                st = add_buckets(g, d, x.s, x.e, 1);
        }
        v->head = 0;
        v->n = live + n_back;
    }
    trc_free(back);
    trc_free(blk);
    return st;
}

/* Memory of device d holds again every interval that ends after its
 * retired point (stream_order). */
static trc_status unretire(exp_gpu_idle *g, dev *d)
{
    trc_status st = iv_unretire(g, d, &d->all, &d->log_all, &d->busy_ns);
    if (st == TRC_OK)
        st = iv_unretire(g, d, &d->kern, &d->log_kern, &d->kern_ns);
    if (st == TRC_OK)
        d->held = d->retired;
    return st;
}

/* ---- charges ---- */

static trc_status charge_add(exp_gpu_idle *g, uint32_t slot, uint8_t kind, uint32_t thread,
                             uint32_t stack, uint64_t ns)
{
    if (!ns)
        return TRC_OK;
    uint64_t hash = trch_hash_more_u64(trch_hash_u64(((uint64_t)slot << 32) | thread),
                                       ((uint64_t)kind << 32) | stack);
    trch_probe p;
    for (uint32_t i = trch_first(&g->ch_index, hash, &p); i != TRCH_NONE;
         i = trch_next(&g->ch_index, &p)) {
        charge *c = &g->ch[i];
        if (c->slot == slot && c->thread == thread && c->stack == stack && c->kind == kind) {
            c->ns += ns;
            return TRC_OK;
        }
    }
    if (g->n_ch >= UINT32_MAX - 1)
        return TRC_ERR_LIMIT;
    trc_status st = trcu_grow((void **)&g->ch, &g->cap_ch, g->n_ch + 1, sizeof *g->ch);
    if (st == TRC_OK)
        st = trch_add(&g->ch_index, hash, (uint32_t)g->n_ch);
    if (st != TRC_OK)
        return st;
    g->ch[g->n_ch++] = (charge){slot, thread, stack, kind, ns};
    return TRC_OK;
}

/* ns scaled from the period's length to the sample's weight. */
static uint64_t scaled(uint64_t ns, const pending *p)
{
    uint64_t len = span_of(p->s, p->e);
    if (len == p->w || len == 0)
        return ns;
    return (uint64_t)((long double)ns * (long double)p->w / (long double)len + 0.5L);
}

static int uses(const dev *v, int64_t pid)
{
    for (size_t i = 0; i < v->n_pids; i++)
        if (v->pids[i] == pid)
            return 1;
    return 0;
}

/* Charges sample p of process pid to every device known (only those
 * its process uses will count it: exp_gpu_idle_each). */
static trc_status charge_sample(exp_gpu_idle *g, const pending *p, int64_t pid)
{
    int64_t s = p->s < g->lo ? g->lo : p->s, e = p->e;
    for (size_t d = 0; d < g->n_dev; d++)
        if (s < g->devs[d].retired && uses(&g->devs[d], pid)) { /* counts idle: see the header */
            g->st.late_samples++;
            break;
        }
    if (g->opt.has_to && e > g->hi)
        e = g->hi;
    if (e <= s)
        return TRC_OK;
    uint64_t len = span_of(s, e);
    trc_status st = TRC_OK;
    if (g->n_dev < PRE) /* before a device is seen, it counts idle */
        st = charge_add(g, PRE + (uint32_t)g->n_dev, EXP_GPU_IDLE_NONE, p->thread, p->stack,
                        scaled(len, p));
    for (size_t d = 0; d < g->n_dev && st == TRC_OK; d++) {
        dev *v = &g->devs[d];
        uint64_t busy = iv_overlap(&v->all, s, e), kern = iv_overlap(&v->kern, s, e);
        st = charge_add(g, (uint32_t)d, EXP_GPU_IDLE_NONE, p->thread, p->stack,
                        scaled(len - busy, p));
        if (st == TRC_OK)
            st = charge_add(g, (uint32_t)d, EXP_GPU_IDLE_COPY_ONLY, p->thread, p->stack,
                            scaled(busy - kern, p));
    }
    return st;
}

/* The pre-device charge above counted the sample idle on every device
 * not yet seen; a device's charges then subtract nothing, which is why
 * the slot holds k: devices with index >= k take it. */

/* The time before which process p's samples are charged: a horizon
 * before its latest activity (none before it has one). */
static int64_t cutoff_of(const exp_gpu_idle *g, const proc *p)
{
    return p->has_clock ? add_sat(p->clock, -g->opt.horizon_ns) : INT64_MIN;
}

/* Charges p's samples that ended before cutoff. */
static trc_status charge_proc(exp_gpu_idle *g, proc *p, int64_t cutoff)
{
    while (p->head < p->n && p->pend[p->head].e <= cutoff) {
        trc_status st = charge_sample(g, &p->pend[p->head], p->pid);
        if (st != TRC_OK)
            return st;
        p->head++;
        g->n_pending--;
    }
    if (p->head == p->n) {
        p->head = p->n = 0;
    } else if (p->head * 2 >= p->n) {
        memmove(p->pend, p->pend + p->head, (p->n - p->head) * sizeof *p->pend);
        p->n -= p->head;
        p->head = 0;
    }
    return TRC_OK;
}

static const proc *proc_get(const exp_gpu_idle *g, int64_t pid)
{
    uint32_t i;
    return trch_u64map_get(&g->proc_of, (uint64_t)pid, &i) ? &g->procs[i] : NULL;
}

/* Charges the samples that ended a horizon before their process's
 * latest activity (all of them when `all`), then drops each device's
 * intervals that no waiting sample of a process using it reaches. */
static trc_status advance(exp_gpu_idle *g, int all)
{
    for (size_t i = 0; i < g->n_procs; i++) {
        proc *p = &g->procs[i];
        trc_status st = charge_proc(g, p, all ? INT64_MAX : cutoff_of(g, p));
        if (st != TRC_OK)
            return st;
    }
    if (all)
        return TRC_OK;
    for (size_t d = 0; d < g->n_dev; d++) {
        dev *v = &g->devs[d];
        int64_t keep = INT64_MAX;
        for (size_t k = 0; k < v->n_pids; k++) {
            const proc *p = proc_get(g, v->pids[k]);
            int64_t pk = p ? cutoff_of(g, p) : INT64_MIN;
            for (size_t i = p ? p->head : 0; p && i < p->n; i++)
                if (p->pend[i].s < pk)
                    pk = p->pend[i].s;
            if (pk < keep)
                keep = pk;
        }
        if (!v->n_pids || keep <= v->retired)
            continue;
        trc_status st = iv_retire(g, v, &v->all, keep, &v->busy_ns, NULL);
        if (st == TRC_OK)
            st = iv_retire(g, v, &v->kern, keep, &v->kern_ns, NULL);
        if (st != TRC_OK)
            return st;
        v->retired = keep;
        if (v->held < keep)
            v->held = keep;
    }
    return TRC_OK;
}

/* The process pid, made on first use; NULL when out of memory. */
static proc *proc_for(exp_gpu_idle *g, int64_t pid)
{
    uint32_t i;
    int added;
    if (trch_u64map_get(&g->proc_of, (uint64_t)pid, &i))
        return &g->procs[i];
    if (g->n_procs >= UINT32_MAX - 1 ||
        trcu_grow((void **)&g->procs, &g->cap_procs, g->n_procs, sizeof *g->procs) != TRC_OK ||
        trch_u64map_put(&g->proc_of, (uint64_t)pid, (uint32_t)g->n_procs, &i, &added) != TRC_OK)
        return NULL;
    proc *p = &g->procs[g->n_procs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->next_advance = INT64_MIN;
    return p;
}

static void see(exp_gpu_idle *g, int64_t t)
{
    if (!g->have_max || t > g->max_seen) {
        g->max_seen = t;
        g->have_max = 1;
    }
}

/* ---- events ---- */

static dev *device(exp_gpu_idle *g, uint32_t ordinal, int64_t pid)
{
    dev *v = NULL;
    for (size_t i = 0; i < g->n_dev; i++)
        if (g->devs[i].device == ordinal)
            v = &g->devs[i];
    if (!v) {
        if (g->n_dev >= PRE - 1 ||
            trcu_grow((void **)&g->devs, &g->cap_dev, g->n_dev + 1, sizeof *g->devs) != TRC_OK)
            return NULL;
        v = &g->devs[g->n_dev++];
        memset(v, 0, sizeof *v);
        v->device = ordinal;
        v->retired = v->held = INT64_MIN;
    }
    for (size_t i = 0; i < v->n_pids; i++)
        if (v->pids[i] == pid)
            return v;
    if (trcu_grow((void **)&v->pids, &v->cap_pids, v->n_pids + 1, sizeof *v->pids) != TRC_OK)
        return NULL;
    v->pids[v->n_pids++] = pid;
    return v;
}

/* exp_gpu_idle_stream_order: notes that w's stream has started an
 * activity at s (it starts nothing earlier from now on, nor more than a
 * horizon before its process's latest activity), then moves device v's
 * intervals that every stream of v has passed to its logs.  Only while
 * no sample waits (on_sample ends stream_order). */
static trc_status stream_retire(exp_gpu_idle *g, dev *v, const trc_gpu_where *w, int64_t s)
{
    dstream *x = NULL;
    for (size_t i = 0; i < v->n_streams && !x; i++)
        if (v->streams[i].stream == w->stream && v->streams[i].context == w->context &&
            v->streams[i].pid == w->pid)
            x = &v->streams[i];
    if (!x) {
        trc_status st = trcu_grow((void **)&v->streams, &v->cap_streams, v->n_streams,
                                  sizeof *v->streams);
        if (st != TRC_OK)
            return st;
        x = &v->streams[v->n_streams++];
        *x = (dstream){w->pid, w->context, w->stream, s};
    }
    if (s > x->latest)
        x->latest = s;
    /* the scan below looks at every stream: once in 64 activities (64
     * more intervals held at most) keeps it cheap */
    if (++v->since_scan < 64)
        return TRC_OK;
    v->since_scan = 0;
    /* before the first segment the span's start is unknown: the buckets
     * of what is retired could not be placed */
    if (g->n_pending || !g->have_start)
        return TRC_OK;
    int64_t keep = INT64_MAX;
    for (size_t i = 0; i < v->n_streams; i++) {
        const proc *p = proc_get(g, v->streams[i].pid);
        int64_t cut = p ? cutoff_of(g, p) : INT64_MIN, k = v->streams[i].latest;
        if (cut > k) /* a stream long quiet: the horizon bounds it */
            k = cut;
        if (k < keep)
            keep = k;
    }
    if (keep <= v->held)
        return TRC_OK;
    trc_status st = iv_retire(g, v, &v->all, keep, &v->busy_ns, &v->log_all);
    if (st == TRC_OK)
        st = iv_retire(g, v, &v->kern, keep, &v->kern_ns, &v->log_kern);
    if (st == TRC_OK)
        v->held = keep;
    return st;
}

static trc_status on_activity(exp_gpu_idle *g, const trc_gpu_where *w, int64_t s, int64_t e,
                              int kernel)
{
    g->st.activities++;
    dev *v = device(g, w->device, w->pid);
    proc *p = proc_for(g, w->pid);
    if (!v || !p)
        return TRC_ERR_NOMEM;
    if (e <= s)
        return TRC_OK;
    if (!p->has_clock || e > p->clock) {
        p->has_clock = 1;
        p->clock = e;
    }
    if (e <= v->retired) {
        g->st.late++;
        return TRC_OK;
    }
    int64_t began = s;
    if (s < v->retired)
        s = v->retired; /* the part before was summed already */
    trc_status st = TRC_OK;
    if (g->stream_order && s < v->held) /* reaches back among the logged */
        st = unretire(g, v);
    if (st == TRC_OK)
        st = iv_add(&v->all, s, e);
    if (st == TRC_OK && kernel)
        st = iv_add(&v->kern, s, e);
    if (st == TRC_OK && g->stream_order)
        st = stream_retire(g, v, w, began);
    size_t held = (v->all.n - v->all.head) + (v->kern.n - v->kern.head);
    if (held > g->st.peak_intervals)
        g->st.peak_intervals = held;
    see(g, e);
    /* in steps of 1/16 horizon of the process's clock, so that the scan
     * of what waits (advance) costs little per activity */
    int64_t cut = cutoff_of(g, p);
    if (st == TRC_OK && cut >= p->next_advance) {
        st = advance(g, 0);
        p->next_advance = add_sat(cut, g->opt.horizon_ns / 16);
    }
    return st;
}

/* Whether a sample's stack can say why a device is idle: stack 0 (a
 * Python thread between frames) or one with a Python frame; a native
 * thread's one "[native thread NAME]" frame cannot (autograd's and
 * NCCL's threads feed devices, and sleep while they idle).  Looked at
 * once per stack; *st gets TRC_ERR_NOMEM when the cache cannot grow. */
static int python_stack(exp_gpu_idle *g, const trc_reader *r, uint32_t stack, trc_status *st)
{
    *st = TRC_OK;
    if (!stack || !r)
        return 1;
    if (stack >= g->cap_stack_kind) {
        uint32_t old = g->cap_stack_kind;
        if (trcu_grow32(&g->stack_kind, &g->cap_stack_kind, stack, sizeof *g->stack_kind) != TRC_OK) {
            *st = TRC_ERR_NOMEM;
            return 1;
        }
        memset(g->stack_kind + old, 0, g->cap_stack_kind - old);
    }
    if (!g->stack_kind[stack]) {
        int py = 0;
        for (const trc_stack *s = trc_reader_stack(r, stack); s && !py;
             s = s->parent ? trc_reader_stack(r, s->parent) : NULL) {
            const trc_frame *f = trc_reader_frame(r, s->frame);
            py = f && f->kind == TRC_FRAME_PYTHON;
        }
        g->stack_kind[stack] = py ? 1 : 2;
    }
    return g->stack_kind[stack] == 1;
}

static trc_status on_sample(exp_gpu_idle *g, const trc_reader *r, const trc_sample *smp)
{
    trc_status pst;
    if (!python_stack(g, r, smp->stack, &pst))
        return TRC_OK; /* a native thread's: charged nowhere */
    if (pst != TRC_OK)
        return pst;
    /* a sample may reach back among the logged intervals: memory holds
     * them again, and the horizon alone retires from now on */
    for (size_t i = 0; g->stream_order && i < g->n_dev; i++) {
        trc_status st = unretire(g, &g->devs[i]);
        if (st != TRC_OK)
            return st;
    }
    g->stream_order = 0;
    uint64_t n = smp->count ? smp->count : 1;
    g->st.samples += n;
    uint64_t period = smp->span_ns + smp->weight_ns;
    if (period < smp->span_ns || period > INT64_MAX)
        period = INT64_MAX;
    pending p = {smp->time_ns, add_sat(smp->time_ns, (int64_t)period),
                 smp->weight_ns * n, smp->thread, smp->stack};
    if (p.e <= p.s)
        return TRC_OK;
    const trc_thread *t = r ? trc_reader_thread(r, smp->thread) : NULL;
    proc *x = proc_for(g, t ? t->pid : -1);
    if (!x)
        return TRC_ERR_NOMEM;
    trc_status st = trcu_grow((void **)&x->pend, &x->cap, x->n, sizeof *x->pend);
    if (st != TRC_OK)
        return st;
    x->pend[x->n++] = p;
    if (++g->n_pending > g->st.peak_pending)
        g->st.peak_pending = g->n_pending;
    see(g, p.e);
    return TRC_OK;
}

/* NVML's utilisation counter of a device, for the comparison; values
 * outside the span are left out at the end. */
static trc_status on_counter(exp_gpu_idle *g, const trc_reader *r, const trc_counter_value *v)
{
    const trc_counter_def *d = r ? trc_reader_counter(r, v->counter) : NULL;
    if (!d || d->device < 0 || !d->name || strcmp(d->name, "gpu.util") != 0)
        return TRC_OK;
    if (v->time_ns < g->lo || (g->opt.has_to && v->time_ns >= g->hi))
        return TRC_OK;
    dev *x = NULL;
    for (size_t i = 0; i < g->n_dev && !x; i++)
        if (g->devs[i].device == (uint32_t)d->device)
            x = &g->devs[i];
    if (!x) { /* a device with no activity yet: known from now on */
        if (g->n_dev >= PRE - 1 ||
            trcu_grow((void **)&g->devs, &g->cap_dev, g->n_dev + 1, sizeof *g->devs) != TRC_OK)
            return TRC_ERR_NOMEM;
        x = &g->devs[g->n_dev++];
        memset(x, 0, sizeof *x);
        x->device = (uint32_t)d->device;
        x->retired = x->held = INT64_MIN;
    }
    x->util_sum += v->value;
    x->util_n++;
    return TRC_OK;
}

static trc_status on_launch(exp_gpu_idle *g, const trc_reader *r, uint32_t thread)
{
    uint32_t idx;
    if (trch_u64map_get(&g->launchers, thread, &idx))
        return TRC_OK;
    trc_status st = trcu_grow((void **)&g->lpid, &g->cap_lpid, g->n_lpid + 1, sizeof *g->lpid);
    if (st != TRC_OK)
        return st;
    int added;
    st = trch_u64map_put(&g->launchers, thread, (uint32_t)g->n_lpid, &idx, &added);
    if (st != TRC_OK)
        return st;
    const trc_thread *t = trc_reader_thread(r, thread);
    g->lpid[g->n_lpid++] = t ? t->pid : -1;
    return TRC_OK;
}

/* A launch or copy call: its thread feeds the devices of its process,
 * and so does, for a call without Python frames (autograd, NCCL), the
 * thread of the process that the call-site view charges it to (the one
 * waiting at that moment: gpu_callsite.h), whose samples say what the
 * Python code feeding the device was doing. */
static trc_status on_launch_call(exp_gpu_idle *g, const trc_reader *r, const trc_api_call *a)
{
    trc_status st = on_launch(g, r, a->thread);
    if (st != TRC_OK || (a->stack && !(a->flags & TRC_API_NO_PYTHON)))
        return st;
    const trc_thread *t = trc_reader_thread(r, a->thread);
    uint32_t w = t ? exp_gpu_callsite_waiter(g->waits, t->pid, a->thread, a->start_ns, NULL) : 0;
    return w ? on_launch(g, r, w) : TRC_OK;
}

trc_status exp_gpu_idle_event(exp_gpu_idle *g, const trc_reader *r, const trc_event *ev)
{
    trc_status st = TRC_OK;
    switch (ev->type) {
    case TRC_EV_SEGMENT:
        if (!g->have_start) {
            g->have_start = 1;
            g->start = ev->u.segment->start_ns;
            g->lo = g->opt.has_from ? add_sat(g->start, g->opt.from_ns) : g->start;
            g->hi = g->opt.has_to && g->opt.to_ns >= 0 ? add_sat(g->start, g->opt.to_ns) : g->lo;
            g->opt.has_to = g->opt.has_to && g->opt.to_ns >= 0;
        }
        return TRC_OK;
    case TRC_EV_SEGMENT_END:
        see(g, ev->u.segment_end.end_ns);
        break;
    case TRC_EV_SAMPLE:
        st = on_sample(g, r, &ev->u.sample);
        if (st == TRC_OK)
            st = exp_gpu_callsite_note_wait(g->waits, r, ev);
        break;
    case TRC_EV_COUNTER:
        st = on_counter(g, r, &ev->u.counter);
        break;
    case TRC_EV_API_CALL:
        st = exp_gpu_callsite_note_wait(g->waits, r, ev);
        if (st == TRC_OK && (ev->u.api.flags & TRC_API_LAUNCH))
            st = on_launch_call(g, r, &ev->u.api);
        see(g, ev->u.api.end_ns);
        break;
    case TRC_EV_GPU_KERNEL:
        st = on_activity(g, &ev->u.kernel.where, ev->u.kernel.start_ns, ev->u.kernel.end_ns, 1);
        break;
    case TRC_EV_GPU_MEMCPY:
        st = on_activity(g, &ev->u.memcpy.where, ev->u.memcpy.start_ns, ev->u.memcpy.end_ns, 0);
        break;
    case TRC_EV_GPU_MEMSET:
        st = on_activity(g, &ev->u.memset.where, ev->u.memset.start_ns, ev->u.memset.end_ns, 0);
        break;
    default:
        return TRC_OK;
    }
    return st;
}

static int by_ordinal(const void *a, const void *b, void *devs)
{
    const dev *d = devs;
    uint32_t x = d[*(const uint32_t *)a].device, y = d[*(const uint32_t *)b].device;
    return (x > y) - (x < y);
}

trc_status exp_gpu_idle_finish(exp_gpu_idle *g, const trc_reader *r)
{
    (void)r;
    if (!g->opt.has_to && g->have_max && g->max_seen > g->hi)
        g->hi = g->max_seen;
    if (!g->have_start) { /* no segment: the span starts with what was seen */
        int64_t first = INT64_MAX;
        for (size_t i = 0; i < g->n_procs; i++)
            if (g->procs[i].head < g->procs[i].n && g->procs[i].pend[g->procs[i].head].s < first)
                first = g->procs[i].pend[g->procs[i].head].s;
        if (first != INT64_MAX)
            g->lo = first;
    }
    trc_status st = advance(g, 1);
    if (st != TRC_OK)
        return st;
    for (size_t d = 0; d < g->n_dev; d++) {
        dev *v = &g->devs[d];
        st = iv_retire(g, v, &v->all, INT64_MAX, &v->busy_ns, NULL);
        if (st == TRC_OK)
            st = iv_retire(g, v, &v->kern, INT64_MAX, &v->kern_ns, NULL);
        /* every bucket of the span exists, idle ones too */
        if (st == TRC_OK && g->opt.bucket_ns > 0 && g->hi > g->lo)
        {
            uint64_t last = (span_of(g->lo, g->hi) - 1) / (uint64_t)g->opt.bucket_ns;
            st = last >= MAX_BUCKETS ? TRC_ERR_LIMIT : buckets_to(v, (size_t)last);
        }
        if (st != TRC_OK)
            return st;
    }
    if (g->n_dev) {
        g->order = trc_malloc(g->n_dev * sizeof *g->order);
        if (!g->order)
            return TRC_ERR_NOMEM;
        for (size_t i = 0; i < g->n_dev; i++)
            g->order[i] = (uint32_t)i;
        qsort_r(g->order, g->n_dev, sizeof *g->order, by_ordinal, g->devs);
    }
    return TRC_OK;
}

uint32_t exp_gpu_idle_devices(const exp_gpu_idle *g) { return g->order ? (uint32_t)g->n_dev : 0; }

/* A feeder of device v: a launcher in one of v's processes. */
static int feeds(const exp_gpu_idle *g, const dev *v, uint32_t thread)
{
    uint32_t idx;
    if (!thread || !trch_u64map_get(&g->launchers, thread, &idx))
        return 0;
    return uses(v, g->lpid[idx]);
}

/* Whether charge c counts for device index d. */
static int charge_for(const charge *c, uint32_t d)
{
    return c->slot == d || (c->slot >= PRE && c->slot - PRE <= d);
}

void exp_gpu_idle_device_at(const exp_gpu_idle *g, uint32_t i, exp_gpu_idle_device *out)
{
    memset(out, 0, sizeof *out);
    if (!g->order || i >= g->n_dev)
        return;
    uint32_t d = g->order[i];
    const dev *v = &g->devs[d];
    out->device = v->device;
    out->span_ns = span_of(g->lo, g->hi);
    out->busy_ns = v->busy_ns;
    out->kernel_ns = v->kern_ns;
    out->copy_only_ns = v->busy_ns - v->kern_ns;
    out->idle_ns = out->span_ns > v->busy_ns ? out->span_ns - v->busy_ns : 0;
    out->nvml_util_n = v->util_n;
    out->nvml_util_mean = v->util_n ? v->util_sum / (double)v->util_n : 0.0;
    for (size_t k = 0; k < g->n_ch; k++) {
        const charge *c = &g->ch[k];
        if (!charge_for(c, d) || !feeds(g, v, c->thread))
            continue;
        if (c->kind == EXP_GPU_IDLE_NONE)
            out->charged_idle_ns += c->ns;
        else
            out->charged_copy_only_ns += c->ns;
    }
}

trc_status exp_gpu_idle_each(const exp_gpu_idle *g, exp_gpu_idle_fn fn, void *ctx)
{
    if (!g->order)
        return TRC_OK;
    for (size_t i = 0; i < g->n_dev; i++) {
        uint32_t d = g->order[i];
        const dev *v = &g->devs[d];
        for (size_t k = 0; k < g->n_ch; k++) {
            const charge *c = &g->ch[k];
            if (!charge_for(c, d) || !feeds(g, v, c->thread))
                continue;
            trc_status st = fn(ctx, v->device, (exp_gpu_idle_kind)c->kind, c->thread, c->stack,
                               c->ns);
            if (st != TRC_OK)
                return st;
        }
    }
    return TRC_OK;
}

int64_t exp_gpu_idle_span_start(const exp_gpu_idle *g) { return g->lo; }

const uint64_t *exp_gpu_idle_busy_buckets(const exp_gpu_idle *g, uint32_t i, size_t *n)
{
    *n = 0;
    if (!g->order || i >= g->n_dev || g->opt.bucket_ns <= 0)
        return NULL;
    const dev *v = &g->devs[g->order[i]];
    *n = v->n_buckets;
    return v->buckets;
}

void exp_gpu_idle_get_stats(const exp_gpu_idle *g, exp_gpu_idle_stats *out) { *out = g->st; }

void exp_gpu_idle_root(char *buf, size_t n, uint32_t device, exp_gpu_idle_kind kind)
{
    snprintf(buf, n, "[GPU %u %s]", (unsigned)device,
             kind == EXP_GPU_IDLE_NONE ? "idle" : "copies only");
}
