/*
 * lib/export/top/top_format.c — trc-top's text lines (contract in
 * top_format.h).  Times are seconds of sampled time; percentages are
 * shares of the samples the view kept, so the own column sums to 100.
 */
#include "lib/export/top/top_format.h"

#include <string.h>

#include "lib/export/common/gpu_callsite.h"
#include "lib/export/common/short_path.h"

const char top_key_help[] =
    "keys: 1 own% 2 total% 3 own time 4 total time 5 GPU time 6 name  "
    "w window/since start  i idle (wall)  g GIL only  q quit";

static const char *const sort_names[TOP_SORT_COUNT] = {
    "own %", "total %", "own time", "total time", "GPU time", "name"};

const char *top_sort_name(top_sort s)
{
    return (unsigned)s < TOP_SORT_COUNT ? sort_names[s] : "?";
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static double secs(uint64_t ns)
{
    return (double)ns / 1e9;
}

size_t top_format_header(const top_table *t, const top_view *v, const top_context *c,
                         char (*lines)[TOP_LINE], size_t max)
{
    size_t n = 0;
    if (!max)
        return 0;
    char span[64];
    if (v->since_start)
        snprintf(span, sizeof span, "since start (%.1f s)", secs(t->span_ns));
    else
        snprintf(span, sizeof span, "last %.3g s", c->window_s);
    snprintf(lines[n++], TOP_LINE, "trc-top: %s, %s%s, sort %s, %llu samples%s%s%s%s", span,
             v->wall ? "wall (idle too)" : "on-CPU", v->gil_only ? ", GIL only" : "",
             top_sort_name(v->sort), (unsigned long long)t->samples,
             *c->filters ? ", " : "", c->filters, *c->status ? " - " : "", c->status);
    if (c->recorder && *c->recorder && n < max)
        snprintf(lines[n++], TOP_LINE, "output: %s", c->recorder);
    for (size_t i = 0; i < t->n_devs && n < max; i++) {
        const top_device *d = &t->devs[i];
        char mem[48] = "";
        if (d->has_mem)
            snprintf(mem, sizeof mem, ", memory used %.0f MiB", d->mem_used / 1048576.0);
        snprintf(lines[n++], TOP_LINE, "GPU %u: busy %5.1f %%%s", d->device,
                 pct(d->busy_ns, d->span_ns), mem);
    }
    if (t->has_gpu && n < max) {
        /* the words of trc-stats --gpu's "lines:", so the two compare;
         * with several devices each one's share gets a line of its own,
         * as the whole line of 16 devices would not fit one */
        const exp_gpu_callsite_stats *g = &t->gpu_lines;
        char share[EXP_GPU_SHARE_PART_MAX];
        snprintf(lines[n++], TOP_LINE, "GPU lines: %s",
                 exp_gpu_share_part_str(g, -1, share, sizeof share));
        for (uint32_t i = 0; g->n_dev > 1 && i < g->n_dev && n < max; i++)
            if (*exp_gpu_share_part_str(g, (int)i, share, sizeof share))
                snprintf(lines[n++], TOP_LINE, "GPU lines: %s", share);
    }
    return n;
}

void top_format_titles(const top_table *t, char *buf, size_t n)
{
    snprintf(buf, n, "%7s %7s %9s %9s %s%s", "%Own", "%Total", "OwnTime", "TotalTime",
             t->has_gpu ? "  GPUTime " : "", "Function (file:line)");
}

/* Control characters in names (a tab, a newline) would break the line
 * or the screen: each shows as '?'. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

void top_format_row(const top_table *t, const top_row *r, char *buf, size_t n)
{
    char gpu[24] = "";
    if (t->has_gpu)
        snprintf(gpu, sizeof gpu, "%9.3fs ", secs(r->gpu_ns));
    if (r->file && *r->file)
        snprintf(buf, n, "%6.1f%% %6.1f%% %8.3fs %8.3fs %s%s (%s:%u)", pct(r->own_n, t->samples),
                 pct(r->total_n, t->samples), secs(r->own_ns), secs(r->total_ns), gpu,
                 r->function, exp_short_path(r->file), r->line);
    else
        snprintf(buf, n, "%6.1f%% %6.1f%% %8.3fs %8.3fs %s%s", pct(r->own_n, t->samples),
                 pct(r->total_n, t->samples), secs(r->own_ns), secs(r->total_ns), gpu,
                 r->function);
    sanitize(buf);
}

int top_write_snapshot(FILE *out, const top_table *t, const top_view *v, const top_context *c,
                       size_t max_rows)
{
    char lines[TOP_HEADER_MAX][TOP_LINE], line[TOP_LINE];
    size_t nh = top_format_header(t, v, c, lines, TOP_HEADER_MAX);
    for (size_t i = 0; i < nh; i++)
        fprintf(out, "%s\n", lines[i]);
    top_format_titles(t, line, sizeof line);
    fprintf(out, "%s\n", line);
    for (size_t i = 0; i < t->n && (!max_rows || i < max_rows); i++) {
        top_format_row(t, &t->rows[i], line, sizeof line);
        fprintf(out, "%s\n", line);
    }
    fputc('\n', out);
    return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
