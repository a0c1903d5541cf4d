/*
 * trc-stats — a cProfile-style table of a trace in the terminal
 * (docs/man/trc-stats.1, meanings in docs/converters.md): a header
 * (samples, duration, threads, processes, loss), then the columns of
 * pstats' print_stats, or its print_callers/print_callees views.
 * Numbers come from lib/export/stats.c, the same model trc2pstats
 * writes, so totals agree with the pstats file.
 *
 * --gpu prints nvprof's summary instead (lib/export/gpu_summary.c, the
 * table trc2nvvp prints); --gpu-callsites the same table as for samples
 * but weighted by GPU time per launching stack (lib/export/gpu_callsite.c).
 */
#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "lib/export/export.h"
#include "lib/export/gpu_summary.h"
#include "tools/common/convert.h"

typedef struct opts {
    const char *output, *sort, *callers, *callees;
    long limit;
    int gpu, gpu_callsites;
} opts;

typedef struct ctx {
    exp_stats *stats;
    const opts *o;
    const conv_selection *sel;
    int sort_key;          /* SORT_* */
    const char *sort_title;
    gpu_summary *summary;  /* --gpu */
    exp_gpu_callsite *gpu; /* --gpu-callsites */
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

static int row_cmp(const void *a, const void *b, void *arg)
{
    const ctx *cx = arg;
    const exp_func *x = exp_stats_func(cx->stats, *(const size_t *)a);
    const exp_func *y = exp_stats_func(cx->stats, *(const size_t *)b);
    int c = 0;
    switch (cx->sort_key) {
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

/* Time columns: pstats' %8.3f seconds, or %11.6f for GPU time (kernels
 * last microseconds). */
static int num_w = 8, num_prec = 3;

static void fnum(FILE *out, double v) { fprintf(out, "%*.*f ", num_w, num_prec, v); }

static void calls(char *buf, size_t n, uint64_t nc, uint64_t cc)
{
    if (nc != cc)
        snprintf(buf, n, "%" PRIu64 "/%" PRIu64, nc, cc);
    else
        snprintf(buf, n, "%" PRIu64, nc);
}

static void print_row(FILE *out, const exp_func *f)
{
    char c[48], label[4096];
    calls(c, sizeof c, f->nc, f->cc);
    double tt = (double)f->tt_ns / 1e9, ct = (double)f->ct_ns / 1e9;
    fprintf(out, "%9s ", c);
    fnum(out, tt);
    if (f->nc) fnum(out, tt / (double)f->nc); else fprintf(out, "%*s ", num_w, "");
    fnum(out, ct);
    if (f->cc) fnum(out, ct / (double)f->cc); else fprintf(out, "%*s ", num_w, "");
    fprintf(out, "%s\n", exp_func_label(f, label, sizeof label));
}

static void print_header(const ctx *c, trc_reader *r, FILE *out)
{
    const exp_stats_totals *t = exp_stats_get_totals(c->stats);
    trc_reader_stats rs;
    trc_reader_get_stats(r, &rs);
    char loss[768];
    conv_losses_describe(conv_last_losses(), loss, sizeof loss);
    double duration = rs.last_ns > rs.first_ns ? (double)(rs.last_ns - rs.first_ns) / 1e9 : 0;
    fprintf(out, "trace:      %s\n", trc_reader_name(r));
    if (c->gpu) {
        exp_gpu_callsite_stats g;
        exp_gpu_callsite_get_stats(c->gpu, &g);
        fprintf(out, "GPU time:   %" PRIu64 " activities (kernels, copies, memsets), %.6f s\n",
                t->gpu_activities, (double)t->gpu_ns / 1e9);
        fprintf(out, "launched:   %" PRIu64 " with a Python stack, %" PRIu64
                " without (" EXP_GPU_NO_PYTHON_ROOT "), %" PRIu64 " unmatched (" EXP_GPU_UNKNOWN_ROOT
                ")\n", g.python, g.no_python, g.unknown);
    } else {
        fprintf(out, "samples:    %" PRIu64 " (%s%s), %.3f s sampled\n", t->samples,
                c->sel->idle ? "on- and off-CPU" : "on-CPU only",
                c->sel->gil ? ", holding the GIL" : "", (double)t->weight_ns / 1e9);
    }
    fprintf(out, "duration:   %.3f s\n", duration);
    fprintf(out, "threads:    %" PRIu64 "\nprocesses:  %" PRIu64 "\n",
            c->gpu ? t->gpu_threads : t->threads, t->processes);
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
    fprintf(out, "%-*s    %9s %*s %*s\n", w, "", "ncalls", num_w, "tottime", num_w, "cumtime");
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
                    first ? (want_callers ? "<-" : "->") : "  ", cnt, num_w, num_prec,
                    (double)ed->tt_ns / 1e9, num_w, num_prec, (double)ed->ct_ns / 1e9,
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
static long select_rows(const exp_stats *s, const size_t *rows, size_t n, const char *pattern,
                        size_t *out)
{
    regex_t re;
    char label[4096];
    size_t k = 0;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
        cli_error("'%s' is not a valid regular expression", pattern);
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
    fprintf(out, "   Ordered by: %s\n", c->sort_title);
    if (pattern)
        fprintf(out, "   List reduced from %zu to %zu due to restriction <'%s'>\n", total,
                matched, pattern);
    if (shown != matched)
        fprintf(out, "   List reduced from %zu to %zu due to restriction <%ld>\n", matched, shown,
                c->o->limit);
    fputc('\n', out);
    return shown;
}

static int keep(void *sel, trc_reader *r, const trc_event *ev)
{
    return conv_selection_keep(sel, r, ev);
}

static trc_status add_gpu(void *s, trc_reader *r, const exp_gpu_hit *h)
{
    return exp_stats_add_gpu(s, r, h);
}

static int on_event(void *p, trc_reader *r, const trc_event *ev, FILE *out)
{
    const ctx *c = p;
    trc_status st = TRC_OK;
    if (c->summary)
        return gpu_summary_event(c->summary, r, ev) == 0 ? 0 : conv_sink_error(TRC_ERR_NOMEM);
    if (c->gpu)
        st = exp_gpu_callsite_event(c->gpu, r, ev);
    else if (ev->type == TRC_EV_SAMPLE)
        st = exp_stats_add(c->stats, r, &ev->u.sample);
    return st == TRC_OK ? 0 : conv_sink_error(st);
}

static int on_finish(void *p, trc_reader *r, FILE *out)
{
    const ctx *c = p;
    if (c->summary)
        return gpu_summary_print(c->summary, out) == 0 ? 0 : conv_sink_error(TRC_ERR_IO);
    trc_status st = c->gpu ? exp_gpu_callsite_finish(c->gpu) : TRC_OK;
    if (st == TRC_OK)
        st = exp_stats_finish(c->stats, r);
    if (st != TRC_OK)
        return conv_sink_error(st);
    size_t n = exp_stats_func_count(c->stats);
    size_t *rows = calloc(n + 1, sizeof *rows);
    if (!rows)
        return conv_sink_error(TRC_ERR_NOMEM);
    for (size_t i = 0; i < n; i++)
        rows[i] = i;
    qsort_r(rows, n, sizeof *rows, row_cmp, (void *)c);
    print_header(c, r, out);
    int ok = 1;
    if (c->o->callers || c->o->callees) {
        const char *pats[2] = {c->o->callers, c->o->callees};
        size_t *sel = calloc(n + 1, sizeof *sel);
        for (int k = 0; k < 2 && ok; k++) {
            if (!pats[k])
                continue;
            long m = sel ? select_rows(c->stats, rows, n, pats[k], sel) : -1;
            if (m < 0) {
                ok = 0;
                break;
            }
            size_t shown = restrict_note(c, out, n, (size_t)m, pats[k]);
            print_graph(c, out, sel, shown, k == 0);
        }
        free(sel);
    } else {
        size_t shown = restrict_note(c, out, n, n, NULL);
        fprintf(out, "%9s %*s %*s %*s %*s filename:lineno(function)\n", "ncalls", num_w,
                "tottime", num_w, "percall", num_w, "cumtime", num_w, "percall");
        for (size_t i = 0; i < shown; i++)
            print_row(out, exp_stats_func(c->stats, rows[i]));
        fputc('\n', out);
    }
    if (!ok) {
        free(rows);
        return -1;
    }
    free(rows);
    return ferror(out) ? conv_sink_error(TRC_ERR_IO) : 0;
}

int main(int argc, char **argv)
{
    static conv_selection sel;
    static opts o;
    const cli_option options[] = {
        {"output", 'o', CLI_STRING, &o.output, "FILE", "write to FILE (default: stdout)", 0, 0},
        {"sort", 's', CLI_STRING, &o.sort, "KEY",
         "tottime|cumtime|ncalls|name|file (or time|cumulative|calls); default cumtime", 0, 0},
        {"limit", 'n', CLI_INT, &o.limit, "N", "show the first N rows only (0 = all)", 0, 1e9},
        {"callers", 0, CLI_STRING, &o.callers, "PATTERN",
         "show who called the functions matching PATTERN (extended regex)", 0, 0},
        {"callees", 0, CLI_STRING, &o.callees, "PATTERN",
         "show what the functions matching PATTERN called", 0, 0},
        {"gpu", 0, CLI_FLAG, &o.gpu, NULL,
         "print nvprof's summary of GPU activities and API calls instead", 0, 0},
        {"gpu-callsites", 0, CLI_FLAG, &o.gpu_callsites, NULL,
         "the table weighted by GPU time per launching Python stack", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    const cli_tool tool = {
        "trc-stats", "[options] [FILE]",
        "Print a cProfile-style table of where a trace's samples spent their time.",
        "Columns, for sampled data (docs/converters.md):\n"
        "  ncalls   entries observed: samples where the function's call was not\n"
        "           yet in progress in the thread's previous sample (a lower bound;\n"
        "           \"a/b\": b of them not recursive);\n"
        "  tottime  sampled seconds with the function as the leaf frame;\n"
        "  cumtime  sampled seconds with the function anywhere on the stack\n"
        "           (recursion counted once per sample);\n"
        "  percall  tottime/ncalls and cumtime/primitive calls.\n"
        "PATTERN is matched against \"filename:lineno(function)\".\n"
        "The totals equal those of the pstats file trc2pstats writes.\n"
        "--gpu prints nvprof's two summary sections (\"GPU activities\", \"API calls\":\n"
        "Time(%), Time, Calls, Avg, Min, Max, Name), the same as trc2nvvp.\n"
        "--gpu-callsites charges each kernel, copy and memset to the Python stack\n"
        "of the call that launched it, with a leaf function for its name:\n"
        "tottime/cumtime are GPU seconds, ncalls the activities launched\n"
        "beneath a function; launches without Python frames appear under\n"
        "{no Python stack}, unrecorded ones under {unknown launch}.\n"
        "Exit status: 0 ok, 1 input damaged or data lost, 2 usage error or\n"
        "unusable input.",
        options, conv_selection_options(&sel)};
    char **pos;
    int npos;
    cli_parse(&tool, argc, argv, 0, &pos, &npos);
    if (npos > 1)
        cli_die(CLI_EXIT_USAGE, "too many inputs: give one FILE (or none for stdin)");
    ctx c = {NULL, &o, &sel, SORT_CT, "cumulative time", NULL, NULL};
    if (o.sort) {
        size_t i = 0;
        for (; i < sizeof sorts / sizeof sorts[0] && strcmp(sorts[i].name, o.sort) != 0; i++)
            ;
        if (i == sizeof sorts / sizeof sorts[0])
            cli_die(CLI_EXIT_USAGE,
                    "--sort '%s': use tottime, cumtime, ncalls, name or file", o.sort);
        c.sort_key = sorts[i].key;
        c.sort_title = sorts[i].title;
    }
    if (o.gpu && (o.gpu_callsites || o.sort || o.limit || o.callers || o.callees))
        cli_die(CLI_EXIT_USAGE, "--gpu prints nvprof's summary: it takes no --gpu-callsites, "
                                "--sort, --limit, --callers or --callees");
    conv_selection_prepare(&sel);
    c.stats = exp_stats_new();
    if (o.gpu)
        c.summary = gpu_summary_new();
    if (o.gpu_callsites && c.stats &&
        (c.gpu = exp_gpu_callsite_new(0, add_gpu, c.stats))) {
        exp_gpu_callsite_select(c.gpu, keep, &sel, sel.threads.n > 0);
        num_w = 11;
        num_prec = 6;
    }
    if (!c.stats || (o.gpu && !c.summary) || (o.gpu_callsites && !c.gpu))
        cli_die(CLI_EXIT_USAGE, "out of memory");
    conv_sink sink = {&c, on_event, on_finish};
    /* --gpu-callsites applies the selection itself: launch calls must all be seen */
    conv_job job = {npos ? pos[0] : NULL, o.output, 0, o.gpu_callsites ? NULL : &sel};
    int code = conv_run(&job, &sink);
    exp_gpu_callsite_free(c.gpu);
    gpu_summary_free(c.summary);
    exp_stats_free(c.stats);
    conv_selection_cleanup(&sel);
    free(pos);
    return code;
}
