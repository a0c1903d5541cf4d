/*
 * lib/export/folded/sync_sink.c — --syncs (docs/gpu.md, "Where does my
 * code wait for the GPU?"): the blocking calls of the sync stage
 * (lib/export/common/gpu_sync.h) as folded stacks, the calling stack
 * plus a leaf for the API name, weighted by host time blocked (or 1 per
 * call); and trc-stats' table of them by Python line.
 */
#include "lib/export/folded/folded.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/export/common/gpu_sync.h"
#include "lib/export/common/short_path.h"
#include "lib/util/alloc.h"
#include "lib/util/hashtab.h"

/* ---- folded stacks ---- */

typedef struct collapsed_syncs {
    exp_collapsed *c;
    exp_gpu_sync *stage;
} collapsed_syncs;

static trc_status to_collapsed(void *ctx, const trc_reader *r, const exp_sync_hit *h)
{
    collapsed_syncs *cs = ctx;
    return exp_collapsed_add_sync(cs->c, r, h);
}

static void cs_destroy(void *self)
{
    collapsed_syncs *cs = self;
    if (!cs)
        return;
    exp_sync_free(cs->stage);
    exp_collapsed_free(cs->c);
    trc_free(cs);
}

static void *cs_create(const void *opts)
{
    collapsed_syncs *cs = trc_calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    cs->c = exp_collapsed_new(opts);
    cs->stage = exp_sync_new(to_collapsed, cs);
    if (!cs->c || !cs->stage) {
        cs_destroy(cs);
        return NULL;
    }
    return cs;
}

static trc_status cs_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    collapsed_syncs *cs = self;
    return exp_sync_event(cs->stage, r, ev);
}

static trc_status cs_finish(void *self, trc_reader *r, FILE *out)
{
    collapsed_syncs *cs = self;
    trc_status st = exp_sync_finish(cs->stage, r);
    return st == TRC_OK ? exp_collapsed_write(cs->c, r, out) : st;
}

const exp_sink_type exp_sink_collapsed_syncs = {"collapsed-syncs", cs_create, cs_event, NULL,
                                                cs_finish, cs_destroy, NULL};

/* ---- trc-stats --syncs: by Python line ---- */

/* One row: the line that waited (the stack's leaf frame; 0 = no Python
 * stack), summed over its calls. */
typedef struct sync_row {
    uint32_t frame;
    uint64_t calls, blocked_ns, waited_ns;
    uint32_t names;            /* bit (name_id - 1) for the first 32 API names */
} sync_row;

typedef struct sync_report {
    exp_gpu_sync *stage;
    sync_row *rows;
    size_t n, cap;
    trch_index index;
    uint64_t calls, blocked_ns, waited_ns;
    const char *names[32];     /* borrowed from the stage */
} sync_report;

static trc_status to_report(void *ctx, const trc_reader *r, const exp_sync_hit *h)
{
    sync_report *p = ctx;
    const trc_stack *leaf = h->stack ? trc_reader_stack(r, h->stack) : NULL;
    uint32_t frame = leaf ? leaf->frame : 0;
    uint64_t hash = trch_hash_u64(frame);
    trch_probe pr;
    sync_row *row = NULL;

    for (uint32_t i = trch_first(&p->index, hash, &pr); i != TRCH_NONE; i = trch_next(&p->index, &pr))
        if (p->rows[i].frame == frame) {
            row = &p->rows[i];
            break;
        }
    if (!row) {
        trc_status st = trcu_grow((void **)&p->rows, &p->cap, p->n, sizeof *p->rows);
        if (st == TRC_OK)
            st = trch_add(&p->index, hash, (uint32_t)p->n);
        if (st != TRC_OK)
            return st;
        row = &p->rows[p->n++];
        memset(row, 0, sizeof *row);
        row->frame = frame;
    }
    row->calls++;
    row->blocked_ns += h->blocked_ns;
    row->waited_ns += h->waited_ns;
    if (h->name_id <= 32) {
        row->names |= 1u << (h->name_id - 1);
        p->names[h->name_id - 1] = h->name;
    }
    p->calls++;
    p->blocked_ns += h->blocked_ns;
    p->waited_ns += h->waited_ns;
    return TRC_OK;
}

static void sr_destroy(void *self)
{
    sync_report *p = self;
    if (!p)
        return;
    exp_sync_free(p->stage);
    trch_index_cleanup(&p->index);
    trc_free(p->rows);
    trc_free(p);
}

static void *sr_create(const void *opts)
{
    sync_report *p = trc_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (!(p->stage = exp_sync_new(to_report, p))) {
        trc_free(p);
        return NULL;
    }
    return p;
}

static trc_status sr_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    sync_report *p = self;
    return exp_sync_event(p->stage, r, ev);
}

/* Most time blocked first; ties by frame id, so the order is stable. */
static int by_blocked(const void *a, const void *b)
{
    const sync_row *x = a, *y = b;
    if (x->blocked_ns != y->blocked_ns)
        return x->blocked_ns < y->blocked_ns ? 1 : -1;
    return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static trc_status sr_finish(void *self, trc_reader *r, FILE *out)
{
    sync_report *p = self;
    trc_status st = exp_sync_finish(p->stage, r);
    if (st != TRC_OK)
        return st;
    if (p->n) /* no array yet when no call was selected */
        qsort(p->rows, p->n, sizeof *p->rows, by_blocked);
    fprintf(out, "Blocking syncs: %" PRIu64 " calls, %.6f s host time blocked, "
                 "%.6f s GPU work waited for\n\n",
            p->calls, p->blocked_ns / 1e9, p->waited_ns / 1e9);
    if (!p->n) {
        fprintf(out, "no API call flagged SYNC selected (check --pid/--thread/--from/--to; "
                     "a trace recorded before trec flagged them "
                     "has none; see docs/gpu.md)\n");
        return ferror(out) ? TRC_ERR_IO : TRC_OK;
    }
    fprintf(out, "%8s %12s %12s %12s  %s\n", "calls", "blocked(s)", "waited(s)", "blocked/call",
            "line (calls)");
    for (size_t i = 0; i < p->n; i++) {
        const sync_row *w = &p->rows[i];
        const trc_frame *f = w->frame ? trc_reader_frame(r, w->frame) : NULL;
        fprintf(out, "%8" PRIu64 " %12.6f %12.6f %12.6f  ", w->calls, w->blocked_ns / 1e9,
                w->waited_ns / 1e9, w->blocked_ns / 1e9 / (double)w->calls);
        if (f)
            fprintf(out, "%s:%" PRIu32 "(%s)", exp_short_path(f->file ? f->file : ""), f->line,
                    f->function ? f->function : "");
        else
            fputs(EXP_GPU_NO_PYTHON_ROOT, out);
        const char *sep = " (";
        for (uint32_t b = 0; b < 32; b++)
            if (w->names & (1u << b)) {
                fprintf(out, "%s%s", sep, p->names[b]);
                sep = ", ";
            }
        fputs(*sep == ',' ? ")\n" : "\n", out);
    }
    return ferror(out) ? TRC_ERR_IO : TRC_OK;
}

const exp_sink_type exp_sink_sync_report = {"sync-report", sr_create, sr_event, NULL, sr_finish,
                                            sr_destroy, NULL};

/* ---- trc2pstats --syncs: each sync one call of its API, in seconds blocked ---- */

typedef struct pstats_syncs {
    exp_stats *stats;
    exp_gpu_sync *stage;
    char err[160];
} pstats_syncs;

static trc_status to_pstats(void *ctx, const trc_reader *r, const exp_sync_hit *h)
{
    pstats_syncs *p = ctx;
    exp_gpu_hit g = {h->pid, h->thread, h->stack, h->origin, EXP_GPU_KERNEL,
                     h->name_id, h->name, h->blocked_ns, 0, 0, 0};
    return exp_stats_add_gpu(p->stats, r, &g);
}

static void ps_destroy(void *self)
{
    pstats_syncs *p = self;
    if (!p)
        return;
    exp_sync_free(p->stage);
    exp_stats_free(p->stats);
    trc_free(p);
}

static void *ps_create(const void *opts)
{
    pstats_syncs *p = trc_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->stats = exp_stats_new();
    p->stage = exp_sync_new(to_pstats, p);
    if (!p->stats || !p->stage) {
        ps_destroy(p);
        return NULL;
    }
    return p;
}

static trc_status ps_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    pstats_syncs *p = self;
    return exp_sync_event(p->stage, r, ev);
}

static trc_status ps_finish(void *self, trc_reader *r, FILE *out)
{
    pstats_syncs *p = self;
    trc_status st = exp_sync_finish(p->stage, r);
    if (st == TRC_OK)
        st = exp_stats_finish(p->stats, r);
    if (st != TRC_OK)
        return st;
    /* pstats cannot load an empty dict (docs/design/outputs.md §3) */
    if (exp_stats_func_count(p->stats) == 0) {
        snprintf(p->err, sizeof p->err,
                 "no API call flagged SYNC selected: a pstats file cannot be empty (check "
                 "--pid/--thread/--from/--to)");
        return TRC_ERR_ARG;
    }
    return exp_pstats_write(p->stats, out);
}

static const char *ps_error(const void *self)
{
    const pstats_syncs *p = self;
    return p->err;
}

const exp_sink_type exp_sink_pstats_syncs = {"pstats-syncs", ps_create, ps_event, NULL, ps_finish,
                                             ps_destroy, ps_error};
