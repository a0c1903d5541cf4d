/*
 * lib/export/lines/lines_report.c — what a report shows: which
 * functions (the hottest, or those --function/--file name), their
 * callers and callees, and which source lines of each are listed
 * (contract in lines.h).  Shared by the text and JSON writers so that
 * both show the same things.
 */
#include "lib/export/lines/lines.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"

uint64_t lines_time_of(const lines_time *t, lines_metric m)
{
    return m == LINES_WALL ? t->wall_ns : t->cpu_ns;
}

/* Whether recorded path `file` is the one the user named: the same, or
 * ending in "/" + want (a name relative to wherever it was recorded). */
static int file_matches(const char *file, const char *want, size_t n)
{
    size_t lf = strlen(file);
    if (lf == n && memcmp(file, want, n) == 0)
        return 1;
    return lf > n && file[lf - n - 1] == '/' && memcmp(file + lf - n, want, n) == 0;
}

/* NAME matches a function named NAME, or a qualified name ending in
 * ".NAME" (3.11+ record "Class.method"). */
static int function_matches(const char *function, const char *want)
{
    size_t lf = strlen(function), n = strlen(want);
    if (strcmp(function, want) == 0)
        return 1;
    return lf > n && function[lf - n - 1] == '.' && strcmp(function + lf - n, want) == 0;
}

typedef struct pick_ctx {
    const lines_agg *a;
    lines_metric m;
    int by_line;             /* --file: in source order */
} pick_ctx;

static pick_ctx g_ctx;       /* qsort has no context argument in C11 */

static int cmp_u64_desc(uint64_t x, uint64_t y) { return x > y ? -1 : x < y; }

static int cmp_pick(const void *x, const void *y)
{
    const lines_func *a = lines_agg_func(g_ctx.a, *(const uint32_t *)x);
    const lines_func *b = lines_agg_func(g_ctx.a, *(const uint32_t *)y);
    int c = 0;
    if (g_ctx.by_line) {
        c = strcmp(a->file, b->file);
        if (!c)
            c = a->first_line < b->first_line ? -1 : a->first_line > b->first_line;
    }
    if (!c)
        c = cmp_u64_desc(lines_time_of(&a->own, g_ctx.m), lines_time_of(&b->own, g_ctx.m));
    if (!c)
        c = cmp_u64_desc(lines_time_of(&a->cum, g_ctx.m), lines_time_of(&b->cum, g_ctx.m));
    /* a trace of GPU work only still has its launching lines */
    if (!c)
        c = cmp_u64_desc(a->own.gpu_ns, b->own.gpu_ns);
    if (!c)
        c = cmp_u64_desc(a->cum.gpu_ns, b->cum.gpu_ns);
    if (!c)
        c = strcmp(a->file, b->file);
    if (!c)
        c = a->first_line < b->first_line ? -1 : a->first_line > b->first_line;
    if (!c)
        c = strcmp(a->function, b->function);
    return c;
}

trc_status lines_pick(const lines_agg *a, const lines_opts *o, uint32_t **out, size_t *n)
{
    size_t nf = lines_agg_func_count(a), k = 0;
    const char *want_fn = o->function, *want_file = o->file;
    size_t file_len = want_file ? strlen(want_file) : 0;
    char *split = NULL;
    uint32_t *v = trc_malloc((nf ? nf : 1) * sizeof *v);
    *out = NULL;
    *n = 0;
    if (!v)
        return TRC_ERR_NOMEM;
    /* FILE:NAME names the file too; the last ':' splits (a function name
     * has none, a path might). */
    const char *colon = want_fn ? strrchr(want_fn, ':') : NULL;
    if (colon && colon != want_fn && !want_file) {
        split = trc_malloc((size_t)(colon - want_fn) + 1);
        if (!split) {
            trc_free(v);
            return TRC_ERR_NOMEM;
        }
        memcpy(split, want_fn, (size_t)(colon - want_fn));
        split[colon - want_fn] = 0;
        want_file = split;
        file_len = strlen(split);
        want_fn = colon + 1;
    }
    for (size_t i = 0; i < nf; i++) {
        const lines_func *f = lines_agg_func(a, i);
        if (!f->python || !f->n_rows)
            continue;
        if (want_file && !file_matches(f->file, want_file, file_len))
            continue;
        if (want_fn && !function_matches(f->function, want_fn))
            continue;
        if (!want_file && !want_fn && !lines_time_of(&f->cum, o->metric) && !f->cum.gpu_ns)
            continue;
        v[k++] = (uint32_t)i;
    }
    trc_free(split);
    g_ctx = (pick_ctx){a, o->metric, o->file != NULL && o->function == NULL};
    qsort(v, k, sizeof *v, cmp_pick);
    if (!o->function && !o->file) {
        size_t top = o->top > 0 ? (size_t)o->top : 5;
        if (k > top)
            k = top;
    }
    *out = v;
    *n = k;
    return TRC_OK;
}

static int cmp_edge(const void *x, const void *y)
{
    const lines_edge *a = lines_agg_edge(g_ctx.a, *(const uint32_t *)x);
    const lines_edge *b = lines_agg_edge(g_ctx.a, *(const uint32_t *)y);
    int c = cmp_u64_desc(lines_time_of(&a->t, g_ctx.m), lines_time_of(&b->t, g_ctx.m));
    if (!c)
        c = cmp_u64_desc(a->t.wall_ns, b->t.wall_ns);
    if (!c)
        c = cmp_u64_desc(a->t.gpu_ns, b->t.gpu_ns);
    if (!c)
        c = a->caller != b->caller ? (a->caller < b->caller ? -1 : 1)
                                   : (a->callee < b->callee ? -1 : a->callee > b->callee);
    return c;
}

size_t lines_callers(const lines_agg *a, uint32_t f, lines_metric m, int callees,
                     uint32_t *out, size_t max)
{
    /* The few best of all edges touching f, kept sorted by insertion. */
    size_t k = 0;
    g_ctx = (pick_ctx){a, m, 0};
    for (size_t i = 0; i < lines_agg_edge_count(a); i++) {
        const lines_edge *e = lines_agg_edge(a, i);
        if ((callees ? e->caller : e->callee) != f)
            continue;
        uint32_t id = (uint32_t)i;
        size_t at = k;
        while (at > 0 && cmp_edge(&id, &out[at - 1]) < 0)
            at--;
        if (at >= max)
            continue;
        if (k < max)
            k++;
        memmove(&out[at + 1], &out[at], (k - 1 - at) * sizeof *out);
        out[at] = id;
    }
    return k;
}

/* The first row of f at or after `line` (f->first_row + f->n_rows if none). */
static uint32_t row_at(const lines_agg *a, const lines_func *f, uint32_t line)
{
    uint32_t lo = f->first_row, hi = f->first_row + f->n_rows;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (lines_agg_row(a, mid)->line < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint32_t lines_last(const lines_agg *a, const lines_func *f)
{
    uint32_t last = f->first_line;
    if (f->n_rows) {
        uint32_t l = lines_agg_row(a, f->first_row + f->n_rows - 1)->line;
        if (l > last)
            last = l;
    }
    return last;
}

uint32_t lines_first(const lines_agg *a, const lines_func *f)
{
    uint32_t lo = f->first_line, i = row_at(a, f, 1);
    if (i < f->first_row + f->n_rows) {
        uint32_t l = lines_agg_row(a, i)->line;
        if (!lo || l < lo)
            lo = l; /* a decorator's line comes before the def */
    }
    return lo ? lo : 1;
}

uint32_t lines_next(const lines_agg *a, const lines_func *f, uint32_t after, int all)
{
    uint32_t lo = lines_first(a, f), last = lines_last(a, f);
    if (after >= last)
        return 0;
    uint32_t cand = after < lo ? lo : after + 1, best = 0;
    if (all && last - lo <= LINES_SHOW_ALL_SPAN)
        return cand;
    if (all && f->first_line >= cand)
        best = f->first_line;
    /* the first row whose window (with context) reaches cand or beyond */
    uint32_t from = all && cand > LINES_CONTEXT ? cand - LINES_CONTEXT : cand;
    uint32_t i = row_at(a, f, from ? from : 1);
    if (i < f->first_row + f->n_rows) {
        uint32_t l = lines_agg_row(a, i)->line;
        uint32_t start = all && l > LINES_CONTEXT ? l - LINES_CONTEXT : l;
        if (start < cand)
            start = cand;
        if (!best || start < best)
            best = start;
    }
    return best;
}
