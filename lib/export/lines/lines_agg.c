/*
 * lib/export/lines/lines_agg.c — samples and GPU activities per source
 * line (meanings and contract in lines.h).
 *
 * While reading, only a time triple per reader stack id (a sample's
 * stack, an activity's launching stack).  At the end each stack is
 * walked once from leaf to root: every frame charges its function and
 * its (function, line) row, every adjacent pair of frames its
 * caller→callee edge, each at most once per stack (a mark per item holds
 * the stack last charged), so recursion is not counted twice.
 */
#include "lib/export/lines/lines.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/arena.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"
#include "lib/util/intern.h"

#define NONE UINT32_MAX

typedef struct func_work {
    lines_func f;
    uint32_t mark;          /* stack id + 1 last charged */
} func_work;

typedef struct row_work {
    lines_row r;
    uint32_t mark;
} row_work;

typedef struct edge_work {
    lines_edge e;
    uint32_t mark;
} edge_work;

struct lines_agg {
    lines_time *stacks;     /* per reader stack id */
    size_t cap_stacks;
    uint32_t n_stacks;      /* highest id seen + 1 */
    func_work *funcs;
    size_t n_funcs, cap_funcs;
    trci_map fn_keys;       /* (file, first line, function, kind) → function */
    trca_arena arena;       /* the keys */
    uint32_t *fn_of_frame;  /* reader frame id → function + 1 */
    size_t cap_fof;
    row_work *rows;
    size_t n_rows, cap_rows;
    trch_u64map row_map;    /* function << 32 | line → row */
    lines_row *sorted;      /* rows by (function, line), after finish */
    edge_work *edges;
    size_t n_edges, cap_edges;
    trch_u64map edge_map;   /* caller << 32 | callee → edge */
    lines_totals totals;
};

lines_agg *lines_agg_new(void)
{
    return trc_calloc(1, sizeof(lines_agg));
}

void lines_agg_free(lines_agg *a)
{
    if (!a)
        return;
    trc_free(a->stacks);
    trc_free(a->funcs);
    trci_free(&a->fn_keys);
    trca_free_all(&a->arena);
    trc_free(a->fn_of_frame);
    trc_free(a->rows);
    trch_u64map_cleanup(&a->row_map);
    trc_free(a->sorted);
    trc_free(a->edges);
    trch_u64map_cleanup(&a->edge_map);
    trc_free(a);
}

static lines_time *stack_slot(lines_agg *a, uint32_t stack)
{
    if (trcu_grow((void **)&a->stacks, &a->cap_stacks, stack, sizeof *a->stacks) != TRC_OK)
        return NULL;
    if (stack >= a->n_stacks)
        a->n_stacks = stack + 1;
    return &a->stacks[stack];
}

trc_status lines_agg_sample(lines_agg *a, const trc_sample *s)
{
    lines_time *t = stack_slot(a, s->stack);
    if (!t)
        return TRC_ERR_NOMEM;
    uint64_t ns = s->weight_ns * s->count;
    t->wall_ns += ns;
    a->totals.t.wall_ns += ns;
    if (s->flags & TRC_SAMPLE_ON_CPU) {
        t->cpu_ns += ns;
        a->totals.t.cpu_ns += ns;
    }
    a->totals.samples += s->count;
    return TRC_OK;
}

trc_status lines_agg_gpu(lines_agg *a, const exp_gpu_hit *h)
{
    a->totals.gpu_activities++;
    a->totals.t.gpu_ns += h->dur_ns;
    if (h->origin != EXP_GPU_PYTHON || h->stack == 0) {
        a->totals.gpu_unattributed_ns += h->dur_ns;
        return TRC_OK;
    }
    lines_time *t = stack_slot(a, h->stack);
    if (!t)
        return TRC_ERR_NOMEM;
    t->gpu_ns += h->dur_ns;
    if (h->waiter)
        a->totals.gpu_via_ns += h->dur_ns;
    return TRC_OK;
}

trc_status lines_agg_sync(lines_agg *a, uint32_t stack, uint64_t blocked_ns)
{
    a->totals.syncs++;
    a->totals.t.sync_ns += blocked_ns;
    if (!stack)
        return TRC_OK;
    lines_time *t = stack_slot(a, stack);
    if (!t)
        return TRC_ERR_NOMEM;
    t->sync_ns += blocked_ns;
    return TRC_OK;
}

static void add_time(lines_time *to, const lines_time *t)
{
    to->cpu_ns += t->cpu_ns;
    to->wall_ns += t->wall_ns;
    to->gpu_ns += t->gpu_ns;
    to->sync_ns += t->sync_ns;
}

/* The function of reader frame `id`, added when new. */
static trc_status fn_of(lines_agg *a, const trc_reader *r, uint32_t id, uint32_t *out)
{
    if (id < a->cap_fof && a->fn_of_frame[id]) {
        *out = a->fn_of_frame[id] - 1;
        return TRC_OK;
    }
    const trc_frame *fr = trc_reader_frame(r, id);
    const char *function = fr && fr->function && *fr->function ? fr->function : "<unknown>";
    int python = fr && fr->kind == TRC_FRAME_PYTHON && fr->file && *fr->file;
    const char *file = python ? fr->file : "";
    uint32_t first = python ? fr->first_line : 0;
    size_t lf = strlen(file), ln = strlen(function);
    /* key: file NUL function NUL first_line python */
    size_t len = lf + 1 + ln + 1 + sizeof first + 1;
    char small[512];
    char *key = len <= sizeof small ? small : trc_malloc(len);
    if (!key)
        return TRC_ERR_NOMEM;
    memcpy(key, file, lf + 1);
    memcpy(key + lf + 1, function, ln + 1);
    memcpy(key + lf + ln + 2, &first, sizeof first);
    key[len - 1] = (char)python;
    uint64_t h = trci_hash(key, len);
    uint32_t fn;
    trc_status st = TRC_OK;
    if (!trci_find(&a->fn_keys, key, len, h, &fn)) {
        fn = (uint32_t)a->n_funcs;
        if (a->n_funcs >= UINT32_MAX / 2)
            st = TRC_ERR_LIMIT;
        if (st == TRC_OK)
            st = trcu_grow((void **)&a->funcs, &a->cap_funcs, a->n_funcs, sizeof *a->funcs);
        if (st == TRC_OK)
            st = trci_insert(&a->fn_keys, &a->arena, key, len, h, fn, NULL);
        if (st == TRC_OK) {
            lines_func *f = &a->funcs[a->n_funcs++].f;
            f->function = function;
            f->file = file;
            f->first_line = first;
            f->python = python;
        }
    }
    if (key != small)
        trc_free(key);
    if (st == TRC_OK)
        st = trcu_grow((void **)&a->fn_of_frame, &a->cap_fof, id, sizeof *a->fn_of_frame);
    if (st != TRC_OK)
        return st;
    a->fn_of_frame[id] = fn + 1;
    *out = fn;
    return TRC_OK;
}

/* The row of (fn, line), added when new. */
static trc_status row_of(lines_agg *a, uint32_t fn, uint32_t line, row_work **out)
{
    uint32_t idx;
    int added;
    if (a->n_rows >= UINT32_MAX / 2)
        return TRC_ERR_LIMIT;
    trc_status st = trcu_grow((void **)&a->rows, &a->cap_rows, a->n_rows, sizeof *a->rows);
    if (st == TRC_OK)
        st = trch_u64map_put(&a->row_map, (uint64_t)fn << 32 | line, (uint32_t)a->n_rows, &idx,
                             &added);
    if (st != TRC_OK)
        return st;
    if (added) {
        a->rows[idx].r.func = fn;
        a->rows[idx].r.line = line;
        a->n_rows++;
    }
    *out = &a->rows[idx];
    return TRC_OK;
}

static trc_status edge_of(lines_agg *a, uint32_t caller, uint32_t callee, edge_work **out)
{
    uint32_t idx;
    int added;
    if (a->n_edges >= UINT32_MAX / 2)
        return TRC_ERR_LIMIT;
    trc_status st = trcu_grow((void **)&a->edges, &a->cap_edges, a->n_edges, sizeof *a->edges);
    if (st == TRC_OK)
        st = trch_u64map_put(&a->edge_map, (uint64_t)caller << 32 | callee,
                             (uint32_t)a->n_edges, &idx, &added);
    if (st != TRC_OK)
        return st;
    if (added) {
        a->edges[idx].e.caller = caller;
        a->edges[idx].e.callee = callee;
        a->n_edges++;
    }
    *out = &a->edges[idx];
    return TRC_OK;
}

/* Charge stack `id`'s time to everything on it (see the file comment). */
static trc_status walk(lines_agg *a, const trc_reader *r, uint32_t id)
{
    const lines_time *t = &a->stacks[id];
    uint32_t mark = id + 1, callee = NONE;
    int leaf = 1;
    for (const trc_stack *n = trc_reader_stack(r, id); n && n->depth > 0;
         n = trc_reader_stack(r, n->parent)) {
        uint32_t fn;
        trc_status st = fn_of(a, r, n->frame, &fn);
        if (st != TRC_OK)
            return st;
        const trc_frame *fr = trc_reader_frame(r, n->frame);
        row_work *row;
        st = row_of(a, fn, fr ? fr->line : 0, &row);
        if (st != TRC_OK)
            return st;
        func_work *f = &a->funcs[fn];
        if (leaf)
            add_time(&f->f.own, t);
        if (f->mark != mark) {
            f->mark = mark;
            add_time(&f->f.cum, t);
        }
        if (row->mark != mark) {
            row->mark = mark;
            add_time(&row->r.t, t);
        }
        if (callee != NONE && callee != fn) {
            edge_work *e;
            st = edge_of(a, fn, callee, &e);
            if (st != TRC_OK)
                return st;
            if (e->mark != mark) {
                e->mark = mark;
                add_time(&e->e.t, t);
            }
        }
        callee = fn;
        leaf = 0;
        if (n->parent >= n->id)
            break; /* ids decrease toward the root; anything else is no stack */
    }
    return TRC_OK;
}

static int cmp_row(const void *x, const void *y)
{
    const lines_row *a = x, *b = y;
    if (a->func != b->func)
        return a->func < b->func ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

trc_status lines_agg_finish(lines_agg *a, const trc_reader *r)
{
    for (uint32_t id = 1; id < a->n_stacks; id++) {
        const lines_time *t = &a->stacks[id];
        if (!t->cpu_ns && !t->wall_ns && !t->gpu_ns && !t->sync_ns)
            continue;
        trc_status st = walk(a, r, id);
        if (st != TRC_OK)
            return st;
    }
    if (a->n_rows) {
        a->sorted = trc_malloc(a->n_rows * sizeof *a->sorted);
        if (!a->sorted)
            return TRC_ERR_NOMEM;
        for (size_t i = 0; i < a->n_rows; i++)
            a->sorted[i] = a->rows[i].r;
        qsort(a->sorted, a->n_rows, sizeof *a->sorted, cmp_row);
    }
    for (size_t i = 0; i < a->n_rows; i++) {
        lines_func *f = &a->funcs[a->sorted[i].func].f;
        if (!f->n_rows)
            f->first_row = (uint32_t)i;
        f->n_rows++;
    }
    return TRC_OK;
}

size_t lines_agg_func_count(const lines_agg *a) { return a->n_funcs; }
const lines_func *lines_agg_func(const lines_agg *a, size_t i) { return &a->funcs[i].f; }
const lines_row *lines_agg_row(const lines_agg *a, size_t i) { return &a->sorted[i]; }
size_t lines_agg_edge_count(const lines_agg *a) { return a->n_edges; }
const lines_edge *lines_agg_edge(const lines_agg *a, size_t i) { return &a->edges[i].e; }
const lines_totals *lines_agg_totals(const lines_agg *a) { return &a->totals; }
