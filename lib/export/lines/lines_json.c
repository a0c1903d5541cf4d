/*
 * lib/export/lines/lines_json.c — the report as one JSON object, for
 * tools: the same functions, callers, callees and listed lines as the
 * text (lines_report.c decides), times as integer nanoseconds.  Shape in
 * docs/converters.md ("trc-lines", JSON).
 */
#include "lib/export/lines/lines.h"

#include "lib/util/alloc.h"
#include "lib/export/common/json_out.h"

#define MAX_RELATED 3

static void times(jsonw *w, const lines_time *t)
{
    jsonw_raw(w, "\"cpu_ns\":");
    jsonw_u64(w, t->cpu_ns);
    jsonw_raw(w, ",\"wall_ns\":");
    jsonw_u64(w, t->wall_ns);
    jsonw_raw(w, ",\"gpu_ns\":");
    jsonw_u64(w, t->gpu_ns);
    /* the text's "Sync ms" column, in the unit of the other times */
    jsonw_raw(w, ",\"sync_ns\":");
    jsonw_u64(w, t->sync_ns);
}

static void func_key(jsonw *w, const lines_func *f)
{
    jsonw_raw(w, "\"function\":");
    jsonw_str(w, f->function);
    jsonw_raw(w, ",\"file\":");
    jsonw_str(w, f->file);
    jsonw_raw(w, ",\"first_line\":");
    jsonw_u64(w, f->first_line);
}

static void related(jsonw *w, const lines_agg *a, const lines_opts *o, uint32_t fi, int callees)
{
    uint32_t ids[MAX_RELATED];
    size_t n = lines_callers(a, fi, o->metric, callees, ids, MAX_RELATED);
    jsonw_raw(w, callees ? ",\"callees\":[" : ",\"callers\":[");
    for (size_t i = 0; i < n; i++) {
        const lines_edge *e = lines_agg_edge(a, ids[i]);
        jsonw_raw(w, i ? ",{" : "{");
        func_key(w, lines_agg_func(a, callees ? e->callee : e->caller));
        jsonw_putc(w, ',');
        times(w, &e->t);
        jsonw_putc(w, '}');
    }
    jsonw_putc(w, ']');
}

static void row(jsonw *w, const lines_func *f, const lines_opts *o, uint32_t line,
                const lines_row *r, const lines_source *src, int *first)
{
    static const lines_time zero;
    const lines_time *t = r ? &r->t : &zero;
    uint64_t whole = lines_time_of(&f->cum, o->metric);
    jsonw_raw(w, *first ? "{\"line\":" : ",{\"line\":");
    *first = 0;
    jsonw_u64(w, line);
    jsonw_putc(w, ',');
    times(w, t);
    jsonw_raw(w, ",\"share\":");
    jsonw_double(w, whole ? (double)lines_time_of(t, o->metric) / (double)whole : 0.0);
    jsonw_raw(w, ",\"text\":");
    if (src->text && line && line <= src->n_lines)
        jsonw_strn(w, src->line[line - 1], src->len[line - 1]);
    else
        jsonw_raw(w, "null");
    if (src->text && line > src->n_lines) {
        jsonw_raw(w, ",\"text_absent\":\"past the end of the file\"");
    } else if (!src->text || !line) {
        jsonw_raw(w, ",\"text_absent\":");
        jsonw_str(w, line ? "source not readable" : "line unknown");
    }
    jsonw_putc(w, '}');
}

static trc_status one_function(jsonw *w, const lines_agg *a, const lines_opts *o, uint32_t fi,
                               int first_fn)
{
    const lines_func *f = lines_agg_func(a, fi);
    lines_source src;
    if (lines_source_load(&src, f->file, o->roots, o->n_roots) != 0)
        return TRC_ERR_NOMEM;
    jsonw_raw(w, first_fn ? "{" : ",{");
    func_key(w, f);
    jsonw_raw(w, ",\"time\":{");
    times(w, &f->cum);
    jsonw_raw(w, "},\"own\":{");
    times(w, &f->own);
    jsonw_raw(w, "},\"source\":{\"path\":");
    jsonw_str(w, src.path);
    if (src.text) {
        jsonw_raw(w, ",\"lines\":");
        jsonw_u64(w, src.n_lines);
    } else {
        jsonw_raw(w, ",\"error\":");
        jsonw_str(w, src.error);
    }
    jsonw_putc(w, '}');
    related(w, a, o, fi, 0);
    related(w, a, o, fi, 1);
    jsonw_raw(w, ",\"lines\":[");
    int first = 1;
    uint32_t r = f->first_row, end = f->first_row + f->n_rows;
    if (r < end && lines_agg_row(a, r)->line == 0) {
        row(w, f, o, 0, lines_agg_row(a, r), &src, &first);
        r++;
    }
    for (uint32_t line = lines_next(a, f, 0, src.text != NULL); line;
         line = lines_next(a, f, line, src.text != NULL)) {
        const lines_row *lr = NULL;
        while (r < end && lines_agg_row(a, r)->line < line)
            r++;
        if (r < end && lines_agg_row(a, r)->line == line)
            lr = lines_agg_row(a, r);
        row(w, f, o, line, lr, &src, &first);
    }
    jsonw_raw(w, "]}");
    lines_source_free(&src);
    return TRC_OK;
}

trc_status lines_write_json(const lines_agg *a, const lines_opts *o, FILE *out)
{
    const lines_totals *tot = lines_agg_totals(a);
    uint32_t *pick;
    size_t n;
    jsonw w;
    trc_status st = lines_pick(a, o, &pick, &n);
    if (st != TRC_OK)
        return st;
    if (jsonw_open(&w, out) != 0) {
        trc_free(pick);
        return TRC_ERR_NOMEM;
    }
    jsonw_raw(&w, "{\"metric\":");
    jsonw_str(&w, o->metric == LINES_WALL ? "wall" : "cpu");
    jsonw_raw(&w, ",\"samples\":");
    jsonw_u64(&w, tot->samples);
    jsonw_raw(&w, ",\"total\":{");
    times(&w, &tot->t);
    jsonw_raw(&w, "},\"gpu_activities\":");
    jsonw_u64(&w, tot->gpu_activities);
    jsonw_raw(&w, ",\"gpu_unattributed_ns\":");
    jsonw_u64(&w, tot->gpu_unattributed_ns);
    jsonw_raw(&w, ",\"gpu_via_ns\":");
    jsonw_u64(&w, tot->gpu_via_ns);
    jsonw_raw(&w, ",\"syncs\":");
    jsonw_u64(&w, tot->syncs);
    jsonw_raw(&w, ",\"functions\":[");
    for (size_t i = 0; i < n && st == TRC_OK; i++)
        st = one_function(&w, a, o, pick[i], i == 0);
    jsonw_raw(&w, "]}\n");
    trc_free(pick);
    if (st != TRC_OK) {
        jsonw_free(&w);
        return st;
    }
    jsonw_close(&w);
    return fflush(out) != 0 || ferror(out) ? TRC_ERR_IO : TRC_OK;
}
