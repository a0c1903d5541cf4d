/*
 * lib/export/folded/stats.c — per-function statistics from samples, the model
 * behind trc-stats and trc2pstats (docs/design/outputs.md §3; meanings of ncalls,
 * tottime and cumtime for sampled data in folded.h and
 * docs/converters.md).  Contract in folded.h.
 *
 * Streaming: while reading, one accumulator per reader stack id (samples,
 * sampled time, entries observed) and the last stack per thread; nothing
 * per sample.  exp_stats_finish walks each stack once to spread those
 * over functions (recursion counted once per sample in cumtime) and over
 * caller→callee edges.
 *
 * GPU activities (exp_stats_add_gpu) get their own accumulators, keyed by
 * (launching stack, leaf name) and walked at finish like a stack node
 * with one more frame; their ncalls count activities (folded.h).
 *
 * Entries: when a thread's sample differs from its previous kept sample,
 * the two stacks share a prefix (their lowest common ancestor in the
 * reader's stack tree).  Every frame of the new stack below that prefix
 * is a new entry, except the first one when it is the same function as
 * the old stack's frame at that depth: a caller's frame is unchanged
 * while a call runs, so only the callee's own line moved.
 *
 * Gaps: a sample that could not be read is not in the trace at all (the
 * recorder writes a LOSS record instead), so the comparison is with the
 * last sample that was: a gap of invalid samples starts no call.  A
 * single sample without Python frames between two samples with Python
 * frames is a gap too: a running thread read at the instant its frame
 * pointer moves can show an empty stack, and taking that at its word
 * ended and restarted every call on the stack (main() called once showed
 * hundreds of calls).  So such a sample counts its time and its own entry
 * (<no Python frames>) but the next sample is compared with the stack
 * before it.  Two or more empty samples in a row (or one folded sample
 * of count 2 or more) are the thread really leaving Python: the calls
 * ended at the first of them.  Streaming still: one pending flag per
 * thread.
 */
#include "lib/export/folded/folded.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/hashtab.h"

#define NO_FN UINT32_MAX

typedef struct node_acc {
    uint64_t samples, weight_ns, entries;
} node_acc;

typedef struct gpu_acc {
    uint32_t stack;          /* 0 when origin is not EXP_GPU_PYTHON */
    uint8_t origin;
    const char *name;        /* leaf, borrowed */
    uint64_t count, weight_ns;
} gpu_acc;

typedef struct thread_acc {
    uint32_t last_stack;     /* the stack the next sample is compared with */
    uint8_t seen;
    uint8_t empty_once;      /* the last sample was one empty sample after last_stack */
} thread_acc;

struct exp_stats {
    node_acc *nodes;
    size_t cap_nodes;
    thread_acc *threads;
    size_t cap_threads;
    uint32_t *fn_of_frame;   /* frame id → function index + 1; 0 = not yet */
    size_t cap_fof;
    uint32_t no_python_fn;   /* function index + 1 of EXP_NO_PYTHON_FRAMES */
    exp_func *funcs;
    size_t n_funcs, cap_funcs;
    trch_index fn_index;      /* (file, first line, function) → function */
    exp_edge *edges;
    size_t n_edges, cap_edges;
    trch_u64map edge_map;     /* caller << 32 | callee → edge */
    gpu_acc *gpu;
    size_t n_gpu, cap_gpu;
    trch_u64map gpu_map;      /* stack << 32 | name id → gpu_acc (Python stacks) */
    trch_u64map gpu_root_map; /* origin << 32 | name id → gpu_acc (the others) */
    trch_u64map gpu_threads;  /* launching threads seen */
    trch_u64map gpu_pids;     /* processes of the activities */
    trch_u64map pids;         /* every process counted (after finish), keys as int64_t */
    exp_stats_totals totals;
    int finished;
};

static const char TILDE[] = "~";

exp_stats *exp_stats_new(void)
{
    exp_stats *s = trc_calloc(1, sizeof *s);
    return s;
}

void exp_stats_free(exp_stats *s)
{
    if (!s)
        return;
    trc_free(s->nodes);
    trc_free(s->threads);
    trc_free(s->fn_of_frame);
    trc_free(s->funcs);
    trc_free(s->edges);
    trch_index_cleanup(&s->fn_index);
    trch_u64map_cleanup(&s->edge_map);
    trc_free(s->gpu);
    trch_u64map_cleanup(&s->gpu_map);
    trch_u64map_cleanup(&s->gpu_root_map);
    trch_u64map_cleanup(&s->gpu_threads);
    trch_u64map_cleanup(&s->gpu_pids);
    trch_u64map_cleanup(&s->pids);
    trc_free(s);
}

/* The function index for (file, first_line, function), added if new. */
static trc_status intern_fn(exp_stats *s, const char *file, uint32_t first_line,
                            const char *function, uint32_t *out)
{
    uint64_t h = trch_hash_more(trch_hash_bytes(file, strlen(file) + 1), function,
                                strlen(function));
    h = trch_hash_more_u64(h, first_line);
    trch_probe p;

    for (uint32_t i = trch_first(&s->fn_index, h, &p); i != TRCH_NONE;
         i = trch_next(&s->fn_index, &p)) {
        const exp_func *f = &s->funcs[i];
        if (f->first_line == first_line && strcmp(f->file, file) == 0 &&
            strcmp(f->function, function) == 0) {
            *out = i;
            return TRC_OK;
        }
    }
    if (s->n_funcs >= UINT32_MAX - 1)
        return TRC_ERR_LIMIT;
    trc_status st = trcu_grow((void **)&s->funcs, &s->cap_funcs, s->n_funcs, sizeof *s->funcs);
    if (st != TRC_OK)
        return st;
    st = trch_add(&s->fn_index, h, (uint32_t)s->n_funcs);
    if (st != TRC_OK)
        return st;
    exp_func *f = &s->funcs[s->n_funcs];
    memset(f, 0, sizeof *f);
    f->file = file;
    f->first_line = first_line;
    f->function = function;
    *out = (uint32_t)s->n_funcs++;
    return TRC_OK;
}

static trc_status fn_of(exp_stats *s, const trc_reader *r, uint32_t frame_id, uint32_t *out)
{
    if (frame_id < s->cap_fof && s->fn_of_frame[frame_id]) {
        *out = s->fn_of_frame[frame_id] - 1;
        return TRC_OK;
    }
    const trc_frame *f = trc_reader_frame(r, frame_id);
    const char *function = f && f->function && *f->function ? f->function : "<unknown>";
    const char *file = TILDE;
    uint32_t line = 0;
    if (f && f->kind == TRC_FRAME_PYTHON && f->file && *f->file) {
        file = f->file;
        line = f->first_line;
    }
    trc_status st = intern_fn(s, file, line, function, out);
    if (st != TRC_OK)
        return st;
    st = trcu_grow((void **)&s->fn_of_frame, &s->cap_fof, frame_id, sizeof *s->fn_of_frame);
    if (st != TRC_OK)
        return st;
    s->fn_of_frame[frame_id] = *out + 1;
    return TRC_OK;
}

/* Function of a stack node's frame (NO_FN if the node is unknown). */
static trc_status node_fn(exp_stats *s, const trc_reader *r, uint32_t id, uint32_t *out)
{
    const trc_stack *n = trc_reader_stack(r, id);
    *out = NO_FN;
    return n ? fn_of(s, r, n->frame, out) : TRC_OK;
}

/* Counts new entries along `stack` against the thread's previous stack
 * `prev` (see the file comment).  Nodes up to `stack` are allocated. */
static trc_status count_entries(exp_stats *s, const trc_reader *r, uint32_t prev,
                                uint32_t stack)
{
    const trc_stack *a = trc_reader_stack(r, prev), *b = trc_reader_stack(r, stack);
    uint32_t ca = 0, cb = 0;
    if (stack == 0) {
        s->nodes[0].entries++;
        return TRC_OK;
    }
    if (!a)
        a = trc_reader_stack(r, 0);
    while (b && a && b->depth > a->depth) {
        s->nodes[b->id].entries++;
        cb = b->id;
        b = trc_reader_stack(r, b->parent);
    }
    while (a && b && a->depth > b->depth) {
        ca = a->id;
        a = trc_reader_stack(r, a->parent);
    }
    while (a && b && a->id != b->id) {
        ca = a->id;
        a = trc_reader_stack(r, a->parent);
        s->nodes[b->id].entries++;
        cb = b->id;
        b = trc_reader_stack(r, b->parent);
    }
    if (ca && cb) {
        uint32_t fa, fb;
        trc_status st = node_fn(s, r, ca, &fa);
        if (st == TRC_OK)
            st = node_fn(s, r, cb, &fb);
        if (st != TRC_OK)
            return st;
        if (fa != NO_FN && fa == fb)
            s->nodes[cb].entries--; /* the same call, its line moved */
    }
    return TRC_OK;
}

trc_status exp_stats_add(exp_stats *s, const trc_reader *r, const trc_sample *smp)
{
    uint64_t n = smp->count ? smp->count : 1;
    uint64_t w = smp->weight_ns * n;
    trc_status st = trcu_grow((void **)&s->nodes, &s->cap_nodes, smp->stack, sizeof *s->nodes);
    if (st == TRC_OK)
        st = trcu_grow((void **)&s->threads, &s->cap_threads, smp->thread, sizeof *s->threads);
    if (st != TRC_OK)
        return st;
    thread_acc *t = &s->threads[smp->thread];
    int had = t->seen;
    uint32_t prev = t->last_stack;
    if (!had) {
        t->seen = 1;
        s->totals.threads++;
    }
    if (smp->stack == 0 && had && prev != 0 && n == 1 && !t->empty_once) {
        /* maybe a gap (see the file comment): the calls in progress go
         * on unless the next sample is empty too */
        t->empty_once = 1;
        s->nodes[0].entries++;
    } else if (smp->stack == 0 && t->empty_once) {
        t->empty_once = 0; /* the second empty sample: Python was left */
        t->last_stack = 0;
    } else {
        t->empty_once = 0;
        t->last_stack = smp->stack;
        if (!had || prev != smp->stack) {
            st = count_entries(s, r, had ? prev : 0, smp->stack);
            if (st != TRC_OK)
                return st; /* "no previous sample" counts as the empty stack */
        }
    }
    node_acc *a = &s->nodes[smp->stack];
    a->samples += n;
    a->weight_ns += w;
    if (!s->totals.samples || smp->time_ns < s->totals.first_ns)
        s->totals.first_ns = smp->time_ns;
    int64_t end = (int64_t)((uint64_t)smp->time_ns + smp->span_ns); /* modulo 2^64 */
    if (!s->totals.samples || end > s->totals.last_ns)
        s->totals.last_ns = end;
    s->totals.samples += n;
    s->totals.weight_ns += w;
    return TRC_OK;
}

trc_status exp_stats_add_gpu(exp_stats *s, const trc_reader *r, const exp_gpu_hit *h)
{
    int python = h->origin == EXP_GPU_PYTHON && h->stack != 0;
    trch_u64map *map = python ? &s->gpu_map : &s->gpu_root_map;
    uint64_t key = ((uint64_t)(python ? h->stack : (uint32_t)h->origin) << 32) | h->name_id;
    uint32_t idx, v;
    int added;
    if (s->finished)
        return TRC_ERR_ARG;
    if (s->n_gpu >= UINT32_MAX - 1)
        return TRC_ERR_LIMIT;
    trc_status st = trcu_grow((void **)&s->gpu, &s->cap_gpu, s->n_gpu, sizeof *s->gpu);
    if (st == TRC_OK)
        st = trch_u64map_put(map, key, (uint32_t)s->n_gpu, &idx, &added);
    if (st == TRC_OK && h->thread)
        st = trch_u64map_put(&s->gpu_threads, h->thread, 0, &v, &added);
    if (st == TRC_OK)
        st = trch_u64map_put(&s->gpu_pids, (uint64_t)h->pid, 0, &v, &added);
    if (st != TRC_OK)
        return st;
    gpu_acc *a = &s->gpu[idx];
    if (idx == s->n_gpu) {
        a->stack = python ? h->stack : 0;
        a->origin = (uint8_t)(python ? EXP_GPU_PYTHON
                                     : h->origin == EXP_GPU_PYTHON ? EXP_GPU_NO_PYTHON
                                                                   : h->origin);
        a->name = h->name;
        s->n_gpu++;
    }
    a->count++;
    a->weight_ns += h->dur_ns;
    s->totals.gpu_activities++;
    s->totals.gpu_ns += h->dur_ns;
    s->totals.weight_ns += h->dur_ns;
    return TRC_OK;
}

static trc_status edge_of(exp_stats *s, uint32_t caller, uint32_t callee, exp_edge **out)
{
    uint32_t idx;
    int added;
    trc_status st = trcu_grow((void **)&s->edges, &s->cap_edges, s->n_edges, sizeof *s->edges);
    if (st != TRC_OK)
        return st;
    st = trch_u64map_put(&s->edge_map, ((uint64_t)caller << 32) | callee, (uint32_t)s->n_edges,
                        &idx, &added);
    if (st != TRC_OK)
        return st;
    if (added) {
        memset(&s->edges[idx], 0, sizeof s->edges[idx]);
        s->edges[idx].caller = caller;
        s->edges[idx].callee = callee;
        s->n_edges++;
    }
    *out = &s->edges[idx];
    return TRC_OK;
}

static int fn_key_cmp(const exp_func *x, const exp_func *y)
{
    int c = strcmp(x->file, y->file);
    if (c)
        return c;
    if (x->first_line != y->first_line)
        return x->first_line < y->first_line ? -1 : 1;
    return strcmp(x->function, y->function);
}

static int order_cmp(const void *a, const void *b, void *funcs)
{
    const exp_func *f = funcs;
    return fn_key_cmp(&f[*(const uint32_t *)a], &f[*(const uint32_t *)b]);
}

static int edge_cmp(const void *a, const void *b)
{
    const exp_edge *x = a, *y = b;
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return 0;
}

/* Sort functions by key and edges by (callee, caller), renumbering. */
static trc_status sort_tables(exp_stats *s)
{
    trc_status st = TRC_OK;
    uint32_t *order = trc_malloc((s->n_funcs + 1) * sizeof *order);
    uint32_t *newpos = trc_malloc((s->n_funcs + 1) * sizeof *newpos);
    exp_func *sorted = trc_malloc((s->n_funcs + 1) * sizeof *sorted);
    if (!order || !newpos || !sorted) {
        st = TRC_ERR_NOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < s->n_funcs; i++)
        order[i] = i;
    if (s->n_funcs)
        qsort_r(order, s->n_funcs, sizeof *order, order_cmp, s->funcs);
    for (uint32_t i = 0; i < s->n_funcs; i++) {
        sorted[i] = s->funcs[order[i]];
        newpos[order[i]] = i;
    }
    for (size_t i = 0; i < s->n_edges; i++) {
        s->edges[i].caller = newpos[s->edges[i].caller];
        s->edges[i].callee = newpos[s->edges[i].callee];
    }
    if (s->n_edges) /* qsort's pointer must not be NULL, even for 0 items */
        qsort(s->edges, s->n_edges, sizeof *s->edges, edge_cmp);
    trc_free(s->funcs);
    s->funcs = sorted;
    s->cap_funcs = s->n_funcs + 1;
    sorted = NULL;
    /* the lookup maps now point at old positions: no adds after finish */
    trch_index_cleanup(&s->fn_index);
    trch_u64map_cleanup(&s->edge_map);
out:
    trc_free(order);
    trc_free(newpos);
    trc_free(sorted);
    return st;
}

static trc_status count_processes(exp_stats *s, const trc_reader *r)
{
    trch_u64map *pids = &s->pids;
    trc_status st = TRC_OK;
    uint32_t v;
    int added;
    for (size_t id = 0; id < s->cap_threads; id++) {
        if (!s->threads[id].seen)
            continue;
        const trc_thread *t = trc_reader_thread(r, (uint32_t)id);
        st = trch_u64map_put(pids, t ? (uint64_t)t->pid : UINT64_MAX, 0, &v, &added);
        if (st != TRC_OK)
            goto out;
        s->totals.processes += (uint64_t)added;
    }
    for (uint32_t i = 0; i < trch_u64map_count(&s->gpu_pids); i++) {
        st = trch_u64map_put(pids, s->gpu_pids.keys[i], 0, &v, &added);
        if (st != TRC_OK)
            goto out;
        s->totals.processes += (uint64_t)added;
    }
    s->totals.gpu_threads = trch_u64map_count(&s->gpu_threads);
out:
    return st;
}

/* Scratch for spreading accumulators over functions and edges: the
 * function per depth (root first) and stamps that count a function or
 * edge once per path. */
typedef struct walk {
    uint32_t *path;
    size_t cap_path;
    uint32_t *fn_stamp, *edge_stamp;
    size_t cap_fs, cap_es;
    uint32_t stamp;
} walk;

/* Functions of stack `id`'s frames into w->path[0..*d); *d = 0 when the
 * stack is unknown or inconsistent (skip it).  `extra` slots are left
 * free after them. */
static trc_status stack_path(exp_stats *s, const trc_reader *r, uint32_t id, size_t extra,
                             walk *w, size_t *d)
{
    const trc_stack *n = trc_reader_stack(r, id);
    *d = 0;
    if (!n || id == 0)
        return TRC_OK;
    trc_status st = trcu_grow((void **)&w->path, &w->cap_path, n->depth + extra, sizeof *w->path);
    if (st != TRC_OK)
        return st;
    size_t k = n->depth;
    for (; n && n->id != 0 && k > 0; n = trc_reader_stack(r, n->parent)) {
        st = fn_of(s, r, n->frame, &w->path[--k]);
        if (st != TRC_OK)
            return st;
    }
    if (k == 0)
        *d = trc_reader_stack(r, id)->depth;
    return TRC_OK; /* k != 0: depth and chain disagree (reader bug) */
}

/* Adds `weight` (`samples` of it) along path[0..d): leaf tottime,
 * cumtime once per function and edge, leaf edge tottime. */
static trc_status spread_time(exp_stats *s, walk *w, size_t d, uint64_t samples,
                              uint64_t weight)
{
    const uint32_t *path = w->path;
    uint32_t leaf = path[d - 1];
    s->funcs[leaf].tt_ns += weight;
    s->funcs[leaf].own_samples += samples;
    for (size_t i = 0; i < d; i++) {
        if (w->fn_stamp[path[i]] == w->stamp)
            continue;
        w->fn_stamp[path[i]] = w->stamp;
        s->funcs[path[i]].ct_ns += weight;
        s->funcs[path[i]].cum_samples += samples;
    }
    for (size_t i = 1; i < d; i++) {
        exp_edge *e;
        trc_status st = edge_of(s, path[i - 1], path[i], &e);
        if (st == TRC_OK)
            st = trcu_grow((void **)&w->edge_stamp, &w->cap_es, s->n_edges, sizeof *w->edge_stamp);
        if (st != TRC_OK)
            return st;
        size_t ei = (size_t)(e - s->edges);
        if (w->edge_stamp[ei] != w->stamp) {
            w->edge_stamp[ei] = w->stamp;
            e->ct_ns += weight;
        }
        if (i == d - 1)
            e->tt_ns += weight;
    }
    return TRC_OK;
}

/* GPU calls: one per activity for every function and edge of the path;
 * primitive when the callee is not already higher on the path.  Uses a
 * fresh stamp. */
static trc_status spread_calls(exp_stats *s, walk *w, size_t d, uint64_t n)
{
    const uint32_t *path = w->path;
    w->stamp++;
    for (size_t i = 0; i < d; i++) {
        int primitive = w->fn_stamp[path[i]] != w->stamp;
        w->fn_stamp[path[i]] = w->stamp;
        s->funcs[path[i]].nc += n;
        s->funcs[path[i]].cc += primitive ? n : 0;
        if (i > 0) {
            exp_edge *e;
            trc_status st = edge_of(s, path[i - 1], path[i], &e);
            if (st != TRC_OK)
                return st;
            e->nc += n;
            e->cc += primitive ? n : 0;
        }
    }
    return TRC_OK;
}

/* One stamp per path; the stamp arrays follow the function table. */
static trc_status next_stamp(exp_stats *s, walk *w)
{
    trc_status st = trcu_grow((void **)&w->fn_stamp, &w->cap_fs, s->n_funcs, sizeof *w->fn_stamp);
    w->stamp++;
    return st;
}

static trc_status finish_samples(exp_stats *s, const trc_reader *r, walk *w)
{
    trc_status st;
    for (size_t id = 0; id < s->cap_nodes; id++) {
        const node_acc *acc = &s->nodes[id];
        if (!acc->samples && !acc->entries)
            continue;
        size_t d = 0;
        if (id == 0) {
            if (!s->no_python_fn) {
                uint32_t f;
                st = intern_fn(s, TILDE, 0, EXP_NO_PYTHON_FRAMES, &f);
                if (st != TRC_OK)
                    return st;
                s->no_python_fn = f + 1;
            }
            st = trcu_grow((void **)&w->path, &w->cap_path, 0, sizeof *w->path);
            if (st != TRC_OK)
                return st;
            w->path[d++] = s->no_python_fn - 1;
        } else {
            st = stack_path(s, r, (uint32_t)id, 0, w, &d);
            if (st != TRC_OK)
                return st;
        }
        if (d == 0)
            continue;
        if ((st = next_stamp(s, w)) != TRC_OK)
            return st;
        const uint32_t *path = w->path;
        uint32_t leaf = path[d - 1];
        if (acc->samples && (st = spread_time(s, w, d, acc->samples, acc->weight_ns)) != TRC_OK)
            return st;
        if (acc->entries) {
            int primitive = 1;
            for (size_t i = 0; i + 1 < d; i++)
                primitive &= path[i] != leaf;
            s->funcs[leaf].nc += acc->entries;
            s->funcs[leaf].cc += primitive ? acc->entries : 0;
            if (d >= 2) {
                exp_edge *e;
                st = edge_of(s, path[d - 2], leaf, &e);
                if (st != TRC_OK)
                    return st;
                e->nc += acc->entries;
                e->cc += primitive ? acc->entries : 0;
            }
        }
    }
    return TRC_OK;
}

static trc_status finish_gpu(exp_stats *s, const trc_reader *r, walk *w)
{
    trc_status st;
    for (size_t i = 0; i < s->n_gpu; i++) {
        const gpu_acc *a = &s->gpu[i];
        size_t d = 0;
        uint32_t f;
        if (a->origin == EXP_GPU_PYTHON) {
            st = stack_path(s, r, a->stack, 1, w, &d);
            if (st == TRC_OK && d == 0) { /* an undefined stack */
                st = intern_fn(s, TILDE, 0, "<unknown>", &f);
                if (st == TRC_OK)
                    st = trcu_grow((void **)&w->path, &w->cap_path, 1, sizeof *w->path);
                if (st == TRC_OK)
                    w->path[d++] = f;
            }
        } else {
            const char *root = a->origin == EXP_GPU_NO_PYTHON ? EXP_GPU_NO_PYTHON_ROOT
                                                               : EXP_GPU_UNKNOWN_ROOT;
            st = trcu_grow((void **)&w->path, &w->cap_path, 1, sizeof *w->path);
            if (st == TRC_OK)
                st = intern_fn(s, TILDE, 0, root, &f);
            if (st == TRC_OK)
                w->path[d++] = f;
        }
        if (st == TRC_OK)
            st = intern_fn(s, TILDE, 0, a->name && *a->name ? a->name : "<unknown>", &f);
        if (st == TRC_OK)
            st = trcu_grow((void **)&w->path, &w->cap_path, d, sizeof *w->path);
        if (st == TRC_OK) {
            w->path[d++] = f;
            st = next_stamp(s, w);
        }
        if (st == TRC_OK)
            st = spread_time(s, w, d, a->count, a->weight_ns);
        if (st == TRC_OK)
            st = spread_calls(s, w, d, a->count);
        if (st != TRC_OK)
            return st;
    }
    return TRC_OK;
}

trc_status exp_stats_finish(exp_stats *s, const trc_reader *r)
{
    trc_status st;
    walk w = {0};
    if (s->finished)
        return TRC_ERR_ARG;
    s->finished = 1;
    st = finish_samples(s, r, &w);
    if (st == TRC_OK)
        st = finish_gpu(s, r, &w);
    if (st != TRC_OK)
        goto out;
    for (size_t i = 0; i < s->n_funcs; i++) {
        s->totals.calls += s->funcs[i].nc;
        s->totals.primitive_calls += s->funcs[i].cc;
    }
    st = count_processes(s, r);
    if (st == TRC_OK)
        st = sort_tables(s);
out:
    trc_free(w.path);
    trc_free(w.fn_stamp);
    trc_free(w.edge_stamp);
    return st;
}

size_t exp_stats_func_count(const exp_stats *s) { return s->finished ? s->n_funcs : 0; }
const exp_func *exp_stats_func(const exp_stats *s, size_t i)
{
    return s->finished && i < s->n_funcs ? &s->funcs[i] : NULL;
}
size_t exp_stats_edge_count(const exp_stats *s) { return s->finished ? s->n_edges : 0; }
const exp_edge *exp_stats_edge(const exp_stats *s, size_t i)
{
    return s->finished && i < s->n_edges ? &s->edges[i] : NULL;
}
const exp_stats_totals *exp_stats_get_totals(const exp_stats *s) { return &s->totals; }

int64_t exp_stats_pid(const exp_stats *s, uint64_t i)
{
    return (int64_t)s->pids.keys[i]; /* UINT64_MAX (a thread never defined) reads as -1 */
}

char *exp_func_label(const exp_func *f, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    if (strcmp(f->file, TILDE) == 0 && f->first_line == 0) {
        size_t len = strlen(f->function);
        if (len >= 2 && f->function[0] == '<' && f->function[len - 1] == '>')
            snprintf(buf, n, "{%.*s}", (int)(len - 2), f->function + 1);
        else
            snprintf(buf, n, "%s", f->function);
    } else {
        snprintf(buf, n, "%s:%u(%s)", f->file, (unsigned)f->first_line, f->function);
    }
    return buf;
}

typedef struct idle_add {
    exp_stats *s;
    const trc_reader *r;
} idle_add;

static trc_status add_idle_charge(void *ctx, uint32_t device, exp_gpu_idle_kind kind,
                                  uint32_t thread, uint32_t stack, uint64_t ns)
{
    const idle_add *a = ctx;
    if (kind != EXP_GPU_IDLE_NONE)
        return TRC_OK;
    trc_sample smp = {0, thread, stack, 0, ns, 1, 0};
    return exp_stats_add(a->s, a->r, &smp);
}

trc_status exp_stats_add_gpu_idle(exp_stats *s, const trc_reader *r, const exp_gpu_idle *g)
{
    idle_add a = {s, r};
    return exp_gpu_idle_each(g, add_idle_charge, &a);
}
