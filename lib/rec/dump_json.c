/*
 * dump_json.c — `trec --dump --json`: one JSON document (its shape is
 * documented in docs/trec.md), written with the converters' JSON writer
 * so strings are escaped and always valid UTF-8.
 */
#include "lib/export/common/json_out.h"
#include "lib/rec/dump.h"

/* The locals of frame i of d, an array (null: not readable). */
static void locals_of(jsonw *w, const rec_dump_thread *d, int i)
{
    if (d->locals_missing || !d->frame_unread || d->frame_unread[i]) {
        jsonw_raw(w, "null");
        return;
    }
    jsonw_putc(w, '[');
    int first = 1;
    for (size_t k = 0; k < d->n_locals; k++) {
        if (d->locals[k].frame != i)
            continue;
        jsonw_raw(w, first ? "{\"name\":" : ",{\"name\":");
        jsonw_str(w, d->locals[k].name);
        jsonw_raw(w, ",\"value\":");
        jsonw_str(w, d->locals[k].value);
        jsonw_putc(w, '}');
        first = 0;
    }
    jsonw_putc(w, ']');
}

static void frame(jsonw *w, const py_frame_info *f, const rec_dump_thread *d, int i)
{
    jsonw_raw(w, "{\"function\":");
    jsonw_str(w, f->function);
    jsonw_raw(w, ",\"file\":");
    jsonw_str(w, f->file);
    jsonw_raw(w, ",\"line\":");
    jsonw_u64(w, f->line);
    if (d) {
        jsonw_raw(w, ",\"locals\":");
        locals_of(w, d, i);
    }
    jsonw_putc(w, '}');
}

/* frames[0..depth), leaf first, as a JSON array innermost last; with
 * locals, each frame's */
static void frames(jsonw *w, const rec_dump_thread *d, int locals)
{
    jsonw_putc(w, '[');
    for (int i = d->depth - 1; i >= 0; i--) {
        frame(w, d->frames[i], locals ? d : NULL, i);
        if (i)
            jsonw_putc(w, ',');
    }
    jsonw_putc(w, ']');
}

static void thread(jsonw *w, const rec_dump_thread *d, int locals)
{
    jsonw_raw(w, "{\"tid\":");
    jsonw_i64(w, d->tid);
    jsonw_raw(w, ",\"name\":");
    jsonw_str(w, d->name);
    jsonw_raw(w, ",\"state\":");
    jsonw_str(w, rec_dump_state_name(d->state));
    jsonw_raw(w, ",\"python\":");
    jsonw_raw(w, d->python ? "true" : "false");
    jsonw_raw(w, ",\"holds_gil\":");
    jsonw_raw(w, d->holds_gil < 0 ? "null" : d->holds_gil ? "true" : "false");
    jsonw_raw(w, ",\"valid\":");
    jsonw_raw(w, d->depth < 0 ? "false" : "true");
    jsonw_raw(w, ",\"truncated\":");
    jsonw_raw(w, d->truncated ? "true" : "false");
    if (locals) {
        jsonw_raw(w, ",\"locals_missing\":");
        if (d->locals_missing)
            jsonw_str(w, d->locals_missing);
        else
            jsonw_raw(w, "null");
    }
    jsonw_raw(w, ",\"frames\":");
    frames(w, d, locals); /* innermost last, as in the text */
    jsonw_putc(w, '}');
}

static void group(jsonw *w, const rec_dump_group *g)
{
    jsonw_raw(w, "{\"pids\":[");
    for (size_t i = 0; i < g->n_pids; i++) {
        if (i)
            jsonw_putc(w, ',');
        jsonw_i64(w, g->pids[i]);
    }
    jsonw_raw(w, "],\"threads\":");
    jsonw_i64(w, g->n_threads);
    jsonw_raw(w, ",\"frames\":");
    frames(w, g->stack, 0);
    jsonw_putc(w, '}');
}

int rec_dump_json(FILE *out, const rec_dump_proc *procs, int n, const rec_dump_groups *groups,
                  int locals)
{
    jsonw w;
    if (jsonw_open(&w, out) != 0)
        return -1;
    jsonw_raw(&w, "{\"processes\":[");
    for (int i = 0; i < n; i++) {
        const rec_dump_proc *p = &procs[i];
        if (i)
            jsonw_putc(&w, ',');
        jsonw_raw(&w, "{\"pid\":");
        jsonw_i64(&w, p->pid);
        jsonw_raw(&w, ",\"ppid\":");
        jsonw_i64(&w, p->ppid);
        jsonw_raw(&w, ",\"command\":");
        jsonw_str(&w, p->command);
        jsonw_raw(&w, ",\"python\":");
        jsonw_str(&w, p->version);
        /* "disabled": free-threaded without its GIL, why holds_gil is null */
        jsonw_raw(&w, ",\"gil\":");
        jsonw_str(&w, p->no_gil ? "disabled" : "enabled");
        jsonw_raw(&w, ",\"threads_torn\":");
        jsonw_raw(&w, p->torn ? "true" : "false");
        jsonw_raw(&w, ",\"threads\":[");
        for (int j = 0; j < p->n_threads; j++) {
            if (j)
                jsonw_putc(&w, ',');
            thread(&w, &p->threads[j], locals);
        }
        jsonw_raw(&w, "]}");
    }
    jsonw_raw(&w, "],\"groups\":[");
    for (size_t i = 0; i < groups->n; i++) {
        if (i)
            jsonw_putc(&w, ',');
        group(&w, &groups->v[i]);
    }
    jsonw_raw(&w, "]}\n");
    jsonw_close(&w);
    return 0;
}
