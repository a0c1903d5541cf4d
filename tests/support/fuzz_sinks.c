/*
 * tests/support/fuzz_sinks.c — the converter targets of fuzz_sinks.h and
 * the target table.  Each converter sink is fed the way
 * tools/common/convert.c feeds it (reader → conv_selection_filter → sink
 * event; finish unless a sink call failed), twice: with the tool's
 * defaults (on-CPU samples, no window), then with every option on and
 * --idle --from 1us --to 1s, so clipping of folded samples and windowed
 * GPU views see hostile times too.  The GPU views apply the selection
 * inside the call-site matcher, as trc2collapsed --gpu and trc-stats
 * --gpu-callsites do.  A sink refusing the input (an error status) is
 * allowed; crashes, sanitizer reports and huge allocations are not.
 */
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/export/chrome/chrome.h"
#include "lib/export/folded/folded.h"
#include "lib/export/nvvp/gpu_summary.h"
#include "lib/export/nvvp/nvvp_data.h"
#include "lib/export/nvvp/nvvp_summary.h"
#include "lib/export/nvvp/nvvp_svg.h"
#include "lib/export/nvvp/nvvp_trace.h"
#include "lib/export/speedscope/speedscope.h"
#include "tests/support/fuzz_sinks.h"
#include "tests/support/trace_builder.h"
#include "tools/common/convert.h"
#include "tools/common/stats_table.h"

typedef struct sink {
    void *ctx;
    trc_status (*event)(void *ctx, trc_reader *r, const trc_event *ev, FILE *out);
    trc_status (*finish)(void *ctx, trc_reader *r, FILE *out);
} sink;

/* The selection of pass v: 0 the tools' defaults, 1 --idle with a window. */
static void selection(int v, conv_selection *sel)
{
    memset(sel, 0, sizeof *sel);
    sel->to_ns = -1;
    if (v) {
        sel->idle = 1;
        sel->from = "0.000001";
        sel->from_ns = 1000;
        sel->to = "1";
        sel->to_ns = 1000000000;
    }
}

/* Read everything into s; sel NULL: the sink selects by itself. */
static int feed(const uint8_t *data, size_t size, conv_selection *sel, const sink *s, FILE *out,
                char *why, size_t n)
{
    tb_src src = {data, size, 0, 0};
    const trc_event *ev;
    trc_event scratch;
    trc_status st;
    uint64_t events = 0;
    trc_reader *r = trc_reader_open_callback(tb_read, &src, "fuzz.trc", &st);
    int rc = 0, failed = 0;

    if (!r)
        return 0;
    while (!failed && trc_reader_next(r, &ev) == TRC_OK) {
        const trc_event *kept = sel ? conv_selection_filter(sel, r, ev, &scratch) : ev;
        if (++events > FS_MAX_EVENTS) {
            rc = fs_fail(why, n, "more than %u events: the reader loops", FS_MAX_EVENTS);
            break;
        }
        if (kept && s->event(s->ctx, r, kept, out) != TRC_OK)
            failed = 1;
    }
    if (!failed && rc == 0 && s->finish)
        s->finish(s->ctx, r, out);
    trc_reader_free(r);
    return rc;
}

/* ---- collapsed ---- */

static trc_status collapsed_event(void *c, trc_reader *r, const trc_event *ev, FILE *out)
{
    return ev->type == TRC_EV_SAMPLE ? exp_collapsed_add(c, r, &ev->u.sample) : TRC_OK;
}

static trc_status collapsed_finish(void *c, trc_reader *r, FILE *out)
{
    return exp_collapsed_write(c, r, out);
}

static int t_collapsed(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    int rc = 0;
    for (int v = 0; v < 2 && rc == 0; v++) {
        exp_collapsed_options o = {v, v, v, v, v};
        conv_selection sel;
        sink s = {exp_collapsed_new(&o), collapsed_event, collapsed_finish};
        selection(v, &sel);
        if (s.ctx)
            rc = feed(data, size, &sel, &s, out, why, n);
        exp_collapsed_free(s.ctx);
    }
    return rc;
}

/* ---- stats: trc-stats' table and trc2pstats' file ---- */

typedef struct stats_ctx {
    exp_stats *stats;
    stats_table_opts table;
} stats_ctx;

static trc_status stats_event(void *p, trc_reader *r, const trc_event *ev, FILE *out)
{
    stats_ctx *c = p;
    return ev->type == TRC_EV_SAMPLE ? exp_stats_add(c->stats, r, &ev->u.sample) : TRC_OK;
}

static trc_status stats_finish(void *p, trc_reader *r, FILE *out)
{
    stats_ctx *c = p;
    trc_status st = exp_stats_finish(c->stats, r);
    if (st != TRC_OK)
        return st;
    stats_table_print(c->stats, NULL, r, &c->table, out);
    return exp_pstats_write(c->stats, out);
}

static void table_opts(int v, stats_table_opts *t)
{
    memset(t, 0, sizeof *t);
    stats_table_default(t);
    if (v) {
        stats_table_sort_key(t, "tottime");
        t->limit = 3;
        t->callers = ".";
        t->callees = "[a-z]_";
        t->idle = 1;
    }
}

static int t_stats(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    int rc = 0;
    for (int v = 0; v < 2 && rc == 0; v++) {
        stats_ctx c = {exp_stats_new(), {0}};
        conv_selection sel;
        sink s = {&c, stats_event, stats_finish};
        table_opts(v, &c.table);
        selection(v, &sel);
        if (c.stats)
            rc = feed(data, size, &sel, &s, out, why, n);
        exp_stats_free(c.stats);
    }
    return rc;
}

/* ---- speedscope, chrome ---- */

static trc_status sscope_ev(void *s, trc_reader *r, const trc_event *ev, FILE *out)
{
    return sscope_event(s, r, ev);
}

static trc_status sscope_fin(void *s, trc_reader *r, FILE *out)
{
    return sscope_finish(s, r, out);
}

static int t_speedscope(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    int rc = 0;
    for (int v = 0; v < 2 && rc == 0; v++) {
        sscope_options o = {v, v, v ? 2 : 0};   /* 2 runs in memory: spills early */
        conv_selection sel;
        sink s = {sscope_new(&o), sscope_ev, sscope_fin};
        selection(v, &sel);
        if (s.ctx)
            rc = feed(data, size, &sel, &s, out, why, n);
        sscope_free(s.ctx);
    }
    return rc;
}

static trc_status chrome_ev(void *c, trc_reader *r, const trc_event *ev, FILE *out)
{
    return chrome_event(c, r, ev, out);
}

static trc_status chrome_fin(void *c, trc_reader *r, FILE *out)
{
    return chrome_finish(c, r, out);
}

static int t_chrome(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    int rc = 0;
    for (int v = 0; v < 2 && rc == 0; v++) {
        chrome_options o = {v};
        conv_selection sel;
        sink s = {chrome_new(&o), chrome_ev, chrome_fin};
        selection(v, &sel);
        if (s.ctx)
            rc = feed(data, size, &sel, &s, out, why, n);
        chrome_free(s.ctx);
    }
    return rc;
}

/* ---- nvvp: the summary and the trace tables / SVG in one pass ---- */

typedef struct nvvp_ctx {
    nvvp_summary *summary;
    nvvp_data *data;
    const conv_selection *sel;
    int v;
} nvvp_ctx;

static trc_status nvvp_event(void *p, trc_reader *r, const trc_event *ev, FILE *out)
{
    nvvp_ctx *c = p;
    trc_status st = nvvp_summary_add(c->summary, r, ev);
    return st == TRC_OK ? nvvp_data_add(c->data, r, ev) : st;
}

static trc_status nvvp_finish(void *p, trc_reader *r, FILE *out)
{
    nvvp_ctx *c = p;
    nvvp_summary_opts so = {c->v, c->v ? NVVP_SORT_NAME : NVVP_SORT_TIME, c->v ? 2 : 0};
    nvvp_table_opts to = {c->v, c->data->trace_start};
    nvvp_svg_opts vo = {c->v ? 400 : 0, c->sel->from ? c->sel->from_ns : -1,
                        c->sel->to ? c->sel->to_ns : -1, NULL};
    trc_status st = nvvp_summary_write(c->summary, r, &so, out);
    if (st == TRC_OK)
        st = nvvp_data_finish(c->data);
    if (st == TRC_OK)
        st = nvvp_gpu_trace_write(c->data, r, &to, out);
    if (st == TRC_OK)
        st = nvvp_api_trace_write(c->data, r, &to, out);
    if (st == TRC_OK)
        st = nvvp_svg_write(c->data, r, &vo, out);
    return st;
}

static int t_nvvp(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    int rc = 0;
    for (int v = 0; v < 2 && rc == 0; v++) {
        conv_selection sel;
        nvvp_ctx c = {nvvp_summary_new(), nvvp_data_new(NVVP_WANT_ALL),
                      &sel, v};
        sink s = {&c, nvvp_event, nvvp_finish};
        selection(v, &sel);
        if (c.summary && c.data)
            rc = feed(data, size, &sel, &s, out, why, n);
        nvvp_summary_free(c.summary);
        nvvp_data_free(c.data);
    }
    return rc;
}

/* ---- GPU views: call sites into collapsed and stats, nvprof summary ---- */

typedef struct gpu_ctx {
    exp_gpu_callsite *cs;
    exp_collapsed *collapsed;
    exp_stats *stats;
    gpu_summary *summary;
    stats_table_opts table;
} gpu_ctx;

static trc_status gpu_emit(void *p, trc_reader *r, const exp_gpu_hit *h)
{
    gpu_ctx *c = p;
    trc_status st = exp_collapsed_add_gpu(c->collapsed, r, h);
    return st == TRC_OK ? exp_stats_add_gpu(c->stats, r, h) : st;
}

static int gpu_keep(void *sel, trc_reader *r, const trc_event *ev)
{
    return conv_selection_keep(sel, r, ev);
}

static trc_status gpu_event(void *p, trc_reader *r, const trc_event *ev, FILE *out)
{
    gpu_ctx *c = p;
    if (gpu_summary_event(c->summary, r, ev) != 0)
        return TRC_ERR_NOMEM;
    return exp_gpu_callsite_event(c->cs, r, ev);
}

static trc_status gpu_finish(void *p, trc_reader *r, FILE *out)
{
    gpu_ctx *c = p;
    trc_status st = exp_gpu_callsite_finish(c->cs);
    if (st == TRC_OK)
        st = exp_collapsed_write(c->collapsed, r, out);
    if (st == TRC_OK)
        st = exp_stats_finish(c->stats, r);
    if (st != TRC_OK)
        return st;
    stats_table_print(c->stats, c->cs, r, &c->table, out);
    gpu_summary_print(c->summary, out);
    return exp_pstats_write(c->stats, out);
}

static int t_gpu(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    int rc = 0;
    for (int v = 0; v < 2 && rc == 0; v++) {
        exp_collapsed_options o = {v, v, v, v, 1};
        conv_selection sel;
        gpu_ctx c = {NULL, exp_collapsed_new(&o), exp_stats_new(), gpu_summary_new(), {0}};
        sink s = {&c, gpu_event, gpu_finish};
        /* a short window in pass 1: entries are given up early */
        c.cs = exp_gpu_callsite_new(v ? 4 : 0, gpu_emit, &c);
        table_opts(v, &c.table);
        selection(v, &sel);
        if (c.cs)
            exp_gpu_callsite_select(c.cs, gpu_keep, &sel, 0);
        if (c.cs && c.collapsed && c.stats && c.summary)
            rc = feed(data, size, NULL, &s, out, why, n);
        exp_gpu_callsite_free(c.cs);
        gpu_summary_free(c.summary);
        exp_stats_free(c.stats);
        exp_collapsed_free(c.collapsed);
    }
    return rc;
}

/* ---- the table ---- */

const fs_target fs_targets[] = {
    {"chunk", fs_chunk, 1},         {"records", fs_records, 0}, {"reader", fs_reader, 1},
    {"collapsed", t_collapsed, 1},  {"stats", t_stats, 1},      {"speedscope", t_speedscope, 1},
    {"chrome", t_chrome, 1},        {"nvvp", t_nvvp, 1},        {"gpu", t_gpu, 1},
};
const size_t fs_n_targets = sizeof fs_targets / sizeof *fs_targets;

const fs_target *fs_find(const char *name)
{
    for (size_t i = 0; i < fs_n_targets; i++) {
        if (strcmp(fs_targets[i].name, name) == 0)
            return &fs_targets[i];
    }
    return NULL;
}

int fs_run(const fs_target *t, const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    int rc;
    trc_alloc_fail_after(-1);   /* also resets trc_alloc_largest() */
    rc = t->run(data, size, out, why, n);
    if (rc == 0 && trc_alloc_largest() > FS_ALLOC_CAP)
        rc = fs_fail(why, n, "%s: one allocation of %zu bytes from %zu input bytes", t->name,
                     trc_alloc_largest(), size);
    return rc;
}
