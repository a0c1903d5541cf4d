/*
 * lib/export/common/gpu_callsite.c — pairs GPU activities with their launching
 * API calls by (pid, correlation id) (contract and policy in
 * gpu_callsite.h; records in spec §7.12).
 *
 * State, all proportional to what is waiting for a partner:
 *   entries   one per (pid, correlation) waiting: either a launch call
 *             whose activity has not come yet, or the activities (a
 *             chain of `pact`s) whose call has not come yet.  A pool with
 *             a free list, found through the shared hash index
 *             (lib/util/hashtab.h, entries removed as they pair), and linked
 *             oldest-first so that giving up old ones costs nothing per
 *             record.
 *   recent    a direct-mapped cache of calls already matched (or never
 *             worth keeping), for further activities of the same call.
 *   graphs    the same, keyed by (pid, graph id) instead: a graph replay
 *             starts hundreds of kernels under one correlation id while
 *             other launches run, which can evict its `recent` slot
 *             before its last kernel comes; graphs are few.
 *   names     leaf names interned in an name_pool (ids dense from 1).
 *   waits     per thread that had Python frames, all its sample runs
 *             and the sync calls it made with a stack, for the launches
 *             without Python frames (the waiting-thread rule,
 *             docs/design/cupti.md §5.1); kept across segments, since a
 *             process's side trace follows the segment that holds its
 *             samples.  Nothing is cut by age: a run is 24 bytes and
 *             repeats of one stack and state extend a run, so memory
 *             follows the changes of stack, not the samples, and every
 *             launch finds the runs it needs however late it comes.  A
 *             segment whose header says it holds no GPU records (trec
 *             without GPU recording) keeps none.
 */
#include "lib/export/common/gpu_callsite.h"

#include <stdio.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/common/name_pool.h"
#include "lib/export/common/gpu_units.h"
#include "lib/util/hashtab.h"

#define RECENT_SLOTS 1024u  /* power of two */
#define GRAPH_SLOTS 256u    /* power of two */
#define NIL 0u              /* links are index + 1 */

typedef struct entry {
    int64_t pid;
    uint64_t seq;             /* record number at creation (age) */
    uint32_t corr;
    uint32_t thread, stack, flags;
    int64_t start;            /* the call's start (trace clock) */
    uint32_t acts, acts_tail; /* pending activities waiting for the call */
    uint32_t older, newer;    /* age list; `newer` links the free list */
    uint8_t has_api;
} entry;

typedef struct pact {
    uint64_t dur_ns;
    uint32_t name_id;
    uint32_t next;            /* next pending activity of the entry / free list */
    uint32_t graph;           /* CUDA graph of a kernel, 0 = none */
    uint32_t device;
    uint8_t kind;
} pact;

typedef struct recent {
    int64_t pid;
    uint32_t corr;            /* 0 = empty */
    uint32_t thread, stack;
    uint32_t graph;           /* in `graphs` only: the key, with pid */
    int64_t start;            /* the call's start */
} recent;

/* Consecutive samples of a thread with one stack and one CPU state:
 * from the first sample to one period after the last. */
#define RUN_WEIGHT_MAX ((1u << 29) - 1) /* ns; a longer period is kept as this */
typedef struct wait_run {
    int64_t from, to;         /* [from, to) */
    uint32_t stack;           /* != 0 */
    unsigned weight : 29;     /* its samples' period (ns): how far ahead of
                               * a launch the next run may begin to speak
                               * for it (wait_rank) */
    unsigned on_cpu : 1;
    unsigned known : 1;       /* the leaf is a known waiting function */
    unsigned python : 1;      /* the stack holds a Python frame: only then
                               * can the thread be charged as a waiter
                               * (a native thread's one "[native thread
                               * NAME]" frame says nothing of who waits) */
} wait_run;
_Static_assert(sizeof(wait_run) == 24, "a run stays 24 bytes (docs/gpu.md)");

/* A sync call (TRC_API_SYNC) the thread made with a Python stack: it
 * waited for the device during [from, to). */
typedef struct wait_sync {
    int64_t from, to;
    uint32_t stack;
} wait_sync;

typedef struct wait_line {
    int64_t pid;
    uint32_t thread;          /* reader id */
    uint32_t n, cap;          /* runs, in time order */
    wait_run *runs;
    uint32_t n_syncs, cap_syncs; /* sync calls, in time order */
    wait_sync *syncs;
} wait_line;

struct exp_gpu_callsite {
    exp_gpu_emit_fn emit;
    void *ctx;
    trc_reader *r;            /* the reader last fed (borrowed) */
    uint64_t window, seq;
    entry *ents;
    uint32_t n_ents, cap_ents, free_ents;
    uint32_t oldest, newest;
    trch_index index;         /* hash_key -> entry index */
    uint32_t live;
    pact *acts;
    uint32_t n_acts, cap_acts, free_acts;
    recent *recent;
    recent *graphs;
    name_pool names;
    wait_line *lines;         /* threads with Python samples */
    uint32_t n_lines, cap_lines;
    uint32_t *line_of;        /* reader thread id -> index in lines + 1 */
    uint32_t cap_line_of;
    exp_gpu_callsite_stats st;
    int no_gpu_segment;       /* the current segment declares no GPU records
                               * (metadata gpu.activity=off, spec [R-HDR-5]):
                               * its samples can never be a waiting thread's */
};

static uint32_t hash_key(int64_t pid, uint32_t corr)
{
    return trch_fold(trch_hash_u64(((uint64_t)pid << 32) ^ ((uint64_t)pid >> 32) ^ corr));
}

exp_gpu_callsite *exp_gpu_callsite_new(uint64_t window, exp_gpu_emit_fn emit, void *ctx)
{
    exp_gpu_callsite *c = trc_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->recent = trc_calloc(RECENT_SLOTS, sizeof *c->recent);
    c->graphs = trc_calloc(GRAPH_SLOTS, sizeof *c->graphs);
    if (!c->recent || !c->graphs) {
        trc_free(c->recent);
        trc_free(c->graphs);
        trc_free(c);
        return NULL;
    }
    c->emit = emit;
    c->ctx = ctx;
    c->window = window ? window : EXP_GPU_DEFAULT_WINDOW;
    name_pool_init(&c->names);
    return c;
}

void exp_gpu_callsite_free(exp_gpu_callsite *c)
{
    if (!c)
        return;
    trc_free(c->ents);
    trch_index_cleanup(&c->index);
    trc_free(c->acts);
    trc_free(c->recent);
    trc_free(c->graphs);
    name_pool_cleanup(&c->names);
    for (uint32_t i = 0; i < c->n_lines; i++) {
        trc_free(c->lines[i].runs);
        trc_free(c->lines[i].syncs);
    }
    trc_free(c->lines);
    trc_free(c->line_of);
    trc_free(c);
}

void exp_gpu_callsite_get_stats(const exp_gpu_callsite *c, exp_gpu_callsite_stats *out)
{
    *out = c->st;
    out->live = c->live;
}

/* ---- the index ------------------------------------------------------ */

static entry *find(const exp_gpu_callsite *c, int64_t pid, uint32_t corr)
{
    trch_probe p;
    for (uint32_t i = trch_first(&c->index, hash_key(pid, corr), &p); i != TRCH_NONE;
         i = trch_next(&c->index, &p)) {
        if (c->ents[i].corr == corr && c->ents[i].pid == pid)
            return &c->ents[i];
    }
    return NULL;
}

/* ---- entries and pending activities --------------------------------- */

static trc_status new_entry(exp_gpu_callsite *c, int64_t pid, uint32_t corr, entry **out)
{
    trc_status st = trch_reserve(&c->index, c->live + 1);
    if (st != TRC_OK)
        return st;
    uint32_t idx;
    if (c->free_ents) {
        idx = c->free_ents - 1;
        c->free_ents = c->ents[idx].newer;
    } else {
        if (c->n_ents == c->cap_ents) {
            if (c->cap_ents >= UINT32_MAX / 2)
                return TRC_ERR_LIMIT;
            if (trcu_grow32(&c->ents, &c->cap_ents, c->n_ents, sizeof *c->ents) != TRC_OK)
                return TRC_ERR_NOMEM;
        }
        idx = c->n_ents++;
    }
    entry *e = &c->ents[idx];
    memset(e, 0, sizeof *e);
    e->pid = pid;
    e->corr = corr;
    e->seq = c->seq;
    e->older = c->newest;
    if (c->newest)
        c->ents[c->newest - 1].newer = idx + 1;
    else
        c->oldest = idx + 1;
    c->newest = idx + 1;
    (void)trch_add(&c->index, hash_key(pid, corr), idx); /* cannot fail after the reserve */
    c->live++;
    if (c->live > c->st.peak_live)
        c->st.peak_live = c->live;
    *out = e;
    return TRC_OK;
}

/* Unlinks e and returns it (and its activity chain) to the free lists. */
static void drop_entry(exp_gpu_callsite *c, entry *e)
{
    uint32_t idx = (uint32_t)(e - c->ents);
    trch_remove(&c->index, hash_key(e->pid, e->corr), idx);
    if (e->older)
        c->ents[e->older - 1].newer = e->newer;
    else
        c->oldest = e->newer;
    if (e->newer)
        c->ents[e->newer - 1].older = e->older;
    else
        c->newest = e->older;
    if (e->acts) {
        c->acts[e->acts_tail - 1].next = c->free_acts;
        c->free_acts = e->acts;
    }
    e->acts = e->acts_tail = 0;
    e->corr = 0;
    e->newer = c->free_ents;
    c->free_ents = idx + 1;
    c->live--;
}

static trc_status add_pact(exp_gpu_callsite *c, entry *e, exp_gpu_kind kind, uint32_t name_id,
                           uint64_t dur_ns, uint32_t graph, uint32_t device)
{
    uint32_t idx;
    if (c->free_acts) {
        idx = c->free_acts - 1;
        c->free_acts = c->acts[idx].next;
    } else {
        if (c->n_acts == c->cap_acts) {
            if (c->cap_acts >= UINT32_MAX / 2)
                return TRC_ERR_LIMIT;
            if (trcu_grow32(&c->acts, &c->cap_acts, c->n_acts, sizeof *c->acts) != TRC_OK)
                return TRC_ERR_NOMEM;
        }
        idx = c->n_acts++;
    }
    pact *a = &c->acts[idx];
    a->dur_ns = dur_ns;
    a->name_id = name_id;
    a->graph = graph;
    a->device = device;
    a->kind = (uint8_t)kind;
    a->next = NIL;
    if (e->acts_tail)
        c->acts[e->acts_tail - 1].next = idx + 1;
    else
        e->acts = idx + 1;
    e->acts_tail = idx + 1;
    return TRC_OK;
}

/* ---- the waiting-thread rule --------------------------------------- */

/* Python functions whose frame, as a sample's leaf, says that the thread
 * waits for the GPU or for another thread (PyTorch's backward, which
 * waits for autograd's threads: from PyTorch 2.2 its Python leaf is
 * torch/autograd/graph.py's _engine_run_backward; a thread join; a
 * condition, event or lock wait; a device synchronisation) rather than
 * idles elsewhere.  Thread.join's leaf is _wait_for_tstate_lock before
 * 3.13. */
static int known_waiting(const char *fn)
{
    static const char *const names[] = {"backward", "run_backward", "_engine_run_backward",
                                        "join", "_wait_for_tstate_lock", "wait", "acquire",
                                        "synchronize"};
    for (size_t i = 0; fn && i < sizeof names / sizeof *names; i++)
        if (strcmp(fn, names[i]) == 0)
            return 1;
    return 0;
}

/* Whether a stack holds a Python frame (walked once per run of samples
 * with one stack, not per sample). */
static int has_python_frame(const trc_reader *r, uint32_t stack)
{
    for (const trc_stack *s = trc_reader_stack(r, stack); s;
         s = s->parent ? trc_reader_stack(r, s->parent) : NULL) {
        const trc_frame *f = trc_reader_frame(r, s->frame);
        if (f && f->kind == TRC_FRAME_PYTHON)
            return 1;
    }
    return 0;
}

static int leaf_is_waiting(const trc_reader *r, uint32_t stack)
{
    const trc_stack *s = trc_reader_stack(r, stack);
    const trc_frame *f = s ? trc_reader_frame(r, s->frame) : NULL;
    return f && known_waiting(f->function);
}

/* The line of thread `thread` (reader id), made on first use; NULL in
 * *out when the reader does not know the thread. */
static trc_status line_for(exp_gpu_callsite *c, const trc_reader *r, uint32_t thread,
                           wait_line **out)
{
    *out = NULL;
    if (thread < c->cap_line_of && c->line_of[thread]) {
        *out = &c->lines[c->line_of[thread] - 1];
        return TRC_OK;
    }
    const trc_thread *t = trc_reader_thread(r, thread);
    if (!t)
        return TRC_OK;
    if (c->n_lines >= UINT32_MAX / 2)
        return TRC_ERR_LIMIT;
    if (trcu_grow32(&c->line_of, &c->cap_line_of, thread, sizeof *c->line_of) != TRC_OK ||
        trcu_grow32(&c->lines, &c->cap_lines, c->n_lines, sizeof *c->lines) != TRC_OK)
        return TRC_ERR_NOMEM;
    c->lines[c->n_lines] = (wait_line){ .pid = t->pid, .thread = thread };
    c->line_of[thread] = ++c->n_lines;
    *out = &c->lines[c->n_lines - 1];
    return TRC_OK;
}

/* hostile times: saturate instead of overflowing */
static int64_t end_of(int64_t from, uint64_t len)
{
    __int128 end = (__int128)from + len;
    return end > INT64_MAX ? INT64_MAX : (int64_t)end;
}

/* Whether a segment's writer says it recorded no GPU activity or API
 * calls (spec [R-HDR-5]): then none will follow for its samples, and
 * keeping their runs would only make memory grow with a CPU-only trace. */
static int segment_has_no_gpu(const trc_segment *sg)
{
    for (size_t i = 0; sg && i < sg->n_metadata; i++)
        if (sg->metadata[i].key && strcmp(sg->metadata[i].key, "gpu.activity") == 0)
            return sg->metadata[i].value && strcmp(sg->metadata[i].value, "off") == 0;
    return 0;
}

/* A sample of thread `thread` (reader id, of pid): extends its last run
 * when it continues it, else starts a run.  Samples out of time order
 * are not kept. */
static trc_status on_sample(exp_gpu_callsite *c, const trc_reader *r, const trc_sample *s)
{
    if (!s->stack || !s->thread || c->no_gpu_segment)
        return TRC_OK;
    wait_line *l;
    trc_status st = line_for(c, r, s->thread, &l);
    if (st != TRC_OK || !l)
        return st;
    uint64_t len = s->weight_ns > UINT64_MAX - s->span_ns ? UINT64_MAX
                                                          : s->span_ns + s->weight_ns;
    int64_t to = end_of(s->time_ns, len);
    unsigned on_cpu = (s->flags & TRC_SAMPLE_ON_CPU) != 0;
    unsigned weight = s->weight_ns > RUN_WEIGHT_MAX ? RUN_WEIGHT_MAX : (unsigned)s->weight_ns;
    if (l->n) {
        wait_run *last = &l->runs[l->n - 1];
        if (s->time_ns < last->from)
            return TRC_OK;
        if (last->stack == s->stack && last->on_cpu == on_cpu && s->time_ns <= last->to) {
            if (to > last->to)
                last->to = to;
            last->weight = weight;
            return TRC_OK;
        }
    }
    if (trcu_grow32(&l->runs, &l->cap, l->n, sizeof *l->runs) != TRC_OK)
        return l->n >= UINT32_MAX / 2 - 1 ? TRC_ERR_LIMIT : TRC_ERR_NOMEM;
    l->runs[l->n++] = (wait_run){ .from = s->time_ns, .to = to, .stack = s->stack,
                                  .weight = weight, .on_cpu = on_cpu,
                                  .known = (unsigned)leaf_is_waiting(r, s->stack),
                                  .python = (unsigned)has_python_frame(r, s->stack) };
    return TRC_OK;
}

/* A sync call with a Python stack: its thread waits for the device for
 * the call's duration. */
static trc_status on_sync(exp_gpu_callsite *c, const trc_reader *r, const trc_api_call *a)
{
    wait_line *l;
    trc_status st = line_for(c, r, a->thread, &l);
    if (st != TRC_OK || !l || a->end_ns <= a->start_ns)
        return st;
    if (l->n_syncs && a->start_ns < l->syncs[l->n_syncs - 1].from)
        return TRC_OK; /* out of time order: not kept */
    if (trcu_grow32(&l->syncs, &l->cap_syncs, l->n_syncs, sizeof *l->syncs) != TRC_OK)
        return l->n_syncs >= UINT32_MAX / 2 - 1 ? TRC_ERR_LIMIT : TRC_ERR_NOMEM;
    l->syncs[l->n_syncs++] = (wait_sync){ a->start_ns, a->end_ns, a->stack };
    return TRC_OK;
}

/* How many runs of l start at or before t: the covering run, if any, is
 * the last of them, and the next run the one after. */
static uint32_t runs_from(const wait_line *l, int64_t t)
{
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->runs[mid].from <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The sync call of l in progress at t, or NULL (calls of one thread do
 * not overlap: the latest one started at or before t). */
static const wait_sync *sync_at(const wait_line *l, int64_t t)
{
    uint32_t lo = 0, hi = l->n_syncs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->syncs[mid].from <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const wait_sync *w = &l->syncs[lo - 1];
    return t < w->to ? w : NULL;
}

/* How surely a thread waits for a launch, lower first
 * (docs/design/cupti.md §5.1). */
enum {
    RANK_KNOWN = 0,           /* in a sync call, or sampled in a known waiting function */
    RANK_OFF = 1,             /* off CPU elsewhere: it may only be idle */
    RANK_ON = 2,              /* on CPU */
    RANK_NONE = 3             /* no Python stack at the launch: not a candidate */
};

/* A known waiting function counts on CPU too: PyTorch's calling thread
 * is mostly on CPU inside _engine_run_backward (the engine runs the
 * graph's CPU part there) while autograd's device thread launches, as
 * an H200 run showed. */
static unsigned run_rank(const wait_run *w)
{
    return w->known ? RANK_KNOWN : w->on_cpu ? RANK_ON : RANK_OFF;
}

/* How surely a thread waits for the launch at t (the enum above), and
 * *stack, the stack to charge: the sync call's own when one covers t,
 * else that of the thread's sample nearest to t.
 *
 * A sample says what the thread did at its own moment; between two
 * samples a period apart the state changed somewhere.  Charging the
 * sample before t lags by half a period on average; the nearest sample,
 * before or after (the next run's first, within one period), does not.
 * On an H200 training step of about 1 ms sampled every 1 ms, the share
 * of autograd's kernels charged to the loss.backward() line (where all
 * of them belong) went from 45 % to 63 % with it.  It also bridges a gap
 * of missed ticks of up to one period. */
static unsigned wait_rank(const wait_line *l, int64_t t, uint32_t *stack)
{
    const wait_sync *y = sync_at(l, t);
    if (y) {
        *stack = y->stack;
        return RANK_KNOWN;
    }
    uint32_t k = runs_from(l, t);
    const wait_run *w = k && t < l->runs[k - 1].to ? &l->runs[k - 1] : NULL;
    const wait_run *next = k < l->n ? &l->runs[k] : NULL;
    /* the covering run's last sample is one period before its end */
    int64_t before = w ? t - (w->to - (int64_t)w->weight) : INT64_MAX;
    int64_t after = next ? next->from - t : INT64_MAX;
    if (next && after <= (int64_t)next->weight && after < before)
        w = next;
    if (!w || !w->python)
        return RANK_NONE;
    *stack = w->stack;
    return run_rank(w);
}

/* The waiting thread for a launch at t by `launcher` of pid: among the
 * other threads of pid with a Python stack at t, the lowest wait_rank,
 * then the lowest reader id (the first seen: the main thread in a
 * recording).  0 when none. */
static uint32_t waiter_at(const exp_gpu_callsite *c, int64_t pid, uint32_t launcher, int64_t t,
                          uint32_t *stack)
{
    uint32_t best = 0;
    unsigned best_rank = RANK_NONE;
    for (uint32_t i = 0; i < c->n_lines; i++) {
        const wait_line *l = &c->lines[i];
        if (l->pid != pid || l->thread == launcher)
            continue;
        uint32_t s = 0;
        unsigned rank = wait_rank(l, t, &s);
        if (rank < best_rank || (rank == best_rank && rank < RANK_NONE && l->thread < best)) {
            best = l->thread;
            best_rank = rank;
            *stack = s;
        }
    }
    return best;
}

uint32_t exp_gpu_callsite_waiter(const exp_gpu_callsite *c, int64_t pid, uint32_t launcher,
                                 int64_t t, uint32_t *stack)
{
    uint32_t s = 0, w = waiter_at(c, pid, launcher, t, &s);
    if (stack)
        *stack = w ? s : 0;
    return w;
}

trc_status exp_gpu_callsite_note_wait(exp_gpu_callsite *c, const trc_reader *r,
                                      const trc_event *ev)
{
    if (ev->type == TRC_EV_SAMPLE)
        return on_sample(c, r, &ev->u.sample);
    const trc_api_call *a = &ev->u.api;
    if (ev->type == TRC_EV_API_CALL && (a->flags & TRC_API_SYNC) && a->stack &&
        !(a->flags & TRC_API_NO_PYTHON))
        return on_sync(c, r, a);
    return TRC_OK;
}

/* ---- emitting ------------------------------------------------------- */

/* h's device's entry in s, made when new: kept sorted by device number
 * (a handful of devices: a linear search is enough). */
static exp_gpu_device_share *device_share(exp_gpu_callsite_stats *s, uint32_t device)
{
    uint32_t i = 0;
    while (i < s->n_dev && s->dev[i].device < device)
        i++;
    if (i < s->n_dev && s->dev[i].device == device)
        return &s->dev[i];
    if (s->n_dev >= EXP_GPU_SHARE_DEVICES) {
        /* past the devices kept one by one: all together, last */
        exp_gpu_device_share *o = &s->dev[EXP_GPU_SHARE_DEVICES];
        if (s->n_dev == EXP_GPU_SHARE_DEVICES) {
            *o = (exp_gpu_device_share){.device = EXP_GPU_OTHER_DEVICES};
            s->n_dev++;
        }
        return o;
    }
    memmove(&s->dev[i + 1], &s->dev[i], (s->n_dev - i) * sizeof *s->dev);
    s->dev[i] = (exp_gpu_device_share){.device = device};
    s->n_dev++;
    return &s->dev[i];
}

void exp_gpu_stats_add(exp_gpu_callsite_stats *s, const exp_gpu_hit *h)
{
    exp_gpu_device_share *d = device_share(s, h->device);
    if (h->origin == EXP_GPU_PYTHON) {
        s->python++;
        if (h->waiter) {
            s->via++;
            s->via_ns += h->dur_ns;
            d->via_ns += h->dur_ns;
        } else {
            s->direct_ns += h->dur_ns;
            d->direct_ns += h->dur_ns;
        }
    } else {
        if (h->origin == EXP_GPU_NO_PYTHON)
            s->no_python++;
        else
            s->unknown++;
        s->none_ns += h->dur_ns;
        d->none_ns += h->dur_ns;
    }
    s->gpu_ns += h->dur_ns;
}

/* part / all in hundredths of a percent, rounded half up (128-bit: no
 * overflow at any duration). */
static unsigned long long basis_points(uint64_t part, uint64_t all)
{
    return (unsigned long long)(((unsigned __int128)part * 10000u + all / 2) / all);
}

/* "W% <words>(direct D%, via a waiting thread V%, none N%)" into buf
 * (n > 0); returns the length written, at most n - 1. */
static size_t share_of(uint64_t direct_ns, uint64_t via_ns, uint64_t none_ns, const char *words,
                       char *buf, size_t n)
{
    uint64_t all = direct_ns + via_ns + none_ns;
    unsigned long long d = basis_points(direct_ns, all), v = basis_points(via_ns, all);
    unsigned long long no = basis_points(none_ns, all);
    unsigned long long with = basis_points(direct_ns + via_ns, all);
    int len = snprintf(buf, n,
                       "%llu.%02llu%% %s(direct %llu.%02llu%%, via a "
                       "waiting thread %llu.%02llu%%, none %llu.%02llu%%)",
                       with / 100, with % 100, words, d / 100, d % 100, v / 100, v % 100,
                       no / 100, no % 100);
    return len < 0 ? 0 : (size_t)len < n ? (size_t)len : n - 1;
}

const char *exp_gpu_share_part_str(const exp_gpu_callsite_stats *s, int part, char *buf,
                                   size_t n)
{
    if (!n)
        return buf;
    *buf = 0;
    if (part < 0) {
        if (!(s->direct_ns + s->via_ns + s->none_ns))
            snprintf(buf, n, "no GPU time to give a Python line");
        else
            share_of(s->direct_ns, s->via_ns, s->none_ns, "of GPU time has a Python line ", buf,
                     n);
        return buf;
    }
    if ((uint32_t)part >= s->n_dev || (uint32_t)part > EXP_GPU_SHARE_DEVICES)
        return buf;
    const exp_gpu_device_share *d = &s->dev[part];
    if (!(d->direct_ns + d->via_ns + d->none_ns))
        return buf;
    int len = d->device == EXP_GPU_OTHER_DEVICES ? snprintf(buf, n, "other devices: ")
                                                 : snprintf(buf, n, "device %u: ", d->device);
    if (len < 0 || (size_t)len >= n)
        return buf;
    share_of(d->direct_ns, d->via_ns, d->none_ns, "", buf + len, n - (size_t)len);
    return buf;
}

int exp_gpu_share_device_part(const exp_gpu_callsite_stats *s, uint32_t device)
{
    int other = -1;
    for (uint32_t i = 0; i < s->n_dev && i <= EXP_GPU_SHARE_DEVICES; i++) {
        if (s->dev[i].device == device)
            return (int)i;
        if (s->dev[i].device == EXP_GPU_OTHER_DEVICES)
            other = (int)i;
    }
    return other;
}

const char *exp_gpu_share_str(const exp_gpu_callsite_stats *s, char *buf, size_t n)
{
    if (!n)
        return buf;
    exp_gpu_share_part_str(s, -1, buf, n);
    size_t at = strlen(buf);
    /* one device: the line above is that device's (and reads as before
     * there were several) */
    for (uint32_t i = 0; s->n_dev > 1 && i < s->n_dev && at + 1 < n; i++) {
        char part[EXP_GPU_SHARE_PART_MAX];
        if (!*exp_gpu_share_part_str(s, (int)i, part, sizeof part))
            continue;
        int len = snprintf(buf + at, n - at, "; %s", part);
        if (len < 0 || (size_t)len >= n - at)
            break;
        at += (size_t)len;
    }
    return buf;
}

static trc_status emit_graph(exp_gpu_callsite *c, int64_t pid, uint32_t thread, uint32_t stack,
                             exp_gpu_origin origin, exp_gpu_kind kind, uint32_t name_id,
                             uint64_t dur_ns, int64_t start, uint32_t graph, uint32_t device)
{
    exp_gpu_hit h = {pid, thread, origin == EXP_GPU_PYTHON ? stack : 0, origin, kind, name_id,
                     name_pool_str(&c->names, name_id), dur_ns, 0, graph, device};
    if (origin == EXP_GPU_UNKNOWN)
        h.thread = 0;
    if (origin == EXP_GPU_NO_PYTHON && c->n_lines) {
        uint32_t wstack = 0, w = waiter_at(c, pid, thread, start, &wstack);
        if (w) {
            h.origin = EXP_GPU_PYTHON;
            h.stack = wstack;
            h.waiter = w;
        }
    }
    exp_gpu_stats_add(&c->st, &h);
    return c->emit ? c->emit(c->ctx, c->r, &h) : TRC_OK;
}

/* An activity not of a CUDA graph. */
static trc_status emit(exp_gpu_callsite *c, int64_t pid, uint32_t thread, uint32_t stack,
                       exp_gpu_origin origin, exp_gpu_kind kind, uint32_t name_id,
                       uint64_t dur_ns, int64_t start, uint32_t device)
{
    return emit_graph(c, pid, thread, stack, origin, kind, name_id, dur_ns, start, 0, device);
}

static exp_gpu_origin origin_of(uint32_t stack)
{
    return stack ? EXP_GPU_PYTHON : EXP_GPU_NO_PYTHON;
}

static recent *graph_slot(exp_gpu_callsite *c, int64_t pid, uint32_t graph)
{
    return &c->graphs[hash_key(pid, graph) & (GRAPH_SLOTS - 1)];
}

/* An activity of graph `graph` (0 = none) was charged to the call
 * (pid, corr): later kernels of that replay find the call here. */
static void remember_graph(exp_gpu_callsite *c, uint32_t graph, int64_t pid, uint32_t corr,
                           uint32_t thread, uint32_t stack, int64_t start)
{
    if (graph)
        *graph_slot(c, pid, graph) = (recent){ pid, corr, thread, stack, graph, start };
}

/* Emits e's pending activities as launched by (thread, stack), or as
 * UNKNOWN when the entry has no call. */
static trc_status emit_pending(exp_gpu_callsite *c, const entry *e)
{
    exp_gpu_origin o = e->has_api ? origin_of(e->stack) : EXP_GPU_UNKNOWN;
    for (uint32_t i = e->acts; i; i = c->acts[i - 1].next) {
        const pact *a = &c->acts[i - 1];
        trc_status st = emit_graph(c, e->pid, e->thread, e->stack, o, (exp_gpu_kind)a->kind,
                                   a->name_id, a->dur_ns, e->start, a->graph, a->device);
        if (st != TRC_OK)
            return st;
        if (e->has_api)
            remember_graph(c, a->graph, e->pid, e->corr, e->thread, e->stack, e->start);
    }
    return TRC_OK;
}

static recent *recent_slot(exp_gpu_callsite *c, int64_t pid, uint32_t corr)
{
    return &c->recent[hash_key(pid, corr) & (RECENT_SLOTS - 1)];
}

static void remember(exp_gpu_callsite *c, int64_t pid, uint32_t corr, uint32_t thread,
                     uint32_t stack, int64_t start)
{
    recent *s = recent_slot(c, pid, corr);
    s->pid = pid;
    s->corr = corr;
    s->thread = thread;
    s->stack = stack;
    s->start = start;
}

/* Gives up entries older than the window (all of them when everything). */
static trc_status retire(exp_gpu_callsite *c, int everything)
{
    while (c->oldest) {
        entry *e = &c->ents[c->oldest - 1];
        if (!everything && e->seq + c->window > c->seq)
            break;
        trc_status st = emit_pending(c, e);
        c->st.retired++;
        drop_entry(c, e);
        if (st != TRC_OK)
            return st;
    }
    return TRC_OK;
}

/* ---- feeding -------------------------------------------------------- */

static trc_status on_api(exp_gpu_callsite *c, trc_reader *r, const trc_api_call *a)
{
    c->st.api_calls++;
    const trc_thread *t = trc_reader_thread(r, a->thread);
    if (a->correlation == 0 || !t)
        return TRC_OK;
    uint32_t stack = a->flags & TRC_API_NO_PYTHON ? 0 : a->stack;
    if ((a->flags & TRC_API_SYNC) && stack) {
        trc_status sst = on_sync(c, r, a);
        if (sst != TRC_OK)
            return sst;
    }
    entry *e = find(c, t->pid, a->correlation);
    if (e && e->has_api) {
        /* a second call with the same id: prefer the one with Python frames */
        if (!e->stack && stack) {
            e->thread = a->thread;
            e->stack = stack;
            e->start = a->start_ns;
        }
        return TRC_OK;
    }
    if (e) {
        e->has_api = 1;
        e->thread = a->thread;
        e->stack = stack;
        e->flags = a->flags;
        e->start = a->start_ns;
        trc_status st = emit_pending(c, e);
        remember(c, e->pid, e->corr, e->thread, e->stack, e->start);
        drop_entry(c, e);
        return st;
    }
    /* Calls that launch nothing and carry no stack would only make
     * later activities "<no Python stack>" instead of "<unknown launch>":
     * the cache is enough for them, the map is for launches. */
    if (!(a->flags & TRC_API_LAUNCH) && !stack) {
        remember(c, t->pid, a->correlation, a->thread, 0, a->start_ns);
        return TRC_OK;
    }
    trc_status st = new_entry(c, t->pid, a->correlation, &e);
    if (st != TRC_OK)
        return st;
    e->has_api = 1;
    e->thread = a->thread;
    e->stack = stack;
    e->flags = a->flags;
    e->start = a->start_ns;
    return TRC_OK;
}

static trc_status on_activity(exp_gpu_callsite *c, const trc_gpu_where *w, exp_gpu_kind kind,
                              const char *name, int64_t start, int64_t end, uint32_t graph)
{
    uint32_t name_id;
    /* unsigned: hostile times (a fuzzed trace) must not overflow */
    uint64_t dur = end > start ? (uint64_t)end - (uint64_t)start : 0;
    c->st.activities++;
    trc_status st = name_pool_intern(&c->names, name, &name_id);
    if (st != TRC_OK)
        return st;
    if (w->correlation == 0)
        return emit(c, w->pid, 0, 0, EXP_GPU_UNKNOWN, kind, name_id, dur, start, w->device);
    entry *e = find(c, w->pid, w->correlation);
    if (e && e->has_api) {
        st = emit_graph(c, e->pid, e->thread, e->stack, origin_of(e->stack), kind, name_id, dur,
                        e->start, graph, w->device);
        remember(c, e->pid, e->corr, e->thread, e->stack, e->start);
        remember_graph(c, graph, e->pid, e->corr, e->thread, e->stack, e->start);
        drop_entry(c, e);
        return st;
    }
    if (!e) {
        const recent *s = recent_slot(c, w->pid, w->correlation);
        const recent *gs = graph ? graph_slot(c, w->pid, graph) : NULL;
        if (!(s->corr == w->correlation && s->pid == w->pid) && gs &&
            gs->graph == graph && gs->corr == w->correlation && gs->pid == w->pid)
            s = gs;
        if (s->corr == w->correlation && s->pid == w->pid) {
            remember_graph(c, graph, s->pid, s->corr, s->thread, s->stack, s->start);
            return emit_graph(c, s->pid, s->thread, s->stack, origin_of(s->stack), kind,
                              name_id, dur, s->start, graph, w->device);
        }
        st = new_entry(c, w->pid, w->correlation, &e);
        if (st != TRC_OK)
            return st;
    }
    return add_pact(c, e, kind, name_id, dur, graph, w->device);
}

trc_status exp_gpu_callsite_event(exp_gpu_callsite *c, trc_reader *r, const trc_event *ev)
{
    trc_status st = TRC_OK;
    c->r = r;
    switch (ev->type) {
    case TRC_EV_SEGMENT:
        /* correlation ids start again with each recorded process */
        st = retire(c, 1);
        memset(c->recent, 0, RECENT_SLOTS * sizeof *c->recent);
        memset(c->graphs, 0, GRAPH_SLOTS * sizeof *c->graphs);
        c->no_gpu_segment = segment_has_no_gpu(ev->u.segment);
        return st; /* the sample runs stay: see the file comment */
    case TRC_EV_SAMPLE:
        return on_sample(c, r, &ev->u.sample);
    case TRC_EV_API_CALL:
        c->seq++;
        st = on_api(c, r, &ev->u.api);
        break;
    case TRC_EV_GPU_KERNEL: {
        const trc_gpu_kernel *k = &ev->u.kernel;
        c->seq++;
        st = on_activity(c, &k->where, EXP_GPU_KERNEL,
                         k->name && *k->name ? k->name : "<unnamed kernel>", k->start_ns,
                         k->end_ns, k->graph);
        break;
    }
    case TRC_EV_GPU_MEMCPY: {
        const trc_gpu_memcpy *m = &ev->u.memcpy;
        c->seq++;
        st = on_activity(c, &m->where, EXP_GPU_MEMCPY, gpu_copy_name(m->copy_kind),
                         m->start_ns, m->end_ns, 0);
        break;
    }
    case TRC_EV_GPU_MEMSET: {
        const trc_gpu_memset *m = &ev->u.memset;
        c->seq++;
        st = on_activity(c, &m->where, EXP_GPU_MEMSET, gpu_memset_name(), m->start_ns,
                         m->end_ns, 0);
        break;
    }
    default:
        return TRC_OK;
    }
    if (st != TRC_OK)
        return st;
    return retire(c, 0);
}

trc_status exp_gpu_callsite_finish(exp_gpu_callsite *c)
{
    return retire(c, 1);
}
