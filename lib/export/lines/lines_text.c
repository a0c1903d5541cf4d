/*
 * lib/export/lines/lines_text.c — the report for a person: per function
 * a header (its time, callers, callees), then its source lines with
 * on-CPU time, wall time, share of the function and, when the trace has
 * GPU activities, the GPU time launched from the line (meanings in
 * lines.h; docs/converters.md has an example).  Colour (ANSI) only when
 * asked: the tool decides from the terminal and NO_COLOR.
 */
#include "lib/export/lines/lines.h"

#include <inttypes.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/export/common/short_path.h"

#define MAX_RELATED 3

typedef struct text {
    FILE *out;
    const lines_agg *a;
    const lines_opts *o;
    int gpu;                 /* the trace has GPU activities: a GPU column */
    int sync;                /* it has blocking syncs: a Sync column */
} text;

static const char *col(const text *t, const char *code) { return t->o->color ? code : ""; }
#define BOLD "\033[1m"
#define DIM "\033[2m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define CYAN "\033[36m"
#define RESET "\033[0m"

static double sec(uint64_t ns) { return (double)ns / 1e9; }
/* GPU work is short: milliseconds, where samples are seconds. */
static double msec(uint64_t ns) { return (double)ns / 1e6; }
static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

static const char *metric_name(lines_metric m) { return m == LINES_WALL ? "wall" : "on-CPU"; }

static void related(const text *t, const lines_func *f, uint32_t fi, int callees)
{
    uint32_t ids[MAX_RELATED];
    size_t n = lines_callers(t->a, fi, t->o->metric, callees, ids, MAX_RELATED);
    uint64_t whole = lines_time_of(&f->cum, t->o->metric);
    fprintf(t->out, "  %s ", callees ? "callees:" : "callers:");
    if (!n)
        fputs(callees ? "(none sampled)" : "(none: a root of its stacks)", t->out);
    for (size_t i = 0; i < n; i++) {
        const lines_edge *e = lines_agg_edge(t->a, ids[i]);
        const lines_func *g = lines_agg_func(t->a, callees ? e->callee : e->caller);
        uint64_t v = lines_time_of(&e->t, t->o->metric);
        fprintf(t->out, "%s%s%s", i ? "; " : "", col(t, CYAN), g->function);
        if (g->python)
            fprintf(t->out, " (%s:%u)", exp_short_path(g->file), g->first_line);
        fprintf(t->out, "%s %.3f s %.1f %%", col(t, RESET), sec(v), pct(v, whole));
        if (t->gpu && e->t.gpu_ns)
            fprintf(t->out, " gpu %.3f ms", msec(e->t.gpu_ns));
    }
    fputc('\n', t->out);
}

/* Colour of a line by its share of the function: where to look first. */
static const char *heat(const text *t, double share)
{
    return share >= 50 ? col(t, BOLD RED) : share >= 20 ? col(t, RED)
                                          : share >= 5 ? col(t, YELLOW) : "";
}

static void row_line(const text *t, const lines_func *f, uint32_t line, const lines_row *row,
                     const lines_source *src)
{
    uint64_t whole = lines_time_of(&f->cum, t->o->metric);
    if (line)
        fprintf(t->out, "%7u", line);
    else
        fprintf(t->out, "%7s", "?");
    if (row) {
        double share = pct(lines_time_of(&row->t, t->o->metric), whole);
        fprintf(t->out, "  %s%9.3f %9.3f %6.1f %%", heat(t, share), sec(row->t.cpu_ns),
                sec(row->t.wall_ns), share);
        if (t->gpu)
            fprintf(t->out, " %9.3f", msec(row->t.gpu_ns));
        if (t->sync)
            fprintf(t->out, " %9.3f", msec(row->t.sync_ns));
        fputs(col(t, RESET), t->out);
    } else {
        fprintf(t->out, "  %9s %9s %8s", "", "", "");
        if (t->gpu)
            fprintf(t->out, " %9s", "");
        if (t->sync)
            fprintf(t->out, " %9s", "");
    }
    fputs("  ", t->out);
    if (!line || !src->text)
        ; /* the reason is in the header */
    else if (line > src->n_lines)
        fprintf(t->out, "%s[past the end: the file has %u lines]%s", col(t, DIM), src->n_lines,
                col(t, RESET));
    else {
        const char *s = src->line[line - 1];
        uint32_t n = src->len[line - 1];
        if (!row)
            fputs(col(t, DIM), t->out);
        for (uint32_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '\t')
                fputs("    ", t->out);
            else if (c < 0x20 || c == 0x7f)
                fputc('?', t->out); /* never a terminal control sequence from a file */
            else
                fputc(c, t->out);
        }
        if (!row)
            fputs(col(t, RESET), t->out);
    }
    fputc('\n', t->out);
}

static trc_status one_function(const text *t, uint32_t fi)
{
    const lines_func *f = lines_agg_func(t->a, fi);
    const lines_totals *tot = lines_agg_totals(t->a);
    lines_metric m = t->o->metric;
    lines_source src;
    if (lines_source_load(&src, f->file, t->o->roots, t->o->n_roots) != 0)
        return TRC_ERR_NOMEM;

    fprintf(t->out, "\n%s%s%s  %s:%u\n", col(t, BOLD), f->function, col(t, RESET), f->file,
            f->first_line);
    fprintf(t->out, "  %s %.3f s (%.1f %% of the trace), own %.3f s; on-CPU %.3f s, wall %.3f s",
            metric_name(m), sec(lines_time_of(&f->cum, m)),
            pct(lines_time_of(&f->cum, m), lines_time_of(&tot->t, m)),
            sec(lines_time_of(&f->own, m)), sec(f->cum.cpu_ns), sec(f->cum.wall_ns));
    if (t->gpu)
        fprintf(t->out, "; GPU launched %.3f ms", msec(f->cum.gpu_ns));
    if (t->sync)
        fprintf(t->out, "; blocked in syncs %.3f ms", msec(f->cum.sync_ns));
    fputc('\n', t->out);
    related(t, f, fi, 0);
    related(t, f, fi, 1);
    if (!src.text)
        fprintf(t->out, "  %ssource not shown: %s%s\n", col(t, DIM), src.error, col(t, RESET));
    fprintf(t->out, "%s%7s  %9s %9s %8s", col(t, BOLD), "Line", "CPU s", "Wall s", "Share");
    if (t->gpu)
        fprintf(t->out, " %9s", "GPU ms");
    if (t->sync)
        fprintf(t->out, " %9s", "Sync ms");
    fprintf(t->out, "  Source%s\n", col(t, RESET));

    uint32_t r = f->first_row, end = f->first_row + f->n_rows;
    if (r < end && lines_agg_row(t->a, r)->line == 0)
        row_line(t, f, 0, lines_agg_row(t->a, r++), &src);
    uint32_t prev = 0, first = lines_first(t->a, f);
    for (uint32_t line = lines_next(t->a, f, 0, src.text != NULL); line;
         prev = line, line = lines_next(t->a, f, line, src.text != NULL)) {
        const lines_row *row = NULL;
        while (r < end && lines_agg_row(t->a, r)->line < line)
            r++;
        if (r < end && lines_agg_row(t->a, r)->line == line)
            row = lines_agg_row(t->a, r);
        if (prev ? line > prev + 1 : line > first)
            fprintf(t->out, "%7s\n", "...");
        row_line(t, f, line, row, &src);
    }
    lines_source_free(&src);
    return TRC_OK;
}

trc_status lines_write_text(const lines_agg *a, const lines_opts *o, FILE *out)
{
    const lines_totals *tot = lines_agg_totals(a);
    text t = {out, a, o, tot->gpu_activities > 0, tot->syncs > 0};
    uint32_t *pick;
    size_t n;
    trc_status st = lines_pick(a, o, &pick, &n);
    if (st != TRC_OK)
        return st;
    fprintf(out, "%" PRIu64 " samples: on-CPU %.3f s, wall %.3f s", tot->samples,
            sec(tot->t.cpu_ns), sec(tot->t.wall_ns));
    if (t.gpu)
        fprintf(out, "; %" PRIu64 " GPU activities, %.3f ms (%.3f ms without a Python launch site)",
                tot->gpu_activities, msec(tot->t.gpu_ns), msec(tot->gpu_unattributed_ns));
    if (t.gpu && tot->gpu_via_ns) /* only then: launches without Python frames */
        fprintf(out, ", %.3f ms of it via a waiting thread", msec(tot->gpu_via_ns));
    if (t.sync)
        fprintf(out, "; %" PRIu64 " blocking syncs, %.3f ms blocked", tot->syncs,
                msec(tot->t.sync_ns));
    fputc('\n', out);
    if (o->function || o->file)
        fprintf(out, "functions matching%s%s%s%s: %zu\n", o->function ? " --function " : "",
                o->function ? o->function : "", o->file ? " --file " : "", o->file ? o->file : "",
                n);
    else
        fprintf(out, "the %zu hottest functions by own %s time; per line: time with the line "
                     "executing, callees included\n",
                n, metric_name(o->metric));
    if (!n)
        fputs(o->function || o->file ? "no Python function with samples matches\n"
                                     : "no Python function has samples (check the selection: "
                                       "--pid, --thread, --from, --to, --gil)\n",
              out);
    for (size_t i = 0; i < n && st == TRC_OK; i++)
        st = one_function(&t, pick[i]);
    trc_free(pick);
    if (st == TRC_OK && (fflush(out) != 0 || ferror(out)))
        st = TRC_ERR_IO;
    return st;
}
