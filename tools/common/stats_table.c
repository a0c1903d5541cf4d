/*
 * stats_table.c — trc-stats' report (contract in stats_table.h): rows
 * sorted like pstats' sort_stats, printed like print_stats, or the
 * print_callers/print_callees sections for functions matching a regex.
 * Numbers come from lib/export/folded/stats.c, the model trc2pstats writes, so
 * totals agree with the pstats file.
 */
#include "tools/common/stats_table.h"
#include "lib/procname.h"

#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/export/common/gpu_graph.h"

/* One report: the model, its options, and the time column format —
 * pstats' %8.3f seconds, or %11.6f for GPU time (kernels last
 * microseconds). */
typedef struct ctx {
    const exp_stats *stats;
    const exp_gpu_callsite_stats *gpu;
    const stats_table_opts *o;
    int num_w, num_prec;
    char *err;            /* the message of a failure */
    size_t err_n;
} ctx;

enum { SORT_TT, SORT_CT, SORT_NC, SORT_NAME, SORT_FILE, SORT_STD };

static const struct {
    const char *name;
    int key;
    const char *title;
} sorts[] = {
    {"tottime", SORT_TT, "internal time"}, {"time", SORT_TT, "internal time"},
    {"cumtime", SORT_CT, "cumulative time"}, {"cumulative", SORT_CT, "cumulative time"},
    {"ncalls", SORT_NC, "call count"}, {"calls", SORT_NC, "call count"},
    {"name", SORT_NAME, "function name"}, {"file", SORT_FILE, "file name"},
    {"filename", SORT_FILE, "file name"}, {"stdname", SORT_STD, "standard name"},
};

int stats_table_sort_key(stats_table_opts *o, const char *name)
{
    for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++) {
        if (strcmp(sorts[i].name, name) == 0) {
            o->sort_key = sorts[i].key;
            o->sort_title = sorts[i].title;
            return 0;
        }
    }
    return -1;
}

void stats_table_default(stats_table_opts *o)
{
    o->sort_key = SORT_CT;
    o->sort_title = "cumulative time";
}

static int row_cmp(const void *a, const void *b, void *arg)
{
    const ctx *cx = arg;
    const exp_func *x = exp_stats_func(cx->stats, *(const size_t *)a);
    const exp_func *y = exp_stats_func(cx->stats, *(const size_t *)b);
    int c = 0;
    switch (cx->o->sort_key) {
    case SORT_TT: c = (x->tt_ns < y->tt_ns) - (x->tt_ns > y->tt_ns); break;
    case SORT_CT: c = (x->ct_ns < y->ct_ns) - (x->ct_ns > y->ct_ns); break;
    case SORT_NC: c = (x->nc < y->nc) - (x->nc > y->nc); break;
    case SORT_NAME: c = strcmp(x->function, y->function); break;
    case SORT_FILE:
        c = strcmp(x->file, y->file);
        if (!c)
            c = (x->first_line > y->first_line) - (x->first_line < y->first_line);
        break;
    default: break;
    }
    if (c)
        return c;
    char lx[512], ly[512];
    return strcmp(exp_func_label(x, lx, sizeof lx), exp_func_label(y, ly, sizeof ly));
}

static void fnum(const ctx *c, FILE *out, double v)
{
    fprintf(out, "%*.*f ", c->num_w, c->num_prec, v);
}

static void calls(char *buf, size_t n, uint64_t nc, uint64_t cc)
{
    if (nc != cc)
        snprintf(buf, n, "%" PRIu64 "/%" PRIu64, nc, cc);
    else
        snprintf(buf, n, "%" PRIu64, nc);
}

static void print_row(const ctx *c, FILE *out, const exp_func *f)
{
    char n[48], label[4096];
    calls(n, sizeof n, f->nc, f->cc);
    double tt = (double)f->tt_ns / 1e9, ct = (double)f->ct_ns / 1e9;
    fprintf(out, "%9s ", n);
    fnum(c, out, tt);
    if (f->nc) fnum(c, out, tt / (double)f->nc); else fprintf(out, "%*s ", c->num_w, "");
    fnum(c, out, ct);
    if (f->cc) fnum(c, out, ct / (double)f->cc); else fprintf(out, "%*s ", c->num_w, "");
    fprintf(out, "%s\n", exp_func_label(f, label, sizeof label));
}

/* The header's process line: how many, and the first few by the name
 * every converter gives them (lib/procname.h), in the order first met. */
#define NAMED_PROCESSES 8

static void print_processes(const ctx *c, const trc_reader *r, FILE *out, uint64_t n)
{
    fprintf(out, "processes:  %" PRIu64, n);
    for (uint64_t i = 0; i < n && i < NAMED_PROCESSES; i++) {
        int64_t pid = exp_stats_pid(c->stats, i);
        char name[PROCNAME_MAX];
        if (pid < 0)
            snprintf(name, sizeof name, "<unknown process>");
        else
            procname(trc_reader_process_by_pid(r, pid), pid, name, sizeof name);
        fprintf(out, "%s%s", i ? ", " : ": ", name);
    }
    if (n > NAMED_PROCESSES)
        fprintf(out, ", and %" PRIu64 " more", n - NAMED_PROCESSES);
    fputc('\n', out);
}

static void print_header(const ctx *c, trc_reader *r, FILE *out)
{
    const exp_stats_totals *t = exp_stats_get_totals(c->stats);
    trc_reader_stats rs;
    trc_reader_get_stats(r, &rs);
    char loss[768];
    conv_losses_describe(conv_last_losses(), loss, sizeof loss);
    double duration = rs.last_ns > rs.first_ns ? ((double)rs.last_ns - (double)rs.first_ns) / 1e9 /* hostile times: no signed overflow */ : 0;
    fprintf(out, "trace:      %s\n", trc_reader_name(r));
    if (c->gpu) {
        const exp_gpu_callsite_stats g = *c->gpu;
        fprintf(out, "GPU time:   %" PRIu64 " activities (kernels, copies, memsets), %.6f s\n",
                t->gpu_activities, (double)t->gpu_ns / 1e9);
        fprintf(out, "launched:   %" PRIu64 " with a Python stack (%" PRIu64 " a waiting thread's), %" PRIu64
                " without (" EXP_GPU_NO_PYTHON_ROOT "), %" PRIu64 " unmatched (" EXP_GPU_UNKNOWN_ROOT
                ")\n", g.python, g.via, g.no_python, g.unknown);
        char share[EXP_GPU_SHARE_MAX];
        fprintf(out, "lines:      %s\n", exp_gpu_share_str(&g, share, sizeof share));
    } else {
        fprintf(out, "samples:    %" PRIu64 " (%s%s), %.3f s sampled\n", t->samples,
                c->o->idle ? "on- and off-CPU" : "on-CPU only",
                c->o->gil ? ", holding the GIL" : "", (double)t->weight_ns / 1e9);
    }
    fprintf(out, "duration:   %.3f s\n", duration);
    /* The default view counts only threads with on-CPU samples: say so
     * when others exist, or a two-thread program reads as one thread. */
    uint64_t shown = c->gpu ? t->gpu_threads : t->threads, all = trc_reader_thread_count(r);
    if (shown < all)
        fprintf(out, "threads:    %" PRIu64 " with samples in this view (%" PRIu64 " in the trace%s)\n",
                shown, all, c->o->idle || c->gpu ? "" : "; --idle shows idle ones");
    else
        fprintf(out, "threads:    %" PRIu64 "\n", shown);
    print_processes(c, r, out, t->processes);
    fprintf(out, "loss:       %s\n\n", loss[0] ? loss : "none");
    fprintf(out, "%9" PRIu64 " function calls", t->calls);
    if (t->calls != t->primitive_calls)
        fprintf(out, " (%" PRIu64 " primitive calls)", t->primitive_calls);
    fprintf(out, " in %.*f seconds\n\n", c->gpu ? 6 : 3, (double)t->weight_ns / 1e9);
}

/* Width of the function column: the longest label shown, like pstats. */
static int label_width(const exp_stats *s, const size_t *rows, size_t n)
{
    char label[4096];
    size_t w = strlen("Function");
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(exp_func_label(exp_stats_func(s, rows[i]), label, sizeof label));
        w = k > w ? k : w;
    }
    return (int)(w > 200 ? 200 : w);
}

/* One call-graph section: for each selected function, its callers
 * (want_callers) or callees with the edge's numbers. */
static void print_graph(const ctx *c, FILE *out, const size_t *rows, size_t n, int want_callers)
{
    const exp_stats *s = c->stats;
    char label[4096], other[4096], cnt[48];
    int w = label_width(s, rows, n);
    fprintf(out, "%-*s    %s\n", w, "Function", want_callers ? "was called by..." : "called...");
    fprintf(out, "%-*s    %9s %*s %*s\n", w, "", "ncalls", c->num_w, "tottime", c->num_w,
            "cumtime");
    for (size_t i = 0; i < n; i++) {
        const exp_func *f = exp_stats_func(s, rows[i]);
        int first = 1;
        exp_func_label(f, label, sizeof label);
        for (size_t e = 0; e < exp_stats_edge_count(s); e++) {
            const exp_edge *ed = exp_stats_edge(s, e);
            if ((want_callers ? ed->callee : ed->caller) != rows[i])
                continue;
            const exp_func *o = exp_stats_func(s, want_callers ? ed->caller : ed->callee);
            calls(cnt, sizeof cnt, ed->nc, ed->cc);
            fprintf(out, "%-*s %s %9s %*.*f %*.*f  %s\n", w, first ? label : "",
                    first ? (want_callers ? "<-" : "->") : "  ", cnt, c->num_w, c->num_prec,
                    (double)ed->tt_ns / 1e9, c->num_w, c->num_prec, (double)ed->ct_ns / 1e9,
                    exp_func_label(o, other, sizeof other));
            first = 0;
        }
        if (first)
            fprintf(out, "%-*s %s\n", w, label, want_callers ? "<-" : "->");
    }
    fputc('\n', out);
}

/* Keeps the rows whose label matches the extended regex; returns how many
 * (-1 after an error message for a bad pattern). */
static long select_rows(const ctx *c, const exp_stats *s, const size_t *rows, size_t n,
                        const char *pattern, size_t *out)
{
    regex_t re;
    char label[4096];
    size_t k = 0;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
        snprintf(c->err, c->err_n, "'%s' is not a valid regular expression", pattern);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (regexec(&re, exp_func_label(exp_stats_func(s, rows[i]), label, sizeof label), 0,
                    NULL, 0) == 0)
            out[k++] = rows[i];
    }
    regfree(&re);
    return (long)k;
}

/* "Ordered by" and "List reduced" lines, then the rows shown (limit). */
static size_t restrict_note(const ctx *c, FILE *out, size_t total, size_t matched,
                            const char *pattern)
{
    size_t shown = matched;
    if (c->o->limit > 0 && (size_t)c->o->limit < shown)
        shown = (size_t)c->o->limit;
    fprintf(out, "   Ordered by: %s\n", c->o->sort_title);
    if (pattern)
        fprintf(out, "   List reduced from %zu to %zu due to restriction <'%s'>\n", total,
                matched, pattern);
    if (shown != matched)
        fprintf(out, "   List reduced from %zu to %zu due to restriction <%ld>\n", matched, shown,
                c->o->limit);
    fputc('\n', out);
    return shown;
}

static trc_status print_table(const exp_stats *s, const exp_gpu_callsite_stats *gpu,
                              trc_reader *r, const stats_table_opts *o, FILE *out, char *err,
                              size_t err_n)
{
    const ctx cx = {s, gpu, o, gpu ? 11 : 8, gpu ? 6 : 3, err, err_n};
    const ctx *c = &cx;
    trc_status st = TRC_OK;
    size_t n = exp_stats_func_count(c->stats);
    size_t *rows = trc_calloc(n + 1, sizeof *rows);
    if (!rows)
        return TRC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        rows[i] = i;
    qsort_r(rows, n, sizeof *rows, row_cmp, (void *)c);
    print_header(c, r, out);
    if (c->o->callers || c->o->callees) {
        const char *pats[2] = {c->o->callers, c->o->callees};
        size_t *sel = trc_calloc(n + 1, sizeof *sel);
        if (!sel)
            st = TRC_ERR_NOMEM;
        for (int k = 0; k < 2 && st == TRC_OK; k++) {
            if (!pats[k])
                continue;
            long m = select_rows(c, c->stats, rows, n, pats[k], sel);
            if (m < 0) {
                st = TRC_ERR_ARG;
                break;
            }
            size_t shown = restrict_note(c, out, n, (size_t)m, pats[k]);
            print_graph(c, out, sel, shown, k == 0);
        }
        trc_free(sel);
    } else {
        size_t shown = restrict_note(c, out, n, n, NULL);
        fprintf(out, "%9s %*s %*s %*s %*s filename:lineno(function)\n", "ncalls", c->num_w,
                "tottime", c->num_w, "percall", c->num_w, "cumtime", c->num_w, "percall");
        for (size_t i = 0; i < shown; i++)
            print_row(c, out, exp_stats_func(c->stats, rows[i]));
        fputc('\n', out);
    }
    trc_free(rows);
    if (st == TRC_OK && ferror(out))
        st = TRC_ERR_IO;
    return st;
}

/* ---- the sink ---- */

typedef struct table_sink {
    stats_table_opts o;
    exp_stats *stats;
    exp_gpu_callsite_stats gpu;  /* activities by origin (the _gpu type) */
    exp_gpu_idle *gpu_idle;      /* the _gpu_idle type's stage */
    exp_gpu_graph *graphs;       /* the _gpu type's CUDA graphs: where captured */
    char err[256];
} table_sink;

static void table_destroy(void *self)
{
    table_sink *t = self;
    if (!t)
        return;
    exp_stats_free(t->stats);
    exp_gpu_idle_free(t->gpu_idle);
    exp_gpu_graph_free(t->graphs);
    trc_free(t);
}

static void *table_create(const void *opts)
{
    table_sink *t = trc_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (opts)
        t->o = *(const stats_table_opts *)opts;
    else
        stats_table_default(&t->o);
    if (!(t->stats = exp_stats_new())) {
        trc_free(t);
        return NULL;
    }
    return t;
}

static trc_status table_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    table_sink *t = self;
    return ev->type == TRC_EV_SAMPLE ? exp_stats_add(t->stats, r, &ev->u.sample) : TRC_OK;
}

static void *table_gpu_create(const void *opts)
{
    table_sink *t = table_create(opts);
    if (t && !(t->graphs = exp_gpu_graph_new())) {
        table_destroy(t);
        return NULL;
    }
    return t;
}

/* The calls that captured CUDA graphs, for the graph lines. */
static trc_status table_gpu_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    table_sink *t = self;
    return exp_gpu_graph_event(t->graphs, r, ev);
}

static trc_status table_hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    table_sink *t = self;
    trc_status st;
    exp_gpu_stats_add(&t->gpu, h);
    if (t->graphs && (st = exp_gpu_graph_hit(t->graphs, h)) != TRC_OK)
        return st;
    return exp_stats_add_gpu(t->stats, r, h);
}

static trc_status finish_as(table_sink *t, trc_reader *r, FILE *out, int gpu)
{
    trc_status st = exp_stats_finish(t->stats, r);
    if (st != TRC_OK)
        return st;
    return print_table(t->stats, gpu ? &t->gpu : NULL, r, &t->o, out, t->err, sizeof t->err);
}

static trc_status table_finish(void *self, trc_reader *r, FILE *out)
{
    return finish_as(self, r, out, 0);
}

static trc_status table_gpu_finish(void *self, trc_reader *r, FILE *out)
{
    table_sink *t = self;
    trc_status st = finish_as(t, r, out, 1);
    if (st == TRC_OK)
        exp_gpu_graph_print(t->graphs, r, out);
    return st;
}

static const char *table_error(const void *self)
{
    const table_sink *t = self;
    return t->err;
}

static void *table_idle_create(const void *opts)
{
    table_sink *t = table_create(opts);
    if (t && !(t->gpu_idle = exp_gpu_idle_new(&t->o.gpu_idle))) {
        table_destroy(t);
        return NULL;
    }
    return t;
}

static trc_status table_idle_event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    table_sink *t = self;
    return exp_gpu_idle_event(t->gpu_idle, r, ev);
}

static trc_status table_idle_finish(void *self, trc_reader *r, FILE *out)
{
    table_sink *t = self;
    trc_status st = exp_gpu_idle_finish(t->gpu_idle, r);
    if (st == TRC_OK)
        st = exp_stats_add_gpu_idle(t->stats, r, t->gpu_idle);
    if (st == TRC_OK)
        st = exp_stats_finish(t->stats, r);
    if (st != TRC_OK)
        return st;
    fputs("GPU idle time charged to the stacks of the threads feeding the GPU "
          "(docs/gpu.md);\n\"samples\" below are the charges, one per device, thread "
          "and stack\n",
          out);
    return print_table(t->stats, NULL, r, &t->o, out, t->err, sizeof t->err);
}

const exp_sink_type stats_table_sink = {"stats-table", table_create, table_event, NULL,
                                        table_finish, table_destroy, table_error};
const exp_sink_type stats_table_sink_gpu = {"stats-table-gpu", table_gpu_create, table_gpu_event, table_hit,
                                            table_gpu_finish, table_destroy, table_error};
const exp_sink_type stats_table_sink_gpu_idle = {"stats-table-gpu-idle", table_idle_create,
                                                 table_idle_event, NULL, table_idle_finish,
                                                 table_destroy, table_error};
